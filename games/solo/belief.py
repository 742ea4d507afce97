"""A belief over the cards a seat cannot see: deals of the other hands and the draw pile that
agree with what the round's public log says about each hand (`games.solo.history`), weighted by
what players tend to keep.

A sample is made from a state that `RULES.from_view` dealt (sizes, the seat's own hand and the
discards as the view shows them): the unseen cards are dealt again so that every card of another
hand obeys the facts known of it (a card bound by "this hand held nothing playable on the top
card then" is not a playable one), the most constrained cards first, each by a weighted draw
without replacement (HAND_WEIGHT: greedy-like players shed action cards and high numbers first,
so what stays in hands is mostly low numbers). Where the facts cannot all be met (they assume a
player who plays like greedy; a person may draw with a playable card), the card is dealt
without them: a sample always comes out. Rejection of whole deals would waste the budget on the
long tail of such cases; binding the cards one by one costs a pass over the pool per card.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping, Sequence

from engines.contract import JSON, Seat
from games.solo.history import Decision, Fact, Timeline, replay, slot_rules
from games.solo.rules import (
    CARD_INDEX,
    EXTENDERS,
    FORMS,
    FULL_DECK,
    JOKERS,
    PLAYABLE,
    RANK_OF,
    X_FORMS,
    SoloState,
)


def _weight(card: str) -> float:
    rank = RANK_OF[card]
    if rank in JOKERS:
        return 0.8
    if rank in ("S", "R", "D", "X"):
        return 0.65
    return 0.9 if rank >= "6" else 1.35


HAND_WEIGHT = {card: _weight(card) for card in CARD_INDEX}
"""How much likelier than at random a card is in another seat's hand, by kind: measured on
greedy play (2 and 4 seats, every hand size; the ratio of the cards found in the next seat's
hand to those a uniform deal of the unseen cards puts there): jokers 0.7-0.95, action cards
0.5-0.8 (greedy sheds its costly cards first), numbers 6-9 0.65-1.0, 1-5 1.15-1.6. Most
players keep low cards and spend action cards too; the weights are rounded middles."""


TRIES = 3
"""Histories drawn for one sample of a hand (`mismatches`); the fewest misfits count."""


class Belief:
    """What a seat knows of the hidden hands, from its view: the facts of each other hand,
    made once a decision, and samples of the hidden cards that obey them."""

    __slots__ = ("facts", "known", "mixed", "players", "rules", "seat", "timelines")

    def __init__(self, view: Mapping[str, JSON], seat: Seat) -> None:
        self.seat = seat
        self.players: int = view["players"]
        self.mixed = bool(view["mixed_stacking"])
        self.facts: dict[Seat, list[Fact]]
        self.timelines: dict[Seat, Timeline]
        self.facts, self.timelines = replay(view, seat)
        sizes: Sequence[int] = view["hand_sizes"]
        self.known: dict[Seat, list[str]] = {
            other: timeline.known
            for other, timeline in self.timelines.items()
            if timeline.known is not None
        }
        """Cards known to be in another seat's hand (it holds a hand the seat gave away)."""
        self.rules: dict[Seat, list[frozenset[str]]] = {
            other: slot_rules(facts, sizes[other] - len(self.known.get(other, ())))
            for other, facts in self.facts.items()
        }

    def deal(self, state: SoloState, rng: random.Random) -> None:
        """Deal the hidden cards of `state` (a from_view sample for this seat) again by the
        belief, sizes kept. A hand whose drawn card waits (S5) is left as from_view dealt it
        (its waiting card must be a playable one)."""
        hands = state.hands
        waiting = state.current if state.drawn and state.current != self.seat else -1
        others = [other for other in range(state.n) if other not in (self.seat, waiting)]
        # The unseen cards: the whole deck less what the seat sees (its hand, the discards)
        # and a waiting hand, as from_view counts them (a setup's partial deck would leave some
        # out of the game: they may be dealt here too).
        unseen = Counter(FULL_DECK)
        unseen.subtract(hands[self.seat])
        unseen.subtract(state.discard)
        if waiting >= 0:
            unseen.subtract(hands[waiting])
        dealt: dict[Seat, list[str]] = {other: [] for other in others}
        for other in others:
            known = self.known.get(other)
            if known and all(unseen[card] >= k for card, k in Counter(known).items()):
                unseen.subtract(known)
                dealt[other] = list(known)
        pool = list(unseen.elements())
        keyed = sorted(
            ((rng.random() ** (1 / HAND_WEIGHT[card]), card) for card in pool), reverse=True
        )
        order = [card for _, card in keyed]
        taken = [False] * len(order)
        bound = [
            (forbidden, other)
            for other in others
            for forbidden in self.rules.get(other, ())
            if forbidden
        ]
        bound.sort(key=lambda item: -len(item[0]))
        for forbidden, other in bound:
            pick = -1
            for i, card in enumerate(order):
                if not taken[i] and card not in forbidden:
                    pick = i
                    break
            if pick < 0:  # the facts cannot all hold: deal this card without them
                pick = taken.index(False)
            taken[pick] = True
            dealt[other].append(order[pick])
        rest = [card for i, card in enumerate(order) if not taken[i]]
        for other in others:
            need = len(hands[other]) - len(dealt[other])
            dealt[other].extend(rest[:need])
            del rest[:need]
            hands[other] = sorted(dealt[other], key=CARD_INDEX.__getitem__)
        rng.shuffle(rest)
        state.pile = rest[: len(state.pile)]

    def misfit(self, state: SoloState, rng: random.Random) -> int:
        """How many recorded decisions of the other seats a greedy player holding the hands of
        `state` would not have made (see `mismatches`)."""
        return sum(
            min(
                mismatches(timeline, state.hands[other], self.players, self.mixed, rng)
                for _ in range(TRIES)
            )
            for other, timeline in self.timelines.items()
            if not (state.drawn and other == state.current)
        )


