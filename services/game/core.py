"""A game, played: the game service's logic, free of any transport.

`GameCore` answers every call of a game's API (CreateGame, GetView, LegalMoves, Play, Resign,
StopGame, TakeSeat, Watch; PassJumpIn in a game played out of turn) given the request and the
`Caller`; the gRPC servicer and the relay links both call it, and neither it nor they fake the
other's context. It loads the game from Redis, asks the engine, commits the result with a
version check, and builds the answer. Everything game-specific sits in the engine (rules) and in
the game's adapter (protobuf <-> engine values).
The authoritative state is in Redis: any replica serves any game, two replicas can serve one
game interleaved, and killing one loses nothing (a replica only keeps version-checked hints, see
`Hints`).

The caller is who the gateway says it is; the core maps the player to its seat, and cuts every
view and event to that seat.
"""

from __future__ import annotations

import logging
import random
import secrets
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from google.protobuf.message import Message
from google.protobuf.timestamp_pb2 import Timestamp

import games
from engines.contract import Event, GameError, State, visible_events
from games.adapter import Adapter
from games.clock import BadTimeControl, Due, Table, TimeControl, time_control_of
from games.replay import PLATFORM_MOVES, STOP, TAKE_SEAT, Position, Step, step
from runtime import bot_turns, keys
from runtime.fanout import StreamHub, TooSlow
from runtime.game_log import Entry, entry_of, finished_record, now_ms
from runtime.observability import (
    GAMES_CREATED,
    GAMES_FINISHED,
    MOVES,
    TIMEOUT_LATENESS,
    TIMEOUTS,
    WATCHERS,
)
from runtime.redis import redis_failed
from services.game.limits import Limits, check_options
from services.game.players import PlayerStore
from services.game.store import Deadline, GameStore, StoredGame
from tabletop.common.v1 import common_pb2
from wire.clock import bot_pace, deal_of_the_day, jump_in_window, requested, table_event
from wire.errors import ApiError
from wire.metadata import Caller
from wire.players import PLAYER_ID_PATTERN, is_bot, level_of, new_bot_id
from wire.status import status_message

log = logging.getLogger("tabletop.game")

MAX_MOVE_CHARS = 200
MAX_REQUEST_ID_CHARS = 64
COMMIT_ATTEMPTS = 3
SENT_KEPT = 4096
"""Watch messages kept built, for the other watchers of the same version and seat."""


@dataclass(frozen=True, slots=True)
class Loaded:
    """A game as read (or last written): its record, the engine's state and, for a timed game,
    its table (clocks, seats taken over)."""

    stored: StoredGame
    state: State
    table: Table | None = None

    @property
    def time_control(self) -> TimeControl:
        return time_control_of(self.stored.meta)

    @property
    def holders(self) -> list[str]:
        """Who holds each seat now (bots in the seats they took over)."""
        seats: list[str] = self.stored.meta["seats"]
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
    status: dict[str, Any]
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
) -> dict[str, Any]:
    """The public status of a state (and its table) as stored with each stream entry."""
    result = state.result()
    engine = None if result is None else result.to_json()
    if table is None:
        return {
            "to_act": list(state.public_to_act()),
            "finished": engine is not None,
            "result": engine,
        }
    final = table.result_json(engine)
    status: dict[str, Any] = {
        "to_act": [] if final is not None else list(state.public_to_act()),
        "finished": final is not None,
        "result": final,
    }
    if tc is None or tc.kept:  # an untimed game that was stopped has a table, not a clock
        status["clock"] = table.clock_json(tc or TimeControl())
    if table.replaced:
        status["replaced"] = {str(seat): bot for seat, bot in table.replaced.items()}
    return status


