"""The one interface of every bot, and the levels every game has."""

from __future__ import annotations

import importlib
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from engines.contract import JSON, Seat

LEVEL_NAMES: tuple[str, ...] = ("random", "greedy", "strong")
"""Weakest first. Each level must beat the one before it (see `python -m engines.bots.arena`)."""

DEFAULT_BUDGETS: Mapping[str, float] = {"random": 0.0, "greedy": 0.0, "strong": 1.0}
"""Seconds a level may think about one move by default (a soft limit: a bot stops searching at
the first check after it)."""


@dataclass(frozen=True, slots=True)
class Turn:
    """Everything a bot is told when its seat may act."""

    game: str
    seat: Seat
    view: Mapping[str, JSON]
    """The seat's view, exactly as `State.view(seat)` gives it (the bot worker rebuilds it from
    the gateway's GetView answer). `Rules.from_view` turns it into a position to search."""
    moves: Sequence[str]
    """The seat's legal moves in canonical notation; never empty."""
    budget: float
    """Seconds the bot may think (soft); 0 means answer at once."""
    optional: bool = False
    """True when the seat may let this chance pass (a Solo jump-in while another seat is to
    move; in Solo's rules edition 1, also a late Solo call): the bot may then answer None. See
    `is_optional`."""


def is_optional(game: str, view: Mapping[str, JSON], seat: Seat) -> bool:
    """Whether `seat` may act now but need not: in Solo, any seat that is not the one to move
    (its moves are jump-ins, S11, in edition 2 on its own card too; in edition 1 also a late
    Solo call, S12, which edition 2 no longer has). Every other game waits for its seat to
    act."""
    return game == "solo" and view.get("to_move") != seat


class Bot(Protocol):
    def choose(self, turn: Turn, rng: random.Random) -> str | None:
        """One of `turn.moves`, or None to let an optional chance pass (only when
        `turn.optional`). Must not raise on any legal position of its game."""
        ...


class RandomBot:
    """Any legal move, uniformly (and, when the chance is optional, letting it pass as often as
    taking any one move): the baseline, and a fuzzer of the rules."""

    def choose(self, turn: Turn, rng: random.Random) -> str | None:
        moves: list[str | None] = list(turn.moves)
        if turn.optional:
            moves.append(None)
        return rng.choice(moves)


BotFactory = Callable[[], Bot]
"""Makes a fresh bot. A bot may remember things between the calls of one game, but must play
correctly (and as well) when a fresh one is asked at any position: the worker may do that."""


def levels(game: str) -> dict[str, BotFactory]:
    """The bot levels of `game`, weakest first: random, greedy, strong."""
    module = importlib.import_module(f"engines.bots.{game}")
    return {"random": RandomBot, "greedy": module.greedy, "strong": module.strong}
