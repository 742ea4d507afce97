"""Solace's layout: the ten spaces in two rows, the colours, and the move names (L3, L6).
Shared by the rules and the solver (which needs no more of the rules than this)."""

from __future__ import annotations

from typing import Final

BLACK: Final = 0
CLEAR: Final = 1
COLOUR_NAMES: Final = ("black", "clear")
COLOUR_CODES: Final = ("b", "c")
SPACES: Final = ("B1", "B2", "B3", "B4", "B5", "C1", "C2", "C3", "C4", "C5")
SPACE_INDEX: Final = {name: i for i, name in enumerate(SPACES)}
ROW_OF: Final = (BLACK,) * 5 + (CLEAR,) * 5
ROW_SPACES: Final = (tuple(range(5)), tuple(range(5, 10)))
ROW_LETTER: Final = ("B", "C")
NUM_SPACES: Final = 10

STOP: Final = "stop"
MOVE_NAMES: Final = tuple(tuple(f"{a}-{b}" for b in SPACES) for a in SPACES)
PARSE: Final = {MOVE_NAMES[a][b]: (a, b) for a in range(NUM_SPACES) for b in range(NUM_SPACES)}

Deal = tuple[tuple[int, int, int], ...]
"""Ten nests, each (outer 3's colour, 2's colour, 1's colour), in space order."""
