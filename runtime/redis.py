"""The Redis connection every process uses, and how its failures are told apart."""

from __future__ import annotations

import asyncio
import collections
import functools
import hashlib
import logging
import os
import traceback
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ParamSpec, TypeVar, cast

import hiredis
from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.connection import parse_url
from redis.asyncio.sentinel import MasterNotFoundError, Sentinel, SentinelConnectionPool
from redis.exceptions import (
    ClusterError,
    NoScriptError,
    RedisClusterException,
    RedisError,
    ResponseError,
    TryAgainError,
)
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

FAILING_OVER = frozenset({"o_down", "failover_in_progress"})
"""A Sentinel's flags for a primary that it is about to replace, or is replacing: it does not
confirm the primary. (`s_down` and `disconnected`, its own view that it cannot see the primary,
do not stop it: a failover needs a majority's votes, which the confirmation sees; see
`Survey.confirms`.)"""

VOTE_ASKER = "tabletop-asks-for-no-vote"
"""The run id named in SENTINEL IS-MASTER-DOWN-BY-ADDR with epoch 0: a Sentinel then only
tells the vote it cast last (it votes only for a newer epoch than its own), never votes."""


@dataclass(frozen=True)
class Vote:
    """The vote a Sentinel cast last for a failover of the primary: for the Sentinel whose run id
    is `leader`, in configuration epoch `epoch`."""

    leader: str
    epoch: int


@dataclass(frozen=True)
class SentinelAnswer:
    """What one Sentinel says of the primary: its address, the configuration epoch it was
    named primary in (a failover makes a new, higher one), the Sentinel's flags for it, the
    Sentinel's own run id, and the vote it cast last (None: not asked, because it names another
    node than the one asked about)."""

    primary: tuple[str, int]
    epoch: int
    flags: frozenset[str]
    runid: str = ""
    vote: Vote | None = None


@dataclass(frozen=True)
class Survey:
    """The answers of the Sentinels that answered in time, of `asked`."""

    answers: tuple[SentinelAnswer, ...]
    asked: int

    @property
    def newest_epoch(self) -> int:
        return max((answer.epoch for answer in self.answers), default=0)

    @property
    def newest(self) -> list[SentinelAnswer]:
        """The answers of the newest configuration epoch: older ones are Sentinels that have not
        heard of a failover yet (they adopt the newest configuration once they do)."""
        epoch = self.newest_epoch
        return [answer for answer in self.answers if answer.epoch == epoch]

    @property
    def primary(self) -> tuple[str, int] | None:
        """The primary of the newest configuration, never merely the first to answer."""
        named = collections.Counter(answer.primary for answer in self.newest)
        return named.most_common(1)[0][0] if named else None

    def confirms(self, address: tuple[str, int]) -> bool:
        """Whether `address` is the primary and no failover that could replace it can be under
        way: no Sentinel of the newest configuration names another node, and a majority of all
        the Sentinels name it in the newest configuration, each with no failover of its own
        under way or about to begin (FAILING_OVER) and no vote outstanding (`settled`).

        Why that is enough, asked after a write that every replica in sync holds: a failover
        needs the votes of a majority of the Sentinels, and two majorities share a Sentinel. If
        that one had voted before it answered, its vote is newer than its configuration and not
        known to have ended, so it did not count; so the failover's election ended after the
        write was held, and the replica it promotes holds the write (docs/reliability.md,
        "Partitions"). The same holds of answers not in (yet): a majority decides."""
        epoch = self.newest_epoch
        if any(answer.primary != address for answer in self.newest):
            return False
        confirming = [
            answer
            for answer in self.newest
            if not answer.flags & FAILING_OVER
            and answer.vote is not None
            and self.settled(answer.vote, epoch)
        ]
        return len(confirming) > self.asked // 2

    def settled(self, vote: Vote, epoch: int) -> bool:
        """Whether the failover `vote` was cast for can no longer make a configuration newer than
        `epoch`: the vote is not newer than it, or the Sentinel voted for answered that it has
        no failover under way, that it cast its own vote in that epoch or later (so it did
        begin that failover) and that its configuration is older than that epoch (so the
        failover ended without promoting anyone: a leader adopts the epoch it won when its
        replica takes the primary's role). A vote for a leader that does not answer may have
        made a primary that only its side of a partition knows of."""
        if vote.epoch <= epoch:
            return True
        leader = next((answer for answer in self.answers if answer.runid == vote.leader), None)
        return (
            leader is not None
            and "failover_in_progress" not in leader.flags
            and leader.vote is not None
            and leader.vote.epoch >= vote.epoch
            and leader.epoch < vote.epoch
        )


