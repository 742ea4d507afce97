"""Clocks (games/clock.py) and the replay step that moves them (games/replay.py), with a made-up
clock: every time is a plain number of milliseconds the test picks; nothing sleeps and nothing
reads the wall clock."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import games
from engines.contract import GameError, GameOver, IllegalMove
from games.clock import (
    MAX_INCREMENT_SECONDS,
    MAX_SECONDS,
    OUTCOMES,
    UNTIMED,
    BadTimeControl,
    Due,
    Table,
    TimeControl,
    apply_due,
)
from games.replay import PLATFORM_MOVES, Position, Step, parse_seat_move, replay, start, step
from wire.records import GameMeta

BUILTIN = ("esoloe", "solo", "solace", "zoxso")
SOLO = games.get("solo").time_control  # 30 s a move, a bot takes over, aborted after 120 s


def table_of(position: Position) -> Table:
    assert position.table is not None
    return position.table


def play(
    position: Position, tc: TimeControl, at_ms: int, seat: int | None = None, move: str = ""
) -> Position:
    """`seat` (default: the seat to move) plays `move` (default: its first legal one) at `at_ms`."""
    state = position.state
    seat = state.public_to_act()[0] if seat is None else seat
    return step(position, tc, Step(seat, move or state.legal_moves(seat)[0], at_ms))


def snapshot(position: Position) -> tuple[bytes, Any, list[Any], Any]:
    table = None if position.table is None else position.table.to_json()
    events = [event.to_json() for event in position.events]
    return position.state.serialize(), table, events, position.table_event


def assert_nothing_steps(position: Position, tc: TimeControl) -> None:
    """Once the platform ended a game, every step is refused as GameOver."""
    for seat in range(position.state.num_seats):
        for move in ("resign", "timeout", "c12"):
            with pytest.raises(GameOver):
                step(position, tc, Step(seat, move, 10**12))
    with pytest.raises(GameOver):
        step(position, tc, Step(-1, "abort", 10**12))


def roundtrip(table: Table) -> Table:
    return Table.from_json(json.loads(json.dumps(table.to_json())))


# -- time controls -----------------------------------------------------------------------------


@pytest.mark.parametrize("game", BUILTIN)
def test_every_games_default_time_control_is_playable(game: str) -> None:
    """Each game's default time control passes its own check and names only known outcomes."""
    declared = games.get(game)
    declared.time_control.check(game, declared.timeouts, games.LEVELS)
    assert set(declared.timeouts) <= set(OUTCOMES)


def test_check_accepts_the_bounds() -> None:
    """The bounds are inclusive: a day for a limit, a clock or an abort, an hour of increment."""
    top, inc = MAX_SECONDS, MAX_INCREMENT_SECONDS
    TimeControl(top, top, inc, "bot", "strong", top).check("esoloe", OUTCOMES, games.LEVELS)
    UNTIMED.check("esoloe", OUTCOMES, games.LEVELS)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"move_seconds": -1}, "move_seconds must be 0..86400 seconds"),
        ({"clock_seconds": MAX_SECONDS + 1}, "clock_seconds must be 0..86400 seconds"),
        ({"abort_seconds": -30}, "abort_seconds must be 0..86400 seconds"),
        ({"abort_seconds": MAX_SECONDS + 1}, "abort_seconds must be 0..86400 seconds"),
        ({"move_seconds": True}, "move_seconds must be"),
        ({"clock_seconds": 60, "increment_seconds": True}, "increment_seconds must be"),
        ({"clock_seconds": 60.0}, "clock_seconds must be"),
        ({"move_seconds": "30"}, "move_seconds must be"),
        ({"clock_seconds": 60, "increment_seconds": 3601}, "increment_seconds must be 0..3600 "),
        ({"increment_seconds": 5}, "increment_seconds needs clock_seconds"),
        ({"move_seconds": 30, "increment_seconds": 5}, "increment_seconds needs clock_seconds"),
    ],
)
def test_check_refuses_numbers_out_of_bounds(fields: dict[str, Any], message: str) -> None:
    """Each number is a whole count of seconds within its bound (a bool is not one); an
    increment needs a chess clock to add to."""
    with pytest.raises(BadTimeControl, match=re.escape(message)):
        TimeControl.from_json(fields).check("esoloe", OUTCOMES, games.LEVELS)


