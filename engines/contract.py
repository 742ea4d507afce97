"""The one contract every game engine implements.

Engines are pure: no I/O, no asyncio, no Redis, no protobuf. Given the same seed, options, setup
and moves they always reach the same state. Moves travel as notation strings (each game's
docs/rules/<game>.md defines its notation).

A game is a `Rules` object (stateless, one per game) that makes `State` objects. States are
immutable from the outside: `apply` returns a new state and never changes the one it was called
on, including when it raises.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, TypeAlias

Seat: TypeAlias = int
JSON: TypeAlias = Any
"""A value made of dicts, lists, str, int, float, bool and None only."""


# --------------------------------------------------------------------------------------------
# Errors. Each carries a stable, machine-readable `reason`; the message says what was wrong and
# what is allowed. They never contain information the acting seat may not see.


class GameError(Exception):
    """Base of every domain error an engine raises."""

    reason: ClassVar[str] = "GAME_ERROR"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class MalformedMove(GameError):
    """The text is not a move in this game's notation."""

    reason = "MALFORMED_MOVE"


class IllegalMove(GameError):
    """Well-formed, but the rules do not allow it now."""

    reason = "ILLEGAL_MOVE"


class NotYourTurn(GameError):
    """The seat may not act at this moment."""

    reason = "NOT_YOUR_TURN"


class GameOver(GameError):
    """The game has ended; no move is possible."""

    reason = "GAME_OVER"


class InvalidOptions(GameError):
    """Unknown option, or a value out of range."""

    reason = "INVALID_OPTIONS"


class InvalidSetup(GameError):
    """An explicit setup that is not a possible starting position."""

    reason = "INVALID_SETUP"


class InvalidSeat(GameError):
    """A seat number that does not exist in this game."""

    reason = "INVALID_SEAT"


# --------------------------------------------------------------------------------------------
# Values


@dataclass(frozen=True, slots=True)
class Event:
    """Something that happened: `to` is None for a public event, else the only seat that sees it."""

    kind: str
    data: Mapping[str, JSON] = field(default_factory=dict)
    to: Seat | None = None

    def visible_to(self, seat: Seat | None) -> bool:
        """Whether `seat` (None: a spectator) may see this event."""
        return self.to is None or self.to == seat

    def to_json(self) -> dict[str, JSON]:
        return {"kind": self.kind, "data": dict(self.data), "to": self.to}

    @staticmethod
    def from_json(obj: Mapping[str, JSON]) -> Event:
        return Event(kind=obj["kind"], data=obj.get("data") or {}, to=obj.get("to"))


@dataclass(frozen=True, slots=True)
class Result:
    """How a finished game ended. `winners` is empty for a draw."""

    winners: tuple[Seat, ...]
    scores: Mapping[Seat, float] = field(default_factory=dict)
    detail: Mapping[str, JSON] = field(default_factory=dict)

    @property
    def is_draw(self) -> bool:
        return not self.winners

    def to_json(self) -> dict[str, JSON]:
        return {
            "winners": list(self.winners),
            "scores": {str(seat): score for seat, score in self.scores.items()},
            "detail": dict(self.detail),
        }


# --------------------------------------------------------------------------------------------
# The contract


