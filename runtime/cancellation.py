"""A cancelled task stays cancelled.

Python 3.11's `asyncio.wait_for` loses the cancellation of the task that awaits it when the
awaited work finishes in the same turn of the event loop (python/cpython#86296, fixed in 3.12):
it returns the work's result as if nothing had happened. redis-py writes every command through
`wait_for` when a socket timeout is set, as ours is, so a gRPC call cancelled by its client
while it sends a Redis command could carry on: a notification stream whose browser had gone
kept its player online. On 3.11 `asyncio.wait_for` is therefore replaced, for every process of
the platform, by 3.12's, which awaits the work in the caller's task under `asyncio.timeout`
and so never loses a cancellation. Nothing changes on 3.12 and later.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable
from typing import Any, TypeVar

T = TypeVar("T")

_LOSES_CANCELLATIONS = sys.version_info < (3, 12)


async def wait_for(awaitable: Awaitable[T], timeout: float | None) -> T:  # noqa: ASYNC109
    """`asyncio.wait_for` as Python 3.12 has it: the result of `awaitable`, or TimeoutError
    after `timeout` seconds (None: no limit), the work cancelled; a cancellation of the caller
    propagates, never lost."""
    if timeout is not None and timeout <= 0:
        future: asyncio.Future[T] = asyncio.ensure_future(awaitable)
        if future.done():
            return future.result()
        future.cancel()
        try:
            await future
        except asyncio.CancelledError as error:
            raise TimeoutError from error
        return future.result()
    async with asyncio.timeout(timeout):
        return await awaitable


def keep_cancellations() -> None:
    """Use `wait_for` for asyncio.wait_for where the standard one loses cancellations."""
    if _LOSES_CANCELLATIONS:
        patched: Any = wait_for
        asyncio.wait_for = patched
        asyncio.tasks.wait_for = patched
