"""How long the tests wait: one scale factor for every bound, and waits for conditions.

A test never waits for time to pass in the hope that something has happened by then: it waits
for the condition it needs (a version, an event, a health status, a process's exit) and gives up
after a bound. A bound costs nothing when things go well (the wait ends when the condition
holds), so bounds are generous: each is written as what the wait needs on an idle development
machine, with room, and multiplied by PATIENCE through `patience()`.

PATIENCE (TABLETOP_TEST_PATIENCE, default 5) is how many times slower than an idle machine the
suite still passes on: a CI machine shared with other work, or two CPU burners (`make
test-busy`). Raise it on a slower machine; a bound is never written as a bare number.

The per-test timeout (pytest-timeout, pyproject's `timeout`) is scaled by the same factor in
tests/conftest.py: it is the last resort for a wait that has no bound of its own.

Tests about time itself (clocks, deadlines) measure the time they check, or give the code a
clock they control (tests/engines/fake_clock.py); they do not assume the machine is fast.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, overload

T = TypeVar("T")


def _patience() -> float:
    raw = os.environ.get("TABLETOP_TEST_PATIENCE", "")
    if not raw:
        return 5.0
    try:
        value = float(raw)
    except ValueError:
        raise SystemExit(f"TABLETOP_TEST_PATIENCE must be a number, got {raw!r}") from None
    if value < 1:
        raise SystemExit(f"TABLETOP_TEST_PATIENCE must be at least 1, got {raw!r}")
    return value


PATIENCE = _patience()


def patience(seconds: float) -> float:
    """The bound for a wait that takes up to `seconds` on an idle machine."""
    return seconds * PATIENCE


@overload
async def eventually(
    check: Callable[[], Awaitable[T | None]], seconds: float, what: str, *, every: float = ...
) -> T: ...


@overload
async def eventually(
    check: Callable[[], T | None], seconds: float, what: str, *, every: float = ...
) -> T: ...


async def eventually(
    check: Callable[[], Any], seconds: float, what: str, *, every: float = 0.05
) -> Any:
    """Call `check` (a function, or a coroutine function) until it returns something other
    than None or False, and return that; fail naming `what` after `patience(seconds)`.
    Exceptions from `check` propagate."""
    deadline = time.monotonic() + patience(seconds)
    while True:
        found = check()
        if inspect.isawaitable(found):
            found = await found
        if found is not None and found is not False:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {patience(seconds):.0f} s")
        await asyncio.sleep(every)


def eventually_sync(
    check: Callable[[], T | None], seconds: float, what: str, *, every: float = 0.05
) -> T:
    """`eventually` for code without an event loop."""
    deadline = time.monotonic() + patience(seconds)
    while True:
        found = check()
        if found is not None and found is not False:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {patience(seconds):.0f} s")
        time.sleep(every)
