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
from games.solo.history import Fact, replay, slot_rules
from games.solo.rules import CARD_INDEX, FULL_DECK, JOKERS, RANK_OF, SoloState


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


class Belief:
    """What a seat knows of the hidden hands, from its view: the facts of each other hand,
    made once a decision, and samples of the hidden cards that obey them."""

    __slots__ = ("facts", "known", "rules", "seat")

    def __init__(self, view: Mapping[str, JSON], seat: Seat) -> None:
        self.seat = seat
        self.facts: dict[Seat, list[Fact]]
        self.known: dict[Seat, list[str]]
        """Cards known to be in another seat's hand (it holds a hand the seat gave away)."""
        self.facts, self.known = replay(view, seat)
        sizes: Sequence[int] = view["hand_sizes"]
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
