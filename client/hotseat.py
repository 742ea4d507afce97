"""Two players at one terminal: log both in, create an e-SOLO-e game, play moves in turn."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator

import grpc
from rich.console import Console

from client.boards import esoloe_board
from client.session import Session
from services.runtime.errors import error_info
from tabletop.common.v1 import common_pb2
from tabletop.esoloe.v1 import esoloe_pb2


def _moves_from_stdin() -> Iterator[str]:
    for line in sys.stdin:
        yield from line.split()


async def hotseat(target: str, moves: list[str]) -> int:
    console = Console(highlight=False, markup=False, soft_wrap=True)
    player = Session(target)
    await player.login("hotseat")
    stub = player.game("esoloe")
    created = await stub.CreateGame(
        esoloe_pb2.CreateGameRequest(players=[player.player_id, player.player_id]),
        metadata=player.metadata,
    )
    game_id = created.status.game_id
    print(f"game {game_id}: both seats are yours (seat 0 at the front, seat 1 at the back)")
    interactive = not moves
    source: Iterable[str] = _moves_from_stdin() if interactive else moves
    view = await stub.GetView(
        common_pb2.GetViewRequest(game_id=game_id, public=True), metadata=player.metadata
    )
    console.print(esoloe_board(view, -1))
    if interactive:
        print(f"seat {view.view.to_move} to move (e.g. c12; 'help' lists legal moves)")
    for move in source:
        seat = view.view.to_move
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
        console.print(esoloe_board(view, -1))
        if reply.status.finished:
            won = [e.won for e in reply.events if e.HasField("won")]
            if won:
                print(f"seat {won[0].seat} wins by {', '.join(won[0].methods)}")
            else:
                print("draw: the player to move has no legal placement")
            break
        if interactive:
            print(f"seat {view.view.to_move} to move")
    await player.close()
    return 0
