"""ZoxSo (`zoxso`, exactly 2 seats): a pure rules engine. Rulings Z1-Z10 (docs/rules/zoxso.md).

Board (Z1-Z3). Pearls `a1`..`h8` are the 8x8 grid intersections, Stones `A1`..`G7` the 7x7 cells;
rows count from Dark's side. Stone `Xn` touches the Pearls at columns X, X+1 and rows n, n+1
(`B2` touches `b2 c2 b3 c3`). The Throne is `D4`. The Wall encloses Stones `B2`..`F6`: the 16
Pearls `c3`..`f6` are inside it, the other 48 outside. Pearl steps and chain moves never cross
the Wall; the Wall never blocks Stones or flips.

Seats: 0 = Dark (moves first in both phases), 1 = Light.

Moves (the notation of docs/rules/zoxso.md; captures are implicit):
- Phase 1 (Z5): `M@b2`, `D@e1`, `X@c1`: place a Ma, Dao or Xing from hand on an empty outside Pearl.
- Phase 2 (Z6-Z8): `b2-b3` Pearl step or Zox-chain move; `C3-E4` Stone move; `b2^B2` flip a Pearl
  piece onto an adjacent empty Stone, `b2^B2-B5` flip then move on the Stones; `C3^c4` flip a
  Stone piece onto an adjacent empty Pearl, `C3^c4-c5` flip then move on the Pearls.
- A chain move (Z7) takes any square a fellow chain member could step to; after a Stone-to-Pearl
  flip the piece belongs to the chains next to its new Pearl, so `C3^c4-c6` may borrow c5's step.
- `pass` (Z10) is legal only, and then the only legal move, when the player has no other move.
  (With at most 10 pieces a side this never arises in play: a Pearl piece can always step, and
  no set of <= 10 Stone pieces blocks itself. The rule is implemented as written all the same.)
Move-then-flip (`b2-b3^B3`) and double flips (`b2^B2^c3`) are refused as IllegalMove (Z6).

End (Z9, Z10): a Xing that lands on the Throne wins at once, whether it steps there on the
Stones or flips there from a Pearl (`e5^D4`, `C4-D4`, `d3^D3-D4`); a flip onto the Throne ends the
turn, so no move may follow a Xing's flip onto `D4` (`e5^D4-D5` is refused, revised Z9).
Capturing the enemy Xing wins; two passes in a row draw; reaching `max_plies` plies (both phases
and passes count) draws unless the move that reached it won. Scores: winner 1, loser 0; draw 0.5
each. A Ma or Dao may still flip onto the Throne, and then must move off it (Z8).

Rules editions (`RULES.edition` = 2, `RULES.editions` = (1, 2); a state keeps its edition for the
whole game, and serializes and shows it as "edition"; a snapshot without it is edition 1):
- 2 (current): Z9 as revised, above.
- 1 (before the revised Z9): a Xing that flipped onto the Throne could still move off it in the
  same turn (`e5^D4-D5` was legal, and won only if that move captured the enemy Xing); the bare
  flip `e5^D4` won as in edition 2. Everything else is the same.

Resign: either seat may resign at any time while the game runs; the other seat wins
(events `resigned` {seat} then `won` {seat, reason: "resignation"}).

Options: `max_plies` (int >= 1, default 400).

Setup (tests, replays): a mapping
    {"pieces": {"b2": "dM", "C3": "lX", ...},   # square -> side d/l (Dark/Light) + type M/D/X
     "phase": 1 | 2,                            # default 2
     "to_move": 0 | 1,                          # default: phase 2 -> 0; phase 1 -> from hands
     "in_hand": {"d": {"M": 4, "D": 5, "X": 1}, "l": {...}},   # phase 1 only; optional
     "ply": 0, "passes": 0}                     # optional counters (ply < max_plies, passes 0|1)
Pearl squares are lower case, Stone squares upper case. Phase 1: all pieces on outside Pearls,
nothing captured yet (board + hand = 4 Ma, 5 Dao, 1 Xing per side; `in_hand` defaults to the
rest), hands alternate (Dark to move iff both hands hold the same number of pieces). Phase 2:
hands empty, each side has its Xing on the board and at most 4 Ma and 5 Dao, no piece on the Throne.

Events: `placed` {seat, move, piece, to}; `phase` {phase: 2}; `flipped` {seat, move, piece, from,
to}; `moved` {seat, move, piece, from, to, captured: piece or null}; `passed` {seat};
`won` {seat, reason: throne | xing_captured | resignation}; `draw` {reason: two_passes |
max_plies}; `resigned` {seat}. Pieces are written `dM`, `lX`, ... as in setups.

`render(state)` draws the board as text (Pearl rows interleaved with Stone rows, Wall, Throne).
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Mapping, Sequence
from typing import Final

from engines.canonical import canonical_json
from engines.contract import (
    JSON,
    Event,
    GameError,
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
# Geometry (Z1-Z3), precomputed at import.

PEARL_FILES: Final = "abcdefgh"
STONE_FILES: Final = "ABCDEFG"
N_PEARLS: Final = 64
N_STONES: Final = 49


def _p(col: int, row: int) -> int:
    return row * 8 + col


def _s(col: int, row: int) -> int:
    return row * 7 + col


PEARL_NAMES: Final[tuple[str, ...]] = tuple(f"{PEARL_FILES[i % 8]}{i // 8 + 1}" for i in range(64))
STONE_NAMES: Final[tuple[str, ...]] = tuple(f"{STONE_FILES[i % 7]}{i // 7 + 1}" for i in range(49))
PEARL_INDEX: Final[dict[str, int]] = {name: i for i, name in enumerate(PEARL_NAMES)}
STONE_INDEX: Final[dict[str, int]] = {name: i for i, name in enumerate(STONE_NAMES)}
THRONE: Final = _s(3, 3)  # D4

# Z2: Pearls c3..f6 are inside the Wall.
INSIDE: Final[tuple[bool, ...]] = tuple(2 <= i % 8 <= 5 and 2 <= i // 8 <= 5 for i in range(64))
OUTSIDE_PEARLS: Final[tuple[int, ...]] = tuple(i for i in range(64) if not INSIDE[i])
# Z2: the Wall encloses Stones B2..F6 (used to draw it only: the Wall never blocks Stones).
WALLED_STONE: Final[tuple[bool, ...]] = tuple(
    1 <= i % 7 <= 5 and 1 <= i // 7 <= 5 for i in range(49)
)

_ORTHO: Final = ((1, 0), (-1, 0), (0, 1), (0, -1))


def _pearl_neighbours(i: int) -> tuple[int, ...]:
    col, row = i % 8, i // 8
    return tuple(
        _p(col + dc, row + dr) for dc, dr in _ORTHO if 0 <= col + dc < 8 and 0 <= row + dr < 8
    )


# Every orthogonal neighbour (used to explain Wall refusals), and Z3 adjacency not across the Wall.
PEARL_NEIGHBOURS: Final[tuple[tuple[int, ...], ...]] = tuple(
    _pearl_neighbours(i) for i in range(64)
)
PEARL_ADJ: Final[tuple[tuple[int, ...], ...]] = tuple(
    tuple(q for q in PEARL_NEIGHBOURS[i] if INSIDE[q] == INSIDE[i]) for i in range(64)
)
# Z3: a Pearl touches the up to 4 Stones it is a corner of; a Stone touches its 4 corner Pearls.
PEARL_STONES: Final[tuple[tuple[int, ...], ...]] = tuple(
    tuple(
        _s(c, r)
        for r in (i // 8 - 1, i // 8)
        for c in (i % 8 - 1, i % 8)
        if 0 <= c < 7 and 0 <= r < 7
    )
    for i in range(64)
)
STONE_PEARLS: Final[tuple[tuple[int, ...], ...]] = tuple(
    tuple(_p(i % 7 + dc, i // 7 + dr) for dr in (0, 1) for dc in (0, 1)) for i in range(49)
)
_KNIGHT_STEPS: Final = ((1, 2), (2, 1), (2, -1), (1, -2), (-1, -2), (-2, -1), (-2, 1), (-1, 2))
KNIGHT: Final[tuple[tuple[int, ...], ...]] = tuple(
    tuple(
        _s(i % 7 + dc, i // 7 + dr)
        for dc, dr in _KNIGHT_STEPS
        if 0 <= i % 7 + dc < 7 and 0 <= i // 7 + dr < 7
    )
    for i in range(49)
)


def _ray(i: int, dc: int, dr: int) -> tuple[int, ...]:
    col, row, out = i % 7 + dc, i // 7 + dr, []
    while 0 <= col < 7 and 0 <= row < 7:
        out.append(_s(col, row))
        col, row = col + dc, row + dr
    return tuple(out)


RAYS: Final[tuple[tuple[tuple[int, ...], ...], ...]] = tuple(
    tuple(ray for dc, dr in _ORTHO if (ray := _ray(i, dc, dr))) for i in range(49)
)
STONE_ADJ: Final[tuple[tuple[int, ...], ...]] = tuple(
    tuple(ray[0] for ray in RAYS[i]) for i in range(49)
)

# --------------------------------------------------------------------------------------------
# Pieces (Z4). A square holds 0 (empty) or 1 + 3 * side + type.

MA: Final = 0
DAO: Final = 1
XING: Final = 2
TYPE_LETTERS: Final = "MDX"
TYPE_NAMES: Final = ("Ma", "Dao", "Xing")
SIDE_LETTERS: Final = "dl"
SIDE_NAMES: Final = ("Dark", "Light")
FULL_SET: Final = (4, 5, 1)  # Ma, Dao, Xing per side
CODE_CHARS: Final = ".MDXmdx"  # serialized boards
_CODE_BYTES: Final = bytes.maketrans(bytes(range(len(CODE_CHARS))), CODE_CHARS.encode())
"""A board's piece codes, as bytes, to its CODE_CHARS (bytes.translate)."""
PIECE_NAMES: Final = ("", "dM", "dD", "dX", "lM", "lD", "lX")
PIECE_CODES: Final[dict[str, int]] = {name: code for code, name in enumerate(PIECE_NAMES) if code}
SIDE_OF: Final = (-1, 0, 0, 0, 1, 1, 1)
TYPE_OF: Final = (-1, 0, 1, 2, 0, 1, 2)

