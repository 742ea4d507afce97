"""Solo bots: `greedy` (one-ply card sense) and `strong` (determinized playouts).

Both read only their seat's view and legal moves. The strong bot samples the hidden hands and
draw pile with `RULES.from_view`, so the positions it plays out are guesses consistent with what
the seat has seen, never the real ones; it then redeals them by what the view tells of the
other hands (`games.solo.belief`: the round's public log and the seat's own hand history, so a
fresh bot knows the round as well as one that watched it; `_redeal` for a view from a server
without the log). Its playouts run on the engine itself, under the rules edition the
view names (`from_view` keeps it), so the sampled games follow the game's own rules: in
edition 2 a seat may jump in on its own card (S11) and the Solo call goes only with the play
(S12), in edition 1 neither.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Final, NamedTuple

from engines.bots.base import Turn, levels
from engines.contract import JSON, Seat
from games.solo.belief import HAND_WEIGHT, Belief
from games.solo.history import SWAPS as SWAPS
from games.solo.rules import (
    CARD_INDEX,
    COLOUR_OF,
    COLOURS,
    PARSED,
    PLAYABLE,
    POINTS,
    RANK_OF,
    RULES,
    SoloState,
)

# Scores of the greedy policy. Only their order matters; the gaps say how much one concern
# outweighs another.
GO_OUT: Final = 10_000.0
"""Playing one's last card ends the round (S13): nothing beats it."""
LATE_CALL: Final = 5_000.0
"""A late `solo` costs nothing and saves a 2-card penalty (S12; rules edition 1 only: edition 2
has no late call and never lists `solo`)."""
CALL: Final = 1.0
"""Of the two forms of a play that leaves one card, the one with `!`: always preferred, so the
bots never owe the penalty (in edition 2 the call can only go with the play, S12)."""
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


class Table(NamedTuple):
    """What the greedy policy looks at: a seat's own hand and the public facts, with the hand's
    colours counted once (a hand can grow large, and every move is scored against it). A named
    tuple: playouts make one at every ply, and a tuple is the cheapest to make."""

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
        held = {"": 0, "r": 0, "g": 0, "b": 0, "y": 0}
        weight = {"r": 0, "g": 0, "b": 0, "y": 0}
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
    """How much the greedy policy likes `move` (one of the seat's legal moves). Playouts call
    this for every move of every ply, hence the plain arithmetic on seats."""
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
    n = len(sizes)
    seat = table.seat
    direction = table.direction
    mine = len(hand) - 1
    value = CALL if call else 0.0
    if card == "WX":  # S8: every hand moves on; ours comes from the seat before us
        return value + JOKER + SIZE * (mine - sizes[(seat - direction) % n])
    following = (seat + direction) % n
    if named:  # W, W4: name the colour we hold most of
        value += JOKER + (0.5 if named == table.best_colour else 0.0)
        if card == "W4" and sizes[following] <= THREAT_SIZE:
            value += ATTACK
        return value
    held = table.held
    follow = held[COLOUR_OF[card]] + held[""] - 1  # cards left that will match
    value += COLOURED + SHED * POINTS[card] + FOLLOW * follow
    rank = RANK_OF[card]
    if rank == "X":  # S8: we take the target's hand
        threat = sizes[target] <= THREAT_SIZE
        return value + SIZE * (mine - sizes[target]) + (ATTACK if threat else 0.0)
    if rank in ("S", "D") and sizes[following] <= THREAT_SIZE:
        value += ATTACK
    if rank == "R":
        if n == 2:
            value += ATTACK if sizes[following] <= THREAT_SIZE else 0.0
        elif sizes[following] <= THREAT_SIZE and not sizes[(seat - direction) % n] <= THREAT_SIZE:
            value += ATTACK
    if rank in ("S", "R") and n == 2:
        value += TEMPO
    return value


def greedy_move(table: Table, moves: Sequence[str], optional: bool) -> str | None:
    """The best-scored move, the first in legal order on ties; None when the chance is optional
    and no move is worth taking (every jump-in sheds a card, so this is rare)."""
    best = moves[0]
    best_score = score(best, table)
    for move in moves[1:]:
        value = score(move, table)
        if value > best_score:
            best, best_score = move, value
    if optional and best_score < DRAW:
        return None
    return best


