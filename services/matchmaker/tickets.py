"""Matchmaking tickets in Redis: the lobby queues them, the matchmaker matches them. Every state
change is one Lua script, so a ticket ends in exactly one state: it is never matched twice, and a
cancelled or expired one is never matched."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from redis.asyncio import Redis

from games.clock import TimeControl
from runtime import keys

TICKET_TTL_SECONDS = 3600
"""A ticket still queued after this long is expired by the matchmaker. Its keys live twice as
long, so that its final state can still be watched."""

# KEYS: live, ticket, events, pool, pools, tickets. ARGV: ticket id, pool key, now ms, ttl,
# then field/value pairs. Returns {"OK", id} or {"LIVE", the live ticket's id}.
_ENQUEUE = """
local existing = redis.call('GET', KEYS[1])
if existing then return {'LIVE', existing} end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[4])
redis.call('HSET', KEYS[2], 'state', 'queued', 'created_ms', ARGV[3], unpack(ARGV, 5))
redis.call('EXPIRE', KEYS[2], ARGV[4])
redis.call('ZADD', KEYS[4], ARGV[3], ARGV[1])
redis.call('SADD', KEYS[5], ARGV[2])
redis.call('XADD', KEYS[3], '*', 'state', 'queued')
redis.call('EXPIRE', KEYS[3], ARGV[4])
redis.call('PUBLISH', '{CHANGED}' .. KEYS[3], KEYS[3])
redis.call('XADD', KEYS[6], 'MAXLEN', '~', 100000, '*', 'ticket', ARGV[1], 'pool', ARGV[2])
return {'OK', ARGV[1]}
"""

# KEYS: ticket, live, events, pool. ARGV: ticket id, new state (cancelled or expired).
# Returns the ticket's state after the call.
_CLOSE = """
local state = redis.call('HGET', KEYS[1], 'state')
if state ~= 'queued' then return state or 'missing' end
redis.call('HSET', KEYS[1], 'state', ARGV[2])
if redis.call('GET', KEYS[2]) == ARGV[1] then redis.call('DEL', KEYS[2]) end
redis.call('ZREM', KEYS[4], ARGV[1])
redis.call('XADD', KEYS[3], '*', 'state', ARGV[2])
redis.call('PUBLISH', '{CHANGED}' .. KEYS[3], KEYS[3])
return ARGV[2]
"""

# KEYS: pool, then ticket, live, events for each ticket. ARGV: game id, then id, seat for each.
# Seats every ticket if all are still queued (returns 1), else changes nothing (returns 0).
_MATCH = """
local n = (#KEYS - 1) / 3
for i = 0, n - 1 do
  if redis.call('HGET', KEYS[2 + 3 * i], 'state') ~= 'queued' then return 0 end
end
for i = 0, n - 1 do
  local id, seat = ARGV[2 + 2 * i], ARGV[3 + 2 * i]
  redis.call('HSET', KEYS[2 + 3 * i], 'state', 'matched', 'game_id', ARGV[1], 'seat', seat)
  if redis.call('GET', KEYS[3 + 3 * i]) == id then redis.call('DEL', KEYS[3 + 3 * i]) end
  redis.call('ZREM', KEYS[1], id)
  redis.call('XADD', KEYS[4 + 3 * i], '*', 'state', 'matched', 'game_id', ARGV[1], 'seat', seat)
  redis.call('PUBLISH', '{CHANGED}' .. KEYS[4 + 3 * i], KEYS[4 + 3 * i])
end
return 1
"""


@dataclass(frozen=True, slots=True)
class Ticket:
    ticket_id: str
    player: str
    game: str
    options: bytes
    """The game's Options message, serialized."""
    seats: int
    bots: str
    """never, now or after."""
    bots_after: float
    level: str
    pool: str
    created_ms: int
    state: str
    game_id: str = ""
    seat: int = -1
    time_control: dict[str, Any] | None = None
    """The time control asked for (games.clock.TimeControl as JSON; None: tickets from
    before time controls, which get the game's default)."""
    rated: bool = False
    """A rated game was asked for (by an account: the lobby refuses guests')."""

    @staticmethod
    def from_hash(ticket_id: str, fields: dict[bytes, bytes]) -> Ticket:
        text = {k.decode(): v.decode() for k, v in fields.items()}
        return Ticket(
            ticket_id=ticket_id,
            player=text["player"],
            game=text["game"],
            options=bytes.fromhex(text["options"]),
            seats=int(text["seats"]),
            bots=text["bots"],
            bots_after=float(text["bots_after"]),
            level=text["level"],
            pool=text["pool"],
            created_ms=int(text["created_ms"]),
            state=text["state"],
            game_id=text.get("game_id", ""),
            seat=int(text.get("seat", -1)),
            time_control=json.loads(text["time_control"]) if "time_control" in text else None,
            rated=text.get("rated") == "1",
        )


def _now_ms() -> int:
    return int(time.time() * 1000)


def _notifying(script: str) -> str:
    """The script, telling the lobby's watchers (runtime/fanout.py) of each ticket event."""
    return script.replace("{CHANGED}", keys.CHANGED_PREFIX)


class TicketStore:
    def __init__(self, redis: Redis) -> None:
        self.redis = redis
        self._enqueue = redis.register_script(_notifying(_ENQUEUE))
        self._close = redis.register_script(_notifying(_CLOSE))
        self._match = redis.register_script(_notifying(_MATCH))

    async def enqueue(
        self, ticket_id: str, *, player: str, game: str, options: bytes, seats: int,
        bots: str, bots_after: float, level: str, pool: str, time_control: dict[str, Any],
        rated: bool = False,
    ) -> tuple[bool, str]:  # fmt: skip
        """(True, id) when queued; (False, the live ticket's id) when the player has one."""
        fields: dict[str, Any] = {
            "player": player, "game": game, "options": options.hex(), "seats": seats,
            "bots": bots, "bots_after": bots_after, "level": level, "pool": pool,
            "time_control": json.dumps(time_control, sort_keys=True),
            "rated": "1" if rated else "",
        }  # fmt: skip
        outcome, queued = await self._enqueue(
            keys=[keys.live_ticket(player, game), keys.ticket(ticket_id),
                  keys.ticket_events(ticket_id), keys.pool(pool), keys.POOLS, keys.TICKETS],
            args=[ticket_id, pool, _now_ms(), 2 * TICKET_TTL_SECONDS,
                  *(x for kv in fields.items() for x in kv)],
        )  # fmt: skip
        return outcome == b"OK", queued.decode()

    async def get(self, ticket_id: str) -> Ticket | None:
        fields: Any = await self.redis.hgetall(keys.ticket(ticket_id))
        return Ticket.from_hash(ticket_id, fields) if fields else None

    async def get_many(self, ticket_ids: Sequence[str]) -> list[Ticket]:
        async with self.redis.pipeline(transaction=False) as pipe:
            for ticket_id in ticket_ids:
                pipe.hgetall(keys.ticket(ticket_id))
            replies = await pipe.execute()
        return [Ticket.from_hash(i, f) for i, f in zip(ticket_ids, replies, strict=True) if f]

    async def close(self, ticket: Ticket, state: str) -> str:
        """Cancel or expire a queued ticket; the state it ends in (maybe `matched`)."""
        result: bytes = await self._close(
            keys=[keys.ticket(ticket.ticket_id), keys.live_ticket(ticket.player, ticket.game),
                  keys.ticket_events(ticket.ticket_id), keys.pool(ticket.pool)],
            args=[ticket.ticket_id, state],
        )  # fmt: skip
        return result.decode()

    async def match(self, pool: str, game_id: str, seated: Sequence[tuple[Ticket, int]]) -> bool:
        """Seat these tickets in `game_id`, all of them or none (if any is no longer queued)."""
        ticket_keys = [
            key
            for ticket, _seat in seated
            for key in (keys.ticket(ticket.ticket_id), keys.live_ticket(ticket.player, ticket.game),
                        keys.ticket_events(ticket.ticket_id))
        ]  # fmt: skip
        args: list[Any] = [game_id]
        for ticket, seat in seated:
            args += [ticket.ticket_id, seat]
        return bool(await self._match(keys=[keys.pool(pool), *ticket_keys], args=args))

    async def drop_from_pool(self, pool: str, ticket_ids: Sequence[str]) -> None:
        """Forget ids whose tickets no longer exist (their keys expired)."""
        if ticket_ids:
            await self.redis.zrem(keys.pool(pool), *ticket_ids)

    async def queued(self, pool: str) -> list[str]:
        ids: Any = await self.redis.zrange(keys.pool(pool), 0, -1)
        return [i.decode() for i in ids]

    async def pools(self) -> list[str]:
        members: Any = await self.redis.smembers(keys.POOLS)
        return sorted(m.decode() for m in members)

    async def forget_pool_if_empty(self, pool: str) -> None:
        if not await self.redis.zcard(keys.pool(pool)):
            await self.redis.srem(keys.POOLS, pool)
            if await self.redis.zcard(keys.pool(pool)):  # a ticket came in meanwhile
                await self.redis.sadd(keys.POOLS, pool)

    @staticmethod
    def fields(entry: tuple[str, dict[bytes, bytes]]) -> dict[str, str]:
        """A ticket event's fields as text."""
        return {k.decode(): v.decode() for k, v in entry[1].items()}


def pool_key(
    game: str,
    seats: int,
    options: dict[str, Any],
    level: str,
    bots: str,
    bots_after: float,
    time_control: TimeControl,
    *,
    rated: bool = False,
) -> str:
    """Tickets wait together when they ask for the same game, seat count and options (all of
    them, defaults filled in, so leaving an option out and giving its default are the same; a
    table setting such as Solo's jump-in window counts as one),
    the same time control (likewise), and the same bots: level, and when to fill empty seats
    with them (so nobody who asked for random bots meets strong ones, and nobody waiting for
    people gets bots at once); rated games apart from casual ones. A rated game's options and
    time control are the standard ones, and its tickets wait in one pool whatever their bots:
    a rare choice of bots makes no pool of its own (the matchmaker fills a table with the
    bots its ticket asked for, and seats with them only people who asked for the same)."""
    compact = json.dumps(options, separators=(",", ":"), sort_keys=True)
    if rated:
        return f"{game}:{seats}:{compact}:{time_control.key()}:rated"
    wait = f"{bots_after:g}" if bots == "after" else ""
    return f"{game}:{seats}:{compact}:{time_control.key()}:{level}:{bots}{wait}"
