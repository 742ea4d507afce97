"""Ratings kept: PostgreSQL's `ratings` and `rated_games` (the record: runtime/migrations/
0004_ratings.sql) and Redis's copy for reading (each game kind's leaderboard and ratings,
each rated game's change: runtime/keys.py), which is written from PostgreSQL's rows only,
by setting values (never adding to them), so writing it twice, or late, is harmless."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from psycopg import AsyncConnection
from redis.asyncio import Redis

from runtime import keys
from services.ratings.model import (
    Change,
    Rating,
    counts,
    held_rating,
    is_bot_level,
    on_the_board,
    rate,
    rated_seats,
    starting,
)

CHANGE_TTL_SECONDS = 7 * 24 * 3600
"""A game's rating change is kept in Redis as long as games are."""

# KEYS: the players' values (hash), their table (sorted set).
# ARGV: where a value (a JSON array) holds its count of games (1 for the first), then triples of
# (player, value, its score on the table or "" to be off the table).
# Sets each player's value unless Redis holds one counting more games already: two consumers'
# writes of one player's successive values may arrive in either order; the later one wins.
_PUT = """
local at = tonumber(ARGV[1])
for i = 2, #ARGV, 3 do
  local player, value = ARGV[i], ARGV[i + 1]
  local held = redis.call('HGET', KEYS[1], player)
  if not held or cjson.decode(held)[at] <= cjson.decode(value)[at] then
    redis.call('HSET', KEYS[1], player, value)
    if ARGV[i + 2] == '' then
      redis.call('ZREM', KEYS[2], player)
    else
      redis.call('ZADD', KEYS[2], ARGV[i + 2], player)
    end
  end
end
return 1
"""


class Held:
    """Per-player values counted from PostgreSQL, kept in Redis as a hash beside a sorted set
    (a game kind's ratings and leaderboard; its scores and best-score table)."""

    def __init__(self, redis: Redis, games_at: int) -> None:
        self.redis = redis
        self.games_at = games_at
        """Where a value's JSON array holds its count of games (1 for the first)."""
        self._put = redis.register_script(_PUT)

    async def put(
        self, values: str, table: str, entries: Iterable[tuple[str, str, float | None]]
    ) -> None:
        """Set (player, value JSON, score on the table: None for off it) for each entry."""
        args: list[Any] = [self.games_at]
        for player, value, score in sorted(entries, key=lambda entry: entry[0]):
            args += [player, value, "" if score is None else score]
        if len(args) > 1:
            await self._put(keys=[values, table], args=args)


async def count(
    connection: AsyncConnection[Any],
    game: str,
    game_id: str,
    record: Mapping[str, Any],
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
        changes = rate(record, record["status"], current)
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


def _players(record: Mapping[str, Any]) -> Iterable[str]:
    return rated_seats(record).values() if counts(record, record["status"]) else ()


async def current(
    connection: AsyncConnection[Any], game: str, players: Sequence[str]
) -> dict[str, Rating]:
    """The players' ratings in PostgreSQL now."""
    cursor = await connection.execute(
        "SELECT player_id, mu, sigma, games FROM ratings WHERE game = %s AND player_id = ANY(%s)",
        (game, list(players)),
    )
    return {p: Rating(mu, sigma, games) async for p, mu, sigma, games in cursor}


class RatingCache:
    """Redis's copy of the ratings, for the lobby's GetRating and ListLeaderboard."""

    def __init__(self, redis: Redis) -> None:
        self.redis = redis
        self.held = Held(redis, games_at=3)

    async def put(self, game: str, ratings: Mapping[str, Rating]) -> None:
        """Set these players' ratings (a rating counting fewer games than Redis's is left).
        The leaderboard holds established players only: not a provisional rating, nor a bot
        level."""
        await self.held.put(
            keys.ratings(game),
            keys.leaderboard(game),
            (
                (p, r.to_json(), r.conservative if on_the_board(p, r) else None)
                for p, r in ratings.items()
            ),
        )

    async def put_change(self, game_id: str, changes: Sequence[Change]) -> None:
        await self.redis.set(
            keys.rating_change(game_id),
            json.dumps([c.to_json() for c in changes]),
            ex=CHANGE_TTL_SECONDS,
        )

    async def change(self, game_id: str) -> list[Change] | None:
        """What a rated game did to its seats' ratings; None until it is counted."""
        found = await self.redis.get(keys.rating_change(game_id))
        return None if found is None else [Change.from_json(c) for c in json.loads(found)]

    async def rating(self, game: str, player: str) -> tuple[Rating, int | None]:
        """A player's rating and their place on the game's leaderboard (0 first; None for a
        player without a rated game)."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hget(keys.ratings(game), player)
            pipe.zrevrank(keys.leaderboard(game), player)
            held, place = await pipe.execute()
        return held_rating(game, player, held), None if held is None else place

    async def shown(self, game: str, players: Sequence[str]) -> dict[str, int]:
        """The number shown for each player (a new player's for one without a rated game)."""
        if not players:
            return {}
        held: Any = await self.redis.hmget(keys.ratings(game), list(players))
        return {p: held_rating(game, p, h).display for p, h in zip(players, held, strict=True)}

    async def known(self, game: str, players: Sequence[str]) -> dict[str, Rating]:
        """The ratings of those of `players` who have one."""
        if not players:
            return {}
        found: Any = await self.redis.hmget(keys.ratings(game), list(players))
        return {p: Rating.from_json(h) for p, h in zip(players, found, strict=True) if h}

    async def board(self, game: str, start: int, count: int) -> list[tuple[str, Rating]]:
        """The leaderboard's places start..start+count-1, best first."""
        found: Any = await self.redis.zrevrange(keys.leaderboard(game), start, start + count - 1)
        players = [p.decode() for p in found]
        if not players:
            return []
        held: Any = await self.redis.hmget(keys.ratings(game), players)
        return [(p, Rating.from_json(h)) for p, h in zip(players, held, strict=True)]

    async def rebuild(self, connection: AsyncConnection[Any]) -> dict[str, int]:
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
                await self.put(game, dict(list(ratings.items())[start : start + 1000]))
        return {game: len(ratings) for game, ratings in by.items()}
