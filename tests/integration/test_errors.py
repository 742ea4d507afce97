"""Bad input through the gateway: each answered with its status code, a stable reason and a
clear message, and the game left unchanged."""

from __future__ import annotations

import asyncio
import ipaddress
import time
from collections.abc import AsyncIterator
from typing import Any

import grpc
import jwt
import pytest

from client.session import Session
from runtime.server import MAX_REQUEST_BYTES
from tabletop.common.v1 import common_pb2
from tabletop.esoloe.v1 import esoloe_pb2
from tabletop.lobby.v1 import lobby_pb2
from tests.platform import TEST_BOT_KEY, TEST_SECRET, Platform, assert_refused, logged_in
from tests.timing import eventually
from wire.errors import error_info
from wire.players import new_bot_id

pytestmark = pytest.mark.integration


class Table:
    def __init__(self, platform: Platform) -> None:
        self.platform = platform
        self.alice = Session(platform.target)
        self.bob = Session(platform.target)
        self.game_id = ""

    async def open(self) -> Table:
        await self.alice.login("alice")
        await self.bob.login("bob")
        created = await self.platform.create_game(
            "esoloe",
            esoloe_pb2.CreateGameRequest(players=[self.alice.player_id, self.bob.player_id]),
        )
        self.game_id = created.status.game_id
        return self

    async def play(self, session: Session, move: str, **fields: object) -> esoloe_pb2.PlayResponse:
        request = common_pb2.PlayRequest(game_id=self.game_id, move=move, **fields)  # type: ignore[arg-type]
        reply: esoloe_pb2.PlayResponse = await session.game("esoloe").Play(
            request, metadata=session.metadata
        )
        return reply

    async def snapshot(self) -> esoloe_pb2.GetViewResponse:
        reply: esoloe_pb2.GetViewResponse = await self.alice.game("esoloe").GetView(
            common_pb2.GetViewRequest(game_id=self.game_id), metadata=self.alice.metadata
        )
        return reply


@pytest.fixture(params=["unary", "session"])
async def table(platform: Platform, request: pytest.FixtureRequest) -> AsyncIterator[Table]:
    """Alice and Bob at an e-SOLO-e table, calling with calls of their own ("unary") or on a
    player session's stream ("session"): both must answer each error the same way."""
    table = await Table(platform).open()
    if request.param == "session":
        table.alice.open_stream()
        table.bob.open_stream()
    yield table
    await table.alice.close()
    await table.bob.close()


async def test_malformed_notation(table: Table) -> None:
    before = await table.snapshot()
    await assert_refused(
        table.play(table.alice, "f12"),
        grpc.StatusCode.INVALID_ARGUMENT,
        "MALFORMED_MOVE",
        "does not exist",
        "a..e",
    )
    await assert_refused(
        table.play(table.alice, "c42"), grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED_MOVE", "blank"
    )
    await assert_refused(
        table.play(table.alice, "c16"), grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED_MOVE"
    )
    await assert_refused(
        table.play(table.alice, ""), grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED_MOVE"
    )
    assert await table.snapshot() == before


async def test_wrong_seat_and_turn(table: Table) -> None:
    before = await table.snapshot()
    await assert_refused(
        table.play(table.bob, "c12"), grpc.StatusCode.FAILED_PRECONDITION, "NOT_YOUR_TURN"
    )
    await assert_refused(
        table.play(table.alice, "c12", seat=1),
        grpc.StatusCode.PERMISSION_DENIED,
        "NOT_YOUR_SEAT",
        "seat 1 is not yours",
    )
    outsider = Session(table.platform.target)
    await outsider.login("mallory")
    await assert_refused(
        table.play(outsider, "c12"), grpc.StatusCode.PERMISSION_DENIED, "NOT_YOUR_SEAT"
    )
    await assert_refused(
        outsider.game("esoloe").LegalMoves(
            common_pb2.LegalMovesRequest(game_id=table.game_id, seat=0), metadata=outsider.metadata
        ),
        grpc.StatusCode.PERMISSION_DENIED,
        "NOT_YOUR_SEAT",
    )
    await assert_refused(
        outsider.game("esoloe").GetView(
            common_pb2.GetViewRequest(game_id=table.game_id, seat=1), metadata=outsider.metadata
        ),
        grpc.StatusCode.PERMISSION_DENIED,
        "NOT_YOUR_SEAT",
    )
    spectator = await outsider.game("esoloe").GetView(
        common_pb2.GetViewRequest(game_id=table.game_id), metadata=outsider.metadata
    )
    assert not spectator.HasField("seat")
    assert await table.snapshot() == before