# Precomputed move strings.
_STEP_STR: Final = tuple(tuple(f"{a}-{b}" for b in PEARL_NAMES) for a in PEARL_NAMES)
_STONE_STR: Final = tuple(tuple(f"{a}-{b}" for b in STONE_NAMES) for a in STONE_NAMES)
_PLACE_STR: Final = tuple(tuple(f"{t}@{p}" for p in PEARL_NAMES) for t in TYPE_LETTERS)
# Flips: per square, (target, "b2^B2", ("b2^B2-A1", ..., "b2^B2-G7")) for each adjacent square.
_FLIPS_PS: Final = tuple(
    tuple(
        (
            t,
            f"{PEARL_NAMES[p]}^{STONE_NAMES[t]}",
            tuple(f"{PEARL_NAMES[p]}^{_STONE_STR[t][u]}" for u in range(49)),
        )
        for t in PEARL_STONES[p]
    )
    for p in range(64)
)
_FLIPS_SP: Final = tuple(
    tuple(
        (
            t,
            f"{STONE_NAMES[s]}^{PEARL_NAMES[t]}",
            tuple(f"{STONE_NAMES[s]}^{_STEP_STR[t][u]}" for u in range(64)),
        )
        for t in STONE_PEARLS[s]
    )
    for s in range(49)
)

_SQUARES_HINT: Final = "Pearls are a1..h8 (lower case), Stones are A1..G7 (upper case)"
_FORMS_HINT: Final = (
    "moves look like M@b2 (placement), b2-b3 (Pearl step or Zox-chain move), C3-E4 (Stone move), "
    "b2^B2 or b2^B2-B5 (flip onto a Stone, then optionally move), C3^c4 or C3^c4-c5 (flip onto a "
    "Pearl, then optionally move), pass"
)


def _stone_targets(kind: int, src: int, stones: list[int], lo: int) -> list[int]:
    """Z8: where a piece of `kind` on Stone `src` may end its move (own codes are lo..lo+2)."""
    out: list[int] = []
    if kind == MA:
        for u in KNIGHT[src]:
            if u != THRONE and not lo <= stones[u] < lo + 3:
                out.append(u)
    elif kind == DAO:
        for ray in RAYS[src]:
            for u in ray:
                v = stones[u]
                if not v:
                    if u != THRONE:  # a Dao may cross the Throne but not stop on it
                        out.append(u)
                    continue
                if not lo <= v < lo + 3:
                    out.append(u)
                break
    else:
        for u in STONE_ADJ[src]:
            if not lo <= stones[u] < lo + 3:
                out.append(u)
    return out


def _chain(pearls: list[int], src: int, lo: int) -> tuple[list[int], set[int]]:
    """Z7: the Zox-chain through the own piece on Pearl `src` (own codes are lo..lo+2), a lone
    piece being a chain of one: its members, and every Pearl one of them may step to (empty or
    holding an enemy piece, not across the Wall)."""
    members, seen, dests = [src], {src}, set()
    for q in members:
        for n in PEARL_ADJ[q]:
            v = pearls[n]
            if lo <= v < lo + 3:
                if n not in seen:
                    seen.add(n)
                    members.append(n)
            else:
                dests.add(n)
    return members, dests


