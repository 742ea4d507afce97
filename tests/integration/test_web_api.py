"""The API for browsers (gateway/web.py): every public method answered over the Connect protocol
and gRPC-Web exactly as over gRPC (the same answers, codes, error reasons and their metadata),
through the same steps (tokens, limits, streams per player), a Watch resumed after a dropped
connection without gap or duplicate, a player's notifications streamed, CORS only for the
origins configured, and the web client's files with headers that keep the page to itself."""

from __future__ import annotations

import asyncio
import http.client
import json
import urllib.parse
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import grpc
import pytest
import pytest_asyncio

import games
from client.session import Session
from gateway.web import WebSettings
from runtime.server import MAX_REQUEST_BYTES
from tabletop.common.v1 import common_pb2
from tabletop.esoloe.v1 import esoloe_pb2
from tabletop.lobby.v1 import lobby_pb2
from tabletop.zoxso.v1 import zoxso_pb2
from tests.integration.test_accounts import PASSWORD
from tests.platform import Platform, logged_in
from tests.web import PROTOCOLS, Answer, Call, call
from wire.api import AUTH_SERVICE
from wire.errors import error_info

pytestmark = pytest.mark.integration

ESOLOE = "/tabletop.esoloe.v1.EsoloeService"
ZOXSO = "/tabletop.zoxso.v1.ZoxsoService"
ORIGIN = "https://friends.example"


@pytest_asyncio.fixture
async def web(redis_url: str, database_url: str, tmp_path: Path) -> AsyncIterator[Platform]:
    (tmp_path / "index.html").write_text("<!doctype html><title>tabletop</title>")
    (tmp_path / "app.js").write_text("console.log('hi')")
    settings = WebSettings("127.0.0.1:0", root=str(tmp_path), origins=(ORIGIN,))
    async with Platform(
        redis_url,
        games=games.names(),
        database_url=database_url,
        web=settings,
        gateway_settings={"streams_per_player": 3},
    ) as platform:
        yield platform


async def grpc_call(platform: Platform, path: str, request: bytes, token: str = "") -> Answer:
    """The same call over gRPC, read the same way."""
    metadata = (("authorization", f"Bearer {token}"),) if token else ()
    async with grpc.aio.insecure_channel(platform.target) as channel:
        method: grpc.aio.UnaryUnaryMultiCallable[bytes, bytes] = channel.unary_unary(path)
        try:
            reply = await method(request, metadata=metadata, timeout=30)
        except grpc.aio.AioRpcError as error:
            reason, metadata_ = error_info(error)
            name = "canceled" if error.code() == grpc.StatusCode.CANCELLED else error.code().name
            return Answer(name.lower(), error.details() or "", reason, dict(metadata_))
    return Answer(messages=[reply])


async def every_way(platform: Platform, path: str, request: bytes, token: str = "") -> list[Answer]:
    """The call over gRPC, Connect and gRPC-Web."""
    answers = [await grpc_call(platform, path, request, token)]
    for protocol in PROTOCOLS:
        answers.append(
            await asyncio.to_thread(
                call, platform.web_url, path, request, protocol=protocol, token=token
            )
        )
    return answers


def same(answers: list[Answer]) -> Answer:
    first = answers[0]
    for other in answers[1:]:
        assert (other.code, other.message, other.reason, other.metadata) == (
            first.code, first.message, first.reason, first.metadata,
        ), f"{other} differs from gRPC's {first}"  # fmt: skip
    return first


async def test_every_public_method_is_served_over_connect_and_grpc_web(web: Platform) -> None:
    """Each public method of the gateway, called with no token (or, for AuthService, with an
    empty request), answers the same over the three protocols: none is missing."""
    assert web.gateway is not None
    paths = [*web.gateway.proxy.routes]
    auth = lobby_pb2.DESCRIPTOR.services_by_name["AuthService"]
    paths += [f"/{AUTH_SERVICE}/{m.name}" for m in auth.methods]
    assert len(paths) > 60
    for path in paths:
        if web.gateway.proxy.routes.get(path, None) and web.gateway.proxy.routes[path].streaming:
            continue  # the streams: below
        answer = same(await every_way(web, path, b""))
        assert answer.code != "unimplemented", path
        if path in web.gateway.proxy.routes:
            assert answer.reason == "UNAUTHENTICATED", (path, answer)


