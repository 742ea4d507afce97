"""Group commit: the writes a process makes to Redis in one turn of its event loop go out
together, as one batch on one connection in one round trip (`on_primary`).

The first write queued asks for a flush at the loop's next turn (a lone write goes at once: no
timer, no waiting for others). Up to IN_FLIGHT batches are on their way at once; while they all
are, new writes queue for the next one, so under load batches grow by themselves, up to
MOST_PER_BATCH. Each command runs on its own
(a script stays atomic and checked on its own) and gets its own reply; the batch shares what
holds it (one EXPIRE per key and one WAIT for the whole batch: WAIT covers every earlier write
of its connection) and so one confirmation by the Sentinels (`held_confirmed`)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from redis.asyncio import Redis

from runtime.observability import COMMIT_BATCH
from runtime.redis import Command, Held, on_primary
from runtime.tasks import stop_tasks
from wire.errors import ApiError

MOST_PER_BATCH = 256
"""The most writes one batch holds: a flush never holds an unbounded amount of work (those
beyond wait for the next batch, which leaves as soon as this one is answered)."""
IN_FLIGHT = 4
"""The most batches on their way at once: a round trip's wait overlaps the next batch's, and a
process with few games in play sends each write at once."""


_Queued = tuple[tuple[Command, ...], str, "asyncio.Future[tuple[list[Any], Held | None]]"]
"""Commands queued to go together, the key whose TTL the batch sets again, and their replies'
future."""


class GroupCommit:
    """Sends the writes handed to it (`written`) in batches, up to `in_flight` on their way at
    once.

    `replicas`: how many replicas each batch waits for, asked at each flush (None: writes do
    not wait, and no TTL is set again); `ttl_seconds`: the TTL each batch sets again on the
    keys its writes name; `timeout_ms`: how long its WAIT waits at most."""

    def __init__(
        self,
        redis: Redis,
        *,
        replicas: Callable[[], int] | None,
        ttl_seconds: int,
        timeout_ms: int,
        most: int = MOST_PER_BATCH,
        in_flight: int = IN_FLIGHT,
    ) -> None:
        self.redis = redis
        self.replicas = replicas
        self.ttl_seconds = ttl_seconds
        self.timeout_ms = timeout_ms
        self.most = most
        self.in_flight = in_flight
        self.batches = 0
        """Batches sent so far (answered or failed)."""
        self.last_size = 0
        """How many writes the last batch sent held."""
        self._queue: list[_Queued] = []
        self._flushing: set[asyncio.Task[None]] = set()
        self._scheduled = False
        self._closed = False

    async def written(self, command: Command, key: str) -> tuple[Any, Held | None]:
        """`command`'s reply, sent with the other writes queued now, and what holds the batch
        (None: writes do not wait). `key`: the key of the game it writes, whose TTL the batch
        sets again. A reply that is an error is raised here, for this write only; a batch
        that fails (Redis unreachable) raises its error for each of its writes. A caller that
        stops waiting leaves the batch to go on for the others."""
        (reply,), held = await self.written_together((command,), key)
        if isinstance(reply, Exception):
            raise reply
        return reply, held

    async def written_together(
        self, commands: tuple[Command, ...], key: str
    ) -> tuple[list[Any], Held | None]:
        """As `written`, for commands that go one after the other in the same batch (nothing
        between them): their replies, errors as values."""
        if self._closed:
            raise ApiError("UNAVAILABLE", "the service is stopping; retry")
        loop = asyncio.get_running_loop()
        future: asyncio.Future[tuple[list[Any], Held | None]] = loop.create_future()
        self._queue.append((commands, key, future))
        if len(self._flushing) < self.in_flight and not self._scheduled:
            self._scheduled = True
            loop.call_soon(self._start)
        return await future

    async def close(self) -> None:
        """The batches on their way end (cancelled: their writers stopped waiting), so that none
        uses the Redis client after it is closed; writes still queued are not sent (their
        writers see a cancellation), nor any written after this."""
        self._closed = True
        queued, self._queue = self._queue, []
        for _, _, future in queued:
            future.cancel()
        await stop_tasks(self._flushing)

    def _start(self) -> None:
        self._scheduled = False
        if self._queue and not self._closed and len(self._flushing) < self.in_flight:
            task = asyncio.create_task(self._flush_all(), name="redis-group-commit")
            self._flushing.add(task)

    async def _flush_all(self) -> None:
        """Sends batches until nothing is queued; writes queued meanwhile go in the next."""
        try:
            while self._queue:
                batch, self._queue = self._queue[: self.most], self._queue[self.most :]
                await self._flush(batch)
        finally:
            self._flushing.discard(asyncio.current_task())
            # Stopped with writes queued and no other batch on its way (the loop is closing):
            # none is left waiting for ever.
            if self._queue and not self._flushing:
                queued, self._queue = self._queue, []
                for _, _, future in queued:
                    if not future.done():
                        future.cancel()

    async def _flush(self, batch: list[_Queued]) -> None:
        self.batches += 1
        self.last_size = len(batch)
        COMMIT_BATCH.observe(len(batch))
        try:
            replies, held = await on_primary(
                self.redis,
                [command for commands, _, _ in batch for command in commands],
                expire=list(dict.fromkeys(key for _, key, _ in batch)),
                ttl_seconds=self.ttl_seconds,
                replicas=None if self.replicas is None else self.replicas(),
                timeout_ms=self.timeout_ms,
            )
        except Exception as error:
            for _, _, future in batch:
                if not future.done():
                    future.set_exception(error)
            return
        except BaseException:
            for _, _, future in batch:
                if not future.done():
                    future.cancel()
            raise
        start = 0
        for commands, _, future in batch:
            end = start + len(commands)
            if not future.done():
                future.set_result((replies[start:end], held))
            start = end
