"""Tokens from the deployer's own identity provider (OpenID Connect): `AuthService.ExternalLogin`
exchanges one for a session of the account it maps to (made on its first use), so that the
calls after it carry the platform's own short-lived tokens and never wait on the provider.

Each configured issuer names its audience and its JWKS address (OIDC_ISSUERS). A token is
accepted when its issuer is configured, its signature checks against a key of that issuer's
JWKS (fetched, cached for `JWKS_CACHE_SECONDS`, and fetched again when a token names a key not
seen yet, at most every `JWKS_COOLDOWN_SECONDS`: the provider rotated its keys), its audience
is the configured one, and it has not expired. Only asymmetric algorithms (RS256, ES256...):
a shared secret could be forged by anyone who has it.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

import jwt

from wire.errors import ApiError

ALGORITHMS = ["RS256", "RS384", "RS512", "ES256", "ES384", "PS256"]
JWKS_CACHE_SECONDS = 300
JWKS_FETCH_SECONDS = 5.0
JWKS_COOLDOWN_SECONDS = 5.0
"""A token naming a key not seen fetches the JWKS again at most this often per issuer: made-up
key ids cannot turn the gateway against the provider."""
LEEWAY_SECONDS = 30
"""Clock skew allowed between the provider and the gateway (expiry, not-before)."""


@dataclass(frozen=True)
class Issuer:
    issuer: str
    audience: str
    jwks_url: str


@dataclass(frozen=True)
class External:
    """Who a provider's token says the caller is."""

    issuer: str
    subject: str
    name: str
    """A name to start from (preferred_username, else name, else email's local part)."""


def issuers_from_json(text: str) -> list[Issuer]:
    """OIDC_ISSUERS: a JSON list of {"issuer", "audience", "jwks_url"}."""
    if not text.strip():
        return []
    try:
        found = [Issuer(e["issuer"], e["audience"], e["jwks_url"]) for e in json.loads(text)]
    except (ValueError, TypeError, KeyError) as error:
        raise ValueError(
            'OIDC_ISSUERS is a JSON list of {"issuer": ..., "audience": ..., "jwks_url": ...}'
            f": {error}"
        ) from None
    return found


class Providers:
    """The configured issuers and their keys."""

    def __init__(self, issuers: list[Issuer]) -> None:
        self.issuers = {issuer.issuer: issuer for issuer in issuers}
        self._keys = {
            issuer.issuer: jwt.PyJWKClient(
                issuer.jwks_url,
                cache_keys=True,
                lifespan=JWKS_CACHE_SECONDS,
                timeout=JWKS_FETCH_SECONDS,
                cooldown_duration=JWKS_COOLDOWN_SECONDS,
            )
            for issuer in issuers
        }
        self._fetching = asyncio.Semaphore(4)

    async def verify(self, token: str) -> External:
        """The caller a provider's token names; UNAUTHENTICATED saying what is wrong."""
        try:
            unverified: dict[str, Any] = jwt.decode(token, options={"verify_signature": False})
        except jwt.InvalidTokenError:
            raise ApiError("UNAUTHENTICATED", "the token is not a JWT") from None
        named = str(unverified.get("iss", ""))
        issuer = self.issuers.get(named)
        if issuer is None:
            raise ApiError(
                "UNAUTHENTICATED", f"tokens of the issuer {named[:80]!r} are not accepted here"
            )
        try:
            async with self._fetching:  # the key may need a fetch (blocking): off the loop
                key = await asyncio.to_thread(
                    self._keys[issuer.issuer].get_signing_key_from_jwt, token
                )
        except jwt.PyJWKClientConnectionError:
            raise ApiError(
                "UNAVAILABLE", "the identity provider's keys cannot be fetched now; retry"
            ) from None
        except (jwt.PyJWKClientError, jwt.InvalidTokenError):
            raise ApiError(
                "UNAUTHENTICATED", "the token is signed with a key its issuer does not publish"
            ) from None
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key.key,
                algorithms=ALGORITHMS,
                audience=issuer.audience,
                issuer=issuer.issuer,
                leeway=LEEWAY_SECONDS,
                options={"require": ["exp", "iss", "aud", "sub"]},
            )
        except jwt.ExpiredSignatureError:
            raise ApiError("UNAUTHENTICATED", "the token has expired") from None
        except jwt.InvalidAudienceError:
            raise ApiError("UNAUTHENTICATED", "the token is for another audience") from None
        except jwt.InvalidTokenError as error:
            raise ApiError("UNAUTHENTICATED", f"the token is not valid: {error}") from None
        email = str(claims.get("email", ""))
        name = str(
            claims.get("preferred_username") or claims.get("name") or email.split("@")[0] or ""
        )
        return External(issuer.issuer, str(claims["sub"]), name)
