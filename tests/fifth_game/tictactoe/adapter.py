"""Tic-tac-toe's protobuf API <-> its engine's values."""

from __future__ import annotations

from collections.abc import Mapping
from importlib import import_module
from typing import Any

from engines.contract import Event
from tests.fifth_game.tictactoe.rules import RULES

# Generated at test time (tests/fifth_game/compile.py), so imported when the adapter is used.
pb2: Any = import_module("tabletop.tictactoe.v1.tictactoe_pb2")


class TictactoeAdapter:
    game = "tictactoe"
    rules = RULES
    create_response = pb2.CreateGameResponse
    view_response = pb2.GetViewResponse
    play_response = pb2.PlayResponse
    watch_response = pb2.WatchResponse

    def options(self, request: Any) -> dict[str, Any]:
        return {}

    def view(self, view: Mapping[str, Any]) -> Any:
        message = pb2.View(squares=[c if c != "." else "" for c in view["board"]])
        if view["to_move"] is not None:
            message.to_move = view["to_move"]
        return message

    def view_json(self, reply: Any) -> dict[str, Any]:
        view = reply.view
        return {
            "board": "".join(square or "." for square in view.squares),
            "to_move": view.to_move if view.HasField("to_move") else None,
        }

    def event(self, event: Event) -> Any:
        data = event.data
        if event.kind == "marked":
            return pb2.Event(marked=pb2.Marked(seat=data["seat"], square=data["square"]))
        ended = pb2.Ended(reason=data["reason"])
        if "winner" in data:
            ended.winner = data["winner"]
        return pb2.Event(ended=ended)


ADAPTER = TictactoeAdapter()
