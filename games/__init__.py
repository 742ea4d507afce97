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

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from games.clock import OUTCOMES, UNTIMED, TimeControl

if TYPE_CHECKING:
    from engines.bots.base import Bot
    from engines.contract import Rules
    from games.adapter import Adapter

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


@dataclass(frozen=True)
class Game:
    """One game, as the platform knows it."""

    name: str
    """The game id, e.g. "esoloe": API, Redis keys, metrics, game ids (`esoloe-<hex>`)."""
    title: str
    """How people write it, e.g. "e-SOLO-e"."""
    package: str
    """The Python package of its parts, e.g. "games.esoloe"."""
    proto_package: str
    """Its protobuf package, e.g. "tabletop.esoloe.v1" (module `<proto_package>.<name>_pb2`)."""
    service: str
    """Its gRPC service in that package, e.g. "EsoloeService"."""
    port: int
    """Its game service's default port."""
    out_of_turn: bool = False
    """Seats may act out of turn (Solo's jump-ins): a seat's chance to act can be private, so a
    player asks LegalMoves at every version, and bots leave people a moment to act first."""
    jump_in_window_ms: int = 0
    """In a game played out of turn, at a table with a person: how long bots let pass after each
    move before they act (between 1 and 1.25 times it), unless the table was made with another
    (its options' `jump_in_window_ms`, 0..games.clock.MAX_JUMP_IN_WINDOW_MS; 0: at once)."""
    option_limits: tuple[tuple[str, int], ...] = ()
    """Upper bounds the platform puts on numeric options, beyond what the rules allow, so that
    every game stays finite and sane (e.g. Solo's start_points)."""
    unattended_limits: tuple[tuple[str, int], ...] = ()
    """Tighter bounds for a game with no person at the table (bots only): its length is paid
    for by the platform, and nobody is there to stop it."""
    time_control: TimeControl = UNTIMED
    """The time control of a game whose creator asks for none (games/clock.py)."""
    timeouts: tuple[str, ...] = OUTCOMES
    """What a timeout may do in this game: "forfeit" and/or "bot"."""
    hidden: bool = False
    """Some of the game is hidden from some seats or from spectators (cards in hands, the inside
    of nests), during the game and after it: its archived record shows what a spectator saw,
    and cannot be replayed from it (the deal stays secret)."""

    def part(self, module: str) -> Any:
        """The game's module `module` (rules, bots, adapter, board), imported on first use."""
        return importlib.import_module(f"{self.package}.{module}")

    @property
    def rules(self) -> Rules:
        rules: Rules = self.part("rules").RULES
        return rules

    @property
    def adapter(self) -> Adapter:
        adapter: Adapter = self.part("adapter").ADAPTER
        return adapter

    def prepare_bots(self) -> None:
        """Load what its bots read (e-SOLO-e's solved record: about half a second), so that no bot's
        first decision in a process pays for it: a bots module's `prepare()`, if it has one.
        Done once per process; later calls return at once."""
        prepare: Callable[[], None] | None = getattr(self.part("bots"), "prepare", None)
        if prepare is not None:
            prepare()

    def levels(self) -> Mapping[str, Callable[[], Bot]]:
        """Its bot levels, weakest first (`LEVELS` of its bots module): random, greedy, strong,
        expert."""
        levels: Mapping[str, Callable[[], Bot]] = self.part("bots").LEVELS
        return levels


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
