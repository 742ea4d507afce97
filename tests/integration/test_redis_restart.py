"""Redis restarts mid-game (append-only persistence on): no accepted move is lost, services
reconnect by themselves, a watcher rides out the outage and sees every move once."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from redis.exceptions import ClusterDownError, ResponseError, SlotNotCoveredError
from redis.exceptions import ConnectionError as RedisConnectionError

from client.session import Session
from games.esoloe.rules import RULES
from runtime.localredis import LocalRedis
from runtime.redis import store_unreachable
from tabletop.common.v1 import common_pb2
from tabletop.esoloe.v1 import esoloe_pb2
from tabletop.lobby.v1 import lobby_pb2, lobby_pb2_grpc
from tests.platform import Platform, assert_refused, logged_in
from tests.timing import eventually, patience

pytestmark = pytest.mark.integration


@pytest.fixture
def own_redis() -> Iterator[LocalRedis]:
    server = LocalRedis(appendonly=True)
    yield server
    server.stop()


async def _play_until_accepted(
    session: Session, request: common_pb2.PlayRequest, refused: list[int]
) -> int:
    """Send a move, retrying UNAVAILABLE with the same request id (counting the refusals in
    `refused[0]`): the version it produced."""
    deadline = time.monotonic() + patience(10)
    while True:
        try:
            reply = await session.game("esoloe").Play(request, metadata=session.metadata)
            return int(reply.status.version)
        except grpc.aio.AioRpcError as error:
            if error.code() != grpc.StatusCode.UNAVAILABLE:
                raise
            refused[0] += 1
            assert time.monotonic() < deadline, "Redis never came back"
            await asyncio.sleep(0.1)


async def test_redis_restart_loses_nothing(own_redis: LocalRedis) -> None:
    async with Platform(own_redis.url) as platform:
        alice, bob = Session(platform.target), Session(platform.target)
        await alice.login("alice")
        await bob.login("bob")
        created = await platform.create_game(
            "esoloe", esoloe_pb2.CreateGameRequest(players=[alice.player_id, bob.player_id])
        )
        game_id = created.status.game_id
        watched: list[int] = []

        async def watch() -> None:
            stub = alice.game("esoloe")
            async for update in stub.Watch(
                common_pb2.WatchRequest(game_id=game_id, public=True), metadata=alice.metadata
            ):
                watched.append(update.envelope.version)

        watcher = asyncio.create_task(watch())
        rng = random.Random(5)
        state = RULES.new_game(0)
        players = [alice, bob]
        versions: list[int] = []
        refused = [0]
        while state.to_act():
            seat = state.to_act()[0]
            move = rng.choice(state.legal_moves(seat))
            request = common_pb2.PlayRequest(
                game_id=game_id, move=move, request_id=f"move-{len(versions)}"
            )
            outage = len(versions) == 5  # Redis goes down, a move is sent, Redis comes back
            if outage:
                await asyncio.to_thread(own_redis.down)
            playing = asyncio.create_task(_play_until_accepted(players[seat], request, refused))
            if outage:
                await eventually(lambda: refused[0] > 0, 10, "a move refused while Redis is down")
                await asyncio.to_thread(own_redis.up)
            versions.append(await playing)
            state, _ = state.apply(seat, move)
        assert versions == list(range(1, len(versions) + 1)), "a move was lost or applied twice"
        await asyncio.wait_for(watcher, timeout=patience(30))
        assert watched == list(range(len(versions) + 1))
        view = await alice.game("esoloe").GetView(
            common_pb2.GetViewRequest(game_id=game_id), metadata=alice.metadata
        )
        assert view.status.version == len(versions)
        assert view.status.finished


def test_store_unreachable_tells_outages_from_mistakes() -> None:
    """Outages (retry: UNAVAILABLE) are told apart from our own errors (which must surface)."""
    assert store_unreachable(ClusterDownError("CLUSTERDOWN The cluster is down"))
    assert store_unreachable(RedisConnectionError("Connection refused"))
    assert store_unreachable(SlotNotCoveredError("no node covers slot 12"))
    assert not store_unreachable(ResponseError("WRONGTYPE"))
    with pytest.raises(RuntimeError) as ours:
        raise RuntimeError("a bug of ours")
    assert not store_unreachable(ours.value)


async def test_lobby_calls_while_redis_is_down_are_unavailable(own_redis: LocalRedis) -> None:
    """Every lobby call that needs Redis answers UNAVAILABLE (safe to retry) while it is down,
    never a server error; once it is back the ticket is there."""
    async with Platform(own_redis.url) as platform:
        (alice,) = await logged_in(platform, "alice")
        lobby: Any = lobby_pb2_grpc.LobbyServiceStub(alice.channel)
        ticket = await lobby.FindMatch(
            lobby_pb2.FindMatchRequest(game="esoloe"), metadata=alice.metadata
        )
        await asyncio.to_thread(own_redis.down)
        by_id = lobby_pb2.WatchTicketRequest(ticket_id=ticket.ticket_id)
        calls = {
            "WatchTicket": anext(aiter(lobby.WatchTicket(by_id, metadata=alice.metadata))),
            "CancelTicket": lobby.CancelTicket(
                lobby_pb2.CancelTicketRequest(ticket_id=ticket.ticket_id), metadata=alice.metadata
            ),
            "FindMatch": lobby.FindMatch(
                lobby_pb2.FindMatchRequest(game="esoloe", level="greedy"), metadata=alice.metadata
            ),
        }
        for name, call in calls.items():
            message = await assert_refused(call, grpc.StatusCode.UNAVAILABLE, "UNAVAILABLE")
            assert "lobby cannot be reached" in message, name
        await asyncio.to_thread(own_redis.up)
        cancelled = await lobby.CancelTicket(
            lobby_pb2.CancelTicketRequest(ticket_id=ticket.ticket_id), metadata=alice.metadata
        )
        assert cancelled.state == lobby_pb2.TICKET_STATE_CANCELLED
