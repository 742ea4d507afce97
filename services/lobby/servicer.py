"""The lobby: matchmaking tickets (the matchmakers form the games), games against bots, and a
player's games. Players reach it through the gateway, which vouches for who calls (`Caller`);
like a game service, it answers direct gRPC calls and calls over the gateway's relay links with
the same code."""

from __future__ import annotations

import contextlib
import datetime
import functools
import random
import secrets
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import Any

import grpc
from psycopg_pool import AsyncConnectionPool

import games
from engines.contract import GameError
from games.clock import WATCHED_BOT_PACE_MS, BadTimeControl, TimeControl, check_bot_pace
from runtime import keys
from runtime.accounts_client import AccountsClient
from runtime.fanout import StreamHub, TooSlow
from runtime.redis import redis_failed
from runtime.replicas import Replicas
from services.archive.reading import Archive
from services.game.limits import Limits, check_load, check_options, over
from services.game.players import PlayerStore
from services.lobby.live import LiveGames
from services.lobby.names import Names
from services.matchmaker.tickets import Ticket, TicketStore, pool_key
from services.ratings.cache import RatingCache
from services.ratings.model import Rating, off_standard
from services.ratings.scores import ScoreCache, Scores
from tabletop.lobby.v1 import lobby_pb2
from wire.api import api
from wire.clock import (
    BOT_PACE,
    DEAL_OF_THE_DAY,
    JUMP_IN_WINDOW,
    deal_of_the_day,
    jump_in_window,
    requested,
)
from wire.errors import ApiError
from wire.metadata import GUEST_METADATA, RATED_METADATA, SPONSOR_METADATA, Caller, rated_value
from wire.players import PLAYER_ID_PATTERN, new_bot_id
from wire.status import status_message

CREATE_TIMEOUT_SECONDS = 10.0

_TICKET_STATES = {
    "queued": lobby_pb2.TICKET_STATE_QUEUED,
    "matched": lobby_pb2.TICKET_STATE_MATCHED,
    "cancelled": lobby_pb2.TICKET_STATE_CANCELLED,
    "expired": lobby_pb2.TICKET_STATE_EXPIRED,
}
_BOT_FILL = {
    lobby_pb2.BOT_FILL_UNSPECIFIED: "never",
    lobby_pb2.BOT_FILL_NOW: "now",
    lobby_pb2.BOT_FILL_AFTER: "after",
}


def seat_count(game: str, create: Any) -> int:
    """How many seats a game created with this CreateGame request has (its options decide)."""
    found = games.get(game)
    try:
        return found.rules.new_game(0, found.adapter.options(create)).num_seats
    except GameError as error:
        raise ApiError.from_game_error(error) from None


def _known(game: str) -> str:
    if game not in games.names():
        raise ApiError(
            "INVALID_ARGUMENT", f"unknown game {game[:40]!r}; games are: {', '.join(games.names())}"
        )
    return game


def rated_game(game: str) -> str:
    """`game`, if it has ratings (a game of one player, Solace, has none)."""
    if not _has_ratings(_known(game)):
        raise ApiError(
            "INVALID_ARGUMENT", f"{game} is played alone: it has no rating but a score table"
        )
    return game


def check_table(game: str, create: Any, *, waits: bool) -> None:
    """The one check of a game the lobby is asked to seat people at (FindMatch's ticket; a
    challenge, invite, open table or rematch: a table that `waits` for others): refuse what it
    could never start, saying how to play it instead. The deal of the day is made by its
    player's own call only; a game played alone (Solace) has nobody to wait for."""
    own_call = (
        f"play it with LobbyService.PlayAgainstBots (game {game!r}) or "
        f"{games.get(game).service}.CreateGame"
    )
    daily = DEAL_OF_THE_DAY in create.options.DESCRIPTOR.fields_by_name
    if deal_of_the_day(create):
        raise ApiError(
            "INVALID_OPTIONS",
            f"the deal of the day is never matched nor played at a table: {own_call}, with "
            f"the option {DEAL_OF_THE_DAY}",
        )
    if waits and seat_count(game, create) < 2:
        raise ApiError(
            "INVALID_ARGUMENT",
            f"{game} is played alone, so a table waiting for other players would never start: "
            f"{own_call}"
            + (f" (the option {DEAL_OF_THE_DAY}: the deal of the day)" if daily else ""),
        )


