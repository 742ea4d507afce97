"""The Solace bot: the best play there is from what the player can see (L4).

Solace hides only colours: every piece's size is fixed by its place in a nest (a 3 over a 2
over a 1), and the pieces are dealt uniformly (L2). So all that a player knows is the *position
as seen*: per space its nest pieces left (with the colours that show, the others unknown), its
tower and whether a tower was promoted there. How many black 2s and black 1s are still hidden
follows from it (five of each in all, less those seen in nests and in towers, whose colour is
their row's), and every way of colouring the hidden pieces with those counts is equally likely
(with `no_monochrome`, every such way that leaves no nest of one colour).

The bot searches that game exactly: an expectimax over positions as seen. A move that lifts a
black piece reveals what was under it (the piece below, and the one below that when the
revealed piece is clear), with the probability of each outcome being the share of the hidden
colourings that agree with it; a position's value is its score if the player stops, else the
best move's expected value. So the bot plays every position with the highest expected final
score any player who cannot look inside black pieces can achieve: no bot can do better on
average. `expected_score(state)` is that expectation.

Within a row, spaces are interchangeable (moves depend on a space's row and contents), so a
position is keyed by each row's sorted multiset of spaces, and the same position seen in
another game is the same entry: the values are kept per process and shared between games (a
fresh process fills them in about a second; about 100,000 entries cover 10,000 deals). A node
stops early once it reaches its upper bound (four promoted towers a row; see `solace_solver`).

Nothing here reads a hidden piece: `seen` takes a state's visible pieces only, and everything
after works on the seen position. Two positions that look the same get the same move.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import comb
from typing import Final

from games.solace.layout import BLACK, CLEAR, NUM_SPACES, PARSE, ROW_OF, ROW_SPACES, STOP
from games.solace.rules import SolaceState

UNKNOWN: Final = 2
"""The colour of a piece the player cannot see."""
GONE: Final = 3
"""The 'colour' of a nest slot whose piece has moved away."""

Space = tuple[int, int, int, int, int, bool]
"""(nest pieces left, tower height, colour of the 3, of the 2, of the 1, promoted)."""
Seen = tuple[Space, ...]
"""A position as seen: ten spaces, B1..B5 then C1..C5."""

PROMOTED: Final[Space] = (0, 0, GONE, GONE, GONE, True)
_OPEN: Final[Space] = (0, 0, GONE, GONE, GONE, False)
MEMO_LIMIT: Final = 2_000_000
"""Entries a search keeps before starting afresh (about 0.5 GB): a bound for long-lived
workers; the default study of 10,000 deals needs far fewer."""
_EPSILON: Final = 1e-9

_PROMOTION, _BUILD, _FOUNDATION = 0, 1, 2
Move = tuple[int, int, int]
"""(kind, from, to); kinds ordered so that promotions are tried first."""


def seen(state: SolaceState) -> Seen:
    """`state`'s position as the player sees it: hidden pieces are UNKNOWN."""
    hidden = set(state.hidden_slots())
    out: list[Space] = []
    for s in range(NUM_SPACES):
        if state.promoted[s]:
            out.append(PROMOTED)
            continue
        left = state.counts[s]
        colours = [
            GONE if idx < 3 - left else UNKNOWN if (s, idx) in hidden else state.deal[s][idx]
            for idx in range(3)
        ]
        out.append((left, state.towers[s], colours[0], colours[1], colours[2], False))
    return tuple(out)


def _key(position: Seen) -> tuple[tuple[Space, ...], tuple[Space, ...]]:
    return (tuple(sorted(position[:5])), tuple(sorted(position[5:])))


def _moves(position: Seen) -> list[Move]:
    """The legal board moves (L6), one of each kind of move between spaces that look the same
    (they lead to the same position)."""
    out: list[Move] = []
    for s, (left, tower, *_colours, promoted) in enumerate(position):
        if promoted or left == 0:
            continue
        if left == 3:
            row = ROW_SPACES[ROW_OF[s]]  # a 3 is its row's colour (L3)
            if tower == 0:
                out += [
                    (_FOUNDATION, s, t)
                    for t in row
                    if t != s and position[t][0] == 3 and position[t][1] == 0
                ]
            elif tower == 3:
                out += [(_PROMOTION, s, t) for t in row if position[t] == _OPEN][:1]
        else:
            colour = position[s][2 + 3 - left]  # the outer piece: always seen
            out += [
                (_BUILD, s, t)
                for t in ROW_SPACES[colour]
                if position[t][0] == 3 and position[t][1] == 3 - left
            ]
    out.sort()
    unique: dict[Look, Move] = {}
    for move in out:
        unique.setdefault(_look(position, move[1], move[2]), move)
    return list(unique.values())


