"""The accounts' store: every SQL statement on accounts, sessions, refresh tokens, API tokens,
external identities, guest tokens' endings and accounts made per address (PostgreSQL).

A login opens a session, named by the access tokens the gateway signs for it (`sid`), with a
refresh token that gets the next pair once. Only the SHA-256 of a refresh token is stored. A
refresh token shown a second time means someone else has a copy: the session ends. Logging out,
logging out everywhere and changing the password end sessions; the gateways learn what ended
from `ended` (AccountsService.Ended), without a database call on the calls they serve.

API tokens are an account's credentials for programs (a bot, a client of its own): named, with
scopes and an expiry, listed and revoked by the account. A program exchanges one for an access
token (TokenLogin) as a person logs in; the access token names the API token as its session, so
revoking the API token ends its access tokens as logging out does. A bot account is shown as a
bot and plays only with an API token of the `bot` scope.

A guest's token ends like a session: when its guest registers (in the same transaction as the
account is made) and when a Refresh replaces it (a guest has one token that works at a time);
`ended` reads those endings with the sessions'. Accounts made are counted per client address
and day (ACCOUNTS_PER_ADDRESS_DAY).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import re
import secrets
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import psycopg
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from services.accounts.fairness import FairSlots
from services.accounts.rules import (
    PASSWORD_MAX,
    check_password,
    check_scopes,
    check_token_name,
    check_username,
    is_reserved,
    visible,
)
from wire.errors import ApiError
from wire.players import (
    BOT_ACCOUNT_PREFIX,
    GUEST_MAX_SECONDS,
    GUEST_REGISTERED,
    GUEST_REPLACED,
)

log = logging.getLogger("tabletop.accounts")
T = TypeVar("T")

REFRESH_TTL_SECONDS = 30 * 24 * 3600
PRUNED_AT_ONCE = 100
"""Rows no longer needed (guest tokens' endings older than any guest, other days' counts of
accounts made) deleted with each new one: the tables stay bounded with no job to run."""
TOKENS_PER_ACCOUNT = 50
"""API tokens an account may hold at once (not revoked, not expired)."""
TOKEN_DAYS_DEFAULT, TOKEN_DAYS_MAX = 90, 365
TOKEN_PREFIX = "tt_"
"""API tokens start with it (secret scanners can find one pasted where it should not be)."""
HASHES_AT_ONCE = 2
"""Password hashes computed at once by one accounts process (each takes 64 MiB and ~70 ms of a
core): more logins wait their turn instead of taking every core."""
ACCOUNTS_PER_ADDRESS_DAY = 10
"""Accounts one client address may make (Register) in a day (UTC), on every gateway together:
plenty for a household or an office behind one address; one more is refused (LIMIT_REACHED)."""
HASHES_PER_CALLER = 16
"""Password hashes one client address may have computed or waiting at once on an accounts
process (one more is refused, RATE_LIMITED). The places go round robin across addresses, so
one address sending checks as fast as it may delays another's login by a hash or two at most,
and only its own wait grows."""


def _now() -> datetime:
    return datetime.now(UTC)


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


@dataclass(frozen=True)
class Grant:
    """Who a login, a refresh or an API token is: the gateway signs an access token of it."""

    account_id: str
    name: str
    bot: bool
    session: str
    """The session (an API token's id, for an API token)."""
    refresh_token: str = ""
    refresh_expires_at: datetime | None = None
    scopes: tuple[str, ...] | None = None
    """An API token's scopes; None for a login."""


@dataclass(frozen=True)
class Caller:
    """An account calling, logged in: its id, the session of its token, whether a bot's."""

    player_id: str
    session: str = ""
    bot: bool = False


@dataclass(frozen=True)
class External:
    """An identity provider's person (gateway/oidc.py checked the provider's token)."""

    issuer: str
    subject: str
    name: str


@dataclass(frozen=True)
class Ending:
    """A session, an API token or a guest token (`why` it ended) that ended, `at`."""

    id: str
    at: datetime
    why: str


async def account_named(
    connection: psycopg.AsyncConnection[Any], username: str
) -> tuple[str, str] | None:
    """The id and username of the account named `username` (whatever its case), or None."""
    cursor = await connection.execute(
        "SELECT id, username FROM accounts WHERE username_key = %s", (username.lower(),)
    )
    row = await cursor.fetchone()
    return None if row is None else (str(row[0]), str(row[1]))


class Accounts:
    """Registration, logins and sessions against the database `pool`."""

    def __init__(
        self,
        pool: AsyncConnectionPool,
        *,
        refresh_ttl_seconds: int = REFRESH_TTL_SECONDS,
        hashes_at_once: int = HASHES_AT_ONCE,
        hashes_per_caller: int = HASHES_PER_CALLER,
    ) -> None:
        self.pool = pool
        self.refresh_ttl = refresh_ttl_seconds
        self.hasher = PasswordHasher()  # argon2id, RFC 9106's second choice: t=3, 64 MiB, p=4
        self._hashing = FairSlots(hashes_at_once, hashes_per_caller)
        self._decoy = self.hasher.hash(secrets.token_urlsafe(16))
        """Verified against when the username is unknown: a login takes as long either way."""

    @contextlib.asynccontextmanager
    async def _connection(self) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
        """A connection of the pool; the database out of reach is UNAVAILABLE (retry)."""
        try:
            async with self.pool.connection() as connection:
                yield connection
        except psycopg.Error as error:
            log.warning("the account database failed", extra={"error": str(error)})
            raise ApiError(
                "UNAVAILABLE", "the account database cannot be reached now; retry"
            ) from None

    async def _hashed(self, work: Callable[[], T], caller: str) -> T:
        """`work` (a password hash) in a thread, at most HASHES_AT_ONCE at a time, given in turn
        across callers (`caller`: the client's address; gateway/fairness.py), each holding or
        waiting for HASHES_PER_CALLER at most. A place is freed when the hash is done, not when
        its caller gives up (a call cancelled at its deadline leaves its thread hashing;
        counting it as done would let more run at once)."""
        await self._hashing.acquire(caller)
        try:
            running = asyncio.ensure_future(asyncio.to_thread(work))
        except BaseException:
            self._hashing.release(caller)
            raise
        running.add_done_callback(lambda _: self._hashing.release(caller))
        return await asyncio.shield(running)

    async def _hash(self, password: str, caller: str = "") -> str:
        return await self._hashed(lambda: self.hasher.hash(password), caller)

    async def _verify(self, stored: str, password: str, caller: str = "") -> bool:
        def verify() -> bool:
            try:
                return self.hasher.verify(stored, password)
            except (VerificationError, InvalidHashError):
                return False

        return await self._hashed(verify, caller)

    # ------------------------------------------------------------------ logins

    async def register(
        self,
        username: str,
        password: str,
        client: str,
        guest: str = "",
        bot: bool = False,
        guest_token: str = "",
        per_address_day: int = ACCOUNTS_PER_ADDRESS_DAY,
    ) -> Grant:
        """A new account (with `guest`'s player id when a guest claims it, whose token
        `guest_token` ends with it; a `bot` account: shown as a bot), logged in. At most
        `per_address_day` accounts are made from one address (`client`) a day."""
        check_username(username)
        check_password(password)
        if bot and guest:
            raise ApiError(
                "INVALID_ARGUMENT",
                "a guest's games are a person's: register a bot account without a guest's token",
            )
        stored = await self._hash(password, client)
        account_id = guest or f"{BOT_ACCOUNT_PREFIX if bot else 'a-'}{secrets.token_hex(8)}"
        async with self._connection() as connection:
            try:
                async with connection.transaction():
                    await self._count_creation(connection, client, per_address_day)
                    if guest and not await self._end_guest_token(
                        connection, guest_token, guest, GUEST_REGISTERED
                    ):
                        raise ApiError(
                            "UNAUTHENTICATED",
                            "this guest token has ended already (replaced by a Refresh, or "
                            "its guest registered): use the newest",
                        )
                    await connection.execute(
                        "INSERT INTO accounts (id, username, username_key, password_hash, bot)"
                        " VALUES (%s, %s, %s, %s, %s)",
                        (account_id, username, username.lower(), stored, bot),
                    )
                    return await self._open_session(connection, account_id, username, client, bot)
            except psycopg.errors.UniqueViolation as error:
                if "username_key" in str(error.diag.constraint_name or ""):
                    raise ApiError(
                        "USERNAME_TAKEN", f"the username {username!r} is taken"
                    ) from None
                raise ApiError(
                    "INVALID_ARGUMENT", "this guest has claimed an account already; log in to it"
                ) from None

    @staticmethod
    async def _count_creation(
        connection: psycopg.AsyncConnection[Any], address: str, most: int
    ) -> None:
        """One more account made from `address` today (in the caller's transaction: an account
        not made is not counted); raises ApiError (LIMIT_REACHED) beyond `most`."""
        row = await (
            await connection.execute(
                "INSERT INTO account_creations (address, day, made)"
                " VALUES (%s, (now() AT TIME ZONE 'UTC')::date, 1)"
                " ON CONFLICT (address, day) DO UPDATE SET made = account_creations.made + 1"
                " RETURNING made",
                (address[:100],),
            )
        ).fetchone()
        await connection.execute(  # only today's counts are read
            "DELETE FROM account_creations WHERE (address, day) IN (SELECT address, day"
            " FROM account_creations WHERE day < (now() AT TIME ZONE 'UTC')::date - 1 LIMIT %s)",
            (PRUNED_AT_ONCE,),
        )
        if row is not None and row[0] > most:
            raise ApiError(
                "LIMIT_REACHED",
                f"{most} accounts were made from your address today: at most {most} a day; "
                "retry tomorrow (UTC)",
                limit="accounts_per_address",
                max=str(most),
            )

    @staticmethod
    async def _end_guest_token(
        connection: psycopg.AsyncConnection[Any], token_id: str, player_id: str, why: str
    ) -> bool:
        """Ends the guest token `token_id` (in the caller's transaction); False when it had
        ended already (of two ends at once, exactly one is True)."""
        cursor = await connection.execute(
            "INSERT INTO ended_guest_tokens (id, player_id, why) VALUES (%s, %s, %s)"
            " ON CONFLICT (id) DO NOTHING",
            (token_id, player_id, why),
        )
        ended = cursor.rowcount == 1
        # No guest token outlives its guest: older endings are dropped, a few at each end, so
        # the table holds what the last GUEST_MAX_SECONDS ended and no more.
        await connection.execute(
            "DELETE FROM ended_guest_tokens WHERE id IN (SELECT id FROM ended_guest_tokens"
            " WHERE ended_at < now() - make_interval(secs => %s) LIMIT %s)",
            (GUEST_MAX_SECONDS + 86400, PRUNED_AT_ONCE),
        )
        return ended

    async def replace_guest_token(self, player_id: str, guest_token: str) -> bool:
        """Ends the guest's token `guest_token` for the next (Refresh); False when it had ended
        already (replaced before, or its guest registered)."""
        async with self._connection() as connection:
            return await self._end_guest_token(connection, guest_token, player_id, GUEST_REPLACED)

    async def login(self, username: str, password: str, client: str) -> Grant:
        if len(password) > PASSWORD_MAX:  # no account has one so long: not worth a hash
            raise ApiError("UNAUTHENTICATED", "wrong username or password")
        async with self._connection() as connection:
            row = await (
                await connection.execute(
                    "SELECT id, username, password_hash, bot FROM accounts WHERE username_key = %s",
                    (username.lower(),),
                )
            ).fetchone()
        # unknown, or without a password (an identity provider's): as long as a wrong password
        stored = row[2] if row and row[2] else self._decoy
        if not await self._verify(stored, password, client) or row is None:
            raise ApiError("UNAUTHENTICATED", "wrong username or password")
        account_id, name, bot = row[0], row[1], row[3]
        if self.hasher.check_needs_rehash(stored):
            await self._set_password(account_id, await self._hash(password, client))
        async with self._connection() as connection, connection.transaction():
            return await self._open_session(connection, account_id, name, client, bot)

    async def external_login(self, who: External, client: str) -> Grant:
        """A session of the account a provider's identity maps to; the account is made on the
        identity's first login (a username from the provider's name, made unique; no
        password)."""
        for attempt in (1, 2):
            async with self._connection() as connection:
                try:
                    async with connection.transaction():
                        return await self._external_session(connection, who, client)
                except psycopg.errors.UniqueViolation:
                    if attempt == 2:  # the same identity's first logins at once: one won
                        raise ApiError("UNAVAILABLE", "the account is being made; retry") from None
        raise AssertionError("unreachable")

    async def _external_session(
        self, connection: psycopg.AsyncConnection[Any], who: External, client: str
    ) -> Grant:
        row = await (
            await connection.execute(
                "SELECT a.id, a.username, a.bot FROM external_identities e"
                " JOIN accounts a ON a.id = e.account_id"
                " WHERE e.issuer = %s AND e.subject = %s",
                (who.issuer, who.subject),
            )
        ).fetchone()
        bot = False
        if row is None:
            account_id = f"a-{secrets.token_hex(8)}"
            username = await self._free_username(connection, who.name)
            await connection.execute(
                "INSERT INTO accounts (id, username, username_key, password_hash)"
                " VALUES (%s, %s, %s, '')",
                (account_id, username, username.lower()),
            )
            await connection.execute(
                "INSERT INTO external_identities (issuer, subject, account_id) VALUES (%s, %s, %s)",
                (who.issuer, who.subject, account_id),
            )
        else:
            account_id, username, bot = row
        return await self._open_session(connection, account_id, username, client, bot)

    @staticmethod
    async def _free_username(connection: psycopg.AsyncConnection[Any], hint: str) -> str:
        base = re.sub(r"[^A-Za-z0-9_-]", "", visible(hint)).lstrip("_-")[:15]
        if len(base) < 2 or is_reserved(base):
            base = "player"
        for candidate in [base, *(f"{base}-{secrets.token_hex(2)}" for _ in range(5))]:
            taken = await (
                await connection.execute(
                    "SELECT 1 FROM accounts WHERE username_key = %s", (candidate.lower(),)
                )
            ).fetchone()
            if taken is None:
                return candidate
        return f"{base}-{secrets.token_hex(4)}"

    async def _open_session(
        self,
        connection: psycopg.AsyncConnection[Any],
        account_id: str,
        name: str,
        client: str,
        bot: bool,
    ) -> Grant:
        session = f"s-{secrets.token_hex(12)}"
        expires = _now() + timedelta(seconds=self.refresh_ttl)
        await connection.execute(
            "INSERT INTO sessions (id, account_id, expires_at, client) VALUES (%s, %s, %s, %s)",
            (session, account_id, expires, client[:100]),
        )
        return await self._grant(connection, account_id, name, session, expires, bot)

    async def _grant(
        self,
        connection: psycopg.AsyncConnection[Any],
        account_id: str,
        name: str,
        session: str,
        expires: datetime,
        bot: bool,
    ) -> Grant:
        refresh = f"rt-{secrets.token_urlsafe(32)}"
        await connection.execute(
            "INSERT INTO refresh_tokens (hash, session_id) VALUES (%s, %s)",
            (_digest(refresh), session),
        )
        return Grant(account_id, name, bot, session, refresh, expires)

    async def refresh(self, refresh_token: str) -> Grant:
        """The next access and refresh tokens; the one given is used up. Given again, it ends
        its session (and every token of it)."""
        async with self._connection() as connection, connection.transaction():
            row = await (
                await connection.execute(
                    "SELECT t.session_id, t.used_at, s.revoked_at, s.expires_at,"
                    " a.id, a.username, a.bot FROM refresh_tokens t"
                    " JOIN sessions s ON s.id = t.session_id"
                    " JOIN accounts a ON a.id = s.account_id"
                    " WHERE t.hash = %s FOR UPDATE OF t, s",
                    (_digest(refresh_token),),
                )
            ).fetchone()
            if row is None:
                raise ApiError("UNAUTHENTICATED", "unknown refresh token; log in again")
            session, used_at, revoked_at, expires, account_id, name, bot = row
            if revoked_at is not None:
                raise ApiError("UNAUTHENTICATED", "this login has ended; log in again")
            if expires <= _now():
                raise ApiError("UNAUTHENTICATED", "this session has expired; log in again")
            if used_at is None:
                await connection.execute(
                    "UPDATE refresh_tokens SET used_at = now() WHERE hash = %s",
                    (_digest(refresh_token),),
                )
                await connection.execute(
                    "UPDATE sessions SET last_used_at = now() WHERE id = %s", (session,)
                )
                return await self._grant(connection, account_id, name, session, expires, bot)
            await self._end(connection, "id = %s", (session,), "a refresh token was reused")
        log.warning("a used refresh token came back: its session is ended", extra={"sid": session})
        raise ApiError(
            "UNAUTHENTICATED",
            "this refresh token was used already: the session is ended (someone else may hold "
            "a copy); log in again",
        )

    # ------------------------------------------------------------------ sessions

    @staticmethod
    async def _end(
        connection: psycopg.AsyncConnection[Any], where: str, args: tuple[Any, ...], why: str
    ) -> int:
        cursor = await connection.execute(
            "UPDATE sessions SET revoked_at = clock_timestamp(), revoked_why = %s"
            f" WHERE revoked_at IS NULL AND {where}",
            (why, *args),
        )
        return cursor.rowcount

    async def logout(self, identity: Caller, everywhere: bool) -> int:
        async with self._connection() as connection:
            if everywhere:
                return await self._end(
                    connection, "account_id = %s", (identity.player_id,), "logged out everywhere"
                )
            return await self._end(
                connection,
                "id = %s AND account_id = %s",
                (identity.session, identity.player_id),
                "logged out",
            )

    async def sessions(self, identity: Caller) -> list[dict[str, Any]]:
        async with self._connection() as connection:
            cursor = connection.cursor(row_factory=dict_row)
            await cursor.execute(
                "SELECT id, created_at, last_used_at, expires_at, client FROM sessions"
                " WHERE account_id = %s AND revoked_at IS NULL AND expires_at > now()"
                " ORDER BY created_at",
                (identity.player_id,),
            )
            return await cursor.fetchall()

    async def change_password(self, identity: Caller, old: str, new: str, client: str = "") -> int:
        """The new password; every other session of the account ends (how many did). `client`:
        the caller's address (whose turn the hashes take)."""
        check_password(new)
        async with self._connection() as connection:
            row = await (
                await connection.execute(
                    "SELECT password_hash FROM accounts WHERE id = %s", (identity.player_id,)
                )
            ).fetchone()
        if row is None or not row[0] or not await self._verify(row[0], old, client):
            raise ApiError("UNAUTHENTICATED", "the old password is wrong")
        await self._set_password(identity.player_id, await self._hash(new, client))
        async with self._connection() as connection:
            return await self._end(
                connection,
                "account_id = %s AND id <> %s",
                (identity.player_id, identity.session),
                "the password changed",
            )

    async def _set_password(self, account_id: str, stored: str) -> None:
        async with self._connection() as connection:
            await connection.execute(
                "UPDATE accounts SET password_hash = %s, password_changed_at = now() WHERE id = %s",
                (stored, account_id),
            )

    # ------------------------------------------------------------------ API tokens

    async def create_token(
        self, identity: Caller, name: str, scopes: list[str], days: int
    ) -> tuple[str, dict[str, Any]]:
        """A new API token of the caller's account: the token (shown this once) and its
        record."""
        name = check_token_name(name)
        wanted = check_scopes(scopes, identity.bot)
        days = days or TOKEN_DAYS_DEFAULT
        if not 1 <= days <= TOKEN_DAYS_MAX:
            raise ApiError(
                "INVALID_ARGUMENT",
                f"an API token lives 1 to {TOKEN_DAYS_MAX} days (0: {TOKEN_DAYS_DEFAULT}); "
                f"got {days}",
            )
        secret = f"{TOKEN_PREFIX}{secrets.token_urlsafe(32)}"
        token_id = f"t-{secrets.token_hex(8)}"
        async with self._connection() as connection, connection.transaction():
            # one account's token creations in turn: the count below stays true
            await connection.execute(
                "SELECT 1 FROM accounts WHERE id = %s FOR UPDATE", (identity.player_id,)
            )
            held = await (
                await connection.execute(
                    "SELECT count(*) FROM api_tokens WHERE account_id = %s"
                    " AND revoked_at IS NULL AND expires_at > now()",
                    (identity.player_id,),
                )
            ).fetchone()
            if held is not None and held[0] >= TOKENS_PER_ACCOUNT:
                raise ApiError(
                    "LIMIT_REACHED",
                    f"this account has {held[0]} API tokens: at most {TOKENS_PER_ACCOUNT}; "
                    "revoke one first",
                    limit="api_tokens",
                    max=str(TOKENS_PER_ACCOUNT),
                )
            cursor = connection.cursor(row_factory=dict_row)
            await cursor.execute(
                "INSERT INTO api_tokens (id, account_id, name, scopes, hash, expires_at)"
                " VALUES (%s, %s, %s, %s, %s, now() + make_interval(days => %s))"
                " RETURNING id, name, scopes, created_at, expires_at, last_used_at",
                (token_id, identity.player_id, name, list(wanted), _digest(secret), days),
            )
            record = await cursor.fetchone()
        assert record is not None
        return secret, record

    async def tokens(self, identity: Caller) -> list[dict[str, Any]]:
        """The account's API tokens that still work."""
        async with self._connection() as connection:
            cursor = connection.cursor(row_factory=dict_row)
            await cursor.execute(
                "SELECT id, name, scopes, created_at, expires_at, last_used_at FROM api_tokens"
                " WHERE account_id = %s AND revoked_at IS NULL AND expires_at > now()"
                " ORDER BY created_at",
                (identity.player_id,),
            )
            return await cursor.fetchall()

    async def revoke_token(self, identity: Caller, token_id: str) -> None:
        """Revokes one of the account's API tokens: it logs in no more, and the access tokens
        it got are refused from the gateways' next poll of `ended`."""
        async with self._connection() as connection:
            cursor = await connection.execute(
                "UPDATE api_tokens SET revoked_at = clock_timestamp()"
                " WHERE id = %s AND account_id = %s AND revoked_at IS NULL",
                (token_id[:40], identity.player_id),
            )
        if cursor.rowcount == 0:
            raise ApiError(
                "TOKEN_NOT_FOUND", f"this account has no API token {token_id[:40]!r} that works"
            )

    async def token_login(self, secret: str) -> Grant:
        """Who an API token is: with its scopes, naming it as the session."""
        if not secret.startswith(TOKEN_PREFIX) or len(secret) > 100:
            raise ApiError("UNAUTHENTICATED", "not an API token (they start with 'tt_')")
        async with self._connection() as connection:
            row = await (
                await connection.execute(
                    "UPDATE api_tokens t SET last_used_at = now() FROM accounts a"
                    " WHERE t.hash = %s AND a.id = t.account_id"
                    " AND t.revoked_at IS NULL AND t.expires_at > now()"
                    " RETURNING t.id, t.scopes, a.id, a.username, a.bot",
                    (_digest(secret),),
                )
            ).fetchone()
        if row is None:
            raise ApiError(
                "UNAUTHENTICATED", "unknown, revoked or expired API token; make a new one"
            )
        token_id, scopes, account_id, name, bot = row
        return Grant(account_id, name, bot, token_id, scopes=tuple(scopes))

    async def ended(self, seconds: float, guest_seconds: float) -> list[Ending]:
        """The sessions and API tokens that ended within `seconds`, and the guest tokens within
        `guest_seconds` (by the database's clock)."""
        async with self._connection() as connection:
            rows = await (
                await connection.execute(
                    "SELECT id, revoked_at, '' FROM sessions"
                    " WHERE revoked_at >= now() - make_interval(secs => %s)"
                    " UNION ALL SELECT id, revoked_at, '' FROM api_tokens"
                    " WHERE revoked_at >= now() - make_interval(secs => %s)"
                    " UNION ALL SELECT id, ended_at, why FROM ended_guest_tokens"
                    " WHERE ended_at >= now() - make_interval(secs => %s)",
                    (seconds, seconds, guest_seconds),
                )
            ).fetchall()
        return [Ending(ended, at, why) for ended, at, why in rows]

    async def named(self, username: str) -> tuple[str, str] | None:
        """The id and username of the account named `username` (whatever its case), or None:
        the lobby names players by username."""
        async with self._connection() as connection:
            return await account_named(connection, username)

    async def usernames(self, account_ids: Sequence[str]) -> dict[str, str]:
        """The usernames of those of `account_ids` that are accounts: the lobby calls players by
        them."""
        if not account_ids:
            return {}
        async with self._connection() as connection:
            cursor = await connection.execute(
                "SELECT id, username FROM accounts WHERE id = ANY(%s)", (list(account_ids),)
            )
            return {str(account): str(name) async for account, name in cursor}

    async def made(self, account_ids: Sequence[str]) -> dict[str, datetime]:
        """When those of `account_ids` that are accounts were made: the ratings consumers count
        a deal of the day on its day's table only for an account made before the day began."""
        if not account_ids:
            return {}
        async with self._connection() as connection:
            cursor = await connection.execute(
                "SELECT id, created_at FROM accounts WHERE id = ANY(%s)", (list(account_ids),)
            )
            return {str(account): made async for account, made in cursor}
