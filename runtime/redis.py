"""The Redis connection every process uses, and how its failures are told apart."""

from __future__ import annotations

import asyncio
import collections
import functools
import logging
import os
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, ParamSpec, TypeVar, cast

from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.connection import parse_url
from redis.asyncio.sentinel import MasterNotFoundError, Sentinel, SentinelConnectionPool
from redis.exceptions import ClusterError, RedisClusterException, RedisError, TryAgainError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from runtime.config import env_bool, env_float, env_int, env_str
from runtime.tasks import stop_tasks
from wire.errors import ApiError

T = TypeVar("T")
P = ParamSpec("P")

log = logging.getLogger("tabletop.redis")

REDIS_SOCKET_TIMEOUT = 10.0
"""Seconds a Redis reply may take (REDIS_SOCKET_TIMEOUT_SECONDS); blocking reads (workers) block
for less than this."""

CONNECT_TIMEOUT = 5.0
"""Seconds a new connection to Redis may take to open (REDIS_CONNECT_TIMEOUT_SECONDS)."""

MAX_CONNECTIONS = 16
"""Redis connections a process keeps open at most, by default (REDIS_MAX_CONNECTIONS)."""

POOL_WAIT_SECONDS = 5.0
"""How long a command waits for a free connection before it fails (UNAVAILABLE;
REDIS_POOL_WAIT_SECONDS)."""


def _timeouts() -> dict[str, float]:
    """The socket timeouts every Redis connection gets, from the environment."""
    return {
        "socket_connect_timeout": env_float("REDIS_CONNECT_TIMEOUT_SECONDS", CONNECT_TIMEOUT),
        "socket_timeout": env_float("REDIS_SOCKET_TIMEOUT_SECONDS", REDIS_SOCKET_TIMEOUT),
    }


def redis_credentials() -> dict[str, str]:
    """REDIS_PASSWORD (and REDIS_USERNAME, for an ACL user) from the environment, kept out of
    REDIS_URL so that the URL can sit in a ConfigMap and the password in a Secret."""
    credentials = {}
    if os.environ.get("REDIS_PASSWORD"):
        credentials["password"] = os.environ["REDIS_PASSWORD"]
        if os.environ.get("REDIS_USERNAME"):
            credentials["username"] = os.environ["REDIS_USERNAME"]
    return credentials


SENTINEL_TIMEOUT = 0.5
"""How long the answer of a Sentinel may take (REDIS_SENTINEL_TIMEOUT_SECONDS). They are asked
all at once: one that does not answer in time (behind a partition) counts as silent."""

FOLLOW_SECONDS = 1.0
"""How often a process asks the Sentinels which node is primary, whether or not anything
failed (REDIS_FOLLOW_SECONDS): when it changes, every connection to the old one is closed, so
that no command waits on a primary that is cut off."""

DOUBT = frozenset({"s_down", "o_down", "failover_in_progress", "disconnected"})
"""A Sentinel's flags for a primary that it may be about to replace, or cannot see."""


@dataclass(frozen=True)
class SentinelAnswer:
    """What one Sentinel says of the primary: its address, the configuration epoch it was
    named primary in (a failover makes a new, higher one), and the Sentinel's flags for it."""

    primary: tuple[str, int]
    epoch: int
    flags: frozenset[str]


@dataclass(frozen=True)
class Survey:
    """The answers of the Sentinels that answered in time, of `asked`."""

    answers: tuple[SentinelAnswer, ...]
    asked: int

    @property
    def newest(self) -> list[SentinelAnswer]:
        """The answers of the newest configuration epoch: older ones are Sentinels that have not
        heard of a failover yet (they adopt the newest configuration once they do)."""
        if not self.answers:
            return []
        epoch = max(answer.epoch for answer in self.answers)
        return [answer for answer in self.answers if answer.epoch == epoch]

    @property
    def primary(self) -> tuple[str, int] | None:
        """The primary of the newest configuration, never merely the first to answer."""
        named = collections.Counter(answer.primary for answer in self.newest)
        return named.most_common(1)[0][0] if named else None

    def confirms(self, address: tuple[str, int]) -> bool:
        """Whether `address` is the primary and stays so: a majority of all the Sentinels name
        it in the newest configuration, with no doubt about it, and no Sentinel of that
        configuration names another node or doubts it. A write that replicas hold, confirmed
        after it was made, survives any failover (docs/reliability.md)."""
        newest = self.newest
        if any(answer.primary != address or answer.flags & DOUBT for answer in newest):
            return False
        return len(newest) > self.asked // 2


