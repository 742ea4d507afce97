"""Ratings kept: PostgreSQL's `ratings` and `rated_games` (the record: runtime/migrations/
0004_ratings.sql), counted here and copied to Redis for reading (services/ratings/cache.py)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from psycopg import AsyncConnection

from services.ratings.cache import RatingCache
from services.ratings.model import (
    Change,
    Rating,
    counts,
    is_bot_level,
    rate,
    rated_seats,
    starting,
)
from wire.records import FinishedGame


async def count(
    connection: AsyncConnection[Any],
    game: str,
    game_id: str,
    record: FinishedGame,
) -> tuple[bool, list[Change]]:
    """Count a finished game's rating changes, in one transaction: (True, its changes) when it
    counted now, (False, the changes it made then) when it was counted already (its id is in
    `rated_games`). A game that counts for nobody is recorded too, with no change."""
    async with connection.transaction():
        cursor = await connection.execute(
            "INSERT INTO rated_games (game_id, game, changes) VALUES (%s, %s, '[]')"
            " ON CONFLICT (game_id) DO NOTHING RETURNING game_id",
            (game_id, game),
        )
        if await cursor.fetchone() is None:
            cursor = await connection.execute(
                "SELECT changes FROM rated_games WHERE game_id = %s", (game_id,)
            )
            row = await cursor.fetchone()
            return False, [Change.from_json(c) for c in (row[0] if row else [])]
        rated = sorted(set(_players(record)))
        players = [p for p in rated if not is_bot_level(p)]  # a bot level's rating is fixed
        current = {p: starting(game, p) for p in rated if is_bot_level(p)}
        if players:
            # Rows made first, then locked in one order: two games of one player wait for each
            # other instead of both starting from the same rating.
            await connection.cursor().executemany(
                "INSERT INTO ratings (game, player_id, mu, sigma) VALUES (%s, %s, %s, %s)"
                " ON CONFLICT DO NOTHING",
                [(game, p, starting(game, p).mu, starting(game, p).sigma) for p in players],
            )
            cursor = await connection.execute(
                "SELECT player_id, mu, sigma, games FROM ratings"
                " WHERE game = %s AND player_id = ANY(%s) ORDER BY player_id FOR UPDATE",
                (game, players),
            )
            current |= {p: Rating(mu, sigma, games) async for p, mu, sigma, games in cursor}
        changes = rate(record, current)
        after = {c.player: c.after for c in changes}
        if after:
            await connection.cursor().executemany(
                "UPDATE ratings SET mu = %s, sigma = %s, games = %s, updated_at = now()"
                " WHERE game = %s AND player_id = %s",
                [(r.mu, r.sigma, r.games, game, p) for p, r in after.items()],
            )
        await connection.execute(
            "UPDATE rated_games SET changes = %s WHERE game_id = %s",
            (json.dumps([c.to_json() for c in changes]), game_id),
        )
    return True, changes


def _players(record: FinishedGame) -> Iterable[str]:
    return rated_seats(record.seats, record.accounts).values() if counts(record) else ()


async def current(
    connection: AsyncConnection[Any], game: str, players: Sequence[str]
) -> dict[str, Rating]:
    """The players' ratings in PostgreSQL now."""
    cursor = await connection.execute(
        "SELECT player_id, mu, sigma, games FROM ratings WHERE game = %s AND player_id = ANY(%s)",
        (game, list(players)),
    )
    return {p: Rating(mu, sigma, games) async for p, mu, sigma, games in cursor}


async def rebuild(cache: RatingCache, connection: AsyncConnection[Any]) -> dict[str, int]:
    """Write every game kind's ratings and leaderboard again from PostgreSQL (after Redis
    lost its data, or to repair it): players counted per game kind."""
    cursor = await connection.execute(
        "SELECT game, player_id, mu, sigma, games FROM ratings ORDER BY game"
    )
    by: dict[str, dict[str, Rating]] = {}
    async for game, player, mu, sigma, games in cursor:
        by.setdefault(game, {})[player] = Rating(mu, sigma, games)
    for game, ratings in by.items():
        for start in range(0, len(ratings), 1000):
            await cache.put(game, dict(list(ratings.items())[start : start + 1000]))
    return {game: len(ratings) for game, ratings in by.items()}
