"""Group commit (runtime/group_commit.py): the commits of one turn of the event loop go to a
real Redis as one batch, each still checked on its own and answered on its own; under Sentinel
the batch is confirmed once; a replica killed with batches in flight loses no acknowledged move
and applies none twice."""

from __future__ import annotations

import asyncio
import os
import signal
import urllib.request
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import grpc
import pytest
import pytest_asyncio
from prometheus_client import REGISTRY
from redis.asyncio import Redis

import games
from client.session import Session
from runtime import game_log, keys
from runtime.group_commit import GroupCommit
from runtime.launch import Launch
from runtime.localredis import LocalRedis, LocalRedisSentinel, free_port
from runtime.redis import connect_redis
from services.game.limits import Limits
from services.game.players import PlayerStore
from services.game.store import Commit, Follow, GameStore
from tabletop.common.v1 import common_pb2
from tabletop.esoloe.v1 import esoloe_pb2
from tests.platform import TEST_SECRET, spread
from tests.timing import eventually, eventually_sync, patience
from wire.errors import ApiError
from wire.records import GameMeta, VersionStatus

pytestmark = pytest.mark.integration

RULES = games.rules("esoloe")


def _batches_seen() -> float:
    """How many batches the process sent so far, by the histogram the bench reads."""
    return REGISTRY.get_sample_value("tabletop_commit_batch_size_count") or 0.0


def _game_id() -> str:
    return f"esoloe-{uuid.uuid4().hex[:24]}"


async def _created(store: GameStore, game_id: str) -> Any:
    state = RULES.new_game(1, {})
    meta = {"game": "esoloe", "seats": ["p-a", "p-b"], "options": {}, "seed": 1}
    return await store.create(
        game_id, state.serialize(), GameMeta.from_json(meta), [], VersionStatus([], False),
        table=None, time_ms=0,
    )  # fmt: skip


async def _move(
    store: GameStore,
    game_id: str,
    *,
    version: int = 0,
    tag: str = "",
    request_id: str = "",
    move: str = "c12",
    actor: int = 0,
    follow: Follow | None = None,
) -> Commit:
    """Commit `move` on top of `version` (tagged `tag`). The snapshot stored is the move's
    name: what the store keeps is checked, not the game's rules."""
    return await store.commit(
        game_id,
        expected_version=version,
        expected_tag=tag,
        snapshot=move.encode(),
        request_id=request_id,
        actor=actor,
        move=move,
        events=[],
        status=VersionStatus([], False),
        table=None,
        time_ms=0,
        follow=follow,
    )


@pytest_asyncio.fixture
async def store(redis_url: str) -> AsyncIterator[GameStore]:
    client = connect_redis(redis_url)
    yield GameStore(client)
    await client.aclose()


async def test_what_a_move_sets_going_goes_with_it_and_only_when_it_is_written(
    store: GameStore,
) -> None:
    """A move's bot-turn jobs and its "your turn" notification are written right after it, in
    the same batch (one round trip); behind a move that was not written (stale), nothing is."""
    game_id = _game_id()
    await _created(store, game_id)
    job: dict[str, str | int] = {
        "game": "esoloe", "game_id": game_id, "seat": 1, "player": "bot-strong-00aa",
        "version": 1, "sponsor": "p-a", "window_ms": 0, "pace_ms": 0,
    }  # fmt: skip
    fields = {"game": "esoloe", "game_id": game_id, "message": "your turn"}
    follow = Follow([job], ["p-b"], fields)
    redis = store.redis

    async def queued() -> list[dict[bytes, bytes]]:
        entries: Any = await redis.xrange(keys.BOT_TURNS)
        return [entry for _, entry in entries if entry[b"game_id"] == game_id.encode()]

    async def told() -> list[dict[bytes, bytes]]:
        entries: Any = await redis.xrange(keys.player_notifications("p-b"))
        return [entry for _, entry in entries if entry.get(b"game_id") == game_id.encode()]

    batches = store.group.batches
    written = await _move(store, game_id, follow=follow)
    assert (written.outcome, written.version, written.followed) == ("OK", 1, True)
    assert store.group.batches == batches + 1, "one round trip"
    assert await queued() == [{k.encode(): str(v).encode() for k, v in job.items()}]
    [notice] = await told()
    assert (notice[b"kind"], notice[b"message"]) == (b"your_turn", b"your turn")
    stale = await _move(store, game_id, follow=follow, move="c13")  # on version 0 again
    assert (stale.outcome, stale.followed) == ("STALE", False)
    assert len(await queued()) == 1
    assert len(await told()) == 1


