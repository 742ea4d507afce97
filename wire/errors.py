"""Errors mapped once, at the edge, to gRPC status codes with a stable reason.

Every error carries a google.rpc.ErrorInfo (domain "tabletop", reason = a `Reason`, which is the
name of a tabletop.common.v1.ErrorReason value without its ERROR_REASON_ prefix: a test keeps
the two the same) in the standard `grpc-status-details-bin` trailer, and a message for people
saying what was wrong and what is allowed.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import NoReturn, Protocol

import grpc
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

DOMAIN = "tabletop"


class Reason(enum.StrEnum):
    """Every reason an error of the platform can carry."""

    MALFORMED_MOVE = "MALFORMED_MOVE"
    ILLEGAL_MOVE = "ILLEGAL_MOVE"
    NOT_YOUR_TURN = "NOT_YOUR_TURN"
    GAME_OVER = "GAME_OVER"
    STALE_VERSION = "STALE_VERSION"
    GAME_NOT_FOUND = "GAME_NOT_FOUND"
    UNAUTHENTICATED = "UNAUTHENTICATED"
    NOT_YOUR_SEAT = "NOT_YOUR_SEAT"
    RATE_LIMITED = "RATE_LIMITED"
    INVALID_ARGUMENT = "INVALID_ARGUMENT"
    INVALID_OPTIONS = "INVALID_OPTIONS"
    UNAVAILABLE = "UNAVAILABLE"
    TICKET_LIVE = "TICKET_LIVE"
    TICKET_NOT_FOUND = "TICKET_NOT_FOUND"
    REQUEST_ID_REUSED = "REQUEST_ID_REUSED"
    TOO_SLOW = "TOO_SLOW"
    LIMIT_REACHED = "LIMIT_REACHED"
    TIME_UP = "TIME_UP"
    USERNAME_TAKEN = "USERNAME_TAKEN"
    ACCOUNTS_DISABLED = "ACCOUNTS_DISABLED"
    NOT_PERMITTED = "NOT_PERMITTED"
    TOKEN_NOT_FOUND = "TOKEN_NOT_FOUND"
    NOT_YOUR_GAME = "NOT_YOUR_GAME"
    PEOPLE_SEATED = "PEOPLE_SEATED"
    NO_TIME_LEFT = "NO_TIME_LEFT"
    ALREADY_PLAYED = "ALREADY_PLAYED"
    CHALLENGE_NOT_FOUND = "CHALLENGE_NOT_FOUND"
    CHALLENGE_CLOSED = "CHALLENGE_CLOSED"
    TABLE_FULL = "TABLE_FULL"
    CHALLENGES_REFUSED = "CHALLENGES_REFUSED"
    PLAYER_NOT_FOUND = "PLAYER_NOT_FOUND"
    FOLLOWS_REFUSED = "FOLLOWS_REFUSED"


CODES: dict[str, grpc.StatusCode] = {
    Reason.MALFORMED_MOVE: grpc.StatusCode.INVALID_ARGUMENT,
    Reason.ILLEGAL_MOVE: grpc.StatusCode.INVALID_ARGUMENT,
    Reason.INVALID_ARGUMENT: grpc.StatusCode.INVALID_ARGUMENT,
    Reason.INVALID_OPTIONS: grpc.StatusCode.INVALID_ARGUMENT,
    Reason.REQUEST_ID_REUSED: grpc.StatusCode.INVALID_ARGUMENT,
    Reason.NOT_YOUR_TURN: grpc.StatusCode.FAILED_PRECONDITION,
    Reason.GAME_OVER: grpc.StatusCode.FAILED_PRECONDITION,
    Reason.TICKET_LIVE: grpc.StatusCode.FAILED_PRECONDITION,
    Reason.TIME_UP: grpc.StatusCode.FAILED_PRECONDITION,
    Reason.ACCOUNTS_DISABLED: grpc.StatusCode.FAILED_PRECONDITION,
    Reason.PEOPLE_SEATED: grpc.StatusCode.FAILED_PRECONDITION,
    Reason.NO_TIME_LEFT: grpc.StatusCode.FAILED_PRECONDITION,
    Reason.CHALLENGE_CLOSED: grpc.StatusCode.FAILED_PRECONDITION,
    Reason.TABLE_FULL: grpc.StatusCode.FAILED_PRECONDITION,
    Reason.CHALLENGES_REFUSED: grpc.StatusCode.FAILED_PRECONDITION,
    Reason.FOLLOWS_REFUSED: grpc.StatusCode.FAILED_PRECONDITION,
    Reason.USERNAME_TAKEN: grpc.StatusCode.ALREADY_EXISTS,
    Reason.ALREADY_PLAYED: grpc.StatusCode.ALREADY_EXISTS,
    Reason.STALE_VERSION: grpc.StatusCode.ABORTED,
    Reason.GAME_NOT_FOUND: grpc.StatusCode.NOT_FOUND,
    Reason.TICKET_NOT_FOUND: grpc.StatusCode.NOT_FOUND,
    Reason.TOKEN_NOT_FOUND: grpc.StatusCode.NOT_FOUND,
    Reason.CHALLENGE_NOT_FOUND: grpc.StatusCode.NOT_FOUND,
    Reason.PLAYER_NOT_FOUND: grpc.StatusCode.NOT_FOUND,
    Reason.UNAUTHENTICATED: grpc.StatusCode.UNAUTHENTICATED,
    Reason.NOT_YOUR_SEAT: grpc.StatusCode.PERMISSION_DENIED,
    Reason.NOT_PERMITTED: grpc.StatusCode.PERMISSION_DENIED,
    Reason.NOT_YOUR_GAME: grpc.StatusCode.PERMISSION_DENIED,
    Reason.RATE_LIMITED: grpc.StatusCode.RESOURCE_EXHAUSTED,
    Reason.TOO_SLOW: grpc.StatusCode.RESOURCE_EXHAUSTED,
    Reason.LIMIT_REACHED: grpc.StatusCode.RESOURCE_EXHAUSTED,
    Reason.UNAVAILABLE: grpc.StatusCode.UNAVAILABLE,
}
"""The gRPC status code of each reason."""

ENGINE_REASONS: dict[str, Reason] = {
    "MALFORMED_MOVE": Reason.MALFORMED_MOVE,
    "ILLEGAL_MOVE": Reason.ILLEGAL_MOVE,
    "NOT_YOUR_TURN": Reason.NOT_YOUR_TURN,
    "GAME_OVER": Reason.GAME_OVER,
    "INVALID_OPTIONS": Reason.INVALID_OPTIONS,
    "INVALID_SEAT": Reason.NOT_YOUR_SEAT,
    "INVALID_SETUP": Reason.INVALID_ARGUMENT,
}
"""The reason an engine's refusal (engines.contract.GameError.reason) is answered with."""


