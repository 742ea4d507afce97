"""The round's memory, rebuilt from a view alone: what the public log (`view["log"]`, see
`games.solo.rules.LOG_HELP`) says about the cards in the other seats' hands.

The log is public and the same for every seat (S14), so a fresh bot (the bot worker asks a new
one for every decision) knows as much of the round as one that watched it. Replaying the log
gives, for each hand now held by another seat, *facts* of the form "at that moment, the m cards
this hand held were none of these": a seat that drew instead of playing (S5) held nothing
playable then (a player who plays like greedy never draws with a playable card in hand, but
for a swap that would take a bigger hand), a seat that took a draw stack (S9) held nothing that
extends it, a seat that let a jump-in chance on a card go by (S11) held no copy of it (the
chance is asked before the seat to move plays), and a seat that played a card in turn held no
card that greedy would have played instead whatever the rest of its hand (`_preferred`). How
many of those cards are still in the hand now is counted from the plays since: a played card
that the fact forbids came from a later draw, any other may have been one of them (counted as
one, the cautious reading).

Hands are followed through swaps (S8): a fact belongs to a hand, not to a seat, and the seat
that holds the hand now inherits it. The seat's own view adds its hand history (its hand after
the deal, each of its draws and each swap of its hand): replayed with the log, it gives the
seat's hand at every moment, so a hand it gave away in a swap is known as it was then. These
facts assume players who play like greedy; the belief deals without a fact that cannot hold.
Nothing here sees a hidden card: only the view.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from engines.contract import JSON, Seat
from games.solo.rules import COLOUR_OF, EXTENDERS, PARSED, PLAYABLE, POINTS, RANK_OF

SWAPS = frozenset({"rX", "gX", "bX", "yX", "WX"})
"""Cards a greedy player may hold and still draw: a swap for a bigger hand scores below
drawing; nor does it always jump in with one."""


@dataclass(slots=True)
class Fact:
    """At log entry `index`, the `held` cards of a hand were none of `forbidden`; `kept` of
    them are still in the hand now (see the module docstring)."""

    index: int
    forbidden: frozenset[str]
    held: int
    kept: int = 0


@dataclass(slots=True)
class _Hand:
    facts: list[Fact]
    size: int
    """The hand's size as the replay goes, from 0 (made absolute at the end)."""
    plays: list[tuple[int, str]]
    """(entry index, card) of every card played from the hand."""


_BONUS = {"S": 34.0, "R": 34.0, "D": 30.0}
"""The most a coloured card's greedy score may gain from its kind: an attack on a seat about to
go out (games.solo.bots.ATTACK), and with 2 seats another turn (TEMPO)."""


def _preferred(card: str, top: str, colour: str) -> frozenset[str]:
    """The cards that a greedy player who played `card` in turn on (`top`, `colour`), with no
    draw pending and free to choose, cannot have held then, whatever else it held: it plays a
    coloured card before any joker (so a W named after none was playable but swaps), and of the
    playable cards of one colour the one that sheds the most points (games.solo.bots.score:
    cards of a colour differ only by their points and the kind's bonus, at most _BONUS)."""
    playable = PLAYABLE[(top, colour)]
    if card == "W":
        return frozenset(c for c in playable if COLOUR_OF[c] and c not in SWAPS)
    own = COLOUR_OF[card]
    if not own or card in SWAPS:
        return frozenset()
    bar = POINTS[card] / 3 + _BONUS.get(RANK_OF[card], 0.0)
    return frozenset(
        c for c in playable if COLOUR_OF[c] == own and c not in SWAPS and POINTS[c] / 3 > bar
    )


def _parse(entry: str) -> tuple[int, str, str]:
    seat, _, rest = entry.partition(" ")
    word, _, arg = rest.partition(" ")
    return int(seat), word, arg


def hand_facts(view: Mapping[str, JSON], seat: Seat) -> dict[Seat, list[Fact]]:
    """For every other seat, the facts about the hand it holds now (see `replay`)."""
    return replay(view, seat)[0]


