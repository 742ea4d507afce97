"""`tabletop history [PLAYER]` and `tabletop show GAME_ID`: finished games from the archive
(docs/archive.md), as the identity saved for the gateway sees them: what a spectator could see.
How a game ended is said in words (`ending`), and a game can be stepped through move by move
(`step`, `browse`: pure, driven by whatever reads the commands)."""

from __future__ import annotations

import argparse
import asyncio
import datetime
import gzip
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from google.protobuf import json_format
from rich.console import RenderableType

from client.accounts import player_fields
from client.boards import board_of
from client.play import make_console
from client.runner import as_saved, asking
from client.session import Session
from games.board import Board, and_list, number, plural, seat_names
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


def _seat_text(seat: lobby_pb2.ArchivedSeat) -> str:
    rating = f" ({seat.rating})" if seat.HasField("rating") else ""
    return f"{seat.name}{rating}"


def _when(stamp: object) -> str:
    at: datetime.datetime = stamp.ToDatetime(datetime.UTC)  # type: ignore[attr-defined]
    return at.strftime("%Y-%m-%d %H:%M")


async def history(args: argparse.Namespace) -> int:
    """A player's finished games, newest first (yours without PLAYER)."""
    request = lobby_pb2.ListArchivedGamesRequest(
        **player_fields(args.player),
        game=args.game,
        outcome=OUTCOME_OF.get(args.outcome, lobby_pb2.OUTCOME_UNSPECIFIED),
        limit=args.limit,
    )
    if args.opponent:
        for field, value in player_fields(args.opponent).items():
            setattr(request, "opponent" if field == "player_id" else "opponent_username", value)
    found = await as_saved(args, "history", asking("ListArchivedGames", request))
    if isinstance(found, int):
        return found
    if not found.games:
        whose = f" of {args.player}" if args.player not in ("", "me") else ""
        print(f"no finished games{whose} in the archive")
        return 0
    for game in found.games:
        seats = ", ".join(_seat_text(s) for s in game.seats)
        rated = " rated" if game.rated else ""
        print(
            f"{_when(game.finished_at)}  {game.game:<6} {OUTCOMES[game.outcome]:<9} {seats}  "
            f"{game.moves} moves, {game.end or 'ended'}{rated}  {game.game_id}"
        )
    if found.next_page_token:
        print(f"(more: --limit {args.limit * 2 if args.limit else 40})")
    print("replay one: tabletop show GAME_ID")
    return 0


NO_RESULT = {
    "aborted": "aborted before it got under way: no result",
    "abandoned": "abandoned: no result",
    "stopped_by_sponsor": "stopped by the player who started it: no result",
}
"""The ends the platform gave a game without a result, in words."""
END_WORDS = {
    "rounds": "every round was played",
    "below_zero": "a player's points went below zero",
    "no_legal_placement": "no legal placement was left",
    "two_passes": "two passes in a row",
    "max_plies": "the move limit was reached",
    "no_moves": "no move was left",
    "stopped": "the player stopped",
}
"""Games' own reasons for ending, in words (others are said as they are written)."""
STEP_HELP = "Enter or n: the next move, p: the previous, first, last, a number: that move, q: quit"


def status_of(record: lobby_pb2.ArchivedGame, version: int | None = None) -> common_pb2.GameStatus:
    """The game's status as a spectator saw it after move `version` (None: at its end, with its
    result): its seats with their names, the version, the result once over."""
    last = len(record.moves)
    at = last if version is None else version
    status = common_pb2.GameStatus(
        game_id=record.game_id,
        game=record.game,
        rules_edition=record.rules_edition,
        version=at,
        finished=at == last,
        seats=[
            common_pb2.Seat(index=s.index, player_id=s.player_id, name=s.name, bot=s.bot)
            for s in record.seats
        ],
    )
    if at == last and record.HasField("result"):
        status.result.CopyFrom(record.result)
    return status


def _detail(record: lobby_pb2.ArchivedGame) -> dict[str, Any]:
    if not (record.HasField("result") and record.result.HasField("detail")):
        return {}
    detail: dict[str, Any] = json_format.MessageToDict(record.result.detail)
    return detail


def _has_result(record: lobby_pb2.ArchivedGame) -> bool:
    return record.HasField("result") and record.end not in NO_RESULT


