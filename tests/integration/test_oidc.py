"""Tokens of a deployer's identity provider (OIDC), against a test issuer: its JWKS served over
HTTP on a free port, its tokens signed with RSA keys made here. A good token logs in (an account
made on first use, the same one after); a token of another issuer, for another audience,
expired, or signed with a key the issuer does not publish is refused; a rotated key is fetched."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import AsyncIterator, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import grpc
import jwt
import pytest
import pytest_asyncio
from cryptography.hazmat.primitives.asymmetric import rsa

from gateway.oidc import JWKS_COOLDOWN_SECONDS, Issuer
from tabletop.lobby.v1 import lobby_pb2, lobby_pb2_grpc
from tests.platform import Platform
from tests.timing import eventually
from wire.errors import error_info

pytestmark = pytest.mark.integration

ISSUER = "https://id.example.test"
AUDIENCE = "tabletop"


class Provider:
    """A test identity provider: keys, a JWKS endpoint, and tokens."""

    def __init__(self) -> None:
        self.keys: dict[str, Any] = {}
        self.published: list[str] = []
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                body = json.dumps({"keys": [provider.jwk(kid) for kid in provider.published]})
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(body.encode())

            def log_message(self, *_args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/jwks.json"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def new_key(self, kid: str, publish: bool = True) -> None:
        self.keys[kid] = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        if publish:
            self.published.append(kid)

    def jwk(self, kid: str) -> dict[str, Any]:
        found: dict[str, Any] = json.loads(
            jwt.algorithms.RSAAlgorithm.to_jwk(self.keys[kid].public_key())
        )
        return {**found, "kid": kid, "use": "sig", "alg": "RS256"}

    def token(self, kid: str, **claims: Any) -> str:
        now = int(time.time())
        body = {
            "iss": ISSUER,
            "aud": AUDIENCE,
            "sub": "user-1",
            "iat": now,
            "exp": now + 300,
            "preferred_username": "carol",
            **claims,
        }
        return jwt.encode(body, self.keys[kid], algorithm="RS256", headers={"kid": kid})

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def provider() -> Iterator[Provider]:
    made = Provider()
    made.new_key("k1")
    try:
        yield made
    finally:
        made.close()


@pytest_asyncio.fixture
async def stack(redis_url: str, database_url: str, provider: Provider) -> AsyncIterator[Platform]:
    issuers = [Issuer(ISSUER, AUDIENCE, provider.url)]
    async with Platform(
        redis_url, database_url=database_url, gateway_settings={"oidc_issuers": issuers}
    ) as platform:
        yield platform


async def external_login(platform: Platform, token: str) -> lobby_pb2.LoginResponse:
    async with grpc.aio.insecure_channel(platform.target) as channel:
        reply: lobby_pb2.LoginResponse = await lobby_pb2_grpc.AuthServiceStub(
            channel
        ).ExternalLogin(lobby_pb2.ExternalLoginRequest(token=token))
        return reply


async def refusal(platform: Platform, token: str) -> tuple[str, str]:
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await external_login(platform, token)
    return error_info(refused.value)[0], refused.value.details() or ""


async def test_a_providers_token_logs_in_to_the_same_account_each_time(
    stack: Platform, provider: Provider
) -> None:
    first = await external_login(stack, provider.token("k1"))
    assert first.name == "carol"
    assert first.refresh_token
    assert first.player_id.startswith("a-")
    again = await external_login(stack, provider.token("k1"))
    assert again.player_id == first.player_id
    assert again.session_id != first.session_id
    other = await external_login(stack, provider.token("k1", sub="user-2"))
    assert other.player_id != first.player_id
    assert other.name.startswith("carol-")  # the name was taken: made unique


async def test_tokens_that_do_not_check_out_are_refused(
    stack: Platform, provider: Provider
) -> None:
    provider.new_key("unpublished", publish=False)
    cases = {
        "another issuer": (provider.token("k1", iss="https://evil.test"), "not accepted here"),
        "another audience": (provider.token("k1", aud="someone-else"), "another audience"),
        "expired": (provider.token("k1", exp=int(time.time()) - 3600), "expired"),
        "an unknown key": (provider.token("unpublished"), "does not publish"),
        "a shared secret": (
            jwt.encode(
                {"iss": ISSUER, "aud": AUDIENCE, "sub": "x", "exp": int(time.time()) + 60},
                "a shared secret that anyone could have",
                algorithm="HS256",
                headers={"kid": "k1"},
            ),
            "not valid",
        ),
        "not a token": ("garbage", "not a JWT"),
    }
    for what, (token, words) in cases.items():
        reason, details = await refusal(stack, token)
        assert reason == "UNAUTHENTICATED", what
        assert words in details, (what, details)


async def test_a_rotated_key_is_fetched(stack: Platform, provider: Provider) -> None:
    """A new key is fetched when a token names it (at most every JWKS_COOLDOWN_SECONDS)."""
    await external_login(stack, provider.token("k1"))  # the keys are fetched and kept
    provider.new_key("k2")
    provider.published = ["k2"]  # the provider rotated: k1 retired

    async def accepted() -> lobby_pb2.LoginResponse | None:
        try:
            return await external_login(stack, provider.token("k2"))
        except grpc.aio.AioRpcError:
            return None

    reply = await eventually(accepted, JWKS_COOLDOWN_SECONDS + 5, "the new key fetched", every=1)
    assert reply.name == "carol"


async def test_without_issuers_external_logins_are_refused(
    redis_url: str, database_url: str, provider: Provider
) -> None:
    async with Platform(redis_url, database_url=database_url) as platform:
        reason, details = await refusal(platform, provider.token("k1"))
    assert reason == "ACCOUNTS_DISABLED"
    assert "OIDC_ISSUERS" in details
