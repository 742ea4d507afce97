"""The gateway's proof on the calls it makes to the services behind it.

A service believes the player identity in a call's metadata (wire.metadata) only when the call
also carries a proof: an HMAC-SHA256, with the platform's internal key, of the method, of every
identity field, of the SHA-256 of the request message's bytes (which name the game and the
seat) and of the time it was made. Only the platform's own processes (the gateway, the lobby,
the matchmakers) hold the key, so a process that merely reaches a service's port (any pod of
the cluster, any container on the network) can no longer act or read as any player, nor make
games as the platform; and a proof captured on the way serves no other request (another game,
another seat, another move). A call that names an identity field twice is refused: which of
the two the proof covered would be a guess.

Why a signed identity rather than mutual TLS: it needs no certificate authority to run, rotate
and mount in every process (one Secret holds one key); it binds the proof to the exact player
and method of each call, not just to "a process with a certificate"; and it works over the
relay links too (the link is proven as it opens, and each call it carries has a proof of its
own, `RelayRequest.proof`; a link takes calls only within its opening proof's window). It does
not encrypt: on a network that others can read, run the internal traffic over a private network
or a mesh with TLS, as the operations guide says. A proof is good for FRESH_SECONDS either way
of the service's clock (clock skew); within that time a captured proof could be replayed for
the very same request only, which the request id makes harmless for moves.

Upgrades: a call carries the bound proof (`x-tabletop-bound-proof`) and, for one release, the
unbound one that older services check (`x-tabletop-proof`), so new gateways work with old
services. New services take a call with only an unbound proof (an old gateway's, lobby's or
matchmaker's) only while ACCEPT_UNBOUND_PROOFS is set: set it for the rollout, then remove it
(docs/operations.md, "Upgrading with no lost games").
"""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Mapping, Sequence
from typing import Any

import grpc

from wire.api import channel_options
from wire.metadata import (
    GUEST_METADATA,
    NAME_METADATA,
    PLAYER_METADATA,
    PRIVATE_METADATA,
    RATED_METADATA,
    REQUEST_METADATA,
    SPONSOR_METADATA,
)

PROOF_METADATA = "x-tabletop-proof"
"""`v1.<milliseconds since the epoch>.<hex HMAC>`: the method and the identity fields only, as
the platform's processes made it before proofs covered the request (what an older service
checks: it is sent along for one release, so that a rolling upgrade fails no call)."""
BOUND_PROOF_METADATA = "x-tabletop-bound-proof"
"""`v2.<milliseconds since the epoch>.<hex HMAC>`: the same, and the request's digest."""

FRESH_SECONDS = 300
"""How far from the service's clock a proof's time may be."""

MIN_KEY_BYTES = 16
SIGNED = (PLAYER_METADATA, NAME_METADATA, SPONSOR_METADATA, REQUEST_METADATA)
"""The identity fields a proof covers (absent ones as empty)."""
SIGNED_IF_SET = (GUEST_METADATA, RATED_METADATA, PRIVATE_METADATA)
"""Identity fields a bound proof covers when they are set (`name=value`): added later, they
leave the proofs of calls without them as they were, so a service of the release before
checks those alike (upgrade the services before the gateways)."""
GUARDED = frozenset((*SIGNED, *SIGNED_IF_SET, PROOF_METADATA, BOUND_PROOF_METADATA))
UNBOUND, BOUND = "v1", "v2"


def _mac(
    key: str, version: str, method: str, issued_ms: int, fields: Mapping[str, str], body: bytes
) -> str:
    get = fields.get
    lines = [version, str(issued_ms), method]
    if version == BOUND:
        lines.append(hashlib.sha256(body).hexdigest())
    lines.extend([get(name, "") for name in SIGNED])
    if version == BOUND:
        lines.extend([f"{name}={value}" for name in SIGNED_IF_SET if (value := get(name))])
    return hmac.digest(key.encode(), "\n".join(lines).encode(), "sha256").hex()


def proof(
    key: str,
    method: str,
    fields: Mapping[str, str],
    body: bytes,
    now_ms: int | None = None,
    version: str = BOUND,
) -> str:
    """The proof of a call of `method` by `fields` (identity fields) with request `body`."""
    issued = int(time.time() * 1000) if now_ms is None else now_ms
    return f"{version}.{issued}.{_mac(key, version, method, issued, fields, body)}"


