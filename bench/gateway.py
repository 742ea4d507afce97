"""Play round trips through the real gateway and game service, next to a bare echo call.

Starts a redis-server, the e-SOLO-e service, the gateway and an echo server as separate
processes (the deployment's shape), then drives them from this process with 1 and 64 concurrent
games. Moves are chosen with a local copy of the engine so only Play calls are timed. The same
games are also played on a player session (every call a message on one stream).
"""

from __future__ import annotations

import asyncio
import os
import random
import statistics
import time
import urllib.request
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
import uvloop

from bench.echo import ECHO_METHOD
from client.session import Session
from games.esoloe.rules import RULES
from runtime.launch import Launch
from runtime.localredis import LocalRedis, free_port
from tabletop.common.v1 import common_pb2
from tabletop.esoloe.v1 import esoloe_pb2
from wire.api import api
from wire.metadata import PLAYER_METADATA
from wire.proof import ProveCalls

SECRET = "bench-signing-key-0123456789-0123456789"
INTERNAL_KEY = "bench-internal-key-0123456789"


ROUNDS = 5
"""Turns each of echo, direct and gateway calls takes, per concurrency."""


def _random_game(seed: int) -> list[tuple[int, str]]:
    rng = random.Random(seed)
    state = RULES.new_game(seed)
    moves = []
    while state.to_act():
        seat = state.to_act()[0]
        move = rng.choice(state.legal_moves(seat))
        moves.append((seat, move))
        state, _ = state.apply(seat, move)
    return moves


def _percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def _drive(
    concurrency: int, seconds: float, one: Callable[[int], Awaitable[list[float]]]
) -> tuple[list[float], float]:
    """Run `one(worker)` loops in `concurrency` tasks for `seconds`; latencies and elapsed."""
    deadline = time.perf_counter() + seconds
    latencies: list[float] = []

    async def worker(index: int) -> None:
        while time.perf_counter() < deadline:
            latencies.extend(await one(index))

    start = time.perf_counter()
    await asyncio.gather(*(worker(i) for i in range(concurrency)))
    return latencies, time.perf_counter() - start


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far (Linux /proc)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except OSError:
        return float("nan")


BATCHED = {
    "game writes per batch to Redis": "tabletop_commit_batch_size",
    "calls per relay frame": 'tabletop_relay_frame_size{direction="calls"}',
    "answers per relay frame": 'tabletop_relay_frame_size{direction="answers"}',
}
"""The game service's histograms of things sent together (runtime/group_commit.py, the relay
links' frames), by what the bench calls them."""


def _batches(metrics: str) -> list[float]:
    """For each of BATCHED: how many batches (frames) the game service counted so far, and how
    many writes (calls, answers) they held (its /metrics), in turn."""
    try:
        with urllib.request.urlopen(f"http://{metrics}/metrics", timeout=5) as reply:
            text = reply.read().decode()
    except OSError:
        return [0.0] * (2 * len(BATCHED))
    values = dict(line.rpartition(" ")[::2] for line in text.splitlines() if line[:1] != "#")
    found = []
    for metric in BATCHED.values():
        name, brace, labels = metric.partition("{")
        for part in ("count", "sum"):
            found.append(float(values.get(f"{name}_{part}{brace}{labels}", 0.0)))
    return found


