"""Players sharing one terminal: log in once, create a game whose every seat is that login's,
play moves in turn, and draw the public board after each. Only a game whose board allows it
(`Board.hotseat`: nothing hidden, more than one seat) is offered, e.g. e-SOLO-e."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator

import grpc
from rich.console import Console

import games
from client.boards import board_of
from client.narrate import describe_result
from client.session import Session, Tls
from tabletop.common.v1 import common_pb2
from wire.api import api
from wire.errors import error_info


def _moves_from_stdin() -> Iterator[str]:
    for line in sys.stdin:
        yield from line.split()


def hotseat_games() -> list[str]:
    """The games people may play at one terminal."""
    return [name for name in games.names() if board_of(name).hotseat]


async def hotseat(target: str, game: str, moves: list[str], tls: Tls | None = None) -> int:
    board = board_of(game)
    if not board.hotseat:
        print(
            f"tabletop hotseat: {game} is not played at one terminal (a seat's view is its own); "
            f"hotseat games: {', '.join(hotseat_games()) or 'none'}",
            file=sys.stderr,
        )
        return 2
    console = Console(highlight=False, markup=False, soft_wrap=True)
    rules = games.rules(game)
    seats = int(rules.default_options().get("players", rules.max_seats))
    player = Session(target, tls=tls)
    await player.login("hotseat")
    stub = player.game(game)
    created = await stub.CreateGame(
        api(game).pb2.CreateGameRequest(players=[player.player_id] * seats),
        metadata=player.metadata,
    )
    game_id = created.status.game_id
    every = "both seats" if seats == 2 else f"all {seats} seats"
    labels = ", ".join(board.seat_label(seat) for seat in range(seats))
    print(f"game {game_id}: {every} are yours ({labels})")
    interactive = not moves
    source: Iterable[str] = _moves_from_stdin() if interactive else moves
    view = await stub.GetView(
        common_pb2.GetViewRequest(game_id=game_id, public=True), metadata=player.metadata
    )
    console.print(board.draw(view, -1))
    if interactive:
        print(f"{board.seat_label(view.status.to_act[0])} to move ('help' lists legal moves)")
    for move in source:
        seat = view.status.to_act[0]
        if move == "help":
            legal = await stub.LegalMoves(
                common_pb2.LegalMovesRequest(game_id=game_id, seat=seat), metadata=player.metadata
            )
            print(" ".join(legal.moves))
            continue
        try:
            reply = await stub.Play(
                common_pb2.PlayRequest(game_id=game_id, move=move, seat=seat),
                metadata=player.metadata,
            )
        except grpc.aio.AioRpcError as error:
            reason, _ = error_info(error)
            print(f"refused ({error.code().name} {reason}): {error.details()}")
            continue
        view = await stub.GetView(
            common_pb2.GetViewRequest(game_id=game_id, public=True), metadata=player.metadata
        )
        print(f"seat {seat} played {move}")
        console.print(board.draw(view, -1))
        if reply.status.finished:
            print(describe_result(reply.status, -1, list(reply.events)))
            break
        if interactive:
            print(f"{board.seat_label(view.status.to_act[0])} to move")
    await player.close()
    return 0
