"""Bots: how a seat chooses its move, from what that seat may see and nothing else.

Every bot implements `base.Bot`; `search` is the iterative-deepening search the e-SOLO-e and
ZoxSo strong bots share. Each game's levels live with the game (`games/<game>/bots.py`), and the
arena (`python -m games.arena`) plays them against each other. Pure code, like the engines.
"""