Look = tuple[int, Space, int, Space]


def _look(position: Seen, s: int, t: int) -> Look:
    """What a move from s to t looks like: moves that look the same lead to the same position
    (spaces of one row are interchangeable; the kind of move follows from the source)."""
    return (ROW_OF[s], position[s], ROW_OF[t], position[t])


def _after(position: Seen, move: Move) -> list[tuple[Seen, Seen]]:
    """What `move` may lead to: one pair, or one per way the pieces it uncovers may look. Each
    pair is (`position` with those pieces shown, the position after the move): the chance of an
    outcome is counted on the first, where the lifted piece still belongs to its nest (with
    `no_monochrome`, a nest's colours all count)."""
    kind, s, t = move
    spaces = list(position)
    if kind == _PROMOTION:
        spaces[s] = (3, 0, *position[s][2:5], False)
        spaces[t] = PROMOTED
        return [(position, tuple(spaces))]
    left, tower, *colours, _ = position[s]
    lifted = 3 - left
    looks = [colours]
    if colours[lifted] == BLACK and left > 1:  # what the black piece hid shows now (L4)
        looks = []
        for below in (BLACK, CLEAR):
            shown = list(colours)
            shown[lifted + 1] = below
            if below == CLEAR and lifted + 2 < 3:
                looks += [[*shown[:2], under] for under in (BLACK, CLEAR)]
            else:
                looks.append(shown)
    t_left, t_tower, t_three, t_two, t_one, _ = position[t]
    spaces[t] = (t_left, t_tower + 1, t_three, t_two, t_one, False)
    out = []
    for look in looks:
        before = list(position)
        before[s] = (left, tower, look[0], look[1], look[2], False)
        look[lifted] = GONE
        spaces[s] = (left - 1, 0, look[0], look[1], look[2], False)
        out.append((tuple(before), tuple(spaces)))
    return out


class Search:
    """Exact values of positions as seen, for one deal rule (`no_monochrome` or not). Keeps its
    tables from one call to the next (see the module's docstring)."""

    def __init__(self, no_monochrome: bool) -> None:
        self.no_monochrome = no_monochrome
        self._values: dict[tuple[tuple[Space, ...], tuple[Space, ...]], float] = {}
        self._ways: dict[tuple[tuple[Space, ...], tuple[Space, ...]], int] = {}

    def value(self, position: Seen) -> float:
        """The best expected final score from `position` (stopping is always allowed)."""
        key = _key(position)
        known = self._values.get(key)
        if known is not None:
            return known
        if len(self._values) >= MEMO_LIMIT:
            self._values.clear()
            self._ways.clear()
        promoted = [sum(space[5] for space in position[r * 5 : r * 5 + 5]) for r in (0, 1)]
        best = float(sum(promoted))
        ceiling = best + sum(max(0, 4 - p) for p in promoted)
        if best < ceiling:
            for move in _moves(position):
                value = self.move_value(position, move)
                if value > best:
                    best = value
                    if best >= ceiling - _EPSILON:
                        break
        self._values[key] = best
        return best

    def move_value(self, position: Seen, move: Move) -> float:
        """The expected final score after `move`, played on well from there."""
        outcomes = _after(position, move)
        if len(outcomes) == 1:
            return self.value(outcomes[0][1])
        ways = [(self.ways(shown), after) for shown, after in outcomes]
        return sum(w * self.value(after) for w, after in ways if w) / sum(w for w, _ in ways)

    def ways(self, position: Seen) -> int:
        """How many colourings of the hidden pieces agree with `position`: the pieces still
        unaccounted for, spread over the hidden 2s and 1s (with `no_monochrome`, leaving no nest
        of one colour). Zero when `position` cannot be."""
        key = _key(position)
        known = self._ways.get(key)
        if known is None:
            known = self._ways[key] = _ways(position, self.no_monochrome)
        return known

    def move_values(self, state: SolaceState) -> dict[str, float]:
        """The expected final score after each legal move of `state` (`stop`: its score)."""
        legal = state.legal_moves(0)
        if not legal:
            return {}
        position = seen(state)
        by_look = {
            _look(position, move[1], move[2]): self.move_value(position, move)
            for move in _moves(position)
        }
        values = {name: by_look[_look(position, *PARSE[name])] for name in legal if name != STOP}
        values[STOP] = float(state.score)
        return values


