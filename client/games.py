"""`tabletop games` and finding one's seat again: the player's games, from the lobby's
ListGames (the caller's games, newest first: live ones and those that ended recently)."""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from typing import Any

import grpc

from client.identity import Account, SessionEnded
from client.narrate import actor_name, seat_label, short_result
from client.runner import failed
from client.session import Session
from games.board import seat_names
from tabletop.common.v1 import common_pb2
from tabletop.lobby.v1 import lobby_pb2, lobby_pb2_grpc

CALL_TIMEOUT = 10.0


async def my_games(session: Session, *, live_only: bool = False) -> list[Any]:
    """The caller's games, newest first (LobbyService.ListGames)."""
    lobby = lobby_pb2_grpc.LobbyServiceStub(session.channel)
    reply = await lobby.ListGames(
        lobby_pb2.ListGamesRequest(live_only=live_only),
        metadata=session.metadata,
        timeout=CALL_TIMEOUT,
    )
    return list(reply.games)


async def my_seat(session: Session, game: str, game_id: str, wanted: int | None) -> int:
    """The caller's seat in `game_id` (-1: none): from their game list, else from the view the
    game serves them (games beyond the list's 50)."""
    for summary in await my_games(session):
        if summary.status.game_id == game_id and summary.seats:
            seats: list[int] = list(summary.seats)
            if wanted is not None and wanted in seats:
                return wanted
            acting = [seat for seat in seats if seat in summary.status.to_act]
            return (acting or seats)[0]
    reply = await session.game(game).GetView(
        common_pb2.GetViewRequest(game_id=game_id),
        metadata=session.metadata,
        timeout=CALL_TIMEOUT,
    )
    return reply.seat if reply.HasField("seat") else -1  # unset: the public view


def _ago(seconds: float) -> str:
    seconds = max(0.0, seconds)
    if seconds < 60:
        return f"{int(seconds)} s ago"
    if seconds < 3600:
        return f"{int(seconds // 60)} min ago"
    if seconds < 86400:
        return f"{int(seconds // 3600)} h ago"
    return f"{int(seconds // 86400)} days ago"


def _opponents(status: common_pb2.GameStatus, mine: Sequence[int]) -> str:
    names = seat_names(status, mine[0] if mine else -1)
    counts: dict[str, int] = {}
    for seat, seat_status in enumerate(status.seats):
        if seat not in mine:
            name = seat_status.name or seat_status.player_id or names[seat]
            counts[name] = counts.get(name, 0) + 1
    shown = [name if n == 1 else f"{name} x{n}" for name, n in counts.items()]
    return ", ".join(shown) or "-"


def game_rows(games: Sequence[Any], now: float) -> list[list[str]]:
    """The rows `tabletop games` prints, live games first (each group newest first)."""
    rows = []
    ordered = [g for g in games if not g.status.finished] + [g for g in games if g.status.finished]
    for summary in ordered:
        status = summary.status
        mine = list(summary.seats)
        me = mine[0] if mine else -1
        if status.finished:
            state = "over: " + short_result(status, me)
        elif me in status.to_act:
            state = "live: your turn"
        else:
            acting = [actor_name(status.game, status, s, me) for s in status.to_act]
            state = f"live: {', '.join(acting) or 'nobody'} to move"
        seat = ", ".join(seat_label(status.game, s).removeprefix("seat ") for s in mine) or "-"
        updated = summary.updated.seconds + summary.updated.nanos / 1e9
        rows.append(
            [
                status.game,
                status.game_id,
                seat,
                _opponents(status, mine),
                str(status.version),
                state,
                _ago(now - updated) if updated else "-",
            ]
        )
    return rows


async def list_games(args: argparse.Namespace) -> int:
    """`tabletop games`: the player's live and recent games on this gateway."""
    session = Session(args.gateway, tls=args.tls)
    account = Account(session, None, args.default_name)
    try:
        if not account.use_saved():
            print(
                f"no games: you have not played on {args.gateway} from here (or your login "
                "expired); `tabletop play GAME` starts one"
            )
            return 0
        games = await account.call(lambda: my_games(session, live_only=args.live))
    except (SessionEnded, grpc.aio.AioRpcError) as error:
        return failed("games", error)
    finally:
        await session.close()
    if account.renewed:
        print("your saved login was refused, so you are a new player now: no games yet")
    which = "live games" if args.live else "games"
    if not games:
        print(f"no {which} for {account.name} on {args.gateway}")
        return 0
    print(f"{account.name}'s {which} on {args.gateway}, newest first:")
    header = ["GAME", "ID", "SEAT", "OPPONENTS", "MOVES", "STATE", "LAST MOVE"]
    rows = [header, *game_rows(games, time.time())]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    for row in rows:
        cells = (cell.ljust(width) for cell, width in zip(row, widths, strict=True))
        print("  ".join(cells).rstrip())
    if any(not g.status.finished for g in games):
        print("to sit back down at a live game: tabletop play --game ID")
    return 0
