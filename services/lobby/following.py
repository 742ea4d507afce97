"""Following, presence and notifications (docs/api.md, "Following, presence and notifications").

An account follows accounts, by username; the follows are kept in PostgreSQL (`follows`, and
`follow_settings` for those who take no followers: setting it ends every follow of them). Guests
may neither follow nor be followed: a follow outlives any session, and only accounts have names
to follow by.

A player is online while they hold a notification stream (WatchNotifications, directly or on a
session): each open stream keeps an entry in the player's presence set (keys.presence), which
lapses PRESENCE_SECONDS after its lobby last refreshed it; a stream that closes removes its own.

Notifications are entries of a per-player Redis stream (keys.player_notifications), capped and
expiring, written (runtime/notifications.py) where what they tell of happens: the tables of
friends (friends.py), the games that start (a game service appends each to keys.GAMES_STARTED;
`GameStarts`, a consumer in each lobby, tells the seated people's followers), and a person's
turn coming (the game service's commit of the move before it). WatchNotifications follows the
stream through the process's fan-out hub and resumes after any entry id.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import secrets
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from psycopg import AsyncConnection
from psycopg_pool import AsyncConnectionPool
from redis.asyncio import Redis

from runtime import game_log, keys
from runtime.config import env_int
from runtime.consumer import GroupConsumer
from runtime.db import database_failed
from runtime.fanout import StreamHub, TooSlow
from runtime.notifications import Notifier
from runtime.redis import redis_failed
from services.lobby.names import Names
from services.lobby.servicer import _lobby_reachable, _player
from services.lobby.tables import now_ms
from tabletop.lobby.v1 import lobby_pb2
from wire.errors import ApiError
from wire.metadata import Caller

log = logging.getLogger("tabletop.lobby")

PRESENCE_SECONDS = 10.0
"""An open stream's presence lapses this long after its lobby last refreshed it."""
PRESENCE_REFRESH_SECONDS = 3.0

KINDS = {
    "challenge_received": lobby_pb2.NOTIFICATION_KIND_CHALLENGE_RECEIVED,
    "challenge_accepted": lobby_pb2.NOTIFICATION_KIND_CHALLENGE_ACCEPTED,
    "challenge_declined": lobby_pb2.NOTIFICATION_KIND_CHALLENGE_DECLINED,
    "challenge_expired": lobby_pb2.NOTIFICATION_KIND_CHALLENGE_EXPIRED,
    "rematch_offered": lobby_pb2.NOTIFICATION_KIND_REMATCH_OFFERED,
    "game_started": lobby_pb2.NOTIFICATION_KIND_GAME_STARTED,
    "your_turn": lobby_pb2.NOTIFICATION_KIND_YOUR_TURN,
}
_FIELDS = ("player_id", "name", "challenge_id", "game", "game_id", "message")

