"""Clocks: a game's time control, and the table the platform keeps beside the engine's state.

The engine knows the rules; the table knows the time: whose time runs, what is left on each
seat's clock, which seats a bot plays since their time ran out, and whether the platform ended
the game (an abort; a stop, which gives an untimed game a table only to say so). Both are
stored with every version (the game service commits them together), and both are replayed from
the log the same way (`games.replay.step`).

Pure: no I/O and no wall clock. Every function is told the time (milliseconds since the epoch),
so the game service, the replays and the tests (with a made-up time) compute the same tables.

The rules of time, for every game:
- Time runs for the seats the game waits on (`State.public_to_act`: never a Solo jump-in, whose
  chance to act is hidden), from the moment the version that gave them the turn was committed.
- A seat's deadline is that moment plus its per-move limit or what is left on its chess clock,
  whichever comes first. A move must reach the server before it.
- At the deadline the seat times out: it forfeits (the game ends, as if it resigned), or a bot of
  the chosen level takes it over. A takeover never ends the game, even when no person is left
  at the table: the bots play on, and the seat's player may take the seat back at any version
  (`Table.taken_back`, a version of its own), its time running again from then (with a chess
  clock, only while the clock has time left: the bot's increments count). The result is the
  seated players', whoever played the last moves; it names the seats bots held at the end.
- Until a person at the table has made a move, no clock runs; a game in which none has
  `abort_seconds` after it was created is aborted: it ends without a result, nobody loses.
- Bot seats are never timed out (the platform runs them); their time is counted like anyone's.

Games that timed out before seats could be taken back ended without a result when a takeover
left no person at the table ("abandoned"): their stored tables still say so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # only types: reading a game's declaration loads no engine code
    from engines.contract import Event, State

OUTCOMES = ("forfeit", "bot")
"""What a timeout may do: the seat forfeits, or a bot takes it over."""

MAX_SECONDS = 24 * 3600
"""No limit, clock or abort delay is longer than a day (games live a week)."""
MAX_INCREMENT_SECONDS = 3600
MAX_JUMP_IN_WINDOW_MS = 5000
"""The longest jump-in window a table may ask for (`Game.jump_in_window_ms`): at a table with a
person, bots let between 1 and 1.25 times the window pass after each move before they act."""


MAX_BOT_PACE_MS = 5000
"""The slowest pace a table's bots may be asked to keep (`bot_pace_ms`): they let at least this
long pass after each move before they act."""
WATCHED_BOT_PACE_MS = 1000
"""The pace of a game of bots made for a person to watch (LobbyService.PlayAgainstBots with
watch_only) that asks for none: a move a second, which a person can follow."""


class BadTimeControl(ValueError):
    """A time control (or jump-in window) a game cannot be played with (answered as
    INVALID_OPTIONS)."""


def check_jump_in_window(value: object) -> int:
    """A table's jump-in window in ms (0..MAX_JUMP_IN_WINDOW_MS), or BadTimeControl."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadTimeControl(f"jump_in_window_ms must be a whole number of ms, not {value!r}")
    if not 0 <= value <= MAX_JUMP_IN_WINDOW_MS:
        raise BadTimeControl(
            f"jump_in_window_ms must be 0..{MAX_JUMP_IN_WINDOW_MS} ms (0: bots act at once); "
            f"got {value}"
        )
    return value


