"""Solo bots (engines/bots/solo.py), Solo's from_view, and the adapter's view round trip, in
both rules editions (edition 2: the revised S11 and S12)."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import games
from engines.bots.base import RandomBot, Turn
from engines.contract import Event
from games.solo.adapter import ADAPTER
from games.solo.belief import Belief
from games.solo.bots import (
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
from games.solo.history import hand_facts, replay
from games.solo.rules import PLAYABLE, RULES, SoloState
from tabletop.common.v1 import common_pb2
from tabletop.solo.v1 import solo_pb2
from tests.engines.fake_clock import FakeClock

EDITIONS = pytest.mark.parametrize("edition", [1, 2])


def make(
    hands: Sequence[Sequence[str]],
    pile: Sequence[str] = ("g7", "g8", "b2", "b3", "y4", "y5"),
    discard: Sequence[str] = ("r5",),
    start: int = 0,
    edition: int | None = None,
) -> SoloState:
    """A round-1 position from an explicit setup (draw pile top first), of the current rules
    edition unless `edition` says otherwise."""
    return RULES.new_game(
        1,
        {"players": len(hands)},
        {
            "hands": [list(h) for h in hands],
            "draw_pile": list(pile),
            "discard": list(discard),
            "start_seat": start,
        },
        edition=edition,
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


def random_states(
    seed: int, players: int, mixed: bool, steps: int = 400, edition: int | None = None
) -> Iterator[SoloState]:
    """States along one random game (random acting seat, random move), every one yielded."""
    rng = random.Random(seed)
    options = {"players": players, "mixed_stacking": mixed, "start_points": 60}
    state = RULES.new_game(seed, options, edition=edition)
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
@given(
    seed=st.integers(0, 10_000),
    players=st.integers(2, 10),
    mixed=st.booleans(),
    edition=st.sampled_from([1, 2]),
)
def test_from_view_keeps_the_view_and_the_legal_moves(
    seed: int, players: int, mixed: bool, edition: int
) -> None:
    rng = random.Random(seed)
    for state in random_states(seed, players, mixed, steps=150, edition=edition):
        for seat in range(players):
            view = state.view(seat)
            rebuilt = RULES.from_view(view, seat, rng)
            assert rebuilt.edition == edition
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


def test_greedy_calls_late_when_it_forgot_in_edition_1() -> None:
    # Edition 1 (before the revised S12): a missing call may still be made late.
    state = make([["r7", "g1"], ["b1", "b2", "b3"], ["y1", "y2"]], edition=1)
    state, _ = state.apply(0, "play r7")  # type: ignore[assignment]
    assert "solo" in state.legal_moves(0)
    assert greedy(state, 0) == "solo"
    # Edition 2: no late call; the seat is not even asked (nothing to do out of turn).
    state = make([["r7", "g1"], ["b1", "b2", "b3"], ["y1", "y2"]])
    state, _ = state.apply(0, "play r7")  # type: ignore[assignment]
    assert state.legal_moves(0) == []
    assert 0 not in state.to_act()


@EDITIONS
@pytest.mark.parametrize("level", ["greedy", "strong"])
def test_bots_call_solo_with_the_play_and_never_late(level: str, edition: int) -> None:
    """S12: whenever a play of the bot's may carry `!`, the bot's play carries it (the only
    call there is in edition 2); a `solo` move is chosen only in edition 1 and only when legal."""
    bot = StrongBot(iterations=2) if level == "strong" else GreedyBot()
    rng = random.Random(edition)
    calls = 0
    for seed in range(4):
        for i, state in enumerate(random_states(seed, 3 + seed % 2, False, 300, edition)):
            if state.finished or i % 2:
                continue
            for seat in state.to_act():
                current = turn(state, seat)
                move = bot.choose(current, rng)
                if move is None:
                    continue
                assert move + "!" not in current.moves, (seed, i, move)
                calls += move.endswith("!")
                assert move != "solo" or edition == 1
    assert calls > 0


@EDITIONS
def test_greedy_jumps_in_on_its_own_card_in_edition_2(edition: int) -> None:
    # S11 (revised): seat 0 played r7 and holds the other one.
    state = make([["r7", "r7", "g1"], ["b1", "b2", "b3"], ["y1", "y2"]], edition=edition)
    state, _ = state.apply(0, "play r7")  # type: ignore[assignment]
    if edition == 1:
        assert state.legal_moves(0) == []
        return
    assert turn(state, 0).optional
    assert greedy(state, 0) == "play r7!"
    assert StrongBot(iterations=4).choose(turn(state, 0, 1.0), random.Random(0)) is not None


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


@EDITIONS
@pytest.mark.parametrize("level", ["random", "greedy", "strong"])
@pytest.mark.parametrize("players", [2, 5])
def test_every_level_plays_legal_moves(level: str, players: int, edition: int) -> None:
    factory = games.get("solo").levels()[level]
    bot = StrongBot(iterations=1) if level == "strong" else factory()
    rng = random.Random(players)
    states = random_states(players * 31, players, True, steps=120, edition=edition)
    for i, state in enumerate(states):
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
    search ends at the first reading past the budget, the first sample's too (then greedy's
    choice stands)."""
    state = RULES.new_game(3, {"players": 4})
    for budget in (200, 2):
        bot = StrongBot()
        bot.clock = clock = FakeClock()
        move = bot.choose(turn(state, 0, budget=budget * clock.step), random.Random(0))
        assert move in state.legal_moves(0)
        assert clock.now > budget * clock.step
        assert clock.reads <= budget + 2  # the start, the budget's readings, the one past it
    assert move == GreedyBot().choose(turn(state, 0), random.Random(0))