def places(record: lobby_pb2.ArchivedGame) -> list[tuple[int, int]]:
    """(place, seat), best first: the winners first, then by score where the game keeps scores;
    equal standing, equal place (1, 2, 2, 4). Empty without a result."""
    if not _has_result(record):
        return []
    winners = set(record.result.winners)
    scores = record.result.scores

    def standing(seat: int) -> tuple[bool, float]:
        return seat not in winners, -scores.get(seat, 0.0)

    order = sorted(range(len(record.seats)), key=lambda seat: (standing(seat), seat))
    placed: list[tuple[int, int]] = []
    for index, seat in enumerate(order):
        tied = index and standing(order[index - 1]) == standing(seat)
        placed.append((placed[-1][0] if tied else index + 1, seat))
    return placed


def _scored(record: lobby_pb2.ArchivedGame) -> bool:
    """Whether the result's scores say more than who won (Solo's points, not ZoxSo's 1 and 0)."""
    values = list(record.result.scores.values())
    return bool(values) and not all(value in (0.0, 0.5, 1.0) for value in values)


def _name_of(names: list[str], seat: Any) -> str | None:
    if isinstance(seat, (int, float)) and 0 <= int(seat) < len(names):
        return names[int(seat)]
    return None


def how_it_ended(record: lobby_pb2.ArchivedGame, names: list[str]) -> str:
    """`by resignation: bob resigned`, `on time: bob ran out of time`, `played to the end`..."""
    if record.end in NO_RESULT:
        return NO_RESULT[record.end]
    if not record.HasField("result"):
        return "no result"
    detail = _detail(record)
    if record.end == "resignation":
        losers = [s for s in range(len(names)) if s not in record.result.winners]
        who = _name_of(names, detail.get("resigned", losers[0] if len(losers) == 1 else None))
        return f"by resignation: {who} resigned" if who else "by resignation"
    if record.end == "timeout":
        who = _name_of(names, detail.get("seat"))
        return f"on time: {who} ran out of time" if who else "on time"
    why = "" if record.end == "win" else END_WORDS.get(record.end, record.end.replace("_", " "))
    return "played to the end" + (f": {why}" if why else "")


def ending(record: lobby_pb2.ArchivedGame, board: Board) -> list[str]:
    """How the game ended, in words: who won (the board's sentence), the places (with scores
    where the game has them), the way it ended, the seats bots played after a timeout."""
    status = status_of(record)
    names = seat_names(status, -1)
    lines = []
    if _has_result(record):
        said = board.short_result if record.end == "timeout" else board.result
        lines.append(f"result: {said(status, -1)}")
        placed = places(record)
        if len(placed) > 1:
            scored = _scored(record)
            lines.append(
                "places: "
                + ", ".join(
                    f"{place}. {names[seat]}"
                    + (f" {number(record.result.scores.get(seat, 0.0))}" if scored else "")
                    for place, seat in placed
                )
            )
    lines.append(f"ended: {how_it_ended(record, names)}")
    taken = [names[s.index] for s in record.seats if s.taken_over_by]
    if taken:
        lines.append(f"a bot played on for {and_list(taken)} after their time ran out")
    return lines


def move_line(record: lobby_pb2.ArchivedGame, version: int) -> str:
    """`12. alice: a12` (`0. the start`)."""
    if version == 0:
        return "0. the start"
    played = record.moves[version - 1]
    names = seat_names(status_of(record), -1)
    who = _name_of(names, played.seat) if played.HasField("seat") else None
    return f"{version}. {who or 'the platform'}: {played.move}"


def draw_at(
    record: lobby_pb2.ArchivedGame, board: Board, shown: lobby_pb2.ArchivedView
) -> RenderableType:
    """The board after move `shown.version`, as a spectator saw it (`shown`: GetArchivedView's
    answer)."""
    game_api = api(record.game)
    view = game_api.pb2.View()
    shown.view.Unpack(view)
    status = status_of(record, shown.version)
    status.finished = shown.finished
    status.to_act.extend(shown.to_act)
    return board.draw(game_api.pb2.GetViewResponse(status=status, view=view), -1)