# KEYS: a player's presence set. ARGV: the stream's id, now ms, when it lapses (ms), the bound
# on the player's streams (0: a refresh, not checked). Returns 1, or 0 when the bound is reached.
_PRESENT = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[2])
local bound = tonumber(ARGV[4])
if bound > 0 and redis.call('ZCARD', KEYS[1]) >= bound then return 0 end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]) - tonumber(ARGV[2]))
return 1
"""


@dataclass(frozen=True, kw_only=True)
class FollowSettings:
    follows: int = 200
    """Players one player may follow."""
    notification_streams: int = 4
    """Notification streams one player may hold open at once, on every lobby (each is also one
    of their streams at the gateway)."""

    @staticmethod
    def from_env() -> FollowSettings:
        return FollowSettings(
            follows=env_int("MAX_FOLLOWS", 200),
            notification_streams=env_int("MAX_NOTIFICATION_STREAMS", 4),
        )


class Notifications:
    """The players' notification streams and presence sets."""

    def __init__(self, redis: Redis) -> None:
        self.redis = redis
        self.notifier = Notifier(redis)
        self._present = redis.register_script(_PRESENT)

    async def send(self, players: Sequence[str], kind: str, **fields: str) -> None:
        """Tell each of `players` of `kind` (runtime/notifications.py). Best effort: a
        notification that cannot be written is logged, never the failure of the call that made
        it."""
        try:
            await self.notifier.send(players, kind, **fields)
        except Exception as error:
            if not redis_failed(error):
                raise
            log.warning("a notification was lost", extra={"kind": kind, "error": str(error)})

    @staticmethod
    def message(entry_id: str, fields: Mapping[bytes, bytes]) -> lobby_pb2.Notification:
        text = {k.decode(): v.decode() for k, v in fields.items()}
        message = lobby_pb2.Notification(
            notification_id=entry_id,
            kind=KINDS.get(text["kind"], lobby_pb2.NOTIFICATION_KIND_UNSPECIFIED),
        )
        for name in _FIELDS:
            setattr(message, name, text.get(name, ""))
        message.time.FromMilliseconds(int(text["t"]))
        return message

    async def last(self, player: str) -> str:
        """The id of the player's latest notification ("0-0": none)."""
        found: Any = await self.redis.xrevrange(keys.player_notifications(player), count=1)
        return found[0][0].decode() if found else "0-0"

    async def present(self, player: str, stream: str, bound: int = 0) -> bool:
        """Mark `stream` of the player present for PRESENCE_SECONDS more; False (and not
        marked) when `bound` streams of theirs are present already (0: no bound)."""
        now = now_ms()
        lapses = now + int(PRESENCE_SECONDS * 1000)
        return bool(
            await self._present(keys=[keys.presence(player)], args=[stream, now, lapses, bound])
        )

    async def absent(self, player: str, stream: str) -> None:
        await self.redis.zrem(keys.presence(player), stream)

    async def online(self, players: Sequence[str]) -> dict[str, bool]:
        now = now_ms()
        async with self.redis.pipeline(transaction=False) as pipe:
            for player in players:
                pipe.zcount(keys.presence(player), f"({now}", "+inf")
            counts = await pipe.execute()
        return {p: bool(n) for p, n in zip(players, counts, strict=True)}

    async def playing(self, players: Sequence[str]) -> dict[str, tuple[str, str]]:
        """The public game each player sits at now, the newest (game kind, game id); those who
        play none are left out. Private tables and deals of the day are nobody else's."""
        async with self.redis.pipeline(transaction=False) as pipe:
            for player in players:
                pipe.hgetall(keys.player_live(player))
            held = await pipe.execute()
        live: list[tuple[int, str, str]] = []  # (created ms, player, game id)
        for player, games_held in zip(players, held, strict=True):
            for game_id, value in games_held.items():
                created = value.decode().split(":", 1)[0]
                live.append((int(created) if created.isdigit() else 0, player, game_id.decode()))
        live.sort(reverse=True)
        ids = list(dict.fromkeys(game_id for _, _, game_id in live))
        found = dict(zip(ids, await game_log.newest(self.redis, ids), strict=True))
        playing: dict[str, tuple[str, str]] = {}
        for _, player, game_id in live:
            meta, last = found[game_id]
            if player in playing or meta is None or last is None:
                continue
            public = not meta.private and not meta.day
            if public and not last.status.finished and player in meta.seats:
                playing[player] = (meta.game, game_id)
        return playing


@contextlib.contextmanager
def _database_reachable() -> Iterator[None]:
    try:
        yield
    except Exception as error:
        if not database_failed(error):
            raise
        raise ApiError("UNAVAILABLE", "the accounts cannot be reached; retry") from None


FOLLOWS_LOCK = 0x666F6C6C  # the first key of the follows' advisory locks: "foll"


def _lock_key(player: str) -> int:
    """The second key of the player's follows lock: a signed 32-bit number of its id (two ids
    that share one only wait for each other)."""
    return int.from_bytes(hashlib.sha256(player.encode()).digest()[:4], "big", signed=True)


async def lock_follows(connection: AsyncConnection[Any], players: Sequence[str]) -> None:
    """Locks the follows of `players` until the transaction ends (PostgreSQL advisory locks of
    the lobby's own, taken in one order: two transactions locking the same players never wait
    for each other in a circle). A follow locks both players, a change of a player's setting
    that player: the two never cross."""
    for key in sorted({_lock_key(player) for player in players}):
        await connection.execute(
            "SELECT pg_advisory_xact_lock(%s::integer, %s::integer)", (FOLLOWS_LOCK, key)
        )


