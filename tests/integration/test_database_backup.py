"""The backup docs/operations.md describes, done: a `pg_dump` of the accounts' database,
restored into a new, empty one with `pg_restore`, brings every account back (its password
logs in), and `tabletop migrate` then finds nothing to do."""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path

import psycopg

from client.session import Session
from runtime.localpg import LocalPostgres, program
from tests.platform import Platform
from tests.timing import patience


async def test_a_dump_restored_into_an_empty_database_keeps_every_account(
    redis_url: str, database_url: str, postgres: LocalPostgres, tmp_path: Path
) -> None:
    async with Platform(redis_url, database_url=database_url) as platform:
        for name in ("ann", "ben"):
            session = Session(platform.target)
            await session.register(name, f"{name}'s long password")
            await session.close()
    dump = tmp_path / "tabletop.dump"
    subprocess.run(
        [program("pg_dump"), "--format=custom", f"--file={dump}", database_url],
        check=True,
        timeout=patience(30),
    )
    restored = f"restored_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres.admin_url, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{restored}"')
    restored_url = postgres.url.rsplit("/", 1)[0] + "/" + restored
    subprocess.run(
        [program("pg_restore"), "--no-owner", f"--dbname={restored_url}", str(dump)],
        check=True,
        timeout=patience(30),
    )
    migrate = subprocess.run(
        [sys.executable, "-m", "client.cli", "migrate", "--database", restored_url],
        capture_output=True,
        text=True,
        timeout=patience(30),
    )
    assert migrate.returncode == 0, migrate.stderr
    assert "the schema is up to date" in migrate.stdout
    async with Platform(redis_url, database_url=restored_url) as platform:
        for name in ("ann", "ben"):
            session = Session(platform.target)
            reply = await session.account_login(name.upper(), f"{name}'s long password")
            assert reply.name == name
            await session.close()
