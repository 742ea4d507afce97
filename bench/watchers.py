"""Many watchers on one replica: N Watch streams over M e-SOLO-e games, through one gateway to one
game-service replica (separate processes, a local redis-server), while moves are played at a
steady rate. Prints the delivery latency from commit to watcher, the Redis connections each
process holds, the memory the watchers cost and the CPU each process used.

Latency is the watcher's clock at arrival less the commit's time (`EventEnvelope.time`, the
game service's clock): the same machine, so the same clock."""

from __future__ import annotations

import asyncio
import os
import random
import time
from typing import Any

import grpc
import uvloop
from redis.asyncio import Redis

from client.session import Session
from games.esoloe.rules import RULES
from runtime.launch import Launch
from runtime.localredis import LocalRedis
from tabletop.common.v1 import common_pb2
from tabletop.esoloe.v1 import esoloe_pb2

SECRET = "bench-watchers-signing-key-0123456789"
RESUMABLE = {
    grpc.StatusCode.CANCELLED,
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.RESOURCE_EXHAUSTED,
}
"""Watch ends a client resumes from its next version."""

PLAYERS = 10
"""Players holding the streams (the per-player stream limit is raised for the bench)."""


def _rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _openings(count: int, plies: int) -> list[list[str]]:
    """For each game, `plies` moves of a random game that does not end within them."""
    rng = random.Random(7)
    found: list[list[str]] = []
    while len(found) < count:
        state = RULES.new_game(0)
        moves: list[str] = []
        while len(moves) < plies and not state.finished:
            move = rng.choice(state.legal_moves(state.to_act()[0]))
            state, _ = state.apply(state.to_act()[0], move)
            moves.append(move)
        if not state.finished:
            found.append(moves)
    return found


def _percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


