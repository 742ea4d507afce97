"""The matchmaker process: `python -m services.matchmaker`. Several may run.

Environment: REDIS_URL, ESOLOE_ADDR / SOLO_ADDR / SOLACE_ADDR / ZOXSO_ADDR (the game services,
as for the gateway), LISTEN (its health service, default 0.0.0.0:50070), METRICS_PORT,
GRACE_SECONDS, MATCHMAKER_SCAN_SECONDS (how often every pool is looked at, default 1),
MATCHMAKER_CLAIM_IDLE_SECONDS (take over another matchmaker's entry after, default 30),
RATING_WINDOW_START / RATING_WINDOW_PER_SECOND / RATING_WINDOW_MOST (rated games: how far apart
in rating players may be, widening as they wait; default 150, 10, 1000).
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket

import games
from runtime.config import env_float, env_int, env_str, internal_key_from_env
from runtime.observability import configure_logging, serve_metrics
from runtime.redis import connect_redis
from runtime.server import Server, finish, run, wait_for_signal
from services.matchmaker.matchmaker import Matchmaker
from services.matchmaker.skill import Window

log = logging.getLogger("tabletop.matchmaker")


async def main() -> None:
    grace = env_float("GRACE_SECONDS", 10.0)
    redis = connect_redis(env_str("REDIS_URL", "redis://127.0.0.1:6379/0"), name="matchmaker")
    backends = {
        game: os.environ[f"{game.upper()}_ADDR"]
        for game in games.names()
        if os.environ.get(f"{game.upper()}_ADDR")
    }
    matchmaker = Matchmaker(
        redis=redis,
        backends=backends,
        consumer=f"{socket.gethostname()}-{os.getpid()}",
        internal_key=internal_key_from_env(),
        claim_idle_seconds=env_float("MATCHMAKER_CLAIM_IDLE_SECONDS", 30.0),
        scan_seconds=env_float("MATCHMAKER_SCAN_SECONDS", 1.0),
        window=Window(
            env_float("RATING_WINDOW_START", 150.0),
            env_float("RATING_WINDOW_PER_SECOND", 10.0),
            env_float("RATING_WINDOW_MOST", 1000.0),
        ),
    )

    async def ready() -> bool:
        return bool(await redis.ping())

    health = Server(
        env_str("LISTEN", "0.0.0.0:50070"), [], ready=ready,
        grace_seconds=grace,
    )  # fmt: skip
    await health.start()
    serve_metrics(env_int("METRICS_PORT", 0))
    stop = asyncio.Event()
    running = asyncio.create_task(matchmaker.run(stop))
    log.info("matching", extra={"consumer": matchmaker.consumer, "games": sorted(backends)})
    await wait_for_signal(grace)
    await health.health.enter_graceful_shutdown()
    stop.set()
    await finish(running, grace)
    await matchmaker.close()
    await health.stop()
    await redis.aclose()


if __name__ == "__main__":
    configure_logging("matchmaker")
    run(main())
