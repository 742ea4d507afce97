"""e-SOLO-e bots and `from_view` (docs/rules/esoloe.md, E1-E9). Adapters: tests/test_bots.py.

Positions are built by playing moves (docs/rules/esoloe.md notation) from the empty board; the
facts each
test relies on (who threatens where) are asserted before the bot is asked, so a change in the
rules engine shows up as a broken premise rather than a puzzling bot failure. Positions are in
the current rules edition (2: the revised E8) unless a test says otherwise; the bots search
with the engine's win test, so they play each game in its own edition.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence

import pytest

import games
from engines.bots.base import Bot, Turn
from games import arena
from games.esoloe import bots
from games.esoloe import solver as exact
from games.esoloe.adapter import ADAPTER
from games.esoloe.rules import RULES, EsoloeState
from tabletop.common.v1 import common_pb2
from tabletop.esoloe.v1 import esoloe_pb2
from tests.engines.fake_clock import FakeClock

SMALL_SEARCH = 400
"""Nodes for the strong bot where a test needs only a legal, deterministic answer."""


EDITIONS = pytest.mark.parametrize("edition", [1, 2], ids=["edition1", "edition2"])


def play(*moves: str, edition: int | None = None) -> EsoloeState:
    state = RULES.new_game(0, edition=edition)
    for move in moves:
        state, _ = state.apply(state.to_act()[0], move)
    return state


def turn(state: EsoloeState, budget: float = 0.0) -> Turn:
    seat = state.to_act()[0]
    return Turn("esoloe", seat, state.view(seat), state.legal_moves(seat), budget)


def random_games(
    count: int, resign_rate: float = 0.02, edition: int | None = None
) -> Iterator[EsoloeState]:
    """Every position of `count` random games, finished ones (wins, resignations) included."""
    for seed in range(count):
        rng = random.Random(seed)
        state = RULES.new_game(seed, edition=edition)
        yield state
        while not state.finished:
            seat = state.to_act()[0]
            if rng.random() < resign_rate:
                state, _ = state.resign(rng.choice((0, 1)))
            else:
                state, _ = state.apply(seat, rng.choice(state.legal_moves(seat)))
            yield state


def wins_now(state: EsoloeState, seat: int, move: str) -> bool:
    result = state.apply(seat, move)[0].result()
    return result is not None and result.winners == (seat,)


def squares(moves: Sequence[str]) -> set[str]:
    return {move[0] for move in moves}


# --------------------------------------------------------------------------------------------
# from_view and the adapter


@EDITIONS
def test_from_view_rebuilds_the_exact_state(edition: int) -> None:
    rng = random.Random(0)
    finished = 0
    for state in random_games(150, edition=edition):
        finished += state.finished
        for seat in (0, 1):
            rebuilt = RULES.from_view(state.view(seat), seat, rng)
            assert rebuilt.edition == edition
            assert rebuilt == state
            assert rebuilt.view(seat) == state.view(seat)
            assert rebuilt.legal_moves(seat) == state.legal_moves(seat)
            assert rebuilt.result() == state.result()
    assert finished == 150


@EDITIONS
def test_adapter_view_json_carries_the_rules_edition(edition: int) -> None:
    """A bot worker's view comes from GetView: its edition is the status's rules_edition, and
    0 (unset: a game stored before editions existed) is edition 1."""
    state = play(*RULING_EXAMPLE, edition=edition)
    view = ADAPTER.view(state.view(0))
    reply = esoloe_pb2.GetViewResponse(
        status=common_pb2.GameStatus(rules_edition=edition), seat=0, view=view
    )
    assert ADAPTER.view_json(reply) == state.view(0)
    rebuilt = RULES.from_view(ADAPTER.view_json(reply), 0, random.Random(0))
    assert rebuilt == state
    assert rebuilt.winning_placements(0) == state.winning_placements(0)
    unset = esoloe_pb2.GetViewResponse(status=common_pb2.GameStatus(), seat=0, view=view)
    assert ADAPTER.view_json(unset)["edition"] == 1


def test_from_view_refuses_a_view_whose_counters_disagree() -> None:
    view = play("a12", "b12").view(0)
    with pytest.raises(ValueError, match="ply"):
        RULES.from_view({**view, "ply": 3}, 0, random.Random(0))
    with pytest.raises(ValueError, match="to_move"):
        RULES.from_view({**view, "to_move": 1}, 0, random.Random(0))


# --------------------------------------------------------------------------------------------
# winning_placements (the engine's fast threat list the bots search with)


@EDITIONS
def test_winning_placements_are_the_winning_legal_moves(edition: int) -> None:
    for state in random_games(60, resign_rate=0.0, edition=edition):
        if state.finished:
            continue
        seat = state.to_act()[0]
        wins = [m for m in state.legal_moves(seat) if wins_now(state, seat, m)]
        assert state.winning_placements(seat) == wins


# --------------------------------------------------------------------------------------------
# Positions

# Our ruling's E8 example, seat 0 to move: U shows 1-1-1 on b c d. In edition 1 a 1 on top of
# any of a..e wins (20 placements); in edition 2 only on a or e (8: U 1-1-1-1), as a 1 on b, c
# or d re-covers the U set, which is then not new.
RULING_EXAMPLE = ("d12", "b14", "c12", "e32")
RULING_EXAMPLE_WINS = {
    1: [f"{s}1{f}" for s in "abcde" for f in (2, 3, 4, 5)],
    2: [f"{s}1{f}" for s in "ae" for f in (2, 3, 4, 5)],
}
# Seat 0 to move; d31 wins at once (and nothing else does).
WIN_NOW = ("e24", "c12", "e12", "e31", "c14", "a14", "b21", "c31", "d26", "d13")
# Seat 0 to move, no win of its own; seat 1 threatens a 4th cube on e (full: nobody else may
# place there, E3). Only 7 placements on a break seat 1's lines there.
MUST_BLOCK = ("e14", "d12", "e21", "a23", "c26", "e12", "b21", "a14")
# Seat 0 to move, nobody threatens; some placements make threats no reply can stop (E8).
FORK = ("b31", "a32", "c13", "d23")


def forces_a_win(state: EsoloeState, move: str) -> bool:
    """After `move`, every reply leaves the mover a winning placement."""
    seat = state.to_act()[0]
    after, _ = state.apply(seat, move)
    if after.finished:
        return wins_now(state, seat, move)
    return all(
        after.apply(1 - seat, reply)[0].winning_placements(seat)
        for reply in after.legal_moves(1 - seat)
    )


def test_premises_of_the_positions() -> None:
    state = play(*WIN_NOW)
    assert state.winning_placements(0) == ["d31"]
    state = play(*MUST_BLOCK)
    assert not state.winning_placements(0)
    assert squares(state.winning_placements(1)) == {"e"}
    safe = [m for m in state.legal_moves(0) if not state.apply(0, m)[0].winning_placements(1)]
    assert safe == ["a12", "a13", "a15", "a31", "a32", "a35", "a36"]
    state = play(*FORK)
    assert not state.winning_placements(0)
    assert not state.winning_placements(1)
    assert not forces_a_win(state, "a12")
    assert forces_a_win(state, "e23")


ALL_BOTS: list[tuple[str, Bot]] = [
    ("greedy", bots.GreedyBot()),
    ("strong", bots.StrongBot(max_nodes=SMALL_SEARCH)),
]


@EDITIONS
@pytest.mark.parametrize(("name", "bot"), ALL_BOTS)
def test_bots_win_by_their_games_edition(name: str, bot: Bot, edition: int) -> None:
    """The bots' win test is the engine's, in the game's edition (told by the view): in the
    ruling's example only edition 1 lets a re-cover of b, c or d win, so an edition-2 bot
    that took one would hand the turn over instead of winning."""
    state = play(*RULING_EXAMPLE, edition=edition)
    assert state.winning_placements(0) == RULING_EXAMPLE_WINS[edition]
    chosen = {bot.choose(turn(state), random.Random(seed)) for seed in range(8)}
    assert chosen <= set(RULING_EXAMPLE_WINS[edition])
    for move in chosen:
        assert move is not None
        assert wins_now(state, 0, move)


@pytest.mark.parametrize(("name", "bot"), ALL_BOTS)
def test_bots_take_an_immediate_win(name: str, bot: Bot) -> None:
    assert bot.choose(turn(play(*WIN_NOW)), random.Random(0)) == "d31"


@pytest.mark.parametrize(("name", "bot"), ALL_BOTS)
def test_bots_block_an_immediate_loss(name: str, bot: Bot) -> None:
    state = play(*MUST_BLOCK)
    move = bot.choose(turn(state), random.Random(0))
    assert move is not None
    after, _ = state.apply(0, move)
    assert not after.winning_placements(1)


def test_strong_finds_a_forced_win() -> None:
    state = play(*FORK)
    for seed in range(3):
        move = bots.StrongBot(max_nodes=3000).choose(turn(state), random.Random(seed))
        assert move is not None
        assert forces_a_win(state, move)


def test_strong_ends_its_decision_within_its_budget() -> None:
    """The budget is in parts: the exact solver has 40% of it, the search 35%, the check of the
    search's choice by the solver the rest; all of them end by 92% of the budget (the rest is
    for the work between them). Each stops at the first reading of the bot's clock past its
    deadline: the solver reads it every 4 positions, the search, past its first depth, every 8
    (a fake clock here: one read, one step). So the whole decision ends within its budget."""
    exact._SHARED.clear()  # the solver starts from its record alone, as in a fresh process
    state = play("a12")
    bot = bots.StrongBot()
    bot.clock = clock = FakeClock()
    move = bot.choose(turn(state, budget=200 * clock.step), random.Random(0))
    assert move in state.legal_moves(1)
    assert 184 < clock.reads <= 200
    assert exact.shared_solver(state.edition).known(state) is None  # not solved: searched


# --------------------------------------------------------------------------------------------
# Every position: legal and deterministic


@pytest.mark.parametrize(("name", "bot"), ALL_BOTS)
def test_bots_return_legal_moves_deterministically(name: str, bot: Bot) -> None:
    rng = random.Random(7)
    positions = [s for s in random_games(12, resign_rate=0.0) if not s.finished]
    for state in rng.sample(positions, 15):
        asked = turn(state)
        move = bot.choose(asked, random.Random(1))
        assert move in asked.moves
        assert bot.choose(asked, random.Random(1)) == move


def test_levels_are_registered() -> None:
    made = games.get("esoloe").levels()
    assert isinstance(made["greedy"](), bots.GreedyBot)
    assert isinstance(made["strong"](), bots.StrongBot)
    assert isinstance(made["expert"](), bots.ExpertBot)
    assert list(made) == list(games.LEVELS)


def test_greedy_beats_random() -> None:
    """A smoke arena (10 games, alternating seats; `make arena` plays the real match)."""
    score, wins, draws, losses = arena.run_match("esoloe", ("random", "greedy"), 10).higher_wins()
    assert wins + draws + losses == 10
    assert score >= 8  # draws count half
