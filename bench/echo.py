"""Bare grpc.aio servers that do no work: the baselines ours is measured against. Their servers
and channels leave out HTTP/2's bandwidth probes, as the platform's do (wire.api.NO_BDP_PROBE).

`python -m bench.echo PORT` answers the unary echo (`make bench`'s gateway section compares a
Play's latency with it) and a bidirectional stream that answers each message with itself.
`--redis URL` makes the stream store each message in Redis first (one EVALSHA of a script that
writes it, on a server with appendonly: the least a durable move costs). `--relay HOST:PORT`
makes the stream pass each message on, over a stream of its own, to that server and answer with
its answer (what the gateway does with a session's move). Client → relay → echo with Redis is the
shape of our hot path (gateway, game service, Redis) with none of its work: no server of this
shape can answer moves faster than it (bench/versus.py, "the shape's floor").

`--batched` makes the relay pass every stream's messages on ONE stream of frames to the echo
server, one frame on its way at a time: a lone message goes at once, and the messages that come
while a frame is on its way go together in the next. The echo server stores a frame's messages
in one Redis round trip (a pipeline of the same script) and answers with one frame. That is the
shape with batching on the inner hop and on Redis and still none of the work ("the batched
floor"): a setting where even it is below boardgame.io cannot be won inside this shape.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import struct
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
import redis.asyncio as aioredis

from runtime.server import run
from wire.api import NO_BDP_PROBE

ECHO_METHOD = "/bench.Echo/Echo"
STREAM_METHOD = "/bench.Echo/Stream"
FRAMES_METHOD = "/bench.Echo/Frames"
_ENTRY = struct.Struct("<II")
"""A frame's entry: the message's id and length, then the message."""
_STORE = "redis.call('HSET', KEYS[1], 'message', ARGV[1]) return 1"
"""The stream's durable write: one script, one key, the message."""


def same(message: bytes) -> bytes:
    """The (de)serializer of raw messages."""
    return message


async def _echo(request: bytes, context: Any) -> bytes:
    return request


def _stream(answer: Callable[[bytes], Awaitable[bytes]]) -> Any:
    """A bidirectional stream handler that answers each message with `answer(message)`, in
    order, one at a time."""

    async def handle(
        requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext[bytes, bytes]
    ) -> None:
        async for message in requests:
            await context.write(await answer(message))

    return handle


async def _stored(url: str) -> Callable[[bytes], Awaitable[bytes]]:
    redis = aioredis.from_url(url)
    store = redis.register_script(_STORE)

    async def answer(message: bytes) -> bytes:
        await store(keys=["bench:floor"], args=[message])
        return message

    return answer


def _frame(entries: list[tuple[int, bytes]]) -> bytes:
    return b"".join(_ENTRY.pack(id_, len(message)) + message for id_, message in entries)


def _entries(frame: bytes) -> list[tuple[int, bytes]]:
    entries, at = [], 0
    while at < len(frame):
        id_, size = _ENTRY.unpack_from(frame, at)
        at += _ENTRY.size
        entries.append((id_, frame[at : at + size]))
        at += size
    return entries


async def _stored_frames(url: str) -> Any:
    """The echo server's frames stream: each frame's messages stored in one Redis round trip
    (a pipeline of EVALSHA), then the frame answered with itself."""
    redis = aioredis.from_url(url)
    sha = await redis.script_load(_STORE)

    async def handle(
        frames: AsyncIterator[bytes], context: grpc.aio.ServicerContext[bytes, bytes]
    ) -> None:
        async for frame in frames:
            pipe = redis.pipeline(transaction=False)
            for _id, message in _entries(frame):
                pipe.evalsha(sha, 1, "bench:floor", message)
            await pipe.execute()
            await context.write(frame)

    return handle


class _Frames:
    """The batched relay's one stream of frames to the echo server. A message goes at once when
    no frame is on its way; the messages that come while one is go together in the next, sent
    when its answer is back (one frame in flight: what queues, queues here, and is batched),
    and each answer goes back to its own caller."""

    def __init__(self, target: str) -> None:
        self._target = target
        self._ids = itertools.count()
        self._waiting: dict[int, asyncio.Future[bytes]] = {}
        self._outbox: list[tuple[int, bytes]] = []
        self._in_flight = False
        self._upstream: Any = None

    async def call(self, message: bytes) -> bytes:
        if self._upstream is None:
            channel = grpc.aio.insecure_channel(self._target, options=[NO_BDP_PROBE])
            self._upstream = channel.stream_stream(
                FRAMES_METHOD, request_serializer=same, response_deserializer=same
            )(wait_for_ready=True)
            self._reader = asyncio.ensure_future(self._read())
        id_ = next(self._ids)
        answer: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        self._waiting[id_] = answer
        self._outbox.append((id_, message))
        if not self._in_flight:
            self._in_flight = True
            # runs after this turn's calls, which it takes too
            self._writer = asyncio.ensure_future(self._send())
        return await answer

    async def _send(self) -> None:
        entries, self._outbox = self._outbox, []
        await self._upstream.write(_frame(entries))

    async def _read(self) -> None:
        async for frame in self._upstream:
            for id_, message in _entries(frame):
                self._waiting.pop(id_).set_result(message)
            if self._outbox:
                self._writer = asyncio.ensure_future(self._send())
            else:
                self._in_flight = False


def _relayed(target: str) -> Any:
    """A stream handler that opens a stream of its own to `target` per stream it serves and
    passes each message on it."""
    channel = grpc.aio.insecure_channel(target, options=[NO_BDP_PROBE])
    open_stream = channel.stream_stream(
        STREAM_METHOD, request_serializer=same, response_deserializer=same
    )

    async def handle(
        requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext[bytes, bytes]
    ) -> None:
        upstream = open_stream(wait_for_ready=True)  # the echo server may still be starting
        try:
            async for message in requests:
                await upstream.write(message)
                answer = await upstream.read()
                if not isinstance(answer, bytes):
                    raise RuntimeError(f"the echo server at {target} ended the stream")
                await context.write(answer)
        finally:
            upstream.cancel()

    return handle


async def serve(
    port: int, redis_url: str | None = None, relay: str | None = None, batched: bool = False
) -> None:
    handlers: dict[str, grpc.RpcMethodHandler[Any, Any]] = {
        "Echo": grpc.unary_unary_rpc_method_handler(_echo)
    }
    if relay is not None and batched:
        stream = _stream(_Frames(relay).call)
    elif relay is not None:
        stream = _relayed(relay)
    else:

        async def itself(message: bytes) -> bytes:
            return message

        stream = _stream(await _stored(redis_url) if redis_url else itself)
        if redis_url:
            frames = await _stored_frames(redis_url)
            handlers["Frames"] = grpc.stream_stream_rpc_method_handler(frames)
    handlers["Stream"] = grpc.stream_stream_rpc_method_handler(stream)
    server = grpc.aio.server(options=[("grpc.so_reuseport", 0), NO_BDP_PROBE])
    handler = grpc.method_handlers_generic_handler("bench.Echo", handlers)
    server.add_generic_rpc_handlers((handler,))
    server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    await server.wait_for_termination()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m bench.echo", description=__doc__)
    parser.add_argument("port", type=int)
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--redis", help="store each stream message in this Redis first")
    where.add_argument("--relay", help="pass each stream message on to this echo server")
    parser.add_argument(
        "--batched", action="store_true", help="with --relay: on one stream of frames"
    )
    args = parser.parse_args()
    run(serve(args.port, args.redis, args.relay, args.batched))
