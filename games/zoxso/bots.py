"""ZoxSo bots: `greedy` (one ply) and `strong` (alpha-beta with iterative deepening).

A game is won by a Xing landing on the Throne, by a step or by a flip, or by capturing the enemy
Xing (Z9), so both bots value a position by material and by how many turns each Xing needs to
reach the Throne (a flip onto a Stone, then one Stone step a turn). A move wins at once when it
ends on the Throne (only a Xing may end there, Z8: `C4-D4`, `d3^D3-D4`, or the bare flip
`e5^D4`) or on the enemy Xing's square: no need to play it to know. Both bots read only their
seat's view and rebuild the position with `RULES.from_view` (exact: the game hides nothing, Z4),
in the view's rules edition, and choose among the moves that edition lists: in edition 2 (the
revised Z9) a Xing's flip onto the Throne ends the turn, so `e5^D4-D5` never comes up; in
edition 1 it can, and wins only when it takes the enemy Xing, which the capture test sees.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Final

from engines.bots.base import Turn, levels
from engines.bots.search import IterativeDeepening
from games.zoxso.rules import (
    DAO,
    MA,
    PEARL_ADJ,
    PEARL_INDEX,
    PEARL_STONES,
    RULES,
    SIDE_OF,
    STONE_INDEX,
    THRONE,
    TYPE_OF,
    XING,
    ZoxsoState,
)

WIN: Final = 100_000
"""A won position, less the plies it takes (a quick win beats a slow one)."""
VALUE: Final = (30, 50, 0)
"""Ma, Dao, Xing (the Xing is the game itself: its capture ends it)."""
RACE: Final = (0, 0, 90, 45, 20, 9, 4, 2, 1, 0, 0, 0, 0, 0)
"""By the turns a Xing needs to reach the Throne: 1 means it can win on its next turn."""
CENTRE: Final = 2
"""Per piece, per turn closer to the Throne than 6: pieces near the centre guard it."""
ATTACKED: Final = (300, 3000)
"""In Phase 1, a Xing on a Pearl next to an enemy piece (Z7: that piece or its chain can take
it), for Dark and for Light. Light's is lost when Phase 2 starts, since Dark moves first (Z4);
Dark may still take the attacker or run."""
THREATENED: Final = 100
"""In Phase 2, the same for the side to move (the other side's would be taken at once): a
threat it must spend its move on."""
EXPOSED: Final = (100, 2000)
"""In Phase 1, a Xing with an empty Pearl next to it while the enemy still has pieces to place:
pieces cannot move yet, so the enemy may attack it at leisure."""


def _manhattan(stone: int) -> int:
    return abs(stone % 7 - THRONE % 7) + abs(stone // 7 - THRONE // 7)


STONE_TURNS: Final[tuple[int, ...]] = tuple(_manhattan(s) for s in range(49))
"""Turns a piece on a Stone needs to reach the Throne, one orthogonal step a turn."""
PEARL_TURNS: Final[tuple[int, ...]] = tuple(
    min(max(1, _manhattan(t)) for t in PEARL_STONES[p]) for p in range(64)
)
"""From a Pearl: the first turn flips onto a corner Stone and may step once (Z6)."""


def _target(move: str) -> tuple[bool, int] | None:
    """(on a Pearl, index) of the square where a move ends; None for `pass`."""
    square = move[-2:]
    if square in PEARL_INDEX:
        return True, PEARL_INDEX[square]
    if square in STONE_INDEX:
        return False, STONE_INDEX[square]
    return None


def winning_moves(state: ZoxsoState, seat: int, moves: Sequence[str]) -> list[str]:
    """The moves that win at once (Z9): ending on the Throne (a Xing's step or flip there; no
    other piece may end on it, Z8), or on the enemy Xing."""
    pearls, stones = state.boards()
    enemy_xing = 1 + 3 * (1 - seat) + XING
    out = []
    for move in moves:
        if move.endswith("D4") and "@" not in move:
            out.append(move)
            continue
        target = _target(move)
        if target is not None:
            on_pearl, i = target
            if (pearls[i] if on_pearl else stones[i]) == enemy_xing:
                out.append(move)
    return out


def captured_value(state: ZoxsoState, move: str) -> int:
    """What the move captures (0: nothing)."""
    target = _target(move)
    if target is None or "@" in move:
        return 0
    pearls, stones = state.boards()
    on_pearl, i = target
    code = pearls[i] if on_pearl else stones[i]
    return VALUE[TYPE_OF[code]] if code else 0


def evaluate(state: ZoxsoState, seat: int) -> int:
    """The position for `seat`: material, each Xing's race to the Throne, pieces near it."""
    pearls, stones = state.boards()
    score = [0, 0]
    race = [len(RACE) - 1, len(RACE) - 1]
    for board, turns in ((pearls, PEARL_TURNS), (stones, STONE_TURNS)):
        for i, code in enumerate(board):
            if code:
                side, kind = SIDE_OF[code], TYPE_OF[code]
                if kind == XING:
                    race[side] = min(turns[i], len(RACE) - 1)
                else:
                    score[side] += VALUE[kind] + CENTRE * max(0, 6 - turns[i])
    for side in (0, 1):
        score[side] += RACE[race[side]]
        xing = 1 + 3 * side + XING
        if xing not in pearls:
            continue
        p = pearls.index(xing)
        enemy = 1 + 3 * (1 - side)
        near = [pearls[q] for q in PEARL_ADJ[p]]
        if any(enemy <= code < enemy + 3 for code in near):
            score[side] -= ATTACKED[side] if state.phase == 1 else THREATENED
        elif (
            state.phase == 1
            and 0 in near
            and sum(state.in_hand(1 - side, kind) for kind in (MA, DAO, XING)) > 0
        ):
            score[side] -= EXPOSED[side]
    for side in (0, 1):  # pieces still in hand (Phase 1) count as material
        for kind in (MA, DAO):
            score[side] += VALUE[kind] * state.in_hand(side, kind)
    return score[seat] - score[1 - seat]


class GreedyBot:
    """One ply: win now; else never leave the opponent a win; else the best evaluation after
    the move (captures, the Xing's race, pieces near the Throne), ties at random."""

    def choose(self, turn: Turn, rng: random.Random) -> str | None:
        state = RULES.from_view(turn.view, turn.seat, rng)
        seat = turn.seat
        wins = winning_moves(state, seat, turn.moves)
        if wins:
            return rng.choice(wins)
        best: list[str] = []
        best_score = -WIN - 1
        for move in turn.moves:
            child, _ = state.apply(seat, move)
            if child.finished:
                score = evaluate(child, seat)  # a draw by max_plies or passes
            elif winning_moves(child, 1 - seat, child.legal_moves(1 - seat)):
                score = -WIN
            else:
                score = evaluate(child, seat)
            if score > best_score:
                best, best_score = [move], score
            elif score == best_score:
                best.append(move)
        return rng.choice(best)


class StrongBot(IterativeDeepening):
    """Negamax alpha-beta (principal variation search), deepened one ply at a time until the
    budget runs out (or, when `max_nodes` is given, until that many positions were searched:
    deterministic, for tests). The first depth is always searched to the end.

    A position whose mover can win at once is valued without playing the move. Captures are
    tried first (most valuable victim first), then the transposition table's and the killer
    moves. Root moves are tried in an order shuffled by `rng`, best first from the previous
    depth, so equal moves are chosen at random."""

    win = WIN
    extra_plies = 2

    def __init__(self, max_nodes: int | None = None, max_depth: int = 12) -> None:
        super().__init__(max_nodes, max_depth)

    def choose(self, turn: Turn, rng: random.Random) -> str | None:
        state = RULES.from_view(turn.view, turn.seat, rng)
        seat = turn.seat
        wins = winning_moves(state, seat, turn.moves)
        if wins:
            return rng.choice(wins)
        moves = list(turn.moves)
        if len(moves) == 1:
            return moves[0]
        rng.shuffle(moves)
        moves.sort(key=lambda m: -captured_value(state, m))
        return self.search(state, moves, turn.budget)

    def _negamax(self, state: ZoxsoState, depth: int, alpha: int, beta: int, ply: int) -> int:
        self._tick()
        result = state.result()
        seat = state.to_move
        if result is not None:
            if not result.winners:
                return 0
            return WIN - ply if result.winners[0] == seat else -(WIN - ply)
        moves = state.legal_moves(seat)
        if winning_moves(state, seat, moves):
            return WIN - ply
        if depth <= 0:
            return evaluate(state, seat)
        pearls, stones = state.boards()
        key = bytes(pearls) + bytes(stones) + bytes((seat, state.phase))

        def order(first: str | None, killers: list[str]) -> list[str]:
            return sorted(
                moves, key=lambda m: (m != first, -captured_value(state, m), m not in killers)
            )

        return self._search_node(key, state, order, depth, alpha, beta, ply)


def greedy() -> GreedyBot:
    return GreedyBot()


def strong() -> StrongBot:
    return StrongBot()


LEVELS = levels(greedy=greedy, strong=strong, expert=strong)
