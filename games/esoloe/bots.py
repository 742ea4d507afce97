"""e-SOLO-e bots: `greedy` (one ply), `strong` (exact where its solver reaches in half its
budget, else alpha-beta with iterative deepening) and `expert` (the same, with most of a
larger budget for the solver).

The game is decided by threats: a placement that would win for a seat if it were its turn
(`EsoloeState.winning_placements`). A seat to move with a threat wins at once; a seat facing
threats on two squares can rarely stop both. The bots read only their seat's view and rebuild
the position with `RULES.from_view` (exact: the game hides nothing), in the view's rules edition:
every win test of the bots and of the shared search (`winning_placements`, legal 4th cubes,
results of `apply`) is the engine's, so each game is searched under the E8 it is played by
(edition 2: a cube that re-covers a set's cell of L, R or U with the same symbol makes no new
set, though the set may come over to it; edition 1: it made a new one).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Final

from engines.bots.base import Turn, levels
from engines.bots.search import IterativeDeepening
from games.esoloe import evaluation
from games.esoloe import solver as exact
from games.esoloe.rules import RULES, EsoloeState

WIN: Final = 10_000
"""A won position, less the plies it takes (a quick win beats a slow one)."""
FORK: Final = 500
"""Facing threats on two squares or more with no win of one's own: nearly lost."""
QUIET_WIN: Final = 1_000
"""A win found by the quiescence: likely, not proven (it only tried blocks on the threatened
square, and a cube elsewhere can break a line too)."""
THREAT: Final = 20
"""Per square where the seat not to move threatens: the mover must spend its cube there."""


def _squares(placements: Sequence[str]) -> set[str]:
    return {move[0] for move in placements}


def one_ply(state: EsoloeState, seat: int, move: str) -> int:
    """The greedy value of a move that does not win at once: the squares where it leaves the
    opponent a win (very bad), else the squares where it makes threats (the opponent can block
    one square per turn, so two threatened squares usually win)."""
    child, _ = state.apply(seat, move)
    lost = len(_squares(child.winning_placements(1 - seat)))
    made = len(_squares(child.winning_placements(seat)))
    return made - 100 * lost


class GreedyBot:
    """One ply: win now; else never leave the opponent a win; else make the most threats."""

    def choose(self, turn: Turn, rng: random.Random) -> str | None:
        state = RULES.from_view(turn.view, turn.seat, rng)
        seat = turn.seat
        wins = state.winning_placements(seat)
        if wins:
            return rng.choice(wins)
        best: list[str] = []
        best_score = -1_000_000
        for move in turn.moves:
            score = one_ply(state, seat, move)
            if score > best_score:
                best, best_score = [move], score
            elif score == best_score:
                best.append(move)
        return rng.choice(best)


