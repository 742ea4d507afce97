"""Solace's bot levels. Solace is a patience: levels are compared by their mean score.

- `greedy` looks one move ahead: it never stops while a move remains (the score only grows),
  promotes a full tower whenever it can, else builds (onto the tallest tower first, lifting a
  black piece first: it shows what was under it), and starts a tower only when nothing else is
  left.
- `strong` is `engines.solace_bot.SolaceBot` (perfect-information Monte Carlo over sampled deals,
  with an informed second look at its best candidates), fed from the view alone.
"""

from __future__ import annotations

import random

from engines.bots.base import Turn
from engines.solace import BLACK, PARSE, RULES, STOP, SolaceState
from engines.solace_bot import DEFAULT_CANDIDATES, DEFAULT_SAMPLES, SolaceBot

FULL_SAMPLES_BUDGET = 0.5
"""Seconds of budget from which `strong` samples its full DEFAULT_SAMPLES deals. The slowest
decision measured with 12 samples took about 0.45 s (most take a few hundredths), and the cost
grows with the samples, so below this budget the samples shrink in proportion."""


def _greedy_key(state: SolaceState, move: str) -> tuple[int, int, int]:
    s, t = PARSE[move]
    n = state.counts[s]
    if n == 3 and state.towers[s] == 3:
        return (2, 0, 0)  # promotion: a point now
    lifted_black = int(state.deal[s][3 - n] == BLACK)  # the outer piece: always visible
    if n == 3:
        return (0, lifted_black, 0)  # foundation
    return (1, state.towers[t], lifted_black)  # build


class GreedyBot:
    """One ply: the move that looks best now (see the module's docstring)."""

    def choose(self, turn: Turn, rng: random.Random) -> str | None:
        board = [move for move in turn.moves if move != STOP]
        if not board:
            return turn.moves[0]
        state = RULES.from_view(turn.view, turn.seat, rng)
        return max(board, key=lambda move: _greedy_key(state, move))


Structure = tuple[tuple[int, ...], tuple[int, ...], tuple[bool, ...], int]


def _structure(state: SolaceState, ply: int) -> Structure:
    return (state.counts, state.towers, state.promoted, ply)


class StrongBot:
    """SolaceBot playing from a Turn. SolaceBot keeps its sampled deals from one decision to the
    next; they stay valid only while the game goes on from the move it chose, so this bot keeps
    them exactly then and starts afresh at any other position (a new game, or a position
    reached some other way)."""

    def __init__(
        self, samples: int = DEFAULT_SAMPLES, candidates: int = DEFAULT_CANDIDATES
    ) -> None:
        self.samples = samples
        self.candidates = candidates
        self._bot: SolaceBot | None = None
        self._expected: Structure | None = None

    def _samples(self, budget: float) -> int:
        share = min(1.0, max(0.0, budget) / FULL_SAMPLES_BUDGET)
        return max(1, round(self.samples * share))

    def choose(self, turn: Turn, rng: random.Random) -> str | None:
        state = RULES.from_view(turn.view, turn.seat, rng)
        ply = int(turn.view["moves_played"])
        samples = self._samples(turn.budget)
        if self._bot is None or self._expected != _structure(state, ply):
            self._bot = SolaceBot(rng, samples, self.candidates)
        self._bot.rng = rng
        self._bot.samples = samples
        move = self._bot.choose(state)
        after, _ = state.apply(turn.seat, move)
        self._expected = _structure(after, ply + 1)
        return move


greedy = GreedyBot
strong = StrongBot
