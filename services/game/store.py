"""Authoritative game state in Redis: a snapshot plus an append-only event stream per game.

A move costs two round trips: `load` (one pipelined read) and `commit` (one Lua script that checks
the version and the request id, then writes the snapshot and appends the stream entry atomically).
The commits of one turn of the event loop share their round trip: they go to Redis as one batch
(runtime/group_commit.py), each script still atomic and checked on its own.
"""

from __future__ import annotations

import itertools
import json
import logging
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster

from engines.canonical import canonical_json
from runtime import bot_turns, game_log, keys
from runtime.game_log import Entry, entry_of, now_ms
from runtime.group_commit import GroupCommit
from runtime.notifications import TELL, Notifier
from runtime.observability import PRIMARY_UNCONFIRMED, REPLICATION_LATE
from runtime.redis import (
    Command,
    Held,
    Script,
    held_confirmed,
    redis_failed,
    replicas_wanted,
    unavailable_when_unreachable,
)
from services.game.limits import levels_at
from services.game.players import live_entry
from wire.errors import ApiError
from wire.players import is_bot, sponsor_of
from wire.records import FinishedGame, GameMeta, VersionStatus

log = logging.getLogger("tabletop.game")

# KEYS: state, events, requests.
# ARGV: 1 expected version, 2 snapshot, 3 request id ("" for none), 4 actor, 5 move, 6 events
#       JSON, 7 status JSON, 8 time ms, 9 ttl seconds, 10 the channel that tells watchers of a
#       new entry, 11 table JSON ("" for an untimed game), 12 table event JSON ("" for a seat's
#       move), 13 not after (ms: a move must arrive by the deadline of the version it was judged
#       on; "" for none), 14 not before (ms: a timeout is applied only once its deadline is past),
#       15 the expected version's tag ("" for version 0), 16 the new version's tag, 17 the
#       finished-game record (JSON; "" when the move does not finish a game with a person, or
#       on a Redis Cluster: see GameStore.commit), 18 its game kind, 19 the stream's length,
#       20 (with the deadline keys) the game's next deadline ms ("" for none).
# KEYS[4], when ARGV[17] is set: the finished games (keys.FINISHED_GAMES): the game's record is
# appended in the same script as the move that finishes it, so it is never lost nor added twice.
# Then, for a timed game outside a Redis Cluster, the kind's deadlines and their versions: the
# new version's deadline is indexed by the same script (as _INDEX does), one round trip fewer.
# The deadlines are checked against Redis's own clock, one clock for every replica. The tag
# tells apart two histories that reached the same version number: after a failover the game may
# be read from a primary that lost some writes and committed to the one that has them, or the
# other way round; a version with another tag than the one read is STALE like an older one.
# Returns {"OK", new version} | {"DUPLICATE", version applied} | {"NOT_FOUND", -1}
#       | {"STALE", current version, snapshot, meta, table, tag} (so the caller can retry without
#       a read) | {"LATE", current version} | {"EARLY", current version}.
_COMMIT = """
local current = redis.call('HGET', KEYS[1], 'version')
if not current then return {'NOT_FOUND', -1} end
current = tonumber(current)
if ARGV[3] ~= '' then
  local seen = redis.call('HGET', KEYS[3], ARGV[3])
  if seen then return {'DUPLICATE', tonumber(seen)} end
end
local tag = redis.call('HGET', KEYS[1], 'tag') or ''
if current ~= tonumber(ARGV[1]) or tag ~= ARGV[15] then
  local game = redis.call('HMGET', KEYS[1], 'snapshot', 'meta', 'table')
  return {'STALE', current, game[1], game[2], game[3] or '', tag}
end
if ARGV[13] ~= '' or ARGV[14] ~= '' then
  local time = redis.call('TIME')
  local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  if ARGV[13] ~= '' and now > tonumber(ARGV[13]) then return {'LATE', current} end
  if ARGV[14] ~= '' and now < tonumber(ARGV[14]) then return {'EARLY', current} end
end
local version = current + 1
redis.call('HSET', KEYS[1], 'version', version, 'snapshot', ARGV[2], 'tag', ARGV[16])
if ARGV[11] ~= '' then redis.call('HSET', KEYS[1], 'table', ARGV[11]) end
if ARGV[12] ~= '' then
  redis.call('XADD', KEYS[2], version .. '-1', 'actor', ARGV[4], 'move', ARGV[5],
             'events', ARGV[6], 'status', ARGV[7], 't', ARGV[8], 'table', ARGV[12])
else
  redis.call('XADD', KEYS[2], version .. '-1', 'actor', ARGV[4], 'move', ARGV[5],
             'events', ARGV[6], 'status', ARGV[7], 't', ARGV[8])
end
if ARGV[3] ~= '' then redis.call('HSET', KEYS[3], ARGV[3], version) end
if ARGV[17] ~= '' then
  redis.call('XADD', KEYS[4], 'MAXLEN', '~', ARGV[19], '*', 'game', ARGV[18],
             'game_id', string.match(KEYS[1], '{(.*)}'), 'record', ARGV[17])
end
local ttl = tonumber(ARGV[9])
for i = 1, 3 do redis.call('EXPIRE', KEYS[i], ttl) end
local d = ARGV[17] ~= '' and 5 or 4
if KEYS[d + 1] then
  local game = string.match(KEYS[1], '{(.*)}')
  local seen = tonumber(redis.call('HGET', KEYS[d + 1], game) or '-1')
  if version >= seen then
    if ARGV[20] == '' then
      redis.call('ZREM', KEYS[d], game)
      redis.call('HDEL', KEYS[d + 1], game)
    else
      redis.call('ZADD', KEYS[d], ARGV[20], game)
      redis.call('HSET', KEYS[d + 1], game, version)
    end
  end
end
redis.call('PUBLISH', ARGV[10], KEYS[2])
return {'OK', version}
"""

