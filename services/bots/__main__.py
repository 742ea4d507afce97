"""The bot worker process: `python -m services.bots [--budget LEVEL=SECONDS ...]`. Run as
many as the load needs.

Environment: GATEWAY_ADDR (default 127.0.0.1:50050), BOT_KEY (required), REDIS_URL, LISTEN
(its health service, default 0.0.0.0:50060), METRICS_PORT, GRACE_SECONDS, BOT_CONCURRENCY
(jobs worked on at once, waits aside, default 32), BOT_CLAIM_IDLE_SECONDS (take over a job
another worker has held this long, default 15), BOT_DELAY_SECONDS (wait before each move,
default 0),
BOT_BUDGETS (seconds a level may think about a move, e.g. "strong=0.5,greedy=0"; defaults in
engines/bots/base.py DEFAULT_BUDGETS; `--budget` items override it), BOT_PROCESSES (processes
the searching levels think in, default one per CPU the container may use: its CPU limit, not
the node's count), GATEWAY_TLS / GATEWAY_CA_FILE / GATEWAY_TLS_SERVER_NAME (a gateway that
speaks TLS: see gateway_tls_from_env), REDIS_PASSWORD / REDIS_USERNAME, BOT_STALL_SECONDS (a
live game waiting this long on a bot seat gets a new job, default 30),
BOT_MAX_JUMP_IN_WINDOW_MS (caps the jump-in window of every table: in Solo, at a table with a
person, bots wait the table's window, `jump_in_window_ms`, after each move; default 5000, no
cap; 0: bots never wait, for load tests), BOT_MAX_PACE_MS (caps the bot pace of every table:
at a table made with `bot_pace_ms`, as games of bots made for people to watch are, bots let
that long pass after each move; default 5000, no cap; 0: never, for load tests),
BOT_PER_SPONSOR (jobs of one player's games worked on at once, taken in turn with other
players'; default an eighth of BOT_CONCURRENCY).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import socket
import sys
from collections.abc import Sequence

from client.session import Tls
from games.clock import MAX_BOT_PACE_MS, MAX_JUMP_IN_WINDOW_MS
from runtime.config import env_bool, env_float, env_int, env_str
from runtime.observability import configure_logging, serve_metrics
from runtime.redis import connect_redis
from runtime.server import Server, finish, run, wait_for_signal
from services.bots.worker import BotWorker, parse_budgets

log = logging.getLogger("tabletop.bots")


def budgets_from(argv: Sequence[str]) -> dict[str, float]:
    """Per-level budgets: the defaults, then BOT_BUDGETS, then each --budget, in order."""
    parser = argparse.ArgumentParser(prog="python -m services.bots", description=__doc__)
    parser.add_argument(
        "--budget",
        action="append",
        default=[],
        metavar="LEVEL=SECONDS",
        help="seconds the level may think about a move, e.g. strong=0.5 (repeatable)",
    )
    args = parser.parse_args(argv)
    try:
        return parse_budgets([env_str("BOT_BUDGETS", ""), *args.budget])
    except ValueError as error:
        raise SystemExit(f"BOT_BUDGETS / --budget: {error}") from None


def gateway_tls_from_env() -> Tls | None:
    """GATEWAY_TLS (true: the gateway speaks TLS), GATEWAY_CA_FILE (the certificates to trust;
    default the system's roots), GATEWAY_TLS_SERVER_NAME (the name in the gateway's certificate,
    when GATEWAY_ADDR is another, e.g. the in-cluster Service name)."""
    ca_file = env_str("GATEWAY_CA_FILE", "")
    server_name = env_str("GATEWAY_TLS_SERVER_NAME", "")
    if env_bool("GATEWAY_TLS", False) or ca_file or server_name:
        return Tls(ca_file=ca_file, server_name=server_name)
    return None


async def main(budgets: dict[str, float]) -> None:
    grace = env_float("GRACE_SECONDS", 10.0)
    bot_key = os.environ.get("BOT_KEY", "")
    if not bot_key:
        raise SystemExit("BOT_KEY is not set: bot workers log in with the gateway's bot key")
    redis = connect_redis(env_str("REDIS_URL", "redis://127.0.0.1:6379/0"), name="bots")
    worker = BotWorker(
        redis=redis,
        gateway=env_str("GATEWAY_ADDR", "127.0.0.1:50050"),
        bot_key=bot_key,
        consumer=f"{socket.gethostname()}-{os.getpid()}",
        concurrency=env_int("BOT_CONCURRENCY", 32),
        claim_idle_seconds=env_float("BOT_CLAIM_IDLE_SECONDS", 15.0),
        delay_seconds=env_float("BOT_DELAY_SECONDS", 0.0),
        budgets=budgets,
        processes=env_int("BOT_PROCESSES", 0),
        stall_seconds=env_float("BOT_STALL_SECONDS", 30.0),
        max_jump_in_window_ms=env_int("BOT_MAX_JUMP_IN_WINDOW_MS", MAX_JUMP_IN_WINDOW_MS),
        max_bot_pace_ms=env_int("BOT_MAX_PACE_MS", MAX_BOT_PACE_MS),
        per_sponsor=env_int("BOT_PER_SPONSOR", 0),
        tls=gateway_tls_from_env(),
    )

    async def ready() -> bool:
        return bool(await redis.ping())

    health = Server(
        env_str("LISTEN", "0.0.0.0:50060"),
        [],
        ready=ready,
        grace_seconds=grace,
    )
    await health.start()
    serve_metrics(env_int("METRICS_PORT", 0))
    stop = asyncio.Event()
    running = asyncio.create_task(worker.run(stop))
    log.info(
        "working",
        extra={"consumer": worker.consumer, "gateway": worker.gateway, "budgets": budgets},
    )
    await wait_for_signal(grace)
    log.info("stopping: finishing the jobs in hand")
    await health.health.enter_graceful_shutdown()
    stop.set()
    await finish(running, grace)
    await worker.close()
    await health.stop()
    await redis.aclose()


if __name__ == "__main__":
    configure_logging("bots")
    run(main(budgets_from(sys.argv[1:])))
