"""A player's side of the games in Redis, apart from any one game's record (services/game/store.py):
display names, the live games that count against a player's limits and the bot levels' platform
caps, the deal of the day, the ratings a rated table starts from, and a player's list of games.
The game service writes them as it makes games; the lobby reads them (ListGames, names, the
limits it checks before queueing a ticket).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from redis.asyncio import Redis

from runtime import game_log, keys
from runtime.game_log import Entry, now_ms
from runtime.group_commit import GroupCommit
from runtime.redis import Script, unavailable_when_unreachable
from services.game.limits import Limits, Load, levels_at, load_of, platform_refusal, refusal
from services.ratings.model import held_rating, rated_seats
from wire.errors import ApiError
from wire.metadata import Caller
from wire.players import display_name, is_bot
from wire.records import GameMeta

# KEYS: the player's live games (keys.player_live).
# ARGV: 1 game id, 2 its entry ("<created ms>:<bot levels>"), 3 ttl seconds, 4 most live games,
#       5 most games with bots, then pairs of (level, most games against bots of that level).
# Returns {"OK"} (listed: within every limit, or listed already) | {limit, held, most}.
_RESERVE = """
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return {'OK'} end
local live, bots, by = 0, 0, {}
for _, entry in ipairs(redis.call('HVALS', KEYS[1])) do
  live = live + 1
  local levels = string.match(entry, ':(.*)$') or ''
  if levels ~= '' then
    bots = bots + 1
    for level in string.gmatch(levels, '[^,]+') do by[level] = (by[level] or 0) + 1 end
  end
end
if live >= tonumber(ARGV[4]) then return {'live_games', live, tonumber(ARGV[4])} end
local mine = string.match(ARGV[2], ':(.*)$') or ''
if mine ~= '' then
  if bots >= tonumber(ARGV[5]) then return {'bot_games', bots, tonumber(ARGV[5])} end
  for i = 6, #ARGV, 2 do
    local level, most = ARGV[i], tonumber(ARGV[i + 1])
    local here = string.find(',' .. mine .. ',', ',' .. level .. ',', 1, true)
    if here and (by[level] or 0) >= most then
      return {level .. '_bot_games', by[level] or 0, most}
    end
  end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('EXPIRE', KEYS[1], ARGV[3])
return {'OK'}
"""

# KEYS: the day's deal (keys.daily_deal). ARGV: player, game id, a fresh seed, seconds kept.
# The first caller of the day draws the seed; each player's first call holds their try.
# Returns {seed, the game id of an earlier try or false}.
_DEAL = """
redis.call('HSETNX', KEYS[1], 'seed', ARGV[3])
local field = 'p:' .. ARGV[1]
local held = redis.call('HGET', KEYS[1], field)
if not held then
  redis.call('HSET', KEYS[1], field, ARGV[2])
end
if redis.call('TTL', KEYS[1]) < 0 then
  redis.call('EXPIRE', KEYS[1], ARGV[4])
end
return {redis.call('HGET', KEYS[1], 'seed'), held or false}
"""


# KEYS: the live games of each capped bot level at the table (keys.level_live).
# ARGV: 1 game id, 2 its entry ("<created ms>:<player>"), 3 the player it counts for, 4 "1" to
#       check only (list nothing), then each level's cap, in the order of KEYS.
# The fair share (services/game/limits.py): from half of a cap on, a player may take another
# place only while they hold fewer than the free places divided by the players holding one
# (counting them), rounded up.
# Returns {"OK"} (listed in each: within every cap and share, or listed already)
#       | {"platform", the level's index in KEYS, games going on, cap}
#       | {"share", the level's index in KEYS, held, share, games going on}.
_CLAIM = """
for i, key in ipairs(KEYS) do
  if redis.call('HEXISTS', key, ARGV[1]) == 0 then
    local cap = tonumber(ARGV[4 + i])
    local used, held, players, seen = 0, 0, 0, {}
    for _, entry in ipairs(redis.call('HVALS', key)) do
      used = used + 1
      local owner = string.match(entry, '^%d+:(.*)$') or ''
      if not seen[owner] then
        seen[owner] = true
        players = players + 1
      end
      if owner == ARGV[3] then held = held + 1 end
    end
    if used >= cap then return {'platform', i, used, cap} end
    if 2 * used >= cap then
      if held == 0 then players = players + 1 end
      local share = math.ceil((cap - used) / players)
      if held >= share then return {'share', i, held, share, used} end
    end
  end
