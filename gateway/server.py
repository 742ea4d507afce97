"""The gateway: the platform's one public port. Authentication, rate limits and routing only.

It issues and checks tokens (AuthService: guests, bot workers, and accounts kept in PostgreSQL,
gateway/accounts.py, which no routed call reads), rate-limits each player, and forwards every
call of the services behind it (each game's service, the lobby) to that service, round robin
across its replicas, passing the request and response bytes through untouched: unary calls as
messages on relay links, streams as calls of their own. Who calls travels with each call (the
relay message's player fields, or the `x-tabletop-*` metadata of a stream); whatever the
client sent under those keys is dropped. Only the services' public methods are routed; nothing
else is reachable. The gateway knows no game rule and no lobby logic, and holds no connection
to Redis.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hmac
import ipaddress
import itertools
import logging
import secrets
from collections.abc import AsyncGenerator, AsyncIterator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc
from google.protobuf.descriptor import ServiceDescriptor
from google.protobuf.timestamp_pb2 import Timestamp
from grpc_health.v1 import health_pb2, health_pb2_grpc
from psycopg_pool import AsyncConnectionPool

from gateway.accounts import (
    ACCESS_TTL_SECONDS,
    ACCOUNTS_PER_ADDRESS_DAY,
    GUEST_REGISTERED,
    GUEST_REPLACED,
    REFRESH_TTL_SECONDS,
    Accounts,
    Grant,
    Revocations,
    may_act,
)
from gateway.auth import AuthError, Identity, TokenIssuer, bearer_token
from gateway.oidc import Issuer, Providers
from gateway.ratelimit import RateLimiter, retry_after_ms
from gateway.relay import LINKS, MAX_AGE_SECONDS, Relay, status_code
from gateway.session import MAX_CALLS as SESSION_MAX_CALLS
from gateway.session import SERVICE as SESSION_SERVICE
from gateway.session import SessionServicer, too_large
from runtime import db
from runtime.replicas import RESOLVE_SECONDS, Replicas
from runtime.server import (
    MAX_REQUEST_BYTES,
    SESSION_ALLOWANCE_BYTES,
    Context,
    OpenStreams,
    Server,
    TlsFiles,
)
from runtime.tasks import stop_tasks
from tabletop.lobby.v1 import lobby_pb2, lobby_pb2_grpc
from tabletop.relay.v1 import relay_pb2
from tabletop.session.v1 import session_pb2_grpc
from wire.api import AUTH_SERVICE, READS, api, channel_options
from wire.errors import ApiError, abort
from wire.metadata import (
    BOT_SEAT_METADATA,
    GUEST_METADATA,
    NAME_METADATA,
    PLAYER_METADATA,
    REQUEST_METADATA,
)
from wire.players import BOT_ID_PATTERN
from wire.proof import prove

log = logging.getLogger("tabletop.gateway")

Network = ipaddress.IPv4Network | ipaddress.IPv6Network

FAILED_LOGINS_BURST = 10
FAILED_LOGINS_PER_HOUR = 60
"""Wrong passwords an account may be given (AccountLogin, and ChangePassword's old password)
on one gateway: a burst of FAILED_LOGINS_BURST, then one a minute; beyond, password checks of
that account are refused (RATE_LIMITED) without a hash. Its sessions go on."""
GUESTS_PER_ADDRESS_HOUR = 60
"""Guests one client address may make (Login) on one gateway: 60 at once, then one a minute."""
DEFAULT_TIMEOUT = 10.0
"""The deadline of a call whose caller set none (CALL_TIMEOUT_SECONDS)."""
LOBBY_DESCRIPTOR: ServiceDescriptor = lobby_pb2.DESCRIPTOR.services_by_name["LobbyService"]


@dataclass(frozen=True, kw_only=True)
class GatewaySettings:
    listen: str = "0.0.0.0:50050"
    token_secret: str
    token_ttl_seconds: int = 24 * 3600
    rate_per_second: float = 50.0
    rate_burst: float = 100.0
    login_rate_per_second: float = 5.0
    """Logins per second per client address (a burst of `login_rate_burst` first)."""
    login_rate_burst: float = 20.0
    backends: Mapping[str, str] = field(default_factory=dict)
    """game id -> gRPC target of its service, e.g. "127.0.0.1:50051", "dns:///esoloe:50051" or
    "ipv4:127.0.0.1:50051,127.0.0.1:50061" (several replicas)."""
    lobby: str = ""
    """The lobby service's gRPC target; empty: no lobby (the gateway offers no LobbyService)."""
    grace_seconds: float = 10.0
    call_timeout_seconds: float = DEFAULT_TIMEOUT
    """How long a call whose caller set no deadline may take at the services."""
    bot_key: str = ""
    """Bot workers log in with this key (BotLogin); empty: no bot logins."""
    relay_links: int = LINKS
    """Relay links (long-lived streams carrying the unary calls) kept open to each service's
    target; spread over its replicas by round robin."""
    relay_max_age_seconds: float = MAX_AGE_SECONDS
    """A relay link takes no new calls after this long, so new replicas get their share."""
    resolve_seconds: float = RESOLVE_SECONDS
    """How often each backend's name is resolved again (runtime/replicas.py): replicas added
    get calls, and replicas removed none, within about this long."""
    streams_per_player: int = 16
    """Streams (Watch, WatchTicket, sessions and the streaming calls on them) one player may
    hold open at once on this gateway."""
    session_max_calls: int = SESSION_MAX_CALLS
    """Calls in progress at once on one player session (gateway/session.py)."""
    internal_key: str
    """The key the gateway proves its calls to the services with (wire.proof)."""
    tls: TlsFiles | None = None
    """The public port speaks TLS only, with this certificate; None: plaintext (TLS ended in
    front of the gateway, or a local platform)."""
    health_listen: str = ""
    """A plaintext port serving the health service only (probes that cannot speak TLS)."""
    database_url: str = ""
    """PostgreSQL, where accounts and their sessions are kept; empty: no accounts (guests and
    bots only; the account calls answer ACCOUNTS_DISABLED)."""
    access_ttl_seconds: int = ACCESS_TTL_SECONDS
    """How long an account's access token lives (a Refresh gets the next)."""
    refresh_ttl_seconds: int = REFRESH_TTL_SECONDS
    """How long an account's session lasts without a login."""
    open_streams: OpenStreams = field(default_factory=OpenStreams)
    """Bounds on the streams the public port serves without a token (health Watch,
    reflection)."""
    reflection: bool = True
    """Serve reflection on the public port."""
    oidc_issuers: Sequence[Issuer] = ()
    """Identity providers whose tokens ExternalLogin takes (gateway/oidc.py)."""
    trusted_proxies: Sequence[Network] = ()
    """Proxies in front of the gateway (networks) whose `x-forwarded-for` names the client:
    logins are limited by that address instead of the proxy's."""
    database_timeout_seconds: float = 5.0
    """How long the gateway waits for the database when it starts (then serves regardless)."""
    accounts_per_address_day: int = ACCOUNTS_PER_ADDRESS_DAY
    """Accounts one client address may make in a day (UTC), counted in the database."""
    guests_per_address_hour: float = GUESTS_PER_ADDRESS_HOUR
    """Guests one client address may make in an hour on this gateway."""
    revocation_poll_seconds: float = 1.0
    """How often the gateway reads which sessions ended: an ended session's access tokens are
    refused at most this long (and a database round trip) after it ended."""


class Guard:
    """Authenticates a call's bearer token and applies the caller's rate limit."""

    def __init__(
        self, issuer: TokenIssuer, limiter: RateLimiter, revocations: Revocations | None = None
    ) -> None:
        self.issuer = issuer
        self.limiter = limiter
        self.revocations = revocations

    def identify(self, context: Context) -> Identity:
        """The caller; raises ApiError (UNAUTHENTICATED)."""
        return self.check(self.token(context))

    @staticmethod
    def token(context: Context) -> str:
        """The call's bearer token; raises ApiError (UNAUTHENTICATED)."""
        try:
            return bearer_token(context.invocation_metadata())
        except AuthError as error:
            raise ApiError("UNAUTHENTICATED", str(error)) from None

    def check(self, token: str) -> Identity:
        """Whose `token` is, while it holds: not expired, its session not ended; raises
        ApiError (UNAUTHENTICATED). Cheap enough for every call (verified tokens are cached)."""
        try:
            identity = self.issuer.verify(token)
        except AuthError as error:
            raise ApiError("UNAUTHENTICATED", str(error)) from None
        revocations = self.revocations
        if identity.guest_token and revocations is not None:
            why = revocations.why(identity.guest_token)
            if why is not None:
                raise ApiError("UNAUTHENTICATED", f"this guest token has ended: {why}")
        if identity.session and (revocations is None or revocations.ended(identity.session)):
            raise ApiError(
                "UNAUTHENTICATED",
                "this login has ended (logged out, or the password changed); log in again",
            )
        return identity

    def admit(self, context: Context, acting: bool = True) -> Identity:
        """The caller; raises ApiError (UNAUTHENTICATED, RATE_LIMITED). A bot worker's call
        is the call of the bot seat it names (`acting`; its own calls, Refresh and WhoAmI,
        are the worker's)."""
        identity = self.identify(context)
        if acting:
            named = [v for k, v in context.invocation_metadata() or () if k == BOT_SEAT_METADATA]
            identity = self.acting(identity, named)
        self.limit(identity)
        return identity

    @staticmethod
    def acting(identity: Identity, named: Sequence[str | bytes]) -> Identity:
        """Who acts: the caller, or for a bot worker the one bot seat its call `named`
        (BOT_SEAT_METADATA); raises ApiError (UNAUTHENTICATED)."""
        return _acting_bot(identity, named) if identity.worker else identity

    def limit(self, identity: Identity) -> None:
        """The caller's rate limit: raises ApiError (RATE_LIMITED) when it is spent."""
        wait = self.limiter.take(identity.player_id)
        if wait:
            retry_ms = int(wait * 1000) + 1  # never sooner than the limiter allows
            raise ApiError(
                "RATE_LIMITED",
                f"too many requests; retry in {retry_ms}ms",
                retry_after_ms=str(retry_ms),
            )


def _acting_bot(worker: Identity, named: Sequence[str | bytes]) -> Identity:
    """The bot seat a worker's call acts for: the one seat `named` (BOT_SEAT_METADATA)."""
    if len(named) != 1 or not isinstance(named[0], str) or not BOT_ID_PATTERN.fullmatch(named[0]):
        raise ApiError(
            "UNAUTHENTICATED",
            f"a bot worker's call names the one bot seat it acts for in {BOT_SEAT_METADATA} "
            "(bot-<level>-<hex>)",
        )
    return Identity(named[0], named[0], worker.expires_at)


def _timestamp(seconds: float) -> Timestamp:
    stamp = Timestamp()
    stamp.FromSeconds(int(seconds))
    return stamp


def _login_response(token: str, identity: Identity) -> lobby_pb2.LoginResponse:
    return lobby_pb2.LoginResponse(
        token=token,
        player_id=identity.player_id,
        expires_at=_timestamp(identity.expires_at),
        name=identity.name,
    )


def _grant_response(grant: Grant) -> lobby_pb2.LoginResponse:
    response = _login_response(grant.token, grant.identity)
    response.refresh_token = grant.refresh_token
    response.refresh_expires_at.CopyFrom(_timestamp(grant.refresh_expires_at.timestamp()))
    response.session_id = grant.identity.session
    return response


def peer_ip(peer: str) -> str:
    """The IP address of a gRPC peer ("ipv4:1.2.3.4:5678", "ipv6:[::1]:5678")."""
    host = peer.split(":", 1)[1] if ":" in peer else peer
    host = host.rsplit(":", 1)[0]
    return host.strip("[]")


def client_address(peer: str, forwarded: Sequence[str], trusted: Sequence[Network]) -> str:
    """Who calls: the peer's address, or, when the peer is one of the `trusted` proxies, the
    address it forwarded (`x-forwarded-for`: the nearest one that is not a trusted proxy
    itself). A header from anyone else is ignored: a client cannot name its own address."""
    address = peer_ip(peer)
    hops = [hop.strip() for value in forwarded for hop in value.split(",") if hop.strip()]
    while _trusted(address, trusted) and hops:
        address = hops.pop()
    return address


def _trusted(address: str, trusted: Sequence[Network]) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in network for network in trusted)


