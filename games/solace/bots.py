"""Solace's bot levels. Solace is a patience: levels are compared by their mean score.

- `greedy` looks one move ahead: it never stops while a move remains (the score only grows),
  promotes a full tower whenever it can, else builds (onto the tallest tower first, lifting a
  black piece first: it shows what was under it), and starts a tower only when nothing else is
  left.
- `strong` is `games.solace.expectimax.SolaceBot`, fed from the view alone: an exact search of the
  game as the player sees it, so no player without a look inside black pieces does better on
  average.
"""

from __future__ import annotations

import random

from engines.bots.base import Turn, levels
from games.solace.expectimax import SolaceBot
from games.solace.layout import BLACK, PARSE, STOP
from games.solace.rules import RULES, SolaceState


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


class StrongBot:
    """`games.solace.expectimax.SolaceBot` playing from a Turn: the best expected score there
    is for a player who sees what this seat sees. Its search is exact and does not watch the
    clock (the first decision of a fresh process takes up to about a second; later ones reuse
    its tables)."""

    def choose(self, turn: Turn, rng: random.Random) -> str | None:
        return SolaceBot().choose(RULES.from_view(turn.view, turn.seat, rng))


greedy = GreedyBot
strong = StrongBot


LEVELS = levels(greedy=greedy, strong=strong, expert=strong)
