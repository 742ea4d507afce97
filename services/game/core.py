"""A game, played: the game service's logic, free of any transport.

`GameCore` answers every call of a game's API (CreateGame, GetView, LegalMoves, Play, Resign,
Watch) given the request and the `Caller`; the gRPC servicer and the relay links both call it,
and neither it nor they fake the other's context. It loads the game from Redis, asks the engine,
commits the result with a version check, and builds the answer. Everything game-specific sits in
the engine (rules) and in the game's adapter (protobuf <-> engine values). The authoritative state
is in Redis: any replica serves any game, two replicas can serve one game interleaved, and
killing one loses nothing (a replica only keeps version-checked hints, see `Hints`).

The caller is who the gateway says it is; the core maps the player to its seat, and cuts every
view and event to that seat.
"""

from __future__ import annotations

import logging
import random
import secrets
from collections import OrderedDict
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from google.protobuf.message import Message
from google.protobuf.timestamp_pb2 import Timestamp

import games
from engines.contract import Event, GameError, State, visible_events
from games.adapter import Adapter
from runtime import bot_turns, keys
from runtime.fanout import StreamHub, TooSlow
from runtime.game_log import Entry, entry_of
from runtime.observability import GAMES_CREATED, GAMES_FINISHED, MOVES, WATCHERS
from services.game.limits import Limits, check_load, check_options, load_of
from services.game.store import GameStore, StoredGame
from tabletop.common.v1 import common_pb2
from wire.errors import ApiError
from wire.metadata import Caller
from wire.players import PLAYER_ID_PATTERN, is_bot, level_of
from wire.status import status_message

log = logging.getLogger("tabletop.game")

MAX_MOVE_CHARS = 200
MAX_REQUEST_ID_CHARS = 64
COMMIT_ATTEMPTS = 3
SENT_KEPT = 4096
"""Watch messages kept built, for the other watchers of the same version and seat."""


@dataclass(frozen=True, slots=True)
class Loaded:
    stored: StoredGame
    state: State


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


def status_of(state: State) -> dict[str, Any]:
    """The public status of a state as stored with each stream entry."""
    result = state.result()
    return {
        "to_act": list(state.public_to_act()),
        "finished": result is not None,
        "result": None if result is None else result.to_json(),
    }


def resolve_seat(
    seats: Sequence[str], player: str, requested: int | None, *, spectator_ok: bool
) -> int | None:
    """The caller's seat, or None for a spectator (only where `spectator_ok`)."""
    mine = [i for i, holder in enumerate(seats) if holder == player and player]
    if requested is not None:
        if not 0 <= requested < len(seats):
            raise ApiError(
                "INVALID_ARGUMENT",
                f"seat {requested} does not exist; seats are 0..{len(seats) - 1}",
            )
        if requested not in mine:
            held = f"you hold seat {mine[0]}" if len(mine) == 1 else "you hold no seat here"
            raise ApiError("NOT_YOUR_SEAT", f"seat {requested} is not yours; {held}")
        return requested
    if not mine:
        if spectator_ok:
            return None
        raise ApiError(
            "NOT_YOUR_SEAT",
            "you hold no seat in this game; spectators may only GetView and Watch",
        )
    if len(mine) > 1:
        raise ApiError(
            "INVALID_ARGUMENT",
            f"you hold seats {', '.join(map(str, mine))}: say which one with `seat`",
        )
    return mine[0]