def replay(
    view: Mapping[str, JSON], seat: Seat
) -> tuple[dict[Seat, list[Fact]], dict[Seat, list[str]]]:
    """Replay the view's log. For every other seat: the facts about the hand it holds now, each
    with `kept` (how many of its cards may still be in the hand), oldest first (none when the
    log cannot be followed: no log, or the game is over); and for the seats that hold a hand
    this seat gave away in a swap (S8), the cards of it known to be there still: what the seat
    held then (its view's hand history and the log tell it), less the cards played from the
    hand since when they were among them (the facts then bind only the other cards)."""
    n: int = view["players"]
    log: Sequence[str] = view.get("log") or []
    facts_out: dict[Seat, list[Fact]] = {s: [] for s in range(n) if s != seat}
    if not log or view.get("finished"):
        return facts_out, {}
    discard: Sequence[str] = view["discard"]
    plays = sum(1 for entry in log if _parse(entry)[1] in ("play", "jump"))
    # When the draw pile was refilled from the discards (S6), the round's first top card is
    # unknown, and with it the facts before the first play: those are dropped.
    start_top = discard[0] if plays == len(discard) - 1 else ""
    mixed = bool(view["mixed_stacking"])
    edition = view.get("edition", 2)
    hands = [_Hand([], 0, []) for _ in range(n)]
    held_by = list(range(n))  # held_by[seat] = the hand index it holds
    top = start_top
    colour = COLOUR_OF[top] if top else "?"
    direction = 1
    pending = 0
    # The seat's own hand as the replay goes (from its view's hand history), and for each hand
    # it gave away in a swap, when and what it held then.
    snapshots: dict[int, list[str]] = {}
    for entry in view.get("hand_history") or []:
        index_text, *cards = str(entry).split(" ")
        snapshots[int(index_text)] = cards
    mine: list[str] | None = snapshots.get(0)
    mine = list(mine) if mine is not None else None
    anchors: dict[int, tuple[int, list[str]]] = {}

    index = 0
    while index < len(log):
        actor, word, arg = _parse(log[index])
        hand = hands[held_by[actor]]
        if word == "draw":
            count_text, _, fits = arg.partition(" ")
            count = int(count_text)
            if not pending and top:
                forbidden = PLAYABLE[(top, colour)] - SWAPS
                # An unplayable drawn card (no `fits`) is no more playable than the rest.
                held = hand.size + (count if not fits else 0)
                hand.facts.append(Fact(index, forbidden, held))
            hand.size += count
        elif word == "take":
            if top and pending:
                extenders = EXTENDERS[mixed][RANK_OF[top]]
                hand.facts.append(Fact(index, extenders, hand.size))
            hand.size += int(arg)
            pending = 0
        elif word == "penalty":  # (after its play: see below)
            hand.size += int(arg)
        elif word in ("play", "jump"):
            card, named, target, _ = PARSED["play " + arg]
            forced = index > 0 and log[index - 1] == f"{actor} draw 1 fits"
            if word == "play" and not forced and top and not pending:
                preferred = _preferred(card, top, colour)
                if preferred:
                    hand.facts.append(Fact(index, preferred, hand.size - 1))
            hand.size -= 1
            hand.plays.append((index, card))
            if actor == seat and mine is not None:
                if card in mine:
                    mine.remove(card)
                else:
                    mine = None  # the records disagree: forget what the seat held
            # S12: a penalty drawn at this play goes to the hand before the play's effect.
            while index + 1 < len(log) and _parse(log[index + 1])[1] == "penalty":
                index += 1
                penalised, _, count_text = _parse(log[index])
                hands[held_by[penalised]].size += int(count_text)
                if penalised == seat:
                    mine = None  # its cards come with the snapshot after the move
            own_hand = held_by[seat]
            top = card
            rank = RANK_OF[card]
            colour = named or ("" if rank == "WX" else COLOUR_OF[card])
            following = (actor + direction) % n
            if rank == "R":
                direction = -direction
                following = actor if n == 2 else (actor + direction) % n
            elif rank == "S":
                following = (following + direction) % n
            elif rank == "D":
                pending += 2
            elif rank == "W4":
                pending += 4
            elif rank == "X":
                held_by[actor], held_by[target] = held_by[target], held_by[actor]
            elif rank == "WX":
                held_by = [held_by[(s - direction) % n] for s in range(n)]
            if held_by[seat] != own_hand and mine is not None:
                anchors[own_hand] = (index, mine)  # S8: the seat knows what it gave away
                mine = None
            if card not in SWAPS:
                # S11: every seat but the one to move (edition 1: and the card's player) had
                # the chance to jump in with a copy, before the seat to move acted; seats that
                # jump in with it in the entries that follow were asked later.
                takers = {following}
                ahead = index + 1
                while ahead < len(log):
                    next_actor, next_word, next_arg = _parse(log[ahead])
                    if next_word != "jump" or PARSED["play " + next_arg][0] != card:
                        break
                    takers.add(next_actor)
                    ahead += 1
                for other in range(n if ahead < len(log) else 0):  # else: still open
                    if other in takers or (edition == 1 and other == actor):
                        continue
                    other_hand = hands[held_by[other]]
                    other_hand.facts.append(Fact(index, frozenset((card,)), other_hand.size))
        if index + 1 in snapshots:
            mine = list(snapshots[index + 1])
        index += 1
    sizes: Sequence[int] = view["hand_sizes"]
    for holder, h in enumerate(held_by):  # replayed sizes are relative: make them absolute
        offset = sizes[holder] - hands[h].size
        for fact in hands[h].facts:
            fact.held += offset
    known_out: dict[Seat, list[str]] = {}
    for other in facts_out:
        h = held_by[other]
        hand = hands[h]
        later = len(hand.plays)
        bound = sizes[other]
        # Newest first: a card held at an older fact and still held was held at every later one.
        for fact in reversed(hand.facts):
            while later and hand.plays[later - 1][0] > fact.index:
                later -= 1
            spent = sum(1 for _, card in hand.plays[later:] if card not in fact.forbidden)
            fact.kept = max(0, min(bound, fact.held - spent))
            bound = fact.kept
        known: list[str] | None = None
        if h in anchors:
            given, cards = anchors[h]
            known = list(cards)
            for when, card in hand.plays:
                if when > given and card in known:
                    known.remove(card)
            if len(known) > sizes[other]:
                known = None  # the records disagree: the anchor is dropped
        if known is None:
            facts_out[other] = [fact for fact in hand.facts if fact.kept > 0]
        else:  # the known cards are the hand's oldest; the facts bind the cards drawn since
            known_out[other] = known
            facts_out[other] = [
                Fact(fact.index, fact.forbidden, fact.held, fact.kept - len(known))
                for fact in hand.facts
                if fact.index > anchors[h][0] and fact.kept > len(known)
            ]
    return facts_out, known_out


def slot_rules(facts: Sequence[Fact], size: int) -> list[frozenset[str]]:
    """The forbidden cards of each card of a hand of `size` (most constrained first): the
    `kept` cards of a fact are the hand's oldest, so card x is bound by every fact with
    kept > x."""
    rules: list[frozenset[str]] = []
    for x in range(size):
        forbidden: frozenset[str] = frozenset()
        for fact in facts:
            if fact.kept > x:
                forbidden |= fact.forbidden
        rules.append(forbidden)
    return rules
