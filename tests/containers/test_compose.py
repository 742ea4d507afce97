"""The Compose stack, built and run with podman: health through the published port, the web
client and the API for browsers on the published web port, a game of each kind against the
bots, an account that outlives a restart of its database, every container stopped with its stop
signal while a player plays on, and a game service scaled to three whose new replicas get
calls."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
import urllib.request

import grpc
import pytest

from client.session import Session
from tabletop.common.v1 import common_pb2
from tabletop.lobby.v1 import lobby_pb2
from tests.containers.conftest import (
    IMAGE,
    LABEL,
    PORTS,
    STOP_SIGNALS,
    Stack,
    play_against_bots,
    run,
)  # fmt: skip
from tests.timing import eventually, patience
from tests.web import PROTOCOLS, Call
from wire.api import AUTH_SERVICE

pytestmark = pytest.mark.containers

GAMES = ["esoloe", "solo", "solace", "zoxso"]
PASSWORD = "a long e2e password"
MIGRATE = "label=com.docker.compose.service=migrate"


def test_health_through_the_published_port(stack: Stack) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "client.cli", "health", "--gateway", stack.target],
        capture_output=True, text=True, timeout=patience(60), check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "SERVING" in done.stdout


def test_the_web_client_and_the_api_for_browsers_on_the_published_web_port(stack: Stack) -> None:
    """The image carries the built web client and the gateway serves it, with its
    Content-Security-Policy, beside the API over Connect and gRPC-Web."""
    base = f"http://127.0.0.1:{stack.web_port}"
    with urllib.request.urlopen(base + "/", timeout=patience(30)) as page:
        assert page.status == 200
        assert page.headers["content-type"].startswith("text/html")
        assert "default-src 'self'" in page.headers["content-security-policy"]
        assert "<script" in page.read().decode()
    for protocol in PROTOCOLS:
        request = lobby_pb2.LoginRequest(name=f"e2e-web-{protocol}").SerializeToString()
        answer = Call(base, f"/{AUTH_SERVICE}/Login", request, protocol=protocol).run()
        assert answer.code == "ok", answer
        assert lobby_pb2.LoginResponse.FromString(answer.messages[0]).player_id.startswith("p-")


@pytest.mark.parametrize("game", GAMES)
async def test_a_game_of_each_kind_against_the_bots(stack: Stack, game: str) -> None:
    session = Session(stack.target)
    await session.login(f"e2e-{game}")
    await play_against_bots(session, game)
    await session.close()


async def test_an_account_outlives_a_restart_of_its_database(stack: Stack) -> None:
    """An account registered through the gateway plays a game against the bots; PostgreSQL's
    container is restarted (its data on the volume); the account logs in again with its
    password, as the same player, and finds its game. The gateway's pooled connections to the
    old server are gone: a call may be told UNAVAILABLE ("retry") until the pool has new ones."""
    # The one-shot migrate service ran (each `up` runs it again: a no-op) and never failed (it
    # may have said it waited for PostgreSQL to start).
    (migrate,) = run("podman", "ps", "-a", "-q", "--filter", LABEL, "--filter", MIGRATE).split()
    done = subprocess.run(
        ["podman", "logs", migrate], capture_output=True, text=True, timeout=patience(30),
        check=True,
    )  # fmt: skip
    said = done.stdout + done.stderr
    assert "applied 0001_accounts" in said, said
    assert "migration failed" not in said, said
    session = Session(stack.target)
    registered = await session.register("e2e-account", PASSWORD)
    assert registered.player_id.startswith("a-")
    played = await play_against_bots(session, "esoloe")
    await session.close()

    (postgres,) = stack.containers("postgres")
    started = _state(postgres["id"], "StartedAt")
    await asyncio.to_thread(run, "podman", "restart", postgres["id"])
    assert _state(postgres["id"], "StartedAt") != started
    await asyncio.to_thread(stack.wait_ready, postgres)

    again = Session(stack.target)

    async def login() -> lobby_pb2.LoginResponse | None:
        try:
            return await again.account_login("e2e-account", PASSWORD)
        except grpc.aio.AioRpcError as error:
            if error.code() != grpc.StatusCode.UNAVAILABLE:
                raise
            return None

    reply = await eventually(login, 30, "the account logging in after the restart")
    assert reply.player_id == registered.player_id
    assert reply.session_id != registered.session_id
    games = await again.lobby.ListGames(lobby_pb2.ListGamesRequest(), metadata=again.metadata)
    assert played.status.game_id in [g.status.game_id for g in games.games]
    await again.close()


async def test_the_stop_signal_to_every_container_fails_no_call(stack: Stack) -> None:
    """Each container in turn gets its stop signal (what `docker stop` and Kubernetes send:
    SIGTERM; PostgreSQL's fast shutdown, SIGINT), is brought back by its restart policy, and
    is ready again before the next; meanwhile a player plays e-SOLO-e against the bots, and
    every call it makes must succeed. The player's channel waits for the gateway while the
    gateway itself restarts (wait_for_ready), as a client should."""
    failures: list[str] = []
    games_played = 0
    stop = asyncio.Event()

    async def player() -> None:
        nonlocal games_played
        session = Session(stack.target, channel=patient_channel(stack.target))
        await session.login("e2e-sigterm")
        while not stop.is_set():
            try:
                await play_against_bots(session, "esoloe")
                games_played += 1
            except grpc.aio.AioRpcError as error:
                failures.append(f"{error.code().name}: {error.details()}")
        await session.close()

    playing = asyncio.create_task(player())
    containers = stack.containers()
    assert {c["service"] for c in containers} == {"redis", "postgres", *PORTS}
    exits = {}
    for container in containers:
        started = _state(container["id"], "StartedAt")
        signalled = str(int(time.time()) - 1)
        run("podman", "kill", "--signal", STOP_SIGNALS[container["service"]], container["id"])
        await asyncio.to_thread(_wait_restarted, stack, container, started)
        exits[container["name"]] = _exit_codes(container["id"], signalled)
    stop.set()
    await asyncio.wait_for(playing, patience(300))
    assert not failures, failures
    # Each process ended by itself, cleanly (a process without a SIGTERM handler ends 143).
    # Podman may report one exit twice, or an exit of the test before within the window's
    # first second: what matters is that there was one and that every one was clean.
    assert all(codes and set(codes) == {"0"} for codes in exits.values()), exits
    assert games_played >= len(containers) // 4


def patient_channel(target: str) -> grpc.aio.Channel:
    """A channel whose calls wait for the gateway to be reachable instead of failing at once,
    and are tried again when it goes away before they reached it: UNAVAILABLE, and CANCELLED
    before any answer began, which is how gRPC ends a call that reaches a server just as it
    begins to stop (grpc/grpc#41785; the call was never served)."""
    config = {
        "methodConfig": [
            {
                "name": [{}],
                "waitForReady": True,
                "retryPolicy": {
                    "maxAttempts": 5,
                    "initialBackoff": "0.1s",
                    "maxBackoff": "1s",
                    "backoffMultiplier": 2,
                    "retryableStatusCodes": ["UNAVAILABLE", "CANCELLED"],
                },
            }
        ]
    }
    return grpc.aio.insecure_channel(target, options=[("grpc.service_config", json.dumps(config))])


def _state(container_id: str, field: str) -> str:
    return run("podman", "inspect", "--format", f"{{{{.State.{field}}}}}", container_id).strip()


def _exit_codes(container_id: str, since: str) -> list[str]:
    """How the container's process ended each time since `since` (podman's events: the state
    shows 0 again once the container is restarted)."""
    return run(
        "podman", "events", "--stream=false", "--since", since, "--filter",
        f"container={container_id}", "--filter", "event=died", "--format",
        "{{.ContainerExitCode}}",
    ).split()  # fmt: skip


def _wait_restarted(stack: Stack, container: dict[str, str], started: str) -> None:
    deadline = time.monotonic() + patience(120)
    while _state(container["id"], "StartedAt") == started:
        assert time.monotonic() < deadline, f"{container['name']} was not restarted"
        time.sleep(0.5)
    stack.wait_ready(container)


async def test_a_game_service_scaled_to_three_gets_calls_on_every_replica(stack: Stack) -> None:
    await asyncio.to_thread(stack.compose, "up", "-d", "--scale=solo=3")
    replicas = stack.containers("solo")
    assert len(replicas) == 3
    for container in replicas:
        await asyncio.to_thread(stack.wait_ready, container)
    before = [stack.metric(c, "tabletop_rpc_seconds_count") for c in replicas]

    session = Session(stack.target)
    await session.login("e2e-scale")
    created = await session.lobby.PlayAgainstBots(
        lobby_pb2.PlayAgainstBotsRequest(game="solo"), metadata=session.metadata
    )
    request = common_pb2.GetViewRequest(game_id=created.status.game_id)
    deadline = time.monotonic() + patience(30)  # the gateway resolves names every 5 s
    served: list[float] = []
    while time.monotonic() < deadline:
        for _ in range(20):
            await session.game("solo").GetView(request, metadata=session.metadata)
        await asyncio.sleep(0.5)
        after = [stack.metric(c, "tabletop_rpc_seconds_count") for c in replicas]
        served = [a - b for a, b in zip(after, before, strict=True)]
        if all(count > 0 for count in served):
            break
    await session.close()
    assert all(count > 0 for count in served), served


@pytest.mark.parametrize(
    ("cpus", "counted"), [("1", 1), ("0.5", 1), ("", len(os.sched_getaffinity(0)))]
)
def test_bot_workers_count_the_cpus_their_container_may_use(
    stack: Stack, cpus: str, counted: int
) -> None:
    """BOT_PROCESSES, unset, is one search process per CPU of the container's limit, as the
    image's bot worker reads it under the engine's cgroups (not the host's CPU count)."""
    limit = ["--cpus", cpus] if cpus else []
    script = "from services.bots.worker import cpu_limit; print(cpu_limit())"
    out = run("podman", "run", "--rm", *limit, "--entrypoint", "python", IMAGE, "-c", script)
    assert int(out.strip()) == counted
