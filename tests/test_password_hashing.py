"""An accounts process hashes at most HASHES_AT_ONCE passwords at a time, even when callers give
up: a login cancelled at its deadline leaves its thread hashing, and that thread still holds
its place until it is done (else deadlines under load would let every core fill with hashes)."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from services.accounts.store import Accounts
from tests.timing import eventually, patience


class SlowHasher:
    """Hashes only when let go; counts the hashes running at once."""

    def __init__(self) -> None:
        self.go = threading.Event()
        self.running = 0
        self.most = 0
        self.lock = threading.Lock()

    def hash(self, password: str) -> str:
        with self.lock:
            self.running += 1
            self.most = max(self.most, self.running)
        self.go.wait(patience(10))
        with self.lock:
            self.running -= 1
        return "hashed:" + password


async def test_a_cancelled_hash_keeps_its_place_until_its_thread_is_done() -> None:
    accounts = Accounts(
        pool=None,  # type: ignore[arg-type]  # no database call here
        hashes_at_once=1,
    )
    hasher = SlowHasher()
    accounts.hasher = hasher  # type: ignore[assignment]
    first = asyncio.create_task(accounts._hash("one"))
    await eventually(lambda: hasher.running == 1, 5, "the first hash running")
    first.cancel()  # its caller gives up; its thread goes on
    second: asyncio.Task[Any] = asyncio.create_task(accounts._hash("two"))
    await asyncio.sleep(0.2)
    assert hasher.running == 1  # the second waits for the first thread's place
    hasher.go.set()
    assert await asyncio.wait_for(second, patience(10)) == "hashed:two"
    assert hasher.most == 1
