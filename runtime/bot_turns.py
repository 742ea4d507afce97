"""The bot-turn stream (`bots:turns`): a job for each bot seat that may act in a game at a
version. Game services append jobs after each move; bot workers take them through the consumer
group `bots`; a sweep of the live games queues again the jobs of games that stalled (a job lost
because a service stopped between its commit and queueing it, or Redis was away just then)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from redis.asyncio import Redis

import games
from runtime import game_log, keys
from runtime.redis import unavailable_when_unreachable
from wire.players import is_bot, sponsor_of
from wire.records import GameMeta
from wire.status import holders_of

Job = dict[str, str | int]
"""Fields game, game_id, seat, player, version, sponsor, window_ms, pace_ms."""

STREAM_LENGTH = 100_000
"""The stream is trimmed to about this many entries (jobs are acknowledged within seconds)."""


def jobs(
    game_id: str,
    version: int,
    meta: GameMeta,
    to_act: Iterable[int],
    holders: Sequence[str],
    window_ms: int | None = None,
) -> list[Job]:
    """A bot-turn job for each bot seat that may act (`holders`: who holds each seat now, bots
    in the seats they took over). Which seats those are is decided from public information
    only: the public seats to act (`to_act`, `State.public_to_act`), and in a game played out
    of turn every bot seat, whether or not it holds a card to jump in with. Waking only the
    bots that can jump in would make the work done after a move (and so the time its answer
    takes) depend on their hidden cards; a woken bot that cannot act finds no legal move and
    lets the job go. Each job names the game's sponsor, the player the bots' work is for (who
    made the game, or its first person), so that workers share their time fairly between
    players, and, in a game played out of turn, the table's jump-in window (`window_ms`: how
    long bots leave a person at the table to act first; the game's default for a table made
    before tables had one), and the table's bot pace (`pace_ms`: how long bots let pass after
    each move in any case; 0 for a table made without one). `window_ms` overrides the table's
    window: 0 once every person at the table passed on jumping in at `version` (PassJumpIn), for
    every bot seat alike, whatever cards it holds."""
    declared = games.get(meta.game)
    acting = range(len(holders)) if declared.out_of_turn else to_act
    bots = [seat for seat in acting if is_bot(holders[seat])]
    if not bots:
        return []
    sponsor = sponsor_of(meta.seats, meta.sponsor_id)
    stored_window = meta.jump_in_window_ms
    window = int(declared.jump_in_window_ms if stored_window is None else stored_window)
    if window_ms is not None:
        window = window_ms
    pace = int(meta.bot_pace_ms or 0)
    return [
        {
            "game": meta.game,
            "game_id": game_id,
            "seat": seat,
            "player": holders[seat],
            "version": version,
            "sponsor": sponsor,
            "window_ms": window,
            "pace_ms": pace,
        }
        for seat in bots
    ]


@unavailable_when_unreachable
async def add(redis: Redis, queued: list[Job]) -> None:
    """Tell bot workers which bot seats may act (one stream entry per seat)."""
    async with redis.pipeline(transaction=False) as pipe:
        for job in queued:
            pipe.xadd(keys.BOT_TURNS, job, maxlen=STREAM_LENGTH, approximate=True)  # type: ignore[arg-type]
        await pipe.execute()


@unavailable_when_unreachable
async def stalled(redis: Redis, idle_ms: int, batch: int = 200) -> list[Job]:
    """A bot-turn job for every bot seat that may act in a live game with no move for
    `idle_ms`; games that ended or expired leave the live list on the way (a finished game's
    record is appended to the finished games' stream again first: on a Redis Cluster its
    commit does not append it, and its process may have stopped before it did)."""
    now = game_log.now_ms()
    found: list[Job] = []
    gone: list[str] = []
    start = 0
    while True:
        listed: Any = await redis.zrange(keys.LIVE_GAMES, start, start + batch - 1, withscores=True)
        if not listed:
            break
        start += batch
        ids = [game_id.decode() for game_id, _ in listed]
        for (game_id, (meta, entry)), (_, listed_ms) in zip(
            zip(ids, await game_log.newest(redis, ids), strict=True), listed, strict=True
        ):
            if meta is None or entry is None:
                if meta is None and now - listed_ms > idle_ms:
                    gone.append(game_id)  # expired, or never created
                continue
            if entry.status.finished:  # its process stopped before taking it off the list
                record = game_log.finished_record(meta, entry.status)
                if record is not None:  # and perhaps (on a Redis Cluster) before appending it
                    await game_log.append_finished(redis, game_id, record)
                gone.append(game_id)
                continue
            holders = holders_of(meta, entry.status)
            waiting_on_a_bot = any(is_bot(holders[seat]) for seat in entry.status.to_act)
            if now - entry.time_ms >= idle_ms and waiting_on_a_bot:
                found += jobs(game_id, entry.version, meta, entry.status.to_act, holders)
    await game_log.unlist(redis, gone)
    return found
