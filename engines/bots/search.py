"""The search the two-player perfect-information bots share: negamax alpha-beta (principal
variation search) deepened one ply at a time until the budget runs out, or, when `max_nodes`
is given, until that many positions were searched (deterministic, for tests). The first depth
is always searched to the end, so a move is never chosen blind. Each game adds its node search
(`_negamax`): its evaluation and move ordering, on top of the shared transposition table and
killer moves (`_search_node`).
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

    def _probe(
        self, key: bytes, depth: int, alpha: int, beta: int
    ) -> tuple[int | None, str | None]:
        """(the stored value when it settles this node, else None; the stored best move)."""
        entry = self._table.get(key)
        if entry is None:
            return None, None
        entry_depth, flag, value, first = entry
        if entry_depth >= depth and (
            flag == EXACT or (flag == LOWER and value >= beta) or (flag == UPPER and value <= alpha)
        ):
            return value, first
        return None, first

    def _search_best(
        self,
        state: Any,
        seat: int,
        moves: Sequence[str],
        depth: int,
        alpha: int,
        beta: int,
        ply: int,
    ) -> tuple[int, str | None]:
        """Fail-hard alpha-beta over `moves`: (value, the move that set it, if any)."""
        best: str | None = None
        for move in moves:
            child, _ = state.apply(seat, move)
            value = -self._negamax(child, depth - 1, -beta, -alpha, ply + 1)
            if value > alpha:
                alpha, best = value, move
                if alpha >= beta:
                    break
        return alpha, best

    def _search_node(
        self,
        key: bytes,
        state: Any,
        order: Callable[[str | None, list[str]], list[str]],
        depth: int,
        alpha: int,
        beta: int,
        ply: int,
    ) -> int:
        """`_search_best` with the transposition table (`key`: the position) and killer moves:
        `order(table's move, killers)` gives the mover's moves in the order to try them."""
        value, first = self._probe(key, depth, alpha, beta)
        if value is not None:
            return value
        killers = self._killers[ply]
        seat = state.to_move
        value, best = self._search_best(state, seat, order(first, killers), depth, alpha, beta, ply)
        if best is not None and value >= beta and best not in killers:
            killers.insert(0, best)
            del killers[2:]
        flag = UPPER if value <= alpha else LOWER if value >= beta else EXACT
        self._table[key] = (depth, flag, value, best)
        return value
