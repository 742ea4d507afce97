"""`tabletop rating [GAME]` and `tabletop top GAME`: ratings and leaderboards (docs/ratings.md),
as the identity saved for the gateway sees them."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from client.accounts import as_saved
from client.session import Session
from tabletop.common.v1 import common_pb2
from tabletop.lobby.v1 import lobby_pb2

RATED = ("esoloe", "solo", "zoxso")
"""The games with ratings (Solace is played alone)."""


def _line(info: lobby_pb2.RatingInfo) -> str:
    mark = "?" if info.provisional else ""
    place = f"#{info.place}" if info.HasField("place") else "unranked"
    games = f"{info.games} rated game{'s' if info.games != 1 else ''}"
    return f"{info.rating}{mark}  {place}  {games}"


def seats_line(status: common_pb2.GameStatus, names: Sequence[str]) -> str:
    """A rated game's seats with their ratings when it was made: `rated game: you 1012?, bob
    1180` (`names`: how sentences call each seat)."""
    seats = [
        f"{names[s.index]} {s.rating}{'?' if s.provisional else ''}" if s.HasField("rating")
        else f"{names[s.index]} (unrated)"
        for s in status.seats
    ]  # fmt: skip
    return "rated game: " + ", ".join(seats)


def change_line(game: str, reply: lobby_pb2.GetRatingChangeResponse, seat: int) -> str | None:
    """What a counted rated game did to the rating of `seat`: `your esoloe rating: 1000 -> 1032
    (+32)`; None when the seat's results count for nobody."""
    for change in reply.changes:
        if change.seat == seat:
            mark = "?" if change.provisional else ""
            delta = change.after - change.before
            return f"your {game} rating: {change.before} -> {change.after}{mark} ({delta:+d})"
    return None


async def rating(args: argparse.Namespace) -> int:
    """The player's rating in each game (or in GAME); `?` marks a provisional one."""
    wanted = [args.game] if args.game else list(RATED)

    async def call(session: Session) -> list[lobby_pb2.RatingInfo]:
        return [
            await session.lobby.GetRating(
                lobby_pb2.GetRatingRequest(game=game, player_id=args.player),
                metadata=session.metadata,
            )
            for game in wanted
        ]

    found = await as_saved(args, "rating", call)
    if isinstance(found, int):
        return found
    for info in found:
        print(f"{info.game:<7} {_line(info)}")
    if any(info.provisional for info in found):
        print("? provisional: too few rated games yet to be sure of it")
    return 0


async def top(args: argparse.Namespace) -> int:
    """The game's leaderboard: the best `--limit`, or the places around you (`--me`)."""
    request = lobby_pb2.ListLeaderboardRequest(
        game=args.game, limit=args.limit, around_player="me" if args.me else ""
    )

    async def call(session: Session) -> lobby_pb2.ListLeaderboardResponse:
        reply: lobby_pb2.ListLeaderboardResponse = await session.lobby.ListLeaderboard(
            request, metadata=session.metadata
        )
        return reply

    board = await as_saved(args, "top", call)
    if isinstance(board, int):
        return board
    if not board.entries:
        print(f"no rated {args.game} games yet" if not args.me else "you have no rated game yet")
    for entry in board.entries:
        mark = "?" if entry.provisional else ""
        print(f"{entry.place:>4}. {entry.name:<24} {entry.rating}{mark}  ({entry.games} games)")
    return 0
