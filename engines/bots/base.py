"""The one interface of every bot (a game's levels are declared with the game: games.Game)."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from engines.contract import JSON, Seat


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
    """True when the seat may let this chance pass: it may act, but not as everyone can see
    (it is not among the game's public seats to act: a Solo jump-in). The bot may then answer
    None."""


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


def levels(
    greedy: BotFactory, strong: BotFactory, expert: BotFactory | None = None
) -> dict[str, BotFactory]:
    """A game's bot levels, weakest first: the random bot every game has, then its own. The
    expert level is the strong bot unless the game has a better one: its budget is larger
    (games.DEFAULT_BUDGETS), which is what makes it stronger."""
    return {"random": RandomBot, "greedy": greedy, "strong": strong, "expert": expert or strong}
