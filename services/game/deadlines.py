"""The deadline sweep: every replica of a game service applies the timeouts and aborts that
are due, whichever replica served the game's moves, and whether or not any was up at the
deadline.

Each version's next deadline is kept in a sorted set per game kind (`keys.deadlines`), set
after each commit. Every `sweep_seconds` the sweep takes the games whose deadline has passed by
Redis's clock (each held back from the other replicas' sweeps for `HOLD_MS`) and applies what
is due through the versioned commit (`GameCore.expire`): a move and a timeout racing resolve
to exactly one of them, and a timeout is applied as of its deadline however late. An index
write can be lost (Redis away just then: retried at the next sweep; a stop between a commit and
its write: found by the repair, which one replica at a time runs every `repair_seconds` over the
live games of its kind).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from typing import Any

from runtime import game_log, keys
from runtime.redis import redis_failed
from runtime.tasks import stop_tasks
from services.game.core import GameCore
from wire.errors import ApiError

log = logging.getLogger("tabletop.deadlines")

HOLD_MS = 5_000
"""A due game taken by one replica's sweep is left alone by the others this long."""
BATCH = 100


class DeadlineSweep:
    def __init__(
        self, core: GameCore, *, sweep_seconds: float = 1.0, repair_seconds: float = 60.0
    ) -> None:
        self.core = core
        self.kind = core.game
        self.sweep_seconds = sweep_seconds
        self.repair_seconds = repair_seconds
        self.name = secrets.token_hex(6)
        self.sweeps = 0
        """Sweeps done so far (a test waits for one that began after a deadline)."""
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            await stop_tasks([self._task])

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        last_repair = loop.time()
        while True:
            await asyncio.sleep(self.sweep_seconds)
            try:
                await self.sweep()
                self.sweeps += 1
                if loop.time() - last_repair >= self.repair_seconds:
                    last_repair = loop.time()
                    await self.repair()
            except Exception as error:
                if not (isinstance(error, ApiError) or redis_failed(error)):
                    log.exception("deadline sweep failed")
                else:
                    log.warning("deadline sweep: Redis away", extra={"error": str(error)})

    async def sweep(self) -> int:
        """Apply what is due now; how many timeouts and aborts this replica applied."""
        applied = 0
        while True:
            due = await self.core.store.due(self.kind, BATCH, HOLD_MS)
            due += self.core.unindexed()
            for game_id in due:
                try:
                    applied += await self.core.expire(game_id)
                except ApiError as error:
                    if error.reason == "UNAVAILABLE":
                        raise  # Redis away: the next round tries again
                    # One game's trouble must not hold up the others' deadlines.
                    log.warning(
                        "deadline not applied", extra={"game_id": game_id, "reason": error.reason}
                    )
            if len(due) < BATCH:
                return applied

    async def repair(self) -> int:
        """Index the deadline of every live timed game of this kind again (one replica at a
        time); how many games were looked at."""
        redis = self.core.store.redis
        lock = keys.deadline_repair_lock(self.kind)
        hold = int(self.repair_seconds * 1000)
        if not await redis.set(lock, self.name, nx=True, px=hold):
            return 0
        looked = 0
        start = 0
        while True:
            listed: Any = await redis.zrange(keys.LIVE_GAMES, start, start + 499)
            if not listed:
                return looked
            start += 500
            ids = [i.decode() for i in listed if keys.kind_of(i.decode()) == self.kind]
            for game_id, (_meta, last) in zip(ids, await game_log.newest(redis, ids), strict=True):
                status = None if last is None else last.status
                if status is not None and status.clock is not None and not status.finished:
                    looked += 1
                    await self.core.expire(game_id)
