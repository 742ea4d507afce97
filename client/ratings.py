"""`tabletop rating [GAME]` and `tabletop top GAME`: ratings and leaderboards (docs/ratings.md),
as the identity saved for the gateway sees them."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from client.accounts import player_fields
from client.runner import as_saved, asking
from client.session import Session
from tabletop.common.v1 import common_pb2
from tabletop.lobby.v1 import lobby_pb2

RATED = ("esoloe", "solo", "zoxso")
"""The games with ratings (Solace is played alone)."""
SCORED = ("solace",)
"""The games with a score table."""


ESTABLISHED = "10 rated games or more, not provisional"


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


def _score(value: float) -> str:
    return f"{value:g}"


def _scores_line(info: lobby_pb2.ScoreInfo) -> str:
    """`best 7, average 4.5 over 2 games  #3  today's deal: 6`."""
    if not info.games:
        return "no game counted yet"
    place = f"#{info.place}" if info.HasField("place") else "unranked"
    games = f"{info.games} game{'s' if info.games != 1 else ''}"
    line = f"best {_score(info.best)}, average {info.average:.2f} over {games}  {place}"
    if info.HasField("today"):
        line += f"  today's deal: {_score(info.today)}"
    return line


async def rating(args: argparse.Namespace) -> int:
    """Your rating in each game (or in GAME), or another player's (by username or player id);
    `?` marks a provisional one. Solace has scores instead: best, average, today's deal."""
    wanted = [args.game] if args.game else [*RATED, *SCORED]

    async def call(session: Session) -> list[lobby_pb2.RatingInfo | lobby_pb2.ScoreInfo]:
        found: list[lobby_pb2.RatingInfo | lobby_pb2.ScoreInfo] = []
        for game in wanted:
            if game in SCORED:
                found.append(
                    await session.lobby.GetScores(
                        lobby_pb2.GetScoresRequest(game=game, **player_fields(args.player)),
                        metadata=session.metadata,
                    )
                )
            else:
                found.append(
                    await session.lobby.GetRating(
                        lobby_pb2.GetRatingRequest(game=game, **player_fields(args.player)),
                        metadata=session.metadata,
                    )
                )
        return found

    found = await as_saved(args, "rating", call)
    if isinstance(found, int):
        return found
    if args.player and found:
        print(f"{found[0].name}:")
    for info in found:
        line = _scores_line(info) if isinstance(info, lobby_pb2.ScoreInfo) else _line(info)
        print(f"{info.game:<7} {line}")
    if any(isinstance(info, lobby_pb2.RatingInfo) and info.provisional for info in found):
        print("? provisional: too few rated games yet to be sure of it")
    return 0


async def top(args: argparse.Namespace) -> int:
    """The game's leaderboard: the best `--limit`, or the places around you (`--me`)."""
    if args.game in SCORED:
        return await score_table(args)
    request = lobby_pb2.ListLeaderboardRequest(
        game=args.game, limit=args.limit, around_player="me" if args.me else ""
    )
    board = await as_saved(args, "top", asking("ListLeaderboard", request))
    if isinstance(board, int):
        return board
    if not board.entries:
        nobody = f"nobody on the {args.game} leaderboard yet" if not args.me else "you are not"
        print(f"{nobody} (it lists established players: {ESTABLISHED})")
    for entry in board.entries:
        mark = "?" if entry.provisional else ""
        print(f"{entry.place:>4}. {entry.name:<24} {entry.rating}{mark}  ({entry.games} games)")
    return 0


async def score_table(args: argparse.Namespace) -> int:
    """A game played alone's score table: best scores, or a deal of the day's (`--day`)."""
    request = lobby_pb2.ListScoreTableRequest(
        game=args.game, day=args.day, limit=args.limit, around_player="me" if args.me else ""
    )
    table = await as_saved(args, "top", asking("ListScoreTable", request))
    if isinstance(table, int):
        return table
    if table.day:
        print(f"the deal of {table.day}:")
    if not table.entries:
        print("no score counted yet" if not args.me else "you have no score counted here yet")
    for entry in table.entries:
        score = entry.score if table.day else entry.best
        games = f"({entry.games} games, average {entry.average:.2f})"
        print(f"{entry.place:>4}. {entry.name:<24} {_score(score)}  {games}")
    return 0
