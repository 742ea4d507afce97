"""A crowd on one replica: watchers cost no Redis connection, slow ones are bounded, and every
per-player limit holds with its reason. Real Redis (one of the test's own, to count its
clients) and real gRPC servers."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from typing import Any

import grpc
import pytest
import pytest_asyncio
from grpc_health.v1 import health_pb2, health_pb2_grpc
from redis.asyncio import Redis

from runtime import keys
from runtime.fanout import StreamHub, TooSlow
from runtime.localredis import LocalRedis, LocalRedisCluster
from runtime.redis import connect_redis
from services.game.limits import Limits
from services.game.players import PlayerStore
from services.game.store import GameStore
from tabletop.common.v1 import common_pb2
from tabletop.esoloe.v1 import esoloe_pb2
from tabletop.lobby.v1 import lobby_pb2, lobby_pb2_grpc
from tabletop.solace.v1 import solace_pb2
from tabletop.solo.v1 import solo_pb2
from tests.integration.test_matchmaking import final, find
from tests.platform import TEST_INTERNAL_KEY, Platform, assert_refused, logged_in
from tests.timing import eventually, patience
from wire.api import LOBBY_SERVICE, api
from wire.errors import ApiError, error_info
from wire.metadata import PLAYER_METADATA
from wire.players import new_bot_id
from wire.proof import prove

pytestmark = pytest.mark.integration

WATCHERS = 1000


@pytest.fixture
def own_redis() -> Iterator[LocalRedis]:
    server = LocalRedis(appendonly=False)
    try:
        yield server
    finally:
        server.stop()


async def _clients(redis: Redis, name: str) -> int:
    """Connections to Redis named `name` (CLIENT LIST)."""
    listed: Any = await redis.client_list()
    return sum(1 for client in listed if client.get("name") == name)


WATCH = "/tabletop.esoloe.v1.EsoloeService/Watch"
WATCH_TICKET = "/tabletop.lobby.v1.LobbyService/WatchTicket"


async def _serving(target: str, service: str) -> bool:
    async with grpc.aio.insecure_channel(target) as channel:
        reply = await health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(service=service), timeout=patience(5)
        )
    return bool(reply.status == health_pb2.HealthCheckResponse.SERVING)


async def test_a_thousand_watchers_hold_no_redis_connection(own_redis: LocalRedis) -> None:
    """1,000 Watch streams on one replica (100 games x 10) all get every move, while another
    player's calls succeed, health stays SERVING and the replica's Redis connections stay within
    its bound (16)."""
    async with Platform(own_redis.url) as platform:
        target = platform.replica_target(0)
        channel = platform.internal_channel(target)
        stub = api("esoloe").stub(channel)
        games = [
            (
                await stub.CreateGame(esoloe_pb2.CreateGameRequest(players=["p-a", "p-b"]))
            ).status.game_id
            for _ in range(WATCHERS // 10)
        ]
        seen: dict[str, list[list[int]]] = {g: [] for g in games}

        async def watch(game_id: str, index: int) -> None:
            versions: list[int] = []
            seen[game_id].append(versions)
            request = common_pb2.WatchRequest(game_id=game_id, from_version=0)
            watcher = prove(
                TEST_INTERNAL_KEY,
                WATCH,
                ((PLAYER_METADATA, f"w-{index}"),),
                body=request.SerializeToString(),
            )
            async for update in stub.Watch(request, metadata=watcher):
                versions.append(update.envelope.version)
                if update.envelope.version == 2:
                    return

        watching = [asyncio.create_task(watch(game_id, i)) for i in range(10) for game_id in games]
        redis = Redis.from_url(own_redis.url)
        try:
            hub = platform.services[0].hub
            await eventually(lambda: hub.count == WATCHERS, 30, "every watcher is in")
            assert await _clients(redis, "game-esoloe") <= 16
            # Another player, meanwhile: a new game and moves answer at once.
            (other,) = await logged_in(platform, "other")
            created = await other.game("esoloe").CreateGame(
                esoloe_pb2.CreateGameRequest(players=[other.player_id] * 2),
                metadata=other.metadata,
            )
            assert created.status.version == 0
            for version, move in enumerate(["c12", "c13"]):
                for game_id in games:
                    await stub.Play(
                        common_pb2.PlayRequest(
                            game_id=game_id, move=move, expected_version=version
                        ),
                        metadata=((PLAYER_METADATA, "p-a" if version == 0 else "p-b"),),
                    )
            assert await _serving(target, api("esoloe").full_name)
            await asyncio.wait_for(asyncio.gather(*watching), patience(30))
            assert all(v == [0, 1, 2] for lists in seen.values() for v in lists)
            assert await _clients(redis, "game-esoloe") <= 16
        finally:
            for task in watching:
                task.cancel()
            await redis.aclose()
            await channel.close()


async def test_a_thousand_ticket_watchers_hold_no_redis_connection(own_redis: LocalRedis) -> None:
    async with Platform(own_redis.url) as platform:
        assert platform.lobby is not None
        channel = platform.internal_channel(f"127.0.0.1:{platform.lobby.server.port}")
        lobby: Any = lobby_pb2_grpc.LobbyServiceStub(channel)
        tickets = []
        for index in range(WATCHERS):
            as_player = ((PLAYER_METADATA, f"p-crowd-{index}"),)
            ticket = await lobby.FindMatch(
                lobby_pb2.FindMatchRequest(game="esoloe"), metadata=as_player
            )
            tickets.append((ticket.ticket_id, as_player))
        states: list[list[int]] = []

        async def watch(ticket_id: str, as_player: Any) -> None:
            found: list[int] = []
            states.append(found)
            request = lobby_pb2.WatchTicketRequest(ticket_id=ticket_id)
            watcher = prove(
                TEST_INTERNAL_KEY, WATCH_TICKET, as_player, body=request.SerializeToString()
            )
            async for ticket in lobby.WatchTicket(request, metadata=watcher):
                found.append(ticket.state)

        watching = [asyncio.create_task(watch(*ticket)) for ticket in tickets]
        redis = Redis.from_url(own_redis.url)
        try:
            hub = platform.lobby.hub
            await eventually(lambda: hub.count == WATCHERS, 30, "every watcher is in")
            assert await _clients(redis, "lobby") <= 16
            assert await _serving(f"127.0.0.1:{platform.lobby.server.port}", LOBBY_SERVICE)
            for ticket_id, as_player in tickets:
                await lobby.CancelTicket(
                    lobby_pb2.CancelTicketRequest(ticket_id=ticket_id), metadata=as_player
                )
            await asyncio.wait_for(asyncio.gather(*watching), patience(30))
            queued, cancelled = lobby_pb2.TICKET_STATE_QUEUED, lobby_pb2.TICKET_STATE_CANCELLED
            assert all(found == [queued, cancelled] for found in states)
        finally:
            for task in watching:
                task.cancel()
            await redis.aclose()
            await channel.close()


async def test_a_slow_watcher_is_served_in_steps_then_cut_and_resumes_exactly(
    redis_url: str,
) -> None:
    """A watcher holds at most max_pending entries: a long history comes in steps; one that
    stops reading is cut (TooSlow) after stall_seconds, and resuming from what it took gives
    the rest, with no gap and no duplicate."""
    redis = connect_redis(redis_url)
    stream = f"test:fanout:{id(object())}"
    channel = keys.changed_channel(stream)
    hub = StreamHub(redis, poll_seconds=0.1, max_pending=4, stall_seconds=0.5)
    await hub.start()
    try:
        ids: list[Any] = [await redis.xadd(stream, {"n": str(n)}) for n in range(10)]
        reader = hub.watch(stream, "0-0")
        got: list[bytes] = []
        while len(got) < 10:  # ten entries through a queue of four
            entries = await asyncio.wait_for(reader.next(), patience(5))
            got += [fields[b"n"] for _, fields in entries]
        assert got == [str(n).encode() for n in range(10)]
        reader.close()
        stuck = hub.watch(stream, ids[3].decode())  # has taken 0..3, takes nothing more
        for n in range(10, 20):
            await redis.xadd(stream, {"n": str(n)})
            await redis.publish(channel, stream)
        await eventually(lambda: stuck.too_slow, 5, "the watcher that reads nothing is cut")
        with pytest.raises(TooSlow) as cut:
            await stuck.next()
        assert cut.value.after == ids[3].decode()
        stuck.close()
        resumed = hub.watch(stream, cut.value.after)
        rest: list[bytes] = []
        while len(rest) < 16:
            rest += [
                fields[b"n"] for _, fields in await asyncio.wait_for(resumed.next(), patience(5))
            ]
        assert rest == [str(n).encode() for n in range(4, 20)]
        assert hub.count == 1
    finally:
        await hub.stop()
        await redis.delete(stream)
        await redis.aclose()


async def test_a_hub_hears_only_of_the_streams_its_watchers_follow(redis_url: str) -> None:
    """A hub subscribes to the channel of each stream watched in it, from its first watcher to
    its last (so a process does not hear every move of its kind), and hears an entry on it at
    once, long before its poll would look."""
    redis = connect_redis(redis_url)
    tag = id(object())
    watched, other = f"test:fanout:{tag}:watched", f"test:fanout:{tag}:other"
    hub = StreamHub(redis, poll_seconds=600)
    await hub.start()

    async def subscribers(stream: str) -> int:
        counts = await redis.pubsub_numsub(keys.changed_channel(stream))
        return int(counts[0][1])

    async def subscribed() -> bool:
        return await subscribers(watched) == 1

    async def left() -> bool:
        return await subscribers(watched) == 0

    try:
        after = "0-0"
        for n in range(2):  # subscribed again after the last watcher left
            reader = hub.watch(watched, after)
            await eventually(subscribed, 5, "the stream's channel subscribed")
            assert await subscribers(other) == 0
            added: Any = await redis.xadd(watched, {"n": str(n)})
            after = added.decode()
            await redis.publish(keys.changed_channel(watched), watched)
            entries = await asyncio.wait_for(reader.next(), patience(5))
            assert [fields[b"n"] for _, fields in entries] == [str(n).encode()]
            reader.close()
            await eventually(left, 5, "the channel left with its last watcher")
    finally:
        await hub.stop()
        await redis.delete(watched)
        await redis.aclose()


async def test_on_a_redis_cluster_a_new_hub_hears_notifications_at_once() -> None:
    """A hub started on a fresh cluster client (nothing asked of the cluster yet) subscribes and
    delivers a new entry on its notification, long before its poll would. Its subscription
    once died at start (the client knew no slots yet), leaving watchers on the 10 s poll."""
    cluster = await asyncio.to_thread(LocalRedisCluster, masters=3, appendonly=False)
    redis = connect_redis(cluster.url, cluster=True)
    writer = connect_redis(cluster.url, cluster=True)
    stream = "test:fanout:{cluster}"
    channel = keys.changed_channel(stream)
    hub = StreamHub(redis, poll_seconds=600)
    await hub.start()
    try:
        reader = hub.watch(stream, "0-0")

        async def notified() -> list[Any] | None:
            """The entries a notification brought, if any came soon after it (the hub may not
            have subscribed yet: then the next notification is heard)."""
            await writer.publish(channel, stream)
            try:
                return await asyncio.wait_for(reader.next(), 0.5)
            except TimeoutError:
                return None

        for n in range(3):
            await writer.xadd(stream, {"n": str(n)})
            entries = await eventually(notified, 5, "a notification is heard", every=0)
            assert [fields[b"n"] for _, fields in entries] == [str(n).encode()]
        reader.close()
    finally:
        await hub.stop()  # raises what killed a hub task, if anything did
        await redis.aclose()
        await writer.aclose()
        await asyncio.to_thread(cluster.stop)


async def test_a_watch_past_the_games_next_version_is_refused(platform: Platform) -> None:
    (alice,) = await logged_in(platform, "alice")
    stub = alice.game("esoloe")
    created = await stub.CreateGame(
        esoloe_pb2.CreateGameRequest(players=[alice.player_id] * 2), metadata=alice.metadata
    )
    stream = stub.Watch(
        common_pb2.WatchRequest(game_id=created.status.game_id, from_version=5, public=True),
        metadata=alice.metadata,
    )
    await assert_refused(
        stream.read(), grpc.StatusCode.INVALID_ARGUMENT, "INVALID_ARGUMENT", "0..1", "version 0"
    )


@pytest_asyncio.fixture
async def limited(redis_url: str) -> AsyncIterator[Platform]:
    async with Platform(redis_url, games=("esoloe", "solo")) as running:
        yield running


async def test_limits_count_every_live_game_however_many_tables_came_and_went(
    redis_url: str,
) -> None:
    """The attack that got through a window of the 50 most recent games: three strong-bot
    games, then 55 throw-away Solace tables (made and resigned) to push them out of sight.
    The limits count the live games themselves: a fourth strong-bot game is still refused,
    and ListGames(live_only) still lists all three."""
    async with Platform(redis_url, games=("esoloe", "solace")) as platform:
        (player,) = await logged_in(platform, "pusher")
        lobby: Any = lobby_pb2_grpc.LobbyServiceStub(player.channel)
        strong = lobby_pb2.PlayAgainstBotsRequest(game="esoloe", level="strong")
        held = {
            (await lobby.PlayAgainstBots(strong, metadata=player.metadata)).status.game_id
            for _ in range(3)
        }
        solace = player.game("solace")
        for _ in range(55):
            table = await solace.CreateGame(
                solace_pb2.CreateGameRequest(players=[player.player_id]), metadata=player.metadata
            )
            await solace.Resign(
                common_pb2.ResignRequest(game_id=table.status.game_id), metadata=player.metadata
            )
        await assert_refused(
            lobby.PlayAgainstBots(strong, metadata=player.metadata),
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            "LIMIT_REACHED",
            "3 games against strong bots",
        )
        listed = await lobby.ListGames(
            lobby_pb2.ListGamesRequest(live_only=True), metadata=player.metadata
        )
        assert {g.status.game_id for g in listed.games} == held


async def test_tables_made_at_the_same_moment_cannot_pass_a_limit_together(
    redis_url: str,
) -> None:
    """Twenty CreateGame calls at once for a player with room for five: five are made."""
    limits = Limits(live_games=5)
    async with Platform(redis_url, limits=limits) as platform:
        (player,) = await logged_in(platform, "racer")
        esoloe = player.game("esoloe")
        request = esoloe_pb2.CreateGameRequest(players=[player.player_id] * 2)
        answers = await asyncio.gather(
            *(esoloe.CreateGame(request, metadata=player.metadata) for _ in range(20)),
            return_exceptions=True,
        )
        made = [a for a in answers if not isinstance(a, BaseException)]
        refused = [error_info(a)[0] for a in answers if isinstance(a, grpc.aio.AioRpcError)]
        assert len(made) == 5
        assert refused == ["LIMIT_REACHED"] * 15


async def test_a_finished_game_left_among_the_live_ones_is_dropped_when_it_counts(
    redis_url: str,
) -> None:
    """A service that stopped between a game's last move and unlisting it left it among the
    player's live games: when that would refuse a new game, it is found finished and dropped."""
    limits = Limits(live_games=1)
    async with Platform(redis_url, games=("solace",), limits=limits) as platform:
        (player,) = await logged_in(platform, "survivor")
        solace = player.game("solace")
        request = solace_pb2.CreateGameRequest(players=[player.player_id])
        first = await solace.CreateGame(request, metadata=player.metadata)
        game_id = first.status.game_id
        await solace.Resign(common_pb2.ResignRequest(game_id=game_id), metadata=player.metadata)
        redis = Redis.from_url(redis_url)
        try:  # as the stopped service left it
            await redis.hset(keys.player_live(player.player_id), game_id, "1:")
            second = await solace.CreateGame(request, metadata=player.metadata)
            live: Any = await redis.hkeys(keys.player_live(player.player_id))
        finally:
            await redis.aclose()
        assert [g.decode() for g in live] == [second.status.game_id]


