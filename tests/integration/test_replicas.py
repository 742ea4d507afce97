"""Replicas hold no game state: two serve one game, and losing one loses nothing."""

from __future__ import annotations

import random

import grpc
import pytest
from google.protobuf import descriptor_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from client.session import Session
from runtime.server import REFLECTION_V1
from tabletop.common.v1 import common_pb2
from tabletop.esoloe.v1 import esoloe_pb2
from tests.platform import Platform
from wire.api import api
from wire.errors import error_info

pytestmark = pytest.mark.integration


async def _play_random(
    sessions: list[Session], game_id: str, rng: random.Random, plies: int
) -> list[str]:
    """Play up to `plies` random moves through the gateway; the moves accepted."""
    accepted = []
    stub = sessions[0].game("esoloe")
    for _ in range(plies):
        view = await stub.GetView(
            common_pb2.GetViewRequest(game_id=game_id), metadata=sessions[0].metadata
        )
        if view.status.finished:
            break
        player = sessions[view.view.to_move]
        legal = await stub.LegalMoves(
            common_pb2.LegalMovesRequest(game_id=game_id), metadata=player.metadata
        )
        move = rng.choice(list(legal.moves))
        reply = await stub.Play(
            common_pb2.PlayRequest(
                game_id=game_id, move=move, expected_version=view.status.version
            ),
            metadata=player.metadata,
        )
        assert reply.status.version == view.status.version + 1
        accepted.append(move)
    return accepted


async def test_game_survives_losing_a_replica(platform: Platform) -> None:
    alice, bob = Session(platform.target), Session(platform.target)
    await alice.login("alice")
    await bob.login("bob")
    created = await platform.create_game(
        "esoloe", esoloe_pb2.CreateGameRequest(players=[alice.player_id, bob.player_id])
    )
    game_id = created.status.game_id
    rng = random.Random(3)
    accepted = await _play_random([alice, bob], game_id, rng, 4)
    assert len(accepted) == 4

    await platform.replicas[0].stop(0)  # as abrupt as an in-process stop gets
    accepted += await _play_random([alice, bob], game_id, rng, 40)

    view = await alice.game("esoloe").GetView(
        common_pb2.GetViewRequest(game_id=game_id), metadata=alice.metadata
    )
    assert view.status.version == len(accepted)
    assert view.status.finished
    # Every accepted move is in the event log, once, in order.
    moves = [
        u.envelope.move
        async for u in alice.game("esoloe").Watch(
            common_pb2.WatchRequest(game_id=game_id, from_version=1), metadata=alice.metadata
        )
    ]
    assert moves == accepted


async def test_two_replicas_serve_one_game_interleaved(platform: Platform) -> None:
    """Calling the replicas directly, alternately, the game goes on as one."""
    alice, bob = "p-alice", "p-bob"
    stubs = [
        api("esoloe").stub(platform.internal_channel(platform.replica_target(i))) for i in range(2)
    ]
    created = await stubs[0].CreateGame(esoloe_pb2.CreateGameRequest(players=[alice, bob]))
    game_id = created.status.game_id
    for ply, move in enumerate(["a12", "b12", "c13", "d13"]):
        player = (alice, bob)[ply % 2]
        reply = await stubs[ply % 2].Play(
            common_pb2.PlayRequest(game_id=game_id, move=move),
            metadata=(("x-tabletop-player", player),),
        )
        assert reply.status.version == ply + 1
    view = await stubs[1].GetView(common_pb2.GetViewRequest(game_id=game_id, public=True))
    assert [len(s.cubes) for s in view.view.stacks] == [1, 1, 1, 1, 0]


async def test_health_reports_each_service(platform: Platform) -> None:
    async with grpc.aio.insecure_channel(platform.target) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        for name in ["", "tabletop.esoloe.v1.EsoloeService", "tabletop.lobby.v1.AuthService"]:
            reply = await health.Check(health_pb2.HealthCheckRequest(service=name))
            assert reply.status == health_pb2.HealthCheckResponse.SERVING, name
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await health.Check(health_pb2.HealthCheckRequest(service="tabletop.nope.v1.Nope"))
        assert caught.value.code() == grpc.StatusCode.NOT_FOUND


async def test_gateway_routes_only_public_game_methods(platform: Platform) -> None:
    """Methods that are not a game's public API are not reachable through the gateway."""
    async with grpc.aio.insecure_channel(platform.target) as channel:
        call: grpc.aio.UnaryUnaryMultiCallable[bytes, bytes] = channel.unary_unary(
            "/tabletop.esoloe.v1.EsoloeService/Admin"
        )
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await call(b"")
        assert caught.value.code() == grpc.StatusCode.UNIMPLEMENTED


