"""Routing: the steps every call the gateway passes on takes, whether it came on its own
(`Proxy`, a generic handler of the public port), on a player session (gateway/session.py) or
through the web edge (gateway/web.py): the token checked (`Guard`), the player's rate limit, an
API token's scopes, a new request id, then the backend's relay link or a stream of its own."""

from __future__ import annotations

import contextlib
import itertools
import secrets
from collections.abc import AsyncGenerator, AsyncIterator, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import grpc
from google.protobuf.descriptor import ServiceDescriptor

from gateway.accounts import Revocations, may_act
from gateway.auth import AuthError, Identity, TokenIssuer, bearer_token
from gateway.ratelimit import RateLimiter
from gateway.relay import Relay, status_code
from runtime.replicas import Replicas
from runtime.server import MAX_REQUEST_BYTES, Context
from tabletop.relay.v1 import relay_pb2
from wire.api import READS
from wire.errors import ApiError, abort
from wire.metadata import (
    BOT_SEAT_METADATA,
    GUEST_METADATA,
    NAME_METADATA,
    PLAYER_METADATA,
    REQUEST_METADATA,
)
from wire.players import BOT_ID_PATTERN
from wire.proof import prove

DEFAULT_TIMEOUT = 10.0
"""The deadline of a call whose caller set none (CALL_TIMEOUT_SECONDS)."""


def too_large(request: bytes) -> str:
    return f"the request is {len(request)} bytes: at most {MAX_REQUEST_BYTES}"


class Guard:
    """Authenticates a call's bearer token and applies the caller's rate limit."""

    def __init__(
        self, issuer: TokenIssuer, limiter: RateLimiter, revocations: Revocations | None = None
    ) -> None:
        self.issuer = issuer
        self.limiter = limiter
        self.revocations = revocations

    def identify(self, context: Context) -> Identity:
        """The caller; raises ApiError (UNAUTHENTICATED)."""
        return self.check(self.token(context))

    @staticmethod
    def token(context: Context) -> str:
        """The call's bearer token; raises ApiError (UNAUTHENTICATED)."""
        try:
            return bearer_token(context.invocation_metadata())
        except AuthError as error:
            raise ApiError("UNAUTHENTICATED", str(error)) from None

    def check(self, token: str) -> Identity:
        """Whose `token` is, while it holds: not expired, its session not ended; raises
        ApiError (UNAUTHENTICATED). Cheap enough for every call (verified tokens are cached)."""
        try:
            identity = self.issuer.verify(token)
        except AuthError as error:
            raise ApiError("UNAUTHENTICATED", str(error)) from None
        revocations = self.revocations
        if identity.guest_token and revocations is not None:
            why = revocations.why(identity.guest_token)
            if why is not None:
                raise ApiError("UNAUTHENTICATED", f"this guest token has ended: {why}")
        if identity.session and (revocations is None or revocations.ended(identity.session)):
            raise ApiError(
                "UNAUTHENTICATED",
                "this login has ended (logged out, or the password changed); log in again",
            )
        return identity

    def admit(self, context: Context, acting: bool = True) -> Identity:
        """The caller; raises ApiError (UNAUTHENTICATED, RATE_LIMITED). A bot worker's call
        is the call of the bot seat it names (`acting`; its own calls, Refresh and WhoAmI,
        are the worker's)."""
        identity = self.identify(context)
        if acting:
            named = [v for k, v in context.invocation_metadata() or () if k == BOT_SEAT_METADATA]
            identity = self.acting(identity, named)
        self.limit(identity)
        return identity

    @staticmethod
    def acting(identity: Identity, named: Sequence[str | bytes]) -> Identity:
        """Who acts: the caller, or for a bot worker the one bot seat its call `named`
        (BOT_SEAT_METADATA); raises ApiError (UNAUTHENTICATED)."""
        return _acting_bot(identity, named) if identity.worker else identity

    def limit(self, identity: Identity) -> None:
        """The caller's rate limit: raises ApiError (RATE_LIMITED) when it is spent."""
        wait = self.limiter.take(identity.player_id)
        if wait:
            retry_ms = int(wait * 1000) + 1  # never sooner than the limiter allows
            raise ApiError(
                "RATE_LIMITED",
                f"too many requests; retry in {retry_ms}ms",
                retry_after_ms=str(retry_ms),
            )


