"""Solace (`solace`): Dale Newfield's Black Ice patience, one seat (docs/rules/solace.md, L1-L7).

Model
-----
Ten spaces, indices 0..9 = `B1`..`B5`, `C1`..`C5`. Colours are ints (0 black, 1 clear).
The deal (L2/L3) is kept whole: `deal[s]` is the colours of the 3, the 2 and the 1 dealt to space
`s`. Pieces only ever leave a nest from the outside (a nest never receives a piece), so the nest
still on a space is always a suffix of its deal, and the state per space is just:

- `count[s]`   pieces left in the nest (3 full, 2 = 2/1, 1 = a lone 1, 0 none); the outer piece of
               a nest always has size `count[s]`;
- `tower[s]`   height (0..3) of the tower standing on the nest. Towers only ever stand on full
               nests (a foundation needs a full nest, L6) and their colour is the colour of that
               nest's 3, which by L3 is the colour of the space's row;
- `promoted[s]` a promoted tower stands on the space (it is in the space's row colour, L6).

Decisions (where L1-L7 leave room)
----------------------------------
- *Open space* (L5/L6): a space with no nest piece, no tower and no promoted tower. A space
  becomes open when its whole nest has been moved away (its 3 by a foundation, its 2 and 1 by
  builds); a promoted tower occupies its space for good, so that space is never open again.
- *Nothing on top* (L6): a nest has something on top exactly when a tower stands on it. When a
  full tower is promoted, the full nest under it has nothing on top again and may be used as a
  foundation source or target once more.
- *Build sources* (L6): the outer piece of a nest with nothing on top, i.e. the largest piece
  left: the 2 of a 2/1 nest or a lone 1. (The outer 3 of a full nest only moves by foundation.)
  Tower pieces never move except by promotion; promoted towers never move.
- Because a foundation joins two 3s of the same colour and every 3 sits in the row of its colour
  (L3), foundations and promotions stay inside a row: black towers grow on B-spaces and are
  promoted to B-spaces, clear ones likewise on C. Builds may bring a piece from either row.
- *Visibility* (L4): a nest piece is visible when every piece outside it in its nest is clear;
  tower and promoted pieces are visible. A tower on a nest changes nothing (its 3 has the colour
  of the nest's 3, which was visible, and hides the inside exactly as that 3 does). Visibility
  only grows: a lift exposes pieces (`revealed` events, one per newly visible piece, outer to
  inner), and pieces leave nests only to become tower pieces.
- *Hidden information*: the single player and spectators see the same thing: view(0) ==
  view(None). Hidden nest pieces appear as `{"hidden": true}` placeholders (their number follows
  from the nest's structure). Errors only ever name visible pieces. determinize() shuffles the
  hidden pieces among the hidden slots of the same size (uniform over consistent deals; with
  `no_monochrome`, re-drawn until no dealt nest is monochrome). `RULES.from_view` draws the
  same way from the view alone (`draw_deal` serves both).
- *End* (L7): the game is over when no foundation, build or promotion is legal, or after `stop`.
  `stop` is legal (and listed last) while the game runs. resign(0) is `stop`: the game ends with
  the current score. The result is winners=(0,) (a patience has no opponent to lose to) with
  scores {0: promoted towers}.
- *Best score*: when the game ends (no move left, or `stop`), the engine solves the whole deal
  from its start once (`solace_solver`, a few milliseconds) and keeps the answer in the state
  (`best_score`, serialized as `best`). The view, the result's detail and the `game_over` event
  show it once the game is over, never before (it depends on hidden pieces).
- determinize() redraws from the sorted multiset of hidden colours, so its result depends only on
  what the player sees (and the generator), not on where the hidden pieces really are.
- Setup: `{"nests": {"B1": ["b3", "c2", "b1"], ...}}`, pieces outer to inner, all ten spaces.
  With `no_monochrome` a setup holding a monochrome nest is refused (it could not be dealt).
- Deal (L2): each size's ten pieces (five per colour) are shuffled with random.Random(seed) and
  nest i takes the i-th 3, 2 and 1; with `no_monochrome` the same generator deals again until no
  nest is monochrome. Nests then go to B1.. / C1.. in dealt order by the colour of their 3 (L3).
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Final

from engines.canonical import canonical_json
from engines.contract import (
    JSON,
    Event,
    GameOver,
    IllegalMove,
    InvalidOptions,
    InvalidSeat,
    InvalidSetup,
    MalformedMove,
    Result,
    Seat,
    State,
    check_edition,
    check_options,
    check_seat,
)
from games.solace.layout import (
    BLACK,
    CLEAR,
    COLOUR_CODES,
    COLOUR_NAMES,
    MOVE_NAMES,
    NUM_SPACES,
    PARSE,
    ROW_LETTER,
    ROW_OF,
    ROW_SPACES,
    SPACE_INDEX,
    SPACES,
    STOP,
    Deal,
)
from games.solace.solver import solve

# The layout (spaces, rows, move names) is shared with the solver: games/solace/layout.py.

_PIECE_JSON: Final = tuple(
    tuple({"colour": COLOUR_NAMES[c], "size": size} for size in range(4)) for c in range(2)
)
_HIDDEN: Final = {"hidden": True}
_ALL_SIZES_TEXT: Final = ", ".join(f"{c}{s}" for c in COLOUR_CODES for s in (3, 2, 1))


def _piece(colour: int, size: int) -> dict[str, JSON]:
    return dict(_PIECE_JSON[colour][size])


def _is_monochrome(nest: Sequence[int]) -> bool:
    return nest[0] == nest[1] == nest[2]


def deal_nests(seed: int, no_monochrome: bool) -> Deal:
    """The L2/L3 deal for `seed`: ten (3, 2, 1) colour triples, B-row nests first."""
    rng = random.Random(seed)
    while True:
        sizes = []
        for _ in range(3):
            pieces = [BLACK] * 5 + [CLEAR] * 5
            rng.shuffle(pieces)
            sizes.append(pieces)
        nests = [(sizes[0][i], sizes[1][i], sizes[2][i]) for i in range(NUM_SPACES)]
        if no_monochrome and any(_is_monochrome(n) for n in nests):
            continue
        # L3: the five nests whose 3 is black go to B1..B5, the others to C1..C5, dealt order.
        return tuple([n for n in nests if n[0] == BLACK] + [n for n in nests if n[0] == CLEAR])


def _parse_setup(setup: Mapping[str, JSON], no_monochrome: bool) -> Deal:
    if not isinstance(setup, Mapping):
        raise InvalidSetup('a Solace setup is {"nests": {"B1": ["b3", "c2", "b1"], ...}}')
    extra = sorted(set(setup) - {"nests"})
    if extra:
        raise InvalidSetup(f"unknown setup key(s) {', '.join(extra)}; the only key is 'nests'")
    nests = setup.get("nests")
    if not isinstance(nests, Mapping):
        raise InvalidSetup(
            'setup "nests" must map each space B1..B5, C1..C5 to its pieces, outer to inner, '
            'e.g. {"B1": ["b3", "c2", "b1"]}'
        )
    missing = [s for s in SPACES if s not in nests]
    unknown = sorted(str(k) for k in nests if k not in SPACE_INDEX)
    if unknown:
        raise InvalidSetup(f"unknown space(s) {', '.join(unknown)}; spaces are B1..B5, C1..C5")
    if missing:
        raise InvalidSetup(f"no nest given for {', '.join(missing)}; all ten spaces need one")
    deal: list[tuple[int, int, int]] = []
    tally = [[0] * 4 for _ in range(2)]
    for s, name in enumerate(SPACES):
        pieces = nests[name]
        if (
            not isinstance(pieces, Sequence)
            or isinstance(pieces, str)
            or len(pieces) != 3
            or not all(isinstance(p, str) for p in pieces)
        ):
            raise InvalidSetup(
                f"{name} must be a full nest of three pieces, outer to inner, e.g. "
                '["b3", "c2", "b1"]'
            )
        colours = []
        for want, text in zip((3, 2, 1), pieces, strict=True):
            if len(text) != 2 or text[0] not in COLOUR_CODES or text[1] not in "123":
                raise InvalidSetup(
                    f"{name}: {text!r} is not a piece; pieces are {_ALL_SIZES_TEXT} "
                    "(b = black, c = clear, then the size)"
                )
            if int(text[1]) != want:
                raise InvalidSetup(
                    f"{name}: a full nest is a 3 over a 2 over a 1 (outer to inner); "
                    f"got {', '.join(pieces)}"
                )
            colour = COLOUR_CODES.index(text[0])
            tally[colour][want] += 1
            colours.append(colour)
        if colours[0] != ROW_OF[s]:
            raise InvalidSetup(
                f"{name} is in the {COLOUR_NAMES[ROW_OF[s]]} row but its outer 3 is "
                f"{COLOUR_NAMES[colours[0]]}; B-spaces hold nests with a black 3, C-spaces "
                "nests with a clear 3 (L3)"
            )
        if no_monochrome and _is_monochrome(colours):
            raise InvalidSetup(
                f"{name} is monochrome ({', '.join(pieces)}) but option no_monochrome is on"
            )
        deal.append((colours[0], colours[1], colours[2]))
    for colour in (BLACK, CLEAR):
        for size in (3, 2, 1):
            if tally[colour][size] != 5:
                raise InvalidSetup(
                    f"the setup has {tally[colour][size]} {COLOUR_NAMES[colour]} {size}s; "
                    "there are exactly five pieces of each colour and size (L1)"
                )
    return tuple(deal)


@lru_cache(maxsize=64)
def _deal_best(deal: Deal) -> int:
    """The most promoted towers `deal` allows from its start with every piece known. Cached: a
    game's last moves (and the checks that try each of them) all ask about the same deal."""
    start = SolaceState(
        0, False, deal, (3,) * NUM_SPACES, (0,) * NUM_SPACES, (False,) * NUM_SPACES, False, 0
    )
    return solve(start).best_score