class DomainError(Protocol):
    """What the edge reads of a refusal from an engine (engines.contract.GameError)."""

    @property
    def reason(self) -> str: ...

    @property
    def message(self) -> str: ...


class ApiError(Exception):
    """An error to answer a call with."""

    def __init__(self, reason: str, message: str, **metadata: str) -> None:
        super().__init__(message)
        if reason not in CODES:
            raise ValueError(f"unknown error reason {reason!r}")
        self.reason = Reason(reason)
        self.message = message
        self.metadata = metadata

    @property
    def code(self) -> grpc.StatusCode:
        return CODES[self.reason]

    @staticmethod
    def from_game_error(error: DomainError, **metadata: str) -> ApiError:
        """The answer to an engine's refusal (an engines.contract.GameError)."""
        return ApiError(ENGINE_REASONS[error.reason], error.message, **metadata)

    @staticmethod
    def of_call(error: grpc.aio.AioRpcError | grpc.RpcError) -> ApiError:
        """A refusal from a service this one called, to answer with as it came (its reason,
        message and metadata); a failure without a tabletop reason answers UNAVAILABLE."""
        reason, metadata = error_info(error)
        details = error.details() if isinstance(error, grpc.aio.AioRpcError) else str(error)
        if reason in CODES:
            return ApiError(reason, details or reason, **metadata)
        return ApiError("UNAVAILABLE", f"a service behind this one failed ({details}); retry")

    def to_status(self) -> grpc.Status:
        info = error_details_pb2.ErrorInfo(
            reason=str(self.reason), domain=DOMAIN, metadata=self.metadata
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