async def test_errors_read_the_same_on_every_protocol(web: Platform) -> None:
    """Refusals from each layer (the gateway's guard, AuthService, a game service through the
    relay, the lobby), each with its reason and metadata, as Connect and gRPC-Web clients read
    them: the same code, message, reason and metadata as gRPC's."""
    (ann,) = await logged_in(web, "ann")
    token = ann.token
    created = await web.create_game(
        "esoloe", esoloe_pb2.CreateGameRequest(players=[ann.player_id, ann.player_id])
    )
    game_id = created.status.game_id
    theirs = await web.create_game(
        "esoloe", esoloe_pb2.CreateGameRequest(players=["p-00000000000000aa", ann.player_id])
    )
    play = "/tabletop.esoloe.v1.EsoloeService/Play"
    not_yours = common_pb2.PlayRequest(
        game_id=theirs.status.game_id, move="c12", seat=0
    ).SerializeToString()

    def move(text: str, version: int, seat: int, request_id: str = "") -> bytes:
        return common_pb2.PlayRequest(
            game_id=game_id, move=text, expected_version=version, seat=seat,
            request_id=request_id,
        ).SerializeToString()  # fmt: skip

    seen: set[str] = set()
    cases: list[tuple[str, str, bytes, str]] = [
        ("UNAUTHENTICATED", f"{ESOLOE}/GetView", b"", ""),
        ("UNAUTHENTICATED", f"{ESOLOE}/GetView", b"", "not.a.token"),
        ("INVALID_ARGUMENT", f"{ESOLOE}/GetView",
         common_pb2.GetViewRequest(game_id="esoloe-nope").SerializeToString(), token),
        ("GAME_NOT_FOUND", f"{ESOLOE}/GetView",
         common_pb2.GetViewRequest(game_id="esoloe-" + "0" * 20).SerializeToString(), token),
        ("MALFORMED_MOVE", play, move("zz", 0, 0), token),
        ("NOT_YOUR_TURN", play, move("c12", 0, 1), token),
        ("STALE_VERSION", play, move("c12", 5, 0), token),
        ("NOT_YOUR_SEAT", play, not_yours, token),
        ("INVALID_ARGUMENT", play, move("c12", 0, 7), token),
        ("TICKET_NOT_FOUND", "/tabletop.lobby.v1.LobbyService/CancelTicket",
         lobby_pb2.CancelTicketRequest(ticket_id="t-" + "0" * 16).SerializeToString(), token),
        ("INVALID_ARGUMENT", f"/{AUTH_SERVICE}/Register",
         lobby_pb2.RegisterRequest(username="x", password="short").SerializeToString(), ""),
    ]  # fmt: skip
    for reason, path, request, who in cases:
        answer = same(await every_way(web, path, request, who))
        assert answer.reason == reason, (path, answer)
        seen.add(reason)
    # Played once (the first answer), then the same request id for another move.
    first = await ann.game("esoloe").Play(
        common_pb2.PlayRequest(game_id=game_id, move="c12", seat=0, request_id="r1"),
        metadata=ann.metadata,
    )
    assert first.status.version == 1
    reused = same(await every_way(web, play, move("e14", 1, 1, "r1"), token))
    assert reused.reason == "REQUEST_ID_REUSED"
    # An account name taken.
    await ann.close()
    taken = lobby_pb2.RegisterRequest(username="bobby", password="a long enough password")
    assert (
        await grpc_call(web, f"/{AUTH_SERVICE}/Register", taken.SerializeToString())
    ).code == "ok"
    answer = same(await every_way(web, f"/{AUTH_SERVICE}/Register", taken.SerializeToString()))
    assert answer.reason == "USERNAME_TAKEN"
    seen |= {"REQUEST_ID_REUSED", "USERNAME_TAKEN"}
    assert len(seen) >= 10


async def test_a_request_too_large_is_refused_alone(web: Platform) -> None:
    (ann,) = await logged_in(web, "ann")
    big = common_pb2.GetViewRequest(game_id="x" * (MAX_REQUEST_BYTES + 10)).SerializeToString()
    for protocol in PROTOCOLS:
        answer = await asyncio.to_thread(
            call, web.web_url, f"{ESOLOE}/GetView", big, protocol=protocol, token=ann.token
        )
        assert answer.code == "resource_exhausted", (protocol, answer)
    # ...and the next call is served.
    reply = await asyncio.to_thread(
        call, web.web_url, f"/{AUTH_SERVICE}/WhoAmI", b"", token=ann.token
    )
    assert reply.code == "ok"
    await ann.close()