async def test_each_per_player_limit_is_refused_with_its_reason(limited: Platform) -> None:
    (player,) = await logged_in(limited, "greedy-guest")
    lobby: Any = lobby_pb2_grpc.LobbyServiceStub(player.channel)

    async def against_bots(level: str, **fields: Any) -> Any:
        return await lobby.PlayAgainstBots(
            lobby_pb2.PlayAgainstBotsRequest(game="esoloe", level=level, **fields),
            metadata=player.metadata,
        )

    for _ in range(3):  # strong bots: 3 at once
        await against_bots("strong")
    message = await assert_refused(
        against_bots("strong"),
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        "LIMIT_REACHED",
        "3 games against strong bots",
    )
    assert "at most 3" in message
    for _ in range(7):  # bots of any level: 10 at once
        await against_bots("random", watch_only=True)
    await assert_refused(
        against_bots("greedy"), grpc.StatusCode.RESOURCE_EXHAUSTED, "LIMIT_REACHED", "10 games"
    )
    listed = await lobby.ListGames(lobby_pb2.ListGamesRequest(), metadata=player.metadata)
    assert len(listed.games) == 10  # the games watched count: they show among the player's
    # Live games of any kind: 20 at once (tables of their own here).
    for _ in range(10):
        await player.game("esoloe").CreateGame(
            esoloe_pb2.CreateGameRequest(players=[player.player_id] * 2),
            metadata=player.metadata,
        )
    await assert_refused(
        player.game("esoloe").CreateGame(
            esoloe_pb2.CreateGameRequest(players=[player.player_id] * 2),
            metadata=player.metadata,
        ),
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        "LIMIT_REACHED",
        "20 games going on",
    )


