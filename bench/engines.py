"""Engine speed: random games per second, engine only (no I/O)."""

from __future__ import annotations

import random
import time

import games
from engines.contract import Rules


def random_game(rules: Rules, seed: int, options: dict[str, object] | None = None) -> int:
    """Play one game with random legal moves of random acting seats; returns the plies."""
    rng = random.Random(seed)
    state = rules.new_game(seed, options)
    plies = 0
    while True:
        to_act = state.to_act()
        if not to_act:
            return plies
        seat = to_act[0] if len(to_act) == 1 else rng.choice(to_act)
        state, _ = state.apply(seat, rng.choice(state.legal_moves(seat)))
        plies += 1


def games_per_second(
    rules: Rules, seconds: float = 3.0, options: dict[str, object] | None = None
) -> tuple[float, float]:
    """(games/s, plies/s) over about `seconds` of random games."""
    start = time.perf_counter()
    games = plies = 0
    while time.perf_counter() - start < seconds:
        plies += random_game(rules, games, options)
        games += 1
    elapsed = time.perf_counter() - start
    return games / elapsed, plies / elapsed


def run(seconds: float = 3.0) -> list[str]:
    lines = []
    for name in games.names():
        per_second, plies = games_per_second(games.rules(name), seconds)
        lines.append(f"{name:<8} random games/s {per_second:10.1f}   plies/s {plies:10.0f}")
    return lines
