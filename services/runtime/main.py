"""Running one game service as a process: `python -m services.<game>`."""

from __future__ import annotations

import logging

from redis.asyncio import Redis

from services.runtime.config import ServiceSettings
from services.runtime.server import Server, configure_logging, run
from services.runtime.servicer import Adapter, GameServicer
from services.runtime.store import GameStore

log = logging.getLogger("tabletop")


def connect_redis(url: str) -> Redis:
    return Redis.from_url(url, health_check_interval=10, socket_connect_timeout=5)


async def start_game_service(
    adapter: Adapter, add_to_server: object, settings: ServiceSettings
) -> tuple[Server, Redis]:
    """Start a game service on settings.listen; returns the server (its .port) and its Redis."""
    redis = connect_redis(settings.redis_url)
    store = GameStore(redis, ttl_seconds=settings.game_ttl_seconds)

    async def ready() -> bool:
        return bool(await redis.ping())

    server = Server(
        settings.listen, [adapter.service_name], ready=ready, grace_seconds=settings.grace_seconds
    )
    add_to_server(GameServicer(adapter, store), server.server)  # type: ignore[operator]
    await server.start()
    return server, redis


def run_game_service(adapter: Adapter, add_to_server: object, default_port: int) -> None:
    configure_logging(adapter.game)
    settings = ServiceSettings.from_env(default_port)

    async def main() -> None:
        server, redis = await start_game_service(adapter, add_to_server, settings)
        log.info("%s service listening on port %d", adapter.game, server.port)
        await server.serve_until_signal()
        await redis.aclose()

    run(main())
