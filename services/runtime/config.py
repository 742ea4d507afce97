"""Settings a game service reads from its environment (documented in docs/operations.md)."""

from __future__ import annotations

import os
from dataclasses import dataclass


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


@dataclass(frozen=True, kw_only=True)
class ServiceSettings:
    redis_url: str = "redis://127.0.0.1:6379/0"
    listen: str = "0.0.0.0:50051"
    grace_seconds: float = 10.0
    game_ttl_seconds: int = 7 * 24 * 3600
    metrics_port: int = 0

    @staticmethod
    def from_env(default_port: int) -> ServiceSettings:
        return ServiceSettings(
            redis_url=env_str("REDIS_URL", "redis://127.0.0.1:6379/0"),
            listen=env_str("LISTEN", f"0.0.0.0:{default_port}"),
            grace_seconds=env_float("GRACE_SECONDS", 10.0),
            game_ttl_seconds=env_int("GAME_TTL_SECONDS", 7 * 24 * 3600),
            metrics_port=env_int("METRICS_PORT", 0),
        )
