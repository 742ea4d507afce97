"""The ratings consumer process: `python -m services.ratings`. Several may run. Each runs a
ratings consumer (ratings and score tables) and an archiver (services/archive), two consumer
groups on the finished games' stream.
`python -m services.ratings rebuild` writes every game's leaderboard and ratings, and the score
tables of the games played alone, in Redis again from PostgreSQL (after Redis lost its data),
prints what it wrote and exits.

Environment: REDIS_URL, DATABASE_URL (required), ACCOUNTS_ADDR (required: the accounts service,
asked when accounts were made for the deal of the day's tables) with INTERNAL_KEY (the proof of
its calls), LISTEN (its health service, default 0.0.0.0:50080), METRICS_PORT, GRACE_SECONDS,
RATINGS_CLAIM_IDLE_SECONDS (take over an entry another consumer has held this long
unacknowledged, default 30), ARCHIVED_GAME_TTL_SECONDS (how long Redis keeps a game once it is
archived, at most; default 86400; 0: as long as any game).
"""

from __future__ import annotations

import asyncio
import datetime
import logging
import os
import socket
import sys

import psycopg

from runtime import db
from runtime.accounts_client import AccountsClient
from runtime.config import env_float, env_int, env_str, internal_key_from_env
from runtime.observability import configure_logging, serve_metrics
from runtime.redis import connect_redis
from runtime.server import Server, finish, run, wait_for_signal
from services.archive.archiver import Archiver
from services.ratings import store
from services.ratings.cache import RatingCache
from services.ratings.consumer import RatingsConsumer
from services.ratings.scores import ScoreCache

log = logging.getLogger("tabletop.ratings")


def _accounts() -> AccountsClient:
    """The accounts service at ACCOUNTS_ADDR, its calls proven with INTERNAL_KEY."""
    target = os.environ.get("ACCOUNTS_ADDR", "")
    if not target:
        raise SystemExit(
            "ACCOUNTS_ADDR is required: the deal of the day's tables ask the accounts service"
            " when accounts were made"
        )
    return AccountsClient(target, internal_key_from_env())


def _database_url() -> str:
    url = os.environ.get("DATABASE_URL", "")
    if not url:
        raise SystemExit("DATABASE_URL is required: ratings are kept in PostgreSQL")
    return url


async def rebuild() -> dict[str, int]:
    """Redis's ratings, leaderboards and score tables written again from PostgreSQL: players
    per game."""
    redis = connect_redis(env_str("REDIS_URL", "redis://127.0.0.1:6379/0"), name="ratings")
    try:
        async with await psycopg.AsyncConnection.connect(_database_url()) as connection:
            written = await store.rebuild(RatingCache(redis), connection)
            today = datetime.datetime.now(datetime.UTC).date()
            return written | await ScoreCache(redis).rebuild(connection, today)
    finally:
        await redis.aclose()


async def main() -> None:
    grace = env_float("GRACE_SECONDS", 10.0)
    url = _database_url()
    accounts = _accounts()
    redis = connect_redis(env_str("REDIS_URL", "redis://127.0.0.1:6379/0"), name="ratings")
    database = db.pool(url)
    await database.open(wait=False)
    name = f"{socket.gethostname()}-{os.getpid()}"
    claim = env_float("RATINGS_CLAIM_IDLE_SECONDS", 30.0)
    consumer = RatingsConsumer(
        redis=redis, database=database, consumer=name, claim_idle_seconds=claim, accounts=accounts
    )
    archiver = Archiver(
        redis=redis,
        database=database,
        consumer=name,
        keep_seconds=env_int("ARCHIVED_GAME_TTL_SECONDS", 24 * 3600),
        claim_idle_seconds=claim,
    )

    async def ready() -> bool:
        return bool(await redis.ping())

    health = Server(env_str("LISTEN", "0.0.0.0:50080"), [], ready=ready, grace_seconds=grace)
    await health.start()
    serve_metrics(env_int("METRICS_PORT", 0))
    stop = asyncio.Event()
    running = [asyncio.create_task(consumer.run(stop)), asyncio.create_task(archiver.run(stop))]
    log.info("counting ratings and archiving games", extra={"consumer": name})
    await wait_for_signal(grace)
    await health.health.enter_graceful_shutdown()
    stop.set()
    for task in running:
        await finish(task, grace)
    await accounts.close()
    await database.close()
    await health.stop()
    await redis.aclose()


if __name__ == "__main__":
    configure_logging("ratings")
    if sys.argv[1:] == ["rebuild"]:
        written = asyncio.run(rebuild())
        print(", ".join(f"{game}: {n} players" for game, n in sorted(written.items())) or "none")
    elif sys.argv[1:]:
        raise SystemExit("usage: python -m services.ratings [rebuild]")
    else:
        run(main())
