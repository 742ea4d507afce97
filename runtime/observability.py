"""Logs and metrics: one JSON line per event worth logging; Prometheus metrics on METRICS_PORT."""

from __future__ import annotations

import functools
import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
from google.protobuf.message import DecodeError
from prometheus_client import Counter, Gauge, Histogram, start_http_server

from wire.errors import ApiError, abort

RPC_SECONDS = Histogram(
    "tabletop_rpc_seconds",
    "gRPC calls served, by method and status code, and how long they took",
    ["method", "code"],
    buckets=(0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0),
)


@functools.cache
def rpc_seconds(method: str, code: str) -> Any:
    """RPC_SECONDS's series of `method` and `code`, its labels looked up once (both come from
    small fixed sets: the methods served, gRPC's codes)."""
    return RPC_SECONDS.labels(method, code)


MOVES = Counter(
    "tabletop_moves_total",
    "Moves (and resignations) by game and outcome: accepted, or the reason they were refused",
    ["game", "outcome"],
)
GAMES_CREATED = Counter("tabletop_games_created_total", "Games created", ["game"])
GAMES_FINISHED = Counter("tabletop_games_finished_total", "Games finished", ["game"])
ACTIVE_GAMES = Gauge(
    "tabletop_active_games", "Games created and not finished (platform-wide, from Redis)", ["game"]
)
BOT_JOBS = Counter(
    "tabletop_bot_jobs_total",
    "Bot-turn jobs handled, by game and outcome (played, passed, stale, refused, retry, error)",
    ["game", "outcome"],
)
BOT_THINK_SECONDS = Histogram(
    "tabletop_bot_think_seconds",
    "Time a bot took to choose its move",
    ["game", "level"],
    buckets=(0.0001, 0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0),
)
STREAM_LAG = Gauge(
    "tabletop_stream_lag",
    "Entries of a stream not yet delivered to its consumer group (XINFO GROUPS lag)",
    ["stream", "group"],
)
STREAM_PENDING = Gauge(
    "tabletop_stream_pending",
    "Entries delivered to a consumer group and not yet acknowledged",
    ["stream", "group"],
)
MATCHES = Counter(
    "tabletop_matches_total", "Games the matchmaker formed, by game and kind", ["game", "kind"]
)
TIMEOUTS = Counter(
    "tabletop_timeouts_total",
    "What the platform applied at a deadline, by game and kind (forfeit, bot, abort)",
    ["game", "kind"],
)
TIMEOUT_LATENESS = Histogram(
    "tabletop_timeout_lateness_seconds",
    "How long after its deadline a timeout or abort was applied",
    ["game"],
    buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0),
)
REPLICATION_LATE = Counter(
    "tabletop_replication_late_total",
    "Writes answered UNAVAILABLE because fewer Redis replicas than REDIS_WAIT_REPLICAS held "
    "them in time",
)
PRIMARY_UNCONFIRMED = Counter(
    "tabletop_primary_unconfirmed_total",
    "Writes answered UNAVAILABLE because the Sentinels did not confirm the node they were "
    "written to as the primary (a partition, or a failover under way)",
)
COMMIT_BATCH = Histogram(
    "tabletop_commit_batch_size",
    "Writes to a game sent to Redis together, in one round trip (runtime/group_commit.py)",
    buckets=(1, 2, 4, 8, 16, 32, 64, 128, 256),
)
RELAY_FRAME = Histogram(
    "tabletop_relay_frame_size",
    "Calls (direction=calls) or answers (direction=answers) in one frame of a relay link "
    "(RelayFrames), as the service receives and sends them (runtime/relay.py)",
    ["direction"],
    buckets=(1, 2, 4, 8, 16, 32, 64, 128),
)
WATCHERS = Gauge("tabletop_watchers", "Watch streams open on this process", ["game"])

_STANDARD = set(logging.makeLogRecord({}).__dict__) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    """{"time", "level", "service", "event", ...fields given as `extra`}."""

    def __init__(self, service: str) -> None:
        super().__init__()
        self.service = service

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "service": self.service,
            "event": record.getMessage(),
        }
        line.update((k, v) for k, v in record.__dict__.items() if k not in _STANDARD)
        if record.exc_info:
            line["error"] = self.formatException(record.exc_info)
        return json.dumps(line, default=str)


def configure_logging(service: str) -> None:
    handler = logging.StreamHandler()
    handler.setFormatter(JsonFormatter(service))
    logging.basicConfig(level=logging.INFO, handlers=[handler], force=True)


def serve_metrics(port: int) -> None:
    """Expose /metrics on `port` (0: off)."""
    if port:
        start_http_server(port)


Behavior = Callable[..., Any]


def _code(context: grpc.aio.ServicerContext[Any, Any], failed: bool) -> str:
    code = context.code()
    if isinstance(code, grpc.StatusCode):
        return code.name
    return "UNKNOWN" if failed else "OK"


class MetricsInterceptor(grpc.aio.ServerInterceptor):
    """Times every unary and server-streaming call into tabletop_rpc_seconds. Each method's
    timed handler is made once and reused (this runs on every call)."""

    def __init__(self) -> None:
        self._timed: dict[tuple[str, int], grpc.RpcMethodHandler[Any, Any]] = {}

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
        key = (method, id(handler))
        timed = self._timed.get(key)
        if timed is None:
            timed = self._timed[key] = _timed_handler(method, handler)
        return timed


def _timed_handler(
    method: str, handler: grpc.RpcMethodHandler[Any, Any]
) -> grpc.RpcMethodHandler[Any, Any]:
    # The timed behaviour parses the request itself: grpc answers bytes that do not parse with
    # UNKNOWN, like a server error; they are the caller's mistake (INVALID_ARGUMENT).
    parse = handler.request_deserializer
    if handler.unary_unary is not None:
        return grpc.unary_unary_rpc_method_handler(
            timed_unary(method, handler.unary_unary, parse),
            response_serializer=handler.response_serializer,
        )
    if handler.unary_stream is not None:
        return grpc.unary_stream_rpc_method_handler(
            _timed_stream(method, handler.unary_stream, parse),
            response_serializer=handler.response_serializer,
        )
    return handler


async def _parsed(
    method: str, parse: Behavior | None, request: Any, context: grpc.aio.ServicerContext[Any, Any]
) -> Any:
    if parse is None:
        return request
    try:
        return parse(request)
    except DecodeError:
        await abort(context, ApiError("INVALID_ARGUMENT", f"the request is not a {method} request"))


def timed_unary(method: str, behavior: Behavior, parse: Behavior | None) -> Behavior:
    """`behavior` (a unary method) parsing its request and timed into tabletop_rpc_seconds; for
    direct calls and for calls relayed over the gateway's links alike."""

    async def timed(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        start = time.perf_counter()
        failed = True
        try:
            response = await behavior(await _parsed(method, parse, request, context), context)
            failed = False
            return response
        finally:
            rpc_seconds(method, _code(context, failed)).observe(time.perf_counter() - start)

    return timed


def _timed_stream(method: str, behavior: Behavior, parse: Behavior | None) -> Behavior:
    async def timed(
        request: Any, context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[Any]:
        start = time.perf_counter()
        failed = True
        try:
            parsed = await _parsed(method, parse, request, context)
            async for message in behavior(parsed, context):
                yield message
            failed = False
        finally:
            rpc_seconds(method, _code(context, failed)).observe(time.perf_counter() - start)

    return timed
