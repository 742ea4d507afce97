"""Solo bots: `greedy` (one-ply card sense) and `strong` (determinized playouts).

Both read only their seat's view and legal moves. The strong bot samples the hidden hands and
draw pile with `RULES.from_view`, so the positions it plays out are guesses consistent with what
the seat has seen, never the real ones.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from engines.bots.base import Turn
from engines.contract import JSON, Seat
from engines.solo import COLOUR_OF, COLOURS, PARSED, POINTS, RANK_OF, RULES, SoloState

# Scores of the greedy policy. Only their order matters; the gaps say how much one concern
# outweighs another.
GO_OUT: Final = 10_000.0
"""Playing one's last card ends the round (S13): nothing beats it."""
LATE_CALL: Final = 5_000.0
"""A late `solo` costs nothing and saves a 2-card penalty (S12)."""
CALL: Final = 1.0
"""Of the two forms of a play that leaves one card, the one with `!`."""
COLOURED: Final = 10.0
"""Any coloured card beats a joker: jokers are kept for when nothing else fits."""
JOKER: Final = 2.0
"""Still better than drawing a card."""
DRAW: Final = 0.0
SHED: Final = 1 / 3
"""Per point of the card shed: high cards first, they cost most at the round's end (S1)."""
FOLLOW: Final = 3.0
"""Per card of the hand left that matches the colour in force after the play."""
THREAT_SIZE: Final = 2
"""A seat holding this many cards or fewer may go out soon."""
ATTACK: Final = 30.0
"""Skipping, reversing away from, or making draw a seat that may go out soon."""
TEMPO: Final = 4.0
"""With 2 seats, Skip and Reverse give another turn (S7)."""
SIZE: Final = 8.0
"""Per card fewer in the hand received by a swap (S8)."""


@dataclass(frozen=True, slots=True)
class Table:
    """What the greedy policy looks at: a seat's own hand and the public facts, with the hand's
    colours counted once (a hand can grow large, and every move is scored against it)."""

    seat: Seat
    hand: Sequence[str]
    sizes: Sequence[int]
    direction: int
    held: Mapping[str, int]
    """Cards of the hand per colour; "" counts the jokers."""
    best_colour: str
    """The colour a Wild should name: the one with the most points in hand to shed."""

    @staticmethod
    def make(seat: Seat, hand: Sequence[str], sizes: Sequence[int], direction: int) -> Table:
        held = dict.fromkeys(("", *COLOURS), 0)
        weight = dict.fromkeys(COLOURS, 0)
        for card in hand:
            colour = COLOUR_OF[card]
            held[colour] += 1
            if colour:
                weight[colour] += 1 + POINTS[card]
        return Table(seat, hand, sizes, direction, held, max(COLOURS, key=weight.__getitem__))

    @staticmethod
    def of_view(view: Mapping[str, JSON], seat: Seat) -> Table:
        return Table.make(seat, view["hand"], view["hand_sizes"], view["direction"])

    @staticmethod
    def of_state(state: SoloState, seat: Seat) -> Table:
        """For playouts on a sampled state: the same facts, without building a whole view."""
        sizes = [len(hand) for hand in state.hands]
        return Table.make(seat, state.hands[seat], sizes, state.direction)

    @property
    def n(self) -> int:
        return len(self.sizes)

    def after(self, steps: int = 1) -> Seat:
        """The seat `steps` places after this one in the current direction."""
        return (self.seat + steps * self.direction) % self.n


def score(move: str, table: Table) -> float:
    """How much the greedy policy likes `move` (one of the seat's legal moves)."""
    if move == "solo":
        return LATE_CALL
    if move == "draw":
        return DRAW
    if move == "pass":  # keeping a drawn card: worth less than playing it
        return DRAW - 1
    card, named, target, call = PARSED[move]
    hand = table.hand
    if len(hand) == 1:
        return GO_OUT
    sizes = table.sizes
    rank = RANK_OF[card]
    mine = len(hand) - 1
    threat = [size <= THREAT_SIZE for size in sizes]
    value = CALL if call else 0.0
    if card == "WX":  # S8: every hand moves on; ours comes from the seat before us
        return value + JOKER + SIZE * (mine - sizes[table.after(-1)])
    if named:  # W, W4: name the colour we hold most of
        value += JOKER + (0.5 if named == table.best_colour else 0.0)
        if card == "W4" and threat[table.after()]:
            value += ATTACK
        return value
    follow = table.held[COLOUR_OF[card]] + table.held[""] - 1  # cards left that will match
    value += COLOURED + SHED * POINTS[card] + FOLLOW * follow
    following = table.after()
    if rank == "X":  # S8: we take the target's hand
        return value + SIZE * (mine - sizes[target]) + (ATTACK if threat[target] else 0.0)
    if rank in ("S", "D") and threat[following]:
        value += ATTACK
    if rank == "R":
        if table.n == 2:
            value += ATTACK if threat[following] else 0.0
        elif threat[following] and not threat[table.after(-1)]:
            value += ATTACK
    if rank in ("S", "R") and table.n == 2:
        value += TEMPO
    return value


def greedy_move(table: Table, moves: Sequence[str], optional: bool) -> str | None:
    """The best-scored move, the first in legal order on ties; None when the chance is optional
    and no move is worth taking (every jump-in sheds a card, so this is rare)."""
    best = max(moves, key=lambda move: score(move, table))
    if optional and score(best, table) < DRAW:
        return None
    return best


class GreedyBot:
    """One-ply card sense: go out, call Solo, shed high cards, keep jokers for when nothing else
    fits, attack a seat about to go out, swap only for a smaller hand, jump in whenever that
    sheds a card without taking a bigger hand."""

    def choose(self, turn: Turn, rng: random.Random) -> str | None:
        return greedy_move(Table.of_view(turn.view, turn.seat), turn.moves, turn.optional)


