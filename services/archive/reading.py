"""Reading the archive, for the lobby's ListArchivedGames, GetArchivedGame and GetArchivedView
(docs/archive.md). Everything it answers is what a spectator could see: the seats, the moves as
played, the clocks, the result, and the public view of each version, which it gets by replaying
the game's log from its seed (kept in the archive, never sent). Seats are called by their
players' current names (services/lobby/names.py): an account's username, else the name the seat
was played under."""

from __future__ import annotations

import asyncio
import contextlib
from collections import OrderedDict
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from google.protobuf.any_pb2 import Any as AnyMessage
from google.protobuf.struct_pb2 import Struct
from google.protobuf.timestamp_pb2 import Timestamp
from psycopg import AsyncConnection
from psycopg_pool import AsyncConnectionPool

import games
from engines.contract import GameError
from games.clock import TimeControl
from games.records import game_text
from games.replay import Position, Step, start, step
from runtime import keys
from runtime.db import database_failed
from services.archive import store
from services.archive.export import month_bounds, month_pieces
from services.archive.record import public_record, public_seats
from services.archive.store import Page
from tabletop.lobby.v1 import lobby_pb2
from wire.clock import time_control_message
from wire.errors import ApiError
from wire.metadata import Caller
from wire.players import is_bot

if TYPE_CHECKING:
    from services.lobby.names import Names

OUTCOMES = {
    "win": lobby_pb2.OUTCOME_WIN,
    "loss": lobby_pb2.OUTCOME_LOSS,
    "draw": lobby_pb2.OUTCOME_DRAW,
    "none": lobby_pb2.OUTCOME_NONE,
}
OUTCOME_NAMES = {value: name for name, value in OUTCOMES.items()}
HISTORY_LIMIT = 100
EXPORTS_AT_ONCE = 2
"""Monthly exports a lobby streams at once (each holds a database connection throughout)."""
REPLAYS_KEPT = 64
"""Archived games whose latest replayed position is kept, so that stepping through a game
version by version replays each move once."""


def _timestamp(at: Any) -> Timestamp:
    stamp = Timestamp()
    stamp.FromDatetime(at)
    return stamp


def _ms(ms: int) -> Timestamp:
    stamp = Timestamp()
    stamp.FromMilliseconds(ms)
    return stamp


def _seats(row: Mapping[str, Any]) -> list[lobby_pb2.ArchivedSeat]:
    return [
        lobby_pb2.ArchivedSeat(
            index=index,
            player_id=seat["player_id"],
            name=seat["name"],
            bot=seat["bot"],
            rating=seat.get("rating"),
            rating_after=seat.get("rating_after"),
            outcome=OUTCOMES[seat["outcome"]],
            taken_over_by=seat.get("taken_over_by", ""),
        )
        for index, seat in enumerate(public_seats(row))
    ]


