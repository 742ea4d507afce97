"""Solace speed: random games per second, the solver's time per deal, the bot's per decision."""

from __future__ import annotations

import random
import time

from games.solace.expectimax import Search, SolaceBot
from games.solace.rules import RULES
from games.solace.solver import solve


def random_game(seed: int) -> int:
    """One game of random legal moves, never `stop`; returns the plies. The engine solves the
    deal once when the game ends (for its best score), so that cost is included."""
    rng = random.Random(seed)
    state = RULES.new_game(seed)
    plies = 0
    while state.to_act():
        state, _ = state.apply(0, rng.choice(state.legal_moves(0)[:-1]))
        plies += 1
    return plies


def games_per_second(seconds: float) -> tuple[float, float]:
    start = time.perf_counter()
    games = plies = 0
    while time.perf_counter() - start < seconds:
        plies += random_game(games)
        games += 1
    elapsed = time.perf_counter() - start
    return games / elapsed, plies / elapsed


def solver_seconds(deals: int) -> tuple[float, float]:
    """(mean, worst) seconds to solve a fresh deal, over `deals` seeded deals."""
    times = []
    for seed in range(deals):
        state = RULES.new_game(seed)
        start = time.perf_counter()
        solve(state)
        times.append(time.perf_counter() - start)
    return sum(times) / len(times), max(times)


def bot_seconds(deals: int) -> tuple[float, float, float]:
    """(first decision with cold tables, mean decision, worst decision) seconds of the Solace
    bot playing `deals` seeded deals with one search, as a bot worker's process does."""
    bot = SolaceBot(Search(no_monochrome=False))
    times = []
    for seed in range(deals):
        state = RULES.new_game(seed)
        while state.to_act():
            start = time.perf_counter()
            move = bot.choose(state)
            times.append(time.perf_counter() - start)
            state, _ = state.apply(0, move)
    return times[0], sum(times) / len(times), max(times)


def run(seconds: float = 3.0, deals: int = 500) -> list[str]:
    games, plies = games_per_second(seconds)
    mean, worst = solver_seconds(deals)
    cold, bot_mean, bot_worst = bot_seconds(deals)
    return [
        f"solace   random games/s {games:10.1f}   plies/s {plies:10.0f}",
        f"solace   solver per fresh deal: mean {1000 * mean:.2f} ms, worst {1000 * worst:.1f} ms"
        f" ({deals} deals)",
        f"solace   bot decision: first (cold tables) {1000 * cold:.0f} ms, mean"
        f" {1000 * bot_mean:.2f} ms, worst {1000 * bot_worst:.0f} ms ({deals} deals)",
    ]


if __name__ == "__main__":
    for line in run():
        print(line)
