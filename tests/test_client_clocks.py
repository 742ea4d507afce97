"""The terminal client's clocks without a server: durations, the clock line (a chess clock, a
per-move limit, an abort pending, an untimed game) counted down with a made-up time, the
sentences of timeouts and aborts, the time-control flags of `tabletop play`, and what the table
does on a late move, a seat taken over by a bot and little time left."""

from __future__ import annotations

import asyncio
import io
from collections.abc import Sequence
from typing import Any

import pytest
from google.protobuf.timestamp_pb2 import Timestamp
from rich.console import Console

import games
from client.cli import main
from client.clocks import clock_line, format_duration, hurry_at, parse_clock, time_control
from client.narrate import describe_result, describe_table_event, describe_update, short_result
from client.play import Table, now_ms
from tabletop.common.v1 import common_pb2
from tabletop.lobby.v1 import lobby_pb2
from tests.test_client_input import ME, FakeGame, FakeSession, _status
from wire.errors import ApiError

NOW = 1_700_000_000_000
TIMEOUT = common_pb2.TableEvent.KIND_TIMEOUT
ABORTED = common_pb2.TableEvent.KIND_ABORTED


def stamp(ms: int) -> Timestamp:
    found = Timestamp()
    found.FromMilliseconds(ms)
    return found


def clock(
    seat: int, remaining: int | None = None, *, since: int = NOW, deadline: int | None = None
) -> common_pb2.Clock:
    """A seat's clock; it runs when it has a deadline."""
    found = common_pb2.Clock(seat=seat, remaining_ms=remaining, since=stamp(since))
    if deadline is not None:
        found.running = True
        found.deadline.CopyFrom(stamp(deadline))
    return found


def timed_status(
    tc: common_pb2.TimeControl | None,
    clocks: Sequence[common_pb2.Clock] = (),
    abort_at: int | None = None,
) -> common_pb2.GameStatus:
    status = common_pb2.GameStatus(
        game="esoloe",
        game_id="esoloe-0",
        seats=[common_pb2.Seat(index=0, name="Alice"), common_pb2.Seat(index=1, name="Bob")],
        clocks=clocks,
    )
    if tc is not None:
        status.time_control.CopyFrom(tc)
    if abort_at is not None:
        status.abort_at.CopyFrom(stamp(abort_at))
    return status


def five_minutes(**fields: Any) -> common_pb2.TimeControl:
    return common_pb2.TimeControl(clock_seconds=300, increment_seconds=5, **fields)


# ---- durations


@pytest.mark.parametrize(
    ("ms", "text"),
    [
        (299_999, "4:59"),
        (300_000, "5:00"),
        (10_000, "0:10"),
        (9_999, "0:09.9"),
        (7_300, "0:07.3"),
        (0, "0:00.0"),
        (-5_000, "0:00.0"),
        (3_599_999, "59:59"),
        (3_600_000, "1:00:00"),
        (3_723_000, "1:02:03"),
    ],
)
def test_durations_read_like_a_clock(ms: int, text: str) -> None:
    assert format_duration(ms) == text


# ---- the clock line


def test_a_chess_clock_counts_the_running_seat_down_from_since() -> None:
    status = timed_status(
        five_minutes(move_seconds=300),
        [clock(0, 300_000, since=NOW - 28_000, deadline=NOW + 245_000), clock(1, 300_000)],
    )
    assert clock_line(status, -1, NOW) == "clocks: Alice 4:32 ▶ (move by 4:05)  ·  Bob 5:00"
    assert clock_line(status, 1, NOW) == "clocks: Alice 4:32 ▶ (move by 4:05)  ·  you 5:00"
    later = clock_line(status, -1, NOW + 60_000, ["Ann", "Ben"])
    assert later == "clocks: Ann 3:32 ▶ (move by 3:05)  ·  Ben 5:00"


def test_a_clock_never_shows_less_than_nothing() -> None:
    status = timed_status(
        five_minutes(), [clock(0, 8_000, since=NOW, deadline=NOW + 8_000), clock(1, 1_000)]
    )
    assert clock_line(status, 0, NOW + 900) == "clocks: you 0:07.1 ▶  ·  Bob 0:01.0"
    assert clock_line(status, 0, NOW + 3_600_000) == "clocks: you 0:00.0 ▶  ·  Bob 0:01.0"