class StrongBot(IterativeDeepening):
    """Negamax alpha-beta (principal variation search), deepened one ply at a time until the
    budget runs out (or, when `max_nodes` is given, until that many positions were searched:
    deterministic, for tests). The first depth is always searched to the end.

    A position whose mover threatens is won at once (no need to search it). At the depth limit
    a position facing threats on two squares is nearly lost (FORK); a position facing exactly one
    threatened square is searched on among the blocks there (a cheap quiescence), since the
    move is forced and a fork often hides behind it. A transposition table (placements commute)
    and killer moves (a reply that refutes one move often refutes its siblings) keep the tree
    small. A quiet leaf (no threat against the mover, or one past the quiescence's depth) is
    valued by the learned evaluation (games.esoloe.evaluation): its chance to win from a few
    features, fitted on solved positions. Root moves are tried best first: the previous
    depth's best, then by greedy's value, ties in an order shuffled by `rng`."""

    win = WIN
    extra_plies = 20
    exact_share = 0.4
    """The share of the budget the exact solver may take before the heuristic search."""
    search_share = 0.35
    """The heuristic search's share; the rest checks its choice with the solver."""
    check_share = 0.1
    """What the search leaves at least for that check."""
    margin = 0.08
    """The share of the budget left for the work between the steps (the decision ends by
    1 - margin of it, at the solver's first look at the clock after that)."""
    checked_with_nodes = 3
    """With a node cap (tests): how many of the search's moves are checked, each with the cap."""
    learned = True
    """Value quiet leaves by the learned evaluation (games.esoloe.evaluation), else by the
    threats against the mover alone (THREAT a square)."""

    def __init__(self, max_nodes: int | None = None, max_depth: int = 16) -> None:
        super().__init__(max_nodes, max_depth)

    def choose(self, turn: Turn, rng: random.Random) -> str | None:
        state = RULES.from_view(turn.view, turn.seat, rng)
        seat = turn.seat
        wins = state.winning_placements(seat)
        if wins:
            return rng.choice(wins)
        moves = list(turn.moves)
        if len(moves) == 1:
            return moves[0]
        # The book (games.esoloe.book): a position solved offline is played by its move.
        booked = exact.book_move(state)
        if booked is not None and booked in moves:
            return booked
        timed = self.max_nodes is None
        # One deadline for the whole decision: each step takes its share of the budget, but
        # never past it (a step overruns its share a little: its clock is read every few
        # positions, and the work between steps is not counted in any share).
        end = self.clock() + turn.budget * (1 - self.margin)

        def share(part: float, keep: float = 0.0) -> float:
            """`part` of the budget, but no more than leaves `keep` of it before the end."""
            return max(0.0, min(turn.budget * part, end - self.clock() - turn.budget * keep))

        # Exact play where the solver reaches (games.esoloe.solver): a won or drawn position is
        # played to keep its value; else the moves it proved lost are left out of the search.
        if self.max_nodes is None:
            solver = exact.shared_solver(state.edition)
        else:  # deterministic: the same answer whatever was searched before
            solver = exact.recorded_solver(state.edition)
        solver.clock = self.clock
        solved = solver.solve_move(
            state,
            max_nodes=self.max_nodes,
            seconds=share(self.exact_share) if timed else None,
        )
        if solved is not None and solved[0] == exact.WIN:
            return solved[1]
        if solved is not None and solved[0] == exact.DRAW:
            # A draw: among the moves that keep it, the one the search likes best (the opponent
            # may still go wrong); the solver proves them with a tenth of the budget.
            drawing = solver.moves_keeping(
                state,
                exact.DRAW,
                max_nodes=self.max_nodes,
                seconds=share(0.1, keep=self.search_share) if timed else None,
            )
            moves = [move for move in moves if move in drawing] or [str(solved[1])]
        lost = solver.losing_moves(state, moves)
        if len(lost) < len(moves):
            moves = [move for move in moves if move not in lost]
        rng.shuffle(moves)
        # Greedy's choice first: among moves the search cannot tell apart, the first one tried
        # stays chosen.
        greedy_value = {move: one_ply(state, seat, move) for move in moves}
        moves.sort(key=lambda move: -greedy_value[move])
        if timed:
            best = self.search(state, moves, share(self.search_share, keep=self.check_share))
        else:
            best = self.search(state, moves, turn.budget)
        # The search's choice, checked: if the solver proves it lost (a forced win for the
        # opponent the threats did not show in time), the next move in the search's order, as
        # long as the rest of the budget lasts.
        moves.remove(best)
        moves.insert(0, best)
        for tried, move in enumerate(moves):
            left = end - self.clock()
            if left <= 0 if timed else tried >= self.checked_with_nodes:
                return move
            child = exact.placed(state, move)
            if not child._can_move():
                return move
            if solver.value(child, self.max_nodes, None if self.max_nodes else left) != exact.WIN:
                return move
        return best

    def _negamax(self, state: EsoloeState, depth: int, alpha: int, beta: int, ply: int) -> int:
        self._tick()
        seat = state.to_move
        if seat is None:
            return 0  # a draw: a win is caught one ply earlier, as the mover's threat
        if state.winning_placements(seat):
            # Proven only if every move on the way was searched (not through a quiescence).
            return WIN - ply if depth >= 0 else QUIET_WIN
        moves = state.legal_moves(seat)
        if not moves:
            return 0
        threats = _squares(state.winning_placements(1 - seat))
        if depth <= 0:
            if len(threats) >= 2:
                return -FORK
            if not threats or depth < -2:
                if self.learned:
                    return evaluation.score(state, len(threats))
                return -THREAT * len(threats)
            moves = [m for m in moves if m[0] in threats]  # quiescence: the forced block
            if not moves:
                return -FORK  # the threat is on a full stack: no cube can go there
            return self._search_best(state, seat, moves, depth, alpha, beta, ply)[0]

        def order(first: str | None, killers: list[str]) -> list[str]:
            return sorted(moves, key=lambda m: (m != first, m not in killers, m[0] not in threats))

        return self._search_node(state.serialize(), state, order, depth, alpha, beta, ply)


class ExpertBot(StrongBot):
    """The strong bot that gives most of its (larger) budget to the exact solver: perfect play
    in every position it solves in time, which is most from the 7th cube on (docs/bots.md)."""

    exact_share = 0.6
    search_share = 0.2


def prepare() -> None:
    """Load the solved record and the book of the current edition into the process's solver
    (the bots read them at every decision; loading them takes about half a second)."""
    exact.shared_solver(RULES.edition)


def greedy() -> GreedyBot:
    return GreedyBot()


def strong() -> StrongBot:
    return StrongBot()


def expert() -> ExpertBot:
    return ExpertBot()


LEVELS = levels(greedy=greedy, strong=strong, expert=expert)