def check_bot_pace(value: object) -> int:
    """A table's bot pace in ms (0..MAX_BOT_PACE_MS), or BadTimeControl."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadTimeControl(f"bot_pace_ms must be a whole number of ms, not {value!r}")
    if not 0 <= value <= MAX_BOT_PACE_MS:
        raise BadTimeControl(
            f"bot_pace_ms must be 0..{MAX_BOT_PACE_MS} ms (0: bots act at once); got {value}"
        )
    return value


@dataclass(frozen=True, slots=True)
class TimeControl:
    """How much time the seats of a game have. 0 means none: all zero is an untimed game that
    is never aborted."""

    move_seconds: int = 0
    """A limit per move."""
    clock_seconds: int = 0
    """A chess clock: each seat's time for the whole game."""
    increment_seconds: int = 0
    """Added to a seat's clock after each of its moves."""
    on_timeout: str = "forfeit"
    """"forfeit" or "bot" (see OUTCOMES)."""
    bot_level: str = "greedy"
    """The level of the bot that takes a seat over."""
    abort_seconds: int = 0
    """A game in which no person moved this long after its creation is aborted."""

    @property
    def timed(self) -> bool:
        """Whether seats can run out of time."""
        return bool(self.move_seconds or self.clock_seconds)

    @property
    def kept(self) -> bool:
        """Whether a game with this time control needs a table at all (untimed and never
        aborted: no)."""
        return self.timed or bool(self.abort_seconds)

    def to_json(self) -> dict[str, Any]:
        return {
            "move_seconds": self.move_seconds,
            "clock_seconds": self.clock_seconds,
            "increment_seconds": self.increment_seconds,
            "on_timeout": self.on_timeout,
            "bot_level": self.bot_level,
            "abort_seconds": self.abort_seconds,
        }

    @staticmethod
    def from_json(obj: Mapping[str, Any]) -> TimeControl:
        return TimeControl(**{name: obj[name] for name in TimeControl.__slots__ if name in obj})

    def key(self) -> str:
        """A short canonical text, equal for equal time controls (matchmaking pools)."""
        return (
            f"{self.move_seconds}/{self.clock_seconds}+{self.increment_seconds}"
            f"/{self.on_timeout}:{self.bot_level}/{self.abort_seconds}"
        )

    def check(self, game: str, outcomes: Sequence[str], levels: Sequence[str]) -> None:
        """Raise BadTimeControl unless this is a time control `game` can be played with."""
        for name, value, most in (
            ("move_seconds", self.move_seconds, MAX_SECONDS),
            ("clock_seconds", self.clock_seconds, MAX_SECONDS),
            ("increment_seconds", self.increment_seconds, MAX_INCREMENT_SECONDS),
            ("abort_seconds", self.abort_seconds, MAX_SECONDS),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= most:
                raise BadTimeControl(f"time control {name} must be 0..{most} seconds")
        if self.increment_seconds and not self.clock_seconds:
            raise BadTimeControl("time control increment_seconds needs clock_seconds")
        if not isinstance(self.on_timeout, str) or self.on_timeout not in outcomes:
            raise BadTimeControl(
                f"a {game} seat that runs out of time cannot {str(self.on_timeout)[:40]!r}; "
                f"on_timeout may be: {', '.join(outcomes)}"
            )
        if not isinstance(self.bot_level, str) or self.bot_level not in levels:
            raise BadTimeControl(
                f"unknown bot level {str(self.bot_level)[:40]!r} for timeouts; "
                f"levels are: {', '.join(levels)}"
            )


UNTIMED = TimeControl()


@dataclass(frozen=True, slots=True)
class Due:
    """The next thing the platform must do to a game if nobody moves first."""

    at_ms: int
    kind: str
    """"timeout" (of `seat`) or "abort"."""
    seat: int | None = None


@dataclass(frozen=True, slots=True)
class Table:
    """A game's time and seats at one version, beside the engine's state."""

    created_ms: int
    since_ms: int
    """When the current version was committed: the running seats' time runs from here."""
    running: tuple[int, ...]
    """The seats whose time runs now (none until the game has started)."""
    remaining_ms: tuple[int, ...] | None
    """Each seat's chess clock as of `since_ms` (None without a chess clock)."""
    people: tuple[bool, ...]
    """Which seats a person holds now (a seat a bot took over is not one until taken back)."""
    started: bool
    """Whether a person has made a move (or the game cannot be aborted): clocks run."""
    replaced: Mapping[int, str] = field(default_factory=dict)
    """The seats bots took over (and their players have not taken back), and the bot player ids
    that hold them now."""
    ended: str | None = None
    """"aborted" or "stopped_by_sponsor" when the platform ended the game without a result
    ("abandoned" in games from before seats could be taken back, module doc)."""
    forfeited: int | None = None
    """The seat that lost on time (the engine's game ended by its resignation)."""

    # -- making ----------------------------------------------------------------------------

    @staticmethod
    def new(tc: TimeControl, people: Sequence[bool], to_act: Sequence[int], now_ms: int) -> Table:
        """The table of a game created at `now_ms` whose first seats to act are `to_act`."""
        started = not (tc.abort_seconds and any(people))
        return Table(
            created_ms=now_ms,
            since_ms=now_ms,
            running=tuple(to_act) if started else (),
            remaining_ms=(tc.clock_seconds * 1000,) * len(people) if tc.clock_seconds else None,
            people=tuple(people),
            started=started,
        )

    def _charged(self, tc: TimeControl, until_ms: int, actor: int | None) -> tuple[int, ...] | None:
        """The clocks once the running seats' time up to `until_ms` is counted (and the
        increment given to `actor` when it moved in its own time)."""
        if self.remaining_ms is None:
            return None
        spent = max(0, until_ms - self.since_ms)
        clocks = list(self.remaining_ms)
        for seat in self.running:
            clocks[seat] = max(0, clocks[seat] - spent)
        if actor is not None and actor in self.running:
            clocks[actor] += tc.increment_seconds * 1000
        return tuple(clocks)

    def moved(self, tc: TimeControl, actor: int, to_act: Sequence[int], now_ms: int) -> Table:
        """The table after `actor` moved at `now_ms`, the game now waiting on `to_act`."""
        started = self.started or self.people[actor]
        return replace(
            self,
            since_ms=now_ms,
            running=tuple(to_act) if started else (),
            remaining_ms=self._charged(tc, now_ms, actor) if self.started else self.remaining_ms,
            started=started,
        )

    def timed_out(
        self, tc: TimeControl, due: Due, to_act: Sequence[int], now_ms: int, bot: str | None
    ) -> Table:
        """The table after `due.seat` ran out of time at `due.at_ms` (applied at `now_ms`): a
        bot took it over (`bot`, its player id) or, with None, it forfeited. Its time is
        counted up to its deadline, however late the timeout is applied; the next turn starts
        when it is. A takeover never ends the game (module doc)."""
        seat = due.seat
        assert seat is not None
        table = replace(self, remaining_ms=self._charged(tc, due.at_ms, None), since_ms=now_ms)
        if bot is None:
            return replace(table, running=(), forfeited=seat)
        people = list(self.people)
        people[seat] = False
        return replace(
            table,
            running=tuple(to_act),
            people=tuple(people),
            replaced={**self.replaced, seat: bot},
        )

    def taken_back(self, tc: TimeControl, seat: int, to_act: Sequence[int], now_ms: int) -> Table:
        """The table once the player of `seat`, which a bot held, took it back at `now_ms`: a
        person's seat again, whose time (like every seat's to act) runs from now; the clocks are
        charged up to now."""
        people = list(self.people)
        people[seat] = True
        return replace(
            self,
            since_ms=now_ms,
            running=tuple(to_act),
            remaining_ms=self._charged(tc, now_ms, None),
            people=tuple(people),
            replaced={s: bot for s, bot in self.replaced.items() if s != seat},
        )

    def time_left(self, tc: TimeControl, seat: int, now_ms: int) -> int | None:
        """What is left on `seat`'s chess clock at `now_ms` (None without one)."""
        clocks = self._charged(tc, now_ms, None)
        return None if clocks is None else clocks[seat]

    def aborted(self, now_ms: int) -> Table:
        return replace(self, since_ms=now_ms, running=(), ended="aborted")

    def stopped(self, now_ms: int) -> Table:
        """The table once the player who asked for a game of bots stopped it (no result)."""
        return replace(self, since_ms=now_ms, running=(), ended="stopped_by_sponsor")

    # -- reading ---------------------------------------------------------------------------

    @property
    def over(self) -> bool:
        """Whether the platform ended the game (the engine's state may not know)."""
        return self.ended is not None or self.forfeited is not None

    def deadlines(self, tc: TimeControl) -> dict[int, int]:
        """When each running seat's time runs out (bots' too: they are told, never held to it)."""
        if not tc.timed or self.over:
            return {}
        found = {}
        for seat in self.running:
            limits = []
            if tc.move_seconds:
                limits.append(tc.move_seconds * 1000)
            if self.remaining_ms is not None:
                limits.append(self.remaining_ms[seat])
            found[seat] = self.since_ms + min(limits)
        return found

    def abort_at(self, tc: TimeControl) -> int | None:
        """When the game is aborted unless a person moves first (None: it cannot be)."""
        if self.started or self.over or not tc.abort_seconds:
            return None
        return self.created_ms + tc.abort_seconds * 1000

    def due(self, tc: TimeControl) -> Due | None:
        """What happens first if nobody moves: a person's timeout (the earliest deadline; the
        lowest seat of equal ones) or the abort. None when nothing can happen."""
        abort = self.abort_at(tc)
        if abort is not None:
            return Due(abort, "abort")
        timed = [(at, seat) for seat, at in self.deadlines(tc).items() if self.people[seat]]
        if not timed:
            return None
        at, seat = min(timed)
        return Due(at, "timeout", seat)

    def holders(self, seats: Sequence[str]) -> list[str]:
        """Who holds each seat now: the seated players, less the seats bots took over."""
        return [self.replaced.get(i, player) for i, player in enumerate(seats)]

    def result_json(self, engine: Mapping[str, Any] | None) -> dict[str, Any] | None:
        """The game's result as stored (`Result.to_json`): the engine's, said to be a loss on
        time for a forfeit (detail "reason" "timeout", "seat": the seat that lost on time);
        with "taken_over" (the seats bots held at the end, whose results are their seated
        players' all the same) when bots played seats to the end; none (no winner, reason
        "aborted", "stopped_by_sponsor", formerly "abandoned") when the platform ended the
        game."""
        if self.ended is not None:
            return {"winners": [], "scores": {}, "detail": {"reason": self.ended}}
        if self.forfeited is not None and engine is not None:
            detail = {**engine["detail"], "reason": "timeout", "seat": self.forfeited}
            return {**engine, "detail": detail}
        if engine is not None and self.replaced:
            return {**engine, "detail": {**engine["detail"], "taken_over": sorted(self.replaced)}}
        return None if engine is None else dict(engine)

    def clock_json(self, tc: TimeControl) -> dict[str, Any]:
        """The clocks as a version's public status carries them."""
        abort = self.abort_at(tc)
        return {
            "since": self.since_ms,
            "running": list(self.running),
            "remaining": None if self.remaining_ms is None else list(self.remaining_ms),
            "deadlines": {str(seat): at for seat, at in self.deadlines(tc).items()},
            "abort_at": abort,
        }

    # -- storing ---------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        return {
            "created": self.created_ms,
            "since": self.since_ms,
            "running": list(self.running),
            "remaining": None if self.remaining_ms is None else list(self.remaining_ms),
            "people": list(self.people),
            "started": self.started,
            "replaced": {str(seat): bot for seat, bot in sorted(self.replaced.items())},
            "ended": self.ended,
            "forfeited": self.forfeited,
        }

    @staticmethod
    def from_json(obj: Mapping[str, Any]) -> Table:
        remaining = obj["remaining"]
        return Table(
            created_ms=obj["created"],
            since_ms=obj["since"],
            running=tuple(obj["running"]),
            remaining_ms=None if remaining is None else tuple(remaining),
            people=tuple(obj["people"]),
            started=obj["started"],
            replaced={int(seat): bot for seat, bot in obj["replaced"].items()},
            ended=obj["ended"],
            forfeited=obj["forfeited"],
        )


