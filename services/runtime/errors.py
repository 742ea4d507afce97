"""Errors mapped once, at the edge, to gRPC status codes with a stable reason.

Every error carries a google.rpc.ErrorInfo (domain "tabletop", reason = the name of a
tabletop.common.v1.ErrorReason value) in the standard `grpc-status-details-bin` trailer, and a
message for people saying what was wrong and what is allowed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NoReturn

import grpc
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

from engines import contract

DOMAIN = "tabletop"

# reason -> gRPC status code.
CODES: dict[str, grpc.StatusCode] = {
    "MALFORMED_MOVE": grpc.StatusCode.INVALID_ARGUMENT,
    "ILLEGAL_MOVE": grpc.StatusCode.INVALID_ARGUMENT,
    "INVALID_ARGUMENT": grpc.StatusCode.INVALID_ARGUMENT,
    "INVALID_OPTIONS": grpc.StatusCode.INVALID_ARGUMENT,
    "NOT_YOUR_TURN": grpc.StatusCode.FAILED_PRECONDITION,
    "GAME_OVER": grpc.StatusCode.FAILED_PRECONDITION,
    "STALE_VERSION": grpc.StatusCode.ABORTED,
    "GAME_NOT_FOUND": grpc.StatusCode.NOT_FOUND,
    "UNAUTHENTICATED": grpc.StatusCode.UNAUTHENTICATED,
    "NOT_YOUR_SEAT": grpc.StatusCode.PERMISSION_DENIED,
    "RATE_LIMITED": grpc.StatusCode.RESOURCE_EXHAUSTED,
    "UNAVAILABLE": grpc.StatusCode.UNAVAILABLE,
    "TICKET_LIVE": grpc.StatusCode.FAILED_PRECONDITION,
    "TICKET_NOT_FOUND": grpc.StatusCode.NOT_FOUND,
    "REQUEST_ID_REUSED": grpc.StatusCode.INVALID_ARGUMENT,
}

# Engine errors whose reason is reported under a more general API reason.
_ENGINE_REASONS = {"INVALID_SEAT": "NOT_YOUR_SEAT", "INVALID_SETUP": "INVALID_ARGUMENT"}


class ApiError(Exception):
    """An error to answer a call with."""

    def __init__(self, reason: str, message: str, **metadata: str) -> None:
        super().__init__(message)
        if reason not in CODES:
            raise ValueError(f"unknown error reason {reason!r}")
        self.reason = reason
        self.message = message
        self.metadata = metadata

    @property
    def code(self) -> grpc.StatusCode:
        return CODES[self.reason]

    @staticmethod
    def from_game_error(error: contract.GameError, **metadata: str) -> ApiError:
        reason = _ENGINE_REASONS.get(error.reason, error.reason)
        return ApiError(reason, error.message, **metadata)

    def to_status(self) -> grpc.Status:
        info = error_details_pb2.ErrorInfo(
            reason=self.reason, domain=DOMAIN, metadata=self.metadata
        )
        detail = any_pb2.Any()
        detail.Pack(info)
        status = status_pb2.Status(code=self.code.value[0], message=self.message, details=[detail])
        result: grpc.Status = rpc_status.to_status(status)
        return result


async def abort(context: grpc.aio.ServicerContext, error: ApiError) -> NoReturn:  # type: ignore[type-arg]
    status = error.to_status()
    await context.abort(status.code, status.details, status.trailing_metadata)
    raise AssertionError("unreachable")  # context.abort raises


def error_info(error: grpc.aio.AioRpcError | grpc.RpcError) -> tuple[str, Mapping[str, str]]:
    """The reason and metadata of an error a tabletop server sent (for clients and tests)."""
    status = rpc_status.from_call(error)
    if status is not None:
        for detail in status.details:
            info = error_details_pb2.ErrorInfo()
            if detail.Unpack(info):
                return info.reason, dict(info.metadata)
    return "", {}
