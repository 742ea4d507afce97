"""Tests of the Solo engine (engines/solo.py): rulings S1-S14, notation, contract, and the two
rules editions (edition 2: the revised S11 and S12; edition 1: the rules before them)."""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Sequence
from re import compile as re_compile
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engines.contract import (
    Event,
    GameError,
    GameOver,
    IllegalMove,
    InvalidOptions,
    InvalidSeat,
    InvalidSetup,
    MalformedMove,
    NotYourTurn,
    visible_events,
)
from games.solo.rules import CARDS, COPIES, FULL_DECK, POINTS, RULES, SoloState

EDITIONS = pytest.mark.parametrize("edition", [1, 2])


def make(
    hands: Sequence[Sequence[str]],
    pile: Sequence[str] = (),
    discard: Sequence[str] = ("r5",),
    start: int = 0,
    seed: int = 1,
    edition: int | None = None,
    **options: Any,
) -> SoloState:
    """A round-1 position from an explicit setup (draw pile top first), of the current rules
    edition unless `edition` says otherwise."""
    return RULES.new_game(
        seed,
        {"players": len(hands), **options},
        {
            "hands": [list(h) for h in hands],
            "draw_pile": list(pile),
            "discard": list(discard),
            "start_seat": start,
        },
        edition=edition,
    )


def go(state: SoloState, seat: int, move: str) -> tuple[SoloState, list[Event]]:
    new, events = state.apply(seat, move)
    assert isinstance(new, SoloState)
    return new, events


def run(state: SoloState, *steps: tuple[int, str]) -> SoloState:
    for seat, move in steps:
        state, _ = go(state, seat, move)
    return state


def kinds(events: Sequence[Event]) -> list[str]:
    return [event.kind for event in events]


def tweak(state: SoloState, **fields: Any) -> SoloState:
    """The same state with some serialized fields replaced (for end-of-game positions)."""
    data = json.loads(state.serialize())
    data.update(fields)
    return RULES.deserialize(json.dumps(data).encode())


def total_cards(state: SoloState) -> int:
    return sum(len(h) for h in state.hands) + len(state.pile) + len(state.discard)


W_FORMS = [f"play W:{c}" for c in "rgby"]
W4_FORMS = [f"play W4:{c}" for c in "rgby"]


# --------------------------------------------------------------------------------------------
# S1 deck and points, S2 options


def test_s1_deck_composition_and_points() -> None:
    assert len(FULL_DECK) == 112
    counts = Counter(FULL_DECK)
    for colour in "rgby":
        for rank in "123456789":
            assert counts[colour + rank] == 2
            assert POINTS[colour + rank] == int(rank)
        assert counts[colour + "S"] == counts[colour + "R"] == counts[colour + "D"] == 2
        assert counts[colour + "X"] == 1
        assert POINTS[colour + "R"] == 10
        assert POINTS[colour + "S"] == 20
        assert POINTS[colour + "D"] == 30
        assert POINTS[colour + "X"] == 30
    assert counts["W"] == counts["W4"] == counts["WX"] == 4
    assert (POINTS["WX"], POINTS["W"], POINTS["W4"]) == (40, 40, 50)
    assert len(CARDS) == 55
    assert sum(COPIES.values()) == 112


def test_s2_default_options() -> None:
    assert RULES.default_options() == {
        "players": 4,
        "start_points": 200,
        "mode": "points",
        "rounds": 5,
        "mixed_stacking": False,
    }
    state = RULES.new_game(3)
    assert state.num_seats == 4
    assert state.view(None)["points"] == [200] * 4
    assert RULES.name == "solo"
    assert (RULES.min_seats, RULES.max_seats) == (2, 10)


@pytest.mark.parametrize(
    "options",
    [
        {"players": 1},
        {"players": 11},
        {"players": "4"},
        {"players": True},
        {"start_points": 0},
        {"start_points": 2.5},
        {"mode": "time"},
        {"rounds": 0},
        {"rounds": None},
        {"mixed_stacking": 1},
        {"colour": "r"},
    ],
)
def test_s2_invalid_options(options: dict[str, Any]) -> None:
    with pytest.raises(InvalidOptions):
        RULES.new_game(1, options)


@pytest.mark.parametrize("players", range(2, 11))
def test_s2_s3_players_deal(players: int) -> None:
    state = RULES.new_game(players * 7, {"players": players})
    assert state.num_seats == players
    view = state.view(0)
    assert view["hand_sizes"] == [8] * players
    assert view["draw_pile_size"] == 112 - 8 * players - 1
    assert view["to_move"] == 0
    assert view["direction"] == 1
    assert view["round"] == 1


# --------------------------------------------------------------------------------------------
# S3 round start


def test_s3_turned_over_card_is_a_number_and_deal_is_seeded() -> None:
    for seed in range(60):
        state = RULES.new_game(seed, {"players": 10})
        top = state.discard[-1]
        assert top[0] in "rgby"
        assert top[1] in "123456789"
        assert len(state.discard) == 1
        assert Counter(c for h in state.hands for c in h) + Counter(state.pile) + Counter(
            state.discard
        ) == Counter(FULL_DECK)
    assert RULES.new_game(5) == RULES.new_game(5)
    assert RULES.new_game(5) != RULES.new_game(6)


def test_s3_next_round_starts_one_seat_further_and_deals_anew() -> None:
    state = make([["r1"], ["g2", "g3"], ["b4"]])
    state, events = go(state, 0, "play r1")
    assert kinds(events)[:3] == ["play", "round_end", "round_start"]
    assert state.round == 2
    assert state.current == 1
    assert state.direction == 1
    assert [len(h) for h in state.hands] == [8, 8, 8]
    assert total_cards(state) == 112
    assert state.discard[-1][1:] in list("123456789")
    # Round 3 starts with seat 2: give seat 1 a single card and let it go out.
    top = state.discard[-1]
    state = tweak(state, hands=[state.hands[0], [top[0] + "X"], state.hands[2]])
    state, _ = go(state, 1, "play " + top[0] + "X@0")
    assert state.round == 3
    assert state.current == 2


def test_s3_setup_start_seat_rotates_from_there() -> None:
    state = make([["g2", "g3"], ["b4"], ["r1"]], start=2)
    assert state.current == 2
    state, _ = go(state, 2, "play r1")
    assert state.round == 2
    assert state.current == 0


# --------------------------------------------------------------------------------------------
# S4 playable, S10 wild colours


def test_s4_playable_by_colour_number_symbol_or_joker() -> None:
    state = make([["r3", "g5", "bS", "y7", "W", "W4", "WX"], ["g1", "g2"]], discard=["r5"])
    assert state.legal_moves(0) == [
        "play r3",
        "play g5",
        *W_FORMS,
        *W4_FORMS,
        "play WX",
        "draw",
    ]
    # symbol matching: a Skip on a Skip, nothing else of another colour
    state = run(make([["rS", "gS", "g1"], ["bS", "y1", "y2"]], discard=["r5"]), (0, "play rS"))
    assert state.current == 0  # 2 players: the Skip skips seat 1
    assert state.legal_moves(0) == ["play gS", "play gS!", "draw"]


def test_s10_wild_names_a_colour_that_must_be_followed() -> None:
    state = make([["W", "g1", "g2"], ["b2", "r5", "g9", "r7"]], discard=["r5"])
    assert [m for m in state.legal_moves(0) if m.startswith("play W")] == W_FORMS
    state, events = go(state, 0, "play W:b")
    assert events[0].data["colour"] == "b"
    assert state.view(1)["colour"] == "b"
    assert state.legal_moves(1) == ["play b2", "draw"]
    with pytest.raises(IllegalMove, match="colour"):
        state.apply(1, "play r7")
    with pytest.raises(IllegalMove, match="names a colour"):
        make([["W", "g1"], ["b2"]]).apply(0, "play W")


def test_s10_wild_draw_four_names_a_colour() -> None:
    state = make(
        [["W4", "g1", "g2"], ["y2", "y5", "g9"]], pile=["g1", "g2", "g3", "g4"], discard=["r5"]
    )
    state = run(state, (0, "play W4:y"))
    assert state.view(None)["colour"] == "y"
    assert state.pending == 4
    state = run(state, (1, "draw"))
    assert len(state.hands[1]) == 7
    assert [m for m in state.legal_moves(1) if m.startswith("play")] == ["play y2", "play y5"]


# --------------------------------------------------------------------------------------------
# S5 draw