def _who(accept_from: lobby_pb2.AcceptFrom.ValueType) -> str:
    who: str | None = {
        lobby_pb2.ACCEPT_FROM_UNSPECIFIED: "everyone",
        lobby_pb2.ACCEPT_FROM_EVERYONE: "everyone",
        lobby_pb2.ACCEPT_FROM_NOBODY: "nobody",
    }.get(accept_from)
    if who is None:
        raise ApiError("INVALID_ARGUMENT", "accept_from is ACCEPT_FROM_EVERYONE or _NOBODY")
    return who


class Following:
    """The calls of following and notifications (accounts named by `names`)."""

    def __init__(
        self,
        names: Names,
        notifications: Notifications,
        hub: StreamHub,
        settings: FollowSettings,
    ) -> None:
        self.names = names
        self.notifications = notifications
        self.hub = hub
        self.settings = settings

    def handlers(self) -> dict[str, Any]:
        return {
            "FollowPlayer": self.follow_player,
            "UnfollowPlayer": self.unfollow_player,
            "ListFollowing": self.list_following,
            "ListFollowers": self.list_followers,
            "SetFollowSetting": self.set_follow_setting,
            "GetFollowSetting": self.get_follow_setting,
        }

    def _database(self) -> AsyncConnectionPool:
        database = self.names.database
        if database is None:
            raise ApiError("ACCOUNTS_DISABLED", "this platform keeps no accounts to follow")
        return database

    def _account(self, caller: Caller) -> str:
        player = _player(caller)
        if caller.guest:
            raise ApiError(
                "NOT_PERMITTED",
                "a guest may not follow players nor be followed: register "
                "(AuthService.Register) first",
            )
        return player

    async def _named(self, username: str) -> str:
        """The account named `username` (PLAYER_NOT_FOUND when there is none)."""
        return await self.names.account(username)

    async def _usernames(self, players: Sequence[str]) -> dict[str, str]:
        """The usernames of those of `players` that are accounts, asked of the accounts service
        (out of reach: UNAVAILABLE)."""
        accounts = self.names.accounts
        if accounts is None:
            raise ApiError("ACCOUNTS_DISABLED", "this platform keeps no accounts to follow")
        try:
            return await accounts.usernames(players)
        except ApiError as error:
            if error.reason != "UNAVAILABLE":
                raise
            raise ApiError("UNAVAILABLE", "the accounts cannot be reached; retry") from None

    async def _by_username(self, rows: Sequence[tuple[Any, ...]]) -> list[tuple[str, str, Any]]:
        """(player, username, since) for the rows (player, since) whose players are accounts,
        in the order of their usernames, whatever their case."""
        names = await self._usernames(sorted({str(row[0]) for row in rows}))
        named = [(str(p), names[str(p)], since) for p, since in rows if str(p) in names]
        return sorted(named, key=lambda row: (row[1].lower(), row[0]))

    # -- following -------------------------------------------------------------------------

    async def follow_player(
        self, request: lobby_pb2.FollowPlayerRequest, caller: Caller
    ) -> lobby_pb2.FollowedPlayer:
        player = self._account(caller)
        target = await self._named(request.username)
        if target == player:
            raise ApiError("INVALID_ARGUMENT", "follow another player")
        bound = self.settings.follows
        database = self._database()
        if player not in await self._usernames([player]):
            raise ApiError("NOT_PERMITTED", "only accounts follow players")
        with _database_reachable():
            async with database.connection() as connection, connection.transaction():
                # Both players locked, in one order: a follow and a change of the followed
                # player's setting (or a follow back) never cross.
                await lock_follows(connection, [player, target])
                cursor = await connection.execute(
                    "SELECT 1 FROM follow_settings WHERE account_id = %s", (target,)
                )
                if await cursor.fetchone() is not None:
                    raise ApiError(
                        "FOLLOWS_REFUSED", f"{request.username} takes no followers",
                        player_id=target,
                    )  # fmt: skip
                cursor = await connection.execute(
                    "SELECT count(*), count(*) FILTER (WHERE followed = %s) FROM follows "
                    "WHERE follower = %s",
                    (target, player),
                )
                row = await cursor.fetchone()
                held, already = (int(row[0]), int(row[1])) if row else (0, 0)
                if not already:
                    if held >= bound:
                        raise ApiError(
                            "LIMIT_REACHED",
                            f"you follow {held} players: at most {bound}; unfollow one first",
                            limit="follows",
                            max=str(bound),
                        )
                    await connection.execute(
                        "INSERT INTO follows (follower, followed) VALUES (%s, %s)",
                        (player, target),
                    )
        (followed,) = await self._following(player, target)
        return followed

    async def unfollow_player(
        self, request: lobby_pb2.UnfollowPlayerRequest, caller: Caller
    ) -> lobby_pb2.UnfollowPlayerResponse:
        player = self._account(caller)
        if bool(request.player_id) == bool(request.username):
            raise ApiError("INVALID_ARGUMENT", "name the player: player_id or username, not both")
        target = request.player_id or await self._named(request.username)
        with _database_reachable():
            async with self._database().connection() as connection:
                await connection.execute(
                    "DELETE FROM follows WHERE follower = %s AND followed = %s",
                    (player, target[:64]),
                )
        return lobby_pb2.UnfollowPlayerResponse()

    async def _following(
        self, player: str, only: str | None = None
    ) -> list[lobby_pb2.FollowedPlayer]:
        """The players `player` follows (`only` that one), as ListFollowing lists them."""
        with _database_reachable():
            async with self._database().connection() as connection:
                cursor = await connection.execute(
                    "SELECT followed, created_at FROM follows WHERE follower = %s "
                    "AND (%s::text IS NULL OR followed = %s)",
                    (player, only, only),
                )
                followed_rows = await cursor.fetchall()
        rows = await self._by_username(followed_rows)
        ids = [str(row[0]) for row in rows]
        with _lobby_reachable():
            online = await self.notifications.online(ids)
            playing = await self.notifications.playing(ids)
        answer = []
        for followed, name, since in rows:
            game, game_id = playing.get(followed, ("", ""))
            item = lobby_pb2.FollowedPlayer(
                player_id=followed, name=name, online=online[followed], game=game,
                game_id=game_id,
            )  # fmt: skip
            item.since.FromDatetime(since)
            answer.append(item)
        return answer

    async def list_following(
        self, request: lobby_pb2.ListFollowingRequest, caller: Caller
    ) -> lobby_pb2.ListFollowingResponse:
        player = self._account(caller)
        return lobby_pb2.ListFollowingResponse(players=await self._following(player))

    async def list_followers(
        self, request: lobby_pb2.ListFollowersRequest, caller: Caller
    ) -> lobby_pb2.ListFollowersResponse:
        player = self._account(caller)
        with _database_reachable():
            async with self._database().connection() as connection:
                cursor = await connection.execute(
                    "SELECT follower, created_at FROM follows WHERE followed = %s", (player,)
                )
                follower_rows = await cursor.fetchall()
        rows = await self._by_username(follower_rows)
        answer = lobby_pb2.ListFollowersResponse()
        for follower, name, since in rows:
            answer.followers.add(player_id=follower, name=name).since.FromDatetime(since)
        return answer

    async def set_follow_setting(
        self, request: lobby_pb2.SetFollowSettingRequest, caller: Caller
    ) -> lobby_pb2.FollowSetting:
        player = self._account(caller)
        who = _who(request.accept_from)
        database = self._database()
        if player not in await self._usernames([player]):
            raise ApiError("NOT_PERMITTED", "only accounts have followers")
        with _database_reachable():
            async with database.connection() as connection, connection.transaction():
                await lock_follows(connection, [player])  # no follow of the player crosses this
                if who == "nobody":
                    await connection.execute(
                        "INSERT INTO follow_settings (account_id, accept_from) "
                        "VALUES (%s, 'nobody') ON CONFLICT (account_id) DO NOTHING",
                        (player,),
                    )
                    await connection.execute("DELETE FROM follows WHERE followed = %s", (player,))
                else:
                    await connection.execute(
                        "DELETE FROM follow_settings WHERE account_id = %s", (player,)
                    )
        return lobby_pb2.FollowSetting(accept_from=_accept_from(who))

    async def get_follow_setting(
        self, request: lobby_pb2.GetFollowSettingRequest, caller: Caller
    ) -> lobby_pb2.FollowSetting:
        player = self._account(caller)
        with _database_reachable():
            async with self._database().connection() as connection:
                cursor = await connection.execute(
                    "SELECT 1 FROM follow_settings WHERE account_id = %s", (player,)
                )
                refuses = await cursor.fetchone() is not None
        return lobby_pb2.FollowSetting(accept_from=_accept_from("nobody" if refuses else ""))

    async def followers_of(self, players: Sequence[str]) -> list[tuple[str, str]]:
        """(follower, followed) for every follower of each of `players`."""
        async with self._database().connection() as connection:
            cursor = await connection.execute(
                "SELECT follower, followed FROM follows WHERE followed = ANY(%s)",
                (list(players),),
            )
            return [(str(a), str(b)) for a, b in await cursor.fetchall()]

    # -- notifications ---------------------------------------------------------------------

    async def watch_notifications(
        self, request: lobby_pb2.WatchNotificationsRequest, caller: Caller
    ) -> AsyncIterator[lobby_pb2.Notification]:
        player = _player(caller)
        after = request.after_id or ""
        if after == "0":
            after = "0-0"
        if after:
            ms, _, seq = after.partition("-")
            if not (ms.isdigit() and seq.isdigit() and len(after) <= 40):
                raise ApiError("INVALID_ARGUMENT", f"not a notification id: {after[:40]!r}")
        stream = secrets.token_hex(8)
        with _lobby_reachable():
            if not after:
                after = await self.notifications.last(player)
            if not await self.notifications.present(
                player, stream, self.settings.notification_streams
            ):
                most = self.settings.notification_streams
                raise ApiError(
                    "LIMIT_REACHED",
                    f"you have {most} notification streams open: at most that many at once; "
                    "close one first",
                    limit="notification_streams",
                    max=str(most),
                )
        return self._notifications(player, stream, after)

    async def _notifications(
        self, player: str, stream: str, after: str
    ) -> AsyncIterator[lobby_pb2.Notification]:
        """The player's notifications after `after`, live, through the process's fan-out hub;
        the player is present while it runs."""
        watcher = self.hub.watch(keys.player_notifications(player), after)
        presence = asyncio.create_task(self._keep_present(player, stream))
        try:
            while True:
                try:
                    entries = await watcher.next()
                except TooSlow:
                    raise ApiError(
                        "TOO_SLOW", "this stream was read too slowly and was ended; watch again"
                    ) from None
                for entry_id, fields in entries:
                    yield Notifications.message(entry_id, fields)
        finally:
            watcher.close()
            presence.cancel()
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await presence
            with contextlib.suppress(Exception):
                await self.notifications.absent(player, stream)

    async def _keep_present(self, player: str, stream: str) -> None:
        while True:
            await asyncio.sleep(PRESENCE_REFRESH_SECONDS)
            try:
                await self.notifications.present(player, stream)
            except Exception as error:
                if not redis_failed(error):
                    raise
                log.warning("presence not refreshed", extra={"error": str(error)})


