"""e-SOLO-e solved exactly: the game-theoretic value of a position (win, draw or loss for the
seat to move) under its rules edition, by alpha-beta search over the engine's own rules.

Values are from the mover's side: ``WIN`` (+1), ``DRAW`` (0), ``LOSS`` (-1). A game lasts at
most 16 placements (E3: 8 cubes each; a 4th cube on a stack only when it wins), so every line
ends and the search needs no depth limit and no evaluation: only exact results.

What makes it fast enough:

- **Win tests are the engine's** (`EsoloeState._place`, `_Analysis.winning`): a position whose
  mover has a winning placement is won; a placement that leaves the opponent one is lost, so it
  is known at once and never searched (the only moves searched answer every threat).
- **Transposition table** keyed by the position up to symmetry. The rules look only at which
  symbol (or a blank) each cube shows in each view and who owns it (E6-E8), so a cube is its
  owner and one of 12 *shown* patterns (front, back, left, right, top). The board has 12
  symmetries that map real cubes to real cubes: the mirror (squares a..e reversed, left and right
  views swapped), the front/back swap, both (a half turn), each with the symbol permutations of
  the same handedness (a reflection turns a cube into its mirror image, which a die relabelled by
  an odd permutation of 1, 2, 3 is; an even permutation is a turn of the cube). The table keeps
  the smallest image, and children equal up to symmetry are searched once.
- **Move ordering**: placements that make the most threats (squares where the mover would win
  next) first; then the others. Table entries are bounds (lower, upper), so a position proved
  only "not a loss" in one window is reused in another.

`Solver.value(state)` returns the value or None when the node budget runs out first (nothing
wrong is ever stored: only proved bounds). `Solver.best_moves(state)` gives the mover's moves of
the best value. The table can be saved and loaded (`save`/`load`, the only I/O here), which is
what `python -m games.esoloe.solver` does to write the solved record (`make esoloe-solved`).
"""

from __future__ import annotations

import argparse
import gzip
import io
import itertools
import json
import math
import random
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Final

from games.esoloe.rules import (
    _NOTATION,
    _SHOWN,
    LEVELS,
    MAX_STACK,
    NUM_SQUARES,
    RULES,
    EsoloeState,
)

WIN: Final = 1
DRAW: Final = 0
LOSS: Final = -1
NAMES: Final = {WIN: "win", DRAW: "draw", LOSS: "loss"}

Key = tuple[tuple[int, ...], ...]
"""A position up to symmetry: per square a..e, its cubes bottom first, each ``owner * 12 +
shown + 1`` (shown: the index of its shown pattern in SHOWN)."""

SHOWN: Final[tuple[tuple[int, ...], ...]] = tuple(sorted(set(_SHOWN)))
"""The 12 patterns a cube can show: symbols (0 blank) to the front, back, left, right, top."""
_SHOWN_INDEX: Final = {shown: i for i, shown in enumerate(SHOWN)}
_ORIENT_CODE: Final = tuple(_SHOWN_INDEX[shown] for shown in _SHOWN)
"""Per engine orientation index, its shown pattern's index."""


def _parity(perm: Sequence[int]) -> int:
    return sum(1 for i, j in itertools.combinations(range(len(perm)), 2) if perm[i] > perm[j]) % 2


def _symmetries() -> tuple[tuple[bool, tuple[int, ...]], ...]:
    """The board's symmetries: (squares reversed?, cube code -> cube code). Each maps every
    real cube to a real cube (checked here: a symmetry that did not would raise KeyError)."""
    out = []
    for mirror, swap in itertools.product((False, True), repeat=2):
        for perm in itertools.permutations((1, 2, 3)):
            if _parity(perm) != mirror:
                continue  # a reflection needs an odd relabelling, a turn an even one
            sym = (0, *perm)
            codes = [0]
            for owner in (0, 1):
                for f, b, left, right, top in SHOWN:
                    if swap:
                        f, b, left, right = b, f, right, left  # a half turn of the board
                    if mirror:
                        left, right = right, left
                    image = (sym[f], sym[b], sym[left], sym[right], sym[top])
                    codes.append(owner * 12 + _SHOWN_INDEX[image] + 1)
            out.append((mirror != swap, tuple(codes)))
    return tuple(out)


