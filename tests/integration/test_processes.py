"""The real processes: `make run`'s supervisor, and a game service's graceful shutdown."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import grpc
import pytest
import redis
from grpc_health.v1 import health_pb2, health_pb2_grpc

from client.session import Session
from runtime.launch import wait_serving
from runtime.localredis import LocalRedis, free_port
from runtime.server import STOP_MARGIN_SECONDS
from tabletop.common.v1 import common_pb2
from tabletop.esoloe.v1 import esoloe_pb2
from tests.leftovers import spawned
from tests.platform import TEST_INTERNAL_KEY, health_becomes
from tests.timing import eventually, patience
from wire.api import api
from wire.proof import platform_channel

pytestmark = pytest.mark.integration

SERVING = health_pb2.HealthCheckResponse.SERVING


def _free_ports_in_a_row(count: int) -> int:
    """The first of `count` consecutive ports that are free now, below the range the system
    hands out to outgoing connections (a port just above `free_port()`'s is as likely as not
    to be some connection's end a moment later); `make run` takes its services' ports that way
    from SERVICE_BASE_PORT."""
    low, _ = map(int, Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
    rng = random.Random()
    for _ in range(100):
        base = rng.randrange(10000, max(low, 10000 + count + 1) - count)
        try:
            with contextlib.ExitStack() as held:
                for port in range(base, base + count):
                    sock = held.enter_context(socket.socket())
                    sock.bind(("127.0.0.1", port))
            return base
        except OSError:
            continue
    raise AssertionError(f"no {count} free ports in a row")


def _start_local(state: Path, gateway_port: int, base_port: int) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "GATEWAY_PORT": str(gateway_port),
        "WEB_PORT": str(gateway_port + 1),
        "SERVICE_BASE_PORT": str(base_port),
        "TABLETOP_STATE_DIR": str(state),
    }
    for name in ("REDIS_URL", "TABLETOP_GATEWAY", "TOKEN_SECRET", "BOT_KEY"):
        env.pop(name, None)
    return subprocess.Popen(
        [sys.executable, "-m", "services.local"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )


def _child(process: subprocess.Popen[bytes], module: str) -> int | None:
    """The pid of the supervisor's child running `module`, if one runs."""
    children = Path(f"/proc/{process.pid}/task/{process.pid}/children").read_text().split()
    for pid in children:
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if module.encode() in command:
            return int(pid)
    return None


def _crash_loop(process: subprocess.Popen[bytes], module: str) -> str:
    """Kill the child running `module` each time the supervisor restarts it, until the
    supervisor gives up; its output."""
    killed: set[int] = set()
    deadline = time.monotonic() + patience(60)
    while process.poll() is None and time.monotonic() < deadline:
        pid = _child(process, module)
        if pid is not None and pid not in killed:
            os.kill(pid, signal.SIGKILL)
            killed.add(pid)
        time.sleep(0.05)
    output, _ = process.communicate(timeout=patience(30))
    text = output.decode()
    assert process.returncode == 0, text
    assert len(killed) > 5, text
    assert "keeps exiting" in text, text
    return text


def _stop_local(process: subprocess.Popen[bytes]) -> str:
    process.send_signal(signal.SIGINT)
    output, _ = process.communicate(timeout=patience(30))
    text = output.decode()
    assert process.returncode == 0, text
    assert "tabletop stopped" in text
    return text


def test_make_run_starts_its_redis_on_the_port_asked(tmp_path: Path, database_url: str) -> None:
    """`make run REDIS_PORT=N`: the local Redis listens on N (its password in keys.json)."""
    state, port = tmp_path / "state", free_port()
    env = {
        **os.environ,
        "REDIS_PORT": str(port),
        "DATABASE_URL": database_url,
        "GATEWAY_PORT": str(free_port()),
        "WEB_PORT": str(free_port()),
        "SERVICE_BASE_PORT": str(_free_ports_in_a_row(16)),
        "TABLETOP_STATE_DIR": str(state),
        "STARTUP_SECONDS": str(patience(60)),
    }
    for name in ("REDIS_URL", "TABLETOP_GATEWAY", "TOKEN_SECRET", "BOT_KEY"):
        env.pop(name, None)
    process = subprocess.Popen(
        [sys.executable, "-m", "services.local"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        assert process.stdout is not None
        said = ""
        while (line := process.stdout.readline().decode()) and "tabletop is up" not in line:
            said += line  # it is up (or said it is not, after STARTUP_SECONDS), or it exited
        assert f"redis-server started on redis://127.0.0.1:{port}/" in said, said
        password = json.loads((state / "keys.json").read_text())["REDIS_PASSWORD"]
        client = redis.Redis(host="127.0.0.1", port=port, password=password)
        try:
            assert client.ping()
        finally:
            client.close()
    finally:
        _stop_local(process)


async def test_local_platform_starts_serves_stops_and_keeps_its_games(tmp_path: Path) -> None:
    """`make run`: the client finds the gateway with no flag; when a child keeps crashing the
    supervisor stops everything but keeps Redis's and PostgreSQL's data, and after a restart
    the games, the players' tokens and the accounts are all still there."""
    gateway_port = _free_ports_in_a_row(18)  # then its web port, then the services'
    base_port = gateway_port + 2
    state = tmp_path / "state"
    try:
        await _local_platform_keeps_its_games(state, gateway_port, base_port)
    finally:
        where = state / "postgres" / "WHERE"  # run as root: the cluster is kept elsewhere
        if where.exists():
            shutil.rmtree(where.read_text().strip(), ignore_errors=True)


async def _local_platform_keeps_its_games(state: Path, gateway_port: int, base_port: int) -> None:
    target = f"127.0.0.1:{gateway_port}"
    process = _start_local(state, gateway_port, base_port)
    try:
        # Eight processes start at once.
        await health_becomes(target, SERVING, "tabletop.esoloe.v1.EsoloeService", seconds=60)
        announced = state / "gateway"
        # Written once every game service is SERVING too.
        await eventually(announced.exists, 60, "the gateway's address is announced")
        assert announced.read_text().strip() == target
        health = subprocess.run(
            [sys.executable, "-m", "client.cli", "health"],
            env={**os.environ, "TABLETOP_STATE_DIR": str(state), "TABLETOP_GATEWAY": ""},
            capture_output=True,
            text=True,
            timeout=patience(30),
        )
        assert health.returncode == 0, health.stdout + health.stderr
        assert health.stdout.strip() == f"{target}: SERVING"
        alice = Session(target)
        await alice.login("alice")
        stub = alice.game("esoloe")
        created = await stub.CreateGame(
            esoloe_pb2.CreateGameRequest(players=[alice.player_id, alice.player_id]),
            metadata=alice.metadata,
        )
        game_id = created.status.game_id
        reply = await stub.Play(
            common_pb2.PlayRequest(game_id=game_id, move="c12", seat=0), metadata=alice.metadata
        )
        assert reply.status.version == 1
        await alice.close()
        member = Session(target)
        await member.register("member", "a long enough password")
        await member.close()
        text = _crash_loop(process, "services.lobby")
    finally:
        if process.poll() is None:
            text = _stop_local(process)
    assert "tabletop is up" in text
    assert f"play in a browser at http://127.0.0.1:{gateway_port + 1}" in text
    assert "tabletop stopped" in text
    assert not (state / "gateway").exists()
    assert any((state / "redis").iterdir()), "Redis's data directory was removed"

    process = _start_local(state, gateway_port, base_port)
    try:
        # Eight processes start at once.
        await health_becomes(target, SERVING, "tabletop.esoloe.v1.EsoloeService", seconds=60)
        again = Session(target)
        again.token, again.player_id = alice.token, alice.player_id  # the token from before

        async def view() -> Any:
            """The game, once the gateway reaches its service (until then: UNAVAILABLE, which
            every client retries)."""
            try:
                return await again.game("esoloe").GetView(
                    common_pb2.GetViewRequest(game_id=game_id, seat=0), metadata=again.metadata
                )
            except grpc.aio.AioRpcError as error:
                if error.code() != grpc.StatusCode.UNAVAILABLE:
                    raise
                return None

        assert (await eventually(view, 10, "the game is served again")).status.version == 1
        await again.close()
        member = Session(target)
        assert (await member.account_login("member", "a long enough password")).name == "member"
        await member.close()
    finally:
        _stop_local(process)


async def test_game_service_drains_on_sigterm(redis_url: str) -> None:
    """Also: it logs JSON lines and serves Prometheus metrics."""
    port, metrics_port = free_port(), free_port()
    env = {
        **os.environ,
        "REDIS_URL": redis_url,
        "LISTEN": f"127.0.0.1:{port}",
        "GRACE_SECONDS": "2",
        "METRICS_PORT": str(metrics_port),
        "INTERNAL_KEY": TEST_INTERNAL_KEY,
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "services.game", "esoloe"], env=env, stderr=subprocess.PIPE
    )
    target = f"127.0.0.1:{port}"
    try:
        await health_becomes(target, SERVING)
        async with platform_channel(target, api("esoloe").full_name, TEST_INTERNAL_KEY) as channel:
            stub = api("esoloe").stub(channel)
            created = await stub.CreateGame(esoloe_pb2.CreateGameRequest(players=["p-a", "p-b"]))
            await stub.Play(
                common_pb2.PlayRequest(game_id=created.status.game_id, move="c12"),
                metadata=(("x-tabletop-player", "p-a"),),
            )
        url = f"http://127.0.0.1:{metrics_port}/metrics"
        with urllib.request.urlopen(url) as reply:  # noqa: ASYNC210
            metrics = reply.read().decode()
        assert 'tabletop_moves_total{game="esoloe",outcome="accepted"} 1.0' in metrics
        play = "/tabletop.esoloe.v1.EsoloeService/Play"
        assert f'tabletop_rpc_seconds_count{{code="OK",method="{play}"}} 1.0' in metrics
        async with grpc.aio.insecure_channel(target) as channel:
            watch = health_pb2_grpc.HealthStub(channel).Watch(health_pb2.HealthCheckRequest())
            first = await watch.read()
            assert first.status == health_pb2.HealthCheckResponse.SERVING
            process.send_signal(signal.SIGTERM)
            second = await asyncio.wait_for(watch.read(), timeout=patience(10))
            assert second.status == health_pb2.HealthCheckResponse.NOT_SERVING
        assert process.wait(timeout=patience(15)) == 0
        assert process.stderr is not None
        with process.stderr:
            lines = process.stderr.read().decode().splitlines()
        events = [json.loads(line) for line in lines]
        assert {"listening", "game created", "stopping"} <= {e["event"] for e in events}
        created_line = next(e for e in events if e["event"] == "game created")
        assert created_line["service"] == "esoloe"
        assert created_line["game_id"] == created.status.game_id
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        if process.stderr is not None:
            process.stderr.close()


PROCESSES = {
    "game": ["services.game", "esoloe"],
    "lobby": ["services.lobby"],
    "matchmaker": ["services.matchmaker"],
    "bots": ["services.bots"],
}


@pytest.mark.parametrize("away", ["stopped", "frozen"])
@pytest.mark.parametrize("kind", PROCESSES)
def test_a_process_whose_redis_went_away_stops_on_sigterm(kind: str, away: str) -> None:
    """Each process that uses Redis, its Redis gone (stopped: connections refused; frozen:
    connections that never answer, as behind a partition), finishes stopping on SIGTERM by
    itself within its grace period and margin, and exits 0. (A process whose stopping overruns
    exits 1, from its own watchdog: runtime/server.py, `exit_if_stopping_overruns`.)"""
    redis = LocalRedis(appendonly=False)
    port = free_port()
    env = {
        **os.environ,
        "REDIS_URL": redis.url,
        "LISTEN": f"127.0.0.1:{port}",
        "GRACE_SECONDS": "2",
        "INTERNAL_KEY": TEST_INTERNAL_KEY,
        "BOT_KEY": "test-bot-key-0123456789",
        "GATEWAY_ADDR": f"127.0.0.1:{free_port()}",
        "ESOLOE_ADDR": f"127.0.0.1:{free_port()}",
    }
    try:
        with spawned([sys.executable, "-m", *PROCESSES[kind]], env=env) as process:
            assert wait_serving(f"127.0.0.1:{port}", [], timeout=patience(20)), kind
            if away == "frozen":
                os.kill(redis.process.pid, signal.SIGSTOP)
            else:
                redis.stop()
            time.sleep(1)  # its clients find out (or hang) meanwhile, as they would
            process.send_signal(signal.SIGTERM)
            code = process.wait(timeout=patience(2 + STOP_MARGIN_SECONDS))
            assert code == 0, f"{kind} overran its stopping time (exit code {code})"
    finally:
        if away == "frozen":
            os.kill(redis.process.pid, signal.SIGCONT)
        redis.stop()