async def test_option_bounds_keep_games_finite(limited: Platform) -> None:
    (player,) = await logged_in(limited, "long-game")
    lobby: Any = lobby_pb2_grpc.LobbyServiceStub(player.channel)
    huge = lobby_pb2.GameOptions(solo=solo_pb2.Options(start_points=1_000_000))
    await assert_refused(
        lobby.PlayAgainstBots(
            lobby_pb2.PlayAgainstBotsRequest(game="solo", options=huge), metadata=player.metadata
        ),
        grpc.StatusCode.INVALID_ARGUMENT,
        "INVALID_OPTIONS",
        "start_points may be at most 1000",
    )
    long = lobby_pb2.GameOptions(solo=solo_pb2.Options(start_points=500, players=10))
    await assert_refused(
        lobby.PlayAgainstBots(
            lobby_pb2.PlayAgainstBotsRequest(game="solo", options=long, watch_only=True),
            metadata=player.metadata,
        ),
        grpc.StatusCode.INVALID_ARGUMENT,
        "INVALID_OPTIONS",
        "at most 200 at a table with no person",
    )
    with_person = await lobby.PlayAgainstBots(
        lobby_pb2.PlayAgainstBotsRequest(game="solo", options=long), metadata=player.metadata
    )
    assert with_person.status.game == "solo"