class Archive:
    def __init__(self, database: AsyncConnectionPool | None, names: Names) -> None:
        self.database = database
        self.names = names
        self._replays: OrderedDict[str, tuple[int, Position]] = OrderedDict()
        self._exports = asyncio.Semaphore(EXPORTS_AT_ONCE)

    @contextlib.asynccontextmanager
    async def _connection(self) -> AsyncIterator[AsyncConnection[Any]]:
        """A connection to the archive; a database away (or not migrated yet) answers
        UNAVAILABLE (retrying is safe)."""
        try:
            async with self._pool().connection() as connection:
                yield connection
        except Exception as error:
            if not database_failed(error):
                raise
            raise ApiError("UNAVAILABLE", "the archive cannot be reached; retry") from None

    def _pool(self) -> AsyncConnectionPool:
        if self.database is None:
            raise ApiError(
                "ACCOUNTS_DISABLED", "this platform keeps no archive (its lobby has no database)"
            )
        return self.database

    async def _named(self, rows: Sequence[dict[str, Any]], caller: Caller) -> None:
        """The rows' seats called by their players' current names (one call for them all)."""
        seats = [seat for row in rows for seat in row["seats"]]
        names = await self.names.current(
            [s["player_id"] for s in seats], caller, [s["name"] for s in seats]
        )
        for seat, name in zip(seats, names, strict=True):
            seat["name"] = name

    async def _everyone(
        self, rows: Sequence[dict[str, Any]], connection: AsyncConnection[Any]
    ) -> None:
        """`_named` for an export: as anyone reads it."""
        await self._named(rows, Caller())

    async def _row(self, game_id: str, caller: Caller, *, named: bool = False) -> dict[str, Any]:
        """An archived game the caller may read (`named`: its seats called by their current
        names)."""
        if not keys.GAME_ID_PATTERN.fullmatch(game_id):
            raise ApiError(
                "INVALID_ARGUMENT", f"give the game_id of a finished game; got {game_id[:40]!r}"
            )
        async with self._connection() as connection:
            row = await store.archived_game(connection, game_id)
            if row is not None and named:
                await self._named([row], caller)
        seated = row is not None and any(s["player_id"] == caller.player for s in row["seats"])
        if row is None or not (store.shown(row, store.utc_today()) or (caller.player and seated)):
            raise ApiError(
                "GAME_NOT_FOUND",
                f"no archived game {game_id} (a game is archived once it ends; a deal of the "
                "day is shown to others once its day is over, UTC)",
            )
        return row

    async def list_archived_games(
        self, request: lobby_pb2.ListArchivedGamesRequest, caller: Caller
    ) -> lobby_pb2.ListArchivedGamesResponse:
        player = await self.names.player(request.player_id, request.username, caller)
        if request.game and request.game not in games.names():
            raise ApiError(
                "INVALID_ARGUMENT",
                f"unknown game {request.game[:40]!r}; games are: {', '.join(games.names())}",
            )
        limit = request.limit or 20
        if not 1 <= limit <= HISTORY_LIMIT:
            raise ApiError("INVALID_ARGUMENT", f"limit is 1 to {HISTORY_LIMIT}; got {limit}")
        if request.outcome and request.outcome not in OUTCOME_NAMES:
            raise ApiError("INVALID_ARGUMENT", f"unknown outcome {request.outcome}")
        opponent = ""
        if request.opponent or request.opponent_username:
            opponent = await self.names.player(request.opponent, request.opponent_username, caller)
        after = None
        if request.page_token:
            after = Page.of(request.page_token)
            if after is None:
                raise ApiError("INVALID_ARGUMENT", "page_token is not one this call gave")
        async with self._connection() as connection:
            rows = await store.history(
                connection, player, game=request.game,
                outcome=OUTCOME_NAMES.get(request.outcome, ""), opponent=opponent, after=after,
                limit=limit, private_too=player == caller.player,
            )  # fmt: skip
            await self._named(rows, caller)
        reply = lobby_pb2.ListArchivedGamesResponse(
            games=[
                lobby_pb2.ArchivedSummary(
                    game_id=row["game_id"],
                    game=row["game"],
                    finished_at=_timestamp(row["finished_at"]),
                    seats=_seats(row),
                    outcome=OUTCOMES[row["outcome"]],
                    rated=row["rated"],
                    end=row["end_reason"],
                    moves=row["moves"],
                )
                for row in rows
            ]
        )
        if len(rows) == limit:
            reply.next_page_token = Page(rows[-1]["finished_at"], rows[-1]["game_id"]).token()
        return reply

    async def get_archived_game(
        self, request: lobby_pb2.GetArchivedGameRequest, caller: Caller
    ) -> lobby_pb2.ArchivedGame:
        row = await self._row(request.game_id, caller, named=True)
        options = Struct()
        options.update(row["options"])
        message = lobby_pb2.ArchivedGame(
            game_id=row["game_id"],
            game=row["game"],
            rules_edition=row["edition"],
            options=options,
            rated=row["rated"],
            day=row["day"].isoformat() if row["day"] else "",
            seats=_seats(row),
            end=row["end_reason"],
            created_at=_timestamp(row["created_at"]),
            finished_at=_timestamp(row["finished_at"]),
            text=game_text(public_record(row)),
        )
        if row["time_control"] is not None:
            message.time_control.CopyFrom(
                time_control_message(TimeControl.from_json(row["time_control"]))
            )
        result = row["result"]
        if result is not None:
            message.result.winners.extend(result["winners"])
            for seat, score in result["scores"].items():
                message.result.scores[int(seat)] = float(score)
            message.result.detail.update(result["detail"])
        for version, (actor, move, ms, remaining, _bot) in enumerate(row["moves"], start=1):
            played = lobby_pb2.ArchivedMove(
                version=version, move=move, time=_ms(ms), remaining_ms=remaining or []
            )
            if actor >= 0:
                played.seat = actor
            message.moves.append(played)
        return message

    async def get_archived_view(
        self, request: lobby_pb2.GetArchivedViewRequest, caller: Caller
    ) -> lobby_pb2.ArchivedView:
        row = await self._row(request.game_id, caller)
        moves = row["moves"]
        if not 0 <= request.version <= len(moves):
            raise ApiError(
                "INVALID_ARGUMENT",
                f"version is 0 to {len(moves)} in this game; got {request.version}",
            )
        position = self._replayed(row, request.version)
        view = AnyMessage()
        view.Pack(games.get(row["game"]).adapter.view(position.state.view(None)))
        return lobby_pb2.ArchivedView(
            version=request.version,
            to_act=[] if position.finished else list(position.state.public_to_act()),
            finished=position.finished,
            view=view,
        )

    def _replayed(self, row: Mapping[str, Any], version: int) -> Position:
        """The game at `version`, replayed from its seed (from the last replayed position of the
        game when that is not past `version`)."""
        game_id = row["game_id"]
        tc = TimeControl.from_json(row["time_control"]) if row["time_control"] else TimeControl()
        held = self._replays.get(game_id)
        if held is not None and held[0] <= version:
            at, position = held
        else:
            at = 0
            position = start(
                row["game"], row["seed"], row["options"], edition=row["edition"],
                time_control=tc, people=[not is_bot(s["player_id"]) for s in row["seats"]],
                time_ms=int(row["created_at"].timestamp() * 1000),
            )  # fmt: skip
        try:
            for actor, move, ms, _remaining, bot in row["moves"][at:version]:
                position = step(position, tc, Step(actor, move, ms, bot))
        except GameError as error:  # an archive that does not replay: a bug, said plainly
            raise ApiError(
                "UNAVAILABLE", f"archived game {game_id} does not replay: {error}"
            ) from None
        self._replays[game_id] = (version, position)
        self._replays.move_to_end(game_id)
        while len(self._replays) > REPLAYS_KEPT:
            self._replays.popitem(last=False)
        return position

    async def export_archive(
        self, request: lobby_pb2.ExportArchiveRequest, caller: Caller
    ) -> AsyncIterator[lobby_pb2.ExportChunk]:
        """The month's public games as NDJSON pieces (at most EXPORTS_AT_ONCE at once here)."""
        try:
            month_bounds(request.month)
        except ValueError:
            raise ApiError(
                "INVALID_ARGUMENT",
                f"month is YYYY-MM (UTC, years 0001 to 9998); got {request.month[:20]!r}",
            ) from None
        if request.game and request.game not in games.names():
            raise ApiError("INVALID_ARGUMENT", f"unknown game {request.game[:40]!r}")
        pool = self._pool()
        if self._exports.locked():
            raise ApiError(
                "LIMIT_REACHED",
                f"{EXPORTS_AT_ONCE} exports are running on this lobby; try again in a while",
                limit="exports",
                max=str(EXPORTS_AT_ONCE),
            )
        return self._export(pool, request.month, request.game)

    async def _export(
        self, pool: AsyncConnectionPool, month: str, game: str
    ) -> AsyncIterator[lobby_pb2.ExportChunk]:
        async with self._exports:
            try:
                async for ndjson, count in month_pieces(pool, month, game, self._everyone):
                    yield lobby_pb2.ExportChunk(ndjson=ndjson, games=count)
            except Exception as error:
                if not database_failed(error):
                    raise
                raise ApiError("UNAVAILABLE", "the archive cannot be reached; retry") from None

    def handlers(self) -> dict[str, Any]:
        return {
            "ListArchivedGames": self.list_archived_games,
            "GetArchivedGame": self.get_archived_game,
            "GetArchivedView": self.get_archived_view,
        }
