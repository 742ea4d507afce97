"""The archive in PostgreSQL (runtime/migrations/0006_archive.sql): writing a finished game once,
and reading players' histories and archived games."""

from __future__ import annotations

import datetime
import re
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any

from psycopg import AsyncConnection
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from runtime import keys

COLUMNS = (
    "game_id", "game", "edition", "options", "time_control", "seed", "day", "rated", "public",
    "seats",
    "result", "end_reason", "moves", "created_at", "finished_at",
)  # fmt: skip
JSON_COLUMNS = {"options", "time_control", "seats", "result", "moves"}


async def store(connection: AsyncConnection[Any], row: Mapping[str, Any]) -> bool:
    """Write an archived game (services/archive/record.py) and its seats in one transaction;
    False when it was archived already (nothing changes)."""
    values = [Jsonb(row[c]) if c in JSON_COLUMNS else row[c] for c in COLUMNS]
    async with connection.transaction():
        cursor = await connection.execute(
            f"INSERT INTO archived_games ({', '.join(COLUMNS)})"
            f" VALUES ({', '.join(['%s'] * len(COLUMNS))})"
            " ON CONFLICT (game_id) DO NOTHING RETURNING game_id",
            values,
        )
        if await cursor.fetchone() is None:
            return False
        await connection.cursor().executemany(
            "INSERT INTO archived_seats (game_id, seat, player_id, game, outcome, finished_at)"
            " VALUES (%s, %s, %s, %s, %s, %s)",
            [
                (row["game_id"], seat, s["player_id"], row["game"], outcome, row["finished_at"])
                for seat, (s, outcome) in enumerate(zip(row["seats"], row["outcomes"], strict=True))
            ],
        )
    return True


SHOWN = "g.public AND (g.day IS NULL OR g.day < %(today)s)"
"""The archived games others may read: public ones, but a deal of the day only once its day
(UTC) is over, so that nobody copies it on their own try."""


def utc_today() -> datetime.date:
    return datetime.datetime.now(datetime.UTC).date()


def shown(row: Mapping[str, Any], today: datetime.date) -> bool:
    """Whether others may read an archived game (as SHOWN says)."""
    return bool(row["public"]) and (row["day"] is None or row["day"] < today)


@dataclass(frozen=True, slots=True)
class Page:
    """Where a page of a history starts: after this game (the previous page's last)."""

    finished_at: datetime.datetime
    game_id: str

    def token(self) -> str:
        return f"{int(self.finished_at.timestamp() * 1_000_000)}.{self.game_id}"

    @staticmethod
    def of(token: str) -> Page | None:
        """The page a token names; None for a malformed one (a time out of range included)."""
        found = _TOKEN.fullmatch(token)
        if found is None:
            return None
        try:
            at = datetime.datetime.fromtimestamp(int(found[1]) / 1_000_000, datetime.UTC)
        except (OverflowError, OSError, ValueError):
            return None
        return Page(at, found[2])


_TOKEN = re.compile(rf"([0-9]{{1,17}})\.({keys.GAME_ID_PATTERN.pattern})")
"""A page token: microseconds since 1970 (UTC), a dot, a game id (runtime/keys.py)."""


async def history(
    connection: AsyncConnection[Any],
    player: str,
    *,
    game: str = "",
    outcome: str = "",
    opponent: str = "",
    after: Page | None = None,
    limit: int = 20,
    private_too: bool = False,
) -> list[dict[str, Any]]:
    """A player's archived games as others see them (`private_too`: as the player does, private
    tables' games and deals of the day not over yet included), newest first: each game's row
    (without its moves and seed), with the player's seat, outcome and the number of moves."""
    where = ["s.player_id = %(player)s"] + ([] if private_too else [SHOWN])
    if game:
        where.append("s.game = %(game)s")
    if outcome:
        where.append("s.outcome = %(outcome)s")
    if opponent:
        where.append(
            "EXISTS (SELECT 1 FROM archived_seats o WHERE o.game_id = s.game_id"
            " AND o.player_id = %(opponent)s AND o.seat <> s.seat)"
        )
    if after is not None:
        where.append("(s.finished_at, s.game_id) < (%(at)s, %(after)s)")
    # DISTINCT ON: a player holding several seats of one game (a table of their own) is listed
    # once, at their first seat.
    query = (
        "SELECT DISTINCT ON (s.finished_at, s.game_id)"
        " g.game_id, g.game, g.rated, g.seats, g.end_reason, g.finished_at,"
        " jsonb_array_length(g.moves) AS moves, s.seat, s.outcome,"
        " (SELECT array_agg(outcome ORDER BY seat) FROM archived_seats a"
        "  WHERE a.game_id = g.game_id) AS outcomes, r.changes"
        " FROM archived_seats s JOIN archived_games g ON g.game_id = s.game_id"
        " LEFT JOIN rated_games r ON r.game_id = g.game_id"
        f" WHERE {' AND '.join(where)}"
        " ORDER BY s.finished_at DESC, s.game_id DESC, s.seat LIMIT %(limit)s"
    )
    params = {
        "player": player, "game": game, "outcome": outcome, "opponent": opponent,
        "at": after.finished_at if after else None, "after": after.game_id if after else None,
        "limit": limit, "today": utc_today(),
    }  # fmt: skip
    async with connection.cursor(row_factory=dict_row) as cursor:
        await cursor.execute(query, params)
        return await cursor.fetchall()


GAME_ROWS = (
    "SELECT g.*, r.changes,"
    " (SELECT array_agg(outcome ORDER BY seat) FROM archived_seats a"
    "  WHERE a.game_id = g.game_id) AS outcomes"
    " FROM archived_games g LEFT JOIN rated_games r ON r.game_id = g.game_id"
)
"""Archived games' rows (seed included: for replaying them, never to be shown), with their
seats' outcomes and their rating changes once counted."""


async def archived_game(connection: AsyncConnection[Any], game_id: str) -> dict[str, Any] | None:
    """An archived game's row (GAME_ROWS)."""
    async with connection.cursor(row_factory=dict_row) as cursor:
        await cursor.execute(GAME_ROWS + " WHERE g.game_id = %s", (game_id,))
        return await cursor.fetchone()


async def finished_between(
    connection: AsyncConnection[Any],
    start: datetime.datetime,
    end: datetime.datetime,
    game: str = "",
) -> AsyncIterator[list[dict[str, Any]]]:
    """The archived games others may read (SHOWN) that finished in [start, end), oldest first,
    in batches (a server-side cursor: a month of games never sits in memory at once)."""
    query = GAME_ROWS + f" WHERE {SHOWN} AND g.finished_at >= %(start)s AND g.finished_at < %(end)s"
    params: dict[str, Any] = {"start": start, "end": end, "today": utc_today()}
    if game:
        query += " AND g.game = %(game)s"
        params["game"] = game
    async with connection.cursor(name="export", row_factory=dict_row) as cursor:
        await cursor.execute(query + " ORDER BY g.finished_at, g.game_id", params)
        while rows := await cursor.fetchmany(500):
            yield rows
