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

A challenge from a player its invited player does not know (`keys.known_players`) is a
stranger's: it goes to that player's list of strangers' tables, apart from the rest, and the
script that makes it counts what waits for the player's answer (keys.challenges_to): so many
from one maker, so many from strangers in all.
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
"""A player's tables kept in each of their lists (the most recently changed): theirs and those
of players they know; strangers' challenges."""
STARTING_SECONDS = 60
"""A full table whose game was not made within this (its lobby stopped) expires."""
KNOWN_KEPT = 1000
"""The players a player knows, the most recent kept (keys.known_players)."""
KNOWN_SECONDS = 365 * 86400
"""How long a player's known players are kept after they last met one."""

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
    redis.call('PUBLISH', '{CHANGED}' .. KEYS[i + 1], KEYS[i + 1])
  end
end
"""

# KEYS: table, hosted, deadlines, listing (open tables or the invite code), each invited
# player's challenges waiting (keys.challenges_to), then a player's tables and events for each
# player at the table. ARGV: id, now ms, expires ms, the maker's bound, keep ms, kind, the
# number of invited players, their flags (one letter each: `s` for one who does not know the
# maker, else `f`), the bound per maker and invited player, the bound on strangers' challenges
# to a player, the maker, then field/value pairs. Returns {"OK", 0}, {"LIMIT", held},
# {"CODE", 0} (the invite code is taken: draw another), {"MAKER", i} (the maker has as many
# challenges waiting for invited player i as one may) or {"STRANGERS", i} (invited player i has
# as many waiting from strangers as one may, and does not know the maker).
_OPEN = (
    _TELL
    + """
local id, now, expires, keep = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[5])
local invited, flags, host = tonumber(ARGV[7]), ARGV[8], ARGV[11]
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
local held = redis.call('ZCARD', KEYS[2])
if held >= tonumber(ARGV[4]) then return {'LIMIT', held} end
for i = 1, invited do
  redis.call('ZREMRANGEBYSCORE', KEYS[4 + i], '-inf', now)
  local from, strangers = 0, 0
  for _, waiting in ipairs(redis.call('ZRANGE', KEYS[4 + i], 0, -1)) do
    if string.sub(waiting, 22) == host then from = from + 1 end
    if string.sub(waiting, 1, 1) == 's' then strangers = strangers + 1 end
  end
  if from >= tonumber(ARGV[9]) then return {'MAKER', i} end
  if string.sub(flags, i, i) == 's' and strangers >= tonumber(ARGV[10]) then
    return {'STRANGERS', i}
  end
end
local life = expires - now + keep
if ARGV[6] == 'invite' then
  if not redis.call('SET', KEYS[4], id, 'NX', 'PX', life) then return {'CODE', 0} end
end
redis.call('HSET', KEYS[1], 'state', 'open', 'version', 1, 'created_ms', now,
           'expires_ms', expires, 'due_ms', expires, unpack(ARGV, 12))
redis.call('PEXPIRE', KEYS[1], life)
redis.call('ZADD', KEYS[2], expires, id)
redis.call('PEXPIRE', KEYS[2], life)
redis.call('ZADD', KEYS[3], expires, id)
if ARGV[6] == 'open' then redis.call('ZADD', KEYS[4], now, id) end
for i = 1, invited do
  redis.call('ZADD', KEYS[4 + i], expires, string.sub(flags, i, i) .. id .. host)
  if redis.call('PTTL', KEYS[4 + i]) < life then redis.call('PEXPIRE', KEYS[4 + i], life) end
end
tell(5 + invited, id, now, life)
return {'OK', 0}
"""
)

# KEYS: as _OPEN's (the invited players' waiting challenges: as many as the table invited).
# ARGV: id, the version read, op, player, now ms, keep ms, then per op:
# join (take a seat: `player`), unjoin (give the last seat back: the game could not be made),
# start (game id, seat_of JSON), close (declined, cancelled or expired). Returns {"OK", state
# after}, {"RETRY", ""} (changed since read), {"GONE", ""} or, refused, {"STATE", state},
# {"JOINED", state} (already seated) or {"FULL", state}.
_CHANGE = (
    _TELL
    + """
local id, op, now, keep = ARGV[1], ARGV[3], tonumber(ARGV[5]), tonumber(ARGV[6])
local t = redis.call('HMGET', KEYS[1], 'state', 'version', 'joined', 'seats', 'kind', 'due_ms',
                     'expires_ms', 'created_ms', 'invited', 'strangers', 'host')
if not t[1] then return {'GONE', ''} end
if t[2] ~= ARGV[2] then return {'RETRY', ''} end
local state, kind, joined = t[1], t[5], cjson.decode(t[3])
local invited, strangers = cjson.decode(t[9]), cjson.decode(t[10] or '[]')
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
  for i, p in ipairs(invited) do
    local flag = 'f'
    for _, s in ipairs(strangers) do if s == p then flag = 's' end end
    redis.call('ZREM', KEYS[4 + i], flag .. id .. t[11])
  end