def _acting_bot(worker: Identity, named: Sequence[str | bytes]) -> Identity:
    """The bot seat a worker's call acts for: the one seat `named` (BOT_SEAT_METADATA)."""
    if len(named) != 1 or not isinstance(named[0], str) or not BOT_ID_PATTERN.fullmatch(named[0]):
        raise ApiError(
            "UNAUTHENTICATED",
            f"a bot worker's call names the one bot seat it acts for in {BOT_SEAT_METADATA} "
            "(bot-<level>-<hex>)",
        )
    return Identity(named[0], named[0], worker.expires_at)


def kind_of(identity: Identity) -> str:
    if identity.worker:
        return "worker"
    if identity.session:
        return "account"
    return "bot" if BOT_ID_PATTERN.fullmatch(identity.player_id) else "guest"


@dataclass(frozen=True)
class Backend:
    """A service behind the gateway: its public API, its replicas and relay links."""

    descriptor: ServiceDescriptor
    replicas: Replicas
    relay: Relay


@dataclass(frozen=True)
class Route:
    """A public method the gateway routes: to which backend, and how."""

    backend: Backend
    path: str
    """gRPC's path of the method, e.g. "/tabletop.esoloe.v1.EsoloeService/Play"."""
    method: str
    acts: bool
    """Not one of READS: an API token needs a scope to act to call it."""
    streaming: bool
    """Server-streaming (Watch, WatchTicket...): a call of its own to one replica."""


