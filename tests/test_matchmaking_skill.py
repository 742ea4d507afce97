"""Matching rated tickets by skill (services/matchmaker/skill.py): players far apart in rating
wait until their windows allow it; a table's spread is within every seated ticket's window; the
oldest ticket sits first, with the closest players; around a table of three or more, each
player's neighbours are as close in rating as any seating allows."""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass

from hypothesis import given
from hypothesis import strategies as st

from services.matchmaker.skill import Window, balanced_seating, tables_by_skill, within

WINDOW = Window(start=150, per_second=10, most=1000)


@dataclass(frozen=True)
class T:
    player: str
    created_ms: int


def test_far_apart_players_wait_until_both_windows_allow_it() -> None:
    ann, bob = T("ann", 0), T("bob", 0)
    ratings = {"ann": 1000, "bob": 1500}
    for now_s in (0, 10, 34.9):  # 150 + 10/s: 500 apart needs 35 s of waiting
        assert tables_by_skill([ann, bob], ratings, 2, now_s * 1000, WINDOW) == ([], [ann, bob])
    assert tables_by_skill([ann, bob], ratings, 2, 35_000, WINDOW) == ([[ann, bob]], [])
    late = T("bob", 30_000)  # one who just came: its narrow window decides
    assert tables_by_skill([ann, late], ratings, 2, 35_000, WINDOW)[0] == []


def test_the_oldest_sits_first_with_the_closest() -> None:
    old, near, far, other = T("old", 0), T("near", 5), T("far", 1), T("other", 9)
    ratings = {"old": 1200, "near": 1230, "far": 1100, "other": 1700}
    tables, left = tables_by_skill([near, far, old, other], ratings, 2, 1000, WINDOW)
    assert tables == [[old, near]]
    assert left == [far, other]
    assert within(old, [far, other, near], ratings, 1000, WINDOW) == [near, far]


def test_a_table_of_four_is_as_close_as_every_window() -> None:
    tickets = [T(f"p{i}", 0) for i in range(6)]
    ratings = {"p0": 1000, "p1": 1040, "p2": 1100, "p3": 1140, "p4": 1400, "p5": 1420}
    tables, left = tables_by_skill(tickets, ratings, 4, 0, WINDOW)
    assert tables == [tickets[:4]]
    assert left == tickets[4:]


@given(
    st.lists(st.tuples(st.integers(600, 2000), st.integers(0, 120_000)), min_size=0, max_size=30),
    st.integers(2, 6),
    st.integers(0, 200_000),
)
def test_every_table_is_full_and_within_the_windows_of_its_players(
    raw: list[tuple[int, int]], seats: int, now: int
) -> None:
    tickets = [T(f"p{i}", created) for i, (_, created) in enumerate(raw)]
    ratings = {f"p{i}": rating for i, (rating, _) in enumerate(raw)}
    tables, left = tables_by_skill(tickets, ratings, seats, now, WINDOW)
    seated = [t for table in tables for t in table]
    assert sorted(t.player for t in seated + left) == sorted(t.player for t in tickets)
    for table in tables:
        assert len(table) == seats
        values = [ratings[t.player] for t in table]
        assert max(values) - min(values) <= min(WINDOW.at(now - t.created_ms) for t in table)


def widest_gap(values: list[int], order: list[int] | tuple[int, ...]) -> int:
    """The largest rating gap between neighbours around a table seated in `order`."""
    return max(abs(values[order[i]] - values[order[i - 1]]) for i in range(len(order)))


@given(st.lists(st.integers(600, 2400), min_size=3, max_size=7), st.integers(0, 2**32))
def test_balanced_seating_keeps_neighbours_as_close_as_any_seating(
    values: list[int], seed: int
) -> None:
    order = balanced_seating(values, random.Random(seed))
    assert sorted(order) == list(range(len(values)))  # every player, once
    best = min(widest_gap(values, p) for p in itertools.permutations(range(len(values))))
    assert widest_gap(values, order) == best


def test_the_strongest_does_not_sit_beside_the_weakest() -> None:
    values = [1000, 1100, 1200, 1300, 1400, 1500]
    for seed in range(20):
        order = balanced_seating(values, random.Random(seed))
        weakest = order.index(0)
        neighbours = {order[weakest - 1], order[(weakest + 1) % len(order)]}
        assert neighbours == {1, 2}
