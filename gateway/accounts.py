"""The gateway's side of accounts: a client of the accounts service (services/accounts, a
process of its own holding the database), which the gateway reaches over a proven internal
link (wire.proof) as it reaches the lobby.

The accounts service says who logged in (an account, its session, an API token's scopes); the
gateway signs the access tokens (gateway/auth.py), so a token is checked on every call without
asking anyone. What ended (sessions logged out, API tokens revoked, guest tokens replaced or
registered) the gateway learns by polling the accounts service (`Revocations`): one call per
poll, whatever the traffic.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TypeVar

import grpc
from google.protobuf.message import Message

from gateway.auth import Identity, TokenIssuer
from gateway.oidc import External
from tabletop.accounts.v1 import accounts_pb2, accounts_pb2_grpc
from tabletop.lobby.v1 import lobby_pb2
from wire.api import NO_BDP_PROBE
from wire.errors import ApiError
from wire.proof import ProveCalls

log = logging.getLogger("tabletop.gateway")
T = TypeVar("T", bound=Message)

ACCESS_TTL_SECONDS = 15 * 60
ACCOUNTS_SERVICE = accounts_pb2.DESCRIPTOR.services_by_name["AccountsService"].full_name
CALL_SECONDS = 30.0
"""How long an account call may take at the accounts service (a password hash may wait its
turn there)."""


@dataclass(frozen=True)
class Grant:
    """What a login or a refresh hands out."""

    token: str
    identity: Identity
    refresh_token: str
    refresh_expires_at: datetime


def accounts_channel(target: str, internal_key: str) -> grpc.aio.Channel:
    """A channel to the accounts service: every call proven with `internal_key`. No retries:
    a password check is not done twice behind a caller's back."""
    return grpc.aio.insecure_channel(
        target,
        options=[("grpc.max_receive_message_length", 16 * 1024 * 1024), NO_BDP_PROBE],
        interceptors=[ProveCalls(internal_key)],
    )


def _account(identity: Identity) -> accounts_pb2.AccountRequest:
    return accounts_pb2.AccountRequest(
        account_id=identity.player_id, session_id=identity.session, bot=identity.bot
    )


class Accounts:
    """The account calls, answered by the accounts service at `channel`; the access tokens
    signed here by `issuer`, living `access_ttl_seconds`."""

    def __init__(
        self,
        channel: grpc.aio.Channel,
        issuer: TokenIssuer,
        *,
        access_ttl_seconds: int = ACCESS_TTL_SECONDS,
    ) -> None:
        self.channel = channel
        self.stub = accounts_pb2_grpc.AccountsServiceStub(channel)
        self.issuer = issuer
        self.access_ttl = access_ttl_seconds

    async def close(self) -> None:
        await self.channel.close()

    @staticmethod
    async def _ask(call: Callable[..., Awaitable[T]], request: Message) -> T:
        """A call of the accounts service; its refusal raised as the ApiError it sent (the
        service out of reach for CALL_SECONDS: UNAVAILABLE). A call made while the service is
        starting, or its replicas are changing, waits for one to take it."""
        try:
            return await call(request, timeout=CALL_SECONDS, wait_for_ready=True)
        except grpc.aio.AioRpcError as error:
            if error.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
                log.warning("the accounts service failed", extra={"error": error.details()})
            raise ApiError.of_call(error) from None

    def _grant(self, grant: accounts_pb2.Grant) -> Grant:
        token, identity = self.issuer.issue(
            grant.account_id,
            grant.name,
            self.access_ttl,
            session=grant.session_id,
            bot=grant.bot,
        )
        expires = grant.refresh_expires_at.ToDatetime(tzinfo=UTC)
        return Grant(token, identity, grant.refresh_token, expires)

    async def register(
        self,
        username: str,
        password: str,
        client: str,
        guest: str = "",
        bot: bool = False,
        guest_token: str = "",
    ) -> Grant:
        """A new account (with `guest`'s player id when a guest claims it, whose token
        `guest_token` ends with it; a `bot` account: shown as a bot), logged in."""
        request = accounts_pb2.RegisterAccountRequest(
            username=username,
            password=password,
            client=client,
            guest=guest,
            guest_token=guest_token,
            bot=bot,
        )
        return self._grant(await self._ask(self.stub.Register, request))

    async def login(self, username: str, password: str, client: str) -> Grant:
        request = accounts_pb2.LoginAccountRequest(
            username=username, password=password, client=client
        )
        return self._grant(await self._ask(self.stub.Login, request))

    async def external_login(self, who: External, client: str) -> Grant:
        request = accounts_pb2.ExternalLoginAccountRequest(
            issuer=who.issuer, subject=who.subject, name=who.name, client=client
        )
        return self._grant(await self._ask(self.stub.ExternalLogin, request))

    async def refresh(self, refresh_token: str) -> Grant:
        request = accounts_pb2.RefreshAccountRequest(refresh_token=refresh_token)
        return self._grant(await self._ask(self.stub.Refresh, request))

    async def token_login(self, secret: str) -> tuple[str, Identity]:
        """An access token for an API token: with its scopes, naming it as the session."""
        request = accounts_pb2.TokenLoginAccountRequest(api_token=secret)
        grant = await self._ask(self.stub.TokenLogin, request)
        return self.issuer.issue(
            grant.account_id,
            grant.name,
            self.access_ttl,
            session=grant.session_id,
            scopes=tuple(grant.scopes),
            bot=grant.bot,
        )

    async def replace_guest_token(self, identity: Identity) -> bool:
        """Ends the guest's token `identity` for the next (Refresh); False when it had ended
        already (replaced before, or its guest registered)."""
        request = accounts_pb2.ReplaceGuestTokenRequest(
            player_id=identity.player_id, guest_token=identity.guest_token
        )
        return (await self._ask(self.stub.ReplaceGuestToken, request)).replaced

    async def logout(self, identity: Identity, everywhere: bool) -> int:
        request = accounts_pb2.LogoutAccountRequest(
            account=_account(identity), everywhere=everywhere
        )
        return (await self._ask(self.stub.Logout, request)).sessions_ended

    async def sessions(self, identity: Identity) -> lobby_pb2.ListSessionsResponse:
        return await self._ask(self.stub.ListSessions, _account(identity))

    async def change_password(
        self, identity: Identity, old: str, new: str, client: str = ""
    ) -> int:
        """The new password; every other session of the account ends (how many did)."""
        request = accounts_pb2.ChangePasswordAccountRequest(
            account=_account(identity), old_password=old, new_password=new, client=client
        )
        return (await self._ask(self.stub.ChangePassword, request)).sessions_ended

    async def create_token(
        self, identity: Identity, name: str, scopes: list[str], days: int
    ) -> lobby_pb2.ApiToken:
        """A new API token of the caller's account (the token shown this once)."""
        request = accounts_pb2.CreateApiTokenAccountRequest(
            account=_account(identity), name=name, scopes=scopes, expires_in_days=days
        )
        return await self._ask(self.stub.CreateApiToken, request)

    async def tokens(self, identity: Identity) -> lobby_pb2.ListApiTokensResponse:
        """The account's API tokens that still work."""
        return await self._ask(self.stub.ListApiTokens, _account(identity))

    async def revoke_token(self, identity: Identity, token_id: str) -> None:
        """Revokes one of the account's API tokens: it logs in no more, and the access tokens
        it got are refused from the next poll of `Revocations`."""
        request = accounts_pb2.RevokeApiTokenAccountRequest(
            account=_account(identity), token_id=token_id
        )
        await self._ask(self.stub.RevokeApiToken, request)

    async def ended(self, seconds: float, guest_seconds: float) -> accounts_pb2.EndedResponse:
        request = accounts_pb2.EndedRequest(seconds=seconds, guest_seconds=guest_seconds)
        return await self._ask(self.stub.Ended, request)


