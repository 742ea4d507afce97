"""Running one game service as a process: `python -m services.<game>`."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from importlib import import_module
from typing import Any, cast

from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster

from services.runtime.apis import GAME_APIS
from services.runtime.config import ServiceSettings, env_bool
from services.runtime.observability import ACTIVE_GAMES, configure_logging, serve_metrics
from services.runtime.relay import RelayServicer
from services.runtime.server import Server, run
from services.runtime.servicer import Adapter, GameServicer
from services.runtime.store import GameStore

log = logging.getLogger("tabletop")


REDIS_SOCKET_TIMEOUT = 10.0
"""Seconds a Redis reply may take; blocking reads (Watch, workers) block for less than this."""


def connect_redis(url: str, cluster: bool | None = None) -> Redis:
    """A client of the Redis at `url`; of the Redis Cluster that `url` is a node of when
    `cluster` is true (None: when the environment says REDIS_CLUSTER=true).

    Every script and multi-key command the platform sends touches one hash slot (see
    services/runtime/keys.py), so the code above this client is the same for both. The cluster
    client offers the same commands with the same signatures; it is typed as Redis here so the
    rest of the code names one type."""
    if cluster is None:
        cluster = env_bool("REDIS_CLUSTER", False)
    if cluster:
        client: Any = RedisCluster.from_url(
            url, socket_connect_timeout=5, socket_timeout=REDIS_SOCKET_TIMEOUT
        )
        return cast(Redis, client)
    return Redis.from_url(
        url,
        health_check_interval=10,
        socket_connect_timeout=5,
        socket_timeout=REDIS_SOCKET_TIMEOUT,
    )


def adapter_of(game: str) -> Adapter:
    """The protobuf adapter of a game: `services/<game>/adapter.py`'s ADAPTER."""
    adapter: Adapter = import_module(f"services.{game}.adapter").ADAPTER
    return adapter


@dataclass(frozen=True)
class GameService:
    """A running game service: its server (`.port`), its Redis client and its relay servicer."""

    server: Server
    redis: Redis
    relay: RelayServicer


async def start_game_service(game: str, settings: ServiceSettings) -> GameService:
    """Start a game service on settings.listen."""
    api = GAME_APIS[game]
    redis = connect_redis(settings.redis_url)
    store = GameStore(redis, ttl_seconds=settings.game_ttl_seconds)

    async def ready() -> bool:
        ACTIVE_GAMES.labels(game).set(await store.active_games(game))
        return True

    server = Server(
        settings.listen, [api.full_name], ready=ready, grace_seconds=settings.grace_seconds
    )
    servicer = GameServicer(adapter_of(game), store)
    api.add_servicer(servicer, server.server)
    relay = RelayServicer(api.descriptor, servicer)
    relay.add_to(server.server)
    server.on_stop.append(relay.drain)
    await server.start()
    return GameService(server, redis, relay)


def run_game_service(game: str) -> None:
    configure_logging(game)
    settings = ServiceSettings.from_env(GAME_APIS[game].default_port)

    async def main() -> None:
        service = await start_game_service(game, settings)
        serve_metrics(settings.metrics_port)
        log.info(
            "listening", extra={"port": service.server.port, "metrics_port": settings.metrics_port}
        )
        await service.server.serve_until_signal()
        await service.redis.aclose()

    run(main())