def step(at: int, last: int, command: str) -> int | None:
    """Where stepping through a game of `last` moves goes from move `at` (0: the start) on a
    typed `command` (STEP_HELP); None: stop. ValueError for a command it does not know."""
    word = command.strip().lower()
    if word in ("q", "quit", "exit"):
        return None
    if word in ("", "n", "next"):
        return min(at + 1, last)
    if word in ("p", "prev", "previous", "back"):
        return max(at - 1, 0)
    if word in ("f", "first", "start"):
        return 0
    if word in ("l", "last", "end"):
        return last
    if word.isdigit():
        return min(int(word), last)
    raise ValueError(command)


async def browse(
    last: int,
    show: Callable[[int], Awaitable[None]],
    read: Callable[[str], Awaitable[str | None]],
    say: Callable[[str], None],
    at: int = 0,
) -> int:
    """Step through a game of `last` moves: `show` each move reached, `read` commands (None:
    no more) until one stops; `say` what does not move. The move it stopped at."""
    await show(at)
    while True:
        line = await read(f"move {at} of {last} (n, p, first, last, N, q): ")
        if line is None:
            return at
        try:
            reached = step(at, last, line)
        except ValueError:
            say(STEP_HELP)
            continue
        if reached is None:
            return at
        if reached == at:
            say("that is the last move" if at == last else "that is the start")
            continue
        at = reached
        await show(at)


async def _typed(prompt: str) -> str | None:
    def read() -> str | None:
        try:
            return input(prompt)
        except EOFError:
            return None

    return await asyncio.to_thread(read)


async def show(args: argparse.Namespace) -> int:
    """An archived game as a spectator saw it: who won, in words, then the board at `--move N`,
    or a board to step through at a terminal, or every move and the last board."""
    console = make_console()

    async def call(session: Session) -> int:
        record: lobby_pb2.ArchivedGame = await session.lobby.GetArchivedGame(
            lobby_pb2.GetArchivedGameRequest(game_id=args.game_id), metadata=session.metadata
        )
        if args.text:
            print(record.text, end="")
            return 0
        last = len(record.moves)
        if args.move is not None and not 0 <= args.move <= last:
            print(f"tabletop show: move is 0 to {last} in this game", file=sys.stderr)
            return 2
        board = board_of(record.game)
        seats = ", ".join(f"seat {s.index}: {_seat_text(s)}" for s in record.seats)
        console.print(
            f"{record.game} game {record.game_id}, {_when(record.created_at)} to "
            f"{_when(record.finished_at)}, {plural(last, 'move')}; {seats}"
        )
        for line in ending(record, board):
            console.print(line)

        async def board_at(version: int) -> RenderableType:
            shown: lobby_pb2.ArchivedView = await session.lobby.GetArchivedView(
                lobby_pb2.GetArchivedViewRequest(game_id=record.game_id, version=version),
                metadata=session.metadata,
            )
            return draw_at(record, board, shown)

        async def show_at(version: int) -> None:
            console.print(move_line(record, version))
            console.print(await board_at(version))

        if args.move is not None:
            await show_at(args.move)
        elif sys.stdin.isatty() and not args.every:
            await browse(last, show_at, _typed, console.print)
        else:
            for version in range(1, last + 1):
                console.print(move_line(record, version))
                if args.every:
                    console.print(await board_at(version))
            if not args.every:
                console.print(await board_at(last))
        return 0

    done = await as_saved(args, "show", call)
    return done


async def export(args: argparse.Namespace) -> int:
    """A month of the archive's public games, written as gzipped NDJSON."""
    out = Path(args.out or f"tabletop-{args.month}.ndjson.gz")
    request = lobby_pb2.ExportArchiveRequest(month=args.month, game=args.game)

    async def call(session: Session) -> str:
        written = 0
        with gzip.open(out, "wb") as file:
            async for piece in session.lobby.ExportArchive(request, metadata=session.metadata):
                file.write(piece.ndjson)
                written += piece.games
        if written:
            return f"{written} games written to {out}; `tabletop replay --file {out}` replays them"
        which = f" ({args.game})" if args.game else ""
        return f"no public games finished in {args.month}{which}"

    said = await as_saved(args, "export", call)
    if isinstance(said, int):  # refused, or nobody signed in: already said
        return said
    print(said)
    return 0


async def live(args: argparse.Namespace) -> int:
    """Games being played now, best-rated first, to watch."""
    request = lobby_pb2.ListLiveGamesRequest(game=args.game, limit=args.limit)
    found = await as_saved(args, "live", asking("ListLiveGames", request))
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