async def test_a_player_holds_a_bounded_number_of_streams(platform: Platform) -> None:
    (alice,) = await logged_in(platform, "streamer")
    stub = alice.game("esoloe")
    created = await stub.CreateGame(
        esoloe_pb2.CreateGameRequest(players=[alice.player_id] * 2), metadata=alice.metadata
    )
    request = common_pb2.WatchRequest(game_id=created.status.game_id, public=True)
    streams = [stub.Watch(request, metadata=alice.metadata) for _ in range(16)]
    for stream in streams:
        assert (await stream.read()).envelope.version == 0
    extra = stub.Watch(request, metadata=alice.metadata)
    await assert_refused(
        extra.read(), grpc.StatusCode.RESOURCE_EXHAUSTED, "LIMIT_REACHED", "at most 16"
    )
    streams[0].cancel()

    async def another() -> Any:
        """A new stream and its first update, once the gateway has seen the closed one go."""
        stream = stub.Watch(request, metadata=alice.metadata)
        try:
            return stream, await stream.read()
        except grpc.aio.AioRpcError as error:
            if error_info(error)[0] != "LIMIT_REACHED":
                raise
            return None

    again, first = await eventually(another, 2, "a stream opens once one is closed")
    assert first.envelope.version == 0
    for stream in [*streams, again]:
        with contextlib.suppress(Exception):
            stream.cancel()


