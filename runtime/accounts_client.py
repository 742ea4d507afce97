"""A client of the accounts service (services/accounts, which holds the accounts' table) for the
platform's other domains, reached over the platform's proven internal link (wire.proof) as the
gateway reaches it. The lobby asks it for an account by username, and for the usernames of the
players it answers about; the ratings consumers ask it when accounts were made (the deal of the
day's table). Neither reads the accounts' table itself."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

import grpc
from google.protobuf.message import Message

from tabletop.accounts.v1 import accounts_pb2, accounts_pb2_grpc
from wire.errors import ApiError
from wire.proof import platform_channel

log = logging.getLogger("tabletop.accounts_client")
T = TypeVar("T", bound=Message)

ACCOUNTS_SERVICE = accounts_pb2.DESCRIPTOR.services_by_name["AccountsService"].full_name
CALL_SECONDS = 10.0
"""How long a look-up may take at the accounts service."""


class AccountsClient:
    """The accounts service at `target`, every call proven with `internal_key`. Its look-ups
    only read: a call the service did not take is retried (the channel's policy)."""

    def __init__(self, target: str, internal_key: str) -> None:
        self.channel = platform_channel(target, ACCOUNTS_SERVICE, internal_key)
        self.stub = accounts_pb2_grpc.AccountsServiceStub(self.channel)

    async def close(self) -> None:
        await self.channel.close()

    @staticmethod
    async def _ask(call: Callable[..., Awaitable[T]], request: Message) -> T:
        """A call of the accounts service; its refusal raised as the ApiError it sent (the
        service out of reach: UNAVAILABLE)."""
        try:
            return await call(request, timeout=CALL_SECONDS)
        except grpc.aio.AioRpcError as error:
            if error.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
                log.warning("the accounts service failed", extra={"error": error.details()})
            raise ApiError.of_call(error) from None

    async def named(self, username: str) -> tuple[str, str] | None:
        """The id and username of the account named `username` (whatever its case), or None."""
        found = await self._ask(
            self.stub.FindAccount, accounts_pb2.FindAccountRequest(username=username)
        )
        return (found.account_id, found.username) if found.account_id else None

    async def usernames(self, account_ids: Sequence[str]) -> dict[str, str]:
        """The usernames of those of `account_ids` that are accounts (one call for them all)."""
        if not account_ids:
            return {}
        answer = await self._ask(
            self.stub.Usernames, accounts_pb2.UsernamesRequest(account_ids=list(account_ids))
        )
        return dict(answer.usernames)

    async def made(self, account_ids: Sequence[str]) -> dict[str, int]:
        """When those of `account_ids` that are accounts were made (ms since the epoch, UTC,
        rounded down; one call for them all)."""
        if not account_ids:
            return {}
        answer = await self._ask(
            self.stub.AccountsMade, accounts_pb2.AccountsMadeRequest(account_ids=list(account_ids))
        )
        return dict(answer.made_ms)


def accounts_failed(error: BaseException) -> bool:
    """Whether `error` is the accounts service out of reach (or its database away) for a while,
    a failure to wait out."""
    return isinstance(error, ApiError) and error.reason == "UNAVAILABLE"
