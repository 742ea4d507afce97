"""The accounts service's calls (tabletop.accounts.v1.AccountsService): the gateway's account
calls of the public AuthService, the lobby's (an account by username, accounts' usernames) and
the ratings consumers' (when accounts were made), answered from the store
(services/accounts/store.py). Who calls is in each request (the gateway checked the caller's
token); every call carries the proof of the platform's own processes (wire.proof), checked
before it is read."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from google.protobuf.timestamp_pb2 import Timestamp

from runtime.server import Context
from services.accounts.store import (
    ACCOUNTS_PER_ADDRESS_DAY,
    Accounts,
    Caller,
    External,
    Grant,
)
from tabletop.accounts.v1 import accounts_pb2, accounts_pb2_grpc
from tabletop.lobby.v1 import lobby_pb2
from wire.errors import ApiError, abort

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
SERVICE = accounts_pb2.DESCRIPTOR.services_by_name["AccountsService"].full_name


def _timestamp(at: datetime) -> Timestamp:
    stamp = Timestamp()
    stamp.FromSeconds(int(at.timestamp()))
    return stamp


def _ms(at: datetime) -> int:
    """`at` in whole milliseconds since the epoch, rounded down (exact: no float)."""
    return (at - EPOCH) // timedelta(milliseconds=1)


def _grant(grant: Grant) -> accounts_pb2.Grant:
    answer = accounts_pb2.Grant(
        account_id=grant.account_id,
        name=grant.name,
        bot=grant.bot,
        session_id=grant.session,
        refresh_token=grant.refresh_token,
        scopes=grant.scopes or (),
        api_token=grant.scopes is not None,
    )
    if grant.refresh_expires_at is not None:
        answer.refresh_expires_at.CopyFrom(_timestamp(grant.refresh_expires_at))
    return answer


def _caller(request: accounts_pb2.AccountRequest) -> Caller:
    return Caller(request.account_id, request.session_id, request.bot)


def _api_token(row: Mapping[str, Any]) -> lobby_pb2.ApiToken:
    answer = lobby_pb2.ApiToken(
        token_id=row["id"],
        name=row["name"],
        scopes=row["scopes"],
        created_at=_timestamp(row["created_at"]),
        expires_at=_timestamp(row["expires_at"]),
    )
    if row["last_used_at"] is not None:
        answer.last_used_at.CopyFrom(_timestamp(row["last_used_at"]))
    return answer


class AccountsServicer(accounts_pb2_grpc.AccountsServiceServicer):
    def __init__(self, accounts: Accounts, per_address_day: int = ACCOUNTS_PER_ADDRESS_DAY) -> None:
        self.accounts = accounts
        self.per_address_day = per_address_day

    async def Register(
        self, request: accounts_pb2.RegisterAccountRequest, context: Context
    ) -> accounts_pb2.Grant:
        try:
            grant = await self.accounts.register(
                request.username,
                request.password,
                request.client,
                request.guest,
                request.bot,
                request.guest_token,
                self.per_address_day,
            )
        except ApiError as error:
            await abort(context, error)
        return _grant(grant)

    async def Login(
        self, request: accounts_pb2.LoginAccountRequest, context: Context
    ) -> accounts_pb2.Grant:
        try:
            grant = await self.accounts.login(request.username, request.password, request.client)
        except ApiError as error:
            await abort(context, error)
        return _grant(grant)

    async def ExternalLogin(
        self, request: accounts_pb2.ExternalLoginAccountRequest, context: Context
    ) -> accounts_pb2.Grant:
        try:
            who = External(request.issuer, request.subject, request.name)
            grant = await self.accounts.external_login(who, request.client)
        except ApiError as error:
            await abort(context, error)
        return _grant(grant)

    async def Refresh(
        self, request: accounts_pb2.RefreshAccountRequest, context: Context
    ) -> accounts_pb2.Grant:
        try:
            grant = await self.accounts.refresh(request.refresh_token)
        except ApiError as error:
            await abort(context, error)
        return _grant(grant)

    async def TokenLogin(
        self, request: accounts_pb2.TokenLoginAccountRequest, context: Context
    ) -> accounts_pb2.Grant:
        try:
            grant = await self.accounts.token_login(request.api_token)
        except ApiError as error:
            await abort(context, error)
        return _grant(grant)

    async def ReplaceGuestToken(
        self, request: accounts_pb2.ReplaceGuestTokenRequest, context: Context
    ) -> accounts_pb2.ReplaceGuestTokenResponse:
        try:
            replaced = await self.accounts.replace_guest_token(
                request.player_id, request.guest_token
            )
        except ApiError as error:
            await abort(context, error)
        return accounts_pb2.ReplaceGuestTokenResponse(replaced=replaced)

    async def Logout(
        self, request: accounts_pb2.LogoutAccountRequest, context: Context
    ) -> accounts_pb2.SessionsEndedResponse:
        try:
            ended = await self.accounts.logout(_caller(request.account), request.everywhere)
        except ApiError as error:
            await abort(context, error)
        return accounts_pb2.SessionsEndedResponse(sessions_ended=ended)

    async def ListSessions(
        self, request: accounts_pb2.AccountRequest, context: Context
    ) -> lobby_pb2.ListSessionsResponse:
        try:
            rows = await self.accounts.sessions(_caller(request))
        except ApiError as error:
            await abort(context, error)
        return lobby_pb2.ListSessionsResponse(
            sessions=[
                lobby_pb2.SessionInfo(
                    session_id=row["id"],
                    created_at=_timestamp(row["created_at"]),
                    last_used_at=_timestamp(row["last_used_at"]),
                    expires_at=_timestamp(row["expires_at"]),
                    client=row["client"],
                    current=row["id"] == request.session_id,
                )
                for row in rows
            ]
        )

    async def ChangePassword(
        self, request: accounts_pb2.ChangePasswordAccountRequest, context: Context
    ) -> accounts_pb2.SessionsEndedResponse:
        try:
            ended = await self.accounts.change_password(
                _caller(request.account),
                request.old_password,
                request.new_password,
                request.client,
            )
        except ApiError as error:
            await abort(context, error)
        return accounts_pb2.SessionsEndedResponse(sessions_ended=ended)

    async def CreateApiToken(
        self, request: accounts_pb2.CreateApiTokenAccountRequest, context: Context
    ) -> lobby_pb2.ApiToken:
        try:
            secret, record = await self.accounts.create_token(
                _caller(request.account),
                request.name,
                list(request.scopes),
                request.expires_in_days,
            )
        except ApiError as error:
            await abort(context, error)
        answer = _api_token(record)
        answer.token = secret
        return answer

    async def ListApiTokens(
        self, request: accounts_pb2.AccountRequest, context: Context
    ) -> lobby_pb2.ListApiTokensResponse:
        try:
            rows = await self.accounts.tokens(_caller(request))
        except ApiError as error:
            await abort(context, error)
        return lobby_pb2.ListApiTokensResponse(tokens=[_api_token(row) for row in rows])

    async def RevokeApiToken(
        self, request: accounts_pb2.RevokeApiTokenAccountRequest, context: Context
    ) -> lobby_pb2.RevokeApiTokenResponse:
        try:
            await self.accounts.revoke_token(_caller(request.account), request.token_id)
        except ApiError as error:
            await abort(context, error)
        return lobby_pb2.RevokeApiTokenResponse()

    async def Ended(
        self, request: accounts_pb2.EndedRequest, context: Context
    ) -> accounts_pb2.EndedResponse:
        try:
            endings = await self.accounts.ended(request.seconds, request.guest_seconds)
        except ApiError as error:
            await abort(context, error)
        answer = accounts_pb2.EndedResponse()
        for ending in endings:
            stamp = Timestamp()
            stamp.FromDatetime(ending.at)
            answer.endings.add(id=ending.id, at=stamp, why=ending.why)
        return answer

    async def FindAccount(
        self, request: accounts_pb2.FindAccountRequest, context: Context
    ) -> accounts_pb2.FindAccountResponse:
        try:
            found = await self.accounts.named(request.username)
        except ApiError as error:
            await abort(context, error)
        if found is None:
            return accounts_pb2.FindAccountResponse()
        return accounts_pb2.FindAccountResponse(account_id=found[0], username=found[1])

    async def Usernames(
        self, request: accounts_pb2.UsernamesRequest, context: Context
    ) -> accounts_pb2.UsernamesResponse:
        try:
            usernames = await self.accounts.usernames(list(request.account_ids))
        except ApiError as error:
            await abort(context, error)
        return accounts_pb2.UsernamesResponse(usernames=usernames)

    async def AccountsMade(
        self, request: accounts_pb2.AccountsMadeRequest, context: Context
    ) -> accounts_pb2.AccountsMadeResponse:
        try:
            made = await self.accounts.made(list(request.account_ids))
        except ApiError as error:
            await abort(context, error)
        return accounts_pb2.AccountsMadeResponse(
            made_ms={account: _ms(at) for account, at in made.items()}
        )