async def test_bot_seats_name_real_levels_and_the_level_is_part_of_the_pool(
    platform: Platform,
) -> None:
    alice, bob = await logged_in(platform, "alice", "bob")
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await platform.create_game(
            "esoloe", esoloe_pb2.CreateGameRequest(players=["p-a", "bot-zzz-deadbeef"])
        )
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert new_bot_id("strong").startswith("bot-strong-")
    # Two tickets for the same game that differ only in their bots' level wait apart.
    lobby: Any = lobby_pb2_grpc.LobbyServiceStub(alice.channel)
    for session, level in [(alice, "random"), (bob, "strong")]:
        await lobby.FindMatch(
            lobby_pb2.FindMatchRequest(
                game="esoloe", level=level, bots=lobby_pb2.BOT_FILL_AFTER, bots_after_seconds=600
            ),
            metadata=session.metadata,
        )
    redis = Redis.from_url(platform.redis_url)
    try:
        members: Any = await redis.smembers(keys.POOLS)
        pools = {p.decode() for p in members}
    finally:
        await redis.aclose()
    mine = [p for p in pools if p.startswith("esoloe:2:") and p.endswith("after600")]
    assert {p.split(":")[-2] for p in mine} >= {"random", "strong"}


# -- platform-wide caps of a bot level, and each player's fair share ------------------------------


