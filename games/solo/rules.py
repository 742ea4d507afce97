"""Solo (`solo`): Amigo's UNO-like card game for 2-10 seats. Rulings S1-S14 (docs/rules/solo.md).

Rules editions
--------------
A game keeps the edition it was created with (`SoloState.edition`; serialized, and shown in
views). Edition 2 (the current one) plays the revised S11 and S12; edition 1 (before them) is kept
so that games stored before the revision finish under their own rules. They differ in two places
only, each marked "edition 1 (before the revised S11/S12)" in the code:
- S11: in edition 2 any seat but the seat to move may jump in, the one that played the top card
  included (it may play its second copy on its own card); in edition 1 that seat may not.
- S12: in edition 2 the call is made only with the play (`!`); `solo` is not a move (refused as
  malformed: it is not in the edition's notation) and no `solo` event exists. In edition 1 a
  seat whose own play left it one card without the call may still call late with `solo`
  (listed for it, and in to_act/public_to_act, until another seat's next card is played).
The 2-card penalty and its timing are the same in both.

Model
-----
Cards are their notation strings (`r5`, `gD`, `yX`, `W`, `W4`, `WX`). Hands are kept sorted in
deck order (r1..r9 rS rR rD rX, g.., b.., y.., W W4 WX), so a hand is a canonical multiset and
legal moves come out in a deterministic order. The draw pile is stored top-last (`pile[-1]` is
drawn next); the discard pile bottom-to-top (`discard[-1]` is the top card). Per round the state
holds the seat to move, the direction, the colour in force (the top card's colour, the colour
named by a Wild / Wild Draw Four, or "" while a Swap-in-turn is on top: free play, S4), the
pending draw (S9), who played the top card (-1 for the card turned over at the round start), the
card that waits after a draw (S5) and the Solo bookkeeping (S12).

Sub-states of the seat to move and its legal moves (S4/S5/S9)
------------------------------------------------------------
- *Normal turn* (no pending draw, nothing waiting): every playable card of the hand (S4, in every
  form: a colour for W / W4, a target for a coloured X, with and without `!` when the play leaves
  exactly one card), then `draw` (always legal, even with a playable card: S5).
- *Draw pending* (S9, pending > 0): only the extensions — any Draw Two on a Draw Two stack, a Wild
  Draw Four on a Wild Draw Four stack, either card on either stack with `mixed_stacking` — and
  `draw`, which takes the whole pending amount. The same seat then takes a *normal turn* (it may
  play any playable card, including the ones just drawn, or `draw` 1). Extending with a Draw Two
  ignores the colour in force ("any colour").
- *Drawn card waiting* (S5): after `draw` 1 on a normal turn, when the drawn card is playable, the
  drawer's moves are that card's plays and `pass` (keep it; the turn ends). An unplayable drawn
  card, or drawing nothing from an empty pile (S6), ends the turn at once.
Other seats act out of turn (several seats can act at once; to_act() lists them all):
- *Jump-in* (S11): a seat other than the seat to move (edition 1: and other than the seat that
  played the top card) may play a card identical to the top card (same colour and rank; for
  jokers the same joker kind), in all its forms. Effects apply, play continues after the
  jumper, a waiting drawn card stays in the drawer's hand, a jumped D / W4 adds to the pending
  draw (or starts a new one). The seat to move never "jumps in": its identical card is an
  ordinary play (or an extension); while its drawn card waits it may only play that card (S5).
  A jump-in is hidden information: public_to_act() never lists it (S14).
- *Late call* (S12, edition 1 only): `solo`, listed for the seat whose own play left it one card
  without the call, while it still holds one card and until another seat's next card is played.
In both editions calling is recorded by a `!` play; `solo_called` in the view shows who called
and still holds one card (the flag drops when the hand size changes away from one), and
`exposed` the seat whose own play left it one card without the call: it draws the penalty when
another seat's next card is played, unless (edition 1) it calls late first.

S12 details: a play "after which (its effects included) the player holds exactly one card" is
computed with the effects: a coloured X gives the mover the target's hand, a WX the hand of the
seat before the mover in the current direction, and when the play closes someone's penalty
window the 2-card penalty (drawn before the effect, S12) is counted in that hand. A play of one's
last card ends the round (S13), so it never carries `!`. The penalty is checked whenever another
seat plays a card, including a jump-in and a round-ending last card (the exposed seat's own
jump-in is not another seat's card: it closes nothing); the penalised seat draws 2 (or what
exists, S6) with the card already on the discard pile, so the pile reshuffle may include the
card below it.

Other decisions
---------------
- Reverse with 2 seats (S7): the direction flips and the same seat moves again (a Skip).
- S3 with an explicit setup: round 1 starts with `start_seat` (default 0) and round r with
  `start_seat + r - 1`. The setup's top discard must be a number card (S3); hands must not be
  empty; the setup's cards need not be all 112. Later rounds deal the full deck with the RNG.
- Randomness: every shuffle uses random.Random(f"{seed}:{counter}") with `counter` in the state
  (0 is round 1's deal; every later deal and every reshuffle takes the next value).
- resign(seat): the game ends at once, mid-round hands are not scored, the seat's points become
  -1 (or stay lower), and the winners are the other seats with the most points (in 2 seats: the
  other seat).
- Result: winners are all seats tied at the top (S13 "most points wins"; no tie-break), scores
  are the points per seat.
- Events (S14): public `round_start`, `play`, `drew` {seat, count, reason: turn|stack|penalty},
  `reshuffled`, `kept`, `solo` (a late call: edition 1 only), `skipped`, `reversed`, `swapped`
  (sizes only), `hands_passed` (sizes only), `round_end` (all hands revealed, penalties,
  points), `game_end`, `resigned`; private `dealt` {cards} and `drew_cards` {cards} to the seat
  concerned.
- Public log (S14): the state keeps this round's public actions, one string each (LOG_HELP), and
  every view shows it as `log` (the same for every seat: who played what, who drew how many and
  why, who kept a drawn card); drawn cards are never named. A bot told a fresh view thus knows
  the round so far without remembering earlier decisions. A new round starts an empty log; a
  snapshot stored before the log existed loads with an empty one. A seat's own view adds
  `hand_history`: its hand after each change of this round that only it saw (the deal, its own
  draws, a swap of its hand), as `<log length> <cards...>`; with the log it tells the seat its
  hand at every moment of the round, hence what it gave away in a swap (S14: a seat sees its
  own drawn cards; no other seat's view shows them).
- determinize(seat, rng): the other hands and the draw pile are redealt keeping all sizes; a card
  waiting in another seat's hand after its draw is redrawn among the pooled cards that are
  playable there (the waiting card is known to be playable). from_view(view, seat, rng) deals
  the same way from the cards the seat has not seen (the full deck less its hand and the
  discards), so a bot told only its view gets a state to search.
"""

