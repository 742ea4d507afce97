"""The e-SOLO-e solver (games/esoloe/solver.py) and its solved records, checked against the
engine's own rules with an independent plain search: no transposition table, no symmetry, no
move ordering or pruning of the solver's, only `legal_moves`, `apply`, `result` and the engine's
`winning_placements`.

Positions come from seeded games (`solver.sample_position`), so every test sees the same ones.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from engines.bots.base import Turn
from games.esoloe import bots, solver
from games.esoloe.rules import RULES, EsoloeState
from games.esoloe.solver import DRAW, LOSS, WIN, Solver

EDITIONS = pytest.mark.parametrize("edition", [1, 2], ids=["edition1", "edition2"])
DEEP = 12
"""Cubes placed from which the plain search is cheap enough for a test (4 placements left)."""


def plain_value(state: EsoloeState) -> int:
    """The mover's exact value by plain alpha-beta over the engine's moves and results."""
    return _plain(state, LOSS, WIN)


def _plain(state: EsoloeState, alpha: int, beta: int) -> int:
    seat = state.to_move
    assert seat is not None
    if state.winning_placements(seat):
        return WIN
    best = LOSS
    for move in state.legal_moves(seat):
        child, _ = state.apply(seat, move)
        result = child.result()
        if result is None:
            value = -_plain(child, -beta, -max(alpha, best))
        else:
            value = WIN if seat in result.winners else LOSS if result.winners else DRAW
        if value > best:
            best = value
            if best >= beta:
                break
    return best


def deep_positions(edition: int, count: int) -> list[EsoloeState]:
    out: list[EsoloeState] = []
    seed = 0
    while len(out) < count:
        state = solver.sample_position(seed, DEEP, edition)
        seed += 1
        if state is not None:
            out.append(state)
    return out


def test_the_symmetries_keep_the_rules() -> None:
    """Each of the 12 images of a position has the same winning placements per seat, counted
    per square up to the mirror, and the same legal move count (E4-E9 see only what is shown)."""
    assert len(solver.SYMMETRIES) == 12
    checked = 0
    for seed in range(40):
        state = solver.sample_position(seed, 4 + seed % 8, 2)
        if state is None:
            continue
        mover = state.to_move
        assert mover is not None
        base = [sorted(len(state.winning_placements(seat)) for seat in (0, 1))]
        for image in solver.images(state):
            other = solver.state_from_key(image, 2)
            assert len(other.legal_moves(mover)) == len(state.legal_moves(mover))
            assert [sorted(len(other.winning_placements(seat)) for seat in (0, 1))] == base
            for seat in (0, 1):
                assert len(other.winning_placements(seat)) == len(state.winning_placements(seat))
        checked += 1
    assert checked >= 20


def test_a_key_rebuilds_its_position() -> None:
    state = solver.replay(["c12", "a31", "c26", "e14"])
    again = solver.state_from_key(solver.stacks(state), state.edition)
    assert solver.stacks(again) == solver.stacks(state)
    assert solver.canonical(again) == solver.canonical(state)
    assert again.legal_moves(0) == state.legal_moves(0)
    assert solver.key_from_text(solver.key_text(solver.canonical(state))) == solver.canonical(state)


@EDITIONS
def test_solver_agrees_with_a_plain_search(edition: int) -> None:
    values = []
    for state in deep_positions(edition, 12):
        exact = Solver(edition).value(state)
        assert exact == plain_value(state), state.serialize()
        values.append(exact)
    assert len(set(values)) >= 2  # the sample is not all one answer


def test_the_moves_keeping_a_value_are_those_of_the_plain_search() -> None:
    """Not counting placements that end the game or lose at once."""
    seen = set()
    for state in deep_positions(2, 6):
        seat = state.to_move
        assert seat is not None
        search = Solver(2)
        value = search.value(state)
        assert value is not None
        expected = []
        for move in state.legal_moves(seat):
            child, _ = state.apply(seat, move)
            if (
                child.result() is None
                and not child.winning_placements(1 - seat)
                and -plain_value(child) == value
            ):
                expected.append(move)
        assert search.moves_keeping(state, value) == expected
        seen.add(value)
    assert len(seen) >= 2


def test_an_immediate_win_and_a_forced_one() -> None:
    # docs/rules/esoloe.md: seat 0's c12 completes two new sets at once.
    state = solver.replay(["a12", "e14", "b12", "e26"])
    assert Solver().value(state) == WIN
    assert Solver().solve_move(state) == (WIN, state.winning_placements(0)[0])
    # A seat facing threats on two squares it cannot both block has lost.
    for state in deep_positions(2, 30):
        seat = state.to_move
        assert seat is not None
        got = Solver().solve_move(state)
        assert got is not None
        value, move = got
        if value == WIN:
            assert move is not None
            child, _ = state.apply(seat, move)
            assert child.result() is not None or plain_value(child) == LOSS
        elif value == LOSS:
            assert move is None


@pytest.mark.parametrize("level", ["strong", "expert"])
def test_the_strong_and_expert_bots_play_perfectly_where_solved(level: str) -> None:
    """In positions the solver proves within its node budget, the bot's move keeps the
    position's value, by the plain search (a won position stays won, a drawn one drawn)."""
    bot = bots.StrongBot(max_nodes=2_000) if level == "strong" else bots.ExpertBot(2_000)
    seen = set()
    for state in deep_positions(2, 16):
        seat = state.to_move
        assert seat is not None
        value = plain_value(state)
        seen.add(value)
        view = state.view(seat)
        move = bot.choose(
            Turn("esoloe", seat, view, state.legal_moves(seat), 0.0), random.Random(0)
        )
        assert move is not None
        child, _ = state.apply(seat, move)
        result = child.result()
        if result is not None:
            got = WIN if seat in result.winners else DRAW
        else:
            got = -plain_value(child)
        assert got == value, (state.serialize(), move)
    assert {WIN, LOSS} <= seen


