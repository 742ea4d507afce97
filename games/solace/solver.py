"""Perfect-information solver for Solace (L6/L7): the best score a fully known deal allows.

`solve(state)` looks at the whole deal, hidden pieces included (it is an analysis tool, not a
fair player), and returns the maximum number of promoted towers reachable from `state` together
with one move sequence (canonical notation) that reaches it; play those moves, then `stop` (or
let the game end by itself).

Search: depth-first over positions with a transposition table. Positions are keyed canonically:
within a row every space is interchangeable (moves depend only on a space's row and contents),
so the key is, per row, the sorted multiset of space descriptors (nest left, tower height,
promoted). The value of a position is the most promoted towers reachable from it (stopping is
always allowed, so it is at least the current count). A node stops expanding as soon as it
reaches its upper bound: a row never ends with more than four promoted towers (its last
promotion needs a base nest that stays on the row), so the bound is the promoted count plus the
promotions each row may still take. (Counting the pieces still available per colour gives
nothing tighter: every piece outside a promoted tower can still move in principle.) With every
piece known, every fresh deal tried so far (hundreds of seeds, and deals searched for a low
optimum) reaches 8, where the search stops at the first line found; positions that cannot reach
8 are searched in full, which the transposition table keeps small (milliseconds).

Moves are tried promotions first, then builds, then foundations, which finds strong lines early.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from games.solace.layout import MOVE_NAMES, NUM_SPACES, ROW_SPACES, Deal


class Position(Protocol):
    """A Solace position as the solver reads it (games.solace.rules.SolaceState is one)."""

    @property
    def deal(self) -> Deal: ...
    @property
    def counts(self) -> Sequence[int]: ...
    @property
    def towers(self) -> Sequence[int]: ...
    @property
    def promoted(self) -> Sequence[bool]: ...
    @property
    def score(self) -> int: ...
    def legal_moves(self, seat: int) -> list[str]: ...


# A move: (kind, from, to); kinds ordered so that promotions are tried first.
_PROMOTION = 0
_BUILD = 1
_FOUNDATION = 2


@dataclass(frozen=True, slots=True)
class Solution:
    """The best score reachable and one line of moves reaching it."""

    best_score: int
    moves: list[str] = field(default_factory=list)


class _Search:
    __slots__ = ("code", "count", "deal", "memo", "promoted", "table", "tower")

    def __init__(self, state: Position) -> None:
        self.deal = state.deal
        # table[s][n][h]: the descriptor of space s holding n nest pieces under a tower of h.
        self.table: list[list[list[int]]] = []
        for nest in self.deal:
            rows = []
            for n in range(4):
                bits = 1
                for idx in range(3 - n, 3):
                    bits = bits * 2 + nest[idx]
                rows.append([bits * 4 + h for h in range(4)])
            self.table.append(rows)
        self.memo: dict[tuple[int, ...], int] = {}
        self.count: list[int] = []
        self.tower: list[int] = []
        self.promoted: list[bool] = []
        self.code: list[int] = []
        self.set_position(state)

    def set_position(self, state: Position) -> None:
        """Search from `state`'s position (its pieces taken from this search's deal)."""
        self.count = list(state.counts)
        self.tower = list(state.towers)
        self.promoted = list(state.promoted)
        self.code = [self._code(s) for s in range(NUM_SPACES)]

    # ------------------------------------------------------------------ position helpers
    def _code(self, s: int) -> int:
        """Space s's descriptor: promoted (255), or its nest's remaining colours and tower."""
        if self.promoted[s]:
            return 255
        return self.table[s][self.count[s]][self.tower[s]]

    def key(self) -> tuple[int, ...]:
        code = self.code
        return (*sorted(code[:5]), *sorted(code[5:]))

    def bound(self) -> int:
        """An upper bound on the final number of promoted towers: four per row at most."""
        promoted = self.promoted
        black = sum(promoted[:5])
        clear = sum(promoted[5:])
        return black + clear + max(0, 4 - black) + max(0, 4 - clear)

    def moves(self) -> list[tuple[int, int, int]]:
        deal, count, tower, promoted = self.deal, self.count, self.tower, self.promoted
        out: list[tuple[int, int, int]] = []
        for s in range(NUM_SPACES):
            n = count[s]
            if n == 0:
                continue
            h = tower[s]
            if n == 3:
                row = ROW_SPACES[deal[s][0]]
                if h == 0:
                    for t in row:
                        if t != s and count[t] == 3 and tower[t] == 0:
                            out.append((_FOUNDATION, s, t))
                elif h == 3:
                    for t in row:
                        if count[t] == 0 and not promoted[t]:
                            out.append((_PROMOTION, s, t))
                            break  # open spaces of a row are interchangeable
            else:
                need = 3 - n
                for t in ROW_SPACES[deal[s][3 - n]]:
                    if count[t] == 3 and tower[t] == need:
                        out.append((_BUILD, s, t))
        out.sort()
        return out

    def do(self, move: tuple[int, int, int]) -> None:
        kind, s, t = move
        if kind == _PROMOTION:
            self.tower[s] = 0
            self.promoted[t] = True
            self.code[t] = 255
        else:
            self.count[s] -= 1
            self.tower[t] += 1
            self.code[t] = self.table[t][self.count[t]][self.tower[t]]
        self.code[s] = self.table[s][self.count[s]][self.tower[s]]

    def undo(self, move: tuple[int, int, int]) -> None:
        kind, s, t = move
        if kind == _PROMOTION:
            self.tower[s] = 3
            self.promoted[t] = False
        else:
            self.count[s] += 1
            self.tower[t] -= 1
        self.code[s] = self.table[s][self.count[s]][self.tower[s]]
        self.code[t] = self.table[t][self.count[t]][self.tower[t]]

    # ------------------------------------------------------------------ search
    def value(self) -> int:
        key = self.key()
        memo = self.memo
        known = memo.get(key)
        if known is not None:
            return known
        best = sum(self.promoted)
        ceiling = self.bound()
        if best < ceiling:
            for move in self.moves():
                self.do(move)
                v = self.value()
                self.undo(move)
                if v > best:
                    best = v
                    if best >= ceiling:
                        break
        memo[key] = best
        return best

    def line(self, target: int) -> list[str]:
        out: list[str] = []
        while sum(self.promoted) < target:
            for move in self.moves():
                self.do(move)
                if self.value() == target:
                    out.append(MOVE_NAMES[move[1]][move[2]])
                    break
                self.undo(move)
            else:  # pragma: no cover - the memo guarantees a child reaching the value
                raise AssertionError("solver lost its line")
        return out


def solve(state: Position) -> Solution:
    """The maximum score reachable from `state` (every piece known) and moves reaching it."""
    if not state.legal_moves(0):
        return Solution(state.score, [])
    search = _Search(state)
    best = search.value()
    return Solution(best, search.line(best))
