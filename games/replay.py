"""Replaying games (pure): one step function that the game service plays with, the audit and
the `tabletop replay` command replay logs with, so that a log replays exactly as it was played.

A step is a seat's move ("resign" included) or what the platform did: at a deadline, "timeout"
(the seat ran out of time) and "abort" (no person moved in time); at any time, "stop_game" (the
player who asked for a game of bots ended it) and "take_seat" (a seat's player took it back
from the bot that played it since a timeout). A timed game's table (games.clock) moves along
with the engine's state; a stop gives an untimed game a table, which says it ended.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import games
from engines.contract import Event, GameError, GameOver, IllegalMove, State
from games.clock import Table, TimeControl, apply_due, take_back

STOP = "stop_game"
TAKE_SEAT = "take_seat"
DEADLINE_MOVES = ("timeout", "abort")
"""Log moves that the platform applies at a deadline."""
PLATFORM_MOVES = (*DEADLINE_MOVES, STOP, TAKE_SEAT)
"""Log moves that are the platform's, not a seat's move in the game."""


@dataclass(frozen=True, slots=True)
class Step:
    """One version of a game's log, as a replay needs it."""

    actor: int
    """The seat that moved (for a timeout: the seat whose time ran out; for a take-back: the
    seat taken back; -1 for an abort or a stop)."""
    move: str
    time_ms: int = 0
    """When it was committed (the table counts time with it)."""
    bot: str = ""
    """For a timeout with the "bot" outcome: the bot that took the seat over."""


@dataclass(frozen=True, slots=True)
class Position:
    """A game after a step: the engine's state, the table (None: untimed), what the step did
    (the engine's events, and the platform's table event for a timeout or an abort)."""

    state: State
    table: Table | None = None
    events: list[Event] = field(default_factory=list)
    table_event: dict[str, Any] | None = None

    @property
    def finished(self) -> bool:
        return self.state.finished or (self.table is not None and self.table.over)

    def result(self) -> dict[str, Any] | None:
        """The result as stored (a loss on time, an abort: see Table.result_json)."""
        engine = self.state.result()
        engine_json = None if engine is None else engine.to_json()
        return engine_json if self.table is None else self.table.result_json(engine_json)


def start(
    game: str,
    seed: int,
    options: Mapping[str, Any] | None = None,
    setup: Mapping[str, Any] | None = None,
    *,
    edition: int | None = None,
    time_control: TimeControl | None = None,
    people: Sequence[bool] = (),
    time_ms: int = 0,
) -> Position:
    """A new game (version 0): its table is kept when the time control needs one; `people`
    says which seats a person holds (default: all)."""
    state = games.rules(game).new_game(seed, options, setup, edition=edition)
    table = None
    if time_control is not None and time_control.kept:
        seated = list(people) or [True] * state.num_seats
        table = Table.new(time_control, seated, state.public_to_act(), time_ms)
    return Position(state, table, state.opening_events())


def step(position: Position, tc: TimeControl, played: Step) -> Position:
    """The game after one step. Raises a GameError for a move the rules refuse, a step after
    the platform ended the game, and a timeout or abort that was not what was due."""
    state, table = position.state, position.table
    if table is not None and table.over:
        ended = (table.ended or "a seat ran out of time").replace("_", " ")
        raise GameOver(f"the game is over: {ended}")
    if played.move == STOP:
        if state.finished:
            raise GameOver("the game is over: there is nothing left to stop")
        if table is None:  # untimed: a table of bots, only to say how the game ended
            table = Table.new(tc, [False] * state.num_seats, (), played.time_ms)
        return Position(state, table.stopped(played.time_ms), [], {"kind": "stopped"})
    if played.move == TAKE_SEAT:
        return _taken_back(state, table, tc, played)
    if played.move in PLATFORM_MOVES:
        due = None if table is None or state.finished else table.due(tc)
        kind = "abort" if played.move == "abort" else "timeout"
        seat = None if kind == "abort" else played.actor
        if table is None or due is None or (due.kind, due.seat) != (kind, seat):
            asked = "an abort" if kind == "abort" else f"a timeout of seat {seat}"
            if due is None:
                next_ = "nothing"
            else:
                next_ = "the abort" if due.kind == "abort" else f"a timeout of seat {due.seat}"
            raise IllegalMove(f"{asked} is not what the game's time control has due ({next_})")
        state, table, events, event = apply_due(state, table, tc, due, played.time_ms, played.bot)
        return Position(state, table, events, event)
    if played.move == "resign":
        state, events = state.resign(played.actor)
    else:
        state, events = state.apply(played.actor, played.move)
    if table is not None:
        table = table.moved(tc, played.actor, state.public_to_act(), played.time_ms)
    return Position(state, table, events)