# KEYS: the game's state, the bot-turn stream, then the notifications of each person told it is
# their turn. ARGV: 1 the version the move was committed as, 2 its tag, 3 how many jobs, 4 how
# many fields a job has, 5 the bot-turn stream's length, then the fields' names, then each job's
# values in that order; then, for the people told, the ARGV of notifications' `tell`.
# Sent right after the move's commit in the same batch: it does nothing unless that commit was
# written (the game is at that version, with that tag). Returns 1 when done, else 0.
_FOLLOW = (
    TELL
    + """
local game = redis.call('HMGET', KEYS[1], 'version', 'tag')
if game[1] ~= ARGV[1] or (game[2] or '') ~= ARGV[2] then return 0 end
local jobs, width = tonumber(ARGV[3]), tonumber(ARGV[4])
local at = 6 + width
for j = 0, jobs - 1 do
  local entry = {}
  for f = 1, width do
    entry[2 * f - 1] = ARGV[5 + f]
    entry[2 * f] = ARGV[at + j * width + f - 1]
  end
  redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[5], '*', unpack(entry))
end
tell(3, at + jobs * width)
return 1
"""
)

# KEYS: state, requests. ARGV: request id.
# Returns {version, snapshot, meta, table, version that request id produced (or nil), tag}.
_LOAD = """
local game = redis.call('HMGET', KEYS[1], 'version', 'snapshot', 'meta', 'table', 'tag')
return {game[1], game[2], game[3], game[4], redis.call('HGET', KEYS[2], ARGV[1]), game[5]}
"""

# KEYS: state, passes. ARGV: version, seat, ttl.
# Returns {-1} when there is no such game, {current version} when the game is at another
# version, else {version, the passes (seat, version, ...), 1 if this seat had not passed at
# this version yet else 0}.
_PASS = """
local current = redis.call('HGET', KEYS[1], 'version')
if not current then return {-1} end
if tonumber(current) ~= tonumber(ARGV[1]) then return {tonumber(current)} end
local before = redis.call('HGET', KEYS[2], ARGV[2])
redis.call('HSET', KEYS[2], ARGV[2], ARGV[1])
redis.call('EXPIRE', KEYS[2], ARGV[3])
return {tonumber(current), redis.call('HGETALL', KEYS[2]), before == ARGV[1] and 0 or 1}
"""