def test_s5_draw_playable_then_play_it() -> None:
    state = make([["g1", "g2", "r1"], ["b1", "b2"]], pile=["r9", "b7"], discard=["r5"])
    assert "draw" in state.legal_moves(0)  # even holding a playable card (r1)
    state, events = go(state, 0, "draw")
    assert events[0] == Event("drew", {"seat": 0, "count": 1, "reason": "turn"})
    assert events[1] == Event("drew_cards", {"seat": 0, "cards": ["r9"]}, 0)
    assert state.current == 0
    assert state.drawn == "r9"
    assert state.legal_moves(0) == ["play r9", "pass"]
    assert state.view(0)["drawn_card"] == "r9"
    assert state.view(1)["drawn_card"] is None
    assert state.view(1)["drawn_waiting"] is True
    with pytest.raises(IllegalMove, match="drew r9"):
        state.apply(0, "play r1")
    with pytest.raises(IllegalMove, match="drew r9"):
        state.apply(0, "draw")
    played, _ = go(state, 0, "play r9")
    assert played.discard[-1] == "r9"
    assert played.current == 1
    assert played.hands[0] == [
        "r1",
        "g1",
        "g2",
    ]
    kept, events = go(state, 0, "pass")
    assert kinds(events) == ["kept"]
    assert kept.current == 1
    assert "r9" in kept.hands[0]
    assert not kept.drawn
    assert kept.discard[-1] == "r5"


def test_s5_unplayable_draw_ends_the_turn() -> None:
    state = make([["g1", "g2"], ["b1", "b2"]], pile=["b7", "r2"], discard=["r5"])
    state = run(state, (0, "draw"))
    assert state.current == 1
    assert state.hands[0] == ["g1", "g2", "b7"]
    assert state.legal_moves(0) == []
    with pytest.raises(NotYourTurn):
        state.apply(0, "pass")
    with pytest.raises(IllegalMove, match="pass only keeps"):
        state.apply(1, "pass")


def test_s5_s12_drawn_card_play_can_carry_the_call() -> None:
    state = make([["g1"], ["b1", "b2"]], pile=["r9"], discard=["r5"])
    state = run(state, (0, "draw"))
    assert state.legal_moves(0) == ["play r9", "play r9!", "pass"]


def test_s5_drawn_wild_lists_every_colour() -> None:
    state = make([["g1", "g2"], ["b1", "b2"]], pile=["W"], discard=["r5"])
    state = run(state, (0, "draw"))
    assert state.legal_moves(0) == [*W_FORMS, "pass"]


# --------------------------------------------------------------------------------------------
# S6 empty pile


def test_s6_empty_pile_reshuffles_discards_except_top() -> None:
    state = make([["g1", "g2"], ["b1", "b2"]], pile=[], discard=["y1", "y2", "y3", "r5"])
    state, events = go(state, 0, "draw")
    assert events[0] == Event("reshuffled", {"count": 3})
    assert state.discard == ["r5"]
    assert len(state.pile) == 2
    assert len(state.hands[0]) == 3
    assert sorted(state.pile + state.hands[0]) == sorted(["y1", "y2", "y3", "g1", "g2"])
    # reproducible: same seed, same reshuffle
    again, _ = go(
        make([["g1", "g2"], ["b1", "b2"]], pile=[], discard=["y1", "y2", "y3", "r5"]), 0, "draw"
    )
    assert again == state


def test_s6_nothing_to_draw_draws_nothing() -> None:
    state = make([["g1", "g2"], ["b1", "b2"]], pile=[], discard=["r5"])
    state, events = go(state, 0, "draw")
    assert events == [Event("drew", {"seat": 0, "count": 0, "reason": "turn"})]
    assert state.current == 1
    assert state.hands[0] == ["g1", "g2"]


def test_s6_stack_draw_takes_what_exists() -> None:
    state = make([["rD", "g1", "g2"], ["b1", "b2"]], pile=[], discard=["r5"])
    state = run(state, (0, "play rD"))
    state, events = go(state, 1, "draw")
    assert kinds(events) == ["reshuffled", "drew", "drew_cards"]
    assert events[1].data == {"seat": 1, "count": 1, "reason": "stack"}
    assert state.hands[1] == ["r5", "b1", "b2"]
    assert state.pile == []
    assert state.discard == ["rD"]
    state, events = go(state, 1, "draw")  # normal turn now: draw 1, nothing left
    assert events[-1].data == {"seat": 1, "count": 0, "reason": "turn"}


# --------------------------------------------------------------------------------------------
# S7 skip and reverse


def test_s7_skip() -> None:
    state = make([["rS", "g1", "g2"], ["b1", "b2"], ["y1", "y2"]], discard=["r5"])
    state, events = go(state, 0, "play rS")
    assert Event("skipped", {"seat": 1}) in events
    assert state.current == 2
    assert state.to_act() == (2,)


def test_s7_reverse_three_players() -> None:
    state = make([["rR", "g1", "g2"], ["b1", "b2"], ["y1", "r3", "y3"]], discard=["r5"])
    state, events = go(state, 0, "play rR")
    assert Event("reversed", {"direction": -1}) in events
    assert state.current == 2
    assert state.direction == -1
    state = run(state, (2, "play r3"))
    assert state.current == 1


def test_s7_reverse_with_two_players_acts_as_skip() -> None:
    state = make([["rR", "r1", "g2"], ["b1", "b2"]], discard=["r5"])
    state = run(state, (0, "play rR"))
    assert state.current == 0
    assert state.legal_moves(1) == []
    state = run(state, (0, "play r1"))
    assert state.current == 1


# --------------------------------------------------------------------------------------------
# S8 swap and swap-in-turn


def test_s8_swap_names_another_seat_and_is_forced() -> None:
    state = make([["rX", "g1"], ["b1", "b2", "b3"], ["y1"]], discard=["r5"])
    assert state.legal_moves(0) == ["play rX@1", "play rX@2", "play rX@2!", "draw"]
    with pytest.raises(IllegalMove, match="another seat"):
        state.apply(0, "play rX")
    with pytest.raises(IllegalMove, match="another seat"):
        state.apply(0, "play rX@0")
    with pytest.raises(IllegalMove, match="another seat"):
        state.apply(0, "play rX@3")
    # forced even when it brings more cards
    new, events = go(state, 0, "play rX@1")
    assert new.hands[0] == ["b1", "b2", "b3"]
    assert new.hands[1] == ["g1"]
    assert Event("swapped", {"seats": [0, 1], "sizes": [3, 1]}) in events
    assert new.current == 1
    assert new.view(None)["colour"] == "r"
    # a one-card hand received by a swap creates no obligation (S12)
    assert new.exposed == -1
    assert "solo" not in new.legal_moves(1)
    # the swap with `!`: the mover keeps seat 2's single card and called
    new = run(state, (0, "play rX@2!"))
    assert new.hands[0] == ["y1"]
    assert new.called[0]
    assert new.exposed == -1
    # without the call the mover is exposed: edition 2 has no late call (S12), edition 1 has
    new = run(state, (0, "play rX@2"))
    assert new.exposed == 0
    assert new.legal_moves(0) == []
    old = run(make([["rX", "g1"], ["b1", "b2", "b3"], ["y1"]], edition=1), (0, "play rX@2"))
    assert old.exposed == 0
    assert old.legal_moves(0) == ["solo"]


def test_s8_swap_in_turn_forward_and_free_play() -> None:
    state = make(
        [["WX", "r1", "r2"], ["g1", "g2"], ["b1", "b2", "b3", "yS"]], discard=["r5"], seed=4
    )
    state, events = go(state, 0, "play WX")
    assert state.hands == [["b1", "b2", "b3", "yS"], ["r1", "r2"], ["g1", "g2"]]
    assert Event("hands_passed", {"direction": 1, "hand_sizes": [4, 2, 2]}) in events
    assert state.current == 1
    view = state.view(1)
    assert view["free_play"] is True
    assert view["colour"] == ""
    assert state.legal_moves(1) == ["play r1", "play r1!", "play r2", "play r2!", "draw"]
    # free play: any card; the next colour follows the card played
    state = run(state, (1, "play r2!"))
    assert state.view(2)["colour"] == "r"
    assert state.legal_moves(2) == ["play g2", "play g2!", "draw"]


def test_s8_swap_in_turn_backward_after_reverse() -> None:
    state = make([["rR", "g1", "g2"], ["b1", "b2", "b3"], ["y7", "WX", "y1", "y2"]], discard=["r5"])
    state = run(state, (0, "play rR"))
    assert state.current == 2
    assert state.direction == -1
    state = run(state, (2, "play WX"))
    # direction -1: seat 2 passes to seat 1, seat 1 to seat 0, seat 0 to seat 2
    assert state.hands == [["b1", "b2", "b3"], ["y1", "y2", "y7"], ["g1", "g2"]]
    assert state.current == 1
    assert state.legal_moves(1) == ["play y1", "play y2", "play y7", "draw"]


def test_s8_s12_swap_in_turn_call_counts_the_hand_received() -> None:
    # seat 0 holds WX + 1 card; seat 2 (the seat before it) passes a one-card hand to seat 0
    state = make([["WX", "r1"], ["g1", "g2"], ["b1"]], discard=["r5"])
    assert "play WX!" in state.legal_moves(0)
    state = make([["WX", "r1", "r2"], ["g1"], ["b1", "b2"]], discard=["r5"])
    assert "play WX!" not in state.legal_moves(0)
    with pytest.raises(IllegalMove, match="refused"):
        state.apply(0, "play WX!")