async def test_fourth_level_that_does_not_win(table: Table) -> None:
    # Fill square a to three cubes, with faces that make no line, then try a 4th.
    for session, move in [(table.alice, "a14"), (table.bob, "a26"), (table.alice, "a14")]:
        await table.play(session, move)
    before = await table.snapshot()
    details = await assert_refused(
        table.play(table.bob, "a26"),
        grpc.StatusCode.INVALID_ARGUMENT,
        "ILLEGAL_MOVE",
        "only when it wins",
    )
    assert "E3" in details
    assert await table.snapshot() == before


async def test_stale_expected_version(table: Table) -> None:
    await table.play(table.alice, "c12", expected_version=0)
    before = await table.snapshot()
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await table.play(table.bob, "d12", expected_version=0)
    assert caught.value.code() == grpc.StatusCode.ABORTED
    reason, metadata = error_info(caught.value)
    assert reason == "STALE_VERSION"
    assert metadata["version"] == "1"
    assert await table.snapshot() == before


async def test_a_negative_expected_version_is_refused_clearly(table: Table) -> None:
    """Not UNKNOWN (Redis refuses a stream id below 0), nor "seat -1 played ''" (the game's
    creation told as a move): an invalid argument, and nothing changes."""
    await table.play(table.alice, "c12", expected_version=0)
    before = await table.snapshot()
    for version in (-1, -2, -(2**62)):
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await table.play(table.bob, "d12", expected_version=version)
        assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert error_info(caught.value)[0] == "INVALID_ARGUMENT"
        assert "expected_version" in (caught.value.details() or "")
    assert await table.snapshot() == before


async def test_a_call_with_a_deadline_years_away_is_served(table: Table) -> None:
    """A client deadline far beyond any call's need (here ~3 years: past a 32-bit count of
    milliseconds) is served as one of the gateway's longest, not answered UNKNOWN."""
    reply = await table.alice.game("esoloe").GetView(
        common_pb2.GetViewRequest(game_id=table.game_id),
        metadata=table.alice.metadata,
        timeout=100_000_000,
    )
    assert reply.status.game_id == table.game_id
    played = await table.alice.game("esoloe").Play(
        common_pb2.PlayRequest(game_id=table.game_id, move="c12", expected_version=0),
        metadata=table.alice.metadata,
        timeout=100_000_000,
    )
    assert played.status.version == 1


async def test_retried_request_is_applied_once(table: Table) -> None:
    first = await table.play(table.alice, "c12", request_id="move-1")
    again = await table.play(table.alice, "c12", request_id="move-1")
    assert first.status.version == again.status.version == 1
    assert again.events[0].placed.square == "c"
    assert (await table.snapshot()).status.version == 1


async def test_a_request_id_reused_for_another_move_is_refused(table: Table) -> None:
    """Answering the first move's result to a different move would tell the caller that a move
    was played that was not: a reused request id with another move is refused, nothing moves."""
    await table.play(table.alice, "c12", request_id="move-1")
    before = await table.snapshot()
    await assert_refused(
        table.play(table.alice, "d12", request_id="move-1"),
        grpc.StatusCode.INVALID_ARGUMENT,
        "REQUEST_ID_REUSED",
        "'move-1' was already used for 'c12'",
        "new request id",
    )
    await table.play(table.bob, "a12", request_id="move-1")  # ids are the caller's own
    await assert_refused(
        table.alice.game("esoloe").Resign(
            common_pb2.ResignRequest(game_id=table.game_id, request_id="move-1"),
            metadata=table.alice.metadata,
        ),
        grpc.StatusCode.INVALID_ARGUMENT,
        "REQUEST_ID_REUSED",
    )
    after = await table.snapshot()
    assert after.status.version == before.status.version + 1
    assert not after.status.finished


async def test_a_retry_gets_the_first_answer_after_the_game_moved_on(table: Table) -> None:
    """A retry whose first answer was lost (the caller cannot know) must learn what its own move
    did: the version it produced and its events, not the game as it is by then."""
    first = await table.play(table.alice, "c12", request_id="move-1", expected_version=0)
    await table.play(table.bob, "a12", expected_version=1)
    again = await table.play(table.alice, "c12", request_id="move-1", expected_version=0)
    assert again.status.version == first.status.version == 1
    assert list(again.status.to_act) == list(first.status.to_act) == [1]
    assert again.events == first.events
    assert (await table.snapshot()).status.version == 2


