"""Accounts: a username and a password (argon2id), and sessions kept in PostgreSQL.

A login opens a session: a short-lived access token (a JWT naming the session, `sid`) and a
refresh token that gets the next pair once. Only the SHA-256 of a refresh token is stored. A
refresh token shown a second time means someone else has a copy: the session ends. Logging
out, logging out everywhere and changing the password end sessions; a gateway refuses the
access tokens of an ended session within one poll of the database (`Revocations`), without a
database call on the calls it serves.

API tokens are an account's credentials for programs (a bot, a client of its own): named, with
scopes and an expiry, listed and revoked by the account. A program exchanges one for an access
token (TokenLogin) as a person logs in; the access token names the API token as its session, so
revoking the API token ends its access tokens as logging out does. A bot account is shown as a
bot and plays only with an API token of the `bot` scope.

A guest's token (gateway/auth.py) ends like a session: when its guest registers (in the same
transaction as the account is made) and when a Refresh replaces it (a guest has one token that
works at a time); `Revocations` reads those endings with the sessions'. Accounts made are
counted per client address and day (ACCOUNTS_PER_ADDRESS_DAY).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import re
import secrets
import time
import unicodedata
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

import psycopg
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from gateway.auth import GUEST_MAX_SECONDS, Identity, TokenIssuer
from gateway.fairness import FairSlots
from gateway.oidc import External
from wire.errors import ApiError
from wire.players import BOT_ACCOUNT_PREFIX

log = logging.getLogger("tabletop.accounts")
T = TypeVar("T")

USERNAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{1,19}")
PASSWORD_MIN, PASSWORD_MAX = 8, 128
ACCESS_TTL_SECONDS = 15 * 60
REFRESH_TTL_SECONDS = 30 * 24 * 3600
PRUNED_AT_ONCE = 100
"""Rows no longer needed (guest tokens' endings older than any guest, other days' counts of
accounts made) deleted with each new one: the tables stay bounded with no job to run."""
SCOPES = ("play", "bot")
"""What an API token may do beyond reading (views, legal moves, watching, listing games):
`play` (an account's games: make, join, play, resign, find matches) and `bot` (the same, for a
bot account: its only way to play)."""
TOKENS_PER_ACCOUNT = 50
"""API tokens an account may hold at once (not revoked, not expired)."""
TOKEN_DAYS_DEFAULT, TOKEN_DAYS_MAX = 90, 365
TOKEN_PREFIX = "tt_"
"""API tokens start with it (secret scanners can find one pasted where it should not be)."""
HASHES_AT_ONCE = 2
"""Password hashes computed at once by one gateway (each takes 64 MiB and ~70 ms of a core):
more logins wait their turn instead of taking every core."""
ACCOUNTS_PER_ADDRESS_DAY = 10
"""Accounts one client address may make (Register) in a day (UTC), on every gateway together:
plenty for a household or an office behind one address; one more is refused (LIMIT_REACHED)."""
GUEST_REGISTERED = "its guest became an account (Register): log in to the account (AccountLogin)"
GUEST_REPLACED = "a newer token of this guest replaced it (Refresh): use the newest"
HASHES_PER_CALLER = 16
"""Password hashes one client address may have computed or waiting at once on a gateway (one
more is refused, RATE_LIMITED). The places go round robin across addresses, so one address
sending checks as fast as it may delays another's login by a hash or two at most, and only its
own wait grows."""


def _now() -> datetime:
    return datetime.now(UTC)


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


RESERVED_NAMES = frozenset(
    {
        "admin",
        "administrator",
        "root",
        "system",
        "moderator",
        "mod",
        "support",
        "staff",
        "tabletop",
        "bot",
        "bots",
        "guest",
        "null",
        "none",
        "anonymous",
    }
)
"""Usernames nobody may take (whatever the case): they would pass for the platform's own."""
RESERVED_PATTERN = re.compile(r"bot[-_0-9].*|bot(random|greedy|strong|expert).*")
"""Usernames that would pass for the platform's bots (whose seats are named bot-<level>-<hex>)."""


