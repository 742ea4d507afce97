"""The soak's accounts: every player is an account kept in PostgreSQL, whose session a `Keeper`
holds through the chaos (PostgreSQL restarts included), and an audit of what each player was
told about its account, its sessions and its tokens.

What a player does: it registers (some as a guest first, then Register with the guest's token,
which keeps the guest's player id), plays with its access token, and renews it with Refresh
(rotating refresh tokens) once half its life is gone, in the background: play never waits on
the database, which no Play reads. Some players also log in again once (a second session, which
they go on with) and log the first session out, keeping a copy of its tokens. Account calls
retry on UNAVAILABLE as game calls do.

What is guaranteed, and so what the audit checks. A Refresh is one transaction: the refresh
token sent is marked used, the next one stored, and the answer goes out after the commit. An
answer can be lost after the commit (PostgreSQL or the gateway restarted in between, the call
timed out): the player cannot tell, and can only send the same token again. If the first call
had not committed, the retry rotates as usual; if it had, the retry is a reuse, and reuse
detection, which cannot tell a lost answer from a thief, ends the session. So:

- a Refresh that was answered: its new refresh token works, once, for as long as the session
  lives, and the session ends only by the player's own doing: a logout, or its retry of a
  Refresh whose answer it lost;
- a Refresh whose answer was lost: its retry rotates as usual, or is refused (a reuse), and
  then the whole session has ended: its refresh tokens at once, its access tokens within a
  revocation poll. A session can be lost that way (the player logs in again); it is never left
  half alive, working with a token the player never got, as long as the player retries (one
  that gives up leaves a session it cannot reach, until its refresh tokens expire). This
  assumes the first call is over when the retry is sent: it is sent once the first failed back
  to the player, and a gateway's handler ends with its call (cancelled, or killed with it);
- a used refresh token, and every token of an ended session, is refused: an ended session's
  access tokens by every gateway within REVOCATION_POLL_SECONDS and a poll of the database once
  the database answers (a gateway reads ended sessions by polling it).

The audit holds each player to exactly that. In the run: a refresh token refused is a finding,
unless a Refresh with it went unanswered and the refusal is for a reuse (a token unknown, or a
session ended otherwise, is a loss); an ended session's access token must be refused by every
gateway within `bound` seconds of its end (or of PostgreSQL's return, when it was down then),
while the token has not expired by itself (else the check proves nothing: counted as
unverified). After the run: every account logs in (AccountLogin) as the same player id; the
session the player holds refreshes with the last refresh token it was given; the token so used
is refused when shown again, and that reuse ends the session (the token just received is
refused too); every ended session's refresh tokens are refused, and its access token, if not
expired yet, by every gateway.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import hashlib
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc

from client.session import Session
from tabletop.lobby.v1 import lobby_pb2, lobby_pb2_grpc
from wire.errors import error_info

RETRYABLE = {
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.DEADLINE_EXCEEDED,
    grpc.StatusCode.UNKNOWN,
    grpc.StatusCode.INTERNAL,
    grpc.StatusCode.CANCELLED,
}
"""Calls cut by a restart: the answer is lost, the call may or may not have been carried out."""
ACCOUNT_RETRYABLE = RETRYABLE | {grpc.StatusCode.RESOURCE_EXHAUSTED}
"""The account calls sent again: those of RETRYABLE, and those the gateway turned away to be
sent later (the players all log in from one address, whose password checks are bounded), which
were not carried out."""

PASSWORD = "soak password 0123"
ATTEMPTS = 30
CALL_SECONDS = 10.0
EXPIRY_MARGIN = 1.0
"""A token this close to its expiry is not used, and a refusal this close proves nothing."""
REVOCATION_SLACK = 8.0
"""On top of REVOCATION_POLL_SECONDS, how long a gateway may take to refuse an ended session's
access token: a poll of the accounts service, after a restart its pool reconnecting (back-off)."""
REUSED = "was used already"
"""How the platform words the refusal of a reused refresh token (services/accounts/store.py):
after a lost answer, the only refusal that is allowed."""


def revocation_bound(poll_seconds: float) -> float:
    """How long after a session ends (or PostgreSQL is back) every gateway must refuse its
    access tokens."""
    return poll_seconds + REVOCATION_SLACK


def bearer(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


async def backoff(attempt: int) -> None:
    await asyncio.sleep(min(2.0, 0.1 * 2**attempt))


@dataclass
class Outage:
    """PostgreSQL as the chaos loop leaves it: down now, and when it was last back."""

    down: bool = False
    back_at: float = 0.0
    """time.monotonic() when it last answered again after a restart."""


@dataclass
class Ended:
    """A session the player ended (logged out), or lost (its retry of a Refresh whose answer
    was lost was a reuse), with the copies of its tokens the player kept."""

    session_id: str
    why: str
    token: str
    """Its last access token."""
    expires_at: float
    """When that token expires by itself (epoch seconds)."""
    refresh_tokens: list[str]
    """Its refresh tokens the player held: the last one, and one it had used."""
    at: float = field(default_factory=time.monotonic)
    refused_after: float | None = None
    """Seconds from its end (or PostgreSQL's return) until every gateway refused its token."""
    unverified: bool = False
    """The token expired by itself before every gateway was seen to refuse it."""


@dataclass
class Account:
    """What a player was told about its account: the audit holds the platform to it."""

    username: str
    password: str = PASSWORD
    player_id: str = ""
    guest: str = ""
    """The guest player id it was registered from (Register with the guest's token)."""
    session_id: str = ""
    token: str = ""
    expires_at: float = 0.0
    refresh_token: str = ""
    """The last refresh token the player was given: the one its session refreshes with."""
    unanswered: bool = False
    """A Refresh with `refresh_token` got no answer, and no retry has answered yet."""
    refreshes: int = 0
    lost_answers: int = 0
    """Refreshes that got no answer at first (retried with the same token)."""
    sessions_lost: int = 0
    """Of those, the retries refused as a reuse: the session ended (the player logged in)."""
    logouts: int = 0
    ended: list[Ended] = field(default_factory=list)
    waited: int = 0
    """Calls that waited for a token: the access token had (nearly) expired, not refreshed."""
    errors: collections.Counter[str] = field(default_factory=collections.Counter)
    """Account calls' errors, by status."""
    problems: list[str] = field(default_factory=list)
    """Findings made during the run."""

    def logged_in(self, reply: lobby_pb2.LoginResponse) -> None:
        """A login's, a registration's or a refresh's answer: the session's current tokens."""
        self.player_id = reply.player_id
        self.session_id = reply.session_id
        self.token = reply.token
        self.expires_at = float(reply.expires_at.seconds)
        self.refresh_token = reply.refresh_token
        self.unanswered = False


async def refusal(
    probes: Sequence[Any], token: str, expires_at: float, deadline: Callable[[], float]
) -> str:
    """Ask every gateway (WhoAmI, `probes`: one AuthService stub each) until each refuses
    `token` (UNAUTHENTICATED): "refused". "accepted" when a gateway answered with it a call sent
    after `deadline()` (time.monotonic()): a call sent before may be answered after it, on a
    busy machine, and still be in time; "expired" when the token expires by itself first (a
    gateway down all the while is asked again, not counted either way)."""
    pending = set(range(len(probes)))
    while True:
        for index in sorted(pending):
            if time.time() >= expires_at - EXPIRY_MARGIN:
                return "expired"
            sent = time.monotonic()
            try:
                await probes[index].WhoAmI(
                    lobby_pb2.WhoAmIRequest(), metadata=bearer(token), timeout=2
                )
                if sent > deadline():
                    return "accepted"
            except grpc.aio.AioRpcError as error:
                if error.code() == grpc.StatusCode.UNAUTHENTICATED:
                    pending.discard(index)
        if not pending:
            return "refused"
        await asyncio.sleep(0.1)


def address_of(username: str) -> str:
    """A client address of the player's own (10.x.y.z, from its name)."""
    digest = hashlib.sha256(username.encode()).digest()
    return f"10.{digest[0]}.{digest[1]}.{digest[2]}"


class Keeper:
    """Holds one player's account session through the run: registers, refreshes the access
    token once half its life is gone, logs in again and out of the first session once at
    `logout_at` (time.monotonic(); None: never), and checks that ended sessions' tokens are
    refused.

    `probes`: an AuthService stub for each gateway; `outage`: PostgreSQL's state (the bound on
    revocations counts from its return); `bound`: `revocation_bound` of the gateways' poll."""

    def __init__(
        self, session: Session, account: Account, probes: Sequence[Any], outage: Outage,
        bound: float, logout_at: float | None = None,
    ) -> None:  # fmt: skip
        self.session = session
        self.account = account
        self.probes = probes
        self.outage = outage
        self.bound = bound
        self.logout_at = logout_at
        self.renew_at = 0.0
        self._changed = asyncio.Condition()
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._checks: list[asyncio.Task[None]] = []

    # ------------------------------------------------------------------ for the player's calls

    async def usable(self) -> None:
        """Wait until the token can be sent: not (nearly) expired. (Never, while refreshes go
        through: they come at half its life.) As long as the keeper tries, whose attempts are
        bounded; if it gave up, its error."""
        if self._ready():
            return
        self.account.waited += 1
        async with self._changed:
            await self._changed.wait_for(lambda: self._ready() or self._gone())
        if not self._ready() and self._task is not None:
            await self._task  # raises what stopped it
            raise RuntimeError(f"{self.account.username}: no token, and no keeper to renew it")

    def _gone(self) -> bool:
        return self._task is not None and self._task.done()

    def _ready(self) -> bool:
        return time.time() < self.account.expires_at - EXPIRY_MARGIN

    def stale(self, error: grpc.aio.AioRpcError, token: str) -> bool:
        """Whether a call refused as unauthenticated was sent with a token since replaced (its
        session logged out, or the token expired): the call was not carried out, and may be
        sent again."""
        return error.code() == grpc.StatusCode.UNAUTHENTICATED and token != self.session.token

    # ------------------------------------------------------------------ the account's life

    async def open(self, as_guest: bool) -> None:
        """Register (as a guest first, with `as_guest`), then keep the session in the
        background until `close()`."""
        await self._register(as_guest)
        self._task = asyncio.create_task(self._keep())

    async def close(self) -> None:
        """Stop once the current refresh or logout is through, and finish the checks. A player
        that has not refreshed yet (its run was shorter than half a token's life) does once."""
        self._stop.set()
        if self._task is not None:
            await self._task
            if not self.account.refreshes:
                await self._refresh()
        await asyncio.gather(*self._checks)

    async def _call(self, method: Any, request: Any, metadata: Any = ()) -> Any:
        """An account call, retried while the answer is lost (calls that are safe to repeat)."""
        for attempt in range(ATTEMPTS):
            try:
                return await method(request, metadata=metadata, timeout=CALL_SECONDS)
            except grpc.aio.AioRpcError as error:
                self.account.errors[error.code().name] += 1
                if error.code() not in ACCOUNT_RETRYABLE or attempt == ATTEMPTS - 1:
                    raise
                await backoff(attempt)
        raise AssertionError("unreachable")

    async def _register(self, as_guest: bool) -> None:
        account = self.account
        auth = self.session.auth
        # Players come from addresses of their own (the gateways trust the soak as their
        # proxy): accounts and guests made are bounded per address.
        address = (("x-forwarded-for", address_of(account.username)),)
        metadata: tuple[tuple[str, str], ...] = address
        if as_guest:
            guest = await self._call(
                auth.Login, lobby_pb2.LoginRequest(name=account.username), address
            )
            account.guest = guest.player_id
            metadata = (*bearer(guest.token), *address)
        request = lobby_pb2.RegisterRequest(username=account.username, password=account.password)
        unanswered = False
        for attempt in range(ATTEMPTS):
            try:
                reply = await auth.Register(request, metadata=metadata, timeout=CALL_SECONDS)
            except grpc.aio.AioRpcError as error:
                account.errors[error.code().name] += 1
                if error.code() in ACCOUNT_RETRYABLE and attempt < ATTEMPTS - 1:
                    unanswered = True
                    await backoff(attempt)
                    continue
                # A lost answer had made the account: the retry is refused as a second one.
                # (A guest's token ends when its guest registers: its retry is UNAUTHENTICATED.)
                if unanswered and error_info(error)[0] in (
                    "USERNAME_TAKEN",
                    "INVALID_ARGUMENT",
                    *(("UNAUTHENTICATED",) if as_guest else ()),
                ):
                    await self._login()
                    break
                raise
            self._logged_in(reply)
            break
        if account.guest and account.player_id != account.guest:
            account.problems.append(
                f"{account.username}: registered from guest {account.guest}, "
                f"the account is {account.player_id}"
            )

    async def _login(self) -> None:
        account = self.account
        reply = await self._call(
            self.session.auth.AccountLogin,
            lobby_pb2.AccountLoginRequest(username=account.username, password=account.password),
        )
        if account.player_id and reply.player_id != account.player_id:
            account.problems.append(
                f"{account.username}: logs in as {reply.player_id}, was {account.player_id}"
            )
        self._logged_in(reply)

    def _logged_in(self, reply: lobby_pb2.LoginResponse) -> None:
        self.account.logged_in(reply)
        self.session.token = reply.token
        self.session.player_id = reply.player_id
        self.session.refresh_token = reply.refresh_token
        self.renew_at = time.monotonic() + (self.account.expires_at - time.time()) / 2

    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    async def _keep(self) -> None:
        try:
            await self._keeping()
        finally:
            await self._notify()

    async def _keeping(self) -> None:
        while not self._stop.is_set():
            due = self.renew_at if self.logout_at is None else min(self.renew_at, self.logout_at)
            if due > time.monotonic():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stop.wait(), due - time.monotonic())
                continue
            if self.logout_at is not None and time.monotonic() >= self.logout_at:
                self.logout_at = None
                await self._log_in_again()
            else:
                await self._refresh()
            await self._notify()

    async def _refresh(self) -> str:
        """Rotate: the next tokens for the last refresh token, which is sent again while the
        answer is lost (see the module's doc); the token it used up ("" if the session was
        lost and the player logged in again)."""
        account = self.account
        sent = account.refresh_token
        for attempt in range(ATTEMPTS):
            try:
                reply = await self.session.auth.Refresh(
                    lobby_pb2.RefreshRequest(refresh_token=sent), timeout=CALL_SECONDS
                )
            except grpc.aio.AioRpcError as error:
                account.errors[error.code().name] += 1
                if error.code() in ACCOUNT_RETRYABLE:
                    if not account.unanswered:
                        account.lost_answers += 1
                    account.unanswered = True
                    await backoff(attempt)
                    continue
                if account.unanswered and _reused(error):
                    account.sessions_lost += 1
                    why = "lost: its retried Refresh was a reuse"
                else:
                    account.problems.append(
                        f"{account.username}: session {account.session_id} refused the refresh "
                        f"token it gave ({error.code().name}: {error.details()})"
                    )
                    why = "its refresh token was refused"
                ended = Ended(account.session_id, why, account.token, account.expires_at, [sent])
                await self._login()
                self._check(ended)
                return ""
            account.refreshes += 1
            self._logged_in(reply)
            return sent
        raise RuntimeError(f"{account.username}: no Refresh answered in {ATTEMPTS} attempts")

    async def _log_in_again(self) -> None:
        """Log in again (a second session, which the player goes on with), then log the first
        one out with its access token, keeping a copy of its tokens. The first is refreshed
        between the two, so that the access token ended is fresh: the Logout cannot find it
        expired however long the login took (a password hash, on a busy gateway), and it is
        checked for its whole life."""
        account = self.account
        second = await self._call(
            self.session.auth.AccountLogin,
            lobby_pb2.AccountLoginRequest(username=account.username, password=account.password),
        )
        used = await self._refresh()
        first = Ended(
            account.session_id, "logged out", account.token, account.expires_at,
            [t for t in (account.refresh_token, used) if t],
        )  # fmt: skip
        if second.player_id != account.player_id:
            account.problems.append(
                f"{account.username}: logs in as {second.player_id}, was {account.player_id}"
            )
        self._logged_in(second)  # calls with the first session's token will be sent again
        unanswered = False
        for attempt in range(ATTEMPTS):
            try:
                await self.session.auth.Logout(
                    lobby_pb2.LogoutRequest(), metadata=bearer(first.token), timeout=CALL_SECONDS
                )
            except grpc.aio.AioRpcError as error:
                account.errors[error.code().name] += 1
                if error.code() in ACCOUNT_RETRYABLE and attempt < ATTEMPTS - 1:
                    unanswered = True
                    await backoff(attempt)
                    continue
                if not (unanswered and error.code() == grpc.StatusCode.UNAUTHENTICATED):
                    account.problems.append(
                        f"{account.username}: Logout of session {first.session_id} refused "
                        f"({error.code().name}: {error.details()})"
                    )
                # else: a lost answer had ended the session, and this gateway knows it
            break
        account.logouts += 1
        first.at = time.monotonic()
        self._check(first)

    def _check(self, ended: Ended) -> None:
        """Note the session ended, and check its access token is refused (in the background)."""
        self.account.ended.append(ended)
        self._checks.append(asyncio.create_task(self._refused(ended)))

    async def _refused(self, ended: Ended) -> None:
        """Every gateway refuses the ended session's access token within `bound` of its end
        (or of PostgreSQL's return, when it was down then)."""

        def deadline() -> float:
            return math.inf if self.outage.down else max(ended.at, self.outage.back_at) + self.bound

        outcome = await refusal(self.probes, ended.token, ended.expires_at, deadline)
        if outcome == "refused":
            ended.refused_after = time.monotonic() - max(ended.at, self.outage.back_at)
        elif outcome == "expired":
            ended.unverified = True
        else:
            self.account.problems.append(
                f"{self.account.username}: session {ended.session_id} ({ended.why}): its access "
                f"token still accepted {time.monotonic() - ended.at:.1f} s after it ended"
            )


