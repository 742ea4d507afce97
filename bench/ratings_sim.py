"""Matchmaking by skill, simulated: `python -m bench.ratings_sim` (or `make ratings-sim`).

Synthetic players with a hidden true skill arrive at a steady rate and queue for rated
two-seat games again and again. They are matched by the platform's own matchmaking code
(services/matchmaker/skill.py, or first come first served for comparison) and rated by its own
rating code (services/ratings/model.py); each game's winner is drawn from the two true skills.
The clock is simulated (a tick a second): the figures do not depend on the machine.

Printed for each way of matching: how well the ratings recover the true order (Spearman's rank
correlation between true skill and rating, over the players who reached N games, for several
N), how far apart the players of a game are (in true skill, standard deviations, and in
rating), and how long tickets wait (p50, p99, seconds).
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field

from services.matchmaker.skill import Window, tables_by_skill
from services.ratings.model import PLAYED_MOVES, Rating, rate
from wire.records import FinishedGame, VersionStatus

CHECKPOINTS = (5, 10, 20)
STEEPNESS = 1.7
"""P(a beats b) = 1 / (1 + exp(-STEEPNESS (skill_a - skill_b))): one standard deviation of
skill wins about 85% of games."""


@dataclass
class Player:
    player: str
    skill: float
    rating: Rating = field(default_factory=Rating)
    games: int = 0
    created_ms: int = 0
    """When its ticket was queued (simulated ms)."""
    at: dict[int, int] = field(default_factory=dict)
    """Its rating (the number shown) when it had played N games."""


@dataclass
class Figures:
    correlation: dict[int, float]
    skill_gap: float
    rating_gap: float
    wait_p50: float
    wait_p99: float
    games: int


def spearman(xs: Sequence[float], ys: Sequence[float]) -> float:
    def ranks(values: Sequence[float]) -> list[float]:
        order = sorted(range(len(values)), key=lambda i: values[i])
        found = [0.0] * len(values)
        for place, index in enumerate(order):
            found[index] = float(place)
        return found

    rx, ry = ranks(xs), ranks(ys)
    mx, my = statistics.mean(rx), statistics.mean(ry)
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry, strict=True))
    var = math.sqrt(sum((a - mx) ** 2 for a in rx) * sum((b - my) ** 2 for b in ry))
    return cov / var if var else 0.0


def simulate(
    players: int, games_each: int, arrivals_per_second: float, by_skill: bool, seed: int
) -> Figures:
    rng = random.Random(seed)
    everyone = [Player(f"a-{i}", rng.gauss(0.0, 1.0)) for i in range(players)]
    by_id = {p.player: p for p in everyone}
    arriving = list(everyone)
    waiting: list[Player] = []
    busy: list[tuple[int, list[Player]]] = []  # (ends at ms, players)
    window = Window()
    waits: list[float] = []
    skill_gaps: list[float] = []
    rating_gaps: list[float] = []
    game_ms, now, played = 90_000, 0, 0
    next_arrival = 0.0
    quiet_since = 0
    while arriving or busy or (waiting and now - quiet_since < 600_000):
        # (players still waiting when nobody else comes for 10 minutes are left waiting: the
        # matchmaking never seats them with someone too far apart; on the platform bots would)
        now += 1000
        while arriving and next_arrival <= now:
            newcomer = arriving.pop()
            newcomer.created_ms = now
            waiting.append(newcomer)
            next_arrival += 1000 / arrivals_per_second
        for ends, table in [b for b in busy if b[0] <= now]:
            busy.remove((ends, table))
            for player in table:
                if player.games < games_each:
                    player.created_ms = now + rng.randrange(0, 20_000)  # a break first
                    waiting.append(player)
        ready = [p for p in waiting if p.created_ms <= now]
        if by_skill:
            shown = {p.player: p.rating.display for p in ready}
            tables, _ = tables_by_skill(ready, shown, 2, now, window)
        else:
            ready.sort(key=lambda p: p.created_ms)
            tables = [ready[i : i + 2] for i in range(0, len(ready) - 1, 2)]
        for table in tables:
            a, b = table
            for player in table:
                waiting.remove(player)
                waits.append((now - player.created_ms) / 1000)
            skill_gaps.append(abs(a.skill - b.skill))
            rating_gaps.append(abs(a.rating.display - b.rating.display))
            a_wins = rng.random() < 1 / (1 + math.exp(-STEEPNESS * (a.skill - b.skill)))
            _play(a, b, 0 if a_wins else 1, by_id)
            busy.append((now + game_ms, [a, b]))
            played += 1
        if arriving or busy or tables:
            quiet_since = now
    waits.sort()
    return Figures(
        correlation={
            n: spearman([p.skill for p in done], [p.at[n] for p in done])
            for n in CHECKPOINTS
            if len(done := [p for p in everyone if n in p.at]) > 2
        },
        skill_gap=statistics.mean(skill_gaps),
        rating_gap=statistics.mean(rating_gaps),
        wait_p50=waits[len(waits) // 2],
        wait_p99=waits[int(0.99 * (len(waits) - 1))],
        games=played,
    )


def _play(a: Player, b: Player, winner: int, by_id: dict[str, Player]) -> None:
    record = FinishedGame(
        seats=[a.player, b.player],
        accounts=[0, 1],
        rated=True,
        scored=False,
        day=None,
        status=VersionStatus(
            to_act=[],
            finished=True,
            result={"winners": [winner], "scores": {}, "detail": {"reason": "win"}},
        ),
        moves=[PLAYED_MOVES, PLAYED_MOVES],  # played, not resigned at once
    )
    for change in rate(record, {a.player: a.rating, b.player: b.rating}):
        player = by_id[change.player]
        player.rating = change.after
        player.games += 1
        if player.games in CHECKPOINTS:
            player.at[player.games] = player.rating.display


def lines(players: int, games_each: int, arrivals: float, seed: int) -> list[str]:
    out = [
        f"{players} players of hidden skill, {arrivals:g} arriving a second, "
        f"{games_each} rated two-seat games each (simulated time)"
    ]
    for by_skill in (False, True):
        f = simulate(players, games_each, arrivals, by_skill, seed)
        how = "by skill (rating window)" if by_skill else "first come, first served"
        corr = ", ".join(f"{n} games {c:.3f}" for n, c in sorted(f.correlation.items()))
        out.append(f"{how}: {f.games} games")
        out.append(f"  true order recovered (Spearman): {corr}")
        out.append(
            f"  gap within a game: {f.skill_gap:.2f} sd of true skill, {f.rating_gap:.0f} rating"
        )
        out.append(f"  wait: p50 {f.wait_p50:.0f} s, p99 {f.wait_p99:.0f} s")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=10_000)
    parser.add_argument("--games", type=int, default=20, help="rated games each player plays")
    parser.add_argument("--arrivals", type=float, default=10.0, help="players arriving a second")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    for line in lines(args.players, args.games, args.arrivals, args.seed):
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