end
redis.call('HINCRBY', KEYS[1], 'version', 1)
tell(5 + #invited, id, now, life)
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
    strangers: list[str] = field(default_factory=list)
    """The invited players who did not know its maker when it was made."""

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
            strangers=list(json.loads(text.get("strangers") or "[]")),
        )


def now_ms() -> int:
    return int(time.time() * 1000)


def _notifying(script: str) -> str:
    return (
        script.replace("{CHANGED}", keys.CHANGED_PREFIX)
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
        table_id: str, kind: str, host: str, game: str, code: str, players: Sequence[str],
        invited: Sequence[str], strangers: Sequence[str],
    ) -> list[str]:  # fmt: skip
        listing = {"open": keys.open_tables(game), "invite": keys.invite_code(code)}
        return [
            keys.table(table_id), keys.hosted_tables(host, kind), keys.TABLE_DEADLINES,
            listing.get(kind, keys.table(table_id)),
            *(keys.challenges_to(p) for p in invited),
            *(key for p in dict.fromkeys(players)
              for key in (keys.player_stranger_tables(p) if p in strangers
                          else keys.player_tables(p), keys.player_table_events(p))),
        ]  # fmt: skip

    async def open(
        self, table_id: str, *, kind: str, game: str, options: bytes, seats: int,
        time_control: dict[str, Any], rated: bool, host: str, invited: Sequence[str] = (),
        seating: Sequence[str] = (), expires_ms: int, bound: int, code: str = "",
        rematch_of: str = "", strangers: Sequence[str] = (), per_maker: int = 0,
        from_strangers: int = 0,
    ) -> tuple[str, int]:  # fmt: skip
        """("OK", 0) when opened; ("LIMIT", held) when the maker holds `bound` waiting tables of
        the kind already; ("CODE", 0) when the invite code is taken; ("MAKER", i) when the
        maker has `per_maker` challenges waiting for invited[i] already; ("STRANGERS", i) when
        invited[i], one of the `strangers` (invited players who do not know the maker), has
        `from_strangers` challenges from strangers waiting already."""
        fields: dict[str, Any] = {
            "kind": kind, "game": game, "options": options.hex(), "seats": seats,
            "time_control": json.dumps(time_control, sort_keys=True), "rated": "1" if rated else "",
            "host": host, "invited": json.dumps(list(invited)), "joined": json.dumps([host]),
            "seating": json.dumps(list(seating)), "code": code, "rematch_of": rematch_of,
            "strangers": json.dumps(list(strangers)),
        }  # fmt: skip
        flags = "".join("s" if p in strangers else "f" for p in invited)
        outcome, held = await self._open(
            keys=self._keys(table_id, kind, host, game, code, [host, *invited], invited,
                            strangers),
            args=[table_id, now_ms(), expires_ms, bound, self.keep_ms, kind, len(invited),
                  flags, per_maker, from_strangers, host,
                  *(x for kv in fields.items() for x in kv)],
        )  # fmt: skip
        found = outcome.decode()
        return found, int(held) - (1 if found in ("MAKER", "STRANGERS") else 0)

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
                                [*table.players, player] if op == "join" else table.players,
                                table.invited, table.strangers),
                args=[table_id, table.version, op, player, now_ms(), self.keep_ms, *extra],
            )  # fmt: skip
            if outcome != b"RETRY":
                return outcome.decode(), state.decode(), table

    async def mine(self, player: str) -> tuple[list[Table], list[Table]]:
        """The player's tables, the most recently changed first: those they made, joined or
        were invited to by players they know; then the challenges of players they did not
        know (at most TABLES_LISTED of each)."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.zrevrange(keys.player_tables(player), 0, TABLES_LISTED - 1)
            pipe.zrevrange(keys.player_stranger_tables(player), 0, TABLES_LISTED - 1)
            known, strangers = await pipe.execute()
        return (
            await self.get_many([i.decode() for i in known]),
            await self.get_many([i.decode() for i in strangers]),
        )

    async def strangers(self, host: str, invited: Sequence[str]) -> list[str]:
        """The invited players who do not know `host` (KNOWN_KEPT: the players each knows)."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for player in invited:
                pipe.zscore(keys.known_players(player), host)
            found = await pipe.execute()
        return [p for p, score in zip(invited, found, strict=True) if score is None]

    async def met(self, player: str, others: Sequence[str]) -> None:
        """`player` knows `others` from now on (the KNOWN_KEPT most recent are kept)."""
        others = [p for p in others if p != player]
        if not others:
            return
        key = keys.known_players(player)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.zadd(key, dict.fromkeys(others, now_ms()))
            pipe.zremrangebyrank(key, 0, -KNOWN_KEPT - 1)
            pipe.expire(key, KNOWN_SECONDS)
            await pipe.execute()

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