def _pearl_dests(pearls: list[int], src: int) -> set[int]:
    """Z7: every Pearl the piece on `src` may reach by a step or a Zox-chain move."""
    return _chain(pearls, src, 1 + 3 * SIDE_OF[pearls[src]])[1]


def _stone_flip(kind: int, st: int, edition: int) -> tuple[bool, bool]:
    """Z8, Z9: for a piece of `kind` flipping from a Pearl onto the empty Stone `st`, whether
    the flip alone is a move, and whether a move on the Stones may follow it."""
    if st != THRONE:
        return True, True
    if kind != XING:
        return False, True  # Z8: a Ma or Dao on the Throne must move off it
    # Z9: the Xing wins on the Throne. Revised Z9 (edition 2): the flip ends the turn; edition 1
    # (before it) let it move off as well, e5^D4-D5.
    return True, edition == 1


def _names(indices: Iterable[int], names: tuple[str, ...]) -> str:
    listed = sorted(names[i] for i in indices)
    return ", ".join(listed) if listed else "nowhere"


# --------------------------------------------------------------------------------------------
# Parsing


def _square(token: str) -> tuple[bool, int]:
    """(is_pearl, index) of a square name; MalformedMove if it does not exist."""
    if token in PEARL_INDEX:
        return True, PEARL_INDEX[token]
    if token in STONE_INDEX:
        return False, STONE_INDEX[token]
    raise MalformedMove(f"square {token!r} does not exist; {_SQUARES_HINT}")


Parsed = tuple[str, int, int, int]
"""(kind, a, b, c): ("pass", 0, 0, 0), ("place", type, pearl, 0), ("pearl", from, to, 0),
("stone", from, to, 0), ("flip_ps", pearl, stone, stone after or -1), ("flip_sp", stone, pearl,
pearl after or -1)."""


def parse_move(text: str) -> Parsed:
    """Parse ZoxSo notation. MalformedMove for text that is not notation; IllegalMove for a
    move-then-flip or a double flip (well understood, but Z6 forbids them)."""
    if not isinstance(text, str):
        raise MalformedMove(f"a move is a string; {_FORMS_HINT}")
    if text == "pass":
        return ("pass", 0, 0, 0)
    if "@" in text:
        kind, _, square = text.partition("@")
        if kind not in ("M", "D", "X"):
            raise MalformedMove(
                f"{text!r}: unknown piece {kind!r}; placements name M (Ma), D (Dao) or X (Xing), "
                "e.g. M@b2"
            )
        is_pearl, idx = _square(square)
        if not is_pearl:
            raise MalformedMove(f"{text!r}: pieces are placed on Pearls (a1..h8), not on Stones")
        return ("place", TYPE_LETTERS.index(kind), idx, 0)
    if "^" in text:
        if text.count("^") > 1:
            raise IllegalMove(
                f"{text}: you cannot flip twice in one turn (Z6); a turn is one flip, optionally "
                "followed by one move with the same piece"
            )
        src, _, rest = text.partition("^")
        if "-" in src:
            raise IllegalMove(
                f"{text}: you cannot move then flip (Z6); flip first, then optionally move, "
                "e.g. b2^B2-B5 or C3^c4-c5"
            )
        parts = rest.split("-")
        if len(parts) > 2:
            raise MalformedMove(
                f"{text!r}: a flip is followed by at most one move, e.g. b2^B2-B5; {_FORMS_HINT}"
            )
        src_pearl, a = _square(src)
        tgt_pearl, b = _square(parts[0])
        if src_pearl == tgt_pearl:
            raise MalformedMove(
                f"{text!r}: a flip changes layer: Pearl to Stone (b2^B2) or Stone to Pearl (C3^c4)"
            )
        c = -1
        if len(parts) == 2:
            dst_pearl, c = _square(parts[1])
            if dst_pearl != tgt_pearl:
                layer = "Pearls" if tgt_pearl else "Stones"
                raise MalformedMove(
                    f"{text!r}: after a flip the piece moves on its new layer, the {layer} "
                    "(e.g. b2^B2-B5, C3^c4-c5)"
                )
        return ("flip_ps" if src_pearl else "flip_sp", a, b, c)
    parts = text.split("-")
    if len(parts) != 2:
        raise MalformedMove(f"{text!r} is not a ZoxSo move; {_FORMS_HINT}")
    src_pearl, a = _square(parts[0])
    dst_pearl, b = _square(parts[1])
    if src_pearl != dst_pearl:
        raise MalformedMove(
            f"{text!r}: a move stays on one layer, Pearl to Pearl (b2-b3) or Stone to Stone "
            "(C3-E4); to change layer, flip (b2^B2)"
        )
    return ("pearl" if src_pearl else "stone", a, b, 0)


# --------------------------------------------------------------------------------------------
# State


