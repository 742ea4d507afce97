"""A clock for tests of searches that stop at their budget: no test measures wall time."""

from __future__ import annotations


class FakeClock:
    """Moves on `step` seconds every time it is read, and counts the reads."""

    def __init__(self, step: float = 2**-10) -> None:
        self.step = step
        self.now = 0.0
        self.reads = 0

    def __call__(self) -> float:
        self.reads += 1
        self.now += self.step
        return self.now
