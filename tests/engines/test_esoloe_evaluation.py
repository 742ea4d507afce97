"""e-SOLO-e's learned evaluation (games/esoloe/evaluation.py): its features against positions
built by hand and against a plain recount, its weights file, the fit's reproducibility, and the
strong bot that values its leaves with it."""

from __future__ import annotations

import json
import random

import pytest

from engines.bots.base import Turn
from games.esoloe import bots, evaluation
from games.esoloe.rules import _LINES, LEVELS, NUM_SQUARES, RULES, EsoloeState, _Analysis


def play(*moves: str) -> EsoloeState:
    state = RULES.new_game(0)
    for move in moves:
        state, _ = state.apply(state.to_act()[0], move)
    return state


def named(state: EsoloeState) -> dict[str, int]:
    names = [name for name, _ in evaluation.FEATURES]
    return dict(zip(names, evaluation.features(state), strict=True))


# --------------------------------------------------------------------------------------------
# features


def test_features_of_the_empty_board() -> None:
    assert named(RULES.new_game(0)) == {
        "threat_o": 0,
        "hot_sets_m": 0,
        "hot_sets_o": 0,
        "full": 0,
        "cubes": 0,
        "first": 1,
    }


def test_features_see_the_other_seats_set_and_threats() -> None:
    # a13 b13 c14: the U set a0 b0 c0 (tops 1) holds two of seat 0's cubes: seat 0's. Seat 1 is
    # to move; seat 0 wins with any new set, so its hot squares are its threats.
    state = play("a13", "b13", "c14")
    assert state.to_move == 1
    threats = {move[0] for move in state.winning_placements(0)}
    assert threats
    got = named(state)
    assert got["threat_o"] == min(len(threats), 2)
    assert got["hot_sets_o"] == 3 * min(len(threats), 3) + 1  # one set, every hot square wins
    assert got["hot_sets_m"] % 3 == 0  # seat 1 holds no set
    assert (got["cubes"], got["first"], got["full"]) == (3, 0, 0)


def test_full_stacks_are_counted() -> None:
    state = play("a13", "a23", "a31", "b13", "b23", "b31")
    assert state._heights[:2] == [3, 3]
    assert named(state)["full"] == 2
    assert named(state)["first"] == 1


def _longest_runs(values: list[int], cells: tuple[int, ...], blank: int) -> int:
    """The longest run of equal values (not `blank`) along a line's cells."""
    best = run = 0
    last = blank
    for c in cells:
        v = values[c]
        run = run + 1 if v != blank and v == last else (1 if v != blank else 0)
        last = v
        best = max(best, run)
    return best


def _new_set_or_run(state: EsoloeState, s: int, o: int, seat: int) -> bool:
    """A plain recount on fresh analyses: does a cube of `seat` in orientation o on square s
    make a run of 4+ (its colour, E6, or a symbol, E7) or a set (E8: a run of exactly 3 equal
    symbols, known by its line, symbol and first cell) that was not there?"""
    before = _Analysis(state._owner, state._orient, state._heights, state.edition)
    owner, orient, heights = state._owner[:], state._orient[:], state._heights[:]
    p = s * LEVELS + heights[s]
    owner[p], orient[p] = seat, o
    heights[s] += 1
    after = _Analysis(owner, orient, heights, state.edition)
    mine = [1 if x == seat else 0 for x in after.own]
    for _, cells in _LINES:
        if _longest_runs(after.sym, cells, 0) >= 4 or _longest_runs(mine, cells, 0) >= 4:
            return True
    sets_before = {(li, st[0], st[1]) for li, sets in before.line_sets.items() for st in sets}
    sets_after = {(li, st[0], st[1]) for li, sets in after.line_sets.items() for st in sets}
    return bool(sets_after - sets_before)