class ZoxsoState(State):
    """One ZoxSo position. Boards are lists of piece codes; never mutated once returned."""

    __slots__ = (
        "_edition",
        "_hand",
        "_legal",
        "_legal_set",
        "_max_plies",
        "_passes",
        "_pearls",
        "_phase",
        "_ply",
        "_reason",
        "_seed",
        "_stones",
        "_to_move",
        "_winner",
    )

    _pearls: list[int]
    _stones: list[int]
    _hand: list[int]  # [dM, dD, dX, lM, lD, lX] still to place
    _to_move: int
    _phase: int
    _ply: int
    _passes: int
    _max_plies: int
    _seed: int
    _winner: int | None
    _reason: str | None  # set when the game is over
    _legal: list[str] | None
    _legal_set: frozenset[str] | None
    _edition: int  # the rules edition (see the module docstring): 1 or 2

    @property
    def num_seats(self) -> int:
        return 2

    @property
    def edition(self) -> int:
        return self._edition

    # ---- basic queries -------------------------------------------------------------------

    @property
    def phase(self) -> int:
        return self._phase

    @property
    def to_move(self) -> int:
        return self._to_move

    @property
    def ply(self) -> int:
        return self._ply

    def piece_at(self, square: str) -> str | None:
        """The piece (`dM`, `lX`, ...) on a Pearl or Stone, or None."""
        is_pearl, idx = _square(square)
        code = self._pearls[idx] if is_pearl else self._stones[idx]
        return PIECE_NAMES[code] or None

    def in_hand(self, seat: Seat, kind: int) -> int:
        """How many pieces of `kind` (MA, DAO, XING) `seat` has still to place (Z5)."""
        return self._hand[3 * seat + kind]

    def boards(self) -> tuple[Sequence[int], Sequence[int]]:
        """The piece codes (see PIECE_NAMES) on the 64 Pearls and the 49 Stones: what bots
        evaluate, much cheaper than `view`. The caller must not change them."""
        return self._pearls, self._stones

    def to_act(self) -> tuple[Seat, ...]:
        return () if self._reason is not None else (self._to_move,)

    def result(self) -> Result | None:
        if self._reason is None:
            return None
        if self._winner is None:
            return Result((), {0: 0.5, 1: 0.5}, {"reason": self._reason})
        w = self._winner
        return Result((w,), {w: 1.0, 1 - w: 0.0}, {"reason": self._reason})

    def legal_moves(self, seat: Seat) -> list[str]:
        check_seat(self, seat)
        if self._reason is not None or seat != self._to_move:
            return []
        return list(self._moves())

    def _moves(self) -> list[str]:
        if self._legal is None:
            moves = self._gen_place() if self._phase == 1 else self._gen_play()
            if not moves:
                moves = ["pass"]  # Z10
            moves.sort()
            self._legal = moves
            self._legal_set = frozenset(moves)
        return self._legal

    def _gen_place(self) -> list[str]:
        """Z5: a piece from hand onto an empty outside Pearl."""
        pearls, base = self._pearls, 3 * self._to_move
        out: list[str] = []
        empty = [p for p in OUTSIDE_PEARLS if not pearls[p]]
        for kind in range(3):
            if self._hand[base + kind]:
                row = _PLACE_STR[kind]
                out.extend(row[p] for p in empty)
        return out

    def _gen_play(self) -> list[str]:
        """Z6-Z8: moves, flips and flip-then-moves of the side to move."""
        pearls, stones = self._pearls, self._stones
        lo = 1 + 3 * self._to_move
        hi = lo + 3
        out: list[str] = []
        # Z7: Zox-chains. Every member of a chain reaches the union of its members' step targets.
        comp = [-1] * 64
        comp_dests: list[set[int]] = []
        for p in range(64):
            if comp[p] >= 0 or not lo <= pearls[p] < hi:
                continue
            k = len(comp_dests)
            members, dests = _chain(pearls, p, lo)
            for q in members:
                comp[q] = k
            comp_dests.append(dests)
            for q in members:
                row = _STEP_STR[q]
                out.extend([row[d] for d in dests])
                # Z6: flip onto an adjacent empty Stone, then optionally move there (Z8, Z9).
                kind = TYPE_OF[pearls[q]]
                for st, flip, then in _FLIPS_PS[q]:
                    if stones[st]:
                        continue
                    alone, then_move = _stone_flip(kind, st, self._edition)
                    if alone:
                        out.append(flip)
                    if then_move:
                        out.extend([then[u] for u in _stone_targets(kind, st, stones, lo)])
        for s in range(49):
            v = stones[s]
            if not lo <= v < hi:
                continue
            row = _STONE_STR[s]
            out.extend([row[u] for u in _stone_targets(TYPE_OF[v], s, stones, lo)])
            for q, flip, then in _FLIPS_SP[s]:
                if pearls[q]:
                    continue
                out.append(flip)
                # After the flip the piece on q joins every own chain next to it (Z7).
                dests = set()
                for n in PEARL_ADJ[q]:
                    w = pearls[n]
                    if lo <= w < hi:
                        dests |= comp_dests[comp[n]]
                    else:
                        dests.add(n)
                dests.discard(q)
                out.extend([then[d] for d in dests])
        return out

    # ---- apply -----------------------------------------------------------------------------

    def apply(self, seat: Seat, move: str) -> tuple[ZoxsoState, list[Event]]:
        check_seat(self, seat)
        if self._reason is not None:
            raise GameOver(f"the game is over ({self._reason}); no move is possible")
        if seat != self._to_move:
            raise NotYourTurn(
                f"it is {SIDE_NAMES[self._to_move]}'s turn (seat {self._to_move}), "
                f"not seat {seat}'s"
            )
        # The move is checked by itself (`_allows`), not looked up among every legal move: only a
        # refusal lists them, to say what is allowed. parse_move raises what the refusal would.
        parsed = parse_move(move)
        if not self._allows(parsed):
            raise self._refusal(move)
        return self._play(seat, parsed, move)

    def _allows(self, parsed: Parsed) -> bool:
        """Whether the parsed move is one of `_moves()`, by the rules the generators apply, for
        this one move."""
        kind, a, b, c = parsed
        if kind == "pass":  # Z10: only when there is no other move, which takes them all
            return self._moves() == ["pass"]
        if self._phase == 1:  # Z5: a piece from hand onto an empty outside Pearl
            return (
                kind == "place"
                and self._hand[3 * self._to_move + a] > 0
                and not INSIDE[b]
                and not self._pearls[b]
            )
        pearls, stones = self._pearls, self._stones
        lo = 1 + 3 * self._to_move
        if kind == "pearl":  # Z7: a step or a Zox-chain move
            return lo <= pearls[a] < lo + 3 and b in _pearl_dests(pearls, a)
        if kind == "stone":  # Z8
            code = stones[a]
            return lo <= code < lo + 3 and b in _stone_targets(TYPE_OF[code], a, stones, lo)
        if kind == "flip_ps":  # Z6: onto an adjacent empty Stone, then optionally move (Z8, Z9)
            code = pearls[a]
            if not lo <= code < lo + 3 or b not in PEARL_STONES[a] or stones[b]:
                return False
            alone, then_move = _stone_flip(TYPE_OF[code], b, self._edition)
            if c < 0:
                return alone
            return then_move and c in _stone_targets(TYPE_OF[code], b, stones, lo)
        if kind == "flip_sp":  # Z6: onto an adjacent empty Pearl, then optionally move (Z7)
            code = stones[a]
            if not lo <= code < lo + 3 or b not in STONE_PEARLS[a] or pearls[b]:
                return False
            if c < 0:
                return True
            # After the flip the piece on b belongs to every own chain next to it (Z7): the
            # Pearls `_gen_play` reaches through those chains, as `_refuse_pearl` sees them.
            after = list(pearls)
            after[b] = code
            return c in _pearl_dests(after, b)
        return False  # a placement in Phase 2

    def _copy(self) -> ZoxsoState:
        new = ZoxsoState.__new__(ZoxsoState)
        new._pearls = self._pearls
        new._stones = self._stones
        new._hand = self._hand
        new._to_move = self._to_move
        new._phase = self._phase
        new._ply = self._ply
        new._passes = self._passes
        new._max_plies = self._max_plies
        new._seed = self._seed
        new._winner = self._winner
        new._reason = self._reason
        new._legal = None
        new._legal_set = None
        new._edition = self._edition
        return new

    def _play(self, seat: int, parsed: Parsed, move: str) -> tuple[ZoxsoState, list[Event]]:
        new = self._copy()
        events: list[Event] = []
        kind, a, b, c = parsed
        won: str | None = None
        if kind == "pass":
            new._passes = self._passes + 1
            events.append(Event("passed", {"seat": seat}))
        else:
            new._passes = 0
        if kind == "place":
            code = 1 + 3 * seat + a
            new._pearls = pearls = list(self._pearls)
            new._hand = hand = list(self._hand)
            pearls[b] = code
            hand[3 * seat + a] -= 1
            events.append(
                Event(
                    "placed",
                    {"seat": seat, "move": move, "piece": PIECE_NAMES[code], "to": PEARL_NAMES[b]},
                )
            )
            if not any(hand):
                new._phase = 2
                events.append(Event("phase", {"phase": 2}))
        elif kind in ("pearl", "flip_sp"):
            new._pearls = pearls = list(self._pearls)
            if kind == "flip_sp":
                new._stones = stones = list(self._stones)
                code = stones[a]
                stones[a] = 0
                pearls[b] = code
                events.append(self._flip_event(seat, move, code, STONE_NAMES[a], PEARL_NAMES[b]))
                a, b = b, c
            if b >= 0:
                code, captured = pearls[a], pearls[b]
                pearls[b] = code
                pearls[a] = 0
                events.append(
                    self._move_event(seat, move, code, PEARL_NAMES[a], PEARL_NAMES[b], captured)
                )
                if TYPE_OF[captured] == XING:
                    won = "xing_captured"
        elif kind in ("stone", "flip_ps"):
            new._stones = stones = list(self._stones)
            end = b
            if kind == "flip_ps":
                new._pearls = pearls = list(self._pearls)
                code = pearls[a]
                pearls[a] = 0
                stones[b] = code
                events.append(self._flip_event(seat, move, code, PEARL_NAMES[a], STONE_NAMES[b]))
                a, b = b, c
            if b >= 0:
                code, captured = stones[a], stones[b]
                stones[b] = code
                stones[a] = 0
                events.append(
                    self._move_event(seat, move, code, STONE_NAMES[a], STONE_NAMES[b], captured)
                )
                if TYPE_OF[captured] == XING:
                    won = "xing_captured"
                end = b
            if TYPE_OF[stones[end]] == XING and end == THRONE:  # Z9
                won = "throne"
        new._ply = self._ply + 1
        new._to_move = 1 - seat
        if won is not None:
            new._winner = seat
            new._reason = won
            events.append(Event("won", {"seat": seat, "reason": won}))
        elif new._passes >= 2:
            new._reason = "two_passes"
            events.append(Event("draw", {"reason": "two_passes"}))
        elif new._ply >= new._max_plies:
            new._reason = "max_plies"
            events.append(Event("draw", {"reason": "max_plies"}))
        return new, events

    @staticmethod
    def _flip_event(seat: int, move: str, code: int, src: str, dst: str) -> Event:
        data: dict[str, JSON] = {
            "seat": seat,
            "move": move,
            "piece": PIECE_NAMES[code],
            "from": src,
            "to": dst,
        }
        return Event("flipped", data)

    @staticmethod
    def _move_event(seat: int, move: str, code: int, src: str, dst: str, captured: int) -> Event:
        data: dict[str, JSON] = {
            "seat": seat,
            "move": move,
            "piece": PIECE_NAMES[code],
            "from": src,
            "to": dst,
            "captured": PIECE_NAMES[captured] or None,
        }
        return Event("moved", data)

    # ---- refusals: why a move is not legal, and what is ------------------------------------

    def _refusal(self, move: str) -> GameError:
        try:
            kind, a, b, c = parse_move(move)
        except GameError as error:
            return error
        side = self._to_move
        if kind == "pass":
            n = len(self._moves())
            return IllegalMove(
                f"pass is allowed only when you have no legal move (Z10); you have {n}, "
                f"e.g. {self._moves()[0]}"
            )
        if self._phase == 1:
            if kind != "place":
                return IllegalMove(
                    f"{move}: moves and flips are not allowed in Phase 1 (Z5); place a piece "
                    "from your hand on an empty Pearl outside the Wall, e.g. "
                    f"{self._moves()[0]}"
                )
            return self._refuse_place(move, a, b)
        if kind == "place":
            return IllegalMove(
                f"{move}: every piece is on the board, Phase 1 is over (Z5); now move, or flip "
                "and then optionally move"
            )
        pearls, stones = self._pearls, self._stones
        if kind == "pearl":
            return self._refuse_pearl(move, pearls, a, b, "")
        if kind == "stone":
            return self._refuse_stone(move, stones, a, b, "")
        if kind == "flip_ps":
            owner = self._refuse_owner(move, pearls[a], PEARL_NAMES[a])
            if owner:
                return owner
            if b not in PEARL_STONES[a]:
                return IllegalMove(
                    f"{move}: {STONE_NAMES[b]} is not next to {PEARL_NAMES[a]}; a piece on "
                    f"{PEARL_NAMES[a]} flips onto one of the Stones "
                    f"{_names(PEARL_STONES[a], STONE_NAMES)} (Z3)"
                )
            if stones[b]:
                return IllegalMove(
                    f"{move}: {STONE_NAMES[b]} is occupied; a flip goes onto an adjacent empty "
                    "Stone (Z6)"
                )
            piece = TYPE_OF[pearls[a]]
            if b == THRONE and piece == XING and c >= 0 and self._edition != 1:
                return IllegalMove(
                    f"{move}: a Xing that flips onto the Throne D4 wins there at once, so the "
                    f"turn ends with the flip and no move may follow it (Z9); play "
                    f"{PEARL_NAMES[a]}^D4 to win"
                )
            if c < 0:
                if b == THRONE and piece != XING:
                    targets = _stone_targets(piece, b, stones, 1 + 3 * side)
                    return IllegalMove(
                        f"{move}: a {TYPE_NAMES[piece]} that flips onto the Throne must move off "
                        f"it in the same turn (Z8); from D4 it may go to: "
                        f"{_names(targets, STONE_NAMES)}"
                    )
            else:
                after = list(stones)
                after[b] = pearls[a]
                return self._refuse_stone(move, after, b, c, "after the flip, ")
        if kind == "flip_sp":
            owner = self._refuse_owner(move, stones[a], STONE_NAMES[a])
            if owner:
                return owner
            if b not in STONE_PEARLS[a]:
                return IllegalMove(
                    f"{move}: {PEARL_NAMES[b]} is not a corner of {STONE_NAMES[a]}; a piece on "
                    f"{STONE_NAMES[a]} flips onto one of the Pearls "
                    f"{_names(STONE_PEARLS[a], PEARL_NAMES)} (Z3)"
                )
            if pearls[b]:
                return IllegalMove(
                    f"{move}: {PEARL_NAMES[b]} is occupied; a flip goes onto an adjacent empty "
                    "Pearl (Z6)"
                )
            if c >= 0:
                after = list(pearls)
                after[b] = stones[a]
                return self._refuse_pearl(move, after, b, c, "after the flip, ")
        return IllegalMove(f"{move} is not a legal move now")  # pragma: no cover (defensive)

    def _refuse_owner(self, move: str, code: int, square: str) -> GameError | None:
        side = self._to_move
        if not code:
            return IllegalMove(
                f"{move}: there is no piece on {square}; move or flip one of your own pieces"
            )
        if SIDE_OF[code] != side:
            return IllegalMove(
                f"{move}: the piece on {square} is {SIDE_NAMES[1 - side]}'s; you play "
                f"{SIDE_NAMES[side]}"
            )
        return None

    def _refuse_place(self, move: str, kind: int, p: int) -> GameError:
        base = 3 * self._to_move
        if not self._hand[base + kind]:
            left = ", ".join(
                f"{self._hand[base + k]} {TYPE_NAMES[k]}" for k in range(3) if self._hand[base + k]
            )
            return IllegalMove(
                f"{move}: you have no {TYPE_NAMES[kind]} left to place; in hand: {left}"
            )
        if INSIDE[p]:
            return IllegalMove(
                f"{move}: {PEARL_NAMES[p]} is inside the Wall; Phase 1 placements go on empty "
                "Pearls outside the Wall (not c3..f6) (Z5)"
            )
        return IllegalMove(
            f"{move}: {PEARL_NAMES[p]} is occupied; place on an empty Pearl outside the Wall (Z5)"
        )

    def _refuse_pearl(self, move: str, pearls: list[int], a: int, b: int, pre: str) -> GameError:
        owner = self._refuse_owner(move, pearls[a], PEARL_NAMES[a])
        if owner:
            return owner
        an, bn = PEARL_NAMES[a], PEARL_NAMES[b]
        said = f"{move}: {pre}{an}-{bn}" if pre else move
        if a == b:
            return IllegalMove(f"{said} does not move; a move goes to another Pearl")
        if INSIDE[a] != INSIDE[b]:
            return IllegalMove(
                f"{said} crosses the Wall; Pearl steps and Zox-chain moves stay on one side of "
                "the Wall (Z2); to pass it, flip onto the Stones"
            )
        if SIDE_OF[pearls[b]] == self._to_move:
            return IllegalMove(
                f"{move}: {pre}{bn} holds your own piece; a Pearl move goes to an empty Pearl or "
                "captures an enemy piece (Z7)"
            )
        return IllegalMove(
            f"{said} is neither a step nor a Zox-chain move (Z7); the piece on {an} may go to: "
            f"{_names(_pearl_dests(pearls, a), PEARL_NAMES)}"
        )

    def _refuse_stone(self, move: str, stones: list[int], a: int, b: int, pre: str) -> GameError:
        owner = self._refuse_owner(move, stones[a], STONE_NAMES[a])
        if owner:
            return owner
        code = stones[a]
        piece = TYPE_OF[code]
        an, bn = STONE_NAMES[a], STONE_NAMES[b]
        options = _names(_stone_targets(piece, a, stones, 1 + 3 * self._to_move), STONE_NAMES)
        if a == b:
            said = f"{move}: {pre}{an}-{bn}" if pre else move
            return IllegalMove(f"{said} does not move; {an} may go to: {options}")
        if SIDE_OF[stones[b]] == self._to_move:
            return IllegalMove(
                f"{move}: {pre}{bn} holds your own piece; a Stone move goes to an empty Stone or "
                f"captures an enemy piece; the {TYPE_NAMES[piece]} on {an} may go to: {options}"
            )
        if b == THRONE and piece != XING:
            return IllegalMove(
                f"{move}: only a Xing may end a turn on the Throne D4 (Z8); a {TYPE_NAMES[piece]} "
                f"may only cross it; the {TYPE_NAMES[piece]} on {an} may go to: {options}"
            )
        if piece == MA:
            rule = "a Ma jumps like a chess knight, over anything (Z8)"
        elif piece == XING:
            rule = "a Xing moves one Stone orthogonally (Z8)"
        else:
            rule = "a Dao moves along a row or column of Stones and stops at the first piece (Z8)"
            for ray in RAYS[a]:
                if b in ray:
                    for u in ray[: ray.index(b)]:
                        if stones[u]:
                            rule = (
                                f"the Dao's path from {an} to {bn} is blocked by the piece on "
                                f"{STONE_NAMES[u]}; a Dao stops at the first piece (Z8)"
                            )
                            break
        return IllegalMove(
            f"{move}: {pre}{rule}; the {TYPE_NAMES[piece]} on {an} may go to: {options}"
        )

    # ---- other contract methods -------------------------------------------------------------

    def resign(self, seat: Seat) -> tuple[ZoxsoState, list[Event]]:
        check_seat(self, seat)
        if self._reason is not None:
            raise GameOver(f"the game is over ({self._reason}); there is nothing to resign")
        new = self._copy()
        new._winner = 1 - seat
        new._reason = "resignation"
        return new, [
            Event("resigned", {"seat": seat}),
            Event("won", {"seat": 1 - seat, "reason": "resignation"}),
        ]

    def view(self, seat: Seat | None) -> dict[str, JSON]:
        if seat is not None:
            check_seat(self, seat)
        result = self.result()
        return {
            "game": "zoxso",
            "phase": self._phase,
            "to_move": self._to_move,
            "ply": self._ply,
            "max_plies": self._max_plies,
            "passes": self._passes,
            "throne": STONE_NAMES[THRONE],
            "pearls": {PEARL_NAMES[i]: PIECE_NAMES[v] for i, v in enumerate(self._pearls) if v},
            "stones": {STONE_NAMES[i]: PIECE_NAMES[v] for i, v in enumerate(self._stones) if v},
            "in_hand": {
                SIDE_LETTERS[side]: {TYPE_LETTERS[k]: self._hand[3 * side + k] for k in range(3)}
                for side in range(2)
            },
            "result": None if result is None else result.to_json(),
            "edition": self._edition,
        }

    def determinize(self, seat: Seat | None, rng: random.Random) -> State:
        return self  # Z4: no hidden information

    def serialize(self) -> bytes:
        data = {
            "v": 1,
            "seed": self._seed,
            "max_plies": self._max_plies,
            "pearls": bytes(self._pearls).translate(_CODE_BYTES).decode(),
            "stones": bytes(self._stones).translate(_CODE_BYTES).decode(),
            "hand": self._hand,
            "to_move": self._to_move,
            "phase": self._phase,
            "ply": self._ply,
            "passes": self._passes,
            "winner": self._winner,
            "reason": self._reason,
            "edition": self._edition,
        }
        return canonical_json(data).encode()


