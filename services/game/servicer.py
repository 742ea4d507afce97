"""The game service's gRPC face: each method reads who calls from the metadata the gateway set,
asks the core (services/game/core.py), and maps a refusal to its status once, here."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from google.protobuf.message import Message

from runtime.server import Context, answer, caller_of
from services.game.core import GameCore
from services.game.opening import CreateGameRequest
from tabletop.common.v1 import common_pb2
from wire.errors import ApiError, abort
from wire.metadata import Caller


class GameServicer:
    """Serves CreateGame, GetView, LegalMoves, Play, Resign, StopGame, TakeSeat and Watch for one
    game, and PassJumpIn for a game whose API has it (Solo)."""

    def __init__(self, core: GameCore) -> None:
        self.core = core

    async def CreateGame(self, request: CreateGameRequest, context: Context) -> Message:
        return await answer(self.core.create(request, caller_of(context)), context)

    async def GetView(self, request: common_pb2.GetViewRequest, context: Context) -> Message:
        return await answer(self.core.view(request, caller_of(context)), context)

    async def LegalMoves(
        self, request: common_pb2.LegalMovesRequest, context: Context
    ) -> common_pb2.LegalMovesResponse:
        return await answer(self.core.legal_moves(request, caller_of(context)), context)

    async def Play(self, request: common_pb2.PlayRequest, context: Context) -> Message:
        return await answer(self.core.play(request, caller_of(context)), context)

    async def Resign(self, request: common_pb2.ResignRequest, context: Context) -> Message:
        return await answer(self.core.resign(request, caller_of(context)), context)

    async def StopGame(
        self, request: common_pb2.StopGameRequest, context: Context
    ) -> common_pb2.StopGameResponse:
        return await answer(self.core.stop(request, caller_of(context)), context)

    async def TakeSeat(
        self, request: common_pb2.TakeSeatRequest, context: Context
    ) -> common_pb2.TakeSeatResponse:
        return await answer(self.core.take_seat(request, caller_of(context)), context)

    async def PassJumpIn(
        self, request: common_pb2.PassJumpInRequest, context: Context
    ) -> common_pb2.PassJumpInResponse:
        return await answer(self.core.pass_jump_in(request, caller_of(context)), context)

    async def Watch(
        self, request: common_pb2.WatchRequest, context: Context
    ) -> AsyncIterator[Message]:
        updates = await answer(self.core.watch(request, caller_of(context)), context)
        try:
            async for update in updates:
                yield update
        except ApiError as error:  # Redis away for too long
            await abort(context, error)

    def handlers(self) -> dict[str, Callable[[Any, Caller], Awaitable[Message]]]:
        """The unary methods as the relay serves them: by name, straight to the core."""
        core = self.core
        return {
            "CreateGame": core.create,
            "GetView": core.view,
            "LegalMoves": core.legal_moves,
            "Play": core.play,
            "Resign": core.resign,
            "StopGame": core.stop,
            "TakeSeat": core.take_seat,
            "PassJumpIn": core.pass_jump_in,
        }
