"""The gateway follows a service's replicas as they come and go (runtime/replicas.py): the name
it was given is resolved again every few seconds, calls reach replicas added within that time,
replicas removed get no new calls, and streams already open stay where they are.

Three e-SOLO-e replicas listen on the same port of 127.0.0.1, 127.0.0.2 and 127.0.0.3 (all
loopback on Linux); the name the gateway resolves answers whichever of them the test lists."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from client.session import Session
from gateway.server import Gateway, GatewaySettings
from runtime import replicas as replicas_module
from runtime.config import ServiceSettings
from runtime.localredis import free_port
from runtime.redis import connect_redis
from runtime.replicas import dns_name, lookup
from services.game.main import GameService, start_game_service
from services.lobby.main import LobbySettings, start_lobby_service
from services.matchmaker.matchmaker import Matchmaker
from tabletop.common.v1 import common_pb2
from tabletop.esoloe.v1 import esoloe_pb2
from tests.platform import TEST_INTERNAL_KEY, TEST_SECRET
from tests.timing import patience
from wire.api import api

pytestmark = pytest.mark.integration

HOSTS = ["127.0.0.1", "127.0.0.2", "127.0.0.3"]
NAME = "esoloe.replicas.test"


class Names:
    """What NAME resolves to, as the test says."""

    def __init__(self) -> None:
        self.listed = HOSTS[:1]

    async def lookup(self, host: str, port: int) -> str:
        assert host == NAME
        return "ipv4:" + ",".join(f"{address}:{port}" for address in self.listed)


@pytest_asyncio.fixture
async def replicas(redis_url: str) -> AsyncIterator[tuple[int, list[GameService]]]:
    port = free_port()
    services = []
    for host in HOSTS:
        settings = ServiceSettings(
            redis_url=redis_url, listen=f"{host}:{port}", grace_seconds=0.5,
            internal_key=TEST_INTERNAL_KEY,
        )  # fmt: skip
        services.append(await start_game_service("esoloe", settings))
    yield port, services
    for service in services:
        await service.server.stop(0)
        await service.close()


async def test_the_gateway_spreads_calls_to_replicas_as_they_come_and_go(
    replicas: tuple[int, list[GameService]], monkeypatch: pytest.MonkeyPatch
) -> None:
    port, services = replicas
    names = Names()
    monkeypatch.setattr(replicas_module, "lookup", names.lookup)
    gateway = Gateway(
        GatewaySettings(
            listen="127.0.0.1:0", token_secret=TEST_SECRET, internal_key=TEST_INTERNAL_KEY,
            backends={"esoloe": f"dns:///{NAME}:{port}"}, resolve_seconds=0.5,
            rate_per_second=10000.0, rate_burst=10000.0,
        )
    )  # fmt: skip
    await gateway.start()
    player = Session(f"127.0.0.1:{gateway.port}")
    try:
        await player.login("alice")
        stub = player.game("esoloe")
        created = await stub.CreateGame(
            esoloe_pb2.CreateGameRequest(players=[player.player_id] * 2), metadata=player.metadata
        )
        game_id = created.status.game_id
        request = common_pb2.GetViewRequest(game_id=game_id, seat=0)
        watch = stub.Watch(
            common_pb2.WatchRequest(game_id=game_id, seat=0), metadata=player.metadata
        )
        assert (await watch.read()).envelope.version == 0

        def served() -> list[int]:
            return [service.relay.calls for service in services]

        async def calls_until(spread: list[bool]) -> float:
            """Call until exactly the replicas marked in `spread` get new calls; seconds taken.
            Before: each is called 40 times; a replica left out must get none of them."""
            started = time.monotonic()
            while time.monotonic() - started < patience(30):
                before = served()
                for _ in range(40):
                    await stub.GetView(request, metadata=player.metadata)
                got = [after > was for after, was in zip(served(), before, strict=True)]
                if got == spread:
                    return time.monotonic() - started
            raise AssertionError(f"calls never reached exactly {spread}: {served()}")

        await calls_until([True, False, False])

        names.listed = HOSTS  # scaled out to three
        await calls_until([True, True, True])

        names.listed = HOSTS[:2]  # the third one removed
        await calls_until([True, True, False])

        # The Watch opened before any change is still on its channel and hears the next move.
        await stub.Play(
            common_pb2.PlayRequest(game_id=game_id, move="c12", seat=0), metadata=player.metadata
        )
        update = await asyncio.wait_for(watch.read(), timeout=patience(10))
        assert update.envelope.version == 1
        watch.cancel()
    finally:
        await player.close()
        await gateway.stop(0)


async def test_the_lobby_and_matchmakers_follow_the_replicas_too(
    redis_url: str, replicas: tuple[int, list[GameService]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """They create games (PlayAgainstBots, matches) on whichever replicas the name lists now."""
    port, _ = replicas
    names = Names()
    monkeypatch.setattr(replicas_module, "lookup", names.lookup)
    monkeypatch.setattr(replicas_module, "RESOLVE_SECONDS", 0.2)
    backends = {"esoloe": f"dns:///{NAME}:{port}"}
    lobby = await start_lobby_service(
        LobbySettings(
            redis_url=redis_url, listen="127.0.0.1:0", backends=backends,
            internal_key=TEST_INTERNAL_KEY,
        )
    )  # fmt: skip
    redis = connect_redis(redis_url)
    matchmaker = Matchmaker(
        redis=redis, backends=backends, consumer="m1", internal_key=TEST_INTERNAL_KEY
    )
    stop = asyncio.Event()
    running = asyncio.create_task(matchmaker.run(stop))
    followed = [lobby.channels["esoloe"], matchmaker.channels["esoloe"]]
    try:
        for listed in (HOSTS, HOSTS[:2]):
            names.listed = listed
            wanted = "ipv4:" + ",".join(f"{host}:{port}" for host in listed)
            deadline = time.monotonic() + patience(10)
            while [replicas.addresses for replicas in followed] != [wanted] * 2:
                assert time.monotonic() < deadline, [r.addresses for r in followed]
                await asyncio.sleep(0.05)
            with followed[0].using() as channel:  # and calls go there, proven as the lobby's
                created = (
                    await api("esoloe")
                    .stub(channel)
                    .CreateGame(
                        esoloe_pb2.CreateGameRequest(players=["p1", "p2"]), timeout=patience(10)
                    )
                )
            assert created.status.game_id
    finally:
        stop.set()
        await running
        await matchmaker.close()
        await redis.aclose()
        await lobby.server.stop(0)
        await lobby.close()


async def test_names_are_resolved_and_addresses_left_as_they_are() -> None:
    assert dns_name("dns:///solo:50052") == ("solo", 50052)
    assert dns_name("dns://10.0.0.10/solo.tabletop.svc:50052") == ("solo.tabletop.svc", 50052)
    assert dns_name("gateway:50050") == ("gateway", 50050)
    for fixed in ("127.0.0.1:50051", "ipv4:127.0.0.1:1,127.0.0.2:1", "[::1]:50051", "unix:/s"):
        assert dns_name(fixed) is None, fixed
    assert await lookup("localhost", 50051) in ("ipv4:127.0.0.1:50051", "ipv6:[::1]:50051")