def check_players(players: Sequence[str], caller: str) -> None:
    """Who may be seated by whom. A player (a call through the gateway) may only create a
    table they hold entirely (hot seat): games with other people come from matchmaking, games
    with bots from PlayAgainstBots, so nobody is ever seated without asking, and nobody but
    the platform seats bots. The platform's own components (lobby, matchmaker: calls with no
    player) seat anyone; a bot seat must name a real bot level."""
    for player in players:
        if not PLAYER_ID_PATTERN.fullmatch(player):
            raise ApiError(
                "INVALID_ARGUMENT",
                f"player id {player[:80]!r} is not valid; player ids are 1..64 "
                "printable ASCII characters without spaces",
            )
        if is_bot(player) and level_of(player) not in games.LEVELS:
            raise ApiError(
                "INVALID_ARGUMENT",
                f"{player[:80]!r} is not a bot seat: bot ids are bot-<level>-<hex> with a level "
                f"among {', '.join(games.LEVELS)}",
            )
    if caller and any(player != caller for player in players):
        raise ApiError(
            "NOT_YOUR_SEAT",
            "a player may only create a table whose every seat is their own (hot seat); "
            "play others with LobbyService.FindMatch and bots with LobbyService.PlayAgainstBots",
        )


def new_game_id(game: str) -> str:
    return f"{game}-{secrets.token_hex(10)}"