def _assign(timeline: Timeline, hand: Sequence[str], rng: random.Random) -> list[tuple[int, str]]:
    """When each card of the hand's history came into it: (entry index, card), -1 for the
    deal, drawn at random among the orders that have every card come in before it is played.
    Empty when the counts do not add up."""
    times = [-1] * timeline.start
    for index, count in timeline.gains:
        times.extend([index] * count)
    cards = sorted(timeline.plays, reverse=True)  # latest played first
    if len(times) != len(cards) + len(hand):
        return []
    available = list(hand)  # cards that may have come in at or after the current slot
    out: list[tuple[int, str]] = []
    next_card = 0
    for time in reversed(times):  # latest slot first
        while next_card < len(cards) and cards[next_card][0] > time:
            available.append(cards[next_card][1])
            next_card += 1
        if not available:
            return []
        pick = rng.randrange(len(available))
        available[pick], available[-1] = available[-1], available[pick]
        out.append((time, available.pop()))
    return out


def mismatches(
    timeline: Timeline,
    hand: Sequence[str],
    players: int,
    mixed: bool,
    rng: random.Random,
) -> int:
    """How many of the recorded decisions of a hand's holders a greedy player would not have
    made, had the hand held `hand` now (its history drawn by `_assign`)."""
    from games.solo.bots import Table, greedy_move  # bots builds on this module

    arrivals = _assign(timeline, hand, rng)
    if not arrivals:
        return 0
    # Events in log order; at one entry: the decision in turn, the play, arrivals, chances.
    events: list[tuple[int, int, object]] = []
    for time, card in arrivals:
        events.append((time, 2, card))
    for index, card in timeline.plays:
        events.append((index, 1, card))
    for decision in timeline.decisions:
        events.append((decision.index, 3 if decision.move == "-" else 0, decision))
    events.sort(key=lambda event: (event[0], event[1]))
    held: list[str] = []
    wrong = 0
    for _, kind, payload in events:
        if kind == 2:
            held.append(payload)  # type: ignore[arg-type]
        elif kind == 1:
            if payload in held:
                held.remove(payload)
        elif isinstance(payload, Decision):
            if payload.move == "-":
                wrong += payload.top in held
                continue
            ordered = sorted(held, key=CARD_INDEX.__getitem__)
            moves = _moves(ordered, payload, players, mixed)
            table = Table.make(payload.seat, ordered, payload.sizes, payload.direction)
            choice = greedy_move(table, moves, False)
            wrong += choice != payload.move
    return wrong


def _moves(hand: Sequence[str], decision: Decision, players: int, mixed: bool) -> list[str]:
    """The moves of the holder of `hand` in turn at `decision` (calls left out), in the
    engine's order."""
    if decision.pending:
        allowed = EXTENDERS[mixed][RANK_OF[decision.top]]
    else:
        allowed = PLAYABLE[(decision.top, decision.colour)]
    out: list[str] = []
    previous = ""
    for card in hand:
        if card == previous or card not in allowed:
            continue
        previous = card
        if card in X_FORMS:
            forms = X_FORMS[card]
            out.extend(forms[t] for t in range(players) if t != decision.seat)
        else:
            out.extend(FORMS[card])
    out.append("draw")
    return out
