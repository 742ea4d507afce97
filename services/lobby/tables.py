"""Tables that wait for their players, in Redis: challenges to named players, private tables
joined with an invite code, open tables anyone may join, rematches. Every change is one Lua
script that checks the table's state and version, so a table ends in exactly one state, and of
two players taking its last seat at once exactly one gets it.

A table is `open` while it waits; the player who takes its last seat makes it `starting` and
has the lobby make its game, then `started` (or, if the game cannot be made, `open` again
without them). It may end `declined` (by an invited player), `cancelled` (by its maker) or
`expired` (by the lobby's sweep, once it is due). Each change is told to everyone at the table:
an entry in each one's stream of table events (`keys.player_table_events`), which WatchChallenges
follows through the process's fan-out hub. Ended tables are kept `keep_seconds`, then forgotten.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from redis.asyncio import Redis

from runtime import keys

TABLES_LISTED = 50
"""A player's tables kept in their list (the most recently changed)."""
STARTING_SECONDS = 60
"""A full table whose game was not made within this (its lobby stopped) expires."""

# Tells everyone at a table (KEYS from `first` on: each player's table list and events) of a
# change; their keys live at least `life` ms.
_TELL = """
local function tell(first, id, now, life)
  for i = first, #KEYS, 2 do
    redis.call('ZADD', KEYS[i], now, id)
    redis.call('ZREMRANGEBYRANK', KEYS[i], 0, -{KEPT} - 1)
    redis.call('XADD', KEYS[i + 1], 'MAXLEN', '~', 100, '*', 'table', id)
    for j = i, i + 1 do
      if redis.call('PTTL', KEYS[j]) < life then redis.call('PEXPIRE', KEYS[j], life) end
    end
    redis.call('PUBLISH', '{CHANNEL}', KEYS[i + 1])
  end
end
"""

# KEYS: table, hosted, deadlines, listing (open tables or the invite code), then a player's
# tables and events for each player at the table. ARGV: id, now ms, expires ms, the maker's
# bound, keep ms, kind, then field/value pairs. Returns {"OK", 0}, {"LIMIT", held} or
# {"CODE", 0} (the invite code is taken: draw another).
_OPEN = (
    _TELL
    + """
local id, now, expires, keep = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[5])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
local held = redis.call('ZCARD', KEYS[2])
if held >= tonumber(ARGV[4]) then return {'LIMIT', held} end
local life = expires - now + keep
if ARGV[6] == 'invite' then
  if not redis.call('SET', KEYS[4], id, 'NX', 'PX', life) then return {'CODE', 0} end
end
redis.call('HSET', KEYS[1], 'state', 'open', 'version', 1, 'created_ms', now,
           'expires_ms', expires, 'due_ms', expires, unpack(ARGV, 7))
redis.call('PEXPIRE', KEYS[1], life)
redis.call('ZADD', KEYS[2], expires, id)
redis.call('PEXPIRE', KEYS[2], life)
redis.call('ZADD', KEYS[3], expires, id)
if ARGV[6] == 'open' then redis.call('ZADD', KEYS[4], now, id) end
tell(5, id, now, life)
return {'OK', 0}
"""
)