def scored_game(game: str) -> str:
    """`game`, if it has a score table (a game of one player, Solace)."""
    if _has_ratings(_known(game)):
        raise ApiError(
            "INVALID_ARGUMENT", f"{game} is played by several: it has ratings, not a score table"
        )
    return game


def table_day(asked: str, today: datetime.date) -> str:
    """The day a score-table request names: "" (the best of all time), "today", or a UTC day
    YYYY-MM-DD within the days kept."""
    if asked in ("", "today"):
        return asked and today.isoformat()
    try:
        day = datetime.date.fromisoformat(asked) if len(asked) == 10 else None
    except ValueError:
        day = None
    if day is None or not today - datetime.timedelta(days=keys.DAYS_KEPT) <= day <= today:
        raise ApiError(
            "INVALID_ARGUMENT",
            f"day is empty, 'today' or a UTC day YYYY-MM-DD of the last {keys.DAYS_KEPT} days; "
            f"got {asked[:20]!r}",
        )
    return day.isoformat()


def _page(from_place: int, limit: int) -> tuple[int, int]:
    """(the first index, how many) of a page of a table."""
    limit = limit or 20
    if not 1 <= limit <= LEADERBOARD_LIMIT:
        raise ApiError("INVALID_ARGUMENT", f"limit is 1 to {LEADERBOARD_LIMIT}; got {limit}")
    if from_place < 0:
        raise ApiError("INVALID_ARGUMENT", f"from_place is 1 or more; got {from_place}")
    return max(0, from_place - 1), limit


@functools.cache
def _has_ratings(game: str) -> bool:
    """More than one seat at a game with default options (a deal made once per game kind)."""
    return seat_count(game, api(game).pb2.CreateGameRequest()) >= 2


def _rated_player(player: str, caller: Caller) -> str:
    """A player named in a ratings request ("" or "me": the caller), checked."""
    if player in ("", "me"):
        return _player(caller)
    if not PLAYER_ID_PATTERN.fullmatch(player):
        raise ApiError(
            "INVALID_ARGUMENT", f"not a player id (1 to 64 printable characters): {player[:40]!r}"
        )
    return player


def _check_rated(rated: bool, caller: Caller) -> None:
    if rated and caller.guest:
        raise ApiError(
            "INVALID_ARGUMENT",
            "a guest plays casual games only: register (AuthService.Register) to play rated",
        )


def _check_standard(game: str, create: Any) -> None:
    """A rated game is made with the game's standard options, table settings and time control
    (its seat count aside): else INVALID_OPTIONS, naming each setting that differs."""
    found = games.get(game)
    standard = dict(found.rules.default_options())
    asked = {**standard, **found.adapter.options(create)}
    try:
        if found.out_of_turn:
            standard[JUMP_IN_WINDOW] = found.jump_in_window_ms
            asked[JUMP_IN_WINDOW] = jump_in_window(create, found.jump_in_window_ms)
    except BadTimeControl as error:
        raise ApiError("INVALID_OPTIONS", str(error)) from None
    tc = requested(create, found.time_control)
    differ = off_standard({**asked, **_timed(tc)}, {**standard, **_timed(found.time_control)})
    if differ:
        raise ApiError(
            "INVALID_OPTIONS",
            f"a rated {game} game is played with the standard options and time control, not "
            f"{', '.join(differ)}: leave them unset, or play it casual",
        )


def _bot_pace(request: lobby_pb2.PlayAgainstBotsRequest) -> int:
    """The bot pace a PlayAgainstBots request asks for (ms, checked): unset, a move a second
    for a game of bots the caller watches (WATCHED_BOT_PACE_MS), at once otherwise."""
    if not request.HasField("bot_pace_ms"):
        return WATCHED_BOT_PACE_MS if request.watch_only else 0
    try:
        return check_bot_pace(request.bot_pace_ms)
    except BadTimeControl as error:
        raise ApiError("INVALID_OPTIONS", str(error)) from None


def _timed(tc: TimeControl) -> dict[str, Any]:
    return {f"time_control.{name}": value for name, value in tc.to_json().items()}


def rating_info(
    game: str, player: str, name: str, rating: Rating, place: int | None
) -> lobby_pb2.RatingInfo:
    info = lobby_pb2.RatingInfo(
        game=game,
        player_id=player,
        name=name,
        rating=rating.display,
        provisional=rating.provisional,
        games=rating.games,
        mu=rating.mu,
        sigma=rating.sigma,
    )
    if place is not None:
        info.place = place + 1
    return info


