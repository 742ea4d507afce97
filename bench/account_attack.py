"""A bystander's AccountLogin while another address guesses an account's password through
ChangePassword (wrong old passwords from 16 clients at once, for 20 s), through the real gateway
(a separate process, default login limits) on a local PostgreSQL: the bystander's login latency
(p50, max) alone and under the attack, and what the attacker's guesses were answered.

    .venv/bin/python -m bench.account_attack

The gateway trusts 127.0.0.1 as a proxy here, so each client names its address
(`x-forwarded-for`): the attacker's is 198.51.100.1, the bystander's 203.0.113.7."""

from __future__ import annotations

import asyncio
import time
from collections import Counter

import grpc
import uvloop

from bench import sized
from bench.gateway import INTERNAL_KEY, SECRET
from client.session import Session
from runtime import db
from runtime.launch import Launch
from runtime.localpg import LocalPostgres
from runtime.localredis import LocalRedis
from tabletop.lobby.v1 import lobby_pb2
from wire.errors import error_info

PASSWORD = "bench password 0123"
ATTACKERS = 16
SECONDS = sized(20.0, 2.0)
ATTACKER, BYSTANDER = "198.51.100.1", "203.0.113.7"
PACE = 0.5
"""The bystander logs in every PACE seconds (within its address's login limit)."""


def _from(address: str, token: str = "") -> tuple[tuple[str, str], ...]:
    auth = (("authorization", f"Bearer {token}"),) if token else ()
    return (*auth, ("x-forwarded-for", address))


async def _bystander(target: str, seconds: float) -> list[float]:
    """The bystander's login latencies over `seconds`."""
    session = Session(target)
    login = lobby_pb2.AccountLoginRequest(username="bystander", password=PASSWORD)
    latencies: list[float] = []
    deadline = time.perf_counter() + seconds
    try:
        while time.perf_counter() < deadline:
            started = time.perf_counter()
            await session.auth.AccountLogin(login, metadata=_from(BYSTANDER), timeout=60)
            latencies.append(time.perf_counter() - started)
            await asyncio.sleep(PACE)
    finally:
        await session.close()
    return latencies


async def _attack(target: str, token: str, seconds: float, answers: Counter[str]) -> None:
    session = Session(target)
    guess = lobby_pb2.ChangePasswordRequest(old_password="a wrong guess", new_password=PASSWORD)
    deadline = time.perf_counter() + seconds
    try:
        while time.perf_counter() < deadline:
            try:
                await session.auth.ChangePassword(guess, metadata=_from(ATTACKER, token))
                answers["changed"] += 1
            except grpc.aio.AioRpcError as error:
                answers[error_info(error)[0] or error.code().name] += 1
    finally:
        await session.close()


def _figures(latencies: list[float]) -> str:
    ordered = sorted(latencies)
    p50 = ordered[len(ordered) // 2] * 1e3
    return f"p50 {p50:6.0f} ms  max {ordered[-1] * 1e3:6.0f} ms  ({len(ordered)} logins)"


async def _measure(target: str) -> list[str]:
    victim = Session(target)
    made = await victim.auth.Register(
        lobby_pb2.RegisterRequest(username="victim", password=PASSWORD), metadata=_from(ATTACKER)
    )
    await victim.auth.Register(
        lobby_pb2.RegisterRequest(username="bystander", password=PASSWORD),
        metadata=_from(BYSTANDER),
    )
    await victim.close()
    alone = await _bystander(target, SECONDS / 4)
    answers: Counter[str] = Counter()
    attack = [
        asyncio.create_task(_attack(target, made.token, SECONDS, answers)) for _ in range(ATTACKERS)
    ]
    attacked = await _bystander(target, SECONDS)
    await asyncio.gather(*attack)
    told = ", ".join(f"{reason} {count}" for reason, count in sorted(answers.items()))
    return [
        f"bystander's AccountLogin alone:            {_figures(alone)}",
        f"bystander's AccountLogin under the attack: {_figures(attacked)}",
        f"the attacker's {ATTACKERS} clients x {SECONDS:.0f} s of ChangePassword were answered: "
        f"{told} ({answers['UNAUTHENTICATED'] / SECONDS:.1f} guesses checked a second)",
    ]


def run() -> list[str]:
    postgres = LocalPostgres()
    redis = LocalRedis(appendonly=False)
    launch = None
    try:
        db.migrate(postgres.url)
        launch = Launch(
            redis_url=redis.url,
            env={
                "TOKEN_SECRET": SECRET,
                "INTERNAL_KEY": INTERNAL_KEY,
                "DATABASE_URL": postgres.url,
                "TRUSTED_PROXIES": "127.0.0.1/32",
            },
            games=["esoloe"],
            lobby=False,
            matchmakers=0,
            bot_workers=0,
            quiet=True,
        )
        launch.start()
        if not launch.ready():
            raise RuntimeError("the gateway did not start")
        return uvloop.run(_measure(launch.gateway_targets[0]))
    finally:
        if launch is not None:
            launch.stop()
        redis.stop()
        postgres.stop()


if __name__ == "__main__":
    print("\n".join(run()))
