"""A game's record in Redis, as every process reads it: the state hash (version, snapshot,
meta) and the event stream, one entry per version (runtime/keys.py names both). The game
service writes them (services/game/store.py); the lobby lists a player's games from them, bot
workers find stalled games, audits replay them."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from redis.asyncio import Redis

from engines.contract import Event
from runtime import keys
from wire.players import is_bot
from wire.records import FinishedGame, GameMeta, VersionStatus


@dataclass(frozen=True, slots=True)
class Entry:
    """One stream entry: everything one accepted move (one version) did."""

    version: int
    actor: int
    move: str
    events: list[Event]
    status: VersionStatus
    time_ms: int
    table_event: dict[str, Any] | None = None
    """For a timeout or an abort (move "timeout"/"abort"): what the platform did
    (games.clock.apply_due)."""


def entry_of(entry_id: bytes | str, fields: Mapping[bytes, bytes]) -> Entry:
    text = entry_id.decode() if isinstance(entry_id, bytes) else entry_id
    return Entry(
        version=keys.version_of_entry_id(text),
        actor=int(fields[b"actor"]),
        move=fields[b"move"].decode(),
        events=[Event.from_json(e) for e in json.loads(fields[b"events"])],
        status=VersionStatus.from_json(json.loads(fields[b"status"])),
        time_ms=int(fields[b"t"]),
        table_event=json.loads(fields[b"table"]) if b"table" in fields else None,
    )


def now_ms() -> int:
    return int(time.time() * 1000)


async def _latest_stored(redis: Redis, game_ids: Sequence[str]) -> list[tuple[Any, Any]]:
    """Each game's stored meta (None when absent) and its stream's latest entry (as
    XREVRANGE answers it, empty when none), in one pipelined round trip."""
    if not game_ids:
        return []
    async with redis.pipeline(transaction=False) as pipe:
        for game_id in game_ids:
            pipe.hget(keys.game_state(game_id), "meta")
            pipe.xrevrange(keys.game_events(game_id), count=1)
        replies = await pipe.execute()
    return [(replies[2 * index], replies[2 * index + 1]) for index in range(len(game_ids))]


async def newest(
    redis: Redis, game_ids: Sequence[str]
) -> list[tuple[GameMeta | None, Entry | None]]:
    """Each game's meta and latest entry (None for a game that does not exist, or not yet), in
    one pipelined round trip."""
    return [
        (
            None if meta is None else GameMeta.from_json(json.loads(meta)),
            entry_of(*last[0]) if last else None,
        )
        for meta, last in await _latest_stored(redis, game_ids)
    ]


def finished_record(meta: GameMeta, status: VersionStatus) -> FinishedGame | None:
    """What the finished games' stream (keys.FINISHED_GAMES) says of a game a version finishes:
    its seats, which were accounts', whether it is rated, its final status; None when the
    version does not finish it, or nobody at its table is a person (the ratings consumer reads
    it: services/ratings)."""
    if not status.finished or all(is_bot(player) for player in meta.seats):
        return None
    return FinishedGame.of(meta, status)


async def append_finished(redis: Redis, game_id: str, record: FinishedGame) -> None:
    """Append a finished game's record to the finished games' stream (keys.FINISHED_GAMES),
    apart from the commit that finished it: a duplicate of an entry already there is harmless
    (its consumers count a game once)."""
    await redis.xadd(
        keys.FINISHED_GAMES,
        {
            "game": keys.kind_of(game_id),
            "game_id": game_id,
            "record": json.dumps(record.to_json(), separators=(",", ":"), sort_keys=True),
        },
        maxlen=keys.FINISHED_GAMES_KEPT,
        approximate=True,
    )


async def unlist(redis: Redis, game_ids: Sequence[str]) -> None:
    """Take ended or vanished games off the live list; each one taken off (by this call, not
    another's) stops counting as active, so the active-games gauge follows the list even for
    games that expired unfinished."""
    for game_id in game_ids:
        if await redis.zrem(keys.LIVE_GAMES, game_id):
            await redis.incrby(keys.active_games(keys.kind_of(game_id)), -1)


async def full(redis: Redis, game_id: str) -> tuple[GameMeta | None, list[Entry]]:
    """A game's meta and every entry of its log, version 0 first ((None, []) once it is gone)."""
    async with redis.pipeline(transaction=False) as pipe:
        pipe.hget(keys.game_state(game_id), "meta")
        pipe.xrange(keys.game_events(game_id))
        meta, entries = await pipe.execute()
    if meta is None:
        return None, []
    return GameMeta.from_json(json.loads(meta)), [
        entry_of(entry_id, fields) for entry_id, fields in entries
    ]
