"""What happened, in words: who sits where, each move's events as sentences, and how a game ended.

Every function reads only what the gateway sent (a GameStatus, a Watch message's envelope and
events), for one viewer: `me` is the viewer's seat, -1 for a spectator. The words are the game's
own (its board, `games/<game>/board.py`); this module adds what every game shares: the
`#version` of each line, the opening, and what to say when a game's board has no words for an
event or a result.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from client.boards import board_of
from games.board import result_detail, verb, winner_names, won
from tabletop.common.v1 import common_pb2
from wire.players import level_of


def actor_name(game: str, status: common_pb2.GameStatus, seat: int, me: int) -> str:
    """How a sentence names the seat that acted (by name; with its side in ZoxSo, where the
    board shows sides)."""
    return board_of(game).actor_name(status, seat, me)


def seat_label(game: str, seat: int) -> str:
    """`seat 0 (Dark)`, `seat 1 (back)`, `seat 3`."""
    return board_of(game).seat_label(seat)


def actor_names(game: str, status: common_pb2.GameStatus, me: int) -> list[str]:
    """Every seat's `actor_name`, seat 0 first."""
    return [actor_name(game, status, seat, me) for seat in range(len(status.seats))]


def describe_table_event(event: common_pb2.TableEvent, names: Sequence[str]) -> str:
    """What the platform did instead of a move (a timeout, an abort, a stop), as a sentence;
    `names` are the seats' names before it (a bot that took a seat over has its own)."""
    if event.kind == common_pb2.TableEvent.KIND_ABORTED:
        return "Nobody moved in time: the game is aborted (no result, nobody loses)."
    if event.kind == common_pb2.TableEvent.KIND_STOPPED:
        return "The player watching these bots stopped the game (no result, nobody loses)."
    seat = event.seat
    who = names[seat] if 0 <= seat < len(names) else f"seat {seat}"
    if event.kind == common_pb2.TableEvent.KIND_SEAT_TAKEN_BACK:
        return f"{who} {verb(who, 'take', 'takes')} the seat back from the bot."
    if event.outcome != common_pb2.TIMEOUT_BOT:
        return f"{who} ran out of time and {verb(who, 'forfeit', 'forfeits')}."
    level = level_of(event.bot_player_id)
    bot = f"a bot ({level})" if level else "a bot"
    whose = "your" if who == "you" else "the"
    text = f"{who} ran out of time; {bot} plays {whose} seat from now on"
    if event.abandoned:
        text += "; nobody is left at the table: the game ends without a result"
    return text + "."


def describe_events(game: str, update: Any, me: int) -> list[str]:
    """A Watch message's events as sentences, for the viewer at seat `me`."""
    try:
        return board_of(game).events(update, me)
    except (KeyError, IndexError, ValueError, AttributeError):  # a newer server's event
        return []


def describe_update(
    game: str, update: Any, me: int, before: common_pb2.GameStatus | None = None
) -> str:
    """A Watch message as one line: `#version` then what happened, in sentences. `before`: the
    status before it, which names a seat a bot took over as it was (the message's own status
    names the bot)."""
    envelope = update.envelope
    if envelope.HasField("table_event"):
        event = envelope.table_event
        back = event.kind == common_pb2.TableEvent.KIND_SEAT_TAKEN_BACK  # named as after it
        names = actor_names(game, update.status if back else before or update.status, me)
        taken = event.outcome == common_pb2.TIMEOUT_BOT and 0 <= event.seat < len(names)
        if before is None and taken and event.seat != me:
            names[event.seat] = seat_label(game, event.seat)  # not the bot's name
        return f"#{envelope.version} " + describe_table_event(event, names)
    sentences = describe_events(game, update, me)
    # The creation: actor unset (or the former -1, from a server that still sends it).
    if not envelope.HasField("actor") or envelope.actor < 0:
        sentences.insert(0, "the game begins")
    elif not sentences:
        who = actor_name(game, update.status, envelope.actor, me)
        sentences.append(f"{who} played {envelope.move}")
    return f"#{envelope.version} " + "; ".join(sentences)


def describe_result(
    status: common_pb2.GameStatus, me: int, final_events: Sequence[Any] = ()
) -> str:
    """How a finished game ended, in words, from the viewer's side: "you won: 4 cubes of your
    colour in a row in the front view", "Alice wins with 212 points; you 180".

    `final_events` are the last move's events where the viewer saw them (they tell, e.g., which
    e-SOLO-e lines won); without them the result's detail is enough. A result the game's board
    cannot read (a newer server's) is said by its winners only."""
    ended = _platform_ending(status, me)
    if ended is not None:
        return ended
    try:
        return board_of(status.game).result(status, me, final_events)
    except (KeyError, IndexError, ValueError, TypeError, AttributeError):
        winners = winner_names(status, me)
        return won(winners) if winners else "a draw"


def short_result(status: common_pb2.GameStatus, me: int) -> str:
    """A finished game's outcome in a few words, for lists: `you won`, `strong bot wins`."""
    ended = _platform_ending(status, me)
    if ended is not None:
        return ended.split(":")[0]
    return board_of(status.game).short_result(status, me)


def _platform_ending(status: common_pb2.GameStatus, me: int) -> str | None:
    """How a game the platform ended (a timeout, an abort) ended, in words: the same for every
    game (None: the game's own rules ended it)."""
    detail = result_detail(status)
    reason = detail.get("reason")
    if reason == "aborted":
        return "no result: nobody moved in time, so the game was aborted (nobody loses)"
    if reason == "abandoned":
        return "no result: nobody is left at the table (bots took over every seat on time)"
    if reason == "stopped_by_sponsor":
        return "no result: stopped by the player watching the bots"
    seat = detail.get("seat")
    if reason != "timeout" or not isinstance(seat, (int, float)):
        return None
    who = actor_name(status.game, status, int(seat), me)
    winners = winner_names(status, me)
    text = won(winners) if winners else f"{who} {verb(who, 'lose', 'loses')}"
    return f"{text} on time: {who} ran out of time"