# KEYS: state, events. ARGV: snapshot, meta JSON, events JSON, status JSON, time ms, ttl,
# the channel that tells watchers of a new entry, table JSON ("" for an untimed game).
# Returns 1 when created, 0 when a game with this id exists already.
_CREATE = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'version', 0, 'snapshot', ARGV[1], 'meta', ARGV[2])
if ARGV[8] ~= '' then redis.call('HSET', KEYS[1], 'table', ARGV[8]) end
redis.call('XADD', KEYS[2], '0-1', 'actor', -1, 'move', '', 'events', ARGV[3],
           'status', ARGV[4], 't', ARGV[5])
redis.call('EXPIRE', KEYS[1], ARGV[6])
redis.call('EXPIRE', KEYS[2], ARGV[6])
redis.call('PUBLISH', ARGV[7], KEYS[2])
return 1
"""

# KEYS: the kind's deadlines (sorted set), their versions (hash).
# ARGV: game id, version, deadline ms ("" for none).
# Sets a game's next deadline as of a version, unless a later version set it already: writers
# of two versions may arrive in any order, the index keeps the latest version's deadline.
_INDEX = """
local seen = tonumber(redis.call('HGET', KEYS[2], ARGV[1]) or '-1')
if tonumber(ARGV[2]) < seen then return 0 end
if ARGV[3] == '' then
  redis.call('ZREM', KEYS[1], ARGV[1])
  redis.call('HDEL', KEYS[2], ARGV[1])
else
  redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
end
return 1
"""

# KEYS: the kind's deadlines. ARGV: how many, hold ms.
# The games whose deadline has passed by Redis's clock, each held back (its score moved
# `hold` ms on) so that other replicas' sweeps leave it to this one; should this one stop, the
# game comes due again after the hold.
_DUE = """
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'LIMIT', 0, tonumber(ARGV[1]))
for _, game in ipairs(due) do redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), game) end
return due
"""


@dataclass(frozen=True, slots=True)
class StoredGame:
    game_id: str
    version: int
    snapshot: bytes
    meta: GameMeta
    request_version: int | None
    """The version a previous call with the same request id produced, if any."""
    table: Mapping[str, Any] | None = None
    """The game's table (games.clock.Table as JSON); None for an untimed game."""
    tag: str = ""
    """What tells this version from another history's version of the same number (store.py,
    _COMMIT); "" for version 0."""

    def moved_to(self, version: int, table: Mapping[str, Any] | None, tag: str) -> StoredGame:
        """This game after a move of ours was committed as `version`, tagged `tag`."""
        return StoredGame(self.game_id, version, b"", self.meta, None, table, tag)


@dataclass(frozen=True, slots=True)
class Follow:
    """What a move sets going, written with its commit in the same round trip outside a Redis
    Cluster (`GameStore.commit`): the bot-turn jobs of the bot seats that may act next, and the
    people told it is their turn (`told`, with the notification's `fields`)."""

    jobs: list[bot_turns.Job]
    told: list[str]
    fields: dict[str, str]


@dataclass(frozen=True, slots=True)
class Commit:
    outcome: str  # "OK", "STALE", "DUPLICATE", "NOT_FOUND", "LATE" or "EARLY"
    version: int
    current: StoredGame | None = None
    """For STALE: the game as it is now."""
    tag: str = ""
    """For OK: the new version's tag."""
    indexed: bool = False
    """For OK: the game's next deadline was indexed with the move (`GameStore.commit`)."""
    held: Held | None = None
    """Where the write went and which replicas hold it (None: writes do not wait for
    replicas); `GameStore.confirm` says whether it may be acknowledged."""
    followed: bool = False
    """For OK: its `Follow` was written with it (else the caller sees to it)."""


