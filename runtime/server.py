"""What every gRPC server of the platform shares: health, reflection, graceful shutdown."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import faulthandler
import gc
import inspect
import logging
import os
import signal
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import grpc
import uvloop
from google.protobuf import descriptor_pb2, descriptor_pool
from google.protobuf.message import DecodeError
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection, reflection_pb2, reflection_pb2_grpc
from grpc_reflection.v1alpha._async import ReflectionServicer

from runtime.config import env_float
from runtime.observability import MetricsInterceptor
from runtime.tasks import stop_tasks
from wire.api import NO_BDP_PROBE
from wire.errors import ApiError, abort
from wire.metadata import (
    GUEST_METADATA,
    NAME_METADATA,
    PLAYER_METADATA,
    PRIVATE_METADATA,
    RATED_METADATA,
    REQUEST_METADATA,
    SPONSOR_METADATA,
    Caller,
    rated_of,
)
from wire.proof import doubled, proven

log = logging.getLogger("tabletop")

Context = grpc.aio.ServicerContext[Any, Any]
R = TypeVar("R")

MAX_REQUEST_BYTES = 64 * 1024
"""The largest request the public port (the gateway) takes: requests are small, anything larger
is refused early (RESOURCE_EXHAUSTED, by gRPC itself)."""
SESSION_ALLOWANCE_BYTES = 1024
"""What a player session's Call message adds around a request (call id, method, timeout, bot
seat): the gateway's port takes messages this much larger, and checks each request itself."""
RELAY_ALLOWANCE_BYTES = 8 * 1024
"""What the gateway's relay message adds around a request it took (method, player id and name,
request id, deadline: a few hundred bytes). Internal servers take requests this much larger,
so that a call the gateway accepted never exceeds a service's limit: that would end the whole
relay link it travels on, and with it every call on the link."""

SERVER_OPTIONS: list[tuple[str, int]] = [
    # Two processes must never share a port silently.
    ("grpc.so_reuseport", 0),
    ("grpc.keepalive_time_ms", 30_000),
    ("grpc.http2.max_pings_without_data", 0),
    ("grpc.keepalive_permit_without_calls", 1),
    NO_BDP_PROBE,
]

HEALTH_CHECK_SECONDS = 2.0
"""How often a process checks its dependencies (Redis) for its readiness, and how long one
check may take (HEALTH_CHECK_SECONDS)."""

LIVENESS_SERVICE = "liveness"
"""The health service name that answers SERVING for as long as the process runs and its event
loop answers, whatever its dependencies (Redis) say: what a liveness probe asks. The overall ""
status and each API's name follow the dependencies: what a readiness probe asks."""


@dataclass(frozen=True)
class TlsFiles:
    """A certificate chain and its private key (PEM files) for a port that speaks TLS only."""

    cert_file: str
    key_file: str

    def credentials(self) -> grpc.ServerCredentials:
        try:
            chain = Path(self.cert_file).read_bytes()
            key = Path(self.key_file).read_bytes()
        except OSError as error:
            raise SystemExit(f"cannot read the TLS certificate or key: {error}") from None
        return grpc.ssl_server_credentials([(key, chain)])


MAX_CONNECTION_AGE_SECONDS = 300.0
"""After this long a client's connection is told (HTTP/2 GOAWAY) to take new calls elsewhere:
it reconnects, and its channel resolves the target's name again, so replicas started since
(a Deployment scaled up) get their share. Streams already open on the old connection go on
until they end (Watch streams are not cut; the gateway's relay links move at their own age)."""


def metadata_value(context: Context, key: str) -> str:
    for name, value in context.invocation_metadata() or ():
        if name == key and isinstance(value, str):
            return value
    return ""


