"""A token bucket per key (player id), kept in the gateway process."""

from __future__ import annotations

import time


def retry_after_ms(wait: float) -> str:
    """A wait in seconds as a refusal's `retry_after_ms` (rounded up: never too early)."""
    return str(int(wait * 1000) + 1)


class RateLimiter:
    """Allows `rate` requests per second per key on average, and bursts of `burst`."""

    def __init__(self, rate: float, burst: float, *, max_keys: int = 100_000) -> None:
        self.rate = rate
        self.burst = burst
        self._max_keys = max_keys
        self._buckets: dict[str, tuple[float, float]] = {}

    def wait(self, key: str) -> float:
        """How long before `key` may go (0.0: now), taking nothing."""
        now = time.monotonic()
        tokens, last = self._buckets.get(key, (self.burst, now))
        tokens = min(self.burst, tokens + (now - last) * self.rate)
        return 0.0 if tokens >= 1.0 else (1.0 - tokens) / self.rate

    def give_back(self, key: str) -> None:
        """Returns one taken from `key` (what it was taken for did not count)."""
        tokens, last = self._buckets.get(key, (self.burst, time.monotonic()))
        self._buckets[key] = (min(self.burst, tokens + 1.0), last)

    def take(self, key: str) -> float:
        """0.0 when the request may go; otherwise the seconds to wait before retrying."""
        now = time.monotonic()
        tokens, last = self._buckets.get(key, (self.burst, now))
        tokens = min(self.burst, tokens + (now - last) * self.rate)
        if tokens < 1.0:
            self._buckets[key] = (tokens, now)
            return (1.0 - tokens) / self.rate
        if len(self._buckets) >= self._max_keys and key not in self._buckets:
            self._buckets.clear()
        self._buckets[key] = (tokens - 1.0, now)
        return 0.0
