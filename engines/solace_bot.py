"""A Solace bot that plays from what the player can see (L4), never from the hidden pieces.

It keeps `samples` possible deals ("worlds"), each drawn with `State.determinize`: the pieces
inside black pieces redrawn among themselves, consistently with everything seen so far. For each
decision every world values every legal move exactly (`solace_solver.DealSolver`, which keeps its
transposition table from one decision to the next), and the bot plays the move with the best mean
value (perfect-information Monte Carlo). Each world's value assumes every hidden piece known,
which flatters moves that leave a guess for later; so the best `candidates` moves are valued
again knowing only what the move itself reveals: worlds are grouped by what the move shows in
them, and each group plays its best next move on average. Ties keep the legal order, which puts
black-row moves first: settling the black row (whose nests are hidden) while the clear row can
still adapt plays markedly better than the reverse (6.75 against 5.53 points a game over the
same 100 deals, measured without the informed step).

When a move reveals pieces, the worlds that contradict
what was revealed are drawn again; the others are kept, which is the same as drawing them again
(they are already a fair draw from the deals consistent with what is known).

Nothing here reads a hidden piece: worlds come from `determinize`, which depends only on what the
player has seen, and a world is checked against the visible pieces only. Given the same random
generator, two positions that look the same get the same moves (tests check this).
"""

from __future__ import annotations

import random

from engines.solace import BLACK, PARSE, SolaceState
from engines.solace_solver import DealSolver

DEFAULT_SAMPLES = 12
DEFAULT_CANDIDATES = 4


def _shown(nest: tuple[int, int, int], left: int) -> tuple[int, ...]:
    """The colours seen in a nest of `left` pieces (its outer piece and what shows through)."""
    shown = []
    for idx in range(3 - left, 3):
        shown.append(nest[idx])
        if nest[idx] == BLACK:
            break
    return tuple(shown)


def _visible_slots(state: SolaceState) -> list[tuple[int, int]]:
    """(space, index in the deal triple) of every nest piece the player sees."""
    hidden = set(state.hidden_slots())
    return [
        (s, idx)
        for s, n in enumerate(state.counts)
        for idx in range(3 - n, 3)
        if (s, idx) not in hidden
    ]


class SolaceBot:
    """Plays one game at a time; call `choose` with each position of the game in turn."""

    def __init__(
        self,
        rng: random.Random,
        samples: int = DEFAULT_SAMPLES,
        candidates: int = DEFAULT_CANDIDATES,
    ) -> None:
        if samples < 1 or candidates < 1:
            raise ValueError("samples and candidates must be at least 1")
        self.rng = rng
        self.samples = samples
        self.candidates = candidates
        self._worlds: list[DealSolver] = []

    def _refresh(self, state: SolaceState) -> list[DealSolver]:
        """Worlds consistent with what `state` shows (the true deal when nothing is hidden)."""
        if not state.hidden_slots():
            return [DealSolver(state)]
        visible = _visible_slots(state)
        seen = state.deal
        worlds = [
            world
            for world in self._worlds
            if all(world.deal[s][idx] == seen[s][idx] for s, idx in visible)
        ]
        while len(worlds) < self.samples:
            worlds.append(DealSolver(state.determinize(0, self.rng)))
        self._worlds = worlds
        return worlds

    def choose(self, state: SolaceState) -> str:
        """The move to play in `state` (canonical notation; `stop` when nothing can gain)."""
        legal = state.legal_moves(0)
        if not legal:
            raise ValueError("the game is over; there is no move to choose")
        board = legal[:-1]  # "stop" is listed last
        if len(board) == 1:
            return board[0]
        worlds = self._refresh(state)
        values = [world.move_values(state) for world in worlds]
        totals = {move: sum(v[move] for v in values) for move in board}
        best = max(totals.values())
        if best <= state.score * len(worlds):
            return "stop"
        # Ties keep the legal order (B-row moves first; see the module's docstring).
        ranked = sorted(board, key=lambda move: -totals[move])[: self.candidates]
        if len(worlds) == 1 or len(ranked) == 1:
            return ranked[0]
        informed = {move: self._informed_total(state, worlds, move) for move in ranked}
        return max(ranked, key=lambda move: (informed[move], totals[move]))

    def _informed_total(self, state: SolaceState, worlds: list[DealSolver], move: str) -> int:
        """The worlds' total value of `move` when the next move is chosen knowing what `move`
        reveals (but not the rest): worlds are grouped by what `move` shows in them, and each
        group plays its best next move on average. Unlike a plain per-world optimum, this does
        not assume every hidden piece will be known, only the ones `move` uncovers."""
        s, t = PARSE[move]
        count, tower, promoted = list(state.counts), list(state.towers), list(state.promoted)
        if count[s] == 3 and tower[s] == 3:  # promotion
            tower[s] = 0
            promoted[t] = True
        else:
            count[s] -= 1
            tower[t] += 1
        after = (tuple(count), tuple(tower), tuple(promoted))
        groups: dict[tuple[int, ...], list[tuple[DealSolver, SolaceState]]] = {}
        for world in worlds:
            position = SolaceState(0, state.no_monochrome, world.deal, *after, False, 0)
            groups.setdefault(_shown(world.deal[s], count[s]), []).append((world, position))
        total = 0
        for group in groups.values():
            sums: dict[str, int] = {}
            for world, position in group:
                for name, value in world.move_values(position).items():
                    sums[name] = sums.get(name, 0) + value
            total += max(sums.values()) if sums else sum(p.score for _, p in group)
        return total


def play(state: SolaceState, rng: random.Random, samples: int = DEFAULT_SAMPLES) -> SolaceState:
    """Play `state` to its end with a fresh bot; returns the final state."""
    bot = SolaceBot(rng, samples)
    while state.to_act():
        state, _ = state.apply(0, bot.choose(state))
    return state