def _kind(identity: Identity) -> str:
    if identity.worker:
        return "worker"
    if identity.session:
        return "account"
    return "bot" if BOT_ID_PATTERN.fullmatch(identity.player_id) else "guest"


class AuthServicer(lobby_pb2_grpc.AuthServiceServicer):
    """Tokens: Login (a new guest), BotLogin (a bot seat, with the bot key), Refresh; accounts
    (gateway/accounts.py) when the gateway has a database."""

    def __init__(
        self,
        guard: Guard,
        login_limiter: RateLimiter,
        bot_key: str,
        accounts: Accounts | None = None,
        trusted_proxies: Sequence[Network] = (),
        providers: Providers | None = None,
        accounts_per_address_day: int = ACCOUNTS_PER_ADDRESS_DAY,
        guests_per_address_hour: float = GUESTS_PER_ADDRESS_HOUR,
    ) -> None:
        self.trusted_proxies = trusted_proxies
        self.accounts_per_address_day = accounts_per_address_day
        self.guests_per_address_hour = guests_per_address_hour
        self.guests = RateLimiter(guests_per_address_hour / 3600, guests_per_address_hour)
        self.providers = providers
        self.guard = guard
        self.issuer = guard.issuer
        self.login_limiter = login_limiter
        self.bot_key = bot_key
        self.accounts = accounts
        self.failed_logins = RateLimiter(FAILED_LOGINS_PER_HOUR / 3600, FAILED_LOGINS_BURST)

    def _client(self, context: Context) -> str:
        forwarded = [
            v
            for k, v in context.invocation_metadata() or ()
            if k == "x-forwarded-for" and isinstance(v, str)
        ]
        return client_address(context.peer() or "", forwarded, self.trusted_proxies)

    def _limit_logins(self, context: Context, account: str = "") -> None:
        """Logins per client address; account logins per account as well (a password guessed
        from many addresses meets the account's limit)."""
        keys = ["login:" + self._client(context)]
        if account:
            keys.append("account:" + account.lower())
        for key in keys:
            wait = self.login_limiter.take(key)
            if wait:
                raise ApiError(
                    "RATE_LIMITED",
                    f"too many logins; retry in {wait:.1f}s",
                    retry_after_ms=retry_after_ms(wait),
                )

    @contextlib.contextmanager
    def _guessing(self, username: str) -> Iterator[None]:
        """A password check of `username`'s: it takes one of the account's wrong passwords
        (refused, RATE_LIMITED, when there is none left lately: its password cannot be guessed
        faster), given back unless the password is wrong (UNAUTHENTICATED). Taken before the
        check, so checks at once cannot go beyond the limit."""
        key = "account:" + username.lower()
        wait = self.failed_logins.take(key)
        if wait:
            raise ApiError(
                "RATE_LIMITED",
                f"too many wrong passwords for this account lately; retry in {wait:.0f}s",
                retry_after_ms=retry_after_ms(wait),
            )
        wrong = False
        try:
            yield
        except ApiError as error:
            wrong = error.reason == "UNAUTHENTICATED"
            raise
        finally:
            if not wrong:
                self.failed_logins.give_back(key)

    def _accounts(self) -> Accounts:
        if self.accounts is None:
            raise ApiError(
                "ACCOUNTS_DISABLED",
                "this platform keeps no accounts (its gateway has no database): log in as a guest",
            )
        return self.accounts

    def _account_caller(self, context: Context) -> Identity:
        """The caller, logged in to an account (by a login, not with an API token: a program
        holding a token cannot make more, nor end the account's sessions)."""
        identity = self.guard.admit(context)
        if not identity.session:
            raise ApiError("UNAUTHENTICATED", "this needs an account's token (AccountLogin)")
        if identity.scopes is not None:
            raise ApiError(
                "NOT_PERMITTED",
                "an API token's access token cannot do this: log in to the account "
                "(AccountLogin); to end an API token, revoke it (RevokeApiToken)",
            )
        return identity

    async def BotLogin(self, request: Any, context: Context) -> lobby_pb2.LoginResponse:
        """The platform's bot workers: with the bot key, a worker's token (no `player_id`), or
        a bot seat's. Only attempts with a wrong key count against the address's login limit:
        the workers' logins never wait behind guests'."""
        try:
            if not self.bot_key or not hmac.compare_digest(
                request.key.encode(), self.bot_key.encode()
            ):
                self._limit_logins(context)
                raise ApiError("UNAUTHENTICATED", "bot logins need the platform's bot key")
            if not request.player_id:
                token, identity = self.issuer.issue(
                    f"worker-{secrets.token_hex(6)}", "bot worker", worker=True
                )
                return _login_response(token, identity)
            if not BOT_ID_PATTERN.fullmatch(request.player_id):
                raise ApiError(
                    "INVALID_ARGUMENT",
                    f"bot player ids look like bot-<level>-<hex>; got {request.player_id[:80]!r}",
                )
            token, identity = self.issuer.issue(request.player_id, request.player_id)
        except ApiError as error:
            await abort(context, error)
        return _login_response(token, identity)

    async def Login(self, request: Any, context: Context) -> lobby_pb2.LoginResponse:
        try:
            self._limit_logins(context)
            wait = self.guests.take("guests:" + self._client(context))
            if wait:
                most = int(self.guests_per_address_hour)
                raise ApiError(
                    "LIMIT_REACHED",
                    f"{most} guests were made from your address within the hour: at most "
                    f"{most} an hour; retry in {wait:.0f}s, or keep a guest's token (Refresh "
                    "renews it) or register",
                    limit="guests_per_address",
                    max=str(most),
                    retry_after_ms=retry_after_ms(wait),
                )
            try:
                token, identity = self.issuer.login(request.name)
            except ValueError as error:
                raise ApiError("INVALID_ARGUMENT", str(error)) from None
        except ApiError as error:
            await abort(context, error)
        return _login_response(token, identity)

    async def Refresh(self, request: Any, context: Context) -> lobby_pb2.LoginResponse:
        try:
            if request.refresh_token:
                self._limit_logins(context)
                return _grant_response(await self._accounts().refresh(request.refresh_token))
            identity = self.guard.admit(context, acting=False)
            if identity.scopes is not None:
                raise ApiError(
                    "INVALID_ARGUMENT",
                    "an API token's access token is renewed by exchanging the API token again "
                    "(TokenLogin)",
                )
            if identity.session:
                raise ApiError(
                    "INVALID_ARGUMENT",
                    "an account's session is refreshed with its refresh token (refresh_token)",
                )
            if _kind(identity) == "guest":
                token, renewed = await self._next_guest_token(identity)
            else:
                token, renewed = self.issuer.issue(
                    identity.player_id, identity.name, worker=identity.worker
                )
        except ApiError as error:
            await abort(context, error)
        return _login_response(token, renewed)

    async def _next_guest_token(self, identity: Identity) -> tuple[str, Identity]:
        """The guest's next token; the one it holds ends (on every gateway within a poll, on
        this one at once). Refused when that one had ended already, or the guest's life is
        over. Without a database nothing can end a token: the old one works until it
        expires."""
        since = identity.guest_since or identity.expires_at - self.issuer.ttl_seconds
        try:
            token, renewed = self.issuer.guest(identity.player_id, identity.name, since)
        except AuthError as error:
            raise ApiError("UNAUTHENTICATED", str(error)) from None
        if identity.guest_token and self.accounts is not None:
            if not await self.accounts.replace_guest_token(identity):
                raise ApiError(
                    "UNAUTHENTICATED",
                    "this guest token has ended already (a Refresh replaced it, or its guest "
                    "registered); use the newest",
                )
            if self.guard.revocations is not None:
                self.guard.revocations.end(identity.guest_token, GUEST_REPLACED)
        return token, renewed

    async def Register(self, request: Any, context: Context) -> lobby_pb2.LoginResponse:
        try:
            accounts = self._accounts()
            self._limit_logins(context)
            guest = guest_token = ""
            if any(key == "authorization" for key, _ in context.invocation_metadata() or ()):
                caller = self.guard.admit(context, acting=False)
                if _kind(caller) != "guest":
                    raise ApiError(
                        "INVALID_ARGUMENT",
                        "only a guest can claim an account: register without a token, or with "
                        "the guest's",
                    )
                if not caller.guest_token:
                    raise ApiError(
                        "INVALID_ARGUMENT",
                        "this guest token is of an earlier kind: Refresh it, then register "
                        "with the new one",
                    )
                guest, guest_token = caller.player_id, caller.guest_token
            grant = await accounts.register(
                request.username,
                request.password,
                self._client(context),
                guest,
                request.bot,
                guest_token,
                self.accounts_per_address_day,
            )
            if guest_token and self.guard.revocations is not None:
                self.guard.revocations.end(guest_token, GUEST_REGISTERED)
        except ApiError as error:
            await abort(context, error)
        return _grant_response(grant)

    async def AccountLogin(self, request: Any, context: Context) -> lobby_pb2.LoginResponse:
        try:
            accounts = self._accounts()
            username = request.username[:40]
            self._limit_logins(context, username)
            with self._guessing(username):
                grant = await accounts.login(username, request.password, self._client(context))
        except ApiError as error:
            await abort(context, error)
        return _grant_response(grant)

    async def Logout(self, request: Any, context: Context) -> lobby_pb2.LogoutResponse:
        try:
            accounts = self._accounts()
            identity = self._account_caller(context)
            ended = await accounts.logout(identity, request.everywhere)
            if self.guard.revocations is not None:
                self.guard.revocations.end(identity.session)
        except ApiError as error:
            await abort(context, error)
        return lobby_pb2.LogoutResponse(sessions_ended=ended)

    async def ListSessions(self, request: Any, context: Context) -> lobby_pb2.ListSessionsResponse:
        try:
            identity = self._account_caller(context)
            rows = await self._accounts().sessions(identity)
        except ApiError as error:
            await abort(context, error)
        return lobby_pb2.ListSessionsResponse(
            sessions=[
                lobby_pb2.SessionInfo(
                    session_id=row["id"],
                    created_at=_timestamp(row["created_at"].timestamp()),
                    last_used_at=_timestamp(row["last_used_at"].timestamp()),
                    expires_at=_timestamp(row["expires_at"].timestamp()),
                    client=row["client"],
                    current=row["id"] == identity.session,
                )
                for row in rows
            ]
        )

    async def ChangePassword(self, request: Any, context: Context) -> lobby_pb2.LogoutResponse:
        try:
            identity = self._account_caller(context)
            self._limit_logins(context, identity.name)
            with self._guessing(identity.name):
                ended = await self._accounts().change_password(
                    identity, request.old_password, request.new_password, self._client(context)
                )
        except ApiError as error:
            await abort(context, error)
        return lobby_pb2.LogoutResponse(sessions_ended=ended)

    async def ExternalLogin(self, request: Any, context: Context) -> lobby_pb2.LoginResponse:
        try:
            accounts = self._accounts()
            self._limit_logins(context)
            if self.providers is None or not self.providers.issuers:
                raise ApiError(
                    "ACCOUNTS_DISABLED", "this platform trusts no identity provider (OIDC_ISSUERS)"
                )
            if not request.token or len(request.token) > 16_384:
                raise ApiError("INVALID_ARGUMENT", "give the provider's token (a JWT)")
            who = await self.providers.verify(request.token)
            grant = await accounts.external_login(who, self._client(context))
        except ApiError as error:
            await abort(context, error)
        return _grant_response(grant)

    async def WhoAmI(self, request: Any, context: Context) -> lobby_pb2.WhoAmIResponse:
        try:
            identity = self.guard.admit(context, acting=False)
        except ApiError as error:
            await abort(context, error)
        return lobby_pb2.WhoAmIResponse(
            player_id=identity.player_id,
            name=identity.name,
            kind=_kind(identity),
            session_id=identity.session,
            expires_at=_timestamp(identity.expires_at),
            bot_account=identity.bot,
            scopes=identity.scopes or (),
            api_token=identity.scopes is not None,
        )

    async def CreateApiToken(self, request: Any, context: Context) -> lobby_pb2.ApiToken:
        try:
            accounts = self._accounts()
            identity = self._account_caller(context)
            secret, record = await accounts.create_token(
                identity, request.name, list(request.scopes), request.expires_in_days
            )
        except ApiError as error:
            await abort(context, error)
        answer = _api_token(record)
        answer.token = secret
        return answer

    async def ListApiTokens(
        self, request: Any, context: Context
    ) -> lobby_pb2.ListApiTokensResponse:
        try:
            accounts = self._accounts()
            rows = await accounts.tokens(self._account_caller(context))
        except ApiError as error:
            await abort(context, error)
        return lobby_pb2.ListApiTokensResponse(tokens=[_api_token(row) for row in rows])

    async def RevokeApiToken(
        self, request: Any, context: Context
    ) -> lobby_pb2.RevokeApiTokenResponse:
        try:
            accounts = self._accounts()
            await accounts.revoke_token(self._account_caller(context), request.token_id)
            if self.guard.revocations is not None:
                self.guard.revocations.end(request.token_id)
        except ApiError as error:
            await abort(context, error)
        return lobby_pb2.RevokeApiTokenResponse()

    async def TokenLogin(self, request: Any, context: Context) -> lobby_pb2.LoginResponse:
        try:
            accounts = self._accounts()
            self._limit_logins(context)
            token, identity = await accounts.token_login(request.api_token)
        except ApiError as error:
            await abort(context, error)
        response = _login_response(token, identity)
        response.session_id = identity.session
        return response


