"""People sharing one terminal (`tabletop hotseat`): log in once, create a game whose every seat
is that login's, and play it at a `client.play.Table` shared by all the seats, which reads each
line as `tabletop play` does (any case, the closest legal moves, the server's reasons, `resign`
and `clock`, ...) for whichever seat is to move. Only a game whose board allows it
(`Board.hotseat`: nothing hidden, more than one seat) is offered: e-SOLO-e and ZoxSo."""

from __future__ import annotations

import argparse

import games
from client.boards import board_of
from client.play import Table, at_table, lines_of, make_console
from client.runner import UsageError
from client.session import Session
from wire.api import api

LOGIN_NAME = "hotseat"


def hotseat_games() -> list[str]:
    """The games people may play at one terminal."""
    return [name for name in games.names() if board_of(name).hotseat]


def seat_names(game: str, given: str | None) -> list[str]:
    """The players' names, one per seat (`--names Ada,Bob`), else `player 1`, `player 2`...;
    a UsageError for a list that does not fit the table."""
    rules = games.rules(game)
    seats = int(rules.default_options().get("players", rules.max_seats))
    if given is None:
        return [f"player {seat + 1}" for seat in range(seats)]
    names = [name.strip() for name in given.split(",")]
    if len(names) != seats or not all(names) or len(set(names)) != seats:
        raise UsageError(f"--names gives {seats} different names, one per seat, e.g. Ada,Bob")
    return names


def refusal(game: str) -> str | None:
    """Why `game` is not played at one terminal (None: it is)."""
    if board_of(game).hotseat:
        return None
    if games.rules(game).max_seats == 1:
        return f"{game} is played alone: `tabletop play {game}`"
    return (
        f"{game} is not played at one terminal: it hides things from some seats (a Solo hand); "
        f"hotseat games: {', '.join(hotseat_games()) or 'none'}"
    )


async def hotseat(args: argparse.Namespace) -> int:
    """`tabletop hotseat GAME [MOVE ...]`: the moves given, else the lines typed."""
    console = make_console()
    session = Session(args.gateway, tls=args.tls)

    async def seated() -> tuple[Table, str]:
        refused = refusal(args.game)
        if refused is not None:
            raise UsageError(refused)
        names = seat_names(args.game, args.names)
        await session.login(LOGIN_NAME)
        session.open_stream()
        created = await session.game(args.game).CreateGame(
            api(args.game).pb2.CreateGameRequest(players=[session.player_id] * len(names)),
            metadata=session.metadata,
        )
        game_id = created.status.game_id
        board = board_of(args.game)
        seats = ", ".join(f"{name} in {board.seat_label(i)}" for i, name in enumerate(names))
        console.print(
            f"{args.game} game {game_id}, played at this terminal: {seats}; each types when it "
            "is their turn"
        )
        table = Table(session, args.game, game_id, 0, console, hotseat=True, names=names)
        return table, "new"

    try:
        lines = lines_of(args.moves) if args.moves else None
        return await at_table("hotseat", console, seated, lines)
    finally:
        await session.close()
