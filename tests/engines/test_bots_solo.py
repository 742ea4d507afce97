"""Solo bots (engines/bots/solo.py), Solo's from_view, and the adapter's view round trip."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engines.bots.base import RandomBot, Turn, levels
from engines.bots.solo import (
    CONFIDENCE,
    FINAL_MARGIN,
    MARGIN,
    SWAPS,
    GreedyBot,
    StrongBot,
    Table,
    _pick,
    _redeal,
    candidates,
    greedy_move,
    playout,
    seats_that_drew,
)
from engines.solo import PLAYABLE, RULES, SoloState
from tests.engines.fake_clock import FakeClock


def make(
    hands: Sequence[Sequence[str]],
    pile: Sequence[str] = ("g7", "g8", "b2", "b3", "y4", "y5"),
    discard: Sequence[str] = ("r5",),
    start: int = 0,
) -> SoloState:
    """A round-1 position from an explicit setup (draw pile top first)."""
    return RULES.new_game(
        1,
        {"players": len(hands)},
        {
            "hands": [list(h) for h in hands],
            "draw_pile": list(pile),
            "discard": list(discard),
            "start_seat": start,
        },
    )


def turn(state: SoloState, seat: int, budget: float = 0.0) -> Turn:
    return Turn(
        "solo",
        seat,
        state.view(seat),
        state.legal_moves(seat),
        budget,
        optional=seat != state.current,
    )


def random_states(seed: int, players: int, mixed: bool, steps: int = 400) -> Iterator[SoloState]:
    """States along one random game (random acting seat, random move), every one yielded."""
    rng = random.Random(seed)
    state = RULES.new_game(seed, {"players": players, "mixed_stacking": mixed, "start_points": 60})
    for _ in range(steps):
        yield state
        if state.finished:
            return
        seat = rng.choice(state.to_act())
        new, _ = state.apply(seat, rng.choice(state.legal_moves(seat)))
        assert isinstance(new, SoloState)
        state = new


def unseen(state: SoloState, seat: int) -> Counter[str]:
    """The cards `seat` cannot see: the other hands and the draw pile."""
    cards: Counter[str] = Counter(state.pile)
    for other, hand in enumerate(state.hands):
        if other != seat:
            cards.update(hand)
    return cards


# --------------------------------------------------------------------------------------------
# from_view


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), players=st.integers(2, 10), mixed=st.booleans())
def test_from_view_keeps_the_view_and_the_legal_moves(seed: int, players: int, mixed: bool) -> None:
    rng = random.Random(seed)
    for state in random_states(seed, players, mixed, steps=150):
        for seat in range(players):
            view = state.view(seat)
            rebuilt = RULES.from_view(view, seat, rng)
            assert rebuilt.view(seat) == view
            assert rebuilt.legal_moves(seat) == state.legal_moves(seat)
            assert rebuilt.finished == state.finished
            if seat == state.current and not state.finished:
                assert seat in rebuilt.to_act()


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10_000), players=st.integers(2, 6))
def test_from_view_deals_only_unseen_cards(seed: int, players: int) -> None:
    """The other hands and the pile hold exactly the cards the seat has not seen (a full deck
    is dealt in a seeded game): never one it holds or saw discarded."""
    rng = random.Random(seed)
    for state in random_states(seed, players, False, steps=150):
        if state.finished:
            break
        seat = rng.randrange(players)
        rebuilt = RULES.from_view(state.view(seat), seat, rng)
        assert rebuilt.hands[seat] == state.hands[seat]
        assert rebuilt.discard == state.discard
        assert unseen(rebuilt, seat) == unseen(state, seat)
        assert [len(h) for h in rebuilt.hands] == [len(h) for h in state.hands]
        assert len(rebuilt.pile) == len(state.pile)


def test_from_view_draws_hidden_cards_at_random_and_reproducibly() -> None:
    state = RULES.new_game(5, {"players": 3})
    view = state.view(0)
    first = RULES.from_view(view, 0, random.Random(1))
    assert RULES.from_view(view, 0, random.Random(1)) == first
    samples = {tuple(RULES.from_view(view, 0, random.Random(i)).hands[1]) for i in range(20)}
    assert len(samples) > 15


def test_from_view_with_a_partial_setup_deck_still_keeps_sizes() -> None:
    """A setup may use fewer than 112 cards: the unseen pool is larger than what is dealt."""
    state = make([["r1", "g2"], ["b3", "y4", "W"]])
    rebuilt = RULES.from_view(state.view(0), 0, random.Random(3))
    assert [len(h) for h in rebuilt.hands] == [2, 3]
    assert len(rebuilt.pile) == 6
    assert rebuilt.legal_moves(0) == state.legal_moves(0)


def test_from_view_puts_a_playable_card_in_another_seats_waiting_draw() -> None:
    """S5: seat 0 drew a playable card and has not played or kept it; seat 1 only knows it is
    playable, and from_view must deal it so (seat 0's moves would differ otherwise)."""
    state = make([["g1", "b2"], ["y3", "y4"]], pile=["r9"], discard=["r5"])
    state, _ = state.apply(0, "draw")  # type: ignore[assignment]
    assert state.view(1)["drawn_waiting"]
    for i in range(30):
        rebuilt = RULES.from_view(state.view(1), 1, random.Random(i))
        assert rebuilt.view(1) == state.view(1)
        assert rebuilt.drawn in rebuilt.hands[0]
        assert rebuilt.legal_moves(0)[-1] == "pass"


def test_determinize_still_keeps_what_the_seat_sees() -> None:
    for state in random_states(11, 4, False, steps=100):
        other = state.determinize(2, random.Random(0))
        assert other.view(2) == state.view(2)
        assert isinstance(other, SoloState)
        assert unseen(other, 2) == unseen(state, 2)


# --------------------------------------------------------------------------------------------
# Greedy heuristics in constructed positions


def greedy(state: SoloState, seat: int) -> str | None:
    return GreedyBot().choose(turn(state, seat), random.Random(0))


def test_greedy_goes_out_when_it_can() -> None:
    state = make([["r7"], ["b1", "b2", "b3"]])
    assert greedy(state, 0) == "play r7"


def test_greedy_calls_solo_with_its_play() -> None:
    state = make([["r7", "g1"], ["b1", "b2", "b3"]])
    assert greedy(state, 0) == "play r7!"


def test_greedy_calls_late_when_it_forgot() -> None:
    state = make([["r7", "g1"], ["b1", "b2", "b3"], ["y1", "y2"]])
    state, _ = state.apply(0, "play r7")  # type: ignore[assignment]
    assert "solo" in state.legal_moves(0)
    assert greedy(state, 0) == "solo"


def test_greedy_sheds_high_cards_and_keeps_jokers() -> None:
    state = make([["r2", "rD", "W", "W4", "g9"], ["b1", "b2", "b3", "b4", "b5"]])
    assert greedy(state, 0) == "play rD"
    state = make([["r2", "r9", "W", "b1"], ["b1", "b2", "b3", "b4", "b5"]])
    assert greedy(state, 0) == "play r9"


def test_greedy_plays_a_joker_rather_than_draw_and_names_its_best_colour() -> None:
    state = make([["W", "g1", "g9", "b6"], ["b1", "b7", "b8", "b9", "y9"]])
    assert greedy(state, 0) == "play W:g"


def test_greedy_draws_only_when_nothing_fits() -> None:
    state = make([["g1", "g9", "b2"], ["b1", "b3", "b4", "b5"]])
    assert greedy(state, 0) == "draw"


def test_greedy_attacks_a_seat_about_to_go_out() -> None:
    state = make([["r1", "r9", "rS", "g2"], ["b1", "b2"], ["y1", "y2", "y3"]])
    assert greedy(state, 0) == "play rS"
    state = make([["r1", "r9", "rD", "g2"], ["b1", "b2"], ["y1", "y2", "y3"]])
    assert greedy(state, 0) == "play rD"


def test_greedy_extends_a_draw_stack() -> None:
    state = make([["r1", "g7", "gD"], ["rD", "b2", "b3"]], start=1)
    state, _ = state.apply(1, "play rD")  # type: ignore[assignment]
    assert state.legal_moves(0) == ["play gD", "draw"]
    assert greedy(state, 0) == "play gD"


def test_greedy_swaps_for_the_smallest_hand_only() -> None:
    state = make([["r1", "r2", "r3", "r4", "rX"], ["b1", "b2", "b3"], ["y1"], ["g1", "g2"]])
    assert greedy(state, 0) == "play rX@2!"
    big = make([["r1", "rX"], ["b1", "b2", "b3"], ["y1", "y2", "y3"]])
    assert greedy(big, 0) == "play r1!"


def test_greedy_jumps_in() -> None:
    state = make([["g5", "b6", "b7"], ["r5", "y1", "y2"], ["y6", "y7", "y8"]], start=2)
    assert state.to_act() == (1, 2)
    assert greedy(state, 1) == "play r5"


# --------------------------------------------------------------------------------------------
# Every level legal on random positions; determinism; the search


@pytest.mark.parametrize("level", ["random", "greedy", "strong"])
@pytest.mark.parametrize("players", [2, 5])
def test_every_level_plays_legal_moves(level: str, players: int) -> None:
    factory = levels("solo")[level]
    bot = StrongBot(iterations=1) if level == "strong" else factory()
    rng = random.Random(players)
    for i, state in enumerate(random_states(players * 31, players, True, steps=120)):
        if state.finished or i % 3:
            continue
        for seat in state.to_act():
            current = turn(state, seat)
            move = bot.choose(current, rng)
            if move is None:
                assert current.optional
            else:
                assert move in current.moves


def test_bots_are_deterministic_given_the_rng() -> None:
    states = [s for i, s in enumerate(random_states(7, 3, False, steps=90)) if i % 9 == 0]
    for bot_factory in (GreedyBot, lambda: StrongBot(iterations=3)):
        picks: list[list[Any]] = []
        for _ in range(2):
            rng = random.Random(42)
            bot = bot_factory()
            picks.append([bot.choose(turn(s, s.current), rng) for s in states if not s.finished])
        assert picks[0] == picks[1]


def test_candidates_search_the_called_form_only_and_may_pass() -> None:
    moves = ["play r7", "play r7!", "play g7", "draw"]
    assert candidates(moves, False) == ["play r7!", "play g7", "draw"]
    assert candidates(["play r5"], True) == ["play r5", None]


def test_playout_values_a_two_seat_round_by_its_winner_and_the_points_swing() -> None:
    """Seat 0, to move, goes out at once; seat 1 is left with 6 points (S13)."""
    state = make([["r7"], ["b1", "b2", "b3"]])
    assert playout(state, 0) == pytest.approx(1 + MARGIN * 6 / 100)
    assert playout(state, 1) == pytest.approx(-MARGIN * 6 / 100)


def test_playout_values_a_bigger_table_by_the_points_lost() -> None:
    state = make([["r7"], ["b1", "b2", "b3"], ["yS", "W"]])
    assert [playout(state, seat) for seat in range(3)] == [0.0, -6.0, -60.0]


def test_pick_leaves_greedy_only_for_a_paired_gain_beyond_the_noise() -> None:
    steady = [[0.5, 0.5 + 0.01 * (i % 3)] for i in range(30)]  # never worse, often better
    assert _pick(steady, 0) == 1
    swings = [[0.5, 0.5 + (1.0 if i % 2 else -0.98)] for i in range(30)]  # better on average
    assert CONFIDENCE > 0.1  # the mean gain, 0.01, is a twentieth of a standard error here
    assert _pick(swings, 0) == 0
    assert _pick(swings, 1) == 1
    assert _pick([[0.0, 1.0]], 0) == 0  # one sample says nothing about the noise


def test_strong_swaps_for_the_one_card_hand() -> None:
    """Taking seat 1's single card (with the call) leaves us one play from going out, while
    seat 1 gets our three cards: the playouts find it among the seven choices."""
    state = make([["r1", "rX", "g2", "g3"], ["r6"], ["y1", "y2", "y3", "y4", "y5"]])
    assert "play rX@1!" in state.legal_moves(0)
    move = StrongBot(iterations=8).choose(turn(state, 0), random.Random(0))
    assert move == "play rX@1!"


def test_strong_stops_at_its_budget() -> None:
    """Searching without a cap, only the clock stops it (a fake clock: one read, one step): the
    first sample always completes, and the search ends at the first reading past the budget."""
    state = RULES.new_game(3, {"players": 4})
    bot = StrongBot()
    bot.clock = clock = FakeClock()
    move = bot.choose(turn(state, 0, budget=200 * clock.step), random.Random(0))
    assert move in state.legal_moves(0)
    assert clock.now > 200 * clock.step
    assert clock.reads < 2_000  # stopped soon after the budget, not after a full search


def test_strong_with_no_budget_answers_like_greedy() -> None:
    state = RULES.new_game(9, {"players": 2})
    rng = random.Random(0)
    assert StrongBot().choose(turn(state, 0), rng) == GreedyBot().choose(turn(state, 0), rng)


def test_random_bot_may_let_an_optional_chance_pass() -> None:
    state = make([["g5", "b2", "b3"], ["r5", "y1"], ["y2", "y3", "y4"]], start=2)
    state, _ = state.apply(2, "draw")  # type: ignore[assignment]
    picks = {RandomBot().choose(turn(state, 1), random.Random(i)) for i in range(30)}
    assert None in picks


@pytest.mark.parametrize("players", [2, 4])
def test_the_strong_bots_redeal_keeps_what_the_seat_sees(players: int) -> None:
    """_redeal moves only unseen cards: the seat's view and legal moves stay, every size stays,
    and seats known to have drawn for want of a playable card get none."""
    rng = random.Random(players)
    constrained = 0
    for seed in range(40):
        state = RULES.new_game(seed, {"players": players, "mode": "rounds", "rounds": 1})
        for _ in range(120):
            if state.over:
                break
            seat = state.current
            view = state.view(seat)
            drew = seats_that_drew(view, seat)
            forbidden = PLAYABLE[(view["top"], view["colour"])] - SWAPS
            sample = RULES.from_view(view, seat, rng)
            pooled = sorted(
                sample.pile + [c for s in range(players) if s != seat for c in sample.hands[s]]
            )
            _redeal(sample, seat, drew, forbidden, rng)
            assert sample.view(seat) == view
            assert sample.legal_moves(seat) == state.legal_moves(seat)
            after = sorted(
                sample.pile + [c for s in range(players) if s != seat for c in sample.hands[s]]
            )
            assert after == pooled
            for other in drew:
                if not forbidden.intersection(state.hands[other]):  # the inference held
                    assert not forbidden.intersection(sample.hands[other])
                    constrained += 1
            table = Table.of_state(state, seat)
            move = greedy_move(table, state.legal_moves(seat), False)
            assert move is not None
            new, _ = state.apply(seat, move)
            assert isinstance(new, SoloState)
            state = new
    assert constrained > 0


def test_two_seat_values_count_the_game_when_the_round_decides_it() -> None:
    """A round that ends the game is worth winning the game; any other, the round and MARGIN
    per 100 points of the swing (with a smaller FINAL_MARGIN when the game is decided)."""
    hands = {"hands": [["r7"], ["b1", "b2", "b3"]], "draw_pile": ["g1"], "discard": ["r5"]}
    going_on = RULES.new_game(1, {"players": 2}, hands)
    assert playout(going_on, 1) == pytest.approx(-MARGIN * 6 / 100)
    last = RULES.new_game(1, {"players": 2, "mode": "rounds", "rounds": 1}, hands)
    assert playout(last, 0) == pytest.approx(1 + FINAL_MARGIN * 6 / 100)
    assert playout(last, 1) == pytest.approx(-FINAL_MARGIN * 6 / 100)
    # Points mode: seat 1 at 5 points falls below 0, so this round decides the game.
    low = RULES.new_game(1, {"players": 2, "start_points": 5}, hands)
    assert playout(low, 0) == pytest.approx(1 + FINAL_MARGIN * 6 / 100)
