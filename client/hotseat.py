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
    players = [Session(target), Session(target)]
    await players[0].login("front")
    await players[1].login("back")
    stub = players[0].game("esoloe")
    created = await stub.CreateGame(
        esoloe_pb2.CreateGameRequest(players=[p.player_id for p in players]),
        metadata=players[0].metadata,
    )
    game_id = created.status.game_id
    print(f"game {game_id}: seat 0 = {players[0].player_id}, seat 1 = {players[1].player_id}")
    interactive = not moves
    source: Iterable[str] = _moves_from_stdin() if interactive else moves
    view = await stub.GetView(
        common_pb2.GetViewRequest(game_id=game_id), metadata=players[0].metadata
    )
    console.print(esoloe_board(view, -1))
    if interactive:
        print(f"seat {view.view.to_move} to move (e.g. c12; 'help' lists legal moves)")
    for move in source:
        seat = view.view.to_move
        player = players[seat]
        if move == "help":
            legal = await stub.LegalMoves(
                common_pb2.LegalMovesRequest(game_id=game_id), metadata=player.metadata
            )
            print(" ".join(legal.moves))
            continue
        try:
            reply = await stub.Play(
                common_pb2.PlayRequest(game_id=game_id, move=move), metadata=player.metadata
            )
        except grpc.aio.AioRpcError as error:
            reason, _ = error_info(error)
            print(f"refused ({error.code().name} {reason}): {error.details()}")
            continue
        view = await stub.GetView(
            common_pb2.GetViewRequest(game_id=game_id), metadata=players[0].metadata
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
    for player in players:
        await player.close()
    return 0