def _strong(*, watch_only: bool = True) -> lobby_pb2.PlayAgainstBotsRequest:
    return lobby_pb2.PlayAgainstBotsRequest(game="esoloe", level="strong", watch_only=watch_only)


async def _refused_for(call: Any, limit: str, most: str, *words: str) -> None:
    """Await a call that must be refused LIMIT_REACHED for `limit` at `most`."""
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call
    error = caught.value
    reason, info = error_info(error)
    assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, error.details()
    assert (reason, info.get("limit"), info.get("max")) == ("LIMIT_REACHED", limit, most)
    for word in words:
        assert word in (error.details() or ""), error.details()


async def _listed(redis: Redis, key: str) -> dict[str, str]:
    """A hash of live games: game id -> what follows the created time (a level's list: the
    player each game counts for)."""
    found: Any = await redis.hgetall(key)
    return {k.decode(): v.decode().partition(":")[2] for k, v in found.items()}


async def test_strong_bots_are_capped_platform_wide_and_shared_fairly(
    own_redis: LocalRedis,
) -> None:
    """Room for 4 games against strong bots on the whole platform (10 a player): from 2 on,
    each player holds at most an equal share of the places left, so the greedy player stops
    at 2 while others still get one; at 4 everyone is refused, the lobby's FindMatch too.
    The platform's list holds exactly the live games, whom they count for, as games are
    made, refused, stopped and resigned."""
    limits = Limits(bot_games_by_level={"strong": 10}, platform_bot_games_by_level={"strong": 4})
    async with Platform(own_redis.url, limits=limits) as platform:
        greedy, modest, late, last = await logged_in(platform, "greedy", "modest", "late", "last")

        async def strong(session: Any, *, watch_only: bool = True) -> str:
            lobby = lobby_pb2_grpc.LobbyServiceStub(session.channel)
            reply = await lobby.PlayAgainstBots(
                _strong(watch_only=watch_only), metadata=session.metadata
            )
            return str(reply.status.game_id)

        def lobby_of(session: Any) -> Any:
            return lobby_pb2_grpc.LobbyServiceStub(session.channel)

        g1, g2 = await strong(greedy), await strong(greedy)
        await _refused_for(
            lobby_of(greedy).PlayAgainstBots(_strong(), metadata=greedy.metadata),
            "strong_bot_games_share", "2", "equal share", "you hold 2",
        )  # fmt: skip
        m1 = await strong(modest, watch_only=False)
        await _refused_for(
            lobby_of(modest).PlayAgainstBots(_strong(), metadata=modest.metadata),
            "strong_bot_games_share", "1", "you hold 1",
        )  # fmt: skip
        l1 = await strong(late)
        for call in (
            lobby_of(last).PlayAgainstBots(_strong(), metadata=last.metadata),
            lobby_of(last).FindMatch(
                lobby_pb2.FindMatchRequest(
                    game="esoloe", level="strong", bots=lobby_pb2.BOT_FILL_NOW
                ),
                metadata=last.metadata,
            ),
        ):
            await _refused_for(
                call, "platform_strong_bot_games", "4", "as many as it runs at once (4)"
            )
        redis = Redis.from_url(own_redis.url)
        try:
            strong_games = keys.level_live("strong")
            ids = {g1: greedy, g2: greedy, m1: modest, l1: late}
            assert await _listed(redis, strong_games) == {g: s.player_id for g, s in ids.items()}
            for session, held in ((greedy, {g1, g2}), (modest, {m1}), (last, set())):
                assert set(await _listed(redis, keys.player_live(session.player_id))) == held
            await greedy.game("esoloe").StopGame(
                common_pb2.StopGameRequest(game_id=g1), metadata=greedy.metadata
            )
            x1 = await strong(last)  # the place the stop freed
            await modest.game("esoloe").Resign(
                common_pb2.ResignRequest(game_id=m1), metadata=modest.metadata
            )
            ids = {g2: greedy, l1: late, x1: last}
            assert await _listed(redis, strong_games) == {g: s.player_id for g, s in ids.items()}
        finally:
            await redis.aclose()
        for session in (greedy, modest, late, last):
            await session.close()


