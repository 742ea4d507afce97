"""ZoxSo bots and `from_view` (RULINGS Z1-Z10). Adapters: tests/test_bots.py.

Positions are explicit setups (see engines/zoxso.py) in RULINGS notation; the facts each test
relies on (which moves win, which leave the Xing to be taken) are asserted before a bot is
asked, by playing the moves out with the engine.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping

import pytest

from engines.bots import arena
from engines.bots import zoxso as bots
from engines.bots.base import Bot, RandomBot, Turn, levels
from engines.zoxso import RULES, ZoxsoState
from tests.engines.fake_clock import FakeClock

SMALL_SEARCH = 150
"""Nodes for the strong bot where a test needs only a legal, deterministic answer."""


def pos(pieces: Mapping[str, str]) -> ZoxsoState:
    """A Phase 2 position, Dark (seat 0) to move."""
    return RULES.new_game(0, setup={"pieces": dict(pieces)})


def turn(state: ZoxsoState, budget: float = 0.0) -> Turn:
    seat = state.to_act()[0]
    return Turn("zoxso", seat, state.view(seat), state.legal_moves(seat), budget)


def wins_now(state: ZoxsoState, seat: int, move: str) -> bool:
    result = state.apply(seat, move)[0].result()
    return result is not None and result.winners == (seat,)


def can_win(state: ZoxsoState, seat: int) -> bool:
    return any(wins_now(state, seat, move) for move in state.legal_moves(seat))


def forces_a_win(state: ZoxsoState, move: str) -> bool:
    """After `move` every reply leaves the mover a winning move (or the move wins at once)."""
    seat = state.to_move
    after, _ = state.apply(seat, move)
    if after.finished:
        return wins_now(state, seat, move)
    return all(
        can_win(after.apply(1 - seat, reply)[0], seat) for reply in after.legal_moves(1 - seat)
    )


def random_games(count: int, resign_rate: float = 0.005) -> Iterator[ZoxsoState]:
    """Every position of `count` random games (seed 0: from_view cannot know the seed),
    finished ones included: wins, draws at max_plies, resignations."""
    for game in range(count):
        rng = random.Random(game)
        state = RULES.new_game(0, options={"max_plies": 60 + 20 * (game % 3)})
        yield state
        while not state.finished:
            seat = state.to_move
            if rng.random() < resign_rate:
                state, _ = state.resign(seat)
            else:
                state, _ = state.apply(seat, rng.choice(state.legal_moves(seat)))
            yield state


# --------------------------------------------------------------------------------------------
# from_view and the adapter


def test_from_view_rebuilds_the_exact_state() -> None:
    rng = random.Random(0)
    reasons = set()
    for state in random_games(40):
        result = state.result()
        if result is not None:
            reasons.add(result.detail["reason"])
        for seat in (0, 1):
            rebuilt = RULES.from_view(state.view(seat), seat, rng)
            assert rebuilt == state
            assert rebuilt.legal_moves(seat) == state.legal_moves(seat)
    assert {"xing_captured", "max_plies", "resignation"} <= reasons


def test_from_view_of_a_game_with_another_seed_plays_the_same() -> None:
    """The seed changes nothing in play (Z4) and the view does not carry it."""
    state = RULES.new_game(12345)
    rng = random.Random(1)
    for _ in range(30):
        state, _ = state.apply(state.to_move, rng.choice(state.legal_moves(state.to_move)))
    rebuilt = RULES.from_view(state.view(0), 0, rng)
    assert rebuilt.view(1) == state.view(1)
    assert rebuilt.legal_moves(state.to_move) == state.legal_moves(state.to_move)


# --------------------------------------------------------------------------------------------
# Positions (Dark to move in each)

# C4-D4 puts the Xing on the Throne (Z9); nothing else wins.
WIN_NOW = {"C4": "dX", "h8": "lX", "a1": "dM"}
# Light's Ma on a2 threatens to take Dark's Xing on a1 (Z7); five moves meet it.
MUST_PARRY = {"a1": "dX", "a2": "lM", "h8": "lX", "e1": "dD"}
# Light's Dao on C7 guards C4, but B4^c4-d4 (Xing onto an inside Pearl, Z2 does not stop
# flips) and B4^c5-d5 reach a Pearl next to the Throne that no Light piece can reach: the Xing
# flips onto D4 next turn.
FORCED = {"B4": "dX", "h8": "lX", "C7": "lD", "a8": "dM", "a1": "dD", "h1": "dD", "d1": "dM"}


def test_premises_of_the_positions() -> None:
    state = pos(WIN_NOW)
    assert [m for m in state.legal_moves(0) if wins_now(state, 0, m)] == ["C4-D4"]
    state = pos(MUST_PARRY)
    assert not can_win(state, 0)
    parries = [m for m in state.legal_moves(0) if not can_win(state.apply(0, m)[0], 1)]
    assert parries == ["a1-a2", "a1-b1", "a1^A1", "a1^A1-A2", "a1^A1-B1"]
    assert len(state.legal_moves(0)) > 30
    state = pos(FORCED)
    assert not can_win(state, 0)
    moves = state.legal_moves(0)
    assert [m for m in moves if forces_a_win(state, m)] == ["B4^c4-d4", "B4^c5-d5"]
    assert len(moves) > 60


def test_winning_moves_are_the_moves_that_win() -> None:
    for state in random_games(6):
        if state.finished:
            continue
        seat = state.to_move
        moves = state.legal_moves(seat)
        assert bots.winning_moves(state, seat, moves) == [
            m for m in moves if wins_now(state, seat, m)
        ]


ALL_BOTS: list[tuple[str, Bot]] = [
    ("greedy", bots.GreedyBot()),
    ("strong", bots.StrongBot(max_nodes=SMALL_SEARCH)),
]


@pytest.mark.parametrize(("name", "bot"), ALL_BOTS)
def test_bots_take_an_immediate_win(name: str, bot: Bot) -> None:
    assert bot.choose(turn(pos(WIN_NOW)), random.Random(0)) == "C4-D4"


@pytest.mark.parametrize(("name", "bot"), ALL_BOTS)
def test_bots_parry_an_immediate_loss(name: str, bot: Bot) -> None:
    state = pos(MUST_PARRY)
    for seed in range(3):
        move = bot.choose(turn(state), random.Random(seed))
        assert move is not None
        assert not can_win(state.apply(0, move)[0], 1)


def test_strong_finds_a_forced_win() -> None:
    state = pos(FORCED)
    for seed in range(2):
        move = bots.StrongBot(max_nodes=3000).choose(turn(state), random.Random(seed))
        assert move in ("B4^c4-d4", "B4^c5-d5")


def test_strong_stops_at_the_first_clock_check_past_its_budget() -> None:
    """The budget is soft: past the first depth, the search reads its clock every 8 positions
    and stops at the first reading past the deadline (a fake clock here: one read, one step)."""
    state = RULES.new_game(0)
    bot = bots.StrongBot()
    bot.clock = clock = FakeClock()
    move = bot.choose(turn(state, budget=200 * clock.step), random.Random(0))
    assert move in state.legal_moves(state.to_move)
    assert clock.reads == 202  # the deadline's reading, 200 within the budget, 1 past it


def test_greedy_keeps_its_xing_out_of_reach_in_phase_1() -> None:
    """Light's Xing placed next to a Dark piece is taken on Dark's first move (Z4, Z5, Z7)."""
    rng = random.Random(5)
    for game in range(3):
        state = RULES.new_game(0)
        players: list[Bot] = [RandomBot(), bots.GreedyBot()]
        while state.phase == 1:
            seat = state.to_move
            move = players[seat].choose(turn(state), rng)
            assert move is not None
            state, _ = state.apply(seat, move)
        assert not can_win(state, 0), game


# --------------------------------------------------------------------------------------------
# Every position: legal and deterministic


@pytest.mark.parametrize(("name", "bot"), ALL_BOTS)
def test_bots_return_legal_moves_deterministically(name: str, bot: Bot) -> None:
    rng = random.Random(7)
    positions = [s for s in random_games(4, resign_rate=0.0) if not s.finished]
    for state in rng.sample(positions, 12):
        asked = turn(state)
        move = bot.choose(asked, random.Random(1))
        assert move in asked.moves
        assert bot.choose(asked, random.Random(1)) == move


def test_levels_are_registered() -> None:
    made = levels("zoxso")
    assert isinstance(made["greedy"](), bots.GreedyBot)
    assert isinstance(made["strong"](), bots.StrongBot)


def test_greedy_beats_random() -> None:
    """A smoke arena (10 games, alternating seats; `make arena` plays the real match)."""
    score, wins, draws, losses = arena.run_match("zoxso", ("random", "greedy"), 10).higher_wins()
    assert wins + draws + losses == 10
    assert score >= 8  # draws count half
