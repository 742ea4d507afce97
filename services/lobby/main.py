"""Running the lobby service: `python -m services.lobby`.

Environment: REDIS_URL, LISTEN (default 0.0.0.0:50055), <GAME>_ADDR for each game (where
PlayAgainstBots creates its games, as for the matchmaker), DATABASE_URL (the archive's
PostgreSQL, read by ListArchivedGames, GetArchivedGame, GetArchivedView, and the follows;
empty: no archive, no following), ACCOUNTS_ADDR (the accounts service, asked for the accounts'
usernames a challenge or a follow may name and the lobby shows; empty: no accounts),
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
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from psycopg_pool import AsyncConnectionPool
from redis.asyncio import Redis

from runtime import db
from runtime.accounts_client import AccountsClient
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
from services.lobby.tables import TableStore
from services.matchmaker.tickets import TicketStore
from tabletop.lobby.v1 import lobby_pb2, lobby_pb2_grpc
from wire.api import LOBBY_SERVICE, api
from wire.errors import ApiError, abort
from wire.metadata import Caller
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
    accounts: str = ""
    """The accounts service's gRPC target (reached with the proof made with `internal_key`);
    empty: no accounts."""
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
            accounts=env_str("ACCOUNTS_ADDR", ""),
            friends=FriendsSettings.from_env(),
            following=FollowSettings.from_env(),
        )


Handler = Callable[[Any, Caller], Awaitable[Any]]
"""An RPC's answer: the request and who calls, to the response (or, for a streaming RPC, to
the stream of responses); it refuses with an ApiError."""


def _unary(handler: Handler) -> Callable[[Any, Context], Awaitable[Any]]:
    async def call(request: Any, context: Context) -> Any:
        return await answer(handler(request, caller_of(context)), context)

    return call


def _streaming(handler: Handler) -> Callable[[Any, Context], AsyncIterator[Any]]:
    async def call(request: Any, context: Context) -> AsyncIterator[Any]:
        updates = await answer(handler(request, caller_of(context)), context)
        try:
            async for update in updates:
                yield update
        except ApiError as error:
            await abort(context, error)

    return call


def lobby_servicer(
    unary: Mapping[str, Handler], streaming: Mapping[str, Handler]
) -> lobby_pb2_grpc.LobbyServiceServicer:
    """The lobby's gRPC face: who calls from the metadata, the answer from the handler tables
    (`unary`: the relay's table too; `streaming`: the RPCs that answer with a stream), each RPC
    written once. Every RPC of the service must have a handler, of its kind."""
    service = lobby_pb2.DESCRIPTOR.services_by_name["LobbyService"]
    streams = {method.name for method in service.methods if method.server_streaming}
    if set(streaming) != streams or set(unary) != {m.name for m in service.methods} - streams:
        raise ValueError("the lobby's handlers do not match LobbyService's RPCs")
    methods: dict[str, Any] = {name: staticmethod(_unary(h)) for name, h in unary.items()}
    methods |= {name: staticmethod(_streaming(h)) for name, h in streaming.items()}
    servicer: lobby_pb2_grpc.LobbyServiceServicer = type(
        "LobbyServicer", (lobby_pb2_grpc.LobbyServiceServicer,), methods
    )()
    return servicer


def streaming_handlers(lobby: Lobby, friends: Friends, following: Following) -> dict[str, Handler]:
    """The RPCs that answer with a stream."""
    return {
        "ExportArchive": lobby.archive.export_archive,
        "WatchTicket": lobby.watch_ticket,
        "WatchChallenges": friends.watch_challenges,
        "WatchNotifications": following.watch_notifications,
    }


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
    accounts: AccountsClient | None = None

    async def close(self) -> None:
        """After the server stopped: the sweeps and the consumer, the hub, the channels, the
        accounts service's channel, the database and Redis clients (the relayed calls still
        being served first)."""
        await self.relay.close()
        await stop_tasks(self.tasks)  # cancelled again if one swallows a cancellation
        await self.hub.stop()
        for replicas in self.channels.values():
            await replicas.close()
        if self.accounts is not None:
            await self.accounts.close()
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
    hub = StreamHub(redis)
    await hub.start()
    database = None
    if settings.database_url:
        database = db.pool(settings.database_url)
        await database.open(wait=False)
    accounts = None
    if settings.accounts:
        accounts = AccountsClient(settings.accounts, settings.internal_key)
    lobby = Lobby(
        TicketStore(redis), PlayerStore(redis), channels, hub, settings.limits, database, accounts
    )

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
    follows = Following(lobby.names, notifications, hub, settings.following)
    handlers = {**lobby.handlers(), **friends.handlers(), **follows.handlers()}
    lobby_pb2_grpc.add_LobbyServiceServicer_to_server(
        lobby_servicer(handlers, streaming_handlers(lobby, friends, follows)), server.server
    )
    relay = RelayServicer(
        lobby_pb2.DESCRIPTOR.services_by_name["LobbyService"],
        handlers,
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
    return LobbyService(server, redis, relay, channels, hub, tasks, database, accounts)


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
