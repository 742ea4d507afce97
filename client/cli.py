"""The `tabletop` command.

tabletop replay GAME [--seed N] [--options JSON] [--setup JSON] SEAT:MOVE ...
tabletop hotseat esoloe [--target HOST:PORT] [MOVE ...]
tabletop health [--target HOST:PORT]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from collections.abc import Sequence
from typing import Any

from engines import registry
from engines.contract import GameError
from engines.replay import parse_seat_move, replay

DEFAULT_TARGET = os.environ.get("TABLETOP_GATEWAY", "127.0.0.1:50050")


def _json_arg(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise argparse.ArgumentTypeError(f"not JSON: {error}") from None


def _replay(args: argparse.Namespace) -> int:
    try:
        moves = [parse_seat_move(text) for text in args.moves]
        report = replay(args.game, moves, seed=args.seed, options=args.options, setup=args.setup)
    except (ValueError, KeyError, GameError) as error:
        message = error.args[0] if error.args else str(error)
        print(f"tabletop replay: {message}", file=sys.stderr)
        return 2
    print(json.dumps(report, sort_keys=True))
    return 0


async def _health(target: str) -> int:
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    async with grpc.aio.insecure_channel(target) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        try:
            reply = await stub.Check(health_pb2.HealthCheckRequest(), timeout=5)
        except grpc.aio.AioRpcError as error:
            print(f"{target}: {error.code().name} {error.details()}")
            return 1
    status = health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)
    print(f"{target}: {status}")
    return 0 if reply.status == health_pb2.HealthCheckResponse.SERVING else 1


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="tabletop", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True)

    rp = commands.add_parser("replay", help="replay a game from a move list; prints JSON")
    rp.add_argument("game", choices=registry.names())
    rp.add_argument("--seed", type=int, default=0)
    rp.add_argument("--options", type=_json_arg, default=None, help="options as a JSON object")
    rp.add_argument("--setup", type=_json_arg, default=None, help="explicit setup as JSON")
    rp.add_argument("moves", nargs="*", metavar="SEAT:MOVE")

    hs = commands.add_parser("hotseat", help="two players at one terminal, through the gateway")
    hs.add_argument("game", choices=["esoloe"])
    hs.add_argument("--target", default=DEFAULT_TARGET)
    hs.add_argument(
        "moves",
        nargs="*",
        metavar="MOVE",
        help="moves to play in turn; without them, read moves from standard input",
    )

    hc = commands.add_parser("health", help="ask a server whether it is SERVING")
    hc.add_argument("--target", default=DEFAULT_TARGET)

    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["replay"]:
        # Options may come anywhere among the moves: `replay solo --seed 3 0:draw 1:pass`.
        return _replay(rp.parse_intermixed_args(argv[1:]))
    args = parser.parse_args(argv)
    if args.command == "health":
        return asyncio.run(_health(args.target))
    from client.hotseat import hotseat

    return asyncio.run(hotseat(args.target, args.moves))


if __name__ == "__main__":
    sys.exit(main())
