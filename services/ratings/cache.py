"""Redis's copy of the ratings, for reading (each game kind's leaderboard and ratings, each rated
game's change: runtime/keys.py): what the other domains read of ratings. It is written from
PostgreSQL's rows only (services/ratings/store.py), by setting values (never adding to them), so
writing it twice, or late, is harmless."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from redis.asyncio import Redis

from runtime import keys
from services.ratings.model import Change, Rating, held_rating, on_the_board

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
