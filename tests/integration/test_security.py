"""One test per security claim of the platform, through the real gateway and services.

Claims already proven elsewhere, not repeated here:
- a token signed with another key, an expired token, no token, a non-Bearer scheme:
  test_errors.py::test_tokens_missing_forged_expired;
- Play for another seat (`seat` field), and a stranger's Play, LegalMoves and GetView of a seat:
  test_errors.py::test_wrong_seat_and_turn;
- a made-up method on a game service's path is UNIMPLEMENTED at the gateway:
  test_replicas.py::test_gateway_routes_only_public_game_methods;
- what a Solo or Solace seat receives does not depend on cards it cannot see:
  test_solo_hidden.py, test_solace_hidden.py.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import grpc
import jwt
import pytest
import pytest_asyncio
from google.rpc import error_details_pb2, status_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection, reflection_pb2, reflection_pb2_grpc
from redis.asyncio import Redis
from redis.exceptions import AuthenticationError

from client.session import Session
from gateway.relay import status_code
from runtime.config import ServiceSettings
from runtime.localredis import LocalRedis
from runtime.relay import RELAY_METHOD, relayed_fields
from runtime.server import REFLECTION_V1, OpenStreams
from services.game.core import new_game_id
from services.game.main import start_game_service
from tabletop.common.v1 import common_pb2
from tabletop.esoloe.v1 import esoloe_pb2
from tabletop.lobby.v1 import lobby_pb2, lobby_pb2_grpc
from tabletop.relay.v1 import relay_pb2
from tabletop.solo.v1 import solo_pb2
from tests.integration.test_matchmaking import lobby
from tests.integration.test_solo_helpers import close_all, legal, play, solo_platform, view
from tests.platform import TEST_INTERNAL_KEY, TEST_SECRET, Platform, assert_refused, logged_in
from tests.timing import eventually, patience
from wire.api import api
from wire.errors import error_info
from wire.metadata import PLAYER_METADATA, REQUEST_METADATA
from wire.proof import FRESH_SECONDS, PROOF_METADATA, UNBOUND, proof, prove

pytestmark = pytest.mark.integration
__all__ = ["solo_platform"]

OTHER_KEY = "some-other-key-0123456789-0123456789"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def edited(token: str, **claims: Any) -> str:
    """The token with its payload changed and re-encoded, its header and signature kept."""
    header, payload, signature = token.split(".")
    changed = {**json.loads(_unb64(payload)), **claims}
    return ".".join([header, _b64(json.dumps(changed).encode()), signature])


def forged_tokens(token: str, victim: str) -> dict[str, str]:
    """Tokens that claim to be `victim` (or are junk), none of which the gateway may accept;
    `token` is a real one of another player, to tamper with."""
    now = int(time.time())
    unsigned_header = _b64(json.dumps({"alg": "none", "typ": "JWT"}).encode())
    unsigned_payload = _b64(json.dumps({"sub": victim, "exp": now + 3600}).encode())
    return {
        "garbage": "not.a.token",
        "other-key": jwt.encode({"sub": victim, "exp": now + 3600}, OTHER_KEY, algorithm="HS256"),
        "expired": jwt.encode({"sub": victim, "exp": now - 5}, TEST_SECRET, algorithm="HS256"),
        "edited": edited(token, sub=victim),
        "unsigned": f"{unsigned_header}.{unsigned_payload}.",
        "no-expiry": jwt.encode({"sub": victim}, TEST_SECRET, algorithm="HS256"),
    }


def bearer(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


@pytest_asyncio.fixture
async def esoloe_table(platform: Platform) -> AsyncIterator[tuple[Session, Session, str]]:
    """Alice (seat 0) and Bob (seat 1) at a new e-SOLO-e game."""
    alice, bob = await logged_in(platform, "alice", "bob")
    created = await platform.create_game(
        "esoloe", esoloe_pb2.CreateGameRequest(players=[alice.player_id, bob.player_id])
    )
    yield alice, bob, created.status.game_id
    await close_all([alice, bob])


async def _public_state(session: Session, game: str, game_id: str) -> bytes:
    reply = await session.game(game).GetView(
        common_pb2.GetViewRequest(game_id=game_id, public=True), metadata=session.metadata
    )
    state: bytes = reply.SerializeToString(deterministic=True)
    return state


async def _raw_call(
    channel: grpc.aio.Channel, path: str, streaming: bool, metadata: tuple[tuple[str, str], ...]
) -> object:
    """Call any method path with an empty request (the first message of a stream)."""
    if streaming:
        stream: grpc.aio.UnaryStreamMultiCallable[bytes, bytes] = channel.unary_stream(path)
        return await _first(stream(b"", metadata=metadata, timeout=patience(5)))
    unary: grpc.aio.UnaryUnaryMultiCallable[bytes, bytes] = channel.unary_unary(path)
    return await unary(b"", metadata=metadata, timeout=patience(5))


# -- (1) tokens are signed and expire ------------------------------------------------------------


async def test_a_token_whose_payload_was_edited_is_refused(
    esoloe_table: tuple[Session, Session, str],
) -> None:
    """Alice's real token with Bob's player id put in (not re-signed) is refused at a game RPC
    and at the lobby; the same token unedited is accepted (so the refusal is the edit's)."""
    alice, bob, game_id = esoloe_table
    request = common_pb2.LegalMovesRequest(game_id=game_id)
    reply = await alice.game("esoloe").LegalMoves(request, metadata=bearer(alice.token))
    assert reply.seat == 0
    posing = bearer(edited(alice.token, sub=bob.player_id))
    await assert_refused(
        alice.game("esoloe").LegalMoves(request, metadata=posing),
        grpc.StatusCode.UNAUTHENTICATED,
        "UNAUTHENTICATED",
        "signature",
    )
    await assert_refused(
        lobby(alice).FindMatch(lobby_pb2.FindMatchRequest(game="esoloe"), metadata=posing),
        grpc.StatusCode.UNAUTHENTICATED,
        "UNAUTHENTICATED",
    )
    # A longer life written into the payload is an edit too.
    await assert_refused(
        alice.game("esoloe").LegalMoves(
            request, metadata=bearer(edited(alice.token, exp=int(time.time()) + 10**8))
        ),
        grpc.StatusCode.UNAUTHENTICATED,
        "UNAUTHENTICATED",
    )


async def test_an_unsigned_token_is_refused(esoloe_table: tuple[Session, Session, str]) -> None:
    """`alg: none` (no signature at all) is not a way in."""
    alice, bob, game_id = esoloe_table
    token = forged_tokens(alice.token, bob.player_id)["unsigned"]
    await assert_refused(
        alice.game("esoloe").GetView(
            common_pb2.GetViewRequest(game_id=game_id), metadata=bearer(token)
        ),
        grpc.StatusCode.UNAUTHENTICATED,
        "UNAUTHENTICATED",
    )


async def test_a_token_without_expiry_is_refused(
    esoloe_table: tuple[Session, Session, str],
) -> None:
    """Signed with the platform's own key but without `exp`: every token must expire."""
    alice, bob, game_id = esoloe_table
    token = forged_tokens(alice.token, bob.player_id)["no-expiry"]
    await assert_refused(
        alice.game("esoloe").GetView(
            common_pb2.GetViewRequest(game_id=game_id), metadata=bearer(token)
        ),
        grpc.StatusCode.UNAUTHENTICATED,
        "UNAUTHENTICATED",
    )


async def test_a_token_expires_even_after_it_was_accepted(
    esoloe_table: tuple[Session, Session, str],
) -> None:
    """The gateway caches tokens it has verified: the cached one must still expire on time."""
    alice, _bob, game_id = esoloe_table
    expires = int(time.time() + patience(1)) + 1  # used before it expires, on a slow machine too
    token = jwt.encode({"sub": alice.player_id, "exp": expires}, TEST_SECRET, algorithm="HS256")
    request = common_pb2.GetViewRequest(game_id=game_id)
    reply = await alice.game("esoloe").GetView(request, metadata=bearer(token))
    assert reply.HasField("seat")  # unset would be the public view
    assert reply.seat == 0
    await asyncio.sleep(expires - time.time() + 0.1)
    await assert_refused(
        alice.game("esoloe").GetView(request, metadata=bearer(token)),
        grpc.StatusCode.UNAUTHENTICATED,
        "UNAUTHENTICATED",
        "expired",
    )


async def test_refresh_gives_the_same_player_a_token_that_lives_longer(
    esoloe_table: tuple[Session, Session, str],
) -> None:
    """A client that refreshes before its token expires stays the same player (its games stay
    its own); refreshing needs a valid token."""
    alice, _bob, game_id = esoloe_table
    expires = int(time.time() + patience(1)) + 1  # used before it expires, on a slow machine too
    short = jwt.encode(
        {"sub": alice.player_id, "name": "alice", "exp": expires}, TEST_SECRET, algorithm="HS256"
    )
    auth = lobby_pb2_grpc.AuthServiceStub(alice.channel)
    renewed = await auth.Refresh(lobby_pb2.RefreshRequest(), metadata=bearer(short))
    assert renewed.player_id == alice.player_id
    assert renewed.expires_at.seconds > expires + 3600
    await asyncio.sleep(expires - time.time() + 0.1)
    request = common_pb2.GetViewRequest(game_id=game_id)
    mine = await alice.game("esoloe").GetView(request, metadata=bearer(renewed.token))
    assert mine.HasField("seat")
    assert mine.seat == 0
    for refused in (short, "not-a-token"):
        await assert_refused(
            auth.Refresh(lobby_pb2.RefreshRequest(), metadata=bearer(refused)),
            grpc.StatusCode.UNAUTHENTICATED,
            "UNAUTHENTICATED",
        )


# -- (2) a player never acts for or reads another seat --------------------------------------------


async def test_a_seated_player_cannot_act_for_or_read_the_other_seat(
    solo_platform: Platform,
) -> None:
    """In a Solo game (hidden hands), seat 0 names seat 1 in every RPC: each is refused, and the
    game is unchanged; without a seat, seat 0 gets its own view, never seat 1's."""
    alice, bob, stranger = await logged_in(solo_platform, "alice", "bob", "stranger")
    stub = alice.game("solo")
    request = solo_pb2.CreateGameRequest(players=[alice.player_id, bob.player_id])
    request.options.players = 2
    game_id = (await solo_platform.create_game("solo", request)).status.game_id
    before = await _public_state(alice, "solo", game_id)
    bob_before = await view(bob, game_id)
    calls = [
        stub.Play(common_pb2.PlayRequest(game_id=game_id, move="draw", seat=1),
                  metadata=alice.metadata),
        stub.Resign(common_pb2.ResignRequest(game_id=game_id, seat=1), metadata=alice.metadata),
        stub.LegalMoves(common_pb2.LegalMovesRequest(game_id=game_id, seat=1),
                        metadata=alice.metadata),
        stub.GetView(common_pb2.GetViewRequest(game_id=game_id, seat=1), metadata=alice.metadata),
        _first(stub.Watch(common_pb2.WatchRequest(game_id=game_id, seat=1),
                          metadata=alice.metadata)),
        # A stranger resigning for a seat (test_errors covers a stranger's Play).
        stub.Resign(common_pb2.ResignRequest(game_id=game_id, seat=0),
                    metadata=stranger.metadata),
        stub.Resign(common_pb2.ResignRequest(game_id=game_id), metadata=stranger.metadata),
    ]  # fmt: skip
    for call in calls:
        await assert_refused(call, grpc.StatusCode.PERMISSION_DENIED, "NOT_YOUR_SEAT")
    assert await _public_state(alice, "solo", game_id) == before
    assert await view(bob, game_id) == bob_before
    own = await view(alice, game_id)
    assert own.HasField("seat")
    assert own.seat == 0
    assert len(own.view.hand) == own.view.hand_sizes[0] == 8
    assert list(own.view.hand) != list(bob_before.view.hand)
    await close_all([alice, bob, stranger])


async def _first(stream: Any) -> Any:
    """The first message of a stream (raising its error if it fails first)."""
    async for message in stream:
        stream.cancel()
        return message
    return None


# -- (3) spectators never see hidden information --------------------------------------------------


async def _updates(session: Session, game_id: str, upto: int, public: bool) -> list[Any]:
    """Watch messages from version 0 through `upto`."""
    stream = session.game("solo").Watch(
        common_pb2.WatchRequest(game_id=game_id, public=public), metadata=session.metadata
    )
    out = []
    async for update in stream:
        out.append(update)
        if update.envelope.version >= upto:
            stream.cancel()
            break
    return out


def _private_events(updates: list[Any]) -> list[str]:
    return [
        kind
        for update in updates
        for event in update.events
        if (kind := event.WhichOneof("kind")) in ("dealt", "drew_cards")
    ]


async def test_a_solo_spectator_never_sees_a_hand_or_a_drawn_card(
    solo_platform: Platform,
) -> None:
    """After a deal and draws, a stranger (GetView and Watch) and a seated player asking for the
    public view see hand sizes and draw counts only: no hand, no drawn card, no Dealt or
    DrewCards event. The seats' own views and streams do carry them (so the check can fail).
    (The first deal is version 0's Dealt events, one to each seat.)"""
    alice, bob, stranger = await logged_in(solo_platform, "alice", "bob", "stranger")
    seated = [alice, bob]
    request = solo_pb2.CreateGameRequest(players=[alice.player_id, bob.player_id])
    request.options.players = 2
    game_id = (await solo_platform.create_game("solo", request)).status.game_id
    draws = 0
    while draws < 3:  # draw, keep a playable drawn card: never empties a hand
        state = await view(alice, game_id, public=True)
        mover = seated[state.view.to_move]
        moves = (await legal(mover, game_id)).moves
        move = "draw" if "draw" in moves else "pass"
        draws += move == "draw"
        await play(mover, game_id, move)
    version = (await view(alice, game_id)).status.version

    own = await view(alice, game_id)
    assert own.view.hand
    assert len(own.view.hand) == own.view.hand_sizes[0]
    streams = [await _updates(s, game_id, version, public=False) for s in seated]
    assert "drew_cards" in _private_events(streams[0] + streams[1])

    spectators = [
        (await view(stranger, game_id), await _updates(stranger, game_id, version, False)),
        (await view(alice, game_id, public=True), await _updates(alice, game_id, version, True)),
    ]
    for spectator_view, stream in spectators:
        assert not spectator_view.HasField("seat")
        assert list(spectator_view.view.hand) == []
        assert spectator_view.view.drawn_card == ""
        assert sum(spectator_view.view.hand_sizes) > 0
        assert len(stream) == version + 1
        assert _private_events(stream) == []
        assert any(e.WhichOneof("kind") == "drew" for u in stream for e in u.events)
    await close_all([alice, bob, stranger])


# -- (4) through the gateway, only the public methods ---------------------------------------------


async def test_the_gateway_offers_exactly_the_public_services(platform: Platform) -> None:
    """Reflection lists health, reflection, Auth, Lobby, the player session and the game
    services, nothing else; every public game method is routed (it asks for a token, it does
    not say UNIMPLEMENTED)."""
    public = {
        health_pb2.DESCRIPTOR.services_by_name["Health"].full_name,
        reflection.SERVICE_NAME,
        REFLECTION_V1,
        "tabletop.lobby.v1.AuthService",
        "tabletop.lobby.v1.LobbyService",
        "tabletop.session.v1.SessionService",
        *(api(game).full_name for game in platform.games),
    }
    async with grpc.aio.insecure_channel(platform.target) as channel:
        stub = reflection_pb2_grpc.ServerReflectionStub(channel)
        request = reflection_pb2.ServerReflectionRequest(list_services="")
        async for reply in stub.ServerReflectionInfo(iter([request])):
            names = {s.name for s in reply.list_services_response.service}
            break
        assert names == public
        for game in platform.games:
            service = api(game).descriptor
            for method in service.methods:
                path = f"/{service.full_name}/{method.name}"
                await assert_refused(
                    _raw_call(channel, path, method.server_streaming, ()),
                    grpc.StatusCode.UNAUTHENTICATED,
                    "UNAUTHENTICATED",
                )


@pytest.mark.parametrize(
    "path",
    [
        "/tabletop.esoloe.v1.EsoloeService/play",
        "/tabletop.esoloe.v1.EsoloeService/",
        "/tabletop.esoloe.v1.EsoloeService/Play/CreateGame",
        "/tabletop.esoloe.v1.EsoloeService/Play/../Admin",
        "//tabletop.esoloe.v1.EsoloeService/Play",
        "/tabletop.esoloe.v1.EsoloeService.Play",
        "/tabletop.solo.v1.SoloService/Play",  # a game this gateway has no backend for
        "/tabletop.lobby.v1.LobbyService/DeleteTickets",
        "/tabletop.lobby.v1.AuthService/Issue",
        "/tabletop.internal.v1.Admin/Reset",
        "/grpc.health.v1.Health/Set",
    ],
)
async def test_anything_but_a_public_method_is_unimplemented(platform: Platform, path: str) -> None:
    """With a valid token: methods that are no public route are not reachable."""
    (alice,) = await logged_in(platform, "alice")
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await _raw_call(alice.channel, path, False, alice.metadata)
    assert caught.value.code() == grpc.StatusCode.UNIMPLEMENTED, caught.value.details()
    await alice.close()


async def test_the_internal_player_metadata_cannot_be_smuggled(
    esoloe_table: tuple[Session, Session, str],
) -> None:
    """Alice sends her token plus `x-tabletop-player: <bob>` (the key the gateway uses to tell a
    game service who calls): she still acts and reads as herself; without a token, the key alone
    is refused."""
    alice, bob, game_id = esoloe_table
    stub = alice.game("esoloe")
    await stub.Play(common_pb2.PlayRequest(game_id=game_id, move="c12"), metadata=alice.metadata)
    before = await _public_state(alice, "esoloe", game_id)
    smuggled = (*alice.metadata, (PLAYER_METADATA, bob.player_id), (REQUEST_METADATA, "r-1"))
    await assert_refused(
        stub.Play(common_pb2.PlayRequest(game_id=game_id, move="d12"), metadata=smuggled),
        grpc.StatusCode.FAILED_PRECONDITION,
        "NOT_YOUR_TURN",
    )
    await assert_refused(
        stub.Resign(common_pb2.ResignRequest(game_id=game_id, seat=1), metadata=smuggled),
        grpc.StatusCode.PERMISSION_DENIED,
        "NOT_YOUR_SEAT",
    )
    seen = await stub.GetView(common_pb2.GetViewRequest(game_id=game_id), metadata=smuggled)
    assert seen.HasField("seat")  # Alice's seat, not the public view
    assert seen.seat == 0
    assert (
        await stub.LegalMoves(common_pb2.LegalMovesRequest(game_id=game_id), metadata=smuggled)
    ).seat == 0
    await assert_refused(
        stub.Play(
            common_pb2.PlayRequest(game_id=game_id, move="d12"),
            metadata=((PLAYER_METADATA, bob.player_id),),
        ),
        grpc.StatusCode.UNAUTHENTICATED,
        "UNAUTHENTICATED",
    )
    assert await _public_state(alice, "esoloe", game_id) == before


async def test_services_behind_the_gateway_refuse_calls_it_did_not_prove(
    platform: Platform,
) -> None:
    """Reaching a game service's port is not enough: a direct GetView naming Alice (the call that
    once returned her Solo hand), one with a proof made with another key, a stale one, a proof
    for another method or player, Alice's good proof of a GetView of another game (or of
    another seat) replayed on this one, a call naming the player twice, a relay link opened
    without a proof and naming Bob, and a CreateGame as the platform are all refused with
    UNAUTHENTICATED; health still answers; the platform's own key is accepted."""
    alice, bob = await logged_in(platform, "alice", "bob")
    created = await platform.create_game(
        "esoloe", esoloe_pb2.CreateGameRequest(players=[alice.player_id, bob.player_id])
    )
    game_id = created.status.game_id
    target = platform.replica_target(0)
    path = "/tabletop.esoloe.v1.EsoloeService/GetView"
    request = common_pb2.GetViewRequest(game_id=game_id)
    body = request.SerializeToString()
    other_game = common_pb2.GetViewRequest(game_id="esoloe-000000000000000000000000")
    other_seat = common_pb2.GetViewRequest(game_id=game_id, seat=1)
    as_alice = ((PLAYER_METADATA, alice.player_id),)
    now = int(time.time() * 1000)
    attempts = {
        "no proof": as_alice,
        "another key": prove("not-the-platform-key-0123", path, as_alice, body=body),
        "stale": prove(TEST_INTERNAL_KEY, path, as_alice, now - 3_600_000, body=body),
        "another method": prove(
            TEST_INTERNAL_KEY, path.replace("GetView", "Play"), as_alice, body=body
        ),
        "another player": (
            *prove(TEST_INTERNAL_KEY, path, ((PLAYER_METADATA, bob.player_id),), body=body)[1:],
            *as_alice,
        ),
        "a proof of another game's request": prove(
            TEST_INTERNAL_KEY, path, as_alice, body=other_game.SerializeToString()
        ),
        "a proof of another seat's request": prove(
            TEST_INTERNAL_KEY, path, as_alice, body=other_seat.SerializeToString()
        ),
        "the player named twice": (
            *prove(TEST_INTERNAL_KEY, path, ((PLAYER_METADATA, bob.player_id),), body=body),
            *as_alice,
        ),
        # the proof an older process sends along, alone: it does not cover the request
        "an unbound proof alone": (
            *as_alice,
            (PROOF_METADATA, proof(TEST_INTERNAL_KEY, path, dict(as_alice), body, None, UNBOUND)),
        ),
    }
    async with grpc.aio.insecure_channel(target) as channel:
        stub = api("esoloe").stub(channel)
        for what, metadata in attempts.items():
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await stub.GetView(request, metadata=metadata)
            assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED, what
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await stub.CreateGame(
                esoloe_pb2.CreateGameRequest(players=[bob.player_id, bob.player_id])
            )
        assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
        link: Any = channel.stream_stream(
            RELAY_METHOD,
            request_serializer=relay_pb2.RelayRequest.SerializeToString,
            response_deserializer=relay_pb2.RelayResponse.FromString,
        )()
        with contextlib.suppress(grpc.aio.AioRpcError):  # refused as it opened, maybe
            await link.write(
                relay_pb2.RelayRequest(
                    call_id=1,
                    method="GetView",
                    request=request.SerializeToString(),
                    player_id=bob.player_id,
                )
            )
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await link.read()
        assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
        health = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest())
        assert health.status == health_pb2.HealthCheckResponse.SERVING
    async with platform.internal_channel(target) as proven_channel:
        seen = await api("esoloe").stub(proven_channel).GetView(request, metadata=as_alice)
        assert seen.seat == 0
    await close_all([alice, bob])


