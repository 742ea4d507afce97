"""Bot levels' starting ratings, from the arena: written by `make bot-ratings`
(bench/bot_ratings.py); do not edit by hand. game -> `bot-<level>` -> (mu, sigma);
SEEDED_BY: the command that rated each game.
"""

BOT_SEEDS: dict[str, dict[str, tuple[float, float]]] = {
    "esoloe": {
        "bot-random": (-2.871, 4.278),
        "bot-greedy": (21.099, 3.346),
        "bot-strong": (35.300, 3.041),
        "bot-expert": (46.087, 3.227),
    },
    "zoxso": {
        "bot-random": (-4.817, 4.409),
        "bot-greedy": (18.573, 3.490),
        "bot-strong": (38.568, 3.151),
        "bot-expert": (45.640, 3.350),
    },
    "solo": {
        "bot-random": (6.843, 3.660),
        "bot-greedy": (19.801, 2.837),
        "bot-strong": (35.029, 2.787),
        "bot-expert": (39.120, 2.742),
    },
}

SEEDED_BY: dict[str, str] = {
    "esoloe": "python -m bench.bot_ratings --game esoloe --games 40 --budget 1 --seed 1 --write",
    "zoxso": "python -m bench.bot_ratings --games 40 --budget 0.25 --seed 1 --write",
    "solo": "python -m bench.bot_ratings --games 40 --budget 0.25 --seed 1 --write",
}
