"""What every game's `board.py` provides: how the terminal client shows the game and reads what
its player types (`BOARD`, a `Board`).

The client (`client/`) is generic: it finds a game's board with `games.get(game).part("board")`
and asks it everything that differs between games: the board drawn from a GetView reply, the
sentences of a Watch update's events, the result in words, how a typed line is read as a move.
Everything a board reads comes from the gateway (a GetView reply, a Watch update, a
GameStatus), for one viewer: `me` is the viewer's seat, -1 for a spectator. Seats are called by
the names their players logged in with ("random bot" for a bot), the viewer's own seat "you";
when two seats share a name, the seat number tells them apart.

`BaseBoard` holds the behaviour most games share (and a plain-text drawing of the view, for a
game that has no board of its own yet); a game's board subclasses it and overrides what differs.
Below it, the small text helpers the games' boards share. This module imports nothing of the
client, the services or the gateway: the client imports the games, never the reverse.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Protocol

from google.protobuf import json_format, text_format
from rich.console import RenderableType
from rich.text import Text

from tabletop.common.v1 import common_pb2

SEAT_STYLES = {0: "bold red", 1: "bold blue"}
"""The colours of the two sides of a two-player game (seat 0 red, seat 1 blue)."""


class Board(Protocol):
    """A game at the terminal: drawing it, telling it, reading typed moves for it."""

    # ---- drawing and naming

    def draw(self, reply: Any, me: int) -> RenderableType:
        """The board from a GetView reply (the game's GetViewResponse) for seat `me` (-1: a
        spectator's public view). Only what the reply holds is drawn."""
        ...

    def seat_label(self, seat: int) -> str:
        """A seat as the table's header names it: `seat 0 (Dark)`, `seat 3`."""
        ...

    def actor_name(self, status: common_pb2.GameStatus, seat: int, me: int) -> str:
        """How a sentence names the seat that acts: `you`, `Alice`, `Dark (you)`."""
        ...

    # ---- telling what happened

    def events(self, update: Any, me: int) -> list[str]:
        """One Watch update's events (the game's WatchResponse) as sentences, for seat `me`.
        Empty when the events say nothing (the client then says `<who> played <move>`)."""
        ...

    def result(
        self, status: common_pb2.GameStatus, me: int, final_events: Sequence[Any] = ()
    ) -> str:
        """How a finished game ended, from the viewer's side: `you won: ...`, `a draw: ...`.
        `final_events` are the last move's events where the viewer saw them."""
        ...

    def short_result(self, status: common_pb2.GameStatus, me: int) -> str:
        """A finished game's outcome in a few words, for lists: `you won`, `3 promoted towers`."""
        ...

    # ---- reading a typed move

    @property
    def case_rule(self) -> str:
        """What to tell a player whose line matches several legal moves but for case."""
        ...

    def read_move(self, text: str) -> str:
        """A typed line (not a command; spaces normalised) as a move: the game's shorthand
        expanded (Solo: a bare card `r5` is `play r5`)."""
        ...

    def canonical_case(self, move: str) -> str:
        """`move` in the case the game's notation writes it, where that case is never
        ambiguous (`C12` is `c12`); the move unchanged where case tells moves apart."""
        ...

    def did_you_mean(self, text: str) -> str | None:
        """A move `text` may be short for, to suggest when `text` is not notation (and the
        suggestion is); None: no suggestion."""
        ...

    def typed_problem(self, problem: str) -> str:
        """Why a typed line is not notation (the engine's MalformedMove message), as said to a
        player at the table: the engine speaks to programs, which must send the exact case,
        while the client forgives case where `canonical_case` does."""
        ...

    def move_note(self, move: str, legal: Sequence[str]) -> str:
        """A note on sending the legal `move`, e.g. a reminder of what it leaves out; "" for
        none."""
        ...

    def why_not(self, move: str, view: Any) -> str | None:
        """Why the well-formed `move` cannot be played, when the seat's own view (a GetView
        reply, or None) already shows it; None: let the server judge."""
        ...

    def not_your_turn(self, view: Any) -> str:
        """What a seat with no legal move may still do while others are to move ("" for
        nothing), from its view (a GetView reply)."""
        ...

    def confirm(self, move: str, view: Any) -> str:
        """The question to ask before sending the legal `move` when it ends the game by the
        player's own choice (as `resign` is asked), from the seat's view; "" to send it at
        once."""
        ...

    # ---- at the table

    @property
    def help_note(self) -> str:
        """The game's own input shorthand, said with the table's commands ("" for none)."""
        ...

    @property
    def moves_on_turn(self) -> bool:
        """True when `turn_note` wants the legal moves at the start of each turn (the client
        then asks for them)."""
        ...

    def turn_note(self, legal: Sequence[str]) -> str:
        """What to tell the seat when its turn begins, from its legal moves ("" for nothing)."""
        ...

    def offer(self, moves: Sequence[str]) -> list[str]:
        """What to say when a seat of a game played out of turn (`games.Game.out_of_turn`) may
        act while others are to move: its legal `moves` then, in lines."""
        ...

    def quick(self, moves: Sequence[str]) -> str | None:
        """The move the `j` key plays when the seat may act out of turn with these `moves` (a
        Solo jump-in: one keystroke, as a race needs); None: none."""
        ...

    @property
    def hotseat(self) -> bool:
        """True when people may share one terminal (`tabletop hotseat`): nothing is hidden, so
        the public view is every seat's view."""
        ...

    @property
    def watch_options(self) -> Mapping[str, Any]:
        """The options (as `--options` names them) of a game the client starts only to be
        watched (`tabletop watch GAME`), when none are given: a short game, since bots play it
        on, as one of the watcher's live games, until it ends."""
        ...


class BaseBoard:
    """What most games share; a game's board subclasses it and overrides what differs. Alone,
    it is the board of a game that has none of its own: the view as protobuf text, no
    sentences (the client says `<who> played <move>`), results from the winners."""

    case_rule = "the notation is case-sensitive; type the one you mean"
    help_note = ""
    moves_on_turn = False
    hotseat = False
    watch_options: ClassVar[Mapping[str, Any]] = {}
    draw_reasons: ClassVar[Mapping[str, str]] = {}
    """A draw's `reason` (the result's detail) -> why, in words."""

    def draw(self, reply: Any, me: int) -> RenderableType:
        return Text(text_format.MessageToString(reply.view, as_utf8=True).rstrip())

    def seat_label(self, seat: int) -> str:
        return f"seat {seat}"

    def actor_name(self, status: common_pb2.GameStatus, seat: int, me: int) -> str:
        return seat_name(status, seat, me)

    def events(self, update: Any, me: int) -> list[str]:
        return []

    def result(
        self, status: common_pb2.GameStatus, me: int, final_events: Sequence[Any] = ()
    ) -> str:
        """`you won: <how>` (`win_reason`), `Bob wins: you resigned`, `a draw: <why>`."""
        detail = result_detail(status)
        reason = str(detail.get("reason", ""))
        winners = winner_names(status, me)
        if not winners:
            why = self.draw_reasons.get(reason, reason.replace("_", " "))
            return f"a draw: {why}" if why else "a draw"
        text = won(winners)
        if reason == "resignation":
            loser = [i for i in range(len(status.seats)) if i not in status.result.winners]
            if loser:
                return f"{text}: {seat_name(status, loser[0], me)} resigned"
            return f"{text}: the other side resigned"
        how = self.win_reason(status, me, detail, final_events)
        return f"{text}: {how}" if how else text

    def win_reason(
        self,
        status: common_pb2.GameStatus,
        me: int,
        detail: dict[str, Any],
        final_events: Sequence[Any],
    ) -> str:
        """How the game was won (not by resignation), in words ("" to say only who won)."""
        return ""

    def short_result(self, status: common_pb2.GameStatus, me: int) -> str:
        winners = winner_names(status, me)
        return won(winners) if winners else "a draw"

    def read_move(self, text: str) -> str:
        return text

    def canonical_case(self, move: str) -> str:
        return move

    def did_you_mean(self, text: str) -> str | None:
        return None

    def typed_problem(self, problem: str) -> str:
        return problem

    def move_note(self, move: str, legal: Sequence[str]) -> str:
        return ""

    def why_not(self, move: str, view: Any) -> str | None:
        return None

    def not_your_turn(self, view: Any) -> str:
        return ""

    def confirm(self, move: str, view: Any) -> str:
        return ""

    def turn_note(self, legal: Sequence[str]) -> str:
        return ""

    def offer(self, moves: Sequence[str]) -> list[str]:
        return [f"you may act now: {', '.join(moves)}"] if moves else []

    def quick(self, moves: Sequence[str]) -> str | None:
        return None


# --------------------------------------------------------------------------------------------
# Names


def seat_names(status: common_pb2.GameStatus, me: int) -> list[str]:
    """What to call each seat: "you", the player's name, or "name (seat 2)" when names repeat."""
    raw = [seat.name or seat.player_id or f"seat {i}" for i, seat in enumerate(status.seats)]
    names = []
    for index, name in enumerate(raw):
        if index == me:
            names.append("you")
        elif sum(1 for i, other in enumerate(raw) if other == name and i != me) > 1:
            names.append(f"{name} (seat {index})")
        else:
            names.append(name)
    return names


def seat_name(status: common_pb2.GameStatus, seat: int, me: int) -> str:
    """One seat's name as `seat_names` gives it (`seat 7` for a seat the status does not list)."""
    names = seat_names(status, me)
    return names[seat] if 0 <= seat < len(names) else f"seat {seat}"


# --------------------------------------------------------------------------------------------
# Words


def verb(subject: str, base: str, third: str) -> str:
    """The verb for `subject`: `you win`, `Bob wins`."""
    return base if subject == "you" else third


def and_list(items: Sequence[str]) -> str:
    """`a`, `a and b`, `a, b and c`."""
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def number(value: Any) -> str:
    """A Struct number (always a float) as it was written: 3, not 3.0."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def plural(count: int, word: str) -> str:
    """`1 card`, `2 cards`."""
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


# --------------------------------------------------------------------------------------------
# Results


def result_detail(status: common_pb2.GameStatus) -> dict[str, Any]:
    """The result's detail as plain values (a Struct's numbers are floats)."""
    if not status.result.HasField("detail"):
        return {}
    detail: dict[str, Any] = json_format.MessageToDict(status.result.detail)
    return detail


def winner_names(status: common_pb2.GameStatus, me: int) -> list[str]:
    """The winners' names, as `seat_names` gives them."""
    return [seat_name(status, seat, me) for seat in status.result.winners]


def won(names: Sequence[str]) -> str:
    """`you won`, `Bob wins`, `Bob and you share the win`."""
    if len(names) > 1:
        return f"{and_list(names)} share the win"
    if names and names[0] == "you":
        return "you won"
    return f"{names[0]} wins" if names else "nobody wins"