def _accept_from(who: str) -> lobby_pb2.AcceptFrom.ValueType:
    return lobby_pb2.ACCEPT_FROM_NOBODY if who == "nobody" else lobby_pb2.ACCEPT_FROM_EVERYONE


class GameStarts(GroupConsumer):
    """Tells the followers of the people at each game that starts (keys.GAMES_STARTED)."""

    def __init__(self, following: Following, *, redis: Redis, consumer: str) -> None:
        super().__init__(
            redis=redis, stream=keys.GAMES_STARTED, group=keys.NOTIFIER_GROUP, consumer=consumer
        )
        self.following = following

    def passing(self, error: BaseException) -> bool:
        return super().passing(error) or database_failed(error)

    async def handle(self, entry_id: Any, fields: dict[bytes, bytes]) -> None:
        game, game_id = fields[b"game"].decode(), fields[b"game_id"].decode()
        people = [str(p) for p in json.loads(fields[b"players"])]
        names = dict(zip(people, json.loads(fields.get(b"names", b"[]")) or people, strict=False))
        follows = await self.following.followers_of(people)
        by_followed: dict[str, list[str]] = {}
        for follower, followed in follows:
            if follower not in people:  # at the table already: nothing to tell them
                by_followed.setdefault(followed, []).append(follower)
        for followed, followers in by_followed.items():
            name = names.get(followed, followed)
            await self.following.notifications.send(
                followers, "game_started", player_id=followed, name=name, game=game,
                game_id=game_id, message=f"{name} is playing {game}: watch game {game_id}",
            )  # fmt: skip