end
if ARGV[4] ~= '1' then
  for _, key in ipairs(KEYS) do redis.call('HSETNX', key, ARGV[1], ARGV[2]) end
end
return {'OK'}
"""

PRUNE_MS = 2000
"""A level's platform-wide list is looked through for finished or vanished games at most this
often (each look reads every game listed)."""
MADE_LATELY_MS = 60_000
"""A listed game that does not exist yet may still be being made: it is dropped only after this."""


@dataclass(frozen=True, slots=True)
class PlayerGame:
    """One of a player's games as ListGames shows it."""

    game_id: str
    meta: GameMeta
    last: Entry
    """The latest log entry: the game's version and status now."""
    created_ms: int


def live_entry(seats: Sequence[str], created_ms: int | None = None) -> str:
    """A live game's entry in keys.player_live."""
    return f"{now_ms() if created_ms is None else created_ms}:{','.join(levels_at(seats))}"


class PlayerStore:
    """Reads and writes what the games say of players in Redis. Holds no state of its own."""

    def __init__(
        self,
        redis: Redis,
        *,
        ttl_seconds: int = 7 * 24 * 3600,
        group: GroupCommit | None = None,
    ) -> None:
        """`group`: the batches a game service's writes go in (runtime/group_commit.py), for
        a new game's check of its player's live games (`reserve`); None: it goes alone (a
        Redis Cluster, the lobby)."""
        self.redis = redis
        self.ttl_seconds = ttl_seconds
        """How long names and a player's live games are kept (as long as games)."""
        self.group = group
        self._scripts = {
            source: redis.register_script(source) for source in (_RESERVE, _CLAIM, _DEAL)
        }

    async def _run(
        self, source: str, names: list[str], args: list[Any], batched: bool = False
    ) -> Any:
        """The reply of Lua script `source` on keys `names`; `batched`: in the group's next
        batch when there is a group. Only a script whose first key lives as long as a game may
        be: a batch that waits for replicas sets that key's TTL to a game's again (a day's deal
        is kept longer, the bot levels' live games for ever)."""
        if self.group is None or not batched:
            return await self._scripts[source](keys=names, args=args)
        reply, _ = await self.group.written(Script(source, names, args), names[0])
        return reply

    @unavailable_when_unreachable
    async def reserve(
        self, player: str, game_id: str, seats: Sequence[str], limits: Limits
    ) -> None:
        """List a new game among `player`'s live games if it stays within their limits, at
        once (two calls at the same moment cannot both take the last place), then among the
        platform's live games of each capped bot level at the table if it stays within those
        caps and the player's fair share (`claim`); else LIMIT_REACHED, and the game is listed
        nowhere. A refusal first drops games found finished or gone since (a process that
        stopped between a game's last move and its unlisting left them).

        Two scripts, not one: a player's live games and a level's live games are in different
        Redis Cluster slots (the player's, and one for the whole platform), which no script
        may span. Each check-and-list is atomic; should this process stop between the two, the
        player's list names a game that was never made, which is dropped like any game gone
        (`prune_live`)."""
        entry = live_entry(seats)
        args: list[Any] = [game_id, entry, self.ttl_seconds, limits.live_games, limits.bot_games]
        for level, most in sorted(limits.bot_games_by_level.items()):
            args += [level, most]
        for attempt in (1, 2):
            outcome = await self._run(_RESERVE, [keys.player_live(player)], args, batched=True)
            if outcome[0] == b"OK":
                break
            if attempt == 1 and await self.prune_live(player):
                continue
            raise refusal(outcome[0].decode(), int(outcome[1]), int(outcome[2]))
        try:
            await self.claim(player, game_id, seats, limits)
        except ApiError:
            await self.redis.hdel(keys.player_live(player), game_id)
            raise

    @unavailable_when_unreachable
    async def claim(
        self,
        player: str,
        game_id: str,
        seats: Sequence[str],
        limits: Limits,
        *,
        check_only: bool = False,
    ) -> None:
        """List a new game with these `seats` among the platform's live games of each bot
        level at the table that has a platform-wide cap, counting for `player`, if it stays
        within every such cap and the player's fair share of it (services/game/limits.py), at
        once; else LIMIT_REACHED. `check_only`: list nothing, only say whether it would be
        refused (the lobby, before it queues a ticket). A refusal first drops games found
        finished or gone."""
        levels = limits.capped_levels(seats)
        if not levels:
            return
        caps = [limits.platform_bot_games_by_level[level] for level in levels]
        args = [game_id, f"{now_ms()}:{player}", player, "1" if check_only else "", *caps]
        for attempt in (1, 2):
            outcome = await self._run(_CLAIM, [keys.level_live(level) for level in levels], args)
            if outcome[0] == b"OK":
                return
            level = levels[int(outcome[1]) - 1]
            if attempt == 1 and await self.prune_level(level):
                continue
            if outcome[0] == b"platform":
                raise platform_refusal(
                    f"platform_{level}_bot_games", level, 0, int(outcome[3]), int(outcome[2])
                )
            raise platform_refusal(
                f"{level}_bot_games_share",
                level,
                int(outcome[2]),
                int(outcome[3]),
                int(outcome[4]),
            )

    @unavailable_when_unreachable
    async def live(self, player: str) -> dict[str, tuple[int, list[str]]]:
        """The player's live games: id -> (created ms, bot levels at the table)."""
        found: Any = await self.redis.hgetall(keys.player_live(player))
        games = {}
        for game_id, entry in found.items():
            created, _, levels = entry.decode().partition(":")
            games[game_id.decode()] = (int(created or 0), [x for x in levels.split(",") if x])
        return games

    async def live_load(self, player: str) -> Load:
        return load_of(levels for _, levels in (await self.live(player)).values())

    @unavailable_when_unreachable
    async def prune_live(self, player: str) -> bool:
        """Drop the player's live games found finished, or gone (but for games made this last
        minute, which may not be stored yet); whether any were."""
        listed = await self.live(player)
        return await self._prune(
            keys.player_live(player), {game_id: ms for game_id, (ms, _) in listed.items()}
        )

    @unavailable_when_unreachable
    async def prune_level(self, level: str) -> bool:
        """Drop the games found finished or gone (`prune_live`) from the platform's live games
        of a bot level; whether any were. One process looks at a time, at most once every
        PRUNE_MS (a full platform refuses often, and each look reads every game listed)."""
        if not await self.redis.set(keys.level_prune_lock(level), "1", nx=True, px=PRUNE_MS):
            return False
        found: Any = await self.redis.hgetall(keys.level_live(level))
        listed = {
            game_id.decode(): int(entry.decode().partition(":")[0] or 0)
            for game_id, entry in found.items()
        }
        return await self._prune(keys.level_live(level), listed)

    async def _prune(self, key: str, listed: Mapping[str, int]) -> bool:
        """Drop from the hash `key` the games of `listed` (id -> created ms) found finished, or
        gone (but for games made within MADE_LATELY_MS, which may not be stored yet)."""
        ids = list(listed)
        stale = [
            game_id
            for game_id, (meta, last) in zip(
                ids, await game_log.newest(self.redis, ids), strict=True
            )
            if (last is not None and last.status.finished)
            or (meta is None and now_ms() - listed[game_id] > MADE_LATELY_MS)
        ]
        if stale:
            await self.redis.hdel(key, *stale)
        return bool(stale)

    @unavailable_when_unreachable
    async def remember_name(self, player: str, name: str) -> None:
        """A player's display name, as they last called the lobby (kept as long as games)."""
        await self.redis.set(keys.player_name(player), name, ex=self.ttl_seconds)

    @unavailable_when_unreachable
    async def player_names(self, players: Sequence[str], caller: Caller) -> list[str]:
        """Each player's display name: the name they logged in with (the caller's from the
        call; the others' as the lobby last saw them), "<level> bot" for a bot seat, the player
        id when no name is known. (What the lobby's answers call players, an account by its
        username first, is services/lobby/names.py's, which falls back on this.)"""
        others = sorted({p for p in players if not is_bot(p) and p != caller.player})
        async with self.redis.pipeline(transaction=False) as pipe:
            for player in others:
                pipe.get(keys.player_name(player))
            found = dict(zip(others, await pipe.execute(), strict=True))
        known = {p: name.decode() for p, name in found.items() if name is not None}
        if caller.player and caller.name:
            known[caller.player] = caller.name
        return [display_name(player, known.get(player)) for player in players]

    @unavailable_when_unreachable
    async def deal_of_the_day(
        self, game: str, day: str, player: str, game_id: str
    ) -> tuple[int, str | None]:
        """The day's deal (its seed, drawn by the first to ask), and `player`'s try at it:
        `game_id` is theirs now, unless they tried before (then that game's id)."""
        fresh = random.SystemRandom().getrandbits(63)
        seed, held = await self._run(
            _DEAL,
            [keys.daily_deal(game, day)],
            [player, game_id, fresh, keys.DAYS_KEPT * 24 * 3600],
        )
        return int(seed), held.decode() if held else None

    @unavailable_when_unreachable
    async def forget_try(self, game: str, day: str, player: str) -> None:
        """Give `player` their try at the day's deal back (the game was not made)."""
        await self.redis.hdel(keys.daily_deal(game, day), f"p:{player}")

    async def seat_ratings(self, game: str, meta: GameMeta) -> dict[str, list[Any]]:
        """A rated game's seats' ratings as the game is made, from Redis's copy (`seat` ->
        [the number shown, provisional]), for the seats whose results count for someone."""
        seats = rated_seats(meta.seats, meta.accounts or ())
        if not seats:
            return {}
        players = sorted(set(seats.values()))
        held: Any = await self.redis.hmget(keys.ratings(game), players)
        found = {p: held_rating(game, p, h) for p, h in zip(players, held, strict=True)}
        return {str(seat): [found[p].display, found[p].provisional] for seat, p in seats.items()}

    @unavailable_when_unreachable
    async def player_games(self, player: str) -> list[PlayerGame]:
        """The player's games, newest first: every live one and the most recent
        PLAYER_GAMES_KEPT; id, meta and latest log entry of each game that still exists (ids of
        games gone by their TTL are dropped from the list on the way)."""
        created = {game_id: ms for game_id, (ms, _) in (await self.live(player)).items()}
        recent: Any = await self.redis.zrevrange(
            keys.player_games(player), 0, keys.PLAYER_GAMES_KEPT - 1, withscores=True
        )
        created |= {i.decode(): int(score) for i, score in recent}
        ids = sorted(created, key=lambda game_id: created[game_id], reverse=True)
        listed_ms = [created[game_id] for game_id in ids]
        games: list[PlayerGame] = []
        gone: list[str] = []
        for index, (meta, last) in enumerate(await game_log.newest(self.redis, ids)):
            if meta is None or last is None:
                if now_ms() - listed_ms[index] > 60_000:  # not one being created right now
                    gone.append(ids[index])
                continue
            games.append(PlayerGame(ids[index], meta, last, listed_ms[index]))
        if gone:
            await self.redis.zrem(keys.player_games(player), *gone)
        return games
