"""A player's connection to the gateway: log in once, then call any game with the token."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc

import games
from client.link import MAX_CALLS, SessionLink
from tabletop.lobby.v1 import lobby_pb2, lobby_pb2_grpc
from wire.api import NO_BDP_PROBE, api
from wire.metadata import BOT_SEAT_METADATA


@dataclass(frozen=True)
class Tls:
    """How to reach a gateway whose port speaks TLS. `ca_file`: the certificates (PEM) to trust,
    for a private CA or a self-signed certificate (empty: the system's roots); `server_name`:
    the name the certificate must carry, when it is not the address called (in a cluster, bot
    workers call `gateway:50050` and the certificate names the public host)."""

    ca_file: str = ""
    server_name: str = ""

    def credentials(self) -> grpc.ChannelCredentials:
        roots = None
        if self.ca_file:
            try:
                roots = Path(self.ca_file).read_bytes()
            except OSError as error:
                raise SystemExit(f"cannot read the CA file: {error}") from None
        return grpc.ssl_channel_credentials(root_certificates=roots)

    def options(self) -> list[tuple[str, str]]:
        return [("grpc.ssl_target_name_override", self.server_name)] if self.server_name else []


def gateway_channel(
    target: str, tls: Tls | None = None, options: Sequence[tuple[str, Any]] = ()
) -> grpc.aio.Channel:
    """A channel to the gateway at `target`: over TLS when `tls` is given, else plaintext."""
    if tls is None:
        return grpc.aio.insecure_channel(target, options=[NO_BDP_PROBE, *options])
    return grpc.aio.secure_channel(
        target, tls.credentials(), options=[NO_BDP_PROBE, *options, *tls.options()]
    )


class Session:
    """One player's gRPC channel to the gateway. `metadata` carries the bearer token."""

    def __init__(
        self, target: str, channel: grpc.aio.Channel | None = None, tls: Tls | None = None
    ) -> None:
        self.target = target
        self.channel = channel or gateway_channel(target, tls)
        self.token = ""
        self.player_id = ""
        self.refresh_token = ""
        """An account session's (empty for a guest)."""
        self.auth = lobby_pb2_grpc.AuthServiceStub(self.channel)
        self.lobby: Any = lobby_pb2_grpc.LobbyServiceStub(self.channel)
        self.link: SessionLink | None = None
        """The player session's stream, once `open_stream` is called: then the lobby's and the
        games' calls go on it."""

    def open_stream(self, max_calls: int = MAX_CALLS) -> None:
        """From now on the lobby's and the games' calls go as messages on one stream (a player
        session, client/link.py), opened at the first call with the current token (each new
        token is sent on it). Log in first; the AuthService's calls stay calls of their own.
        `max_calls`: calls in progress at once, as many as the gateway serves on a session
        (SESSION_MAX_CALLS); more wait here for their turn."""
        if self.link is None:
            self.link = SessionLink(self.channel, lambda: self.token, max_calls)
            self.lobby = self.link.stub(lobby_pb2.DESCRIPTOR.services_by_name["LobbyService"])

    async def login(self, name: str) -> lobby_pb2.LoginResponse:
        reply: lobby_pb2.LoginResponse = await self.auth.Login(lobby_pb2.LoginRequest(name=name))
        self.token = reply.token
        self.player_id = reply.player_id
        return reply

    async def register(
        self, username: str, password: str, bot: bool = False
    ) -> lobby_pb2.LoginResponse:
        """A new account (a `bot` account: shown as a bot), logged in; a guest logged in on
        this session claims it (keeps its player id and games)."""
        reply: lobby_pb2.LoginResponse = await self.auth.Register(
            lobby_pb2.RegisterRequest(username=username, password=password, bot=bot),
            metadata=self.metadata if self.token else (),
        )
        return self._logged_in(reply)

    async def account_login(self, username: str, password: str) -> lobby_pb2.LoginResponse:
        reply: lobby_pb2.LoginResponse = await self.auth.AccountLogin(
            lobby_pb2.AccountLoginRequest(username=username, password=password)
        )
        return self._logged_in(reply)

    async def token_login(self, api_token: str) -> lobby_pb2.LoginResponse:
        """An access token for an account's API token (with its scopes); exchange the API token
        again for the next one."""
        reply: lobby_pb2.LoginResponse = await self.auth.TokenLogin(
            lobby_pb2.TokenLoginRequest(api_token=api_token)
        )
        return self._logged_in(reply)

    def _logged_in(self, reply: lobby_pb2.LoginResponse) -> lobby_pb2.LoginResponse:
        self.token = reply.token
        self.player_id = reply.player_id
        self.refresh_token = reply.refresh_token
        return reply

    async def refresh(self) -> lobby_pb2.LoginResponse:
        """A new token for the same player, valid from now (an account's with its refresh
        token, which is replaced)."""
        reply: lobby_pb2.LoginResponse = await self.auth.Refresh(
            lobby_pb2.RefreshRequest(refresh_token=self.refresh_token),
            metadata=() if self.refresh_token else self.metadata,
        )
        self.token = reply.token
        self.refresh_token = reply.refresh_token
        return reply

    async def logout(self, everywhere: bool = False) -> int:
        """Ends this account session (or all of the account's); how many ended."""
        reply: lobby_pb2.LogoutResponse = await self.auth.Logout(
            lobby_pb2.LogoutRequest(everywhere=everywhere), metadata=self.metadata
        )
        self.token = self.refresh_token = ""
        return reply.sessions_ended

    async def worker_login(self, key: str) -> lobby_pb2.LoginResponse:
        """Log in as a bot worker (the platform's: needs the bot key); each call then names the
        bot seat it acts for (`acting_for`)."""
        reply: lobby_pb2.LoginResponse = await self.auth.BotLogin(
            lobby_pb2.BotLoginRequest(key=key)
        )
        self.token = reply.token
        self.player_id = reply.player_id
        return reply

    def acting_for(self, bot: str) -> tuple[tuple[str, str], ...]:
        """A bot worker's metadata for a call of the bot seat `bot`."""
        return (*self.metadata, (BOT_SEAT_METADATA, bot))

    async def bot_login(self, player_id: str, key: str) -> lobby_pb2.LoginResponse:
        """Log in as a bot seat (bot workers only: needs the platform's bot key)."""
        reply: lobby_pb2.LoginResponse = await self.auth.BotLogin(
            lobby_pb2.BotLoginRequest(player_id=player_id, key=key)
        )
        self.token = reply.token
        self.player_id = reply.player_id
        return reply

    @property
    def metadata(self) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {self.token}"),)

    def game(self, game: str) -> Any:
        """The stub of a game's service, e.g. session.game("esoloe").Play(...)."""
        try:
            game_api = api(game)
        except KeyError:
            known = ", ".join(games.names())
            raise ValueError(f"unknown game {game!r}; games are: {known}") from None
        if self.link is not None:
            return self.link.stub(game_api.descriptor)
        return game_api.stub(self.channel)

    async def close(self) -> None:
        if self.link is not None:
            await self.link.close()
        await self.channel.close()