def prove(
    key: str,
    method: str,
    metadata: Sequence[tuple[str, str]],
    now_ms: int | None = None,
    body: bytes = b"",
) -> tuple[tuple[str, str], ...]:
    """`metadata` (the identity fields of a call of `method` with request `body`) with its
    proofs added: the bound one, and the unbound one an older service checks."""
    fields = dict(metadata)
    return (
        *metadata,
        (BOUND_PROOF_METADATA, proof(key, method, fields, body, now_ms)),
        (PROOF_METADATA, proof(key, method, fields, body, now_ms, UNBOUND)),
    )


def issued_at(given: str) -> int | None:
    """The time (ms) a proof says it was made; None for a malformed one."""
    version, _, rest = given.partition(".")
    issued_text, _, _mac_text = rest.partition(".")
    if version not in (UNBOUND, BOUND) or not issued_text.isdigit() or len(issued_text) > 15:
        return None
    return int(issued_text)


def check(
    key: str,
    method: str,
    given: str,
    fields: Mapping[str, str],
    body: bytes,
    now_ms: int | None = None,
    accept_unbound: bool = False,
) -> str | None:
    """None when `given` is a good, fresh proof of this call; else what is wrong. An unbound
    proof (v1: it does not cover the request) is good only with `accept_unbound`: while older
    gateways still run, during an upgrade (ACCEPT_UNBOUND_PROOFS)."""
    if not given:
        return "no proof from the gateway"
    issued = issued_at(given)
    if issued is None:
        return "a malformed proof"
    version = given.partition(".")[0]
    if version == UNBOUND and not accept_unbound:
        return "a proof that does not cover the request (an older gateway?)"
    now = int(time.time() * 1000) if now_ms is None else now_ms
    if abs(now - issued) > FRESH_SECONDS * 1000:
        return "a stale proof"
    made = _mac(key, version, method, issued, fields, body)
    if not hmac.compare_digest(given.rsplit(".", 1)[1], made):
        return "a forged proof, or one made for another request"
    return None


def given_proof(metadata: Mapping[str, str]) -> str:
    """The proof a call's metadata carries: the bound one, else the unbound one."""
    return metadata.get(BOUND_PROOF_METADATA) or metadata.get(PROOF_METADATA, "")


def proven(
    key: str,
    method: str,
    metadata: Mapping[str, str],
    now_ms: int | None = None,
    body: bytes = b"",
    accept_unbound: bool = False,
) -> str | None:
    """None when `metadata` carries a good, fresh proof for a call of `method` with request
    `body`; else what is wrong."""
    return check(key, method, given_proof(metadata), metadata, body, now_ms, accept_unbound)


def doubled(metadata: Sequence[tuple[str, Any]]) -> str | None:
    """An identity field (or the proof) that the metadata carries more than once."""
    seen = set()
    for name, _value in metadata:
        if name in GUARDED:
            if name in seen:
                return name
            seen.add(name)
    return None


class ProveCalls(grpc.aio.UnaryUnaryClientInterceptor):
    """A channel interceptor for the platform's own callers (the lobby, the matchmakers): every
    unary call carries the proof of what its metadata says (streams: `prove` the metadata)."""

    def __init__(self, key: str) -> None:
        self.key = key

    def _proven(
        self, details: grpc.aio.ClientCallDetails, body: bytes
    ) -> grpc.aio.ClientCallDetails:
        method = details.method
        path = method.decode() if isinstance(method, bytes) else str(method)
        metadata = [(k, v) for k, v in (details.metadata or ()) if isinstance(v, str)]
        return grpc.aio.ClientCallDetails(
            details.method,
            details.timeout,
            grpc.aio.Metadata(*prove(self.key, path, metadata, body=body)),
            details.credentials,
            details.wait_for_ready,
        )

    async def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        body = request if isinstance(request, bytes) else request.SerializeToString()
        return await continuation(self._proven(details, body), request)


def platform_channel(target: str, service: str, key: str) -> grpc.aio.Channel:
    """A channel from one of the platform's processes to `service` (its full name) at
    `target`: the service's retry policy, and every call proven with `key`."""
    return grpc.aio.insecure_channel(
        target, options=channel_options(service), interceptors=[ProveCalls(key)]
    )