# --------------------------------------------------------------------------------------------
# Search

HORIZON: Final = 400
"""Plies a playout may run before the seat is judged by the points left in its hand."""
MARGIN: Final = 0.5
"""With 2 seats, the value of a round beyond winning it: this much per 100 points of the swing
(the points the other seat loses less the points this one loses). Who wins a round is decided
by a few cards, and most samples give every candidate the same result; the swing tells apart
the near-misses too, so fewer samples separate the candidates (and in a game of several
rounds the points are what count)."""
CONFIDENCE: Final = 0.5
"""Standard errors by which a searched move must beat greedy's, paired sample by sample: a
maximum over noisy means is biased upwards, and greedy's choice is a good default. The paired
differences of common samples are small, so a low bar suffices (with 1.5 and no MARGIN the
bot won 57.5% of 2-seat rounds on 200 games, with both 62.5%: a hint, not proof)."""


def _step(state: SoloState, declined: Seat | None) -> SoloState:
    """One action, as the arena orders them: optional chances first, nearest after the mover;
    then the seat to move. Every seat plays greedy; `declined` lets one chance pass."""
    current = state.current
    acting = state.to_act()
    if len(acting) > 1:
        n = state.n
        for offset in range(1, n):
            seat = (current + state.direction * offset) % n
            if seat in acting and seat != declined:
                move = greedy_move(Table.of_state(state, seat), state.legal_moves(seat), True)
                if move is not None:
                    return _apply(state, seat, move)
    move = greedy_move(Table.of_state(state, current), state.legal_moves(current), False)
    assert move is not None
    return _apply(state, current, move)


def _apply(state: SoloState, seat: Seat, move: str) -> SoloState:
    after, _ = state.apply(seat, move)
    assert isinstance(after, SoloState)
    return after


def playout(
    state: SoloState, seat: Seat, declined: Seat | None = None, deadline: float = math.inf
) -> float | None:
    """The value for `seat` of playing the round out greedily from `state`: with 2 seats, 1 for
    winning the round plus MARGIN per 100 points of the swing; with more, minus the points lost.
    Cut at HORIZON plies, the hands left are scored as if the round ended there. None once
    `deadline` (time.perf_counter) has passed: hands that grew large make long playouts."""
    start_round = state.round
    start_points = state.points
    for ply in range(HORIZON):
        if state.over or state.round != start_round:
            lost = [
                before - after for before, after in zip(start_points, state.points, strict=True)
            ]
            break
        if ply % 16 == 15 and time.perf_counter() > deadline:
            return None
        state = _step(state, declined)
        declined = None
    else:
        lost = [sum(POINTS[card] for card in hand) for hand in state.hands]
    mine = lost[seat]
    if state.n == 2:
        return (1.0 if mine == 0 else 0.0) + MARGIN * (lost[1 - seat] - mine) / 100
    return float(-mine)


def candidates(moves: Sequence[str], optional: bool) -> list[str | None]:
    """The choices worth searching: a play that may carry the call is searched with it only
    (without it the seat risks the penalty for nothing); None when the chance may pass."""
    present = set(moves)
    out: list[str | None] = [move for move in moves if move + "!" not in present]
    if optional:
        out.append(None)
    return out


class StrongBot:
    """Determinized flat Monte Carlo: each iteration samples the hidden cards once (from_view)
    and plays every candidate move out greedily for all seats on that same sample (the same
    hands, pile and reshuffles: common random numbers, so candidates are compared sample by
    sample). With 2 seats a playout counts the points swing besides the round (MARGIN). Greedy's
    own choice stands unless another move beats it, paired sample by sample, by more than the
    noise (CONFIDENCE standard errors): a short budget then costs nothing against greedy. Stops at
    the budget (an unfinished iteration is dropped), or after `iterations` when given, which
    makes it deterministic."""

    def __init__(self, iterations: int | None = None) -> None:
        self.iterations = iterations

    def choose(self, turn: Turn, rng: random.Random) -> str | None:
        options = candidates(turn.moves, turn.optional)
        fallback = GreedyBot().choose(turn, rng)
        if len(options) == 1 or (self.iterations is None and turn.budget <= 0):
            return fallback
        seat = turn.seat
        deadline = time.perf_counter() + turn.budget
        samples: list[list[float]] = []  # one value per option, per completed iteration
        while self.iterations is None or len(samples) < self.iterations:
            state = RULES.from_view(turn.view, seat, rng)
            # The first iteration always completes: the search needs one sample to answer.
            stop = deadline if self.iterations is None and samples else math.inf
            values: list[float] = []
            for option in options:
                if time.perf_counter() > stop:
                    break
                if option is None:
                    value = playout(state, seat, declined=seat, deadline=stop)
                else:
                    value = playout(_apply(state, seat, option), seat, deadline=stop)
                if value is None:
                    break
                values.append(value)
            if len(values) < len(options):
                break
            samples.append(values)
        return options[_pick(samples, options.index(fallback))]


def _pick(samples: Sequence[Sequence[float]], default: int) -> int:
    """The option with the best mean if it beats `default` by more than CONFIDENCE standard
    errors of their paired differences, else `default`."""
    count = len(samples)
    means = [sum(column) / count for column in zip(*samples, strict=True)]
    best = max(range(len(means)), key=means.__getitem__)
    if best == default or count < 2:
        return default if count < 2 else best
    diffs = [values[best] - values[default] for values in samples]
    mean = sum(diffs) / count
    variance = sum((d - mean) ** 2 for d in diffs) / (count - 1)
    return best if mean > CONFIDENCE * (variance / count) ** 0.5 else default


greedy = GreedyBot
strong = StrongBot
