"""Redis that survives losing its primary: a replica and three Sentinels; the services follow the
failover by themselves (REDIS_SENTINELS), and with REDIS_WAIT_REPLICAS no move a player was told
was played is lost with the primary.

To make the loss certain rather than a race, the replica reaches the primary through a `Gate`
the test controls: it holds back what the primary sends, so a move can be on the primary and
not yet on the replica when the primary dies."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Callable
from typing import Any, cast

import grpc
import pytest
import pytest_asyncio

import games
from client.session import Session
from runtime import keys
from runtime.localredis import LocalRedisSentinel, free_port
from runtime.redis import connect_redis, replicas_wanted
from services.game.store import GameStore
from tabletop.common.v1 import common_pb2
from tabletop.esoloe.v1 import esoloe_pb2
from tests.platform import Platform, logged_in
from tests.timing import eventually, patience
from wire.errors import ApiError
from wire.records import GameMeta, VersionStatus

pytestmark = pytest.mark.integration


class Gate:
    """A TCP relay on `port` to a Redis primary that can hold back, then drop, what the primary
    sends its replica (as a network that stalls, then a node that dies, would)."""

    def __init__(self) -> None:
        self.port = free_port()
        self.target = 0
        self.flowing = asyncio.Event()
        self.flowing.set()
        self.server: asyncio.Server | None = None
        self.writers: list[asyncio.StreamWriter] = []
        self.links: set[asyncio.Task[object]] = set()

    def bind(self, primary_port: int) -> int:
        self.target = primary_port
        return self.port

    async def start(self) -> None:
        self.server = await asyncio.start_server(self._link, "127.0.0.1", self.port)

    async def _link(
        self, replica_in: asyncio.StreamReader, replica_out: asyncio.StreamWriter
    ) -> None:
        try:
            primary_in, primary_out = await asyncio.open_connection("127.0.0.1", self.target)
        except OSError:
            replica_out.close()
            return
        self.writers += [replica_out, primary_out]
        task = asyncio.current_task()
        assert task is not None
        self.links.add(task)

        async def pipe(
            source: asyncio.StreamReader, sink: asyncio.StreamWriter, held: bool
        ) -> None:
            with contextlib.suppress(OSError):
                while data := await source.read(65536):
                    if held:  # held back here, the replica never gets it
                        await self.flowing.wait()
                    sink.write(data)
                    await sink.drain()
            sink.close()

        await asyncio.gather(
            pipe(replica_in, primary_out, held=False), pipe(primary_in, replica_out, held=True)
        )

    def cut(self) -> None:
        """Drop every connection and what was held back."""
        for writer in self.writers:
            writer.transport.abort()
            writer.close()
        self.writers.clear()

    async def close(self) -> None:
        self.cut()
        for task in self.links:
            task.cancel()
        await asyncio.gather(*self.links, return_exceptions=True)
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()


@pytest_asyncio.fixture
async def sentinel_redis(
    monkeypatch: pytest.MonkeyPatch,
) -> AsyncIterator[tuple[LocalRedisSentinel, Gate]]:
    gate = Gate()
    await gate.start()
    redis = await asyncio.to_thread(LocalRedisSentinel, replicas=2, link_port=gate.bind)
    for name, value in redis.sentinels_env.items():
        monkeypatch.setenv(name, value)
    yield redis, gate
    await gate.close()
    redis.stop()


async def _play(session: Session, request: common_pb2.PlayRequest) -> int:
    """Send the move until it is answered (retrying UNAVAILABLE with the same request id, as
    every client should): the version it made."""
    deadline = time.monotonic() + patience(30)
    while True:
        try:
            reply = await session.game("esoloe").Play(
                request, metadata=session.metadata, timeout=patience(5)
            )
            return int(reply.status.version)
        except grpc.aio.AioRpcError as error:
            if error.code() not in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
                raise
            assert time.monotonic() < deadline, "the move was never answered"
            await asyncio.sleep(0.1)


@pytest.mark.parametrize("wait_replicas", [1, 0])
async def test_a_failover_loses_no_accepted_move_when_commits_wait_for_a_replica(
    sentinel_redis: tuple[LocalRedisSentinel, Gate], wait_replicas: int
) -> None:
    redis, gate = sentinel_redis
    async with Platform(redis.url, wait_replicas=wait_replicas) as platform:
        alice, bob = await logged_in(platform, "alice", "bob")
        created = await platform.create_game(
            "esoloe", esoloe_pb2.CreateGameRequest(players=[alice.player_id, bob.player_id])
        )
        game_id = created.status.game_id
        accepted: list[tuple[int, str]] = []
        for player, move in [(alice, "c12"), (bob, "c12")]:
            request = common_pb2.PlayRequest(
                game_id=game_id, move=move, request_id=f"r-{move}-{len(accepted)}"
            )
            accepted.append((await _play(player, request), move))

        gate.flowing.clear()  # the replicas stop hearing from the primary
        third = common_pb2.PlayRequest(game_id=game_id, move="c13", request_id="r-third")
        told = True
        try:
            version = await alice.game("esoloe").Play(
                third, metadata=alice.metadata, timeout=patience(5)
            )
            accepted.append((int(version.status.version), "c13"))  # told it was played
        except grpc.aio.AioRpcError as error:
            told = False
            refusal = (error.code(), error.details() or "")
        if wait_replicas:
            assert not told
            assert refusal[0] == grpc.StatusCode.UNAVAILABLE
            assert "replica" in refusal[1]
        else:
            assert told

        old = redis.primary()
        old.kill()  # the primary is lost, with what only it held
        gate.cut()
        await asyncio.to_thread(redis.wait_failover, old)

        if not told:  # the player retries, as for any UNAVAILABLE: now it is played for good
            accepted.append((await _play(alice, third), "c13"))
        # What the new primary holds, as the players see it (the services are ready again).
        view = await alice.game("esoloe").GetView(
            common_pb2.GetViewRequest(game_id=game_id, seat=0),
            metadata=alice.metadata,
            timeout=patience(10),
        )
        held = view.status.version
        lost = [move for version, move in accepted if version > held]
        if wait_replicas:
            assert lost == [], f"moves accepted and then lost in the failover: {lost}"
            assert held == 3
        else:  # without the wait, the move the player was told was played is gone
            assert lost == ["c13"]
            assert held == 2
        for session in (alice, bob):
            await session.close()


async def test_a_write_waits_for_every_replica_in_sync(monkeypatch: pytest.MonkeyPatch) -> None:
    """With two replicas in sync, a write is acknowledged only once both hold it (whichever a
    failover promotes then holds it), though REDIS_WAIT_REPLICAS asks for one: the write one of
    them does not get is refused (UNAVAILABLE, retried). A replica that is gone no longer
    counts: then one replica is enough again."""
    gate = Gate()
    await gate.start()
    dials: list[Callable[[int], int]] = [gate.bind, lambda primary: primary]

    def dial(primary: int) -> int:  # the first replica through the gate, the second direct
        return dials.pop(0)(primary)

    redis = await asyncio.to_thread(LocalRedisSentinel, replicas=2, link_port=dial)
    for name, value in redis.sentinels_env.items():
        monkeypatch.setenv(name, value)
    client = connect_redis(redis.url)
    store = GameStore(client, wait_replicas=1, wait_timeout_ms=300)
    try:
        game_id = "esoloe-0123456789abcdef0123"
        state = games.rules("esoloe").new_game(1, {})
        meta = {"game": "esoloe", "seats": ["p-a", "p-b"], "options": {}, "seed": 1}

        async def write() -> Any:
            """A write to the game and what holds it, as a move's commit waits for it."""
            _, held = await store._written(game_id, ("HSET", keys.game_state(game_id), "x", 1))
            return held

        created = await store.create(game_id, state.serialize(), GameMeta.from_json(meta), [],
                                     VersionStatus([], False), table=None, time_ms=0)  # fmt: skip
        assert created is not None
        assert created.wanted == 1, "no replica counted yet"
        await eventually(lambda: replicas_wanted(client, 1) == 2, 10, "two replicas in sync")
        held = await write()
        assert (held.acknowledged, held.wanted) == (2, 2)
        assert held.node == ("127.0.0.1", redis.primary().port), "the node the write went to"
        await store.confirm(held)

        gate.flowing.clear()  # the first replica hears nothing new, though it still answers
        held = await write()
        assert (held.acknowledged, held.wanted) == (1, 2)
        with pytest.raises(ApiError) as refused:
            await store.confirm(held)
        assert refused.value.reason == "UNAVAILABLE"
        assert "1 of the 2" in str(refused.value)

        gate.cut()
        redis.nodes[1].kill()  # that replica is gone for good
        await eventually(lambda: replicas_wanted(client, 1) == 1, 15, "the lost replica dropped")
        held = await write()
        assert (held.acknowledged, held.wanted) == (1, 1)
        await store.confirm(held)
    finally:
        await client.aclose()
        await gate.close()
        redis.stop()