def name_key(name: str) -> str:
    """The form two names are compared in: NFKC, then case-folded."""
    return unicodedata.normalize("NFKC", name).casefold()


def is_reserved(name: str) -> bool:
    key = name_key(name)
    return key in RESERVED_NAMES or RESERVED_PATTERN.fullmatch(key) is not None


def visible(text: str) -> str:
    """`text` without control and format characters (bidi overrides, zero widths...), NFKC."""
    kept = "".join(c for c in text if unicodedata.category(c) not in ("Cc", "Cf"))
    return unicodedata.normalize("NFKC", kept)


def check_username(username: str) -> str:
    if not USERNAME_PATTERN.fullmatch(username):
        raise ApiError(
            "INVALID_ARGUMENT",
            "a username is 2 to 20 letters, digits, '-' or '_', starting with a letter or digit"
            f"; got {username[:40]!r}",
        )
    if is_reserved(username):
        raise ApiError(
            "INVALID_ARGUMENT",
            f"the username {username!r} is reserved (it would pass for the platform's own "
            "staff or bots); choose another",
        )
    return username


def check_password(password: str) -> str:
    if not PASSWORD_MIN <= len(password) <= PASSWORD_MAX:
        raise ApiError(
            "INVALID_ARGUMENT",
            f"a password is {PASSWORD_MIN} to {PASSWORD_MAX} characters; got {len(password)}",
        )
    if any(unicodedata.category(c) == "Cc" for c in password):
        raise ApiError(
            "INVALID_ARGUMENT",
            "a password may not hold control characters (NUL, tabs, line breaks...)",
        )
    return password


@dataclass(frozen=True)
class Grant:
    """What a login or a refresh hands out."""

    token: str
    identity: Identity
    refresh_token: str
    refresh_expires_at: datetime


class Accounts:
    """Registration, logins and sessions against the database `pool`."""

    def __init__(
        self,
        pool: AsyncConnectionPool,
        issuer: TokenIssuer,
        *,
        access_ttl_seconds: int = ACCESS_TTL_SECONDS,
        refresh_ttl_seconds: int = REFRESH_TTL_SECONDS,
        hashes_at_once: int = HASHES_AT_ONCE,
        hashes_per_caller: int = HASHES_PER_CALLER,
    ) -> None:
        self.pool = pool
        self.issuer = issuer
        self.access_ttl = access_ttl_seconds
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

    async def replace_guest_token(self, identity: Identity) -> bool:
        """Ends the guest's token `identity` for the next (Refresh); False when it had ended
        already (replaced before, or its guest registered)."""
        async with self._connection() as connection:
            return await self._end_guest_token(
                connection, identity.guest_token, identity.player_id, GUEST_REPLACED
            )

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
        token, identity = self.issuer.issue(
            account_id, name, self.access_ttl, session=session, bot=bot
        )
        return Grant(token, identity, refresh, expires)

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

    async def logout(self, identity: Identity, everywhere: bool) -> int:
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

    async def sessions(self, identity: Identity) -> list[dict[str, Any]]:
        async with self._connection() as connection:
            cursor = connection.cursor(row_factory=dict_row)
            await cursor.execute(
                "SELECT id, created_at, last_used_at, expires_at, client FROM sessions"
                " WHERE account_id = %s AND revoked_at IS NULL AND expires_at > now()"
                " ORDER BY created_at",
                (identity.player_id,),
            )
            return await cursor.fetchall()

    async def change_password(
        self, identity: Identity, old: str, new: str, client: str = ""
    ) -> int:
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
        self, identity: Identity, name: str, scopes: list[str], days: int
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

    async def tokens(self, identity: Identity) -> list[dict[str, Any]]:
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

    async def revoke_token(self, identity: Identity, token_id: str) -> None:
        """Revokes one of the account's API tokens: it logs in no more, and the access tokens
        it got are refused from the next poll of `Revocations`."""
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

    async def token_login(self, secret: str) -> tuple[str, Identity]:
        """An access token for an API token: with its scopes, naming it as the session."""
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
        return self.issuer.issue(
            account_id, name, self.access_ttl, session=token_id, scopes=tuple(scopes), bot=bot
        )