# --------------------------------------------------------------------------------------------
# S9 draw stacks


def test_s9_draw_two_stack_extended_then_drawn_then_normal_turn() -> None:
    pile = ["y1", "y2", "y3", "y4", "g7", "b9"]
    hands = [["rD", "r1", "r3"], ["gD", "b7", "b8"], ["yD", "b2", "W4", "g3"]]
    state = make(hands, pile=pile, discard=["r5"])
    state = run(state, (0, "play rD"))
    assert state.pending == 2
    assert state.current == 1
    assert state.legal_moves(1) == ["play gD", "draw"]  # S9: extend or draw, nothing else
    with pytest.raises(IllegalMove, match="pending"):
        state.apply(1, "play b7")
    state = run(state, (1, "play gD"))
    assert state.pending == 4
    assert state.current == 2
    assert state.legal_moves(2) == ["play yD", "draw"]  # W4 does not extend a D stack
    state, events = go(state, 2, "draw")
    assert events[0].data == {"seat": 2, "count": 4, "reason": "stack"}
    assert events[1].data["cards"] == ["y1", "y2", "y3", "y4"]
    assert state.pending == 0
    assert state.current == 2
    # then a normal turn: play a playable card (gD on top: green, D, jokers) or draw 1
    assert state.legal_moves(2) == ["play g3", "play yD", *W4_FORMS, "draw"]
    after_play = run(state, (2, "play g3"))
    assert after_play.current == 0
    assert after_play.pending == 0
    after_draw, events = go(state, 2, "draw")
    assert events[0].data == {"seat": 2, "count": 1, "reason": "turn"}
    assert after_draw.drawn == "g7"
    assert after_draw.legal_moves(2) == ["play g7", "pass"]


def test_s9_draw_two_after_a_taken_stack_starts_a_new_one() -> None:
    state = make([["rD", "r1", "r3"], ["gD", "b7", "b8"]], pile=["y1", "y2"], discard=["r5"])
    state = run(state, (0, "play rD"), (1, "draw"), (1, "play gD"))
    assert state.pending == 2
    assert state.current == 0


def test_s9_wild_draw_four_stack() -> None:
    hands = [["W4", "r1", "r2"], ["W4", "gD", "b8"], ["y2", "y3"]]
    state = make(hands, pile=["g1", "g2", "g3", "g4", "g5", "g6", "g7", "g8"])
    state = run(state, (0, "play W4:g"))
    assert state.pending == 4
    assert state.legal_moves(1) == [*W4_FORMS, "draw"]  # a Draw Two does not extend W4
    with pytest.raises(IllegalMove, match="W4"):
        state.apply(1, "play gD")
    state = run(state, (1, "play W4:y"))
    assert state.pending == 8
    assert state.view(2)["colour"] == "y"
    state = run(state, (2, "draw"))
    assert len(state.hands[2]) == 10
    assert state.current == 2
    assert state.legal_moves(2)[:2] == ["play y2", "play y3"]


def test_s9_mixed_stacking() -> None:
    hands = [["W4", "rD", "r1"], ["W4", "gD", "b8"], ["y2", "y3"]]
    pile = ["g1", "g2", "g3", "g4", "g5", "g6", "g7", "g8", "g9"]
    plain = make(hands, pile=pile)
    mixed = make(hands, pile=pile, mixed_stacking=True)
    assert run(plain, (0, "play W4:r")).legal_moves(1) == [*W4_FORMS, "draw"]
    on_w4 = run(mixed, (0, "play W4:r"))
    assert on_w4.legal_moves(1) == ["play gD", *W4_FORMS, "draw"]
    assert run(on_w4, (1, "play gD")).pending == 6
    on_d = run(mixed, (0, "play rD"))
    assert on_d.legal_moves(1) == ["play gD", *W4_FORMS, "draw"]
    assert run(on_d, (1, "play W4:b")).pending == 6
    assert run(plain, (0, "play rD")).legal_moves(1) == ["play gD", "draw"]


# --------------------------------------------------------------------------------------------
# S11 jump-ins


def test_s11_jump_in_identical_card_and_play_continues_from_jumper() -> None:
    hands = [["r7", "g1", "g2"], ["b1", "b2"], ["r7", "y1", "y2"], ["g3", "g4"]]
    state = make(hands, discard=["r5"])
    assert state.to_act() == (0,)
    state = run(state, (0, "play r7"))
    assert state.current == 1
    assert state.to_act() == (1, 2)
    assert state.legal_moves(2) == ["play r7"]
    assert state.legal_moves(3) == []
    state, events = go(state, 2, "play r7")
    assert events[0].data == {"seat": 2, "card": "r7", "jump_in": True, "solo": False}
    assert state.current == 3  # the seat after the jumper; seat 1 lost its turn
    assert state.legal_moves(1) == []


@EDITIONS
def test_s11_jump_in_on_ones_own_card(edition: int) -> None:
    # S11 (revised): the player of the top card may jump in on it with the identical card.
    hands = [["r7", "r7", "g1"], ["b1", "b2"], ["y1", "y2"]]
    state = run(make(hands, edition=edition), (0, "play r7"))
    assert state.current == 1
    if edition == 1:  # before the revision: no jump-in on one's own card
        assert state.to_act() == (1,)
        assert state.legal_moves(0) == []
        with pytest.raises(IllegalMove, match="own card"):
            state.apply(0, "play r7")
        return
    assert state.to_act() == (0, 1)
    assert state.public_to_act() == (1,)  # S14: the chance shows a card of seat 0's hand
    assert state.legal_moves(0) == ["play r7", "play r7!"]  # it leaves one card (S12)
    state, events = go(state, 0, "play r7!")
    assert events == [
        Event("play", {"seat": 0, "card": "r7", "jump_in": True, "solo": True}),
    ]
    assert state.discard == ["r5", "r7", "r7"]
    assert state.owner == 0
    assert state.current == 1  # play continues after the jumper: seat 1 still moves
    assert state.hands[0] == ["g1"]
    assert state.called[0]
    assert state.legal_moves(0) == []  # no second r7


@EDITIONS
def test_s11_own_jump_in_applies_the_effect_and_ends_a_drawn_cards_wait(edition: int) -> None:
    # Seat 0 skips seat 1; seat 2 draws a playable r9 and waits (S5). Seat 0's second rS (an
    # own jump-in, edition 2) ends the wait and skips seat 1 again: seat 2 moves, keeping r9.
    hands = [["rS", "rS", "g1", "g2"], ["b1", "b2"], ["y1", "y2"], ["g3", "g4"]]
    state = run(make(hands, pile=["r9"], edition=edition), (0, "play rS"), (2, "draw"))
    assert state.drawn == "r9"
    if edition == 1:
        assert state.to_act() == (2,)
        with pytest.raises(IllegalMove, match="own card"):
            state.apply(0, "play rS")
        return
    assert state.to_act() == (0, 2)
    state, events = go(state, 0, "play rS")
    assert kinds(events) == ["play", "skipped"]
    assert events[1].data == {"seat": 1}
    assert state.current == 2
    assert state.drawn == ""
    assert state.hands[2] == ["r9", "y1", "y2"]
    assert state.legal_moves(2)[0] == "play r9"
    assert "pass" not in state.legal_moves(2)


@EDITIONS
@pytest.mark.parametrize(
    ("joker", "first", "again"),
    [("W", "play W:r", "play W:y"), ("W4", "play W4:r", "play W4:g")],
)
def test_s11_joker_on_the_same_joker_by_its_player(
    edition: int, joker: str, first: str, again: str
) -> None:
    # S11: for jokers, the same joker kind: the player of a W (W4) may add its other W (W4),
    # naming any colour; a W4 jumped on a W4 grows the pending draw (S9).
    hands = [[joker, joker, "g1", "g2"], ["b1", "b2"], ["y1", "y2"]]
    state = run(make(hands, pile=[f"g{i}" for i in range(3, 10)], edition=edition), (0, first))
    assert state.current == 1
    if edition == 1:
        assert state.to_act() == (1,)
        with pytest.raises(IllegalMove, match="own card"):
            state.apply(0, again)
        return
    forms = W_FORMS if joker == "W" else W4_FORMS
    assert state.legal_moves(0) == forms
    assert state.to_act() == (0, 1)
    state, events = go(state, 0, again)
    assert events[0].data["jump_in"] is True
    assert state.colour == again[-1]
    assert state.current == 1
    assert state.pending == (8 if joker == "W4" else 0)
    assert state.legal_moves(1) == ["draw"]  # W: no yellow card; W4: no W4 to extend the 8


