"""The whole platform on one machine, supervised as one foreground process (`make run`).

Starts a redis-server (unless REDIS_URL is set), every game service, the gateway, a matchmaker
and a bot worker; restarts a process that dies; on Ctrl-C (or SIGTERM) stops them all,
gracefully. What outlives a run stays in the state directory (TABLETOP_STATE_DIR, default
~/.local/state/tabletop): Redis's data (games go on after a restart), the keys made on the first
run (so players' tokens stay valid) and, while it runs, the gateway's address (`gateway`), which
the `tabletop` client calls when given no address.

Environment: REDIS_URL (use this Redis instead of starting one), GATEWAY_PORT (default 50050),
SERVICE_BASE_PORT (default 50051: game services take consecutive ports, then the bot worker's
and the matchmaker's health ports), TOKEN_SECRET and BOT_KEY (default: keys made on the first
run, kept in the state directory), TABLETOP_STATE_DIR.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from services.runtime.apis import GAME_APIS
from services.runtime.config import announced_gateway, env_int, state_dir
from services.runtime.localredis import LocalRedis


@dataclass
class Child:
    name: str
    args: list[str]
    env: dict[str, str]
    process: subprocess.Popen[bytes] | None = None
    restarts: list[float] = field(default_factory=list)

    def start(self) -> None:
        self.process = subprocess.Popen(self.args, env=self.env)


def wait_serving(target: str, services: list[str] | None = None, timeout: float = 30.0) -> bool:
    """Wait until `target` reports SERVING overall and for each of `services`."""
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    deadline = time.monotonic() + timeout
    pending = ["", *(services or [])]
    with grpc.insecure_channel(target) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        while pending and time.monotonic() < deadline:
            try:
                reply = stub.Check(health_pb2.HealthCheckRequest(service=pending[0]), timeout=1)
                if reply.status == health_pb2.HealthCheckResponse.SERVING:
                    pending.pop(0)
                    continue
            except grpc.RpcError:
                pass
            time.sleep(0.2)
    return not pending


def local_keys(path: Path) -> dict[str, str]:
    """The token signing key and bot key of the local platform: made on the first run and kept
    (readable by the owner only), so that tokens issued before a restart stay valid."""
    try:
        saved: dict[str, str] = json.loads(path.read_text())
        if saved.get("TOKEN_SECRET") and saved.get("BOT_KEY"):
            return saved
    except (OSError, ValueError):
        pass
    made = {"TOKEN_SECRET": secrets.token_urlsafe(32), "BOT_KEY": secrets.token_urlsafe(24)}
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
    redis: LocalRedis | None = None
    redis_url = os.environ.get("REDIS_URL", "")
    if not redis_url:
        redis = LocalRedis(appendonly=True, data_dir=state / "redis")
        redis_url = redis.url
        print(f"redis-server started on {redis_url} (data in {redis.dir})", flush=True)
    keys = local_keys(state / "keys.json")
    gateway_port = env_int("GATEWAY_PORT", 50050)
    base_port = env_int("SERVICE_BASE_PORT", 50051)
    common = {
        **os.environ,
        "REDIS_URL": redis_url,
        "TOKEN_SECRET": os.environ.get("TOKEN_SECRET") or keys["TOKEN_SECRET"],
        "BOT_KEY": os.environ.get("BOT_KEY") or keys["BOT_KEY"],
        "GRACE_SECONDS": os.environ.get("GRACE_SECONDS", "5"),
    }
    children: list[Child] = []
    backends: dict[str, str] = {}
    for index, game in enumerate(GAME_APIS):
        port = base_port + index
        backends[f"{game.upper()}_ADDR"] = f"127.0.0.1:{port}"
        children.append(
            Child(
                game,
                [sys.executable, "-m", f"services.{game}"],
                {**common, "LISTEN": f"127.0.0.1:{port}"},
            )
        )
    children.append(
        Child(
            "gateway",
            [sys.executable, "-m", "gateway"],
            {**common, **backends, "LISTEN": f"0.0.0.0:{gateway_port}"},
        )
    )
    children.append(
        Child(
            "matchmaker",
            [sys.executable, "-m", "services.matchmaker"],
            {**common, **backends, "LISTEN": f"127.0.0.1:{base_port + len(GAME_APIS) + 1}"},
        )
    )
    children.append(
        Child(
            "bots",
            [sys.executable, "-m", "services.bots"],
            {
                **common,
                "GATEWAY_ADDR": f"127.0.0.1:{gateway_port}",
                "LISTEN": f"127.0.0.1:{base_port + len(GAME_APIS)}",
            },
        )
    )
    for child in children:
        child.start()
    target = f"127.0.0.1:{gateway_port}"
    if wait_serving(target, [api.full_name for api in GAME_APIS.values()], timeout=120):
        announced_gateway().write_text(target + "\n")
        print(
            f"tabletop is up: connect to the gateway at {target} "
            f"(games: {', '.join(GAME_APIS)}; the `tabletop` command finds it by itself). "
            "Ctrl-C stops everything.",
            flush=True,
        )
    else:
        print("the gateway did not report SERVING within 120s; see the logs above", flush=True)
    try:
        while not stopping:
            for child in children:
                assert child.process is not None
                code = child.process.poll()
                if code is not None and not stopping:
                    now = time.monotonic()
                    child.restarts = [t for t in child.restarts if now - t < 60] + [now]
                    if len(child.restarts) > 5:
                        print(f"{child.name} keeps exiting (code {code}); stopping", flush=True)
                        stopping = True
                        break
                    print(f"{child.name} exited with code {code}; restarting", flush=True)
                    child.start()
            time.sleep(0.2)
    finally:
        with contextlib.suppress(OSError):
            if announced_gateway().read_text().strip() == target:
                announced_gateway().unlink()
        for child in reversed(children):
            if child.process is not None and child.process.poll() is None:
                child.process.send_signal(signal.SIGTERM)
        for child in children:
            if child.process is None:
                continue
            try:
                child.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                child.process.kill()
        if redis is not None:
            redis.stop()
        print("tabletop stopped", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
