"""Bot levels' starting ratings, from the arena: written by `make bot-ratings`
(bench/bot_ratings.py); do not edit by hand. game -> `bot-<level>` -> (mu, sigma).

This file: `python -m bench.bot_ratings --games 40 --budget 0.25 --seed 1 --write`.
"""

BOT_SEEDS: dict[str, dict[str, tuple[float, float]]] = {
    "esoloe": {
        "bot-random": (2.613, 4.880),
        "bot-greedy": (30.062, 3.671),
        "bot-strong": (40.692, 3.891),
    },
    "zoxso": {
        "bot-random": (-0.599, 4.860),
        "bot-greedy": (28.547, 4.013),
        "bot-strong": (45.460, 4.443),
    },
    "solo": {
        "bot-random": (9.208, 3.816),
        "bot-greedy": (28.807, 3.119),
        "bot-strong": (35.338, 3.174),
    },
}
