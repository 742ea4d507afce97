"""The platform as its users deploy it: the image built from deploy/Dockerfile, the stack started
from deploy/docker-compose.yml, with podman and podman-compose (`make e2e` sets podman up with
deploy/podman/setup). Where no container engine runs these tests skip, saying why; with
E2E_REQUIRED=1 (CI) they fail instead."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from client.session import Session
from runtime.localredis import free_port
from tabletop.common.v1 import common_pb2
from tabletop.lobby.v1 import lobby_pb2
from tabletop.solo.v1 import solo_pb2
from tests.platform import play_until_finished
from tests.timing import patience

ROOT = Path(__file__).resolve().parents[2]
COMPOSE_FILE = ROOT / "deploy" / "docker-compose.yml"
PROJECT = "tabletop-e2e"
LABEL = f"label=io.podman.compose.project={PROJECT}"
IMAGE = "localhost/tabletop:latest"
STOP_SIGNALS = {
    name: service.get("stop_signal", "SIGTERM")
    for name, service in yaml.safe_load(COMPOSE_FILE.read_text())["services"].items()
}
"""The signal `compose stop` (and `docker stop`) sends each service's containers."""
# The port each process listens on inside its container (deploy/docker-compose.yml).
PORTS = {
    "esoloe": 50051, "solo": 50052, "solace": 50053, "zoxso": 50054, "lobby": 50055,
    "accounts": 50056, "gateway": 50050, "bots": 50060, "matchmaker": 50070, "ratings": 50080,
}  # fmt: skip
ONE_SHOT = ("migrate",)
"""Services that run once and exit (podman lists them while they run)."""
REPLICATED = ["esoloe", "solo", "solace", "zoxso", "lobby", "accounts", "matchmaker", "bots"]
"""Services that run two replicas, as the Compose file's deploy.replicas asks (podman-compose
ignores it: the stack is scaled explicitly)."""


OPTIONS = {
    "solo": lobby_pb2.GameOptions(
        solo=solo_pb2.Options(players=2, mode=solo_pb2.MODE_ROUNDS, rounds=1, jump_in_window_ms=0)
    )
}
"""A Solo game of one round between two (its default is four players to 500 points), whose bots
act at once: the player is a program (with a person's window a round takes minutes)."""


async def play_against_bots(session: Session, game: str) -> lobby_pb2.PlayAgainstBotsResponse:
    """Play a game of `game` against the bots to its end, with random legal moves; the game
    read back is finished, and the bots played too."""
    reply: lobby_pb2.PlayAgainstBotsResponse = await session.lobby.PlayAgainstBots(
        lobby_pb2.PlayAgainstBotsRequest(game=game, options=OPTIONS.get(game)),
        metadata=session.metadata,
        timeout=patience(30),
    )
    # Looking every 0.1 s keeps the player well inside the gateway's rate limit (50 calls/s).
    await play_until_finished(
        session, game, reply.status.game_id, reply.seat, timeout=240, poll=0.1
    )
    view = await session.game(game).GetView(
        common_pb2.GetViewRequest(game_id=reply.status.game_id), metadata=session.metadata
    )
    assert view.status.finished
    assert view.status.version > 1  # the bots played too
    return reply


def _engine_problem() -> str:
    if shutil.which("podman") is None:
        return "podman is not installed (as root, deploy/podman/setup installs it)"
    info = subprocess.run(["podman", "info"], capture_output=True, text=True, check=False)
    if info.returncode != 0:
        return f"podman cannot run containers here: {info.stderr.strip()[-300:]}"
    return ""


def run(*command: str, timeout: float = 600, check: bool = True) -> str:
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=timeout, check=False, cwd=ROOT
    )
    if check and done.returncode != 0:
        raise AssertionError(
            f"{' '.join(command)} exited {done.returncode}:\n{done.stdout[-2000:]}\n"
            f"{done.stderr[-4000:]}"
        )
    return done.stdout


