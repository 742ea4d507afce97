"""The archiver: writes every finished game to the archive once. It reads the finished games'
stream (keys.FINISHED_GAMES) with the consumer group `archive` (several may run, beside the
ratings consumers' group on the same stream), reads the game's whole log from Redis, writes it
in one PostgreSQL transaction keyed by the game id (a game archived already is left as it is),
shortens the game's life in Redis (ARCHIVED_GAME_TTL_SECONDS), and only then acknowledges the
entry. A crash anywhere before the acknowledgement leaves the entry pending for another
archiver, which finds the game archived or archives it: never twice, never skipped."""

from __future__ import annotations

import logging
from typing import Any

from psycopg_pool import AsyncConnectionPool
from redis.asyncio import Redis

from runtime import game_log, keys
from runtime.consumer import GroupConsumer
from runtime.db import database_failed
from services.archive.record import archived
from services.archive.store import store

log = logging.getLogger("tabletop.archive")

ARCHIVE_GROUP = "archive"


class Archiver(GroupConsumer):
    def __init__(
        self,
        *,
        redis: Redis,
        database: AsyncConnectionPool,
        consumer: str,
        keep_seconds: int = 24 * 3600,
        claim_idle_seconds: float = 30.0,
        block_seconds: float = 1.0,
    ) -> None:
        super().__init__(
            redis=redis, stream=keys.FINISHED_GAMES, group=ARCHIVE_GROUP, consumer=consumer,
            claim_idle_seconds=claim_idle_seconds, block_seconds=block_seconds,
        )  # fmt: skip
        self.database = database
        self.keep_seconds = keep_seconds
        """How long Redis keeps an archived game's keys at most (0: as long as any game)."""
        self.archived = 0
        """Games this archiver wrote (a test waits for them)."""
        self.missed = 0
        """Finished games gone from Redis before they could be archived."""

    def passing(self, error: BaseException) -> bool:
        return super().passing(error) or database_failed(error)

    async def handle(self, entry_id: Any, fields: dict[bytes, bytes]) -> None:
        game_id = fields[b"game_id"].decode()
        meta, entries = await game_log.full(self.redis, game_id)
        if meta is None or not entries or not entries[-1].status.finished:
            self.missed += 1
            log.warning(
                "a finished game was gone before it was archived", extra={"game_id": game_id}
            )
            return
        async with self.database.connection() as connection:
            now = await store(connection, archived(game_id, meta, entries))
        if self.keep_seconds:
            async with self.redis.pipeline(transaction=False) as pipe:
                for key in (
                    keys.game_state(game_id),
                    keys.game_events(game_id),
                    keys.game_requests(game_id),
                ):
                    pipe.expire(key, self.keep_seconds, lt=True)
                await pipe.execute()
        if now:
            self.archived += 1
            log.info("game archived", extra={"game_id": game_id, "moves": len(entries) - 1})