@EDITIONS
def test_s11_swap_in_turn_on_the_swap_in_turn_its_player_received(edition: int) -> None:
    # Seat 0's WX passes every hand on; seat 0 receives seat 2's hand, which holds a WX: in
    # edition 2 it may jump in with it on its own WX (the same joker kind), passing the hands
    # again from itself.
    hands = [["WX", "g1", "g2"], ["b1", "b2"], ["WX", "y2", "y3"]]
    state = run(make(hands, edition=edition), (0, "play WX"))
    assert state.hands == [["y2", "y3", "WX"], ["g1", "g2"], ["b1", "b2"]]
    if edition == 1:
        assert state.to_act() == (1,)
        assert state.legal_moves(0) == []
        return
    assert state.to_act() == (0, 1)
    assert state.legal_moves(0) == ["play WX"]  # it would hold seat 2's two cards: no `!`
    state, events = go(state, 0, "play WX")
    assert Event("hands_passed", {"direction": 1, "hand_sizes": [2, 2, 2]}) in events
    assert state.hands == [["b1", "b2"], ["y2", "y3"], ["g1", "g2"]]
    assert state.current == 1
    assert state.colour == ""  # free play for seat 1


def test_s11_jump_in_on_the_turned_over_card_and_not_with_a_similar_card() -> None:
    state = make([["g1", "g2"], ["r5", "b2"], ["b5", "r6"]], discard=["r5"])
    assert state.to_act() == (0, 1)
    with pytest.raises(NotYourTurn, match="identical"):
        state.apply(2, "play b5")
    state = run(state, (1, "play r5"))
    assert state.current == 2


def test_s11_jumped_skip_applies_its_effect() -> None:
    hands = [["rS", "g1", "g2"], ["rS", "b1", "b2"], ["y1", "y2"]]
    state = run(make(hands), (0, "play rS"))
    assert state.current == 2
    assert state.to_act() == (1, 2)
    state = run(state, (1, "play rS"))
    assert state.current == 0  # seat 2 skipped after the jumper


def test_s11_jumped_reverse_and_wild() -> None:
    hands = [["rR", "g1", "g2"], ["b1", "b2"], ["rR", "y2", "y3", "W"], ["W", "g5", "g6"]]
    state = run(make(hands), (0, "play rR"))
    assert state.current == 3
    assert state.direction == -1
    state = run(state, (2, "play rR"))
    assert state.direction == 1
    assert state.current == 3
    state = run(state, (3, "play W:g"))
    assert state.to_act() == (0, 2)
    assert state.legal_moves(2) == W_FORMS
    state = run(state, (2, "play W:y"))
    assert state.current == 3
    assert state.colour == "y"


def test_s11_jumped_draw_two_extends_a_pending_stack() -> None:
    hands = [["rD", "g1", "g2"], ["b1", "b2"], ["rD", "y2", "y3"]]
    state = run(make(hands, pile=["g3", "g4", "g5", "g6"]), (0, "play rD"))
    assert state.to_act() == (1, 2)
    state = run(state, (2, "play rD"))
    assert state.pending == 4
    assert state.current == 0
    assert state.legal_moves(0) == ["draw"]


def test_s11_jumped_draw_two_after_the_stack_was_taken_starts_a_new_one() -> None:
    hands = [["rD", "g1", "g2"], ["b1", "b2"], ["rD", "y2", "y3"]]
    state = make(hands, pile=["g3", "g4", "g5", "g6"])
    state = run(state, (0, "play rD"), (1, "draw"))
    assert state.pending == 0
    assert state.current == 1
    assert state.to_act() == (1, 2)
    state = run(state, (2, "play rD"))
    assert state.pending == 2
    assert state.current == 0


def test_s11_jump_in_ends_a_waiting_drawn_card() -> None:
    hands = [["g1", "g2"], ["b1", "b2"], ["r5", "y2", "y3"]]
    state = make(hands, pile=["r9"], discard=["r5"])
    state = run(state, (0, "draw"))
    assert state.drawn == "r9"
    assert state.to_act() == (0, 2)
    state = run(state, (2, "play r5"))
    assert state.drawn == ""
    assert "r9" in state.hands[0]
    assert state.current == 0
    assert "play r9" in state.legal_moves(0)
    assert "pass" not in state.legal_moves(0)


# --------------------------------------------------------------------------------------------
# S12 solo call


def test_s12_call_listed_only_when_one_card_remains() -> None:
    state = make([["r1", "r2"], ["b1", "b2"]], discard=["r5"])
    assert state.legal_moves(0) == ["play r1", "play r1!", "play r2", "play r2!", "draw"]
    state = make([["r1", "r2", "r3"], ["b1", "b2"]], discard=["r5"])
    assert "play r1!" not in state.legal_moves(0)
    before = state.serialize()
    with pytest.raises(IllegalMove, match="refused"):
        state.apply(0, "play r1!")
    assert state.serialize() == before
    # the last card never carries the call
    state = make([["r1"], ["b1", "b2"]], discard=["r5"])
    assert state.legal_moves(0) == ["play r1", "draw"]
    with pytest.raises(IllegalMove, match="refused"):
        state.apply(0, "play r1!")


def test_s12_call_with_the_play_protects() -> None:
    state = make([["r1", "r2"], ["b1", "r7", "r8"]], pile=["g1", "g2"], discard=["r5"])
    state, events = go(state, 0, "play r1!")
    assert events[0].data["solo"] is True
    assert state.called[0]
    assert state.exposed == -1
    assert state.view(1)["solo_called"] == [True, False]
    assert state.legal_moves(0) == []
    state, events = go(state, 1, "play r7")
    assert len(state.hands[0]) == 1
    assert "drew" not in kinds(events)


def test_s12_edition_1_late_call_then_no_penalty() -> None:
    # Edition 1 (before the revised S12): a forgotten call may be made late with `solo`.
    state = make([["r1", "r2"], ["b1", "r7", "r8"]], pile=["g1", "g2"], discard=["r5"], edition=1)
    state = run(state, (0, "play r1"))
    assert state.exposed == 0
    assert state.to_act() == (0, 1)
    assert state.legal_moves(0) == ["solo"]
    state = run(state, (1, "draw"))  # a draw does not close the window
    assert state.drawn == "g1"
    assert state.legal_moves(0) == ["solo"]
    state, events = go(state, 0, "solo")
    assert events == [Event("solo", {"seat": 0})]
    assert state.called[0]
    assert state.legal_moves(0) == []
    with pytest.raises(IllegalMove, match="solo"):
        state.apply(1, "solo")
    state = run(state, (1, "play g1"))
    assert len(state.hands[0]) == 1


def test_s12_penalty_when_another_player_plays() -> None:
    state = make([["r1", "r2"], ["b1", "r7", "r8"]], pile=["g1", "g2", "g3"], discard=["r5"])
    state = run(state, (0, "play r1"))
    state, events = go(state, 1, "play r7")
    assert kinds(events) == ["play", "drew", "drew_cards"]
    assert events[1].data == {"seat": 0, "count": 2, "reason": "penalty"}
    assert events[2].to == 0
    assert events[2].data["cards"] == ["g1", "g2"]
    assert state.hands[0] == ["r2", "g1", "g2"]
    assert state.exposed == -1
    assert "solo" not in state.legal_moves(0)


def test_s12_penalty_window_closes_even_on_the_players_last_card() -> None:
    state = make([["r1", "r2"], ["r7"], ["b1", "b2"]], pile=["g1", "g2"], discard=["r5"])
    state = run(state, (0, "play r1"))
    state, events = go(state, 1, "play r7")
    assert kinds(events)[:4] == ["play", "drew", "drew_cards", "round_end"]
    end = events[3].data
    assert end["hands"]["0"] == ["r2", "g1", "g2"]
    assert end["penalties"] == {"0": 2 + 1 + 2, "1": 0, "2": 3}
    assert end["points"] == [195, 200, 197]


@EDITIONS
def test_s12_own_draw_means_no_penalty_at_window_close(edition: int) -> None:
    hands = [["rS", "g2"], ["b1", "r3"]]
    state = make(hands, pile=["y1", "y2", "y3"], discard=["r5"], edition=edition)
    state = run(state, (0, "play rS"))  # 2 players: seat 0 again, one card, no call
    assert state.current == 0
    assert state.legal_moves(0) == (["draw", "solo"] if edition == 1 else ["draw"])
    state = run(state, (0, "draw"))
    assert "solo" not in state.legal_moves(0)
    assert state.current == 1
    state, events = go(state, 1, "play r3")
    assert "drew" not in kinds(events)
    assert state.hands[0] == ["g2", "y1"]