# --------------------------------------------------------------------------------------------
# Rules


def _make_state(
    seed: int,
    max_plies: int,
    pearls: list[int],
    stones: list[int],
    hand: list[int],
    to_move: int,
    phase: int,
    ply: int = 0,
    passes: int = 0,
    winner: int | None = None,
    reason: str | None = None,
    *,
    edition: int,
) -> ZoxsoState:
    state = ZoxsoState.__new__(ZoxsoState)
    state._pearls = pearls
    state._stones = stones
    state._hand = hand
    state._to_move = to_move
    state._phase = phase
    state._ply = ply
    state._passes = passes
    state._max_plies = max_plies
    state._seed = seed
    state._winner = winner
    state._reason = reason
    state._legal = None
    state._legal_set = None
    state._edition = edition
    return state


def _int(value: object, name: str, low: int, high: int | None, error: type[GameError]) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise error(f"{name} must be an integer, not {value!r}")
    if value < low or (high is not None and value > high):
        allowed = f"{low}..{high}" if high is not None else f">= {low}"
        raise error(f"{name} must be {allowed}, not {value}")
    return value


def _setup_state(seed: int, max_plies: int, setup: Mapping[str, JSON], edition: int) -> ZoxsoState:
    if not isinstance(setup, Mapping):
        raise InvalidSetup("a setup is a mapping with keys pieces, phase, to_move, in_hand, ply")
    keys = {"pieces", "phase", "to_move", "in_hand", "ply", "passes"}
    for key in setup:
        if key not in keys:
            raise InvalidSetup(f"unknown setup key {key!r}; keys are {', '.join(sorted(keys))}")
    pieces = setup.get("pieces")
    if not isinstance(pieces, Mapping):
        raise InvalidSetup('setup needs "pieces": a mapping like {"b2": "dM", "C3": "lX"}')
    pearls, stones = [0] * 64, [0] * 49
    on_board = [0] * 6
    for square, piece in pieces.items():
        code = PIECE_CODES.get(piece) if isinstance(piece, str) else None
        if code is None:
            raise InvalidSetup(
                f"piece {piece!r} on {square!r}: pieces are d (Dark) or l (Light) followed by "
                "M (Ma), D (Dao) or X (Xing), e.g. dM, lX"
            )
        if square in PEARL_INDEX:
            pearls[PEARL_INDEX[square]] = code
        elif square in STONE_INDEX:
            stones[STONE_INDEX[square]] = code
        else:
            raise InvalidSetup(f"square {square!r} does not exist; {_SQUARES_HINT}")
        on_board[code - 1] += 1
    for i, count in enumerate(on_board):
        if count > FULL_SET[i % 3]:
            raise InvalidSetup(
                f"{SIDE_NAMES[i // 3]} has {count} {TYPE_NAMES[i % 3]} on the board; each side "
                "has 4 Ma, 5 Dao, 1 Xing (Z4)"
            )
    phase = _int(setup.get("phase", 2), "phase", 1, 2, InvalidSetup)
    ply = _int(setup.get("ply", 0), "ply", 0, max_plies - 1, InvalidSetup)
    passes = _int(setup.get("passes", 0), "passes", 0, 1, InvalidSetup)
    rest = [FULL_SET[i % 3] - on_board[i] for i in range(6)]
    given = setup.get("in_hand")
    hand = [0] * 6
    if given is not None:
        if not isinstance(given, Mapping) or not set(given) <= {"d", "l"}:
            raise InvalidSetup('in_hand is {"d": {"M": n, "D": n, "X": n}, "l": {...}}')
        for side in range(2):
            counts = given.get(SIDE_LETTERS[side], {})
            if not isinstance(counts, Mapping) or not set(counts) <= set(TYPE_LETTERS):
                raise InvalidSetup('in_hand counts look like {"M": 4, "D": 5, "X": 1}')
            for k in range(3):
                hand[3 * side + k] = _int(
                    counts.get(TYPE_LETTERS[k], 0), "an in_hand count", 0, None, InvalidSetup
                )
    if phase == 1:
        if given is None:
            hand = rest
        elif hand != rest:
            raise InvalidSetup(
                "in Phase 1 nothing has been captured: each side's pieces on the board plus in "
                "hand must be exactly 4 Ma, 5 Dao, 1 Xing (Z4, Z5)"
            )
        if any(stones):
            raise InvalidSetup("in Phase 1 every piece is on a Pearl (Z5)")
        if any(pearls[p] for p in range(64) if INSIDE[p]):
            raise InvalidSetup("in Phase 1 pieces are placed outside the Wall only (Z5)")
        dark, light = sum(hand[:3]), sum(hand[3:])
        if not dark + light:
            raise InvalidSetup("Phase 1 with every piece placed: use phase 2")
        if dark not in (light, light - 1):
            raise InvalidSetup(
                f"Phase 1 hands hold {dark} Dark and {light} Light pieces; players alternate "
                "from Dark, so Dark holds as many as Light, or one fewer (Z5)"
            )
        default_to_move = 0 if dark == light else 1
        to_move = _int(setup.get("to_move", default_to_move), "to_move", 0, 1, InvalidSetup)
        if to_move != default_to_move:
            raise InvalidSetup(
                f"with {dark} Dark and {light} Light pieces in hand it is "
                f"{SIDE_NAMES[default_to_move]}'s turn (to_move {default_to_move}) (Z5)"
            )
    else:
        if any(hand):
            raise InvalidSetup("in Phase 2 every piece is on the board: in_hand must be empty")
        for side in range(2):
            if on_board[3 * side + XING] != 1:
                raise InvalidSetup(
                    f"{SIDE_NAMES[side]} needs its Xing on the board in Phase 2 (without it the "
                    "game is over, Z9)"
                )
        if stones[THRONE]:
            raise InvalidSetup(
                "no piece stands on the Throne D4 between turns: a Xing there has won, a Ma or "
                "Dao may not stay (Z8, Z9)"
            )
        to_move = _int(setup.get("to_move", 0), "to_move", 0, 1, InvalidSetup)
    return _make_state(
        seed, max_plies, pearls, stones, hand, to_move, phase, ply, passes, edition=edition
    )