@dataclass(frozen=True, slots=True)
class Deadline:
    """A timed game's next deadline after a move, to index with it."""

    at_ms: int | None
    """None: the game needs the platform no more (over, or nothing due)."""


def _dumps(value: Any) -> str:
    return canonical_json(value)


def _table(value: bytes | None) -> dict[str, Any] | None:
    return json.loads(value) if value else None


def _optional(value: Mapping[str, Any] | int | None) -> str:
    """An optional script argument: "" for None."""
    if value is None:
        return ""
    return str(value) if isinstance(value, int) else _dumps(value)


class GameStore:
    """Reads and writes games in Redis. Holds no game state of its own."""

    def __init__(
        self,
        redis: Redis,
        *,
        ttl_seconds: int = 7 * 24 * 3600,
        wait_replicas: int = 0,
        wait_timeout_ms: int = 1000,
    ) -> None:
        """`wait_replicas`: answer a write only once every replica in sync, and at least this
        many, hold it (see `confirm`), waiting at most `wait_timeout_ms`."""
        self.redis = redis
        self.notifier = Notifier(redis)
        """A player's notifications: "your turn" (runtime/notifications.py)."""
        self.cluster = isinstance(redis, RedisCluster)
        self.ttl_seconds = ttl_seconds
        self.wait_replicas = wait_replicas
        self.wait_timeout_ms = wait_timeout_ms
        self._scripts = {source: redis.register_script(source) for source in (_COMMIT, _CREATE)}
        # Each version written gets a tag no other write has (`new_tag`, no syscall a move).
        self._tag_prefix = secrets.token_hex(6)
        self._tags = itertools.count()
        self.group = GroupCommit(
            redis,
            replicas=(lambda: replicas_wanted(redis, wait_replicas)) if wait_replicas else None,
            ttl_seconds=ttl_seconds,
            timeout_ms=wait_timeout_ms,
        )
        """The batches this store's writes go in (runtime/group_commit.py)."""
        self._load = redis.register_script(_LOAD)
        self._index = redis.register_script(_INDEX)
        self._due = redis.register_script(_DUE)
        self._pass = redis.register_script(_PASS)

    async def close(self) -> None:
        """Before the Redis client closes: the batches of writes on their way end."""
        await self.group.close()

    @unavailable_when_unreachable
    async def create(
        self,
        game_id: str,
        snapshot: bytes,
        meta: GameMeta,
        events: list[dict[str, Any]],
        status: VersionStatus,
        *,
        table: Mapping[str, Any] | None,
        time_ms: int,
        listing: Sequence[tuple[Any, ...]] = (),
        announcement: tuple[Any, ...] | None = None,
    ) -> Held | None:
        """Write a new game; what holds it, for `confirm` before the game is made known to its
        players. Its id is new (random): one that exists already is a mistake (ValueError).
        `listing` (made by `listing`): where it is listed, written just before it (in the same round
        trip outside a Redis Cluster), so that a game never exists unlisted; a listed id that
        was never created is dropped by the sweep, and by ListGames and the limits.
        `announcement` (made by `announcement`): the note that tells the lobbies it started, written
        right after it, best effort (a game is never refused for it)."""
        script = Script(
            _CREATE,
            [keys.game_state(game_id), keys.game_events(game_id)],
            [
                snapshot,
                _dumps(meta.to_json()),
                _dumps(events),
                _dumps(status.to_json()),
                time_ms,
                self.ttl_seconds,
                keys.changed_channel(keys.game_events(game_id)),
                _optional(table),
            ],
        )
        after = () if announcement is None else (announcement,)
        if self.cluster:
            await self._each(listing)
            created, held = await self._written(game_id, script)
            told: Any = None
            try:
                await self._each(after)
            except Exception as error:
                told = error
        else:
            replies, held = await self.group.written_together(
                (*listing, script, *after), keys.game_state(game_id)
            )
            failed = next(
                (r for r in replies[: len(listing) + 1] if isinstance(r, Exception)), None
            )
            if failed is not None:
                raise failed
            created, told = replies[len(listing)], replies[-1] if after else None
        if isinstance(told, Exception):
            if not redis_failed(told):
                raise told
            log.warning("followers not told of a game", extra={"game_id": game_id})
        if not created:
            raise ValueError(f"game {game_id} exists already")
        return held

    async def _each(self, commands: Sequence[tuple[Any, ...]]) -> None:
        """Run `commands` in one pipeline (in their order; on a Redis Cluster, by slot)."""
        if not commands:
            return
        async with self.redis.pipeline(transaction=False) as pipe:
            for command in commands:
                pipe.execute_command(*command)
            await pipe.execute()

    async def _written(self, game_id: str, command: Command) -> tuple[Any, Held | None]:
        """Send `command` (a write to the game, or a read of what was written) with the other
        writes of this turn of the event loop, in one round trip (runtime/group_commit.py);
        when writes wait for replicas, with the wait, on the same connection
        (runtime/redis.py, `on_primary`), so that what the reply says is what the replicas
        waited for hold. On a Redis Cluster (scripts run per slot) each goes alone, by the
        script's own call."""
        if self.cluster:
            assert not self.wait_replicas, "a Redis Cluster's writes do not wait for replicas"
            assert isinstance(command, Script), "reads go through `_written` only to wait"
            script = self._scripts[command.source]
            return await script(keys=command.keys, args=command.args), None
        return await self.group.written(command, keys.game_state(game_id))

    @staticmethod
    def announcement(
        game_id: str, players: Sequence[str], names: Sequence[str]
    ) -> tuple[Any, ...] | None:
        """The note that tells the lobbies a game anyone may watch started with people at it
        (keys.GAMES_STARTED: their followers are told), for `create`; None when no person
        plays it."""
        people = [(p, n) for p, n in zip(players, names, strict=True) if not is_bot(p)]
        if not people:
            return None
        return (
            "XADD", keys.GAMES_STARTED, "MAXLEN", "~", keys.GAMES_STARTED_KEPT, "*",
            "game", keys.kind_of(game_id), "game_id", game_id,
            "players", json.dumps([p for p, _ in people]),
            "names", json.dumps([n for _, n in people]),
        )  # fmt: skip

    def listing(
        self,
        game: str,
        game_id: str,
        players: Sequence[str] = (),
        *,
        levels: Sequence[str] = (),
        sponsor: str = "",
    ) -> list[tuple[Any, ...]]:
        """The writes that count a new game and list it among the live games, each seated
        player's games and live games, and the platform's live games of each of `levels` (the
        capped bot levels at the table, counting for `sponsor`, else the first person: a game
        made by the matchmaker, whose tickets were checked when they were queued), for
        `create`, which runs them, in this order, before it writes the game."""
        now = now_ms()
        people = sorted({p for p in players if not is_bot(p)})
        entry = live_entry(players, now)
        owner = f"{now}:{sponsor_of(players, sponsor)}"
        commands: list[tuple[Any, ...]] = [
            ("ZADD", keys.LIVE_GAMES, now, game_id),
            ("INCRBY", keys.active_games(game), 1),
        ]
        for player in people:
            games_key, live_key = keys.player_games(player), keys.player_live(player)
            commands += [
                ("ZADD", games_key, now, game_id),
                ("ZREMRANGEBYRANK", games_key, 0, -keys.PLAYER_GAMES_KEPT - 1),
                ("EXPIRE", games_key, self.ttl_seconds),
                ("HSETNX", live_key, game_id, entry),
                ("EXPIRE", live_key, self.ttl_seconds),
            ]
        commands += [("HSETNX", keys.level_live(level), game_id, owner) for level in levels]
        return commands

    async def closed(self, game_id: str, players: Sequence[str] = ()) -> None:
        """The game is over: no longer counted or listed, nor among `players`' live games nor
        the platform's live games of the bot levels among `players`."""
        await game_log.unlist(self.redis, [game_id])
        people = sorted({p for p in players if p and not is_bot(p)})
        levels = levels_at(players)
        if people or levels:
            async with self.redis.pipeline(transaction=False) as pipe:
                for player in people:
                    pipe.hdel(keys.player_live(player), game_id)
                for level in levels:
                    pipe.hdel(keys.level_live(level), game_id)
                await pipe.execute()

    @unavailable_when_unreachable
    async def pass_jump_in(
        self, game_id: str, version: int, seat: int
    ) -> tuple[int, dict[int, int], bool]:
        """Record that `seat` passes on jumping in at `version`, if the game is at it: the
        game's version (-1: no such game), each seat's last version passed at (empty when the
        game is at another version), and whether this pass is new."""
        reply: Any = await self._pass(
            keys=[keys.game_state(game_id), keys.game_passes(game_id)],
            args=[version, seat, self.ttl_seconds],
        )
        current = int(reply[0])
        if len(reply) == 1:
            return current, {}, False
        flat = [int(value) for value in reply[1]]
        return current, dict(zip(flat[::2], flat[1::2], strict=True)), bool(reply[2])

    @unavailable_when_unreachable
    async def active_games(self, game: str) -> int:
        return int(await self.redis.get(keys.active_games(game)) or 0)

    @unavailable_when_unreachable
    async def load(self, game_id: str, request_id: str = "") -> StoredGame | None:
        """The game's current version, snapshot and meta (and what an earlier call with the same
        request id produced), in one round trip."""
        seen: bytes | None = None
        if request_id:
            version, snapshot, meta, table, seen, tag = await self._load(
                keys=[keys.game_state(game_id), keys.game_requests(game_id)], args=[request_id]
            )
        else:
            version, snapshot, meta, table, tag = await self.redis.hmget(
                keys.game_state(game_id), ["version", "snapshot", "meta", "table", "tag"]
            )
        if version is None:
            await self._confirm_absent(game_id)
            return None
        return StoredGame(
            game_id=game_id,
            version=int(version),
            snapshot=snapshot,
            meta=GameMeta.from_json(json.loads(meta)),
            request_version=None if seen is None else int(seen),
            table=_table(table),
            tag=(tag or b"").decode(),
        )

    async def _confirm_absent(self, game_id: str) -> None:
        """Under Sentinel with moves that wait for replicas: a game that a read did not find is
        said not to exist only if it is not on a node the Sentinels confirm as the primary,
        read again on one connection (`_written`: the node that answered is the node
        confirmed). Right after a failover or a heal, a read can reach the old primary, which
        never had a game created since; answering GAME_NOT_FOUND then would turn a retried
        move that was played into a refusal."""
        if not self.wait_replicas:
            return
        found, held = await self._written(game_id, ("EXISTS", keys.game_state(game_id)))
        if found or held is None or not await held_confirmed(self.redis, held):
            raise ApiError(
                "UNAVAILABLE",
                f"game {game_id} is not on the Redis node read, which the Sentinels do not "
                "confirm as the primary now; retry shortly",
            )

    @unavailable_when_unreachable
    async def commit(
        self,
        game_id: str,
        *,
        expected_version: int,
        expected_tag: str,
        snapshot: bytes,
        request_id: str,
        actor: int,
        move: str,
        events: list[dict[str, Any]],
        status: VersionStatus,
        table: Mapping[str, Any] | None,
        time_ms: int,
        table_event: Mapping[str, Any] | None = None,
        not_after: int | None = None,
        not_before: int | None = None,
        finished: FinishedGame | None = None,
        deadline: Deadline | None = None,
        tag: str = "",
        follow: Follow | None = None,
    ) -> Commit:
        """Write a move (or what the platform did: `table_event`) if the game is still at
        `expected_version` (of the history tagged `expected_tag`), and (by Redis's clock) not
        after `not_after` nor before `not_before` (one round trip). `finished`: the game's
        record for the finished games' stream, appended by the same script (on a Redis
        Cluster, whose scripts touch one slot, right after it: `finish`). `deadline`: a timed
        game's next deadline after the move, indexed by the same script outside a Redis
        Cluster (`Commit.indexed`); the caller indexes it otherwise (`index_deadline`). `tag`:
        the new version's (`new_tag`; a new one when empty). `follow`: what the move sets
        going, written right after it in the same batch when the store can
        (`Commit.followed`)."""
        tag = tag or self.new_tag()
        record = "" if finished is None or self.cluster else _dumps(finished.to_json())
        game_keys = [keys.game_state(game_id), keys.game_events(game_id)]
        kind = keys.kind_of(game_id)
        indexed = deadline is not None and not self.cluster
        script = Script(
            _COMMIT,
            [
                *game_keys,
                keys.game_requests(game_id),
                *([keys.FINISHED_GAMES] if record else []),
                *([keys.deadlines(kind), keys.deadline_versions(kind)] if indexed else []),
            ],
            [
                expected_version,
                snapshot,
                request_id,
                actor,
                move,
                _dumps(events),
                _dumps(status.to_json()),
                time_ms,
                self.ttl_seconds,
                keys.changed_channel(keys.game_events(game_id)),
                _optional(table),
                _optional(table_event),
                _optional(not_after),
                _optional(not_before),
                expected_tag,
                tag,
                record,
                kind,
                keys.FINISHED_GAMES_KEPT,
                _optional(deadline.at_ms if deadline is not None else None),
            ],
        )
        followed = False
        if follow is None or self.cluster:
            reply, held = await self._written(game_id, script)
        else:
            after = self._follow(game_id, expected_version + 1, tag, follow)
            (reply, done), held = await self.group.written_together(
                (script, after), keys.game_state(game_id)
            )
            if isinstance(reply, Exception):
                raise reply
            followed = done == 1
            if isinstance(done, Exception):
                log.warning("a move's follow-up failed", extra={"error": str(done)})
        outcome, version = reply[0].decode(), int(reply[1])
        if outcome == "OK" and finished is not None and self.cluster:
            await self.finish(game_id, finished)
        if outcome == "NOT_FOUND":
            await self._confirm_absent(game_id)
        current = None
        if outcome == "STALE":
            meta = GameMeta.from_json(json.loads(reply[3]))
            current = StoredGame(
                game_id, version, reply[2], meta, None, _table(reply[4]), reply[5].decode()
            )
        return Commit(
            outcome=outcome,
            version=version,
            current=current,
            tag=tag,
            indexed=indexed and outcome == "OK",
            held=held,
            followed=followed and outcome == "OK",
        )

    def new_tag(self) -> str:
        """A tag no other version has: this process's own random prefix and a count."""
        return f"{self._tag_prefix}{next(self._tags):x}"

    def _follow(self, game_id: str, version: int, tag: str, follow: Follow) -> Script:
        """The script that writes `follow` if the game is at `version` with `tag`."""
        names = list(follow.jobs[0]) if follow.jobs else []
        told, tell = Notifier.told(follow.told, "your_turn", **follow.fields)
        return Script(
            _FOLLOW,
            [keys.game_state(game_id), keys.BOT_TURNS, *told],
            [
                version,
                tag,
                len(follow.jobs),
                len(names),
                bot_turns.STREAM_LENGTH,
                *names,
                *(job[name] for job in follow.jobs for name in names),
                *tell,
            ],
        )

    @unavailable_when_unreachable
    async def finish(self, game_id: str, record: FinishedGame) -> None:
        """Append a finished game's record to the finished games' stream, apart from the move
        (on a Redis Cluster). A process that stops between the two leaves the game on the live
        list (it is taken off after this): the bots' sweep of that list appends it then
        (runtime/bot_turns.py, `stalled`)."""
        await game_log.append_finished(self.redis, game_id, record)

    async def confirm(self, held: Held | None) -> None:
        """Return if a write may be acknowledged: the replicas it waited for hold it, and under
        Sentinel the node it went to is confirmed primary, asked after the write
        (runtime/redis.py, `Survey.confirms`); else raise UNAVAILABLE. The write stays where it
        went: the caller's retry, with the same request id, is answered from what is stored
        then, after this again. So no move a player was told was played is lost to a failover
        or a partition (docs/reliability.md, "Partitions"). `held` None: writes do not wait."""
        if held is None:
            return
        if not held.enough:
            REPLICATION_LATE.inc()
            raise ApiError(
                "UNAVAILABLE",
                f"the move is held by {held.acknowledged} of the {held.wanted} Redis replica(s) "
                "it waits for; retry with the same request id",
            )
        if not await held_confirmed(self.redis, held):
            PRIMARY_UNCONFIRMED.inc()
            raise ApiError(
                "UNAVAILABLE",
                "the Redis node the move was written to is not confirmed as the primary by a "
                "majority of the Sentinels (a failover may be under way); retry with the same "
                "request id",
            )

    @unavailable_when_unreachable
    async def index_deadline(self, game_id: str, version: int, at_ms: int | None) -> None:
        """Record when the game needs the platform next (None: never), as of `version`."""
        kind = keys.kind_of(game_id)
        await self._index(
            keys=[keys.deadlines(kind), keys.deadline_versions(kind)],
            args=[game_id, version, _optional(at_ms)],
        )

    @unavailable_when_unreachable
    async def due(self, kind: str, count: int, hold_ms: int) -> list[str]:
        """Up to `count` games of `kind` whose deadline has passed, held for this caller for
        `hold_ms` (see _DUE)."""
        found: Any = await self._due(keys=[keys.deadlines(kind)], args=[count, hold_ms])
        return [game_id.decode() for game_id in found]

    @unavailable_when_unreachable
    async def entries(self, game_id: str, from_version: int, count: int = 100) -> list[Entry]:
        """Stream entries with version >= from_version, oldest first (no blocking)."""
        replies: Any = await self.redis.xrange(
            keys.game_events(game_id), min=keys.event_entry_id(from_version), count=count
        )
        return [entry_of(entry_id, fields) for entry_id, fields in replies]

    @unavailable_when_unreachable
    async def entry_held(self, game_id: str, version: int) -> tuple[Entry | None, Held | None]:
        """The stream entry of `version`, and (when writes wait for replicas) what holds it, read
        on one connection: a retried move is acknowledged again only once its entry is held as
        a new move's would be (`confirm`)."""
        if not self.wait_replicas:
            entries = await self.entries(game_id, version, count=1)
            return next((e for e in entries if e.version == version), None), None
        entry_id = keys.event_entry_id(version)
        command = ("XRANGE", keys.game_events(game_id), entry_id, entry_id)
        found, held = await self._written(game_id, command)
        if not found:
            return None, held
        found_id, fields = found[0]  # as Redis sends it: the fields a flat list
        return entry_of(found_id, dict(zip(fields[::2], fields[1::2], strict=True))), held

    @unavailable_when_unreachable
    async def wait_entries(
        self, game_id: str, from_version: int, block_ms: int, count: int = 100
    ) -> list[Entry]:
        """Like `entries`, but waits up to block_ms for the first one to arrive."""
        after = keys.event_entry_id(from_version - 1) if from_version > 0 else "0-0"
        reply: Any = await self.redis.xread(
            {keys.game_events(game_id): after}, count=count, block=block_ms
        )
        if not reply:
            return []
        # RESP2 answers [[stream, items]]; RESP3 answers {stream: [items]}.
        items = next(iter(reply.values()))[0] if isinstance(reply, dict) else reply[0][1]
        return [entry_of(entry_id, fields) for entry_id, fields in items]
