"""Running the lobby service: `python -m services.lobby`.

Environment: REDIS_URL, LISTEN (default 0.0.0.0:50055), <GAME>_ADDR for each game (where
PlayAgainstBots creates its games, as for the matchmaker), DATABASE_URL (the archive's
PostgreSQL, read by ListArchivedGames, GetArchivedGame, GetArchivedView, the accounts'
usernames a challenge may name, and the follows; empty: no archive, no following),
METRICS_PORT, GRACE_SECONDS; playing with friends: CHALLENGE_SECONDS, INVITE_SECONDS,
OPEN_TABLE_SECONDS (how long each waits), MAX_OPEN_CHALLENGES, MAX_INVITES, MAX_OPEN_TABLES,
GUEST_MAX_INVITES, GUEST_MAX_OPEN_TABLES, MAX_CHALLENGES_TO_PLAYER,
MAX_CHALLENGES_FROM_STRANGERS (services/lobby/friends.py); following: MAX_FOLLOWS,
MAX_NOTIFICATION_STREAMS (services/lobby/following.py).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from psycopg_pool import AsyncConnectionPool
from redis.asyncio import Redis

from runtime import db, keys
from runtime.config import (
    env_bool,
    env_float,
    env_int,
    env_str,
    game_backends,
    internal_key_from_env,
)
from runtime.fanout import StreamHub
from runtime.observability import configure_logging, serve_metrics
from runtime.redis import connect_redis
from runtime.relay import RelayServicer
from runtime.replicas import Replicas, following
from runtime.server import Context, Server, answer, caller_of, run
from runtime.tasks import stop_tasks
from services.game.limits import Limits
from services.game.players import PlayerStore
from services.lobby.following import Following, FollowSettings, GameStarts, Notifications
from services.lobby.friends import Friends, FriendsSettings
from services.lobby.servicer import Lobby
from services.lobby.store import LobbyStore
from services.lobby.tables import TableStore
from tabletop.lobby.v1 import lobby_pb2, lobby_pb2_grpc
from wire.api import LOBBY_SERVICE, api
from wire.errors import ApiError, abort
from wire.proof import platform_channel

log = logging.getLogger("tabletop.lobby")

DEFAULT_PORT = 50055


@dataclass(frozen=True, kw_only=True)
class LobbySettings:
    redis_url: str = "redis://127.0.0.1:6379/0"
    listen: str = f"0.0.0.0:{DEFAULT_PORT}"
    backends: Mapping[str, str] = field(default_factory=dict)
    """game id -> gRPC target of its service (see runtime.config.game_backends)."""
    grace_seconds: float = 10.0
    metrics_port: int = 0
    limits: Limits = field(default_factory=Limits)
    internal_key: str
    """Calls must carry the gateway's proof made with this key; the lobby's own calls to the
    game services carry one."""
    accept_unbound_proofs: bool = False
    """Also take the proofs of older gateways, lobbies and matchmakers, which do not cover the
    request (ACCEPT_UNBOUND_PROOFS: during an upgrade only; wire/proof.py)."""
    database_url: str = ""
    """The archive's PostgreSQL (the accounts' database); empty: no archive."""
    friends: FriendsSettings = field(default_factory=FriendsSettings)
    """Challenges, invites, open tables: how long they wait, how many a player may make."""
    following: FollowSettings = field(default_factory=FollowSettings)
    """How many players one may follow, how many notification streams one may hold."""

    @staticmethod
    def from_env() -> LobbySettings:
        return LobbySettings(
            redis_url=env_str("REDIS_URL", "redis://127.0.0.1:6379/0"),
            listen=env_str("LISTEN", f"0.0.0.0:{DEFAULT_PORT}"),
            backends=game_backends(),
            grace_seconds=env_float("GRACE_SECONDS", 10.0),
            metrics_port=env_int("METRICS_PORT", 0),
            limits=Limits.from_env(),
            internal_key=internal_key_from_env(),
            accept_unbound_proofs=env_bool("ACCEPT_UNBOUND_PROOFS", False),
            database_url=env_str("DATABASE_URL", ""),
            friends=FriendsSettings.from_env(),
            following=FollowSettings.from_env(),
        )


class LobbyServicer(lobby_pb2_grpc.LobbyServiceServicer):
    """The lobby's gRPC face: who calls from the metadata, the answer from `Lobby`."""

    def __init__(self, lobby: Lobby, friends: Friends, following: Following) -> None:
        self.lobby = lobby
        self.friends = friends
        self.following = following

    async def FindMatch(self, request: Any, context: Context) -> lobby_pb2.Ticket:
        return await answer(self.lobby.find_match(request, caller_of(context)), context)

    async def CancelTicket(self, request: Any, context: Context) -> lobby_pb2.Ticket:
        return await answer(self.lobby.cancel_ticket(request, caller_of(context)), context)

    async def PlayAgainstBots(
        self, request: Any, context: Context
    ) -> lobby_pb2.PlayAgainstBotsResponse:
        return await answer(self.lobby.play_against_bots(request, caller_of(context)), context)

    async def ListGames(self, request: Any, context: Context) -> lobby_pb2.ListGamesResponse:
        return await answer(self.lobby.list_games(request, caller_of(context)), context)

    async def GetRating(self, request: Any, context: Context) -> lobby_pb2.RatingInfo:
        return await answer(self.lobby.get_rating(request, caller_of(context)), context)

    async def ListLeaderboard(
        self, request: Any, context: Context
    ) -> lobby_pb2.ListLeaderboardResponse:
        return await answer(self.lobby.list_leaderboard(request, caller_of(context)), context)

    async def GetRatingChange(
        self, request: Any, context: Context
    ) -> lobby_pb2.GetRatingChangeResponse:
        return await answer(self.lobby.get_rating_change(request, caller_of(context)), context)

    async def GetScores(self, request: Any, context: Context) -> lobby_pb2.ScoreInfo:
        return await answer(self.lobby.get_scores(request, caller_of(context)), context)

    async def ListScoreTable(
        self, request: Any, context: Context
    ) -> lobby_pb2.ListScoreTableResponse:
        return await answer(self.lobby.list_score_table(request, caller_of(context)), context)

    async def ListLiveGames(
        self, request: Any, context: Context
    ) -> lobby_pb2.ListLiveGamesResponse:
        return await answer(self.lobby.list_live_games(request, caller_of(context)), context)

    async def ListArchivedGames(
        self, request: Any, context: Context
    ) -> lobby_pb2.ListArchivedGamesResponse:
        return await answer(
            self.lobby.archive.list_archived_games(request, caller_of(context)), context
        )

    async def GetArchivedGame(self, request: Any, context: Context) -> lobby_pb2.ArchivedGame:
        return await answer(
            self.lobby.archive.get_archived_game(request, caller_of(context)), context
        )

    async def GetArchivedView(self, request: Any, context: Context) -> lobby_pb2.ArchivedView:
        return await answer(
            self.lobby.archive.get_archived_view(request, caller_of(context)), context
        )

    async def ExportArchive(
        self, request: Any, context: Context
    ) -> AsyncIterator[lobby_pb2.ExportChunk]:
        pieces = await answer(
            self.lobby.archive.export_archive(request, caller_of(context)), context
        )
        try:
            async for piece in pieces:
                yield piece
        except ApiError as error:
            await abort(context, error)

    async def WatchTicket(self, request: Any, context: Context) -> AsyncIterator[lobby_pb2.Ticket]:
        updates = await answer(self.lobby.watch_ticket(request, caller_of(context)), context)
        try:
            async for update in updates:
                yield update
        except ApiError as error:
            await abort(context, error)

    async def ChallengePlayer(self, request: Any, context: Context) -> lobby_pb2.Challenge:
        return await answer(self.friends.challenge_player(request, caller_of(context)), context)

    async def AnswerChallenge(self, request: Any, context: Context) -> lobby_pb2.Challenge:
        return await answer(self.friends.answer_challenge(request, caller_of(context)), context)

    async def CancelChallenge(self, request: Any, context: Context) -> lobby_pb2.Challenge:
        return await answer(self.friends.cancel_challenge(request, caller_of(context)), context)

    async def ListChallenges(
        self, request: Any, context: Context
    ) -> lobby_pb2.ListChallengesResponse:
        return await answer(self.friends.list_challenges(request, caller_of(context)), context)

    async def SetChallengeSetting(
        self, request: Any, context: Context
    ) -> lobby_pb2.ChallengeSetting:
        return await answer(
            self.friends.set_challenge_setting(request, caller_of(context)), context
        )

    async def GetChallengeSetting(
        self, request: Any, context: Context
    ) -> lobby_pb2.ChallengeSetting:
        return await answer(
            self.friends.get_challenge_setting(request, caller_of(context)), context
        )

    async def CreateInvite(self, request: Any, context: Context) -> lobby_pb2.Challenge:
        return await answer(self.friends.create_invite(request, caller_of(context)), context)

    async def JoinInvite(self, request: Any, context: Context) -> lobby_pb2.Challenge:
        return await answer(self.friends.join_invite(request, caller_of(context)), context)

    async def OpenTable(self, request: Any, context: Context) -> lobby_pb2.Challenge:
        return await answer(self.friends.open_table(request, caller_of(context)), context)

    async def ListOpenTables(
        self, request: Any, context: Context
    ) -> lobby_pb2.ListOpenTablesResponse:
        return await answer(self.friends.list_open_tables(request, caller_of(context)), context)

    async def JoinTable(self, request: Any, context: Context) -> lobby_pb2.Challenge:
        return await answer(self.friends.join_table(request, caller_of(context)), context)

    async def OfferRematch(self, request: Any, context: Context) -> lobby_pb2.Challenge:
        return await answer(self.friends.offer_rematch(request, caller_of(context)), context)

    async def WatchChallenges(
        self, request: Any, context: Context
    ) -> AsyncIterator[lobby_pb2.Challenge]:
        updates = await answer(self.friends.watch_challenges(request, caller_of(context)), context)
        try:
            async for update in updates:
                yield update
        except ApiError as error:
            await abort(context, error)

    async def FollowPlayer(self, request: Any, context: Context) -> lobby_pb2.FollowedPlayer:
        return await answer(self.following.follow_player(request, caller_of(context)), context)

    async def UnfollowPlayer(
        self, request: Any, context: Context
    ) -> lobby_pb2.UnfollowPlayerResponse:
        return await answer(self.following.unfollow_player(request, caller_of(context)), context)

    async def ListFollowing(
        self, request: Any, context: Context
    ) -> lobby_pb2.ListFollowingResponse:
        return await answer(self.following.list_following(request, caller_of(context)), context)

    async def ListFollowers(
        self, request: Any, context: Context
    ) -> lobby_pb2.ListFollowersResponse:
        return await answer(self.following.list_followers(request, caller_of(context)), context)

    async def SetFollowSetting(self, request: Any, context: Context) -> lobby_pb2.FollowSetting:
        return await answer(self.following.set_follow_setting(request, caller_of(context)), context)

    async def GetFollowSetting(self, request: Any, context: Context) -> lobby_pb2.FollowSetting:
        return await answer(self.following.get_follow_setting(request, caller_of(context)), context)

    async def WatchNotifications(
        self, request: Any, context: Context
    ) -> AsyncIterator[lobby_pb2.Notification]:
        updates = await answer(
            self.following.watch_notifications(request, caller_of(context)), context
        )
        try:
            async for update in updates:
                yield update
        except ApiError as error:
            await abort(context, error)


