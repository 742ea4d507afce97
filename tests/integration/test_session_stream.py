"""The player session (tabletop.session.v1): one stream per client carrying its calls, through
the real gateway and game services. What the unary API promises holds on it too (every error
reason: tests/integration/test_errors.py runs on both; hidden cards per seat:
tests/integration/test_solo_hidden.py runs on both); here, what is the session's own: its
token, its protocol errors, its bounds, and resuming after a drop."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from typing import Any

import grpc
import jwt
import pytest
from prometheus_client import REGISTRY

from client.session import Session
from gateway.auth import TokenIssuer
from runtime.server import MAX_REQUEST_BYTES
from tabletop.common.v1 import common_pb2
from tabletop.esoloe.v1 import esoloe_pb2
from tabletop.session.v1 import session_pb2
from tests.platform import TEST_BOT_KEY, TEST_SECRET, Platform, assert_refused
from tests.timing import eventually, patience
from wire.errors import error_info
from wire.players import new_bot_id

pytestmark = pytest.mark.integration

OPEN = "/tabletop.session.v1.SessionService/Open"
PLAY = "/tabletop.esoloe.v1.EsoloeService/Play"
GET_VIEW = "/tabletop.esoloe.v1.EsoloeService/GetView"
WATCH = "/tabletop.esoloe.v1.EsoloeService/Watch"
MOVES = ["e24", "c12", "e12", "e31", "c14", "a14", "b21", "c31"]
"""Eight e-SOLO-e moves after which the game goes on."""


class Raw:
    """A session spoken by hand: requests in, responses out, nothing hidden by a client."""

    def __init__(self, target: str, token: str) -> None:
        self.channel = grpc.aio.insecure_channel(target)
        self.stream: Any = self.channel.stream_stream(
            OPEN,
            request_serializer=session_pb2.OpenRequest.SerializeToString,
            response_deserializer=session_pb2.OpenResponse.FromString,
        )(metadata=(("authorization", f"Bearer {token}"),) if token else ())

    async def send(self, **kind: Any) -> None:
        await self.stream.write(session_pb2.OpenRequest(**kind))

    async def call(self, call_id: int, method: str, request: Any) -> None:
        body = request if isinstance(request, bytes) else request.SerializeToString()
        await self.send(call=session_pb2.Call(call_id=call_id, method=method, request=body))

    async def next(self) -> session_pb2.OpenResponse:
        response = await asyncio.wait_for(self.stream.read(), patience(10))
        assert isinstance(response, session_pb2.OpenResponse), response
        return response

    async def answer(self, call_id: int) -> session_pb2.OpenResponse:
        """The next response, which must be for `call_id`."""
        response = await self.next()
        assert response.call_id == call_id, response
        return response

    async def close(self) -> None:
        self.stream.cancel()
        await self.channel.close()


def reason(response: session_pb2.OpenResponse) -> str:
    """The error reason of a failed call's response, read as a client reads a call's."""
    code = next(c for c in grpc.StatusCode if c.value[0] == response.code)
    trailers = [
        (t.key, t.value if t.key.endswith("-bin") else t.value.decode()) for t in response.trailers
    ]
    error = grpc.aio.AioRpcError(
        code, grpc.aio.Metadata(), grpc.aio.Metadata(*trailers), response.details
    )
    return error_info(error)[0]


async def new_game(platform: Platform, *sessions: Session) -> str:
    created = await platform.create_game(
        "esoloe", esoloe_pb2.CreateGameRequest(players=[s.player_id for s in sessions])
    )
    game_id: str = created.status.game_id
    return game_id


@pytest.fixture
async def players(platform: Platform) -> AsyncIterator[tuple[Session, Session]]:
    alice, bob = Session(platform.target), Session(platform.target)
    await alice.login("alice")
    await bob.login("bob")
    alice.open_stream()
    bob.open_stream()
    yield alice, bob
    await alice.close()
    await bob.close()


async def test_a_game_played_on_sessions_with_its_events(
    platform: Platform, players: tuple[Session, Session]
) -> None:
    alice, bob = players
    game_id = await new_game(platform, alice, bob)
    watching = alice.game("esoloe").Watch(common_pb2.WatchRequest(game_id=game_id))
    moves = ["c12", "d12", "c23", "d23"]
    for index, move in enumerate(moves):
        player = (alice, bob)[index % 2]
        reply = await player.game("esoloe").Play(
            common_pb2.PlayRequest(game_id=game_id, move=move, request_id=f"m{index}")
        )
        assert reply.status.version == index + 1
    seen = []
    async for update in watching:
        seen.append((update.envelope.version, update.envelope.move))
        if update.envelope.version == len(moves):
            break
    watching.cancel()
    assert seen == [(0, ""), *((i + 1, m) for i, m in enumerate(moves))]


async def _call_and_read(raw: Raw) -> None:
    """A call on the stream and its answer. The gateway ends a stream whose token it refuses
    at once: the call's write may already meet that end, else the read does."""
    await raw.call(1, GET_VIEW, common_pb2.GetViewRequest(game_id="g"))
    await raw.next()