from __future__ import annotations

import json
import random
import re
from bisect import insort
from collections import Counter
from collections.abc import Mapping
from typing import Any, Final, NoReturn

from engines.canonical import canonical_json
from engines.contract import (
    JSON,
    Event,
    GameOver,
    IllegalMove,
    InvalidOptions,
    InvalidSetup,
    MalformedMove,
    NotYourTurn,
    Result,
    Seat,
    State,
    check_edition,
    check_options,
    check_seat,
)

# --------------------------------------------------------------------------------------------
# Cards (S1, notation)

COLOURS: Final = "rgby"
COLOUR_NAMES: Final = {"r": "red", "g": "green", "b": "blue", "y": "yellow"}
NUMBERS: Final = "123456789"
JOKERS: Final = ("W", "W4", "WX")
MAX_SEATS: Final = 10
HAND_SIZE: Final = 8


def _build_cards() -> tuple[list[str], dict[str, int], dict[str, int]]:
    kinds: list[str] = []
    copies: dict[str, int] = {}
    points: dict[str, int] = {}
    for colour in COLOURS:
        for rank in NUMBERS:
            kinds.append(colour + rank)
            copies[colour + rank] = 2
            points[colour + rank] = int(rank)
        for rank, count, value in (("S", 2, 20), ("R", 2, 10), ("D", 2, 30), ("X", 1, 30)):
            kinds.append(colour + rank)
            copies[colour + rank] = count
            points[colour + rank] = value
    for joker, value in zip(JOKERS, (40, 50, 40), strict=True):
        kinds.append(joker)
        copies[joker] = 4
        points[joker] = value
    return kinds, copies, points


CARDS, COPIES, POINTS = _build_cards()
CARD_INDEX: Final = {card: i for i, card in enumerate(CARDS)}
FULL_DECK: Final = tuple(card for card in CARDS for _ in range(COPIES[card]))
COLOUR_OF: Final = {card: ("" if card in JOKERS else card[0]) for card in CARDS}
RANK_OF: Final = {card: (card if card in JOKERS else card[1:]) for card in CARDS}
IS_NUMBER: Final = {card: RANK_OF[card] in NUMBERS for card in CARDS}
assert len(FULL_DECK) == 112


_sort_key: Final = CARD_INDEX.__getitem__  # deck order, for sorted hands


def _playable(card: str, top: str, colour: str) -> bool:
    """S4: a black joker, the colour in force, the top's number/symbol, or anything on a WX."""
    return (
        colour == ""
        or COLOUR_OF[card] == ""
        or COLOUR_OF[card] == colour
        or RANK_OF[card] == RANK_OF[top]
    )


# PLAYABLE[(top, colour in force)] = the cards that may be played (S4).
PLAYABLE: Final = {
    (top, colour): frozenset(card for card in CARDS if _playable(card, top, colour))
    for top in CARDS
    for colour in ("", *COLOURS)
}
DRAW_TWOS: Final = frozenset(colour + "D" for colour in COLOURS)
# EXTENDERS[mixed][top rank] = the cards that extend a pending draw (S9).
EXTENDERS: Final = {
    False: {"D": DRAW_TWOS, "W4": frozenset({"W4"})},
    True: {"D": DRAW_TWOS | {"W4"}, "W4": DRAW_TWOS | {"W4"}},
}

# Move strings, precomputed. FORMS[card]: the plays of a card without `!` (X: see X_FORMS).
FORMS: Final[dict[str, tuple[str, ...]]] = {}
X_FORMS: Final[dict[str, tuple[str, ...]]] = {}
# PARSED[move] = (card, named colour, target seat, call): every well-formed play up to 10 seats.
PARSED: Final[dict[str, tuple[str, str, int, bool]]] = {}
BANG: Final[dict[str, str]] = {}
for _card in CARDS:
    if _card in ("W", "W4"):
        FORMS[_card] = tuple(f"play {_card}:{c}" for c in COLOURS)
        for _c, _m in zip(COLOURS, FORMS[_card], strict=True):
            PARSED[_m] = (_card, _c, -1, False)
    elif RANK_OF[_card] == "X":
        X_FORMS[_card] = tuple(f"play {_card}@{t}" for t in range(MAX_SEATS))
        for _t, _m in enumerate(X_FORMS[_card]):
            PARSED[_m] = (_card, "", _t, False)
    else:
        FORMS[_card] = (f"play {_card}",)
        PARSED[f"play {_card}"] = (_card, "", -1, False)
for _m, (_card, _c, _t, _) in list(PARSED.items()):
    PARSED[_m + "!"] = (_card, _c, _t, True)
    BANG[_m] = _m + "!"

MOVE_RE: Final = re.compile(
    r"play (?P<card>[rgby](?:[1-9]|S|R|D|X)|W4|WX|W)(?::(?P<colour>[rgby]))?"
    r"(?:@(?P<target>[0-9]{1,3}))?(?P<call>!)?"
)
NOTATION_HELP: Final = (
    "moves are `play <card>[:<colour>][@<seat>][!]`, `draw`, `pass`; cards are "
    "r/g/b/y + 1..9, S, R, D, X, and the jokers W, W4, WX; colours r, g, b, y"
)
# edition 1 (before the revised S12): the late call `solo` is a move too.
NOTATION_HELP_1: Final = NOTATION_HELP.replace("`pass`;", "`pass`, `solo`;")
EDITION: Final[int] = 2
"""The rules edition new games are played under (see the module docstring)."""
EDITIONS: Final[tuple[int, ...]] = (1, 2)