def test_strong_with_no_budget_answers_like_greedy() -> None:
    state = RULES.new_game(9, {"players": 2})
    rng = random.Random(0)
    assert StrongBot().choose(turn(state, 0), rng) == GreedyBot().choose(turn(state, 0), rng)


def test_random_bot_may_let_an_optional_chance_pass() -> None:
    state = make([["g5", "b2", "b3"], ["r5", "y1"], ["y2", "y3", "y4"]], start=2)
    state, _ = state.apply(2, "draw")  # type: ignore[assignment]
    picks = {RandomBot().choose(turn(state, 1), random.Random(i)) for i in range(30)}
    assert None in picks


@EDITIONS
@pytest.mark.parametrize("players", [2, 4])
def test_the_strong_bots_redeal_keeps_what_the_seat_sees(players: int, edition: int) -> None:
    """_redeal moves only unseen cards: the seat's view and legal moves stay, every size stays,
    and seats known to have drawn for want of a playable card get none."""
    rng = random.Random(players)
    constrained = 0
    for seed in range(40):
        options = {"players": players, "mode": "rounds", "rounds": 1}
        state = RULES.new_game(seed, options, edition=edition)
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


def _play(state: SoloState, *steps: tuple[int, str]) -> SoloState:
    for seat, move in steps:
        new, _ = state.apply(seat, move)
        assert isinstance(new, SoloState)
        state = new
    return state