async def test_games_made_at_the_same_moment_cannot_pass_the_platform_cap(
    own_redis: LocalRedis,
) -> None:
    """Twelve players ask for a game against strong bots at once, with room for three on the
    platform: three are made, nine refused, and the platform's list and the players' own
    lists hold the three only."""
    limits = Limits(platform_bot_games_by_level={"strong": 3})
    async with Platform(own_redis.url, limits=limits) as platform:
        players = await logged_in(platform, *(f"racer-{n}" for n in range(12)))
        answers = await asyncio.gather(
            *(
                lobby_pb2_grpc.LobbyServiceStub(p.channel).PlayAgainstBots(
                    _strong(), metadata=p.metadata
                )
                for p in players
            ),
            return_exceptions=True,
        )
        made = {a.status.game_id for a in answers if not isinstance(a, BaseException)}
        refused = [
            error_info(a)[1].get("limit") for a in answers if isinstance(a, grpc.aio.AioRpcError)
        ]
        assert len(made) == 3
        assert refused == ["platform_strong_bot_games"] * 9
        redis = Redis.from_url(own_redis.url)
        try:
            assert set(await _listed(redis, keys.level_live("strong"))) == made
            listed = [await _listed(redis, keys.player_live(p.player_id)) for p in players]
            assert {g for games in listed for g in games} == made  # the refused: nowhere
        finally:
            await redis.aclose()
        for player in players:
            await player.close()