async def _bench(
    gateway: str, service: str, echo: str, seconds: float, pids: dict[str, int], metrics: str
) -> list[str]:
    players = [Session(gateway), Session(gateway)]
    for index, player in enumerate(players):
        await player.login(f"bench{index}")
    channel = players[0].channel
    stub = players[0].game("esoloe")
    echo_channel = grpc.aio.insecure_channel(echo)
    echo_call: grpc.aio.UnaryUnaryMultiCallable[bytes, bytes] = echo_channel.unary_unary(
        ECHO_METHOD
    )
    payload = common_pb2.PlayRequest(
        game_id="esoloe-" + "0" * 20, move="c12", expected_version=3
    ).SerializeToString()
    # One player holds both seats (a table of their own: all a player may create), and says
    # which seat each move is for.
    seats = [players[0].player_id] * 2
    metadata = [players[0].metadata] * 2

    async def echo_once(_worker: int) -> list[float]:
        t0 = time.perf_counter()
        await echo_call(payload, metadata=metadata[0])
        return [time.perf_counter() - t0]

    # Games are chosen beforehand, so the timed loop only makes Play calls.
    games = [_random_game(seed) for seed in range(200)]
    started = [0]

    def game_loop(
        target: Any, metadata: list[Any], seats: list[str] = seats
    ) -> Callable[[int], Awaitable[list[float]]]:
        async def one_game(_worker: int) -> list[float]:
            created = await target.CreateGame(
                esoloe_pb2.CreateGameRequest(players=seats), metadata=metadata[0]
            )
            game_id = created.status.game_id
            started[0] += 1
            times = []
            for version, (seat, move) in enumerate(games[started[0] % len(games)]):
                request = common_pb2.PlayRequest(
                    game_id=game_id, move=move, expected_version=version, seat=seat
                )
                t0 = time.perf_counter()
                await target.Play(request, metadata=metadata[seat])
                times.append(time.perf_counter() - t0)
            return times

        return one_game

    one_game = game_loop(stub, metadata)
    # The same calls straight to the game service, as the gateway makes them (no token).
    direct_channel = grpc.aio.insecure_channel(service, interceptors=[ProveCalls(INTERNAL_KEY)])
    direct = game_loop(
        api("esoloe").stub(direct_channel),
        [((PLAYER_METADATA, player),) for player in seats],
    )
    # The same games through the gateway on a player session: every call a message on one
    # stream (client/link.py).
    streamed = Session(gateway)
    await streamed.login("bench-session")
    streamed.open_stream()
    on_session = game_loop(
        streamed.game("esoloe"), [streamed.metadata] * 2, [streamed.player_id] * 2
    )

    lines = []
    await _drive(4, 1.0, one_game)  # warm up
    for concurrency in (1, 64):
        # Echo, direct and gateway calls take turns in short rounds, so a change in the
        # machine's background load hits all three alike; the ratio is also given per round.
        echo_lat: list[float] = []
        direct_lat: list[float] = []
        play_lat: list[float] = []
        session_lat: list[float] = []
        session_time = 0.0
        echo_time = play_time = 0.0
        cpu = dict.fromkeys(pids, 0.0)
        batched = [0.0] * (2 * len(BATCHED))
        ratios = []
        for _round in range(ROUNDS):
            echo_round, elapsed = await _drive(concurrency, seconds / ROUNDS, echo_once)
            echo_lat += echo_round
            echo_time += elapsed
            direct_lat += (await _drive(concurrency, seconds / ROUNDS, direct))[0]
            cpu_before = {name: _cpu_seconds(pid) for name, pid in pids.items()}
            batches_before = await asyncio.to_thread(_batches, metrics)
            play_round, elapsed = await _drive(concurrency, seconds / ROUNDS, one_game)
            for name, pid in pids.items():
                cpu[name] += _cpu_seconds(pid) - cpu_before[name]
            batches_after = await asyncio.to_thread(_batches, metrics)
            for index in range(len(batched)):
                batched[index] += batches_after[index] - batches_before[index]
            play_lat += play_round
            play_time += elapsed
            session_round, elapsed = await _drive(concurrency, seconds / ROUNDS, on_session)
            session_lat += session_round
            session_time += elapsed
            ratios.append(_percentile(play_round, 0.5) / _percentile(echo_round, 0.5))
        e50, e99 = _percentile(echo_lat, 0.5), _percentile(echo_lat, 0.99)
        p50, p99 = _percentile(play_lat, 0.5), _percentile(play_lat, 0.99)
        lines.append(f"concurrency {concurrency}:")
        lines.append(
            f"  bare echo    p50 {e50 * 1e3:6.2f} ms  p99 {e99 * 1e3:6.2f} ms  "
            f"calls/s {len(echo_lat) / echo_time:8.0f}"
        )
        lines.append(
            f"  gateway Play p50 {p50 * 1e3:6.2f} ms  p99 {p99 * 1e3:6.2f} ms  "
            f"accepted moves/s {len(play_lat) / play_time:8.0f}"
        )
        lines.append(
            f"  Play p50 / echo p50 = {p50 / e50:.2f}x   (rounds: median"
            f" {statistics.median(ratios):.2f}x, {min(ratios):.2f}-{max(ratios):.2f}x;"
            f" Play mean {statistics.mean(play_lat) * 1e3:.2f} ms)"
        )
        s50, s99 = _percentile(session_lat, 0.5), _percentile(session_lat, 0.99)
        lines.append(
            f"  on a session p50 {s50 * 1e3:6.2f} ms  p99 {s99 * 1e3:6.2f} ms  "
            f"accepted moves/s {len(session_lat) / session_time:8.0f}"
            f"   (p50 / echo p50 = {s50 / e50:.2f}x)"
        )
        d50, d99 = _percentile(direct_lat, 0.5), _percentile(direct_lat, 0.99)
        lines.append(
            f"  without the gateway (straight to the game service): "
            f"p50 {d50 * 1e3:.2f} ms  p99 {d99 * 1e3:.2f} ms"
        )
        per_move = ", ".join(
            f"{name} {seconds_used / len(play_lat) * 1e3:.2f}" for name, seconds_used in cpu.items()
        )
        lines.append(f"  CPU ms per accepted move: {per_move}")
        for index, what in enumerate(BATCHED):
            count, held = batched[2 * index], batched[2 * index + 1]
            if count:
                lines.append(
                    f"  {what} (gateway Play): mean {held / count:.2f} ({count:.0f} in all)"
                )
    await echo_channel.close()
    await direct_channel.close()
    del channel
    for player in [*players, streamed]:
        await player.close()
    return lines


def run(seconds: float = 5.0) -> list[str]:
    redis = LocalRedis(appendonly=True)
    launch = Launch(
        redis_url=redis.url,
        # One bench player holds as many games at once as it drives: no per-player limits.
        env={"TOKEN_SECRET": SECRET, "INTERNAL_KEY": INTERNAL_KEY,
             "RATE_LIMIT_PER_SECOND": "1000000", "RATE_LIMIT_BURST": "1000000",
             "MAX_LIVE_GAMES": "1000000", "GUEST_MAX_LIVE_GAMES": "1000000"},
        games=["esoloe"],
        lobby=False,
        matchmakers=0,
        bot_workers=0,
        quiet=True,
    )  # fmt: skip
    echo_port = free_port()
    metrics_port = free_port()
    (game,) = launch.of("game")
    game.env = {**game.env, "METRICS_PORT": str(metrics_port)}  # its commit batches
    launch.add("echo", ["bench.echo", str(echo_port)], dict(launch.common))
    try:
        launch.start()
        if not launch.ready():
            raise RuntimeError("the gateway did not start")
        (service,) = launch.of("game")
        pids = {
            "gateway": launch.of("gateway")[0].pid,
            "game service": service.pid,
            "redis": redis.process.pid,
            "bench client": os.getpid(),
        }
        return uvloop.run(
            _bench(
                launch.gateway_targets[0],
                launch.backends["ESOLOE_ADDR"],
                f"127.0.0.1:{echo_port}",
                seconds,
                pids,
                f"127.0.0.1:{metrics_port}",
            )
        )
    finally:
        launch.stop()
        redis.stop()
