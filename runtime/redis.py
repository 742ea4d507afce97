"""The Redis connection every process uses, and how its failures are told apart."""

from __future__ import annotations

import functools
import os
import traceback
from collections.abc import Awaitable, Callable
from typing import Any, ParamSpec, TypeVar, cast

from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.connection import parse_url
from redis.asyncio.sentinel import Sentinel, SentinelConnectionPool
from redis.exceptions import ClusterError, RedisClusterException, RedisError, TryAgainError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from runtime.config import env_bool, env_int, env_str
from wire.errors import ApiError

T = TypeVar("T")
P = ParamSpec("P")

REDIS_SOCKET_TIMEOUT = 10.0
"""Seconds a Redis reply may take; blocking reads (workers) block for less than this."""

MAX_CONNECTIONS = 16
"""Redis connections a process keeps open at most, by default (REDIS_MAX_CONNECTIONS)."""

POOL_WAIT_SECONDS = 5.0
"""How long a command waits for a free connection before it fails (UNAVAILABLE)."""


def redis_credentials() -> dict[str, str]:
    """REDIS_PASSWORD (and REDIS_USERNAME, for an ACL user) from the environment, kept out of
    REDIS_URL so that the URL can sit in a ConfigMap and the password in a Secret."""
    credentials = {}
    if os.environ.get("REDIS_PASSWORD"):
        credentials["password"] = os.environ["REDIS_PASSWORD"]
        if os.environ.get("REDIS_USERNAME"):
            credentials["username"] = os.environ["REDIS_USERNAME"]
    return credentials


class _BlockingSentinelPool(SentinelConnectionPool, BlockingConnectionPool):
    """Connections to whichever node the Sentinels name primary, bounded as everywhere else:
    a command that finds them all busy waits for one."""


class _SentinelMaster(Redis):
    """The client of the primary the Sentinels name; closing it closes the clients it asks the
    Sentinels with too."""

    async def aclose(self, close_connection_pool: bool | None = None) -> None:
        manager = self.connection_pool.sentinel_manager  # type: ignore[attr-defined]
        await super().aclose(close_connection_pool)
        for sentinel in manager.sentinels:
            await sentinel.aclose()


def sentinels_from_env() -> list[tuple[str, int]]:
    """REDIS_SENTINELS: "host:port,host:port" of the Sentinels watching the primary ([] when
    unset: REDIS_URL names the Redis to use)."""
    found = []
    for item in env_str("REDIS_SENTINELS", "").split(","):
        host, _, port = item.strip().rpartition(":")
        if item.strip():
            if not host or not port.isdigit():
                raise SystemExit(f"REDIS_SENTINELS: {item.strip()!r} is not host:port")
            found.append((host, int(port)))
    return found


def connect_redis(
    url: str,
    cluster: bool | None = None,
    max_connections: int | None = None,
    name: str | None = None,
) -> Redis:
    """A client of the Redis at `url`; of the Redis Cluster that `url` is a node of when
    `cluster` is true (None: when the environment says REDIS_CLUSTER=true).

    Its connections are bounded: at most `max_connections` (default REDIS_MAX_CONNECTIONS, 16)
    open at once (per node of a cluster); a command that finds them all busy waits for one
    (up to POOL_WAIT_SECONDS). No caller holds one for long: watchers wait on the process's
    fan-out hub (runtime/fanout.py), not on a blocking read.

    Every script and multi-key command the platform sends touches one hash slot (see
    runtime/keys.py), so the code above this client is the same for both. The cluster client
    offers the same commands with the same signatures; it is typed as Redis here so the rest of
    the code names one type. `name` names its connections (CLIENT LIST shows it). It
    authenticates with REDIS_PASSWORD (and REDIS_USERNAME) when they are set.

    With REDIS_SENTINELS set, the client asks those Sentinels which node is the primary of
    REDIS_SENTINEL_MASTER (default "tabletop") and follows a failover by itself: connections
    to a node that is no longer primary are dropped (the commands on them fail as
    unreachable, and are retried) and new ones go to the new primary. REDIS_URL then gives
    only the database number."""
    if cluster is None:
        cluster = env_bool("REDIS_CLUSTER", False)
    if max_connections is None:
        max_connections = env_int("REDIS_MAX_CONNECTIONS", MAX_CONNECTIONS)
    credentials = redis_credentials()
    if cluster:
        client: Any = RedisCluster.from_url(
            url,
            **credentials,
            socket_connect_timeout=5,
            socket_timeout=REDIS_SOCKET_TIMEOUT,
            max_connections=max_connections,
            client_name=name,
        )
        return cast(Redis, client)
    sentinels = sentinels_from_env()
    if sentinels:
        options = parse_url(url)
        manager = Sentinel(  # type: ignore[no-untyped-call]
            sentinels,
            sentinel_kwargs={**credentials, "socket_connect_timeout": 2, "socket_timeout": 2},
            **credentials,
        )
        master: Redis = manager.master_for(
            env_str("REDIS_SENTINEL_MASTER", "tabletop"),
            redis_class=_SentinelMaster,
            connection_pool_class=_BlockingSentinelPool,
            db=options.get("db", 0),
            max_connections=max_connections,
            timeout=POOL_WAIT_SECONDS,
            health_check_interval=10,
            socket_connect_timeout=5,
            socket_timeout=REDIS_SOCKET_TIMEOUT,
            client_name=name,
        )
        return master
    pool = BlockingConnectionPool.from_url(
        url,
        **credentials,
        max_connections=max_connections,
        timeout=POOL_WAIT_SECONDS,
        health_check_interval=10,
        socket_connect_timeout=5,
        socket_timeout=REDIS_SOCKET_TIMEOUT,
        client_name=name,
    )
    return Redis.from_pool(pool)


UNREACHABLE: tuple[type[Exception], ...] = (
    RedisConnectionError,  # down, restarting, loading its data
    RedisTimeoutError,
    OSError,
    ClusterError,  # CLUSTERDOWN, MASTERDOWN: a cluster node is failing over or restarting
    TryAgainError,  # TRYAGAIN: keys in a slot that is being moved
    RedisClusterException,  # no reachable node covers the slot yet
)


def store_unreachable(error: BaseException) -> bool:
    """Whether `error` means Redis cannot be reached right now (retry shortly), as opposed to a
    mistake in a command. redis-py's cluster client (8.1, under uvloop) can also fail from
    inside a connection that closed under it, with a RuntimeError or AttributeError raised in
    its own code: that is a node going away too."""
    if isinstance(error, UNREACHABLE):
        return True
    if isinstance(error, (RuntimeError, AttributeError)):
        frames = traceback.extract_tb(error.__traceback__)[-4:]
        return any(f"{os.sep}redis{os.sep}" in frame.filename for frame in frames)
    return False


def redis_failed(error: BaseException) -> bool:
    """Whether `error` is any failure of a Redis call: unreachable, or a refused command."""
    return isinstance(error, RedisError) or store_unreachable(error)


def unavailable_when_unreachable(
    method: Callable[P, Awaitable[T]],
) -> Callable[P, Awaitable[T]]:
    """Redis down or unreachable: answer UNAVAILABLE (safe to retry: request ids make a retried
    move apply once). redis-py reconnects by itself on the next call."""

    @functools.wraps(method)
    async def guarded(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return await method(*args, **kwargs)
        except Exception as error:
            if not store_unreachable(error):
                raise
            raise ApiError(
                "UNAVAILABLE", f"the game store cannot be reached ({error}); retry shortly"
            ) from None

    return guarded