DEFAULT_OPTIONS: Final[dict[str, JSON]] = {
    "players": 4,
    "start_points": 200,
    "mode": "points",
    "rounds": 5,
    "mixed_stacking": False,
}


def _int_option(options: Mapping[str, JSON], name: str, low: int, high: int) -> int:
    value = options[name]
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise InvalidOptions(f"option {name} must be an integer {low}..{high}, not {value!r}")
    return value


LOG_HELP: Final = (
    "the round's public log, oldest first, one entry per public action: `<seat> play <card>"
    "[:<colour>][@<seat>][!]` a play in turn, `<seat> jump <card>...` a jump-in (S11), `<seat> "
    "draw <count>` a draw instead of playing (S5; `<seat> draw 1 fits` when the drawn card is "
    "playable and waits), `<seat> pass` the waiting card kept, `<seat> take <count>` a draw "
    "stack taken (S9), `<seat> penalty <count>` the missed call's cards (S12), `<seat> solo` a "
    "late call (edition 1 only); counts are cards actually drawn (S6), never which cards"
)


def _log_entries(events: list[Event], drawn: str) -> tuple[str, ...]:
    """The public log entries of one move's events (S14: the cards drawn are never named;
    `drawn`: the mover's waiting card after the move, whose being playable is public)."""
    out: list[str] = []
    for event in events:
        if event.to is not None:  # private: dealt, drew_cards
            continue
        data = event.data
        kind = event.kind
        if kind == "play":
            move = "jump " if data["jump_in"] else "play "
            move += str(data["card"])
            if "colour" in data:
                move += f":{data['colour']}"
            if "target" in data:
                move += f"@{data['target']}"
            out.append(f"{data['seat']} {move}{'!' if data['solo'] else ''}")
        elif kind == "drew":
            word = {"turn": "draw", "stack": "take", "penalty": "penalty"}[str(data["reason"])]
            fits = " fits" if word == "draw" and drawn else ""
            out.append(f"{data['seat']} {word} {data['count']}{fits}")
        elif kind == "kept":
            out.append(f"{data['seat']} pass")
        elif kind == "solo":
            out.append(f"{data['seat']} solo")
    return tuple(out)


# --------------------------------------------------------------------------------------------
# State