def test_s12_penalty_counts_in_a_swap_and_comes_before_the_effect() -> None:
    hands = [["r1", "r2"], ["rX", "g3"], ["b1", "b2"]]
    state = make(hands, pile=["y1", "y2", "y3"], discard=["r5"])
    called = run(state, (0, "play r1!"))
    assert "play rX@0!" in called.legal_moves(1)
    exposed = run(state, (0, "play r1"))
    assert "play rX@0!" not in exposed.legal_moves(1)  # seat 0 will hold 3 cards
    assert "play rX@0" in exposed.legal_moves(1)
    new, events = go(exposed, 1, "play rX@0")
    assert kinds(events)[:3] == ["play", "drew", "drew_cards"]
    assert new.hands[1] == ["r2", "y1", "y2"]
    assert new.hands[0] == ["g3"]
    assert new.exposed == -1  # seat 0 received one card by a swap: no obligation


def test_s12_jump_in_closes_the_window() -> None:
    hands = [["r1", "r2"], ["b1", "b2"], ["r1", "y2", "y3"]]
    state = run(make(hands, pile=["g1", "g2"], discard=["r5"]), (0, "play r1"))
    state, events = go(state, 2, "play r1")
    assert Event("drew", {"seat": 0, "count": 2, "reason": "penalty"}) in events


def test_s12_call_flag_drops_when_hand_grows() -> None:
    state = make([["r1", "r2"], ["rD", "b2", "b3"]], pile=["g1", "g2", "g3"], discard=["r5"])
    state = run(state, (0, "play r1!"), (1, "play rD"))
    assert state.called[0]
    state = run(state, (0, "draw"))
    assert state.called == [False, False]


# --------------------------------------------------------------------------------------------
# S12 (revised, rules edition 2): the call goes only with the play; no late call


@EDITIONS
def test_s12_solo_move_refused_in_edition_2_accepted_in_edition_1(edition: int) -> None:
    # Seat 0 plays its second-last card without `!` and holds one card: exposed to the penalty.
    hands = [["r1", "r2"], ["b1", "r7", "r8"], ["y1", "y2"]]
    state = run(make(hands, pile=["g1", "g2"], edition=edition), (0, "play r1"))
    assert state.exposed == 0
    assert state.view(None)["exposed"] == 0  # public in both editions: everyone saw the play
    if edition == 1:
        assert state.to_act() == (0, 1)
        assert state.public_to_act() == (0, 1)
        assert state.legal_moves(0) == ["solo"]
        called, events = go(state, 0, "solo")
        assert events == [Event("solo", {"seat": 0})]
        assert called.called[0]
        return
    # Edition 2: the forgetter cannot act at all, and `solo` is not a move, for anyone.
    assert state.to_act() == (1,)
    assert state.public_to_act() == (1,)
    assert state.legal_moves(0) == []
    before = state.serialize()
    for seat in (0, 1, 2):
        with pytest.raises(MalformedMove, match=r"`!` to it, e\.g\. `play r5!`") as info:
            state.apply(seat, "solo")
        assert "no late call" in info.value.message
        assert "`solo`;" not in info.value.message  # the notation help lists no `solo` move
    assert state.serialize() == before
    # also before any call was due, and at the start of a game
    with pytest.raises(MalformedMove, match="no late call"):
        RULES.new_game(4).apply(0, "solo")
    with pytest.raises(IllegalMove, match="late call"):  # edition 1: well-formed, not now
        RULES.new_game(4, edition=1).apply(0, "solo")


@EDITIONS
def test_s12_forgotten_call_costs_two_cards_when_another_player_plays(edition: int) -> None:
    # The same forgotten call; the next card is seat 1's turn play. In edition 2 nothing can
    # be done about it any more; in edition 1 a late call in time avoids the penalty.
    hands = [["r1", "r2"], ["b1", "r7", "r8"], ["y1", "y2"]]
    state = run(make(hands, pile=["g1", "g2", "g3"], edition=edition), (0, "play r1"))
    if edition == 1:
        state = run(state, (0, "solo"))
    else:  # nothing to do about it: seat 0 has no move, and `solo` is malformed
        assert state.legal_moves(0) == []
        with pytest.raises(MalformedMove):
            state.apply(0, "solo")
    state, events = go(state, 1, "play r7")
    if edition == 1:
        assert kinds(events) == ["play"]
        assert state.hands[0] == ["r2"]
        return
    assert kinds(events) == ["play", "drew", "drew_cards"]
    assert events[1] == Event("drew", {"seat": 0, "count": 2, "reason": "penalty"})
    assert events[2] == Event("drew_cards", {"seat": 0, "cards": ["g1", "g2"]}, 0)
    assert state.hands[0] == ["r2", "g1", "g2"]
    assert state.exposed == -1


@EDITIONS
def test_s12_forgotten_call_penalty_at_another_players_jump_in(edition: int) -> None:
    # The next card is seat 2's jump-in (out of turn, S11): the window closes on it, the card
    # is on the pile before the penalty is drawn.
    hands = [["r1", "r2"], ["b1", "b2"], ["r1", "y2", "y3"]]
    state = run(make(hands, pile=["g1", "g2"], edition=edition), (0, "play r1"))
    assert state.to_act() == ((0, 1, 2) if edition == 1 else (1, 2))
    if edition == 1:
        state = run(state, (0, "solo"))
    else:
        assert state.legal_moves(0) == []
    state, events = go(state, 2, "play r1")
    assert events[0].data == {"seat": 2, "card": "r1", "jump_in": True, "solo": False}
    penalty = Event("drew", {"seat": 0, "count": 2, "reason": "penalty"})
    assert (penalty in events) == (edition == 2)
    assert len(state.hands[0]) == (3 if edition == 2 else 1)
    assert state.current == 0


@EDITIONS
def test_s12_own_jump_in_is_not_another_players_card(edition: int) -> None:
    # Seat 0 plays r7 without the call and holds its second r7. In edition 2 it may jump in
    # with it on its own card: its last card, the round ends, no penalty (only another
    # player's card closes the window). In edition 1 it may only call late.
    hands = [["r7", "r7"], ["b1", "b2"], ["y1", "y2"]]
    state = run(make(hands, pile=["g1", "g2"], edition=edition), (0, "play r7"))
    assert state.exposed == 0
    if edition == 1:
        assert state.legal_moves(0) == ["solo"]
        return
    assert state.legal_moves(0) == ["play r7"]  # the last card never carries `!`
    state, events = go(state, 0, "play r7")
    assert kinds(events)[:2] == ["play", "round_end"]
    assert "drew" not in kinds(events)
    assert events[1].data["winner"] == 0
    assert events[1].data["penalties"] == {"0": 0, "1": 3, "2": 3}


def test_s12_a_forgotten_call_on_an_own_jump_in_also_costs_two_cards() -> None:
    # Only a player's own play creates the obligation: an own jump-in is one (edition 2).
    hands = [["r7", "r7", "g1"], ["b1", "r2"], ["y1", "y2"]]
    state = run(make(hands, pile=["g4", "g5"]), (0, "play r7"), (0, "play r7"))
    assert state.exposed == 0
    assert state.legal_moves(0) == []
    state, events = go(state, 1, "play r2")
    assert Event("drew", {"seat": 0, "count": 2, "reason": "penalty"}) in events
    assert state.hands[0] == ["g1", "g4", "g5"]


@EDITIONS
def test_s12_call_refused_on_a_play_that_does_not_leave_one_card(edition: int) -> None:
    # Four cards: the own jump-in leaves two, so `!` is refused on it (edition 2); edition 1
    # refuses the jump-in itself.
    hands = [["r7", "r7", "g1", "g2"], ["b1", "b2"], ["y1", "y2"]]
    state = make(hands, edition=edition)
    with pytest.raises(IllegalMove, match="`!` is refused"):
        state.apply(0, "play r7!")
    state = run(state, (0, "play r7"))
    before = state.serialize()
    message = "`!` is refused" if edition == 2 else "own card"
    with pytest.raises(IllegalMove, match=message):
        state.apply(0, "play r7!")
    assert state.serialize() == before
    if edition == 2:
        assert state.legal_moves(0) == ["play r7"]
        state = run(state, (0, "play r7"))
        assert state.exposed == -1  # two cards left: nothing to call
        assert state.hands[0] == ["g1", "g2"]


def _leaves_one(state: SoloState, seat: int, move: str) -> bool:
    """Whether `move` leaves `seat` holding exactly one card, its effects included, in the same
    round (a last card ends the round, S13)."""
    after, _ = go(state, seat, move)
    return after.round == state.round and not after.over and len(after.hands[seat]) == 1


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10_000), players=st.integers(2, 6), edition=st.sampled_from([1, 2]))
def test_s12_call_forms_listed_exactly_when_the_play_leaves_one_card(
    seed: int, players: int, edition: int
) -> None:
    """Along random games, for every seat: `play ...!` is listed exactly when `play ...` is and
    leaves one card; `solo` (edition 1) exactly for the exposed seat holding one card, never in
    edition 2; in edition 2 the seat that played the top card may jump in on it (S11)."""
    rng = random.Random(seed)
    state = RULES.new_game(seed, {"players": players, "start_points": 60}, edition=edition)
    for _ in range(250):
        if state.finished:
            break
        for seat in range(players):
            moves = state.legal_moves(seat)
            listed = set(moves)
            for move in moves:
                if move.endswith("!"):
                    assert move[:-1] in listed
                elif move.startswith("play"):
                    assert (move + "!" in listed) == _leaves_one(state, seat, move), move
            late = seat == state.exposed and len(state.hands[seat]) == 1
            assert ("solo" in listed) == (edition == 1 and late)
            holds_top = state.discard[-1] in state.hands[seat]
            if seat == state.owner and seat != state.current and holds_top:
                assert any(m.startswith("play") for m in moves) == (edition == 2)
        seat = rng.choice(state.to_act())
        state = go(state, seat, rng.choice(state.legal_moves(seat)))[0]


