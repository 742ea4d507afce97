"""The wire contract holds together: one set of error reasons in the proto and in the code, every
engine refusal mapped to one of them, every reason to its status code; the gateway's proof
covers what it says it does."""

from __future__ import annotations

import hashlib
import hmac

import grpc

from engines import contract
from tabletop.common.v1 import common_pb2
from wire.errors import CODES, ENGINE_REASONS, ApiError, Reason
from wire.metadata import GUEST_METADATA, NAME_METADATA, PLAYER_METADATA, REQUEST_METADATA
from wire.proof import check, proof


def _subclasses(cls: type[contract.GameError]) -> set[type[contract.GameError]]:
    found: set[type[contract.GameError]] = set(cls.__subclasses__())
    for sub in list(found):
        found |= _subclasses(sub)
    return found


def test_the_reasons_are_the_protos_error_reasons() -> None:
    """ErrorInfo.reason carries an ErrorReason value's name without its ERROR_REASON_ prefix: a
    reason added on one side only fails here."""
    in_proto = {
        value.name.removeprefix("ERROR_REASON_")
        for value in common_pb2.ErrorReason.DESCRIPTOR.values
        if value.number != 0
    }
    assert {str(reason) for reason in Reason} == in_proto


def test_every_reason_has_its_status_code() -> None:
    assert set(CODES) == set(Reason)
    assert CODES[Reason.STALE_VERSION] == grpc.StatusCode.ABORTED
    for reason in Reason:
        error = ApiError(reason, "why")
        assert error.to_status().code == CODES[reason]


def test_every_engine_refusal_maps_to_a_reason() -> None:
    reasons = {cls.reason for cls in _subclasses(contract.GameError)}
    assert reasons == set(ENGINE_REASONS)
    assert set(ENGINE_REASONS.values()) <= set(Reason)
    refusal = ApiError.from_game_error(contract.InvalidSeat("seat 9 does not exist"))
    assert (refusal.reason, refusal.message) == (Reason.NOT_YOUR_SEAT, "seat 9 does not exist")


def test_the_bound_proof_covers_the_guest_flag_and_leaves_other_calls_as_before() -> None:
    key, method, body, now = "k" * 32, "/tabletop.solo.v1.SoloService/Play", b"move", 1_000_000
    fields = {PLAYER_METADATA: "p-1", NAME_METADATA: "Ann", REQUEST_METADATA: "r-1"}
    # as the release before this flag made it (what its services check)
    text = "\n".join(
        ["v2", str(now), method, hashlib.sha256(body).hexdigest(), "p-1", "Ann", "", "r-1"]
    )
    before = f"v2.{now}.{hmac.digest(key.encode(), text.encode(), 'sha256').hex()}"
    assert proof(key, method, fields, body, now) == before
    as_guest = {**fields, GUEST_METADATA: "1"}
    given = proof(key, method, as_guest, body, now)
    assert check(key, method, given, as_guest, body, now) is None
    assert check(key, method, given, fields, body, now) is not None  # the flag stripped
    assert check(key, method, before, as_guest, body, now) is not None  # or added