class Proxy(grpc.GenericRpcHandler):
    """Routes each public method of the backends to its service, passing bytes through: unary
    calls over the service's relay links, streams as calls of their own. A player session
    (gateway/session.py) routes its calls through the same steps."""

    def __init__(
        self,
        guard: Guard,
        backends: list[Backend],
        streams_per_player: int,
        internal_key: str,
        call_timeout_seconds: float = DEFAULT_TIMEOUT,
    ) -> None:
        self.guard = guard
        self.call_timeout_seconds = call_timeout_seconds
        self.internal_key = internal_key
        self.streams_per_player = streams_per_player
        self.streams: dict[str, int] = {}
        """Streams open now, by player."""
        # Request ids unique across gateway processes and restarts, without a syscall per call.
        self._request_prefix = f"g{secrets.token_hex(6)}-"
        self._request_counter = itertools.count()
        self.routes: dict[str, Route] = {}
        self.handlers: dict[str, grpc.RpcMethodHandler[bytes, bytes]] = {}
        for backend in backends:
            service = backend.descriptor
            for method in service.methods:
                path = f"/{service.full_name}/{method.name}"
                route = Route(
                    backend, path, method.name, method.name not in READS, method.server_streaming
                )
                self.routes[path] = route
                if route.streaming:
                    self.handlers[path] = grpc.unary_stream_rpc_method_handler(
                        self._streaming(route)
                    )
                else:
                    self.handlers[path] = grpc.unary_unary_rpc_method_handler(self._unary(route))

    def service(
        self, handler_call_details: grpc.HandlerCallDetails
    ) -> grpc.RpcMethodHandler[bytes, bytes] | None:
        return self.handlers.get(handler_call_details.method)

    def permit(self, identity: Identity, route: Route) -> str:
        """May the caller call `route` (an API token's scopes)? Raises ApiError
        (NOT_PERMITTED); the call's new request id."""
        refused = may_act(identity) if route.acts else ""
        if refused:
            raise ApiError("NOT_PERMITTED", refused)
        return f"{self._request_prefix}{next(self._request_counter)}"

    async def _admit(self, context: Context, route: Route) -> tuple[Identity, str]:
        """Authenticate, rate-limit and permit: the caller and a new request id."""
        try:
            identity = self.guard.admit(context)
            return identity, self.permit(identity, route)
        except ApiError as error:
            await abort(context, error)

    def _timeout(self, context: Context) -> float:
        remaining = context.time_remaining()
        if remaining is None:
            return self.call_timeout_seconds
        return max(0.001, remaining)

    async def call(
        self, identity: Identity, route: Route, request: bytes, request_id: str, seconds: float
    ) -> relay_pb2.RelayResponse:
        """A unary call of `route` for `identity`, over the backend's relay links."""
        return await route.backend.relay.call(
            route.method,
            request,
            player_id=identity.player_id,
            player_name=identity.name,
            request_id=request_id,
            seconds=seconds,
            guest=kind_of(identity) == "guest",
        )

    def _unary(self, route: Route) -> Any:
        async def forward(request: bytes, context: Context) -> bytes:
            if len(request) > MAX_REQUEST_BYTES:  # the port takes a session's Call around it
                await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, too_large(request))
            identity, request_id = await self._admit(context, route)
            answer = await self.call(identity, route, request, request_id, self._timeout(context))
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

    @contextlib.contextmanager
    def stream_slot(self, player: str) -> Iterator[None]:
        """One of the player's open streams, held while the block runs; raises ApiError
        (LIMIT_REACHED) when they have as many as they may."""
        open_now = self.streams.get(player, 0)
        if open_now >= self.streams_per_player:
            raise ApiError(
                "LIMIT_REACHED",
                f"you already have {open_now} streams open: at most "
                f"{self.streams_per_player} at once; close one first",
                limit="streams",
                max=str(self.streams_per_player),
            )
        self.streams[player] = open_now + 1
        try:
            yield
        finally:
            left = self.streams[player] - 1
            if left:
                self.streams[player] = left
            else:
                del self.streams[player]

    async def stream(
        self, identity: Identity, route: Route, request: bytes, request_id: str
    ) -> AsyncGenerator[bytes]:
        """The messages of a server-streaming call of `route` for `identity` (a call of its
        own to one replica, where it stays when the replicas change). The caller holds a
        stream slot while it reads."""
        replicas = route.backend.replicas
        channel = replicas.acquire()
        call: grpc.aio.UnaryStreamMultiCallable[bytes, bytes] = channel.unary_stream(route.path)
        stream = call(
            request,
            metadata=prove(
                self.internal_key,
                route.path,
                (
                    (PLAYER_METADATA, identity.player_id),
                    (NAME_METADATA, identity.name),
                    (REQUEST_METADATA, request_id),
                    *([(GUEST_METADATA, "1")] if kind_of(identity) == "guest" else []),
                ),
                body=request,
            ),
        )
        try:
            async for message in stream:
                yield message
        except grpc.aio.AioRpcError as error:
            if error.code() != grpc.StatusCode.CANCELLED:
                raise
            # Not the caller's doing (theirs cancels this generator): the call reached a
            # replica just as it began to stop, and gRPC ends such a call CANCELLED
            # (grpc/grpc#41785). Nothing was served; the caller asks again.
            raise ApiError("UNAVAILABLE", "the service was stopping; retry") from None
        finally:
            stream.cancel()
            replicas.release(channel)

    def _streaming(self, route: Route) -> Any:
        async def forward(request: bytes, context: Context) -> AsyncIterator[bytes]:
            identity, request_id = await self._admit(context, route)
            try:
                with self.stream_slot(identity.player_id):
                    messages = self.stream(identity, route, request, request_id)
                    async with contextlib.aclosing(messages):
                        async for message in messages:
                            yield message
            except ApiError as error:
                await abort(context, error)
            except grpc.aio.AioRpcError as error:
                await context.abort(
                    error.code(), error.details() or "", _passable(error.trailing_metadata())
                )

        return forward


def _passable(metadata: Any) -> tuple[tuple[str, str | bytes], ...]:
    return tuple((k, v) for k, v in (metadata or ()) if not k.startswith(":"))