# --------------------------------------------------------------------------------------------
# S13 round end and scoring, game end


@pytest.mark.parametrize(
    ("last", "move"),
    [("rD", "play rD"), ("rX", "play rX@1"), ("WX", "play WX"), ("W4", "play W4:g")],
)
def test_s13_round_ends_on_action_card_with_effects_void(last: str, move: str) -> None:
    hands = [[last], ["b1", "b2", "W"], ["y9"]]
    state = make(hands, pile=["g1"], discard=["r5"])
    state, events = go(state, 0, move)
    assert kinds(events)[:3] == ["play", "round_end", "round_start"]
    end = events[1].data
    assert end["winner"] == 0
    assert end["round"] == 1
    assert end["hands"] == {"0": [], "1": ["b1", "b2", "W"], "2": ["y9"]}  # no swap happened
    assert end["penalties"] == {"0": 0, "1": 43, "2": 9}
    assert state.points == [200, 157, 191]
    assert state.round == 2
    assert state.pending == 0
    assert state.direction == 1


def test_s13_pending_draw_is_void_at_round_end() -> None:
    hands = [["rD", "g1", "g2"], ["gD"], ["y9", "y8"]]
    state = make(hands, pile=["g3", "g4"], discard=["r5"])
    state = run(state, (0, "play rD"))
    assert state.pending == 2
    state, events = go(state, 1, "play gD")  # the last card: the stack of 4 is void
    assert kinds(events)[:3] == ["play", "round_end", "round_start"]
    assert state.round == 2
    assert state.pending == 0
    assert [len(h) for h in state.hands] == [8, 8, 8]


def test_s13_points_mode_game_end_and_winner() -> None:
    state = make([["r1"], ["W4", "W4", "W", "W", "WX"], ["y9"]], start_points=100)
    state, events = go(state, 0, "play r1")
    assert state.finished
    assert state.to_act() == ()
    assert kinds(events) == ["play", "round_end", "game_end"]
    result = state.result()
    assert result is not None
    assert result.winners == (0,)
    assert dict(result.scores) == {0: 100, 1: -120, 2: 91}
    for seat in range(3):
        assert state.legal_moves(seat) == []
    with pytest.raises(GameOver):
        state.apply(1, "draw")
    with pytest.raises(GameOver):
        state.resign(1)


def test_s13_points_mode_continues_at_zero() -> None:
    state = make([["r1"], ["W4", "W4"], ["y9"]], start_points=100)
    state = run(state, (0, "play r1"))
    assert state.points == [100, 0, 91]
    assert not state.finished
    assert state.round == 2


def test_s13_rounds_mode_ends_after_the_rounds() -> None:
    state = make([["r1"], ["b2"], ["y9"]], mode="rounds", rounds=1)
    state = run(state, (0, "play r1"))
    result = state.result()
    assert result is not None
    assert result.winners == (0,)
    state = make([["r1"], ["b2"], ["y9"]], mode="rounds", rounds=2)
    state = run(state, (0, "play r1"))
    assert not state.finished
    assert state.round == 2
    # the end of the last round
    state = tweak(
        state, hands=[["r1"], state.hands[1], state.hands[2]], discard=["r5"], cur=0, colour="r"
    )
    state = run(state, (0, "play r1"))
    assert state.finished
    assert state.round == 2


def test_s13_rounds_mode_also_ends_below_zero() -> None:
    state = make([["r1"], ["W4"], ["y9"]], mode="rounds", rounds=5, start_points=20)
    state = run(state, (0, "play r1"))
    assert state.finished
    assert state.round == 1


def test_s13_ties_share_the_win() -> None:
    state = make([["r1"], ["r5"], ["W4", "W4", "W4", "W4", "W", "W"]], mode="rounds", rounds=1)
    state = tweak(state, points=[200, 205, 300])
    state = run(state, (0, "play r1"))
    result = state.result()
    assert result is not None
    assert result.winners == (0, 1)
    assert dict(result.scores) == {0: 200, 1: 200, 2: 20}


# --------------------------------------------------------------------------------------------
# resign


def test_resign_two_players_other_wins() -> None:
    state = RULES.new_game(9, {"players": 2})
    state2, events = state.resign(1)
    assert kinds(events) == ["resigned", "game_end"]
    result = state2.result()
    assert result is not None
    assert result.winners == (0,)
    assert dict(result.scores) == {0: 200, 1: -1}
    assert state2.to_act() == ()
    assert not state.finished  # the original state is untouched


def test_resign_ranks_the_remaining_seats_and_ties() -> None:
    state, _ = RULES.new_game(9, {"players": 3}).resign(0)
    result = state.result()
    assert result is not None
    assert result.winners == (1, 2)
    with pytest.raises(InvalidSeat):
        RULES.new_game(9).resign(4)


# --------------------------------------------------------------------------------------------
# S14 hidden information, views, events


def test_s14_views_show_only_own_hand() -> None:
    state = make([["r1", "r2"], ["b1", "b2", "b3"]], pile=["g1", "g2"], discard=["y1", "r5"])
    view = state.view(0)
    assert view["hand"] == ["r1", "r2"]
    assert view["hand_sizes"] == [2, 3]
    assert view["discard"] == ["y1", "r5"]
    assert view["top"] == "r5"
    assert view["draw_pile_size"] == 2
    assert view["pending_draw"] == 0
    assert view["to_move"] == 0
    assert view["direction"] == 1
    assert view["colour"] == "r"
    assert view["points"] == [200, 200]
    assert view["round"] == 1
    assert "hand" not in state.view(None)
    text = json.dumps(state.view(None)) + json.dumps(state.view(0))
    assert "b3" not in text
    assert "g1" not in text


def test_s14_states_differing_in_other_hands_look_the_same() -> None:
    pile = ["r9", "g2", "g3"]
    a = make([["r1", "r2", "g5"], ["b1", "b2", "y3"], ["y7", "y8"]], pile=pile)
    b = make([["r1", "r2", "g5"], ["W", "rS", "b4"], ["W4", "g8"]], pile=pile)
    for seat_moves in [[(0, "draw"), (0, "pass")], [(0, "play r1")], [(0, "draw"), (0, "play r9")]]:
        sa, sb = a, b
        for seat, move in seat_moves:
            assert sa.view(0) == sb.view(0)
            assert sa.legal_moves(0) == sb.legal_moves(0)
            sa, ea = go(sa, seat, move)
            sb, eb = go(sb, seat, move)
            assert visible_events(ea, 0) == visible_events(eb, 0)
            assert visible_events(ea, None) == visible_events(eb, None)
        assert sa.view(0) == sb.view(0)
        assert sa.view(None) == sb.view(None)
    # errors of seat 0 say nothing about the other hands
    for move in ["play b1", "play W:r", "pass", "play rS"]:
        with pytest.raises(GameError) as ea_info:
            a.apply(0, move)
        with pytest.raises(GameError) as eb_info:
            b.apply(0, move)
        assert ea_info.value.message == eb_info.value.message
    with pytest.raises(NotYourTurn) as info_a:
        a.apply(2, "play y7")
    with pytest.raises(NotYourTurn) as info_b:
        b.apply(2, "play y7")
    assert info_a.value.message == info_b.value.message


def test_s14_round_start_deals_private_events() -> None:
    state = make([["r1"], ["b2"]], discard=["r5"])
    _, events = go(state, 0, "play r1")
    dealt = [e for e in events if e.kind == "dealt"]
    assert [e.to for e in dealt] == [0, 1]
    start = next(e for e in events if e.kind == "round_start")
    assert start.to is None
    assert start.data["hand_sizes"] == [8, 8]
    assert all(e.to is None for e in events if e.kind != "dealt")


def test_s14_determinize_keeps_sizes_and_own_hand() -> None:
    rng = random.Random(3)
    state = RULES.new_game(11, {"players": 4})
    for _ in range(40):
        mover = rng.choice(state.to_act())
        state = go(state, mover, rng.choice(state.legal_moves(mover)))[0]
    for seat in (0, 1, None):
        other = state.determinize(seat, rng)
        assert isinstance(other, SoloState)
        assert [len(h) for h in other.hands] == [len(h) for h in state.hands]
        assert len(other.pile) == len(state.pile)
        assert other.discard == state.discard
        assert Counter(c for h in other.hands for c in h) + Counter(other.pile) == Counter(
            c for h in state.hands for c in h
        ) + Counter(state.pile)
        if seat is not None:
            assert other.hands[seat] == state.hands[seat]
            assert other.view(seat) == state.view(seat)