# KEYS: as _OPEN's. ARGV: id, the version read, op, player, now ms, keep ms, then per op:
# join (take a seat: `player`), unjoin (give the last seat back: the game could not be made),
# start (game id, seat_of JSON), close (declined, cancelled or expired). Returns {"OK", state
# after}, {"RETRY", ""} (changed since read), {"GONE", ""} or, refused, {"STATE", state},
# {"JOINED", state} (already seated) or {"FULL", state}.
_CHANGE = (
    _TELL
    + """
local id, op, now, keep = ARGV[1], ARGV[3], tonumber(ARGV[5]), tonumber(ARGV[6])
local t = redis.call('HMGET', KEYS[1], 'state', 'version', 'joined', 'seats', 'kind', 'due_ms',
                     'expires_ms', 'created_ms')
if not t[1] then return {'GONE', ''} end
if t[2] ~= ARGV[2] then return {'RETRY', ''} end
local state, kind, joined = t[1], t[5], cjson.decode(t[3])
local ended = false
if op == 'join' then
  if state ~= 'open' then return {'STATE', state} end
  for _, p in ipairs(joined) do if p == ARGV[4] then return {'JOINED', state} end end
  if #joined >= tonumber(t[4]) then return {'FULL', state} end
  table.insert(joined, ARGV[4])
  redis.call('HSET', KEYS[1], 'joined', cjson.encode(joined))
  if #joined == tonumber(t[4]) then
    state = 'starting'
    local due = now + {STARTING_MS}
    redis.call('HSET', KEYS[1], 'state', state, 'due_ms', due)
    redis.call('ZADD', KEYS[3], due, id)
    if kind == 'open' then redis.call('ZREM', KEYS[4], id) end
  end
elseif op == 'unjoin' then
  if state ~= 'starting' or joined[#joined] ~= ARGV[4] then return {'STATE', state} end
  table.remove(joined)
  state = 'open'
  redis.call('HSET', KEYS[1], 'joined', cjson.encode(joined), 'state', state, 'due_ms', t[7])
  redis.call('ZADD', KEYS[3], t[7], id)
  if kind == 'open' then redis.call('ZADD', KEYS[4], t[8], id) end
elseif op == 'start' then
  if state ~= 'starting' then return {'STATE', state} end
  state = 'started'
  redis.call('HSET', KEYS[1], 'state', state, 'game_id', ARGV[7], 'seat_of', ARGV[8])
  ended = true
elseif op == 'close' then
  local to = ARGV[7]
  if to == 'expired' then
    if (state ~= 'open' and state ~= 'starting') or now < tonumber(t[6]) then
      return {'STATE', state}
    end
  elseif state ~= 'open' then return {'STATE', state} end
  state = to
  redis.call('HSET', KEYS[1], 'state', state, 'ended_by', ARGV[4])
  ended = true
end
local life = redis.call('PTTL', KEYS[1])
if ended then
  life = keep
  redis.call('PEXPIRE', KEYS[1], life)
  redis.call('ZREM', KEYS[2], id)
  redis.call('ZREM', KEYS[3], id)
  if kind == 'open' then redis.call('ZREM', KEYS[4], id) end
  if kind == 'invite' then redis.call('PEXPIRE', KEYS[4], life) end
end
redis.call('HINCRBY', KEYS[1], 'version', 1)
tell(5, id, now, life)
return {'OK', state}
"""
)


@dataclass(frozen=True, slots=True)
class Table:
    table_id: str
    kind: str
    """challenge, invite, open or rematch."""
    game: str
    options: bytes
    """The game's Options message, serialized."""
    seats: int
    time_control: dict[str, Any]
    """games.clock.TimeControl as JSON."""
    rated: bool
    host: str
    invited: list[str]
    """The players a challenge (or rematch) is made to."""
    joined: list[str]
    """Who holds a seat, in the order they came (the maker first)."""
    seating: list[str]
    """The game's seats in order (a rematch: each player one seat on); empty: drawn at random."""
    state: str
    version: int
    created_ms: int
    expires_ms: int
    code: str = ""
    game_id: str = ""
    seat_of: dict[str, int] = field(default_factory=dict)
    rematch_of: str = ""

    @property
    def players(self) -> list[str]:
        """Everyone at the table: its maker, the invited players, those who joined."""
        return list(dict.fromkeys([self.host, *self.invited, *self.joined]))

    @staticmethod
    def from_hash(table_id: str, fields: dict[bytes, bytes]) -> Table:
        text = {k.decode(): v.decode() for k, v in fields.items()}
        return Table(
            table_id=table_id,
            kind=text["kind"],
            game=text["game"],
            options=bytes.fromhex(text["options"]),
            seats=int(text["seats"]),
            time_control=json.loads(text["time_control"]),
            rated=text["rated"] == "1",
            host=text["host"],
            invited=list(json.loads(text["invited"]) or []),
            joined=list(json.loads(text["joined"]) or []),
            seating=list(json.loads(text["seating"]) or []),
            state=text["state"],
            version=int(text["version"]),
            created_ms=int(text["created_ms"]),
            expires_ms=int(text["expires_ms"]),
            code=text.get("code", ""),
            game_id=text.get("game_id", ""),
            seat_of=dict(json.loads(text.get("seat_of") or "{}")),
            rematch_of=text.get("rematch_of", ""),
        )


def now_ms() -> int:
    return int(time.time() * 1000)


def _notifying(script: str) -> str:
    return (
        script.replace("{CHANNEL}", keys.changed_channel(keys.TABLES_FAMILY))
        .replace("{KEPT}", str(TABLES_LISTED))
        .replace("{STARTING_MS}", str(STARTING_SECONDS * 1000))
    )


