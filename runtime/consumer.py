"""A consumer of a Redis stream in a consumer group, for work that must happen once per entry
and survive a crash: each entry is handled, then acknowledged. Several consumers of one group
share the entries; one that stops before it acknowledges leaves the entry pending, and another
takes it over after `claim_idle_seconds` (XAUTOCLAIM). Handling must therefore be idempotent
(the ratings consumer and the archiver key their writes by game id).

Every stream consumer of the platform runs this one loop (the archiver, the ratings consumer,
the lobby's notifiers, the matchmaker, the bot workers); one that works on a read's entries
together (the matchmaker), or acknowledges each later on its own (the bot workers), overrides
`consume`; one that reads as many as it has room for overrides `read_count`."""

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

    failure_message = "cannot consume now"
    """What the log says when a failure to wait out (`passing`) stops a read for a moment."""

    def __init__(
        self,
        *,
        redis: Redis,
        stream: str,
        group: str,
        consumer: str,
        claim_idle_seconds: float = 30.0,
        block_seconds: float = 1.0,
        claim_every_seconds: float | None = None,
        count: int = 100,
        claim_count: int | None = None,
    ) -> None:
        """`claim_every_seconds`: how often a read also takes over idle entries (None: every
        half `claim_idle_seconds`). `count`: entries read at most at once (see `read_count`);
        `claim_count`: entries taken over at most at once (None: `count`)."""
        self.redis = redis
        self.stream = stream
        self.group = group
        self.consumer = consumer
        self.claim_idle_ms = int(claim_idle_seconds * 1000)
        self.block_ms = max(1, int(block_seconds * 1000))
        self.claim_every = (
            self.claim_idle_ms / 2000 if claim_every_seconds is None else claim_every_seconds
        )
        self.count = count
        self.claim_count = count if claim_count is None else claim_count
        self._last_claim = 0.0
        self.handled = 0
        """Entries this consumer acknowledged."""

    async def handle(self, entry_id: Any, fields: dict[bytes, bytes]) -> None:
        """Do the entry's work (idempotently); the entry is acknowledged after it returns."""
        raise NotImplementedError

    def passing(self, error: BaseException) -> bool:
        """Whether `error` is a failure to wait out (a store away for a moment)."""
        return redis_failed(error)

    async def ensure_group(self) -> None:
        """Create the consumer group (and the stream) unless it exists."""
        with contextlib.suppress(ResponseError):  # BUSYGROUP: it exists already
            await self.redis.xgroup_create(self.stream, self.group, id="0", mkstream=True)

    async def reclaiming(self) -> bool:
        """Whether the next read also takes over entries left idle (XAUTOCLAIM): every
        `claim_every` seconds."""
        if time.monotonic() - self._last_claim >= self.claim_every:
            self._last_claim = time.monotonic()
            return True
        return False

    def read_count(self) -> int:
        """How many new entries the next read takes at most."""
        return self.count

    async def consume(self, entries: list[tuple[Any, Any]], *, reclaimed: bool) -> None:
        """Work on one read's entries (called after every read, even one that found none;
        `reclaimed`: the read took over idle entries too): each is handled, then
        acknowledged."""
        for entry_id, fields in entries:
            await self.handle(entry_id, fields)
            await self.ack(entry_id)

    async def ack(self, *entry_ids: Any) -> None:
        """Acknowledge entries: done, never to be handled again."""
        if entry_ids:
            await self.redis.xack(self.stream, self.group, *entry_ids)
            self.handled += len(entry_ids)

    async def run(self, stop: asyncio.Event) -> None:
        grouped = False
        while not stop.is_set():
            try:
                if not grouped:
                    await self.ensure_group()
                    grouped = True
                reclaim = await self.reclaiming()
                entries = await group_entries(
                    self.redis, self.stream, self.group, self.consumer,
                    block_ms=self.block_ms,
                    reclaim_idle_ms=self.claim_idle_ms if reclaim else None,
                    count=self.read_count(), claim_count=self.claim_count,
                )  # fmt: skip
                await self.consume(entries, reclaimed=reclaim)
            except Exception as error:
                if not self.passing(error):
                    raise
                log.warning(self.failure_message, extra={"group": self.group, "error": str(error)})
                grouped = False
                await asyncio.sleep(1.0)
