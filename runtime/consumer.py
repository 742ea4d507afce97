"""A consumer of a Redis stream in a consumer group, for work that must happen once per entry
and survive a crash: each entry is handled, then acknowledged. Several consumers of one group
share the entries; one that stops before it acknowledges leaves the entry pending, and another
takes it over after `claim_idle_seconds` (XAUTOCLAIM). Handling must therefore be idempotent
(the ratings consumer and the archiver key their writes by game id)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import ResponseError

from runtime.redis import group_entries, redis_failed

log = logging.getLogger("tabletop.consumer")


class GroupConsumer:
    """Subclasses say what handling an entry is (`handle`) and which failures to wait out."""

    def __init__(
        self,
        *,
        redis: Redis,
        stream: str,
        group: str,
        consumer: str,
        claim_idle_seconds: float = 30.0,
        block_seconds: float = 1.0,
    ) -> None:
        self.redis = redis
        self.stream = stream
        self.group = group
        self.consumer = consumer
        self.claim_idle_ms = int(claim_idle_seconds * 1000)
        self.block_ms = max(1, int(block_seconds * 1000))
        self.handled = 0
        """Entries this consumer acknowledged."""

    async def handle(self, entry_id: Any, fields: dict[bytes, bytes]) -> None:
        """Do the entry's work (idempotently); the entry is acknowledged after it returns."""
        raise NotImplementedError

    def passing(self, error: BaseException) -> bool:
        """Whether `error` is a failure to wait out (a store away for a moment)."""
        return redis_failed(error)

    async def run(self, stop: asyncio.Event) -> None:
        grouped = False
        last_claim = 0.0
        while not stop.is_set():
            try:
                if not grouped:
                    with contextlib.suppress(ResponseError):  # BUSYGROUP
                        await self.redis.xgroup_create(
                            self.stream, self.group, id="0", mkstream=True
                        )
                    grouped = True
                reclaim = time.monotonic() - last_claim >= self.claim_idle_ms / 2000
                if reclaim:
                    last_claim = time.monotonic()
                entries = await group_entries(
                    self.redis, self.stream, self.group, self.consumer,
                    block_ms=self.block_ms,
                    reclaim_idle_ms=self.claim_idle_ms if reclaim else None,
                )  # fmt: skip
                for entry_id, fields in entries:
                    await self.handle(entry_id, fields)
                    await self.redis.xack(self.stream, self.group, entry_id)
                    self.handled += 1
            except Exception as error:
                if not self.passing(error):
                    raise
                log.warning("cannot consume now", extra={"group": self.group, "error": str(error)})
                grouped = False
                await asyncio.sleep(1.0)
