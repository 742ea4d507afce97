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
import itertools
import json
import logging
import secrets
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any

import grpc
from google.protobuf.timestamp_pb2 import Timestamp
from grpc_health.v1 import health_pb2, health_pb2_grpc

from gateway.auth import AuthError, TokenIssuer, bearer_token
from gateway.ratelimit import RateLimiter
from services.runtime.apis import GAME_APIS
from services.runtime.errors import ApiError, abort
from services.runtime.server import Server
from services.runtime.servicer import PLAYER_METADATA, REQUEST_METADATA
from tabletop.lobby.v1 import lobby_pb2, lobby_pb2_grpc

log = logging.getLogger("tabletop.gateway")


DEFAULT_TIMEOUT = 10.0
Context = grpc.aio.ServicerContext[Any, Any]


def channel_options(service: str) -> list[tuple[str, Any]]:
    """Round robin across every address of the target, and retry UNAVAILABLE (safe: each
    forwarded call carries a request id, so a retried move is applied once)."""
    config = {
        "loadBalancingConfig": [{"round_robin": {}}],
        "methodConfig": [
            {
                "name": [{"service": service}],
                "retryPolicy": {
                    "maxAttempts": 4,
                    "initialBackoff": "0.05s",
                    "maxBackoff": "0.5s",
                    "backoffMultiplier": 2,
                    "retryableStatusCodes": ["UNAVAILABLE"],
                },
            }
        ],
    }
    return [
        ("grpc.service_config", json.dumps(config)),
        ("grpc.enable_retries", 1),
        ("grpc.max_receive_message_length", 16 * 1024 * 1024),
    ]


@dataclass(frozen=True, kw_only=True)
class GatewaySettings:
    listen: str = "0.0.0.0:50050"
    token_secret: str
    token_ttl_seconds: int = 24 * 3600
    rate_per_second: float = 50.0
    rate_burst: float = 100.0
    backends: Mapping[str, str]
    """game id -> gRPC target of its service, e.g. "127.0.0.1:50051", "dns:///esoloe:50051" or
    "ipv4:127.0.0.1:50051,127.0.0.1:50061" (several replicas)."""
    grace_seconds: float = 10.0


class AuthServicer(lobby_pb2_grpc.AuthServiceServicer):
    def __init__(self, issuer: TokenIssuer, limiter: RateLimiter) -> None:
        self.issuer = issuer
        self.limiter = limiter

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
        expires = Timestamp()
        expires.FromSeconds(int(identity.expires_at))
        return lobby_pb2.LoginResponse(
            token=token, player_id=identity.player_id, expires_at=expires
        )


class Proxy(grpc.GenericRpcHandler):
    """Routes each public game method to its backend, passing bytes through."""

    def __init__(
        self, issuer: TokenIssuer, limiter: RateLimiter, channels: Mapping[str, grpc.aio.Channel]
    ) -> None:
        self.issuer = issuer
        self.limiter = limiter
        # Request ids unique across gateway processes and restarts, without a syscall per call.
        self._request_prefix = f"g{secrets.token_hex(6)}-"
        self._request_counter = itertools.count()
        self.handlers: dict[str, grpc.RpcMethodHandler[bytes, bytes]] = {}
        for game, channel in channels.items():
            service = GAME_APIS[game].descriptor
            for method in service.methods:
                path = f"/{service.full_name}/{method.name}"
                if method.server_streaming:
                    stream: grpc.aio.UnaryStreamMultiCallable[bytes, bytes] = channel.unary_stream(
                        path
                    )
                    self.handlers[path] = grpc.unary_stream_rpc_method_handler(
                        self._streaming(stream)
                    )
                else:
                    unary: grpc.aio.UnaryUnaryMultiCallable[bytes, bytes] = channel.unary_unary(
                        path
                    )
                    self.handlers[path] = grpc.unary_unary_rpc_method_handler(self._unary(unary))

    def service(
        self, handler_call_details: grpc.HandlerCallDetails
    ) -> grpc.RpcMethodHandler[bytes, bytes] | None:
        return self.handlers.get(handler_call_details.method)

    async def _admit(self, context: Context) -> tuple[tuple[str, str], ...]:
        """Authenticate and rate-limit; the metadata to forward."""
        try:
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
        except ApiError as error:
            await abort(context, error)
        request_id = f"{self._request_prefix}{next(self._request_counter)}"
        return ((PLAYER_METADATA, identity.player_id), (REQUEST_METADATA, request_id))

    @staticmethod
    def _timeout(context: Context) -> float:
        remaining = context.time_remaining()
        return DEFAULT_TIMEOUT if remaining is None else max(0.001, remaining)

    def _unary(self, call: grpc.aio.UnaryUnaryMultiCallable) -> Any:  # type: ignore[type-arg]
        async def forward(request: bytes, context: Context) -> bytes:
            metadata = await self._admit(context)
            try:
                response: bytes = await call(
                    request, metadata=metadata, timeout=self._timeout(context)
                )
            except grpc.aio.AioRpcError as error:
                await context.abort(
                    error.code(), error.details() or "", _passable(error.trailing_metadata())
                )
            return response

        return forward

    def _streaming(self, call: grpc.aio.UnaryStreamMultiCallable) -> Any:  # type: ignore[type-arg]
        async def forward(request: bytes, context: Context) -> AsyncIterator[bytes]:
            metadata = await self._admit(context)
            stream = call(request, metadata=metadata)
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
        auth_name = lobby_pb2.DESCRIPTOR.services_by_name["AuthService"].full_name
        self.base = Server(
            settings.listen, [auth_name, *names], grace_seconds=settings.grace_seconds
        )
        self.base.server.add_generic_rpc_handlers(
            (Proxy(self.issuer, self.limiter, self.channels),)
        )
        lobby_pb2_grpc.add_AuthServiceServicer_to_server(
            AuthServicer(self.issuer, RateLimiter(5.0, 20.0)), self.base.server
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
        for channel in self.channels.values():
            await channel.close()
