"""The Solace bot: legal, decent, and blind to the pieces inside black pieces."""

from __future__ import annotations

import random

import pytest

from engines.solace import RULES, SPACES, SolaceState
from engines.solace_bot import SolaceBot, play
from engines.solace_solver import solve

# Twin deals: the same but for pieces inside black pieces (see tests/engines/test_solace.py).
DEAL_A = "b3b2c1 b3c2c1 b3c2b1 b3c2c1 b3b2b1 c3b2b1 c3b2c1 c3c2b1 c3c2b1 c3b2c1"
DEAL_B = "b3c2c1 b3c2c1 b3b2b1 b3c2c1 b3b2b1 c3b2c1 c3b2b1 c3c2b1 c3c2b1 c3b2c1"


def game(spec: str) -> SolaceState:
    tokens = spec.split()
    setup = {"nests": {s: [t[0:2], t[2:4], t[4:6]] for s, t in zip(SPACES, tokens, strict=True)}}
    return RULES.new_game(1, None, setup)


def test_same_view_same_choice() -> None:
    a, b = game(DEAL_A), game(DEAL_B)
    assert a.deal != b.deal
    assert a.view(0) == b.view(0)
    for seed in range(3):
        assert SolaceBot(random.Random(seed), 4).choose(a) == SolaceBot(
            random.Random(seed), 4
        ).choose(b)


def test_bot_plays_twins_alike_until_a_reveal_differs() -> None:
    a, b = game(DEAL_A), game(DEAL_B)
    bot_a, bot_b = SolaceBot(random.Random(5), 4), SolaceBot(random.Random(5), 4)
    plies = 0
    while a.to_act() and a.view(0) == b.view(0):
        move = bot_a.choose(a)
        assert bot_b.choose(b) == move
        a, _ = a.apply(0, move)
        b, _ = b.apply(0, move)
        plies += 1
    assert plies >= 1


def test_bot_never_reads_hidden_pieces() -> None:
    """Scramble what is hidden (the bot sees the same position) at every step of a game: the
    bot's moves do not change."""
    state = RULES.new_game(17)
    bot_true, bot_scrambled = SolaceBot(random.Random(2), 3), SolaceBot(random.Random(2), 3)
    scrambler = random.Random(99)
    while state.to_act():
        other = state.determinize(0, scrambler)
        assert other.view(0) == state.view(0)
        move = bot_true.choose(state)
        assert bot_scrambled.choose(other) == move
        state, _ = state.apply(0, move)


def test_bot_plays_legal_games_to_the_end_and_stops_when_nothing_gains() -> None:
    for seed in range(3):
        final = play(RULES.new_game(seed), random.Random(seed), samples=4)
        assert final.result() is not None
        assert final.best_score is not None
        assert 0 <= final.score <= final.best_score
    # Nothing left to gain: the bot stops instead of shuffling pieces.
    spec = "b3b2c1 b3c2c1 b3c2b1 b3c2c1 b3b2b1 c3b2b1 c3b2c1 c3c2b1 c3c2b1 c3b2c1"
    state = game(spec)
    for move in ["C4-C1", "B2-B4", "C3-C2", "B3-B1"]:
        state, _ = state.apply(0, move)
    assert solve(state).best_score == 0
    assert SolaceBot(random.Random(1), 4).choose(state) == "stop"


def test_bot_rejects_bad_use() -> None:
    with pytest.raises(ValueError, match="samples"):
        SolaceBot(random.Random(1), 0)
    state, _ = game(DEAL_A).apply(0, "stop")
    with pytest.raises(ValueError, match="over"):
        SolaceBot(random.Random(1)).choose(state)


def test_bot_scores_above_random_play() -> None:
    seeds = range(8)
    bot = [play(RULES.new_game(seed), random.Random(seed), samples=6).score for seed in seeds]
    rand = []
    for seed in seeds:
        rng, state = random.Random(seed), RULES.new_game(seed)
        while state.to_act():
            state, _ = state.apply(0, rng.choice(state.legal_moves(0)[:-1]))
        rand.append(state.score)
    assert sum(bot) / len(bot) >= 6
    assert sum(bot) >= sum(rand) + len(bot)  # a point a deal better, at least
