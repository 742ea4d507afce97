"""The whole platform on one machine, supervised as one foreground process (`make run`).

Starts a redis-server (unless REDIS_URL is set) and a PostgreSQL server (unless DATABASE_URL is
set; its schema migrated), every game service, the lobby, the accounts service, the gateway, a
matchmaker and a bot worker (runtime/launch.py); restarts a process that dies; on Ctrl-C (or
SIGTERM) stops them all, gracefully. What outlives a run stays in the state directory
(TABLETOP_STATE_DIR, default ~/.local/state/tabletop): Redis's data (games go on after a
restart), PostgreSQL's (accounts), the keys made on the first run (so players' tokens stay
valid; and the local servers' passwords: they are not open to whoever else can reach 127.0.0.1)
and, while it runs, the gateway's address (`gateway`), which the `tabletop` client calls when
given no address.

Environment: REDIS_URL and REDIS_PASSWORD (use this Redis instead of starting one),
REDIS_PORT (the port of the Redis it starts; default: a free one, another each run),
DATABASE_URL (use this PostgreSQL instead of starting one),
GATEWAY_PORT (default 50050), WEB_PORT (the gateway's web port: the web client and the API for
browsers, default 8080), WEB_ROOT (the web client's files, default web/dist), SERVICE_BASE_PORT
(default 50051: game services take consecutive ports, then the lobby, the accounts service, then
the matchmaker's and the bot worker's health ports), TOKEN_SECRET
and BOT_KEY (default: keys made on the first run, kept in the state directory),
TABLETOP_STATE_DIR, STARTUP_SECONDS (how long it waits for everything to report SERVING before
it says so and carries on, default 120).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import sys
import time
from pathlib import Path

import games
from runtime import db
from runtime.config import announced_gateway, env_float, env_int, state_dir
from runtime.launch import Launch
from runtime.localpg import LocalPostgres
from runtime.localredis import LocalRedis


def local_keys(path: Path) -> dict[str, str]:
    """The token signing key, bot key and local Redis's password of the local platform: made on
    the first run and kept (readable by the owner only), so that tokens issued before a restart
    stay valid."""
    sizes = {"TOKEN_SECRET": 32, "BOT_KEY": 24, "REDIS_PASSWORD": 24, "POSTGRES_PASSWORD": 24}
    try:
        saved: dict[str, str] = json.loads(path.read_text())
    except (OSError, ValueError):
        saved = {}
    if all(saved.get(name) for name in sizes):
        return saved
    made = {name: saved.get(name) or secrets.token_urlsafe(size) for name, size in sizes.items()}
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as file:
        json.dump(made, file)
    return made


def main() -> int:
    stopping = False

    def request_stop(signum: int, _frame: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, request_stop)
    signal.signal(signal.SIGTERM, request_stop)

    state = state_dir()
    keys = local_keys(state / "keys.json")
    redis: LocalRedis | None = None
    redis_url = os.environ.get("REDIS_URL", "")
    redis_password = os.environ.get("REDIS_PASSWORD", "")
    if not redis_url:
        redis_password = keys["REDIS_PASSWORD"]
        redis = LocalRedis(
            appendonly=True,
            port=env_int("REDIS_PORT", 0) or None,
            data_dir=state / "redis",
            password=redis_password,
        )
        redis_url = redis.url
        print(f"redis-server started on {redis_url} (data in {redis.dir})", flush=True)
    postgres: LocalPostgres | None = None
    database_url = os.environ.get("DATABASE_URL", "")
    if not database_url:
        postgres = LocalPostgres(data_dir=state / "postgres", password=keys["POSTGRES_PASSWORD"])
        database_url = postgres.url
        print(f"postgres started on port {postgres.port} (data in {postgres.dir})", flush=True)
    applied = db.migrate(database_url)
    if applied:
        print(f"database migrated: {', '.join(applied)}", flush=True)
    gateway_port = env_int("GATEWAY_PORT", 50050)
    web_root = Path(__file__).resolve().parent.parent / "web" / "dist"
    launch = Launch(
        redis_url=redis_url,
        env={
            "TOKEN_SECRET": os.environ.get("TOKEN_SECRET") or keys["TOKEN_SECRET"],
            "BOT_KEY": os.environ.get("BOT_KEY") or keys["BOT_KEY"],
            "REDIS_PASSWORD": redis_password,
            "DATABASE_URL": database_url,
            "GRACE_SECONDS": os.environ.get("GRACE_SECONDS", "5"),
            "WEB_ROOT": os.environ.get("WEB_ROOT") or str(web_root),
        },
        gateways=[gateway_port],
        web=[env_int("WEB_PORT", 8080)],
        base_port=env_int("SERVICE_BASE_PORT", 50051),
    )
    launch.start()
    target = launch.gateway_targets[0]
    startup = env_float("STARTUP_SECONDS", 120.0)
    if launch.ready(timeout=startup):
        announced_gateway().write_text(target + "\n")
        print(
            f"tabletop is up: play in a browser at {launch.web_urls[0]}, or connect to the "
            f"gateway at {target} (games: {', '.join(games.names())}; the `tabletop` command "
            "finds it by itself). Ctrl-C stops everything.",
            flush=True,
        )
    else:
        print(
            f"the gateway did not report SERVING within {startup:.0f}s (STARTUP_SECONDS); "
            "see the logs above",
            flush=True,
        )
    try:
        while not stopping:
            for process in launch.processes:
                assert process.popen is not None
                code = process.popen.poll()
                if code is not None and not stopping:
                    now = time.monotonic()
                    process.restarts = [t for t in process.restarts if now - t < 60] + [now]
                    if len(process.restarts) > 5:
                        print(f"{process.kind} keeps exiting (code {code}); stopping", flush=True)
                        stopping = True
                        break
                    print(f"{process.kind} exited with code {code}; restarting", flush=True)
                    process.start()
            time.sleep(0.2)
    finally:
        with contextlib.suppress(OSError):
            if announced_gateway().read_text().strip() == target:
                announced_gateway().unlink()
        launch.stop()
        if redis is not None:
            redis.stop()  # its data stays in the state directory
        if postgres is not None:
            postgres.stop()  # so does this one's
        print("tabletop stopped", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
