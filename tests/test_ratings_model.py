"""The pure rating code (services/ratings/model.py): who a game counts for, the seats' places,
the new ratings, the number shown and the provisional mark."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bench.bot_ratings import GAMES, SEEDS, budgets_for, kept, places, render, seed_ratings
from services.ratings.bot_seeds import BOT_SEEDS, SEEDED_BY
from services.ratings.model import (
    MU,
    PLAYED_MOVES,
    SEED_SIGMA,
    SIGMA,
    Change,
    Rating,
    counts,
    held_rating,
    off_standard,
    on_the_board,
    own_moves,
    ranks,
    rate,
    rated_player,
    score_of,
    starting,
)
from wire.records import FinishedGame, VersionStatus

ALICE, BOB, CAROL = "a-" + "1" * 16, "a-" + "2" * 16, "p-" + "3" * 16


def meta(
    seats: list[str],
    accounts: list[int] | None = None,
    rated: bool = True,
    moves: list[int] | None = None,
) -> dict[str, Any]:
    """A finished game's record (the moves each seat made: PLAYED_MOVES each, unless given)."""
    found = [i for i, p in enumerate(seats) if not p.startswith("bot-")]
    return {
        "seats": seats,
        "rated": rated,
        "accounts": found if accounts is None else accounts,
        "moves": [PLAYED_MOVES] * len(seats) if moves is None else moves,
    }


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


def game(record: dict[str, Any], status: dict[str, Any]) -> FinishedGame:
    """A finished game's record (`meta`) with its final status (`finished`), as the ratings
    consumer reads it."""
    return FinishedGame.from_json({**record, "status": status})


def test_the_winner_goes_up_and_the_loser_down_both_less_uncertain() -> None:
    changes = rate(game(meta([ALICE, BOB]), finished([1])), {})
    by = {c.player: c for c in changes}
    assert by[BOB].after.mu > MU > by[ALICE].after.mu
    assert by[BOB].rank == 0
    assert by[ALICE].rank == 1
    assert all(c.after.sigma < SIGMA and c.after.games == 1 for c in changes)
    assert by[BOB].after.display > 1000 > by[ALICE].after.display


def test_a_draw_moves_equal_players_nowhere_but_settles_them() -> None:
    changes = rate(game(meta([ALICE, BOB]), finished([], {0: 0.5, 1: 0.5}, reason="draw")), {})
    assert [c.rank for c in changes] == [0, 0]
    assert all(abs(c.after.mu - MU) < 1e-9 and c.after.sigma < SIGMA for c in changes)


def test_an_upset_moves_more_than_the_expected_result() -> None:
    strong, weak = Rating(35.0, 4.0, 30), Rating(15.0, 4.0, 30)
    upset = rate(game(meta([ALICE, BOB]), finished([1])), {ALICE: strong, BOB: weak})
    expected = rate(game(meta([ALICE, BOB]), finished([0])), {ALICE: strong, BOB: weak})
    assert upset[1].after.mu - weak.mu > expected[0].after.mu - strong.mu > 0


def test_games_that_count_for_nobody() -> None:
    bots = ["bot-strong-" + "a" * 12, "bot-random-" + "b" * 12]
    assert not counts(game(meta([ALICE, BOB], rated=False), finished([0])))  # casual
    aborted = {
        "finished": True,
        "to_act": [],
        "result": {"winners": [], "scores": {}, "detail": {"reason": "aborted"}},
    }
    assert not counts(game(meta([ALICE, BOB]), aborted))
    for reason in ("abandoned", "stopped_by_sponsor"):
        ended = {
            "finished": True,
            "to_act": [],
            "result": {"winners": [], "scores": {}, "detail": {"reason": reason}},
        }
        assert not counts(game(meta([ALICE, BOB]), ended))
    assert not counts(game(meta(bots), finished([0])))  # no person
    assert not counts(game(meta([ALICE, BOB], accounts=[]), finished([0])))  # guests only
    a_bot_account_and_a_bot = meta(["b-" + "4" * 16, bots[0]])
    assert not counts(game(a_bot_account_and_a_bot, finished([0])))
    assert not counts(game(meta([ALICE, BOB]), {"finished": False, "result": None, "to_act": [0]}))
    assert rate(game(meta([ALICE, BOB], rated=False), finished([0])), {}) == []


def test_a_guest_is_not_rated_and_a_game_with_one_account_left_rates_nothing() -> None:
    assert rate(game(meta([ALICE, CAROL], accounts=[0]), finished([0])), {}) == []
    changes = rate(
        game(meta([ALICE, BOB, CAROL], accounts=[0, 1]), finished([2], {0: 1, 1: 5, 2: 9})), {}
    )
    assert [(c.player, c.rank) for c in changes] == [(ALICE, 2), (BOB, 1)]


