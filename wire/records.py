"""A game's stored records, typed: its meta (`GameMeta`, written once as the game is made), the
status stored with each version (`VersionStatus`) and, once it is over, its record on the
finished games' stream (`FinishedGame`). Each reads its stored mapping
(`from_json`) and writes the same mapping back (`to_json`): the keys are the ones Redis and
PostgreSQL have always held, and a key a game was stored without stays absent, so games stored
before a key existed still load and replay."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from games.clock import UNTIMED, TimeControl


@dataclass(frozen=True, slots=True)
class GameMeta:
    """What a game is, as it was made: its kind, seats and table settings."""

    game: str
    seats: list[str]
    """Who was seated at each seat as the game was made (see `holders` for who holds it now)."""
    seed: int | None = None
    """The seed the game was dealt from (never sent to a client)."""
    options: dict[str, Any] | None = None
    names: list[str] | None = None
    """The seats' display names (None: a game stored before names were kept)."""
    edition: int | None = None
    """The rules edition (None: a game stored before editions existed, edition 1)."""
    sponsor: str | None = None
    """The player the game was made for ("" for none; None: stored before sponsors)."""
    rated: bool = False
    accounts: list[int] | None = None
    """The seats held by accounts, in a rated or scored game."""
    ratings: dict[str, list[Any]] | None = None
    """A rated game's seats' ratings as it was made: seat -> [the number shown, provisional]."""
    scored: bool = False
    """An account's game played alone: its score table counts it."""
    day: str | None = None
    """A deal of the day's day (YYYY-MM-DD, UTC)."""
    private: bool = False
    jump_in_window_ms: int | None = None
    bot_pace_ms: int | None = None
    time_control: dict[str, Any] | None = None
    """As games.clock.TimeControl.to_json; None for an untimed game."""

    @property
    def rules_edition(self) -> int:
        return 1 if self.edition is None else int(self.edition)

    @property
    def sponsor_id(self) -> str:
        return self.sponsor or ""

    @property
    def clock(self) -> TimeControl:
        """The game's time control (untimed for a game created without one)."""
        return UNTIMED if self.time_control is None else TimeControl.from_json(self.time_control)

    @classmethod
    def from_json(cls, stored: Mapping[str, Any]) -> GameMeta:
        return cls(
            game=stored["game"],
            seats=list(stored["seats"]),
            seed=None if stored.get("seed") is None else int(stored["seed"]),
            options=None if stored.get("options") is None else dict(stored["options"]),
            names=None if stored.get("names") is None else list(stored["names"]),
            edition=stored.get("edition"),
            sponsor=stored.get("sponsor"),
            rated=bool(stored.get("rated")),
            accounts=None if stored.get("accounts") is None else list(stored["accounts"]),
            ratings=None if stored.get("ratings") is None else dict(stored["ratings"]),
            scored=bool(stored.get("scored")),
            day=stored.get("day"),
            private=bool(stored.get("private")),
            jump_in_window_ms=stored.get("jump_in_window_ms"),
            bot_pace_ms=stored.get("bot_pace_ms"),
            time_control=stored.get("time_control"),
        )

    def to_json(self) -> dict[str, Any]:
        stored: dict[str, Any] = {"game": self.game, "seats": list(self.seats)}
        optional = {
            "options": None if self.options is None else dict(self.options),
            "seed": self.seed,
            "names": None if self.names is None else list(self.names),
            "edition": self.edition,
            "sponsor": self.sponsor,
            "rated": True if self.rated else None,
            "accounts": None if self.accounts is None else list(self.accounts),
            "ratings": self.ratings,
            "scored": True if self.scored else None,
            "day": self.day,
            "private": True if self.private else None,
            "jump_in_window_ms": self.jump_in_window_ms,
            "bot_pace_ms": self.bot_pace_ms,
            "time_control": self.time_control,
        }
        stored.update({key: value for key, value in optional.items() if value is not None})
        return stored


@dataclass(frozen=True, slots=True)
class VersionStatus:
    """The public status of one version of a game, as stored with its log entry."""

    to_act: list[int]
    finished: bool
    result: dict[str, Any] | None = None
    """The result (winners, scores, detail) once the game is over."""
    clock: dict[str, Any] | None = None
    """A timed game's clocks (games.clock.Table.clock_json)."""
    replaced: dict[str, str] | None = None
    """The seats bots took over when their time ran out: seat -> bot (None: none)."""

    @property
    def taken_over(self) -> Mapping[str, str]:
        return self.replaced or {}

    @classmethod
    def from_json(cls, stored: Mapping[str, Any]) -> VersionStatus:
        return cls(
            to_act=list(stored["to_act"]),
            finished=bool(stored["finished"]),
            result=stored.get("result"),
            clock=stored.get("clock"),
            replaced=None if stored.get("replaced") is None else dict(stored["replaced"]),
        )

    def to_json(self) -> dict[str, Any]:
        stored: dict[str, Any] = {
            "to_act": list(self.to_act),
            "finished": self.finished,
            "result": self.result,
        }
        if self.clock is not None:
            stored["clock"] = self.clock
        if self.replaced is not None:
            stored["replaced"] = dict(self.replaced)
        return stored


@dataclass(frozen=True, slots=True)
class FinishedGame:
    """A finished game's record on the finished games' stream (keys.FINISHED_GAMES), as the
    game service appends it and the ratings consumer counts it: who sat, which seats were
    accounts', whether it is rated or scored, the final status."""

    seats: list[str]
    accounts: list[int]
    rated: bool
    scored: bool
    day: str | None
    """A deal of the day's day (YYYY-MM-DD, UTC); None for any other game."""
    status: VersionStatus
    moves: list[int] | None = None
    """The moves each seat made itself, from the game's log (the ratings consumer adds them;
    never on the stream; None: the log was not read)."""

    @classmethod
    def of(cls, meta: GameMeta, status: VersionStatus) -> FinishedGame:
        return cls(
            seats=list(meta.seats),
            accounts=list(meta.accounts or ()),
            rated=meta.rated,
            scored=meta.scored,
            day=meta.day,
            status=status,
        )

    @classmethod
    def from_json(cls, stored: Mapping[str, Any]) -> FinishedGame:
        moves = stored.get("moves")
        return cls(
            seats=list(stored["seats"]),
            accounts=list(stored.get("accounts") or ()),
            rated=bool(stored.get("rated")),
            scored=bool(stored.get("scored")),
            day=stored.get("day"),
            status=VersionStatus.from_json(stored["status"]),
            moves=None if moves is None else list(moves),
        )

    def to_json(self) -> dict[str, Any]:
        stored: dict[str, Any] = {
            "seats": list(self.seats),
            "accounts": list(self.accounts),
            "rated": self.rated,
            "scored": self.scored,
            "day": self.day,
            "status": self.status.to_json(),
        }
        if self.moves is not None:
            stored["moves"] = list(self.moves)
        return stored
