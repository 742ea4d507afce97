"""The ratings consumer: counts each finished rated game once. It reads the finished games'
stream (keys.FINISHED_GAMES) with the consumer group `ratings` (several may run), reads the
game's log from Redis for the moves each seat made (model.own_moves), counts the game in one
PostgreSQL transaction that records its id (store.count: a game already counted is not counted
again), then writes Redis's copy (leaderboard, ratings, the game's change) and only then
acknowledges the entry. Should it stop anywhere before the acknowledgement, the entry
stays pending and is taken over (XAUTOCLAIM, after `claim_idle_seconds`) by a consumer that
finds it counted and only writes Redis again: no game is counted twice, none is skipped. So too
when the accounts service (asked when an account was made, for a deal of the day's table) is
out of reach: the entry waits, unacknowledged, and is tried again; nothing of it is written
before the answer."""

from __future__ import annotations

import dataclasses
import json
import logging
from typing import Any

from psycopg_pool import AsyncConnectionPool
from redis.asyncio import Redis

from runtime import game_log, keys
from runtime.accounts_client import AccountsClient, accounts_failed
from runtime.consumer import GroupConsumer
from runtime.db import database_failed
from services.ratings.cache import RatingCache
from services.ratings.model import own_moves
from services.ratings.scores import ScoreCache, count_score, day_counted
from services.ratings.store import count, current
from wire.records import FinishedGame

log = logging.getLogger("tabletop.ratings")


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


class RatingsConsumer(GroupConsumer):
    def __init__(
        self,
        *,
        redis: Redis,
        database: AsyncConnectionPool,
        consumer: str,
        claim_idle_seconds: float = 30.0,
        block_seconds: float = 1.0,
        accounts: AccountsClient | None = None,
    ) -> None:
        """`accounts`: the accounts service, asked when accounts were made (a deal of the day
        counts on its day's table only for an account made before the day began; None: no
        deal of the day goes to its day's table)."""
        super().__init__(
            redis=redis, stream=keys.FINISHED_GAMES, group=keys.RATINGS_GROUP, consumer=consumer,
            claim_idle_seconds=claim_idle_seconds, block_seconds=block_seconds,
        )  # fmt: skip
        self.database = database
        self.accounts = accounts
        self.cache = RatingCache(redis)
        self.scores = ScoreCache(redis)
        self.counted = 0
        """Games this consumer counted (a test waits for them)."""

    def passing(self, error: BaseException) -> bool:
        return super().passing(error) or database_failed(error) or accounts_failed(error)

    async def handle(self, entry_id: Any, fields: dict[bytes, bytes]) -> None:
        """Count one finished game (once) and write Redis's copy."""
        game = fields[b"game"].decode()
        game_id = fields[b"game_id"].decode()
        record = FinishedGame.from_json(json.loads(fields[b"record"]))
        if record.scored:  # (the entry's id says when the game finished, in ms)
            await self._count_score(game, game_id, record, int(_text(entry_id).split("-")[0]))
        elif record.rated:
            record = await with_moves(self.redis, game_id, record)
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

    async def _count_score(
        self, game: str, game_id: str, record: FinishedGame, finished_ms: int
    ) -> None:
        """A game played alone onto its score tables (once), then Redis's copy."""
        async with self.database.connection() as connection:
            counted = await count_score(
                connection, game, game_id, record, finished_ms, self.accounts
            )
            day = await day_counted(connection, game_id) if counted and record.day else None
        if counted is None:
            return
        now, player, score, scores = counted
        await self.scores.put(game, {player: scores})
        if day:
            await self.scores.put_day(game, day, {player: score})
        if now:
            self.counted += 1
            log.info("score counted", extra={"game_id": game_id, "players": [player]})


async def with_moves(redis: Redis, game_id: str, record: FinishedGame) -> FinishedGame:
    """A finished game's record with the moves each seat made itself (`moves`, from the game's
    log in Redis); without them when the log is gone (the game then counts for nobody)."""
    meta, entries = await game_log.full(redis, game_id)
    if meta is None or not entries or not entries[-1].status.finished:
        log.warning(
            "a finished game's log was gone before it was rated", extra={"game_id": game_id}
        )
        return record
    steps = [(e.actor, e.move, e.status) for e in entries if e.version > 0]
    return dataclasses.replace(record, moves=own_moves(len(record.seats), steps))
