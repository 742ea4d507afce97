"""The gateway: the platform's one public port. Authentication, rate limits and routing only.

It issues and checks tokens (AuthService: guests, bot workers, and accounts, which the accounts
service keeps, services/accounts, reached through gateway/accounts.py; no routed call asks it),
rate-limits each player, and forwards every call of the services behind it (each game's
service, the lobby) to that service, round robin across its replicas, passing the request and
response bytes through untouched: unary calls as messages on relay links, streams as calls of
their own. Who calls travels with each call (the relay message's player fields, or the
`x-tabletop-*` metadata of a stream); whatever the client sent under those keys is dropped.
Only the services' public methods are routed; nothing else is reachable. The gateway knows no
game rule and no lobby logic, and holds no connection to Redis.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hmac
import ipaddress
import logging
import secrets
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc
from google.protobuf.descriptor import ServiceDescriptor
from google.protobuf.timestamp_pb2 import Timestamp
from grpc_health.v1 import health_pb2, health_pb2_grpc

from gateway.accounts import (
    ACCESS_TTL_SECONDS,
    Accounts,
    Grant,
    Revocations,
    accounts_channel,
)
from gateway.auth import AuthError, Identity, TokenIssuer
from gateway.oidc import Issuer, Providers
from gateway.ratelimit import RateLimiter, retry_after_ms
from gateway.relay import LINKS, MAX_AGE_SECONDS, Relay
from gateway.routing import DEFAULT_TIMEOUT, Backend, Guard, Proxy, Route, kind_of
from gateway.session import MAX_CALLS as SESSION_MAX_CALLS
from gateway.session import SERVICE as SESSION_SERVICE
from gateway.session import SessionServicer
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
from tabletop.session.v1 import session_pb2_grpc
from wire.api import AUTH_SERVICE, api, channel_options
from wire.errors import ApiError, abort
from wire.players import BOT_ID_PATTERN, GUEST_REGISTERED, GUEST_REPLACED

log = logging.getLogger("tabletop.gateway")

Network = ipaddress.IPv4Network | ipaddress.IPv6Network

FAILED_LOGINS_BURST = 10
FAILED_LOGINS_PER_HOUR = 60
"""Wrong passwords an account may be given (AccountLogin, and ChangePassword's old password)
on one gateway: a burst of FAILED_LOGINS_BURST, then one a minute; beyond, password checks of
that account are refused (RATE_LIMITED) without a hash. Its sessions go on."""
GUESTS_PER_ADDRESS_HOUR = 60
"""Guests one client address may make (Login) on one gateway: 60 at once, then one a minute."""
LOBBY_DESCRIPTOR: ServiceDescriptor = lobby_pb2.DESCRIPTOR.services_by_name["LobbyService"]

__all__ = ["DEFAULT_TIMEOUT", "Backend", "Gateway", "GatewaySettings", "Guard", "Proxy", "Route"]


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
    accounts: str = ""
    """The accounts service's gRPC target (services/accounts, which keeps accounts and their
    sessions); empty: no accounts (guests and bots only; the account calls answer
    ACCOUNTS_DISABLED)."""
    access_ttl_seconds: int = ACCESS_TTL_SECONDS
    """How long an account's access token lives (a Refresh gets the next)."""
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
    accounts_timeout_seconds: float = 5.0
    """How long the gateway waits, when it starts, to learn from the accounts service which
    sessions ended lately (then serves regardless)."""
    guests_per_address_hour: float = GUESTS_PER_ADDRESS_HOUR
    """Guests one client address may make in an hour on this gateway."""
    revocation_poll_seconds: float = 1.0
    """How often the gateway asks which sessions ended: an ended session's access tokens are
    refused at most this long (and a call to the accounts service) after it ended."""


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


class AuthServicer(lobby_pb2_grpc.AuthServiceServicer):
    """Tokens: Login (a new guest), BotLogin (a bot seat, with the bot key), Refresh; accounts
    (the accounts service, through gateway/accounts.py) when the platform has one."""

    def __init__(
        self,
        guard: Guard,
        login_limiter: RateLimiter,
        bot_key: str,
        accounts: Accounts | None = None,
        trusted_proxies: Sequence[Network] = (),
        providers: Providers | None = None,
        guests_per_address_hour: float = GUESTS_PER_ADDRESS_HOUR,
    ) -> None:
        self.trusted_proxies = trusted_proxies
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
                "this platform keeps no accounts (no accounts service): log in as a guest",
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
            if kind_of(identity) == "guest":
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
                if kind_of(caller) != "guest":
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
            return await self._accounts().sessions(identity)
        except ApiError as error:
            await abort(context, error)

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
            kind=kind_of(identity),
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
            return await accounts.create_token(
                identity, request.name, list(request.scopes), request.expires_in_days
            )
        except ApiError as error:
            await abort(context, error)

    async def ListApiTokens(
        self, request: Any, context: Context
    ) -> lobby_pb2.ListApiTokensResponse:
        try:
            accounts = self._accounts()
            return await accounts.tokens(self._account_caller(context))
        except ApiError as error:
            await abort(context, error)

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
        self.accounts: Accounts | None = None
        self.revocations: Revocations | None = None
        if settings.accounts:
            self.accounts = Accounts(
                accounts_channel(settings.accounts, settings.internal_key),
                self.issuer,
                access_ttl_seconds=settings.access_ttl_seconds,
            )
            self.revocations = Revocations(
                self.accounts,
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
        if self.revocations is not None:
            # The sessions ended lately are known before the first call is served (the accounts
            # service out of reach is asked again at each poll).
            await self.revocations.first_poll(self.settings.accounts_timeout_seconds)
            self._revocations = asyncio.create_task(self.revocations.run())
        await self.base.start()
        for backend in self.backends:
            backend.replicas.start()
        self._watcher = asyncio.create_task(self._watch_backends())

    async def stop(self, grace: float | None = None) -> None:
        await stop_tasks([t for t in (self._watcher, self._revocations) if t is not None])
        await self.base.stop(grace)
        if self.accounts is not None:
            await self.accounts.close()
        for backend in self.backends:
            await backend.relay.close()
            await backend.replicas.close()