def test_check_names_the_allowed_outcomes_and_levels() -> None:
    """An outcome the game does not allow, or an unknown bot level, is refused naming the
    allowed ones."""
    solace = games.get("solace").timeouts
    with pytest.raises(BadTimeControl, match=r"cannot 'bot'; on_timeout may be: forfeit$"):
        TimeControl(abort_seconds=60, on_timeout="bot").check("solace", solace, games.LEVELS)
    with pytest.raises(BadTimeControl, match=r"cannot 'forfeit'; on_timeout may be: bot$"):
        TimeControl(move_seconds=30).check("solo", games.get("solo").timeouts, games.LEVELS)
    with pytest.raises(
        BadTimeControl, match=r"'grandmaster'.*levels are: random, greedy, strong, expert"
    ):
        TimeControl(move_seconds=30, bot_level="grandmaster").check("zoxso", OUTCOMES, games.LEVELS)


def test_key_is_equal_for_equal_controls_only() -> None:
    """key() is canonical: equal controls give equal keys; a change to any field, another."""
    base = TimeControl(30, 300, 5, "forfeit", "greedy", 120)
    assert TimeControl(30, 300, 5, "forfeit", "greedy", 120).key() == base.key()
    changes: list[dict[str, Any]] = [
        {"move_seconds": 31}, {"clock_seconds": 301}, {"increment_seconds": 6},
        {"on_timeout": "bot"}, {"bot_level": "strong"}, {"abort_seconds": 0},
        {"move_seconds": 300, "clock_seconds": 30},
    ]  # fmt: skip
    variants = [base, UNTIMED, *(TimeControl.from_json({**base.to_json(), **c}) for c in changes)]
    assert len({tc.key() for tc in variants}) == len(variants)


def test_time_control_json_and_stored_meta() -> None:
    """A time control survives JSON; a stored game without one (or with null) is untimed."""
    meta = {"game": "esoloe", "seats": ["p-1", "p-2"], "seed": 1, "options": {}}
    tc = TimeControl(30, 300, 5, "bot", "strong", 120)
    assert TimeControl.from_json(json.loads(json.dumps(tc.to_json()))) == tc
    assert TimeControl.from_json({"move_seconds": 10}) == TimeControl(move_seconds=10)
    assert GameMeta.from_json(meta).clock is UNTIMED
    assert GameMeta.from_json({**meta, "time_control": None}).clock is UNTIMED
    assert GameMeta.from_json({**meta, "time_control": tc.to_json()}).clock == tc


def test_timed_and_kept() -> None:
    """Only a limit or a clock times a game; an abort delay alone still needs a table."""
    assert (UNTIMED.timed, UNTIMED.kept) == (False, False)
    assert TimeControl(on_timeout="bot", bot_level="strong").kept is False
    abort_only = TimeControl(abort_seconds=600)
    assert (abort_only.timed, abort_only.kept) == (False, True)
    assert (TimeControl(move_seconds=30).timed, TimeControl(clock_seconds=60).timed) == (True, True)


def test_start_keeps_a_table_only_when_the_time_control_needs_one() -> None:
    """start() keeps a table for a timed or abortable game only, waiting on public_to_act;
    every seat is a person's unless told otherwise."""
    assert start("esoloe", 1).table is None
    assert start("esoloe", 1, time_control=TimeControl(on_timeout="bot")).table is None
    people = [True, False, False, True]
    position = start("solo", 3, time_control=SOLO, people=people, time_ms=7)
    assert position.table == Table.new(SOLO, people, position.state.public_to_act(), 7)
    assert table_of(start("solo", 3, time_control=SOLO)).people == (True,) * 4


# -- starting, the move limit, the chess clock ------------------------------------------------


def test_no_clock_runs_until_a_person_moves_and_then_no_abort() -> None:
    """With an abort delay and a person seated nothing runs: only the abort is due, at creation
    + abort_seconds. A person's move starts the clocks of the seats to act and ends the abort."""
    tc = TimeControl(move_seconds=30, abort_seconds=120)
    table = Table.new(tc, [True, True], (0,), 1_000)
    assert (table.started, table.running, table.deadlines(tc)) == (False, (), {})
    assert table.abort_at(tc) == 121_000
    assert table.due(tc) == Due(121_000, "abort")
    table = table.moved(tc, 0, (1,), 50_000)
    assert (table.started, table.running, table.abort_at(tc)) == (True, (1,), None)
    assert table.due(tc) == Due(80_000, "timeout", 1)