def test_s14_determinize_keeps_a_waiting_drawn_card_playable() -> None:
    state = make([["g1", "g2"], ["b1", "b2"], ["y3", "y4"]], pile=["r9", "b5"], discard=["r5"])
    state = run(state, (0, "draw"))
    rng = random.Random(0)
    for _ in range(20):
        other = state.determinize(1, rng)
        assert isinstance(other, SoloState)
        assert other.drawn in other.hands[0]
        assert other.drawn[0] == "r" or other.drawn[1:] == "5"
        assert other.legal_moves(1) == state.legal_moves(1)


# --------------------------------------------------------------------------------------------
# Notation, errors, setup, serialization


@pytest.mark.parametrize(
    "move", ["play", "play r0", "play z5", "drw", "play W5", "play r5 ", "Draw"]
)
def test_malformed_moves(move: str) -> None:
    state = make([["r1", "r2"], ["b1"]])
    with pytest.raises(MalformedMove, match="play <card>"):
        state.apply(0, move)


def test_well_formed_but_illegal_moves_say_what_is_allowed() -> None:
    state = make([["r1", "r2", "rX"], ["b1", "b2"]])
    with pytest.raises(IllegalMove, match="no colour"):
        state.apply(0, "play r1:g")
    with pytest.raises(IllegalMove, match="hold no g1"):
        state.apply(0, "play g1")
    with pytest.raises(IllegalMove, match="names a seat"):
        state.apply(0, "play rX:b")
    with pytest.raises(NotYourTurn, match="seat 0's turn"):
        state.apply(1, "draw")
    with pytest.raises(InvalidSeat):
        state.apply(2, "draw")
    with pytest.raises(InvalidSeat):
        state.legal_moves(-1)
    with pytest.raises(MalformedMove):
        state.apply(0, None)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "setup",
    [
        {"hands": [["r1"]], "discard": ["r5"]},
        {"hands": [["r1"], ["q1"]], "discard": ["r5"]},
        {"hands": [["r1", "r1"], ["r1"]], "discard": ["r5"]},
        {"hands": [["W"] * 3, ["W", "W"]], "discard": ["r5"]},
        {"hands": [["r1"], ["r2"]], "discard": ["rS"]},
        {"hands": [["r1"], ["r2"]], "discard": []},
        {"hands": [["r1"], []], "discard": ["r5"]},
        {"hands": [["r1"], ["r2"]], "discard": ["r5"], "start_seat": 2},
        {"hands": [["r1"], ["r2"]], "discard": ["r5"], "deck": []},
        {"hands": [["r1"], ["r2"]], "discard": ["r5"], "draw_pile": "r3"},
    ],
)
def test_invalid_setups(setup: dict[str, Any]) -> None:
    with pytest.raises(InvalidSetup):
        RULES.new_game(1, {"players": 2}, setup)


# --------------------------------------------------------------------------------------------
# Rules editions


def test_editions_of_the_rules() -> None:
    assert (RULES.edition, RULES.editions) == (2, (1, 2))
    assert RULES.new_game(1).edition == 2
    assert RULES.new_game(1, edition=1).edition == 1
    assert RULES.new_game(1, edition=2) == RULES.new_game(1)
    for bad in (3, 0, -1, True):
        with pytest.raises(InvalidOptions, match="no rules edition"):
            RULES.new_game(1, edition=bad)
    with pytest.raises(InvalidOptions, match="no rules edition 3"):
        make([["r1"], ["r2"]], edition=3)


@EDITIONS
def test_serialize_keeps_the_edition_and_every_derived_state_too(edition: int) -> None:
    hands = [["r7", "r7", "g1"], ["b1", "r2"], ["y1", "y2"]]
    state = make(hands, pile=["g4", "g5", "g6"], edition=edition)
    blob = state.serialize()
    assert json.loads(blob)["edition"] == edition
    assert RULES.deserialize(blob) == state
    assert RULES.deserialize(blob).edition == edition
    assert RULES.deserialize(blob).serialize() == blob
    assert state.view(None)["edition"] == state.view(1)["edition"] == edition
    played = run(state, (0, "play r7"), (1, "draw"))
    assert played.edition == edition
    assert played.resign(2)[0].edition == edition
    assert played.determinize(1, random.Random(0)).edition == edition
    rebuilt = RULES.from_view(played.view(1), 1, random.Random(0))
    assert rebuilt.edition == edition
    assert rebuilt.view(1) == played.view(1)
    # the same position of the other edition differs: the edition is part of the state
    other = make(hands, pile=["g4", "g5", "g6"], edition=3 - edition)
    assert other != state


def test_a_snapshot_without_edition_is_edition_1() -> None:
    # Written by the engine before editions existed (seat 0 played r5 leaving r6, no call).
    old = (
        b'{"called":[false,false],"colour":"r","ctr":1,"cur":1,"dir":1,"discard":["r1","r5"],'
        b'"drawn":"","exposed":0,"first":0,"hands":[["r6"],["g1","g2","b3","y4"]],'
        b'"opts":[2,200,"points",5,false],"over":false,"owner":0,"pending":0,'
        b'"pile":["y9","y8","y7","y6","y5","y3","y2","y1"],"points":[200,200],"resigned":-1,'
        b'"round":1,"seed":3}'
    )
    state = RULES.deserialize(old)
    assert state.edition == 1
    assert state.legal_moves(0) == ["solo"]  # the late call of edition 1 still exists there
    assert state.legal_moves(1) == ["draw"]
    assert state.public_to_act() == (0, 1)
    again = RULES.deserialize(state.serialize())
    assert again == state
    assert again.edition == 1
    called, events = go(state, 0, "solo")
    assert events == [Event("solo", {"seat": 0})]
    assert called.edition == 1


def test_from_view_takes_the_edition_of_the_view() -> None:
    state = make([["r1", "r2"], ["b1", "b2"]], edition=1)
    view = state.view(0)
    assert RULES.from_view(view, 0, random.Random(0)).edition == 1
    del view["edition"]  # a view without one: the current edition
    assert RULES.from_view(view, 0, random.Random(0)).edition == 2
    for bad in (3, 0, True):
        with pytest.raises(ValueError, match="no rules edition"):
            RULES.from_view({**view, "edition": bad}, 0, random.Random(0))


def test_serialize_round_trip_and_apply_does_not_mutate() -> None:
    state = make([["r1", "r2"], ["b1", "r7"]], pile=["g1", "g2"])
    blob = state.serialize()
    assert RULES.deserialize(blob) == state
    assert RULES.deserialize(blob).serialize() == blob
    new, _ = go(state, 0, "play r1")
    assert state.serialize() == blob
    assert new != state
    assert RULES.deserialize(new.serialize()) == new


# --------------------------------------------------------------------------------------------
# Random play: invariants (every engine's conformance checks: tests/test_conformance.py)


def _playout(
    seed: int, options: dict[str, Any], edition: int = 2, max_steps: int = 30_000
) -> SoloState:
    rng = random.Random(seed)
    state = RULES.new_game(seed, options, edition=edition)
    for _ in range(max_steps):
        acting = state.to_act()
        if not acting:
            return state
        assert state.current in acting
        public = state.public_to_act()
        assert set(public) <= set(acting)
        if edition == 2:  # S14: only the seat to move is public; no late call exists (S12)
            assert public == (state.current,)
        seat = rng.choice(acting)
        moves = state.legal_moves(seat)
        assert moves
        assert edition == 1 or "solo" not in moves
        move = rng.choice(moves)
        state, events = go(state, seat, move)
        assert state.edition == edition
        assert edition == 1 or "solo" not in kinds(events)
        assert total_cards(state) == 112
        assert state.pending == 0 or state.discard[-1] in ("W4", "rD", "gD", "bD", "yD")
        if state.drawn:
            assert state.drawn in state.hands[state.current]
    raise AssertionError("no end")


@settings(max_examples=16, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    players=st.integers(2, 10),
    mixed=st.booleans(),
    mode=st.sampled_from(["points", "rounds"]),
    edition=st.sampled_from([1, 2]),
)
def test_random_playouts_keep_invariants(
    seed: int, players: int, mixed: bool, mode: str, edition: int
) -> None:
    """Random games of either edition: 112 cards always, listed moves always apply, the
    edition never changes, edition 2 shows only the seat to move and has no `solo`."""
    options = {
        "players": players,
        "mixed_stacking": mixed,
        "mode": mode,
        "rounds": 2,
        "start_points": 60,
    }
    final = _playout(seed, options, edition)
    result = final.result()
    assert result is not None
    top = max(final.points)
    assert result.winners == tuple(s for s in range(players) if final.points[s] == top)
    assert min(final.points) < 0 or (mode == "rounds" and final.round == 2)
    assert result.detail["reason"] == ("below_zero" if min(final.points) < 0 else "rounds")