def test_a_per_move_limit_shows_the_time_to_the_running_seats_deadline() -> None:
    status = timed_status(
        common_pb2.TimeControl(move_seconds=30), [clock(0), clock(1, deadline=NOW + 23_400)]
    )
    assert clock_line(status, 0, NOW) == "clocks: 30 s a move  ·  Bob 0:23 ▶"
    assert clock_line(status, 0, NOW + 20_000) == "clocks: 30 s a move  ·  Bob 0:03.4 ▶"


def test_a_game_nobody_started_says_when_it_is_aborted() -> None:
    status = timed_status(
        five_minutes(abort_seconds=120), [clock(0, 300_000), clock(1, 300_000)], NOW + 105_000
    )
    assert clock_line(status, -1, NOW) == (
        "clocks: Alice 5:00  ·  Bob 5:00 "
        "(they start at a person's first move · aborted in 1:45 if no person moves)"
    )
    # A bot's move starts nothing: the one person at the table is told it is theirs to start.
    status.seats[1].bot = True
    assert clock_line(status, -1, NOW) == (
        "clocks: Alice 5:00  ·  Bob 5:00 "
        "(they start at a person's first move, not a bot's · aborted in 1:45 if no person moves)"
    )
    assert clock_line(status, 0, NOW) == (
        "clocks: you 5:00  ·  Bob 5:00 (they start at your first move · aborted in 1:45 if you "
        "make none)"
    )
    untimed = timed_status(common_pb2.TimeControl(abort_seconds=120), abort_at=NOW + 105_000)
    assert clock_line(untimed, -1, NOW) == "clocks: none (aborted in 1:45 if no person moves)"
    untimed.finished = True
    assert clock_line(untimed, -1, NOW) == ""


def test_an_untimed_game_has_no_clock_line() -> None:
    assert clock_line(timed_status(None), 0, NOW) == ""
    assert clock_line(timed_status(common_pb2.TimeControl()), 0, NOW) == ""


def test_a_short_turn_is_told_to_hurry_at_a_quarter_of_it() -> None:
    def warned(tc: common_pb2.TimeControl, left: int) -> int | None:
        status = timed_status(tc, [clock(0, deadline=NOW + left), clock(1)])
        return hurry_at(status, 0)

    assert warned(common_pb2.TimeControl(move_seconds=8), 8_000) == NOW + 6_000
    assert warned(common_pb2.TimeControl(move_seconds=30), 30_000) == NOW + 22_500
    assert warned(five_minutes(), 300_000) == NOW + 290_000  # 10 s before
    assert warned(five_minutes(), 4_000) == NOW - 6_000  # little left on the clock: at once
    assert warned(five_minutes(move_seconds=20), 20_000) == NOW + 15_000
    assert hurry_at(timed_status(five_minutes(), [clock(0, 300_000)]), 0) is None  # not running


# ---- what the platform did, in words


def timeout(
    seat: int, outcome: common_pb2.Timeout.ValueType, *, abandoned: bool = False
) -> common_pb2.TableEvent:
    bot = "bot-greedy-0123456789ab" if outcome == common_pb2.TIMEOUT_BOT else ""
    return common_pb2.TableEvent(
        kind=TIMEOUT, seat=seat, outcome=outcome, bot_player_id=bot, abandoned=abandoned
    )


def test_timeouts_and_aborts_read_as_sentences() -> None:
    names = ["you", "Bob"]
    forfeit, bot = common_pb2.TIMEOUT_FORFEIT, common_pb2.TIMEOUT_BOT
    assert describe_table_event(timeout(1, forfeit), names) == "Bob ran out of time and forfeits."
    assert describe_table_event(timeout(0, forfeit), names) == "you ran out of time and forfeit."
    assert describe_table_event(timeout(1, bot), names) == (
        "Bob ran out of time; a bot (greedy) plays the seat from now on."
    )
    assert describe_table_event(timeout(0, bot), names) == (
        "you ran out of time; a bot (greedy) plays your seat from now on."
    )
    assert describe_table_event(timeout(1, bot, abandoned=True), names) == (  # older games'
        "Bob ran out of time; a bot (greedy) plays the seat from now on; nobody is left at the "
        "table: the game ends without a result."
    )
    back = common_pb2.TableEvent(
        kind=common_pb2.TableEvent.KIND_SEAT_TAKEN_BACK, seat=1, bot_player_id="bot-greedy-01"
    )
    assert describe_table_event(back, names) == "Bob takes the seat back from the bot."
    back.seat = 0
    assert describe_table_event(back, names) == "you take the seat back from the bot."
    aborted = common_pb2.TableEvent(kind=ABORTED)
    assert describe_table_event(aborted, names) == (
        "Nobody moved in time: the game is aborted (no result, nobody loses)."
    )


