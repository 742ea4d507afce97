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
from games.board import winner_names, won
from tabletop.common.v1 import common_pb2


def actor_name(game: str, status: common_pb2.GameStatus, seat: int, me: int) -> str:
    """How a sentence names the seat that acted (by name; with its side in ZoxSo, where the
    board shows sides)."""
    return board_of(game).actor_name(status, seat, me)


def seat_label(game: str, seat: int) -> str:
    """`seat 0 (Dark)`, `seat 1 (back)`, `seat 3`."""
    return board_of(game).seat_label(seat)


def describe_events(game: str, update: Any, me: int) -> list[str]:
    """A Watch message's events as sentences, for the viewer at seat `me`."""
    try:
        return board_of(game).events(update, me)
    except (KeyError, IndexError, ValueError, AttributeError):  # a newer server's event
        return []


def describe_update(game: str, update: Any, me: int) -> str:
    """A Watch message as one line: `#version` then what happened, in sentences."""
    envelope = update.envelope
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
    try:
        return board_of(status.game).result(status, me, final_events)
    except (KeyError, IndexError, ValueError, TypeError, AttributeError):
        winners = winner_names(status, me)
        return won(winners) if winners else "a draw"


def short_result(status: common_pb2.GameStatus, me: int) -> str:
    """A finished game's outcome in a few words, for lists: `you won`, `strong bot wins`."""
    return board_of(status.game).short_result(status, me)
