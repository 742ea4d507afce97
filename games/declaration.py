"""A game's declaration: plain data naming its parts, which are imported on first use (what
each part is: games/__init__.py). Each game's `__init__.py` makes one; `games.register` makes it
known."""

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
