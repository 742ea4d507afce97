"""Watching a game: the view now (GetView), and every version as it comes (Watch), each cut to
the watcher's seat."""

from __future__ import annotations

from collections.abc import AsyncIterator

from google.protobuf.message import Message
from google.protobuf.timestamp_pb2 import Timestamp

from runtime import keys
from runtime.fanout import TooSlow
from runtime.game_log import Entry, entry_of
from runtime.observability import WATCHERS
from services.game.base import SENT_KEPT, GameBase
from services.game.seats import check_shown, resolve_seat
from services.game.state import Loaded
from tabletop.common.v1 import common_pb2
from wire.clock import table_event
from wire.errors import ApiError
from wire.metadata import Caller
from wire.records import GameMeta
from wire.status import status_message


class Watching(GameBase):
    """GetView and Watch."""

    async def view(self, request: common_pb2.GetViewRequest, caller: Caller) -> Message:
        """GetView: what the caller's seat (or a spectator) sees now."""
        loaded = await self._load(request.game_id)
        check_shown(loaded.stored.meta, caller.player)
        seat = (
            None
            if request.public
            else self._seat(loaded, caller.player, request, spectator_ok=True)
        )
        return self.adapter.view_response(
            status=self._status(loaded),
            seat=seat,
            view=self.adapter.view(loaded.state.view(seat)),
        )

    async def watch(
        self, request: common_pb2.WatchRequest, caller: Caller
    ) -> AsyncIterator[Message]:
        """Watch: every version from `from_version` on, then live, until the game ends."""
        loaded = await self._load(request.game_id)
        check_shown(loaded.stored.meta, caller.player)
        own = (
            None
            if request.public
            else resolve_seat(
                loaded.stored.meta.seats,
                caller.player,
                request.seat if request.HasField("seat") else None,
                spectator_ok=True,
            )
        )
        last = loaded.stored.version
        if not 0 <= request.from_version <= last + 1:
            raise ApiError(
                "INVALID_ARGUMENT",
                f"from_version must be 0..{last + 1}: the game is at version {last}",
            )
        return self._follow(loaded, request.from_version, own)

    async def _follow(
        self, loaded: Loaded, next_version: int, own: int | None
    ) -> AsyncIterator[Message]:
        """The game's entries from `next_version` on, through this process's fan-out hub (no
        Redis connection of its own); ends after the game's last move. `own`: the seat the
        watcher was seated at (None: a spectator), seen as that seat at the versions it holds
        it, as a spectator while a bot plays it (after a timeout, until it is taken back)."""
        game_id = loaded.stored.game_id
        if loaded.finished and next_version > loaded.stored.version:
            return
        after = keys.event_entry_id(next_version - 1) if next_version > 0 else "0-0"
        watcher = self.hub.watch(keys.game_events(game_id), after)
        watchers = WATCHERS.labels(self.game)
        watchers.inc()
        try:
            while True:
                try:
                    entries = await watcher.next()
                except TooSlow as slow:
                    resume = keys.version_of_entry_id(slow.after) + 1 if slow.after != "0-0" else 0
                    raise ApiError(
                        "TOO_SLOW",
                        f"this stream was read too slowly and was ended; watch again from "
                        f"version {resume}",
                        next_version=str(resume),
                    ) from None
                for entry_id, fields in entries:
                    entry = entry_of(entry_id, fields)
                    taken = entry.status.taken_over
                    seat = own if own is None or str(own) not in taken else None
                    yield self._watch_message(game_id, loaded.stored.meta, entry, seat)
                    if entry.status.finished:
                        return
        finally:
            watcher.close()
            watchers.dec()

    def _watch_message(
        self, game_id: str, meta: GameMeta, entry: Entry, seat: int | None
    ) -> Message:
        """A version as `seat` (None: a spectator) sees it; built once for all the watchers of
        the same seat here (messages are not changed once built)."""
        key = (game_id, entry.version, seat)
        message = self._sent.get(key)
        if message is None:
            message = self._sent[key] = self._build_watch_message(game_id, meta, entry, seat)
            if len(self._sent) > SENT_KEPT:
                self._sent.popitem(last=False)
        return message

    def _build_watch_message(
        self, game_id: str, meta: GameMeta, entry: Entry, seat: int | None
    ) -> Message:
        time = Timestamp()
        time.FromMilliseconds(entry.time_ms)
        return self.adapter.watch_response(
            envelope=common_pb2.EventEnvelope(
                game_id=game_id,
                version=entry.version,
                actor=entry.actor if entry.actor >= 0 else None,  # unset at creation, abort
                move=entry.move,
                time=time,
                table_event=None if entry.table_event is None else table_event(entry.table_event),
            ),
            status=status_message(game_id, entry.version, meta, entry.status),
            events=self._events(entry.events, seat),
        )