async def test_a_replica_that_is_behind_never_applies_a_stale_move(platform: Platform) -> None:
    """Replica 0 wrote version 1, replica 1 version 2: replica 0's hint is behind. A move pinned
    to version 1 is refused with the current version; one pinned to 2, or unpinned, applies."""
    alice, bob = "p-alice", "p-bob"
    stubs = [
        api("esoloe").stub(platform.internal_channel(platform.replica_target(i))) for i in range(2)
    ]
    created = await stubs[0].CreateGame(esoloe_pb2.CreateGameRequest(players=[alice, bob]))
    game_id = created.status.game_id

    def as_player(player: str) -> tuple[tuple[str, str], ...]:
        return (("x-tabletop-player", player),)

    await stubs[0].Play(
        common_pb2.PlayRequest(game_id=game_id, move="a14"), metadata=as_player(alice)
    )
    await stubs[1].Play(
        common_pb2.PlayRequest(game_id=game_id, move="b26"), metadata=as_player(bob)
    )
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await stubs[0].Play(
            common_pb2.PlayRequest(game_id=game_id, move="b13", expected_version=1),
            metadata=as_player(bob),
        )
    assert caught.value.code() == grpc.StatusCode.ABORTED
    assert error_info(caught.value) == ("STALE_VERSION", {"version": "2"})
    reply = await stubs[0].Play(
        common_pb2.PlayRequest(game_id=game_id, move="c35", expected_version=2),
        metadata=as_player(alice),
    )
    assert reply.status.version == 3
    reply = await stubs[1].Play(
        common_pb2.PlayRequest(game_id=game_id, move="d14"), metadata=as_player(bob)
    )
    assert reply.status.version == 4
    # Bob may not move twice, whichever replica is asked and whatever it last saw.
    for stub in stubs:
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await stub.Play(
                common_pb2.PlayRequest(game_id=game_id, move="e12"), metadata=as_player(bob)
            )
        assert caught.value.code() == grpc.StatusCode.FAILED_PRECONDITION


async def test_reflection_v1_describes_the_public_services(platform: Platform) -> None:
    """Current tools (grpcurl, Postman, grpc-js reflection) ask grpc.reflection.v1 first."""
    async with grpc.aio.insecure_channel(platform.target) as channel:
        info = channel.stream_stream(
            f"/{REFLECTION_V1}/ServerReflectionInfo",
            request_serializer=reflection_pb2.ServerReflectionRequest.SerializeToString,
            response_deserializer=reflection_pb2.ServerReflectionResponse.FromString,
        )
        requests = [
            reflection_pb2.ServerReflectionRequest(list_services=""),
            reflection_pb2.ServerReflectionRequest(
                file_containing_symbol="tabletop.esoloe.v1.EsoloeService"
            ),
            reflection_pb2.ServerReflectionRequest(file_containing_symbol=REFLECTION_V1),
        ]
        replies = [reply async for reply in info(iter(requests))]
    names = {s.name for s in replies[0].list_services_response.service}
    assert {"tabletop.esoloe.v1.EsoloeService", "tabletop.lobby.v1.LobbyService"} <= names
    assert {REFLECTION_V1, "grpc.reflection.v1alpha.ServerReflection"} <= names
    for reply, file in [(replies[1], "tabletop/esoloe/v1/esoloe.proto"),
                        (replies[2], "grpc/reflection/v1/reflection.proto")]:  # fmt: skip
        found = reply.file_descriptor_response.file_descriptor_proto
        parsed = [descriptor_pb2.FileDescriptorProto.FromString(blob) for blob in found]
        assert file in {p.name for p in parsed}, reply


async def test_reflection_lists_the_public_services(platform: Platform) -> None:
    async with grpc.aio.insecure_channel(platform.target) as channel:
        stub = reflection_pb2_grpc.ServerReflectionStub(channel)
        request = reflection_pb2.ServerReflectionRequest(list_services="")
        async for reply in stub.ServerReflectionInfo(iter([request])):
            names = {s.name for s in reply.list_services_response.service}
            break
    assert {
        "tabletop.esoloe.v1.EsoloeService",
        "tabletop.lobby.v1.AuthService",
        "tabletop.lobby.v1.LobbyService",
        "grpc.health.v1.Health",
    } <= names