async def test_a_relay_link_takes_only_proven_calls_and_only_within_its_window(
    platform: Platform,
) -> None:
    """A relay link opened with a good proof still refuses a call without a proof of its own,
    and a call whose proof was made for another request (another game, another player); and a
    link opened with a proof about to go stale stops taking calls once it has (the gateway's
    links are renewed long before)."""
    alice, bob = await logged_in(platform, "alice", "bob")
    created = await platform.create_game(
        "esoloe", esoloe_pb2.CreateGameRequest(players=[alice.player_id, bob.player_id])
    )
    game_id = created.status.game_id
    path = "/tabletop.esoloe.v1.EsoloeService/GetView"
    body = common_pb2.GetViewRequest(game_id=game_id).SerializeToString()
    other_game = common_pb2.GetViewRequest(game_id="esoloe-000000000000000000000000")

    def call(call_id: int, good_for: bytes | None = body, player: str = "") -> Any:
        request = relay_pb2.RelayRequest(
            call_id=call_id, method="GetView", request=body, player_id=alice.player_id
        )
        if good_for is not None:
            fields = relayed_fields(request) | {PLAYER_METADATA: player or alice.player_id}
            request.proof = proof(TEST_INTERNAL_KEY, path, fields, good_for)
        return request

    def open_link(channel: grpc.aio.Channel, issued_ms: int | None = None) -> Any:
        return channel.stream_stream(
            RELAY_METHOD,
            request_serializer=relay_pb2.RelayRequest.SerializeToString,
            response_deserializer=relay_pb2.RelayResponse.FromString,
        )(metadata=prove(TEST_INTERNAL_KEY, RELAY_METHOD, (), issued_ms))

    async with grpc.aio.insecure_channel(platform.replica_target(0)) as channel:
        link = open_link(channel)
        for number, request in enumerate(
            [call(1), call(2, None), call(3, other_game.SerializeToString()), call(4, body, "p-x")],
            start=1,
        ):
            await link.write(request)
            answer = await link.read()
            assert answer.call_id == number
            expected = grpc.StatusCode.OK if number == 1 else grpc.StatusCode.UNAUTHENTICATED
            assert status_code(answer) == expected, (number, answer.details)
        await link.done_writing()
        # A link whose opening proof has a few seconds left: served now, refused once stale.
        window_ms = FRESH_SECONDS * 1000
        old = open_link(channel, int(time.time() * 1000) - window_ms + int(patience(0.6) * 1000))
        await old.write(call(5))
        assert status_code(await old.read()) == grpc.StatusCode.OK

        async def refused_later() -> Any:
            await asyncio.sleep(0.1)
            await old.write(call(6))
            while (answer := await old.read()).drain:
                pass  # the notice that the link takes no more calls
            return None if status_code(answer) == grpc.StatusCode.OK else answer

        answer = await eventually(refused_later, 10, "a stale link refusing calls")
        assert status_code(answer) == grpc.StatusCode.UNAVAILABLE
        assert "expired" in answer.details
        await old.done_writing()
    await close_all([alice, bob])