async def test_unknown_and_malformed_game_ids(table: Table) -> None:
    stub = table.alice.game("esoloe")
    await assert_refused(
        stub.GetView(
            common_pb2.GetViewRequest(game_id="esoloe-" + "0" * 20), metadata=table.alice.metadata
        ),
        grpc.StatusCode.NOT_FOUND,
        "GAME_NOT_FOUND",
    )
    await assert_refused(
        stub.GetView(common_pb2.GetViewRequest(game_id="../etc"), metadata=table.alice.metadata),
        grpc.StatusCode.INVALID_ARGUMENT,
        "INVALID_ARGUMENT",
        "malformed",
    )
    await assert_refused(
        stub.GetView(
            common_pb2.GetViewRequest(game_id="solo-" + "0" * 20), metadata=table.alice.metadata
        ),
        grpc.StatusCode.NOT_FOUND,
        "GAME_NOT_FOUND",
        "not a esoloe game",
    )


async def test_tokens_missing_forged_expired(platform: Platform) -> None:
    """Each call of its own carries its token (a session's stream carries one for all its calls:
    tests/integration/test_session_stream.py)."""
    table = await Table(platform).open()
    stub = table.alice.game("esoloe")
    request = common_pb2.GetViewRequest(game_id=table.game_id)
    await assert_refused(
        stub.GetView(request), grpc.StatusCode.UNAUTHENTICATED, "UNAUTHENTICATED", "no token"
    )
    forged = jwt.encode(
        {"sub": table.alice.player_id, "exp": int(time.time()) + 60},
        "some-other-key-0123456789-0123456789",
        algorithm="HS256",
    )
    await assert_refused(
        stub.GetView(request, metadata=(("authorization", f"Bearer {forged}"),)),
        grpc.StatusCode.UNAUTHENTICATED,
        "UNAUTHENTICATED",
        "signature",
    )
    expired = jwt.encode(
        {"sub": table.alice.player_id, "exp": int(time.time()) - 5}, TEST_SECRET, algorithm="HS256"
    )
    await assert_refused(
        stub.GetView(request, metadata=(("authorization", f"Bearer {expired}"),)),
        grpc.StatusCode.UNAUTHENTICATED,
        "UNAUTHENTICATED",
        "expired",
    )
    await assert_refused(
        stub.GetView(request, metadata=(("authorization", "Basic abc"),)),
        grpc.StatusCode.UNAUTHENTICATED,
        "UNAUTHENTICATED",
        "Bearer",
    )
    # The player id cannot be smuggled past the gateway in the internal metadata key.
    await assert_refused(
        table.play(Session(table.platform.target), "c12"),
        grpc.StatusCode.UNAUTHENTICATED,
        "UNAUTHENTICATED",
    )


async def test_oversized_request(table: Table) -> None:
    before = await table.snapshot()
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await table.play(table.alice, "c" * 200_000)
    assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    await assert_refused(
        table.play(table.alice, "c" * 1000),
        grpc.StatusCode.INVALID_ARGUMENT,
        "MALFORMED_MOVE",
        "longer than",
    )
    assert await table.snapshot() == before


async def test_a_request_just_under_the_public_limit_fails_alone(table: Table) -> None:
    """A request the gateway takes (just under its 64 KiB) is a little larger once wrapped for
    the relay: the services allow for that, so it is answered on its own merits (here a move
    too long) and never ends the relay link it shares with other players' calls, which all go
    through meanwhile."""
    request = common_pb2.PlayRequest(game_id=table.game_id, move="c" * MAX_REQUEST_BYTES)
    request.move = "c" * (len(request.move) - (request.ByteSize() - MAX_REQUEST_BYTES) - 8)
    assert MAX_REQUEST_BYTES - 16 < request.ByteSize() < MAX_REQUEST_BYTES

    async def oversized() -> str:
        try:
            await table.alice.game("esoloe").Play(request, metadata=table.alice.metadata)
        except grpc.aio.AioRpcError as error:
            return error_info(error)[0]
        return "OK"

    async def honest() -> int:
        reply: esoloe_pb2.GetViewResponse = await table.bob.game("esoloe").GetView(
            common_pb2.GetViewRequest(game_id=table.game_id), metadata=table.bob.metadata
        )
        return reply.status.version

    answers = await asyncio.gather(
        *(oversized() for _ in range(16)), *(honest() for _ in range(32))
    )
    assert answers[:16] == ["MALFORMED_MOVE"] * 16
    assert answers[16:] == [0] * 32