class ZoxsoRules:
    """ZoxSo: a stateless factory of ZoxsoState."""

    name: str = "zoxso"
    min_seats: int = 2
    max_seats: int = 2
    edition: int = 2
    """Edition 2: the revised Z9 (a Xing's flip onto the Throne ends the turn)."""
    editions: tuple[int, ...] = (1, 2)

    def default_options(self) -> dict[str, JSON]:
        return {"max_plies": 400}

    def new_game(
        self,
        seed: int,
        options: Mapping[str, JSON] | None = None,
        setup: Mapping[str, JSON] | None = None,
        *,
        edition: int | None = None,
    ) -> ZoxsoState:
        played = check_edition(self, edition)
        merged = check_options(options, self.default_options())
        max_plies = _int(merged["max_plies"], "max_plies", 1, None, InvalidOptions)
        if setup is not None:
            return _setup_state(seed, max_plies, setup, played)
        return _make_state(
            seed, max_plies, [0] * 64, [0] * 49, [*FULL_SET, *FULL_SET], 0, 1, edition=played
        )

    def _edition_of(self, value: object, where: str) -> int:
        """`value` as one of `editions`, else ValueError (a stored state or a view)."""
        if not isinstance(value, int) or isinstance(value, bool) or value not in self.editions:
            known = ", ".join(map(str, self.editions))
            raise ValueError(f"{where}: no ZoxSo rules edition {value!r}; editions are {known}")
        return value

    def deserialize(self, data: bytes) -> ZoxsoState:
        obj = json.loads(data)
        if not isinstance(obj, dict) or obj.get("v") != 1:
            raise ValueError("not a serialized ZoxSo state (version 1)")
        return _make_state(
            obj["seed"],
            obj["max_plies"],
            [CODE_CHARS.index(ch) for ch in obj["pearls"]],
            [CODE_CHARS.index(ch) for ch in obj["stones"]],
            list(obj["hand"]),
            obj["to_move"],
            obj["phase"],
            obj["ply"],
            obj["passes"],
            obj["winner"],
            obj["reason"],
            # Snapshots stored before rules editions existed carry none: they are edition 1.
            edition=self._edition_of(obj.get("edition", 1), "serialized state"),
        )

    def from_view(self, view: Mapping[str, JSON], seat: Seat, rng: random.Random) -> ZoxsoState:
        """The exact position (Z4: nothing is hidden), in the view's rules edition (the current
        one when the view has none). The view does not carry the seed, which changes nothing in
        play: the state has seed 0."""
        edition = self._edition_of(view.get("edition", self.edition), "view")
        pearls, stones = [0] * 64, [0] * 49
        for layer, board, index in (
            ("pearls", pearls, PEARL_INDEX),
            ("stones", stones, STONE_INDEX),
        ):
            for square, name in view[layer].items():
                if square not in index or name not in PIECE_CODES:
                    raise ValueError(f"{layer}: no piece {name!r} on a square {square!r}")
                board[index[square]] = PIECE_CODES[name]
        in_hand = view["in_hand"]
        hand = [in_hand[SIDE_LETTERS[side]][TYPE_LETTERS[k]] for side in range(2) for k in range(3)]
        winner: int | None = None
        reason: str | None = None
        result = view["result"]
        if result is not None:
            winners = result["winners"]
            winner = winners[0] if winners else None
            reason = result["detail"]["reason"]
        return _make_state(
            0,
            view["max_plies"],
            pearls,
            stones,
            hand,
            view["to_move"],
            view["phase"],
            view["ply"],
            view["passes"],
            winner,
            reason,
            edition=edition,
        )


