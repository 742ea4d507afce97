"""Solace at the terminal: the black row and the clear row, hidden pieces as `?` (L4); each move
in words; the result.

Kinds are also written as characters (`b`/`c` before a size), so that the board stays readable
without colour; colour only repeats them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from games.board import BaseBoard, Board, number, plural, result_detail, seat_name
from tabletop.common.v1 import common_pb2
from tabletop.solace.v1 import solace_pb2

PIECE_COLOURS = {
    solace_pb2.COLOUR_BLACK: ("b", "bold white on grey15"),
    solace_pb2.COLOUR_CLEAR: ("c", "bold cyan"),
}
COLOURS = {solace_pb2.COLOUR_BLACK: "black", solace_pb2.COLOUR_CLEAR: "clear"}


# --------------------------------------------------------------------------------------------
# The board


def _pyramid(piece: solace_pb2.Piece) -> Text:
    if piece.hidden:
        return Text(f"?{piece.size}", style="dim")
    letter, style = PIECE_COLOURS.get(piece.colour, ("?", ""))
    return Text(f"{letter}{piece.size}", style=style)


def _pieces(pieces: Sequence[solace_pb2.Piece]) -> Text:
    text = Text()
    for index, piece in enumerate(pieces):
        if index:
            text.append(" ")
        text.append_text(_pyramid(piece))
    return text


def _space(space: solace_pb2.Space) -> Text:
    """A space's pile: the tower above (bottom piece first), the nest below (outer piece first)."""
    if space.state == solace_pb2.SPACE_STATE_OPEN:
        return Text("open", style="dim")
    if space.state == solace_pb2.SPACE_STATE_PROMOTED:
        text = Text("t ", style="bold green")
        text.append_text(_pieces(space.tower))
        text.append("\npromoted", style="bold green")
        return text
    text = Text()
    if space.tower:
        text.append("t ")
        text.append_text(_pieces(space.tower))
        text.append("\n")
    text.append("n ")
    text.append_text(_pieces(space.nest))
    return text


def draw(reply: solace_pb2.GetViewResponse, me: int) -> RenderableType:
    view = reply.view
    rows: list[RenderableType] = []
    for row in (solace_pb2.COLOUR_BLACK, solace_pb2.COLOUR_CLEAR):
        spaces = [space for space in view.spaces if space.row == row]
        table = Table(box=box.ROUNDED, show_lines=False)
        for space in spaces:
            table.add_column(space.name, min_width=10, no_wrap=True)
        table.add_row(*(_space(space) for space in spaces))
        rows.append(table)
    score = f"promoted towers: {view.score}   moves played: {view.moves_played}"
    if view.HasField("best_score"):
        score += f"   best possible from this deal: {view.best_score}"
    legend = (
        "b black, c clear, then the size; ?n a hidden piece of size n\n"
        "t the tower on a nest (bottom first), n the nest (outer piece first)"
    )
    return Group(*rows, Text(score), Text(legend, style="dim"))


# --------------------------------------------------------------------------------------------
# Sentences and the result


def _piece(piece: Any) -> str:
    if piece.hidden:
        return f"a hidden {piece.size}"
    return COLOURS.get(piece.colour, "?")[:1] + str(piece.size)


def events(update: Any, me: int) -> list[str]:
    status = update.status
    out: list[str] = []
    envelope = update.envelope
    acted = envelope.HasField("actor") and envelope.actor >= 0  # unset (or -1) at creation
    who = seat_name(status, envelope.actor, me) if acted else ""
    for event in update.events:
        kind = event.WhichOneof("kind")
        if kind == "moved":
            m = event.moved
            piece = _piece(m.piece) if m.HasField("piece") else "the tower"
            if m.kind == solace_pb2.MOVE_KIND_FOUNDATION:
                text = f"{who} lifted {piece} from {m.from_space} onto {m.to_space}: a new tower"
            elif m.kind == solace_pb2.MOVE_KIND_BUILD:
                text = f"{who} built {piece} from {m.from_space} onto the tower on {m.to_space}"
            else:
                colour = COLOURS.get(m.tower_colour, "")
                text = (
                    f"{who} promoted the {colour + ' ' if colour else ''}tower from "
                    f"{m.from_space} to {m.to_space}: {plural(m.score, 'promoted tower')}"
                )
            out.append(text)
        elif kind == "revealed":
            r = event.revealed
            shown = f"{r.space} now shows "
            if out and out[-1].startswith(shown):
                out[-1] += f" {_piece(r.piece)}"
            else:
                out.append(shown + _piece(r.piece))
        elif kind == "stopped":
            out.append(f"{who} stopped with {plural(event.stopped.score, 'promoted tower')}")
        # game_over: the result line says it
    return out


def result(status: common_pb2.GameStatus, me: int, detail: dict[str, Any]) -> str:
    """`you stopped with 3 promoted towers (the best this deal allowed: 8)`."""
    score = detail.get("score", status.result.scores.get(0, 0))
    towers = plural(int(float(score)), "promoted tower")
    who = seat_name(status, 0, me)
    if detail.get("reason") == "stopped":
        text = f"{who} stopped with {towers}"
    else:
        text = f"no move left: {towers}"
    best = detail.get("best_score")
    if isinstance(best, (int, float)):
        text += f" (the best this deal allowed: {number(best)})"
    return text


# --------------------------------------------------------------------------------------------


class SolaceBoard(BaseBoard):
    def draw(self, reply: Any, me: int) -> RenderableType:
        return draw(reply, me)

    def events(self, update: Any, me: int) -> list[str]:
        return events(update, me)

    def result(
        self, status: common_pb2.GameStatus, me: int, final_events: Sequence[Any] = ()
    ) -> str:
        return result(status, me, result_detail(status))

    def short_result(self, status: common_pb2.GameStatus, me: int) -> str:
        """The score: `3 promoted towers`."""
        return plural(int(status.result.scores.get(0, 0)), "promoted tower")

    def canonical_case(self, move: str) -> str:
        """Spaces are upper case (`B2-B4`), and `stop` lower case."""
        return "stop" if move.lower() == "stop" else move.upper()

    def confirm(self, move: str, view: Any) -> str:
        """`stop` ends the game for good, as resigning does: asked first."""
        if move != "stop":
            return ""
        board = getattr(view, "view", None)
        score = f" with {plural(board.score, 'promoted tower')}" if board is not None else ""
        return f"stop now and end the game{score}?"


BOARD: Board = SolaceBoard()
