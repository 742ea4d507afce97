"""Bot levels: how a bot chooses among its seat's legal moves."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Protocol


class Level(Protocol):
    name: str

    def choose(self, game: str, moves: Sequence[str], rng: random.Random) -> str:
        """One of `moves` (never empty): the seat's legal moves, all it is told."""
        ...


class RandomLevel:
    """Any legal move, uniformly: the baseline, and a fuzzer of the rules."""

    name = "random"

    def choose(self, game: str, moves: Sequence[str], rng: random.Random) -> str:
        return rng.choice(list(moves))


BOT_LEVELS: dict[str, Level] = {level.name: level for level in [RandomLevel()]}
