"""The ratings consumer: counts each finished rated game once. It reads the finished games'
stream (keys.FINISHED_GAMES) with the consumer group `ratings` (several may run), counts each
game in one PostgreSQL transaction that records its id (store.count: a game already counted is
not counted again), then writes Redis's copy (leaderboard, ratings, the game's change) and
only then acknowledges the entry. Should it stop anywhere before the acknowledgement, the entry
stays pending and is taken over (XAUTOCLAIM, after `claim_idle_seconds`) by a consumer that
finds it counted and only writes Redis again: no game is counted twice, none is skipped."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from typing import Any

from psycopg_pool import AsyncConnectionPool
from redis.asyncio import Redis
from redis.exceptions import ResponseError

from runtime import keys
from runtime.redis import group_entries, redis_failed
from services.ratings.scores import ScoreCache, count_score
from services.ratings.store import RatingCache, count, current

log = logging.getLogger("tabletop.ratings")


class RatingsConsumer:
    def __init__(
        self,
        *,
        redis: Redis,
        database: AsyncConnectionPool,
        consumer: str,
        claim_idle_seconds: float = 30.0,
        block_seconds: float = 1.0,
    ) -> None:
        self.redis = redis
        self.database = database
        self.cache = RatingCache(redis)
        self.scores = ScoreCache(redis)
        self.consumer = consumer
        self.claim_idle_ms = int(claim_idle_seconds * 1000)
        self.block_ms = max(1, int(block_seconds * 1000))
        self.counted = 0
        """Games this consumer counted (a test waits for them)."""
        self.handled = 0
        """Entries this consumer acknowledged."""

    async def run(self, stop: asyncio.Event) -> None:
        grouped = False
        last_claim = 0.0
        while not stop.is_set():
            try:
                if not grouped:
                    with contextlib.suppress(ResponseError):  # BUSYGROUP
                        await self.redis.xgroup_create(
                            keys.FINISHED_GAMES, keys.RATINGS_GROUP, id="0", mkstream=True
                        )
                    grouped = True
                reclaim = time.monotonic() - last_claim >= self.claim_idle_ms / 2000
                if reclaim:
                    last_claim = time.monotonic()
                for entry_id, fields in await self._take(reclaim=reclaim):
                    await self.handle(entry_id, fields)
            except Exception as error:
                if not (redis_failed(error) or _database_failed(error)):
                    raise
                log.warning("cannot count ratings now", extra={"error": str(error)})
                grouped = False
                await asyncio.sleep(1.0)

    async def _take(self, *, reclaim: bool) -> list[tuple[Any, Any]]:
        return await group_entries(
            self.redis, keys.FINISHED_GAMES, keys.RATINGS_GROUP, self.consumer,
            block_ms=self.block_ms, reclaim_idle_ms=self.claim_idle_ms if reclaim else None,
        )  # fmt: skip

    async def handle(self, entry_id: Any, fields: dict[bytes, bytes]) -> None:
        """Count one finished game (once), write Redis's copy, then acknowledge it."""
        game = fields[b"game"].decode()
        game_id = fields[b"game_id"].decode()
        record = json.loads(fields[b"record"])
        if record.get("scored"):
            await self._count_score(game, game_id, record)
        elif record.get("rated"):
            async with self.database.connection() as connection:
                now, changes = await count(connection, game, game_id, record)
                ratings = await current(connection, game, sorted({c.player for c in changes}))
            await self.cache.put(game, ratings)
            if changes:
                await self.cache.put_change(game_id, changes)
            if now:
                self.counted += 1
                log.info(
                    "game counted",
                    extra={"game_id": game_id, "players": [c.player for c in changes]},
                )
        await self.redis.xack(keys.FINISHED_GAMES, keys.RATINGS_GROUP, entry_id)
        self.handled += 1

    async def _count_score(self, game: str, game_id: str, record: dict[str, Any]) -> None:
        """A game played alone onto its score tables (once), then Redis's copy."""
        async with self.database.connection() as connection:
            counted = await count_score(connection, game, game_id, record)
        if counted is None:
            return
        now, player, score, scores = counted
        await self.scores.put(game, {player: scores})
        if record.get("day"):
            await self.scores.put_day(game, record["day"], {player: score})
        if now:
            self.counted += 1
            log.info("score counted", extra={"game_id": game_id, "players": [player]})


def _database_failed(error: BaseException) -> bool:
    import psycopg
    import psycopg_pool

    # UndefinedTable: a database not migrated yet (`tabletop migrate` runs beside it)
    return isinstance(
        error, psycopg.OperationalError | psycopg_pool.PoolTimeout | psycopg.errors.UndefinedTable
    )