class _Sentinels(Sentinel):
    """The Sentinels, asked all at once; the primary is the newest configuration's."""

    async def survey(self, service_name: str) -> Survey:
        timeout = env_float("REDIS_SENTINEL_TIMEOUT_SECONDS", SENTINEL_TIMEOUT)

        async def ask(sentinel: Redis) -> SentinelAnswer | None:
            try:
                async with asyncio.timeout(timeout):
                    state: Any = await sentinel.sentinel_master(service_name)
            except (RedisError, OSError, TimeoutError):
                return None
            return SentinelAnswer(
                (str(state["ip"]), int(state["port"])),
                int(state.get("config-epoch", 0)),
                frozenset(str(state["flags"]).split(",")),
            )

        answers = await asyncio.gather(*(ask(sentinel) for sentinel in self.sentinels))
        return Survey(tuple(a for a in answers if a is not None), len(self.sentinels))

    _waiting: asyncio.Future[Survey] | None = None
    _surveying = False

    async def confirmations(self, service_name: str) -> Survey:
        """A survey that began after this call: the confirmation of a write must be asked after
        the write. Calls that arrive while one survey runs share the next one (one round trip
        to the Sentinels serves every commit waiting at once)."""
        if self._waiting is None:
            self._waiting = asyncio.get_running_loop().create_future()
            if not self._surveying:
                asyncio.get_running_loop().create_task(self._rounds(service_name))
        return await asyncio.shield(self._waiting)

    async def _rounds(self, service_name: str) -> None:
        self._surveying = True
        try:
            while self._waiting is not None:
                round_, self._waiting = self._waiting, None
                try:
                    round_.set_result(await self.survey(service_name))
                except Exception as error:  # every waiting commit is told
                    round_.set_exception(error)
                    round_.exception()  # retrieved here, whoever else awaits it
        finally:
            self._surveying = False

    async def discover_master(self, service_name: str) -> tuple[str, int]:
        survey = await self.survey(service_name)
        primary = survey.primary
        if primary is None:
            raise MasterNotFoundError(
                f"no Sentinel of {len(self.sentinels)} named a primary for {service_name!r}"
            )
        return primary


class _BlockingSentinelPool(SentinelConnectionPool, BlockingConnectionPool):
    """Connections to whichever node the Sentinels name primary, bounded as everywhere else:
    a command that finds them all busy waits for one. A task of its own asks the Sentinels
    every FOLLOW_SECONDS and, when the primary changed, closes every connection to the old one
    (in use or not): commands on them fail at once (unreachable: retried) instead of waiting
    on a node that is cut off, and the next ones go to the new primary."""

    _follower: asyncio.Task[None] | None = None

    async def get_master_address(self) -> tuple[str, int]:
        if self._follower is None or self._follower.done():
            self._follower = asyncio.create_task(self._follow(), name="redis-sentinel-follow")
        address: tuple[str, int] = await super().get_master_address()  # type: ignore[no-untyped-call]
        return address

    async def _follow(self) -> None:
        manager: _Sentinels = self.sentinel_manager
        every = env_float("REDIS_FOLLOW_SECONDS", FOLLOW_SECONDS)
        while True:
            await asyncio.sleep(every)
            primary = (await manager.survey(self.service_name)).primary
            if primary is not None and primary != self.master_address:
                log.warning(
                    "the Redis primary changed",
                    extra={"old": str(self.master_address), "new": str(primary)},
                )
                self.master_address = primary
                await self.disconnect(inuse_connections=True)

    async def stop_following(self) -> None:
        if self._follower is not None:
            await stop_tasks([self._follower])


class _SentinelMaster(Redis):
    """The client of the primary the Sentinels name; closing it closes the clients it asks the
    Sentinels with too."""

    async def aclose(self, close_connection_pool: bool | None = None) -> None:
        pool: _BlockingSentinelPool = self.connection_pool  # type: ignore[assignment]
        await pool.stop_following()
        await super().aclose(close_connection_pool)
        for sentinel in pool.sentinel_manager.sentinels:
            await sentinel.aclose()


