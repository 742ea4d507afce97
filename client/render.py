"""Plain-text boards for the terminal."""

from __future__ import annotations

from collections.abc import Sequence

from tabletop.esoloe.v1 import esoloe_pb2

_SEAT_MARK = {0: "", 1: "'"}


def _cell(cell: esoloe_pb2.Cell) -> str:
    """A face, marked by owner: `2` for seat 0's cube, `2'` for seat 1's; blanks show as `#`."""
    if cell.face == 0:
        return " .  "
    face = str(cell.face) if cell.face <= 3 else "#"
    return f" {face}{_SEAT_MARK.get(cell.seat, '?'):<2}"


def _column(cells: Sequence[esoloe_pb2.Cell]) -> list[str]:
    return [_cell(c) for c in reversed(cells)]


def render_esoloe(view: esoloe_pb2.View) -> str:
    """The five views side by side: front, back, left, right (levels top to bottom), upper."""
    lines = ["   front (a..e)        back (e..a)          L     R  ", ""]
    for level in range(3, -1, -1):
        front = "".join(_cell(c) for c in view.front[level].cells)
        back = "".join(_cell(c) for c in view.back[level].cells)
        lines.append(
            f"{level + 1} {front} | {back} | {_cell(view.left[level])}|{_cell(view.right[level])}"
        )
    lines.append("   " + "".join(f" {s}  " for s in "abcde") + " |")
    lines.append("")
    lines.append("upper " + "".join(_cell(c) for c in view.upper))
    lines.append(
        f"cubes left: seat 0 = {view.cubes_left[0]}, seat 1 = {view.cubes_left[1]}   "
        "(1-3 symbols, # blank, ' marks seat 1's cubes)"
    )
    return "\n".join(lines)
