"""The ground every call of a game's API stands on (services/game/core.py composes them): reading
a game, and writing a version of it with a version check."""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Sequence
from typing import TypeAlias

from google.protobuf.message import Message

from engines.contract import Event, visible_events
from games.adapter import Adapter
from games.clock import Table
from games.replay import Position, Step, step
from runtime import bot_turns, keys
from runtime.fanout import StreamHub
from runtime.game_log import finished_record
from runtime.observability import GAMES_FINISHED, MOVES
from runtime.redis import redis_failed
from services.game.limits import Limits
from services.game.players import PlayerStore
from services.game.seats import resolve_seat
from services.game.state import Hints, Loaded, Played, Written, status_of
from services.game.store import Deadline, Follow, GameStore, StoredGame
from tabletop.common.v1 import common_pb2
from wire.errors import ApiError
from wire.players import is_bot
from wire.status import status_message

log = logging.getLogger("tabletop.game")

COMMIT_ATTEMPTS = 3
SENT_KEPT = 4096
"""Watch messages kept built, for the other watchers of the same version and seat."""

SeatRequest: TypeAlias = (
    common_pb2.GetViewRequest
    | common_pb2.LegalMovesRequest
    | common_pb2.PlayRequest
    | common_pb2.ResignRequest
    | common_pb2.PassJumpInRequest
)
"""A request that may name the caller's seat (`seat`)."""


