"""Running a game service: `python -m services.game GAME` (GAME: any registered game)."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from redis.asyncio import Redis

import games
from runtime.config import ServiceSettings
from runtime.fanout import StreamHub
from runtime.observability import ACTIVE_GAMES, configure_logging, serve_metrics
from runtime.redis import connect_redis
from runtime.relay import RelayServicer
from runtime.server import Server, run
from services.game.core import GameCore
from services.game.deadlines import DeadlineSweep
from services.game.limits import Limits
from services.game.servicer import GameServicer
from services.game.store import GameStore
from wire.api import api

log = logging.getLogger("tabletop")


@dataclass(frozen=True)
class GameService:
    """A running game service: its server (`.port`), Redis client, relay servicer and fan-out."""

    server: Server
    redis: Redis
    relay: RelayServicer
    hub: StreamHub
    sweep: DeadlineSweep
    store: GameStore

    async def close(self) -> None:
        """After the server stopped: the relayed calls still being served, the deadline sweep,
        the hub, the batches of writes on their way and the Redis client."""
        await self.relay.close()
        await self.sweep.stop()
        await self.hub.stop()
        await self.store.close()
        await self.redis.aclose()


async def start_game_service(
    game: str, settings: ServiceSettings, limits: Limits | None = None
) -> GameService:
    """Start the service of `game` on settings.listen (per-player `limits`: the defaults, or
    the environment's when run as a process)."""
    game_api = api(game)
    redis = connect_redis(settings.redis_url, name=f"game-{game}")
    store = GameStore(
        redis,
        ttl_seconds=settings.game_ttl_seconds,
        wait_replicas=settings.wait_replicas,
        wait_timeout_ms=settings.wait_timeout_ms,
    )

    async def ready() -> bool:
        ACTIVE_GAMES.labels(game).set(await store.active_games(game))
        return True

    server = Server(
        settings.listen,
        [game_api.full_name],
        ready=ready,
        grace_seconds=settings.grace_seconds,
        internal_key=settings.internal_key,
        accept_unbound_proofs=settings.accept_unbound_proofs,
    )
    hub = StreamHub(
        redis,
        poll_seconds=settings.poll_seconds,
        max_pending=settings.watch_queue,
        stall_seconds=settings.stall_seconds,
    )
    await hub.start()
    core = GameCore(games.get(game).adapter, store, hub, limits)
    servicer = GameServicer(core)
    game_api.add_servicer(servicer, server.server)
    relay = RelayServicer(
        game_api.descriptor,
        servicer.handlers(),
        settings.internal_key,
        settings.accept_unbound_proofs,
    )
    relay.add_to(server.server)
    server.on_stop.append(relay.drain)
    await server.start()
    sweep = DeadlineSweep(
        core, sweep_seconds=settings.sweep_seconds, repair_seconds=settings.repair_seconds
    )
    sweep.start()
    return GameService(server, redis, relay, hub, sweep, store)


def run_game_service(game: str) -> None:
    configure_logging(game)
    settings = ServiceSettings.from_env(games.get(game).port)

    async def main() -> None:
        service = await start_game_service(game, settings, Limits.from_env())
        serve_metrics(settings.metrics_port)
        log.info(
            "listening", extra={"port": service.server.port, "metrics_port": settings.metrics_port}
        )
        await service.server.serve_until_signal()
        await service.close()

    run(main())