def test_bots_are_rated_by_level() -> None:
    bot = "bot-strong-" + "c" * 12
    assert rated_player(bot, False) == "bot-strong"
    assert rated_player(ALICE, True) == ALICE
    assert rated_player(CAROL, False) is None
    changes = rate(game(meta([ALICE, bot]), finished([1])), {})
    assert {c.player for c in changes} == {ALICE, "bot-strong"}


def test_a_bot_levels_rating_is_fixed_and_established() -> None:
    bots = ["bot-greedy-" + "d" * 12, "bot-greedy-" + "e" * 12]
    seed = starting("solo", "bot-greedy")
    assert seed.fixed
    assert not seed.provisional
    changes = rate(
        game(meta([ALICE, *bots]), finished([1], {0: 0, 1: 9, 2: 4})), {"bot-greedy": seed}
    )
    greedy = [c for c in changes if c.player == "bot-greedy"]
    assert len(greedy) == 2
    assert all(c.before == c.after == seed for c in greedy)  # won, and did not move
    assert [c.after.games for c in changes if c.player == ALICE] == [1]  # the person did
    # a level missing from the ratings given is fixed too
    (bot,) = [c for c in rate(game(meta([ALICE, bots[0]]), finished([0])), {}) if c.seat == 1]
    assert bot.after == bot.before
    assert bot.after.fixed


def test_twelve_resignations_against_a_bot_leave_its_level_where_the_arena_put_it() -> None:
    seed = starting("zoxso", "bot-random")
    bot = "bot-random-" + "f" * 12
    for alt in range(12):
        player = f"a-{alt:016x}"
        for moves in ([0, 0], [1, 1], [PLAYED_MOVES, PLAYED_MOVES]):  # at once, then played
            changes = rate(
                game(meta([player, bot], moves=moves), finished([1], resigned=0)),
                {"bot-random": seed},
            )
            assert all(c.after == seed for c in changes if c.player == "bot-random")
    assert held_rating("zoxso", "bot-random", Rating(40.0, 2.0, 99).to_json()) == seed


def test_a_game_not_played_rates_nobody() -> None:
    resigned = finished([1], resigned=0)
    assert counts(game(meta([ALICE, BOB]), resigned))
    for moves in ([0, 0], [0, 7], [7, 0], [1, 2], [2, 1]):
        assert not counts(game(meta([ALICE, BOB], moves=moves), resigned)), moves
        assert rate(game(meta([ALICE, BOB], moves=moves), resigned), {}) == []
    unknown = {k: v for k, v in meta([ALICE, BOB]).items() if k != "moves"}
    assert not counts(game(unknown, resigned))  # its log was not read: not seen played
    assert not counts(game(meta([ALICE, BOB], moves=[2]), resigned))
    solo = meta([ALICE, BOB, CAROL], accounts=[0, 1, 2], moves=[5, 5, 1])
    assert not counts(game(solo, finished([0], {0: 9, 1: 3, 2: 1})))  # one seat never really played


def test_a_seat_s_own_moves_are_its_players() -> None:
    took = VersionStatus([0], False, replaced={"1": "bot-greedy-" + "a" * 12})
    held = VersionStatus([0], False)
    log = [
        (0, "c12", held),
        (1, "c3", held),
        (0, "c4", held),
        (1, "timeout", took),  # a bot takes seat 1 over: its moves are not seat 1's player's
        (1, "c7", took),
        (0, "c8", took),
        (1, "c9", took),
        (1, "take_seat", held),
        (1, "c10", held),
        (-1, "abort", held),
        (0, "resign", held),
    ]
    assert own_moves(2, log) == [3, 2]
    assert own_moves(2, []) == [0, 0]
    assert own_moves(2, [(0, "resign", held)]) == [0, 0]


def test_an_established_rating_does_not_move_against_a_provisional_opponent() -> None:
    settled, new = Rating(35.0, 3.0, 40), Rating()
    assert not settled.provisional
    assert new.provisional
    for winner in (0, 1):
        changes = rate(game(meta([ALICE, BOB]), finished([winner])), {ALICE: settled, BOB: new})
        by = {c.player: c for c in changes}
        assert by[ALICE].after == settled  # not a point, and not a game, either way
        assert by[BOB].after != new
        assert by[BOB].after.games == 1
    # the alt's eight played losses: the established main stays where it was
    main = settled
    for alt in range(8):
        player = f"a-{alt:016x}"
        changes = rate(game(meta([ALICE, player]), finished([0], resigned=1)), {ALICE: main})
        main = next(c.after for c in changes if c.player == ALICE)
    assert main == settled


def test_established_players_are_rated_among_the_established_seats() -> None:
    first, second = Rating(30.0, 3.0, 40), Rating(28.0, 3.0, 40)
    result = finished([2], {0: 9, 1: 5, 2: 20})  # the newcomer wins, ALICE second
    changes = rate(
        game(meta([ALICE, BOB, CAROL], accounts=[0, 1, 2]), result), {ALICE: first, BOB: second}
    )
    between_them = rate(game(meta([ALICE, BOB]), finished([0])), {ALICE: first, BOB: second})
    by = {c.player: c.after for c in changes}
    alone = {c.player: c.after for c in between_them}
    assert by[ALICE] == alone[ALICE]
    assert by[BOB] == alone[BOB]
    assert by[CAROL].mu > MU  # the newcomer is rated against everyone