def caller_of(context: Context) -> Caller:
    """Who calls: the player and request id the gateway put in the metadata."""
    return Caller(
        metadata_value(context, PLAYER_METADATA),
        metadata_value(context, REQUEST_METADATA),
        metadata_value(context, NAME_METADATA),
        metadata_value(context, SPONSOR_METADATA),
        metadata_value(context, GUEST_METADATA) == "1",
        rated_of(metadata_value(context, RATED_METADATA)),
        metadata_value(context, PRIVATE_METADATA) == "1",
    )


async def answer(call: Awaitable[R], context: Context) -> R:
    """A servicer's answer, or its refusal (an ApiError) as the call's status."""
    try:
        return await call
    except ApiError as error:
        await abort(context, error)


REFLECTION_V1 = "grpc.reflection.v1.ServerReflection"


def _register_reflection_v1() -> None:
    """Put grpc.reflection.v1 in the default descriptor pool, so reflection describes itself.
    grpcio-reflection ships only v1alpha; v1 is the same protocol, message for message and
    field for field, under another package."""
    pool = descriptor_pool.Default()
    try:
        pool.FindServiceByName(REFLECTION_V1)
        return
    except KeyError:
        pass
    file = descriptor_pb2.FileDescriptorProto()
    reflection_pb2.DESCRIPTOR.CopyToProto(file)
    old, new = file.package, "grpc.reflection.v1"
    file.name = "grpc/reflection/v1/reflection.proto"
    file.package = new
    file.ClearField("options")
    for message in file.message_type:
        for field in message.field:
            if field.type_name:
                field.type_name = field.type_name.replace(f".{old}.", f".{new}.")
    for service in file.service:
        for method in service.method:
            method.input_type = method.input_type.replace(f".{old}.", f".{new}.")
            method.output_type = method.output_type.replace(f".{old}.", f".{new}.")
    pool.Add(file)


def enable_reflection(service_names: Sequence[str], server: grpc.aio.Server) -> None:
    """Server reflection, both grpc.reflection.v1 (what current tools ask first) and v1alpha,
    listing `service_names` and the reflection services themselves."""
    _register_reflection_v1()
    servicer = ReflectionServicer([*service_names, REFLECTION_V1, reflection.SERVICE_NAME])
    reflection_pb2_grpc.add_ServerReflectionServicer_to_server(servicer, server)
    # v1 served by the same code: its messages are v1alpha's on the wire.
    server.add_generic_rpc_handlers(
        (
            grpc.method_handlers_generic_handler(
                REFLECTION_V1,
                {
                    "ServerReflectionInfo": grpc.stream_stream_rpc_method_handler(
                        servicer.ServerReflectionInfo,
                        request_deserializer=reflection_pb2.ServerReflectionRequest.FromString,
                        response_serializer=reflection_pb2.ServerReflectionResponse.SerializeToString,
                    )
                },
            ),
        )
    )


