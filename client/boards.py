"""The four games' boards and events for the terminal, drawn with rich.

Every renderer reads one GetViewResponse: the view the gateway built for the player's own seat (or
a spectator's public view). Nothing else is drawn, so a board can never show what the seat may
not see: no other seat's Solo hand, no Solace piece under a black one.

Boards stay readable without colour (pipes, logs, tests): owners and kinds are also written as
characters (`'` on seat 1's e-SOLO-e cubes, `d`/`l` before ZoxSo pieces, `b`/`c` before Solace
sizes, card codes in Solo), and colour only repeats them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from google.protobuf.descriptor import EnumDescriptor
from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from client.narrate import seat_name, seat_names, side_name
from engines import zoxso
from tabletop.esoloe.v1 import esoloe_pb2
from tabletop.solace.v1 import solace_pb2
from tabletop.solo.v1 import solo_pb2
from tabletop.zoxso.v1 import zoxso_pb2

SEAT_STYLES = {0: "bold red", 1: "bold blue"}
"""The two sides of e-SOLO-e and ZoxSo (seat 0 = front / Dark, seat 1 = back / Light)."""


# --------------------------------------------------------------------------------------------
# e-SOLO-e: the five views side by side (E4).


def _cube_face(cell: esoloe_pb2.Cell) -> Text:
    if cell.face == 0:
        return Text(" . ", style="dim")
    symbol = str(cell.face) if cell.face <= 3 else "#"
    mark = "'" if cell.seat == 1 else " "
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


def esoloe_board(reply: esoloe_pb2.GetViewResponse, me: int) -> RenderableType:
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
    marks = "your" if back == "you" else f"{back}'s"
    sits = "sit" if front == "you" else "sits"
    legend = Text(
        f"1 2 3 symbols, # a blank face, ' marks {marks} cubes; {front} {sits} at the front",
        style="dim",
    )
    return Group(views, Text(""), upper, left, legend)


# --------------------------------------------------------------------------------------------
# Solo: your hand, the table, and every seat's count and points (S14: never another hand).

_CARD_STYLES = {"r": "bold red", "g": "bold green", "b": "bold blue", "y": "bold yellow"}
_COLOUR_NAMES = {"r": "red", "g": "green", "b": "blue", "y": "yellow"}


def solo_card(card: str) -> Text:
    """A card in notation (`r5`, `gD`, `W4`), coloured as it is printed."""
    return Text(card, style=_CARD_STYLES.get(card[:1], "bold magenta"))


def _cards(cards: Sequence[str]) -> Text:
    text = Text()
    for index, card in enumerate(cards):
        if index:
            text.append(" ")
        text.append_text(solo_card(card))
    return text


def solo_board(reply: solo_pb2.GetViewResponse, me: int) -> RenderableType:
    view = reply.view
    if view.mode == solo_pb2.MODE_ROUNDS:
        rounds = f"round {view.round} of {view.rounds}"
    else:
        rounds = f"round {view.round}, points mode"
    arrow = "increasing seats ->" if view.direction >= 0 else "<- decreasing seats"
    head = Text(f"Solo, {rounds}, direction: {arrow}")
    table_line = Text("top card ")
    table_line.append_text(solo_card(view.top))
    if view.free_play:
        table_line.append("   free play: any card (swap-in-turn)")
    elif view.colour:
        colour = _COLOUR_NAMES.get(view.colour, view.colour)
        table_line.append(f"   colour in force: {colour}", style=_CARD_STYLES.get(view.colour))
    table_line.append(f"   pending draw: {view.pending_draw or 'none'}")
    table_line.append(f"   draw pile: {view.draw_pile_size}")
    names = seat_names(reply.status, me)
    seats = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    for name in ("", "seat", "player", "cards", "points", ""):
        seats.add_column(name)
    for seat in range(view.players):
        notes = []
        if view.solo_called and view.solo_called[seat]:
            notes.append("called Solo")
        if seat == view.late_call_seat:
            notes.append("one card, no Solo call: draws 2 at the next card played")
        if seat == view.top_played_by:
            notes.append("played the top card")
        seats.add_row(
            ">" if seat == view.to_move else "",
            str(seat),
            names[seat] if seat < len(names) else "",
            str(view.hand_sizes[seat]),
            str(view.points[seat]),
            ", ".join(notes),
            style="bold" if seat == view.to_move else None,
        )
    parts: list[RenderableType] = [head, table_line, seats]
    if me >= 0:
        hand = Text(f"your hand ({len(view.hand)}): ")
        hand.append_text(_cards(view.hand))
        parts.append(hand)
        if view.drawn_card:
            drawn = Text("you drew ")
            drawn.append_text(solo_card(view.drawn_card))
            drawn.append(": play it, or keep it with `pass`")
            parts.append(drawn)
    return Group(*parts)


# --------------------------------------------------------------------------------------------
# Solace: the black row and the clear row; hidden pieces are `?` (L4).

_PIECE_COLOURS = {
    solace_pb2.COLOUR_BLACK: ("b", "bold white on grey15"),
    solace_pb2.COLOUR_CLEAR: ("c", "bold cyan"),
}


def _pyramid(piece: solace_pb2.Piece) -> Text:
    if piece.hidden:
        return Text(f"?{piece.size}", style="dim")
    letter, style = _PIECE_COLOURS.get(piece.colour, ("?", ""))
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


def solace_board(reply: solace_pb2.GetViewResponse, me: int) -> RenderableType:
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
# ZoxSo: Pearl rows interleaved with Stone rows, the Wall and the Throne (Z1, Z2).

_COLUMN = 6  # text columns per Pearl file
_SIDES = "dl"
_TYPES = {
    zoxso_pb2.PIECE_TYPE_MA: "M",
    zoxso_pb2.PIECE_TYPE_DAO: "D",
    zoxso_pb2.PIECE_TYPE_XING: "X",
}


def _zoxso_piece(piece: zoxso_pb2.Piece) -> Text:
    return Text(f"{_SIDES[piece.seat]}{_TYPES[piece.type]}", style=SEAT_STYLES[piece.seat])


def _zoxso_picture(view: zoxso_pb2.View) -> Text:
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
            mark = _zoxso_piece(piece) if piece else Text("+" if inside else ".", style="dim")
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
            mark = _zoxso_piece(piece) if piece else Text("__", style="dim")
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


def zoxso_board(reply: zoxso_pb2.GetViewResponse, me: int) -> RenderableType:
    view = reply.view
    forces = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    for name in ("side", "in hand M/D/X", "on Pearls", "on Stones"):
        forces.add_column(name)
    for force in view.forces:
        side = ("Dark", "Light")[force.seat]
        forces.add_row(
            Text(f"{side}: {seat_name(reply.status, force.seat, me)}", SEAT_STYLES[force.seat]),
            *(
                f"{counts.ma}/{counts.dao}/{counts.xing}"
                for counts in (force.in_hand, force.on_pearls, force.on_stones)
            ),
        )
    turn = "" if view.to_move < 0 else f", {side_name(reply.status, view.to_move, me)} to move"
    head = Text(f"ZoxSo, phase {view.phase}, ply {view.ply}/{view.max_plies}{turn}")
    legend = Text(
        "d Dark, l Light; M Ma, D Dao, X Xing; Pearls a1..h8, Stones A1..G7 between them\n"
        f"= and | the Wall (+ an empty Pearl inside it); [..] the Throne {view.throne}",
        style="dim",
    )
    return Group(head, _zoxso_picture(view), forces, legend)


# --------------------------------------------------------------------------------------------

BOARDS: dict[str, Callable[[Any, int], RenderableType]] = {
    "esoloe": esoloe_board,
    "solo": solo_board,
    "solace": solace_board,
    "zoxso": zoxso_board,
}
"""game -> renderer of its GetViewResponse for seat `me` (-1: a spectator)."""


def enum_prefix(enum: EnumDescriptor) -> str:
    """`DRAW_REASON_` for enum DrawReason: what its value names start with (buf's style)."""
    return (
        "".join(f"_{c}" if c.isupper() and i else c for i, c in enumerate(enum.name)).upper() + "_"
    )
