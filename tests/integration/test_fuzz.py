"""Random and malformed input at every RPC of every game service, through the gateway: each
answer is a proper status code (never UNKNOWN or INTERNAL), and no game changes."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import games
from client.session import Session
from tabletop.common.v1 import common_pb2
from tests.platform import Platform, logged_in
from wire.api import api

pytestmark = pytest.mark.integration

GAMES = tuple(games.names())
ALLOWED = {
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.FAILED_PRECONDITION,
    grpc.StatusCode.NOT_FOUND,
    grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.ABORTED,
    grpc.StatusCode.UNAUTHENTICATED,
    grpc.StatusCode.RESOURCE_EXHAUSTED,
}

moves = st.one_of(
    st.text(max_size=40),
    st.text(alphabet="abcdefghABCDEFGH12345678@^-:!rgbyWXSRD ", max_size=12),
    st.sampled_from(["c12", "play W4:b", "B2-B4", "b2^B2-B5", "draw", "pass", "solo", "stop"]),
    st.binary(max_size=30).map(lambda b: b.decode("latin-1")),
    st.integers(min_value=5_000, max_value=70_000).map(lambda n: "x" * n),
)
game_ids = st.one_of(
    st.just("REAL"),
    st.text(max_size=30),
    st.sampled_from([f"{g}-{'0' * 20}" for g in GAMES] + ["", "esoloe-", "../../etc"]),
)
versions = st.one_of(st.none(), st.integers(min_value=-3, max_value=10**12))
seats = st.one_of(st.none(), st.integers(min_value=-(2**31), max_value=2**31 - 1))


class World:
    """One platform with one game of each kind, and players who may or may not sit in it."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.platform: Platform | None = None
        self.games: dict[str, str] = {}
        self.sessions: list[Session] = []

    def run(self, coro: Any) -> Any:
        return self.loop.run_until_complete(coro)

    def open(self, redis_url: str) -> World:
        async def start() -> None:
            self.platform = Platform(redis_url, games=GAMES)
            await self.platform.__aenter__()
            self.sessions = await logged_in(self.platform, "owner", "second", "outsider")
            owner, second = self.sessions[0], self.sessions[1]
            for game in GAMES:
                players = {"solace": [owner.player_id], "solo": [owner.player_id, second.player_id]}
                request = api(game).pb2.CreateGameRequest(
                    players=players.get(game, [owner.player_id, second.player_id])
                )
                if game == "solo":
                    request.options.players = 2
                created = await self.platform.create_game(game, request)
                self.games[game] = created.status.game_id

        self.run(start())
        return self

    def close(self) -> None:
        async def stop() -> None:
            for session in self.sessions:
                await session.close()
            assert self.platform is not None
            await self.platform.__aexit__(None, None, None)

        self.run(stop())
        self.loop.close()

    async def state(self) -> dict[str, bytes]:
        owner = self.sessions[0]
        return {
            game: (
                await owner.game(game).GetView(
                    common_pb2.GetViewRequest(game_id=game_id, public=True),
                    metadata=owner.metadata,
                )
            ).SerializeToString(deterministic=True)
            for game, game_id in self.games.items()
        }


@pytest.fixture(scope="module")
def world(redis_url: str) -> Iterator[World]:
    opened = World().open(redis_url)
    yield opened
    opened.close()


async def _answer(call: Any) -> grpc.StatusCode:
    """The call's status; a Watch that is still waiting for the game's next move when its
    deadline comes is a live watch, and fine."""
    streaming = hasattr(call, "__aiter__")
    try:
        if streaming:
            async for _ in call:
                break
            call.cancel()
        else:
            await call
    except grpc.aio.AioRpcError as error:
        if streaming and error.code() == grpc.StatusCode.DEADLINE_EXCEEDED:
            return grpc.StatusCode.OK
        refused = error
    else:
        return grpc.StatusCode.OK
    assert refused.code() in ALLOWED, (refused.code(), refused.details())
    assert refused.details(), "every refusal says why"
    return refused.code()


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    game=st.sampled_from(GAMES),
    rpc=st.sampled_from(["Play", "Resign", "GetView", "LegalMoves", "Watch", "StopGame"]),
    who=st.sampled_from(["second", "outsider", "forged", "none"]),
    move=moves,
    game_id=game_ids,
    expected=versions,
    seat=seats,
    request_id=st.text(max_size=80),
)
def test_bad_calls_get_clean_refusals_and_change_nothing(
    world: World, game: str, rpc: str, who: str, move: str, game_id: str,
    expected: int | None, seat: int | None, request_id: str,
) -> None:  # fmt: skip
    """`second` may legally act in some games; everything else must be refused cleanly. A call
    that succeeds is undone from the comparison by re-reading the state afterwards."""

    async def one() -> None:
        before = await world.state()
        session = {"second": world.sessions[1], "outsider": world.sessions[2]}.get(who)
        metadata: tuple[tuple[str, str], ...] = (
            session.metadata if session
            else (("authorization", "Bearer not.a.token"),) if who == "forged" else ()
        )  # fmt: skip
        stub = api(game).stub(world.sessions[0].channel)
        target = world.games[game] if game_id == "REAL" else game_id
        fields: dict[str, Any] = {"game_id": target}
        if seat is not None:
            fields["seat"] = seat
        if rpc == "Play":
            if expected is not None:
                fields["expected_version"] = expected
            request: Any = common_pb2.PlayRequest(move=move, request_id=request_id, **fields)
        elif rpc == "Resign":
            request = common_pb2.ResignRequest(request_id=request_id, **fields)
        elif rpc == "GetView":
            request = common_pb2.GetViewRequest(**fields)
        elif rpc == "LegalMoves":
            request = common_pb2.LegalMovesRequest(**fields)
        elif rpc == "StopGame":
            request = common_pb2.StopGameRequest(game_id=target)
        else:
            request = common_pb2.WatchRequest(from_version=expected or 0, **fields)
        timeout = 1 if rpc == "Watch" else 10
        code = await _answer(getattr(stub, rpc)(request, metadata=metadata, timeout=timeout))
        after = await world.state()
        changed = {g for g in GAMES if before[g] != after[g]}
        if code != grpc.StatusCode.OK or rpc not in ("Play", "Resign"):
            assert not changed, f"{rpc} answered {code} but changed {changed}"
        else:  # an accepted move by a seated player changes its own game only
            assert who == "second"
            assert changed <= {game}

    world.run(one())