async def test_a_session_needs_a_good_token(platform: Platform) -> None:
    forged = jwt.encode(
        {"sub": "p-someone", "exp": int(time.time()) + 60},
        "some-other-key-0123456789-0123456789",
        algorithm="HS256",
    )
    for token, words in (("", "no token"), (forged, "signature")):
        raw = Raw(platform.target, token)
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await _call_and_read(raw)
        assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
        assert error_info(caught.value)[0] == "UNAUTHENTICATED"
        assert words in (caught.value.details() or "")
        await raw.close()


async def test_each_call_checks_the_token_and_a_new_one_carries_on(
    platform: Platform, players: tuple[Session, Session]
) -> None:
    """A session outlives its first token: each call is checked when it arrives, so once the
    token expires the calls are refused, until the next token is sent on the stream; a token
    of another player is refused and changes nothing."""
    alice, bob = players
    game_id = await new_game(platform, alice, bob)
    short, _ = TokenIssuer(TEST_SECRET, ttl_seconds=2).issue(alice.player_id, "alice")
    raw = Raw(platform.target, short)
    await raw.send(token=bob.token)
    refused = await raw.answer(0)
    assert (refused.code, refused.token_accepted) == (
        grpc.StatusCode.UNAUTHENTICATED.value[0],
        False,
    )
    assert "same player" in refused.details
    view = common_pb2.GetViewRequest(game_id=game_id)
    await raw.call(1, GET_VIEW, view)
    first = await raw.answer(1)
    assert first.done
    assert first.code == 0
    assert esoloe_pb2.GetViewResponse.FromString(first.response).seat == 0  # alice's, not bob's

    async def expired() -> bool:
        await raw.call(2, GET_VIEW, view)
        answer = await raw.answer(2)
        return answer.code == grpc.StatusCode.UNAUTHENTICATED.value[0] and "expired" in (
            answer.details
        )

    await eventually(expired, 10, "the session's token to expire")
    await raw.send(token=alice.token)
    assert (await raw.answer(0)).token_accepted
    await raw.call(3, GET_VIEW, view)
    assert (await raw.answer(3)).code == 0
    await raw.close()


async def test_protocol_errors_fail_the_call_alone(
    platform: Platform, players: tuple[Session, Session]
) -> None:
    alice, bob = players
    game_id = await new_game(platform, alice, bob)
    raw = Raw(platform.target, alice.token)
    view = common_pb2.GetViewRequest(game_id=game_id)
    await raw.call(0, GET_VIEW, view)
    zero = await raw.answer(0)
    assert zero.done
    assert reason(zero) == "INVALID_ARGUMENT"
    assert "call_id" in zero.details
    await raw.call(1, "/tabletop.relay.v1.RelayService/Relay", view)
    relay = await raw.answer(1)
    assert relay.code == grpc.StatusCode.UNIMPLEMENTED.value[0]
    await raw.call(2, "/tabletop.lobby.v1.AuthService/Login", view)
    assert (await raw.answer(2)).code == grpc.StatusCode.UNIMPLEMENTED.value[0]
    big = common_pb2.PlayRequest(game_id=game_id, move="c" * MAX_REQUEST_BYTES)
    await raw.call(3, PLAY, big.SerializeToString()[: MAX_REQUEST_BYTES + 100])
    too_big = await raw.answer(3)
    assert too_big.code == grpc.StatusCode.RESOURCE_EXHAUSTED.value[0], too_big
    await raw.call(4, PLAY, b"\xff\xff not a request")
    garbled = await raw.answer(4)
    assert reason(garbled) == "INVALID_ARGUMENT", garbled
    # A watch in progress keeps its id: the same id again is refused, the watch goes on.
    await raw.call(5, WATCH, common_pb2.WatchRequest(game_id=game_id))
    first = await raw.answer(5)
    assert not first.done
    assert esoloe_pb2.WatchResponse.FromString(first.response).envelope.version == 0
    await raw.call(5, GET_VIEW, view)
    again = await raw.answer(5)
    assert again.done
    assert reason(again) == "INVALID_ARGUMENT"
    assert "in progress" in again.details
    await raw.send(cancel=5)
    cancelled = await raw.answer(5)
    assert cancelled.done
    assert cancelled.code == grpc.StatusCode.CANCELLED.value[0]
    await raw.call(6, GET_VIEW, view)
    assert (await raw.answer(6)).code == 0  # the session still serves
    await raw.close()


