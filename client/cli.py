"""The `tabletop` command.

tabletop play GAME [--bots N] [--level LEVEL] [--options JSON] [--gateway HOST:PORT] [--name NAME]
tabletop watch GAME [GAME_ID] [--gateway HOST:PORT]
tabletop replay GAME [--seed N] [--options JSON] [--setup JSON] SEAT:MOVE ...
tabletop hotseat esoloe [--target HOST:PORT] [MOVE ...]
tabletop health [--target HOST:PORT]

At the table, type a move in the game's notation, or: help (legal moves), board, wait, auto,
resign, quit. docs/client.md shows each game.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
from collections.abc import Sequence
from typing import Any

from engines import registry
from engines.contract import GameError
from engines.replay import parse_seat_move, replay

DEFAULT_TARGET = os.environ.get("TABLETOP_GATEWAY", "127.0.0.1:50050")
LEVELS = ("random", "greedy", "strong")


def _default_name() -> str:
    """The login name, made acceptable to Login (1..32 letters, digits, spaces, - or _)."""
    name = re.sub(r"[^A-Za-z0-9 _-]", "", os.environ.get("USER", ""))[:32].strip()
    return name or "player"


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

    pl = commands.add_parser("play", help="play a game against bots (or people) at the terminal")
    pl.add_argument("game", choices=registry.names())
    pl.add_argument(
        "--bots", type=int, default=None, help="bots at the table (Solo: 1..9; default: all seats)"
    )
    pl.add_argument(
        "--match", action="store_true", help="find a match with other people instead of bots"
    )
    pl.add_argument(
        "--bots-after",
        type=int,
        default=0,
        metavar="SECONDS",
        help="with --match: fill empty seats with bots after this wait (default: never)",
    )
    pl.add_argument("--seat", type=int, default=None, help="the seat you want (default: random)")
    pl.add_argument("--level", choices=LEVELS, default="random", help="the bots' level")
    pl.add_argument("--options", type=_json_arg, default=None, help="options as a JSON object")
    pl.add_argument("--gateway", default=DEFAULT_TARGET, metavar="HOST:PORT")
    pl.add_argument("--name", default=_default_name(), help="your display name")

    wt = commands.add_parser(
        "watch", help="watch a game as a spectator (a finished one is replayed from its log)"
    )
    wt.add_argument("game", choices=registry.names())
    wt.add_argument("game_id", nargs="?", help="default: a new game with bots in every seat")
    wt.add_argument("--level", choices=LEVELS, default="random", help="the bots' level")
    wt.add_argument("--options", type=_json_arg, default=None, help="options as a JSON object")
    wt.add_argument("--gateway", default=DEFAULT_TARGET, metavar="HOST:PORT")
    wt.add_argument("--name", default=_default_name(), help="your display name")

    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["replay"]:
        # Options may come anywhere among the moves: `replay solo --seed 3 0:draw 1:pass`.
        return _replay(rp.parse_intermixed_args(argv[1:]))
    args = parser.parse_args(argv)
    if args.command == "health":
        return asyncio.run(_health(args.target))
    if args.command in ("play", "watch"):
        from client.play import run_table

        try:
            return asyncio.run(run_table(args))
        except KeyboardInterrupt:
            return 130
    from client.hotseat import hotseat

    return asyncio.run(hotseat(args.target, args.moves))


if __name__ == "__main__":
    sys.exit(main())