def _api_token(row: Mapping[str, Any]) -> lobby_pb2.ApiToken:
    answer = lobby_pb2.ApiToken(
        token_id=row["id"],
        name=row["name"],
        scopes=row["scopes"],
        created_at=_timestamp(row["created_at"].timestamp()),
        expires_at=_timestamp(row["expires_at"].timestamp()),
    )
    if row["last_used_at"] is not None:
        answer.last_used_at.CopyFrom(_timestamp(row["last_used_at"].timestamp()))
    return answer


@dataclass(frozen=True)
class Backend:
    """A service behind the gateway: its public API, its replicas and relay links."""

    descriptor: ServiceDescriptor
    replicas: Replicas
    relay: Relay


@dataclass(frozen=True)
class Route:
    """A public method the gateway routes: to which backend, and how."""

    backend: Backend
    path: str
    """gRPC's path of the method, e.g. "/tabletop.esoloe.v1.EsoloeService/Play"."""
    method: str
    acts: bool
    """Not one of READS: an API token needs a scope to act to call it."""
    streaming: bool
    """Server-streaming (Watch, WatchTicket...): a call of its own to one replica."""


class Proxy(grpc.GenericRpcHandler):
    """Routes each public method of the backends to its service, passing bytes through: unary
    calls over the service's relay links, streams as calls of their own. A player session
    (gateway/session.py) routes its calls through the same steps."""

    def __init__(
        self,
        guard: Guard,
        backends: list[Backend],
        streams_per_player: int,
        internal_key: str,
        call_timeout_seconds: float = DEFAULT_TIMEOUT,
    ) -> None:
        self.guard = guard
        self.call_timeout_seconds = call_timeout_seconds
        self.internal_key = internal_key
        self.streams_per_player = streams_per_player
        self.streams: dict[str, int] = {}
        """Streams open now, by player."""
        # Request ids unique across gateway processes and restarts, without a syscall per call.
        self._request_prefix = f"g{secrets.token_hex(6)}-"
        self._request_counter = itertools.count()
        self.routes: dict[str, Route] = {}
        self.handlers: dict[str, grpc.RpcMethodHandler[bytes, bytes]] = {}
        for backend in backends:
            service = backend.descriptor
            for method in service.methods:
                path = f"/{service.full_name}/{method.name}"
                route = Route(
                    backend, path, method.name, method.name not in READS, method.server_streaming
                )
                self.routes[path] = route
                if route.streaming:
                    self.handlers[path] = grpc.unary_stream_rpc_method_handler(
                        self._streaming(route)
                    )
                else:
                    self.handlers[path] = grpc.unary_unary_rpc_method_handler(self._unary(route))

    def service(
        self, handler_call_details: grpc.HandlerCallDetails
    ) -> grpc.RpcMethodHandler[bytes, bytes] | None:
        return self.handlers.get(handler_call_details.method)

    def permit(self, identity: Identity, route: Route) -> str:
        """May the caller call `route` (an API token's scopes)? Raises ApiError
        (NOT_PERMITTED); the call's new request id."""
        refused = may_act(identity) if route.acts else ""
        if refused:
            raise ApiError("NOT_PERMITTED", refused)
        return f"{self._request_prefix}{next(self._request_counter)}"

    async def _admit(self, context: Context, route: Route) -> tuple[Identity, str]:
        """Authenticate, rate-limit and permit: the caller and a new request id."""
        try:
            identity = self.guard.admit(context)
            return identity, self.permit(identity, route)
        except ApiError as error:
            await abort(context, error)

    def _timeout(self, context: Context) -> float:
        remaining = context.time_remaining()
        if remaining is None:
            return self.call_timeout_seconds
        return max(0.001, remaining)

    async def call(
        self, identity: Identity, route: Route, request: bytes, request_id: str, seconds: float
    ) -> relay_pb2.RelayResponse:
        """A unary call of `route` for `identity`, over the backend's relay links."""
        return await route.backend.relay.call(
            route.method,
            request,
            player_id=identity.player_id,
            player_name=identity.name,
            request_id=request_id,
            seconds=seconds,
            guest=_kind(identity) == "guest",
        )

    def _unary(self, route: Route) -> Any:
        async def forward(request: bytes, context: Context) -> bytes:
            if len(request) > MAX_REQUEST_BYTES:  # the port takes a session's Call around it
                await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, too_large(request))
            identity, request_id = await self._admit(context, route)
            answer = await self.call(identity, route, request, request_id, self._timeout(context))
            if answer.code:
                await context.abort(
                    status_code(answer),
                    answer.details,
                    tuple(
                        (t.key, t.value if t.key.endswith("-bin") else t.value.decode())
                        for t in answer.trailers
                    ),
                )
            return answer.response

        return forward

    @contextlib.contextmanager
    def stream_slot(self, player: str) -> Iterator[None]:
        """One of the player's open streams, held while the block runs; raises ApiError
        (LIMIT_REACHED) when they have as many as they may."""
        open_now = self.streams.get(player, 0)
        if open_now >= self.streams_per_player:
            raise ApiError(
                "LIMIT_REACHED",
                f"you already have {open_now} streams open: at most "
                f"{self.streams_per_player} at once; close one first",
                limit="streams",
                max=str(self.streams_per_player),
            )
        self.streams[player] = open_now + 1
        try:
            yield
        finally:
            left = self.streams[player] - 1
            if left:
                self.streams[player] = left
            else:
                del self.streams[player]

    async def stream(
        self, identity: Identity, route: Route, request: bytes, request_id: str
    ) -> AsyncGenerator[bytes]:
        """The messages of a server-streaming call of `route` for `identity` (a call of its
        own to one replica, where it stays when the replicas change). The caller holds a
        stream slot while it reads."""
        replicas = route.backend.replicas
        channel = replicas.acquire()
        call: grpc.aio.UnaryStreamMultiCallable[bytes, bytes] = channel.unary_stream(route.path)
        stream = call(
            request,
            metadata=prove(
                self.internal_key,
                route.path,
                (
                    (PLAYER_METADATA, identity.player_id),
                    (NAME_METADATA, identity.name),
                    (REQUEST_METADATA, request_id),
                    *([(GUEST_METADATA, "1")] if _kind(identity) == "guest" else []),
                ),
                body=request,
            ),
        )
        try:
            async for message in stream:
                yield message
        except grpc.aio.AioRpcError as error:
            if error.code() != grpc.StatusCode.CANCELLED:
                raise
            # Not the caller's doing (theirs cancels this generator): the call reached a
            # replica just as it began to stop, and gRPC ends such a call CANCELLED
            # (grpc/grpc#41785). Nothing was served; the caller asks again.
            raise ApiError("UNAVAILABLE", "the service was stopping; retry") from None
        finally:
            stream.cancel()
            replicas.release(channel)

    def _streaming(self, route: Route) -> Any:
        async def forward(request: bytes, context: Context) -> AsyncIterator[bytes]:
            identity, request_id = await self._admit(context, route)
            try:
                with self.stream_slot(identity.player_id):
                    messages = self.stream(identity, route, request, request_id)
                    async with contextlib.aclosing(messages):
                        async for message in messages:
                            yield message
            except ApiError as error:
                await abort(context, error)
            except grpc.aio.AioRpcError as error:
                await context.abort(
                    error.code(), error.details() or "", _passable(error.trailing_metadata())
                )

        return forward