async def test_a_version_read_from_another_history_is_never_built_on(redis_url: str) -> None:
    """After a failover a service may hold a game at version N as the old primary had it (a
    move that was never acknowledged, then lost) while the new primary's version N is another
    move. A move judged on the one must not be committed on top of the other because the
    numbers match: each version carries a tag, and a commit expects the tag it read (else
    STALE: reloaded, judged again). Here the service's hint holds version 1 as "c12" while
    Redis's version 1 becomes "a12"; the next move is built on "a12", and the stored position
    is the log's."""
    async with Platform(redis_url) as platform:  # one replica: it holds the hint
        (alice,) = await logged_in(platform, "alice")
        stub = alice.game("esoloe")
        created = await platform.create_game(
            "esoloe", esoloe_pb2.CreateGameRequest(players=[alice.player_id] * 2)
        )
        game_id = created.status.game_id
        await stub.Play(
            common_pb2.PlayRequest(game_id=game_id, move="c12", seat=0), metadata=alice.metadata
        )
        redis = connect_redis(redis_url)
        store = GameStore(redis)
        try:
            first = (await store.entries(game_id, 1, count=1))[0]
            meta = json.loads(await redis.hget(keys.game_state(game_id), "meta") or b"{}")
            rules = games.rules("esoloe")
            start = rules.new_game(int(meta["seed"]), meta["options"])
            other, events = start.apply(0, "a12")
            await redis.hset(
                keys.game_state(game_id),
                mapping={"snapshot": other.serialize(), "tag": "another-history"},
            )
            stream = keys.game_events(game_id)
            ((_, opening),) = cast(Any, await redis.xrange(stream, "0-1", "0-1"))
            await redis.delete(stream)
            await redis.xadd(stream, opening, id="0-1")
            await redis.xadd(
                stream,
                {"actor": 0, "move": "a12", "events": json.dumps([e.to_json() for e in events]),
                 "status": json.dumps(first.status.to_json()), "t": first.time_ms},
                id="1-1",
            )  # fmt: skip
            reply = await stub.Play(
                common_pb2.PlayRequest(game_id=game_id, move="e14", seat=1),
                metadata=alice.metadata,
            )
            assert reply.status.version == 2
            stored = await store.load(game_id)
            assert stored is not None
            after, _ = other.apply(1, "e14")
            assert rules.deserialize(stored.snapshot) == after, "built on the other history"
            assert [e.move for e in await store.entries(game_id, 0, count=10)] == ["", "a12", "e14"]
        finally:
            await redis.aclose()
        await alice.close()
