"""The games the platform knows: each is one package here, declared once, registered once.

A game's package holds everything about it, a module per layer:

    rules.py     the engine (pure: engines.contract's Rules and State; no I/O)      RULES
    bots.py      its bot levels (pure): random, greedy, strong, expert              LEVELS
    adapter.py   its protobuf API <-> the engine's values                           ADAPTER
    board.py     how the terminal client draws it and tells its events             BOARD

and its `__init__.py` declares it as a `Game`: plain data, so that reading the declarations
(what the gateway, the wire contract and every process do) loads no engine. The parts are
imported on first use. Its protobuf API is `proto/tabletop/<name>/v1/<name>.proto`, service
`<Title>Service` (see `Game.proto` and `Game.service`).

Adding a game: its package, its proto, and one `register(...)` line (below, or from anywhere
before the platform starts, as the tests do with a fifth game).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from games.declaration import Game as Game  # games.Game, as before

if TYPE_CHECKING:
    from engines.contract import Rules

LEVELS: tuple[str, ...] = ("random", "greedy", "strong", "expert")
"""Bot levels, weakest first. Each must beat the one before it (`python -m games.arena`), but
`expert`: the best the platform has, for players who want it (the strong bot given five times
the time, unless the game has better: e-SOLO-e's plays perfectly where it is solved)."""

DEFAULT_BUDGETS: Mapping[str, float] = {
    "random": 0.0,
    "greedy": 0.0,
    "strong": 1.0,
    "expert": 5.0,
}
"""Seconds a level may think about one move by default (a soft limit: a bot stops searching at
the first check after it)."""


_GAMES: dict[str, Game] = {}


def register(game: Game) -> Game:
    """Make `game` known to the platform (again: replaces the one of that name)."""
    _GAMES[game.name] = game
    return game


def unregister(name: str) -> None:
    _GAMES.pop(name, None)


def names() -> list[str]:
    """Every registered game id, in the order registered (the built-in ones by port)."""
    return list(_GAMES)


def get(name: str) -> Game:
    """The game `name`; KeyError naming the known games for an unknown one."""
    try:
        return _GAMES[name]
    except KeyError:
        raise KeyError(f"unknown game {name!r}; games are: {', '.join(_GAMES)}") from None


def rules(name: str) -> Rules:
    """The rules (engine) of game `name`."""
    return get(name).rules


def _builtin() -> None:
    from games import esoloe, solace, solo, zoxso

    for package in (esoloe, solo, solace, zoxso):
        register(package.GAME)


_builtin()
