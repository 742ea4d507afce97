"""e-SOLO-e (game id ``esoloe``): the rules engine, rulings E1–E9 (docs/rules/esoloe.md).

Two seats, five squares ``a``..``e`` in one row, eight cubes each; seat 0 moves first and sits at
the front, seat 1 at the back (E2, E3). A move places one cube: ``<square><top><front>``, e.g.
``c12`` = square c, face 1 up, face 2 towards the front. The top must be a symbol (1, 2, 3); the
front is any face that is neither the top nor the bottom (7 - top): 12 orientations per square.

Cube geometry (E1): face normals n1=+z, n2=-y, n3=+x, n4=-x, n5=+y, n6=-z; the right face is the
one whose normal is n(top) x n(front); back = 7 - front, left = 7 - right, bottom = 7 - top.

Levels are counted from 0 (the cube on the board) to 3 (the winning 4th storey, E3). A square is
written as its letter in events and win lines; a cube position is ``[letter, level]``.

Views (E4), as returned by :func:`views` and in ``view()["views"]``; every view has ``faces``
(the visible face, ``None`` for a gap) and ``seats`` (the owner of the cube showing it):

- ``F``: ``faces[level][column]``, column 0..4 = squares a..e; the front face of every cube.
- ``B``: ``faces[level][column]``, columns mirrored (column 0 = square e, as seen from the back);
  the back face of every cube.
- ``L``: ``faces[level]``: the left face of the leftmost cube at that level.
- ``R``: ``faces[level]``: the right face of the rightmost cube at that level.
- ``U``: ``faces[square]``: the top face of the top cube of that square.

Winning (E5–E9) is checked after every placement for the mover only; every method met is
reported in the ``won`` event: ``{"seat", "methods", "lines"}``, methods in the order
``colour`` (E6), ``symbol`` (E7), ``two_sets`` (E8); each line is ``{"view", "method", "cells"}``
(plus ``symbol`` for symbol runs and sets, and ``new`` for sets: the mover's sets that made the
win). Cells are always the positions of the cubes that show the line. If the player to move has
no legal placement the game is drawn (E9); in play this only happens after the 15th cube fills
every stack to 3 and seat 1 has no winning 4th cube.

E8 (revised): a set (a maximal run of exactly 3 equal symbols in a line) is identified by its
view, its symbol and its cells in that view's grid (F/B: square and level; L/R: level; U:
square). A cube that covers a U square, or becomes the leftmost/rightmost cube of a level, and
shows the symbol shown there before leaves that set as it was: not new. After a move every set
that did not exist before is the mover's, every other set is held by whoever owns 2 of its 3
cubes now (so such a re-cover can bring a set over to the mover). The mover wins with 2+ sets
of its own, at least one new.

Rules editions (`RULES.edition` = 2, `RULES.editions` = (1, 2); a state keeps its edition for
the whole game, and serializes and shows it as "edition"; a snapshot without it is edition 1):
- 2 (current): E8 as revised, above.
- 1 (before the revised E8): a set was identified by the cubes forming it, so a re-cover with
  the same symbol made a new set (the mover's) and wiped out the old one. Everything else is
  the same.

Events: ``placed`` ``{"seat", "square", "level", "top", "front", "move"}``, then ``won``
``{"seat", "methods", "lines"}`` or ``draw`` ``{"reason": "no_legal_placement", "seat"}``
(the seat that cannot place); ``resigned`` ``{"seat"}``. Result details: ``{"reason": "win",
"methods": [...]}``, ``{"reason": "no_legal_placement"}`` or ``{"reason": "resignation"}``.

Speed: legal moves on a full stack need a win check per orientation. The check looks only at
the view cells the new cube changes; it is exact for every position reached by play, since a run
of 4+ anywhere would already have ended the game. A win is then reported from the whole position
(`_full_check`, which keys sets by view cells, or by cubes in edition 1).
What a new cube does in one line depends only on that line's owners and symbols, so it is
tabulated once per line content and shared by every position (bots ask for the threats of both
seats, `winning_placements`, at every position they search).

Resignation: either seat may resign at any moment while the game runs; the other seat wins
(``Result.detail == {"reason": "resignation"}``). There are no options and no setup; the seed
changes nothing (the game has no chance and no hidden information).
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, NamedTuple

from engines.canonical import canonical_json
from engines.contract import (
    JSON,
    Event,
    GameOver,
    IllegalMove,
    InvalidSetup,
    MalformedMove,
    NotYourTurn,
    Result,
    Seat,
    State,
    check_edition,
    check_options,
    check_seat,
)

__all__ = [
    "FACES",
    "ORIENTATIONS",
    "RULES",
    "EsoloeRules",
    "EsoloeState",
    "Faces",
    "Placement",
    "parse_move",
    "views",
]

SQUARES: Final = "abcde"
NUM_SQUARES: Final = 5
LEVELS: Final = 4  # three storeys plus the winning 4th (E3)
MAX_STACK: Final = 3
CUBES_PER_SEAT: Final = 8
SYMBOLS: Final = (1, 2, 3)

# --------------------------------------------------------------------------------------------
# E1: the cube.

_NORMALS: Final[dict[int, tuple[int, int, int]]] = {
    1: (0, 0, 1),
    2: (0, -1, 0),
    3: (1, 0, 0),
    4: (-1, 0, 0),
    5: (0, 1, 0),
    6: (0, 0, -1),
}


def _right_face(top: int, front: int) -> int:
    """E1: the face whose normal is n(top) x n(front)."""
    (a1, a2, a3), (b1, b2, b3) = _NORMALS[top], _NORMALS[front]
    cross = (a2 * b3 - a3 * b2, a3 * b1 - a1 * b3, a1 * b2 - a2 * b1)
    return next(face for face, normal in _NORMALS.items() if normal == cross)


class Faces(NamedTuple):
    """The faces a placed cube shows in each direction (E1)."""

    front: int
    back: int
    left: int
    right: int
    top: int


ORIENTATIONS: Final[tuple[tuple[int, int], ...]] = tuple(
    (top, front) for top in SYMBOLS for front in range(1, 7) if front not in (top, 7 - top)
)
"""The 12 (top, front) orientations, in canonical order."""

FACES: Final[dict[tuple[int, int], Faces]] = {
    (top, front): Faces(front, 7 - front, 7 - _right_face(top, front), _right_face(top, front), top)
    for top, front in ORIENTATIONS
}
"""(top, front) -> the faces shown to the front, back, left, right and top (E1)."""

_ORIENT_INDEX: Final[dict[tuple[int, int], int]] = {o: i for i, o in enumerate(ORIENTATIONS)}
_OF: Final[tuple[Faces, ...]] = tuple(FACES[o] for o in ORIENTATIONS)
_K_FRONT, _K_BACK, _K_LEFT, _K_RIGHT, _K_TOP = range(5)
_SHOWN: Final[tuple[tuple[int, ...], ...]] = tuple(
    tuple(face if face <= 3 else 0 for face in faces) for faces in _OF
)
"""Per orientation, the symbol (0: blank) shown front, back, left, right and up."""

# --------------------------------------------------------------------------------------------
# E2: notation.


@dataclass(frozen=True, slots=True)
class Placement:
    """One placement: square 0..4 (a..e), top face 1..3, front face (E2)."""

    square: int
    top: int
    front: int

    def notation(self) -> str:
        return f"{SQUARES[self.square]}{self.top}{self.front}"

    @property
    def faces(self) -> Faces:
        return FACES[(self.top, self.front)]


_FACE_DIGITS: Final[dict[str, int]] = {str(face): face for face in range(1, 7)}
_EXAMPLE: Final = "moves are <square a..e><top 1..3><front>, e.g. 'c12'"


def _allowed_fronts(top: int) -> str:
    return ", ".join(str(f) for t, f in ORIENTATIONS if t == top)


def parse_move(text: str) -> Placement:
    """Parse ``<square><top><front>`` strictly; raise MalformedMove saying what is wrong."""
    if not isinstance(text, str):
        raise MalformedMove(f"a move must be a string; {_EXAMPLE}")
    if len(text) != 3:
        raise MalformedMove(f"move {text[:20]!r} must be exactly 3 characters; {_EXAMPLE}")
    square_ch, top_ch, front_ch = text[0], text[1], text[2]
    square = SQUARES.find(square_ch)
    if square < 0:
        raise MalformedMove(f"square {square_ch!r} does not exist; squares are a..e (lowercase)")
    top = _FACE_DIGITS.get(top_ch)
    if top is None:
        raise MalformedMove(f"top face {top_ch!r} is not a face; faces are 1..6")
    if top not in SYMBOLS:
        raise MalformedMove(f"top face {top} is blank; the top must show a symbol: 1, 2 or 3 (E2)")
    front = _FACE_DIGITS.get(front_ch)
    if front is None:
        raise MalformedMove(f"front face {front_ch!r} is not a face; faces are 1..6")
    if front == top:
        raise MalformedMove(
            f"front face {front} is the top face; with top {top} the front is one of "
            f"{_allowed_fronts(top)}"
        )
    if front == 7 - top:
        raise MalformedMove(
            f"front face {front} is the bottom face (opposite the top {top}); with top {top} "
            f"the front is one of {_allowed_fronts(top)}"
        )
    return Placement(square, top, front)


_NOTATION: Final[tuple[tuple[str, ...], ...]] = tuple(
    tuple(f"{SQUARES[s]}{t}{f}" for t, f in ORIENTATIONS) for s in range(NUM_SQUARES)
)

# --------------------------------------------------------------------------------------------
# E4/E5: view cells and lines. A cube position is p = square * 4 + level. Cells are numbered
# across all five views: F 0..19 (cell = p), B 20..39 (20 + p), L 40..43, R 44..47 (by level),
# U 48..52 (by square).

_F0, _B0, _L0, _R0, _U0 = 0, 20, 40, 44, 48
_NCELLS: Final = 53
_CELL_KIND: Final[tuple[int, ...]] = (
    (_K_FRONT,) * 20 + (_K_BACK,) * 20 + (_K_LEFT,) * 4 + (_K_RIGHT,) * 4 + (_K_TOP,) * 5
)


def _grid_lines() -> list[tuple[int, ...]]:
    """E5: F/B lines (positions) of 3+ cells: rows, columns and both diagonals."""
    lines: list[tuple[int, ...]] = []
    starts: list[tuple[int, int, int, int]] = []
    starts += [(0, y, 1, 0) for y in range(LEVELS)]  # horizontal
    starts += [(x, 0, 0, 1) for x in range(NUM_SQUARES)]  # vertical
    starts += [(x, 0, 1, 1) for x in range(NUM_SQUARES)] + [(0, y, 1, 1) for y in (1, 2, 3)]
    starts += [(x, 0, -1, 1) for x in range(NUM_SQUARES)] + [(4, y, -1, 1) for y in (1, 2, 3)]
    for x, y, dx, dy in starts:
        cells: list[int] = []
        while 0 <= x < NUM_SQUARES and 0 <= y < LEVELS:
            cells.append(x * LEVELS + y)
            x, y = x + dx, y + dy
        if len(cells) >= 3:
            lines.append(tuple(cells))
    return lines


_LINES: Final[tuple[tuple[str, tuple[int, ...]], ...]] = (
    *(("F", tuple(_F0 + p for p in line)) for line in _grid_lines()),
    *(("B", tuple(_B0 + p for p in line)) for line in _grid_lines()),
    ("L", tuple(range(_L0, _L0 + LEVELS))),  # vertical only
    ("R", tuple(range(_R0, _R0 + LEVELS))),  # vertical only
    ("U", tuple(range(_U0, _U0 + NUM_SQUARES))),  # horizontal only
)
_LINE_CELLS: Final[tuple[tuple[int, ...], ...]] = tuple(cells for _, cells in _LINES)
_LINES_THROUGH: Final[tuple[tuple[int, ...], ...]] = tuple(
    tuple(li for li, cells in enumerate(_LINE_CELLS) if c in cells) for c in range(_NCELLS)
)

_LINES_THROUGH_AT: Final[tuple[tuple[tuple[int, int], ...], ...]] = tuple(
    tuple((li, _LINE_CELLS[li].index(c)) for li in _LINES_THROUGH[c]) for c in range(_NCELLS)
)
_SetKey = tuple[int, int, tuple[int, ...]]  # a set's identity: (line, symbol, cells or cubes)
_NONE: Final = _NCELLS  # a sentinel cell: always empty


def _windows(cells: tuple[int, ...]) -> tuple[tuple[int, int, int, int, int, int], ...]:
    """Every 3 consecutive cells of a line: (start, 3 cells, cell before, cell after)."""
    n = len(cells)
    return tuple(
        (
            i,
            cells[i],
            cells[i + 1],
            cells[i + 2],
            cells[i - 1] if i else _NONE,
            cells[i + 3] if i + 3 < n else _NONE,
        )
        for i in range(n - 2)
    )


_WINDOWS_OF_LINE: Final = tuple(_windows(cells) for cells in _LINE_CELLS)
"""Per line, its windows (see _windows)."""
_Set = tuple[int, int, int, tuple[int, ...], int]  # symbol, start, end, positions, holder


def _runs(values: list[int]) -> list[tuple[int, int, int]]:
    """Maximal runs (value, start, end) of equal non-zero values."""
    out: list[tuple[int, int, int]] = []
    n = len(values)
    i = 0
    while i < n:
        v = values[i]
        j = i + 1
        if v:
            while j < n and values[j] == v:
                j += 1
            out.append((v, i, j))
        i = j
    return out


# A cell's effect in lines (see _Analysis.cell_effect) packed in one int, so that the effects of
# several lines and cells add up: 10 bits each for the sets lost, the old sets gained, the new
# sets, the symbol runs of 4+ and the colour runs of 4+ (never more than 20 of anything: 5 cells
# of 4 lines).
_LOST: Final = 1
_GAINED: Final = 1 << 10
_NEW: Final = 1 << 20
_SYMBOL: Final = 1 << 30
_COLOUR: Final = 1 << 40
_FIELD: Final = (1 << 10) - 1
_RUN4: Final = _SYMBOL  # an effect at least this large holds a run of 4+: a win
_LineTable = tuple[tuple[int, ...], ...]
_LINE_TABLES: Final[dict[int, dict[tuple[tuple[int, ...], tuple[int, ...]], _LineTable]]] = {
    1: {},
    2: {},
}  # per rules edition
_LINE_TABLES_MAX: Final = 20_000  # about 18 MB an edition; cleared when full


def _line_table(own: tuple[int, ...], sym: tuple[int, ...], edition: int) -> _LineTable:
    """What a new cube of seat m showing symbol sv (0: blank) at index i of a line does in that
    line alone, as table[i][m * 4 + sv] (packed, see _LOST.._COLOUR): see cell_effect. It
    depends only on the line's owners and symbols (and the rules edition), which recur all over
    a search: tables are shared by every position."""
    key = (own, sym)
    tables = _LINE_TABLES[edition]
    table = tables.get(key)
    if table is not None:
        return table
    n = len(own)
    sets = [
        (v, i, j, 1 if own[i] + own[i + 1] + own[i + 2] >= 2 else 0)
        for v, i, j in _runs(list(sym))
        if j - i == 3
    ]
    rows: list[tuple[int, ...]] = []
    for i in range(n):
        row: list[int] = []
        for m in (0, 1):
            lo, hi = i, i + 1
            while lo and own[lo - 1] == m:
                lo -= 1
            while hi < n and own[hi] == m:
                hi += 1
            colour = _COLOUR if hi - lo >= 4 else 0
            for sv in range(4):
                effect = colour
                if sv and sv == sym[i] and edition != 1:
                    # E8 (revised): the cell shows the symbol it showed before (a cube covering a
                    # U square, or the new leftmost/rightmost cube of a level): the line shows
                    # what it showed, so its sets are the same sets, none new, none lost. Only
                    # the holder of the set through i is counted again, with m's cube at i; it
                    # can only come over to m. Edition 1 (before the revised E8) skips this
                    # branch: a set was its cubes, so the run through i is new, below.
                    for _, start, end, holder in sets:
                        if holder != m and start <= i < end:
                            mine = sum(1 for x in range(start, end) if x == i or own[x] == m)
                            if mine >= 2:
                                effect += _GAINED
                    row.append(effect)
                    continue
                if sv:
                    lo, hi = i, i + 1
                    while lo and sym[lo - 1] == sv:
                        lo -= 1
                    while hi < n and sym[hi] == sv:
                        hi += 1
                    if hi - lo >= 4:
                        effect += _SYMBOL
                    elif hi - lo == 3:
                        # a run through the changed cell: new, as the cell showed another
                        # symbol (edition 1, before the revised E8: new whatever it showed)
                        effect += _NEW
                for v, start, end, holder in sets:
                    # a set of m's is gone if i was one of its cells, or if it merges with i
                    if holder == m and (
                        start <= i < end or (v == sv and (end == i or start == i + 1))
                    ):
                        effect += _LOST
                row.append(effect)
        rows.append(tuple(row))
    if len(tables) >= _LINE_TABLES_MAX:
        tables.clear()
    table = tables[key] = tuple(rows)
    return table


def _line_sets(li: int, sym: list[int], own: list[int], cpos: list[int]) -> list[_Set]:
    """E8: the sets (maximal runs of exactly 3 equal symbols) of line li, with their holders
    (whoever owns two of the three cubes)."""
    out: list[_Set] = []
    for i, c0, c1, c2, before, after in _WINDOWS_OF_LINE[li]:
        v = sym[c0]
        if v and v == sym[c1] == sym[c2] and sym[before] != v and sym[after] != v:
            holder = 1 if own[c0] + own[c1] + own[c2] >= 2 else 0
            out.append((v, i, i + 3, (cpos[c0], cpos[c1], cpos[c2]), holder))
    return out


def _changed_at(
    s: int, heights: list[int], leftmost: list[int], rightmost: list[int]
) -> tuple[tuple[int, int], ...]:
    """The cells (and their kinds) a new cube on square s would change: F, B, U always; L/R
    when it would be the new leftmost/rightmost cube at its level (E4). None on a stack of 4."""
    k = heights[s]
    if k >= LEVELS:
        return ()
    p = s * LEVELS + k
    ch = [(_F0 + p, _K_FRONT), (_B0 + p, _K_BACK), (_U0 + s, _K_TOP)]
    if leftmost[k] < 0 or leftmost[k] > s:
        ch.append((_L0 + k, _K_LEFT))
    if rightmost[k] < s:
        ch.append((_R0 + k, _K_RIGHT))
    return tuple(ch)


_TOUCHED: Final[dict[tuple[tuple[int, int], ...], tuple[tuple[int, ...], tuple[int, ...]]]] = {}


def _touched(changed: tuple[tuple[int, int], ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """For the cells a cube changes: the lines through them, and the memo slots of _Analysis
    (cell * 2 + seat) whose effects read those lines (at most 5 * 4 * 3 * 2 * 2 combinations of
    changed cells: kept)."""
    got = _TOUCHED.get(changed)
    if got is None:
        lines = sorted({li for c, _ in changed for li in _LINES_THROUGH[c]})
        cells = {x for li in lines for x in _LINE_CELLS[li]}
        got = _TOUCHED[changed] = (
            tuple(lines),
            tuple(sorted(c * 2 + m for c in cells for m in (0, 1))),
        )
    return got


class _Analysis:
    """What a position shows: per cell its position, face, symbol (0 = none) and owner (-1)."""

    __slots__ = (
        "changed",
        "cpos",
        "edition",
        "face",
        "leftmost",
        "line_sets",
        "memo",
        "own",
        "owned",
        "rightmost",
        "sym",
        "tables",
    )

    def __init__(
        self, owner: list[int], orient: list[int], heights: list[int], edition: int
    ) -> None:
        self.edition = edition
        cpos = [-1] * (_NCELLS + 1)
        for p in range(NUM_SQUARES * LEVELS):
            if owner[p] >= 0:
                cpos[_F0 + p] = cpos[_B0 + p] = p
        leftmost = [-1] * LEVELS
        rightmost = [-1] * LEVELS
        for k in range(LEVELS):
            for s in range(NUM_SQUARES):
                if heights[s] > k:
                    if leftmost[k] < 0:
                        leftmost[k] = s
                    rightmost[k] = s
            if leftmost[k] >= 0:
                cpos[_L0 + k] = leftmost[k] * LEVELS + k
                cpos[_R0 + k] = rightmost[k] * LEVELS + k
        for s in range(NUM_SQUARES):
            if heights[s]:
                cpos[_U0 + s] = s * LEVELS + heights[s] - 1
        face = [0] * (_NCELLS + 1)
        sym = [0] * (_NCELLS + 1)
        own = [-1] * (_NCELLS + 1)
        for c in range(_NCELLS):
            p = cpos[c]
            if p >= 0:
                f = _OF[orient[p]][_CELL_KIND[c]]
                face[c] = f
                sym[c] = f if f <= 3 else 0
                own[c] = owner[p]
        # E8: every set (maximal run of exactly 3 equal symbols) per line, with its holder.
        line_sets: dict[int, list[_Set]] = {}
        owned = [0, 0]
        for li in range(len(_LINE_CELLS)):
            sets = _line_sets(li, sym, own, cpos)
            if sets:
                line_sets[li] = sets
                for found in sets:
                    owned[found[4]] += 1
        self.cpos = cpos
        self.face = face
        self.sym = sym
        self.own = own
        self.line_sets = line_sets
        self.owned = owned
        self.leftmost = leftmost
        self.rightmost = rightmost
        self.changed = [_changed_at(s, heights, leftmost, rightmost) for s in range(NUM_SQUARES)]
        self.memo: list[tuple[int, ...] | None] = [None] * (2 * _NCELLS)
        self.tables: list[_LineTable | None] = [None] * len(_LINE_CELLS)

    def placed(self, s: int, o: int, m: int, heights: list[int]) -> _Analysis:
        """The analysis of the position after seat m put orientation o on square s (`heights`:
        after it), derived from this one: only the cells the cube changed (`changed[s]`) and the
        lines through them are looked at again; every other line's sets, tables and effects
        are this position's. The same as a fresh `_Analysis` of that position (tested)."""
        k = heights[s] - 1
        p = s * LEVELS + k
        changed = self.changed[s]
        cpos, face, sym, own = self.cpos[:], self.face[:], self.sym[:], self.own[:]
        shown = _OF[o]
        for c, kind in changed:
            f = shown[kind]
            cpos[c] = p
            face[c] = f
            sym[c] = f if f <= 3 else 0
            own[c] = m
        leftmost, rightmost = self.leftmost[:], self.rightmost[:]
        if leftmost[k] < 0 or leftmost[k] > s:
            leftmost[k] = s
        if rightmost[k] < s:
            rightmost[k] = s
        lines, stale = _touched(changed)
        line_sets = dict(self.line_sets)
        owned = self.owned[:]
        tables = self.tables[:]
        memo = self.memo[:]
        for li in lines:
            for old in line_sets.pop(li, ()):
                owned[old[4]] -= 1
            sets = _line_sets(li, sym, own, cpos)
            if sets:
                line_sets[li] = sets
                for new in sets:
                    owned[new[4]] += 1
            tables[li] = None
        for x in stale:
            memo[x] = None
        an = _Analysis.__new__(_Analysis)
        an.edition = self.edition
        an.cpos, an.face, an.sym, an.own = cpos, face, sym, own
        an.line_sets, an.owned = line_sets, owned
        an.leftmost, an.rightmost = leftmost, rightmost
        # What a cube on a square changes depends on its height and on the leftmost and
        # rightmost cubes at that height: only level k's moved.
        an.changed = [
            _changed_at(x, heights, leftmost, rightmost) if x == s or heights[x] == k else ch
            for x, ch in enumerate(self.changed)
        ]
        an.memo, an.tables = memo, tables
        return an

    def _table(self, li: int) -> _LineTable:
        cells = _LINE_CELLS[li]
        own, sym = self.own, self.sym
        return _line_table(
            tuple([own[x] for x in cells]), tuple([sym[x] for x in cells]), self.edition
        )

    def cell_effect(self, c: int, sv: int, m: int) -> tuple[bool, bool, int, int, int]:
        """Cell c now shows symbol sv (0: blank) of seat m's new cube. In the lines through c:
        is there a colour run of 4+ (E6), a symbol run of 4+ (E7); how many sets are new, how
        many sets held by m are gone, and how many sets that stay now come over to m (E8)?

        Only runs through c can change: in a position reached by play no run of 4+ exists (it
        would have ended the game), so no run elsewhere can be one, nor split into a set. A set
        is new when it holds c and c showed another symbol before (edition 1: whatever c showed,
        see _line_table); when c shows the symbol it showed, every set stays and only the holder
        of the one through c is counted again."""
        effect = self._effects(c, m)[sv]
        return (
            effect >= _COLOUR,
            (effect >> 30) & _FIELD > 0,
            (effect >> 20) & _FIELD,
            effect & _FIELD,
            (effect >> 10) & _FIELD,
        )

    def _effects(self, c: int, m: int) -> tuple[int, ...]:
        """cell_effect(c, sv, m) packed (see _LOST.._COLOUR), for sv = 0..3, then the largest
        of the four (memoized: bots ask for both seats' threats and try every move from the
        same position)."""
        key = c * 2 + m
        hit = self.memo[key]
        if hit is not None:
            return hit
        tables = self.tables
        rows = []
        for li, i in _LINES_THROUGH_AT[c]:
            table = tables[li]
            if table is None:
                table = tables[li] = self._table(li)
            rows.append(table[i])
        at = m * 4
        if len(rows) == 1:
            by_symbol = rows[0][at : at + 4]
        else:
            by_symbol = tuple([sum([row[x] for row in rows]) for x in range(at, at + 4)])
        out = self.memo[key] = (*by_symbol, max(by_symbol))
        return out

    def winning(self, s: int, m: int, first: bool = False) -> list[int]:
        """The orientations o for which wins(s, o, m) holds, all at once: each changed
        cell is looked at once per symbol, not once per orientation (bots ask this a lot).
        `first`: only the first of them (whether there is one is all the caller asks)."""
        memo = self.memo
        effects = []
        hot = False
        for c, kind in self.changed[s]:  # none when the stack is full
            by_symbol = memo[c * 2 + m] or self._effects(c, m)
            effects.append((kind, by_symbol))
            if by_symbol[4] >= _NEW:
                hot = True
        if not hot:
            return []  # no run of 4+ and no new set, whatever the orientation (fields add up
            # without carrying: a sum reaches _NEW only if one of its terms does)
        owned = self.owned[m]
        out: list[int] = []
        for o, shown in enumerate(_SHOWN):
            total = 0
            for kind, by_symbol in effects:
                total += by_symbol[shown[kind]]
            if total >= _RUN4 or (
                total >= _NEW
                and owned - (total & _FIELD) + ((total >> 10) & _FIELD) + (total >> 20) >= 2
            ):
                out.append(o)
                if first:
                    break
        return out

    def wins(self, s: int, o: int, m: int) -> bool:
        """Fast E9 check: does seat m win by placing orientation o on square s?

        Only the view cells the new cube changes are looked at (see cell_effect); when this
        says the cube wins, _full_check examines the whole position for the report."""
        shown = _SHOWN[o]
        total = 0
        for c, kind in self.changed[s]:
            total += self._effects(c, m)[shown[kind]]
        if total >= _RUN4:
            return True  # a colour or symbol run of 4+
        new = total >> 20
        return new > 0 and self.owned[m] - (total & _FIELD) + ((total >> 10) & _FIELD) + new >= 2