# ---------------------------------------------------------------------------- the audit


@dataclass
class AccountAudit:
    accounts: int = 0
    guests: int = 0
    """Accounts registered from a guest (keeping its player id)."""
    refreshes: int = 0
    lost_answers: int = 0
    sessions_lost: int = 0
    logouts: int = 0
    ended: int = 0
    refused: int = 0
    """Ended sessions' access tokens seen refused by every gateway while still unexpired."""
    unverified: int = 0
    refused_after: list[float] = field(default_factory=list)
    refresh_refused: int = 0
    """Used refresh tokens and ended sessions' refresh tokens refused after the run."""
    waited: int = 0
    errors: collections.Counter[str] = field(default_factory=collections.Counter)
    problems: list[str] = field(default_factory=list)


async def audit_accounts(
    targets: Sequence[str], accounts: Sequence[Account], bound: float, at_once: int = 8
) -> AccountAudit:
    """After the run, with the database up: hold every account to what its player was told
    (see the module's doc); `targets`: every gateway; `bound`: how long a gateway may take to
    refuse an ended session's access token."""
    channels = [grpc.aio.insecure_channel(target) for target in targets]
    probes = [lobby_pb2_grpc.AuthServiceStub(channel) for channel in channels]
    result = AccountAudit()
    limit = asyncio.Semaphore(at_once)

    async def one(index: int, account: Account) -> None:
        async with limit:
            await _audit_account(probes[index % len(probes)], probes, account, bound, result)

    try:
        await asyncio.gather(*(one(i, a) for i, a in enumerate(accounts)))
    finally:
        for channel in channels:
            await channel.close()
    return result