def apply_due(
    state: State, table: Table, tc: TimeControl, due: Due, now_ms: int, bot: str
) -> tuple[State, Table, list[Event], dict[str, Any]]:
    """Apply what is due (as of `due.at_ms`, at `now_ms`): the new state and table, the
    engine's events, and the table event the log records (`TableEvent` on the wire). `bot` is
    the player id a takeover seats (unused otherwise)."""
    if due.kind == "abort":
        return state, table.aborted(now_ms), [], {"kind": "aborted", "deadline": due.at_ms}
    assert due.seat is not None
    events: list[Event] = []
    if tc.on_timeout == "forfeit":
        state, events = state.resign(due.seat)
        after = table.timed_out(tc, due, (), now_ms, None)
    else:
        after = table.timed_out(tc, due, state.public_to_act(), now_ms, bot)
    event: dict[str, Any] = {
        "kind": "timeout",
        "seat": due.seat,
        "outcome": tc.on_timeout,
        "deadline": due.at_ms,
        "bot": bot if tc.on_timeout == "bot" else "",
        "abandoned": False,  # a takeover never ends the game (module doc); kept for the log
    }
    return state, after, events, event


def take_back(
    state: State, table: Table, tc: TimeControl, seat: int, now_ms: int
) -> tuple[Table, dict[str, Any]]:
    """The table once `seat`'s player took it back from its bot at `now_ms`, and the table
    event the log records. The caller has checked that a bot holds the seat."""
    after = table.taken_back(tc, seat, state.public_to_act(), now_ms)
    return after, {"kind": "seat_taken_back", "seat": seat, "bot": table.replaced[seat]}