def test_a_bots_move_does_not_start_the_clock() -> None:
    """A bot's move before any person's starts nothing: no charge, no clock, the abort still
    due. The first person's move starts the clocks without charging anyone."""
    tc = TimeControl(move_seconds=30, clock_seconds=60, increment_seconds=5, abort_seconds=120)
    table = Table.new(tc, [False, True], (0,), 0).moved(tc, 0, (1,), 10_000)
    assert (table.started, table.running, table.remaining_ms) == (False, (), (60_000, 60_000))
    assert table.due(tc) == Due(120_000, "abort")
    table = table.moved(tc, 1, (0,), 100_000)  # the first person's move: uncharged, no increment
    assert (table.started, table.running, table.remaining_ms) == (True, (0,), (60_000, 60_000))
    assert table.due(tc) is None  # only the bot's time runs
    table = table.moved(tc, 0, (1,), 104_000)
    assert table.remaining_ms == (61_000, 60_000)
    assert table.due(tc) == Due(134_000, "timeout", 1)


def test_without_an_abort_delay_the_clock_runs_from_creation() -> None:
    """With abort_seconds=0 (or no person at the table) the clocks run from creation."""
    tc = TimeControl(move_seconds=30)
    table = Table.new(tc, [True, True], (0,), 5_000)
    assert (table.started, table.running, table.abort_at(tc)) == (True, (0,), None)
    assert table.due(tc) == Due(35_000, "timeout", 0)
    bots = replace(tc, abort_seconds=60)  # nobody to wait for: a table of bots never aborts
    assert Table.new(bots, [False, False], (0,), 0).abort_at(bots) is None


def test_the_move_limit_restarts_at_every_move() -> None:
    """The per-move deadline is `since` + move_seconds, counted again from every move."""
    tc = TimeControl(move_seconds=30)
    table = Table.new(tc, [True, True], (0,), 0)
    for turn, at in enumerate([1, 29_999, 30_500, 60_000]):
        seat = turn % 2
        table = table.moved(tc, seat, (1 - seat,), at)
        assert table.deadlines(tc) == {1 - seat: at + 30_000}


def test_a_chess_clock_charges_the_running_seats_and_rewards_moves_in_time() -> None:
    """Time from `since` to a move is charged to the running seats only; the increment goes to
    the mover only when its own time was running."""
    tc = TimeControl(clock_seconds=60, increment_seconds=5)
    table = Table.new(tc, [True, True, True], (0,), 0)
    table = table.moved(tc, 0, (1, 2), 10_000)
    assert table.remaining_ms == (55_000, 60_000, 60_000)
    table = table.moved(tc, 1, (0,), 13_000)  # both waited on seats pay 3 s
    assert table.remaining_ms == (55_000, 62_000, 57_000)
    table = table.moved(tc, 2, (0,), 20_000)  # out of turn: no increment, seat 0 pays
    assert table.remaining_ms == (48_000, 62_000, 57_000)
    assert table.deadlines(tc) == {0: 68_000}


def test_a_clock_never_goes_below_zero() -> None:
    """A clock stops at 0 (a bot may overrun it; its increment is then added to 0), and a time
    before `since` charges nothing."""
    tc = TimeControl(clock_seconds=10, increment_seconds=2)
    table = Table.new(tc, [False, False], (0, 1), 0).moved(tc, 0, (0, 1), 30_000)
    assert table.remaining_ms == (2_000, 0)
    assert table.deadlines(tc) == {0: 32_000, 1: 30_000}
    assert table.due(tc) is None  # bots: told their deadlines, never held to them
    earlier = table.moved(tc, 1, (0, 1), 29_000)  # a time before `since` charges nothing
    assert earlier.remaining_ms == (2_000, 2_000)


def test_the_deadline_is_the_nearer_of_the_move_limit_and_the_clock() -> None:
    """A seat's deadline is `since` plus its move limit or its clock, whichever is less."""
    tc = TimeControl(move_seconds=30, clock_seconds=50)
    table = Table.new(tc, [True, True], (0,), 0)
    assert table.deadlines(tc) == {0: 30_000}
    table = table.moved(tc, 0, (1,), 25_000).moved(tc, 1, (0,), 50_000)
    assert table.remaining_ms == (25_000, 25_000)
    assert table.deadlines(tc) == {0: 75_000}


def test_due_is_the_earliest_persons_deadline_lowest_seat_first() -> None:
    """due(): the earliest deadline of a seat a person holds (bots are never timed out), the
    lowest seat of equal ones; nothing once the game is over, nor in an untimed game."""
    tc = TimeControl(clock_seconds=60)
    people = (True, False, True, True)
    table = Table(0, 1_000, (3, 1, 2, 0), (30_000, 1_000, 30_000, 20_000), people, started=True)
    assert table.due(tc) == Due(21_000, "timeout", 3)  # seat 1 would be first, but is a bot
    tie = replace(table, remaining_ms=(20_000, 1_000, 20_000, 20_000))
    assert tie.due(tc) == Due(21_000, "timeout", 0)
    assert replace(table, running=(1,)).due(tc) is None
    assert replace(table, forfeited=2).due(tc) is None
    assert replace(table, ended="abandoned").due(tc) is None
    assert replace(table, remaining_ms=None).due(TimeControl(abort_seconds=60)) is None