async def wait_for_replicas(
    redis: Redis, key: str, ttl_seconds: int, replicas: int, timeout_ms: int
) -> tuple[int, tuple[str, int] | None]:
    """Sets `key`'s TTL again (a write on this connection), then WAITs for `replicas` to hold
    every write before it (WAIT covers the writes of its connection; the primary replicates its
    writes in one ordered stream, so this covers other connections' earlier writes too). How
    many replicas acknowledged, and the node it ran on (None: not under Sentinel)."""
    pool = redis.connection_pool
    connection = await pool.get_connection()  # type: ignore[no-untyped-call]

    async def attempt() -> int:
        await connection.send_packed_command(
            connection.pack_commands([("EXPIRE", key, ttl_seconds), ("WAIT", replicas, timeout_ms)])
        )
        await connection.read_response()
        return int(await connection.read_response())

    async def reconnect(error: BaseException) -> None:
        await connection.disconnect()  # as redis-py's own commands do before their retry

    try:
        # A pooled connection that Redis closed meanwhile is opened again and the pair sent
        # again, as for any command (WAIT and setting a TTL again are safe to repeat).
        acknowledged = await connection.retry.call_with_retry(attempt, reconnect)
        host, port = connection.host, connection.port
    except BaseException:
        await connection.disconnect()
        raise
    finally:
        await pool.release(connection)
    return acknowledged, (str(host), int(port)) if isinstance(pool, _BlockingSentinelPool) else None


def current_primary(redis: Redis) -> tuple[str, int] | None:
    """The node a client under Sentinel sends its commands to now (None: not under Sentinel, or
    not connected yet)."""
    pool = getattr(redis, "connection_pool", None)  # a cluster client has a pool per node
    if isinstance(pool, _BlockingSentinelPool) and pool.master_address is not None:
        host, port = pool.master_address
        return str(host), int(port)
    return None


async def primary_confirmed(redis: Redis, address: tuple[str, int] | None) -> bool:
    """Whether the Sentinels confirm `address` as the primary (Survey.confirms); True for a
    Redis that no Sentinels watch (`address` None)."""
    if address is None:
        return True
    pool = redis.connection_pool
    assert isinstance(pool, _BlockingSentinelPool)
    manager: _Sentinels = pool.sentinel_manager
    return (await manager.confirmations(pool.service_name)).confirms(address)


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
    pool_wait = env_float("REDIS_POOL_WAIT_SECONDS", POOL_WAIT_SECONDS)
    if cluster:
        client: Any = RedisCluster.from_url(
            url,
            **credentials,
            **_timeouts(),
            max_connections=max_connections,
            client_name=name,
        )
        return cast(Redis, client)
    sentinels = sentinels_from_env()
    if sentinels:
        options = parse_url(url)
        answer = env_float("REDIS_SENTINEL_TIMEOUT_SECONDS", SENTINEL_TIMEOUT)
        manager = _Sentinels(  # type: ignore[no-untyped-call]
            sentinels,
            sentinel_kwargs={
                **credentials,
                "socket_connect_timeout": answer,
                "socket_timeout": answer,
            },
            **credentials,
        )
        master: Redis = manager.master_for(
            env_str("REDIS_SENTINEL_MASTER", "tabletop"),
            redis_class=_SentinelMaster,
            connection_pool_class=_BlockingSentinelPool,
            db=options.get("db", 0),
            max_connections=max_connections,
            timeout=pool_wait,
            health_check_interval=10,
            **_timeouts(),
            client_name=name,
        )
        return master
    pool = BlockingConnectionPool.from_url(
        url,
        **credentials,
        max_connections=max_connections,
        timeout=pool_wait,
        health_check_interval=10,
        **_timeouts(),
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


async def group_entries(
    redis: Redis,
    stream: str,
    group: str,
    consumer: str,
    *,
    block_ms: int,
    reclaim_idle_ms: int | None = None,
    count: int = 100,
) -> list[tuple[Any, Any]]:
    """A consumer group's next entries for `consumer`: those another consumer has held
    unacknowledged for `reclaim_idle_ms` first (XAUTOCLAIM; None: none taken over now), then
    new ones (XREADGROUP, waiting up to `block_ms` for one)."""
    entries: list[tuple[Any, Any]] = []
    if reclaim_idle_ms is not None:
        reply: Any = await redis.xautoclaim(
            stream, group, consumer, reclaim_idle_ms, start_id="0-0", count=count
        )
        entries += [entry for entry in reply[1] if entry[1]]  # a deleted entry has no fields
    read: Any = await redis.xreadgroup(
        group, consumer, {stream: ">"}, count=count, block=max(1, block_ms)
    )
    for _stream, items in read or []:
        entries += items
    return entries