class SolaceState(State):
    """One Solace position. Immutable once returned."""

    __slots__ = (
        "_best",
        "_count",
        "_deal",
        "_moves",
        "_no_mono",
        "_ply",
        "_promoted",
        "_seed",
        "_stopped",
        "_tower",
    )

    def __init__(
        self,
        seed: int,
        no_monochrome: bool,
        deal: Deal,
        count: tuple[int, ...],
        tower: tuple[int, ...],
        promoted: tuple[bool, ...],
        stopped: bool,
        ply: int,
        best: int | None = None,
    ) -> None:
        self._seed = seed
        self._no_mono = no_monochrome
        self._deal = deal
        self._count = count
        self._tower = tower
        self._promoted = promoted
        self._stopped = stopped
        self._ply = ply
        self._best = best
        self._moves: list[str] | None = None

    # ---------------------------------------------------------------- read-only accessors
    @property
    def num_seats(self) -> int:
        return 1

    @property
    def deal(self) -> Deal:
        """The dealt colours (3, 2, 1) of every space; contains hidden information."""
        return self._deal

    @property
    def no_monochrome(self) -> bool:
        """The option the game was dealt with (L2)."""
        return self._no_mono

    @property
    def counts(self) -> tuple[int, ...]:
        return self._count

    @property
    def towers(self) -> tuple[int, ...]:
        return self._tower

    @property
    def promoted(self) -> tuple[bool, ...]:
        return self._promoted

    @property
    def score(self) -> int:
        """L7: the number of promoted towers."""
        return sum(self._promoted)

    @property
    def best_score(self) -> int | None:
        """Once the game is over: the most promoted towers this deal allowed with every piece
        known (computed once, when the game ends, and kept in the state). None before."""
        return self._best

    def _deal_best(self) -> int:
        """The perfect-information maximum of this deal from its start (solace_solver)."""
        return _deal_best(self._deal)

    # ---------------------------------------------------------------- moves
    def _board_moves(self) -> list[str]:
        """Every legal FROM-TO move (L6), sorted by (from, to) space index."""
        if self._moves is not None:
            return self._moves
        out: list[str] = []
        if not self._stopped:
            count, tower, deal, promoted = self._count, self._tower, self._deal, self._promoted
            for s in range(NUM_SPACES):
                n = count[s]
                if n == 0:
                    continue
                names = MOVE_NAMES[s]
                h = tower[s]
                if n == 3:
                    if h == 0:  # foundation: onto a full nest, nothing on top, same colour 3
                        colour = deal[s][0]
                        for t in range(NUM_SPACES):
                            if t != s and count[t] == 3 and tower[t] == 0 and deal[t][0] == colour:
                                out.append(names[t])
                    elif h == 3:  # promotion into an open space of the tower's row
                        for t in ROW_SPACES[deal[s][0]]:
                            if count[t] == 0 and not promoted[t]:
                                out.append(names[t])
                else:  # build: outer piece of size n onto a same-colour tower topped by n + 1
                    colour = deal[s][3 - n]
                    need = 3 - n
                    for t in range(NUM_SPACES):
                        if count[t] == 3 and tower[t] == need and deal[t][0] == colour:
                            out.append(names[t])
        self._moves = out
        return out

    def to_act(self) -> tuple[Seat, ...]:
        return (0,) if self._board_moves() else ()

    def legal_moves(self, seat: Seat) -> list[str]:
        check_seat(self, seat)
        moves = self._board_moves()
        return [*moves, STOP] if moves else []

    def _refusal(self, s: int, t: int) -> str:
        """Why the well-formed move s-t is illegal now (names visible pieces only)."""
        S, T = SPACES[s], SPACES[t]
        if s == t:
            return f"{S}-{T} goes nowhere; FROM and TO must be different spaces"
        count, tower, deal, promoted = self._count, self._tower, self._deal, self._promoted
        if promoted[s]:
            return f"{S} holds a promoted tower; promoted towers never move (L6)"
        n = count[s]
        if n == 0:
            return f"{S} is open; there is nothing there to move"
        h = tower[s]
        if h in (1, 2):
            return (
                f"{S} has a tower on it; only a nest with nothing on top can give a piece, "
                "and a tower moves only when full (3-2-1), by promotion (L6)"
            )
        if h == 3:
            colour = deal[s][0]
            cname = COLOUR_NAMES[colour]
            if ROW_OF[t] != colour:
                return (
                    f"the tower on {S} is {cname} and {T} is in the "
                    f"{COLOUR_NAMES[ROW_OF[t]]} row; {cname} towers are promoted to "
                    f"{ROW_LETTER[colour]}-spaces"
                )
            return f"{T} is not open ({self._describe(t)}); promotion needs an open space"
        if n == 3:
            colour = deal[s][0]
            cname = COLOUR_NAMES[colour]
            allowed = (
                "a foundation needs a full nest with nothing on top and a 3 of the same colour"
            )
            if promoted[t]:
                return f"{T} holds a promoted tower; {allowed}"
            if count[t] == 0:
                return f"{T} is open; {allowed}"
            if count[t] < 3:
                return f"{T} is not a full nest ({self._describe(t)}); {allowed}"
            if tower[t] > 0:
                return f"{T} already has a tower on it; {allowed}"
            return (
                f"the 3 on {S} is {cname} and the 3 on {T} is {COLOUR_NAMES[deal[t][0]]}; {allowed}"
            )
        colour = deal[s][3 - n]
        cname = COLOUR_NAMES[colour]
        allowed = f"a {cname} {n} can only be built onto a tower topped by a {cname} {n + 1}"
        if promoted[t]:
            return f"{T} holds a promoted tower, which is complete; {allowed}"
        if count[t] == 0:
            return f"{T} is open; {allowed}"
        if tower[t] == 0:
            return f"{T} has no tower; {allowed}"
        if deal[t][0] != colour:
            return (
                f"the tower on {T} is {COLOUR_NAMES[deal[t][0]]} and the {n} on {S} is "
                f"{cname}; {allowed}"
            )
        if tower[t] == 3:
            return f"the tower on {T} is full; {allowed}"
        return f"the tower on {T} is topped by a {4 - tower[t]}; {allowed}"

    def _describe(self, t: int) -> str:
        if self._promoted[t]:
            return "it holds a promoted tower"
        n = self._count[t]
        if n == 0:
            return "it is open"
        if self._tower[t]:
            return f"a tower of {self._tower[t]} stands on its nest"
        return ("a lone 1", "a 2/1 nest", "a full nest")[n - 1] + " is on it"

    def apply(self, seat: Seat, move: str) -> tuple[SolaceState, list[Event]]:
        check_seat(self, seat)
        if not self._board_moves():
            raise GameOver(f"the game is over (score {self.score}); no move is possible")
        if move == STOP:
            return self._stop()
        parsed = PARSE.get(move) if isinstance(move, str) else None
        if parsed is None:
            raise MalformedMove(
                f"{move!r} is not a Solace move; moves are FROM-TO between spaces B1..B5, "
                "C1..C5 (e.g. B2-B4), or stop"
            )
        s, t = parsed
        name = MOVE_NAMES[s][t]
        if name not in self._board_moves():
            raise IllegalMove(self._refusal(s, t))
        count = list(self._count)
        tower = list(self._tower)
        promoted = self._promoted
        deal = self._deal
        events: list[Event] = []
        n = count[s]
        data: dict[str, JSON] = {"move": name, "from": SPACES[s], "to": SPACES[t]}
        lifted: int | None = None
        if n == 3 and tower[s] == 3:
            data["kind"] = "promotion"
            data["tower"] = {"colour": COLOUR_NAMES[deal[s][0]]}
            tower[s] = 0
            plist = list(promoted)
            plist[t] = True
            promoted = tuple(plist)
        else:
            lifted = deal[s][3 - n]
            data["kind"] = "foundation" if n == 3 else "build"
            data["piece"] = _piece(lifted, n)
            count[s] = n - 1
            tower[t] += 1
        new = SolaceState(
            self._seed,
            self._no_mono,
            deal,
            tuple(count),
            tuple(tower),
            promoted,
            False,
            self._ply + 1,
        )
        data["score"] = new.score
        events.append(Event("moved", data))
        over = not new._board_moves()
        if over:
            new._best = self._deal_best()
        if lifted == BLACK:
            # L4: lifting a black piece exposes the outer piece below and what shows through it.
            left = n - 1
            for idx in range(3 - left, 3):
                colour = deal[s][idx]
                events.append(
                    Event(
                        "revealed",
                        {
                            "space": SPACES[s],
                            "depth": idx - (3 - left),
                            "piece": _piece(colour, 3 - idx),
                        },
                    )
                )
                if colour == BLACK:
                    break
        if over:
            events.append(
                Event(
                    "game_over",
                    {"reason": "no_moves", "score": new.score, "best_score": new._best},
                )
            )
        return new, events

    def _stop(self) -> tuple[SolaceState, list[Event]]:
        new = SolaceState(
            self._seed,
            self._no_mono,
            self._deal,
            self._count,
            self._tower,
            self._promoted,
            True,
            self._ply + 1,
            self._deal_best(),
        )
        return new, [
            Event("stopped", {"score": new.score}),
            Event(
                "game_over",
                {"reason": "stopped", "score": new.score, "best_score": new._best},
            ),
        ]

    def resign(self, seat: Seat) -> tuple[SolaceState, list[Event]]:
        """Resigning a patience is stopping: the game ends with the current score (L7)."""
        check_seat(self, seat)
        if not self._board_moves():
            raise GameOver(f"the game is over (score {self.score}); there is nothing to resign")
        return self._stop()

    # ---------------------------------------------------------------- information
    def _nest_view(self, s: int) -> list[JSON]:
        n = self._count[s]
        nest = self._deal[s]
        out: list[JSON] = []
        visible = True
        for idx in range(3 - n, 3):
            if visible:
                out.append(_piece(nest[idx], 3 - idx))
                visible = nest[idx] == CLEAR  # L4: a black piece hides everything inside it
            else:
                out.append(dict(_HIDDEN))
        return out

    def view(self, seat: Seat | None) -> dict[str, JSON]:
        if seat is not None:
            check_seat(self, seat)
        spaces: dict[str, JSON] = {}
        for s, name in enumerate(SPACES):
            row = COLOUR_NAMES[ROW_OF[s]]
            if self._promoted[s]:
                pieces = [_piece(ROW_OF[s], size) for size in (3, 2, 1)]
                spaces[name] = {"row": row, "state": "promoted", "nest": [], "tower": pieces}
            elif self._count[s] == 0:
                spaces[name] = {"row": row, "state": "open", "nest": [], "tower": []}
            else:
                colour = self._deal[s][0]
                tower = [_piece(colour, 3 - i) for i in range(self._tower[s])]
                spaces[name] = {
                    "row": row,
                    "state": "nest",
                    "nest": self._nest_view(s),
                    "tower": tower,
                }
        finished = not self._board_moves()
        return {
            "game": "solace",
            "spaces": spaces,
            "score": self.score,
            "finished": finished,
            "stopped": self._stopped,
            "moves_played": self._ply,
            "options": {"no_monochrome": self._no_mono},
            "to_act": [] if finished else [0],
            # Set only once the game is over (see best_score).
            "best_score": self._best if finished else None,
        }

    def result(self) -> Result | None:
        if self._board_moves():
            return None
        score = self.score
        return Result(
            winners=(0,),
            scores={0: float(score)},
            detail={
                "score": score,
                "reason": "stopped" if self._stopped else "no_moves",
                "best_score": self._best,
            },
        )

    def serialize(self) -> bytes:
        return canonical_json(
            {
                "seed": self._seed,
                "no_monochrome": self._no_mono,
                "deal": ["".join(COLOUR_CODES[c] for c in nest) for nest in self._deal],
                "count": list(self._count),
                "tower": list(self._tower),
                "promoted": [int(p) for p in self._promoted],
                "stopped": self._stopped,
                "ply": self._ply,
                "best": self._best,
            },
        ).encode()

    def hidden_slots(self) -> list[tuple[int, int]]:
        """(space, index in the deal triple) of every nest piece the player cannot see (L4)."""
        out: list[tuple[int, int]] = []
        for s in range(NUM_SPACES):
            n = self._count[s]
            nest = self._deal[s]
            hidden = False
            for idx in range(3 - n, 3):
                if hidden:
                    out.append((s, idx))
                elif nest[idx] == BLACK:
                    hidden = True
        return out

    def determinize(self, seat: Seat | None, rng: random.Random) -> SolaceState:
        if seat is not None:
            check_seat(self, seat)
        slots = self.hidden_slots()
        if not slots:
            return self
        by_size: dict[int, list[tuple[int, int]]] = {}
        for slot in slots:
            by_size.setdefault(slot[1], []).append(slot)
        # Sorted: the draw depends on what is hidden (the multiset, which the player can count),
        # never on where the hidden pieces really are.
        pools = [
            (group, sorted(self._deal[s][idx] for s, idx in group)) for group in by_size.values()
        ]
        deal = draw_deal(self._deal, pools, self._no_mono, rng)
        if deal is None:  # pragma: no cover - practically unreachable; the true deal is consistent
            return self
        return self._with_deal(deal)

    def _with_deal(self, deal: Deal) -> SolaceState:
        return SolaceState(
            self._seed,
            self._no_mono,
            deal,
            self._count,
            self._tower,
            self._promoted,
            self._stopped,
            self._ply,
            self._best,
        )


