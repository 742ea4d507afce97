"""Settings the platform's processes read from their environment (docs/operations.md)."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import games
from wire.proof import MIN_KEY_BYTES

DEFAULT_GATEWAY = "127.0.0.1:50050"


def env_str(name: str, default: str) -> str:
    return os.environ.get(name, default)


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise SystemExit(f"{name} must be an integer, got {raw!r}") from None


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name, "").strip().lower()
    if raw == "":
        return default
    if raw in ("1", "true", "yes", "on"):
        return True
    if raw in ("0", "false", "no", "off"):
        return False
    raise SystemExit(f"{name} must be true or false, got {raw!r}")


def env_float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return float(raw)
    except ValueError:
        raise SystemExit(f"{name} must be a number, got {raw!r}") from None


def cpu_limit(cgroup: Path = Path("/sys/fs/cgroup")) -> int:
    """The CPUs this process may use: the CPUs it may run on, lowered to its container's CPU
    limit (cgroup v2 `cpu.max`, or v1 `cpu.cfs_quota_us` / `cpu.cfs_period_us`) rounded up;
    at least 1. A container on a 32-core node limited to 2 CPUs gets 2, not 32."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    quota, period = -1.0, 0.0
    try:
        fields = (cgroup / "cpu.max").read_text().split()
        if fields and fields[0] != "max":
            quota, period = float(fields[0]), float(fields[1])
    except (OSError, ValueError, IndexError):
        try:
            quota = float((cgroup / "cpu" / "cpu.cfs_quota_us").read_text())
            period = float((cgroup / "cpu" / "cpu.cfs_period_us").read_text())
        except (OSError, ValueError):
            pass
    limit = cpus or 1
    if quota > 0 and period > 0:
        limit = min(limit, math.ceil(quota / period))
    return max(1, limit)


def internal_key_from_env() -> str:
    """INTERNAL_KEY: the key the gateway, the lobby and the matchmakers prove their calls to
    the services with (wire.proof); required by every process that makes or takes such calls."""
    key = os.environ.get("INTERNAL_KEY", "")
    if len(key.encode()) < MIN_KEY_BYTES:
        raise SystemExit(
            f"INTERNAL_KEY is not set (or shorter than {MIN_KEY_BYTES} bytes): the services "
            "take calls only from the gateway and the platform's processes, which prove them "
            "with this shared key (docs/operations.md)"
        )
    return key


def game_backends(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Where each game's service is: `<GAME>_ADDR` (e.g. ESOLOE_ADDR=esoloe:50051, or several
    replicas as "ipv4:10.0.0.1:50051,10.0.0.2:50051"), for every registered game that has one."""
    environ = os.environ if environ is None else environ
    return {
        game: environ[f"{game.upper()}_ADDR"]
        for game in games.names()
        if environ.get(f"{game.upper()}_ADDR")
    }


@dataclass(frozen=True, kw_only=True)
class ServiceSettings:
    redis_url: str = "redis://127.0.0.1:6379/0"
    listen: str = "0.0.0.0:50051"
    grace_seconds: float = 10.0
    game_ttl_seconds: int = 7 * 24 * 3600
    metrics_port: int = 0
    watch_queue: int = 256
    """Entries a watcher may fall behind by before its stream is ended (TOO_SLOW)."""
    poll_seconds: float = 10.0
    """How often every watched stream is read even without a notification."""
    stall_seconds: float = 30.0
    """A watcher that takes nothing this long while entries wait for it is cut (TOO_SLOW)."""
    sweep_seconds: float = 1.0
    """How often the service looks for games whose deadline has passed (timeouts, aborts)."""
    repair_seconds: float = 60.0
    """How often one replica reads every live game of its kind to index deadlines a failure
    (a stop between a commit and its index write) left out."""
    internal_key: str
    """Calls must carry the gateway's (or the platform's) proof made with this key."""
    accept_unbound_proofs: bool = False
    """Also take the proofs of older gateways, lobbies and matchmakers, which do not cover the
    request (ACCEPT_UNBOUND_PROOFS: during an upgrade only; wire/proof.py)."""
    wait_replicas: int = 0
    """A move is answered once this many Redis replicas hold it (0: once the primary does)."""
    wait_timeout_ms: int = 1000
    """How long a move waits for those replicas before it is answered UNAVAILABLE."""

    @staticmethod
    def from_env(default_port: int) -> ServiceSettings:
        wait_replicas = env_int("REDIS_WAIT_REPLICAS", 0)
        if wait_replicas and env_bool("REDIS_CLUSTER", False):
            raise SystemExit(
                "REDIS_WAIT_REPLICAS works with one primary (and its replicas, under Sentinel), "
                "not with REDIS_CLUSTER"
            )
        return ServiceSettings(
            redis_url=env_str("REDIS_URL", "redis://127.0.0.1:6379/0"),
            listen=env_str("LISTEN", f"0.0.0.0:{default_port}"),
            grace_seconds=env_float("GRACE_SECONDS", 10.0),
            game_ttl_seconds=env_int("GAME_TTL_SECONDS", 7 * 24 * 3600),
            metrics_port=env_int("METRICS_PORT", 0),
            watch_queue=env_int("WATCH_QUEUE", 256),
            poll_seconds=env_float("WATCH_POLL_SECONDS", 10.0),
            stall_seconds=env_float("WATCH_STALL_SECONDS", 30.0),
            sweep_seconds=env_float("TIMEOUT_SWEEP_SECONDS", 1.0),
            repair_seconds=env_float("DEADLINE_REPAIR_SECONDS", 60.0),
            internal_key=internal_key_from_env(),
            accept_unbound_proofs=env_bool("ACCEPT_UNBOUND_PROOFS", False),
            wait_replicas=wait_replicas,
            wait_timeout_ms=env_int("REDIS_WAIT_TIMEOUT_MS", 1000),
        )


def state_dir() -> Path:
    """Where the local platform (`make run`) and the `tabletop` client keep what outlives a run:
    TABLETOP_STATE_DIR, else $XDG_STATE_HOME/tabletop, else ~/.local/state/tabletop."""
    given = os.environ.get("TABLETOP_STATE_DIR")
    if given:
        return Path(given)
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "tabletop"


def announced_gateway() -> Path:
    """The file in which a running local platform announces its gateway's address."""
    return state_dir() / "gateway"


def gateway_address(given: str | None = None) -> str:
    """The gateway to call: `given` (a command-line flag), else TABLETOP_GATEWAY, else the
    address a running local platform announced, else DEFAULT_GATEWAY."""
    if given:
        return given
    if os.environ.get("TABLETOP_GATEWAY"):
        return os.environ["TABLETOP_GATEWAY"]
    try:
        announced = announced_gateway().read_text().strip()
    except OSError:
        announced = ""
    return announced or DEFAULT_GATEWAY