# -- what is due: forfeit, takeover, abort ----------------------------------------------------


@pytest.mark.parametrize("game", ["esoloe", "zoxso"])
def test_a_forfeit_on_time_is_charged_to_the_deadline_and_loses(game: str) -> None:
    """A forfeit ends the game as a resignation said to be a loss on time: the other seat wins.
    The seat pays up to its deadline however late the timeout is applied; `since` is then."""
    tc = TimeControl(move_seconds=20, clock_seconds=60, increment_seconds=2, abort_seconds=30)
    position = play(start(game, 1, time_control=tc), tc, 5_000)
    assert table_of(position).due(tc) == Due(25_000, "timeout", 1)
    late = step(position, tc, Step(1, "timeout", 90_000, "unused"))  # applied 65 s late
    table = table_of(late)
    assert (late.finished, late.state.finished) == (True, True)
    result = late.result() or {}
    assert (result["winners"], result["detail"]) == ([0], {"reason": "timeout", "seat": 1})
    assert (table.forfeited, table.running, table.since_ms) == (1, (), 90_000)
    assert table.remaining_ms == (60_000, 40_000)
    assert late.table_event == {
        "kind": "timeout", "seat": 1, "outcome": "forfeit",
        "deadline": 25_000, "bot": "", "abandoned": False,
    }  # fmt: skip
    assert late.events[0].kind == "resigned"
    assert_nothing_steps(late, tc)


def test_a_bot_takes_over_a_seat_whose_time_ran_out() -> None:
    """With the "bot" outcome the seat is a bot's from then on: no longer a person's, its holder
    the bot; the game goes on, the seat to act unchanged, and the bot is never timed out."""
    position = play(start("solo", 0, time_control=SOLO), SOLO, 1_000)
    (seat,) = position.state.public_to_act()
    assert table_of(position).due(SOLO) == Due(31_000, "timeout", seat)
    after = step(position, SOLO, Step(seat, "timeout", 45_000, "bot-greedy-1"))
    table = table_of(after)
    assert (after.state, after.events) == (position.state, [])
    assert table.replaced == {seat: "bot-greedy-1"}
    assert table.people == tuple(s != seat for s in range(4))
    holders = ["ann", "bob", "cy", "di"]
    assert table.holders(holders) == [*holders[:seat], "bot-greedy-1", *holders[seat + 1 :]]
    assert table.running == after.state.public_to_act() == (seat,)
    assert (table.since_ms, table.over, after.finished) == (45_000, False, False)
    assert table.due(SOLO) is None  # the bot's turn: never timed out
    assert after.table_event == {
        "kind": "timeout", "seat": seat, "outcome": "bot",
        "deadline": 31_000, "bot": "bot-greedy-1", "abandoned": False,
    }  # fmt: skip
    nxt = play(after, SOLO, 47_000)  # the bot moves; the next person's time runs from then
    assert table_of(nxt).due(SOLO) == Due(77_000, "timeout", nxt.state.public_to_act()[0])


def test_replacing_the_last_person_leaves_the_bots_playing_for_the_players() -> None:
    """A takeover never ends the game, even when no person is left at the table: the bots play
    on to the end, and the result is the engine's, naming the seats bots held at the end (their
    players' results all the same)."""
    tc = TimeControl(move_seconds=10, on_timeout="bot")
    position = start("esoloe", 1, time_control=tc, people=[True, False])
    table = table_of(position)
    due = table.due(tc)
    assert due == Due(10_000, "timeout", 0)
    state, table, events, event = apply_due(position.state, table, tc, due, 12_000, "b")
    assert (table.since_ms, table.running) == (12_000, (0,))
    assert (state, events) == (position.state, [])
    assert (table.ended, table.people, table.replaced) == (None, (False, False), {0: "b"})
    assert event["abandoned"] is False
    position, now = Position(state, table), 12_000
    while not position.finished:
        assert table_of(position).due(tc) is None  # only bots: nobody is ever timed out
        now += 1_000
        position = play(position, tc, now)
    result = position.result() or {}
    engine = position.state.result()
    assert engine is not None
    assert result == {**engine.to_json(), "detail": {**engine.detail, "taken_over": [0]}}
    assert result["detail"]["reason"] == engine.detail["reason"]
    with pytest.raises(GameOver):
        step(position, tc, Step(0, "take_seat", now))