@pytest.mark.parametrize("upgrading", [True, False])
async def test_an_older_gateways_proofs_are_taken_only_during_an_upgrade(
    redis_url: str, upgrading: bool
) -> None:
    """An older gateway proves a direct call with an unbound proof only, and relays calls with
    no proof of their own: a service takes them while ACCEPT_UNBOUND_PROOFS is set (a rolling
    upgrade fails no call), and refuses them otherwise."""
    settings = ServiceSettings(
        redis_url=redis_url,
        listen="127.0.0.1:0",
        grace_seconds=0.5,
        internal_key=TEST_INTERNAL_KEY,
        accept_unbound_proofs=upgrading,
    )
    service = await start_game_service("esoloe", settings)
    path = "/tabletop.esoloe.v1.EsoloeService/GetView"
    request = common_pb2.GetViewRequest(game_id=new_game_id("esoloe"))  # none such
    as_alice = ((PLAYER_METADATA, "p-alice"),)
    old_proof = proof(TEST_INTERNAL_KEY, path, dict(as_alice), b"", None, UNBOUND)
    expected = "GAME_NOT_FOUND" if upgrading else "UNAUTHENTICATED"  # past the proof, or not
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{service.server.port}") as channel:
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await (
                    api("esoloe")
                    .stub(channel)
                    .GetView(request, metadata=(*as_alice, (PROOF_METADATA, old_proof)))
                )
            assert error_info(refused.value)[0] == expected
            link_proof = proof(TEST_INTERNAL_KEY, RELAY_METHOD, {}, b"", None, UNBOUND)
            link: Any = channel.stream_stream(
                RELAY_METHOD,
                request_serializer=relay_pb2.RelayRequest.SerializeToString,
                response_deserializer=relay_pb2.RelayResponse.FromString,
            )(metadata=((PROOF_METADATA, link_proof),))
            call = relay_pb2.RelayRequest(
                call_id=1,
                method="GetView",
                request=request.SerializeToString(),
                player_id="p-alice",
            )
            if upgrading:
                await link.write(call)
                answer = await link.read()
                assert error_info_of(answer) == "GAME_NOT_FOUND"
                await link.done_writing()
            else:  # the link itself is refused as it opens
                with contextlib.suppress(grpc.aio.AioRpcError):
                    await link.write(call)
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await link.read()
                assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
    finally:
        await service.server.stop(0)
        await service.close()


