"""Accounts on the real stack: the gateway with a real PostgreSQL (migrated by runtime.db) and
the game services on a real Redis. Registration, logins, refresh token rotation and reuse,
logging out (here and on another gateway), password changes, a guest claiming an account."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from collections.abc import AsyncIterator
from typing import Any

import grpc
import psycopg
import pytest
import pytest_asyncio

from client.session import Session
from gateway.server import Gateway
from runtime import db
from runtime.localpg import LocalPostgres
from runtime.localredis import free_port
from services.game.limits import Limits
from tabletop.common.v1 import common_pb2
from tabletop.esoloe.v1 import esoloe_pb2
from tabletop.lobby.v1 import lobby_pb2
from tests.platform import Platform
from tests.timing import eventually, patience
from wire.errors import error_info

PASSWORD = "correct horse battery"
POLL = 0.2  # the gateways' REVOCATION_POLL_SECONDS here


def reason(error: pytest.ExceptionInfo[grpc.aio.AioRpcError]) -> str:
    return error_info(error.value)[0] or error.value.code().name


async def refusal(call: Any, *args: Any, **kwargs: Any) -> str | None:
    """The reason a call is refused with; None if it is answered."""
    try:
        await call(*args, **kwargs)
    except grpc.aio.AioRpcError as error:
        return error_info(error)[0] or error.code().name
    return None


async def refused(call: Any, *args: Any, **kwargs: Any) -> str:
    """The reason a call is refused with (it must be)."""
    found = await refusal(call, *args, **kwargs)
    assert found is not None, f"{call} was answered"
    return found


@pytest_asyncio.fixture
async def stack(redis_url: str, database_url: str) -> AsyncIterator[Platform]:
    async with Platform(
        redis_url,
        database_url=database_url,
        gateway_settings={"revocation_poll_seconds": POLL, "login_rate_burst": 1000.0},
    ) as platform:
        yield platform


async def whoami(session: Session) -> lobby_pb2.WhoAmIResponse:
    reply: lobby_pb2.WhoAmIResponse = await session.auth.WhoAmI(
        lobby_pb2.WhoAmIRequest(), metadata=session.metadata
    )
    return reply


async def test_a_registered_player_is_an_account_with_a_session(stack: Platform) -> None:
    alice = Session(stack.target)
    reply = await alice.register("Alice", PASSWORD)
    assert reply.player_id.startswith("a-")
    assert reply.name == "Alice"
    assert reply.refresh_token
    assert reply.session_id
    assert reply.refresh_expires_at.seconds > reply.expires_at.seconds
    me = await whoami(alice)
    assert (me.kind, me.name, me.session_id) == ("account", "Alice", reply.session_id)
    sessions = await alice.auth.ListSessions(
        lobby_pb2.ListSessionsRequest(), metadata=alice.metadata
    )
    assert [(s.session_id, s.current) for s in sessions.sessions] == [(reply.session_id, True)]
    again = Session(stack.target)
    assert (await again.account_login("alice", PASSWORD)).player_id == reply.player_id
    await alice.close()
    await again.close()


async def test_usernames_are_unique_whatever_the_case_and_checked(stack: Platform) -> None:
    first = Session(stack.target)
    await first.register("Bob", PASSWORD)
    other = Session(stack.target)
    assert await refused(other.register, "bOB", PASSWORD) == "USERNAME_TAKEN"
    assert await refused(other.register, "b", PASSWORD) == "INVALID_ARGUMENT"
    assert await refused(other.register, "bob bob", PASSWORD) == "INVALID_ARGUMENT"
    assert await refused(other.register, "carol", "short") == "INVALID_ARGUMENT"
    assert await refused(other.register, "carol", "x" * 129) == "INVALID_ARGUMENT"
    await first.close()
    await other.close()


async def test_the_password_is_kept_only_as_an_argon2id_hash(
    stack: Platform, database_url: str
) -> None:
    session = Session(stack.target)
    await session.register("dora", PASSWORD)
    with psycopg.connect(database_url) as connection:
        row = connection.execute(
            "SELECT password_hash FROM accounts WHERE username_key = 'dora'"
        ).fetchone()
        tokens = connection.execute("SELECT hash FROM refresh_tokens").fetchall()
    assert row is not None
    assert row[0].startswith("$argon2id$")
    assert PASSWORD not in row[0]
    assert all(session.refresh_token.encode() not in bytes(t[0]) for t in tokens)
    await session.close()


async def test_a_wrong_password_and_an_unknown_name_are_refused_alike(stack: Platform) -> None:
    session = Session(stack.target)
    await session.register("erin", PASSWORD)
    guest = Session(stack.target)
    with pytest.raises(grpc.aio.AioRpcError) as wrong:
        await guest.account_login("erin", PASSWORD + "!")
    with pytest.raises(grpc.aio.AioRpcError) as unknown:
        await guest.account_login("nobody", PASSWORD)
    assert reason(wrong) == reason(unknown) == "UNAUTHENTICATED"
    assert wrong.value.details() == unknown.value.details()
    await session.close()
    await guest.close()


async def test_a_refresh_token_works_once_and_its_reuse_ends_the_session(
    stack: Platform,
) -> None:
    session = Session(stack.target)
    await session.register("frank", PASSWORD)
    first_refresh, first_access = session.refresh_token, session.token
    await session.refresh()
    assert session.refresh_token != first_refresh
    assert session.token != first_access
    assert (await whoami(session)).kind == "account"  # the new access token works
    thief = Session(stack.target)
    thief.refresh_token = first_refresh
    assert await refused(thief.refresh) == "UNAUTHENTICATED"  # a used one, shown again
    # the session is over: its newest refresh token and its access token with it
    assert await refused(session.refresh) == "UNAUTHENTICATED"
    ended = await eventually(
        lambda: refusal(whoami, session), seconds=POLL * 20, what="the access token refused"
    )
    assert ended == "UNAUTHENTICATED"
    await session.close()
    await thief.close()


async def test_logging_out_ends_the_session_on_every_gateway(
    stack: Platform, database_url: str
) -> None:
    assert stack.gateway is not None
    other = Gateway(dataclasses.replace(stack.gateway.settings, listen="127.0.0.1:0"))
    await other.start()
    try:
        here = Session(stack.target)
        await here.register("gina", PASSWORD)
        there = Session(f"127.0.0.1:{other.port}")
        there.token = here.token
        assert (await whoami(there)).name == "gina"
        phone = Session(stack.target)
        await phone.account_login("gina", PASSWORD)
        token = here.token
        assert await here.logout() == 1
        here.token = token
        assert await refused(whoami, here) == "UNAUTHENTICATED"  # at once where it was done
        # on the other gateway within its poll (and a database round trip)
        ended = await eventually(
            lambda: refusal(whoami, there), seconds=POLL * 20, what="refused on the other gateway"
        )
        assert ended == "UNAUTHENTICATED"
        assert (await whoami(phone)).name == "gina"  # the other session goes on
        assert await phone.logout(everywhere=True) == 1
        assert await refused(phone.refresh) == "UNAUTHENTICATED"
        await here.close()
        await there.close()
        await phone.close()
    finally:
        await other.stop(0)


async def test_a_new_password_ends_the_other_sessions(stack: Platform) -> None:
    laptop = Session(stack.target)
    await laptop.register("hank", PASSWORD)
    phone = Session(stack.target)
    await phone.account_login("hank", PASSWORD)
    reply = await laptop.auth.ChangePassword(
        lobby_pb2.ChangePasswordRequest(old_password=PASSWORD, new_password="new " + PASSWORD),
        metadata=laptop.metadata,
    )
    assert reply.sessions_ended == 1
    assert await refused(phone.refresh) == "UNAUTHENTICATED"
    assert (await whoami(laptop)).name == "hank"
    assert await refused(Session(stack.target).account_login, "hank", PASSWORD) == (
        "UNAUTHENTICATED"
    )
    await Session(stack.target).account_login("hank", "new " + PASSWORD)
    wrong_old = lobby_pb2.ChangePasswordRequest(old_password="nope nope", new_password=PASSWORD)
    assert (
        await refused(laptop.auth.ChangePassword, wrong_old, metadata=laptop.metadata)
        == "UNAUTHENTICATED"
    )
    await laptop.close()
    await phone.close()


async def test_a_guest_claims_an_account_and_keeps_its_games(stack: Platform) -> None:
    guest = Session(stack.target)
    await guest.login("ivy")
    created = await guest.game("esoloe").CreateGame(
        esoloe_pb2.CreateGameRequest(players=[guest.player_id, guest.player_id]),
        metadata=guest.metadata,
    )
    player_id = guest.player_id
    await guest.register("ivy", PASSWORD)
    assert guest.player_id == player_id
    later = Session(stack.target)
    await later.account_login("IVY", PASSWORD)
    view = await later.game("esoloe").GetView(
        common_pb2.GetViewRequest(game_id=created.status.game_id, seat=0),
        metadata=later.metadata,
    )
    assert view.status.game_id == created.status.game_id
    claimed = Session(stack.target)
    claimed.token = later.token  # an account cannot claim another
    assert await refused(claimed.register, "ivy2", PASSWORD) == "INVALID_ARGUMENT"
    await guest.close()
    await later.close()


async def test_without_a_database_there_are_no_accounts(redis_url: str) -> None:
    async with Platform(redis_url) as platform:
        session = Session(platform.target)
        assert await refused(session.register, "jack", PASSWORD) == "ACCOUNTS_DISABLED"
        assert await refused(session.account_login, "jack", PASSWORD) == "ACCOUNTS_DISABLED"
        await session.login("jack")  # guests still play
        await session.close()


def test_migrations_apply_once_and_in_order(database_url: str) -> None:
    assert db.migrate(database_url) == []  # the test's database is migrated already
    with psycopg.connect(database_url) as connection:
        versions = [r[0] for r in connection.execute("SELECT version FROM schema_migrations")]
    assert versions == [m.version for m in db.migrations()]


async def test_a_guest_has_tighter_limits_until_it_claims_an_account(
    redis_url: str, database_url: str
) -> None:
    limits = Limits(
        live_games=3,
        bot_games=2,
        bot_games_by_level={"strong": 2},
        guests=Limits(live_games=2, bot_games=1, bot_games_by_level={"strong": 1}),
    )
    async with Platform(redis_url, database_url=database_url, limits=limits) as platform:
        guest = Session(platform.target)
        await guest.login("una")
        against_strong = lobby_pb2.PlayAgainstBotsRequest(game="esoloe", level="strong")
        await guest.lobby.PlayAgainstBots(against_strong, metadata=guest.metadata)
        assert (
            await refused(guest.lobby.PlayAgainstBots, against_strong, metadata=guest.metadata)
            == "LIMIT_REACHED"
        )  # a guest: one game with bots
        own = esoloe_pb2.CreateGameRequest(players=[guest.player_id] * 2)
        await guest.game("esoloe").CreateGame(own, metadata=guest.metadata)
        assert (
            await refused(guest.game("esoloe").CreateGame, own, metadata=guest.metadata)
            == "LIMIT_REACHED"
        )  # and two live games
        await guest.register("una", PASSWORD)  # the same player, now an account
        await guest.lobby.PlayAgainstBots(against_strong, metadata=guest.metadata)  # 3 live
        error = await refused(guest.game("esoloe").CreateGame, own, metadata=guest.metadata)
        assert error == "LIMIT_REACHED"  # an account's limits: three live games
        await guest.close()


def test_migrate_waits_for_a_database_still_starting() -> None:
    """`tabletop migrate --wait` (Compose's migrate service, the migration Job) started before
    its database: it says it waits, and once the database answers applies every migration.
    Without --wait it fails at once, saying why."""
    port = free_port()
    url = f"postgresql://tabletop:tabletop@127.0.0.1:{port}/tabletop"
    command = [sys.executable, "-m", "client.cli", "migrate", "--database", url]
    at_once = subprocess.run(
        command, capture_output=True, text=True, timeout=patience(30), check=False
    )
    assert at_once.returncode == 1
    assert at_once.stderr.startswith("migration failed: "), at_once.stderr
    wait = patience(60)
    with subprocess.Popen(
        [*command, "--wait", str(wait)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as migrating:
        try:
            assert migrating.stderr is not None
            told = migrating.stderr.readline()
            assert told.startswith(f"waiting up to {wait:g} s for the database: "), told
            server = LocalPostgres(port=port)  # its user `tabletop`, password `tabletop`
            try:
                out, err = migrating.communicate(timeout=wait)
            finally:
                server.stop()
        finally:
            if migrating.poll() is None:
                migrating.kill()
    assert migrating.returncode == 0, err
    names = [f"{m.version:04d}_{m.name}" for m in db.migrations()]
    assert out == f"applied {', '.join(names)}\n"