async def test_a_new_games_listing_creation_and_announcement_go_in_one_round_trip(
    store: GameStore,
) -> None:
    """A new game is listed (live games, its people's games, the capped levels' live games),
    written and announced to the lobbies in one batch, in that order; a game whose id exists
    already is refused."""
    game_id = _game_id()
    redis = store.redis
    listing = store.listing(
        "esoloe", game_id, ["p-a", "bot-expert-00aa"], levels=["expert"], sponsor="p-a"
    )
    announcement = store.announcement(game_id, ["p-a", "bot-expert-00aa"], ["Ann", "bot"])
    assert store.announcement(game_id, ["bot-expert-00aa"], ["bot"]) is None
    state = RULES.new_game(1, {})
    meta = GameMeta.from_json(
        {"game": "esoloe", "seats": ["p-a", "bot-expert-00aa"], "options": {}, "seed": 1}
    )
    batches = store.group.batches
    await store.create(
        game_id, state.serialize(), meta, [], VersionStatus([], False), table=None,
        time_ms=0, listing=listing, announcement=announcement,
    )  # fmt: skip
    assert store.group.batches == batches + 1, "one round trip"
    assert await redis.zscore(keys.LIVE_GAMES, game_id) is not None
    assert await redis.zscore(keys.player_games("p-a"), game_id) is not None
    assert await redis.hexists(keys.player_live("p-a"), game_id)
    assert await redis.hexists(keys.level_live("expert"), game_id)
    assert (await store.load(game_id)) is not None
    entries: Any = await redis.xrange(keys.GAMES_STARTED)
    [started] = [e for _, e in entries if e[b"game_id"] == game_id.encode()]
    assert (started[b"players"], started[b"names"]) == (b'["p-a"]', b'["Ann"]')
    with pytest.raises(ValueError, match="exists already"):
        await _created(store, game_id)


async def test_batches_that_wait_leave_the_ttls_of_keys_kept_longer_than_games(
    redis_url: str,
) -> None:
    """Under Sentinel a batch sets its keys' TTL to a game's again: a new game's check of its
    player's live games goes in one, the day's deal (kept 30 days) does not."""
    client = connect_redis(redis_url)
    group = GroupCommit(client, replicas=lambda: 0, ttl_seconds=60, timeout_ms=100)
    players = PlayerStore(client, ttl_seconds=60, group=group)
    try:
        batches = group.batches
        await players.reserve("p-ttl", _game_id(), ["p-ttl", "p-other"], Limits())
        assert group.batches == batches + 1, "the check went in a batch"
        await players.deal_of_the_day("solace", "2026-12-07", "p-ttl", "solace-ttl")
        assert group.batches == batches + 1, "the deal went alone"
        assert await client.ttl(keys.daily_deal("solace", "2026-12-07")) > 60
    finally:
        await group.close()
        await client.aclose()


async def test_commits_started_together_go_as_one_batch_each_answered(store: GameStore) -> None:
    ids = [_game_id() for _ in range(8)]
    await asyncio.gather(*(_created(store, game_id) for game_id in ids))
    batches, seen = store.group.batches, _batches_seen()
    moves = [f"c{12 + i}" for i in range(len(ids))]
    commits = await asyncio.gather(
        *(_move(store, game_id, move=move) for game_id, move in zip(ids, moves, strict=True))
    )
    assert store.group.batches == batches + 1, "one batch"
    assert store.group.last_size == len(ids)
    assert _batches_seen() == seen + 1
    assert [(c.outcome, c.version, c.held) for c in commits] == [("OK", 1, None)] * len(ids)
    for game_id, move, commit in zip(ids, moves, commits, strict=True):
        stored = await store.load(game_id)
        assert stored is not None
        assert (stored.version, stored.snapshot, stored.tag) == (1, move.encode(), commit.tag)
        assert [e.move for e in await store.entries(game_id, 0)] == ["", move]