def check_token_name(name: str) -> str:
    if not 1 <= len(name) <= 40 or not name.isprintable():
        raise ApiError(
            "INVALID_ARGUMENT",
            f"an API token's name is 1 to 40 printable characters; got {name[:40]!r}",
        )
    return name


def check_scopes(scopes: list[str], bot: bool) -> tuple[str, ...]:
    """The scopes asked for, checked: known ones, each once; `bot` only for a bot account,
    and `play` only for a person's."""
    unknown = [s for s in scopes if s not in SCOPES]
    if unknown:
        raise ApiError(
            "INVALID_ARGUMENT",
            f"unknown scope {unknown[0][:20]!r}: the scopes are {', '.join(SCOPES)}",
        )
    if bot and "play" in scopes:
        raise ApiError("INVALID_ARGUMENT", "a bot account plays with the 'bot' scope, not 'play'")
    if not bot and "bot" in scopes:
        raise ApiError(
            "INVALID_ARGUMENT",
            "the 'bot' scope is for bot accounts (registered as bots); a person's token "
            "plays with 'play'",
        )
    return tuple(sorted(set(scopes)))


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
    """The sessions, API tokens and guest tokens that ended, as this gateway knows them: loaded
    from the database when it starts and polled every `poll_seconds` after (one indexed query
    per poll, whatever the traffic). An access token of an ended session, or a guest token
    that ended, is refused from the poll after it ended (`ended`); access tokens live
    `access_ttl` at most and guest tokens `guest_ttl`, so older endings are forgotten."""

    def __init__(
        self,
        pool: AsyncConnectionPool,
        access_ttl: int,
        poll_seconds: float,
        guest_ttl: int = 24 * 3600,
    ) -> None:
        self.pool = pool
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
        now = time.time()
        back = self.access_ttl + 60 if self.polls == 0 else 60
        guests_back = self.guest_ttl + 60 if self.polls == 0 else 60
        async with self.pool.connection() as connection:
            rows = await (
                await connection.execute(
                    "SELECT id, revoked_at, '' FROM sessions"
                    " WHERE revoked_at >= now() - make_interval(secs => %s)"
                    " UNION ALL SELECT id, revoked_at, '' FROM api_tokens"
                    " WHERE revoked_at >= now() - make_interval(secs => %s)"
                    " UNION ALL SELECT id, ended_at, why FROM ended_guest_tokens"
                    " WHERE ended_at >= now() - make_interval(secs => %s)",
                    (back, back, guests_back),
                )
            ).fetchall()
        for ended, at, why in rows:
            lives = self.guest_ttl if why else self.access_ttl
            self._ended[ended] = at.timestamp() + lives + 60  # clock skew
            if why:
                self._why[ended] = why
        for ended, until in list(self._ended.items()):
            if until < now:
                del self._ended[ended]
                self._why.pop(ended, None)
        self.polls += 1

    async def first_poll(self, seconds: float) -> None:
        """One poll, given up after `seconds` (the database out of reach)."""
        try:
            async with asyncio.timeout(seconds):
                await self.poll()
        except (psycopg.Error, OSError, TimeoutError) as error:
            log.warning("cannot read ended sessions", extra={"error": str(error)})

    async def run(self) -> None:
        while True:
            await asyncio.sleep(self.poll_seconds)
            try:
                await self.poll()
            except (psycopg.Error, OSError) as error:
                log.warning("cannot read ended sessions", extra={"error": str(error)})