def _ways(position: Seen, no_monochrome: bool) -> int:
    black_seen = [0, 0, 0]  # black pieces of each size (index: 0 the 3s) outside hidden slots
    hidden = [0, 0, 0]
    nests: list[tuple[int, int, int]] = []  # colours (3, 2, 1) of nests that still hold a 2
    for s, (_left, tower, *colours, promoted) in enumerate(position):
        row = ROW_OF[s]
        if row == BLACK:  # towers and promoted towers are their row's colour
            for size_index, height in ((1, 2), (2, 3)):
                black_seen[size_index] += promoted or tower >= height
        for idx, colour in enumerate(colours):
            if colour == UNKNOWN:
                hidden[idx] += 1
            elif colour == BLACK:
                black_seen[idx] += 1
        if colours[1] != GONE:  # its 3 is its row's colour, moved or not
            nests.append((row, colours[1], colours[2]))
    black_hidden = [5 - black_seen[1], 5 - black_seen[2]]
    if not 0 <= black_hidden[0] <= hidden[1] or not 0 <= black_hidden[1] <= hidden[2]:
        return 0
    if not no_monochrome:
        return comb(hidden[1], black_hidden[0]) * comb(hidden[2], black_hidden[1])
    # Count nest by nest: ways[(black 2s used, black 1s used)].
    ways = {(0, 0): 1}
    for three, two, one in nests:
        step: dict[tuple[int, int], int] = {}
        for c2 in _choices(two):
            for c1 in _choices(one):
                if three == c2 == c1:
                    continue
                d2, d1 = int(two == UNKNOWN and c2 == BLACK), int(one == UNKNOWN and c1 == BLACK)
                for (u2, u1), count in ways.items():
                    step[(u2 + d2, u1 + d1)] = step.get((u2 + d2, u1 + d1), 0) + count
        ways = step
    return ways.get((black_hidden[0], black_hidden[1]), 0)


def _choices(colour: int) -> Sequence[int]:
    return (BLACK, CLEAR) if colour == UNKNOWN else (colour,)


_SEARCHES: dict[bool, Search] = {}


def search_for(no_monochrome: bool) -> Search:
    """The process's search for a deal rule (its tables are shared by every game)."""
    if no_monochrome not in _SEARCHES:
        _SEARCHES[no_monochrome] = Search(no_monochrome)
    return _SEARCHES[no_monochrome]


def expected_score(state: SolaceState) -> float:
    """The best expected final score from `state` for a player who sees what the player sees."""
    return search_for(state.no_monochrome).value(seen(state))


class SolaceBot:
    """Plays the move with the best expected final score; the first such in legal order (black
    row first), and `stop` when no move can gain. By default it uses the process's shared
    search for the game's deal rule; `search` gives it another (a cold one, for benchmarks)."""

    def __init__(self, search: Search | None = None) -> None:
        self.search = search

    def choose(self, state: SolaceState) -> str:
        search = self.search or search_for(state.no_monochrome)
        if search.no_monochrome != state.no_monochrome:
            raise ValueError("this search is for the other deal rule (no_monochrome)")
        values = search.move_values(state)
        if not values:
            raise ValueError("the game is over; there is no move to choose")
        board = [move for move in values if move != STOP]  # in legal order
        best = max(values[move] for move in board) if board else 0.0
        if not board or best <= state.score + _EPSILON:
            return STOP
        return next(move for move in board if values[move] >= best - _EPSILON)


def play(state: SolaceState) -> SolaceState:
    """Play `state` to its end with the bot; returns the final state."""
    bot = SolaceBot()
    while state.to_act():
        state, _ = state.apply(0, bot.choose(state))
    return state