async def test_bad_login_name(platform: Platform) -> None:
    session = Session(platform.target)
    await assert_refused(
        session.login(""), grpc.StatusCode.INVALID_ARGUMENT, "INVALID_ARGUMENT", "1 to 32"
    )
    await assert_refused(
        session.login("x" * 100), grpc.StatusCode.INVALID_ARGUMENT, "INVALID_ARGUMENT"
    )


async def test_create_game_checks_players(table: Table) -> None:
    stub = table.alice.game("esoloe")
    await assert_refused(
        stub.CreateGame(
            esoloe_pb2.CreateGameRequest(players=[table.alice.player_id]),
            metadata=table.alice.metadata,
        ),
        grpc.StatusCode.INVALID_ARGUMENT,
        "INVALID_ARGUMENT",
        "2 seats",
    )
    # A seat's holder must be nameable in the x-tabletop-player metadata, or nobody could act.
    for junk in ["", "p bob", "p-bob\n", "p-b\u00f6b", "p-" + "b" * 63]:
        await assert_refused(
            stub.CreateGame(
                esoloe_pb2.CreateGameRequest(players=[table.alice.player_id, junk]),
                metadata=table.alice.metadata,
            ),
            grpc.StatusCode.INVALID_ARGUMENT,
            "INVALID_ARGUMENT",
            "printable ASCII characters without spaces",
        )


async def test_players_create_only_tables_of_their_own(table: Table) -> None:
    """Through the gateway a player may only create a table whose every seat is theirs (hot
    seat): nobody is seated without asking (their live games would count against them), and
    only the platform seats bots. The platform itself (the lobby) may seat anyone, but only
    real bot levels."""
    stub = table.alice.game("esoloe")
    alice, bob = table.alice.player_id, table.bob.player_id
    for players in ([alice, bob], [bob, bob], [alice, new_bot_id("strong")]):
        await assert_refused(
            stub.CreateGame(
                esoloe_pb2.CreateGameRequest(players=players), metadata=table.alice.metadata
            ),
            grpc.StatusCode.PERMISSION_DENIED,
            "NOT_YOUR_SEAT",
            "FindMatch",
            "PlayAgainstBots",
        )
    own = await stub.CreateGame(
        esoloe_pb2.CreateGameRequest(players=[alice, alice]), metadata=table.alice.metadata
    )
    assert [s.player_id for s in own.status.seats] == [alice, alice]
    for fake in ["bot-zzz-deadbeef", "bot-strong", "bot-genius-0123456789ab"]:
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await table.platform.create_game(
                "esoloe", esoloe_pb2.CreateGameRequest(players=[alice, fake])
            )
        assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "not a bot seat" in (caught.value.details() or "")


async def test_rate_limit(redis_url: str) -> None:
    async with Platform(redis_url, rate_per_second=1.0, rate_burst=3.0) as platform:
        session = Session(platform.target)
        await session.login("eager")
        request = common_pb2.GetViewRequest(game_id="esoloe-" + "0" * 20)
        codes = []
        for _ in range(5):
            try:
                await session.game("esoloe").GetView(request, metadata=session.metadata)
            except grpc.aio.AioRpcError as error:
                codes.append(error.code())
        assert codes[:3] == [grpc.StatusCode.NOT_FOUND] * 3
        assert codes[3:] == [grpc.StatusCode.RESOURCE_EXHAUSTED] * 2
        await session.close()


async def test_a_rate_limited_call_says_when_to_retry_as_its_metadata_does(redis_url: str) -> None:
    """The message's `retry in Nms` is the `retry_after_ms` a program reads: the same N."""
    async with Platform(redis_url, rate_per_second=50.0, rate_burst=1.0) as platform:
        session = Session(platform.target)
        await session.login("eager")
        request = common_pb2.GetViewRequest(game_id="esoloe-" + "0" * 20)
        refusals = []
        for _ in range(40):
            try:
                await session.game("esoloe").GetView(request, metadata=session.metadata)
            except grpc.aio.AioRpcError as error:
                reason, info = error_info(error)
                if reason == "RATE_LIMITED":
                    refusals.append((error.details() or "", info["retry_after_ms"]))
        await session.close()
        assert len(refusals) >= 10, refusals
        for details, retry_after_ms in refusals:
            assert details == f"too many requests; retry in {retry_after_ms}ms", refusals
            assert 0 < int(retry_after_ms) <= 21  # at 50 a second, the next one within 20 ms


