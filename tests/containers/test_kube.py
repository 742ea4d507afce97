"""The Kubernetes dev overlay, played by `podman kube play` (tests/containers/kube.py says how
its workloads become pods): every workload ready by its own readiness probe, a game of each kind
against the bots through the gateway's pod, an account registered through it, and no database
credentials in the gateway's container."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from client.session import Session
from tests.containers.conftest import play_against_bots, run
from tests.containers.kube import WORKLOADS, KubeStack, translate
from tests.manifests import render

pytestmark = pytest.mark.containers

NETWORK = "tabletop-kube"
GRPC_PORT = 50050
"""The gateway's gRPC port in its pod (deploy/k8s/base/gateway.yaml)."""


@pytest.fixture(scope="module")
def kube(image: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[KubeStack]:
    docs = render("dev")
    stack = KubeStack(translate(docs), NETWORK, tmp_path_factory.mktemp("kube") / "dev.yaml")
    try:
        stack.play()
        stack.wait_ready()
        yield stack
    finally:
        stack.remove()


@pytest.fixture(scope="module")
def gateway(kube: KubeStack) -> str:
    return f"{kube.address('gateway')}:{GRPC_PORT}"


def test_every_workload_of_the_overlay_runs_in_a_pod_named_as_its_service(
    kube: KubeStack,
) -> None:
    docs = render("dev")
    workloads = {d["metadata"]["name"] for d in docs if d["kind"] in WORKLOADS}
    services = {d["metadata"]["name"] for d in docs if d["kind"] == "Service"}
    pods = set(run("podman", "pod", "ps", "--format", "{{.Name}}").split())
    played = {w.pod for w in kube.workloads}
    assert len(kube.workloads) == len(workloads)
    assert played <= pods
    # A pod for every Service but the gateway's metrics-only one (its pod is `gateway`'s).
    assert services - played == {"gateway-internal"}


@pytest.mark.parametrize("game", ["esoloe", "solo", "solace", "zoxso"])
async def test_a_game_of_each_kind_against_the_bots_through_the_gateway(
    kube: KubeStack, gateway: str, game: str
) -> None:
    session = Session(gateway)
    await session.login(f"kube-{game}")
    try:
        await play_against_bots(session, game)
    except Exception as error:
        report = kube.report("gateway", game, "lobby", "bots", "redis")
        raise AssertionError(f"{error!r}\n{report}") from error
    await session.close()


async def test_an_account_registered_through_the_gateway_logs_in_again(gateway: str) -> None:
    """The accounts service keeps it in the overlay's PostgreSQL, migrated by its Job."""
    session = Session(gateway)
    registered = await session.register("kube-account", "a long kube password")
    await session.close()
    again = Session(gateway)
    reply = await again.account_login("kube-account", "a long kube password")
    assert reply.player_id == registered.player_id
    await again.close()


def test_the_gateway_container_holds_no_database_credentials(kube: KubeStack) -> None:
    done = kube.exec("gateway", "gateway", "python", "-c",
                     "import os; print('\\n'.join(sorted(os.environ)))")  # fmt: skip
    assert done.returncode == 0, done.stderr
    names = set(done.stdout.split())
    assert "ACCOUNTS_ADDR" in names
    assert not names & {"DATABASE_URL", "PGPASSWORD", "POSTGRES_PASSWORD", "REDIS_PASSWORD"}