@dataclass(frozen=True)
class LobbyService:
    server: Server
    redis: Redis
    relay: RelayServicer
    channels: Mapping[str, Replicas]
    hub: StreamHub
    tasks: list[asyncio.Task[None]]
    """Expire the tables of friends that are due; tell followers of the games that start."""
    database: AsyncConnectionPool | None = None

    async def close(self) -> None:
        """After the server stopped: the sweeps and the consumer, the hub, the channels, the
        database and Redis clients."""
        await stop_tasks(self.tasks)  # cancelled again if one swallows a cancellation
        await self.hub.stop()
        for replicas in self.channels.values():
            await replicas.close()
        if self.database is not None:
            await self.database.close()
        await self.redis.aclose()


async def start_lobby_service(settings: LobbySettings) -> LobbyService:
    redis = connect_redis(settings.redis_url, name="lobby")
    # Games are created on each service's replicas as they come and go (runtime/replicas.py).
    channels = following(
        settings.backends,
        lambda game, target: platform_channel(target, api(game).full_name, settings.internal_key),
    )
    for replicas in channels.values():
        replicas.start()
    hub = StreamHub(
        redis,
        [
            keys.changed_channel(family)
            for family in (keys.TICKETS_FAMILY, keys.TABLES_FAMILY, keys.NOTIFICATIONS_FAMILY)
        ],
    )
    await hub.start()
    database = None
    if settings.database_url:
        database = db.pool(settings.database_url)
        await database.open(wait=False)
    lobby = Lobby(LobbyStore(redis), PlayerStore(redis), channels, hub, settings.limits, database)

    async def ready() -> bool:
        return bool(await redis.ping())

    server = Server(
        settings.listen,
        [LOBBY_SERVICE],
        ready=ready,
        grace_seconds=settings.grace_seconds,
        internal_key=settings.internal_key,
        accept_unbound_proofs=settings.accept_unbound_proofs,
    )
    notifications = Notifications(redis)
    friends = Friends(
        lobby, TableStore(redis, settings.friends.keep_seconds), hub, settings.friends,
        notifications,
    )  # fmt: skip
    follows = Following(friends, notifications, hub, settings.following)
    lobby_pb2_grpc.add_LobbyServiceServicer_to_server(
        LobbyServicer(lobby, friends, follows), server.server
    )
    relay = RelayServicer(
        lobby_pb2.DESCRIPTOR.services_by_name["LobbyService"],
        {**lobby.handlers(), **friends.handlers(), **follows.handlers()},
        settings.internal_key,
        settings.accept_unbound_proofs,
    )
    relay.add_to(server.server)
    server.on_stop.append(relay.drain)
    await server.start()
    stop = asyncio.Event()
    tasks = [asyncio.create_task(friends.run_sweeps())]
    if database is not None:  # followers are told of the games that start
        starts = GameStarts(follows, redis=redis, consumer=f"lobby-{secrets.token_hex(6)}")
        tasks.append(asyncio.create_task(starts.run(stop)))
    return LobbyService(server, redis, relay, channels, hub, tasks, database)


def run_lobby_service() -> None:
    configure_logging("lobby")
    settings = LobbySettings.from_env()

    async def main() -> None:
        service = await start_lobby_service(settings)
        serve_metrics(settings.metrics_port)
        log.info(
            "listening", extra={"port": service.server.port, "games": sorted(settings.backends)}
        )
        await service.server.serve_until_signal()
        await service.close()

    run(main())