def test_a_takeover_names_the_seat_as_it_was_before_the_bot() -> None:
    before = timed_status(five_minutes())
    after = timed_status(five_minutes())
    after.seats[1].name = "greedy bot"
    update = common_pb2.EventEnvelope(
        version=7, actor=1, move="timeout", table_event=timeout(1, common_pb2.TIMEOUT_BOT)
    )
    message = games.get("esoloe").adapter.watch_response(envelope=update, status=after)
    assert describe_update("esoloe", message, 0, before) == (
        "#7 Bob ran out of time; a bot (greedy) plays the seat from now on."
    )
    # Without the status before it (the first move shown), the seat is named by its label.
    assert describe_update("esoloe", message, 0).startswith("#7 seat 1 (")


def test_games_the_platform_ended_say_so_in_their_result() -> None:
    status = timed_status(five_minutes())
    status.finished = True
    status.result.winners.append(0)
    status.result.detail.update({"reason": "timeout", "seat": 1})
    assert describe_result(status, 0) == "you won on time: Bob ran out of time"
    assert short_result(status, 1) == "Alice wins on time"
    del status.result.winners[:]
    status.result.detail.update({"reason": "aborted"})
    assert describe_result(status, 0).startswith("no result: nobody moved in time")
    assert short_result(status, 0) == "no result"


# ---- the flags of `tabletop play`


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("5+3", (300, 3)),
        ("0.5+0", (30, 0)),
        (".5+2", (30, 2)),
        ("10", (600, 0)),
        ("90+0", (5400, 0)),
    ],
)
def test_a_clock_is_minutes_plus_increment_seconds(text: str, found: tuple[int, int]) -> None:
    assert parse_clock(text) == found


@pytest.mark.parametrize("text", ["", "5+", "5+x", "+3", "5m+3", "0+3", "1441+0", "5+3601"])
def test_a_bad_clock_is_refused_with_what_is_allowed(text: str) -> None:
    with pytest.raises(ValueError, match=r"clock|increment"):
        parse_clock(text)


def test_the_flags_make_exactly_the_time_control_they_say() -> None:
    assert time_control() is None  # the game's default
    untimed = time_control(untimed=True)
    assert untimed == common_pb2.TimeControl()
    message = lobby_pb2.PlayAgainstBotsRequest(time_control=untimed)
    assert message.HasField("time_control")  # sent: an untimed game, not the default
    assert time_control(clock=(300, 3), on_timeout="bot", level="strong") == (
        common_pb2.TimeControl(
            clock_seconds=300,
            increment_seconds=3,
            on_timeout=common_pb2.TIMEOUT_BOT,
            bot_level="strong",
        )
    )
    assert time_control(move_seconds=20, abort_seconds=60) == common_pb2.TimeControl(
        move_seconds=20, abort_seconds=60
    )
    assert time_control(untimed=True, abort_seconds=60) == common_pb2.TimeControl(abort_seconds=60)
    # The game's abort stays unless the game is untimed or the flags say otherwise.
    assert time_control(clock=(300, 3), default_abort=120) == common_pb2.TimeControl(
        clock_seconds=300, increment_seconds=3, abort_seconds=120
    )
    assert time_control(untimed=True, default_abort=120) == common_pb2.TimeControl()


