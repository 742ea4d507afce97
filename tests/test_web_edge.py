"""The web edge's errors (gateway/web.py): every reason the platform has reads, to a Connect or
gRPC-Web client, as to a gRPC one: the status code (Connect's name of it), the message, and the
google.rpc.ErrorInfo with the reason and its metadata among the details."""

from __future__ import annotations

from connectrpc.errors import ConnectError
from google.rpc import error_details_pb2

from gateway.web import refused
from wire.errors import CODES, ApiError, Reason


def test_every_reason_keeps_its_code_message_reason_and_metadata() -> None:
    for reason in Reason:
        error = refused(ApiError(reason.value, f"why {reason.value}", limit="3", when="now"))
        assert isinstance(error, ConnectError)
        grpc_name = CODES[reason].name.lower()
        assert error.code.value == grpc_name.replace("cancelled", "canceled"), reason
        assert error.message == f"why {reason.value}"
        (detail,) = error.details
        assert detail.type_name == "google.rpc.ErrorInfo"
        info = error_details_pb2.ErrorInfo.FromString(detail.message_bytes)
        assert (info.reason, info.domain) == (reason.value, "tabletop")
        assert dict(info.metadata) == {"limit": "3", "when": "now"}