RULES: Final = ZoxsoRules()


# --------------------------------------------------------------------------------------------
# Text board


PICTURE_COLUMN: Final = 6
"""Text columns per Pearl file in `picture`."""
LEGEND: Final = (
    "d Dark, l Light; M Ma, D Dao, X Xing; Pearls a1..h8, Stones A1..G7 between them",
    f"= and | the Wall (+ an empty Pearl inside it); [..] the Throne {STONE_NAMES[THRONE]}",
)
"""What `picture`'s marks mean."""


def picture(pearls: Mapping[str, str], stones: Mapping[str, str]) -> list[str]:
    """The board as lines of text, Light's side (row 8) at the top: what the terminal client
    draws (in colour) and the rules document shows. `pearls` and `stones` map squares to the
    pieces on them (`{"b2": "dM"}`).

    Pearl rows (8 down to 1, files a..h) alternate with Stone rows (7 down to 1, files A..G,
    each Stone between its four corner Pearls, a little lower and to the right of its own
    Pearl). A piece is its side (d Dark, l Light) and type (M Ma, D Dao, X Xing); an empty
    Pearl is `.`, or `+` inside the Wall; an empty Stone `__`, the Throne `[__]`. The Wall
    (Z2) is drawn where it lies: `=` along Pearl rows 2 and 7 from b to g, `|` on files b and
    g between them, so that what lies strictly inside it is inside the Wall: Stones B2..F6 and
    Pearls c3..f6. The ring Pearls b2..g7 sit on the Wall and are outside.
    """
    width = PICTURE_COLUMN

    def pearl_x(col: int) -> int:
        return 3 + width * col

    def line(cells: Iterable[tuple[int, str]]) -> str:
        text = ""
        for x, cell in sorted(cells):
            text += " " * (x - len(text)) + cell
        return text.rstrip()

    files = [(pearl_x(c), f) for c, f in enumerate(PEARL_FILES)]
    files += [(pearl_x(c) + 3, f) for c, f in enumerate(STONE_FILES)]
    lines = [line(files)]
    for row in range(8, 0, -1):
        cells = [(0, str(row))]
        for col, name in enumerate(PEARL_FILES):
            square = f"{name}{row}"
            empty = "+" if INSIDE[PEARL_INDEX[square]] else "."
            cells.append((pearl_x(col), pearls.get(square) or empty))
            if row in (2, 7) and 1 <= col < 6:  # the Wall runs along Pearl rows 2 and 7
                cells.append((pearl_x(col) + 2, "=" * (width - 2)))
        lines.append(line(cells))
        if row == 1:
            break
        stone_row = row - 1
        cells = [(1, str(stone_row))]
        for col, name in enumerate(STONE_FILES):
            square = f"{name}{stone_row}"
            mark = stones.get(square) or "__"
            if STONE_INDEX[square] == THRONE:
                cells.append((pearl_x(col) + 2, f"[{mark}]"))
            else:
                cells.append((pearl_x(col) + 3, mark))
        if WALLED_STONE[STONE_INDEX[f"B{stone_row}"]]:  # ... and on files b and g between
            cells += [(pearl_x(1), "|"), (pearl_x(6), "|")]
        lines.append(line(cells))
    return lines


def render(state: ZoxsoState) -> str:
    """A text picture of the position: a line saying where the game is, the board as the
    terminal client draws it (`picture`), what its marks mean, and in phase 1 the hands."""
    view = state.view(None)
    result = state.result()
    head = f"ZoxSo, phase {state._phase}, ply {state._ply}/{state._max_plies}, "
    if result is None:
        head += f"{SIDE_NAMES[state._to_move]} to move"
    elif result.winners:
        head += f"{SIDE_NAMES[result.winners[0]]} won ({result.detail['reason']})"
    else:
        head += f"a draw ({result.detail['reason']})"
    lines = [head, *picture(view["pearls"], view["stones"]), *LEGEND]
    if state._phase == 1:
        lines.append(
            "  ".join(
                f"{SIDE_NAMES[side]} in hand: "
                + " ".join(f"{state._hand[3 * side + k]}{TYPE_LETTERS[k]}" for k in range(3))
                for side in range(2)
            )
        )
    return "\n".join(lines) + "\n"
