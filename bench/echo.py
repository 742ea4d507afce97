"""A bare grpc.aio echo server: the baseline the gateway's latency is compared with."""

from __future__ import annotations

import sys
from typing import Any

import grpc

from runtime.server import run

ECHO_METHOD = "/bench.Echo/Echo"


async def _echo(request: bytes, context: Any) -> bytes:
    return request


async def serve(port: int) -> None:
    server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
    handler = grpc.method_handlers_generic_handler(
        "bench.Echo", {"Echo": grpc.unary_unary_rpc_method_handler(_echo)}
    )
    server.add_generic_rpc_handlers((handler,))
    server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    await server.wait_for_termination()


if __name__ == "__main__":
    run(serve(int(sys.argv[1])))
