"""Stopping background tasks for sure.

Python 3.11's `asyncio.wait_for` loses a cancellation that arrives just as the awaited future
completes (fixed in 3.12): the task goes on as if it had never been cancelled. redis-py awaits
every command's write with `wait_for`, so a background loop cancelled while it talks to Redis can
swallow its cancellation and run on, and whoever waits for it to end waits forever (a service
that never finished stopping on SIGTERM; tests/integration teardowns that hung). So a task is
cancelled again until it has ended, and loops check a flag of their own too.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

AGAIN_SECONDS = 0.05
"""How long a cancelled task has to end before it is cancelled again."""


async def stop_tasks(tasks: Iterable[asyncio.Task[object]]) -> None:
    """Cancel the tasks and wait until every one has ended (cancelling again those that swallow
    it); then raise what any of them ended with, other than its cancellation."""
    tasks = list(tasks)
    pending = {task for task in tasks if not task.done()}
    while pending:
        for task in pending:
            task.cancel()
        _, pending = await asyncio.wait(pending, timeout=AGAIN_SECONDS)
    for task in tasks:
        if not task.cancelled() and task.exception() is not None:
            raise task.exception()  # type: ignore[misc]


def keep_cancelling(task: asyncio.Task[object]) -> None:
    """Cancel `task`, and again every AGAIN_SECONDS until it has ended: for a task to be
    stopped from a callback (a signal handler), where nothing can wait."""
    if task.done():
        return
    task.cancel()
    asyncio.get_running_loop().call_later(AGAIN_SECONDS, keep_cancelling, task)