def error_info_of(answer: relay_pb2.RelayResponse) -> str:
    """The reason in a relayed answer's trailers."""
    trailers = {t.key: t.value for t in answer.trailers}
    status = status_pb2.Status.FromString(trailers["grpc-status-details-bin"])
    (detail,) = status.details
    info = error_details_pb2.ErrorInfo()
    detail.Unpack(info)
    return str(info.reason)


async def test_redis_takes_only_clients_with_its_password(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a password on Redis (REDIS_PASSWORD), a client without it reads nothing, and the
    platform's processes, which have it, play as usual."""
    password = "redis-test-password-0123456789"
    redis = LocalRedis(appendonly=False, password=password)
    try:
        stranger = Redis.from_url(redis.url)
        with pytest.raises(AuthenticationError):
            await stranger.keys("*")
        await stranger.aclose()
        monkeypatch.setenv("REDIS_PASSWORD", password)
        async with Platform(redis.url) as platform:
            alice, bob = await logged_in(platform, "alice", "bob")
            created = await platform.create_game(
                "esoloe", esoloe_pb2.CreateGameRequest(players=[alice.player_id, bob.player_id])
            )
            reply = await alice.game("esoloe").Play(
                common_pb2.PlayRequest(game_id=created.status.game_id, move="c12"),
                metadata=alice.metadata,
            )
            assert reply.status.version == 1
            await close_all([alice, bob])
    finally:
        redis.stop()


async def test_streams_that_need_no_token_are_bounded_and_reflection_can_be_off(
    redis_url: str,
) -> None:
    """Health watches on the public port need no token: a connection holds at most 2 here and
    an address 3 (by default 4 and 16); more are refused with LIMIT_REACHED, and a closed one
    frees its place. With reflection off, the public port does not serve it."""
    bounds = OpenStreams(per_connection=2, per_address=3, total=100)
    async with Platform(
        redis_url, gateway_settings={"open_streams": bounds, "reflection": False}
    ) as platform:
        channels = [  # two connections (channels alike would share one)
            grpc.aio.insecure_channel(
                platform.target, options=[("grpc.use_local_subchannel_pool", 1)]
            )
            for _ in range(2)
        ]
        health = [health_pb2_grpc.HealthStub(channel) for channel in channels]
        opened = []

        async def watch(stub: Any) -> Any:
            call = stub.Watch(health_pb2.HealthCheckRequest())
            await call.read()  # the first status: the stream is open
            opened.append(call)
            return call

        await watch(health[0])
        await watch(health[0])
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await watch(health[0])  # a third on one connection
        assert error_info(refused.value)[0] == "LIMIT_REACHED"
        await watch(health[1])
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await watch(health[1])  # a fourth from one address
        assert error_info(refused.value)[0] == "LIMIT_REACHED"
        opened.pop(0).cancel()

        async def room_again() -> bool:
            try:
                await watch(health[1])
            except grpc.aio.AioRpcError:
                return False
            return True

        await eventually(room_again, 5, "a place freed by a closed watch")
        reflect = reflection_pb2_grpc.ServerReflectionStub(channels[0])
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            async for _ in reflect.ServerReflectionInfo(
                iter([reflection_pb2.ServerReflectionRequest(list_services="")])
            ):
                pass
        assert refused.value.code() == grpc.StatusCode.UNIMPLEMENTED
        for call in opened:
            call.cancel()
        for channel in channels:
            await channel.close()
