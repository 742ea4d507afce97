"""The web edge: the gateway's public API for browsers (the Connect protocol and gRPC-Web, over
HTTP/1.1), and the web client's files, on a port of its own (WEB_LISTEN).

Each call takes the gateway's own steps (gateway/routing.py, gateway/server.py): a routed call
the token check, the rate limit, an API token's scopes, a new request id and the same relay
link or backend stream (`Proxy`); an AuthService call the same `AuthServicer` code. So it ends
with the answer, status and error reason a gRPC call would (the reason in the Connect error's
details, as google.rpc.ErrorInfo). Requests and answers pass through as bytes; JSON, which the
Connect protocol allows too, is turned into bytes and back with the message's type. The
protocol work is the `connectrpc` package's; uvicorn serves it.

Bounds: requests up to the gateway's MAX_REQUEST_BYTES; streams count against the player's
open streams as gRPC ones do; connections at once (WEB_MAX_CONNECTIONS, beyond: 503). Browsers
of other origins may call only when WEB_ORIGINS names theirs (the web client is served from
this port, same origin, and needs none).
"""

from __future__ import annotations

import asyncio
import contextlib
import mimetypes
import posixpath
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import grpc
import uvicorn
from connectrpc.code import Code
from connectrpc.errors import ConnectError, ErrorDetail
from connectrpc.method import IdempotencyLevel, MethodInfo, StreamType
from connectrpc.request import RequestContext
from connectrpc.server import ConnectASGIApplication, Endpoint
from google.protobuf import json_format, message_factory
from google.protobuf.descriptor import MethodDescriptor
from google.protobuf.message import Message
from google.rpc import status_pb2
from protobuf.wkt import Any as AnyDetail

from gateway.auth import Identity
from gateway.routing import Proxy, Route, too_large
from gateway.server import AuthServicer
from runtime.relay import CODES
from runtime.server import MAX_REQUEST_BYTES, TlsFiles
from tabletop.lobby.v1 import lobby_pb2
from wire.errors import ApiError

MAX_CONNECTIONS = 1000
"""Connections the web port serves at once (WEB_MAX_CONNECTIONS); one more is answered 503."""

AUTH = lobby_pb2.DESCRIPTOR.services_by_name["AuthService"]