async def test_a_stale_move_a_retry_and_another_games_move_in_one_batch(store: GameStore) -> None:
    first, second = _game_id(), _game_id()
    await asyncio.gather(_created(store, first), _created(store, second))
    played = await _move(store, first, request_id="r-1", move="c12")
    assert (played.outcome, played.version) == ("OK", 1)
    before = await store.load(first)

    batches = store.group.batches
    stale, other, retried = await asyncio.gather(
        _move(store, first, version=0, request_id="r-2", move="e14"),  # judged on version 0
        _move(store, second, request_id="r-3", move="a12"),
        _move(store, first, version=0, request_id="r-1", move="c12"),  # the first one again
    )
    assert store.group.batches == batches + 1
    assert store.group.last_size == 3

    assert stale.outcome == "STALE"
    assert stale.current is not None
    assert (stale.version, stale.current.snapshot, stale.current.tag) == (1, b"c12", played.tag)
    assert (other.outcome, other.version) == ("OK", 1)
    assert (retried.outcome, retried.version) == ("DUPLICATE", 1), "answered by what is stored"

    after = await store.load(first, request_id="r-2")
    assert after == before, "the stale move changed nothing"
    assert [e.move for e in await store.entries(first, 0)] == ["", "c12"]
    assert [e.move for e in await store.entries(second, 0)] == ["", "a12"]


async def test_a_lone_commit_goes_at_once(store: GameStore) -> None:
    game_id = _game_id()
    await _created(store, game_id)
    batches, seen = store.group.batches, _batches_seen()
    commit = await _move(store, game_id)
    assert (commit.outcome, commit.version) == ("OK", 1)
    assert (store.group.batches, store.group.last_size) == (batches + 1, 1), "sent alone"
    assert _batches_seen() == seen + 1


async def test_a_caller_that_stops_waiting_leaves_the_batch_to_the_others(
    store: GameStore,
) -> None:
    ids = [_game_id() for _ in range(3)]
    await asyncio.gather(*(_created(store, game_id) for game_id in ids))
    batches = store.group.batches
    tasks = [asyncio.create_task(_move(store, game_id)) for game_id in ids]
    await eventually(lambda: store.group.batches > batches, 5, "the batch on its way", every=0)
    tasks[1].cancel()
    with pytest.raises(asyncio.CancelledError):
        await tasks[1]
    answered = [await tasks[0], await tasks[2]]
    assert [(c.outcome, c.version) for c in answered] == [("OK", 1)] * 2
    assert store.group.last_size == 3
    stored = await store.load(ids[1])
    assert stored is not None
    assert stored.version == 1, "its write went with the others"


async def test_a_closed_store_sends_no_more_writes(store: GameStore) -> None:
    game_id = _game_id()
    await _created(store, game_id)
    batches = store.group.batches
    queued = asyncio.create_task(_move(store, game_id))  # queued when the store closes
    await asyncio.sleep(0)
    await store.close()
    with pytest.raises((asyncio.CancelledError, ApiError)):
        await queued
    with pytest.raises(ApiError) as refused:
        await _move(store, game_id)
    assert refused.value.reason == "UNAVAILABLE"
    assert store.group.batches == batches
    stored = await store.load(game_id)
    assert stored is not None
    assert stored.version == 0


@pytest.fixture
def own_redis() -> Iterator[LocalRedis]:
    server = LocalRedis(appendonly=False)
    yield server
    server.stop()


async def test_a_batch_that_cannot_reach_redis_fails_each_write(own_redis: LocalRedis) -> None:
    client = connect_redis(own_redis.url)
    store = GameStore(client)
    try:
        ids = [_game_id() for _ in range(3)]
        await asyncio.gather(*(_created(store, game_id) for game_id in ids))
        own_redis.kill()
        batches = store.group.batches
        failed = await asyncio.gather(
            *(_move(store, game_id) for game_id in ids), return_exceptions=True
        )
        assert store.group.batches == batches + 1
        for error in failed:
            assert isinstance(error, ApiError), error
            assert error.reason == "UNAVAILABLE"
    finally:
        await client.aclose()