def test_two_newcomers_rate_each_other() -> None:
    changes = rate(game(meta([ALICE, BOB]), finished([0])), {})
    assert [c.after.games for c in changes] == [1, 1]
    assert changes[0].after.mu > MU > changes[1].after.mu


def test_the_leaderboard_holds_established_accounts_only() -> None:
    assert on_the_board(ALICE, Rating(30.0, 3.0, 40))
    assert not on_the_board(ALICE, Rating(30.0, 3.0, 9))  # too few games
    assert not on_the_board(ALICE, Rating(30.0, 7.5, 40))  # too uncertain
    assert not on_the_board("bot-expert", starting("zoxso", "bot-expert"))


def test_a_rated_table_has_the_standard_settings_but_its_seat_count() -> None:
    standard = {"max_plies": 400, "time_control.clock_seconds": 600}
    assert off_standard(standard, standard) == []
    assert off_standard({**standard, "max_plies": 37}, standard) == ["max_plies 37 (standard: 400)"]
    assert off_standard({"players": 3, "x": 1}, {"players": 4, "x": 1}) == []
    assert off_standard({"extra": True}, {}) == ["extra True (standard: None)"]


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
    fixed = starting("solo", "bot-strong")
    bot = Change(0, "bot-strong", 1, fixed, fixed)
    assert Change.from_json(bot.to_json()) == bot


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
    changes = rate(game(meta(seats), {"finished": True, "to_act": [], "result": result}), {})
    assert len(changes) == n
    if len(set(points)) > 1:
        first = min(changes, key=lambda c: c.rank)
        last = max(changes, key=lambda c: c.rank)
        assert first.after.mu > MU > last.after.mu
    assert all(c.after.sigma <= SIGMA for c in changes)


def test_bot_levels_are_fixed_from_the_arena_and_people_start_as_new_players(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert set(BOT_SEEDS) == {"esoloe", "zoxso", "solo"}
    for game, seeds in BOT_SEEDS.items():
        assert set(seeds) == {"bot-random", "bot-greedy", "bot-strong", "bot-expert"}
        for level, (mu, sigma) in seeds.items():
            start = starting(game, level)
            assert start == Rating(mu, max(sigma, SEED_SIGMA), 0, fixed=True)
            assert held_rating(game, level, None) == start  # before its first counted game
        assert seeds["bot-random"][0] < min(seeds["bot-greedy"][0], seeds["bot-strong"][0])
        assert seeds["bot-greedy"][0] < seeds["bot-expert"][0]
    # A level the arena has not rated starts from the next level below that it has.
    unrated = {k: v for k, v in BOT_SEEDS["esoloe"].items() if k != "bot-expert"}
    monkeypatch.setitem(BOT_SEEDS, "esoloe", unrated)
    assert starting("esoloe", "bot-expert") == starting("esoloe", "bot-strong")
    monkeypatch.undo()
    assert starting("esoloe", ALICE) == Rating()
    assert starting("solace", "bot-strong") == Rating(fixed=True)  # no seed: a new player's
    held = Rating(30.0, 3.0, 12)
    assert held_rating("esoloe", ALICE, held.to_json()) == held
    assert held_rating("esoloe", "bot-strong", held.to_json()) == starting("esoloe", "bot-strong")


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
    exec(render({"zoxso": found}, {"zoxso": "the test"}), written)  # the module it writes
    assert written["BOT_SEEDS"]["zoxso"]["bot-random"] == pytest.approx(
        (found["random"].mu, found["random"].sigma), abs=1e-3
    )
    assert written["SEEDED_BY"] == {"zoxso": "the test"}
    # A run that rates some games (--game) writes the others' seeds and commands as they were.
    assert set(SEEDED_BY) == set(GAMES)
    assert render({game: kept(game) for game in GAMES}, SEEDED_BY) == SEEDS.read_text()


def test_a_game_played_alone_scores_for_an_account_with_a_result() -> None:
    record = {"seats": [ALICE], "scored": True, "status": finished([0], {0: 6})}
    assert score_of(FinishedGame.from_json(record)) == (ALICE, 6.0)
    assert score_of(FinishedGame.from_json({**record, "scored": False})) is None  # a guest's
    aborted = finished([], {0: 0}, reason="aborted")
    assert score_of(FinishedGame.from_json({**record, "status": aborted})) is None
    taken = {**finished([0], {0: 2}), "replaced": {"0": "bot-greedy-" + "a" * 12}}
    assert score_of(FinishedGame.from_json({**record, "status": taken})) is None  # a bot's
