"""ZoxSo bots and `from_view` (rulings Z1-Z10, Z9 as revised in rules edition 2). Adapters:
tests/test_bots.py.

Positions are explicit setups (see engines/zoxso.py) in docs/rules/zoxso.md notation; the
facts each test
relies on (which moves win, which leave the Xing to be taken) are asserted before a bot is
asked, by playing the moves out with the engine.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping

import pytest

import games
from engines.bots.base import Bot, RandomBot, Turn
from games import arena
from games.zoxso import bots
from games.zoxso.adapter import ADAPTER
from games.zoxso.rules import RULES, ZoxsoState
from tabletop.common.v1 import common_pb2
from tabletop.zoxso.v1 import zoxso_pb2
from tests.engines.fake_clock import FakeClock

SMALL_SEARCH = 150
"""Nodes for the strong bot where a test needs only a legal, deterministic answer."""


EDITIONS = [1, 2]
"""Every rules edition: 2 is the current one (Z9 revised: a Xing's flip onto the Throne ends
the turn), 1 the rules before it."""


def pos(pieces: Mapping[str, str], edition: int | None = None) -> ZoxsoState:
    """A Phase 2 position, Dark (seat 0) to move."""
    return RULES.new_game(0, setup={"pieces": dict(pieces)}, edition=edition)


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


def random_games(
    count: int, resign_rate: float = 0.005, edition: int | None = None
) -> Iterator[ZoxsoState]:
    """Every position of `count` random games (seed 0: from_view cannot know the seed),
    finished ones included: wins, draws at max_plies, resignations."""
    for game in range(count):
        rng = random.Random(game)
        options = {"max_plies": 60 + 20 * (game % 3)}
        state = RULES.new_game(0, options=options, edition=edition)
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


@pytest.mark.parametrize("edition", EDITIONS)
def test_from_view_rebuilds_the_exact_state(edition: int) -> None:
    rng = random.Random(0)
    reasons = set()
    for state in random_games(40, edition=edition):
        result = state.result()
        if result is not None:
            reasons.add(result.detail["reason"])
        for seat in (0, 1):
            rebuilt = RULES.from_view(state.view(seat), seat, rng)
            assert rebuilt == state  # the edition included (serialize writes it)
            assert rebuilt.edition == edition
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


@pytest.mark.parametrize("edition", EDITIONS)
def test_winning_moves_are_the_moves_that_win(edition: int) -> None:
    for state in random_games(6, edition=edition):
        if state.finished:
            continue
        seat = state.to_move
        moves = state.legal_moves(seat)
        assert bots.winning_moves(state, seat, moves) == [
            m for m in moves if wins_now(state, seat, m)
        ]


# Dark's Xing on e5 next to the Throne; Light's Xing on D5, next to the Throne too.
NEXT_TO_THRONE = {"e5": "dX", "D5": "lX", "a1": "dM", "h8": "lD"}


@pytest.mark.parametrize("edition", EDITIONS)
@pytest.mark.parametrize("corner", ["d4", "e4", "d5", "e5"])
def test_winning_moves_see_a_flip_onto_the_throne(corner: str, edition: int) -> None:
    """Z9: a Xing's flip onto the Throne wins (both editions); in edition 1 a flip that then
    moved off won only by capturing the enemy Xing, and in edition 2 there is no such move."""
    for light_xing in ("h1", "D5"):
        state = pos({corner: "dX", light_xing: "lX"}, edition)
        moves = state.legal_moves(0)
        wins = bots.winning_moves(state, 0, moves)
        assert f"{corner}^D4" in wins
        assert wins == [m for m in moves if wins_now(state, 0, m)]
        flip_then_move = [m for m in moves if m.startswith(f"{corner}^D4-")]
        assert bool(flip_then_move) == (edition == 1)
        capture = f"{corner}^D4-D5"
        assert (capture in wins) == (edition == 1 and light_xing == "D5")


@pytest.mark.parametrize("edition", EDITIONS)
@pytest.mark.parametrize("level", ["greedy", "strong"])
def test_bots_never_flip_onto_the_throne_then_move_in_edition_2(level: str, edition: int) -> None:
    """Both bots take an immediate win. Edition 2 lists no flip onto the Throne followed by a
    move, so they never play one; in edition 1 `e5^D4-D5` (taking Light's Xing) was one of the
    winning moves they chose among."""
    state = pos(NEXT_TO_THRONE, edition)
    bot = games.get("zoxso").levels()[level]()
    chosen = {bot.choose(turn(state), random.Random(seed)) for seed in range(24)}
    assert all(move is not None and wins_now(state, 0, move) for move in chosen)
    assert "e5^D4" in chosen
    if edition == 2:
        assert not [m for m in chosen if m is not None and m.startswith("e5^D4-")]
    else:
        assert "e5^D4-D5" in chosen


def test_strong_search_plays_only_edition_2_moves(monkeypatch: pytest.MonkeyPatch) -> None:
    """The strong search works on states of the view's edition: in an edition-2 game the move
    lists it searches reach Xing flips onto the Throne, and never one followed by a move."""
    listed: list[tuple[ZoxsoState, list[str]]] = []
    legal_moves = ZoxsoState.legal_moves

    def recording(self: ZoxsoState, seat: int) -> list[str]:
        moves = legal_moves(self, seat)
        listed.append((self, moves))
        return moves

    monkeypatch.setattr(ZoxsoState, "legal_moves", recording)
    # Dark's Xing on the Stone D2: D2^d3 then d3-d4 ... reach the Throne's corner Pearls.
    state = pos({"D2": "dX", "h8": "lX", "a1": "dM", "g1": "lD", "b7": "lM"})
    move = bots.StrongBot(max_nodes=4000).choose(turn(state), random.Random(0))
    assert move in legal_moves(state, 0)
    assert {node.edition for node, _ in listed} == {2}

    def xing_flips(node: ZoxsoState, moves: list[str]) -> list[str]:
        return [
            m
            for m in moves
            if m[:2] in ("d4", "e4", "d5", "e5")
            and m[2:5] == "^D4"
            and (node.piece_at(m[:2]) or " ")[1] == "X"
        ]

    flips = [m for node, moves in listed for m in xing_flips(node, moves)]
    assert flips  # the search saw Xings next to the Throne
    assert all(len(m) == 5 for m in flips)  # "d4^D4", never "d4^D4-D5"


@pytest.mark.parametrize("edition", EDITIONS)
def test_adapter_view_json_carries_the_rules_edition(edition: int) -> None:
    """A bot worker's view comes from GetView: its edition is the status's rules_edition, and
    0 (unset: a server from before rules editions) is edition 1."""
    state = pos(NEXT_TO_THRONE, edition)
    view = ADAPTER.view(state.view(0))
    reply = zoxso_pb2.GetViewResponse(
        status=common_pb2.GameStatus(rules_edition=edition), seat=0, view=view
    )
    assert ADAPTER.view_json(reply) == state.view(0)
    assert RULES.from_view(ADAPTER.view_json(reply), 0, random.Random(0)) == state
    unset = zoxso_pb2.GetViewResponse(status=common_pb2.GameStatus(), seat=0, view=view)
    assert ADAPTER.view_json(unset)["edition"] == 1


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


@pytest.mark.parametrize("edition", EDITIONS)
@pytest.mark.parametrize(("name", "bot"), ALL_BOTS)
def test_bots_return_legal_moves_deterministically(name: str, bot: Bot, edition: int) -> None:
    rng = random.Random(7)
    positions = [s for s in random_games(4, resign_rate=0.0, edition=edition) if not s.finished]
    for state in rng.sample(positions, 12):
        asked = turn(state)
        move = bot.choose(asked, random.Random(1))
        assert move in asked.moves
        assert bot.choose(asked, random.Random(1)) == move


def test_levels_are_registered() -> None:
    made = games.get("zoxso").levels()
    assert isinstance(made["greedy"](), bots.GreedyBot)
    assert isinstance(made["strong"](), bots.StrongBot)


def test_greedy_beats_random() -> None:
    """A smoke arena (10 games, alternating seats; `make arena` plays the real match)."""
    score, wins, draws, losses = arena.run_match("zoxso", ("random", "greedy"), 10).higher_wins()
    assert wins + draws + losses == 10
    assert score >= 8  # draws count half
