"""The archive: finished games archived per second by one and by two archivers (in this process)
on a local redis-server and PostgreSQL, and the size of an archived game per game kind. The
finished games are played out first with random legal moves and committed move by move through
the game service's own store, so the archivers read logs as the platform writes them."""

from __future__ import annotations

import asyncio
import random
import time

import uvloop

import games
from bench import sized
from games.replay import Step, start, step
from runtime import db, keys
from runtime.game_log import finished_record, now_ms
from runtime.localpg import LocalPostgres
from runtime.localredis import LocalRedis
from runtime.redis import connect_redis
from services.archive.archiver import Archiver
from services.game.core import status_of
from services.game.store import GameStore
from wire.records import GameMeta

GAMES = int(sized(400, 12))
"""Finished games per measurement (a quarter of each game kind)."""
OPTIONS = {"solo": {"players": 2, "mode": "rounds", "rounds": 1}}
"""One round of two seats: a Solo game as long as most."""


async def _finish(store: GameStore, count: int, rng: random.Random) -> None:
    """`count` games played out and committed, each finishing version on the finished games'
    stream."""
    kinds = games.names()
    for index in range(count):
        game = kinds[index % len(kinds)]
        position = start(game, rng.getrandbits(63), OPTIONS.get(game, {}))
        players = [f"a-{rng.getrandbits(64):016x}" for _ in range(position.state.num_seats)]
        meta = GameMeta.from_json({
            "game": game, "seats": players, "names": [f"p{i}" for i in range(len(players))],
            "options": OPTIONS.get(game, {}), "seed": 0, "edition": position.state.edition,
            "sponsor": "",
        })  # fmt: skip
        game_id = f"{game}-{rng.getrandbits(80):020x}"
        await store.create(
            game_id, position.state.serialize(), meta, [],
            status_of(position.state),
            table=None, time_ms=now_ms(),
        )  # fmt: skip
        version, tag = 0, ""
        while not position.finished:
            seat = position.state.to_act()[0]
            move = rng.choice(position.state.legal_moves(seat))
            position = step(position, games.get(game).time_control, Step(seat, move))
            status = status_of(position.state)
            commit = await store.commit(
                game_id, expected_version=version, expected_tag=tag,
                snapshot=position.state.serialize(), request_id=f"r{version}", actor=seat,
                move=move, events=[e.to_json() for e in position.events], status=status,
                table=None, time_ms=now_ms(), finished=finished_record(meta, status),
            )  # fmt: skip
            version, tag = commit.version, commit.tag


async def _archive(redis_url: str, database_url: str, archivers: int) -> float:
    """Seconds `archivers` archivers take to archive every game on the stream."""
    redis = connect_redis(redis_url)
    pool = db.pool(database_url)
    await pool.open(wait=True)
    working = [
        Archiver(redis=redis, database=pool, consumer=f"bench-{i}", block_seconds=0.05)
        for i in range(archivers)
    ]
    stop = asyncio.Event()
    started = time.perf_counter()
    tasks = [asyncio.create_task(a.run(stop)) for a in working]
    while sum(a.archived for a in working) < GAMES:  # noqa: ASYNC110 (their counts, polled)
        await asyncio.sleep(0.01)
    seconds = time.perf_counter() - started
    stop.set()
    await asyncio.gather(*tasks)
    await pool.close()
    await redis.aclose()
    return seconds


def _sizes(database_url: str) -> list[tuple[str, float, float]]:
    """Per game kind: the average archived game's bytes (its row, as PostgreSQL stores it,
    compressed where it compresses) and moves."""
    with db.connect(database_url) as connection:
        rows = connection.execute(
            "SELECT game, avg(pg_column_size(g.*)), avg(jsonb_array_length(moves))"
            " FROM archived_games g GROUP BY game ORDER BY game"
        ).fetchall()
    return [(game, float(size), float(moves)) for game, size, moves in rows]


async def _run() -> list[str]:
    lines = []
    rng = random.Random(1)
    redis_server, postgres = LocalRedis(appendonly=False), LocalPostgres()
    try:
        db.migrate(postgres.url)
        store = GameStore(connect_redis(redis_server.url))
        for archivers in (1, 2):
            await store.redis.delete(keys.FINISHED_GAMES)
            await _finish(store, GAMES, rng)
            seconds = await _archive(redis_server.url, postgres.url, archivers)
            lines.append(
                f"{GAMES} finished games archived by {archivers} archiver(s) in {seconds:.2f} s: "
                f"{GAMES / seconds:.0f} games/s"
            )
        await store.redis.aclose()
        for game, size, moves in _sizes(postgres.url):
            lines.append(f"an archived {game} game: {size / 1024:.1f} KiB ({moves:.0f} moves)")
    finally:
        redis_server.stop()
        postgres.stop()
    return lines


def run() -> list[str]:
    return uvloop.run(_run())