async def hot_seat(
    platform: Platform, moves: int
) -> tuple[str, str, Callable[[], Awaitable[None]]]:
    """A game of ZoxSo (a long one) one player plays both seats of, `moves` moves in; its id,
    the player's token, and a function that plays the next move."""
    (ann,) = await logged_in(platform, "ann")
    created = await platform.create_game(
        "zoxso", zoxso_pb2.CreateGameRequest(players=[ann.player_id, ann.player_id])
    )
    game_id = created.status.game_id
    stub = ann.game("zoxso")

    async def next_move() -> None:
        view = await stub.GetView(common_pb2.GetViewRequest(game_id=game_id, seat=0),
                                  metadata=ann.metadata)  # fmt: skip
        seat = view.status.to_act[0]
        legal = await stub.LegalMoves(
            common_pb2.LegalMovesRequest(game_id=game_id, seat=seat), metadata=ann.metadata
        )
        await stub.Play(
            common_pb2.PlayRequest(game_id=game_id, move=sorted(legal.moves)[0], seat=seat,
                                   expected_version=legal.version),
            metadata=ann.metadata,
        )  # fmt: skip

    for _ in range(moves):
        await next_move()
    return game_id, ann.token, next_move


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_a_watch_resumes_after_a_dropped_connection(web: Platform, protocol: str) -> None:
    """Watch over HTTP: versions as they come; the connection dropped (the network failed), the
    client asks again from the version after the last it saw, and gets every later one once."""
    game_id, token, next_move = await hot_seat(web, 3)

    def watch(from_version: int) -> Call:
        request = common_pb2.WatchRequest(game_id=game_id, from_version=from_version, seat=0)
        return Call(web.web_url, f"{ZOXSO}/Watch", request.SerializeToString(),
                    protocol=protocol, streaming=True, token=token)  # fmt: skip

    def versions(stream: Call, count: int) -> list[int]:
        found = []
        for data in stream.messages():
            found.append(zoxso_pb2.WatchResponse.FromString(data).status.version)
            if len(found) == count:
                stream.close()  # dropped mid-stream
                break
        return found

    first = await asyncio.to_thread(watch, 0)
    seen = await asyncio.to_thread(versions, first, 4)  # versions 0..3
    assert seen == [0, 1, 2, 3]
    for _ in range(3):  # played while the client is away
        await next_move()
    again = await asyncio.to_thread(watch, seen[-1] + 1)
    seen += await asyncio.to_thread(versions, again, 3)
    assert seen == list(range(7)), "a gap or a duplicate"


async def test_streams_count_against_the_players_bound(web: Platform) -> None:
    """Streams over HTTP are the player's streams: with 3 open (the bound here), a fourth, over
    any protocol, is refused LIMIT_REACHED; closing one makes room."""
    game_id, token, _ = await hot_seat(web, 1)
    request = common_pb2.WatchRequest(game_id=game_id, from_version=1, seat=0).SerializeToString()

    def open_stream(protocol: str) -> Call:
        return Call(web.web_url, f"{ZOXSO}/Watch", request, protocol=protocol,
                    streaming=True, token=token)  # fmt: skip

    held = [await asyncio.to_thread(open_stream, p) for p in ("connect", "grpc-web", "connect")]

    def refused(protocol: str) -> tuple[str, str]:
        answer = open_stream(protocol).run()
        return answer.code, answer.reason

    for protocol in PROTOCOLS:
        assert await asyncio.to_thread(refused, protocol) == ("resource_exhausted", "LIMIT_REACHED")
    grpc_answer = await grpc_stream_error(web, request, token)
    assert grpc_answer == ("resource_exhausted", "LIMIT_REACHED")
    held[0].close()

    async def room() -> bool:
        answer = await grpc_stream_error(web, request, token, first_only=True)
        return answer == ("ok", "")

    for _ in range(200):
        if await room():
            break
        await asyncio.sleep(0.05)
    else:
        raise AssertionError("a closed stream did not give its place back")
    for stream in held[1:]:
        stream.close()


async def grpc_stream_error(
    platform: Platform, request: bytes, token: str, first_only: bool = False
) -> tuple[str, str]:
    """How a gRPC Watch with `request` begins: ("ok", "") once a message came, else its error."""
    async with grpc.aio.insecure_channel(platform.target) as channel:
        watch: grpc.aio.UnaryStreamMultiCallable[bytes, bytes] = channel.unary_stream(
            f"{ZOXSO}/Watch"
        )
        stream = watch(request, metadata=(("authorization", f"Bearer {token}"),), timeout=2)
        try:
            async for _ in stream:
                return "ok", ""
        except grpc.aio.AioRpcError as error:
            if first_only and error.code() == grpc.StatusCode.DEADLINE_EXCEEDED:
                return "ok", ""  # no message yet, but admitted
            return error.code().name.lower(), error_info(error)[0]
        finally:
            stream.cancel()
    return "ok", ""


