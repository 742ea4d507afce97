"""Bare grpc.aio servers that do no work: the baselines ours is measured against.

`python -m bench.echo PORT` answers the unary echo (`make bench`'s gateway section compares a
Play's latency with it) and a bidirectional stream that answers each message with itself.
`--redis URL` makes the stream store each message in Redis first (one EVALSHA of a script that
writes it, on a server with appendonly: the least a durable move costs). `--relay HOST:PORT`
makes the stream pass each message on, over a stream of its own, to that server and answer with
its answer (what the gateway does with a session's move). Client → relay → echo with Redis is the
shape of our hot path (gateway, game service, Redis) with none of its work: no server of this
shape can answer moves faster than it (bench/versus.py, "the shape's floor").
"""

from __future__ import annotations

import argparse
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
import redis.asyncio as aioredis

from runtime.server import run

ECHO_METHOD = "/bench.Echo/Echo"
STREAM_METHOD = "/bench.Echo/Stream"
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


def _relayed(target: str) -> Any:
    """A stream handler that opens a stream of its own to `target` per stream it serves and
    passes each message on it."""
    channel = grpc.aio.insecure_channel(target)
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


async def serve(port: int, redis_url: str | None = None, relay: str | None = None) -> None:
    if relay is not None:
        stream = _relayed(relay)
    else:

        async def itself(message: bytes) -> bytes:
            return message

        stream = _stream(await _stored(redis_url) if redis_url else itself)
    server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
    handler = grpc.method_handlers_generic_handler(
        "bench.Echo",
        {
            "Echo": grpc.unary_unary_rpc_method_handler(_echo),
            "Stream": grpc.stream_stream_rpc_method_handler(stream),
        },
    )
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
    args = parser.parse_args()
    run(serve(args.port, args.redis, args.relay))