def _taken_back(state: State, table: Table | None, tc: TimeControl, played: Step) -> Position:
    """The game once the player of seat `played.actor` took it back from its bot (refused when
    no bot holds it, the game is over, or the seat's chess clock is empty)."""
    seat = played.actor
    if state.finished:
        raise GameOver("the game is over: there is no seat to take back")
    if table is None or seat not in table.replaced:
        raise IllegalMove(f"no bot plays seat {seat}: there is nothing to take back")
    left = table.time_left(tc, seat, played.time_ms)
    if left is not None and left <= 0:
        raise IllegalMove(f"seat {seat}'s chess clock has no time left: its bot plays on")
    table, event = take_back(state, table, tc, seat, played.time_ms)
    return Position(state, table, [], event)


def parse_seat_move(text: str) -> tuple[int, str]:
    """`SEAT:MOVE`, e.g. `0:c12` or `2:play W4:b`; `SEAT:timeout`, `SEAT:take_seat`; `abort` or
    `stop_game` alone."""
    if text.strip() in ("abort", STOP):
        return -1, text.strip()
    seat, sep, move = text.partition(":")
    if not sep or not seat.strip().isdigit():
        raise ValueError(
            f"{text!r} is not SEAT:MOVE (e.g. 0:c12, 1:timeout, 1:take_seat) nor abort, stop_game"
        )
    return int(seat), move


def describe(game: str, position: Position) -> dict[str, Any]:
    """The finished/result/to_act/legal part of a replay report."""
    state = position.state
    over = position.finished
    report = {
        "finished": over,
        "result": position.result(),
        "to_act": [] if over else list(state.to_act()),
        "legal": {
            str(seat): [] if over else state.legal_moves(seat) for seat in range(state.num_seats)
        },
    }
    if position.table is not None and position.table.replaced:
        report["taken_over"] = {str(s): bot for s, bot in sorted(position.table.replaced.items())}
    return report


def replay(
    game: str,
    moves: Sequence[tuple[int, str]],
    *,
    seed: int = 0,
    options: Mapping[str, Any] | None = None,
    setup: Mapping[str, Any] | None = None,
    edition: int | None = None,
    time_control: TimeControl | None = None,
) -> dict[str, Any]:
    """Apply `moves` in order from a new game of the given rules edition (default: the current
    one) and time control (default: the game's; every seat a person's, no time passing, so a
    timeout is whatever the time control does to the seat whose turn it is); stop at the first
    refused move and report it."""
    tc = games.get(game).time_control if time_control is None else time_control
    position = start(game, seed, options, setup, edition=edition, time_control=tc)
    applied = 0
    error = None
    for index, (seat, move) in enumerate(moves):
        bot = f"bot-{tc.bot_level}-{index:08x}" if move == "timeout" else ""
        try:
            position = step(position, tc, Step(seat, move, 0, bot))
        except GameError as refused:
            error = {
                "index": index,
                "move": move,
                "reason": refused.reason,
                "message": refused.message,
            }
            break
        applied += 1
    return {
        "game": game,
        "edition": position.state.edition,
        "applied": applied,
        "error": error,
        **describe(game, position),
    }
