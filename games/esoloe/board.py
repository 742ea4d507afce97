"""e-SOLO-e at the terminal: the five views side by side (E4), each move in words, the result.

Owners are also written as characters (`x` after the front seat's cubes, `o` after the back
seat's), so that the board stays readable without colour, where a row of one side's cubes stands
out as a row of one letter; colour only repeats them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from games.board import SEAT_STYLES, BaseBoard, Board, and_list, seat_name, verb
from tabletop.common.v1 import common_pb2
from tabletop.esoloe.v1 import esoloe_pb2

VIEWS = {"F": "front", "B": "back", "L": "left", "R": "right", "U": "upper"}
SIDES = ("front", "back")
OWNER_MARKS = ("x", "o")
"""What follows a cube's face, by its owner's seat."""
METHODS = {
    "colour": "4 cubes of one colour in a row",
    "symbol": "4 matching symbols in a row",
    "two_sets": "two sets of three matching symbols",
}


# --------------------------------------------------------------------------------------------
# The board


def _cube_face(cell: esoloe_pb2.Cell) -> Text:
    if cell.face == 0:
        return Text(" . ", style="dim")
    symbol = str(cell.face) if cell.face <= 3 else "#"
    mark = OWNER_MARKS[cell.seat] if 0 <= cell.seat < len(OWNER_MARKS) else "?"
    return Text(f" {symbol}{mark}", style=SEAT_STYLES.get(cell.seat, ""))


def _face_grid(title: str, columns: str, rows: Sequence[Sequence[esoloe_pb2.Cell]]) -> Text:
    """A view as lines: a title, column names, then levels 4 (top) down to 1."""
    text = Text(f"{title}\n", style="bold")
    text.append("  " + "".join(f" {name} " for name in columns) + "\n")
    for level in range(len(rows) - 1, -1, -1):
        text.append(f"{level + 1} ")
        for cell in rows[level]:
            text.append_text(_cube_face(cell))
        text.append("\n")
    text.rstrip()
    return text


def draw(reply: esoloe_pb2.GetViewResponse, me: int) -> RenderableType:
    view = reply.view
    views = Table.grid(padding=(0, 3))
    for _ in range(4):
        views.add_column()
    views.add_row(
        _face_grid("front", "abcde", [row.cells for row in view.front]),
        _face_grid("back", "edcba", [row.cells for row in view.back]),
        _face_grid("left", "L", [[cell] for cell in view.left]),
        _face_grid("right", "R", [[cell] for cell in view.right]),
    )
    upper = Text("upper ", style="bold")
    upper.append(" ".join(f" {s} " for s in "abcde") + "\n      ")
    for cell in view.upper:
        upper.append_text(_cube_face(cell))
        upper.append(" ")
    left = Text("cubes left: ")
    for seat, count in enumerate(view.cubes_left):
        left.append(f"{seat_name(reply.status, seat, me)} {count}", style=SEAT_STYLES[seat])
        left.append("   ")
    front, back = (seat_name(reply.status, seat, me) for seat in (0, 1))
    legend = Text(
        f"1 2 3 symbols, # a blank face; x marks the front seat's cubes ({front}), o the back "
        f"seat's ({back})",
        style="dim",
    )
    return Group(views, Text(""), upper, left, legend)


# --------------------------------------------------------------------------------------------
# Sentences


def _views(lines: Sequence[Any]) -> str:
    """`the front view`, `the back, front and right views`."""
    views = sorted({VIEWS.get(line.view, line.view) for line in lines})
    if len(views) == 1:
        return f"the {views[0]} view"
    return f"the {and_list(views)} views"


def win_text(won: Any, owner: str) -> str:
    """How an e-SOLO-e win was made, from its Won event: `4 cubes of your colour in a row in the
    front view`."""
    parts = []
    colour = "your" if owner == "you" else "their"
    for method in won.methods:
        lines = [line for line in won.lines if line.method == method]
        if not lines:
            parts.append(METHODS.get(method, method))
            continue
        longest = max(len(line.cells) for line in lines)
        if method == "colour":
            parts.append(f"{longest} cubes of {colour} colour in a row in {_views(lines)}")
        elif method == "symbol":
            parts.append(f"{longest} matching symbols in a row in {_views(lines)}")
        else:
            parts.append(f"two sets of three matching symbols in {_views(lines)}")
    return "; ".join(parts)


def events(update: Any, me: int) -> list[str]:
    status = update.status
    out: list[str] = []
    for event in update.events:
        kind = event.WhichOneof("kind")
        if kind == "placed":
            p = event.placed
            who = seat_name(status, p.seat, me)
            front = str(p.front) if p.front <= 3 else "a blank face"
            out.append(
                f"{who} played {update.envelope.move or p.square}: a cube on {p.square} at level "
                f"{p.level + 1}, {p.top} on top and {front} in front"
            )
        elif kind == "won":
            who = seat_name(status, event.won.seat, me)
            how = win_text(event.won, who)
            out.append(f"{who} {verb(who, 'win', 'wins')}: {how}" if how else f"{who} won")
        elif kind == "draw":
            out.append("the game is drawn: the player to move cannot place a cube")
        elif kind == "resigned":
            out.append(f"{seat_name(status, event.resigned.seat, me)} resigned")
    return out


# --------------------------------------------------------------------------------------------


class EsoloeBoard(BaseBoard):
    hotseat = True
    draw_reasons: ClassVar[Mapping[str, str]] = {
        "no_legal_placement": "the player to move cannot place a cube"
    }

    def draw(self, reply: Any, me: int) -> RenderableType:
        return draw(reply, me)

    def seat_label(self, seat: int) -> str:
        """`seat 0 (front)`, `seat 1 (back)`."""
        if 0 <= seat < 2:
            return f"seat {seat} ({SIDES[seat]})"
        return f"seat {seat}"

    def events(self, update: Any, me: int) -> list[str]:
        return events(update, me)

    def win_reason(
        self,
        status: common_pb2.GameStatus,
        me: int,
        detail: dict[str, Any],
        final_events: Sequence[Any],
    ) -> str:
        """The winning lines from the last move's Won event, else the result's methods."""
        for event in final_events:
            if hasattr(event, "WhichOneof") and event.WhichOneof("kind") == "won":
                return win_text(event.won, seat_name(status, event.won.seat, me))
        methods = [str(m) for m in detail.get("methods", [])]
        return and_list([METHODS.get(m, m) for m in methods]) or "a winning line"

    def canonical_case(self, move: str) -> str:
        """e-SOLO-e's notation is all lower case (`C12` is `c12`)."""
        return move.lower()

    def typed_problem(self, problem: str) -> str:
        """The engine wants lower case; a typed line may be in any case."""
        return problem.replace("(lowercase)", "(in any case)")


BOARD: Board = EsoloeBoard()
