"""The Solace bot: exact play from what the player sees, blind to the pieces inside black pieces.

The search is checked against an independent reference built on the engine alone: every deal
consistent with what the player sees is enumerated, and positions are told apart only by the
player's view (`reference_value`). The two agree exactly on positions small enough to enumerate.
"""

from __future__ import annotations

import itertools
import json
import random
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games.solace.expectimax import Search, SolaceBot, _ways, expected_score, play, seen
from games.solace.rules import RULES, SolaceState
from games.solace.solver import solve
from tests.engines.test_solace import game
from tests.engines.test_solace_solver import _random_prefix

# Twin deals: the same but for pieces inside black pieces (see tests/engines/test_solace.py).
DEAL_A = "b3b2c1 b3c2c1 b3c2b1 b3c2c1 b3b2b1 c3b2b1 c3b2c1 c3c2b1 c3c2b1 c3b2c1"
DEAL_B = "b3c2c1 b3c2c1 b3b2b1 b3c2c1 b3b2b1 c3b2c1 c3b2b1 c3c2b1 c3c2b1 c3b2c1"


def consistent_deals(state: SolaceState) -> list[SolaceState]:
    """Every deal the player cannot tell from `state`'s (by brute force over hidden colours)."""
    slots = state.hidden_slots()
    out = []
    for colours in itertools.product((0, 1), repeat=len(slots)):
        deal = [list(nest) for nest in state.deal]
        for (s, idx), colour in zip(slots, colours, strict=True):
            deal[s][idx] = colour
        if any(
            sorted(deal[s][i] for s, i in slots if i == idx)
            != sorted(state.deal[s][i] for s, i in slots if i == idx)
            for idx in (1, 2)
        ):
            continue  # the pieces hidden are the ones the player cannot account for
        if state.no_monochrome and any(a == b == c for a, b, c in deal):
            continue
        out.append(state._with_deal(tuple((a, b, c) for a, b, c in deal)))
    return out


def reference_value(worlds: Sequence[SolaceState], memo: dict[str, float]) -> float:
    """Expectimax over `worlds` (equally likely, one view): each move splits them by the view it
    leads to. Independent of the bot: only the engine's moves and views."""
    key = json.dumps([worlds[0].view(0), sorted(w.deal for w in worlds)], sort_keys=True)
    if key in memo:
        return memo[key]
    best = float(worlds[0].score)
    for move in worlds[0].legal_moves(0)[:-1]:
        groups: dict[str, list[SolaceState]] = {}
        for world in worlds:
            after = world.apply(0, move)[0]
            groups.setdefault(json.dumps(after.view(0), sort_keys=True), []).append(after)
        value = sum(len(g) * reference_value(g, memo) for g in groups.values()) / len(worlds)
        best = max(best, value)
    memo[key] = best
    return best


@pytest.mark.parametrize("no_monochrome", [False, True])
def test_search_matches_an_independent_expectimax(no_monochrome: bool) -> None:
    checked = 0
    for seed in range(3000):
        state = _random_prefix(seed, 9 + seed % 5, no_monochrome)
        if not state.to_act() or len(state.hidden_slots()) > 5:
            continue
        worlds = consistent_deals(state)
        reference = reference_value(worlds, {})
        assert expected_score(state) == pytest.approx(reference, abs=1e-9), seed
        checked += 1
        if checked == 10:
            break
    assert checked == 10


def test_a_position_the_player_can_work_out_is_worth_the_solvers_maximum() -> None:
    """When what is hidden follows from what is seen (one consistent deal), the search's value
    is the perfect-information one."""
    found = 0
    for seed in range(300):
        state = _random_prefix(seed, 6 + seed % 10)
        if state.to_act() and len(consistent_deals(state)) == 1:
            assert expected_score(state) == solve(state).best_score, seed
            found += 1
    assert found >= 3


def test_ways_counts_the_consistent_deals() -> None:
    for seed in range(120):
        no_monochrome = seed % 2 == 0
        state = _random_prefix(seed, seed % 12, no_monochrome)
        assert _ways(seen(state), no_monochrome) == len(consistent_deals(state)), seed


def test_same_view_same_choice() -> None:
    a, b = game(DEAL_A), game(DEAL_B)
    assert a.deal != b.deal
    assert a.view(0) == b.view(0)
    assert seen(a) == seen(b)
    assert SolaceBot().choose(a) == SolaceBot().choose(b)


def test_bot_plays_twins_alike_until_a_reveal_differs() -> None:
    a, b = game(DEAL_A), game(DEAL_B)
    bot = SolaceBot()
    plies = 0
    while a.to_act() and a.view(0) == b.view(0):
        move = bot.choose(a)
        assert bot.choose(b) == move
        a, _ = a.apply(0, move)
        b, _ = b.apply(0, move)
        plies += 1
    assert plies >= 1


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32), scramble=st.integers(0, 2**32))
def test_bot_never_reads_hidden_pieces(seed: int, scramble: int) -> None:
    """Scramble what is hidden (the player sees the same position) at every step of a game: the
    bot's moves and expectations do not change."""
    state = RULES.new_game(seed)
    scrambler = random.Random(scramble)
    bot = SolaceBot()
    while state.to_act():
        other = state.determinize(0, scrambler)
        assert other.view(0) == state.view(0)
        assert seen(other) == seen(state)
        move = bot.choose(state)
        assert bot.choose(other) == move
        assert expected_score(other) == expected_score(state)
        state, _ = state.apply(0, move)


def test_bot_plays_legal_games_to_the_end_and_stops_when_nothing_gains() -> None:
    for seed in range(3):
        final = play(RULES.new_game(seed))
        assert final.result() is not None
        assert final.best_score is not None
        assert 0 <= final.score <= final.best_score
    # Nothing left to gain: the bot stops instead of shuffling pieces.
    state = game(DEAL_A)
    for move in ["C4-C1", "B2-B4", "C3-C2", "B3-B1"]:
        state, _ = state.apply(0, move)
    assert solve(state).best_score == 0
    assert SolaceBot().choose(state) == "stop"


def test_bot_rejects_bad_use() -> None:
    state, _ = game(DEAL_A).apply(0, "stop")
    with pytest.raises(ValueError, match="over"):
        SolaceBot().choose(state)
    with pytest.raises(ValueError, match="no_monochrome"):
        SolaceBot(Search(no_monochrome=True)).choose(game(DEAL_A))


def test_expectations_bound_and_predict_the_scores() -> None:
    """The expectation at a deal's start never exceeds what seeing every piece allows; over 300
    deals the bot's mean score is its expectation within the noise (4 standard errors)."""
    deals = 300
    scores, expected = [], []
    for seed in range(deals):
        start = RULES.new_game(seed)
        value = expected_score(start)
        assert value <= solve(start).best_score
        expected.append(value)
        scores.append(play(start).score)
    mean = sum(scores) / deals
    spread = (sum((s - mean) ** 2 for s in scores) / (deals - 1)) ** 0.5
    assert abs(mean - sum(expected) / deals) < 4 * spread / deals**0.5
    assert mean > 6.8  # measured over 10,000 deals: 7.14 (the most any fair player can expect)


def test_bot_scores_above_random_play() -> None:
    seeds = range(8)
    bot = [play(RULES.new_game(seed)).score for seed in seeds]
    rand = []
    for seed in seeds:
        rng, state = random.Random(seed), RULES.new_game(seed)
        while state.to_act():
            state, _ = state.apply(0, rng.choice(state.legal_moves(0)[:-1]))
        rand.append(state.score)
    assert sum(bot) >= sum(rand) + len(bot)  # a point a deal better, at least
