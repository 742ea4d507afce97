"""The pure rating code (services/ratings/model.py): who a game counts for, the seats' places,
the new ratings, the number shown and the provisional mark."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bench.bot_ratings import budgets_for, places, render, seed_ratings
from services.ratings.bot_seeds import BOT_SEEDS
from services.ratings.model import (
    MU,
    SEED_SIGMA,
    SIGMA,
    Change,
    Rating,
    counts,
    held_rating,
    ranks,
    rate,
    rated_player,
    score_of,
    starting,
)

ALICE, BOB, CAROL = "a-" + "1" * 16, "a-" + "2" * 16, "p-" + "3" * 16


def meta(seats: list[str], accounts: list[int] | None = None, rated: bool = True) -> dict[str, Any]:
    found = [i for i, p in enumerate(seats) if not p.startswith("bot-")]
    return {"seats": seats, "rated": rated, "accounts": found if accounts is None else accounts}


def finished(
    winners: list[int], scores: dict[int, float] | None = None, **detail: Any
) -> dict[str, Any]:
    return {
        "finished": True,
        "to_act": [],
        "result": {
            "winners": winners,
            "scores": {str(s): v for s, v in (scores or {}).items()},
            "detail": {"reason": "win", **detail},
        },
    }


def test_the_winner_goes_up_and_the_loser_down_both_less_uncertain() -> None:
    changes = rate(meta([ALICE, BOB]), finished([1]), {})
    by = {c.player: c for c in changes}
    assert by[BOB].after.mu > MU > by[ALICE].after.mu
    assert by[BOB].rank == 0
    assert by[ALICE].rank == 1
    assert all(c.after.sigma < SIGMA and c.after.games == 1 for c in changes)
    assert by[BOB].after.display > 1000 > by[ALICE].after.display


def test_a_draw_moves_equal_players_nowhere_but_settles_them() -> None:
    changes = rate(meta([ALICE, BOB]), finished([], {0: 0.5, 1: 0.5}, reason="draw"), {})
    assert [c.rank for c in changes] == [0, 0]
    assert all(abs(c.after.mu - MU) < 1e-9 and c.after.sigma < SIGMA for c in changes)


def test_an_upset_moves_more_than_the_expected_result() -> None:
    strong, weak = Rating(35.0, 4.0, 30), Rating(15.0, 4.0, 30)
    upset = rate(meta([ALICE, BOB]), finished([1]), {ALICE: strong, BOB: weak})
    expected = rate(meta([ALICE, BOB]), finished([0]), {ALICE: strong, BOB: weak})
    assert upset[1].after.mu - weak.mu > expected[0].after.mu - strong.mu > 0


def test_games_that_count_for_nobody() -> None:
    bots = ["bot-strong-" + "a" * 12, "bot-random-" + "b" * 12]
    assert not counts(meta([ALICE, BOB], rated=False), finished([0]))  # casual
    aborted = {
        "finished": True,
        "result": {"winners": [], "scores": {}, "detail": {"reason": "aborted"}},
    }
    assert not counts(meta([ALICE, BOB]), aborted)
    for reason in ("abandoned", "stopped_by_sponsor"):
        ended = {
            "finished": True,
            "result": {"winners": [], "scores": {}, "detail": {"reason": reason}},
        }
        assert not counts(meta([ALICE, BOB]), ended)
    assert not counts(meta(bots), finished([0]))  # no person
    assert not counts(meta([ALICE, BOB], accounts=[]), finished([0]))  # guests only
    assert not counts(meta(["b-" + "4" * 16, bots[0]]), finished([0]))  # a bot account and a bot
    assert not counts(meta([ALICE, BOB]), {"finished": False, "result": None, "to_act": [0]})
    assert rate(meta([ALICE, BOB], rated=False), finished([0]), {}) == []


def test_a_guest_is_not_rated_and_a_game_with_one_account_left_rates_nothing() -> None:
    assert rate(meta([ALICE, CAROL], accounts=[0]), finished([0]), {}) == []
    changes = rate(
        meta([ALICE, BOB, CAROL], accounts=[0, 1]), finished([2], {0: 1, 1: 5, 2: 9}), {}
    )
    assert [(c.player, c.rank) for c in changes] == [(ALICE, 2), (BOB, 1)]


def test_bots_are_rated_by_level() -> None:
    bot = "bot-strong-" + "c" * 12
    assert rated_player(bot, False) == "bot-strong"
    assert rated_player(ALICE, True) == ALICE
    assert rated_player(CAROL, False) is None
    changes = rate(meta([ALICE, bot]), finished([1]), {})
    assert {c.player for c in changes} == {ALICE, "bot-strong"}


def test_two_bots_of_one_level_move_its_rating_once_by_their_mean() -> None:
    bots = ["bot-greedy-" + "d" * 12, "bot-greedy-" + "e" * 12]
    changes = rate(meta([ALICE, *bots]), finished([1], {0: 0, 1: 9, 2: 4}), {})
    greedy = [c for c in changes if c.player == "bot-greedy"]
    assert len(greedy) == 2
    assert greedy[0].after == greedy[1].after
    assert greedy[0].after.games == 1


def test_a_timeout_or_a_resignation_ranks_last() -> None:
    # Solo: seat 1 resigned; the engine's winners exclude it, its points may be anything.
    assert ranks(
        3, {"winners": [0], "scores": {"0": 5, "1": 99, "2": 3}, "detail": {"resigned": 1}}
    ) == [0, 2, 1]
    # A forfeit on time: the engine's result said to be a loss on time for seat 0.
    assert ranks(2, {"winners": [1], "scores": {}, "detail": {"reason": "timeout", "seat": 0}}) == [
        1,
        0,
    ]
    # A seat a bot took over when its time ran out ranks last, whatever the bot did.
    assert ranks(3, {"winners": [2], "scores": {"0": 1, "1": 2, "2": 9}, "detail": {}}, [2]) == [
        1,
        0,
        2,
    ]


def test_solo_follows_the_final_standings_ties_share_a_place() -> None:
    result = {"winners": [3], "scores": {"0": 10, "1": -4, "2": 10, "3": 30, "4": 0}, "detail": {}}
    assert ranks(5, result) == [1, 4, 1, 0, 3]


def test_provisional_until_settled_and_the_number_shown() -> None:
    assert Rating().provisional
    assert Rating().display == 1000
    assert not Rating(25.0, 5.0, 20).provisional
    assert Rating(25.0, 7.5, 20).provisional  # still uncertain
    assert Rating(25.0, 5.0, 3).provisional  # too few games
    assert Rating(30.0, 5.0, 20).display == 1000 + 40 * 15


def test_a_change_round_trips_through_json() -> None:
    change = Change(1, ALICE, 0, Rating(), Rating(27.0, 8.0, 1))
    assert Change.from_json(change.to_json()) == change


@given(st.lists(st.integers(-50, 50), min_size=2, max_size=10))
def test_places_follow_scores_and_the_first_gains_the_last_loses(points: list[int]) -> None:
    n = len(points)
    best = max(points)
    result = {
        "winners": [s for s in range(n) if points[s] == best],
        "scores": {str(s): p for s, p in enumerate(points)},
        "detail": {},
    }
    places = ranks(n, result)
    for a in range(n):
        for b in range(n):
            if points[a] > points[b]:
                assert places[a] < places[b]
            if points[a] == points[b]:
                assert places[a] == places[b]
    seats = [f"a-{s:016x}" for s in range(n)]
    changes = rate(meta(seats), {"finished": True, "result": result}, {})
    assert len(changes) == n
    if len(set(points)) > 1:
        first = min(changes, key=lambda c: c.rank)
        last = max(changes, key=lambda c: c.rank)
        assert first.after.mu > MU > last.after.mu
    assert all(c.after.sigma <= SIGMA for c in changes)


def test_bot_levels_start_from_the_arena_and_people_as_new_players(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert set(BOT_SEEDS) == {"esoloe", "zoxso", "solo"}
    for game, seeds in BOT_SEEDS.items():
        assert set(seeds) == {"bot-random", "bot-greedy", "bot-strong", "bot-expert"}
        for level, (mu, sigma) in seeds.items():
            start = starting(game, level)
            assert (start.mu, start.sigma, start.games) == (mu, max(sigma, SEED_SIGMA), 0)
            assert held_rating(game, level, None) == start  # before its first counted game
        assert seeds["bot-random"][0] < min(seeds["bot-greedy"][0], seeds["bot-strong"][0])
        assert seeds["bot-greedy"][0] < seeds["bot-expert"][0]
    # A level the arena has not rated starts from the next level below that it has.
    unrated = {k: v for k, v in BOT_SEEDS["esoloe"].items() if k != "bot-expert"}
    monkeypatch.setitem(BOT_SEEDS, "esoloe", unrated)
    assert starting("esoloe", "bot-expert") == starting("esoloe", "bot-strong")
    monkeypatch.undo()
    assert starting("esoloe", ALICE) == Rating()
    assert starting("solace", "bot-strong") == Rating()
    assert starting("solace", "bot-expert") == Rating()
    held = Rating(30.0, 3.0, 12)
    assert held_rating("esoloe", "bot-strong", held.to_json()) == held


def test_the_arena_seeding_rates_levels_from_their_games() -> None:
    # Each level thinks as long as on the platform, relative to strong's budget.
    assert budgets_for(0.25) == {"random": 0.0, "greedy": 0.0, "strong": 0.25, "expert": 1.25}
    assert places([(0, 1.0), (1, 0.0)]) == [0, 1]
    assert places([(1, 0.5), (0, 0.5)]) == [0, 0]
    found = seed_ratings("zoxso", games=2, budget=0.01, seed=3, jobs=1)
    assert set(found) == {"random", "greedy", "strong", "expert"}
    assert all(r.games == 6 for r in found.values())  # two games with each other level
    assert all(r.sigma < SIGMA for r in found.values())
    written: dict[str, Any] = {}
    exec(render({"zoxso": found}, "the test"), written)  # the module the command writes
    assert written["BOT_SEEDS"]["zoxso"]["bot-random"] == pytest.approx(
        (found["random"].mu, found["random"].sigma), abs=1e-3
    )


def test_a_game_played_alone_scores_for_an_account_with_a_result() -> None:
    record = {"seats": [ALICE], "scored": True, "status": finished([0], {0: 6})}
    assert score_of(record) == (ALICE, 6.0)
    assert score_of({**record, "scored": False}) is None  # a guest's
    aborted = finished([], {0: 0}, reason="aborted")
    assert score_of({**record, "status": aborted}) is None
    taken = {**finished([0], {0: 2}), "replaced": {"0": "bot-greedy-" + "a" * 12}}
    assert score_of({**record, "status": taken}) is None  # a bot finished it