class SoloState(State):
    """One position of a Solo game (see the module docstring for the model)."""

    __slots__ = (
        "_acting",
        "_moves",
        "called",
        "colour",
        "counter",
        "current",
        "direction",
        "discard",
        "drawn",
        "ed",
        "exposed",
        "first_seat",
        "hands",
        "log",
        "mixed",
        "mode",
        "n",
        "over",
        "owner",
        "pending",
        "pile",
        "points",
        "resigned",
        "round",
        "rounds",
        "seed",
        "seen",
        "start_points",
    )

    seed: int
    n: int
    start_points: int
    mode: str
    rounds: int
    mixed: bool
    points: list[int]
    round: int
    first_seat: int
    counter: int
    hands: list[list[str]]
    pile: list[str]
    discard: list[str]
    colour: str
    current: int
    direction: int
    pending: int
    owner: int
    drawn: str
    ed: int
    """The rules edition (1 or 2): fixed for the game's life."""
    exposed: int
    called: list[bool]
    over: bool
    resigned: int
    log: tuple[str, ...]
    """The round's public log (see LOG_HELP): shared between states, replaced on change."""
    seen: list[tuple[tuple[int, tuple[str, ...]], ...]]
    """Per seat, its hand after each change of this round that only it saw (the deal, its
    draws, a swap of its hand), with the log's length then: private to the seat (S14)."""
    _acting: tuple[int, ...] | None
    _moves: dict[int, list[str]]

    # ---- construction helpers

    def _clone(self) -> SoloState:
        new = SoloState.__new__(SoloState)
        new.seed = self.seed
        new.ed = self.ed
        new.n = self.n
        new.start_points = self.start_points
        new.mode = self.mode
        new.rounds = self.rounds
        new.mixed = self.mixed
        # Copy-on-write: points, hands, pile and discard are shared with `self`; the code that
        # changes one of them replaces it with a copy first (apply never mutates `self`).
        new.points = self.points
        new.round = self.round
        new.first_seat = self.first_seat
        new.counter = self.counter
        new.hands = self.hands[:]
        new.pile = self.pile
        new.discard = self.discard
        new.colour = self.colour
        new.current = self.current
        new.direction = self.direction
        new.pending = self.pending
        new.owner = self.owner
        new.drawn = self.drawn
        new.exposed = self.exposed
        new.called = self.called[:]
        new.over = self.over
        new.resigned = self.resigned
        new.log = self.log
        new.seen = self.seen
        new._acting = None
        new._moves = {}
        return new

    def _rng(self) -> random.Random:
        rng = random.Random(f"{self.seed}:{self.counter}")
        self.counter += 1
        return rng

    def _start_round(self, events: list[Event]) -> None:
        """S3: shuffle all 112 cards, deal 8 each, turn over a number card."""
        rng = self._rng()
        deck = list(FULL_DECK)
        rng.shuffle(deck)
        n = self.n
        self.hands = [
            sorted(deck[i * HAND_SIZE : (i + 1) * HAND_SIZE], key=_sort_key) for i in range(n)
        ]
        pile = deck[n * HAND_SIZE :]
        top = pile.pop()
        while not IS_NUMBER[top]:
            pile.append(top)
            rng.shuffle(pile)
            top = pile.pop()
        self.pile = pile
        self.discard = [top]
        self._reset_round((self.first_seat + self.round - 1) % n)
        self._round_events(events)

    def _reset_round(self, start: int) -> None:
        top = self.discard[-1]
        self.colour = COLOUR_OF[top]
        self.current = start
        self.direction = 1
        self.pending = 0
        self.owner = -1
        self.drawn = ""
        self.exposed = -1
        self.called = [False] * self.n
        self.log = ()
        self.seen = [((0, tuple(hand)),) for hand in self.hands]

    def _round_events(self, events: list[Event]) -> None:
        events.append(
            Event(
                "round_start",
                {
                    "round": self.round,
                    "start_seat": self.current,
                    "top": self.discard[-1],
                    "hand_sizes": [len(hand) for hand in self.hands],
                    "draw_pile_size": len(self.pile),
                    "points": self.points[:],
                },
            )
        )
        for seat, hand in enumerate(self.hands):
            events.append(Event("dealt", {"seat": seat, "cards": hand[:]}, seat))

    # ---- the contract

    @property
    def num_seats(self) -> int:
        return self.n

    def opening_events(self) -> list[Event]:
        """Round 1's `round_start` and each seat's private `dealt`, as later rounds send them."""
        events: list[Event] = []
        self._round_events(events)
        return events

    @property
    def edition(self) -> int:
        return self.ed

    def to_act(self) -> tuple[Seat, ...]:
        acting = self._acting
        if acting is None:
            acting = self._acting = self._compute_acting()
        return acting

    def public_to_act(self) -> tuple[Seat, ...]:
        """S14: the seat to move; never a jump-in, which would show a card in a hand. In
        edition 1 also a seat that may still make its late Solo call (its hand size and the
        missing call are public)."""
        if self.over:
            return ()
        if self.ed == 1:  # edition 1 (before the revised S12): the late call
            exposed = self.exposed
            if exposed >= 0 and exposed != self.current and len(self.hands[exposed]) == 1:
                return tuple(sorted((self.current, exposed)))
        return (self.current,)

    def _compute_acting(self) -> tuple[int, ...]:
        if self.over:
            return ()
        current = self.current
        top = self.discard[-1]
        if self.ed == 1:  # edition 1 (before the revised S11/S12): no jump-in on one's own
            barred, late = self.owner, self.exposed  # card; the late call
        else:  # S11: anyone holding the top card, its player included; S12: no late call
            barred = late = -1
        seats = []
        for seat, hand in enumerate(self.hands):
            if (
                seat == current
                or (seat != barred and top in hand)
                or (seat == late and len(hand) == 1)
            ):
                seats.append(seat)
        return tuple(seats)

    def legal_moves(self, seat: Seat) -> list[str]:
        return self._legal(seat)[:]  # a copy: callers may sort or shuffle it

    def _legal(self, seat: Seat) -> list[str]:
        """The cached legal moves of `seat` (not to be changed)."""
        moves = self._moves.get(seat) if type(seat) is int else None
        if moves is None:
            if type(seat) is not int or not 0 <= seat < self.n:
                check_seat(self, seat)
            moves = self._moves[seat] = self._compute_moves(seat)
        return moves

    def _size_after_penalty(self, seat: int, mover: int) -> int:
        """Hand size of `seat` once `mover`'s next card closes the late-call window (S12)."""
        size = len(self.hands[seat])
        if seat == self.exposed and seat != mover and size == 1 and not self.called[seat]:
            size += min(2, len(self.pile) + len(self.discard))
        return size

    def _add_forms(self, seat: int, card: str, out: list[str]) -> None:
        """Every form of playing `card` (S12 `!` where the play leaves exactly one card)."""
        hand_len = len(self.hands[seat])
        if card in X_FORMS:
            forms = X_FORMS[card]
            for target in range(self.n):
                if target != seat:
                    move = forms[target]
                    out.append(move)
                    if hand_len > 1 and self._size_after_penalty(target, seat) == 1:
                        out.append(BANG[move])
            return
        if hand_len == 1:
            after = 0  # S13: the last card ends the round
        elif card == "WX":
            after = self._size_after_penalty((seat - self.direction) % self.n, seat)
        else:
            after = hand_len - 1
        if after == 1:
            for move in FORMS[card]:
                out.append(move)
                out.append(BANG[move])
        else:
            out.extend(FORMS[card])

    def _compute_moves(self, seat: int) -> list[str]:
        if self.over:
            return []
        hand = self.hands[seat]
        out: list[str] = []
        if seat == self.current:
            if self.drawn:  # S5: only the drawn card, or keep it
                self._add_forms(seat, self.drawn, out)
                out.append("pass")
            else:
                if self.pending:  # S9: extend, or draw the whole pending amount
                    allowed = EXTENDERS[self.mixed][RANK_OF[self.discard[-1]]]
                else:  # S4
                    allowed = PLAYABLE[(self.discard[-1], self.colour)]
                previous = ""
                two_left = len(hand) == 2
                for card in hand:
                    if card != previous:
                        previous = card
                        if card in allowed:
                            forms = FORMS.get(card)
                            if forms is None or card == "WX":  # X, WX: the hand changes
                                self._add_forms(seat, card, out)
                            elif two_left:  # S12: this play leaves one card
                                for move in forms:
                                    out.append(move)
                                    out.append(BANG[move])
                            else:
                                out.extend(forms)
                out.append("draw")
        elif self.discard[-1] in hand and (self.ed != 1 or seat != self.owner):
            # S11 jump-in, the top card's player included (edition 1, before the revised S11:
            # no jump-in on one's own card)
            self._add_forms(seat, self.discard[-1], out)
        if self.ed == 1 and seat == self.exposed and len(hand) == 1:
            out.append("solo")  # edition 1 (before the revised S12): the late call
        return out

    # ---- apply

    def apply(self, seat: Seat, move: str) -> tuple[State, list[Event]]:
        if type(seat) is not int or not 0 <= seat < self.n:
            check_seat(self, seat)
        if self.over:
            raise GameOver("the game is over; no move is possible")
        if move not in self._legal(seat):
            self._refuse(seat, move)
        new = self._clone()
        events: list[Event] = []
        if move == "draw":
            new._draw_turn(seat, events)
        elif move == "pass":
            new.drawn = ""
            new.current = (seat + new.direction) % new.n
            events.append(Event("kept", {"seat": seat}))
        elif move == "solo":
            new.called[seat] = True
            new.exposed = -1
            events.append(Event("solo", {"seat": seat}))
        else:
            card, colour, target, call = PARSED[move]
            new._play(seat, card, colour, target, call, events)
        if new.round == self.round:  # a new round starts with an empty log (_reset_round)
            new.log = self.log + _log_entries(events, new.drawn)
            new._note_hidden_changes(events)
        if not new.over and True in new.called:
            called = new.called
            for i, hand in enumerate(new.hands):
                if called[i] and len(hand) != 1:
                    called[i] = False
        return new, events

    def _note_hidden_changes(self, events: list[Event]) -> None:
        """Record in `seen` the hands that changed in a way only their seats saw."""
        changed: set[int] = set()
        for event in events:
            if event.kind == "drew_cards" and event.to is not None:
                changed.add(event.to)
            elif event.kind == "swapped":
                changed.update(int(seat) for seat in event.data["seats"])
            elif event.kind == "hands_passed":
                changed.update(range(self.n))
        if changed:
            seen = self.seen = self.seen[:]
            index = len(self.log)
            for seat in changed:
                seen[seat] = (*seen[seat], (index, tuple(self.hands[seat])))

    def _take(self, seat: int, count: int, reason: str, events: list[Event]) -> list[str]:
        """Draw up to `count` cards for `seat`, reshuffling an empty pile (S6)."""
        got: list[str] = []
        hand = self.hands[seat] = self.hands[seat][:]
        pile = self.pile = self.pile[:]
        for _ in range(count):
            if not pile:
                if len(self.discard) > 1:
                    cards = self.discard[:-1]
                    self.discard = [self.discard[-1]]
                    self._rng().shuffle(cards)
                    self.pile = pile = cards
                    events.append(Event("reshuffled", {"count": len(cards)}))
                else:
                    break
            card = pile.pop()
            insort(hand, card, key=_sort_key)
            got.append(card)
        events.append(Event("drew", {"seat": seat, "count": len(got), "reason": reason}))
        if got:
            events.append(Event("drew_cards", {"seat": seat, "cards": got}, seat))
        return got

    def _draw_turn(self, seat: int, events: list[Event]) -> None:
        if self.pending:  # S9: take the whole stack, then a normal turn
            count = self.pending
            self.pending = 0
            self._take(seat, count, "stack", events)
            return
        got = self._take(seat, 1, "turn", events)  # S5
        if got and got[0] in PLAYABLE[(self.discard[-1], self.colour)]:
            self.drawn = got[0]
        else:
            self.current = (seat + self.direction) % self.n

    def _play(
        self, seat: int, card: str, colour: str, target: int, call: bool, events: list[Event]
    ) -> None:
        n = self.n
        hand = self.hands[seat] = self.hands[seat][:]
        hand.remove(card)
        jump_in = seat != self.current
        self.discard = [*self.discard, card]
        self.owner = seat
        self.drawn = ""  # S5: a play (own or a jump-in) ends the wait
        data: dict[str, JSON] = {"seat": seat, "card": card, "jump_in": jump_in, "solo": call}
        if colour:
            data["colour"] = colour
        if target >= 0:
            data["target"] = target
        events.append(Event("play", data))
        exposed = self.exposed
        if exposed >= 0 and exposed != seat:  # S12: the late-call window closes now
            self.exposed = -1
            if len(self.hands[exposed]) == 1 and not self.called[exposed]:
                self._take(exposed, 2, "penalty", events)
        if not hand:  # S13: the round ends; effects and pending draws are void
            self._end_round(seat, events)
            return
        rank = RANK_OF[card]
        direction = self.direction
        following = (seat + direction) % n
        if colour:
            self.colour = colour
        elif rank == "WX":
            self.colour = ""
        else:
            self.colour = COLOUR_OF[card]
        if rank == "S":  # S7
            events.append(Event("skipped", {"seat": following}))
            following = (following + direction) % n
        elif rank == "R":  # S7: with 2 seats a Skip
            self.direction = direction = -direction
            events.append(Event("reversed", {"direction": direction}))
            following = seat if n == 2 else (seat + direction) % n
        elif rank == "D":  # S9
            self.pending += 2
        elif rank == "W4":  # S9/S10
            self.pending += 4
        elif rank == "X":  # S8
            hands = self.hands
            hands[seat], hands[target] = hands[target], hands[seat]
            events.append(
                Event(
                    "swapped",
                    {"seats": [seat, target], "sizes": [len(hands[seat]), len(hands[target])]},
                )
            )
        elif rank == "WX":  # S8: every hand moves to the next seat in the direction
            old = self.hands
            self.hands = [old[(i - direction) % n] for i in range(n)]
            events.append(
                Event(
                    "hands_passed",
                    {"direction": direction, "hand_sizes": [len(h) for h in self.hands]},
                )
            )
        self.current = following
        # S12: the mover's own play leaves it with one card: called, or exposed to the penalty
        if len(self.hands[seat]) == 1:
            if call:
                self.called[seat] = True
                self.exposed = -1
            else:
                self.exposed = seat
        elif self.exposed == seat:
            self.exposed = -1

    def _end_round(self, winner: int, events: list[Event]) -> None:
        penalties = [sum(POINTS[c] for c in hand) for hand in self.hands]
        self.points = [points - lost for points, lost in zip(self.points, penalties, strict=True)]
        events.append(
            Event(
                "round_end",
                {
                    "round": self.round,
                    "winner": winner,
                    "hands": {str(s): hand[:] for s, hand in enumerate(self.hands)},
                    "penalties": {str(s): lost for s, lost in enumerate(penalties)},
                    "points": self.points[:],
                },
            )
        )
        if min(self.points) < 0 or (self.mode == "rounds" and self.round >= self.rounds):
            self.over = True
            self.drawn = ""
            self.exposed = -1
            self.pending = 0
            result = self.result()
            assert result is not None
            events.append(
                Event("game_end", {"winners": list(result.winners), "points": self.points[:]})
            )
            return
        self.round += 1
        self._start_round(events)

    # ---- refusals (messages name only the acting seat's own cards and public facts)

    def _refuse(self, seat: int, move: str) -> NoReturn:
        old = self.ed == 1  # edition 1 (before the revised S11/S12)
        notation = NOTATION_HELP_1 if old else NOTATION_HELP
        if not isinstance(move, str):
            raise MalformedMove(f"a move is a string; {notation}")
        if move == "solo" and not old:
            # S12 (revised): the call goes with the play; `solo` is no longer in the notation,
            # so it is malformed whoever sends it and whenever (never legal in this edition).
            raise MalformedMove(
                "`solo` is not a move in this game (rules edition 2): the Solo call is made with "
                "the play that leaves you one card, by adding `!` to it, e.g. `play r5!`; there "
                f"is no late call; {notation}"
            )
        if move in ("draw", "pass", "solo"):
            parsed = None
        else:
            parsed = PARSED.get(move)
            if parsed is None:
                match = MOVE_RE.fullmatch(move)
                if match is None:
                    raise MalformedMove(f"{move!r} is not a Solo move; {notation}")
                target = match["target"]
                parsed = (
                    match["card"],
                    match["colour"] or "",
                    int(target) if target is not None else -1,
                    bool(match["call"]),
                )
        top = self.discard[-1]
        current = self.current
        own = self.legal_moves(seat)
        allowed = ", ".join(own) if own else "none"
        turn = f"it is seat {current}'s turn"
        if parsed is None:
            if move == "solo":
                raise IllegalMove(
                    f"seat {seat} cannot call solo now: a late call is only for a player whose "
                    "own play left one card without `!`, while holding that one card and until "
                    f"another player's next card is played; your legal moves: {allowed}"
                )
            if seat != current:
                late = " or a late solo call" if old else ""
                raise NotYourTurn(
                    f"seat {seat} cannot {move} now: {turn}; out of turn only a jump-in with a "
                    f"card identical to the top card {top}{late} is possible"
                )
            if move == "draw":
                raise IllegalMove(
                    f"you drew {self.drawn}: play it or keep it with `pass`; "
                    f"your legal moves: {allowed}"
                )
            raise IllegalMove(
                f"pass only keeps a playable card just drawn, and you have none waiting; "
                f"your legal moves: {allowed}"
            )
        card, colour, target, call = parsed
        hand = self.hands[seat]
        if seat != current:
            if card != top:
                raise NotYourTurn(
                    f"seat {seat} cannot play {card} now: {turn}; out of turn only a jump-in "
                    f"with a card identical to the top card {top} is possible"
                )
            if old and seat == self.owner:  # edition 1 (before the revised S11)
                raise IllegalMove(f"you played the top card {top}; no jump-in on your own card")
        if card not in hand:
            raise IllegalMove(f"you hold no {card}; your legal moves: {allowed}")
        if seat == current and self.drawn and card != self.drawn:
            raise IllegalMove(f"you drew {self.drawn}: only it may be played, or kept with `pass`")
        if seat == current and not self.drawn:
            if self.pending:
                allowed_cards = EXTENDERS[self.mixed][RANK_OF[top]]
                if card not in allowed_cards:
                    kinds = " or ".join(
                        name
                        for name, extender in (("a Draw Two (D)", "rD"), ("a W4", "W4"))
                        if extender in allowed_cards
                    )
                    raise IllegalMove(
                        f"a draw of {self.pending} is pending: extend it with {kinds}, or `draw` "
                        f"all {self.pending}; your legal moves: {allowed}"
                    )
            elif card not in PLAYABLE[(top, self.colour)]:
                raise IllegalMove(
                    f"{card} is not playable on {top} with colour {self.colour}: play a "
                    f"{COLOUR_NAMES.get(self.colour, '?')} card, a {RANK_OF[top]}, a black joker, "
                    f"or `draw`; your legal moves: {allowed}"
                )
        if card in ("W", "W4"):
            if not colour or target >= 0:
                raise IllegalMove(
                    f"{card} names a colour and nothing else: `play {card}:<colour>` with a "
                    "colour r, g, b or y"
                )
        elif RANK_OF[card] == "X":
            if colour:
                raise IllegalMove(f"{card} names a seat, not a colour: `play {card}@<seat>`")
            if not 0 <= target < self.n or target == seat:
                others = ", ".join(str(s) for s in range(self.n) if s != seat)
                raise IllegalMove(f"{card} must name another seat: @{others}")
        elif colour or target >= 0:
            raise IllegalMove(
                f"{card} takes no colour or seat: `play {card}`; only W and W4 name a colour, "
                "only a coloured X names a seat"
            )
        if call:
            raise IllegalMove(
                "`!` is refused: a solo call goes only on a play after which you hold exactly "
                f"one card; your legal moves: {allowed}"
            )
        raise IllegalMove(f"{move!r} is not legal now; your legal moves: {allowed}")

    # ---- resign, view, result

    def resign(self, seat: Seat) -> tuple[State, list[Event]]:
        check_seat(self, seat)
        if self.over:
            raise GameOver("the game is over; nobody can resign")
        new = self._clone()
        new.points = new.points[:]
        new.points[seat] = min(new.points[seat], -1)
        new.resigned = seat
        new.over = True
        new.drawn = ""
        new.exposed = -1
        new.pending = 0
        result = new.result()
        assert result is not None
        events = [
            Event("resigned", {"seat": seat}),
            Event("game_end", {"winners": list(result.winners), "points": new.points[:]}),
        ]
        return new, events

    def view(self, seat: Seat | None) -> dict[str, JSON]:
        if seat is not None:
            check_seat(self, seat)
        result = self.result()
        out: dict[str, JSON] = {
            "seat": seat,
            "edition": self.ed,
            "players": self.n,
            "mode": self.mode,
            "rounds": self.rounds,
            "mixed_stacking": self.mixed,
            "round": self.round,
            "points": self.points[:],
            "hand_sizes": [len(hand) for hand in self.hands],
            "discard": self.discard[:],
            "top": self.discard[-1],
            "colour": self.colour,
            "free_play": self.colour == "",
            "draw_pile_size": len(self.pile),
            "pending_draw": self.pending,
            "direction": self.direction,
            "to_move": self.current,
            "top_played_by": self.owner,
            "drawn_waiting": bool(self.drawn),
            "solo_called": self.called[:],
            "exposed": self.exposed,
            "finished": self.over,
            "winners": list(result.winners) if result else None,
            "log": list(self.log),
        }
        if seat is not None:
            out["hand"] = self.hands[seat][:]
            out["drawn_card"] = self.drawn if self.drawn and seat == self.current else None
            out["hand_history"] = [
                " ".join((str(index), *cards)) for index, cards in self.seen[seat]
            ]
        return out

    def result(self) -> Result | None:
        if not self.over:
            return None
        points = self.points
        candidates = [s for s in range(self.n) if s != self.resigned]
        best = max(points[s] for s in candidates)
        winners = tuple(s for s in candidates if points[s] == best)
        if self.resigned >= 0:
            reason = "resignation"
        elif any(p < 0 for p in points):
            reason = "below_zero"  # a seat's points went below 0 (both modes)
        else:
            reason = "rounds"  # rounds mode: the last round was played
        detail: dict[str, JSON] = {"reason": reason, "rounds_played": self.round, "mode": self.mode}
        if self.resigned >= 0:
            detail["resigned"] = self.resigned
        return Result(winners, {s: p for s, p in enumerate(points)}, detail)

    # ---- serialization, determinization

    def serialize(self) -> bytes:
        data = {
            "edition": self.ed,
            "seed": self.seed,
            "opts": [self.n, self.start_points, self.mode, self.rounds, self.mixed],
            "points": self.points,
            "round": self.round,
            "first": self.first_seat,
            "ctr": self.counter,
            "hands": self.hands,
            "pile": self.pile,
            "discard": self.discard,
            "colour": self.colour,
            "cur": self.current,
            "dir": self.direction,
            "pending": self.pending,
            "owner": self.owner,
            "drawn": self.drawn,
            "exposed": self.exposed,
            "called": self.called,
            "over": self.over,
            "resigned": self.resigned,
            "log": self.log,
            "seen": self.seen,
        }
        return canonical_json(data).encode()

    def determinize(self, seat: Seat | None, rng: random.Random) -> State:
        if seat is not None:
            check_seat(self, seat)
        if self.over:
            return self
        new = self._clone()
        pool = list(new.pile)
        for s in range(self.n):
            if s != seat:
                pool.extend(new.hands[s])
        new._deal_hidden(seat, pool, [len(hand) for hand in new.hands], len(new.pile), rng)
        return new

    def _deal_hidden(
        self,
        seat: Seat | None,
        pool: list[str],
        sizes: list[int],
        pile_size: int,
        rng: random.Random,
    ) -> None:
        """Deal the hands hidden from `seat` (to `sizes`) and a draw pile of `pile_size` from
        `pool`, shuffled with `rng`; cards of `pool` left over are out of the game (a setup may
        hold fewer than 112 cards). A card waiting in another seat's hand after its draw is taken
        among the pooled cards playable there: that the drawn card is playable is public (S5)."""
        rng.shuffle(pool)
        waiting = bool(self.drawn) and self.current != seat
        if waiting:
            ok = PLAYABLE[(self.discard[-1], self.colour)]
            choices = [i for i, card in enumerate(pool) if card in ok]
            self.drawn = pool.pop(rng.choice(choices))
        for s in range(self.n):
            if s == seat:
                continue
            size = sizes[s]
            if waiting and s == self.current:
                taken = [self.drawn, *pool[len(pool) - size + 1 :]]
                del pool[len(pool) - size + 1 :]
            else:
                taken = pool[len(pool) - size :] if size else []
                del pool[len(pool) - size :]
            self.hands[s] = sorted(taken, key=_sort_key)
        self.pile = pool[len(pool) - pile_size :] if pile_size else []


