"""Signed, expiring bearer tokens (HS256 JWTs) for guests, bots and account sessions (an
account's access token names its session, `sid`, or the API token it was exchanged for: one
that ended is refused, see gateway/accounts.py; an API token's access tokens carry its scopes,
`scp`, and a bot account's say so, `bot`). A guest's token names itself, `gtk` (ended when its
guest becomes an account or a Refresh replaces it, as a session ends), and when its guest began,
`gst` (a guest lives GUEST_MAX_SECONDS at most, whatever its refreshes)."""

from __future__ import annotations

import re
import secrets
import time
from collections.abc import Iterable
from dataclasses import dataclass

import jwt

from wire.players import GUEST_MAX_SECONDS

NAME_PATTERN = re.compile(r"[A-Za-z0-9 _-]{1,32}")
ALGORITHM = "HS256"
_CACHE_LIMIT = 100_000


class AuthError(Exception):
    """The token is missing, malformed, forged or expired (the message says which)."""


@dataclass(frozen=True, slots=True)
class Identity:
    player_id: str
    name: str
    expires_at: float
    session: str = ""
    """An account's session id; empty for guests and bot seats."""
    worker: bool = False
    """The platform's bot worker: it acts for the bot seat each call names (BOT_SEAT_METADATA)."""
    scopes: tuple[str, ...] | None = None
    """An API token's scopes (services/accounts/rules.py SCOPES); None: not an API token's (a guest,
    a bot seat, a worker, an account's login)."""
    bot: bool = False
    """A bot account's (shown as a bot; plays with a `bot`-scoped API token only)."""
    guest_token: str = ""
    """A guest's token's own id (g-<hex>): one token of a guest works at a time."""
    guest_since: float = 0.0
    """When the guest began (its Login): it lives GUEST_MAX_SECONDS at most."""


class TokenIssuer:
    """Issues and checks tokens. Verified tokens are cached until they expire."""

    def __init__(self, secret: str, *, ttl_seconds: int = 24 * 3600) -> None:
        if len(secret.encode()) < 32:
            raise ValueError("the token signing key must be at least 32 bytes (HS256)")
        self._secret = secret
        self.ttl_seconds = ttl_seconds
        self._cache: dict[str, Identity] = {}

    def login(self, name: str) -> tuple[str, Identity]:
        """A new guest player id and its token."""
        if not NAME_PATTERN.fullmatch(name):
            raise ValueError(
                "a name is 1 to 32 letters, digits, spaces, '-' or '_'"
                f"; got {name[:40]!r}{'...' if len(name) > 40 else ''}"
            )
        player_id = f"p-{secrets.token_hex(8)}"
        return self.guest(player_id, name, time.time())

    def guest(self, player_id: str, name: str, since: float) -> tuple[str, Identity]:
        """A new token of the guest `player_id` (begun at `since`), with an id of its own,
        expiring by the end of the guest's life at the latest; raises AuthError when that
        is over."""
        left = since + GUEST_MAX_SECONDS - time.time()
        if left < 1:
            raise AuthError(
                f"a guest lives {GUEST_MAX_SECONDS // 86400} days at most, and this one's are "
                "over: log in again (a new guest), or register while a guest to keep a player"
            )
        return self.issue(
            player_id,
            name,
            int(min(self.ttl_seconds, left)),
            guest_token=f"g-{secrets.token_hex(12)}",
            guest_since=since,
        )

    def issue(
        self,
        player_id: str,
        name: str,
        ttl_seconds: int | None = None,
        session: str = "",
        worker: bool = False,
        scopes: tuple[str, ...] | None = None,
        bot: bool = False,
        guest_token: str = "",
        guest_since: float = 0.0,
    ) -> tuple[str, Identity]:
        now = time.time()
        expires = now + (self.ttl_seconds if ttl_seconds is None else ttl_seconds)
        claims = {"sub": player_id, "name": name, "iat": int(now), "exp": int(expires)}
        if session:
            claims["sid"] = session
            claims["jti"] = secrets.token_hex(8)  # two tokens of a session are never equal
        if worker:
            claims["wkr"] = True
        if scopes is not None:
            claims["scp"] = list(scopes)
        if bot:
            claims["bot"] = True
        if guest_token:
            claims["gtk"] = guest_token
            claims["gst"] = int(guest_since)
        token = jwt.encode(claims, self._secret, algorithm=ALGORITHM)
        return token, Identity(
            player_id,
            name,
            float(int(expires)),
            session,
            worker,
            scopes,
            bot,
            guest_token,
            float(int(guest_since)),
        )

    def verify(self, token: str) -> Identity:
        cached = self._cache.get(token)
        if cached is not None:
            if cached.expires_at > time.time():
                return cached
            del self._cache[token]
            raise AuthError("the token has expired; log in again")
        try:
            claims = jwt.decode(
                token, self._secret, algorithms=[ALGORITHM], options={"require": ["sub", "exp"]}
            )
        except jwt.ExpiredSignatureError:
            raise AuthError("the token has expired; log in again") from None
        except jwt.InvalidSignatureError:
            raise AuthError("the token's signature is not valid; log in again") from None
        except jwt.InvalidTokenError:
            raise AuthError(
                "the token is malformed; send 'authorization: Bearer <token>'"
            ) from None
        scopes = claims.get("scp")
        since = claims.get("gst")
        identity = Identity(
            str(claims["sub"]),
            str(claims.get("name", "")),
            float(claims["exp"]),
            str(claims.get("sid", "")),
            claims.get("wkr") is True,
            tuple(str(s) for s in scopes) if isinstance(scopes, list) else None,
            claims.get("bot") is True,
            str(claims.get("gtk", "")),
            float(since) if isinstance(since, int | float) else 0.0,
        )
        if len(self._cache) >= _CACHE_LIMIT:
            self._cache.clear()
        self._cache[token] = identity
        return identity


def bearer_token(metadata: Iterable[tuple[str, str | bytes]] | None) -> str:
    """The token of an `authorization: Bearer <token>` metadata entry."""
    for key, value in metadata or ():
        if key == "authorization":
            text = value.decode() if isinstance(value, bytes) else value
            scheme, _, token = text.partition(" ")
            if scheme.lower() != "bearer" or not token.strip():
                raise AuthError("the authorization metadata must be 'Bearer <token>'")
            return token.strip()
    raise AuthError(
        "no token: log in with AuthService.Login, then send 'authorization: Bearer <token>'"
    )
