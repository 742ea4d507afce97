"""A player's connection to the gateway: log in once, then call any game with the token."""

from __future__ import annotations

from typing import Any

import grpc

import games
from tabletop.lobby.v1 import lobby_pb2, lobby_pb2_grpc
from wire.api import api


class Session:
    """One player's gRPC channel to the gateway. `metadata` carries the bearer token."""

    def __init__(self, target: str, channel: grpc.aio.Channel | None = None) -> None:
        self.target = target
        self.channel = channel or grpc.aio.insecure_channel(target)
        self.token = ""
        self.player_id = ""
        self.auth = lobby_pb2_grpc.AuthServiceStub(self.channel)
        self.lobby: Any = lobby_pb2_grpc.LobbyServiceStub(self.channel)

    async def login(self, name: str) -> lobby_pb2.LoginResponse:
        reply: lobby_pb2.LoginResponse = await self.auth.Login(lobby_pb2.LoginRequest(name=name))
        self.token = reply.token
        self.player_id = reply.player_id
        return reply

    async def refresh(self) -> lobby_pb2.LoginResponse:
        """A new token for the same player, valid from now."""
        reply: lobby_pb2.LoginResponse = await self.auth.Refresh(
            lobby_pb2.RefreshRequest(), metadata=self.metadata
        )
        self.token = reply.token
        return reply

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
        return game_api.stub(self.channel)

    async def close(self) -> None:
        await self.channel.close()