def utc_day(ms: int) -> str:
    """The UTC day (YYYY-MM-DD) of a time in ms."""
    return time.strftime("%Y-%m-%d", time.gmtime(ms // 1000))


def check_deal_of_the_day(
    players: Sequence[str], sponsor: str, caller: Caller, options: Mapping[str, Any]
) -> None:
    """Who may play the deal of the day: an account, in the only seat, with the default
    options (the same deal for everyone)."""
    if caller.guest or not sponsor:
        raise ApiError(
            "INVALID_ARGUMENT",
            "the deal of the day is for accounts: register (AuthService.Register) to play it",
        )
    if list(players) != [sponsor]:
        raise ApiError("INVALID_ARGUMENT", "the deal of the day is played by you, not by bots")
    if options:
        raise ApiError(
            "INVALID_OPTIONS",
            "the deal of the day is the same for everyone: set no other option "
            f"(got {', '.join(sorted(options))})",
        )


def check_shown(meta: Mapping[str, Any], player: str) -> None:
    """Refuse to show a deal of the day to anyone but its player until its day (UTC) is over:
    another player could copy its moves on their own try."""
    day = meta.get("day")
    if day and player not in meta["seats"] and day >= utc_day(now_ms()):
        raise ApiError(
            "NOT_YOUR_GAME",
            f"a deal of the day is shown to its player only, until its day ({day}) is over at "
            "midnight UTC",
        )


def resolve_seat(
    seats: Sequence[str],
    player: str,
    requested: int | None,
    *,
    spectator_ok: bool,
    seated: Sequence[str] = (),
) -> int | None:
    """The caller's seat, or None for a spectator (only where `spectator_ok`). `seats`: who
    holds each seat now; `seated`: who was seated at creation, when bots took seats over (a
    caller whose seat a bot plays is a spectator where one may be, else refused with a word
    on TakeSeat)."""
    mine = [i for i, holder in enumerate(seats) if holder == player and player]
    taken = [i for i, p in enumerate(seated) if p == player and player and i not in mine]
    if requested is not None:
        if not 0 <= requested < len(seats):
            raise ApiError(
                "INVALID_ARGUMENT",
                f"seat {requested} does not exist; seats are 0..{len(seats) - 1}",
            )
        if requested in mine:
            return requested
        if requested in taken:
            if spectator_ok:
                return None
            raise taken_over(requested)
        held = f"you hold seat {mine[0]}" if len(mine) == 1 else "you hold no seat here"
        raise ApiError("NOT_YOUR_SEAT", f"seat {requested} is not yours; {held}")
    if not mine:
        if spectator_ok:
            return None
        if taken:
            raise taken_over(taken[0])
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


def taken_over(seat: int) -> ApiError:
    """NOT_YOUR_SEAT for acting for a seat that a bot plays since its player's time ran out."""
    return ApiError(
        "NOT_YOUR_SEAT",
        f"your time ran out and a bot plays your seat ({seat}) since: take it back with "
        "TakeSeat (meanwhile you may GetView and Watch the game)",
        seat=str(seat),
    )


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
        self.players = PlayerStore(store.redis, ttl_seconds=store.ttl_seconds)
        """What the games say of players: names, live-game limits, the deal of the day."""
        self.hub = hub
        """Delivers new entries of the games this process's watchers follow."""
        self.limits = limits or Limits()
        self.hints = Hints()
        self._sent: OrderedDict[tuple[str, int, int | None], Message] = OrderedDict()
        """The Watch messages built last, by game, version and seat."""
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

    def _seat(self, loaded: Loaded, player: str, request: Any, *, spectator_ok: bool) -> int | None:
        """The caller's seat in the game (see resolve_seat)."""
        return resolve_seat(
            loaded.holders,
            player,
            request.seat if request.HasField("seat") else None,
            spectator_ok=spectator_ok,
            seated=loaded.stored.meta["seats"],
        )

    def _events(self, events: Sequence[Event], seat: int | None) -> list[Message]:
        return [self.adapter.event(e) for e in visible_events(events, seat)]

    def _stored_events(
        self, events: Sequence[Mapping[str, Any]], seat: int | None
    ) -> list[Message]:
        return self._events([Event.from_json(e) for e in events], seat)

    async def _wake_bots(self, loaded: Loaded, window_ms: int | None = None) -> None:
        """Queue a bot-turn job for every bot seat that may act now, as public information
        says (in Solo: every bot seat, whatever cards it holds; see bot_turns.jobs); with
        `window_ms`, jobs with that jump-in window instead of the table's.

        Best effort: the move stands whatever happens here. Should Redis fail now (or this
        process stop), a client's retry (same request id) or the bot workers' sweep of the live
        games queues the job again; a duplicate job is harmless (a worker plays with
        expected_version, so only one of two jobs for a version can move)."""
        game_id, version = loaded.stored.game_id, loaded.stored.version
        if loaded.finished:
            return
        jobs = bot_turns.jobs(
            game_id,
            version,
            loaded.stored.meta,
            loaded.state.public_to_act(),
            loaded.holders,
            window_ms,
        )
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
        declared = games.get(self.game)
        tc = requested(request, declared.time_control)
        try:
            options = self.adapter.options(request)
            check_options(self.game, {**self.rules.default_options(), **options}, players)
            tc.check(self.game, declared.timeouts, games.LEVELS)
            window = jump_in_window(request, declared.jump_in_window_ms)
            pace = bot_pace(request)
            seed = random.SystemRandom().getrandbits(63)
            state = self.rules.new_game(seed, options)
        except GameError as error:
            raise ApiError.from_game_error(error) from None
        except BadTimeControl as error:
            raise ApiError("INVALID_OPTIONS", str(error)) from None
        if len(players) != state.num_seats:
            raise ApiError(
                "INVALID_ARGUMENT",
                f"this {self.game} game has {state.num_seats} seats; got {len(players)} player ids",
            )
        sponsor = caller.player or caller.sponsor
        game_id = new_game_id(self.game)
        day = None
        if deal_of_the_day(request):
            day = utc_day(now_ms())
            check_deal_of_the_day(players, sponsor, caller, options)
            seed, held = await self.players.deal_of_the_day(self.game, day, sponsor, game_id)
            if held is not None:
                raise ApiError(
                    "ALREADY_PLAYED",
                    f"you have played the deal of {day} already (game {held}); a new deal comes "
                    "at midnight UTC",
                    game_id=held,
                )
            state = self.rules.new_game(seed, options)
        if sponsor:  # a table of their own, or bots they watch: it counts like any game they play
            try:
                await self.players.reserve(sponsor, game_id, players, self.limits.of(caller.guest))
            except ApiError:
                if day is not None:
                    await self.players.forget_try(self.game, day, sponsor)
                raise
        names = await self.players.player_names(players, caller)
        # The seed stays in Redis (it decides hidden cards: never sent to a client); with the
        # move log it rebuilds every position, which audits use (bench/soak.py).
        meta = {
            "game": self.game,
            "seats": players,
            "names": names,
            "options": options,
            "seed": seed,
            "edition": state.edition,
            "sponsor": sponsor,
        }
        if caller.rated is not None and not caller.player:  # only the platform makes them
            meta["rated"] = True
            meta["accounts"] = [
                seat for seat in caller.rated if seat < len(players) and not is_bot(players[seat])
            ]
            meta["ratings"] = await self.players.seat_ratings(self.game, meta)
        if state.num_seats == 1 and players == [sponsor] and not caller.guest:
            meta["scored"] = True  # an account's game played alone: its score table counts it
            meta["accounts"] = [0]
        if day is not None:
            meta["day"] = day
        if caller.private and not caller.player:  # only the platform makes them
            meta["private"] = True
        if declared.out_of_turn:  # a table setting, not a rule: the engine never sees it
            meta["jump_in_window_ms"] = window
        if pace:  # a table setting too: how long its bots let pass after each move
            meta["bot_pace_ms"] = pace
        now = now_ms()
        table = None
        if tc.kept:
            meta["time_control"] = tc.to_json()
            people = [not is_bot(player) for player in players]
            table = Table.new(tc, people, state.public_to_act(), now)
        status = status_of(state, table, tc)
        await self.store.opened(
            self.game,
            game_id,
            [*players, sponsor] if sponsor else players,
            levels=self.limits.capped_levels(players),
            sponsor=sponsor,
        )
        opening = [event.to_json() for event in state.opening_events()]
        stored_table = None if table is None else table.to_json()
        written = await self.store.create(
            game_id, state.serialize(), meta, opening, status, table=stored_table, time_ms=now
        )
        loaded = Loaded(StoredGame(game_id, 0, b"", meta, None, stored_table), state, table)
        await self._index(loaded)
        await self._wake_bots(loaded)
        await self.store.confirm(written)
        if not meta.get("private") and day is None:  # a game anyone may watch: tell followers
            await self.store.started(game_id, players, names)
        GAMES_CREATED.labels(self.game).inc()
        log.info("game created", extra={"game_id": game_id, "seats": len(players)})
        return self.adapter.create_response(status=status_message(game_id, 0, meta, status))

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

    async def legal_moves(
        self, request: common_pb2.LegalMovesRequest, caller: Caller
    ) -> common_pb2.LegalMovesResponse:
        """LegalMoves: the caller's seat's legal moves now."""
        loaded = await self._load(request.game_id)
        seat = self._seat(loaded, caller.player, request, spectator_ok=False)
        assert seat is not None
        return common_pb2.LegalMovesResponse(
            game_id=request.game_id,
            version=loaded.stored.version,
            seat=seat,
            moves=[] if loaded.finished else loaded.state.legal_moves(seat),
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
            if request.move in PLATFORM_MOVES:
                raise ApiError(
                    "MALFORMED_MOVE",
                    f"{request.move!r} is what the platform records for a deadline, a stop or a "
                    "take-back (TakeSeat), not a move",
                )
            expected = request.expected_version if request.HasField("expected_version") else None
            if expected is not None and expected < 0:
                raise ApiError(
                    "INVALID_ARGUMENT",
                    f"expected_version is a version of the game (0 or more), not {expected}",
                )
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

    async def stop(
        self, request: common_pb2.StopGameRequest, caller: Caller
    ) -> common_pb2.StopGameResponse:
        """StopGame: the player who asked for a game of bots (its sponsor) ends it, without a
        result. The stop is a version of the game like a move (move "stop_game"), written through
        the same versioned commit as a move or a timeout, and what follows a game's last
        version follows it too: watchers get it, the game leaves the live indexes, pending bot
        jobs find the game moved on. A game already over answers its final status (so a
        retried stop is harmless)."""
        loaded = await self._load(request.game_id)
        for _attempt in range(COMMIT_ATTEMPTS):
            stored = loaded.stored
            who = caller.player or caller.sponsor
            if not who or who != stored.meta.get("sponsor"):
                raise ApiError(
                    "NOT_YOUR_GAME",
                    f"game {stored.game_id} was not made for you: only the player who asked for "
                    "a game of bots (LobbyService.PlayAgainstBots, watch_only) may stop it",
                )
            if any(not is_bot(player) for player in stored.meta["seats"]):
                raise ApiError(
                    "PEOPLE_SEATED",
                    f"a person holds a seat in game {stored.game_id}: it ends by its moves, a "
                    "resignation or its clock; StopGame stops only games played by bots",
                )
            if loaded.finished:
                return common_pb2.StopGameResponse(status=self._status(loaded))
            played = self._played(loaded, Step(-1, STOP, now_ms()))
            written = await self._write(loaded, played, "")
            if written.outcome == "OK":
                log.info(
                    "game stopped", extra={"game_id": stored.game_id, "version": written.version}
                )
                return common_pb2.StopGameResponse(
                    status=status_message(
                        stored.game_id, written.version, stored.meta, played.status
                    )
                )
            if written.current is None:
                raise ApiError("GAME_NOT_FOUND", f"no game with id {stored.game_id}")
            loaded = written.current  # a bot moved first: stop the game as it is now
        raise ApiError("UNAVAILABLE", "the game is too busy right now; retry")

    async def take_seat(
        self, request: common_pb2.TakeSeatRequest, caller: Caller
    ) -> common_pb2.TakeSeatResponse:
        """TakeSeat: the caller takes back their seat from the bot that plays it since their
        time ran out. The take-back is a version of the game like a move (move "take_seat", the
        seat as actor), written through the same versioned commit as a move or a timeout, so a
        bot's move judged on the version before is refused; the seat's time runs from it. What
        was due before it (another seat's timeout) is applied first. Nothing to take back (the
        caller holds the seat, or the game is over) answers the game as it is, so a retry is
        harmless."""
        loaded = await self._load(request.game_id)
        for _attempt in range(COMMIT_ATTEMPTS):
            stored = loaded.stored
            seat = resolve_seat(
                stored.meta["seats"],
                caller.player,
                request.seat if request.HasField("seat") else None,
                spectator_ok=False,
            )
            assert seat is not None
            table = loaded.table
            if loaded.finished or table is None or seat not in table.replaced:
                return common_pb2.TakeSeatResponse(status=self._status(loaded))
            now = now_ms()
            due = loaded.due()
            if due is not None and now > due.at_ms:
                await self._apply_due(loaded, due)
                loaded = await self._load(request.game_id)
                continue
            left = table.time_left(loaded.time_control, seat, now)
            if left is not None and left <= 0:
                raise ApiError(
                    "NO_TIME_LEFT",
                    f"your chess clock has no time left: the bot plays seat {seat} on (the "
                    "increments it earns give you time to take it back later)",
                    seat=str(seat),
                )
            try:
                played = self._played(loaded, Step(seat, TAKE_SEAT, now))
            except GameError as error:
                raise ApiError.from_game_error(error, version=str(stored.version)) from None
            written = await self._write(
                loaded, played, "", not_after=None if due is None else due.at_ms
            )
            if written.outcome == "OK":
                log.info(
                    "seat taken back",
                    extra={"game_id": stored.game_id, "seat": seat, "version": written.version},
                )
                return common_pb2.TakeSeatResponse(
                    status=status_message(
                        stored.game_id, written.version, stored.meta, played.status
                    )
                )
            if written.outcome == "LATE":  # a deadline passed meanwhile: apply it first
                loaded = await self._load(request.game_id)
                continue
            if written.current is None:
                raise ApiError("GAME_NOT_FOUND", f"no game with id {stored.game_id}")
            loaded = written.current  # a bot moved first: take the seat back as it is now
        raise ApiError("UNAVAILABLE", "the game is too busy right now; retry")

    async def pass_jump_in(
        self, request: common_pb2.PassJumpInRequest, caller: Caller
    ) -> common_pb2.PassJumpInResponse:
        """PassJumpIn: the person at the caller's seat will not jump in at this version. Once
        every seat a person holds has passed at the version, the bots are woken again with no
        jump-in window (every bot seat, as after any move): they act at once. Only people's
        passes, which are public choices, end the window early; no card of anyone's does. Not
        a move: the game's version and log stay as they are."""
        if not games.get(self.game).out_of_turn:
            raise ApiError(
                "INVALID_ARGUMENT", f"nobody jumps in in {self.game}: there is nothing to pass on"
            )
        if request.version < 0:
            raise ApiError(
                "INVALID_ARGUMENT",
                f"version is a version of the game (0 or more), not {request.version}",
            )
        loaded = await self._load(request.game_id)
        game_id, version = loaded.stored.game_id, loaded.stored.version
        seat = self._seat(loaded, caller.player, request, spectator_ok=False)
        assert seat is not None
        holders = loaded.holders
        if is_bot(holders[seat]):
            raise ApiError(
                "NOT_PERMITTED",
                f"seat {seat} is a bot's: only a person passes on jumping in (a bot lets its "
                "chance go by not playing)",
            )
        if loaded.finished:
            raise ApiError(
                "GAME_OVER",
                f"game {game_id} is over (version {version}): there is nothing to pass on",
                version=str(version),
            )
        if request.version != version:
            raise await self._stale(game_id, version, request.version)
        current, passes, new = await self.store.pass_jump_in(game_id, version, seat)
        if current < 0:
            raise ApiError("GAME_NOT_FOUND", f"no game with id {game_id}")
        if current != version:  # a move came first
            raise await self._stale(game_id, current, request.version)
        people = [i for i, holder in enumerate(holders) if not is_bot(holder)]
        passed = [i for i in people if passes.get(i) == version]
        ended = len(passed) == len(people)
        if ended and new:  # this pass was the last one: the bots need wait no more
            await self._wake_bots(loaded, window_ms=0)
        return common_pb2.PassJumpInResponse(
            game_id=game_id, version=version, seat=seat, passed=passed, window_ended=ended
        )

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

    async def _tell_turn(self, before: Loaded, after: Loaded, actor: int) -> None:
        """Tell each person whose seat is to act now, and was not before, that it is their turn
        (a notification, keys.player_notifications; the client at that game leaves it out):
        one write, and only then. Not the one who just moved (hot seat, a jump-in). Best
        effort: the move stands whatever happens here."""
        if after.finished:
            return
        was = set(before.state.public_to_act())
        holders = after.holders
        mover = holders[actor] if 0 <= actor < len(holders) else ""
        people = [
            holders[seat] for seat in after.state.public_to_act()
            if seat not in was and not is_bot(holders[seat]) and holders[seat] != mover
        ]  # fmt: skip
        if not people:
            return
        game_id = after.stored.game_id
        try:
            await self.store.notifier.send(
                people, "your_turn", game=self.game, game_id=game_id,
                message=f"your turn in {self.game} game {game_id}",
            )  # fmt: skip
        except Exception as error:
            if not redis_failed(error):
                raise
            log.warning("a turn was not told", extra={"game_id": game_id})

    async def act(
        self, request: Any, caller: Caller, move: str | None, expected: int | None
    ) -> Message:
        """Apply a move (or a resignation when `move` is None) with optimistic concurrency.

        The move is judged on the game at `expected` when given, else on the latest version the
        service has read. If another move is committed between that read and this write, the
        call fails with ABORTED (STALE_VERSION) and the current version: the first one wins. A
        resignation without `expected` is applied to the game as it is then (a player who
        resigns means it whatever a bot just played).
        In a timed game a move must reach Redis before the game's next deadline (by Redis's
        clock); one that comes later is refused and the timeout (or abort) applied instead.
        """
        given, request_id = self._request_id(request, caller)
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
            if stored.request_version is not None:
                seat = self._retried_seat(loaded, caller, request)
                return await self._replayed(loaded, stored.request_version, seat, move, given)
            seat = self._seat(loaded, caller.player, request, spectator_ok=False)
            assert seat is not None
            if expected is not None and expected != stored.version:
                raise await self._stale(game_id, stored.version, expected)
            now = now_ms()
            due = loaded.due()
            if due is not None and now > due.at_ms and not from_hint:
                raise await self._too_late(loaded, due, seat)
            try:
                played = self._judge(loaded, seat, move, now)
            except GameError as error:
                if from_hint:  # the hint may be behind: judge the move on the stored game
                    loaded = hint = None
                    continue
                raise ApiError.from_game_error(error, version=str(stored.version)) from None
            commit = await self._write(
                loaded, played, request_id, not_after=None if due is None else due.at_ms
            )
            if commit.outcome == "OK":
                return self.adapter.play_response(
                    status=status_message(game_id, commit.version, stored.meta, played.status),
                    events=self._events(played.events, seat),
                )
            if commit.outcome == "DUPLICATE":
                return await self._replayed(loaded, commit.version, seat, move, given)
            if commit.outcome == "LATE":
                assert due is not None
                raise await self._too_late(loaded, due, seat)
            if commit.outcome == "NOT_FOUND" or commit.current is None:
                raise ApiError("GAME_NOT_FOUND", f"no game with id {game_id}")
            if move is not None and (expected is not None or not from_hint):
                # A move accepted between our read and our write: the first one wins (S11).
                raise await self._stale(game_id, commit.current.stored.version, stored.version)
            # Only this replica's hint was behind, or a resignation (which asked for no
            # version): judge it on the game as it is now.
            loaded, hint = commit.current, None
        raise ApiError("UNAVAILABLE", "the game is too busy right now; retry")

    def _judge(self, loaded: Loaded, seat: int, move: str | None, now: int) -> Played:
        """The seat's move (a resignation when None) applied to the game at `now`, not yet
        written. Raises a GameError for a move the rules refuse."""
        return self._played(loaded, Step(seat, "resign" if move is None else move, now))

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
        if loaded.table is not None:  # indexed with the move where the store can
            due = Loaded(stored, played.state, played.table).due()
            deadline = Deadline(None if due is None else due.at_ms)
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
            finished=finished_record(stored.meta, played.status),
            deadline=deadline,
        )
        if commit.outcome == "OK":
            now = Loaded(
                stored.moved_to(commit.version, table, commit.tag), played.state, played.table
            )
            self.hints.put(game_id, now)
            if commit.indexed:
                self._unindexed.discard(game_id)
            elif loaded.table is not None:
                await self._index(now)
            await self._wake_bots(now)
            await self._tell_turn(loaded, now, played.actor)
            if played.status["finished"]:
                await self.store.closed(
                    game_id, [*stored.meta["seats"], stored.meta.get("sponsor", "")]
                )
                GAMES_FINISHED.labels(self.game).inc()
                log.info(
                    "game finished",
                    extra={
                        "game_id": game_id,
                        "version": commit.version,
                        **played.status["result"],
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

    async def _too_late(self, loaded: Loaded, due: Due, seat: int) -> ApiError:
        """The refusal of a move that came after the game's deadline, once what was due (the
        timeout or the abort) is applied as of that deadline."""
        await self._apply_due(loaded, due)
        version = str(loaded.stored.version + 1)
        late = f"{now_ms() - due.at_ms} ms after the deadline"
        if due.kind == "abort":
            return ApiError(
                "GAME_OVER",
                f"the game was aborted: nobody at the table moved within "
                f"{loaded.time_control.abort_seconds} s of its start (this move came {late})",
                version=version,
            )
        if due.seat == seat:
            outcome = (
                "you forfeit the game"
                if loaded.time_control.on_timeout == "forfeit"
                else "a bot plays your seat until you take it back (TakeSeat)"
            )
            return ApiError(
                "TIME_UP",
                f"your time ran out: this move came {late}; {outcome}",
                deadline_ms=str(due.at_ms),
                version=version,
            )
        return ApiError(
            "STALE_VERSION",
            f"seat {due.seat}'s time ran out first (this move came {late}): the game is at "
            f"version {version}; get the view again and retry",
            version=version,
        )

    async def _apply_due(self, loaded: Loaded, due: Due) -> bool:
        """Apply what is due to the game (a timeout or the abort) as of its deadline, through
        the same versioned commit as a move: whether this call applied it (not: a move or
        another replica came first, or it is not due yet by Redis's clock)."""
        tc = loaded.time_control
        now = max(now_ms(), due.at_ms)
        bot = new_bot_id(tc.bot_level) if due.kind == "timeout" and tc.on_timeout == "bot" else ""
        move = "abort" if due.kind == "abort" else "timeout"
        played = self._played(loaded, Step(-1 if due.seat is None else due.seat, move, now, bot))
        written = await self._write(loaded, played, "", not_before=due.at_ms)
        if written.outcome != "OK":
            return False
        TIMEOUTS.labels(self.game, played.move if due.kind == "abort" else tc.on_timeout).inc()
        TIMEOUT_LATENESS.labels(self.game).observe((now - due.at_ms) / 1000)
        log.info(
            "timeout" if due.kind == "timeout" else "game aborted",
            extra={"game_id": loaded.stored.game_id, "seat": due.seat, "version": written.version},
        )
        return True

    async def expire(self, game_id: str) -> bool:
        """The deadline sweep's call for a game the index says is due: apply what is due, if
        it is; else set the game's right deadline in the index. Whether something was applied."""
        stored = await self.store.load(game_id)
        if stored is None:
            await self.store.index_deadline(game_id, 2**62, None)  # gone: forget it
            return False
        loaded = self._loaded(stored)
        due = loaded.due()
        if due is not None and now_ms() >= due.at_ms and await self._apply_due(loaded, due):
            return True
        await self._index(loaded)
        return False

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

    def _retried_seat(self, loaded: Loaded, caller: Caller, request: Any) -> int | None:
        """The seat of a request the caller's request id shows was played: the caller's own,
        or, when the caller holds it no more (a bot took it over since), the seat the request
        names, else None (the log says which seat it was). The request id is the caller's
        own (scoped to them), so the move at its version was theirs."""
        try:
            return self._seat(loaded, caller.player, request, spectator_ok=False)
        except ApiError:
            return request.seat if request.HasField("seat") else None

    async def _replayed(
        self, loaded: Loaded, version: int, seat: int | None, move: str | None, request_id: str
    ) -> Message:
        """The answer to a retried request that was already applied at `version`: the first
        answer again (that version's status and events), whatever the game did since. A
        request id the caller used for another move (or seat) is refused: answering with the
        first move's result would tell the caller a move was played that was not.

        The first call may have stopped between its commit and waking the bots, so the bots are
        woken again, on the game as it is now (`loaded` may be the version the retry was judged
        on, from before its first try was committed)."""
        game_id = loaded.stored.game_id
        entry, held = await self.store.entry_held(game_id, version)
        if entry is None:
            raise ApiError("UNAVAILABLE", "the game's log cannot be read right now; retry")
        played = "resign" if move is None else move
        seat = entry.actor if seat is None else seat
        if (entry.actor, entry.move) != (seat, played):
            raise ApiError(
                "REQUEST_ID_REUSED",
                f"request id {request_id!r} was already used for {entry.move!r} by seat "
                f"{entry.actor} at version {version}, not for {played!r} by seat {seat}; "
                "a retry repeats the same move, a new move needs a new request id",
            )
        await self._wake_bots(await self._load(game_id))
        await self.store.confirm(held)
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
        check_shown(loaded.stored.meta, caller.player)
        own = (
            None
            if request.public
            else resolve_seat(
                loaded.stored.meta["seats"],
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
                    taken = entry.status.get("replaced", {})
                    seat = own if own is None or str(own) not in taken else None
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
                actor=entry.actor if entry.actor >= 0 else None,  # unset at creation, abort
                move=entry.move,
                time=time,
                table_event=None if entry.table_event is None else table_event(entry.table_event),
            ),
            status=status_message(game_id, entry.version, meta, entry.status),
            events=self._stored_events(entry.events, seat),
        )
