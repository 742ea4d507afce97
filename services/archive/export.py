"""The archive's monthly export (LobbyService.ExportArchive, `tabletop export`): every public
game that finished in a month, one public record per line (services/archive/record.py:
everything but the seed), as NDJSON in pieces, in the spirit of the Lichess open database.
`tabletop replay --file` reads it back (games/records.py)."""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

from psycopg import AsyncConnection
from psycopg_pool import AsyncConnectionPool

from services.archive.record import public_record
from services.archive.store import finished_between

CHUNK_BYTES = 256 * 1024
"""A piece of the export holds whole lines up to this size (or one longer line)."""


def month_bounds(month: str) -> tuple[datetime.datetime, datetime.datetime]:
    """[first instant, first instant of the next month) of `YYYY-MM` (years 1 to 9998), UTC;
    ValueError else."""
    found = re.fullmatch(r"([0-9]{4})-([0-9]{2})", month)
    if found is None or not 1 <= int(found[1]) <= 9998 or not 1 <= int(found[2]) <= 12:
        raise ValueError(month)
    year, number = int(found[1]), int(found[2])
    start = datetime.datetime(year, number, 1, tzinfo=datetime.UTC)
    end = datetime.datetime(year + number // 12, number % 12 + 1, 1, tzinfo=datetime.UTC)
    return start, end


Named = Callable[[Sequence[dict[str, Any]], AsyncConnection[Any]], Awaitable[None]]
"""What calls rows' seats by their players' current names (on the connection given)."""


async def month_pieces(
    database: AsyncConnectionPool, month: str, game: str = "", named: Named | None = None
) -> AsyncIterator[tuple[bytes, int]]:
    """The month's public records as NDJSON: (whole lines, games in them), piece by piece;
    `named`: each batch of rows named first."""
    start, end = month_bounds(month)
    lines: list[bytes] = []
    size = 0
    async with database.connection() as connection, connection.transaction():
        async for rows in finished_between(connection, start, end, game):
            if named is not None:
                await named(rows, connection)
            for row in rows:
                line = (json.dumps(public_record(row), sort_keys=True) + "\n").encode()
                if lines and size + len(line) > CHUNK_BYTES:
                    yield b"".join(lines), len(lines)
                    lines, size = [], 0
                lines.append(line)
                size += len(line)
    if lines:
        yield b"".join(lines), len(lines)
