"""ZoxSo at the terminal: Pearl rows interleaved with Stone rows, the Wall and the Throne (Z1,
Z2); each move in words, each seat named with its side; the result; and ZoxSo's case-sensitive
notation (Pearls a1..h8, Stones A1..G7, pieces M, D, X).

Sides and pieces are also written as characters (`d`/`l` before `M`/`D`/`X`), so that the board
stays readable without colour; colour only repeats them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from games.board import SEAT_STYLES, BaseBoard, Board, seat_name
from games.zoxso import rules as zoxso
from tabletop.common.v1 import common_pb2
from tabletop.zoxso.v1 import zoxso_pb2

SIDES = ("Dark", "Light")
PIECES = {
    zoxso_pb2.PIECE_TYPE_MA: "Ma",
    zoxso_pb2.PIECE_TYPE_DAO: "Dao",
    zoxso_pb2.PIECE_TYPE_XING: "Xing",
}


def side_name(status: common_pb2.GameStatus, seat: int, me: int) -> str:
    """A seat with its side, `Dark (you)`, `Light (strong bot)`."""
    side = SIDES[seat] if 0 <= seat < 2 else f"seat {seat}"
    return f"{side} ({seat_name(status, seat, me)})"


# --------------------------------------------------------------------------------------------
# The board

_SIDE_LETTERS = "dl"
_TYPES = {
    zoxso_pb2.PIECE_TYPE_MA: "M",
    zoxso_pb2.PIECE_TYPE_DAO: "D",
    zoxso_pb2.PIECE_TYPE_XING: "X",
}
_STYLES = (
    (r"(?<![A-Za-z])d[MDX]", SEAT_STYLES[0]),
    (r"(?<![A-Za-z])l[MDX]", SEAT_STYLES[1]),
    (r"=+|\|", "yellow"),  # the Wall
    (r"\[|\]", "bold yellow"),  # the Throne
    (r"__|(?<=[\s=])[.+](?=[\s=]|$)", "dim"),  # empty squares
    (r"(?m)^ \d|(?<= )[A-G](?= |$)", "dim"),  # Stone rows and files
)


def _picture(view: zoxso_pb2.View) -> Text:
    """The board as `zoxso.picture` draws it (the rules document's drawing), coloured."""
    pearls = {square.name: _piece_code(square.piece) for square in view.pearls}
    stones = {square.name: _piece_code(square.piece) for square in view.stones}
    text = Text("\n".join(zoxso.picture(pearls, stones)))
    for pattern, style in _STYLES:
        text.highlight_regex(pattern, style=style)
    return text


def _piece_code(piece: zoxso_pb2.Piece) -> str:
    return f"{_SIDE_LETTERS[piece.seat]}{_TYPES[piece.type]}"


def draw(reply: zoxso_pb2.GetViewResponse, me: int) -> RenderableType:
    view = reply.view
    forces = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    for name in ("side", "in hand M/D/X", "on Pearls", "on Stones"):
        forces.add_column(name)
    for force in view.forces:
        side = SIDES[force.seat]
        forces.add_row(
            Text(f"{side}: {seat_name(reply.status, force.seat, me)}", SEAT_STYLES[force.seat]),
            *(
                f"{counts.ma}/{counts.dao}/{counts.xing}"
                for counts in (force.in_hand, force.on_pearls, force.on_stones)
            ),
        )
    turn = (
        f", {side_name(reply.status, view.to_move, me)} to move" if view.HasField("to_move") else ""
    )
    head = Text(f"ZoxSo, phase {view.phase}, ply {view.ply}/{view.max_plies}{turn}")
    legend = Text("\n".join(zoxso.LEGEND), style="dim")
    return Group(head, _picture(view), forces, legend)


# --------------------------------------------------------------------------------------------
# Sentences


def _piece(piece: Any) -> str:
    return PIECES.get(piece.type, "piece")


def events(update: Any, me: int) -> list[str]:
    status = update.status
    out: list[str] = []

    def side(seat: int) -> str:
        return side_name(status, seat, me)

    events = list(update.events)
    index = 0
    while index < len(events):
        event = events[index]
        kind = event.WhichOneof("kind")
        index += 1
        if kind == "placed":
            p = event.placed
            out.append(f"{side(p.seat)} placed a {_piece(p.piece)} on {p.to_square}")
        elif kind == "phase_started":
            out.append(
                f"all pieces are down: phase {event.phase_started.phase}, moving and flipping, "
                "begins"
            )
        elif kind == "flipped":
            f = event.flipped
            text = f"{side(f.seat)} flipped a {_piece(f.piece)} from {f.from_square} onto "
            text += f.to_square
            if index < len(events) and events[index].WhichOneof("kind") == "moved":
                m = events[index].moved
                index += 1
                text += f", then moved it to {m.to_square}" + _captured(m, status, me)
            out.append(text)
        elif kind == "moved":
            m = event.moved
            out.append(
                f"{side(m.seat)} moved a {_piece(m.piece)} from {m.from_square} to "
                f"{m.to_square}" + _captured(m, status, me)
            )
        elif kind == "passed":
            out.append(f"{side(event.passed.seat)} passed: no legal move")
        elif kind == "won":
            w = event.won
            if w.reason == zoxso_pb2.WIN_REASON_THRONE:
                win = f"{side(w.seat)} wins on the Throne"
            elif w.reason == zoxso_pb2.WIN_REASON_XING_CAPTURED:
                win = f"{side(w.seat)} wins by capturing the enemy Xing"
            else:
                win = f"{side(w.seat)} wins"
            winner = side(w.seat)
            if w.reason != zoxso_pb2.WIN_REASON_RESIGNATION and out and out[-1].startswith(winner):
                out[-1] += " and " + win.removeprefix(winner + " ")
            else:
                out.append(win)
        elif kind == "draw":
            reason = {
                zoxso_pb2.DRAW_REASON_TWO_PASSES: "both players passed in a row",
                zoxso_pb2.DRAW_REASON_MAX_PLIES: "the ply limit is reached",
            }.get(event.draw.reason, "drawn")
            out.append(f"the game is drawn: {reason}")
        elif kind == "resigned":
            out.append(f"{side(event.resigned.seat)} resigned")
    return out


def _captured(moved: Any, status: common_pb2.GameStatus, me: int) -> str:
    if not moved.HasField("captured"):
        return ""
    owner = seat_name(status, moved.captured.seat, me)
    whose = "your" if owner == "you" else f"{SIDES[moved.captured.seat % 2]}'s"
    return f", capturing {whose} {_piece(moved.captured)}"


# --------------------------------------------------------------------------------------------

_PLACE = re.compile(r"^[mdx]@", re.IGNORECASE)


class ZoxsoBoard(BaseBoard):
    case_rule = "ZoxSo is case-sensitive: Pearls are a1..h8, Stones A1..G7, pieces M, D, X"
    hotseat = True  # Z4: nothing is hidden
    draw_reasons: ClassVar[Mapping[str, str]] = {
        "two_passes": "both players passed in a row",
        "max_plies": "the ply limit was reached",
    }

    def draw(self, reply: Any, me: int) -> RenderableType:
        return draw(reply, me)

    def seat_label(self, seat: int) -> str:
        """`seat 0 (Dark)`, `seat 1 (Light)`."""
        if 0 <= seat < 2:
            return f"seat {seat} ({SIDES[seat]})"
        return f"seat {seat}"

    def actor_name(self, status: common_pb2.GameStatus, seat: int, me: int) -> str:
        """With its side, which the board shows: `Dark (you)`."""
        return side_name(status, seat, me)

    def events(self, update: Any, me: int) -> list[str]:
        return events(update, me)

    def win_reason(
        self,
        status: common_pb2.GameStatus,
        me: int,
        detail: dict[str, Any],
        final_events: Sequence[Any],
    ) -> str:
        reason = str(detail.get("reason", ""))
        winner = status.result.winners[0]
        loser = 1 - winner
        if reason == "throne":
            return (
                "your Xing reached the Throne" if winner == me else "their Xing reached the Throne"
            )
        if reason == "xing_captured":
            victim = "your" if loser == me else f"{SIDES[loser]}'s"
            return f"{victim} Xing was captured"
        return reason.replace("_", " ") or "won"

    def canonical_case(self, move: str) -> str:
        """Pieces upper case (`M@b2`), `pass` lower case; squares are left alone: `b2` and `B2`
        are different squares."""
        if _PLACE.match(move):
            return move[0].upper() + move[1:]
        return "pass" if move.lower() == "pass" else move


BOARD: Board = ZoxsoBoard()