class GreedyBot:
    """One-ply card sense: go out, call Solo with the play (`!`; a late `solo` in edition 1
    should a call be missing), shed high cards, keep jokers for when nothing else fits, attack a
    seat about to go out, swap only for a smaller hand, jump in whenever that sheds a card
    without taking a bigger hand (in edition 2 on one's own card too, S11)."""

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
FINAL_MARGIN: Final = 0.1
"""MARGIN for a round that decides the game (every round of a one-round game): then only the
winner counts, and a large MARGIN would trade chances of winning for points (at 0.5, 20 points
kept in hand weigh as much as 10% of winning: enough to make the search shed high cards like
greedy rather than keep the cards that go out). Still above 0, to tell apart the near-misses."""
CONFIDENCE: Final = 0.5
"""Standard errors by which a searched move must beat greedy's, paired sample by sample: a
maximum over noisy means is biased upwards, and greedy's choice is a good default. The paired
differences of common samples are small, so a low bar suffices (with 1.5 and no MARGIN the
bot won 57.5% of 2-seat rounds on 200 games, with both 62.5%: a hint, not proof)."""
CONFIDENCE_MANY: Final = 1.5
"""CONFIDENCE with more than 2 seats. Their playouts are several times longer (fewer samples
in a budget) and their value, the points a seat loses, spreads far wider than a 2-seat
round's: at 0.5 the search left greedy's choice on noise and lost more points than greedy."""


def _step(state: SoloState, declined: Seat | None) -> SoloState:
    """One action, as the arena orders them: optional chances first, nearest after the mover
    (jump-ins S11, the state's edition deciding who may; in edition 1 late calls S12), each
    answered greedily (`declined` lets one chance pass); then the seat to move."""
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


PRUNE: Final = 2.0
"""Standard errors by which an option must trail the leader, paired sample by sample, to be
dropped from the search (racing): its samples go to the close contenders instead. With many
options (a Wild's four colours, a swap's targets) a flat search spends most of its budget on
clearly worse ones, and the more options reach the final comparison, the likelier a noisy one
looks best (the maximum of noisy means is biased upwards)."""
RACE_FROM: Final = 8
"""Iterations before the first pruning: a standard error needs a few samples."""
RACE_EVERY: Final = 4
"""Iterations between prunings (each costs a pass over the samples)."""


def _outcome(lost: Sequence[int], seat: Seat, points: Sequence[int], last: bool) -> float:
    """The value for `seat` of a round that cost each seat `lost` points, the seats holding
    `points` before it. With more than 2 seats, minus the points lost. With 2: when the round
    decides the game (`last` round of a rounds game, or a seat's points fall below 0), 1 for
    winning the game (0.5 for a tie) plus FINAL_MARGIN per 100 points of the swing (the points
    the other seat loses less the points this one loses); otherwise 1 for winning the round
    plus MARGIN per 100 points of the swing."""
    mine = lost[seat]
    if len(lost) != 2:
        return float(-mine)
    swing = lost[1 - seat] - mine
    final = [before - cost for before, cost in zip(points, lost, strict=True)]
    if last or min(final) < 0:
        ahead = final[seat] - final[1 - seat]
        won = 1.0 if ahead > 0 else 0.5 if ahead == 0 else 0.0
        return won + FINAL_MARGIN * swing / 100
    return (1.0 if mine == 0 else 0.0) + MARGIN * swing / 100