def _passable(metadata: Any) -> tuple[tuple[str, str | bytes], ...]:
    return tuple((k, v) for k, v in (metadata or ()) if not k.startswith(":"))


class Gateway:
    """The gateway server: auth, rate limits, routes, health (one status per backend)."""

    def __init__(self, settings: GatewaySettings) -> None:
        self.settings = settings
        self.issuer = TokenIssuer(settings.token_secret, ttl_seconds=settings.token_ttl_seconds)
        self.limiter = RateLimiter(settings.rate_per_second, settings.rate_burst)
        targets: dict[ServiceDescriptor, str] = {
            api(game).descriptor: target for game, target in settings.backends.items()
        }
        if settings.lobby:
            targets[LOBBY_DESCRIPTOR] = settings.lobby
        self.backends = [
            Backend(
                descriptor,
                replicas := Replicas(
                    target,
                    functools.partial(
                        grpc.aio.insecure_channel, options=channel_options(descriptor.full_name)
                    ),
                    interval=settings.resolve_seconds,
                ),
                Relay(
                    replicas,
                    service=descriptor.full_name,
                    internal_key=settings.internal_key,
                    links=settings.relay_links,
                    max_age=settings.relay_max_age_seconds,
                ),
            )
            for descriptor, target in targets.items()
        ]
        self.relays = {backend.descriptor.full_name: backend.relay for backend in self.backends}
        names = [backend.descriptor.full_name for backend in self.backends]
        self.base = Server(
            settings.listen,
            [AUTH_SERVICE, SESSION_SERVICE, *names],
            grace_seconds=settings.grace_seconds,
            max_request_bytes=MAX_REQUEST_BYTES + SESSION_ALLOWANCE_BYTES,
            tls=settings.tls,
            health_listen=settings.health_listen,
            open_streams=settings.open_streams,
            reflection=settings.reflection,
        )
        self.database: AsyncConnectionPool | None = None
        self.accounts: Accounts | None = None
        self.revocations: Revocations | None = None
        if settings.database_url:
            self.database = db.pool(settings.database_url)
            self.accounts = Accounts(
                self.database,
                self.issuer,
                access_ttl_seconds=settings.access_ttl_seconds,
                refresh_ttl_seconds=settings.refresh_ttl_seconds,
            )
            self.revocations = Revocations(
                self.database,
                settings.access_ttl_seconds,
                settings.revocation_poll_seconds,
                settings.token_ttl_seconds,
            )
        guard = Guard(self.issuer, self.limiter, self.revocations)
        self.proxy = Proxy(
            guard,
            self.backends,
            settings.streams_per_player,
            settings.internal_key,
            settings.call_timeout_seconds,
        )
        self.base.server.add_generic_rpc_handlers((self.proxy,))
        session_pb2_grpc.add_SessionServiceServicer_to_server(
            SessionServicer(self.proxy, settings.session_max_calls), self.base.server
        )
        self.auth = AuthServicer(
            guard,
            RateLimiter(settings.login_rate_per_second, settings.login_rate_burst),
            settings.bot_key,
            self.accounts,
            settings.trusted_proxies,
            Providers(list(settings.oidc_issuers)),
            settings.accounts_per_address_day,
            settings.guests_per_address_hour,
        )
        lobby_pb2_grpc.add_AuthServiceServicer_to_server(self.auth, self.base.server)
        self._watcher: asyncio.Task[None] | None = None
        self._revocations: asyncio.Task[None] | None = None

    @property
    def port(self) -> int:
        return self.base.port

    async def _watch_backends(self) -> None:
        """Each backend's health status at the gateway follows its service's."""
        while True:
            for backend in self.backends:
                name = backend.descriptor.full_name
                channel = backend.replicas.acquire()
                try:
                    reply = await health_pb2_grpc.HealthStub(channel).Check(
                        health_pb2.HealthCheckRequest(service=name), timeout=2.0
                    )
                    status = reply.status
                except grpc.aio.AioRpcError:
                    status = health_pb2.HealthCheckResponse.NOT_SERVING
                finally:
                    backend.replicas.release(channel)
                await self.base.health.set(name, status)
            await asyncio.sleep(2.0)

    async def start(self) -> None:
        if self.database is not None and self.revocations is not None:
            await self.database.open(wait=False)
            # The sessions ended lately are known before the first call is served (a database
            # out of reach is read again at each poll).
            await self.revocations.first_poll(self.settings.database_timeout_seconds)
            self._revocations = asyncio.create_task(self.revocations.run())
        await self.base.start()
        for backend in self.backends:
            backend.replicas.start()
        self._watcher = asyncio.create_task(self._watch_backends())

    async def stop(self, grace: float | None = None) -> None:
        await stop_tasks([t for t in (self._watcher, self._revocations) if t is not None])
        await self.base.stop(grace)
        if self.database is not None:
            await self.database.close()
        for backend in self.backends:
            await backend.relay.close()
            await backend.replicas.close()