async def test_json_is_answered_as_json(web: Platform) -> None:
    """The Connect protocol's JSON: a request in JSON, the answer in JSON (field names in
    lowerCamelCase), errors as JSON with the reason in the details."""
    json_headers = {"content-type": "application/json"}
    request = json.dumps({"name": "jay"}).encode()
    status, _, body = await asyncio.to_thread(
        _raw, web, "POST", f"/{AUTH_SERVICE}/Login", json_headers, request
    )
    assert status == 200
    answer = json.loads(body)
    assert answer["playerId"].startswith("p-")
    assert answer["name"] == "jay"
    request = json.dumps({"gameId": "esoloe-nope"}).encode()
    headers = {**json_headers, "authorization": f"Bearer {answer['token']}"}
    status, _, body = await asyncio.to_thread(
        _raw, web, "POST", f"{ESOLOE}/GetView", headers, request
    )
    error = json.loads(body)
    assert status == 400
    assert error["code"] == "invalid_argument"
    assert error["details"][0]["type"] == "google.rpc.ErrorInfo"


def _raw(
    platform: Platform, method: str, path: str, headers: dict[str, str], body: bytes = b""
) -> tuple[int, dict[str, str], bytes]:
    url = urllib.parse.urlsplit(platform.web_url)
    connection = http.client.HTTPConnection(url.hostname or "", url.port, timeout=10)
    connection.request(method, path, body=body or None, headers=headers)
    response = connection.getresponse()
    found = (response.status, {k.lower(): v for k, v in response.getheaders()}, response.read())
    connection.close()
    return found


async def test_other_origins_may_call_only_when_configured(web: Platform) -> None:
    path = f"/{AUTH_SERVICE}/Login"
    asked = {"origin": ORIGIN, "access-control-request-method": "POST"}
    status, headers, _ = await asyncio.to_thread(_raw, web, "OPTIONS", path, asked)
    assert status == 204
    assert headers["access-control-allow-origin"] == ORIGIN
    stranger = {**asked, "origin": "https://evil.example"}
    status, headers, _ = await asyncio.to_thread(_raw, web, "OPTIONS", path, stranger)
    assert status == 403
    assert "access-control-allow-origin" not in headers


async def test_the_web_clients_files_are_served_and_kept_to_themselves(web: Platform) -> None:
    status, headers, body = await asyncio.to_thread(_raw, web, "GET", "/", {})
    assert status == 200
    assert body.startswith(b"<!doctype html>")
    assert headers["content-type"].startswith("text/html")
    assert "default-src 'self'" in headers["content-security-policy"]
    assert "frame-ancestors 'none'" in headers["content-security-policy"]
    status, headers, _ = await asyncio.to_thread(_raw, web, "GET", "/app.js", {})
    assert status == 200
    assert "javascript" in headers["content-type"]
    for outside in ("/../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/nothing.js"):
        status, _, _ = await asyncio.to_thread(_raw, web, "GET", outside, {})
        assert status == 404, outside


@pytest.mark.parametrize("protocol", PROTOCOLS)
async def test_notifications_stream_over_http(web: Platform, protocol: str) -> None:
    """WatchNotifications over HTTP: a challenge made to the player comes on it, as over gRPC."""
    ann, bob = [Session(web.target) for _ in range(2)]
    await ann.register("ann", PASSWORD)
    await bob.register("bob", PASSWORD)
    made = await ann.lobby.ChallengePlayer(
        lobby_pb2.ChallengePlayerRequest(player_id=bob.player_id, game="zoxso"),
        metadata=ann.metadata,
    )

    def first_notification() -> lobby_pb2.Notification:
        request = lobby_pb2.WatchNotificationsRequest(after_id="0")
        stream = Call(web.web_url, "/tabletop.lobby.v1.LobbyService/WatchNotifications",
                      request.SerializeToString(), protocol=protocol, streaming=True,
                      token=bob.token)  # fmt: skip
        try:
            for data in stream.messages():
                return lobby_pb2.Notification.FromString(data)
        finally:
            stream.close()
        raise AssertionError("the stream ended without a notification")

    told = await asyncio.to_thread(first_notification)
    assert told.kind == lobby_pb2.NOTIFICATION_KIND_CHALLENGE_RECEIVED
    assert (told.challenge_id, told.player_id) == (made.challenge_id, ann.player_id)
    for session in (ann, bob):
        await session.close()
