"""The bot levels' starting ratings, from the arena: `python -m bench.bot_ratings [--game G]...
[--games N] [--budget SECONDS] [--seed S] [--jobs J] [--write]` (`make bot-ratings`).

For each game with ratings (two seats: e-SOLO-e, ZoxSo, Solo with 2 players) it plays every pair
of levels in the arena (games/arena.py: engines only, each deal from both sides), each level
thinking as long as on the platform relative to the others (`--budget` is strong's; expert
thinks five times as long, random and greedy do not search: games.DEFAULT_BUDGETS), then rates the
games, shuffled, with the platform's rating model (services/ratings/model.py), every level
starting as a new player. It prints each level's rating and, with --write, writes them to
services/ratings/bot_seeds.py, where the ratings consumer starts each level from them: a level
then moves with its games against people (docs/ratings.md). `--game` rates only the games it
names (repeatable); the file keeps the others' seeds and the command that made them.
"""

from __future__ import annotations

import argparse
import itertools
import random
import sys
from collections.abc import Sequence
from pathlib import Path

from games import DEFAULT_BUDGETS, LEVELS
from games.arena import run_match
from services.ratings.bot_seeds import BOT_SEEDS, SEEDED_BY
from services.ratings.model import Rating, update

GAMES = ("esoloe", "zoxso", "solo")
SEEDS = Path(__file__).resolve().parent.parent / "services" / "ratings" / "bot_seeds.py"


def places(values: Sequence[tuple[int, float]]) -> list[int]:
    """Each seat's place (0 first) from an arena record's (side, 1/0.5/0) values."""
    return [0 if value >= max(v for _, v in values) else 1 for _, value in values]


def budgets_for(strong: float) -> dict[str, float]:
    """Each level's seconds a decision when strong has `strong`, in the platform's proportions
    (games.DEFAULT_BUDGETS: random and greedy do not search, expert has five times strong's)."""
    scale = strong / DEFAULT_BUDGETS["strong"]
    return {level: seconds * scale for level, seconds in DEFAULT_BUDGETS.items()}


def seed_ratings(game: str, games: int, budget: float, seed: int, jobs: int) -> dict[str, Rating]:
    """Every level's rating after the arena's games of every pair, rated in a shuffled order."""
    played: list[tuple[list[str], list[int]]] = []
    budgets = budgets_for(budget)
    for pair in itertools.combinations(LEVELS, 2):
        report = run_match(game, pair, games, seed=seed, budgets=budgets, jobs=jobs)
        for record in report.records:
            seated = [pair[side] for side, _ in record.values]
            played.append((seated, places(record.values)))
        print(f"  {game}: {pair[0]} vs {pair[1]}: {games} games", file=sys.stderr, flush=True)
    random.Random(seed).shuffle(played)
    ratings = {level: Rating() for level in LEVELS}
    for seated, finished in played:
        after = update([ratings[level] for level in seated], finished)
        for level, (mu, sigma) in zip(seated, after, strict=True):
            ratings[level] = Rating(mu, sigma, ratings[level].games + 1)
    return ratings


def render(seeds: dict[str, dict[str, Rating]], commands: dict[str, str]) -> str:
    """services/ratings/bot_seeds.py for `seeds`, each game's made by its command in
    `commands`."""
    lines = [
        '"""Bot levels\' starting ratings, from the arena: written by `make bot-ratings`',
        "(bench/bot_ratings.py); do not edit by hand. game -> `bot-<level>` -> (mu, sigma);",
        "SEEDED_BY: the command that rated each game.",
        '"""',
        "",
        "BOT_SEEDS: dict[str, dict[str, tuple[float, float]]] = {",
    ]
    for game, ratings in seeds.items():
        lines.append(f'    "{game}": {{')
        for level, rating in ratings.items():
            lines.append(f'        "bot-{level}": ({rating.mu:.3f}, {rating.sigma:.3f}),')
        lines.append("    },")
    lines += ["}", "", "SEEDED_BY: dict[str, str] = {"]
    lines += [f'    "{game}": "{commands[game]}",' for game in seeds]
    lines.append("}")
    return "\n".join(lines) + "\n"


def kept(game: str) -> dict[str, Rating]:
    """`game`'s seeds as the file holds them (for a run that rates other games)."""
    return {
        level.removeprefix("bot-"): Rating(mu, sigma)
        for level, (mu, sigma) in BOT_SEEDS[game].items()
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.bot_ratings", description=__doc__)
    parser.add_argument(
        "--game", action="append", choices=GAMES, help="rate only this game (repeatable)"
    )
    parser.add_argument("--games", type=int, default=40, help="games per pair of levels")
    parser.add_argument(
        "--budget", type=float, default=0.25, help="strong's seconds per decision (expert 5x)"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=2, help="processes to play games in")
    parser.add_argument("--write", action="store_true", help=f"write {SEEDS.name}")
    args = parser.parse_args(argv)
    rated = list(dict.fromkeys(args.game or GAMES))  # a game named twice is rated once
    seeds = {
        game: seed_ratings(game, args.games, args.budget, args.seed, args.jobs) for game in rated
    }
    print(f"{'game':<8} {'level':<8} {'mu':>7} {'sigma':>6} {'shown':>6}  (arena games)")
    for game, ratings in seeds.items():
        for level, rating in ratings.items():
            print(
                f"{game:<8} {level:<8} {rating.mu:7.2f} {rating.sigma:6.2f} "
                f"{rating.display:6d}  ({rating.games})"
            )
    if args.write:
        only = "".join(f"--game {game} " for game in rated) if args.game else ""
        command = (
            f"python -m bench.bot_ratings {only}--games {args.games} --budget {args.budget:g} "
            f"--seed {args.seed} --write"
        )
        every = {game: seeds[game] if game in seeds else kept(game) for game in GAMES}
        commands = {game: command if game in seeds else SEEDED_BY[game] for game in GAMES}
        SEEDS.write_text(render(every, commands))
        print(f"written: {SEEDS}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
