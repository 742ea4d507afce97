"""PostgreSQL, the system of record: what must outlive any Redis flush or failover (accounts,
sessions, tokens). Redis stays the hot path: nothing here is called on a Play.

Schema changes are versioned migrations, `runtime/migrations/NNNN_name.sql`, applied in order
by `migrate()` (`tabletop migrate`): each in a transaction of its own, recorded in
`schema_migrations`, under an advisory lock so that two runs at once apply each one once.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import psycopg
from psycopg.rows import TupleRow
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from runtime.config import env_float, env_int

log = logging.getLogger("tabletop.db")

MIGRATIONS = Path(__file__).with_name("migrations")
_LOCK = 0x7461626C65  # pg_advisory_lock key: "table"
_NAME = re.compile(r"(\d{4})_([a-z0-9_]+)\.sql")


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    path: Path


def migrations() -> list[Migration]:
    found = []
    for path in sorted(MIGRATIONS.glob("*.sql")):
        match = _NAME.fullmatch(path.name)
        if match is None:
            raise RuntimeError(f"{path.name}: migrations are named NNNN_name.sql")
        found.append(Migration(int(match[1]), match[2], path))
    versions = [m.version for m in found]
    if versions != list(range(1, len(found) + 1)):
        raise RuntimeError(f"migrations must be numbered 1, 2, 3... without gaps: {versions}")
    return found


def connect(
    url: str, wait_seconds: float = 0.0, waiting: Callable[[str], None] | None = None
) -> psycopg.Connection[TupleRow]:
    """A connection (autocommit); while the database cannot be reached (not started yet, or
    starting up), tried again every half second for up to `wait_seconds`, then the last error.
    libpq tells a refused login only by its message, so that is waited out too. `waiting` is
    told the first error, when it waits."""
    deadline = time.monotonic() + wait_seconds
    told = False
    while True:
        try:
            return psycopg.connect(url, autocommit=True, connect_timeout=10)
        except psycopg.OperationalError as error:
            if time.monotonic() >= deadline:
                raise
            if waiting is not None and not told:
                waiting(str(error).strip())
                told = True
            time.sleep(0.5)


def migrate(
    url: str, wait_seconds: float = 0.0, waiting: Callable[[str], None] | None = None
) -> list[str]:
    """Applies the migrations the database does not have yet; the names of those applied.
    `wait_seconds`, `waiting`: how long to wait for the database to answer first, and who to
    tell that it waits (see `connect`)."""
    applied: list[str] = []
    with connect(url, wait_seconds, waiting) as connection:
        connection.execute("SELECT pg_advisory_lock(%s)", (_LOCK,))
        try:
            connection.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                " version integer PRIMARY KEY, name text NOT NULL,"
                " applied_at timestamptz NOT NULL DEFAULT now())"
            )
            done = {row[0] for row in connection.execute("SELECT version FROM schema_migrations")}
            known = migrations()
            if done - {m.version for m in known}:
                raise RuntimeError(
                    f"the database has migrations this code does not know ({sorted(done)}): "
                    "it was migrated by a newer version"
                )
            for migration in known:
                if migration.version in done:
                    continue
                with connection.transaction():
                    connection.execute(migration.path.read_text().encode())
                    connection.execute(
                        "INSERT INTO schema_migrations (version, name) VALUES (%s, %s)",
                        (migration.version, migration.name),
                    )
                applied.append(f"{migration.version:04d}_{migration.name}")
                log.info("migration applied", extra={"migration": applied[-1]})
        finally:
            connection.execute("SELECT pg_advisory_unlock(%s)", (_LOCK,))
    return applied


def pool(url: str) -> AsyncConnectionPool:
    """A bounded pool of connections (DATABASE_POOL_SIZE, default 10), not open yet (`await
    pool.open(wait=False)`: the connections are made in the background, and a database that is
    down then does not stop a start). A call that finds them all busy, or none made, waits up to
    DATABASE_TIMEOUT_SECONDS (default 5) and then fails."""
    return AsyncConnectionPool(
        url,
        min_size=1,
        max_size=env_int("DATABASE_POOL_SIZE", 10),
        timeout=env_float("DATABASE_TIMEOUT_SECONDS", 5.0),
        kwargs={"autocommit": True, "connect_timeout": 5},
        open=False,
    )


def database_failed(error: BaseException) -> bool:
    """Whether `error` is the database being away for a while (or not migrated yet: `tabletop
    migrate` may run beside the process), a failure to wait out."""
    return isinstance(error, psycopg.OperationalError | PoolTimeout | psycopg.errors.UndefinedTable)