class GameCore:
    """Every call of one game's API, on the games stored in Redis."""

    def __init__(
        self, adapter: Adapter, store: GameStore, hub: StreamHub, limits: Limits | None = None
    ) -> None:
        self.adapter = adapter
        self.game = adapter.game
        self.rules = adapter.rules
        self.store = store
        self.hub = hub
        """Delivers new entries of the games this process's watchers follow."""
        self.limits = limits or Limits()
        self.hints = Hints()
        self._sent: OrderedDict[tuple[str, int, int | None], Message] = OrderedDict()
        """The Watch messages built last, by game, version and seat."""

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
        return Loaded(stored, self.rules.deserialize(stored.snapshot))

    def _status(self, loaded: Loaded) -> common_pb2.GameStatus:
        return status_message(
            loaded.stored.game_id,
            loaded.stored.version,
            loaded.stored.meta,
            status_of(loaded.state),
        )

    def _events(self, events: Sequence[Event], seat: int | None) -> list[Message]:
        return [self.adapter.event(e) for e in visible_events(events, seat)]

    def _stored_events(
        self, events: Sequence[Mapping[str, Any]], seat: int | None
    ) -> list[Message]:
        return self._events([Event.from_json(e) for e in events], seat)

    async def _wake_bots(
        self, game_id: str, version: int, state: State, meta: Mapping[str, Any]
    ) -> None:
        """Queue a bot-turn job for every bot seat that may act now (jump-ins included).

        Best effort: the move stands whatever happens here. Should Redis fail now (or this
        process stop), a client's retry (same request id) or the bot workers' sweep of the live
        games queues the job again; a duplicate job is harmless (a worker plays with
        expected_version, so only one of two jobs for a version can move)."""
        jobs = bot_turns.jobs(game_id, version, meta, state.to_act())
        if jobs:
            try:
                await bot_turns.add(self.store.redis, jobs)
            except ApiError:
                log.warning("bots not woken", extra={"game_id": game_id, "version": version})

    # -- the API ---------------------------------------------------------------------------

    async def create(self, request: Any, caller: Caller) -> Message:
        """CreateGame: a new game with the request's options and players."""
        players = list(request.players)
        check_players(players, caller.player)
        try:
            options = self.adapter.options(request)
            check_options(self.game, {**self.rules.default_options(), **options}, players)
            seed = random.SystemRandom().getrandbits(63)
            state = self.rules.new_game(seed, options)
        except GameError as error:
            raise ApiError.from_game_error(error) from None
        if len(players) != state.num_seats:
            raise ApiError(
                "INVALID_ARGUMENT",
                f"this {self.game} game has {state.num_seats} seats; got {len(players)} player ids",
            )
        sponsor = caller.player or caller.sponsor
        if caller.player:  # a table of their own: it counts like any game they play
            load = load_of(await self.store.live_metas(caller.player))
            check_load(load, self.limits, players)
        game_id = new_game_id(self.game)
        # The seed stays in Redis (it decides hidden cards: never sent to a client); with the
        # move log it rebuilds every position, which audits use (bench/soak.py).
        meta = {
            "game": self.game,
            "seats": players,
            "names": await self.store.player_names(players, caller),
            "options": options,
            "seed": seed,
            "edition": state.edition,
            "sponsor": sponsor,
        }
        status = status_of(state)
        await self.store.opened(self.game, game_id, [*players, sponsor] if sponsor else players)
        opening = [event.to_json() for event in state.opening_events()]
        await self.store.create(game_id, state.serialize(), meta, opening, status)
        await self._wake_bots(game_id, 0, state, meta)
        GAMES_CREATED.labels(self.game).inc()
        log.info("game created", extra={"game_id": game_id, "seats": len(players)})
        return self.adapter.create_response(status=status_message(game_id, 0, meta, status))

    async def view(self, request: common_pb2.GetViewRequest, caller: Caller) -> Message:
        """GetView: what the caller's seat (or a spectator) sees now."""
        loaded = await self._load(request.game_id)
        seats = loaded.stored.meta["seats"]
        requested = request.seat if request.HasField("seat") else None
        seat = (
            None
            if request.public
            else resolve_seat(seats, caller.player, requested, spectator_ok=True)
        )
        return self.adapter.view_response(
            status=self._status(loaded),
            seat=seat,
            view=self.adapter.view(loaded.state.view(seat)),
        )

    async def legal_moves(
        self, request: common_pb2.LegalMovesRequest, caller: Caller
    ) -> common_pb2.LegalMovesResponse:
        """LegalMoves: the caller's seat's legal moves now."""
        loaded = await self._load(request.game_id)
        requested = request.seat if request.HasField("seat") else None
        seat = resolve_seat(
            loaded.stored.meta["seats"], caller.player, requested, spectator_ok=False
        )
        assert seat is not None
        return common_pb2.LegalMovesResponse(
            game_id=request.game_id,
            version=loaded.stored.version,
            seat=seat,
            moves=loaded.state.legal_moves(seat),
        )

    async def play(self, request: common_pb2.PlayRequest, caller: Caller) -> Message:
        """Play: one move of the caller's seat."""
        try:
            if not request.move:
                raise ApiError("MALFORMED_MOVE", "the move is empty; see LegalMoves")
            if len(request.move) > MAX_MOVE_CHARS:
                raise ApiError(
                    "MALFORMED_MOVE", f"the move is longer than {MAX_MOVE_CHARS} characters"
                )
            expected = request.expected_version if request.HasField("expected_version") else None
            response = await self.act(request, caller, request.move, expected)
        except ApiError as error:
            MOVES.labels(self.game, error.reason).inc()
            raise
        MOVES.labels(self.game, "accepted").inc()
        return response

    async def resign(self, request: common_pb2.ResignRequest, caller: Caller) -> Message:
        """Resign: the caller's seat gives up."""
        try:
            response = await self.act(request, caller, None, None)
        except ApiError as error:
            MOVES.labels(self.game, error.reason).inc()
            raise
        MOVES.labels(self.game, "accepted").inc()
        return response

    # -- acting ----------------------------------------------------------------------------

    def _request_id(self, request: Any, caller: Caller) -> tuple[str, str]:
        """The request id as the caller gave it (or the gateway's), and as it is recorded:
        scoped to the player, so nobody can collide with another's."""
        if len(request.request_id) > MAX_REQUEST_ID_CHARS:
            raise ApiError(
                "INVALID_ARGUMENT", f"request_id is longer than {MAX_REQUEST_ID_CHARS} characters"
            )
        given = request.request_id or caller.request_id[:MAX_REQUEST_ID_CHARS]
        return given, f"{caller.player}:{given}" if given else ""

    async def act(
        self, request: Any, caller: Caller, move: str | None, expected: int | None
    ) -> Message:
        """Apply a move (or a resignation when `move` is None) with optimistic concurrency.

        The move is judged on the game at `expected` when given, else on the latest version the
        service has read. If another move is committed between that read and this write, the
        call fails with ABORTED (STALE_VERSION) and the current version: the first one wins.
        """
        given, request_id = self._request_id(request, caller)
        requested = request.seat if request.HasField("seat") else None
        game_id: str = request.game_id
        hint = self.hints.get(game_id)
        if hint is not None and expected is not None and expected != hint.stored.version:
            hint = None
        loaded = hint
        for _attempt in range(COMMIT_ATTEMPTS):
            from_hint = loaded is not None and loaded is hint
            if loaded is None:
                loaded = await self._load(game_id, request_id)
            stored = loaded.stored
            seat = resolve_seat(stored.meta["seats"], caller.player, requested, spectator_ok=False)
            assert seat is not None
            if stored.request_version is not None:
                return await self._replayed(loaded, stored.request_version, seat, move, given)
            if expected is not None and expected != stored.version:
                raise await self._stale(game_id, stored.version, expected)
            try:
                if move is None:
                    state, events = loaded.state.resign(seat)
                else:
                    state, events = loaded.state.apply(seat, move)
            except GameError as error:
                if from_hint:  # the hint may be behind: judge the move on the stored game
                    loaded = hint = None
                    continue
                raise ApiError.from_game_error(error, version=str(stored.version)) from None
            answer = await self._commit(loaded, seat, move, request_id, given, state, events)
            if not isinstance(answer, Loaded):
                return answer
            current = answer  # another move was committed first: the game as it is now
            if expected is not None or not from_hint:
                # A move accepted between our read and our write: the first one wins (S11).
                raise await self._stale(game_id, current.stored.version, stored.version)
            # Only this replica's hint was behind: judge the move on the game as it is now.
            loaded, hint = current, None
        raise ApiError("UNAVAILABLE", "the game is too busy right now; retry")

    async def _commit(
        self,
        loaded: Loaded,
        seat: int,
        move: str | None,
        request_id: str,
        given: str,
        state: State,
        events: list[Event],
    ) -> Message | Loaded:
        """Write the move if the game is still where it was judged: its answer; or, when
        another move came first, the game as it is now (which the hints then hold too)."""
        stored = loaded.stored
        game_id = stored.game_id
        status = status_of(state)
        commit = await self.store.commit(
            game_id,
            expected_version=stored.version,
            snapshot=state.serialize(),
            request_id=request_id,
            actor=seat,
            move=move if move is not None else "resign",
            events=[e.to_json() for e in events],
            status=status,
        )
        if commit.outcome == "OK":
            self.hints.put(game_id, Loaded(stored.moved_to(commit.version), state))
            await self._wake_bots(game_id, commit.version, state, stored.meta)
            if status["finished"]:
                await self.store.closed(game_id)
                GAMES_FINISHED.labels(self.game).inc()
                log.info(
                    "game finished",
                    extra={"game_id": game_id, "version": commit.version, **status["result"]},
                )
            return self.adapter.play_response(
                status=status_message(game_id, commit.version, stored.meta, status),
                events=self._events(events, seat),
            )
        if commit.outcome == "DUPLICATE":
            return await self._replayed(loaded, commit.version, seat, move, given)
        if commit.outcome == "NOT_FOUND" or commit.current is None:
            self.hints.drop(game_id)
            raise ApiError("GAME_NOT_FOUND", f"no game with id {game_id}")
        current = Loaded(commit.current, self.rules.deserialize(commit.current.snapshot))
        self.hints.put(game_id, current)
        return current

    async def _stale(self, game_id: str, current: int, judged: int) -> ApiError:
        """ABORTED for a move judged on version `judged` while the game is at `current`, saying
        what happened since (moves are public notation)."""
        if judged < current:
            try:
                entries = await self.store.entries(game_id, judged + 1, count=4)
            except ApiError:
                entries = []
            moved = "; ".join(f"seat {e.actor} played {e.move!r}" for e in entries)
            what = f"another move was accepted first ({moved or 'the game moved on'})"
        else:
            what = f"version {judged} does not exist yet"
        return ApiError(
            "STALE_VERSION",
            f"{what}: the game is at version {current}, not {judged}; get the view again and retry",
            version=str(current),
        )

    async def _replayed(
        self, loaded: Loaded, version: int, seat: int, move: str | None, request_id: str
    ) -> Message:
        """The answer to a retried request that was already applied at `version`: the first
        answer again (that version's status and events), whatever the game did since. A
        request id the caller used for another move (or seat) is refused: answering with the
        first move's result would tell the caller a move was played that was not.

        The first call may have stopped between its commit and waking the bots, so the bots are
        woken again, on the game as it is now (`loaded` may be the version the retry was judged
        on, from before its first try was committed)."""
        game_id = loaded.stored.game_id
        entries = await self.store.entries(game_id, version, count=1)
        if not entries or entries[0].version != version:
            raise ApiError("UNAVAILABLE", "the game's log cannot be read right now; retry")
        entry = entries[0]
        played = "resign" if move is None else move
        if (entry.actor, entry.move) != (seat, played):
            raise ApiError(
                "REQUEST_ID_REUSED",
                f"request id {request_id!r} was already used for {entry.move!r} by seat "
                f"{entry.actor} at version {version}, not for {played!r} by seat {seat}; "
                "a retry repeats the same move, a new move needs a new request id",
            )
        now = await self._load(game_id)
        await self._wake_bots(game_id, now.stored.version, now.state, now.stored.meta)
        return self.adapter.play_response(
            status=status_message(game_id, version, loaded.stored.meta, entry.status),
            events=self._stored_events(entry.events, seat),
        )

    # -- watching --------------------------------------------------------------------------

    async def watch(
        self, request: common_pb2.WatchRequest, caller: Caller
    ) -> AsyncIterator[Message]:
        """Watch: every version from `from_version` on, then live, until the game ends."""
        loaded = await self._load(request.game_id)
        seats = loaded.stored.meta["seats"]
        requested = request.seat if request.HasField("seat") else None
        seat = (
            None
            if request.public
            else resolve_seat(seats, caller.player, requested, spectator_ok=True)
        )
        last = loaded.stored.version
        if not 0 <= request.from_version <= last + 1:
            raise ApiError(
                "INVALID_ARGUMENT",
                f"from_version must be 0..{last + 1}: the game is at version {last}",
            )
        return self._follow(loaded, request.from_version, seat)

    async def _follow(
        self, loaded: Loaded, next_version: int, seat: int | None
    ) -> AsyncIterator[Message]:
        """The game's entries from `next_version` on, through this process's fan-out hub (no
        Redis connection of its own); ends after the game's last move."""
        game_id = loaded.stored.game_id
        if loaded.state.finished and next_version > loaded.stored.version:
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
                    yield self._watch_message(game_id, loaded.stored.meta, entry, seat)
                    if entry.status["finished"]:
                        return
        finally:
            watcher.close()
            watchers.dec()

    def _watch_message(
        self, game_id: str, meta: Mapping[str, Any], entry: Entry, seat: int | None
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
        self, game_id: str, meta: Mapping[str, Any], entry: Entry, seat: int | None
    ) -> Message:
        time = Timestamp()
        time.FromMilliseconds(entry.time_ms)
        return self.adapter.watch_response(
            envelope=common_pb2.EventEnvelope(
                game_id=game_id,
                version=entry.version,
                actor=entry.actor if entry.actor >= 0 else None,  # unset at creation
                move=entry.move,
                time=time,
            ),
            status=status_message(game_id, entry.version, meta, entry.status),
            events=self._stored_events(entry.events, seat),
        )