def test_a_player_takes_back_their_seat_and_their_time_runs_again() -> None:
    """`SEAT:take_seat` gives a seat a bot took over back to its player: a person's seat again,
    no bot in it, every running seat's time from the take-back on; the table event names the
    bot that held it. Only a seat a bot holds may be taken back, not once the game is over."""
    position = play(start("solo", 0, time_control=SOLO), SOLO, 1_000)
    (seat,) = position.state.public_to_act()
    taken = step(position, SOLO, Step(seat, "timeout", 45_000, "bot-greedy-1"))
    moved = play(taken, SOLO, 47_000)  # the bot plays the seat once
    back = step(moved, SOLO, Step(seat, "take_seat", 50_000))
    table = table_of(back)
    assert (back.state, back.events) == (moved.state, [])
    assert back.table_event == {"kind": "seat_taken_back", "seat": seat, "bot": "bot-greedy-1"}
    assert (table.replaced, table.people) == ({}, (True,) * 4)
    assert (table.since_ms, table.running) == (50_000, back.state.public_to_act())
    assert table.due(SOLO) == Due(80_000, "timeout", back.state.public_to_act()[0])
    assert table.holders(["ann", "bob", "cy", "di"]) == ["ann", "bob", "cy", "di"]
    with pytest.raises(IllegalMove, match=f"no bot plays seat {seat}"):
        step(back, SOLO, Step(seat, "take_seat", 51_000))
    with pytest.raises(IllegalMove, match="no bot plays seat"):
        step(position, SOLO, Step(seat, "take_seat", 2_000))
    resigned = step(moved, SOLO, Step((seat + 1) % 4, "resign", 48_000))
    assert (resigned.result() or {})["detail"]["taken_over"] == [seat]
    with pytest.raises(GameOver):
        step(resigned, SOLO, Step(seat, "take_seat", 49_000))
    counted = step(back, SOLO, Step(seat, "resign", 52_000)).result() or {}
    assert "taken_over" not in counted["detail"]


def test_a_seat_whose_chess_clock_is_empty_is_taken_back_only_once_it_earned_time() -> None:
    """A chess clock that ran out stays at 0 while its bot thinks; the bot's increments give it
    time again: only then may its player take the seat back (else they would time out at
    once)."""
    tc = TimeControl(clock_seconds=10, increment_seconds=3, on_timeout="bot")
    position = play(start("esoloe", 1, time_control=tc), tc, 1_000)  # seat 1's clock runs
    taken = step(position, tc, Step(1, "timeout", 12_000, "bot-random-1"))
    assert table_of(taken).remaining_ms == (12_000, 0)
    with pytest.raises(IllegalMove, match="no time left"):
        step(taken, tc, Step(1, "take_seat", 13_000))
    moved = play(taken, tc, 13_000)  # the bot's move: 1 s charged (none left), 3 s earned
    assert table_of(moved).remaining_ms == (12_000, 3_000)
    back = step(moved, tc, Step(1, "take_seat", 14_000))  # seat 0's clock ran 1 s meanwhile
    assert table_of(back).remaining_ms == (11_000, 3_000)
    assert table_of(back).people == (True, True)


def test_an_abort_ends_the_game_without_a_result() -> None:
    """An abort ends the game with no winners; the engine's state is untouched, no events."""
    tc = games.get("esoloe").time_control
    position = start("esoloe", 1, time_control=tc, time_ms=1_000)
    assert table_of(position).due(tc) == Due(121_000, "abort")
    aborted = step(position, tc, Step(-1, "abort", 125_000))
    table = table_of(aborted)
    assert (aborted.state, aborted.events) == (position.state, [])
    assert aborted.table_event == {"kind": "aborted", "deadline": 121_000}
    assert (table.ended, table.running, table.since_ms) == ("aborted", (), 125_000)
    assert aborted.result() == {"winners": [], "scores": {}, "detail": {"reason": "aborted"}}
    assert aborted.finished
    assert (table.abort_at(tc), table.due(tc), table.deadlines(tc)) == (None, None, {})
    assert_nothing_steps(aborted, tc)


# -- refusals ---------------------------------------------------------------------------------


