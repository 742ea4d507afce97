"""The matchmaking simulation (bench/ratings_sim.py) runs, and with a fixed seed (its clock is
simulated) shows what matchmaking by skill is for: the ratings recover the true order, and
players meet others of closer skill than first come, first served seats them with."""

from __future__ import annotations

from bench.ratings_sim import simulate, spearman


def test_spearman() -> None:
    assert spearman([1, 2, 3, 4], [10, 20, 30, 40]) == 1.0
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1]) == -1.0


def test_matching_by_skill_seats_closer_players_and_the_ratings_find_the_order() -> None:
    first_come = simulate(300, 10, 10.0, by_skill=False, seed=3)
    by_skill = simulate(300, 10, 10.0, by_skill=True, seed=3)
    assert by_skill.skill_gap < first_come.skill_gap
    assert by_skill.correlation[10] > 0.7
    assert first_come.correlation[10] > 0.7
    assert by_skill.games >= 0.95 * first_come.games  # nearly everyone is seated