@pytest.mark.parametrize(
    "flags",
    [
        {"untimed": True, "clock": (300, 0)},
        {"untimed": True, "on_timeout": "bot"},
        {"on_timeout": "bot"},
        {"level": "greedy"},
        {"move_seconds": 20, "on_timeout": "forfeit", "level": "strong"},
        {"move_seconds": 0},
        {"abort_seconds": 100_000},
    ],
)
def test_flags_that_do_not_go_together_are_refused(flags: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="--"):
        time_control(**flags)


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["play", "esoloe", "--clock", "5+x"], "argument --clock: '5+x' is not a clock"),
        (["play", "esoloe", "--on-timeout", "bot"], "need --clock or --move-time"),
        (["play", "esoloe", "--untimed", "--move-time", "9"], "--untimed takes no"),
        (["play", "--game", "esoloe-1f", "--clock", "5"], "a time control is for a new game"),
        (
            ["play", "solo", "--move-time", "20", "--on-timeout", "forfeit"],
            "a solo seat out of time cannot forfeit; --on-timeout may be: bot",
        ),
    ],
)
def test_tabletop_play_refuses_bad_time_flags_before_any_call(
    argv: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main([*argv, "--gateway", "127.0.0.1:1"])
    assert exit_.value.code == 2
    assert said in capsys.readouterr().err


# ---- at the table


class LateGame(FakeGame):
    """A fake game service of a timed game (a bot takes over a seat out of time) whose Play
    refuses with `reason`."""

    reason = "TIME_UP"

    async def GetView(self, request: Any, **call: Any) -> Any:
        seat = None if request.public else ME
        adapter = games.get(self.game).adapter
        return adapter.view_response(
            status=bot_timed(_status(self.game, self.state, self.version)),
            seat=seat,
            view=adapter.view(self.state.view(seat)),
        )

    async def Play(self, request: Any, **call: Any) -> Any:
        raise self._refuse(ApiError(self.reason, "refused"))


def table_of(fake: FakeGame) -> tuple[Table, io.StringIO]:
    out = io.StringIO()
    console = Console(file=out, highlight=False, markup=False, soft_wrap=True, width=100)
    return Table(FakeSession(fake), "esoloe", "esoloe-0", ME, console), out  # type: ignore[arg-type]


def bot_timed(status: common_pb2.GameStatus) -> common_pb2.GameStatus:
    status.time_control.CopyFrom(
        common_pb2.TimeControl(move_seconds=30, on_timeout=common_pb2.TIMEOUT_BOT)
    )
    return status


async def test_a_move_after_the_deadline_is_told_too_late() -> None:
    table, out = table_of(LateGame("esoloe", 0))
    await table._view()
    assert not await table.play("c12")
    assert out.getvalue().strip() == "Too late: your time ran out before the move arrived."


async def test_a_seat_taken_over_by_a_bot_watches_the_rest() -> None:
    fake = LateGame("esoloe", 0)
    fake.reason = "NOT_YOUR_SEAT"
    table, out = table_of(fake)
    await table._view()
    assert await table.command("c12")
    assert table.seat == -1
    assert "a bot plays your seat: you are watching it now" in out.getvalue()
    assert "to take your seat back, quit and `tabletop play --game esoloe-0`" in out.getvalue()
    await table.command("c12")  # no more moves
    assert "you are watching: 'c12' is not a spectator command" in out.getvalue()

    # The same, told by the Watch stream.
    fake = LateGame("esoloe", 0)
    table, out = table_of(fake)
    await table._view()
    status = bot_timed(_status("esoloe", fake.state, table.status.version + 1))
    envelope = common_pb2.EventEnvelope(
        version=status.version,
        actor=ME,
        move="timeout",
        table_event=timeout(ME, common_pb2.TIMEOUT_BOT),
    )
    await table._on_update(
        games.get("esoloe").adapter.watch_response(envelope=envelope, status=status)
    )
    said = out.getvalue()
    assert "you ran out of time; a bot (greedy) plays your seat from now on." in said
    assert "you are watching it now" in said
    assert table.seat == -1


async def test_the_clock_command_and_the_warning_when_little_time_is_left() -> None:
    table, out = table_of(FakeGame("esoloe", 0))
    await table._view()
    await table.command("clock")
    assert "this game is untimed" in out.getvalue()
    now = now_ms()
    status = common_pb2.GameStatus()
    status.CopyFrom(table.status)
    status.time_control.CopyFrom(common_pb2.TimeControl(move_seconds=30))
    status.clocks.extend([clock(ME, deadline=now + 5_000), clock(1)])
    table._learn(status)
    await table.command("CLOCK")
    assert "clocks: 30 s a move  ·  you 0:0" in out.getvalue()
    await asyncio.sleep(0.05)
    table._learn(status)  # the same turn: warned once
    await asyncio.sleep(0.05)
    assert out.getvalue().count("hurry: 0:0") == 1