@pytest.mark.parametrize("seed", range(6))
def test_hot_squares_are_a_plain_recount(seed: int) -> None:
    rng = random.Random(seed)
    state = RULES.new_game(0)
    while state.to_move is not None and state._ply < 12:
        for seat in (0, 1):
            if state.cubes_left(seat) <= 0:
                continue
            expected = sum(
                1
                for s in range(NUM_SQUARES)
                if state._heights[s] < LEVELS
                and any(_new_set_or_run(state, s, o, seat) for o in range(12))
            )
            assert evaluation.hot_squares(state, seat) == expected, (seed, state._ply, seat)
        seat = state.to_move
        state, _ = state.apply(seat, rng.choice(state.legal_moves(seat)))


# --------------------------------------------------------------------------------------------
# the model, its weights and its fit


def test_the_weights_file_loads_in_the_fits_format() -> None:
    data = json.loads(evaluation.WEIGHTS_PATH.read_text(encoding="ascii"))
    model = evaluation.Model.from_json(data)
    assert len(model.weights) == evaluation.SIZE
    assert data["features"] == [[name, n] for name, n in evaluation.FEATURES]
    assert data["fit"]["seed"] == evaluation.SEED
    again = evaluation.Model.from_json(model.to_json(data["fit"]))
    assert again.weights == model.weights
    assert again.bias == model.bias
    assert evaluation.MODEL.weights == model.weights


def test_a_wrong_weights_file_is_refused() -> None:
    data = evaluation.MODEL.to_json({})
    data["features"] = [["threat_o", 3]]
    with pytest.raises(ValueError, match="features"):
        evaluation.Model.from_json(data)


def test_the_fit_is_reproducible_and_learns() -> None:
    data = evaluation.samples(evaluation.read_record(limit=600))
    assert len(data) > 300
    train = [s for s in data if not evaluation.held_out(s[0])]
    assert 0 < len(train) < len(data)
    first = evaluation.fit(train, epochs=4)
    second = evaluation.fit(train, epochs=4)
    assert first.to_json({}) == second.to_json({})
    hits = sum(1 for _, values, v in train if (first.probability(values) > 0.5) == (v == 1))
    wins = sum(1 for _, _, v in train if v == 1)
    assert hits > max(wins, len(train) - wins)  # better than always saying the likelier


def test_the_hold_out_is_stable() -> None:
    assert evaluation.held_out("//0d0710/060d/0b01") == evaluation.held_out("//0d0710/060d/0b01")
    texts = [f"{i:04x}" for i in range(2000)]
    share = sum(map(evaluation.held_out, texts)) / len(texts)
    assert 0.15 < share < 0.25


def test_scores_stay_below_a_fork() -> None:
    for state in (RULES.new_game(0), play("a13", "b13", "c14"), play("c12", "a31", "e23")):
        got = evaluation.score(state, 0)
        assert -evaluation.SCALE <= got <= evaluation.SCALE < bots.FORK


# --------------------------------------------------------------------------------------------
# the strong bot


def test_the_strong_bot_values_its_leaves_by_the_evaluation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = []
    score = evaluation.score

    def counted(state: EsoloeState, threats: int) -> int:
        calls.append(threats)
        return score(state, threats)

    monkeypatch.setattr(evaluation, "score", counted)
    state = play("c12", "a31", "e23")
    bots.StrongBot(max_nodes=300).search(state, state.legal_moves(1), 0.0)
    assert calls
    assert set(calls) <= {0, 1}


@pytest.mark.parametrize("moves", [("c12",), ("c12", "a31", "e23", "b13"), ("a13", "b13", "c14")])
def test_the_strong_bot_is_legal_and_deterministic_under_a_node_cap(
    moves: tuple[str, ...],
) -> None:
    state = play(*moves)
    seat = state.to_act()[0]
    turn = Turn("esoloe", seat, state.view(seat), state.legal_moves(seat), 0.0)
    chosen = {bots.StrongBot(max_nodes=400).choose(turn, random.Random(7)) for _ in range(2)}
    assert len(chosen) == 1
    assert chosen <= set(turn.moves)
