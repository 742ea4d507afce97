"""Bot levels' starting ratings, from the arena: written by `make bot-ratings`
(bench/bot_ratings.py); do not edit by hand. game -> `bot-<level>` -> (mu, sigma).

This file: `python -m bench.bot_ratings --games 40 --budget 0.25 --seed 1 --write`.
"""

BOT_SEEDS: dict[str, dict[str, tuple[float, float]]] = {
    "esoloe": {
        "bot-random": (-1.791, 4.340),
        "bot-greedy": (26.660, 2.937),
        "bot-strong": (37.775, 2.774),
        "bot-expert": (35.376, 2.860),
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