class GameBase:
    """What every part of a game's API shares: the stores, reading a game, and writing one
    judged version through the versioned commit (then the hints, the deadline index, the bots
    and the players whose turn it is learn of it)."""

    def __init__(
        self, adapter: Adapter, store: GameStore, hub: StreamHub, limits: Limits | None = None
    ) -> None:
        self.adapter = adapter
        self.game = adapter.game
        self.rules = adapter.rules
        self.store = store
        self.players = PlayerStore(
            store.redis,
            ttl_seconds=store.ttl_seconds,
            group=None if store.cluster else store.group,
        )
        """What the games say of players: names, live-game limits, the deal of the day."""
        self.hub = hub
        """Delivers new entries of the games this process's watchers follow."""
        self.limits = limits or Limits()
        self.hints = Hints()
        self._sent: OrderedDict[tuple[str, int, int | None], Message] = OrderedDict()
        """The Watch messages built last, by game, version and seat."""
        self._accepted = MOVES.labels(self.game, "accepted")
        """The count of the moves accepted (its prometheus labels looked up once)."""
        self._unindexed: set[str] = set()
        """Games whose deadline could not be indexed (Redis away): the next sweep retries."""

    # -- reading ---------------------------------------------------------------------------

    def _check_game_id(self, game_id: str) -> None:
        if not keys.GAME_ID_PATTERN.fullmatch(game_id):
            raise ApiError(
                "INVALID_ARGUMENT",
                f"game id {game_id[:80]!r} is malformed; ids look like "
                f"'{self.game}-' followed by 20 hex digits",
            )
        kind = game_id.split("-", 1)[0]
        if kind != self.game:
            raise ApiError(
                "GAME_NOT_FOUND",
                f"game {game_id} is not a {self.game} game; ask the {kind} service",
            )

    async def _load(self, game_id: str, request_id: str = "") -> Loaded:
        self._check_game_id(game_id)
        stored = await self.store.load(game_id, request_id)
        if stored is None:
            raise ApiError("GAME_NOT_FOUND", f"no game with id {game_id}")
        return self._loaded(stored)

    def _loaded(self, stored: StoredGame) -> Loaded:
        table = None if stored.table is None else Table.from_json(stored.table)
        return Loaded(stored, self.rules.deserialize(stored.snapshot), table)

    def _status(self, loaded: Loaded) -> common_pb2.GameStatus:
        return status_message(
            loaded.stored.game_id,
            loaded.stored.version,
            loaded.stored.meta,
            status_of(loaded.state, loaded.table, loaded.time_control),
        )

    def _seat(
        self, loaded: Loaded, player: str, request: SeatRequest, *, spectator_ok: bool
    ) -> int | None:
        """The caller's seat in the game (see resolve_seat)."""
        return resolve_seat(
            loaded.holders,
            player,
            request.seat if request.HasField("seat") else None,
            spectator_ok=spectator_ok,
            seated=loaded.stored.meta.seats,
        )

    def _events(self, events: Sequence[Event], seat: int | None) -> list[Message]:
        return [self.adapter.event(e) for e in visible_events(events, seat)]

    def _jobs(self, loaded: Loaded, window_ms: int | None = None) -> list[bot_turns.Job]:
        """A bot-turn job for every bot seat that may act now, as public information says (in
        Solo: every bot seat, whatever cards it holds; see bot_turns.jobs); with `window_ms`,
        jobs with that jump-in window instead of the table's."""
        if loaded.finished:
            return []
        return bot_turns.jobs(
            loaded.stored.game_id,
            loaded.stored.version,
            loaded.stored.meta,
            loaded.state.public_to_act(),
            loaded.holders,
            window_ms,
        )

    async def _wake_bots(self, loaded: Loaded, window_ms: int | None = None) -> None:
        """Queue the bot-turn jobs of the game as it is (`_jobs`).

        Best effort: the move stands whatever happens here. Should Redis fail now (or this
        process stop), a client's retry (same request id) or the bot workers' sweep of the live
        games queues the job again; a duplicate job is harmless (a worker plays with
        expected_version, so only one of two jobs for a version can move)."""
        jobs = self._jobs(loaded, window_ms)
        if jobs:
            try:
                await bot_turns.add(self.store.redis, jobs)
            except ApiError:
                game_id, version = loaded.stored.game_id, loaded.stored.version
                log.warning("bots not woken", extra={"game_id": game_id, "version": version})

    def _turn_told(
        self, before: Loaded, after: Loaded, actor: int
    ) -> tuple[list[str], dict[str, str]]:
        """Each person whose seat is to act now, and was not before, to be told it is their
        turn (a notification, keys.player_notifications; the client at that game leaves it
        out), and the notification's fields. Not the one who just moved (hot seat, a jump-in)."""
        if after.finished:
            return [], {}
        was = set(before.state.public_to_act())
        holders = after.holders
        mover = holders[actor] if 0 <= actor < len(holders) else ""
        people = [
            holders[seat] for seat in after.state.public_to_act()
            if seat not in was and not is_bot(holders[seat]) and holders[seat] != mover
        ]  # fmt: skip
        if not people:
            return [], {}
        game_id = after.stored.game_id
        fields = {
            "game": self.game, "game_id": game_id,
            "message": f"your turn in {self.game} game {game_id}",
        }  # fmt: skip
        return people, fields

    async def _tell_turn(self, before: Loaded, after: Loaded, actor: int) -> None:
        """Tell the people whose turn it is now (`_turn_told`): one write, and only then. Best
        effort: the move stands whatever happens here."""
        people, fields = self._turn_told(before, after, actor)
        if not people:
            return
        try:
            await self.store.notifier.send(people, "your_turn", **fields)
        except Exception as error:
            if not redis_failed(error):
                raise
            log.warning("a turn was not told", extra={"game_id": after.stored.game_id})

    def _played(self, loaded: Loaded, played: Step) -> Played:
        """A step (games.replay: the same as every replay of the log takes) on the game."""
        tc = loaded.time_control
        after = step(Position(loaded.state, loaded.table), tc, played)
        return Played(
            actor=played.actor,
            move=played.move,
            state=after.state,
            table=after.table,
            events=after.events,
            status=status_of(after.state, after.table, tc),
            time_ms=played.time_ms,
            table_event=after.table_event,
        )

    async def _write(
        self,
        loaded: Loaded,
        played: Played,
        request_id: str,
        *,
        not_after: int | None = None,
        not_before: int | None = None,
    ) -> Written:
        """Commit `played` if the game is still the version it was judged on (and in time):
        then the hints hold the new version, the deadline index and the bots learn of it. For
        STALE the answer holds the game as it is now (which the hints then hold too)."""
        stored = loaded.stored
        game_id = stored.game_id
        table = None if played.table is None else played.table.to_json()
        deadline = None
        finished = None
        if played.status.finished:  # the finished games' stream's record of it
            finished = finished_record(stored.meta, played.status)
        if loaded.table is not None:  # indexed with the move where the store can
            due = Loaded(stored, played.state, played.table).due()
            deadline = Deadline(None if due is None else due.at_ms)
        tag = self.store.new_tag()
        now = Loaded(stored.moved_to(stored.version + 1, table, tag), played.state, played.table)
        follow = None
        if not self.store.cluster:  # set going with the commit, in its round trip
            jobs = self._jobs(now)
            told, fields = self._turn_told(loaded, now, played.actor)
            if jobs or told:
                follow = Follow(jobs, told, fields)
        commit = await self.store.commit(
            game_id,
            expected_version=stored.version,
            expected_tag=stored.tag,
            snapshot=played.state.serialize(),
            request_id=request_id,
            actor=played.actor,
            move=played.move,
            events=[e.to_json() for e in played.events],
            status=played.status,
            table=table,
            time_ms=played.time_ms,
            table_event=played.table_event,
            not_after=not_after,
            not_before=not_before,
            finished=finished,
            deadline=deadline,
            tag=tag,
            follow=follow,
        )
        if commit.outcome == "OK":
            self.hints.put(game_id, now)
            if commit.indexed:
                self._unindexed.discard(game_id)
            elif loaded.table is not None:
                await self._index(now)
            if not commit.followed:
                await self._wake_bots(now)
                await self._tell_turn(loaded, now, played.actor)
            if played.status.finished:
                await self.store.closed(game_id, [*stored.meta.seats, stored.meta.sponsor_id])
                GAMES_FINISHED.labels(self.game).inc()
                log.info(
                    "game finished",
                    extra={
                        "game_id": game_id,
                        "version": commit.version,
                        **(played.status.result or {}),
                    },
                )
            await self.store.confirm(commit.held)
            return Written(commit.outcome, commit.version)
        if commit.outcome == "STALE" and commit.current is not None:
            current = self._loaded(commit.current)
            self.hints.put(game_id, current)
            return Written(commit.outcome, commit.version, current)
        if commit.outcome == "NOT_FOUND":
            self.hints.drop(game_id)
        return Written(commit.outcome, commit.version)

    async def _index(self, loaded: Loaded) -> None:
        """Tell the sweeps when the game needs the platform next (services/game/deadlines.py).
        Best effort: should Redis fail now, the next sweep of this process tries again; what a
        stop lost, the repair finds."""
        due = loaded.due()
        game_id = loaded.stored.game_id
        try:
            await self.store.index_deadline(
                game_id, loaded.stored.version, None if due is None else due.at_ms
            )
        except ApiError:
            log.warning("deadline not indexed", extra={"game_id": game_id})
            if len(self._unindexed) < 100_000:
                self._unindexed.add(game_id)
        else:
            self._unindexed.discard(game_id)

    def unindexed(self) -> list[str]:
        """The games whose deadline this process could not index (taken: the sweep retries)."""
        found = list(self._unindexed)
        self._unindexed.clear()
        return found
