"""Games being played now, to watch (LobbyService.ListLiveGames): the most recent live games,
best-rated first, their players called by their current names (services/lobby/names.py). One
lobby reads them at most every LIVE_CACHE_SECONDS per game kind, however many players ask."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

import games
from runtime import game_log, keys
from runtime.game_log import Entry
from services.lobby.names import Names
from services.ratings.cache import RatingCache
from services.ratings.model import Rating
from tabletop.lobby.v1 import lobby_pb2
from wire.errors import ApiError
from wire.metadata import Caller
from wire.players import is_bot
from wire.records import GameMeta
from wire.status import status_message

LIVE_SCAN = 1000
"""The most recent live games read to make the list (a bound on what one call costs)."""
LIVE_LIMIT = 50
LIVE_CACHE_SECONDS = 2.0


def best_rating(meta: GameMeta, held: Mapping[str, Rating]) -> int | None:
    """A game's best seat rating: from the ratings it was made with (a rated game), else the
    seated players' ratings now (`held`: by player, only those who have one)."""
    made = meta.ratings or {}
    if made:
        return max(int(rating) for rating, _ in made.values())
    found = [held[p].display for p in meta.seats if p in held]
    return max(found) if found else None


class LiveGames:
    def __init__(self, redis: Any, ratings: RatingCache, names: Names) -> None:
        self.redis = redis
        self.ratings = ratings
        self.names = names
        self._cache: dict[str, tuple[float, list[lobby_pb2.LiveGame]]] = {}

    async def games(
        self, request: lobby_pb2.ListLiveGamesRequest
    ) -> lobby_pb2.ListLiveGamesResponse:
        if request.game and request.game not in games.names():
            raise ApiError(
                "INVALID_ARGUMENT",
                f"unknown game {request.game[:40]!r}; games are: {', '.join(games.names())}",
            )
        limit = request.limit or 20
        if not 1 <= limit <= LIVE_LIMIT:
            raise ApiError("INVALID_ARGUMENT", f"limit is 1 to {LIVE_LIMIT}; got {limit}")
        held = self._cache.get(request.game)
        if held is None or time.monotonic() - held[0] > LIVE_CACHE_SECONDS:
            held = (time.monotonic(), await self._read(request.game))
            self._cache[request.game] = held
        return lobby_pb2.ListLiveGamesResponse(games=held[1][:limit])

    async def _read(self, game: str) -> list[lobby_pb2.LiveGame]:
        listed: Any = await self.redis.zrevrange(keys.LIVE_GAMES, 0, LIVE_SCAN - 1)
        ids = [i.decode() for i in listed]
        ids = [i for i in ids if not game or keys.kind_of(i) == game]
        latest = await game_log.newest(self.redis, ids)
        found = [
            (game_id, meta, last)
            for game_id, (meta, last) in zip(ids, latest, strict=True)
            if meta is not None and last is not None and not last.status.finished
            and not meta.private and not meta.day  # a deal of the day: its player's
        ]  # fmt: skip
        held = await self._held(found)
        ranked = sorted(
            found,
            key=lambda f: (-(best_rating(f[1], held.get(f[1].game, {})) or -(10**9)), f[0]),
        )
        answer = []
        for game_id, meta, last in ranked[:LIVE_LIMIT]:
            item = lobby_pb2.LiveGame(
                status=status_message(game_id, last.version, meta, last.status)
            )
            rating = best_rating(meta, held.get(meta.game, {}))
            if rating is not None:
                item.rating = rating
            answer.append(item)
        seats = [seat for item in answer for seat in item.status.seats]
        named = await self.names.current(
            [s.player_id for s in seats], Caller(), [s.name for s in seats]
        )
        for seat, name in zip(seats, named, strict=True):
            seat.name = name
        return answer

    async def _held(
        self, found: Sequence[tuple[str, GameMeta, Entry]]
    ) -> dict[str, dict[str, Rating]]:
        """The ratings now of the players at the casual games found, by game kind."""
        wanted: dict[str, set[str]] = {}
        for _, meta, _ in found:
            if not meta.ratings:
                people = {p for p in meta.seats if not is_bot(p)}
                wanted.setdefault(meta.game, set()).update(people)
        return {kind: await self.ratings.known(kind, sorted(wanted[kind])) for kind in wanted}
