"""Matching rated tickets by skill: pure (no I/O, the time is given).

Each rated ticket accepts opponents whose rating (the number shown: docs/ratings.md) is within
its window, which starts at `start` points and widens by `per_second` for every second the
ticket has waited, up to `most`: at first a player meets players of about their strength, and
the longer they wait, the wider they look. A table forms when every ticket at it accepts every
other: the spread of the table's ratings is within the narrowest window among them. The oldest
ticket is seated first, with the players closest to its rating. Around a table of three or more
(Solo), the seats are then ordered so that each player's neighbours, who play just before and
just after them, are as close to them in rating as the table allows (`balanced_seating`).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar


@dataclass(frozen=True)
class Window:
    start: float = 150.0
    per_second: float = 10.0
    most: float = 1000.0

    def at(self, waited_ms: float) -> float:
        return min(self.most, self.start + self.per_second * max(0.0, waited_ms) / 1000)


class Waiting(Protocol):
    @property
    def player(self) -> str: ...

    @property
    def created_ms(self) -> int: ...


T = TypeVar("T", bound=Waiting)


def tables_by_skill(
    waiting: Sequence[T], ratings: Mapping[str, float], seats: int, now_ms: float, window: Window
) -> tuple[list[list[T]], list[T]]:
    """The tables the rated `waiting` tickets (oldest first) make now, and the tickets left."""
    left = sorted(waiting, key=lambda t: t.created_ms)
    tables: list[list[T]] = []
    for anchor in list(left):
        if anchor not in left:
            continue
        rating = ratings.get(anchor.player, 0.0)
        others = sorted(
            (t for t in left if t is not anchor),
            key=lambda t: abs(ratings.get(t.player, 0.0) - rating),
        )
        table = [anchor]
        for other in others:
            candidate = [*table, other]
            values = [ratings.get(t.player, 0.0) for t in candidate]
            narrowest = min(window.at(now_ms - t.created_ms) for t in candidate)
            if max(values) - min(values) <= narrowest:
                table = candidate
                if len(table) == seats:
                    break
        if len(table) == seats:
            tables.append(table)
            left = [t for t in left if t not in table]
    return tables, left


def within(
    anchor: Waiting,
    others: Sequence[T],
    ratings: Mapping[str, float],
    now_ms: float,
    window: Window,
) -> list[T]:
    """Of `others`, those that would sit with `anchor` by skill now (closest first)."""
    rating = ratings.get(anchor.player, 0.0)
    return sorted(
        (
            t for t in others
            if abs(ratings.get(t.player, 0.0) - rating)
            <= min(window.at(now_ms - t.created_ms), window.at(now_ms - anchor.created_ms))
        ),
        key=lambda t: abs(ratings.get(t.player, 0.0) - rating),
    )  # fmt: skip


def balanced_seating(values: Sequence[float], rng: random.Random) -> list[int]:
    """An order of seats around a table (indices into `values`, the players' ratings) in which
    the largest rating gap between neighbours is the smallest any order has: sorted, then dealt
    alternately to either side of the weakest, so the strongest sits between the next two
    strongest instead of beside the weakest. The first seat and the direction are random."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ring = order[0::2] + order[1::2][::-1]
    start = rng.randrange(len(ring)) if ring else 0
    ring = ring[start:] + ring[:start]
    if rng.random() < 0.5:
        ring.reverse()
    return ring