async def test_guessing_the_bot_key_is_rate_limited_but_workers_never_wait(
    redis_url: str,
) -> None:
    """Guessing the bot key costs as much as logging in: from one address, BotLogin with a
    wrong key gets the login limit's burst (20) and then RATE_LIMITED. A worker with the key
    logs in all the same: its logins never share a limit with guests'."""
    async with Platform(redis_url) as platform:
        session = Session(platform.target)
        reasons = []
        for _ in range(24):
            try:
                await session.bot_login(new_bot_id("random"), "a guess")
            except grpc.aio.AioRpcError as error:
                reasons.append(error_info(error)[0])
        assert reasons[:20] == ["UNAUTHENTICATED"] * 20
        assert reasons[20:] == ["RATE_LIMITED"] * 4
        await assert_refused(
            session.login("guest"), grpc.StatusCode.RESOURCE_EXHAUSTED, "RATE_LIMITED"
        )
        worker = await session.worker_login(TEST_BOT_KEY)
        assert worker.player_id.startswith("worker-")
        await session.close()


async def test_a_bot_moves_while_guests_have_used_up_the_login_limit(redis_url: str) -> None:
    """Bot workers log in once, as workers, not once per bot seat through the guests' limit:
    with this address's logins used up by guests (a player churning bot games did it), a new
    bot game's bot still plays at once. A worker's token acts only for bot seats."""
    async with Platform(
        redis_url,
        bot_workers=1,
        gateway_settings={"login_rate_per_second": 0.001, "login_rate_burst": 2.0},
    ) as platform:
        (alice,) = await logged_in(platform, "alice")
        await Session(platform.target).login("churner")
        await assert_refused(
            Session(platform.target).login("one more"),
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            "RATE_LIMITED",
        )
        for _ in range(3):  # new bot seats, each of which once needed a login of its own
            reply = await alice.lobby.PlayAgainstBots(
                lobby_pb2.PlayAgainstBotsRequest(game="esoloe", seat=1), metadata=alice.metadata
            )

            async def bot_moved(game_id: str = reply.status.game_id) -> bool:
                view = await alice.game("esoloe").GetView(
                    common_pb2.GetViewRequest(game_id=game_id), metadata=alice.metadata
                )
                return bool(view.status.version >= 1)

            await eventually(bot_moved, 10, "the bot's first move")
        worker = Session(platform.target)
        await worker.worker_login(TEST_BOT_KEY)
        await assert_refused(  # acting for a person is not a worker's to do
            worker.game("esoloe").GetView(
                common_pb2.GetViewRequest(game_id=reply.status.game_id),
                metadata=worker.acting_for(alice.player_id),
            ),
            grpc.StatusCode.UNAUTHENTICATED,
            "UNAUTHENTICATED",
        )
        await worker.close()
        await alice.close()


@pytest.mark.parametrize("behind_proxy", [True, False])
async def test_guest_logins_are_limited_by_the_address_a_trusted_proxy_forwards(
    redis_url: str, behind_proxy: bool
) -> None:
    """Behind a trusted proxy (TRUSTED_PROXIES), each client address it forwards has a login
    limit of its own; from anyone else, `x-forwarded-for` is ignored (a client cannot pick
    its own address)."""
    trusted = (ipaddress.ip_network("127.0.0.1/32"),) if behind_proxy else ()
    settings = {"login_rate_per_second": 0.001, "login_rate_burst": 2.0, "trusted_proxies": trusted}
    async with Platform(redis_url, gateway_settings=settings) as platform:
        session = Session(platform.target)

        async def login(address: str) -> str | None:
            try:
                await session.auth.Login(
                    lobby_pb2.LoginRequest(name="guest"),
                    metadata=(("x-forwarded-for", address),),
                )
            except grpc.aio.AioRpcError as error:
                return error_info(error)[0]
            return None

        assert [await login("198.51.100.1") for _ in range(3)] == [None, None, "RATE_LIMITED"]
        other = await login("198.51.100.2")
        assert other == (None if behind_proxy else "RATE_LIMITED")
        await session.close()