async def test_a_session_holds_what_its_bounds_allow(redis_url: str) -> None:
    """A session is one of the player's open streams and so is each streaming call on it; at
    most `session_max_calls` calls are in progress on it; the rate limit counts its calls."""
    settings = {"session_max_calls": 2, "streams_per_player": 3}
    async with Platform(redis_url, gateway_settings=settings) as platform:
        alice, bob = Session(platform.target), Session(platform.target)
        await alice.login("alice")
        await bob.login("bob")
        game_id = await new_game(platform, alice, bob)
        raw = Raw(platform.target, alice.token)
        watch = common_pb2.WatchRequest(game_id=game_id)
        for call_id in (1, 2):
            await raw.call(call_id, WATCH, watch)
            assert not (await raw.answer(call_id)).done
        await raw.call(3, GET_VIEW, common_pb2.GetViewRequest(game_id=game_id))
        third = await raw.answer(3)
        assert reason(third) == "LIMIT_REACHED", third
        assert "session" in third.details
        # The session and its two watches are the player's three streams: one more is refused,
        # on the session or as a call of its own.
        await assert_refused(
            alice.game("esoloe").Watch(watch, metadata=alice.metadata).read(),
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            "LIMIT_REACHED",
            "streams",
        )
        await raw.send(cancel=2)
        assert (await raw.answer(2)).code == grpc.StatusCode.CANCELLED.value[0]
        await raw.call(4, WATCH, watch)
        fourth = await raw.answer(4)
        assert not fourth.done  # the cancelled watch gave its place back
        await raw.close()

        async def streams_released() -> bool:
            assert platform.gateway is not None
            return alice.player_id not in platform.gateway.proxy.streams

        await eventually(streams_released, 10, "a closed session to give its streams back")

    async with Platform(redis_url, rate_per_second=1.0, rate_burst=3.0) as platform:
        carol = Session(platform.target)
        await carol.login("carol")
        raw = Raw(platform.target, carol.token)
        view = common_pb2.GetViewRequest(game_id="g-unknown")
        reasons = []
        for call_id in range(1, 6):
            await raw.call(call_id, GET_VIEW, view)
            reasons.append(reason(await raw.answer(call_id)))
        assert reasons.count("RATE_LIMITED") >= 2, reasons
        await raw.close()


async def test_a_move_sent_again_after_a_drop_is_applied_once(
    platform: Platform, players: tuple[Session, Session]
) -> None:
    """The stream drops while moves are in flight: the client opens a new one and sends them
    again with their request ids; each is applied once, and a Watch asked again from the last
    version received + 1 goes on with no gap and no duplicate."""
    alice, bob = players
    game_id = await new_game(platform, alice, bob)
    stub = {alice.player_id: alice.game("esoloe"), bob.player_id: bob.game("esoloe")}
    versions: list[int] = []
    dropped: list[grpc.StatusCode] = []

    async def follow() -> None:
        start = 0
        while True:
            try:
                async for update in alice.game("esoloe").Watch(
                    common_pb2.WatchRequest(game_id=game_id, from_version=start)
                ):
                    versions.append(update.envelope.version)
                    start = update.envelope.version + 1
                    if update.status.finished or start > 8:
                        return
            except grpc.aio.AioRpcError as error:
                dropped.append(error.code())

    watcher = asyncio.create_task(follow())
    moves = MOVES
    for index, move in enumerate(moves):
        player = (alice, bob)[index % 2]
        assert player.link is not None
        request = common_pb2.PlayRequest(game_id=game_id, move=move, request_id=f"drop-{index}")
        answer = asyncio.create_task(stub[player.player_id].Play(request))
        await asyncio.sleep(0)  # sent, or about to be
        for session in (alice, bob):  # both streams drop, with the move in flight
            assert session.link is not None
            session.link.drop()
        reply = await asyncio.wait_for(answer, patience(10))
        assert reply.status.version == index + 1
    await asyncio.wait_for(watcher, patience(10))
    assert versions == list(range(len(moves) + 1))
    assert set(dropped) <= {grpc.StatusCode.UNAVAILABLE}, dropped
    view = await bob.game("esoloe").GetView(common_pb2.GetViewRequest(game_id=game_id))
    assert view.status.version == len(moves)


