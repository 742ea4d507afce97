"""Password hashes are shared fairly (services/accounts/fairness.py): in turn across callers, a
bounded number each, so that one caller sending many cannot make another's login wait behind
them."""

from __future__ import annotations

import asyncio

import pytest

from gateway.ratelimit import RateLimiter
from services.accounts.fairness import FairSlots
from wire.errors import ApiError


async def _settled() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_a_freed_place_goes_to_the_next_caller_in_turn_not_the_oldest_request() -> None:
    slots = FairSlots(1, per_caller=10)
    served: list[str] = []

    async def ask(caller: str) -> None:
        await slots.acquire(caller)
        served.append(caller)

    await ask("flood")  # holds the only place
    waiting = [asyncio.create_task(ask("flood")) for _ in range(5)]
    await _settled()
    bystander = asyncio.create_task(ask("bystander"))
    await _settled()
    slots.release("flood")
    await _settled()
    slots.release("flood")
    await _settled()
    assert served[:3] == ["flood", "flood", "bystander"]  # one of the flood's, then its turn
    assert bystander.done()
    slots.release("bystander")
    for _ in range(3):
        await _settled()
        slots.release("flood")
    await asyncio.gather(*waiting)
    slots.release("flood")
    assert slots.free == 1
    assert slots.held("flood") == 0


async def test_a_caller_holds_or_waits_for_per_caller_places_at_most() -> None:
    slots = FairSlots(1, per_caller=2)
    await slots.acquire("flood")
    second = asyncio.create_task(slots.acquire("flood"))
    await _settled()
    with pytest.raises(ApiError) as refused:
        await slots.acquire("flood")
    assert refused.value.reason == "RATE_LIMITED"
    slots.release("flood")
    await second
    slots.release("flood")
    assert slots.held("flood") == 0
    assert slots.free == 1


async def test_a_waiter_that_gives_up_leaves_no_place_behind() -> None:
    slots = FairSlots(1, per_caller=4)
    await slots.acquire("a")
    gone = asyncio.create_task(slots.acquire("b"))
    await _settled()
    gone.cancel()
    with pytest.raises(asyncio.CancelledError):
        await gone
    assert slots.held("b") == 0
    slots.release("a")
    assert slots.free == 1
    async with slots.place("c"):
        assert slots.free == 0
    assert slots.free == 1
    assert slots.held("c") == 0


def test_a_limiter_gives_back_what_did_not_count() -> None:
    limiter = RateLimiter(rate=1 / 3600, burst=2)
    assert limiter.take("k") == 0.0
    assert limiter.take("k") == 0.0
    assert limiter.take("k") > 0
    limiter.give_back("k")
    assert limiter.wait("k") == 0.0
    assert limiter.take("k") == 0.0
    assert limiter.take("k") > 0