def playout(
    state: SoloState,
    seat: Seat,
    declined: Seat | None = None,
    deadline: float = math.inf,
    first: str | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> float | None:
    """The value for `seat` (`_outcome`) of playing `first` (a move of `seat`, if given), then the
    round out greedily for every seat, all on the engine. Cut at HORIZON plies, the hands left
    are scored as if the round ended there. None once `deadline` (by `clock`) has
    passed: hands that grew large make long playouts. `declined` lets that seat's optional
    chance pass at the first step."""
    start_round, start_points = state.round, state.points
    last = state.mode == "rounds" and state.round >= state.rounds
    if first is not None:
        state = _apply(state, seat, first)
    for ply in range(HORIZON):
        if state.over or state.round != start_round:
            lost = [
                before - after for before, after in zip(start_points, state.points, strict=True)
            ]
            break
        if ply % 16 == 15 and clock() > deadline:
            return None
        state = _step(state, declined)
        declined = None
    else:
        lost = [sum(POINTS[card] for card in hand) for hand in state.hands]
    return _outcome(lost, seat, start_points, last)


def candidates(moves: Sequence[str], optional: bool) -> list[str | None]:
    """The choices worth searching: a play that may carry the call is searched with it only
    (without it the seat risks the penalty for nothing); None when the chance may pass."""
    present = set(moves)
    out: list[str | None] = [move for move in moves if move + "!" not in present]
    if optional:
        out.append(None)
    return out


def seats_that_drew(view: Mapping[str, JSON], seat: Seat) -> list[Seat]:
    """The seats known, from the view alone, to have drawn at their last turn for want of a
    playable card: while the seat's own card is still on top and no draw is pending, every
    other seat whose turn came since played nothing, so each drew (S5) on that very top and
    colour (S9: after taking a stack, a normal turn follows; a drawn card that fits is played,
    by greedy at least). Their whole hands then hold nothing playable on it but swaps (see
    SWAPS), a strong hint that uniform sampling ignores. Those seats are the ones after the seat
    in the direction of play up to the seat to move (all the others when the seat is to move
    again), less the victim of a Skip; with 2 seats, a Skip or Reverse on top may mean the
    other seat never moved. The seat may be asked while another seat is to move when it may
    jump in on its own card (S11 in edition 2; in edition 1, its late call): the seats whose
    turn came before the mover's count then. An own jump-in in between changes nothing: play
    goes on from the jumper, so every one of those seats had its turn after the last card."""
    if view["top_played_by"] != seat or view["pending_draw"]:
        return []
    n: int = view["players"]
    mover: int = view["to_move"]
    rank = RANK_OF[view["top"]]
    if n == 2:
        return [1 - seat] if mover == seat and rank not in ("S", "R") else []
    direction: int = view["direction"]
    skipped = (seat + direction) % n if rank == "S" else -1
    out: list[Seat] = []
    other = (seat + direction) % n
    while other != mover and other != seat:
        if other != skipped:
            out.append(other)
        other = (other + direction) % n
    return out


def _redeal(
    state: SoloState,
    seat: Seat,
    drew: Sequence[Seat],
    forbidden: frozenset[str],
    rng: random.Random,
) -> None:
    """Redeal the other hands and the draw pile of a sampled `state`, sizes kept: hands by
    HAND_WEIGHT (weighted sampling without replacement: each pooled card gets the key
    random() ** (1 / weight), the highest keys fill the hands), the seats in `drew` with no
    `forbidden` card (see `seats_that_drew`), the rest a pile in random order. A hand with a
    drawn card waiting (S5) is left as from_view dealt it. When too few allowed cards exist
    for `drew`, the inference was wrong (a seat may draw by choice) and is dropped."""
    hands = state.hands
    waiting = state.current if state.drawn else -1
    others = [other for other in range(state.n) if other not in (seat, waiting)]
    pool = state.pile[:]
    for other in others:
        pool.extend(hands[other])
    keyed = sorted(((rng.random() ** (1 / HAND_WEIGHT[card]), card) for card in pool), reverse=True)
    order = [card for _, card in keyed]
    constrained = [other for other in drew if other in others]
    if constrained:
        need = sum(len(hands[other]) for other in constrained)
        if sum(card not in forbidden for card in order) < need:
            constrained = []
    dealt: dict[Seat, list[str]] = {}
    for other in constrained:
        size = len(hands[other])
        taken: list[str] = []
        rest: list[str] = []
        for card in order:
            if len(taken) < size and card not in forbidden:
                taken.append(card)
            else:
                rest.append(card)
        dealt[other] = taken
        order = rest
    for other in others:
        if other not in dealt:
            size = len(hands[other])
            dealt[other] = order[:size]
            del order[:size]
    for other, cards in dealt.items():
        hands[other] = sorted(cards, key=CARD_INDEX.__getitem__)
    rng.shuffle(order)
    state.pile = order


class StrongBot:
    """Determinized flat Monte Carlo: each iteration samples the hidden cards once (from_view,
    then `_redeal`) and plays every candidate move out greedily for all seats on that same
    sample (the same hands, pile and reshuffles: common random numbers, so candidates are
    compared sample by sample). With 2 seats a playout is worth the game when the round decides
    it, else the round, and a little of the points swing besides (`_outcome`). Candidates that
    clearly trail the leader are dropped as the samples come in (PRUNE), so the budget goes to
    the close ones. Greedy's own choice stands unless another move beats it, paired sample by
    sample, by more than the noise (CONFIDENCE standard errors): a short budget then costs
    nothing against greedy. Stops at the first clock reading past the budget (an unfinished
    iteration is dropped; when none finished, greedy's choice stands), or after `iterations`
    when given, which makes it deterministic.
    Nothing is remembered between decisions (the bot worker asks a fresh bot every time): what
    the round showed so far comes from the view's public log (`games.solo.belief`)."""

    def __init__(self, iterations: int | None = None) -> None:
        self.iterations = iterations
        self.clock: Callable[[], float] = time.perf_counter
        """Seconds from any fixed point: what the budget is measured on (tests give a fake)."""

    def choose(self, turn: Turn, rng: random.Random) -> str | None:
        options = candidates(turn.moves, turn.optional)
        fallback = GreedyBot().choose(turn, rng)
        if len(options) == 1 or (self.iterations is None and turn.budget <= 0):
            return fallback
        seat = turn.seat
        clock = self.clock
        deadline = clock() + turn.budget
        # A view with the round's log (every view of this engine) tells what each hand held;
        # one from a server before the log only what the top card implies (`_redeal`).
        belief = Belief(turn.view, seat) if "log" in turn.view else None
        drew = seats_that_drew(turn.view, seat)
        forbidden = PLAYABLE[(turn.view["top"], turn.view["colour"])] - SWAPS
        default = options.index(fallback)
        alive = list(range(len(options)))  # the options still searched (see PRUNE)
        samples: list[list[float]] = []  # one value per option, per completed iteration
        while self.iterations is None or len(samples) < self.iterations:
            if self.iterations is None and clock() > deadline:
                break
            state = RULES.from_view(turn.view, seat, rng)
            if belief is not None:
                belief.deal(state, rng)
            else:
                _redeal(state, seat, drew, forbidden, rng)
            # Every iteration stops at the budget, the first too: without a sample the
            # answer is greedy's (a decision never runs much past its budget).
            stop = deadline if self.iterations is None else math.inf
            values = [0.0] * len(options)  # a pruned option keeps 0.0, never read
            for index in alive:
                if clock() > stop:
                    break
                option = options[index]
                if option is None:
                    value = playout(state, seat, declined=seat, deadline=stop, clock=clock)
                else:
                    value = playout(state, seat, deadline=stop, first=option, clock=clock)
                if value is None:
                    break
                values[index] = value
            else:
                samples.append(values)
                if len(samples) >= RACE_FROM and len(samples) % RACE_EVERY == 0:
                    alive = _prune(samples, alive, default)
                continue
            break
        if not samples:
            return fallback
        columns = [[values[index] for index in alive] for values in samples]
        confidence = CONFIDENCE if turn.view["players"] == 2 else CONFIDENCE_MANY
        return options[alive[_pick(columns, alive.index(default), confidence)]]


def _prune(samples: Sequence[Sequence[float]], alive: list[int], default: int) -> list[int]:
    """`alive` less the options that the leader (the best mean) beats by more than PRUNE
    standard errors of their paired differences; `default` always stays."""
    leader = max(alive, key=lambda index: sum(values[index] for values in samples))
    return [
        index
        for index in alive
        if index in (leader, default) or not _beats(samples, leader, index, PRUNE)
    ]


def _beats(samples: Sequence[Sequence[float]], better: int, worse: int, errors: float) -> bool:
    """Whether option `better` beats `worse` by more than `errors` standard errors of their
    paired differences (sample by sample: the common random numbers cancel out). Needs 2+
    samples."""
    count = len(samples)
    diffs = [values[better] - values[worse] for values in samples]
    mean = sum(diffs) / count
    variance = sum((d - mean) ** 2 for d in diffs) / (count - 1)
    return mean > errors * math.sqrt(variance / count)


def _pick(samples: Sequence[Sequence[float]], default: int, confidence: float = CONFIDENCE) -> int:
    """The option with the best mean if it beats `default` by more than `confidence` standard
    errors of their paired differences, else `default`."""
    count = len(samples)
    means = [sum(column) / count for column in zip(*samples, strict=True)]
    best = max(range(len(means)), key=means.__getitem__)
    if count < 2 or best == default:
        return default
    return best if _beats(samples, best, default, confidence) else default


greedy = GreedyBot
strong = StrongBot


LEVELS = levels(greedy=greedy, strong=strong, expert=strong)
