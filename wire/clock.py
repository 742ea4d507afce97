"""Time controls and clocks on the wire (tabletop.common.v1 TimeControl, Clock, TableEvent), a
table's jump-in window (the `jump_in_window_ms` option of a game played out of turn) and its
bots' pace (a CreateGame request's `bot_pace_ms`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from google.protobuf.timestamp_pb2 import Timestamp

from games.clock import TimeControl, check_bot_pace, check_jump_in_window
from tabletop.common.v1 import common_pb2

JUMP_IN_WINDOW = "jump_in_window_ms"
"""The option, in a game's Options message, that sets a table's jump-in window."""
DEAL_OF_THE_DAY = "deal_of_the_day"
BOT_PACE = "bot_pace_ms"
"""The field of a CreateGame request that sets a table's bot pace."""

TIMEOUTS = {"forfeit": common_pb2.TIMEOUT_FORFEIT, "bot": common_pb2.TIMEOUT_BOT}
"""The Timeout enum value of each outcome (games.clock.OUTCOMES)."""
_OUTCOMES: dict[int, str] = {value: name for name, value in TIMEOUTS.items()}


def _outcome(value: int, default: str) -> str:
    """The outcome a Timeout number asks for; a number the protos do not know goes on as a
    name no game has, which the time control's check refuses (INVALID_OPTIONS)."""
    if value == common_pb2.TIMEOUT_UNSPECIFIED:
        return default
    return _OUTCOMES.get(value, f"(Timeout {value})")


def time_control_of(message: common_pb2.TimeControl, default: TimeControl) -> TimeControl:
    """The time control a request asks for: `default` when the message is unset (the caller
    checks HasField); else exactly the message, with the default's outcome and bot level where
    the message leaves them out."""
    return TimeControl(
        move_seconds=message.move_seconds,
        clock_seconds=message.clock_seconds,
        increment_seconds=message.increment_seconds,
        on_timeout=_outcome(message.on_timeout, default.on_timeout),
        bot_level=message.bot_level or default.bot_level,
        abort_seconds=message.abort_seconds,
    )


def requested(request: Any, default: TimeControl) -> TimeControl:
    """The time control of a CreateGame, FindMatch or PlayAgainstBots request (a request type
    without the field, a game's that predates clocks, gets `default`)."""
    fields = request.DESCRIPTOR.fields_by_name
    if "time_control" not in fields or not request.HasField("time_control"):
        return default
    return time_control_of(request.time_control, default)


def jump_in_window(request: Any, default: int) -> int:
    """The jump-in window (ms) a CreateGame request asks for in its options: `default` when the
    option is unset (or the game has none). Raises BadTimeControl when it is out of bounds."""
    options = request.options
    if JUMP_IN_WINDOW not in options.DESCRIPTOR.fields_by_name or not options.HasField(
        JUMP_IN_WINDOW
    ):
        return default
    return check_jump_in_window(getattr(options, JUMP_IN_WINDOW))


def bot_pace(request: Any) -> int:
    """The bot pace (ms) a CreateGame request asks for: 0 when unset (or the game's request has
    no such field). Raises BadTimeControl when it is out of bounds."""
    if BOT_PACE not in request.DESCRIPTOR.fields_by_name or not request.HasField(BOT_PACE):
        return 0
    return check_bot_pace(getattr(request, BOT_PACE))


def deal_of_the_day(request: Any) -> bool:
    """Whether a CreateGame request asks for the deal of the day (a game that has one)."""
    options = request.options
    return DEAL_OF_THE_DAY in options.DESCRIPTOR.fields_by_name and bool(
        getattr(options, DEAL_OF_THE_DAY)
    )


def time_control_message(tc: TimeControl) -> common_pb2.TimeControl:
    return common_pb2.TimeControl(
        move_seconds=tc.move_seconds,
        clock_seconds=tc.clock_seconds,
        increment_seconds=tc.increment_seconds,
        on_timeout=TIMEOUTS[tc.on_timeout],
        bot_level=tc.bot_level,
        abort_seconds=tc.abort_seconds,
    )


def timestamp(ms: int) -> Timestamp:
    stamp = Timestamp()
    stamp.FromMilliseconds(ms)
    return stamp


def clocks(clock: Mapping[str, Any], seats: int) -> list[common_pb2.Clock]:
    """Each seat's Clock from a version's stored clock status (games.clock.Table.clock_json)."""
    remaining = clock["remaining"]
    deadlines = clock["deadlines"]
    running = set(clock["running"])
    found = []
    for seat in range(seats):
        message = common_pb2.Clock(
            seat=seat,
            remaining_ms=None if remaining is None else remaining[seat],
            running=seat in running,
            since=timestamp(clock["since"]),
        )
        if str(seat) in deadlines:
            message.deadline.CopyFrom(timestamp(deadlines[str(seat)]))
        found.append(message)
    return found


def table_event(event: Mapping[str, Any]) -> common_pb2.TableEvent:
    """The wire form of a timeout, an abort (games.clock.apply_due), a stop (games.replay.step)
    or a take-back (games.clock.take_back) as the log stores it."""
    if event["kind"] == "seat_taken_back":
        return common_pb2.TableEvent(
            kind=common_pb2.TableEvent.KIND_SEAT_TAKEN_BACK,
            seat=event["seat"],
            bot_player_id=event["bot"],
        )
    if event["kind"] == "aborted":
        return common_pb2.TableEvent(
            kind=common_pb2.TableEvent.KIND_ABORTED, deadline=timestamp(event["deadline"])
        )
    if event["kind"] == "stopped":
        return common_pb2.TableEvent(kind=common_pb2.TableEvent.KIND_STOPPED)
    return common_pb2.TableEvent(
        kind=common_pb2.TableEvent.KIND_TIMEOUT,
        seat=event["seat"],
        outcome=TIMEOUTS[event["outcome"]],
        bot_player_id=event["bot"],
        deadline=timestamp(event["deadline"]),
        abandoned=event["abandoned"],
    )