async def _answer(call: Any, request: Any, metadata: Any = ()) -> Any:
    """A call after the run, retried while it is unavailable; the answer or the refusal."""
    for attempt in range(ATTEMPTS):
        try:
            return await call(request, metadata=metadata, timeout=CALL_SECONDS)
        except grpc.aio.AioRpcError as error:
            if error.code() not in ACCOUNT_RETRYABLE or attempt == ATTEMPTS - 1:
                return error
            await backoff(attempt)
    raise AssertionError("unreachable")


def _reused(error: grpc.aio.AioRpcError) -> bool:
    """Refused as a reuse (not as unknown, expired, or for any other reason)."""
    return error.code() == grpc.StatusCode.UNAUTHENTICATED and REUSED in (error.details() or "")


def _why(error: grpc.aio.AioRpcError) -> str:
    return f"{error.code().name}: {error.details()}"


async def _audit_account(
    auth: Any, probes: Sequence[Any], account: Account, bound: float, result: AccountAudit
) -> None:
    name = account.username
    problems = result.problems
    problems += account.problems
    result.accounts += 1
    result.guests += bool(account.guest)
    result.refreshes += account.refreshes
    result.lost_answers += account.lost_answers
    result.sessions_lost += account.sessions_lost
    result.logouts += account.logouts
    result.waited += account.waited
    result.errors += account.errors
    result.ended += len(account.ended)
    result.refused += sum(e.refused_after is not None for e in account.ended)
    result.unverified += sum(e.unverified for e in account.ended)
    result.refused_after += [e.refused_after for e in account.ended if e.refused_after is not None]

    login = await _answer(
        auth.AccountLogin,
        lobby_pb2.AccountLoginRequest(username=name, password=account.password),
    )
    if isinstance(login, grpc.aio.AioRpcError):
        problems.append(f"account {name} ({account.player_id}): cannot log in ({_why(login)})")
    elif login.player_id != account.player_id:
        problems.append(f"account {name}: logs in as {login.player_id}, was {account.player_id}")

    # The session the player holds rotates with the last refresh token it was given.
    renewed = await _answer(
        auth.Refresh, lobby_pb2.RefreshRequest(refresh_token=account.refresh_token)
    )
    if isinstance(renewed, grpc.aio.AioRpcError):
        if account.unanswered and _reused(renewed):
            result.sessions_lost += 1  # the player's own retry would be this reuse: allowed
        else:
            problems.append(
                f"account {name}: its session {account.session_id} refuses the last refresh "
                f"token it was given ({_why(renewed)})"
            )
    else:
        # Used now, it is refused when shown again, and that reuse ends the session: the
        # token just received is refused too.
        for token, what in (
            (account.refresh_token, "a used refresh token"),
            (renewed.refresh_token, "the refresh token of a session ended by a reuse"),
        ):
            await _refused(auth, token, f"account {name}: {what}", result)

    for ended in account.ended:
        for token in ended.refresh_tokens:
            what = f"account {name}: a refresh token of session {ended.session_id} ({ended.why})"
            await _refused(auth, token, what, result)
        if ended.expires_at - time.time() > EXPIRY_MARGIN:
            by = _at(time.monotonic() + bound)
            outcome = await refusal(probes, ended.token, ended.expires_at, by)
            if outcome == "accepted":
                problems.append(
                    f"account {name}: session {ended.session_id} ({ended.why}): its access token "
                    f"still accepted after the run"
                )


def _at(moment: float) -> Callable[[], float]:
    return lambda: moment


async def _refused(auth: Any, token: str, what: str, result: AccountAudit) -> None:
    answer = await _answer(auth.Refresh, lobby_pb2.RefreshRequest(refresh_token=token))
    if not isinstance(answer, grpc.aio.AioRpcError):
        result.problems.append(f"{what} still works")
    elif answer.code() != grpc.StatusCode.UNAUTHENTICATED:
        result.problems.append(f"{what} is not refused as unauthenticated ({_why(answer)})")
    else:
        result.refresh_refused += 1