async def test_a_bot_worker_acts_for_its_seats_on_one_session(platform: Platform) -> None:
    worker = Session(platform.target)
    await worker.worker_login(TEST_BOT_KEY)
    worker.open_stream()
    person = Session(platform.target)
    await person.login("person")
    bot = new_bot_id("greedy")
    created = await platform.create_game(
        "esoloe", esoloe_pb2.CreateGameRequest(players=[bot, person.player_id])
    )
    game_id = created.status.game_id
    stub = worker.game("esoloe")
    reply = await stub.Play(
        common_pb2.PlayRequest(game_id=game_id, move="c12"), metadata=worker.acting_for(bot)
    )
    assert reply.status.version == 1
    await assert_refused(
        stub.Play(common_pb2.PlayRequest(game_id=game_id, move="d12")),
        grpc.StatusCode.UNAUTHENTICATED,
        "UNAUTHENTICATED",
        "bot seat",
    )
    await worker.close()
    await person.close()


async def test_calls_on_a_session_are_counted_like_calls_of_their_own(
    platform: Platform, players: tuple[Session, Session]
) -> None:
    """tabletop_rpc_seconds counts a Play on a session under Play's name, as it counts one of
    its own (operators' dashboards read it)."""
    alice, _bob = players
    game_id = await new_game(platform, alice, alice)
    unary = Session(platform.target)
    unary.token, unary.player_id = alice.token, alice.player_id
    labels = {"method": PLAY, "code": "OK"}

    def plays() -> float:
        return REGISTRY.get_sample_value("tabletop_rpc_seconds_count", labels) or 0.0

    counted = []
    for index, session in enumerate((unary, alice)):
        before = plays()
        await session.game("esoloe").Play(
            common_pb2.PlayRequest(game_id=game_id, move=MOVES[index], seat=index),
            metadata=session.metadata,
        )
        counted.append(plays() - before)
    assert counted[0] >= 1
    assert counted[1] == counted[0]
    await unary.close()


async def test_more_calls_at_once_than_a_session_serves_wait_their_turn_in_the_client(
    redis_url: str,
) -> None:
    """A program that makes more calls at once than the gateway serves on one session (a bot
    worker playing many seats) is not refused: the client holds the extra calls back until
    one in progress ends."""
    settings = {"session_max_calls": 3, "streams_per_player": 10}
    async with Platform(redis_url, gateway_settings=settings) as platform:
        alice, bob = Session(platform.target), Session(platform.target)
        await alice.login("alice")
        await bob.login("bob")
        game_id = await new_game(platform, alice, bob)
        alice.open_stream(max_calls=3)
        stub = alice.game("esoloe")
        watches = [stub.Watch(common_pb2.WatchRequest(game_id=game_id)) for _ in range(3)]
        iterators = [aiter(watch) for watch in watches]
        for iterator in iterators:  # three calls in progress: all the session serves
            assert (await anext(iterator)).envelope.version == 0
        view = asyncio.create_task(stub.GetView(common_pb2.GetViewRequest(game_id=game_id)))
        # Time for a call that was sent to be refused (LIMIT_REACHED, which would fail below);
        # one held back waits whatever the time.
        await asyncio.wait({view}, timeout=0.5)
        watches[0].cancel()
        with contextlib.suppress(StopAsyncIteration):
            await anext(iterators[0])
        assert (await asyncio.wait_for(view, patience(10))).seat == 0
        for watch in watches[1:]:
            watch.cancel()
        await alice.close()
        await bob.close()