async def test_under_sentinel_a_batch_is_confirmed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    redis = await asyncio.to_thread(LocalRedisSentinel, replicas=1)
    for name, value in redis.sentinels_env.items():
        monkeypatch.setenv(name, value)
    client: Redis = connect_redis(redis.url)
    store = GameStore(client, wait_replicas=1, wait_timeout_ms=5000)
    try:
        manager: Any = client.connection_pool.sentinel_manager  # type: ignore[attr-defined]
        surveys: list[tuple[str, int]] = []
        survey = manager.survey

        async def counted(service_name: str, about: tuple[str, int] | None = None) -> Any:
            if about is not None:  # a confirmation (the follower asks about no node)
                surveys.append(about)
            return await survey(service_name, about)

        manager.survey = counted
        ids = [_game_id() for _ in range(6)]
        created = await asyncio.gather(*(_created(store, game_id) for game_id in ids))
        await asyncio.gather(*(store.confirm(held) for held in created))
        assert len(surveys) == 1, "the games were created in one batch"

        surveys.clear()
        batches = store.group.batches
        commits = await asyncio.gather(*(_move(store, game_id) for game_id in ids))
        assert store.group.batches == batches + 1
        assert [(c.outcome, c.version) for c in commits] == [("OK", 1)] * len(ids)
        held = commits[0].held
        assert held is not None
        assert all(c.held is held for c in commits), "one Held for the batch"
        assert held.enough
        assert held.node == ("127.0.0.1", redis.primary().port)
        await asyncio.gather(*(store.confirm(c.held) for c in commits))  # all acknowledged
        assert surveys == [held.node], "one Sentinel confirmation for the batch"
    finally:
        await client.aclose()
        await asyncio.to_thread(redis.stop)


