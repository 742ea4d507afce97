"""Accounts with the `tabletop` client, as a separate process against the real gateway (with a
real PostgreSQL), game services and Redis: a guest registers and keeps its game, logs out and
in again, its access token is renewed with the refresh token, and a session ended elsewhere is
reported instead of turning the player into a new guest."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest
import pytest_asyncio

from client.identity import load_identity
from client.session import Session
from tests.integration.test_client import state_dir, tabletop
from tests.platform import Platform

pytestmark = pytest.mark.integration

PASSWORD = "correct horse battery"

__all__ = ["state_dir"]  # the fixture of tests/integration/test_client.py


@pytest_asyncio.fixture
async def platform(redis_url: str, database_url: str) -> AsyncIterator[Platform]:
    async with Platform(
        redis_url,
        games=("solace",),
        database_url=database_url,
        gateway_settings={"revocation_poll_seconds": 0.2},
    ) as running:
        yield running


async def test_a_guest_registers_keeps_its_game_and_logs_out_and_in(
    platform: Platform, state_dir: Path
) -> None:
    first = await tabletop(platform, "play", "solace", "--name", "Ada", script="quit\n")
    assert first.code == 0, first.err
    guest = load_identity(platform.target)
    assert guest is not None
    registered = await tabletop(platform, "register", "ada", script=PASSWORD + "\n")
    assert registered.code == 0, registered.err
    assert "registered and logged in as ada (your games as a guest are yours)" in registered.out
    saved = load_identity(platform.target)
    assert saved is not None
    assert saved.account
    assert saved.player_id == guest.player_id
    assert PASSWORD not in (state_dir / "identity.json").read_text()
    me = await tabletop(platform, "whoami")
    assert f"ada (account, player id {guest.player_id})" in me.out
    games = await tabletop(platform, "games")
    assert first.game_id in games.out
    back = await tabletop(platform, "play", "--game", first.game_id, script="quit\n")
    assert back.code == 0, back.err
    assert "you are back" in back.out
    out = await tabletop(platform, "logout")
    assert "logged out (1 session ended)" in out.out
    assert load_identity(platform.target) is None
    wrong = await tabletop(platform, "login", "ada", script="not the password\n")
    assert wrong.code == 1
    assert "UNAUTHENTICATED: wrong username or password" in wrong.err
    again = await tabletop(platform, "login", "ADA", script=PASSWORD + "\n")
    assert "logged in as ada" in again.out
    games = await tabletop(platform, "games")
    assert first.game_id in games.out


async def test_an_expiring_token_is_renewed_and_an_ended_session_is_reported(
    redis_url: str, database_url: str, state_dir: Path
) -> None:
    async with Platform(
        redis_url,
        games=("solace",),
        database_url=database_url,
        # access tokens this close to their end are renewed before use (they live 15 minutes)
        gateway_settings={"revocation_poll_seconds": 0.2, "access_ttl_seconds": 60},
    ) as platform:
        await tabletop(platform, "register", "bea", script=PASSWORD + "\n")
        short = load_identity(platform.target)
        assert short is not None
        me = await tabletop(platform, "whoami")
        assert "bea (account" in me.out
        renewed = load_identity(platform.target)
        assert renewed is not None
        assert renewed.refresh_token != short.refresh_token  # used once, the new one kept
        # Logged out everywhere from another machine: this one is told, and is no guest now.
        other = state_dir.parent / "other"
        elsewhere = await tabletop(platform, "login", "bea", script=PASSWORD + "\n", state=other)
        assert elsewhere.code == 0, elsewhere.err
        ended = await tabletop(platform, "logout", "--everywhere", state=other)
        assert "2 sessions ended" in ended.out
        told = await tabletop(platform, "games")
        assert told.code == 1
        assert "your session as bea has ended" in told.err
        assert "tabletop login" in told.err
        assert load_identity(platform.target) is None


async def test_the_client_makes_lists_and_revokes_api_tokens(
    platform: Platform, state_dir: Path
) -> None:
    await tabletop(platform, "register", "cal", script=PASSWORD + "\n")
    empty = await tabletop(platform, "tokens")
    assert "no API tokens" in empty.out
    made = await tabletop(platform, "tokens", "create", "my bot", "--scope", "play", "--days", "7")
    assert made.code == 0, made.err
    token_id = made.out.split()[0]
    secret = made.out.splitlines()[1]
    assert secret.startswith("tt_")
    assert secret not in (state_dir / "identity.json").read_text()
    program = Session(platform.target)
    assert (await program.token_login(secret)).name == "cal"
    listed = await tabletop(platform, "tokens", "list")
    assert f"{token_id}  'my bot'  play" in listed.out
    assert secret not in listed.out
    wrong = await tabletop(platform, "tokens", "create", "x", "--days", "999")
    assert wrong.code == 1
    assert "INVALID_ARGUMENT" in wrong.err
    revoked = await tabletop(platform, "tokens", "revoke", token_id)
    assert f"revoked {token_id}" in revoked.out
    again = await tabletop(platform, "tokens", "revoke", token_id)
    assert "TOKEN_NOT_FOUND" in again.err
    with pytest.raises(grpc.aio.AioRpcError):
        await Session(platform.target).token_login(secret)
    await program.close()
