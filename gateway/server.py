"""The gateway: the platform's one public port.

It authenticates every call (bearer token), rate-limits per player, and forwards each game call
to that game's service, round robin across its replicas, passing the request and response bytes
through untouched. The player's id travels to the game service in the `x-tabletop-player`
metadata, where the player is mapped to their seat; whatever the client sent under that key is
dropped. Only the game services' public methods are routed; nothing else is reachable.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import itertools
import logging
import random
import secrets
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import grpc
from google.protobuf.timestamp_pb2 import Timestamp
from grpc_health.v1 import health_pb2, health_pb2_grpc

from engines import registry
from engines.bots.base import LEVEL_NAMES
from engines.contract import GameError
from gateway.auth import AuthError, Identity, TokenIssuer, bearer_token
from gateway.ratelimit import RateLimiter
from gateway.relay import LINKS, MAX_AGE_SECONDS, Relay, status_code
from services.bots.identity import BOT_ID_PATTERN, new_bot_id
from services.matchmaker.store import LobbyStore, Ticket, pool_key
from services.runtime.apis import GAME_APIS, channel_options
from services.runtime.errors import ApiError, abort
from services.runtime.main import adapter_of, connect_redis
from services.runtime.server import Server
from services.runtime.servicer import PLAYER_METADATA, REQUEST_METADATA, status_message
from services.runtime.store import GameStore, redis_failed
from tabletop.lobby.v1 import lobby_pb2, lobby_pb2_grpc

log = logging.getLogger("tabletop.gateway")


DEFAULT_TIMEOUT = 10.0
Context = grpc.aio.ServicerContext[Any, Any]


@dataclass(frozen=True, kw_only=True)
class GatewaySettings:
    listen: str = "0.0.0.0:50050"
    token_secret: str
    token_ttl_seconds: int = 24 * 3600
    rate_per_second: float = 50.0
    rate_burst: float = 100.0
    login_rate_per_second: float = 5.0
    """Logins per second per client address (a burst of `login_rate_burst` first)."""
    login_rate_burst: float = 20.0
    backends: Mapping[str, str]
    """game id -> gRPC target of its service, e.g. "127.0.0.1:50051", "dns:///esoloe:50051" or
    "ipv4:127.0.0.1:50051,127.0.0.1:50061" (several replicas)."""
    grace_seconds: float = 10.0
    bot_key: str = ""
    """Bot workers log in with this key (BotLogin); empty: no bot logins."""
    redis_url: str = ""
    """Where matchmaking tickets live; empty: no matchmaking (FindMatch answers UNAVAILABLE)."""
    relay_links: int = LINKS
    """Relay links (long-lived streams carrying the game calls) kept open to each game's target;
    spread over its replicas by round robin."""
    relay_max_age_seconds: float = MAX_AGE_SECONDS
    """A relay link takes no new calls after this long, so new replicas get their share."""


class Guard:
    """Authenticates a call's bearer token and applies the caller's rate limit."""

    def __init__(self, issuer: TokenIssuer, limiter: RateLimiter) -> None:
        self.issuer = issuer
        self.limiter = limiter

    def admit(self, context: Context) -> Identity:
        """The caller; raises ApiError (UNAUTHENTICATED, RATE_LIMITED)."""
        try:
            identity = self.issuer.verify(bearer_token(context.invocation_metadata()))
        except AuthError as error:
            raise ApiError("UNAUTHENTICATED", str(error)) from None
        wait = self.limiter.take(identity.player_id)
        if wait:
            raise ApiError(
                "RATE_LIMITED",
                f"too many requests; retry in {wait * 1000:.0f}ms",
                retry_after_ms=str(int(wait * 1000) + 1),
            )
        return identity


class AuthServicer(lobby_pb2_grpc.AuthServiceServicer):
    def __init__(
        self,
        guard: Guard,
        limiter: RateLimiter,
        bot_key: str,
        games: GameStore | None,
    ) -> None:
        self.guard = guard
        self.issuer = guard.issuer
        self.limiter = limiter
        self.bot_key = bot_key
        self.games = games

    async def BotLogin(self, request: Any, context: Context) -> lobby_pb2.LoginResponse:
        try:
            if not self.bot_key or not hmac.compare_digest(
                request.key.encode(), self.bot_key.encode()
            ):
                raise ApiError("UNAUTHENTICATED", "bot logins need the platform's bot key")
            if not BOT_ID_PATTERN.fullmatch(request.player_id):
                raise ApiError(
                    "INVALID_ARGUMENT",
                    f"bot player ids look like bot-<level>-<hex>; got {request.player_id[:80]!r}",
                )
            token, identity = self.issuer.issue(request.player_id, request.player_id)
        except ApiError as error:
            await abort(context, error)
        return _login_response(token, identity)

    async def Refresh(self, request: Any, context: Context) -> lobby_pb2.LoginResponse:
        try:
            identity = self.guard.admit(context)
            token, renewed = self.issuer.issue(identity.player_id, identity.name)
        except ApiError as error:
            await abort(context, error)
        return _login_response(token, renewed)

    async def Login(self, request: Any, context: Context) -> lobby_pb2.LoginResponse:
        try:
            wait = self.limiter.take("login:" + (context.peer() or "").rsplit(":", 1)[0])
            if wait:
                raise ApiError(
                    "RATE_LIMITED",
                    f"too many logins; retry in {wait:.1f}s",
                    retry_after_ms=str(int(wait * 1000) + 1),
                )
            try:
                token, identity = self.issuer.login(request.name)
            except ValueError as error:
                raise ApiError("INVALID_ARGUMENT", str(error)) from None
        except ApiError as error:
            await abort(context, error)
        if self.games is not None:
            try:  # best effort: without it the player's seats show the player id
                await self.games.remember_name(
                    identity.player_id, identity.name, self.issuer.ttl_seconds
                )
            except ApiError:
                log.warning("name not kept", extra={"player": identity.player_id})
        return _login_response(token, identity)


def seat_count(game: str, create: Any) -> int:
    """How many seats a game created with this CreateGame request has (its options decide)."""
    try:
        options = adapter_of(game).options(create)
        return registry.get(game).new_game(0, options).num_seats
    except GameError as error:
        raise ApiError.from_game_error(error) from None


def _login_response(token: str, identity: Identity) -> lobby_pb2.LoginResponse:
    expires = Timestamp()
    expires.FromSeconds(int(identity.expires_at))
    return lobby_pb2.LoginResponse(token=token, player_id=identity.player_id, expires_at=expires)


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


def _ticket_message(ticket: Ticket, state: str | None = None, **fields: Any) -> lobby_pb2.Ticket:
    return lobby_pb2.Ticket(
        ticket_id=ticket.ticket_id,
        state=_TICKET_STATES[state or ticket.state],
        game=ticket.game,
        game_id=fields.get("game_id", ticket.game_id),
        seat=int(fields.get("seat", ticket.seat)),
    )


@contextlib.contextmanager
def _lobby_reachable() -> Iterator[None]:
    """A Redis failure inside answers UNAVAILABLE (retrying is safe), not a server error."""
    try:
        yield
    except Exception as error:
        if not redis_failed(error):
            raise
        raise ApiError("UNAVAILABLE", "the lobby cannot be reached; retry") from None


class LobbyServicer(lobby_pb2_grpc.LobbyServiceServicer):
    """Matchmaking tickets (the matchmaker forms the games) and games against bots."""

    def __init__(
        self,
        guard: Guard,
        channels: Mapping[str, grpc.aio.Channel],
        lobby: LobbyStore | None,
        games: GameStore | None,
    ) -> None:
        self.guard = guard
        self.channels = channels
        self.lobby = lobby
        self.games = games

    def _game_request(self, request: Any) -> tuple[str, Any]:
        """The game and its CreateGame request with the request's options (checked)."""
        game = request.game
        if game not in self.channels:
            raise ApiError(
                "INVALID_ARGUMENT",
                f"unknown game {game[:40]!r}; games are: {', '.join(sorted(self.channels))}",
            )
        level = request.level or "random"
        if level not in LEVEL_NAMES:
            raise ApiError(
                "INVALID_ARGUMENT",
                f"unknown bot level {level[:40]!r}; levels are: {', '.join(LEVEL_NAMES)}",
            )
        chosen = request.options.WhichOneof("game")
        if chosen not in (None, game):
            raise ApiError("INVALID_OPTIONS", f"options for {chosen} given for a {game} game")
        create = GAME_APIS[game].pb2.CreateGameRequest()
        if chosen:
            create.options.CopyFrom(getattr(request.options, game))
        return game, create

    def _store(self) -> LobbyStore:
        if self.lobby is None:
            raise ApiError("UNAVAILABLE", "matchmaking is not configured on this gateway")
        return self.lobby

    async def _own_ticket(self, ticket_id: str, player: str) -> Ticket:
        with _lobby_reachable():
            ticket = await self._store().get(ticket_id) if ticket_id.isalnum() else None
        if ticket is None or ticket.player != player:
            raise ApiError("TICKET_NOT_FOUND", f"you have no ticket {ticket_id[:40]!r}")
        return ticket

    async def FindMatch(self, request: Any, context: Context) -> lobby_pb2.Ticket:
        try:
            identity = self.guard.admit(context)
            game, create = self._game_request(request)
            if request.seats:
                if "players" in create.options.DESCRIPTOR.fields_by_name:
                    create.options.players = request.seats
                elif request.seats != seat_count(game, create):
                    raise ApiError(
                        "INVALID_ARGUMENT",
                        f"{game} is played by {seat_count(game, create)}, not {request.seats}",
                    )
            seats = seat_count(game, create)
            if (
                request.bots == lobby_pb2.BOT_FILL_AFTER
                and not 0 < request.bots_after_seconds <= 3600
            ):
                raise ApiError("INVALID_ARGUMENT", "bots_after_seconds must be 1..3600")
            options = {
                **registry.get(game).default_options(),
                **adapter_of(game).options(create),
            }
            ticket_id = secrets.token_hex(10)
            with _lobby_reachable():
                queued, existing = await self._store().enqueue(
                    ticket_id,
                    player=identity.player_id,
                    game=game,
                    options=create.options.SerializeToString(deterministic=True),
                    seats=seats,
                    bots=_BOT_FILL.get(request.bots, "never"),
                    bots_after=float(request.bots_after_seconds),
                    level=request.level or "random",
                    pool=pool_key(game, seats, options),
                )
            if not queued:
                raise ApiError(
                    "TICKET_LIVE",
                    f"you already wait for a {game} game with ticket {existing}; "
                    "watch it or cancel it first",
                    ticket_id=existing,
                )
        except ApiError as error:
            await abort(context, error)
        return lobby_pb2.Ticket(
            ticket_id=ticket_id, state=lobby_pb2.TICKET_STATE_QUEUED, game=game, seat=-1
        )

    async def WatchTicket(self, request: Any, context: Context) -> AsyncIterator[lobby_pb2.Ticket]:
        try:
            identity = self.guard.admit(context)
            ticket = await self._own_ticket(request.ticket_id, identity.player_id)
        except ApiError as error:
            await abort(context, error)
        after = "0-0"
        while True:
            try:
                with _lobby_reachable():
                    events = await self._store().events(ticket.ticket_id, after, block_ms=4000)
            except ApiError as error:
                await abort(context, error)
            for entry_id, fields in events:
                after = entry_id
                state = fields["state"]
                yield _ticket_message(
                    ticket, state, game_id=fields.get("game_id", ""), seat=fields.get("seat", -1)
                )
                if state != "queued":
                    return

    async def CancelTicket(self, request: Any, context: Context) -> lobby_pb2.Ticket:
        try:
            identity = self.guard.admit(context)
            ticket = await self._own_ticket(request.ticket_id, identity.player_id)
            with _lobby_reachable():
                await self._store().close(ticket, "cancelled")
                final = await self._store().get(ticket.ticket_id)
        except ApiError as error:
            await abort(context, error)
        return _ticket_message(final or ticket)

    async def ListGames(self, request: Any, context: Context) -> lobby_pb2.ListGamesResponse:
        try:
            identity = self.guard.admit(context)
            if self.games is None:
                raise ApiError("UNAVAILABLE", "the lobby is not configured on this gateway")
            with _lobby_reachable():
                games = await self.games.player_games(identity.player_id)
        except ApiError as error:
            await abort(context, error)
        reply = lobby_pb2.ListGamesResponse()
        for game in games:
            if request.live_only and game.last.status["finished"]:
                continue
            summary = reply.games.add(
                status=status_message(game.game_id, game.last.version, game.meta, game.last.status),
                seats=[i for i, p in enumerate(game.meta["seats"]) if p == identity.player_id],
            )
            summary.created.FromMilliseconds(game.created_ms)
            summary.updated.FromMilliseconds(game.last.time_ms)
        return reply

    async def PlayAgainstBots(
        self, request: Any, context: Context
    ) -> lobby_pb2.PlayAgainstBotsResponse:
        try:
            identity = self.guard.admit(context)
            game, create = self._game_request(request)
            seats = seat_count(game, create)
            bots = [new_bot_id(request.level or "random") for _ in range(seats)]
            seat = -1
            if not request.watch_only:
                seat = request.seat if request.HasField("seat") and request.seat >= 0 else -1
                if seat >= seats:
                    raise ApiError(
                        "INVALID_ARGUMENT", f"seat {seat} does not exist; seats are 0..{seats - 1}"
                    )
                if seat < 0:
                    seat = random.randrange(seats)
                bots[seat] = identity.player_id
            create.players.extend(bots)
            try:
                created = (
                    await GAME_APIS[game].stub(self.channels[game]).CreateGame(create, timeout=10)
                )
            except grpc.aio.AioRpcError as error:
                await context.abort(
                    error.code(), error.details() or "", _passable(error.trailing_metadata())
                )
        except ApiError as error:
            await abort(context, error)
        return lobby_pb2.PlayAgainstBotsResponse(status=created.status, seat=seat)