# --------------------------------------------------------------------------------------------
# More S5 / S11 corners


def test_s5_drawer_may_not_play_another_card_even_an_identical_one() -> None:
    state = make([["r5", "g1", "g2"], ["b1", "b2"]], pile=["r9"], discard=["r5"])
    assert state.legal_moves(0) == ["play r5", "draw"]
    state = run(state, (0, "draw"))
    assert state.legal_moves(0) == ["play r9", "pass"]
    with pytest.raises(IllegalMove, match="only it may be played"):
        state.apply(0, "play r5")


def test_s11_jump_in_forms_carry_the_call_and_can_end_the_round() -> None:
    state = make([["r7", "g1", "g2"], ["b1", "b2"], ["r7", "y2"], ["g4", "g5"]])
    state = run(state, (0, "play r7"))
    assert state.legal_moves(2) == ["play r7", "play r7!"]
    state, events = go(state, 2, "play r7!")
    assert events[0].data["solo"] is True
    assert state.called[2]
    # a jump-in with the last card ends the round at once
    hands = [["r7", "g1", "g2"], ["b1", "b2"], ["y2", "y3"], ["r7"]]
    ending = run(make(hands, discard=["r5"]), (0, "play r7"))
    assert ending.to_act() == (1, 3)
    ending, events = go(ending, 3, "play r7")
    assert kinds(events)[:2] == ["play", "round_end"]
    assert events[1].data["winner"] == 3


def test_s11_jumped_wild_draw_four_extends_and_swap_in_turn_passes_hands() -> None:
    hands = [["W4", "g1", "g2"], ["b1", "b2"], ["W4", "y2", "y3"]]
    state = make(hands, pile=[f"g{i}" for i in range(3, 10)])
    state = run(state, (0, "play W4:r"))
    assert state.legal_moves(2) == W4_FORMS
    state = run(state, (2, "play W4:b"))
    assert state.pending == 8
    assert state.current == 0
    # (a WX received by the pass, on one's own WX: test_s11_swap_in_turn_on_the_swap_in_turn_...)
    # a jumped Swap-in-turn passes the hands again, from the jumper
    hands = [["WX", "g1", "g2"], ["WX", "b1", "b2"], ["y1", "y2", "y3"]]
    state = run(make(hands), (0, "play WX"))
    assert state.hands == [["y1", "y2", "y3"], ["g1", "g2"], ["b1", "b2", "WX"]]
    assert state.to_act() == (1, 2)
    state = run(state, (2, "play WX"))
    assert state.current == 0
    assert state.hands == [["b1", "b2"], ["y1", "y2", "y3"], ["g1", "g2"]]


# --------------------------------------------------------------------------------------------
# The round's public log (S14): the same for every seat, never a hidden card


def test_the_log_records_the_rounds_public_actions_in_every_view() -> None:
    # Seat 0 plays r7, seat 2 jumps in with the other r7 (S11), seat 0 draws an unplayable g9,
    # seat 1 draws a playable r2 and keeps it, seat 2 plays rD and seat 0 takes the stack.
    state = make(
        [["r7", "W4", "y9", "y8"], ["b1", "g1", "g2"], ["r7", "rD", "y1", "y2"]],
        pile=["b9", "y3", "y4", "g3", "g4", "y5", "y6", "r2", "g9"][::-1],
    )
    steps = [
        (0, "play r7"),
        (2, "jump r7"),
        (0, "draw 1"),
        (1, "draw 1 fits"),
        (1, "pass"),
        (2, "play rD"),
        (0, "take 2"),
    ]
    moves = {"jump r7": "play r7", "draw 1 fits": "draw", "draw 1": "draw", "take 2": "draw"}
    expected: list[str] = []
    for seat, entry in steps:
        state = run(state, (seat, moves.get(entry, entry)))
        expected.append(f"{seat} {entry}")
        assert [state.view(s)["log"] for s in (None, 0, 1, 2)] == [expected] * 4
    # The cards drawn (g9, r2, y6, y5) are never named, nor any other hidden card.
    assert state.hands[0] == ["g9", "y5", "y6", "y8", "y9", "W4"]
    log = " ".join(state.view(None)["log"])
    for hidden in ("g9", "r2", "y5", "y6", "y8", "y9"):
        assert hidden not in log
    # A round's end starts the next round's log empty.
    assert RULES.new_game(3).view(0)["log"] == []


def test_the_log_names_only_played_cards_and_counts() -> None:
    """Random games, every edition: each move adds exactly the entries its public events make,
    and a card is named only in a play or jump-in entry, the card that was played."""
    pattern = re_compile(
        r"(?P<seat>\d) (?:(?P<how>play|jump) (?P<card>[rgby][1-9SRDX]|W4|WX|W)(?::[rgby])?"
        r"(?:@\d)?!?|(?:draw|take|penalty) \d+|draw 1 fits|pass|solo)"
    )
    rng = random.Random(5)
    for edition in (1, 2):
        for seed in range(6):
            state = RULES.new_game(seed, {"players": 2 + seed % 3}, edition=edition)
            for _ in range(300):
                acting = state.to_act()
                if not acting:
                    break
                seat = rng.choice(acting)
                before = state.view(None)["log"]
                state, events = go(state, seat, rng.choice(state.legal_moves(seat)))
                after = state.view(None)["log"]
                if any(event.kind == "round_start" for event in events):
                    assert after == []
                    continue
                assert after[: len(before)] == before
                plays = [e.data for e in events if e.kind == "play"]
                for entry in after[len(before) :]:
                    match = pattern.fullmatch(entry)
                    assert match, entry
                    if match["card"]:
                        play = plays.pop(0)
                        assert (int(match["seat"]), match["card"]) == (play["seat"], play["card"])
                        assert (match["how"] == "jump") == play["jump_in"]
                assert not plays
                views = {json.dumps(state.view(s)["log"]) for s in (None, *range(state.n))}
                assert len(views) == 1


def test_a_snapshot_without_a_log_loads_with_an_empty_one() -> None:
    state = run(make([["r1", "r2", "r3"], ["b1", "r7"]], pile=["g1", "g2"]), (0, "play r1"))
    assert state.view(1)["log"] == ["0 play r1"]
    data = json.loads(state.serialize())
    del data["log"]  # as the engine wrote it before the log existed
    old = RULES.deserialize(json.dumps(data).encode())
    assert old.view(1)["log"] == []
    assert old.legal_moves(1) == state.legal_moves(1)
    assert RULES.deserialize(state.serialize()) == state  # the log is part of the state
    # from_view keeps the log, and a view without one (an older server) gives an empty one
    assert RULES.from_view(state.view(1), 1, random.Random(0)).view(1) == state.view(1)
    view = state.view(1)
    del view["log"]
    assert RULES.from_view(view, 1, random.Random(0)).view(1)["log"] == []


def test_a_seats_own_hand_history_is_in_its_view_only() -> None:
    """S14: a seat sees its own drawn cards and the hand it gets in a swap; its view keeps its
    hand after each such change (with the log's length then), no other view shows them."""
    state = make(
        [["r7", "rX", "g1", "b2"], ["r8", "y1", "y2"], ["g5", "g6", "g7"]],
        pile=["b9", "y9"],
    )
    assert state.view(0)["hand_history"] == ["0 r7 rX g1 b2"]
    state = run(state, (0, "play r7"), (1, "play r8"), (2, "draw"))  # g5 g6 g7 + b9
    assert state.view(2)["hand_history"] == ["0 g5 g6 g7", "3 g5 g6 g7 b9"]
    assert state.view(0)["hand_history"] == ["0 r7 rX g1 b2"]  # its plays are in the log
    state = run(state, (0, "play rX@2"))  # seat 0 takes g5 g6 g7 b9, seat 2 gets g1 b2
    assert state.view(0)["hand_history"][-1] == "4 g5 g6 g7 b9"
    assert state.view(2)["hand_history"][-1] == "4 g1 b2"
    assert state.view(1)["hand_history"] == ["0 r8 y1 y2"]
    assert "hand_history" not in state.view(None)
    shown = json.dumps(state.view(1))
    assert "b9" not in shown
    assert "g5" not in shown
    # Kept through serialization and from_view; a snapshot without it loads with none.
    assert RULES.deserialize(state.serialize()).view(2) == state.view(2)
    assert RULES.from_view(state.view(2), 2, random.Random(0)).view(2) == state.view(2)
    data = json.loads(state.serialize())
    del data["seen"]
    assert RULES.deserialize(json.dumps(data).encode()).view(2)["hand_history"] == []
