"""A guest's token names itself (`gtk`) and when its guest began (`gst`): a guest has one token
that works at a time, and lives GUEST_MAX_SECONDS at most whatever its refreshes."""

from __future__ import annotations

import time

import pytest

from gateway.accounts import Revocations
from gateway.auth import AuthError, TokenIssuer
from wire.players import GUEST_MAX_SECONDS, GUEST_REGISTERED

ISSUER = TokenIssuer("k" * 32, ttl_seconds=24 * 3600)


def test_a_guests_token_names_itself_and_when_its_guest_began() -> None:
    token, identity = ISSUER.login("ann")
    checked = ISSUER.verify(token)
    assert checked == identity
    assert checked.guest_token.startswith("g-")
    assert abs(checked.guest_since - time.time()) < 60
    assert not checked.session  # not an account's


def test_each_of_a_guests_tokens_has_an_id_of_its_own() -> None:
    _, first = ISSUER.login("ann")
    _, next_one = ISSUER.guest(first.player_id, first.name, first.guest_since)
    assert next_one.player_id == first.player_id
    assert next_one.guest_since == first.guest_since
    assert next_one.guest_token != first.guest_token


def test_a_guests_tokens_expire_by_the_end_of_its_life() -> None:
    began = time.time() - GUEST_MAX_SECONDS + 3600
    _, identity = ISSUER.guest("p-0123456789abcdef", "ann", began)
    assert identity.expires_at <= began + GUEST_MAX_SECONDS


def test_a_guest_past_its_life_gets_no_token() -> None:
    with pytest.raises(AuthError, match="30 days"):
        ISSUER.guest("p-0123456789abcdef", "ann", time.time() - GUEST_MAX_SECONDS - 1)


def test_an_ended_guest_token_is_known_with_why() -> None:
    revocations = Revocations(accounts=None, access_ttl=900, poll_seconds=1.0)
    revocations.end("g-1", GUEST_REGISTERED)
    revocations.end("s-1")
    assert revocations.why("g-1") == GUEST_REGISTERED
    assert revocations.ended("g-1")
    assert revocations.why("s-1") is None
    assert revocations.ended("s-1")
