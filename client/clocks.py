"""Clocks in words: how much time each seat has left, and the time control a `tabletop play`
command asks for.

Pure: no I/O and no wall clock. Every function that needs the time is told it (milliseconds
since the epoch), so that the tests can use a made-up time. A clock in a GameStatus is as of
`since` (when its version was committed): a running seat's time is counted down from there.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from games.board import seat_names
from games.clock import MAX_INCREMENT_SECONDS, MAX_SECONDS
from tabletop.common.v1 import common_pb2
from wire.clock import TIMEOUTS

LOW_MS = 10_000
"""Below this much time left to move, the time is shown in tenths; and a player is warned, in a
turn of at least 40 s (a shorter one: at a quarter of it, see `hurry_at`)."""
HURRY_SHARE = 4
"""A player is warned when less than 1/HURRY_SHARE of a turn's time is left, if that is less
than LOW_MS: an 8-second move is warned at 2 s, not the moment it starts."""

OUTCOMES = TIMEOUTS
"""`--on-timeout` words."""

_CLOCK = re.compile(r"(\d+(?:\.\d+)?|\.\d+)(?:\+(\d+))?")


def format_duration(ms: int) -> str:
    """`4:59`, `1:02:03`; under 10 s in tenths: `0:07.3`. Never below `0:00.0`."""
    ms = max(0, ms)
    if ms < LOW_MS:
        return f"0:0{ms // 1000}.{ms % 1000 // 100}"
    hours, rest = divmod(ms // 1000, 3600)
    minutes, seconds = divmod(rest, 60)
    return f"{hours}:{minutes:02}:{seconds:02}" if hours else f"{minutes}:{seconds:02}"


def timed(status: common_pb2.GameStatus) -> bool:
    """Whether a seat of the game can run out of time."""
    tc = status.time_control
    return status.HasField("time_control") and bool(tc.move_seconds or tc.clock_seconds)


def clock_left(clock: common_pb2.Clock, now_ms: int) -> int | None:
    """What is left on a seat's chess clock at `now_ms` (None without a chess clock)."""
    if not clock.HasField("remaining_ms"):
        return None
    spent = max(0, now_ms - clock.since.ToMilliseconds()) if clock.running else 0
    return max(0, clock.remaining_ms - spent)


def _deadline(clock: common_pb2.Clock) -> int | None:
    return clock.deadline.ToMilliseconds() if clock.running and clock.HasField("deadline") else None


def move_left(clock: common_pb2.Clock, now_ms: int) -> int | None:
    """How long the seat has left to make its move (None unless its time runs)."""
    deadline = _deadline(clock)
    return None if deadline is None else max(0, deadline - now_ms)


def deadline_of(status: common_pb2.GameStatus, seat: int) -> int | None:
    """When `seat`'s time to move runs out (ms since the epoch; None unless its time runs)."""
    return next((_deadline(clock) for clock in status.clocks if clock.seat == seat), None)


def running_seats(status: common_pb2.GameStatus) -> tuple[int, ...]:
    """The seats whose time runs now."""
    return tuple(clock.seat for clock in status.clocks if clock.running)


