"""Score tables of the games played alone (Solace): PostgreSQL's `scores` is the record (one row
per counted game: runtime/migrations/0005_scores.sql); Redis keeps each player's games, total and
best as PostgreSQL sums them, the best-score table, and each recent day's deal-of-the-day table
(runtime/keys.py), written by setting values from PostgreSQL's rows, so writing twice, or late,
is harmless, and rebuildable from there."""

from __future__ import annotations

import datetime
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from psycopg import AsyncConnection
from redis.asyncio import Redis

from runtime import keys
from runtime.accounts_client import AccountsClient
from services.ratings.cache import Held
from services.ratings.model import score_of
from wire.records import FinishedGame


@dataclass(frozen=True, slots=True)
class Scores:
    """A player's counted games of a game played alone."""

    games: int = 0
    total: float = 0.0
    best: float = 0.0

    @property
    def average(self) -> float:
        return self.total / self.games if self.games else 0.0

    def to_json(self) -> str:
        return json.dumps([self.games, self.total, self.best])

    @classmethod
    def from_json(cls, value: bytes | str | None) -> Scores:
        if value is None:
            return cls()
        games, total, best = json.loads(value)
        return cls(int(games), float(total), float(best))


async def count_score(
    connection: AsyncConnection[Any],
    game: str,
    game_id: str,
    record: FinishedGame,
    finished_ms: int | None = None,
    accounts: AccountsClient | None = None,
) -> tuple[bool, str, float, Scores] | None:
    """Count a finished game played alone on its score table, once: (whether it counted now,
    the player, the game's score, their scores as PostgreSQL sums them now); None for a game
    that does not go to the table (a guest's, one without a result). A deal of the day's row
    keeps its day (its place on the day's table) only when `on_days_table` says so (asking
    `accounts`, the accounts service: out of reach, its ApiError UNAVAILABLE is raised before
    anything is written, for the caller to try the game again)."""
    found = score_of(record)
    if found is None:
        return None
    player, score = found
    day = record.day
    if day and not await on_days_table(accounts, player, day, finished_ms):
        day = None
    async with connection.transaction():
        cursor = await connection.execute(
            "INSERT INTO scores (game_id, game, player_id, score, day) VALUES (%s, %s, %s, %s, %s)"
            " ON CONFLICT (game_id) DO NOTHING RETURNING game_id",
            (game_id, game, player, score, day),
        )
        now = await cursor.fetchone() is not None
    return now, player, score, (await scores_of(connection, game, [player]))[player]


async def on_days_table(
    accounts: AccountsClient | None, player: str, day: str, finished_ms: int | None
) -> bool:
    """Whether a deal of `day` counts on that day's table: an account's made before the day
    began (an account made to scout the deal counts for nothing there; when it was made is
    asked of the accounts service, `accounts`: without one, no account is known to be that
    old), finished on its day (UTC; `finished_ms`: when, if known): once the day is over others
    see its games."""
    start = datetime.datetime.combine(
        datetime.date.fromisoformat(day), datetime.time(), datetime.UTC
    )
    start_ms = int(start.timestamp()) * 1000
    if finished_ms is not None and finished_ms >= start_ms + 86400 * 1000:
        return False
    if accounts is None:
        return False
    made = (await accounts.made([player])).get(player)
    return made is not None and made < start_ms


async def day_counted(connection: AsyncConnection[Any], game_id: str) -> str | None:
    """The day whose deal-of-the-day table a counted game is on (YYYY-MM-DD), if any."""
    cursor = await connection.execute("SELECT day FROM scores WHERE game_id = %s", (game_id,))
    row = await cursor.fetchone()
    return row[0].isoformat() if row and row[0] else None


async def scores_of(
    connection: AsyncConnection[Any], game: str, players: list[str] | None = None
) -> dict[str, Scores]:
    """The players' scores as PostgreSQL sums them (every player's when `players` is None)."""
    cursor = await connection.execute(
        "SELECT player_id, count(*), sum(score), max(score) FROM scores WHERE game = %s"
        + ("" if players is None else " AND player_id = ANY(%s)")
        + " GROUP BY player_id",
        (game,) if players is None else (game, players),
    )
    return {p: Scores(n, total, best) async for p, n, total, best in cursor}