Pool = tuple[Sequence[tuple[int, int]], Sequence[int]]
"""Slots (space, index in the deal triple) and the colours to spread over them, one each."""


def draw_deal(
    base: Deal, pools: Sequence[Pool], no_monochrome: bool, rng: random.Random
) -> Deal | None:
    """`base` with each pool's colours shuffled over its slots: a deal drawn uniformly among
    those that agree with `base` outside the pools (with `no_monochrome`, among those with no
    monochrome nest: drawn again until one is found). None if 1000 draws all failed, which a
    position reached by play practically never causes. This is the one place where hidden
    pieces are drawn, for `determinize` and `from_view` alike."""
    for _ in range(1000):
        deal = [list(nest) for nest in base]
        for slots, colours in pools:
            drawn = list(colours)
            rng.shuffle(drawn)
            for (s, idx), colour in zip(slots, drawn, strict=True):
                deal[s][idx] = colour
        if not no_monochrome or not any(_is_monochrome(n) for n in deal):
            return tuple((n[0], n[1], n[2]) for n in deal)
    return None


class SolaceRules:
    """The Solace game: a stateless factory of SolaceState."""

    name = "solace"
    min_seats = 1
    max_seats = 1
    edition = 1
    editions: tuple[int, ...] = (1,)

    def default_options(self) -> dict[str, JSON]:
        return {"no_monochrome": False}

    def new_game(
        self,
        seed: int,
        options: Mapping[str, JSON] | None = None,
        setup: Mapping[str, JSON] | None = None,
        *,
        edition: int | None = None,
    ) -> SolaceState:
        check_edition(self, edition)
        merged = check_options(options, self.default_options())
        no_mono = merged["no_monochrome"]
        if not isinstance(no_mono, bool):
            raise InvalidOptions(f"no_monochrome must be true or false, not {no_mono!r}")
        deal = deal_nests(seed, no_mono) if setup is None else _parse_setup(setup, no_mono)
        return SolaceState(
            seed, no_mono, deal, (3,) * NUM_SPACES, (0,) * NUM_SPACES, (False,) * NUM_SPACES,
            False, 0,
        )  # fmt: skip

    def deserialize(self, data: bytes) -> SolaceState:
        obj = json.loads(data)
        deal = tuple(
            (
                COLOUR_CODES.index(text[0]),
                COLOUR_CODES.index(text[1]),
                COLOUR_CODES.index(text[2]),
            )
            for text in obj["deal"]
        )
        return SolaceState(
            obj["seed"],
            bool(obj["no_monochrome"]),
            deal,
            tuple(int(x) for x in obj["count"]),
            tuple(int(x) for x in obj["tower"]),
            tuple(bool(x) for x in obj["promoted"]),
            bool(obj["stopped"]),
            int(obj["ply"]),
            None if obj.get("best") is None else int(obj["best"]),
        )

    def from_view(self, view: Mapping[str, JSON], seat: Seat, rng: random.Random) -> SolaceState:
        """The position `view` shows, its hidden pieces drawn like `determinize` draws them.

        A view does not say which nest each tower piece came from; those departed pieces'
        colours never matter again (a nest only loses pieces from the outside), so each size's
        tower colours are spread at random over the nest slots that size left. The 3s are known:
        every nest's 3 is the colour of its row (L3). Hidden slots get what is left of each
        size's five black and five clear pieces. The seed is not in the view (it is 0)."""
        if seat != 0:
            raise InvalidSeat(f"seat {seat!r} does not exist; Solace has seat 0 only")
        spaces = view["spaces"]
        deal = [[ROW_OF[s], CLEAR, CLEAR] for s in range(NUM_SPACES)]
        count, tower, promoted = [], [], []
        left = [[5, 5] for _ in range(4)]  # left[size][colour]: pieces not seen in any nest
        hidden: dict[int, list[tuple[int, int]]] = {}
        departed: dict[int, list[tuple[int, int]]] = {}
        towered: dict[int, list[int]] = {2: [], 1: []}
        for s, name in enumerate(SPACES):
            space = spaces[name]
            nest = space["nest"]
            n = len(nest)
            count.append(n)
            promoted.append(space["state"] == "promoted")
            tower.append(0 if promoted[s] else len(space["tower"]))
            for piece in space["tower"]:
                colour = COLOUR_NAMES.index(piece["colour"])
                left[piece["size"]][colour] -= 1
                if piece["size"] < 3:
                    towered[piece["size"]].append(colour)
            for idx in range(1, 3 - n):
                departed.setdefault(idx, []).append((s, idx))
            for idx, piece in zip(range(3 - n, 3), nest, strict=True):
                if piece.get("hidden"):
                    hidden.setdefault(idx, []).append((s, idx))
                else:
                    colour = COLOUR_NAMES.index(piece["colour"])
                    deal[s][idx] = colour
                    left[3 - idx][colour] -= 1
        pools: list[Pool] = [
            (slots, [BLACK] * left[3 - idx][BLACK] + [CLEAR] * left[3 - idx][CLEAR])
            for idx, slots in sorted(hidden.items())
        ]
        pools += [(slots, sorted(towered[3 - idx])) for idx, slots in sorted(departed.items())]
        no_mono = bool(view["options"]["no_monochrome"])
        base = tuple((n[0], n[1], n[2]) for n in deal)
        drawn = draw_deal(base, pools, no_mono, rng)
        if drawn is None:
            raise InvalidSetup("no deal agrees with this view: it is not a Solace position")
        best = view.get("best_score")
        return SolaceState(
            0,
            no_mono,
            drawn,
            tuple(count),
            tuple(tower),
            tuple(promoted),
            bool(view["stopped"]),
            int(view["moves_played"]),
            None if best is None else int(best),
        )


RULES: Final = SolaceRules()
