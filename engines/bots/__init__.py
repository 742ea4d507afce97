"""Bots: how a seat chooses its move, from what that seat may see and nothing else.

Every bot implements `base.Bot`. The levels of a game are listed in `levels(game)`; each game's
module (`engines.bots.<game>`) defines its `greedy` and `strong` bots. Pure code, like the
engines: the bot worker (services/bots) and the arena (`engines.bots.arena`) both call them.
"""