def score_info(
    game: str, player: str, name: str, scores: Scores, place: int | None, **fields: Any
) -> lobby_pb2.ScoreInfo:
    info = lobby_pb2.ScoreInfo(
        game=game,
        player_id=player,
        name=name,
        games=scores.games,
        best=scores.best,
        average=scores.average,
        **fields,
    )
    if place is not None:
        info.place = place + 1
    return info


LEADERBOARD_LIMIT = 100


def _ticket_message(ticket: Ticket, state: str | None = None, **fields: Any) -> lobby_pb2.Ticket:
    seat = int(fields.get("seat", ticket.seat))  # the store's -1 (not matched): unset
    return lobby_pb2.Ticket(
        ticket_id=ticket.ticket_id,
        state=_TICKET_STATES[state or ticket.state],
        game=ticket.game,
        game_id=fields.get("game_id", ticket.game_id),
        seat=seat if seat >= 0 else None,
    )


def _today() -> datetime.date:
    return datetime.datetime.now(datetime.UTC).date()


@contextlib.contextmanager
def _lobby_reachable() -> Iterator[None]:
    """A Redis failure inside answers UNAVAILABLE (retrying is safe), not a server error."""
    try:
        yield
    except Exception as error:
        unavailable = isinstance(error, ApiError) and error.reason == "UNAVAILABLE"
        if not (unavailable or redis_failed(error)):
            raise
        raise ApiError("UNAVAILABLE", "the lobby cannot be reached; retry") from None


def _player(caller: Caller) -> str:
    if not caller.player:
        raise ApiError(
            "UNAUTHENTICATED", "the lobby serves players: call it through the gateway, with a token"
        )
    return caller.player


