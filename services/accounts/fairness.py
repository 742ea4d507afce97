"""A few places (password hashes) shared fairly: in turn across callers, a bounded number each.

One caller (a client address) sending password checks as fast as it may cannot make another
caller's login wait behind all of them: when a place frees, it goes to the caller whose turn
it is (round robin over the callers waiting), not to the oldest request; and each caller holds
or waits for at most `per_caller` places (one more is refused at once).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncIterator

from wire.errors import ApiError


class FairSlots:
    def __init__(self, slots: int, per_caller: int) -> None:
        self.free = slots
        self.per_caller = per_caller
        self._waiting: dict[str, deque[asyncio.Future[None]]] = {}
        """Callers in the order of their turns (a caller served goes to the back)."""
        self._count: dict[str, int] = {}
        """Places each caller holds or waits for."""

    def held(self, caller: str) -> int:
        return self._count.get(caller, 0)

    async def acquire(self, caller: str) -> None:
        """A place for `caller`; raises ApiError (RATE_LIMITED) when it holds or waits for
        `per_caller` already."""
        if self.held(caller) >= self.per_caller:
            raise ApiError(
                "RATE_LIMITED",
                f"{self.per_caller} password checks of yours are in progress already; retry in 1s",
                retry_after_ms="1000",
            )
        self._count[caller] = self.held(caller) + 1
        if self.free > 0 and not self._waiting:
            self.free -= 1
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(caller, deque()).append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.release(caller)  # handed a place as it was cancelled: pass it on
            else:
                self._forget(caller, waiter)
                self._drop(caller)
            raise

    def release(self, caller: str) -> None:
        """`caller` is done with its place: the next caller in turn gets it."""
        self._drop(caller)
        while self._waiting:
            turn = next(iter(self._waiting))
            queue = self._waiting.pop(turn)
            waiter = queue.popleft()
            if queue:
                self._waiting[turn] = queue  # its next request waits for its next turn
            if not waiter.done():
                waiter.set_result(None)
                return
        self.free += 1

    @contextlib.asynccontextmanager
    async def place(self, caller: str) -> AsyncIterator[None]:
        await self.acquire(caller)
        try:
            yield
        finally:
            self.release(caller)

    def _drop(self, caller: str) -> None:
        left = self.held(caller) - 1
        if left > 0:
            self._count[caller] = left
        else:
            self._count.pop(caller, None)

    def _forget(self, caller: str, waiter: asyncio.Future[None]) -> None:
        queue = self._waiting.get(caller)
        if queue is None:
            return
        with contextlib.suppress(ValueError):
            queue.remove(waiter)
        if not queue:
            del self._waiting[caller]