def test_seats_that_drew_when_the_seat_may_jump_in_on_its_own_card() -> None:
    """Edition 2 (S11): seat 0 played r7 and still holds the other r7; seats 1 and 2 drew
    instead of playing, seat 3 is to move. Asked whether to jump in, seat 0 knows seats 1 and
    2 hold nothing playable on r7 (edition 1 never asks it here)."""
    hands = [["r7", "r7", "g1"], ["b1", "b2"], ["y1", "y2"], ["g3", "g4"]]
    pile = ["b3", "y3", "g5"]
    state = _play(make(hands, pile=pile), (0, "play r7"), (1, "draw"), (2, "draw"))
    assert state.current == 3
    assert 0 in state.to_act()
    assert seats_that_drew(state.view(0), 0) == [1, 2]
    assert seats_that_drew(state.view(3), 3) == []
    old = _play(make(hands, pile=pile, edition=1), (0, "play r7"), (1, "draw"), (2, "draw"))
    assert 0 not in old.to_act()
    # a Skip's victim never had a turn; after a Reverse the seats in the new direction count
    hands = [["rS", "rS", "g1"], ["b1", "b2"], ["y1", "y2"], ["g3", "g4"]]
    state = _play(make(hands, pile=pile), (0, "play rS"), (2, "draw"))
    assert (state.current, seats_that_drew(state.view(0), 0)) == (3, [2])
    hands = [["rR", "rR", "g1"], ["b1", "b2"], ["y1", "y2"], ["g3", "g4"]]
    state = _play(make(hands, pile=pile), (0, "play rR"), (3, "draw"))
    assert (state.current, seats_that_drew(state.view(0), 0)) == (2, [3])


@EDITIONS
def test_seats_that_drew_is_right_when_seats_play_like_greedy(edition: int) -> None:
    """Seats that play greedily but let optional chances pass at random (as a searching bot
    may): every seat `seats_that_drew` names, for any seat that may act, really holds nothing
    playable on the top card but swaps, in both editions (own jump-ins included)."""
    rng = random.Random(edition)
    checked = 0
    for seed in range(60):
        options = {"players": 3 + seed % 3, "mode": "rounds", "rounds": 1}
        state = RULES.new_game(seed, options, edition=edition)
        for _ in range(300):
            if state.over:
                break
            forbidden = PLAYABLE[(state.discard[-1], state.colour)] - SWAPS
            for seat in state.to_act():
                for other in seats_that_drew(state.view(seat), seat):
                    assert not forbidden.intersection(state.hands[other]), (seed, seat, other)
                    checked += 1
            chances = [s for s in state.to_act() if s != state.current and rng.random() < 0.3]
            seat = chances[0] if chances else state.current
            move = greedy_move(Table.of_state(state, seat), state.legal_moves(seat), False)
            assert move is not None
            state = _play(state, (seat, move))
    assert checked > 50


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


# --------------------------------------------------------------------------------------------
# The adapter: what a bot worker rebuilds from GetView, and events of either edition


@EDITIONS
def test_adapter_view_json_gives_back_the_view_with_its_edition(edition: int) -> None:
    state = make([["r7", "r7", "g1"], ["b1", "b2", "b3"], ["y1", "y2"]], edition=edition)
    state, _ = state.apply(0, "play r7")  # type: ignore[assignment]
    for seat in (None, 0, 1, 2):
        reply = ADAPTER.view_response(
            status=common_pb2.GameStatus(rules_edition=edition),
            seat=seat,
            view=ADAPTER.view(state.view(seat)),
        )
        assert ADAPTER.view_json(reply) == state.view(seat)
        if seat is not None:  # a bot told this view plays the game's own edition (S11)
            rebuilt = RULES.from_view(ADAPTER.view_json(reply), seat, random.Random(0))
            assert rebuilt.legal_moves(seat) == state.legal_moves(seat)
    # The round's public log travels in the View (field 24), the same for every seat.
    assert list(ADAPTER.view(state.view(1)).log) == ["0 play r7"]
    # A status without the field (a server from before editions): edition 1.
    reply = ADAPTER.view_response(
        status=common_pb2.GameStatus(), seat=0, view=ADAPTER.view(state.view(0))
    )
    assert ADAPTER.view_json(reply)["edition"] == 1


