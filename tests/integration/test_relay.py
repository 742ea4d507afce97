"""The gateway's relay links to the game services: many calls on one stream, each answered as if
it had been a call of its own; the calls (and the answers) ready together go in one frame;
links spread over replicas, renew, survive replicas that stop."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2
from prometheus_client import REGISTRY

from client.session import Session
from gateway.auth import Identity
from gateway.relay import ATTEMPTS, Relay, status_code
from gateway.server import Backend, Proxy
from runtime.localredis import free_port
from runtime.relay import (
    FRAMES_METHOD,
    RELAY_METHOD,
    Outbox,
    RelayServicer,
    frame_of,
    relayed_fields,
)
from runtime.replicas import Replicas
from runtime.server import Server
from tabletop.common.v1 import common_pb2
from tabletop.esoloe.v1 import esoloe_pb2
from tabletop.relay.v1 import relay_pb2
from tests.platform import TEST_INTERNAL_KEY, Platform, assert_refused, logged_in
from tests.timing import eventually, patience
from wire.api import api
from wire.errors import ApiError
from wire.proof import FRESH_SECONDS, proof, prove

pytestmark = pytest.mark.integration

ESOLOE = api("esoloe")
_ids = itertools.count()


async def relayed(relay: Relay, method: str, request: Any, player: str = "p-alice") -> Any:
    """Call `method` over the relay; its response message, or AioRpcError-like failure."""
    answer = await relay.call(
        method,
        request.SerializeToString(),
        player_id=player,
        request_id=f"test-{next(_ids)}",
        seconds=10.0,
    )
    assert answer.code == 0, (status_code(answer), answer.details)
    response_class = {
        "CreateGame": ESOLOE.pb2.CreateGameResponse,
        "GetView": ESOLOE.pb2.GetViewResponse,
    }
    return response_class[method].FromString(answer.response)


def esoloe_relay(channel: grpc.aio.Channel, **options: Any) -> Relay:
    """The gateway's relay to the e-SOLO-e service on `channel`, with the tests' internal key
    (`options`: Relay's, e.g. links)."""
    return Relay(
        Replicas.fixed(channel),
        service=ESOLOE.full_name,
        internal_key=TEST_INTERNAL_KEY,
        **options,
    )


async def test_many_calls_on_one_link_each_get_their_own_answer(platform: Platform) -> None:
    async with (
        platform.internal_channel(platform.replica_target(0)) as channel,
        esoloe_relay(channel, links=1) as relay,
    ):
        created = await asyncio.gather(*(
            relayed(
                relay, "CreateGame", esoloe_pb2.CreateGameRequest(players=[f"p-{i}"] * 2), f"p-{i}"
            )
            for i in range(30)
        ))  # fmt: skip
        ids = [c.status.game_id for c in created]
        assert len(set(ids)) == 30
        assert [c.status.seats[1].player_id for c in created] == [f"p-{i}" for i in range(30)]
        views = await asyncio.gather(*(
            relayed(relay, "GetView", common_pb2.GetViewRequest(game_id=game_id, public=True))
            for game_id in ids
        ))  # fmt: skip
        assert [v.status.game_id for v in views] == ids
        assert relay.opened == 1
        assert platform.relays["esoloe"][0].calls == 60
        assert platform.relays["esoloe"][0].frames == 2  # the calls of each gather together


def frame_sizes(direction: str) -> tuple[float, float]:
    """The relay frames seen so far in `direction`: how many, and their calls or answers."""
    labels = {"direction": direction}
    return (
        REGISTRY.get_sample_value("tabletop_relay_frame_size_count", labels) or 0.0,
        REGISTRY.get_sample_value("tabletop_relay_frame_size_sum", labels) or 0.0,
    )


def framed_link(channel: grpc.aio.Channel, metadata: tuple[tuple[str, str], ...] = ()) -> Any:
    """A raw relay link (RelayFrames) on `channel`, as a gateway opens one."""
    return channel.stream_stream(
        FRAMES_METHOD,
        request_serializer=relay_pb2.RelayRequestFrame.SerializeToString,
        response_deserializer=relay_pb2.RelayResponseFrame.FromString,
    )(metadata=metadata)


def views_frame(*call_ids: int) -> relay_pb2.RelayRequestFrame:
    """A frame of GetView calls (of a stand-in's game), one for each of `call_ids`."""
    body = common_pb2.GetViewRequest(game_id="esoloe-1").SerializeToString()
    return relay_pb2.RelayRequestFrame(
        calls=[
            relay_pb2.RelayRequest(call_id=call_id, method="GetView", request=body)
            for call_id in call_ids
        ]
    )


async def test_calls_ready_together_go_in_one_frame_each_answered_alone(
    platform: Platform,
) -> None:
    servicer = platform.relays["esoloe"][0]
    async with (
        platform.internal_channel(platform.replica_target(0)) as channel,
        esoloe_relay(channel, links=2) as relay,
    ):
        created = await relayed(
            relay, "CreateGame", esoloe_pb2.CreateGameRequest(players=["p-alice", "p-alice"])
        )
        game_id = created.status.game_id
        await relayed(relay, "GetView", common_pb2.GetViewRequest(game_id=game_id, public=True))
        assert relay.opened == 2  # both links open: the calls below go on one of them
        frames, calls = servicer.frames, servicer.calls

        async def view(of: str) -> relay_pb2.RelayResponse:
            request = common_pb2.GetViewRequest(game_id=of, public=True).SerializeToString()
            return await relay.call(
                "GetView", request, player_id="p-alice", request_id="r", seconds=10.0
            )

        found, missing, again = await asyncio.gather(
            view(game_id), view("esoloe-" + "0" * 20), view(game_id)
        )
        assert (servicer.frames, servicer.calls) == (frames + 1, calls + 3)
        for answer in (found, again):
            assert status_code(answer) == grpc.StatusCode.OK
            assert ESOLOE.pb2.GetViewResponse.FromString(answer.response).status.game_id == game_id
        assert status_code(missing) == grpc.StatusCode.NOT_FOUND
        assert [t.key for t in missing.trailers] == ["grpc-status-details-bin"]
        assert relay.opened == 2
        assert all(link.framed for link in relay.links)


async def test_a_lone_call_goes_at_once_in_a_frame_of_its_own() -> None:
    stand_in = _Hanging(hang=False)
    calls_before, answers_before = frame_sizes("calls"), frame_sizes("answers")
    async with (
        _serving(stand_in) as port,
        grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel,
        Relay(Replicas.fixed(channel), service=ESOLOE.full_name, internal_key="") as relay,
    ):
        view = await relayed(relay, "GetView", common_pb2.GetViewRequest(game_id="esoloe-1"))
        assert view.status.game_id == "esoloe-1"
        assert stand_in.relay is not None
        assert (stand_in.relay.frames, stand_in.relay.calls) == (1, 1)
    # The service's metric counts the frame each way. It is process-wide, and a platform of
    # another test may still be answering a frame of its own: at least this one is counted.
    for direction, before in (("calls", calls_before), ("answers", answers_before)):
        frames, items = frame_sizes(direction)
        assert frames >= before[0] + 1, direction
        assert items >= before[1] + 1, direction


async def test_a_stale_proof_refuses_only_its_own_call_in_a_frame(platform: Platform) -> None:
    alice, bob = await logged_in(platform, "alice", "bob")
    created = await platform.create_game(
        "esoloe", esoloe_pb2.CreateGameRequest(players=[alice.player_id, bob.player_id])
    )
    path = "/tabletop.esoloe.v1.EsoloeService/GetView"
    body = common_pb2.GetViewRequest(game_id=created.status.game_id).SerializeToString()

    def call(call_id: int, issued_ms: int | None = None) -> relay_pb2.RelayRequest:
        request = relay_pb2.RelayRequest(
            call_id=call_id, method="GetView", request=body, player_id=alice.player_id
        )
        request.proof = proof(TEST_INTERNAL_KEY, path, relayed_fields(request), body, issued_ms)
        return request

    long_ago = int(time.time() * 1000) - (FRESH_SECONDS + 60) * 1000
    async with grpc.aio.insecure_channel(platform.replica_target(0)) as channel:
        link = framed_link(channel, prove(TEST_INTERNAL_KEY, FRAMES_METHOD, ()))
        await link.write(relay_pb2.RelayRequestFrame(calls=[call(1), call(2, long_ago), call(3)]))
        answers: dict[int, relay_pb2.RelayResponse] = {}
        while len(answers) < 3:
            frame = await link.read()
            answers |= {a.call_id: a for a in frame.answers if not a.drain}
        assert status_code(answers[1]) == grpc.StatusCode.OK
        assert status_code(answers[3]) == grpc.StatusCode.OK
        assert status_code(answers[2]) == grpc.StatusCode.UNAUTHENTICATED
        assert "stale" in answers[2].details
        await link.write(relay_pb2.RelayRequestFrame(calls=[call(4)]))  # the link goes on
        (answer,) = (await link.read()).answers
        assert (answer.call_id, status_code(answer)) == (4, grpc.StatusCode.OK)
        await link.done_writing()
        assert await link.read() is grpc.aio.EOF
    await asyncio.gather(alice.close(), bob.close())


async def test_answers_ready_in_one_turn_go_back_in_one_frame() -> None:
    # Four calls held until released together, as the moves of one group commit are answered
    # when its batch is: they are ready in the same turn of the service's loop.
    stand_in = _Hanging(hang=True, expected=4)
    async with (
        _serving(stand_in) as port,
        grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel,
    ):
        link = framed_link(channel)
        await link.write(views_frame(1, 2, 3, 4))
        await asyncio.wait_for(stand_in.all_arrived.wait(), patience(10))
        stand_in.released.set()
        frame = (await link.read()).answers
        assert sorted(answer.call_id for answer in frame) == [1, 2, 3, 4]
        assert all(status_code(answer) == grpc.StatusCode.OK for answer in frame)
        await link.done_writing()
        assert await link.read() is grpc.aio.EOF


async def test_a_stopping_service_tells_a_framed_link_to_drain() -> None:
    stand_in = _Hanging(hang=False)
    async with (
        _serving(stand_in) as port,
        grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel,
    ):
        link = framed_link(channel)
        await link.write(views_frame(7))
        (answer,) = (await link.read()).answers
        assert (answer.call_id, status_code(answer)) == (7, grpc.StatusCode.OK)
        assert stand_in.relay is not None
        await stand_in.relay.drain()
        (notice,) = (await link.read()).answers
        assert notice.drain
        assert notice.call_id == 0
        await link.done_writing()
        assert await link.read() is grpc.aio.EOF


async def test_calls_still_served_when_the_service_closes_are_ended_first() -> None:
    """A call still being served when its service closes (after its server stopped) is
    cancelled by the relay's close, so that none goes on to use what the service closes next
    (its Redis client)."""
    stand_in = _Hanging(hang=True)
    async with (
        _serving(stand_in) as port,
        grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel,
    ):
        link = framed_link(channel)
        await link.write(views_frame(3))
        await asyncio.wait_for(stand_in.all_arrived.wait(), patience(10))
        assert stand_in.relay is not None
        assert stand_in.cancelled.empty()
        await stand_in.relay.close()
        await asyncio.wait_for(stand_in.cancelled.get(), patience(10))
        link.cancel()


async def test_the_gateway_falls_back_to_relay_on_an_older_service() -> None:
    """A service that serves only `Relay` (an older one) answers RelayFrames UNIMPLEMENTED: the
    gateway's calls go on Relay links instead, and none fails."""
    stand_in = _Hanging(hang=False)
    async with (
        _serving(stand_in, framed=False) as port,
        grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel,
        Relay(Replicas.fixed(channel), service=ESOLOE.full_name, internal_key="", links=2) as relay,
    ):
        views = await asyncio.gather(*(
            relayed(relay, "GetView", common_pb2.GetViewRequest(game_id=f"esoloe-{i}"))
            for i in range(5)
        ))  # fmt: skip
        assert [v.status.game_id for v in views] == [f"esoloe-{i}" for i in range(5)]
        assert not relay.framed
        assert [link.framed for link in relay.links if link.open] == [False, False]
        assert stand_in.relay is not None
        assert (stand_in.relay.frames, stand_in.relay.calls) == (0, 5)


async def test_the_relay_rpc_still_serves_a_call_to_a_message(platform: Platform) -> None:
    async with grpc.aio.insecure_channel(platform.replica_target(0)) as channel:
        link: Any = channel.stream_stream(
            RELAY_METHOD,
            request_serializer=relay_pb2.RelayRequest.SerializeToString,
            response_deserializer=relay_pb2.RelayResponse.FromString,
        )(metadata=prove(TEST_INTERNAL_KEY, RELAY_METHOD, ()))
        body = common_pb2.GetViewRequest(game_id="esoloe-" + "0" * 20).SerializeToString()
        for call_id in (1, 2):
            request = relay_pb2.RelayRequest(
                call_id=call_id, method="GetView", request=body, player_id="p-alice"
            )
            request.proof = proof(
                TEST_INTERNAL_KEY,
                "/tabletop.esoloe.v1.EsoloeService/GetView",
                relayed_fields(request),
                body,
            )
            await link.write(request)
            answer = await link.read()
            assert (answer.call_id, status_code(answer)) == (call_id, grpc.StatusCode.NOT_FOUND)
        await link.done_writing()


async def test_relayed_failures_keep_their_status_and_reason(platform: Platform) -> None:
    async with (
        platform.internal_channel(platform.replica_target(0)) as channel,
        esoloe_relay(channel) as relay,
    ):

        async def answer(method: str, request: bytes) -> relay_pb2.RelayResponse:
            return await relay.call(
                method, request, player_id="p-alice", request_id="r", seconds=10.0
            )

        unknown = await answer("Admin", b"")
        assert status_code(unknown) == grpc.StatusCode.UNIMPLEMENTED
        assert "Admin" in unknown.details
        junk = await answer("Play", b"\xff\xff\xff")
        assert status_code(junk) == grpc.StatusCode.INVALID_ARGUMENT
        assert "PlayRequest" in junk.details or "Play" in junk.details
        missing = await answer(
            "GetView", common_pb2.GetViewRequest(game_id="esoloe-" + "0" * 20).SerializeToString()
        )
        assert status_code(missing) == grpc.StatusCode.NOT_FOUND
        assert [t.key for t in missing.trailers] == ["grpc-status-details-bin"]
    # The same failure through the gateway: status, reason and message as a direct call gives.
    (alice,) = await logged_in(platform, "alice")
    await assert_refused(
        alice.game("esoloe").GetView(
            common_pb2.GetViewRequest(game_id="esoloe-" + "0" * 20), metadata=alice.metadata
        ),
        grpc.StatusCode.NOT_FOUND,
        "GAME_NOT_FOUND",
        "esoloe-" + "0" * 20,
    )


async def test_links_spread_over_the_replicas(platform: Platform) -> None:
    (alice,) = await logged_in(platform, "alice")
    stub = alice.game("esoloe")
    created = await stub.CreateGame(
        esoloe_pb2.CreateGameRequest(players=[alice.player_id] * 2), metadata=alice.metadata
    )
    request = common_pb2.GetViewRequest(game_id=created.status.game_id, seat=0)
    await asyncio.gather(*(stub.GetView(request, metadata=alice.metadata) for _ in range(40)))
    calls = [relay.calls for relay in platform.relays["esoloe"]]
    assert sum(calls) == 41
    assert min(calls) > 0, calls


async def test_links_are_renewed_without_failing_a_call(platform: Platform) -> None:
    async with (
        platform.internal_channel(platform.replica_target(0)) as channel,
        esoloe_relay(channel, links=2, max_age=0.02) as relay,
    ):
        created = await relayed(
            relay, "CreateGame", esoloe_pb2.CreateGameRequest(players=["p-alice", "p-alice"])
        )
        request = common_pb2.GetViewRequest(game_id=created.status.game_id, public=True)

        async def caller() -> int:
            """Calls, every one answered, until links older than max_age were retired and
            replaced (and for 0.4 s at least)."""
            loop = asyncio.get_running_loop()
            end, done = loop.time() + 0.4, 0
            while loop.time() < end or relay.opened <= 2:
                assert loop.time() < end + patience(5), "no link was renewed"
                await relayed(relay, "GetView", request)
                done += 1
            return done

        done = await asyncio.gather(*(caller() for _ in range(4)))
        assert min(done) > 0
        assert relay.opened > 2


async def test_a_replica_stopping_gracefully_fails_no_call(platform: Platform) -> None:
    """While calls flow, one replica stops with a grace period. It drains its links: the
    gateway sends no new calls there, only the calls already on their way are served, and no
    call fails."""
    alice, bob = await logged_in(platform, "alice", "bob")
    stub = alice.game("esoloe")
    created = await platform.create_game(
        "esoloe", esoloe_pb2.CreateGameRequest(players=[alice.player_id, bob.player_id])
    )
    request = common_pb2.GetViewRequest(game_id=created.status.game_id)
    stopping = asyncio.Event()
    after_stop = 0

    async def caller() -> None:
        nonlocal after_stop
        while after_stop < 300:
            await stub.GetView(request, metadata=alice.metadata)  # raises on any failure
            if stopping.is_set():
                after_stop += 1

    callers = [asyncio.create_task(caller()) for _ in range(8)]
    stopped, staying = platform.relays["esoloe"]
    await eventually(lambda: stopped.calls > 0 and staying.calls > 0, 5, "calls on both replicas")
    served_before = stopped.calls
    stop = asyncio.create_task(platform.replicas[0].stop(5.0))
    stopping.set()
    await asyncio.gather(*callers)
    await stop
    # Without the drain the stopping replica would go on serving new calls for its grace period
    # (about half of the 300); with it, at most the calls on their way (one per caller).
    assert stopped.calls - served_before <= 8


STOPPING_GAME = "esoloe-" + "9" * 20
"""A game whose Watch the stand-in ends CANCELLED, as gRPC ends a call that reached a server
just as it began to stop (grpc/grpc#41785)."""


class _Hanging:
    """A stand-in for a game servicer whose GetView answers only once released, while `hang`."""

    def __init__(self, hang: bool, expected: int = 1) -> None:
        self.hang = hang
        self.arrived = 0
        self.expected = expected
        self.all_arrived = asyncio.Event()
        self.released = asyncio.Event()
        self.cancelled: asyncio.Queue[None] = asyncio.Queue()
        self.peers: set[str] = set()
        self.relay: RelayServicer | None = None
        """Its relay servicer, once served."""

    async def GetView(self, request: Any, context: Any) -> Any:
        if hasattr(context, "peer"):  # a direct call: which connection it came on
            self.peers.add(context.peer())
        self.arrived += 1
        if self.arrived >= self.expected:
            self.all_arrived.set()
        if self.hang:
            try:
                await self.released.wait()
            except asyncio.CancelledError:
                self.cancelled.put_nowait(None)
                raise
        return ESOLOE.pb2.GetViewResponse(status=common_pb2.GameStatus(game_id=request.game_id))

    async def Watch(self, request: Any, context: Any) -> AsyncIterator[Any]:
        if request.game_id == STOPPING_GAME:  # as gRPC ends a call that met the server stopping
            yield ESOLOE.pb2.WatchResponse(envelope=common_pb2.EventEnvelope(version=0))
            await context.abort(grpc.StatusCode.CANCELLED, "CANCELLED")
        for version in range(request.from_version, request.from_version + 30):
            await asyncio.sleep(0.05)
            yield ESOLOE.pb2.WatchResponse(envelope=common_pb2.EventEnvelope(version=version))

    def __getattr__(self, name: str) -> Any:
        async def unused(request: Any, context: Any) -> Any:
            raise AssertionError(name)

        return unused


@contextlib.asynccontextmanager
async def _serving(
    servicer: _Hanging, max_connection_age: float = 300.0, framed: bool = True
) -> AsyncIterator[int]:
    """A server of `servicer`, direct and relayed (its port), stopped at the end whatever
    happens. Not `framed`: it serves the Relay rpc only, as an older service."""
    server = Server(
        "127.0.0.1:0",
        [ESOLOE.full_name],
        grace_seconds=0.0,
        max_connection_age=max_connection_age,
    )
    ESOLOE.add_servicer(servicer, server.server)
    relay = RelayServicer(
        ESOLOE.descriptor,
        {m.name: getattr(servicer, m.name) for m in ESOLOE.descriptor.methods},
    )
    servicer.relay = relay
    if framed:
        relay.add_to(server.server)
    else:
        server.server.add_generic_rpc_handlers((
            grpc.method_handlers_generic_handler(
                "tabletop.relay.v1.RelayService",
                {
                    "Relay": grpc.stream_stream_rpc_method_handler(
                        relay.Relay,
                        request_deserializer=relay_pb2.RelayRequest.FromString,
                        response_serializer=relay_pb2.RelayResponse.SerializeToString,
                    )
                },
            ),
        ))  # fmt: skip
    server.on_stop.append(relay.drain)
    await server.start()
    try:
        yield server.port
    finally:
        servicer.released.set()
        await server.stop(0)


async def test_calls_on_a_link_that_breaks_are_tried_again_on_a_new_one() -> None:
    stand_in = _Hanging(hang=True, expected=10)
    async with (
        _serving(stand_in) as port,
        grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel,
        esoloe_relay(channel, links=2) as relay,
    ):
        request = common_pb2.GetViewRequest(game_id="esoloe-" + "1" * 20)
        calls = [asyncio.create_task(relayed(relay, "GetView", request)) for _ in range(10)]
        await stand_in.all_arrived.wait()
        stand_in.hang = False  # the calls tried again are answered
        for link in relay.links:
            link.stream.cancel()  # as a connection that breaks, with every call still due
        views = await asyncio.gather(*calls, return_exceptions=True)
        assert [getattr(v, "status", v) for v in views] == [
            common_pb2.GameStatus(game_id=request.game_id)
        ] * 10
        assert stand_in.arrived == 20
        assert relay.opened == 4


async def test_a_call_past_its_deadline_fails_alone() -> None:
    stand_in = _Hanging(hang=True)
    async with (
        _serving(stand_in) as port,
        grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel,
        esoloe_relay(channel, links=1) as relay,
    ):
        request = common_pb2.GetViewRequest(game_id="esoloe-" + "1" * 20).SerializeToString()
        answer = await relay.call("GetView", request, player_id="p", request_id="r", seconds=0.2)
        assert status_code(answer) == grpc.StatusCode.DEADLINE_EXCEEDED
        assert relay.links[0].open  # the link itself is fine
        # The service stops the call too (as gRPC cancels a direct call's handler).
        async with asyncio.timeout(5):
            await stand_in.cancelled.get()


@pytest.mark.parametrize("method", [RELAY_METHOD, FRAMES_METHOD])
async def test_the_relay_is_not_reachable_through_the_gateway(
    platform: Platform, method: str
) -> None:
    session = Session(platform.target)
    await session.login("alice")
    call: grpc.aio.StreamStreamMultiCallable[bytes, bytes] = session.channel.stream_stream(method)
    stream = call(metadata=session.metadata)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await stream.read()
    assert caught.value.code() == grpc.StatusCode.UNIMPLEMENTED
    await session.close()


async def test_a_service_that_cannot_be_reached_is_unavailable_with_its_reason() -> None:
    async with (
        grpc.aio.insecure_channel(f"127.0.0.1:{free_port()}") as channel,
        esoloe_relay(channel) as relay,
    ):
        request = common_pb2.GetViewRequest(game_id="esoloe-" + "1" * 20).SerializeToString()
        answer = await relay.call("GetView", request, player_id="p", request_id="r", seconds=5.0)
        assert status_code(answer) == grpc.StatusCode.UNAVAILABLE
        assert "cannot be reached" in answer.details
        (trailer,) = answer.trailers
        info = error_details_pb2.ErrorInfo()
        assert status_pb2.Status.FromString(trailer.value).details[0].Unpack(info)
        assert info.reason == "UNAVAILABLE"
        assert relay.opened == ATTEMPTS  # each attempt on a new link: the last one broke


async def test_connections_are_renewed_at_their_age_without_cutting_a_stream() -> None:
    """A server tells a connection older than its max age to take new calls elsewhere, so the
    client reconnects (and resolves the target again: replicas added since get calls); a
    stream open on the old connection, a Watch, goes on to its end."""
    stand_in = _Hanging(hang=False)
    async with (
        _serving(stand_in, max_connection_age=0.3) as port,
        grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel,
    ):
        stub = ESOLOE.stub(channel)
        watch = stub.Watch(common_pb2.WatchRequest(game_id="esoloe-" + "1" * 20))
        request = common_pb2.GetViewRequest(game_id="esoloe-" + "1" * 20)
        versions = []
        async for update in watch:  # 30 messages over 1.5 s, calls in between
            versions.append(update.envelope.version)
            await stub.GetView(request)
        assert versions == list(range(30))
        assert len(stand_in.peers) >= 3, stand_in.peers  # new connections as the old aged


async def test_a_stream_the_service_ended_cancelled_is_unavailable_to_the_player() -> None:
    """A stream that reached a replica just as it began to stop ends CANCELLED (a gRPC
    behaviour), though the player cancelled nothing: the gateway tells them UNAVAILABLE, the
    code that says "ask again", after the messages that came."""
    stand_in = _Hanging(hang=False)
    async with (
        _serving(stand_in) as port,
        grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel,
        Relay(
            replicas := Replicas.fixed(channel),
            service=ESOLOE.full_name,
            internal_key=TEST_INTERNAL_KEY,
        ) as relay,
    ):
        proxy = Proxy(
            guard=None,  # type: ignore[arg-type]  # admission is not what this test looks at
            backends=[Backend(ESOLOE.descriptor, replicas, relay)],
            streams_per_player=4,
            internal_key=TEST_INTERNAL_KEY,
        )
        route = proxy.routes[f"/{ESOLOE.full_name}/Watch"]
        request = common_pb2.WatchRequest(game_id=STOPPING_GAME).SerializeToString()
        received = []

        async def watch() -> None:
            alice = Identity("p-alice", "alice", 0.0)
            async for message in proxy.stream(alice, route, request, "r"):
                received.append(ESOLOE.pb2.WatchResponse.FromString(message).envelope.version)

        with pytest.raises(ApiError) as refused:
            await watch()
        assert received == [0]
        assert refused.value.reason == "UNAVAILABLE"


async def test_a_frame_is_bounded_in_calls_and_bytes() -> None:
    outbox = Outbox(max_items=128, max_bytes=64 * 1024)
    calls = [
        relay_pb2.RelayRequest(call_id=i, method="Play", request=b"x" * (i % 7)).SerializeToString()
        for i in range(1, 301)
    ]
    for call in calls:
        outbox.put(call)
    frames = [await outbox.take() for _ in range(3)]
    assert [len(frame or ()) for frame in frames] == [128, 128, 44]
    parsed = [relay_pb2.RelayRequestFrame.FromString(frame_of(frame or ())) for frame in frames]
    assert [c.SerializeToString() for f in parsed for c in f.calls] == calls
    for size in (40_000, 40_000, 70_000, 10_000, 10_000):
        outbox.put(b"y" * size)
    outbox.close()
    sizes = []
    while (frame := await outbox.take()) is not None:
        sizes.append([len(message) for message in frame])
    assert sizes == [[40_000], [40_000], [70_000], [10_000, 10_000]]  # a larger one goes alone