@dataclass
class Stack:
    """The running Compose project: the gateway's published ports (gRPC, web) and the compose
    command."""

    port: int
    web_port: int
    env: dict[str, str]

    @property
    def target(self) -> str:
        return f"127.0.0.1:{self.port}"

    def compose(self, *args: str, timeout: float = 600, check: bool = True) -> str:
        command = [sys.executable, "-m", "podman_compose", "-p", PROJECT, "-f", str(COMPOSE_FILE)]
        done = subprocess.run(
            [*command, *args], capture_output=True, text=True, timeout=timeout, check=False,
            cwd=ROOT, env=self.env,
        )  # fmt: skip
        if check and done.returncode != 0:
            raise AssertionError(f"podman-compose {' '.join(args)}: {done.stderr[-4000:]}")
        return done.stdout

    def remove(self) -> None:
        """Everything the project made: `compose down` leaves containers that a `--scale` added
        (and all of them when a stop outlasts its timeout); the project's pod holds them all."""
        self.compose("down", "-v", "-t", "5", timeout=patience(300), check=False)
        run("podman", "pod", "rm", "-f", "--ignore", f"pod_{PROJECT}", check=False)
        for kind in ("volume", "network"):
            names = run("podman", kind, "ls", "-q", "--filter", LABEL, check=False).split()
            if names:
                run("podman", kind, "rm", "-f", *names, check=False)

    def containers(self, service: str = "") -> list[dict[str, str]]:
        """The project's running containers (name, service, id), optionally of one service."""
        listed = json.loads(run("podman", "ps", "--filter", LABEL, "--format", "json"))
        found = [
            {
                "name": c["Names"][0],
                "id": c["Id"],
                "service": c["Labels"].get("com.docker.compose.service", ""),
            }
            for c in listed
        ]
        return [c for c in found if not service or c["service"] == service]

    def ready(self, container: dict[str, str]) -> bool:
        """The process in `container` answers its own readiness probe (the one-shot `migrate`:
        it has exited, having applied the migrations)."""
        service = container["service"]
        if service in ONE_SHOT:
            state = run(
                "podman", "inspect", "--format", "{{.State.Status}} {{.State.ExitCode}}",
                container["id"], check=False,
            ).split()  # fmt: skip
            if state[:1] == ["exited"] and state[1:] != ["0"]:
                logs = run("podman", "logs", "--tail", "30", container["id"], check=False)
                raise AssertionError(f"{container['name']} failed:\n{logs}")
            return state == ["exited", "0"] or not state  # gone once done: done
        if service == "redis":
            probe, answer = ["redis-cli", "ping"], "PONG"
        elif service == "postgres":
            probe, answer = ["pg_isready"], "accepting connections"
        else:
            probe = ["tabletop", "health", "--target", f"127.0.0.1:{PORTS[service]}"]
            answer = "SERVING"
        done = subprocess.run(
            ["podman", "exec", container["id"], *probe], capture_output=True, text=True,
            timeout=patience(30), check=False,
        )  # fmt: skip
        return done.returncode == 0 and answer in done.stdout

    def wait_ready(self, container: dict[str, str], timeout: float = 120) -> None:
        """Wait for the container to be ready; fail after `patience(timeout)`."""
        deadline = time.monotonic() + patience(timeout)
        while not self.ready(container):
            if time.monotonic() > deadline:
                logs = run("podman", "logs", "--tail", "30", container["id"], check=False)
                raise AssertionError(f"{container['name']} is not ready:\n{logs}")
            time.sleep(1)

    def metric(self, container: dict[str, str], name: str) -> float:
        """The sum of a Prometheus metric's samples, read inside the container."""
        script = (
            "import urllib.request;"
            "print(urllib.request.urlopen('http://127.0.0.1:9464/metrics', timeout=10)"
            ".read().decode())"
        )
        text = run("podman", "exec", container["id"], "python", "-c", script)
        return sum(
            float(line.rsplit(" ", 1)[1])
            for line in text.splitlines()
            if line.startswith(name + "{") or line.startswith(name + " ")
        )


@pytest.fixture(scope="session")
def image() -> str:
    """The platform's image, built from deploy/Dockerfile (where a container engine runs)."""
    problem = _engine_problem()
    if problem:
        if os.environ.get("E2E_REQUIRED") == "1":
            pytest.fail(f"E2E_REQUIRED=1 but {problem}")
        pytest.skip(f"no container engine: {problem}")
    run(
        "podman", "build", "-q", "-f", "deploy/Dockerfile", "-t", IMAGE, ".", timeout=patience(1200)
    )
    return IMAGE


@pytest.fixture(scope="module")
def stack(image: str) -> Iterator[Stack]:
    """The Compose stack, for one module's tests (it is down before the next module's)."""
    env = {
        **os.environ,
        "GATEWAY_PORT": str(free_port()),
        "WEB_PORT": str(free_port()),
        "TOKEN_SECRET": secrets.token_urlsafe(32),
        "BOT_KEY": secrets.token_urlsafe(24),
        "INTERNAL_KEY": secrets.token_urlsafe(32),
        "REDIS_PASSWORD": secrets.token_hex(32),
        "POSTGRES_PASSWORD": secrets.token_hex(32),
        # Solo's bots wait 2.5 s after each move at a table with a person: a game takes minutes.
        "BOT_MAX_JUMP_IN_WINDOW_MS": "100",
        # Games of bots made to be watched keep a move a second: spare the tests the wait.
        "BOT_MAX_PACE_MS": "0",
    }
    stack = Stack(port=int(env["GATEWAY_PORT"]), web_port=int(env["WEB_PORT"]), env=env)
    stack.remove()  # what an interrupted run left
    try:
        stack.compose("up", "-d")
        for service in REPLICATED:  # podman-compose takes one --scale at a time
            stack.compose("up", "-d", f"--scale={service}=2")
        for container in stack.containers():
            stack.wait_ready(container, timeout=180)
        yield stack
    finally:
        stack.remove()