async def test_a_finished_or_vanished_game_left_on_the_platforms_list_is_dropped(
    own_redis: LocalRedis,
) -> None:
    """A process that stopped between a game's end and its unlisting (or between listing a
    game and making it) left it on the platform's list of strong-bot games: when that would
    refuse a new game, it is found finished (or gone) and dropped."""
    limits = Limits(platform_bot_games_by_level={"strong": 2})
    async with Platform(own_redis.url, limits=limits) as platform:
        first, second = await logged_in(platform, "first", "second")
        lobby = lobby_pb2_grpc.LobbyServiceStub(first.channel)
        ended = (await lobby.PlayAgainstBots(_strong(), metadata=first.metadata)).status.game_id
        await first.game("esoloe").StopGame(
            common_pb2.StopGameRequest(game_id=ended), metadata=first.metadata
        )
        redis = Redis.from_url(own_redis.url)
        try:
            strong_games = keys.level_live("strong")
            assert await _listed(redis, strong_games) == {}
            ghost = "esoloe-" + "0" * 20  # never made, listed long ago
            await redis.hset(strong_games, mapping={ended: f"1:{first.player_id}", ghost: "1:"})
            made = await lobby_pb2_grpc.LobbyServiceStub(second.channel).PlayAgainstBots(
                _strong(), metadata=second.metadata
            )
            assert await _listed(redis, strong_games) == {made.status.game_id: second.player_id}
        finally:
            await redis.aclose()
        await first.close()
        await second.close()


async def test_a_matchmade_game_with_strong_bots_counts_on_the_platform_until_it_ends(
    own_redis: LocalRedis,
) -> None:
    """A game the matchmaker makes with a strong bot (its ticket checked when queued) is on the
    platform's list of strong-bot games, for its person, as it is made, and leaves it as it
    ends."""
    async with Platform(own_redis.url, matchmakers=1) as platform:
        (player,) = await logged_in(platform, "matched")
        ticket = await find(player, "esoloe", level="strong", bots=lobby_pb2.BOT_FILL_NOW)
        matched = await final(player, ticket.ticket_id)
        redis = Redis.from_url(own_redis.url)
        try:
            strong_games = keys.level_live("strong")
            assert await _listed(redis, strong_games) == {matched.game_id: player.player_id}
            await player.game("esoloe").Resign(
                common_pb2.ResignRequest(game_id=matched.game_id), metadata=player.metadata
            )
            assert await _listed(redis, strong_games) == {}
        finally:
            await redis.aclose()
        await player.close()


async def test_the_platform_list_and_a_players_list_work_on_a_redis_cluster() -> None:
    """On a Redis Cluster, a player's live games and the platform's list of strong-bot games
    are in different slots: each is checked and joined by a script of its own, a refusal by the
    platform's takes the game off the player's, and closing a game takes it off both."""
    cluster = await asyncio.to_thread(LocalRedisCluster, masters=3, appendonly=False)
    redis = connect_redis(cluster.url, cluster=True)
    store, players = GameStore(redis), PlayerStore(redis)
    limits = Limits(platform_bot_games_by_level={"strong": 1})
    first, second = "esoloe-" + "1" * 20, "esoloe-" + "2" * 20
    seats = [new_bot_id("strong"), new_bot_id("strong")]
    try:
        await players.reserve("p-first", first, seats, limits)
        with pytest.raises(ApiError) as refused:
            await players.reserve("p-second", second, seats, limits)
        assert refused.value.metadata["limit"] == "platform_strong_bot_games"
        assert await players.live("p-second") == {}
        await store.closed(first, [*seats, "p-first"])
        assert await players.live("p-first") == {}
        await players.reserve("p-second", second, seats, limits)
        assert await _listed(redis, keys.level_live("strong")) == {second: "p-second"}
    finally:
        await redis.aclose()
        await asyncio.to_thread(cluster.stop)