class _Sentinels(Sentinel):
    """The Sentinels, asked all at once; the primary is the newest configuration's."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[no-untyped-call]
        self._stragglers: set[asyncio.Task[SentinelAnswer | None]] = set()
        """Questions a survey did not wait for, until they end by themselves."""
        self._waiting: dict[tuple[str, int], asyncio.Future[Survey]] = {}
        """The next confirmation round's commits, by the node they ask about."""
        self._tasks: set[asyncio.Task[None]] = set()
        """The confirmation rounds running."""
        self._surveying = False

    async def survey(self, service_name: str, about: tuple[str, int] | None = None) -> Survey:
        """The Sentinels' answers, asked all at once. `about`: a node whose confirmation is
        wanted; each Sentinel that names it also tells its last vote (one round trip), and the
        survey ends as soon as the answers so far confirm it (the others are not waited for:
        one cut off would hold every commit for REDIS_SENTINEL_TIMEOUT_SECONDS)."""
        timeout = env_float("REDIS_SENTINEL_TIMEOUT_SECONDS", SENTINEL_TIMEOUT)

        async def ask(sentinel: Redis) -> SentinelAnswer | None:
            try:
                async with asyncio.timeout(timeout):
                    async with sentinel.pipeline(transaction=False) as pipe:
                        pipe.sentinel_master(service_name)
                        pipe.execute_command("SENTINEL MYID")
                        if about is not None:
                            pipe.execute_command(
                                "SENTINEL IS-MASTER-DOWN-BY-ADDR", *about, 0, VOTE_ASKER
                            )
                        replies: list[Any] = await pipe.execute()
            except (RedisError, OSError, TimeoutError):
                return None
            state = replies[0]
            primary = (str(state["ip"]), int(state["port"]))
            vote = None
            if about is not None and primary == about:
                leader = replies[2][1]
                vote = Vote(leader.decode() if isinstance(leader, bytes) else str(leader),
                            int(replies[2][2]))  # fmt: skip
            runid = replies[1]
            return SentinelAnswer(
                primary,
                int(state.get("config-epoch", 0)),
                frozenset(str(state["flags"]).split(",")),
                runid.decode() if isinstance(runid, bytes) else str(runid),
                vote,
            )

        asked = [asyncio.create_task(ask(sentinel)) for sentinel in self.sentinels]
        answers: list[SentinelAnswer] = []
        for arrived in asyncio.as_completed(asked):
            answer = await arrived
            if answer is not None:
                answers.append(answer)
                if about is not None and Survey(tuple(answers), len(asked)).confirms(about):
                    break
        # Those not in finish by themselves, within their timeout (cancelled, a question would
        # cost its connection); held here until then.
        for task in asked:
            if not task.done():
                self._stragglers.add(task)
                task.add_done_callback(self._stragglers.discard)
        return Survey(tuple(answers), len(asked))

    async def stop(self) -> None:
        """Before the Sentinels' clients close: the questions still out end (cancelled), so
        that none opens a connection after the close."""
        await stop_tasks([*self._stragglers, *self._tasks])

    async def confirmations(self, service_name: str, about: tuple[str, int]) -> Survey:
        """A survey about `about` that began after this call: the confirmation of a write must
        be asked after the write. Calls that arrive while one survey runs share the next one
        about their node (one round trip to the Sentinels serves every commit waiting at once)."""
        waiting = self._waiting
        future = waiting.get(about)
        if future is None:
            future = waiting[about] = asyncio.get_running_loop().create_future()
            if not self._surveying:
                rounds = asyncio.get_running_loop().create_task(self._rounds(service_name, waiting))
                self._tasks.add(rounds)
                rounds.add_done_callback(self._tasks.discard)
        return await asyncio.shield(future)

    async def _rounds(
        self, service_name: str, waiting: dict[tuple[str, int], asyncio.Future[Survey]]
    ) -> None:
        self._surveying = True
        round_: asyncio.Future[Survey] | None = None
        try:
            while waiting:
                about, round_ = waiting.popitem()
                try:
                    round_.set_result(await self.survey(service_name, about))
                except Exception as error:  # every waiting commit is told
                    round_.set_exception(error)
                    round_.exception()  # retrieved here, whoever else awaits it
        finally:
            self._surveying = False
            # Stopped (the client closes): nobody is left waiting for ever.
            left = [*waiting.values(), *([] if round_ is None else [round_])]
            waiting.clear()
            for future in left:
                if not future.done():
                    future.cancel()

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
    counts_replicas = False
    """Whether the follower also asks the primary which replicas are in sync (a store whose
    writes wait for them: `replicas_wanted`)."""
    replicas_in_sync = 0
    """How many, when last asked (0: not asked, or the primary did not answer)."""

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
            if self.counts_replicas:
                self.replicas_in_sync = await self._in_sync()

    async def _in_sync(self) -> int:
        """How many replicas the primary has in sync (IN_SYNC_LAG_SECONDS); 0 when it does not
        answer."""
        try:
            async with asyncio.timeout(
                env_float("REDIS_SENTINEL_TIMEOUT_SECONDS", SENTINEL_TIMEOUT)
            ):
                info: dict[str, Any] = await Redis(connection_pool=self).info("replication")
        except (RedisError, OSError, TimeoutError):
            return 0
        replicas = [value for name, value in info.items() if name.startswith("slave")
                    and isinstance(value, dict)]  # fmt: skip
        return sum(
            1
            for replica in replicas
            if replica.get("state") == "online"
            and int(replica.get("lag", 0)) <= IN_SYNC_LAG_SECONDS
        )

    async def stop_following(self) -> None:
        if self._follower is not None:
            await stop_tasks([self._follower])


