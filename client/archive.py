"""`tabletop history [PLAYER]` and `tabletop show GAME_ID`: finished games from the archive
(docs/archive.md), as the identity saved for the gateway sees them: what a spectator could see."""

from __future__ import annotations

import argparse
import datetime
import gzip
from pathlib import Path

from client.accounts import as_saved
from client.boards import board_of
from client.play import make_console
from client.session import Session
from tabletop.common.v1 import common_pb2
from tabletop.lobby.v1 import lobby_pb2
from wire.api import api

OUTCOMES = {
    lobby_pb2.OUTCOME_WIN: "win",
    lobby_pb2.OUTCOME_LOSS: "loss",
    lobby_pb2.OUTCOME_DRAW: "draw",
    lobby_pb2.OUTCOME_NONE: "no result",
}
OUTCOME_OF = {name: value for value, name in OUTCOMES.items() if name != "no result"}


def _seat(seat: lobby_pb2.ArchivedSeat) -> str:
    rating = f" ({seat.rating})" if seat.HasField("rating") else ""
    return f"{seat.name}{rating}"


def _when(stamp: object) -> str:
    at: datetime.datetime = stamp.ToDatetime(datetime.UTC)  # type: ignore[attr-defined]
    return at.strftime("%Y-%m-%d %H:%M")


async def history(args: argparse.Namespace) -> int:
    """A player's finished games, newest first (yours without PLAYER)."""
    request = lobby_pb2.ListArchivedGamesRequest(
        player_id=args.player,
        game=args.game,
        outcome=OUTCOME_OF.get(args.outcome, lobby_pb2.OUTCOME_UNSPECIFIED),
        opponent=args.opponent,
        limit=args.limit,
    )

    async def call(session: Session) -> lobby_pb2.ListArchivedGamesResponse:
        reply: lobby_pb2.ListArchivedGamesResponse = await session.lobby.ListArchivedGames(
            request, metadata=session.metadata
        )
        return reply

    found = await as_saved(args, "history", call)
    if isinstance(found, int):
        return found
    if not found.games:
        print("no finished games in the archive")
        return 0
    for game in found.games:
        seats = ", ".join(_seat(s) for s in game.seats)
        rated = " rated" if game.rated else ""
        print(
            f"{_when(game.finished_at)}  {game.game:<6} {OUTCOMES[game.outcome]:<9} {seats}  "
            f"{game.moves} moves, {game.end or 'ended'}{rated}  {game.game_id}"
        )
    if found.next_page_token:
        print(f"(more: --limit {args.limit * 2 if args.limit else 40})")
    print("replay one: tabletop show GAME_ID")
    return 0


async def show(args: argparse.Namespace) -> int:
    """An archived game, move by move, as a spectator saw it."""
    console = make_console()

    async def call(session: Session) -> int:
        record: lobby_pb2.ArchivedGame = await session.lobby.GetArchivedGame(
            lobby_pb2.GetArchivedGameRequest(game_id=args.game_id), metadata=session.metadata
        )
        if args.text:
            print(record.text, end="")
            return 0
        board = board_of(record.game)
        seats = ", ".join(f"seat {s.index}: {_seat(s)}" for s in record.seats)
        console.print(
            f"{record.game} game {record.game_id}, {_when(record.created_at)} to "
            f"{_when(record.finished_at)}; {seats}"
        )
        status = common_pb2.GameStatus(
            game_id=record.game_id,
            game=record.game,
            rules_edition=record.rules_edition,
            seats=[
                common_pb2.Seat(index=s.index, player_id=s.player_id, name=s.name, bot=s.bot)
                for s in record.seats
            ],
        )
        game_api = api(record.game)
        last = len(record.moves)
        for version in range(last + 1):
            if version:
                played = record.moves[version - 1]
                who = f"seat {played.seat}" if played.HasField("seat") else "the platform"
                console.print(f"{version}. {who}: {played.move}")
            if not (args.every or version == last):
                continue
            shown = await session.lobby.GetArchivedView(
                lobby_pb2.GetArchivedViewRequest(game_id=record.game_id, version=version),
                metadata=session.metadata,
            )
            view = game_api.pb2.View()
            shown.view.Unpack(view)
            status.version = version
            status.finished = shown.finished
            del status.to_act[:]
            status.to_act.extend(shown.to_act)
            if shown.finished:
                status.result.CopyFrom(record.result)
            console.print(board.draw(game_api.pb2.GetViewResponse(status=status, view=view), -1))
        console.print(f"ended: {record.end or 'no result'}")
        return 0

    done = await as_saved(args, "show", call)
    return done


async def export(args: argparse.Namespace) -> int:
    """A month of the archive's public games, written as gzipped NDJSON."""
    out = Path(args.out or f"tabletop-{args.month}.ndjson.gz")
    request = lobby_pb2.ExportArchiveRequest(month=args.month, game=args.game)

    async def call(session: Session) -> int:
        written = 0
        with gzip.open(out, "wb") as file:
            async for piece in session.lobby.ExportArchive(request, metadata=session.metadata):
                file.write(piece.ndjson)
                written += piece.games
        return written

    written = await as_saved(args, "export", call)
    if written:
        print(f"{written} games written to {out}; `tabletop replay --file {out}` replays them")
    else:
        print(
            f"no public games finished in {args.month}{' (' + args.game + ')' if args.game else ''}"
        )
    return 0


async def live(args: argparse.Namespace) -> int:
    """Games being played now, best-rated first, to watch."""
    request = lobby_pb2.ListLiveGamesRequest(game=args.game, limit=args.limit)

    async def call(session: Session) -> lobby_pb2.ListLiveGamesResponse:
        reply: lobby_pb2.ListLiveGamesResponse = await session.lobby.ListLiveGames(
            request, metadata=session.metadata
        )
        return reply

    found = await as_saved(args, "live", call)
    if isinstance(found, int):
        return found
    if not found.games:
        print("no games being played now" + (f" ({args.game})" if args.game else ""))
        return 0
    for item in found.games:
        status = item.status
        rating = f"{item.rating:>5}" if item.HasField("rating") else "    -"
        seats = ", ".join(
            f"{s.name} ({s.rating})" if s.HasField("rating") else s.name for s in status.seats
        )
        print(f"{rating}  {status.game:<6} {seats}  move {status.version}  {status.game_id}")
    print("watch one: tabletop watch GAME GAME_ID")
    return 0