class Lobby:
    """Every call of tabletop.lobby.v1.LobbyService, transport-free."""

    def __init__(
        self,
        tickets: TicketStore,
        games_store: PlayerStore,
        channels: Mapping[str, Replicas],
        hub: StreamHub,
        limits: Limits | None = None,
        database: AsyncConnectionPool | None = None,
        accounts: AccountsClient | None = None,
    ) -> None:
        """`database`: the archive's and the follows' (None: neither); `accounts`: the
        accounts service (None: no accounts)."""
        self.tickets = tickets
        self.games = games_store
        self.channels = channels
        """Each game's service, for the games the lobby creates at once (PlayAgainstBots)."""
        self.hub = hub
        """Delivers ticket events to this process's WatchTicket streams."""
        self.limits = limits or Limits()
        self.ratings = RatingCache(games_store.redis)
        self.scores = ScoreCache(games_store.redis)
        self.names = Names(database, games_store, accounts)
        self.live = LiveGames(games_store.redis, self.ratings, self.names)
        self.archive = Archive(database, self.names)

    async def _seen(self, caller: Caller) -> str:
        """The caller; their display name is kept for the seats of the games made for them
        (best effort: without it a seat shows the player id)."""
        player = _player(caller)
        if caller.name:
            with contextlib.suppress(ApiError):
                await self.games.remember_name(player, caller.name)
        return player

    async def _check_load(self, caller: Caller, seats: Sequence[str]) -> None:
        """Refuse a game with `seats` for a player who holds as many games as they may, or
        whose bots the platform runs as many games of as it may (or the player's share of
        them): the game service checks again, at once, when it makes the game."""
        player, limits = _player(caller), self.limits.of(caller.guest)
        with _lobby_reachable():
            if over(await self.games.live_load(player), limits, seats) is not None:
                await self.games.prune_live(player)
                check_load(await self.games.live_load(player), limits, seats)
            await self.games.claim(player, "", seats, limits, check_only=True)

    def _game_request(self, request: Any) -> tuple[str, Any]:
        """The game and its CreateGame request with the request's options (checked)."""
        game = request.game
        if game not in games.names():
            raise ApiError(
                "INVALID_ARGUMENT",
                f"unknown game {game[:40]!r}; games are: {', '.join(games.names())}",
            )
        level = getattr(request, "level", "") or "random"  # a table of people: no bots
        if level not in games.LEVELS:
            raise ApiError(
                "INVALID_ARGUMENT",
                f"unknown bot level {level[:40]!r}; levels are: {', '.join(games.LEVELS)}",
            )
        chosen = request.options.WhichOneof("game")
        if chosen not in (None, game):
            raise ApiError("INVALID_OPTIONS", f"options for {chosen} given for a {game} game")
        create = api(game).pb2.CreateGameRequest()
        if chosen:
            create.options.CopyFrom(getattr(request.options, game))
        if request.HasField("time_control"):
            create.time_control.CopyFrom(request.time_control)
        return game, create

    async def _own_ticket(self, ticket_id: str, player: str) -> Ticket:
        with _lobby_reachable():
            ticket = await self.tickets.get(ticket_id) if ticket_id.isalnum() else None
        if ticket is None or ticket.player != player:
            raise ApiError("TICKET_NOT_FOUND", f"you have no ticket {ticket_id[:40]!r}")
        return ticket

    def table_request(
        self, request: Any, caller: Caller, seats: int, *, waits: bool
    ) -> tuple[str, Any, int, dict[str, Any], TimeControl]:
        """What a request for a table asks for, checked: the game, its CreateGame request (the
        options, with `seats` where the game allows a range; 0: the options' count), the seat
        count, the options with every default filled in, and the time control. `waits`: a table
        that waits for other players (not a matchmaking ticket)."""
        game, create = self._game_request(request)
        check_table(game, create, waits=waits)
        _check_rated(request.rated, caller)
        if request.rated:
            rated_game(game)
        if seats:
            if "players" in create.options.DESCRIPTOR.fields_by_name:
                create.options.players = seats
            elif seats != seat_count(game, create):
                raise ApiError(
                    "INVALID_ARGUMENT",
                    f"{game} is played by {seat_count(game, create)}, not {seats}",
                )
        found = games.get(game)
        options = {**found.rules.default_options(), **found.adapter.options(create)}
        check_options(game, options, [_player(caller)])
        tc = requested(create, found.time_control)
        try:
            tc.check(game, found.timeouts, games.LEVELS)
            if found.out_of_turn:  # a table setting that tables are pooled by, like an option
                options[JUMP_IN_WINDOW] = jump_in_window(create, found.jump_in_window_ms)
        except BadTimeControl as error:
            raise ApiError("INVALID_OPTIONS", str(error)) from None
        if request.rated:
            _check_standard(game, create)
        return game, create, seat_count(game, create), options, tc

    async def find_match(
        self, request: lobby_pb2.FindMatchRequest, caller: Caller
    ) -> lobby_pb2.Ticket:
        game, create, seats, options, tc = self.table_request(
            request, caller, request.seats, waits=False
        )
        player = await self._seen(caller)
        if request.bots not in _BOT_FILL:
            raise ApiError(
                "INVALID_ARGUMENT",
                f"bots must be BOT_FILL_NOW, BOT_FILL_AFTER or unset, not {request.bots}",
            )
        if request.bots == lobby_pb2.BOT_FILL_AFTER and not 0 < request.bots_after_seconds <= 3600:
            raise ApiError("INVALID_ARGUMENT", "bots_after_seconds must be 1..3600")
        level = request.level or "random"
        fill = _BOT_FILL[request.bots]
        maybe_bots = [] if fill == "never" else [new_bot_id(level)]
        await self._check_load(caller, [player, *maybe_bots])
        ticket_id = secrets.token_hex(10)
        with _lobby_reachable():
            queued, existing = await self.tickets.enqueue(
                ticket_id,
                player=player,
                game=game,
                options=create.options.SerializeToString(deterministic=True),
                seats=seats,
                bots=fill,
                bots_after=float(request.bots_after_seconds),
                level=level,
                pool=pool_key(
                    game, seats, options, level, fill, request.bots_after_seconds, tc,
                    rated=request.rated,
                ),
                time_control=tc.to_json(),
                rated=request.rated,
            )  # fmt: skip
        if not queued:
            raise ApiError(
                "TICKET_LIVE",
                f"you already wait for a {game} game with ticket {existing}; "
                "watch it or cancel it first",
                ticket_id=existing,
            )
        return lobby_pb2.Ticket(ticket_id=ticket_id, state=lobby_pb2.TICKET_STATE_QUEUED, game=game)

    async def watch_ticket(
        self, request: lobby_pb2.WatchTicketRequest, caller: Caller
    ) -> AsyncIterator[lobby_pb2.Ticket]:
        ticket = await self._own_ticket(request.ticket_id, _player(caller))
        return self._follow(ticket)

    async def _follow(self, ticket: Ticket) -> AsyncIterator[lobby_pb2.Ticket]:
        """The ticket's states from its first on, through the process's fan-out hub (no Redis
        connection of its own), until it leaves the queue."""
        watcher = self.hub.watch(keys.ticket_events(ticket.ticket_id), "0-0")
        try:
            while True:
                try:
                    events = await watcher.next()
                except TooSlow:
                    raise ApiError(
                        "TOO_SLOW", "this stream was read too slowly and was ended; watch again"
                    ) from None
                for event in events:
                    fields = TicketStore.fields(event)
                    state = fields["state"]
                    yield _ticket_message(
                        ticket, state, game_id=fields.get("game_id", ""),
                        seat=fields.get("seat", -1),
                    )  # fmt: skip
                    if state != "queued":
                        return
        finally:
            watcher.close()

    async def cancel_ticket(
        self, request: lobby_pb2.CancelTicketRequest, caller: Caller
    ) -> lobby_pb2.Ticket:
        ticket = await self._own_ticket(request.ticket_id, _player(caller))
        with _lobby_reachable():
            await self.tickets.close(ticket, "cancelled")
            final = await self.tickets.get(ticket.ticket_id)
        return _ticket_message(final or ticket)

    async def play_against_bots(
        self, request: lobby_pb2.PlayAgainstBotsRequest, caller: Caller
    ) -> lobby_pb2.PlayAgainstBotsResponse:
        game, create = self._game_request(request)
        _check_rated(request.rated, caller)
        if request.rated:
            rated_game(game)
            if request.watch_only:
                raise ApiError("INVALID_ARGUMENT", "a game of bots only is never rated")
            _check_standard(game, create)
        pace = _bot_pace(request)
        if pace and BOT_PACE in create.DESCRIPTOR.fields_by_name:
            setattr(create, BOT_PACE, pace)
        player = await self._seen(caller)
        seats = seat_count(game, create)
        bots = [new_bot_id(request.level or "random") for _ in range(seats)]
        seat: int | None = None
        if not request.watch_only:
            seat = request.seat if request.HasField("seat") else random.randrange(seats)
            if not 0 <= seat < seats:
                raise ApiError(
                    "INVALID_ARGUMENT", f"seat {seat} does not exist; seats are 0..{seats - 1}"
                )
            bots[seat] = player
        create.players.extend(bots)
        await self._check_load(caller, bots)
        replicas = self.channels.get(game)
        if replicas is None:
            raise ApiError("UNAVAILABLE", f"the lobby has no {game} service to create games on")
        try:
            with replicas.using() as channel:
                created = (
                    await api(game)
                    .stub(channel)
                    .CreateGame(
                        create,
                        timeout=CREATE_TIMEOUT_SECONDS,
                        # made for this player (a guest's: a guest's limits)
                        metadata=(
                            (SPONSOR_METADATA, player),
                            *([(GUEST_METADATA, "1")] if caller.guest else []),
                            *(
                                [(RATED_METADATA, rated_value([seat]))]
                                if request.rated and seat is not None
                                else []
                            ),
                        ),
                    )
                )
        except grpc.aio.AioRpcError as error:
            raise ApiError.of_call(error) from None
        return lobby_pb2.PlayAgainstBotsResponse(status=created.status, seat=seat)

    async def list_games(
        self, request: lobby_pb2.ListGamesRequest, caller: Caller
    ) -> lobby_pb2.ListGamesResponse:
        player = _player(caller)
        with _lobby_reachable():
            found = await self.games.player_games(player)
        reply = lobby_pb2.ListGamesResponse()
        for game in found:
            if request.live_only and game.last.status.finished:
                continue
            summary = reply.games.add(
                status=status_message(game.game_id, game.last.version, game.meta, game.last.status),
                seats=[i for i, p in enumerate(game.meta.seats) if p == player],
            )
            summary.created.FromMilliseconds(game.created_ms)
            summary.updated.FromMilliseconds(game.last.time_ms)
        return reply

    async def get_rating(
        self, request: lobby_pb2.GetRatingRequest, caller: Caller
    ) -> lobby_pb2.RatingInfo:
        game = rated_game(request.game)
        player = await self.names.player(request.player_id, request.username, caller)
        with _lobby_reachable():
            rating, place = await self.ratings.rating(game, player)
            (name,) = await self.names.current([player], caller)
        return rating_info(game, player, name, rating, place)

    async def list_leaderboard(
        self, request: lobby_pb2.ListLeaderboardRequest, caller: Caller
    ) -> lobby_pb2.ListLeaderboardResponse:
        game = rated_game(request.game)
        start, limit = _page(request.from_place, request.limit)
        with _lobby_reachable():
            if request.around_player:
                around = _rated_player(request.around_player, caller)
                _, place = await self.ratings.rating(game, around)
                if place is None:
                    return lobby_pb2.ListLeaderboardResponse()
                start = max(0, place - limit // 2)
            board = await self.ratings.board(game, start, limit)
            names = await self.names.current([player for player, _ in board], caller)
        return lobby_pb2.ListLeaderboardResponse(
            entries=[
                rating_info(game, player, name, rating, start + index)
                for index, ((player, rating), name) in enumerate(zip(board, names, strict=True))
            ]
        )

    async def get_rating_change(
        self, request: lobby_pb2.GetRatingChangeRequest, caller: Caller
    ) -> lobby_pb2.GetRatingChangeResponse:
        if not request.game_id or len(request.game_id) > 80:
            raise ApiError("INVALID_ARGUMENT", "give the game_id of a finished game")
        with _lobby_reachable():
            changes = await self.ratings.change(request.game_id)
        if not changes:
            return lobby_pb2.GetRatingChangeResponse(counted=False)
        with _lobby_reachable():
            names = await self.names.current([c.player for c in changes], caller)
        return lobby_pb2.GetRatingChangeResponse(
            counted=True,
            changes=[
                lobby_pb2.RatingChange(
                    seat=c.seat,
                    player_id=c.player,
                    before=c.before.display,
                    after=c.after.display,
                    place=c.rank + 1,
                    provisional=c.after.provisional,
                    name=name,
                )
                for c, name in zip(changes, names, strict=True)
            ],
        )

    async def list_live_games(
        self, request: lobby_pb2.ListLiveGamesRequest, caller: Caller
    ) -> lobby_pb2.ListLiveGamesResponse:
        with _lobby_reachable():
            return await self.live.games(request)

    async def get_scores(
        self, request: lobby_pb2.GetScoresRequest, caller: Caller
    ) -> lobby_pb2.ScoreInfo:
        game = scored_game(request.game)
        player = await self.names.player(request.player_id, request.username, caller)
        today = _today().isoformat()
        with _lobby_reachable():
            scores, place = await self.scores.scores(game, player)
            played = await self.scores.day_score(game, today, player)
            (name,) = await self.names.current([player], caller)
        info = score_info(game, player, name, scores, place, day=today)
        if played is not None:
            info.today = played[0]
        return info

    async def list_score_table(
        self, request: lobby_pb2.ListScoreTableRequest, caller: Caller
    ) -> lobby_pb2.ListScoreTableResponse:
        game = scored_game(request.game)
        day = table_day(request.day, _today())
        start, limit = _page(request.from_place, request.limit)
        reply = lobby_pb2.ListScoreTableResponse(day=day)
        with _lobby_reachable():
            if request.around_player:
                around = _rated_player(request.around_player, caller)
                place = await self.scores.place(game, day, around)
                if place is None:
                    return reply
                start = max(0, place - limit // 2)
            table = await self.scores.table(game, day, start, limit)
            names = await self.names.current([player for player, _, _ in table], caller)
        for index, ((player, score, scores), name) in enumerate(zip(table, names, strict=True)):
            info = score_info(game, player, name, scores, start + index)
            if day:
                info.score = score
            reply.entries.append(info)
        return reply

    def handlers(self) -> dict[str, Any]:
        """The unary methods as the relay and the servicer serve them."""
        return {
            "FindMatch": self.find_match,
            "CancelTicket": self.cancel_ticket,
            "PlayAgainstBots": self.play_against_bots,
            "ListGames": self.list_games,
            "GetRating": self.get_rating,
            "ListLeaderboard": self.list_leaderboard,
            "GetRatingChange": self.get_rating_change,
            "GetScores": self.get_scores,
            "ListScoreTable": self.list_score_table,
            "ListLiveGames": self.list_live_games,
            **self.archive.handlers(),
        }
