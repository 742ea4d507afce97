"""A cancelled task stays cancelled, even when it was cancelled as the work it waited for
(with asyncio.wait_for, as redis-py writes a command) finished: runtime/cancellation.py."""

from __future__ import annotations

import asyncio

import pytest

import runtime  # noqa: F401  (every process imports it: asyncio.wait_for keeps cancellations)


async def test_a_task_cancelled_as_its_wait_for_finishes_stays_cancelled() -> None:
    async def quick() -> int:
        return 1

    async def caller() -> None:
        await asyncio.wait_for(quick(), timeout=5.0)
        await asyncio.sleep(30)  # a task whose cancellation was lost sleeps on

    task = asyncio.create_task(caller())
    await asyncio.sleep(0)  # the caller waits for quick(), which finishes in this same turn
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        async with asyncio.timeout(10):  # TimeoutError: the cancellation was lost
            await task


async def test_wait_for_still_answers_and_times_out() -> None:
    async def slow() -> int:
        await asyncio.sleep(30)
        return 1

    async def quick() -> int:
        return 2

    assert await asyncio.wait_for(quick(), timeout=5.0) == 2
    assert await asyncio.wait_for(quick(), timeout=None) == 2
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(slow(), timeout=0.05)
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(slow(), timeout=0)