class ProofCheck(grpc.aio.ServerInterceptor):
    """Refuses (UNAUTHENTICATED) every call but health and reflection that does not carry a
    good proof from the gateway or the platform's own processes (wire.proof), made for this
    very request: reaching a service's port is not enough to act or read as anyone, and a proof
    seen on the way serves no other request. A call that names an identity field twice is
    refused too. (A stream of requests, the relay, is proven as it opens; each call it carries
    brings its own proof: runtime/relay.py.)"""

    def __init__(self, key: str, accept_unbound: bool = False) -> None:
        self.key = key
        self.accept_unbound = accept_unbound

    async def intercept_service(
        self,
        continuation: Callable[
            [grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler[Any, Any] | None]
        ],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        handler = await continuation(handler_call_details)
        method = handler_call_details.method
        if handler is None or method.startswith("/grpc."):
            return handler
        pairs = [
            (key, value)
            for key, value in handler_call_details.invocation_metadata or ()
            if isinstance(value, str)
        ]
        twice = doubled(pairs)
        if twice is not None:
            return _refusing(handler, _unproven(f"the call names {twice} twice"))
        metadata = dict(pairs)
        if handler.request_streaming:
            wrong = proven(self.key, method, metadata, accept_unbound=self.accept_unbound)
            return handler if wrong is None else _refusing(handler, _unproven(wrong))
        return _checking_body(handler, self, method, metadata)


def _unproven(wrong: str) -> ApiError:
    return ApiError(
        "UNAUTHENTICATED",
        f"this service takes calls from the platform's gateway only ({wrong}); "
        "players call the gateway",
    )


def _checking_body(
    handler: grpc.RpcMethodHandler[Any, Any],
    checks: ProofCheck,
    method: str,
    metadata: dict[str, str],
) -> grpc.RpcMethodHandler[Any, Any]:
    """`handler`, taking its request as bytes to check that the proof covers them before it
    reads them (a proof's digest is of the bytes as sent)."""
    deserialize = handler.request_deserializer or (lambda raw: raw)
    # The aio server's handlers: coroutines and async generators of (request, aio context).
    behaviours: Any = handler

    async def request_of(raw: bytes, context: Context) -> Any:
        wrong = proven(checks.key, method, metadata, body=raw, accept_unbound=checks.accept_unbound)
        if wrong is not None:
            await abort(context, _unproven(wrong))
        try:
            return deserialize(raw)
        except DecodeError:
            await abort(
                context, ApiError("INVALID_ARGUMENT", f"the request is not a {method} request")
            )

    if handler.unary_unary is not None:
        behaviour = behaviours.unary_unary

        async def unary(raw: bytes, context: Context) -> Any:
            return await behaviour(await request_of(raw, context), context)

        return grpc.unary_unary_rpc_method_handler(
            unary, response_serializer=handler.response_serializer
        )
    assert handler.unary_stream is not None
    streaming = behaviours.unary_stream

    async def stream(raw: bytes, context: Context) -> AsyncIterator[Any]:
        async for message in streaming(await request_of(raw, context), context):
            yield message

    return grpc.unary_stream_rpc_method_handler(
        stream, response_serializer=handler.response_serializer
    )


def _refusing(
    handler: grpc.RpcMethodHandler[Any, Any], error: ApiError
) -> grpc.RpcMethodHandler[Any, Any]:
    """A handler of the same kind as `handler` that answers `error` and reads nothing."""

    async def unary(request: Any, context: Context) -> Any:
        await abort(context, error)

    async def stream(request: Any, context: Context) -> Any:
        await abort(context, error)
        yield  # an async generator, as streaming handlers are

    if handler.unary_unary is not None:
        return grpc.unary_unary_rpc_method_handler(unary)
    if handler.unary_stream is not None:
        return grpc.unary_stream_rpc_method_handler(stream)
    if handler.stream_unary is not None:
        return grpc.stream_unary_rpc_method_handler(unary)
    return grpc.stream_stream_rpc_method_handler(stream)


@dataclass(frozen=True)
class OpenStreams:
    """Bounds on the streams a public port serves without a token (health Watch, reflection):
    per connection, per client address and in all."""

    per_connection: int = 4
    per_address: int = 16
    total: int = 1000


_OPEN_METHODS = ("/grpc.health.v1.Health/Watch", "/grpc.reflection.")


class BoundOpenStreams(grpc.aio.ServerInterceptor):
    """Refuses (LIMIT_REACHED) a stream that needs no token beyond `OpenStreams`: without it,
    anyone could hold thousands of health watches open and take the gateway's memory."""

    def __init__(self, bounds: OpenStreams) -> None:
        self.bounds = bounds
        self.by_connection: collections.Counter[str] = collections.Counter()
        self.by_address: collections.Counter[str] = collections.Counter()
        self.total = 0

    async def intercept_service(
        self,
        continuation: Callable[
            [grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler[Any, Any] | None]
        ],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        handler = await continuation(handler_call_details)
        if handler is None or not handler.response_streaming:
            return handler
        if not handler_call_details.method.startswith(_OPEN_METHODS):
            return handler
        return self._bounded(handler)

    def _enter(self, context: Context) -> tuple[str, str] | None:
        connection = context.peer() or ""
        address = connection.rsplit(":", 1)[0]
        bounds = self.bounds
        if (
            self.by_connection[connection] >= bounds.per_connection
            or self.by_address[address] >= bounds.per_address
            or self.total >= bounds.total
        ):
            return None
        self.by_connection[connection] += 1
        self.by_address[address] += 1
        self.total += 1
        return connection, address

    def _leave(self, where: tuple[str, str]) -> None:
        connection, address = where
        for counter, key in ((self.by_connection, connection), (self.by_address, address)):
            counter[key] -= 1
            if counter[key] <= 0:
                del counter[key]
        self.total -= 1

    def _bounded(self, handler: grpc.RpcMethodHandler[Any, Any]) -> grpc.RpcMethodHandler[Any, Any]:
        behaviours: Any = handler
        streaming = behaviours.unary_stream or behaviours.stream_stream
        refusal = ApiError(
            "LIMIT_REACHED",
            f"too many open streams that need no token (health, reflection): at most "
            f"{self.bounds.per_connection} a connection, {self.bounds.per_address} an address",
            limit="open_streams",
            max=str(self.bounds.per_address),
        )

        if inspect.isasyncgenfunction(streaming):

            async def generator(request: Any, context: Context) -> AsyncIterator[Any]:
                where = self._enter(context)
                if where is None:
                    await abort(context, refusal)
                try:
                    async for message in streaming(request, context):
                        yield message
                finally:
                    self._leave(where)

            wrapped: Any = generator
        else:

            async def coroutine(request: Any, context: Context) -> Any:
                where = self._enter(context)
                if where is None:
                    await abort(context, refusal)
                try:
                    return await streaming(request, context)
                finally:
                    self._leave(where)

            wrapped = coroutine
        make = (
            grpc.unary_stream_rpc_method_handler
            if handler.unary_stream is not None
            else grpc.stream_stream_rpc_method_handler
        )
        return make(
            wrapped,
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )


class Server:
    """A grpc.aio server with the standard health and reflection services.

    `service_names` are the full names of the services it offers; health reports each of them
    (and the overall "" status) SERVING while `ready()` is true, checked every `check_interval`
    (default HEALTH_CHECK_SECONDS, from the environment); a check that takes longer than that
    counts as not ready.
    """

    def __init__(
        self,
        listen: str,
        service_names: Sequence[str],
        *,
        ready: Callable[[], Awaitable[bool]] | None = None,
        check_interval: float | None = None,
        grace_seconds: float = 10.0,
        max_connection_age: float = MAX_CONNECTION_AGE_SECONDS,
        max_request_bytes: int = MAX_REQUEST_BYTES + RELAY_ALLOWANCE_BYTES,
        internal_key: str = "",
        tls: TlsFiles | None = None,
        health_listen: str = "",
        open_streams: OpenStreams | None = None,
        reflection: bool = True,
        accept_unbound_proofs: bool = False,
    ) -> None:
        """`max_request_bytes`: the public port's MAX_REQUEST_BYTES at the gateway; internal
        servers (the default) allow for the relay's wrapping on top. `internal_key`: every
        call but health and reflection must carry a proof made with it (wire.proof); empty
        for the gateway's public port and for processes that serve health only. `tls`: the
        port speaks TLS only, with this certificate. `health_listen`: a second, plaintext
        port that serves the health service only (for probes that cannot speak TLS).
        `open_streams`: bounds on the streams served without a token (a public port).
        `reflection`: serve reflection (off: clients load the protos themselves).
        `accept_unbound_proofs`: take older processes' proofs too, during an upgrade
        (wire.proof)."""
        checks: list[grpc.aio.ServerInterceptor] = (
            [ProofCheck(internal_key, accept_unbound_proofs)] if internal_key else []
        )
        if open_streams is not None:
            checks.append(BoundOpenStreams(open_streams))
        self.server = grpc.aio.server(
            options=[
                *SERVER_OPTIONS,
                ("grpc.max_receive_message_length", max_request_bytes),
                ("grpc.max_connection_age_ms", int(max_connection_age * 1000)),
            ],
            interceptors=[*checks, MetricsInterceptor()],
        )
        self.health = health.aio.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self.server)
        self.service_names = list(service_names)
        if reflection:
            enable_reflection(
                [*self.service_names, health_pb2.DESCRIPTOR.services_by_name["Health"].full_name],
                self.server,
            )
        if tls is None:
            self.port = self.server.add_insecure_port(listen)
        else:
            self.port = self.server.add_secure_port(listen, tls.credentials())
        if self.port == 0:
            raise SystemExit(f"cannot listen on {listen}: the address is taken or invalid")
        self.health_server: grpc.aio.Server | None = None
        self.health_port = 0
        if health_listen:
            self.health_server = grpc.aio.server(options=SERVER_OPTIONS)
            health_pb2_grpc.add_HealthServicer_to_server(self.health, self.health_server)
            self.health_port = self.health_server.add_insecure_port(health_listen)
            if self.health_port == 0:
                raise SystemExit(f"cannot listen on {health_listen}: taken or invalid")
        self._ready = ready
        self._check_interval = (
            env_float("HEALTH_CHECK_SECONDS", HEALTH_CHECK_SECONDS)
            if check_interval is None
            else check_interval
        )
        self._grace = grace_seconds
        self._checker: asyncio.Task[None] | None = None
        self._stopping = False
        self.on_stop: list[Callable[[], Awaitable[None]]] = []
        """Run when stopping begins: health says NOT_SERVING, new calls are refused, the calls in
        flight have their grace period."""

    async def _set_all(self, serving: bool) -> None:
        status = (
            health_pb2.HealthCheckResponse.SERVING
            if serving
            else health_pb2.HealthCheckResponse.NOT_SERVING
        )
        for name in ["", *self.service_names]:
            await self.health.set(name, status)

    async def _probe(self) -> bool:
        """Whether the dependencies answer; a failure (Redis away, refusing our password) is
        "not ready", never the process's end: the probes keep asking."""
        if self._ready is None:
            return True
        try:
            return await asyncio.wait_for(self._ready(), timeout=self._check_interval)
        except Exception:
            return False

    async def _check_loop(self) -> None:
        last: bool | None = None
        while not self._stopping:
            ok = await self._probe()
            if ok != last and not self._stopping:
                await self._set_all(ok)
                if last is not None:
                    log.warning("health changed", extra={"serving": ok})
                last = ok
            await asyncio.sleep(self._check_interval)

    async def start(self) -> None:
        await self.server.start()
        if self.health_server is not None:
            await self.health_server.start()
        await self.health.set(LIVENESS_SERVICE, health_pb2.HealthCheckResponse.SERVING)
        await self._set_all(False)
        if await self._probe():
            await self._set_all(True)
        self._checker = asyncio.create_task(self._check_loop())

    async def stop(self, grace: float | None = None) -> None:
        """Graceful: health says NOT_SERVING first, in-flight calls get `grace` seconds."""
        self._stopping = True
        if self._checker is not None:
            await stop_tasks([self._checker])
        await self.health.enter_graceful_shutdown()
        # New calls are refused from here on while the hooks run (calls in flight go on).
        stopped = asyncio.create_task(self.server.stop(self._grace if grace is None else grace))
        for hook in self.on_stop:
            await hook()
        await stopped
        if self.health_server is not None:
            await self.health_server.stop(0)

    async def serve_until_signal(self) -> None:
        """Once started: run until SIGTERM or SIGINT, then stop gracefully."""
        await wait_for_signal(self._grace)
        log.info("stopping", extra={"grace_seconds": self._grace})
        await self.stop()


STOP_MARGIN_SECONDS = 5.0
"""What a process may take, beyond its grace period for calls in flight, to finish stopping
(drain notices, background tasks, closing its Redis client) before it exits regardless
(STOP_MARGIN_SECONDS). Kubernetes' terminationGracePeriodSeconds must cover the preStop pause,
GRACE_SECONDS and this."""


async def wait_for_signal(grace_seconds: float) -> None:
    """Return on the first SIGTERM or SIGINT, the process's end then guaranteed: stopping may
    take `grace_seconds` plus STOP_MARGIN_SECONDS; a process still stopping after that (its
    Redis unreachable and some step waiting on it, say) logs where each thread is and exits
    with code 1 (`exit_if_stopping_overruns`)."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    exit_if_stopping_overruns(grace_seconds + env_float("STOP_MARGIN_SECONDS", STOP_MARGIN_SECONDS))


def exit_if_stopping_overruns(seconds: float) -> None:
    """From now on, the process has `seconds` to end by itself; then it exits at once, having
    logged where its threads and tasks were. A thread of its own keeps the time, so a blocked
    event loop cannot hold the process up."""
    loop = asyncio.get_running_loop()

    def overran() -> None:
        log.error("stopping took too long: exiting now", extra={"after_seconds": seconds})
        faulthandler.dump_traceback(all_threads=True)
        dumped = threading.Event()

        def dump_tasks() -> None:
            sys.stderr.write(where_tasks_are(loop))
            dumped.set()

        with contextlib.suppress(RuntimeError):  # the loop is closed
            loop.call_soon_threadsafe(dump_tasks)
            dumped.wait(1.0)  # unless the loop itself is blocked
        os._exit(1)

    timer = threading.Timer(seconds, overran)
    timer.daemon = True
    timer.start()


def where_tasks_are(loop: asyncio.AbstractEventLoop | None = None) -> str:
    """Every task of the loop and the chain of awaits it is suspended in, innermost last: what
    a stop that does not end is waiting for."""
    lines = []
    for task in asyncio.all_tasks(loop):
        lines.append(f"task {task.get_name()}:")
        lines += awaiting(task.get_coro())
    return "\n".join(lines) + "\n"


def awaiting(step: Any) -> list[str]:
    """Where a suspended coroutine (or async generator) waits: the chain of its awaits,
    innermost last."""
    lines = []
    while step is not None:
        frame = getattr(step, "cr_frame", None) or getattr(step, "ag_frame", None)
        frame = frame or getattr(step, "gi_frame", None)
        if frame is not None:
            code = frame.f_code
            lines.append(f"  {code.co_filename}:{frame.f_lineno} in {code.co_name}")
        elif not hasattr(step, "cr_await"):
            lines.append(f"  awaiting {step!r}"[:200])
        step = (
            getattr(step, "cr_await", None)
            or getattr(step, "ag_await", None)
            or getattr(step, "gi_yieldfrom", None)
        )
    return lines


async def finish(task: asyncio.Task[None], seconds: float) -> None:
    """Give a worker's loop (told to stop) `seconds` to finish the work in hand, then cancel
    it: what it took and did not acknowledge is taken over by another process, as after a
    crash. Its error, if it ended with one, is raised."""
    done, _ = await asyncio.wait({task}, timeout=seconds)
    if done:
        task.result()
        return
    log.warning("work in hand cancelled at the end of the grace period")
    await stop_tasks([task])


GC_THRESHOLD = (50_000, 20, 100)
"""Python's garbage collector, tuned for long-lived servers: a process holding thousands of
streams has a large heap, and a full collection walks all of it (a pause of a fraction of a
second every few seconds at the default thresholds); these make collections rarer."""


def run(main: Coroutine[Any, Any, None]) -> None:
    """Run a server's main coroutine on uvloop (measurably faster here: see `make bench`)."""
    gc.set_threshold(*GC_THRESHOLD)
    uvloop.run(main)