class _SentinelMaster(Redis):
    """The client of the primary the Sentinels name; closing it closes the clients it asks the
    Sentinels with too."""

    async def aclose(self, close_connection_pool: bool | None = None) -> None:
        pool: _BlockingSentinelPool = self.connection_pool  # type: ignore[assignment]
        await pool.stop_following()
        await pool.sentinel_manager.stop()
        await super().aclose(close_connection_pool)
        for sentinel in pool.sentinel_manager.sentinels:
            await sentinel.aclose()


IN_SYNC_LAG_SECONDS = 2
"""A replica whose last acknowledgement the primary received at most this many seconds ago is
in sync (INFO replication's `lag`; replicas acknowledge every second)."""


def replicas_wanted(redis: Redis, minimum: int) -> int:
    """How many replicas a write waits for: every replica the primary had in sync when it was
    last asked (each FOLLOW_SECONDS, under Sentinel), and never fewer than `minimum`
    (REDIS_WAIT_REPLICAS). A write held by every replica survives whichever one a failover
    promotes; one held by fewer only survives when the promoted one is among them."""
    pool = redis.connection_pool
    if not isinstance(pool, _BlockingSentinelPool):
        return minimum
    pool.counts_replicas = True
    return max(minimum, pool.replicas_in_sync)


@dataclass(frozen=True)
class Script:
    """A Lua script's call, for `on_primary`: sent by its digest, and as a whole when the node
    does not know it yet (after a restart or a failover)."""

    source: str
    keys: Sequence[Any]
    args: Sequence[Any]

    @property
    def digest(self) -> str:
        return _digest(self.source)

    def command(self, by_digest: bool) -> tuple[Any, ...]:
        head = ("EVALSHA", self.digest) if by_digest else ("EVAL", self.source)
        return (*head, len(self.keys), *self.keys, *self.args)


Command = tuple[Any, ...] | Script


@functools.cache
def _digest(source: str) -> str:
    """The name Redis gives a script (its SHA-1), worked out once per script."""
    return hashlib.sha1(source.encode()).hexdigest()


@dataclass(frozen=True)
class Held:
    """Where a write went and how many replicas hold it: `acknowledged` of the `wanted` ones
    answered WAIT on `node`, the node the write itself went to (None: no Sentinels). The writes
    sent together (runtime/group_commit.py) share one."""

    acknowledged: int
    wanted: int
    node: tuple[str, int] | None
    _confirmation: list[asyncio.Future[bool]] = field(
        default_factory=list, init=False, compare=False, repr=False
    )
    """The Sentinels' answer about `node`, once asked (`held_confirmed`)."""

    @property
    def enough(self) -> bool:
        return self.acknowledged >= self.wanted