def test_a_platform_step_that_is_not_due_is_refused() -> None:
    """A timeout or an abort is applied only when it is exactly what is due: the due seat's
    timeout; the abort before a person moved; nothing untimed or once the engine ended."""
    tc = games.get("esoloe").time_control
    fresh = start("esoloe", 1, time_control=tc)
    with pytest.raises(IllegalMove, match=r"a timeout of seat 0 .*\(the abort\)"):
        step(fresh, tc, Step(0, "timeout"))
    moved = play(fresh, tc, 1_000)
    with pytest.raises(IllegalMove, match=r"a timeout of seat 0 .*\(a timeout of seat 1\)"):
        step(moved, tc, Step(0, "timeout"))
    with pytest.raises(IllegalMove, match=r"an abort .*\(a timeout of seat 1\)"):
        step(moved, tc, Step(-1, "abort"))
    untimed = start("esoloe", 1, time_control=UNTIMED)
    with pytest.raises(IllegalMove, match=r"\(nothing\)"):
        step(untimed, UNTIMED, Step(0, "timeout"))
    solace = games.get("solace").time_control  # abort only: once started, nothing is due
    patience = play(start("solace", 1, time_control=solace), solace, 1_000)
    with pytest.raises(IllegalMove, match=r"\(nothing\)"):
        step(patience, solace, Step(0, "timeout"))
    # A game its engine ended (a bot resigned before any person moved) is never aborted.
    bot_first = start("esoloe", 1, time_control=tc, people=[False, True])
    resigned = step(bot_first, tc, Step(0, "resign", 5_000))
    with pytest.raises(IllegalMove, match=r"\(nothing\)"):
        step(resigned, tc, Step(-1, "abort", 130_000))


def test_a_step_leaves_the_position_it_was_given_as_it_was() -> None:
    """Positions are values: a refused or an accepted step leaves the given one as it was, and a
    step is deterministic."""
    tc = TimeControl(move_seconds=20, clock_seconds=60, increment_seconds=2)
    position = play(start("esoloe", 1, time_control=tc), tc, 1_000)
    before = snapshot(position)
    for refused in (Step(1, "z99", 2_000), Step(0, "c13", 2_000), Step(0, "timeout", 2_000)):
        with pytest.raises(GameError):
            step(position, tc, refused)
        assert snapshot(position) == before
    assert snapshot(play(position, tc, 3_000)) == snapshot(play(position, tc, 3_000))
    step(position, tc, Step(1, "timeout", 30_000))
    assert snapshot(position) == before


def test_solo_jump_ins_are_never_timed() -> None:
    """Time runs for State.public_to_act only: a seat that could jump in is never waited on,
    and a jump-in earns no increment while the seat to move keeps paying."""
    tc = TimeControl(move_seconds=30, clock_seconds=600, increment_seconds=5, on_timeout="bot")
    found = 0
    for seed in range(12):
        position, now = start("solo", seed, time_control=tc), 0
        for _ in range(40):
            state, table = position.state, table_of(position)
            if position.finished:
                break
            now += 1_000
            if table.started:
                assert table.running == state.public_to_act()
            jumpers = sorted(set(state.to_act()) - set(state.public_to_act()))
            if jumpers and table.started:
                found += 1
                (current,) = state.public_to_act()
                assert table.due(tc) == Due(table.since_ms + 30_000, "timeout", current)
                remaining = table.remaining_ms
                assert remaining is not None
                jumped = table_of(play(position, tc, now, jumpers[0]))
                assert jumped.remaining_ms is not None
                assert jumped.remaining_ms[jumpers[0]] == remaining[jumpers[0]]
                assert jumped.remaining_ms[current] == remaining[current] - 1_000
            position = play(position, tc, now)
    assert found >= 5


def test_table_json_round_trips() -> None:
    """A table survives JSON, with takeovers, endings, with and without clocks; the seats bots
    took over are written in seat order."""
    timed = Table(1, 2, (1, 2), (0, 500, 70_000), (True, False, False), True, {2: "b2", 1: "b1"})
    tables = [
        Table.new(TimeControl(abort_seconds=60), [True], (0,), 5),
        timed,
        replace(timed, remaining_ms=None, people=(False,) * 3, ended="abandoned"),
        replace(timed, running=(), forfeited=0),
        replace(timed, replaced={}, running=(), ended="aborted"),
    ]
    for table in tables:
        assert roundtrip(table) == table
    assert list(timed.to_json()["replaced"].items()) == [("1", "b1"), ("2", "b2")]


