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

_COLUMN = 6  # text columns per Pearl file
_SIDE_LETTERS = "dl"
_TYPES = {
    zoxso_pb2.PIECE_TYPE_MA: "M",
    zoxso_pb2.PIECE_TYPE_DAO: "D",
    zoxso_pb2.PIECE_TYPE_XING: "X",
}


def _piece_text(piece: zoxso_pb2.Piece) -> Text:
    return Text(f"{_SIDE_LETTERS[piece.seat]}{_TYPES[piece.type]}", style=SEAT_STYLES[piece.seat])


def _picture(view: zoxso_pb2.View) -> Text:
    pearls = {square.name: square.piece for square in view.pearls}
    stones = {square.name: square.piece for square in view.stones}
    width = _COLUMN * 7 + 6
    wall = "yellow"

    def pearl_x(col: int) -> int:
        return 3 + _COLUMN * col

    def line(cells: list[tuple[int, Text]]) -> Text:
        text = Text()
        for x, cell in sorted(cells, key=lambda item: item[0]):
            text.append(" " * (x - len(text.plain)))
            text.append_text(cell)
        text.append(" " * max(0, width - len(text.plain)))
        return text

    files = [(pearl_x(c), Text(f)) for c, f in enumerate(zoxso.PEARL_FILES)]
    files += [(pearl_x(c) + 3, Text(f, style="dim")) for c, f in enumerate(zoxso.STONE_FILES)]
    out = line(files)
    for row in range(8, 0, -1):
        cells: list[tuple[int, Text]] = [(0, Text(str(row)))]
        for col, name in enumerate(zoxso.PEARL_FILES):
            square = f"{name}{row}"
            inside = zoxso.INSIDE[zoxso.PEARL_INDEX[square]]
            piece = pearls.get(square)
            mark = _piece_text(piece) if piece else Text("+" if inside else ".", style="dim")
            cells.append((pearl_x(col), mark))
            if row in (2, 7) and 1 <= col < 6:  # the Wall runs along Pearl rows 2 and 7
                cells.append((pearl_x(col) + 2, Text("=" * (_COLUMN - 2), style=wall)))
        out.append("\n")
        out.append_text(line(cells))
        if row == 1:
            break
        stone_row = row - 1
        cells = [(1, Text(str(stone_row), style="dim"))]
        for col, name in enumerate(zoxso.STONE_FILES):
            square = f"{name}{stone_row}"
            piece = stones.get(square)
            mark = _piece_text(piece) if piece else Text("__", style="dim")
            x = pearl_x(col) + 3
            if square == view.throne:
                mark = Text("[", style="bold yellow") + mark + Text("]", style="bold yellow")
                x -= 1
            cells.append((x, mark))
        if 2 <= stone_row <= 6:  # ... and through Pearl files b and g between them
            cells += [(pearl_x(1), Text("|", style=wall)), (pearl_x(6), Text("|", style=wall))]
        out.append("\n")
        out.append_text(line(cells))
    return out


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
    legend = Text(
        "d Dark, l Light; M Ma, D Dao, X Xing; Pearls a1..h8, Stones A1..G7 between them\n"
        f"= and | the Wall (+ an empty Pearl inside it); [..] the Throne {view.throne}",
        style="dim",
    )
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