def hurry_at(status: common_pb2.GameStatus, seat: int) -> int | None:
    """When to tell `seat` to hurry (ms since the epoch; None unless its time runs): LOW_MS
    before its deadline, or less in a game whose turns are short, so that the warning comes
    when little of the turn is left: a quarter of the per-move limit or of the chess clock
    (the shorter of the two) before the deadline, when that is less than LOW_MS."""
    deadline = deadline_of(status, seat)
    if deadline is None:
        return None
    tc = status.time_control
    limits = [seconds * 1000 for seconds in (tc.move_seconds, tc.clock_seconds) if seconds]
    turn = min(limits, default=LOW_MS * HURRY_SHARE)
    return deadline - min(LOW_MS, turn // HURRY_SHARE)


def _people(status: common_pb2.GameStatus) -> list[int]:
    return [i for i, seat in enumerate(status.seats) if not seat.bot]


def clock_line(
    status: common_pb2.GameStatus,
    my_seat: int,
    now_ms: int,
    names: Sequence[str] | None = None,
) -> str:
    """`clocks: you 4:32 ▶ (move by 4:05)  ·  Bob 5:00`: each seat's clock (▶: its time runs;
    `move by`: a per-move limit that comes before its clock runs out), or with a per-move limit
    only the time left to the running seats' moves; and, while no person at the table has moved
    yet (a bot's move starts no clock), that a person's first move starts them and when the game
    is aborted. "" for an untimed game. `names`: what to call each seat (default: their names,
    `you` for `my_seat`)."""
    names = seat_names(status, my_seat) if names is None else names
    pending = status.HasField("abort_at") and not status.finished
    abort = start = ""
    if pending:  # no person has moved yet (bots' moves start nothing)
        alone = my_seat >= 0 and _people(status) == [my_seat]
        abort = format_duration(status.abort_at.ToMilliseconds() - now_ms)
        nobody = "you make none" if alone else "no person moves"
        abort = f"aborted in {abort} if {nobody}"
        bots = any(seat.bot for seat in status.seats)
        start = "at a person's first move" + (", not a bot's" if bots else "")
        start = "they start " + ("at your first move" if alone else start)
    if not timed(status):
        return f"clocks: none ({abort})" if pending else ""
    tc = status.time_control
    parts = [] if tc.clock_seconds else [f"{tc.move_seconds} s a move"]
    for clock in status.clocks:
        name = names[clock.seat] if 0 <= clock.seat < len(names) else f"seat {clock.seat}"
        left, due = clock_left(clock, now_ms), move_left(clock, now_ms)
        if left is None:  # a per-move limit only: shown while it runs
            if due is not None:
                parts.append(f"{name} {format_duration(due)} ▶")
            continue
        text = f"{name} {format_duration(left)}" + (" ▶" if clock.running else "")
        if due is not None and due < left:
            text += f" (move by {format_duration(due)})"
        parts.append(text)
    line = "clocks: " + "  ·  ".join(parts)
    if pending:
        line += f" ({start} · {abort})"
    return line


# ---- the time control a command asks for


def parse_clock(text: str) -> tuple[int, int]:
    """`--clock M+S` (minutes, maybe fractional, plus an increment in whole seconds; `M` alone:
    no increment) as (clock seconds, increment seconds); ValueError saying what is allowed."""
    found = _CLOCK.fullmatch(text.strip())
    if found is None:
        raise ValueError(
            f"{text!r} is not a clock: give minutes+increment seconds, e.g. 5+3, 0.5+0 or 10"
        )
    seconds = round(float(found[1]) * 60)
    increment = int(found[2] or 0)
    if not 1 <= seconds <= MAX_SECONDS:
        raise ValueError(f"a clock is 1 s to {MAX_SECONDS // 60} minutes, not {text!r}")
    if increment > MAX_INCREMENT_SECONDS:
        raise ValueError(f"an increment is at most {MAX_INCREMENT_SECONDS} s, not {increment}")
    return seconds, increment


def time_control(
    *,
    clock: tuple[int, int] | None = None,
    move_seconds: int | None = None,
    abort_seconds: int | None = None,
    untimed: bool = False,
    on_timeout: str | None = None,
    level: str | None = None,
    default_abort: int = 0,
) -> common_pb2.TimeControl | None:
    """The TimeControl the `tabletop play` flags ask for: None when none is given (the game's
    default applies); else what they say: no clock or limit they leave out, the game's
    outcome and bot level, and its abort (`default_abort`) unless the game is untimed.
    ValueError for flags that do not go together."""
    given = (clock, move_seconds, abort_seconds, on_timeout, level)
    if not untimed and all(value is None for value in given):
        return None
    for flag, value in (("--move-time", move_seconds), ("--abort-after", abort_seconds)):
        if value is not None and not 1 <= value <= MAX_SECONDS:
            raise ValueError(f"{flag} is 1..{MAX_SECONDS} seconds, not {value}")
    limited = clock is not None or move_seconds is not None
    if untimed and (limited or on_timeout or level):
        raise ValueError("--untimed takes no --clock, --move-time, --on-timeout or --timeout-level")
    if (on_timeout or level) and not limited:
        raise ValueError("--on-timeout and --timeout-level need --clock or --move-time")
    if level and on_timeout == "forfeit":
        raise ValueError("--timeout-level is the level of the bot of --on-timeout bot")
    if on_timeout is not None and on_timeout not in OUTCOMES:
        raise ValueError(f"--on-timeout is one of {', '.join(OUTCOMES)}, not {on_timeout!r}")
    clock_seconds, increment = clock or (0, 0)
    return common_pb2.TimeControl(
        move_seconds=move_seconds or 0,
        clock_seconds=clock_seconds,
        increment_seconds=increment,
        on_timeout=OUTCOMES[on_timeout] if on_timeout else common_pb2.TIMEOUT_UNSPECIFIED,
        bot_level=level or "",
        abort_seconds=abort_seconds or (0 if untimed else default_abort),
    )