class TableStore:
    def __init__(self, redis: Redis, keep_seconds: float = 3600) -> None:
        self.redis = redis
        self.keep_ms = int(keep_seconds * 1000)
        """How long an ended table is kept (listed, watched, its code explained)."""
        self._open = redis.register_script(_notifying(_OPEN))
        self._change = redis.register_script(_notifying(_CHANGE))

    @staticmethod
    def _keys(
        table_id: str, kind: str, host: str, game: str, code: str, players: Sequence[str]
    ) -> list[str]:
        listing = {"open": keys.open_tables(game), "invite": keys.invite_code(code)}
        return [
            keys.table(table_id), keys.hosted_tables(host, kind), keys.TABLE_DEADLINES,
            listing.get(kind, keys.table(table_id)),
            *(key for p in dict.fromkeys(players)
              for key in (keys.player_tables(p), keys.player_table_events(p))),
        ]  # fmt: skip

    async def open(
        self, table_id: str, *, kind: str, game: str, options: bytes, seats: int,
        time_control: dict[str, Any], rated: bool, host: str, invited: Sequence[str] = (),
        seating: Sequence[str] = (), expires_ms: int, bound: int, code: str = "",
        rematch_of: str = "",
    ) -> tuple[str, int]:  # fmt: skip
        """("OK", 0) when opened; ("LIMIT", held) when the maker holds `bound` waiting tables of
        the kind already; ("CODE", 0) when the invite code is taken."""
        fields: dict[str, Any] = {
            "kind": kind, "game": game, "options": options.hex(), "seats": seats,
            "time_control": json.dumps(time_control, sort_keys=True), "rated": "1" if rated else "",
            "host": host, "invited": json.dumps(list(invited)), "joined": json.dumps([host]),
            "seating": json.dumps(list(seating)), "code": code, "rematch_of": rematch_of,
        }  # fmt: skip
        outcome, held = await self._open(
            keys=self._keys(table_id, kind, host, game, code, [host, *invited]),
            args=[table_id, now_ms(), expires_ms, bound, self.keep_ms, kind,
                  *(x for kv in fields.items() for x in kv)],
        )  # fmt: skip
        return outcome.decode(), int(held)

    async def get(self, table_id: str) -> Table | None:
        fields: Any = await self.redis.hgetall(keys.table(table_id))
        return Table.from_hash(table_id, fields) if fields else None

    async def get_many(self, table_ids: Sequence[str]) -> list[Table]:
        async with self.redis.pipeline(transaction=False) as pipe:
            for table_id in table_ids:
                pipe.hgetall(keys.table(table_id))
            replies = await pipe.execute()
        return [Table.from_hash(i, f) for i, f in zip(table_ids, replies, strict=True) if f]

    async def change(
        self, table_id: str, op: str, player: str, *extra: str
    ) -> tuple[str, str, Table | None]:
        """Apply `op` (join, unjoin, start, close: see _CHANGE) as `player`; (outcome, the
        state after, or the one that refused it, the table as read before the change)."""
        while True:
            table = await self.get(table_id)
            if table is None:
                return "GONE", "", None
            outcome, state = await self._change(
                keys=self._keys(table_id, table.kind, table.host, table.game, table.code,
                                [*table.players, player] if op == "join" else table.players),
                args=[table_id, table.version, op, player, now_ms(), self.keep_ms, *extra],
            )  # fmt: skip
            if outcome != b"RETRY":
                return outcome.decode(), state.decode(), table

    async def mine(self, player: str) -> list[Table]:
        """The player's tables, the most recently changed first."""
        ids: Any = await self.redis.zrevrange(keys.player_tables(player), 0, TABLES_LISTED - 1)
        return await self.get_many([i.decode() for i in ids])

    async def listed(self, game: str, limit: int) -> list[Table]:
        """A game's open tables, oldest first."""
        ids: Any = await self.redis.zrange(keys.open_tables(game), 0, limit - 1)
        return await self.get_many([i.decode() for i in ids])

    async def by_code(self, code: str) -> str | None:
        found: Any = await self.redis.get(keys.invite_code(code))
        return found.decode() if found else None

    async def due(self, count: int = 100) -> list[str]:
        ids: Any = await self.redis.zrangebyscore(
            keys.TABLE_DEADLINES, "-inf", now_ms(), start=0, num=count
        )
        return [i.decode() for i in ids]

    async def forget_due(self, table_ids: Sequence[str]) -> None:
        """Drop deadlines of tables that no longer exist."""
        if table_ids:
            await self.redis.zrem(keys.TABLE_DEADLINES, *table_ids)

    async def last_event(self, player: str) -> str:
        """The id of the player's latest table event ("0-0": none)."""
        found: Any = await self.redis.xrevrange(keys.player_table_events(player), count=1)
        return found[0][0].decode() if found else "0-0"

    async def accepts_from(self, player: str) -> str:
        found: Any = await self.redis.get(keys.challenge_setting(player))
        return found.decode() if found else "everyone"

    async def set_accepts_from(self, player: str, who: str) -> None:
        if who == "everyone":
            await self.redis.delete(keys.challenge_setting(player))
        else:
            await self.redis.set(keys.challenge_setting(player), who)
