"""The Solace solver: known answers, replayed lines, and no playout ever beating it."""

from __future__ import annotations

import random
from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games.solace.layout import SPACES
from games.solace.rules import RULES, SolaceState
from games.solace.solver import Solution, solve

# Seed 122's deal (B1..C5, outer to inner) and seed 5279's (a solid clear nest on C1).
BASE = "b3b2c1 b3c2c1 b3c2b1 b3c2c1 b3b2b1 c3b2b1 c3b2c1 c3c2b1 c3c2b1 c3b2c1"
SOLID = "b3c2b1 b3c2b1 b3c2b1 b3b2c1 b3c2c1 c3c2c1 c3b2b1 c3b2b1 c3b2c1 c3b2c1"


def game(spec: str, moves: str = "") -> SolaceState:
    tokens = spec.split()
    setup = {"nests": {s: [t[0:2], t[2:4], t[4:6]] for s, t in zip(SPACES, tokens, strict=True)}}
    state = RULES.new_game(1, None, setup)
    for move in moves.split():
        state, _ = state.apply(0, move)
    return state


def replay(state: SolaceState, solution: Solution) -> SolaceState:
    for move in solution.moves:
        state, _ = state.apply(0, move)
    return state


def brute_force(state: SolaceState) -> int:
    """The best reachable score by exhaustive search through the engine itself (no symmetry)."""

    @cache
    def best(blob: bytes) -> int:
        here = RULES.deserialize(blob)
        top = here.score
        for move in here.legal_moves(0):
            if move != "stop":
                top = max(top, best(here.apply(0, move)[0].serialize()))
        return top

    return best(state.serialize())


def test_position_where_zero_is_the_maximum() -> None:
    # Black towers on B1/B4 and clear ones on C1/C2: every black 2 is locked in a full nest
    # (under a tower, or with no foundation target left), and no clear-row nest can ever empty.
    state = game(BASE, "C4-C1 B2-B4 C3-C2 B3-B1")
    assert len(state.legal_moves(0)) > 1  # moves remain, but none leads anywhere
    assert solve(state) == Solution(0, [])
    assert brute_force(state) == 0


def test_solid_clear_nest_is_the_only_tower_left() -> None:
    # The seed's strategy: a solid clear nest is a free tower (foundation, two builds, promotion).
    state = game(SOLID, "C5-C3 B5-B1 B4-B2 B4-B2 C5-B1 B5-C3 B4-C3")
    solution = solve(state)
    assert solution == Solution(1, ["C1-C2", "C1-C2", "C1-C2", "C2-C1"])
    assert brute_force(state) == 1
    assert replay(state, solution).score == 1


def test_fresh_deals_reach_the_row_limit_of_eight() -> None:
    # With every piece known a fresh deal reaches 8: four promoted towers per row, the most
    # possible (a row's last promotion leaves its base nest on the row).
    for seed in range(10):
        state = RULES.new_game(seed)
        solution = solve(state)
        assert solution.best_score == 8
        final = replay(state, solution)
        assert final.score == 8
        assert sum(final.promoted[:5]) == sum(final.promoted[5:]) == 4


def test_finished_or_stopped_games_have_nothing_to_solve() -> None:
    state, _ = game(SOLID, "C1-C2 C1-C2 C1-C2 C2-C1").apply(0, "stop")
    assert solve(state) == Solution(1, [])


def test_solve_does_not_change_the_state() -> None:
    state = game(BASE, "B2-B1")
    before = state.serialize()
    solve(state)
    assert state.serialize() == before


def _random_prefix(seed: int, plies: int, no_monochrome: bool = False) -> SolaceState:
    """Deal `seed`, then up to `plies` random board moves (never `stop`)."""
    rng = random.Random(seed)
    state = RULES.new_game(seed, {"no_monochrome": no_monochrome})
    for _ in range(plies):
        moves = state.legal_moves(0)[:-1]
        if not moves:
            break
        state, _ = state.apply(0, rng.choice(moves))
    return state


def test_solver_matches_exhaustive_search_on_late_positions() -> None:
    gains = set()
    for plies, seeds in ((12, range(12)), (16, range(40))):
        for seed in seeds:
            state = _random_prefix(seed, plies)
            if not state.to_act():
                continue
            solution = solve(state)
            assert solution.best_score == brute_force(state), (seed, plies)
            assert replay(state, solution).score == solution.best_score
            gains.add(solution.best_score - state.score)
    assert len(gains) >= 5  # positions of many different values were compared


@pytest.mark.parametrize("no_monochrome", [False, True])
def test_random_playouts_never_beat_the_solver(no_monochrome: bool) -> None:
    for seed in range(15):
        start = RULES.new_game(seed, {"no_monochrome": no_monochrome})
        solution = solve(start)
        assert replay(start, solution).score == solution.best_score
        rng = random.Random(seed)
        for _ in range(10):
            state = start
            while state.to_act():
                state, _ = state.apply(0, rng.choice(state.legal_moves(0)[:-1]))
            assert state.score <= solution.best_score


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32), plies=st.integers(0, 25))
def test_solution_replays_from_any_position(seed: int, plies: int) -> None:
    state = _random_prefix(seed, plies)
    solution = solve(state)
    assert state.score <= solution.best_score <= 8
    final = replay(state, solution)
    assert final.score == solution.best_score
    # Every continuation from the solver's end position keeps the score (nothing better left).
    rng = random.Random(seed)
    while final.to_act():
        final, _ = final.apply(0, rng.choice(final.legal_moves(0)[:-1]))
    assert final.score <= solution.best_score


def test_a_position_is_worth_its_best_move() -> None:
    for seed, plies in ((3, 6), (8, 14), (21, 18)):
        state = _random_prefix(seed, plies)
        if not state.to_act():
            continue
        children = [solve(state.apply(0, move)[0]).best_score for move in state.legal_moves(0)]
        assert max(children) == solve(state).best_score, seed