def may_act(identity: Identity) -> str:
    """Why `identity` may not act (make, join, play, resign, find matches), or "" when it
    may: an API token needs its `play` scope (a bot account's, `bot`), and a bot account
    acts only through such a token."""
    if identity.bot:
        if identity.scopes is None or "bot" not in identity.scopes:
            return "a bot account plays only with an API token of the 'bot' scope (TokenLogin)"
        return ""
    if identity.scopes is not None and "play" not in identity.scopes:
        return "this API token may only read: it has no 'play' scope"
    return ""


class Revocations:
    """The sessions, API tokens and guest tokens that ended, as this gateway knows them: asked
    of the accounts service when the gateway starts and polled every `poll_seconds` after (one
    call per poll, whatever the traffic). An access token of an ended session, or a guest token
    that ended, is refused from the poll after it ended (`ended`); access tokens live
    `access_ttl` at most and guest tokens `guest_ttl`, so older endings are forgotten."""

    def __init__(
        self,
        accounts: Accounts | None,
        access_ttl: int,
        poll_seconds: float,
        guest_ttl: int = 24 * 3600,
    ) -> None:
        self.accounts = accounts
        self.access_ttl = access_ttl
        self.guest_ttl = guest_ttl
        self.poll_seconds = poll_seconds
        self._ended: dict[str, float] = {}  # id -> when its last token expires at latest
        self._why: dict[str, str] = {}  # a guest token's id -> why it ended
        self.polls = 0

    def ended(self, session: str) -> bool:
        return session in self._ended

    def why(self, token_id: str) -> str | None:
        """Why the guest token `token_id` ended; None: it has not."""
        return self._why.get(token_id)

    def end(self, session: str, why: str = "") -> None:
        """Known here at once (the session, or guest token with `why`, ended through this
        gateway)."""
        if why:
            self._ended[session] = time.time() + self.guest_ttl + 60
            self._why[session] = why
        else:
            self._ended[session] = time.time() + self.access_ttl + 60

    async def poll(self) -> None:
        """Reads the sessions and guest tokens ended lately (by the database's clock: the first
        poll looks back as long as a token lives, later ones a minute, so that an ending
        committed late by a slow transaction is still read)."""
        assert self.accounts is not None
        now = time.time()
        back = self.access_ttl + 60 if self.polls == 0 else 60
        guests_back = self.guest_ttl + 60 if self.polls == 0 else 60
        answer = await self.accounts.ended(back, guests_back)
        for ending in answer.endings:
            lives = self.guest_ttl if ending.why else self.access_ttl
            at = ending.at.seconds + ending.at.nanos / 1e9
            self._ended[ending.id] = at + lives + 60  # clock skew
            if ending.why:
                self._why[ending.id] = ending.why
        for ended, until in list(self._ended.items()):
            if until < now:
                del self._ended[ended]
                self._why.pop(ended, None)
        self.polls += 1

    async def first_poll(self, seconds: float) -> None:
        """One poll, given up after `seconds` (the accounts service out of reach)."""
        try:
            async with asyncio.timeout(seconds):
                await self.poll()
        except (ApiError, OSError, TimeoutError) as error:
            log.warning("cannot read ended sessions", extra={"error": str(error)})

    async def run(self) -> None:
        while True:
            await asyncio.sleep(self.poll_seconds)
            try:
                await self.poll()
            except (ApiError, OSError) as error:
                log.warning("cannot read ended sessions", extra={"error": str(error)})