def test_adapter_maps_the_events_of_both_editions() -> None:
    # Edition 1's late call is still an event of games stored under edition 1.
    state = make([["r1", "r2"], ["b1", "r7"], ["y1", "y2"]], edition=1)
    state, _ = state.apply(0, "play r1")  # type: ignore[assignment]
    _, events = state.apply(0, "solo")
    assert events == [Event("solo", {"seat": 0})]
    assert ADAPTER.event(events[0]).solo.seat == 0
    # Edition 2: the call rides on the play; a forgotten one costs a penalty draw.
    state = make([["r1", "r2"], ["b1", "r7"], ["y1", "y2"]])
    _, events = state.apply(0, "play r1!")
    assert ADAPTER.event(events[0]).played.solo
    forgot, _ = state.apply(0, "play r1")
    _, events = forgot.apply(1, "play r7")
    drew = ADAPTER.event(events[1]).drew
    assert (drew.seat, drew.count) == (0, 2)
    assert drew.reason == solo_pb2.DRAW_REASON_PENALTY
    exposed = ADAPTER.view(forgot.view(None))
    assert exposed.HasField("late_call_seat")
    assert exposed.late_call_seat == 0
    # The engine's -1 (no seat) is an unset field: the turned-over card, nobody exposed.
    fresh = ADAPTER.view(state.view(None))
    assert not fresh.HasField("top_played_by")
    assert not fresh.HasField("late_call_seat")
    assert ADAPTER.view_json(solo_pb2.GetViewResponse(view=fresh))["exposed"] == -1


# --------------------------------------------------------------------------------------------
# The round's memory from the view alone (history.py) and the belief it gives (belief.py)


def run_moves(state: SoloState, *steps: tuple[int, str]) -> SoloState:
    for seat, move in steps:
        state, _ = state.apply(seat, move)  # type: ignore[assignment]
    return state


def greedy_game_states(seed: int, players: int, edition: int | None = None) -> Iterator[SoloState]:
    """The states of one round played by greedy bots, the arena's way (optional chances first)."""
    from games.arena import Seating, next_action

    state = RULES.new_game(
        seed, {"players": players, "mode": "rounds", "rounds": 1}, edition=edition
    )
    seating = Seating(
        "solo",
        ["greedy"] * players,
        [GreedyBot() for _ in range(players)],
        [random.Random(seat) for seat in range(players)],
        {"greedy": 0.0},
    )
    while state.to_act():
        yield state
        seat, move = next_action(seating, state)
        state, _ = state.apply(seat, move)  # type: ignore[assignment]


@EDITIONS
@pytest.mark.parametrize("players", [2, 4])
def test_what_the_log_says_of_each_hand_is_true_of_greedy_players(
    players: int, edition: int
) -> None:
    """Every fact (`kept` cards of the hand are none of `forbidden`) holds in the real hands
    when the seats play like greedy, and the facts bind a good share of the hidden cards; the
    cards known to be in a hand the seat gave away in a swap are there."""
    facts = bound = anchored = 0
    for seed in range(12):
        for state in greedy_game_states(seed, players, edition):
            me = seed % players
            found, given = replay(state.view(me), me)
            for other, known in found.items():
                hand = state.hands[other]
                for fact in known:
                    facts += 1
                    assert sum(card not in fact.forbidden for card in hand) >= fact.kept
                bound += max((fact.kept for fact in known), default=0)
                cards = given.get(other)
                if cards is not None:
                    assert not Counter(cards) - Counter(hand)
                    anchored += len(cards)
    assert facts > 300
    assert bound > 200
    assert anchored > 100


