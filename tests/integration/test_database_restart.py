"""PostgreSQL restarted under a running accounts service and gateway, with a fast stop and with an
immediate one (as a crash): while it is down the account calls answer UNAVAILABLE (retry) and a
game goes on (no Play reads the database); once it is back, everything committed is there.

The restarts are made from this process while it serves and calls gRPC, as the soak's chaos
does: the server, started as another user when we are root, must not be forked in the way that
crashes such a process's children (runtime/localpg.py)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator

import grpc
import pytest

from client.session import Session
from runtime import db
from runtime.localpg import LocalPostgres
from tabletop.common.v1 import common_pb2
from tabletop.esoloe.v1 import esoloe_pb2
from tabletop.lobby.v1 import lobby_pb2
from tests.platform import Platform
from tests.timing import eventually
from wire.errors import error_info

PASSWORD = "correct horse battery"


@pytest.fixture
def restartable() -> Iterator[LocalPostgres]:
    """A PostgreSQL of this test's own (the session's is shared: not to be restarted)."""
    server = LocalPostgres()
    try:
        db.migrate(server.url)
        yield server
    finally:
        server.stop()


async def _reason(call: object) -> str:
    try:
        await call  # type: ignore[misc]
    except grpc.aio.AioRpcError as error:
        return error_info(error)[0] or error.code().name
    return "answered"


@contextlib.asynccontextmanager
async def _calling(session: Session) -> AsyncIterator[list[int]]:
    """WhoAmI over and over meanwhile (gRPC busy in this process): how many were answered."""
    answered = [0]
    stop = asyncio.Event()

    async def loop() -> None:
        while not stop.is_set():
            await session.auth.WhoAmI(lobby_pb2.WhoAmIRequest(), metadata=session.metadata)
            answered[0] += 1

    task = asyncio.create_task(loop())
    try:
        yield answered
    finally:
        stop.set()
        await task


async def test_account_calls_wait_out_a_postgres_restart_and_play_goes_on(
    redis_url: str, restartable: LocalPostgres, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DATABASE_TIMEOUT_SECONDS", "0.5")  # the accounts service's wait for one
    async with Platform(
        redis_url,
        database_url=restartable.url,
        gateway_settings={"revocation_poll_seconds": 0.2, "login_rate_burst": 1000.0},
        # WhoAmI goes on as fast as it is answered: on a fast machine faster than a player's
        # rate limit, which is not what this test is about.
        rate_per_second=1_000_000.0,
        rate_burst=1_000_000.0,
    ) as stack:
        alice = Session(stack.target)
        await alice.register("alice", PASSWORD)
        game = alice.game("esoloe")
        created = await game.CreateGame(
            esoloe_pb2.CreateGameRequest(players=[alice.player_id, alice.player_id]),
            metadata=alice.metadata,
        )
        status = created.status
        for immediate in (False, True):
            async with _calling(alice) as answered:
                await asyncio.to_thread(restartable.down, immediate)
                refresh = lobby_pb2.RefreshRequest(refresh_token=alice.refresh_token)
                assert await _reason(alice.auth.Refresh(refresh)) == "UNAVAILABLE"
                assert await _reason(Session(stack.target).account_login("alice", PASSWORD)) == (
                    "UNAVAILABLE"
                )
                seat = status.to_act[0]
                legal = await game.LegalMoves(
                    common_pb2.LegalMovesRequest(game_id=status.game_id, seat=seat),
                    metadata=alice.metadata,
                )
                played = await game.Play(
                    common_pb2.PlayRequest(
                        game_id=status.game_id, move=legal.moves[0], seat=seat,
                        expected_version=status.version,
                    ),
                    metadata=alice.metadata,
                )  # fmt: skip
                assert played.status.version == status.version + 1
                status = played.status
                await asyncio.to_thread(restartable.up)
            assert answered[0] > 0

            async def refreshed() -> bool:
                # The refused calls used nothing up: the same refresh token rotates now.
                return await _reason(alice.refresh()) == "answered"

            await eventually(refreshed, 10, "a refresh once PostgreSQL is back")
            again = Session(stack.target)
            assert (await again.account_login("alice", PASSWORD)).player_id == alice.player_id
            await again.close()
        await alice.close()