# --------------------------------------------------------------------------------------------
# Rules


class SoloRules:
    """Solo: the factory of SoloState."""

    name = "solo"
    min_seats = 2
    max_seats = MAX_SEATS
    edition: int = EDITION
    editions: tuple[int, ...] = EDITIONS

    def default_options(self) -> dict[str, JSON]:
        return dict(DEFAULT_OPTIONS)

    def new_game(
        self,
        seed: int,
        options: Mapping[str, JSON] | None = None,
        setup: Mapping[str, JSON] | None = None,
        *,
        edition: int | None = None,
    ) -> SoloState:
        ed = check_edition(self, edition)
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise InvalidOptions(f"the seed must be an integer, not {seed!r}")
        opts = check_options(options, DEFAULT_OPTIONS)
        players = _int_option(opts, "players", 2, MAX_SEATS)
        start_points = _int_option(opts, "start_points", 1, 1_000_000)
        rounds = _int_option(opts, "rounds", 1, 10_000)
        mode = opts["mode"]
        if mode not in ("points", "rounds"):
            raise InvalidOptions(f"option mode must be 'points' or 'rounds', not {mode!r}")
        mixed = opts["mixed_stacking"]
        if not isinstance(mixed, bool):
            raise InvalidOptions(f"option mixed_stacking must be true or false, not {mixed!r}")
        state = SoloState.__new__(SoloState)
        state.ed = ed
        state.seed = seed
        state.n = players
        state.start_points = start_points
        state.mode = mode
        state.rounds = rounds
        state.mixed = mixed
        state.points = [start_points] * players
        state.round = 1
        state.counter = 0
        state.over = False
        state.resigned = -1
        state._acting = None
        state._moves = {}
        if setup is None:
            state.first_seat = 0
            state._start_round([])
        else:
            self._apply_setup(state, setup)
        return state

    def _apply_setup(self, state: SoloState, setup: Mapping[str, JSON]) -> None:
        if not isinstance(setup, Mapping):
            raise InvalidSetup("the setup must be an object with hands, draw_pile, discard")
        unknown = set(setup) - {"hands", "draw_pile", "discard", "start_seat"}
        if unknown:
            raise InvalidSetup(
                f"unknown setup keys {sorted(unknown)}; keys are hands, draw_pile, discard, "
                "start_seat"
            )
        n = state.n
        counts: dict[str, int] = {}

        def cards(value: JSON, what: str) -> list[str]:
            if not isinstance(value, list):
                raise InvalidSetup(f"{what} must be a list of card names")
            for card in value:
                if not isinstance(card, str) or card not in CARD_INDEX:
                    raise InvalidSetup(
                        f"{what}: {card!r} is not a card; cards are r/g/b/y + 1..9, S, R, D, X, "
                        "and W, W4, WX"
                    )
                counts[card] = counts.get(card, 0) + 1
            return list(value)

        hands = setup.get("hands")
        if not isinstance(hands, list) or len(hands) != n:
            raise InvalidSetup(f"hands must be a list of {n} hands, one per seat")
        state.hands = [sorted(cards(h, f"hand {i}"), key=_sort_key) for i, h in enumerate(hands)]
        if any(not hand for hand in state.hands):
            raise InvalidSetup("every hand must hold at least one card")
        state.pile = cards(setup.get("draw_pile", []), "draw_pile")[::-1]
        state.discard = cards(setup.get("discard"), "discard")
        if not state.discard or not IS_NUMBER[state.discard[-1]]:
            raise InvalidSetup(
                "the discard pile must not be empty and its top must be a number card (S3)"
            )
        for card, count in counts.items():
            if count > COPIES[card]:
                raise InvalidSetup(f"{count} copies of {card}; the deck has {COPIES[card]}")
        start = setup.get("start_seat", 0)
        if not isinstance(start, int) or isinstance(start, bool) or not 0 <= start < n:
            raise InvalidSetup(f"start_seat must be a seat 0..{n - 1}, not {start!r}")
        state.first_seat = start
        state.counter = 1  # 0 would have been round 1's deal
        state._reset_round(start)

    def from_view(self, view: Mapping[str, JSON], seat: Seat, rng: random.Random) -> SoloState:
        """The unseen cards (the full deck less the seat's hand and the discard pile) are dealt
        at random to the other hands and the draw pile, sizes from the view. What no view shows
        is set to something consistent with it: a fresh seed from `rng` (so later reshuffles
        are unknown too), start points at the highest points, round 1 started by seat 0. The
        edition is the view's (the current one when the view has none)."""
        edition = view.get("edition", EDITION)
        if edition not in EDITIONS or isinstance(edition, bool):
            raise ValueError(f"Solo has no rules edition {edition!r}; editions are {EDITIONS}")
        n = view["players"]
        points: list[int] = list(view["points"])
        state = SoloState.__new__(SoloState)
        state.ed = edition
        state.seed = rng.getrandbits(63)
        state.n = n
        state.start_points = max(points)
        state.mode = view["mode"]
        state.rounds = view["rounds"]
        state.mixed = view["mixed_stacking"]
        state.points = points
        state.round = view["round"]
        state.first_seat = 0
        state.counter = 1
        state.discard = list(view["discard"])
        state.colour = view["colour"]
        state.current = max(view["to_move"], 0)
        state.direction = view["direction"]
        state.pending = view["pending_draw"]
        state.owner = view["top_played_by"]
        # Another seat's waiting card is unknown: a placeholder that _deal_hidden replaces.
        state.drawn = (view.get("drawn_card") or "?") if view["drawn_waiting"] else ""
        state.exposed = view["exposed"]
        state.called = list(view["solo_called"])
        state.over = view["finished"]
        state.resigned = -1
        state.log = tuple(view.get("log", ()))  # a view from before the log: empty
        own = [entry.split(" ") for entry in view.get("hand_history", ())]
        state.seen = [
            tuple((int(entry[0]), tuple(entry[1:])) for entry in own) if s == seat else ()
            for s in range(n)
        ]
        state._acting = None
        state._moves = {}
        hand: list[str] = list(view["hand"])
        state.hands = [hand if s == seat else [] for s in range(n)]
        unseen = Counter(FULL_DECK)
        unseen.subtract(hand)
        unseen.subtract(state.discard)
        pool = sorted(unseen.elements(), key=_sort_key)
        state._deal_hidden(seat, pool, view["hand_sizes"], view["draw_pile_size"], rng)
        if state.over:  # the view shows the winners, not who resigned: find a resignation
            for resigned in (-1, *range(n)):
                state.resigned = resigned
                result = state.result()
                if result is not None and list(result.winners) == view["winners"]:
                    break
        return state

    def deserialize(self, data: bytes) -> SoloState:
        obj: dict[str, Any] = json.loads(data)
        state = SoloState.__new__(SoloState)
        state.ed = obj.get("edition", 1)  # snapshots stored before editions existed: edition 1
        state.seed = obj["seed"]
        state.n, state.start_points, state.mode, state.rounds, state.mixed = obj["opts"]
        state.points = obj["points"]
        state.round = obj["round"]
        state.first_seat = obj["first"]
        state.counter = obj["ctr"]
        state.hands = obj["hands"]
        state.pile = obj["pile"]
        state.discard = obj["discard"]
        state.colour = obj["colour"]
        state.current = obj["cur"]
        state.direction = obj["dir"]
        state.pending = obj["pending"]
        state.owner = obj["owner"]
        state.drawn = obj["drawn"]
        state.exposed = obj["exposed"]
        state.called = obj["called"]
        state.over = obj["over"]
        state.resigned = obj["resigned"]
        state.log = tuple(obj.get("log", ()))  # snapshots stored before the log: empty
        state.seen = [
            tuple((index, tuple(cards)) for index, cards in history)
            for history in obj.get("seen", [[]] * state.n)
        ]
        state._acting = None
        state._moves = {}
        return state


RULES = SoloRules()