def test_replay_and_its_seat_moves() -> None:
    """The replay command applies `SEAT:timeout` with the game's default time control (refused
    untimed); `SEAT:MOVE` and `abort` parse, anything else is a ValueError."""
    report = replay("esoloe", [(0, "c12"), (1, "timeout")])
    assert (report["applied"], report["error"], report["finished"]) == (2, None, True)
    assert report["result"] == {
        "winners": [0], "scores": {}, "detail": {"reason": "timeout", "seat": 1},
    }  # fmt: skip
    untimed = replay("esoloe", [(0, "c12"), (1, "timeout")], time_control=UNTIMED)
    assert (untimed["applied"], untimed["error"]["reason"]) == (1, "ILLEGAL_MOVE")
    assert PLATFORM_MOVES == ("timeout", "abort", "stop_game", "take_seat")
    assert parse_seat_move("1:timeout") == (1, "timeout")
    assert parse_seat_move("1:take_seat") == (1, "take_seat")
    bot = TimeControl(move_seconds=10, on_timeout="bot")
    back = replay("esoloe", [(0, "c12"), (1, "timeout"), (1, "take_seat")], time_control=bot)
    assert (back["applied"], back["error"], "taken_over" in back) == (3, None, False)
    assert parse_seat_move(" abort ") == (-1, "abort")
    assert parse_seat_move("stop_game") == (-1, "stop_game")
    assert parse_seat_move("2:play W4:b") == (2, "play W4:b")
    for bad in ("timeout", "c12", "x:c12", ":c12", "-1:c12", ""):
        with pytest.raises(ValueError, match="SEAT:MOVE"):
            parse_seat_move(bad)


def test_a_stop_ends_a_game_of_bots_without_a_result_timed_or_not() -> None:
    """A stop ends the game at once, whoever's turn it is: no winner, reason
    "stopped_by_sponsor", the table event "stopped"; an untimed game gets a table only to say
    so. Nothing steps after it, and a finished game cannot be stopped."""
    bots = TimeControl(move_seconds=30, abort_seconds=120)
    for tc in (UNTIMED, bots):
        position = start("esoloe", 3, time_control=tc, people=[False, False], time_ms=1_000)
        position = play(position, tc, 2_000)
        stopped = step(position, tc, Step(-1, "stop_game", 3_000))
        assert stopped.finished
        assert stopped.result() == {
            "winners": [], "scores": {}, "detail": {"reason": "stopped_by_sponsor"},
        }  # fmt: skip
        assert (stopped.events, stopped.table_event) == ([], {"kind": "stopped"})
        assert table_of(stopped).running == ()
        assert table_of(stopped).due(tc) is None
        assert_nothing_steps(stopped, tc)
        with pytest.raises(GameOver, match="stopped by sponsor"):
            step(stopped, tc, Step(-1, "stop_game", 4_000))
    resigned = step(start("esoloe", 3), UNTIMED, Step(0, "resign", 1))
    with pytest.raises(GameOver, match="nothing left to stop"):
        step(resigned, UNTIMED, Step(-1, "stop_game", 2))
    assert replay("esoloe", [(0, "c12"), (-1, "stop_game")])["result"]["winners"] == []


# -- properties -------------------------------------------------------------------------------

CONTROLS = st.builds(
    TimeControl,
    st.sampled_from((0, 30)),
    st.sampled_from((0, 60)),
    st.sampled_from((0, 5)),
    st.sampled_from(OUTCOMES),
    st.sampled_from(games.LEVELS),
    st.sampled_from((0, 120)),
)


@settings(max_examples=100)
@given(CONTROLS, CONTROLS)
def test_key_and_json_agree_with_equality(a: TimeControl, b: TimeControl) -> None:
    """Keys are equal exactly when the controls are; JSON gives the same control back."""
    assert (a.key() == b.key()) == (a == b)
    assert TimeControl.from_json(json.loads(json.dumps(a.to_json()))) == a