async def on_primary(
    redis: Redis,
    commands: Sequence[Command],
    *,
    expire: Sequence[str] = (),
    ttl_seconds: int = 0,
    replicas: int | None = None,
    timeout_ms: int = 0,
) -> tuple[list[Any], Held | None]:
    """Sends `commands`, then sets the TTL of each key of `expire` again and WAITs for `replicas`
    replicas, on one connection in one round trip: the node that answered the commands is the
    node whose replicas held them, whatever the client learns of a failover meanwhile. (WAIT
    covers the writes of its connection, and setting the TTL of a key that exists is one: so it
    covers every write the node made before it, whichever connection made it, the primary's
    replication being one ordered stream.) Scripts go by digest, and whole to a node that does
    not know them yet. The commands' replies, errors included as values (a ResponseError), and
    what the WAIT found; `replicas` None: no TTL set nor WAIT sent, and no Held (the commands
    alone, still in one round trip)."""
    pool = redis.connection_pool
    connection = await pool.get_connection()  # type: ignore[no-untyped-call]
    tail: list[tuple[Any, ...]] = []
    if replicas is not None:
        tail = [*(("EXPIRE", key, ttl_seconds) for key in expire), ("WAIT", replicas, timeout_ms)]

    async def send(batch: Sequence[tuple[Any, ...]]) -> list[Any]:
        # Packed by hiredis (C) rather than redis-py's Python packer: the same bytes.
        await connection.send_packed_command(b"".join(map(hiredis.pack_command, batch)))
        replies: list[Any] = []
        for _ in batch:
            try:
                replies.append(await connection.read_response())
            except ResponseError as error:
                replies.append(error)
        return replies

    async def attempt() -> list[Any]:
        replies = await send([*(c.command(True) if isinstance(c, Script) else c
                                for c in commands), *tail])  # fmt: skip
        unknown = [i for i, c in enumerate(commands) if isinstance(c, Script)
                   and isinstance(replies[i], NoScriptError)]  # fmt: skip
        if unknown:  # those did not run: sent again whole (which also teaches the node them)
            again = await send([*(cast(Script, commands[i]).command(False) for i in unknown),
                                *tail])  # fmt: skip
            for index, reply in zip(unknown, again, strict=False):
                replies[index] = reply
            if tail:
                replies[-len(tail) :] = again[-len(tail) :]
        return replies

    async def reconnect(error: BaseException) -> None:
        await connection.disconnect()  # as redis-py's own commands do before their retry

    try:
        # A pooled connection that Redis closed meanwhile is opened again and everything sent
        # again, as for any command.
        replies = await connection.retry.call_with_retry(attempt, reconnect)
        host, port = connection.host, connection.port
    except BaseException:
        await connection.disconnect()
        raise
    finally:
        await pool.release(connection)
    if replicas is None:
        return replies, None
    acknowledged = replies[-1]
    if isinstance(acknowledged, Exception):
        raise acknowledged
    node = (str(host), int(port)) if isinstance(pool, _BlockingSentinelPool) else None
    return replies[: len(commands)], Held(int(acknowledged), replicas, node)


async def primary_confirmed(redis: Redis, address: tuple[str, int] | None) -> bool:
    """Whether the Sentinels confirm `address` as the primary (Survey.confirms); True for a
    Redis that no Sentinels watch (`address` None)."""
    if address is None:
        return True
    pool = redis.connection_pool
    assert isinstance(pool, _BlockingSentinelPool)
    manager: _Sentinels = pool.sentinel_manager
    return (await manager.confirmations(pool.service_name, address)).confirms(address)


async def held_confirmed(redis: Redis, held: Held) -> bool:
    """`primary_confirmed` about the node `held` names, asked once for all the writes that
    share it (a batch: runtime/group_commit.py): the first to ask starts the survey, the others
    wait for its answer. A caller that stops waiting does not stop it for the others."""
    if held.node is None:
        return True
    if not held._confirmation:
        asked = asyncio.ensure_future(primary_confirmed(redis, held.node))
        asked.add_done_callback(_retrieved)
        held._confirmation.append(asked)
    return await asyncio.shield(held._confirmation[0])


def _retrieved(future: asyncio.Future[Any]) -> None:
    """Marks a shared future's failure as seen, whether or not anyone still waits for it."""
    if not future.cancelled():
        future.exception()


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
        manager = _Sentinels(
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
    claim_count: int | None = None,
) -> list[tuple[Any, Any]]:
    """A consumer group's next entries for `consumer`: those another consumer has held
    unacknowledged for `reclaim_idle_ms` first (XAUTOCLAIM, at most `claim_count`, None:
    `count`; `reclaim_idle_ms` None: none taken over now), then at most `count` new ones
    (XREADGROUP, waiting up to `block_ms` for one)."""
    entries: list[tuple[Any, Any]] = []
    if reclaim_idle_ms is not None:
        reply: Any = await redis.xautoclaim(
            stream, group, consumer, reclaim_idle_ms, start_id="0-0",
            count=count if claim_count is None else claim_count,
        )  # fmt: skip
        entries += [entry for entry in reply[1] if entry[1]]  # a deleted entry has no fields
    read: Any = await redis.xreadgroup(
        group, consumer, {stream: ">"}, count=count, block=max(1, block_ms)
    )
    for _stream, items in read or []:
        entries += items
    return entries
