"""How good can Solace get? `python -m games.solace.study [--deals N] [--seed S]`.

Deals N seeded games (seeds S, S+1, ..., S+N-1) and, for each, finds the perfect-information
maximum (`solace_solver`: every piece known) and plays it with the bot (`solace_bot`: visible
pieces only). Prints the distribution of the maximum over 0..10, the highest maximum any deal
allowed, and the bot's mean score next to the perfect-information mean, with how often the bot
reached its deal's maximum. The bot's search also gives, for each deal, the best expected score
from its start for a player who cannot see inside black pieces: its mean over the deals is the
most any such player (bot or person) can expect, the bot's own expectation.

The computation (`run_study`) is pure; only `main` prints.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from functools import partial

from games.solace.expectimax import SolaceBot, expected_score
from games.solace.rules import RULES
from games.solace.solver import solve

DEFAULT_DEALS = 10_000
MAX_SCORE = 10


@dataclass(frozen=True, slots=True)
class DealOutcome:
    seed: int
    best: int
    """The perfect-information maximum of the deal."""
    bot: int
    """The bot's score on the deal."""
    expected: float
    """The best expected score from the deal's start for a player who sees what the player
    sees (the bot plays to it)."""


@dataclass(slots=True)
class Study:
    outcomes: list[DealOutcome] = field(default_factory=list)

    @property
    def deals(self) -> int:
        return len(self.outcomes)

    def best_distribution(self) -> Counter[int]:
        return Counter(o.best for o in self.outcomes)

    def bot_distribution(self) -> Counter[int]:
        return Counter(o.bot for o in self.outcomes)

    @property
    def highest(self) -> int:
        return max(o.best for o in self.outcomes)

    @property
    def best_mean(self) -> float:
        return sum(o.best for o in self.outcomes) / self.deals

    @property
    def bot_mean(self) -> float:
        return sum(o.bot for o in self.outcomes) / self.deals

    @property
    def expected_mean(self) -> float:
        return sum(o.expected for o in self.outcomes) / self.deals

    @property
    def bot_reached_best(self) -> float:
        """The share of deals where the bot scored its deal's maximum."""
        return sum(o.bot == o.best for o in self.outcomes) / self.deals

    def lines(self) -> list[str]:
        n = self.deals
        best, bot = self.best_distribution(), self.bot_distribution()
        out = [
            f"Solace study: {n} deals",
            "",
            "score  perfect-information max      bot score",
        ]
        for score in range(MAX_SCORE + 1):
            out.append(
                f"{score:>5}  {best[score]:>8} {100 * best[score] / n:6.2f}%"
                f"      {bot[score]:>8} {100 * bot[score] / n:6.2f}%"
            )
        out += [
            "",
            f"highest score any deal allows: {self.highest}",
            f"perfect-information mean:      {self.best_mean:.3f}",
            f"bot mean (visible pieces only): {self.bot_mean:.3f}",
            f"best expected mean without seeing inside black pieces: {self.expected_mean:.3f}",
            f"bot reached its deal's maximum: {100 * self.bot_reached_best:.2f}% of deals",
        ]
        return out


def play_deal(seed: int, no_monochrome: bool = False) -> DealOutcome:
    """Solve deal `seed` and play it with the bot."""
    start = RULES.new_game(seed, {"no_monochrome": no_monochrome})
    best = solve(start).best_score
    bot = SolaceBot()
    state = start
    while state.to_act():
        state, _ = state.apply(0, bot.choose(state))
    assert state.best_score == best  # the engine keeps the same maximum in the finished game
    return DealOutcome(seed, best, state.score, expected_score(start))


def run_study(
    deals: int = DEFAULT_DEALS,
    seed: int = 0,
    no_monochrome: bool = False,
    jobs: int = 1,
) -> Study:
    """Study deals seed .. seed + deals - 1; `jobs` > 1 plays them in that many processes (the
    outcomes are the same, in the same order)."""
    seeds = range(seed, seed + deals)
    play = partial(play_deal, no_monochrome=no_monochrome)
    if jobs <= 1:
        return Study([play(s) for s in seeds])
    with ProcessPoolExecutor(jobs) as pool:
        return Study(list(pool.map(play, seeds, chunksize=16)))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m games.solace.study", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--deals", type=int, default=DEFAULT_DEALS, help="deals to study")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first deal")
    parser.add_argument("--no-monochrome", action="store_true", help="deal with no_monochrome")
    parser.add_argument("--jobs", type=int, default=1, help="processes to play deals in")
    args = parser.parse_args(argv)
    if args.deals < 1:
        parser.error("--deals must be at least 1")
    began = time.perf_counter()
    study = run_study(args.deals, args.seed, args.no_monochrome, args.jobs)
    for line in study.lines():
        print(line)
    print(f"({time.perf_counter() - began:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