class Proxy(grpc.GenericRpcHandler):
    """Routes each public game method to its backend, passing bytes through: unary calls over
    the game's relay links, Watch streams as calls of their own."""

    def __init__(self, guard: Guard, relays: Mapping[str, Relay]) -> None:
        self.guard = guard
        # Request ids unique across gateway processes and restarts, without a syscall per call.
        self._request_prefix = f"g{secrets.token_hex(6)}-"
        self._request_counter = itertools.count()
        self.handlers: dict[str, grpc.RpcMethodHandler[bytes, bytes]] = {}
        for game, relay in relays.items():
            service = GAME_APIS[game].descriptor
            for method in service.methods:
                path = f"/{service.full_name}/{method.name}"
                if method.server_streaming:
                    stream: grpc.aio.UnaryStreamMultiCallable[bytes, bytes] = (
                        relay.channel.unary_stream(path)
                    )
                    self.handlers[path] = grpc.unary_stream_rpc_method_handler(
                        self._streaming(stream)
                    )
                else:
                    self.handlers[path] = grpc.unary_unary_rpc_method_handler(
                        self._unary(relay, method.name)
                    )

    def service(
        self, handler_call_details: grpc.HandlerCallDetails
    ) -> grpc.RpcMethodHandler[bytes, bytes] | None:
        return self.handlers.get(handler_call_details.method)

    async def _admit(self, context: Context) -> tuple[str, str]:
        """Authenticate and rate-limit; the player and a new request id."""
        try:
            identity = self.guard.admit(context)
        except ApiError as error:
            await abort(context, error)
        return identity.player_id, f"{self._request_prefix}{next(self._request_counter)}"

    @staticmethod
    def _timeout(context: Context) -> float:
        remaining = context.time_remaining()
        return DEFAULT_TIMEOUT if remaining is None else max(0.001, remaining)

    def _unary(self, relay: Relay, method: str) -> Any:
        async def forward(request: bytes, context: Context) -> bytes:
            player, request_id = await self._admit(context)
            answer = await relay.call(
                method,
                request,
                player_id=player,
                request_id=request_id,
                seconds=self._timeout(context),
            )
            if answer.code:
                await context.abort(
                    status_code(answer),
                    answer.details,
                    tuple(
                        (t.key, t.value if t.key.endswith("-bin") else t.value.decode())
                        for t in answer.trailers
                    ),
                )
            return answer.response

        return forward

    def _streaming(self, call: grpc.aio.UnaryStreamMultiCallable) -> Any:  # type: ignore[type-arg]
        async def forward(request: bytes, context: Context) -> AsyncIterator[bytes]:
            player, request_id = await self._admit(context)
            stream = call(
                request, metadata=((PLAYER_METADATA, player), (REQUEST_METADATA, request_id))
            )
            try:
                async for message in stream:
                    yield message
            except grpc.aio.AioRpcError as error:
                await context.abort(
                    error.code(), error.details() or "", _passable(error.trailing_metadata())
                )
            finally:
                stream.cancel()

        return forward