async def test_a_resignation_is_applied_whatever_move_came_between_its_read_and_its_write(
    redis_url: str,
) -> None:
    """A move judged on a position another move changed meanwhile is refused (the first one
    wins); a resignation asks for no position: it is applied to the game as it is then."""
    async with Platform(redis_url, games=("esoloe",)) as platform:
        (alice,) = await logged_in(platform, "alice")
        created = await alice.game("esoloe").CreateGame(
            esoloe_pb2.CreateGameRequest(players=[alice.player_id] * 2), metadata=alice.metadata
        )
        game_id = created.status.game_id
        core = platform.services[0].sweep.core
        write = core._write
        raced: list[int] = []

        async def write_after_another_move(*args: Any, **kwargs: Any) -> Any:
            if not raced:  # seat 0 moves between the resignation's read and its write
                raced.append(1)
                await alice.game("esoloe").Play(
                    common_pb2.PlayRequest(game_id=game_id, move="a12", seat=0),
                    metadata=alice.metadata,
                )
            return await write(*args, **kwargs)

        core._write = write_after_another_move  # type: ignore[method-assign]
        resigned = await alice.game("esoloe").Resign(
            common_pb2.ResignRequest(game_id=game_id, seat=1), metadata=alice.metadata
        )
        assert raced
        assert resigned.status.finished
        assert resigned.status.version == 2  # after the move that came between
        assert list(resigned.status.result.winners) == [0]


async def test_an_honest_players_bot_keeps_answering_while_another_player_churns_bot_games(
    redis_url: str,
) -> None:
    """The attack that stalled every bot for half a minute: one player makes and resigns games
    against bots as fast as it may (each queues a bot job). Another player's bot answers each
    of its moves all the while (how fast: `make bench`, the stack section: 20 ms p50, 88 ms p99
    on a loaded 2-core machine)."""
    async with Platform(redis_url, games=("esoloe",), bot_workers=1) as platform:
        honest, churner = await logged_in(platform, "honest", "churner")
        stop = asyncio.Event()
        churned = 0

        async def churn() -> None:
            nonlocal churned
            while not stop.is_set():
                reply = await churner.lobby.PlayAgainstBots(
                    lobby_pb2.PlayAgainstBotsRequest(game="esoloe", seat=1),
                    metadata=churner.metadata,
                )
                await churner.game("esoloe").Resign(
                    common_pb2.ResignRequest(game_id=reply.status.game_id),
                    metadata=churner.metadata,
                )
                churned += 1

        churning = asyncio.create_task(churn())
        try:
            await eventually(lambda: churned >= 20, 10, "the churn under way")
            stub = honest.game("esoloe")

            async def new_game() -> str:
                game = await honest.lobby.PlayAgainstBots(
                    lobby_pb2.PlayAgainstBotsRequest(game="esoloe", seat=0),
                    metadata=honest.metadata,
                )
                return str(game.status.game_id)

            game_id = await new_game()
            # Three moves of ours, each answered by the bot. Our moves are the first legal ones,
            # which the bot may beat by its 2nd cube: a game it won answered our move too, and
            # the next move is played in a new game.
            for _ in range(3):

                async def my_moves(game_id: str = game_id) -> Any:
                    found = await stub.LegalMoves(
                        common_pb2.LegalMovesRequest(game_id=game_id), metadata=honest.metadata
                    )
                    return found if found.moves else None

                legal = await eventually(my_moves, 2, "our turn")
                played = await stub.Play(
                    common_pb2.PlayRequest(game_id=game_id, move=legal.moves[0]),
                    metadata=honest.metadata,
                )

                async def answered(
                    game_id: str = game_id, at: int = played.status.version + 1
                ) -> Any:
                    view = await stub.GetView(
                        common_pb2.GetViewRequest(game_id=game_id), metadata=honest.metadata
                    )
                    done = view.status.version >= at or view.status.finished  # ours may win
                    return view.status if done else None

                status = await eventually(answered, 2, "the bot's answer")
                if status.finished:
                    game_id = await new_game()
            before = churned
            await eventually(lambda: churned > before, 5, "the churn still going")
        finally:
            stop.set()
            await churning