class ScoreCache:
    """Redis's copy of the score tables, for the lobby's GetScores and ListScoreTable."""

    def __init__(self, redis: Redis) -> None:
        self.redis = redis
        self.held = Held(redis, games_at=1)

    async def put(self, game: str, scores: Mapping[str, Scores]) -> None:
        """Set these players' scores (ones counting fewer games than Redis's are left)."""
        await self.held.put(
            keys.score_stats(game),
            keys.score_table(game),
            ((p, s.to_json(), s.best) for p, s in scores.items()),
        )

    async def put_day(self, game: str, day: str, scores: Mapping[str, float]) -> None:
        """Set these players' scores on the deal of `day`; kept DAYS_KEPT days after it."""
        if not scores:
            return
        ends = datetime.date.fromisoformat(day) + datetime.timedelta(days=keys.DAYS_KEPT + 1)
        key = keys.day_table(game, day)
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.zadd(key, dict(scores))
            pipe.expireat(key, datetime.datetime.combine(ends, datetime.time(), datetime.UTC))
            await pipe.execute()

    async def scores(self, game: str, player: str) -> tuple[Scores, int | None]:
        """A player's scores and their place on the best-score table (0 first; None without
        a counted game)."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.hget(keys.score_stats(game), player)
            pipe.zrevrank(keys.score_table(game), player)
            held, place = await pipe.execute()
        return Scores.from_json(held), None if held is None else place

    async def day_score(self, game: str, day: str, player: str) -> tuple[float, int] | None:
        """A player's score on the deal of `day` and their place on its table (0 first)."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.zscore(keys.day_table(game, day), player)
            pipe.zrevrank(keys.day_table(game, day), player)
            score, place = await pipe.execute()
        return None if score is None else (float(score), int(place))

    async def table(
        self, game: str, day: str, start: int, count: int
    ) -> list[tuple[str, float, Scores]]:
        """Places start..start+count-1 of the best-score table (`day` ""), or of the deal of
        `day`'s: (player, the score the place is for, their scores)."""
        key = keys.day_table(game, day) if day else keys.score_table(game)
        found: Any = await self.redis.zrevrange(key, start, start + count - 1, withscores=True)
        players = [p.decode() for p, _ in found]
        if not players:
            return []
        held: Any = await self.redis.hmget(keys.score_stats(game), players)
        return [
            (p, float(score), Scores.from_json(h))
            for p, (_, score), h in zip(players, found, held, strict=True)
        ]

    async def place(self, game: str, day: str, player: str) -> int | None:
        """A player's place (0 first) on the best-score table (`day` ""), or the deal of `day`'s."""
        key = keys.day_table(game, day) if day else keys.score_table(game)
        found: Any = await self.redis.zrevrank(key, player)
        return None if found is None else int(found)

    async def rebuild(
        self, connection: AsyncConnection[Any], today: datetime.date
    ) -> dict[str, int]:
        """Write every game's score tables again from PostgreSQL (the last DAYS_KEPT days' deals
        of the day too): players written per game."""
        written = {}
        cursor = await connection.execute("SELECT DISTINCT game FROM scores")
        kinds = [game async for (game,) in cursor]
        for game in kinds:
            scores = await scores_of(connection, game)
            players = list(scores.items())
            for start in range(0, len(players), 1000):
                await self.put(game, dict(players[start : start + 1000]))
            written[game] = len(scores)
            since = today - datetime.timedelta(days=keys.DAYS_KEPT)
            cursor = await connection.execute(
                "SELECT day, player_id, score FROM scores WHERE game = %s AND day >= %s",
                (game, since),
            )
            days: dict[str, dict[str, float]] = {}
            async for day, player, score in cursor:
                days.setdefault(day.isoformat(), {})[player] = score
            for day, found in days.items():
                await self.put_day(game, day, found)
        return written