SYMMETRIES: Final = _symmetries()
"""(squares reversed?, code map) for all 12 symmetries, the identity first."""


def stacks(state: EsoloeState) -> Key:
    """The position's cubes as codes, per square (not reduced by symmetry)."""
    owner, orient, heights = state._owner, state._orient, state._heights
    return tuple(
        tuple(
            owner[p] * 12 + _ORIENT_CODE[orient[p]] + 1
            for p in range(s * LEVELS, s * LEVELS + heights[s])
        )
        for s in range(NUM_SQUARES)
    )


_STACK_IMAGES: dict[tuple[int, ...], tuple[tuple[int, ...], ...]] = {}
"""A stack -> its image under each symmetry (at most 24^3 + 24^2 + 24 + 1 stacks)."""
_REVERSED: Final = tuple(reverse for reverse, _ in SYMMETRIES)


def _stack_images(stack: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    got = _STACK_IMAGES.get(stack)
    if got is None:
        got = _STACK_IMAGES[stack] = tuple(
            tuple([codes[c] for c in stack]) for _, codes in SYMMETRIES
        )
    return got


def images(state: EsoloeState) -> list[Key]:
    """The position's 12 images under the board's symmetries (the identity first)."""
    a, b, c, d, e = [_stack_images(stack) for stack in stacks(state)]
    return [
        (e[t], d[t], c[t], b[t], a[t]) if reverse else (a[t], b[t], c[t], d[t], e[t])
        for t, reverse in enumerate(_REVERSED)
    ]


def canonical(state: EsoloeState) -> Key:
    """The position's key up to symmetry: the smallest of its 12 images."""
    return min(images(state))


_CODE_ORIENT: Final = tuple(_ORIENT_CODE.index(code) for code in range(len(SHOWN)))
"""Per shown pattern, the engine orientation that shows it."""


def state_from_key(key: Key, edition: int = RULES.edition) -> EsoloeState:
    """A position with these cubes (any cube showing each pattern: the rules see no more)."""
    owner, orient = [-1] * (NUM_SQUARES * LEVELS), [-1] * (NUM_SQUARES * LEVELS)
    heights = [len(stack) for stack in key]
    for s, stack in enumerate(key):
        for k, code in enumerate(stack):
            owner[s * LEVELS + k], shown = divmod(code - 1, 12)
            orient[s * LEVELS + k] = _CODE_ORIENT[shown]
    return EsoloeState(owner, orient, heights, sum(heights), None, edition)


def key_text(key: Key) -> str:
    """A key as text: squares joined by '/', each cube two hex digits (owner * 12 + shown + 1)."""
    return "/".join("".join(f"{c:02x}" for c in stack) for stack in key)


def key_from_text(text: str, stacks: dict[str, tuple[int, ...]] | None = None) -> Key:
    """The key that `key_text` wrote. `stacks`: the stacks parsed so far, by their text, to
    share between keys (a record's 140,000 positions hold about 5,000 stacks: parsing each once
    makes loading it three times quicker and its table smaller)."""
    parsed: dict[str, tuple[int, ...]] = {} if stacks is None else stacks
    key = []
    for part in text.split("/"):
        stack = parsed.get(part)
        if stack is None:
            stack = parsed[part] = tuple(bytes.fromhex(part))
        key.append(stack)
    return tuple(key)


def wins_now(state: EsoloeState, seat: int) -> bool:
    """Whether `seat` has a winning placement in `state` (if it were its turn)."""
    if state.cubes_left(seat) <= 0:
        return False
    an = state._analysis()
    return any(an.winning(s, seat, True) for s in range(NUM_SQUARES))


def threat_squares(state: EsoloeState, seat: int) -> int:
    """On how many squares `seat` would win with its next cube."""
    return len(_threats(state, seat))


def _threats(state: EsoloeState, seat: int) -> list[int]:
    """The squares where `seat` would win with its next cube."""
    if state.cubes_left(seat) <= 0:
        return []
    an = state._analysis()
    return [s for s in range(NUM_SQUARES) if an.winning(s, seat, True)]


class OutOfBudget(Exception):
    """The search visited its node budget before it proved the value."""


class Solver:
    """Exact values of positions of one rules edition. The table only ever holds proved bounds,
    so it can be kept across calls (and saved) whatever budgets they had."""

    def __init__(self, edition: int = RULES.edition) -> None:
        self.edition = edition
        self.table: dict[Key, tuple[int, int]] = {}
        """Key -> (lower, upper) bound of its value for the seat to move."""
        self.nodes = 0
        self._limit = 0
        self._deadline = 0.0
        self.clock: Callable[[], float] = time.perf_counter
        """Seconds from any fixed point, for `seconds` budgets (tests give a fake)."""

    # -- public -----------------------------------------------------------------------------

    def value(
        self, state: EsoloeState, max_nodes: int | None = None, seconds: float | None = None
    ) -> int | None:
        """The exact value for the seat to move, or None if `max_nodes` positions were searched
        first (counted from this call) or `seconds` went by."""
        if state.edition != self.edition:
            raise ValueError(f"this solver is for edition {self.edition}, not {state.edition}")
        result = state.result()
        if result is not None:
            raise ValueError("the game is over")
        self._limit = self.nodes + max_nodes if max_nodes is not None else sys.maxsize
        self._deadline = self.clock() + seconds if seconds is not None else math.inf
        try:
            return self._negamax(state, LOSS, WIN)
        except OutOfBudget:
            return None

    def known(self, state: EsoloeState) -> int | None:
        """The value if the table holds it exactly (no search)."""
        lo, hi = self.table.get(canonical(state), (LOSS, WIN))
        return lo if lo == hi else None

    def solve_move(
        self, state: EsoloeState, max_nodes: int | None = None, seconds: float | None = None
    ) -> tuple[int, str | None] | None:
        """The mover's value and a move that keeps it (a win at once if there is one, else the
        one making the most threats), or None when the budget (shared by the whole call) runs
        out first. A lost position has no such move to prefer: (LOSS, None)."""
        seat = state.to_move
        if seat is None:
            raise ValueError("the game is over")
        wins = state.winning_placements(seat)
        if wins:
            return WIN, wins[0]
        start_nodes, start = self.nodes, self.clock()

        def left() -> tuple[int | None, float | None]:
            nodes = None if max_nodes is None else max(0, max_nodes - (self.nodes - start_nodes))
            secs = None if seconds is None else max(0.0, seconds - (self.clock() - start))
            return nodes, secs

        value = self.value(state, *left())
        if value is None:
            return None
        if value == LOSS:
            return LOSS, None
        candidates: list[tuple[int, int, str, EsoloeState]] = []
        for i, move in enumerate(state.legal_moves(seat)):
            child = state._place(_square(move), _orient(move))
            if wins_now(child, 1 - seat):
                continue
            candidates.append((-threat_squares(child, seat), i, move, child))
        candidates.sort(key=lambda item: (item[0], item[1]))
        if value == WIN:
            # The quickest wins first: a move after which every reply leaves a winning cube.
            for threats, _, move, child in candidates:
                nodes, secs = left()
                if nodes == 0 or secs == 0.0:
                    break  # out of budget: any winning move below will do
                if threats < 0 and _forces_a_win(child, seat):
                    return WIN, move
                self.nodes += 1  # a look at every reply: counted as a position
        for _, _, move, child in candidates:
            if not child._can_move():
                got = DRAW
            else:
                lo, hi = self.table.get(canonical(child), (LOSS, WIN))
                if lo == hi:
                    got = -lo
                else:
                    v = self.value(child, *left())
                    if v is None:
                        continue  # out of budget: a later move may be known already
                    got = -v
            if got == value:
                return value, move
        return None

    def moves_keeping(
        self,
        state: EsoloeState,
        value: int,
        max_nodes: int | None = None,
        seconds: float | None = None,
    ) -> list[str]:
        """The mover's moves proved to keep `value` (its value for the mover), as many as the
        budget (`max_nodes` positions or `seconds`, for the whole call) proves; a placement that
        leaves the opponent a win at once is never listed (nor one that wins: the mover's wins
        are the position's `winning_placements`)."""
        seat = state._ply % 2
        deadline = None if seconds is None else self.clock() + seconds
        most = None if max_nodes is None else self.nodes + max_nodes
        out = []
        wins = set(state.winning_placements(seat))
        for move in state.legal_moves(seat):
            if move in wins:
                continue
            child = placed(state, move)
            if wins_now(child, 1 - seat):
                continue
            if not child._can_move():
                got: int | None = DRAW
            else:
                left = None if deadline is None else deadline - self.clock()
                nodes = None if most is None else most - self.nodes
                if (left is not None and left <= 0) or (nodes is not None and nodes <= 0):
                    break
                v = self.value(child, nodes, left)
                got = None if v is None else -v
            if got == value:
                out.append(move)
        return out

    def losing_moves(self, state: EsoloeState, moves: Iterable[str]) -> set[str]:
        """The moves among `moves` that the table (no search) proves lost for the mover."""
        seat = state._ply % 2
        out = set()
        for move in moves:
            child = state._place(_square(move), _orient(move))
            if wins_now(child, 1 - seat) or self.table.get(canonical(child), (LOSS, WIN))[0] == WIN:
                out.add(move)
        return out

    # -- search -----------------------------------------------------------------------------

    def _negamax(
        self,
        state: EsoloeState,
        alpha: int,
        beta: int,
        key: Key | None = None,
        threats: Sequence[int] | None = None,
    ) -> int:
        """Alpha-beta on exact values, with (lower, upper) bounds in the table. The caller has
        checked that the seat not to move has not just won. A parent passes its child's `key`
        and `threats` (the squares where the seat not to move would win now, which it counted
        to order its moves), and has checked that the mover has no win at once; the root
        (`key` None) works them out."""
        self.nodes += 1
        if self.nodes > self._limit or (self.nodes & 3 == 0 and self.clock() > self._deadline):
            raise OutOfBudget
        seat = state._ply % 2
        if key is None:
            key = canonical(state)
        table = self.table
        lo, hi = table.get(key, (LOSS, WIN))
        if lo >= beta or lo == hi:
            return lo
        if hi <= alpha:
            return hi
        alpha, beta = max(alpha, lo), min(beta, hi)
        if threats is None:
            if wins_now(state, seat):
                table[key] = (WIN, WIN)
                return WIN
            threats = _threats(state, 1 - seat)
        if state.cubes_left(seat) <= 0:
            table[key] = (DRAW, DRAW)
            return DRAW
        # The opponent's wins after a placement on square s are looked for first where it
        # threatens now (most placements leave such a threat standing), then on s (a cube on
        # top of the new one): the answer is the same, found sooner.
        orders = [
            list(dict.fromkeys([*threats, s, *range(NUM_SQUARES)])) for s in range(NUM_SQUARES)
        ]
        opponent_moves = state.cubes_left(1 - seat) > 0
        # The children worth searching: one per position up to symmetry, not a move that hands
        # the opponent a win (its value is a loss); most threats first, known wins at once.
        heights = state._heights
        seen: set[Key] = set()
        ordered: list[tuple[int, int, EsoloeState, Key, list[int]]] = []
        any_move = False
        for s in range(NUM_SQUARES):
            if heights[s] >= MAX_STACK:
                continue  # a 4th cube only goes where it wins, and there is no win here
            order = orders[s]
            for o in range(12):
                child = state._place(s, o)
                any_move = True
                if opponent_moves:
                    an = child._analysis()
                    if any(an.winning(t, 1 - seat, True) for t in order):
                        continue
                ckey = canonical(child)
                if ckey in seen:
                    continue
                seen.add(ckey)
                clo, chi = table.get(ckey, (LOSS, WIN))
                if chi == LOSS:
                    table[key] = (WIN, WIN)
                    return WIN
                made = _threats(child, seat)
                ordered.append((-len(made) - 4 * (clo == chi), len(ordered), child, ckey, made))
        if not any_move:
            table[key] = (DRAW, DRAW)  # E9: every stack full and no winning 4th cube
            return DRAW
        ordered.sort(key=lambda item: (item[0], item[1]))
        best = LOSS
        a = alpha
        for _, _, child, ckey, made in ordered:
            # E9: an opponent who cannot place a cube draws
            v = -self._negamax(child, -beta, -a, ckey, made) if child._can_move() else DRAW
            if v > best:
                best = v
                if best > a:
                    a = best
                if best >= beta:
                    break
        if best >= beta:
            table[key] = (best, hi)
        elif best <= alpha:
            table[key] = (lo, best)
        else:
            table[key] = (best, best)
        return best

    # -- the record -------------------------------------------------------------------------

    def exact(self) -> dict[Key, int]:
        """Every position whose value the table holds exactly."""
        return {key: lo for key, (lo, hi) in self.table.items() if lo == hi}

    def save(self, path: Path, keys: Iterable[Key] | None = None) -> int:
        """Write the exact values (of `keys`, default all), gzipped: a JSON header line, then a
        line ``KEY VALUE`` per position (key_text, -1/0/1), sorted; returns how many."""
        exact = self.exact()
        chosen = sorted(exact) if keys is None else sorted(k for k in set(keys) if k in exact)
        return write_values(path, self.edition, [(key_text(k), exact[k], "") for k in chosen])

    def load(self, path: Path, moves: dict[Key, str] | None = None) -> int:
        """Read a file written by save (of this edition) into the table; returns the count.
        A line may also give a move keeping the value (``KEY VALUE MOVE``, in the key's own
        position, `state_from_key`: a book, games.esoloe.book): put into `moves` if given."""
        n = 0
        stacks: dict[str, tuple[int, ...]] = {}
        bounds = {v: (v, v) for v in (LOSS, DRAW, WIN)}
        table = self.table
        with gzip.open(path, "rt", encoding="ascii") as src:
            header = json.loads(src.readline())
            if header.get("edition") != self.edition:
                raise ValueError(f"{path} is edition {header.get('edition')}, not {self.edition}")
            for line in src:
                text, value, *move = line.split()
                key = key_from_text(text, stacks)
                table[key] = bounds[int(value)]
                if move and moves is not None:
                    moves[key] = move[0]
                n += 1
        return n


def write_values(
    path: Path,
    edition: int,
    values: Sequence[tuple[str, int, str]],
    about: dict[str, object] | None = None,
) -> int:
    """Write `values` (key_text, value, a move keeping it or ""), in their order, gzipped: a
    JSON header line (with `about` as "book" when given), then ``KEY VALUE [MOVE]`` a line, as
    `Solver.load` reads them; the same values make the same bytes. Returns how many."""
    header: dict[str, object] = {"game": "esoloe", "edition": edition, "values": len(values)}
    if about is not None:
        header["book"] = about
    tmp = path.with_suffix(".tmp")
    with (
        tmp.open("wb") as raw,
        gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as packed,
        io.TextIOWrapper(packed, encoding="ascii") as out,
    ):
        out.write(json.dumps(header) + "\n")
        for text, value, move in values:
            out.write(f"{text} {value} {move}\n" if move else f"{text} {value}\n")
    tmp.replace(path)
    return len(values)


TABLE_LIMIT: Final = 100_000
"""Entries a shared solver's table may gain beyond the solved record before it is emptied (about
50 MB an edition: a bot worker's container has 512 MiB); the record is then put back."""
RECORDS: Final = {
    edition: Path(__file__).with_name(f"solved-e{edition}.jsonl.gz") for edition in (1, 2)
}
"""The solved record of each edition, as `python -m games.esoloe.solver record` writes it."""
BOOKS: Final = {
    edition: Path(__file__).with_name(f"book-e{edition}.jsonl.gz") for edition in (1, 2)
}
"""The book of each edition: positions the strong bot reaches, solved offline with a move
keeping each value (`python -m games.esoloe.book`, `make esoloe-book`)."""
_SHARED: dict[int, Solver] = {}
_RECORDED: dict[int, dict[Key, tuple[int, int]]] = {}
_BOOK_MOVES: dict[int, dict[Key, str]] = {}


def _load_recorded(edition: int) -> dict[Key, tuple[int, int]]:
    """The solved record's and the book's values of `edition` (those that exist), loaded once."""
    table = _RECORDED.get(edition)
    if table is None:
        loaded = Solver(edition)
        moves: dict[Key, str] = {}
        for path in (RECORDS.get(edition), BOOKS.get(edition)):
            if path is not None and path.exists():
                loaded.load(path, moves)
        table = _RECORDED[edition] = loaded.table
        _BOOK_MOVES[edition] = moves
    return table


def recorded_solver(edition: int) -> Solver:
    """A new solver for `edition` that knows the solved record and the book (those that
    exist), nothing else: what a search with a node budget uses to answer the same whatever ran
    before it."""
    solver = Solver(edition)
    solver.table = dict(_load_recorded(edition))
    return solver


def book_move(state: EsoloeState) -> str | None:
    """The book's move in `state` (one keeping its proved value: a win or a draw), or None when
    the book of its edition does not hold the position or holds it lost. The book gives the
    move in the position of its key (`state_from_key`); this is the mover's placement that
    leads to the same position up to symmetry."""
    _load_recorded(state.edition)
    key = canonical(state)
    move = _BOOK_MOVES[state.edition].get(key)
    seat = state.to_move
    if move is None or seat is None:
        return None
    target = canonical(placed(state_from_key(key, state.edition), move))
    for mine in state.legal_moves(seat):
        if canonical(placed(state, mine)) == target:
            return mine
    return None


def shared_solver(edition: int) -> Solver:
    """The process's solver for `edition` (bots share it: what one search proves serves every
    later one), with the solved record loaded if it exists; emptied past TABLE_LIMIT."""
    solver = _SHARED.get(edition)
    if solver is None or len(solver.table) > len(_load_recorded(edition)) + TABLE_LIMIT:
        solver = _SHARED[edition] = recorded_solver(edition)
    return solver


def _forces_a_win(state: EsoloeState, seat: int) -> bool:
    """Whether every placement of the opponent (to move in `state`, with no win of its own)
    leaves `seat` a winning placement."""
    heights = state._heights
    if not any(h < MAX_STACK for h in heights) or state.cubes_left(1 - seat) <= 0:
        return False  # the opponent has no move: a draw
    return all(
        wins_now(state._place(s, o), seat)
        for s in range(NUM_SQUARES)
        if heights[s] < MAX_STACK
        for o in range(12)
    )


def placed(state: EsoloeState, move: str) -> EsoloeState:
    """The position after the mover places `move` (legal, and not a win: no result is set)."""
    return state._place(_square(move), _orient(move))


def _square(move: str) -> int:
    return "abcde".index(move[0])


def _orient(move: str) -> int:
    return _NOTATION[_square(move)].index(move)


def replay(moves: Sequence[str], edition: int = RULES.edition) -> EsoloeState:
    """The position after these moves (seats alternating from seat 0) under `edition`."""
    state = RULES.new_game(0, edition=edition)
    for i, move in enumerate(moves):
        state, _ = state.apply(i % 2, move)
    return state


def sample_position(seed: int, plies: int, edition: int) -> EsoloeState | None:
    """A position after `plies` placements of a seeded game in which each seat plays a random
    move that leaves the opponent no win at once (when it has one), or None when that game ended
    first or its mover can win at once (nothing to solve)."""
    rng = random.Random(seed)
    state = RULES.new_game(0, edition=edition)
    for _ in range(plies):
        seat = state.to_move
        if seat is None or state.winning_placements(seat):
            return None
        moves = state.legal_moves(seat)
        safe = [m for m in moves if not wins_now(state._place(_square(m), _orient(m)), 1 - seat)]
        state, _ = state.apply(seat, rng.choice(safe or moves))
    if state.to_move is None or state.winning_placements(state.to_move):
        return None
    return state


def build_record(
    edition: int, seeds: Iterable[int], plies: int, max_nodes: int, solver: Solver | None = None
) -> tuple[Solver, dict[int, tuple[Key, int | None]]]:
    """Solve the sample positions (`sample_position`) of these seeds, each with a node budget:
    (the solver, whose table holds every value proved on the way; per seed the root's key and
    value, None if unproved)."""
    solver = solver or Solver(edition)
    roots: dict[int, tuple[Key, int | None]] = {}
    for seed in seeds:
        state = sample_position(seed, plies, edition)
        if state is not None:
            roots[seed] = (canonical(state), solver.value(state, max_nodes))
    return solver, roots


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m games.esoloe.solver", description="Solve e-SOLO-e positions exactly."
    )
    parser.add_argument("moves", nargs="*", help="the opening moves (seat 0 first), e.g. c12 a31")
    parser.add_argument("--edition", type=int, default=RULES.edition, choices=RULES.editions)
    parser.add_argument("--max-nodes", type=int, default=None, help="node budget (per position)")
    parser.add_argument("--seconds", type=float, default=None, help="time budget")
    parser.add_argument(
        "--record",
        metavar="GAMES",
        type=int,
        default=None,
        help="instead of MOVES: solve the sample positions of seeds 0..GAMES-1 (after --plies "
        "placements, --max-nodes each) and save every value proved to --out",
    )
    parser.add_argument("--plies", type=int, default=6)
    parser.add_argument("--out", type=Path, default=None, help="save the exact values here")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    if args.record is not None:
        if args.max_nodes is None or args.out is None:
            parser.error("--record needs --max-nodes (so that it is reproducible) and --out")
        solver, roots = build_record(args.edition, range(args.record), args.plies, args.max_nodes)
        solved = [v for _, v in roots.values() if v is not None]
        counts = {NAMES[v]: solved.count(v) for v in (WIN, DRAW, LOSS)}
        print(
            f"edition {args.edition}: {len(roots)} positions after {args.plies} placements, "
            f"{len(solved)} solved within {args.max_nodes} nodes each (for the mover: {counts}); "
            f"{solver.nodes} nodes, {time.perf_counter() - start:.1f} s"
        )
    else:
        state = replay(args.moves, args.edition)
        solver = Solver(args.edition)
        value = solver.value(state, args.max_nodes, args.seconds)
        name = "unknown (out of budget)" if value is None else NAMES[value]
        print(
            f"edition {args.edition}, after {len(args.moves)} moves: {name} for seat "
            f"{state.to_move}; {solver.nodes} nodes, {len(solver.table)} table entries, "
            f"{time.perf_counter() - start:.1f} s"
        )
    if args.out is not None:
        n = solver.save(args.out)
        print(f"wrote {n} exact values to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
