"""Account logins and refreshes per second through the real gateway (a separate process) on a
local PostgreSQL: what an argon2id password check costs a gateway, and what a session refresh
(one database transaction, no password) costs."""

from __future__ import annotations

import asyncio
import time

import uvloop
from argon2 import PasswordHasher

from bench import sized
from bench.gateway import INTERNAL_KEY, SECRET
from client.session import Session
from runtime import db
from runtime.launch import Launch
from runtime.localpg import LocalPostgres
from runtime.localredis import LocalRedis

PASSWORD = "bench password 0123"
SECONDS = sized(5.0, 0.5)


def _hash_cost() -> float:
    hasher = PasswordHasher()
    stored = hasher.hash(PASSWORD)
    start = time.perf_counter()
    for _ in range(10):
        hasher.verify(stored, PASSWORD)
    return (time.perf_counter() - start) / 10


async def _rate(target: str, concurrency: int, what: str) -> tuple[float, float]:
    """Logins (or refreshes) per second with `concurrency` clients, and the p50 latency."""
    sessions = [Session(target) for _ in range(concurrency)]
    for index, session in enumerate(sessions):
        if what == "refresh":
            await session.account_login(f"bench{index % 4}", PASSWORD)
    latencies: list[float] = []
    deadline = time.perf_counter() + SECONDS

    async def client(session: Session, index: int) -> None:
        while time.perf_counter() < deadline:
            started = time.perf_counter()
            if what == "login":
                await session.account_login(f"bench{index % 4}", PASSWORD)
            else:
                await session.refresh()
            latencies.append(time.perf_counter() - started)

    start = time.perf_counter()
    await asyncio.gather(*(client(s, i) for i, s in enumerate(sessions)))
    elapsed = time.perf_counter() - start
    for session in sessions:
        await session.close()
    latencies.sort()
    return len(latencies) / elapsed, latencies[len(latencies) // 2]


async def _measure(target: str) -> list[str]:
    for index in range(4):
        await Session(target).register(f"bench{index}", PASSWORD)
    lines = []
    for what in ("login", "refresh"):
        for concurrency in (1, 8):
            rate, p50 = await _rate(target, concurrency, what)
            lines.append(f"{what:8s} {concurrency} at once: {rate:8.1f}/s  p50 {p50 * 1e3:6.1f} ms")
    return lines


def run() -> list[str]:
    postgres = LocalPostgres()
    redis = LocalRedis(appendonly=False)
    launch = None
    try:
        db.migrate(postgres.url)
        launch = Launch(
            redis_url=redis.url,
            env={"TOKEN_SECRET": SECRET, "INTERNAL_KEY": INTERNAL_KEY,
                 "DATABASE_URL": postgres.url, "LOGIN_RATE_LIMIT_PER_SECOND": "100000",
                 "LOGIN_RATE_LIMIT_BURST": "100000"},
            games=["esoloe"],
            lobby=False,
            matchmakers=0,
            bot_workers=0,
            quiet=True,
        )  # fmt: skip
        launch.start()
        if not launch.ready():
            raise RuntimeError("the gateway did not start")
        return [
            f"argon2id (t=3, 64 MiB, p=4): {_hash_cost() * 1e3:.0f} ms a password check here; "
            "a gateway computes at most 2 at once",
            *uvloop.run(_measure(launch.gateway_targets[0])),
        ]
    finally:
        if launch is not None:
            launch.stop()
        redis.stop()
        postgres.stop()