async def _bench(
    launch: Launch, redis_url: str, games: int, per_game: int, rate: float, plies: int
) -> list[str]:
    gateway = launch.gateway_targets[0]
    sessions = [Session(gateway) for _ in range(PLAYERS)]
    for index, session in enumerate(sessions):
        await session.login(f"watcher{index}")
    owner = sessions[0]
    stub = owner.game("esoloe")
    game_ids = [
        (
            await stub.CreateGame(
                esoloe_pb2.CreateGameRequest(players=[owner.player_id] * 2),
                metadata=owner.metadata,
            )
        ).status.game_id
        for _ in range(games)
    ]
    service = launch.of("game")[0].pid
    gateway_pid = launch.of("gateway")[0].pid
    rss_before = {"game service": _rss_mb(service), "gateway": _rss_mb(gateway_pid)}
    latencies: list[float] = []
    received = 0
    expected = games * per_game
    ready = 0
    all_ready = asyncio.Event()

    reopened = 0

    async def watch(session: Session, game_id: str) -> None:
        """One watcher, as a client does it: a dropped stream is opened again from the next
        version (counted in `reopened`)."""
        nonlocal received, ready, reopened
        next_version = 0
        while True:
            request = common_pb2.WatchRequest(
                game_id=game_id, from_version=next_version, public=True
            )
            stream = session.game("esoloe").Watch(request, metadata=session.metadata)
            try:
                async for update in stream:
                    now = time.time()
                    next_version = update.envelope.version + 1
                    if update.envelope.version > 0:
                        latencies.append(now - update.envelope.time.ToMilliseconds() / 1000)
                        received += 1
                    else:  # the game's creation: the stream is up
                        ready += 1
                        if ready == expected:
                            all_ready.set()
                return
            except grpc.aio.AioRpcError as error:
                if error.code() not in RESUMABLE:
                    raise
                reopened += 1
                await asyncio.sleep(0.5)

    # Streams open the way players arrive: a few hundred at a time, not all in one instant (a
    # gRPC server cancels calls arriving faster than it can take them beyond a few thousand).
    tasks = []
    opened_at = time.perf_counter()
    for g, game_id in enumerate(game_ids):
        for w in range(per_game):
            session = sessions[(g * per_game + w) % PLAYERS]
            tasks.append(asyncio.create_task(watch(session, game_id)))
            if len(tasks) % 250 == 0:
                await asyncio.sleep(0.25)
    while not all_ready.is_set():
        failed = [t for t in tasks if t.done()]
        if failed:
            raise RuntimeError(f"{len(failed)} streams failed: {failed[0].exception()}")
        if time.perf_counter() - opened_at > 300:
            raise RuntimeError(f"only {ready} of {expected} streams came up in 300 s")
        await asyncio.wait({asyncio.ensure_future(all_ready.wait())}, timeout=5)
    setup = time.perf_counter() - opened_at
    rss_after = {"game service": _rss_mb(service), "gateway": _rss_mb(gateway_pid)}
    cpu_before = {"game service": _cpu_seconds(service), "gateway": _cpu_seconds(gateway_pid)}
    info = Redis.from_url(redis_url)
    redis_pid = int((await info.info("server"))["process_id"])
    await info.aclose()
    cpu_before["redis"] = _cpu_seconds(redis_pid)
    client_before = time.process_time()
    # Moves at a steady rate, round robin over the games, one ply of each at a time.
    openings = _openings(games, plies)
    interval = 1.0 / rate
    started = time.perf_counter()
    count = 0
    moves: list[Any] = []
    last: dict[int, Any] = {}
    for ply in range(plies):
        for index, game_id in enumerate(game_ids):
            due = started + count * interval
            delay = due - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            if index in last:  # a game's plies in order (with few games, its last may be out)
                await last[index]
            last[index] = asyncio.ensure_future(
                stub.Play(
                    common_pb2.PlayRequest(
                        game_id=game_id,
                        move=openings[index][ply],
                        expected_version=ply,
                        seat=ply % 2,
                    ),
                    metadata=owner.metadata,
                )
            )
            moves.append(last[index])
            count += 1
    elapsed = time.perf_counter() - started
    await asyncio.gather(*moves)
    await asyncio.sleep(2.0)  # the last moves reach their watchers
    cpu = {
        "game service": _cpu_seconds(service) - cpu_before["game service"],
        "gateway": _cpu_seconds(gateway_pid) - cpu_before["gateway"],
        "redis": _cpu_seconds(redis_pid) - cpu_before["redis"],
        "bench client": time.process_time() - client_before,
    }
    redis = Redis.from_url(redis_url)
    listed: Any = await redis.client_list()
    await redis.aclose()
    connections: dict[str, int] = {}
    for client in listed:
        name = client.get("name") or "(bench)"
        connections[name] = connections.get(name, 0) + 1
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    for session in sessions:
        await session.close()
    per_thousand = {
        name: (rss_after[name] - rss_before[name]) * 1000 / expected for name in rss_before
    }
    return [
        f"{expected} Watch streams over {games} games ({per_game} each), one gateway, one game "
        f"service replica (all up in {setup:.1f} s); {count} moves at {count / elapsed:.0f}/s",
        f"  delivered {received} of {count * per_game} updates ({reopened} streams resumed "
        "after a drop); commit -> watcher latency "
        f"p50 {_percentile(latencies, 0.5) * 1000:.1f} ms, p99 "
        f"{_percentile(latencies, 0.99) * 1000:.1f} ms, max {max(latencies) * 1000:.1f} ms",
        "  Redis connections: "
        + ", ".join(f"{name} {n}" for name, n in sorted(connections.items()))
        + " (the game service's bound: 16; the gateway holds none)",
        "  memory per 1,000 watchers: "
        + ", ".join(f"{name} {mb:.1f} MB" for name, mb in per_thousand.items()),
        f"  CPU seconds over the {elapsed:.1f} s of moves: "
        + ", ".join(f"{name} {seconds:.1f}" for name, seconds in cpu.items()),
    ]


def run(games: int = 1000, per_game: int = 10, rate: float = 200.0, plies: int = 6) -> list[str]:
    redis = LocalRedis(appendonly=False)
    launch = Launch(
        redis_url=redis.url,
        env={
            "TOKEN_SECRET": SECRET,
            "RATE_LIMIT_PER_SECOND": "1000000",
            "RATE_LIMIT_BURST": "1000000",
            "LOGIN_RATE_LIMIT_PER_SECOND": "1000",
            "LOGIN_RATE_LIMIT_BURST": "1000",
            "MAX_STREAMS_PER_PLAYER": str(games * per_game),
            "MAX_LIVE_GAMES": str(games + 10),
            "GUEST_MAX_LIVE_GAMES": str(games + 10),
        },
        games=["esoloe"],
        lobby=False,
        matchmakers=0,
        bot_workers=0,
        quiet=True,
    )
    try:
        launch.start()
        if not launch.ready():
            raise RuntimeError("the platform did not start")
        return uvloop.run(_bench(launch, redis.url, games, per_game, rate, plies))
    finally:
        launch.stop()
        redis.stop()


if __name__ == "__main__":
    import sys

    for line in run(*(int(a) for a in sys.argv[1:3])):
        print(line, flush=True)