def test_out_of_budget_says_so_and_keeps_only_proved_values() -> None:
    state = RULES.new_game(0)
    search = Solver()
    assert search.value(state, max_nodes=40) is None
    assert search.known(state) is None
    checked = 0
    for key, value in search.exact().items():
        if sum(len(stack) for stack in key) >= DEEP:
            assert plain_value(solver.state_from_key(key)) == value
            checked += 1
    # a later call with more budget goes on from what is proved
    assert search.value(solver.replay(["a12", "e14", "b12", "e26"]), max_nodes=5) == WIN


def test_the_edition_is_the_solvers() -> None:
    with pytest.raises(ValueError, match="edition"):
        Solver(1).value(RULES.new_game(0, edition=2))


def test_save_and_load(tmp_path: Path) -> None:
    search, roots = solver.build_record(2, range(3), DEEP - 2, 2_000)
    assert roots
    path = tmp_path / "solved.jsonl.gz"
    written = search.save(path)
    assert written == len(search.exact()) > 0
    again = Solver(2)
    assert again.load(path) == written
    assert again.exact() == search.exact()
    search.save(tmp_path / "twice.jsonl.gz")
    assert (tmp_path / "twice.jsonl.gz").read_bytes() == path.read_bytes()  # reproducible
    with pytest.raises(ValueError, match="edition"):
        Solver(1).load(path)


@EDITIONS
def test_every_value_the_solver_proves_is_the_plain_searchs(edition: int) -> None:
    """Fresh positions (seeds no other test uses) one cube earlier than DEEP: the root's value
    and every exact value the search stored on the way (the children it was handed with their
    key and threats, not looked at afresh) agree with the plain search."""
    checked = 0
    values = set()
    for seed in range(500, 530):
        state = solver.sample_position(seed, DEEP - 1, edition)
        if state is None:
            continue
        search = Solver(edition)
        value = search.value(state)
        assert value == plain_value(state), state.serialize()
        values.add(value)
        for key, known in search.exact().items():
            if sum(map(len, key)) >= DEEP:
                assert plain_value(solver.state_from_key(key, edition)) == known, key
                checked += 1
    assert checked >= 20
    assert len(values) >= 2