SECURITY_HEADERS = [
    (b"content-security-policy",
     b"default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
     b"connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
]  # fmt: skip
"""Every file served: the page loads nothing from elsewhere and may not be framed."""


@dataclass(frozen=True)
class WebSettings:
    listen: str
    """host:port (port 0: any free one)."""
    root: str = ""
    """The web client's built files (served at /); empty: the API only."""
    origins: Sequence[str] = ()
    """Other origins whose pages may call the API (CORS); the web client needs none."""
    tls: TlsFiles | None = None
    max_connections: int = MAX_CONNECTIONS


@dataclass(frozen=True, slots=True)
class Encoded:
    """A message as bytes, with its type (for the JSON codec)."""

    data: bytes
    message: type[Message]


class _Binary:
    """The protobuf binary codec, without parsing: bytes in, bytes out."""

    def name(self) -> str:
        return "proto"

    def encode(self, message: Encoded) -> bytes:
        return message.data

    def decode(self, data: bytes | bytearray, message_class: type[Message]) -> bytes:
        return bytes(data)


class _Json:
    """The protobuf JSON codec, to and from bytes."""

    def name(self) -> str:
        return "json"

    def encode(self, message: Encoded) -> bytes:
        parsed = message.message.FromString(message.data)
        return json_format.MessageToJson(parsed, indent=None).encode()

    def decode(self, data: bytes | bytearray, message_class: type[Message]) -> bytes:
        message = message_class()
        json_format.Parse(bytes(data), message, ignore_unknown_fields=True)
        return message.SerializeToString()


def connect_error(code: int | grpc.StatusCode, details: str, trailers: Iterable[Any]) -> Exception:
    """A gRPC status as the Connect error that says the same: its code, message, and the
    details of its `grpc-status-details-bin` (the error reason among them)."""
    status_code = code if isinstance(code, grpc.StatusCode) else CODES[code]
    found = []
    for key, value in trailers:
        if key == "grpc-status-details-bin":
            status = status_pb2.Status.FromString(value)
            found += [ErrorDetail(AnyDetail(type_url=d.type_url, value=d.value))
                      for d in status.details]  # fmt: skip
    name = "canceled" if status_code == grpc.StatusCode.CANCELLED else status_code.name.lower()
    return ConnectError(Code(name), details, found)


def refused(error: ApiError) -> Exception:
    status = error.to_status()
    return connect_error(status.code, status.details, status.trailing_metadata)


class _Aborted(Exception):
    pass


class _EdgeContext:
    """What AuthServicer reads of a gRPC call's context, for a call that came over HTTP."""

    def __init__(self, context: RequestContext[Any, Any]) -> None:
        self._context = context

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return tuple(self._context.request_headers.allitems())

    def peer(self) -> str:
        address = self._context.client_address or ""
        host, _, port = address.rpartition(":")
        return f"ipv6:[{host}]:{port}" if ":" in host else f"ipv4:{host}:{port}"

    def time_remaining(self) -> float | None:
        remaining = self._context.timeout_ms
        return None if remaining is None else max(0.0, remaining / 1000)

    async def abort(
        self, code: grpc.StatusCode, details: str = "", trailing_metadata: Any = ()
    ) -> NoReturn:
        raise connect_error(code, details, trailing_metadata)


def _type(descriptor: Any) -> type[Message]:
    return message_factory.GetMessageClass(descriptor)


def _method(service: str, method: MethodDescriptor) -> MethodInfo[bytes, Encoded]:
    streaming = method.server_streaming
    return MethodInfo(
        name=method.name,
        service_name=service,
        input=_type(method.input_type),  # type: ignore[arg-type]  # the codecs' business
        output=_type(method.output_type),  # type: ignore[arg-type]
        idempotency_level=IdempotencyLevel.UNKNOWN,
        stream_type=StreamType.SERVER_STREAM if streaming else StreamType.UNARY,
    )


class _Api(ConnectASGIApplication[None]):
    """Every public method of the gateway, at its gRPC path."""

    def __init__(self, endpoints: Mapping[str, Any]) -> None:
        """`endpoints`: by path, each made by `Endpoint.unary` or `Endpoint.server_stream`."""
        super().__init__(
            service=None,
            endpoints=lambda _service: endpoints,
            read_max_bytes=MAX_REQUEST_BYTES,
            codecs=[_Binary(), _Json()],
        )

    @property
    def path(self) -> str:
        return "/"


class WebEdge:
    """The web port: the API (`_Api`) and the web client's files."""

    def __init__(self, proxy: Proxy, auth: AuthServicer, settings: WebSettings) -> None:
        self.proxy = proxy
        self.auth = auth
        self.settings = settings
        endpoints: dict[str, Any] = {}
        for path, route in proxy.routes.items():
            method = route.backend.descriptor.methods_by_name[route.method]
            info = _method(route.backend.descriptor.full_name, method)
            output = _type(method.output_type)
            if route.streaming:
                endpoints[path] = Endpoint.server_stream(info, self._streamed(route, output))
            else:
                endpoints[path] = Endpoint.unary(info, self._routed(route, output))
        for method in AUTH.methods:
            info = _method(AUTH.full_name, method)
            endpoints[f"/{AUTH.full_name}/{method.name}"] = Endpoint.unary(
                info, self._authenticated(method)
            )
        self.api = _Api(endpoints)
        self.paths = frozenset(endpoints)
        self.files = _Files(Path(settings.root)) if settings.root else None
        self._server: _Server | None = None
        self._task: asyncio.Task[None] | None = None

    # -- the calls --------------------------------------------------------------------------

    def _caller(self, context: RequestContext[Any, Any]) -> Identity:
        """Who calls, admitted as a gRPC call is (`Guard.admit`: token, bot seat, rate limit)."""
        try:
            return self.proxy.guard.admit(_EdgeContext(context))  # type: ignore[arg-type]
        except ApiError as error:
            raise refused(error) from None

    def _seconds(self, context: RequestContext[Any, Any]) -> float:
        remaining = context.timeout_ms
        limit = self.proxy.call_timeout_seconds
        return limit if remaining is None else max(0.001, min(remaining / 1000, limit))

    def _routed(
        self, route: Route, output: type[Message]
    ) -> Callable[[bytes, RequestContext[Any, Any]], Awaitable[Encoded]]:
        async def call(request: bytes, context: RequestContext[Any, Any]) -> Encoded:
            if len(request) > MAX_REQUEST_BYTES:
                raise ConnectError(Code.RESOURCE_EXHAUSTED, too_large(request))
            identity = self._caller(context)
            try:
                request_id = self.proxy.permit(identity, route)
                answer = await self.proxy.call(
                    identity, route, request, request_id, self._seconds(context)
                )
            except ApiError as error:
                raise refused(error) from None
            if answer.code:
                trailers = [(t.key, t.value) for t in answer.trailers]
                raise connect_error(answer.code, answer.details, trailers)
            return Encoded(answer.response, output)

        return call

    def _streamed(
        self, route: Route, output: type[Message]
    ) -> Callable[[bytes, RequestContext[Any, Any]], AsyncIterator[Encoded]]:
        async def call(request: bytes, context: RequestContext[Any, Any]) -> AsyncIterator[Encoded]:
            identity = self._caller(context)
            try:
                request_id = self.proxy.permit(identity, route)
                with self.proxy.stream_slot(identity.player_id):
                    messages = self.proxy.stream(identity, route, request, request_id)
                    async with contextlib.aclosing(messages):
                        async for message in messages:
                            yield Encoded(message, output)
            except ApiError as error:
                raise refused(error) from None
            except grpc.aio.AioRpcError as error:
                trailers = [(k, v) for k, v in error.trailing_metadata() or ()]
                raise connect_error(error.code(), error.details() or "", trailers) from None

        return call

    def _authenticated(
        self, method: MethodDescriptor
    ) -> Callable[[bytes, RequestContext[Any, Any]], Awaitable[Encoded]]:
        handler = getattr(self.auth, method.name)
        parse, output = _type(method.input_type), _type(method.output_type)

        async def call(request: bytes, context: RequestContext[Any, Any]) -> Encoded:
            answer = await handler(parse.FromString(request), _EdgeContext(context))
            return Encoded(answer.SerializeToString(), output)

        return call

    # -- HTTP -------------------------------------------------------------------------------

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        origin = _header(scope, b"origin")
        allowed = origin is not None and origin.decode("latin-1") in self.settings.origins
        if scope["path"] in self.paths:
            if scope["method"] == "OPTIONS":
                await _preflight(send, origin if allowed else None)
                return
            await self.api(scope, receive, _cors(send, origin) if allowed else send)
        elif self.files is not None and scope["method"] in ("GET", "HEAD"):
            await self.files.serve(scope, send)
        else:
            await _plain(send, 404, b"not found\n")

    @property
    def port(self) -> int:
        assert self._server is not None, "not started"
        port: int = self._server.servers[0].sockets[0].getsockname()[1]
        return port

    async def start(self) -> None:
        host, _, port = self.settings.listen.rpartition(":")
        tls = self.settings.tls
        config = uvicorn.Config(
            self,
            host=host.strip("[]") or "0.0.0.0",
            port=int(port),
            loop="none",
            http="httptools",
            lifespan="off",
            log_config=None,
            access_log=False,
            proxy_headers=False,  # who calls: TRUSTED_PROXIES decides, as on the gRPC port
            server_header=False,
            limit_concurrency=self.settings.max_connections,
            timeout_keep_alive=30,
            ssl_certfile=tls.cert_file if tls else None,
            ssl_keyfile=tls.key_file if tls else None,
        )
        self._server = _Server(config)
        self._task = asyncio.create_task(self._server.serve(), name="web-edge")
        while not self._server.started:
            if self._task.done():
                self._task.result()  # its error (the port taken, say)
                raise RuntimeError("the web edge stopped as it started")
            await asyncio.sleep(0.01)

    async def stop(self) -> None:
        if self._server is None or self._task is None:
            return
        self._server.should_exit = True
        await self._task


class _Server(uvicorn.Server):
    """uvicorn on the gateway's event loop: the process's own signal handling stays."""

    @contextlib.contextmanager
    def capture_signals(self) -> Any:
        yield


class _Files:
    """The web client's files: what the build put in `root`, `index.html` for `/`."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()

    async def serve(self, scope: Any, send: Any) -> None:
        path = posixpath.normpath(scope["path"]).lstrip("/") or "index.html"
        file = (self.root / path).resolve()
        if not file.is_relative_to(self.root) or not file.is_file():
            await _plain(send, 404, b"not found\n")
            return
        body = await asyncio.to_thread(file.read_bytes)
        kind = mimetypes.guess_type(file.name)[0] or "application/octet-stream"
        cache = b"no-cache" if file.name == "index.html" else b"public, max-age=300"
        headers = [
            (b"content-type", kind.encode() + (b"; charset=utf-8" if kind.startswith("text/")
                                                or kind.endswith("javascript") else b"")),
            (b"content-length", str(len(body)).encode()),
            (b"cache-control", cache),
            *SECURITY_HEADERS,
        ]  # fmt: skip
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b"" if scope["method"] == "HEAD"
                    else body})  # fmt: skip


def _header(scope: Any, name: bytes) -> bytes | None:
    return next((value for key, value in scope["headers"] if key == name), None)


async def _plain(send: Any, status: int, body: bytes) -> None:
    headers = [(b"content-type", b"text/plain; charset=utf-8"), *SECURITY_HEADERS]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


CORS_HEADERS = b"authorization, content-type, connect-protocol-version, connect-timeout-ms, " \
    b"grpc-timeout, x-grpc-web, x-user-agent"  # fmt: skip
CORS_EXPOSED = b"grpc-status, grpc-message, grpc-status-details-bin"


async def _preflight(send: Any, origin: bytes | None) -> None:
    if origin is None:
        await _plain(send, 403, b"this origin may not call the API\n")
        return
    headers = [
        (b"access-control-allow-origin", origin),
        (b"access-control-allow-methods", b"POST, GET"),
        (b"access-control-allow-headers", CORS_HEADERS),
        (b"access-control-max-age", b"7200"),
        (b"vary", b"origin"),
    ]
    await send({"type": "http.response.start", "status": 204, "headers": headers})
    await send({"type": "http.response.body", "body": b""})


def _cors(send: Any, origin: bytes | None) -> Callable[[Any], Awaitable[None]]:
    async def sending(message: Any) -> None:
        if message["type"] == "http.response.start" and origin is not None:
            message = {**message, "headers": [
                *message.get("headers", []),
                (b"access-control-allow-origin", origin),
                (b"access-control-expose-headers", CORS_EXPOSED),
                (b"vary", b"origin"),
            ]}  # fmt: skip
        await send(message)

    return sending
