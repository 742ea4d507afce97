"""A game as the service holds it between a read and a write: the stored record with the
engine's state and table (`Loaded`), one judged version (`Played`), what a write became
(`Written`), the hints a replica keeps (`Hints`), and the status stored with each entry."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from engines.contract import Event, State
from games.clock import Due, Table, TimeControl
from services.game.store import StoredGame
from wire.records import VersionStatus


@dataclass(frozen=True, slots=True)
class Loaded:
    """A game as read (or last written): its record, the engine's state and, for a timed game,
    its table (clocks, seats taken over)."""

    stored: StoredGame
    state: State
    table: Table | None = None

    @property
    def time_control(self) -> TimeControl:
        return self.stored.meta.clock

    @property
    def holders(self) -> list[str]:
        """Who holds each seat now (bots in the seats they took over)."""
        seats = self.stored.meta.seats
        return seats if self.table is None else self.table.holders(seats)

    @property
    def finished(self) -> bool:
        return self.state.finished or (self.table is not None and self.table.over)

    def due(self) -> Due | None:
        """What the platform must do to the game if nobody moves first, and when."""
        if self.table is None or self.finished:
            return None
        return self.table.due(self.time_control)


@dataclass(frozen=True, slots=True)
class Played:
    """One version judged and ready to be written: a seat's move, or what the platform did
    (a timeout, an abort: `table_event`)."""

    actor: int
    move: str
    state: State
    table: Table | None
    events: list[Event]
    status: VersionStatus
    time_ms: int
    table_event: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Written:
    """What became of a write: the store's outcome ("OK", "STALE", "DUPLICATE", "NOT_FOUND",
    "LATE", "EARLY"), the version it names, and for STALE the game as it is now."""

    outcome: str
    version: int
    current: Loaded | None = None


class Hints:
    """The last state this replica wrote or saw for each game (least recently used dropped).

    Only a hint: a move checked against it is still committed with a version check, so a hint
    that is behind costs a retry, never a wrong move. It lets a replica that serves consecutive
    moves of a game skip the read: one Redis round trip per move instead of two.
    """

    def __init__(self, size: int = 10_000) -> None:
        self.size = size
        self._games: OrderedDict[str, Loaded] = OrderedDict()

    def get(self, game_id: str) -> Loaded | None:
        loaded = self._games.get(game_id)
        if loaded is not None:
            self._games.move_to_end(game_id)
        return loaded

    def put(self, game_id: str, loaded: Loaded) -> None:
        self._games[game_id] = loaded
        self._games.move_to_end(game_id)
        if len(self._games) > self.size:
            self._games.popitem(last=False)

    def drop(self, game_id: str) -> None:
        self._games.pop(game_id, None)


def status_of(
    state: State, table: Table | None = None, tc: TimeControl | None = None
) -> VersionStatus:
    """The public status of a state (and its table) as stored with each stream entry."""
    result = state.result()
    engine = None if result is None else result.to_json()
    if table is None:
        return VersionStatus(list(state.public_to_act()), engine is not None, engine)
    final = table.result_json(engine)
    return VersionStatus(
        to_act=[] if final is not None else list(state.public_to_act()),
        finished=final is not None,
        result=final,
        # an untimed game that was stopped has a table, not a clock
        clock=table.clock_json(tc or TimeControl()) if tc is None or tc.kept else None,
        replaced={str(seat): bot for seat, bot in table.replaced.items()} or None,
    )
