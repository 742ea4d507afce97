"""What a security review did to accounts and tokens through the public API, each replayed on
the real stack (gateway, lobby, game services, Redis, PostgreSQL), with what must hold instead:

1. a guest's token outliving the account it became, renewed forever, several at once: a guest
   token ends when its guest registers (and at its next Refresh), and a guest lives 30 days at
   most (GUEST_MAX_SECONDS);
2. wrong old passwords to ChangePassword from one address filling the gateway's password
   hashes, stalling others' logins, and guessing the password: the hashes go in turn across
   addresses, a bounded number each, and a wrong old password counts toward the account's
   limit of wrong passwords;
3. accounts and guests made without bound: per address, a day (accounts) or an hour (guests);
4. a password of control characters, reserved usernames, and a provider's name with a bidi
   override becoming "admin".
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import threading
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import grpc
import jwt
import pytest

from client.session import Session
from gateway.oidc import Issuer
from tabletop.lobby.v1 import lobby_pb2
from tests.integration.test_accounts import PASSWORD, refused, whoami
from tests.integration.test_oidc import AUDIENCE, ISSUER, Provider, external_login
from tests.platform import TEST_SECRET, Platform
from tests.timing import eventually, patience
from wire.errors import error_info

pytestmark = pytest.mark.integration

POLL = 0.2
LOOPBACK = (ipaddress.ip_network("127.0.0.1/32"),)
"""The test's calls come from 127.0.0.1: trusted as a proxy, each call names its address
(`x-forwarded-for`), as calls through a load balancer do."""


@contextlib.asynccontextmanager
async def stack(redis_url: str, database_url: str, **settings: Any) -> AsyncIterator[Platform]:
    async with Platform(
        redis_url,
        database_url=database_url,
        gateway_settings={
            "revocation_poll_seconds": POLL,
            "login_rate_burst": 1000.0,
            "trusted_proxies": LOOPBACK,
            **settings,
        },
    ) as platform:
        yield platform


def at(address: str, session: Session | None = None) -> tuple[tuple[str, str], ...]:
    """The metadata of a call from `address` (with `session`'s token)."""
    token = session.metadata if session is not None and session.token else ()
    return (*token, ("x-forwarded-for", address))


async def reason_of(call: Any, *args: Any, **kwargs: Any) -> tuple[str, str]:
    """The reason and message a call is refused with (it must be)."""
    try:
        await call(*args, **kwargs)
    except grpc.aio.AioRpcError as error:
        return error_info(error)[0] or error.code().name, error.details() or ""
    raise AssertionError(f"{call} was answered")


# ---------------------------------------------------------------- 1. guest tokens


async def test_a_guest_token_ends_when_its_guest_becomes_an_account(
    redis_url: str, database_url: str
) -> None:
    async with stack(redis_url, database_url) as platform:
        guest = Session(platform.target)
        was = await guest.login("gina")
        kept = Session(platform.target)  # a copy of the guest's token, kept by someone
        kept.token = guest.token
        registered = await guest.register("gina", PASSWORD)
        assert registered.player_id == was.player_id  # the account keeps the guest's player
        reason, message = await reason_of(
            kept.auth.WhoAmI, lobby_pb2.WhoAmIRequest(), metadata=kept.metadata
        )
        assert reason == "UNAUTHENTICATED"
        assert "became an account" in message
        against_bots = lobby_pb2.PlayAgainstBotsRequest(game="esoloe", level="random")
        assert await refused(kept.lobby.PlayAgainstBots, against_bots, metadata=kept.metadata) == (
            "UNAUTHENTICATED"
        )
        assert await refused(
            kept.lobby.ListGames, lobby_pb2.ListGamesRequest(), metadata=kept.metadata
        ) == ("UNAUTHENTICATED")
        assert await refused(kept.refresh) == "UNAUTHENTICATED"  # and cannot be renewed
        # after the account's password changes and it logs out everywhere, nothing of the
        # guest is left working either
        await guest.auth.ChangePassword(
            lobby_pb2.ChangePasswordRequest(old_password=PASSWORD, new_password=PASSWORD + "!"),
            metadata=guest.metadata,
        )
        await guest.logout(everywhere=True)
        assert await refused(whoami, kept) == "UNAUTHENTICATED"
        assert await refused(whoami, guest) == "UNAUTHENTICATED"


async def test_a_guest_has_one_token_at_a_time_and_refresh_replaces_it(
    redis_url: str, database_url: str
) -> None:
    async with stack(redis_url, database_url) as platform:
        guest = Session(platform.target)
        first = await guest.login("gus")
        old = Session(platform.target)
        old.token = first.token
        renewed = await guest.refresh()
        assert renewed.player_id == first.player_id
        assert (await whoami(guest)).kind == "guest"
        reason, message = await reason_of(
            old.auth.WhoAmI, lobby_pb2.WhoAmIRequest(), metadata=old.metadata
        )
        assert reason == "UNAUTHENTICATED"
        assert "replaced" in message
        assert await refused(old.refresh) == "UNAUTHENTICATED"  # the old one renews nothing
        assert (await whoami(guest)).player_id == first.player_id  # the newest still works


async def test_a_guest_lives_thirty_days_at_most_whatever_its_refreshes(
    redis_url: str, database_url: str
) -> None:
    async with stack(redis_url, database_url) as platform:
        now = int(time.time())
        for began, works in ((now - 29 * 86400 - 86000, True), (now - 30 * 86400 - 10, False)):
            session = Session(platform.target)
            session.token = jwt.encode(  # a guest's token of a guest who began at `began`
                {
                    "sub": f"p-{began:016x}",
                    "name": "old-timer",
                    "iat": now - 3600,
                    "exp": now + 3600,
                    "gtk": f"g-{began:024x}",
                    "gst": began,
                },
                TEST_SECRET,
                algorithm="HS256",
            )
            if works:
                renewed = await session.refresh()  # renewed up to the guest's end only
                assert renewed.expires_at.seconds <= began + 30 * 86400
            else:
                reason, message = await reason_of(session.refresh)
                assert reason == "UNAUTHENTICATED"
                assert "30 days" in message


# ---------------------------------------------------------------- 2. password hashes


class CountingHasher:
    """The gateway's hasher, recording which password checks begin, in order."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.begun: list[str] = []
        self.lock = threading.Lock()

    def note(self, what: str) -> None:
        with self.lock:
            self.begun.append(what)

    def verify(self, stored: str, password: str) -> bool:
        self.note(password)
        return bool(self.inner.verify(stored, password))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


async def test_wrong_old_passwords_from_one_address_do_not_stall_anothers_login(
    redis_url: str, database_url: str
) -> None:
    async with stack(redis_url, database_url) as platform:
        victim, bystander = Session(platform.target), Session(platform.target)
        victim.token = (
            await victim.auth.Register(
                lobby_pb2.RegisterRequest(username="victim", password=PASSWORD),
                metadata=at("10.0.0.1"),
            )
        ).token
        await bystander.auth.Register(
            lobby_pb2.RegisterRequest(username="bystander", password=PASSWORD + "?"),
            metadata=at("10.0.0.2"),
        )
        assert platform.accounts is not None
        accounts = platform.accounts.accounts
        hasher = CountingHasher(accounts.hasher)
        accounts.hasher = hasher  # type: ignore[assignment]
        guess = lobby_pb2.ChangePasswordRequest(old_password="a wrong guess", new_password=PASSWORD)

        async def flood() -> None:
            with contextlib.suppress(grpc.aio.AioRpcError):
                await victim.auth.ChangePassword(guess, metadata=at("10.0.0.1", victim))

        flooding = [asyncio.create_task(flood()) for _ in range(16)]
        try:
            await eventually(lambda: len(hasher.begun) >= 2, 10, "the flood's checks hashing")
            hasher.note("bystander sent")
            await bystander.auth.AccountLogin(
                lobby_pb2.AccountLoginRequest(username="bystander", password=PASSWORD + "?"),
                metadata=at("10.0.0.2"),
                timeout=patience(30),
            )
        finally:
            await asyncio.gather(*flooding)
        sent = hasher.begun.index("bystander sent")
        ahead = hasher.begun[sent + 1 : hasher.begun.index(PASSWORD + "?")]
        # the flood's checks begun after the bystander asked, before its own: one or two of
        # the flood's turns at most (its checks waiting are bounded, the places go in turn)
        assert len(ahead) <= 2, f"{len(ahead)} of the flood's checks went first"


async def test_a_wrong_old_password_counts_toward_the_accounts_wrong_password_limit(
    redis_url: str, database_url: str
) -> None:
    async with stack(redis_url, database_url) as platform:
        owner = Session(platform.target)
        await owner.register("owner", PASSWORD)
        guess = lobby_pb2.ChangePasswordRequest(old_password="wrong guess", new_password=PASSWORD)
        reasons = []
        for index in range(12):
            found, _ = await reason_of(
                owner.auth.ChangePassword, guess, metadata=at(f"10.1.0.{index}", owner)
            )
            reasons.append(found)
        assert reasons[:10] == ["UNAUTHENTICATED"] * 10
        assert reasons[10:] == ["RATE_LIMITED"] * 2  # from any address: the account's limit
        login = lobby_pb2.AccountLoginRequest(username="owner", password="another guess")
        found, message = await reason_of(owner.auth.AccountLogin, login, metadata=at("10.2.0.1"))
        assert found == "RATE_LIMITED"
        assert "wrong passwords" in message
        assert (await whoami(owner)).kind == "account"  # its session goes on


# ---------------------------------------------------------------- 3. creation limits


async def test_accounts_made_from_one_address_are_bounded_per_day(
    redis_url: str, database_url: str
) -> None:
    async with stack(redis_url, database_url) as platform:
        auth = Session(platform.target).auth
        for index in range(10):
            await auth.Register(
                lobby_pb2.RegisterRequest(username=f"house{index}", password=PASSWORD),
                metadata=at("10.3.0.1"),
            )
        one_more = lobby_pb2.RegisterRequest(username="house10", password=PASSWORD)
        with pytest.raises(grpc.aio.AioRpcError) as refusal:
            await auth.Register(one_more, metadata=at("10.3.0.1"))
        assert refusal.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert error_info(refusal.value) == (
            "LIMIT_REACHED",
            {"limit": "accounts_per_address", "max": "10"},
        )
        assert "a day" in (refusal.value.details() or "")
        await auth.Register(one_more, metadata=at("10.3.0.2"))  # another address may


async def test_guests_made_from_one_address_are_bounded_per_hour(
    redis_url: str, database_url: str
) -> None:
    async with stack(redis_url, database_url) as platform:
        auth = Session(platform.target).auth
        for _ in range(60):  # a household's, an office's guests in an hour
            await auth.Login(lobby_pb2.LoginRequest(name="many"), metadata=at("10.4.0.1"))
        with pytest.raises(grpc.aio.AioRpcError) as refusal:
            await auth.Login(lobby_pb2.LoginRequest(name="many"), metadata=at("10.4.0.1"))
        assert refusal.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        reason, metadata = error_info(refusal.value)
        assert reason == "LIMIT_REACHED"
        assert metadata["limit"] == "guests_per_address"
        await auth.Login(lobby_pb2.LoginRequest(name="next door"), metadata=at("10.4.0.2"))


# ---------------------------------------------------------------- 4. names and passwords


async def test_control_characters_in_a_password_and_reserved_names_are_refused(
    redis_url: str, database_url: str
) -> None:
    async with stack(redis_url, database_url) as platform:
        auth = Session(platform.target).auth
        nul = lobby_pb2.RegisterRequest(username="nully", password="\x00" * 8)
        reason, message = await reason_of(auth.Register, nul)
        assert reason == "INVALID_ARGUMENT"
        assert "control characters" in message
        for name in ("admin", "Administrator", "ROOT", "tabletop", "bot-strong-0a1b2c3d", "Guest"):
            reason, message = await reason_of(
                auth.Register, lobby_pb2.RegisterRequest(username=name, password=PASSWORD)
            )
            assert (reason, "reserved" in message) == ("INVALID_ARGUMENT", True), name


@pytest.fixture
def provider() -> Iterator[Provider]:
    made = Provider()
    made.new_key("k1")
    try:
        yield made
    finally:
        made.close()


async def test_a_providers_name_with_a_bidi_override_never_becomes_a_reserved_name(
    redis_url: str, database_url: str, provider: Provider
) -> None:
    issuers = [Issuer(ISSUER, AUDIENCE, provider.url)]
    async with stack(redis_url, database_url, oidc_issuers=issuers) as platform:
        for subject, name in (("u-1", "\u202eadmin"), ("u-2", "ad\u200bmin"), ("u-3", "Root")):
            reply = await external_login(
                platform, provider.token("k1", sub=subject, preferred_username=name)
            )
            assert reply.name.lower() not in ("admin", "root"), name
            assert reply.name.isascii()