async def test_closing_a_sentinel_client_ends_its_questions_still_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A survey that the first Sentinels' answers settle leaves the slow one's question out;
    closing the client ends it, so that none opens a connection after the close."""
    redis = await asyncio.to_thread(LocalRedisSentinel, replicas=1)
    for name, value in redis.sentinels_env.items():
        monkeypatch.setenv(name, value)
    client: Redis = connect_redis(redis.url)
    slow = redis.sentinels[0].process
    try:
        await client.ping()
        manager: Any = client.connection_pool.sentinel_manager  # type: ignore[attr-defined]
        await manager.survey(redis.MASTER_NAME)  # every Sentinel's client connected
        node = ("127.0.0.1", redis.primary().port)
        slow.send_signal(signal.SIGSTOP)
        survey = await manager.survey(redis.MASTER_NAME, node)
        assert survey.confirms(node), "two of three confirm it"
        (out,) = manager._stragglers
        assert not out.done(), "the stopped one's question is still out"
        await client.aclose()
        assert out.done()
    finally:
        slow.send_signal(signal.SIGCONT)
        await client.aclose()
        await asyncio.to_thread(redis.stop)


GAMES_IN_PLAY = 16
MOVES_EACH = 12


def _batches_sent(metrics_port: int) -> float:
    """The batches a replica process began to send so far (its /metrics)."""
    url = f"http://127.0.0.1:{metrics_port}/metrics"
    with urllib.request.urlopen(url, timeout=patience(5)) as reply:
        text = reply.read().decode()
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith("tabletop_commit_batch_size_count")
    )


async def test_a_replica_killed_with_batches_in_flight_loses_no_acknowledged_move() -> None:
    """Two e-SOLO-e replicas as processes behind a gateway, 16 games played at once (up to 12
    moves, or to their end), each move retried with its request id until it is answered. At
    their third move every game's Play is held back; Redis is stopped (SIGSTOP); the Plays go;
    the replica that sends a batch into the stopped Redis is killed (SIGKILL) and Redis goes
    on. What the dead replica sent may have been applied; the gateway tries those calls again
    on the other replica, which answers them from what is stored. Every game's log then holds
    exactly the moves its player was told were played, each at the version it was told, each
    request once."""
    redis = LocalRedis(appendonly=False)
    launch = Launch(
        redis_url=redis.url,
        env={"TOKEN_SECRET": TEST_SECRET,
             "RATE_LIMIT_PER_SECOND": "100000", "RATE_LIMIT_BURST": "100000",
             "GUEST_MAX_LIVE_GAMES": str(GAMES_IN_PLAY)},
        games=["esoloe"], replicas=2, lobby=False, matchmakers=0, bot_workers=0, quiet=True,
    )  # fmt: skip
    replicas = launch.of("game")
    metrics = [free_port() for _ in replicas]
    for replica, port in zip(replicas, metrics, strict=True):
        replica.env = {**replica.env, "METRICS_PORT": str(port)}
    session = Session(launch.gateway_targets[0])
    held_back, go, killed_now = 0, asyncio.Event(), asyncio.Event()
    playing = GAMES_IN_PLAY
    try:
        launch.start()
        assert await asyncio.to_thread(launch.ready, patience(60)), "the platform did not start"
        await session.login("batcher")
        stub = session.game("esoloe")
        created = await asyncio.gather(*(
            stub.CreateGame(esoloe_pb2.CreateGameRequest(players=[session.player_id] * 2),
                            metadata=session.metadata)
            for _ in range(GAMES_IN_PLAY)
        ))  # fmt: skip
        told: dict[str, list[tuple[int, str, str]]] = {c.status.game_id: [] for c in created}

        async def play(game_id: str) -> None:
            nonlocal held_back, playing
            for played in range(MOVES_EACH):
                view = await stub.GetView(
                    common_pb2.GetViewRequest(game_id=game_id, public=True),
                    metadata=session.metadata,
                )
                if view.status.finished:
                    break
                seat = view.status.to_act[0]
                legal = await stub.LegalMoves(
                    common_pb2.LegalMovesRequest(game_id=game_id, seat=seat),
                    metadata=session.metadata,
                )
                request = common_pb2.PlayRequest(
                    game_id=game_id, move=spread(legal.moves, played), seat=seat,
                    expected_version=legal.version, request_id=uuid.uuid4().hex,
                )  # fmt: skip
                if played == 2:
                    held_back += 1
                    await go.wait()
                while True:
                    try:
                        reply = await stub.Play(
                            request, metadata=session.metadata, timeout=patience(20)
                        )
                        break
                    except grpc.aio.AioRpcError as error:
                        if error.code() != grpc.StatusCode.UNAVAILABLE:  # the only one retried
                            raise
                        await asyncio.sleep(0.05)
                told[game_id].append((reply.status.version, request.move, request.request_id))
                if played == 2:
                    await killed_now.wait()
            playing -= 1

        players = [asyncio.create_task(play(game_id)) for game_id in told]
        await eventually(lambda: held_back == playing, 60, "every game's third move held back")
        before = [await asyncio.to_thread(_batches_sent, port) for port in metrics]
        os.kill(redis.process.pid, signal.SIGSTOP)
        try:
            go.set()

            def sending() -> int | None:
                after = [_batches_sent(port) for port in metrics]
                grown = [i for i, (b, a) in enumerate(zip(before, after, strict=True)) if a > b]
                return grown[0] if grown else None

            index = await asyncio.to_thread(eventually_sync, sending, 30, "a batch sent")
            replicas[index].send(signal.SIGKILL)
            await asyncio.to_thread(replicas[index].popen.wait)  # type: ignore[union-attr]
        finally:
            os.kill(redis.process.pid, signal.SIGCONT)
        killed_now.set()
        await asyncio.wait_for(asyncio.gather(*players), patience(120))

        client = connect_redis(redis.url)
        try:
            for game_id, moves in told.items():
                _, entries = await game_log.full(client, game_id)
                logged = [(e.version, e.move) for e in entries if e.version > 0]
                assert logged == [(v, m) for v, m, _ in moves], game_id
                assert [v for v, _, _ in moves] == list(range(1, len(moves) + 1)), game_id
                requests: dict[Any, Any] = await client.hgetall(keys.game_requests(game_id))
                for version, _, request_id in moves:
                    (held,) = [v for k, v in requests.items() if k.endswith(request_id.encode())]
                    assert int(held) == version, (game_id, request_id)
        finally:
            await client.aclose()
    finally:
        await session.close()
        launch.stop()
        redis.stop()