def _passable(metadata: Any) -> tuple[tuple[str, str | bytes], ...]:
    return tuple((k, v) for k, v in (metadata or ()) if not k.startswith(":"))


class Gateway:
    """The gateway server: auth, rate limits, routes, health (one status per game)."""

    def __init__(self, settings: GatewaySettings) -> None:
        unknown = set(settings.backends) - set(GAME_APIS)
        if unknown:
            raise ValueError(f"no such game: {', '.join(sorted(unknown))}")
        self.settings = settings
        self.issuer = TokenIssuer(settings.token_secret, ttl_seconds=settings.token_ttl_seconds)
        self.limiter = RateLimiter(settings.rate_per_second, settings.rate_burst)
        self.channels = {
            game: grpc.aio.insecure_channel(
                target, options=channel_options(GAME_APIS[game].full_name)
            )
            for game, target in settings.backends.items()
        }
        names = [GAME_APIS[g].full_name for g in self.channels]
        own = [
            lobby_pb2.DESCRIPTOR.services_by_name[name].full_name
            for name in ("AuthService", "LobbyService")
        ]
        self.base = Server(settings.listen, [*own, *names], grace_seconds=settings.grace_seconds)
        self.redis = connect_redis(settings.redis_url) if settings.redis_url else None
        self.lobby = LobbyStore(self.redis) if self.redis is not None else None
        guard = Guard(self.issuer, self.limiter)
        self.relays = {
            game: Relay(channel, links=settings.relay_links, max_age=settings.relay_max_age_seconds)
            for game, channel in self.channels.items()
        }
        self.base.server.add_generic_rpc_handlers((Proxy(guard, self.relays),))
        games = GameStore(self.redis) if self.redis is not None else None
        lobby_pb2_grpc.add_AuthServiceServicer_to_server(
            AuthServicer(
                guard,
                RateLimiter(settings.login_rate_per_second, settings.login_rate_burst),
                settings.bot_key,
                games,
            ),
            self.base.server,
        )
        lobby_pb2_grpc.add_LobbyServiceServicer_to_server(
            LobbyServicer(guard, self.channels, self.lobby, games), self.base.server
        )
        self._watcher: asyncio.Task[None] | None = None

    @property
    def port(self) -> int:
        return self.base.port

    async def _watch_backends(self) -> None:
        """Each game's health status at the gateway follows its backend's."""
        while True:
            for game, channel in self.channels.items():
                name = GAME_APIS[game].full_name
                try:
                    reply = await health_pb2_grpc.HealthStub(channel).Check(
                        health_pb2.HealthCheckRequest(service=name), timeout=2.0
                    )
                    status = reply.status
                except grpc.aio.AioRpcError:
                    status = health_pb2.HealthCheckResponse.NOT_SERVING
                await self.base.health.set(name, status)
            await asyncio.sleep(2.0)

    async def start(self) -> None:
        await self.base.start()
        self._watcher = asyncio.create_task(self._watch_backends())

    async def stop(self, grace: float | None = None) -> None:
        if self._watcher is not None:
            self._watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watcher
        await self.base.stop(grace)
        for relay in self.relays.values():
            await relay.close()
        for channel in self.channels.values():
            await channel.close()
        if self.redis is not None:
            await self.redis.aclose()