def _cells_json(ps: tuple[int, ...]) -> list[JSON]:
    return [[SQUARES[q // LEVELS], q % LEVELS] for q in ps]


def _set_key(li: int, s: _Set) -> _SetKey:
    """E8 (revised): a set is identified by its line (so its view), symbol and first cell."""
    return (li, s[0], (s[1],))


def _set_key_edition_1(li: int, s: _Set) -> _SetKey:
    """Edition 1 (before the revised E8): a set was identified by the cubes forming it, so a
    cube taking over a cell of L, R or U made a new set even if it showed the same symbol. (A
    set's holder is the same before and after then: the same cubes.)"""
    return (li, s[0], s[3])


def _full_check(before: _Analysis, after: _Analysis, m: int) -> tuple[list[str], list[JSON]]:
    """E6–E9 on the whole position: every method met by seat m, with its lines and sets."""
    lines: list[JSON] = []
    methods: list[str] = []
    symbol_lines: list[JSON] = []
    for view, cells in _LINES:
        run_start = -1
        owners = [*(after.own[c] for c in cells), -1]
        for i, o in enumerate(owners):
            if o == m:
                if run_start < 0:
                    run_start = i
            else:
                if run_start >= 0 and i - run_start >= 4:
                    ps = tuple(after.cpos[c] for c in cells[run_start:i])
                    lines.append({"view": view, "method": "colour", "cells": _cells_json(ps)})
                run_start = -1
        for v, i, j in _runs([after.sym[c] for c in cells]):
            if j - i >= 4:
                ps = tuple(after.cpos[c] for c in cells[i:j])
                symbol_lines.append(
                    {"view": view, "method": "symbol", "symbol": v, "cells": _cells_json(ps)}
                )
    if lines:
        methods.append("colour")
    if symbol_lines:
        methods.append("symbol")
        lines += symbol_lines
    # E8 (revised): a set is its view (its line), its symbol and its cells in the view's grid;
    # a set that did not exist before is the mover's, one that did is its holder's now.
    key = _set_key if after.edition != 1 else _set_key_edition_1
    old = {key(li, s) for li, sets in before.line_sets.items() for s in sets}
    mine: list[tuple[str, int, tuple[int, ...], bool]] = []
    for li, sets in sorted(after.line_sets.items()):
        view = _LINES[li][0]
        for s in sets:
            v, _, _, ps, holder = s
            is_new = key(li, s) not in old
            if is_new or holder == m:
                mine.append((view, v, ps, is_new))
    if len(mine) >= 2 and any(is_new for _, _, _, is_new in mine):
        methods.append("two_sets")
        for view, v, ps, is_new in mine:
            lines.append(
                {
                    "view": view,
                    "method": "two_sets",
                    "symbol": v,
                    "cells": _cells_json(ps),
                    "new": is_new,
                }
            )
    return methods, lines


# --------------------------------------------------------------------------------------------
# The state.


class EsoloeState(State):
    """A position: who owns each cube position, in which orientation, and the result if over."""

    __slots__ = (
        "_an",
        "_edition",
        "_heights",
        "_legal",
        "_orient",
        "_owner",
        "_parent",
        "_ply",
        "_result",
    )

    def __init__(
        self,
        owner: list[int],
        orient: list[int],
        heights: list[int],
        ply: int,
        result: Result | None,
        edition: int,
    ) -> None:
        self._edition = edition  # the rules edition (see the module docstring): 1 or 2
        self._owner = owner  # per position p = square * 4 + level: seat, or -1 when empty
        self._orient = orient  # per position: index into ORIENTATIONS, or -1
        self._heights = heights
        self._ply = ply
        self._result = result
        self._an: _Analysis | None = None
        self._parent: tuple[_Analysis, int, int] | None = None
        """(the previous position's analysis, square, orientation) after `_place`: this
        position's analysis is derived from it (`_Analysis.placed`), not built afresh."""
        self._legal: list[str] | None = None

    # -- contract -------------------------------------------------------------------------

    @property
    def num_seats(self) -> int:
        return 2

    @property
    def edition(self) -> int:
        return self._edition

    @property
    def to_move(self) -> Seat | None:
        """The seat to place a cube, or None once the game is over."""
        return None if self._result is not None else self._ply % 2

    def cubes_left(self, seat: Seat) -> int:
        placed = (self._ply + 1) // 2 if seat == 0 else self._ply // 2
        return CUBES_PER_SEAT - placed

    def to_act(self) -> tuple[Seat, ...]:
        if not self._can_move():
            return ()
        return (self._ply % 2,)

    def legal_moves(self, seat: Seat) -> list[str]:
        check_seat(self, seat)
        if self._result is not None or seat != self._ply % 2:
            return []
        return list(self._moves())

    def result(self) -> Result | None:
        return self._result

    def apply(self, seat: Seat, move: str) -> tuple[EsoloeState, list[Event]]:
        check_seat(self, seat)
        if self._result is not None:
            raise GameOver("the game is over; no more cubes can be placed")
        mover = self._ply % 2
        if seat != mover:
            raise NotYourTurn(f"it is seat {mover}'s turn to place a cube, not seat {seat}'s")
        placement = parse_move(move)
        if self.cubes_left(seat) <= 0:
            raise IllegalMove(f"seat {seat} has no cubes left")
        s = placement.square
        h = self._heights[s]
        letter = SQUARES[s]
        if h >= LEVELS:
            raise IllegalMove(f"stack {letter} holds 4 cubes; nothing can be placed on it (E3)")
        o = _ORIENT_INDEX[(placement.top, placement.front)]
        an = self._analysis()
        wins = an.wins(s, o, mover)
        if h >= MAX_STACK and not wins:
            raise IllegalMove(
                f"stack {letter} already holds 3 cubes; a 4th cube may be placed there only "
                f"when it wins (E3)"
            )
        after = self._place(s, o)
        events = [
            Event(
                "placed",
                {
                    "seat": seat,
                    "square": letter,
                    "level": h,
                    "top": placement.top,
                    "front": placement.front,
                    "move": placement.notation(),
                },
            )
        ]
        if wins:
            methods, lines = _full_check(an, after._analysis(), mover)
            after._result = Result((mover,), {}, {"reason": "win", "methods": methods})
            events.append(Event("won", {"seat": mover, "methods": methods, "lines": lines}))
        elif not after._can_move():
            nxt = 1 - mover
            after._result = Result((), {}, {"reason": "no_legal_placement"})
            events.append(Event("draw", {"reason": "no_legal_placement", "seat": nxt}))
        return after, events

    def resign(self, seat: Seat) -> tuple[EsoloeState, list[Event]]:
        check_seat(self, seat)
        if self._result is not None:
            raise GameOver("the game is over; there is nothing to resign")
        after = EsoloeState(
            self._owner,
            self._orient,
            self._heights,
            self._ply,
            Result((1 - seat,), {}, {"reason": "resignation"}),
            self._edition,
        )
        return after, [Event("resigned", {"seat": seat})]

    def view(self, seat: Seat | None) -> dict[str, JSON]:
        if seat is not None:
            check_seat(self, seat)
        stacks: list[JSON] = []
        for s in range(NUM_SQUARES):
            stack: list[JSON] = []
            for k in range(self._heights[s]):
                p = s * LEVELS + k
                top, front = ORIENTATIONS[self._orient[p]]
                stack.append({"seat": self._owner[p], "top": top, "front": front})
            stacks.append(stack)
        return {
            "game": "esoloe",
            "edition": self._edition,
            "stacks": stacks,
            "views": views(self),
            "cubes_left": [self.cubes_left(0), self.cubes_left(1)],
            "to_move": self.to_move,
            "ply": self._ply,
            "result": None if self._result is None else self._result.to_json(),
        }

    def serialize(self) -> bytes:
        stacks = [
            [
                [self._owner[p], *ORIENTATIONS[self._orient[p]]]
                for p in range(s * LEVELS, s * LEVELS + self._heights[s])
            ]
            for s in range(NUM_SQUARES)
        ]
        result = None if self._result is None else self._result.to_json()
        data = {"edition": self._edition, "result": result, "stacks": stacks}
        return canonical_json(data).encode()

    def determinize(self, seat: Seat | None, rng: random.Random) -> EsoloeState:
        return self  # no hidden information

    # -- internals ------------------------------------------------------------------------

    def _analysis(self) -> _Analysis:
        an = self._an
        if an is None:
            parent = self._parent
            if parent is None:
                an = _Analysis(self._owner, self._orient, self._heights, self._edition)
            else:
                before, s, o = parent
                an = before.placed(s, o, 1 - self._ply % 2, self._heights)
                self._parent = None
            self._an = an
        return an

    def winning_placements(self, seat: Seat) -> list[str]:
        """The placements that would win for `seat` if it were its turn now (E6-E9), whoever is
        to move: the mover's immediate wins, or the other seat's threats. Bots search with it;
        it is far cheaper than trying every legal move."""
        check_seat(self, seat)
        if self._result is not None or self.cubes_left(seat) <= 0:
            return []
        an = self._analysis()
        return [_NOTATION[s][o] for s in range(NUM_SQUARES) for o in an.winning(s, seat)]

    def _can_move(self) -> bool:
        """E9: whether the mover has a legal placement. Cheap unless every stack is full."""
        if self._legal is not None:
            return bool(self._legal)
        if self._result is not None or self.cubes_left(self._ply % 2) == 0:
            return False
        return any(h < MAX_STACK for h in self._heights) or bool(self._moves())

    def _moves(self) -> list[str]:
        """E3/E9: the mover's legal placements (cached; the state never changes)."""
        legal = self._legal
        if legal is None:
            legal = []
            mover = self._ply % 2
            if self._result is None and self.cubes_left(mover) > 0:
                an: _Analysis | None = None
                for s in range(NUM_SQUARES):
                    h = self._heights[s]
                    if h < MAX_STACK:
                        legal += _NOTATION[s]
                    elif h == MAX_STACK:
                        if an is None:
                            an = self._analysis()
                        names = _NOTATION[s]
                        legal += [names[o] for o in an.winning(s, mover)]
            self._legal = legal
        return legal

    def _place(self, s: int, o: int) -> EsoloeState:
        """The position after the mover puts orientation o on square s (no legality check)."""
        p = s * LEVELS + self._heights[s]
        owner = self._owner[:]
        orient = self._orient[:]
        heights = self._heights[:]
        owner[p] = self._ply % 2
        orient[p] = o
        heights[s] += 1
        after = EsoloeState(owner, orient, heights, self._ply + 1, None, self._edition)
        if self._an is not None:
            after._parent = (self._an, s, o)
        return after


def views(state: EsoloeState) -> dict[str, JSON]:
    """E4: the five views of a position (see the module docstring for the layout)."""
    an = state._analysis()
    face, own = an.face, an.own

    def f(c: int) -> int | None:
        return face[c] or None

    def o(c: int) -> int | None:
        return own[c] if own[c] >= 0 else None

    def grid(base: int, mirror: bool) -> tuple[list[JSON], list[JSON]]:
        order = range(NUM_SQUARES - 1, -1, -1) if mirror else range(NUM_SQUARES)
        faces: list[JSON] = []
        seats: list[JSON] = []
        for y in range(LEVELS):
            faces.append([f(base + x * LEVELS + y) for x in order])
            seats.append([o(base + x * LEVELS + y) for x in order])
        return faces, seats

    out: dict[str, JSON] = {}
    for name, base, mirror in (("F", _F0, False), ("B", _B0, True)):
        faces, seats = grid(base, mirror)
        out[name] = {"faces": faces, "seats": seats}
    for name, base, n in (("L", _L0, LEVELS), ("R", _R0, LEVELS), ("U", _U0, NUM_SQUARES)):
        out[name] = {
            "faces": [f(c) for c in range(base, base + n)],
            "seats": [o(c) for c in range(base, base + n)],
        }
    return out


# --------------------------------------------------------------------------------------------
# The rules.


class EsoloeRules:
    """e-SOLO-e: exactly two seats, no options, no setup."""

    name = "esoloe"
    min_seats = 2
    max_seats = 2
    edition: int = 2
    editions: tuple[int, ...] = (1, 2)

    def default_options(self) -> dict[str, JSON]:
        return {}

    def new_game(
        self,
        seed: int,
        options: Mapping[str, JSON] | None = None,
        setup: Mapping[str, JSON] | None = None,
        *,
        edition: int | None = None,
    ) -> EsoloeState:
        played = check_edition(self, edition)
        check_options(options, self.default_options())
        if setup is not None:
            raise InvalidSetup("e-SOLO-e has no setup; every game starts on an empty board")
        n = NUM_SQUARES * LEVELS
        return EsoloeState([-1] * n, [-1] * n, [0] * NUM_SQUARES, 0, None, played)

    def _edition_of(self, value: object, where: str) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value not in self.editions:
            known = ", ".join(map(str, self.editions))
            raise ValueError(f"{where}: no e-SOLO-e rules edition {value!r}; editions are {known}")
        return value

    def deserialize(self, data: bytes) -> EsoloeState:
        obj = json.loads(data)
        # Snapshots stored before rules editions existed carry none: they are edition 1.
        edition = self._edition_of(obj.get("edition", 1), "serialized state")
        return _rebuild(obj["stacks"], obj["result"], edition)

    def from_view(self, view: Mapping[str, JSON], seat: Seat, rng: random.Random) -> EsoloeState:
        """The exact position: e-SOLO-e hides nothing, so the stacks and the result say it all
        (`ply` and `to_move` follow from them and are only checked), in the view's rules edition
        (the current one when the view has none)."""
        edition = self._edition_of(view.get("edition", self.edition), "view")
        stacks = view["stacks"]
        if not isinstance(stacks, list):
            raise ValueError("view stacks must be a list of 5 stacks")
        state = _rebuild(
            [[[cube["seat"], cube["top"], cube["front"]] for cube in stack] for stack in stacks],
            view["result"],
            edition,
        )
        if view.get("ply", state._ply) != state._ply or view.get("to_move") != state.to_move:
            raise ValueError(
                f"view says ply {view.get('ply')!r}, to_move {view.get('to_move')!r}; its stacks "
                f"and result say ply {state._ply}, to_move {state.to_move}"
            )
        return state


def _rebuild(stacks: JSON, res: JSON, edition: int) -> EsoloeState:
    """The state with these stacks (bottom first, cubes as [seat, top, front]), this result
    (as Result.to_json gives it, or None) and rules edition: what serialize and view carry."""
    if not isinstance(stacks, list) or len(stacks) != NUM_SQUARES:
        raise ValueError("stacks must be a list of 5 stacks")
    n = NUM_SQUARES * LEVELS
    owner, orient, heights = [-1] * n, [-1] * n, [0] * NUM_SQUARES
    count = [0, 0]
    for s, stack in enumerate(stacks):
        if not isinstance(stack, list) or len(stack) > LEVELS:
            raise ValueError(f"stack {SQUARES[s]} must be a list of at most 4 cubes")
        for k, (seat, top, front) in enumerate(stack):
            if seat not in (0, 1) or (top, front) not in _ORIENT_INDEX:
                raise ValueError(f"bad cube {[seat, top, front]!r} on {SQUARES[s]}")
            owner[s * LEVELS + k] = seat
            orient[s * LEVELS + k] = _ORIENT_INDEX[(top, front)]
            count[seat] += 1
        heights[s] = len(stack)
    if count[1] > count[0] or count[0] > count[1] + 1 or count[0] > CUBES_PER_SEAT:
        raise ValueError(f"cube counts {count} are not reachable (seat 0 moves first)")
    if res is None and LEVELS in heights:
        raise ValueError("a 4th cube ends the game (E3); this state has no result")
    result = None
    if res is not None:
        result = Result(
            tuple(res["winners"]),
            {int(k): v for k, v in res["scores"].items()},
            dict(res["detail"]),
        )
    return EsoloeState(owner, orient, heights, count[0] + count[1], result, edition)


RULES = EsoloeRules()