def test_the_log_tells_a_seat_that_drew_had_nothing_playable() -> None:
    """Seat 1 drew on r7 (S5: no red, no 7, no W or W4) and seat 0 plays y7; seat 1 then drew
    on y7: its eight old cards and the first it drew are neither red nor yellow nor 7s nor
    wilds, and the second it drew did not fit on y7."""
    state = make(
        [["r7", "y7", "y1", "y2"], ["g1", "g2", "b1", "b2", "b3", "b4", "b6", "bS"]],
        pile=("b9", "b8", "g9", "g8"),
    )
    state = run_moves(state, (0, "play r7"), (1, "draw"), (0, "play y7"), (1, "draw"))
    assert state.view(0)["log"] == ["0 play r7", "1 draw 1", "0 play y7", "1 draw 1"]
    known = hand_facts(state.view(0), 0)[1]
    assert [(fact.index, fact.held, fact.kept) for fact in known] == [(1, 9, 9), (3, 10, 10)]
    belief = Belief(state.view(0), 0)
    assert len(belief.rules[1]) == 10
    unplayable = PLAYABLE[("r7", "r")] | PLAYABLE[("y7", "y")]
    for i in range(30):
        sample = RULES.from_view(state.view(0), 0, random.Random(i))
        belief.deal(sample, random.Random(i))
        assert sample.view(0) == state.view(0)
        hand = sample.hands[1]
        assert all(card in SWAPS or card not in PLAYABLE[("y7", "y")] for card in hand)
        # the card drawn last may be red: only the first ten were held on r7
        assert sum(card in SWAPS or card not in unplayable for card in hand) >= 9


@EDITIONS
@pytest.mark.parametrize("players", [2, 4])
def test_the_belief_deals_only_unseen_cards_and_keeps_the_view(players: int, edition: int) -> None:
    rng = random.Random(players)
    for seed in range(4):
        for i, state in enumerate(greedy_game_states(seed + 50, players, edition)):
            if i % 5:
                continue
            seat = state.to_act()[0]
            view = state.view(seat)
            sample = RULES.from_view(view, seat, rng)
            before = Counter(card for hand in sample.hands for card in hand) + Counter(sample.pile)
            Belief(view, seat).deal(sample, rng)
            after = Counter(card for hand in sample.hands for card in hand) + Counter(sample.pile)
            assert after == before
            assert sample.view(seat) == view
            assert sample.legal_moves(seat) == state.legal_moves(seat)


@pytest.mark.parametrize("players", [2, 4])
def test_strong_decides_the_same_on_deals_that_differ_only_in_hidden_cards(players: int) -> None:
    """Same view, same generator: the same move, whatever the other hands and the draw pile
    hold (the real game and a redeal of everything the seat cannot see)."""
    checked = 0
    for seed in range(3):
        for i, state in enumerate(greedy_game_states(seed + 70, players)):
            if i % 7 or len(state.log) < 3:
                continue
            seat = state.current
            other = state.determinize(seat, random.Random(i))
            assert isinstance(other, SoloState)
            assert other.view(seat) == state.view(seat)
            if other.pile == state.pile and other.hands == state.hands:
                continue
            moves = [
                StrongBot(iterations=6).choose(turn(position, seat), random.Random(seed))
                for position in (state, other)
            ]
            assert moves[0] == moves[1]
            checked += 1
    assert checked >= 5


def test_the_arena_may_ask_a_fresh_bot_for_every_decision() -> None:
    """--fresh-bots: one bot made per decision, as the bot worker does. The strong bot keeps
    nothing between decisions (what the round showed comes from the view), so it plays the
    same moves whether it is asked afresh or kept for the whole game."""
    from games import arena

    made: list[int] = []

    def fresh() -> StrongBot:
        made.append(1)
        return StrongBot(iterations=3)

    for players in (2, 4):
        moves: list[list[str]] = []
        for factories in ((), [fresh] * players):
            state = RULES.new_game(4, {"players": players, "mode": "rounds", "rounds": 1})
            seating = arena.Seating(
                "solo",
                ["strong"] * players,
                [StrongBot(iterations=3) for _ in range(players)],
                [random.Random(seat) for seat in range(players)],
                {"strong": 0.0},
                factories=factories,
            )
            played: list[str] = []
            while state.to_act() and len(played) < 40:
                seat, move = arena.next_action(seating, state)
                state, _ = state.apply(seat, move)  # type: ignore[assignment]
                played.append(f"{seat} {move}")
            moves.append(played)
        assert moves[0] == moves[1]
        assert len(moves[0]) == 40
    assert len(made) >= 80