DELAYS = st.integers(0, 3_000) | st.sampled_from((9_000, 25_000, 65_000)) | st.integers(0, 70_000)
"""Time between two steps: quick moves, waits past a limit, an abort or a clock, and anything."""


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_random_timed_games_count_every_millisecond(data: st.DataObject) -> None:
    """Random controls, moves at random times, every timeout and abort applied (late) once due:
    each seat's clock is its start less the time it was waited on (up to the deadline for a
    timeout; never below 0) plus its increments; the platform's ending is final."""
    game = data.draw(st.sampled_from(("esoloe", "zoxso", "solo")))
    move_s = data.draw(st.sampled_from((0, 3, 30)))
    clock_s = data.draw(st.sampled_from((0, 10, 60) if move_s else (10, 60)))
    tc = TimeControl(
        move_seconds=move_s,
        clock_seconds=clock_s,
        increment_seconds=data.draw(st.sampled_from((0, 2))) if clock_s else 0,
        on_timeout=data.draw(st.sampled_from(games.get(game).timeouts)),
        abort_seconds=data.draw(st.sampled_from((0, 20))),
    )
    tc.check(game, games.get(game).timeouts, games.LEVELS)
    n = data.draw(st.integers(2, 4)) if game == "solo" else 2
    people = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    options = {"players": n} if game == "solo" else None
    position = start(game, data.draw(st.integers(0, 99)), options, time_control=tc, people=people)
    spent, gained, clock = [0] * n, [0] * n, clock_s * 1000  # the model
    started = not (tc.abort_seconds and any(people))
    running = position.state.public_to_act() if started else ()
    since = now = 0

    def left(seat: int) -> int:
        return clock - spent[seat] + gained[seat]

    def charge(until: int) -> None:
        for seat in running:
            spent[seat] += min(left(seat), max(0, until - since))

    for _ in range(60):
        table = table_of(position)
        assert (table.running, table.since_ms, table.started) == (running, since, started)
        assert table.people == tuple(people)
        expected = tuple(left(seat) for seat in range(n)) if clock else None
        assert table.remaining_ms == expected
        assert min(table.remaining_ms or [0]) >= 0
        assert roundtrip(table) == table
        if table.over:
            assert_nothing_steps(position, tc)
            break
        if position.finished:
            break
        due = table.due(tc)
        for seat in range(n):
            if due is None or due.seat != seat:
                with pytest.raises(IllegalMove):
                    step(position, tc, Step(seat, "timeout", now))
        now += data.draw(DELAYS)
        before, given_position = snapshot(position), position
        if due is not None and now >= due.at_ms:
            seat = -1 if due.seat is None else due.seat
            ending: tuple[str | None, int | None]
            if due.kind == "timeout":
                assert (people[seat], seat in running) == (True, True)
                limits = [tc.move_seconds * 1000] if tc.move_seconds else []
                assert due.at_ms == since + min([*limits, left(seat)] if clock else limits)
                charge(due.at_ms)
            else:
                assert (started, due.at_ms) == (False, tc.abort_seconds * 1000)
            position = step(position, tc, Step(seat, due.kind, now, "bot-x"))
            if due.kind == "abort":
                running, ending = (), ("aborted", None)
            elif tc.on_timeout == "forfeit":
                running, ending = (), (None, seat)
                assert (position.result() or {})["winners"] == [1 - seat]
            else:
                people[seat] = False
                running = position.state.public_to_act()
                ending = (None, None)  # a takeover never ends the game
            assert (table_of(position).ended, table_of(position).forfeited) == ending
        elif table.replaced and data.draw(st.integers(0, 3)) == 0:
            seat = data.draw(st.sampled_from(sorted(table.replaced)))
            waited = min(left(seat), max(0, now - since)) if seat in running else 0
            if clock and left(seat) - waited == 0:  # it would time out at once: refused
                with pytest.raises(IllegalMove, match="no time left"):
                    step(position, tc, Step(seat, "take_seat", now))
                continue
            charge(now)
            position = step(position, tc, Step(seat, "take_seat", now))
            people[seat] = True
            running = position.state.public_to_act()
            assert table_of(position).replaced == {
                s: bot for s, bot in table.replaced.items() if s != seat
            }
        else:
            state = position.state
            acting = state.to_act()
            jumpers = [s for s in acting if s not in state.public_to_act()] or acting
            seat = data.draw(st.sampled_from(acting) | st.sampled_from(jumpers))
            resign = data.draw(st.integers(0, 60)) == 0
            move = data.draw(st.sampled_from(["resign"] if resign else state.legal_moves(seat)))
            position = step(position, tc, Step(seat, move, now))
            if started:
                charge(now)
                if seat in running:
                    gained[seat] += tc.increment_seconds * 1000
            started = started or people[seat]
            running = position.state.public_to_act() if started else ()
        since = now
        assert snapshot(given_position) == before


def test_a_time_control_with_values_of_the_wrong_type_is_refused_as_such() -> None:
    """Stored or JSON data of the wrong type is a BadTimeControl, never another error."""
    for obj in ({"bot_level": 5}, {"on_timeout": ["bot"]}, {"move_seconds": "5"}):
        with pytest.raises(BadTimeControl):
            TimeControl.from_json(obj).check("esoloe", OUTCOMES, games.LEVELS)
