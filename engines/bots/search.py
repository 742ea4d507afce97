"""The search the two-player perfect-information bots share: negamax alpha-beta (principal
variation search) deepened one ply at a time until the budget runs out, or, when `max_nodes`
is given, until that many positions were searched (deterministic, for tests). The first depth
is always searched to the end, so a move is never chosen blind. Each game adds its node search
(`_negamax`): its evaluation, move ordering, transposition table and killer moves.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any, ClassVar


class OutOfTime(Exception):
    """The budget (or the node cap) ran out in the middle of a depth."""


EXACT, LOWER, UPPER = range(3)
"""Transposition-table bounds."""


class IterativeDeepening:
    win: ClassVar[int]
    """A won position's value (less the plies it takes); at or near it the result is forced."""
    extra_plies: ClassVar[int] = 2
    """Plies a node search may go beyond the nominal depth (killer-move slots)."""

    def __init__(self, max_nodes: int | None, max_depth: int) -> None:
        self.max_nodes = max_nodes
        self.max_depth = max_depth
        self._nodes = 0
        self._depth = 0
        self._deadline = 0.0
        self._table: dict[bytes, tuple[int, int, int, str | None]] = {}
        self._killers: list[list[str]] = []
        self.clock: Callable[[], float] = time.perf_counter
        """Seconds from any fixed point: what the budget is measured on (tests give a fake)."""

    def search(self, state: Any, moves: list[str], budget: float) -> str:
        """The best of `moves` (tried in the given order first; never empty) for the seat to
        move in `state`, searched for about `budget` seconds."""
        self._nodes = 0
        self._deadline = self.clock() + budget
        self._table = {}
        self._killers = [[] for _ in range(self.max_depth + self.extra_plies)]
        best = moves[0]
        for depth in range(1, self.max_depth + 1):
            self._depth = depth
            try:
                value, move = self._root(state, moves, depth)
            except OutOfTime:
                break
            best = move
            moves.remove(move)
            moves.insert(0, move)
            if abs(value) >= self.win - 100:
                break  # a forced result: deeper search cannot change it
        return best

    def _tick(self) -> None:
        self._nodes += 1
        if self._depth == 1:
            return  # the first depth always ends
        if self.max_nodes is not None:
            if self._nodes > self.max_nodes:
                raise OutOfTime
        elif self._nodes & 7 == 0 and self.clock() > self._deadline:
            raise OutOfTime

    def _root(self, state: Any, moves: Sequence[str], depth: int) -> tuple[int, str]:
        seat = state.to_move
        win = self.win
        alpha, best = -win - 1, moves[0]
        for i, move in enumerate(moves):
            child, _ = state.apply(seat, move)
            if i == 0:
                value = -self._negamax(child, depth - 1, -win - 1, win + 1, 1)
            else:
                value = -self._negamax(child, depth - 1, -alpha - 1, -alpha, 1)
                if value > alpha:
                    value = -self._negamax(child, depth - 1, -win - 1, -alpha, 1)
            if value > alpha:
                alpha, best = value, move
        return alpha, best

    def _negamax(self, state: Any, depth: int, alpha: int, beta: int, ply: int) -> int:
        """The value of `state` for its mover, searched `depth` plies deep (calls `_tick`)."""
        raise NotImplementedError