class State(ABC):
    """One position of one game. Never mutated after it is returned to a caller."""

    @property
    @abstractmethod
    def num_seats(self) -> int:
        """How many seats the game has (fixed for its whole life)."""

    @property
    def edition(self) -> int:
        """The rules edition this game is played under (see `Rules.edition`): fixed for the
        game's whole life, so a game started before a ruling was revised finishes under the
        rules it started with."""
        return 1

    @abstractmethod
    def to_act(self) -> tuple[Seat, ...]:
        """Seats that have at least one legal move now, in increasing order. Empty when over."""

    def public_to_act(self) -> tuple[Seat, ...]:
        """The seats anyone may know can act now: to_act() less the seats whose chance to act
        depends on hidden information (a Solo jump-in shows that a hand holds a card). This is
        what game statuses show to players and spectators."""
        return self.to_act()

    def opening_events(self) -> list[Event]:
        """What a state fresh from `Rules.new_game` shows as it begins, as events (the log's
        version 0): for a game that deals, the first deal, told privately to each seat, so that
        a client that builds its state from events needs no special case for the start. Only
        meaningful on a new game's state; most games have none."""
        return []

    @abstractmethod
    def legal_moves(self, seat: Seat) -> list[str]:
        """Every distinct legal move of `seat`, each once, in canonical notation."""

    @abstractmethod
    def apply(self, seat: Seat, move: str) -> tuple[State, list[Event]]:
        """Play `move` for `seat`. Returns the new state and what happened.

        Raises a GameError (and leaves this state as it was) for a malformed or illegal move, a
        seat that may not act, or a finished game.
        """

    @abstractmethod
    def resign(self, seat: Seat) -> tuple[State, list[Event]]:
        """`seat` gives up. Raises GameOver when the game has ended."""

    @abstractmethod
    def view(self, seat: Seat | None) -> dict[str, JSON]:
        """What `seat` may see (None: a spectator's public view). Hidden information is removed."""

    @abstractmethod
    def result(self) -> Result | None:
        """The result once the game is over, else None."""

    @abstractmethod
    def serialize(self) -> bytes:
        """Exact, complete encoding; `Rules.deserialize` gives an equal state back."""

    @abstractmethod
    def determinize(self, seat: Seat | None, rng: random.Random) -> State:
        """A state `seat` cannot tell apart from this one, with everything hidden from `seat`
        drawn again at random, consistently with what `seat` has seen. Games without hidden
        information return the state itself. Bots search on such states; the conformance suite
        uses them to show views leak nothing."""

    @property
    def finished(self) -> bool:
        return self.result() is not None

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, State)
            and type(self) is type(other)
            and (self.serialize() == other.serialize())
        )

    def __hash__(self) -> int:
        return hash(self.serialize())


class Rules(Protocol):
    """A game: a stateless factory of states."""

    name: str
    """The game id: `esoloe`, `solo`, `solace` or `zoxso`."""

    min_seats: int
    max_seats: int

    edition: int
    """The rules edition new games are played under. It goes up by one whenever a ruling of the
    game is revised in a way that changes play; the engine keeps playing every edition in
    `editions` so that games stored under an older one finish under their own rules."""

    editions: tuple[int, ...]
    """Every edition this engine can still play, oldest first; the last one is `edition`."""

    def new_game(
        self,
        seed: int,
        options: Mapping[str, JSON] | None = None,
        setup: Mapping[str, JSON] | None = None,
        *,
        edition: int | None = None,
    ) -> State:
        """A new game. Options not given take their defaults; unknown options raise InvalidOptions.
        `setup` fixes what the seed would otherwise deal (for replays and tests). `edition`
        (default: the current one) replays a game of an older edition; one not in `editions`
        raises InvalidOptions (see `check_edition`)."""
        ...

    def default_options(self) -> dict[str, JSON]:
        """Every option with its default value."""
        ...

    def deserialize(self, data: bytes) -> State:
        """The inverse of State.serialize."""
        ...

    def from_view(self, view: Mapping[str, JSON], seat: Seat, rng: random.Random) -> State:
        """A state whose `view(seat)` equals `view` (as `State.view(seat)` returned it) and whose
        `legal_moves(seat)` are the real ones, with everything the view hides drawn at random
        consistently with it. This is how a bot, told only its seat's view, gets a position to
        search: the same kind of state `determinize` gives, built from the view alone. Games
        without hidden information rebuild the position exactly."""
        ...


def check_seat(state: State, seat: Seat) -> None:
    """Raise InvalidSeat unless `seat` is one of the state's seats."""
    if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < state.num_seats:
        raise InvalidSeat(f"seat {seat!r} does not exist; seats are 0..{state.num_seats - 1}")


def check_edition(rules: Rules, edition: int | None) -> int:
    """The edition a new game is played under: `edition`, or the current one when None."""
    if edition is None:
        return rules.edition
    if isinstance(edition, bool) or edition not in rules.editions:
        known = ", ".join(map(str, rules.editions))
        raise InvalidOptions(
            f"{rules.name} has no rules edition {edition!r}; editions are {known} "
            f"(new games are played under {rules.edition})"
        )
    return edition


def check_options(
    given: Mapping[str, JSON] | None, defaults: Mapping[str, JSON]
) -> dict[str, JSON]:
    """Merge `given` over `defaults`, refusing names that are not options of the game."""
    merged = dict(defaults)
    for name, value in (given or {}).items():
        if name not in defaults:
            known = ", ".join(sorted(defaults)) or "none"
            raise InvalidOptions(f"unknown option {name!r}; options are: {known}")
        merged[name] = value
    return merged


def visible_events(events: Sequence[Event], seat: Seat | None) -> list[Event]:
    """The events `seat` (None: a spectator) may see, in order."""
    return [event for event in events if event.visible_to(seat)]
