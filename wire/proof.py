"""The gateway's proof on the calls it makes to the services behind it.

A service believes the player identity in a call's metadata (wire.metadata) only when the call
also carries a proof: an HMAC-SHA256, with the platform's internal key, of the method and of
every identity field, and the time it was made. Only the platform's own processes (the
gateway, the lobby, the matchmakers) hold the key, so a process that merely reaches a service's
port (any pod of the cluster, any container on the network) can no longer act or read as any
player, nor make games as the platform.

Why a signed identity rather than mutual TLS: it needs no certificate authority to run, rotate
and mount in every process (one Secret holds one key); it binds the proof to the exact player
and method of each call, not just to "a process with a certificate"; and it works over the
relay links unchanged (the link is proven once, when it opens). It does not encrypt: on a
network that others can read, run the internal traffic over a private network or a mesh with
TLS, as the operations guide says. A proof is good for FRESH_SECONDS either way of the
service's clock (clock skew); within that time a captured proof could be replayed for the same
call only, which the request id makes harmless for moves.
"""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Mapping, Sequence
from typing import Any

import grpc

from wire.api import channel_options
from wire.metadata import NAME_METADATA, PLAYER_METADATA, REQUEST_METADATA, SPONSOR_METADATA

PROOF_METADATA = "x-tabletop-proof"
"""`v1.<milliseconds since the epoch>.<hex HMAC>`."""

FRESH_SECONDS = 300
"""How far from the service's clock a proof's time may be."""

MIN_KEY_BYTES = 16
SIGNED = (PLAYER_METADATA, NAME_METADATA, SPONSOR_METADATA, REQUEST_METADATA)
"""The identity fields a proof covers (absent ones as empty)."""


def _mac(key: str, method: str, issued_ms: int, fields: Mapping[str, str]) -> str:
    text = "\n".join(["v1", str(issued_ms), method, *(fields.get(name, "") for name in SIGNED)])
    return hmac.new(key.encode(), text.encode(), hashlib.sha256).hexdigest()


def prove(
    key: str, method: str, metadata: Sequence[tuple[str, str]], now_ms: int | None = None
) -> tuple[tuple[str, str], ...]:
    """`metadata` (the identity fields of a call of `method`) with its proof added."""
    issued = int(time.time() * 1000) if now_ms is None else now_ms
    fields = dict(metadata)
    return (*metadata, (PROOF_METADATA, f"v1.{issued}.{_mac(key, method, issued, fields)}"))


def proven(
    key: str, method: str, metadata: Mapping[str, str], now_ms: int | None = None
) -> str | None:
    """None when `metadata` carries a good, fresh proof for `method`; else what is wrong."""
    proof = metadata.get(PROOF_METADATA, "")
    if not proof:
        return "no proof from the gateway"
    version, _, rest = proof.partition(".")
    issued_text, _, mac = rest.partition(".")
    if version != "v1" or not issued_text.isdigit() or len(issued_text) > 15:
        return "a malformed proof"
    issued = int(issued_text)
    now = int(time.time() * 1000) if now_ms is None else now_ms
    if abs(now - issued) > FRESH_SECONDS * 1000:
        return "a stale proof"
    if not hmac.compare_digest(mac, _mac(key, method, issued, metadata)):
        return "a forged proof"
    return None


class ProveCalls(grpc.aio.UnaryUnaryClientInterceptor):
    """A channel interceptor for the platform's own callers (the lobby, the matchmakers): every
    unary call carries the proof of what its metadata says (streams: `prove` the metadata)."""

    def __init__(self, key: str) -> None:
        self.key = key

    def _proven(self, details: grpc.aio.ClientCallDetails) -> grpc.aio.ClientCallDetails:
        method = details.method
        path = method.decode() if isinstance(method, bytes) else str(method)
        metadata = [(k, v) for k, v in (details.metadata or ()) if isinstance(v, str)]
        return grpc.aio.ClientCallDetails(
            details.method,
            details.timeout,
            grpc.aio.Metadata(*prove(self.key, path, metadata)),
            details.credentials,
            details.wait_for_ready,
        )

    async def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        return await continuation(self._proven(details), request)


def platform_channel(target: str, service: str, key: str) -> grpc.aio.Channel:
    """A channel from one of the platform's processes to `service` (its full name) at
    `target`: the service's retry policy, and every call proven with `key`."""
    return grpc.aio.insecure_channel(
        target, options=channel_options(service), interceptors=[ProveCalls(key)]
    )
