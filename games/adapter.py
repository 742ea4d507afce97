"""What every game's `adapter.py` provides: its protobuf API <-> its engine's values.

The game service builds views and events for the wire with it; a bot worker rebuilds the engine
view a GetView answer carries with it (`view_json`), which is how a bot is told exactly what its
seat may see.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from google.protobuf import json_format
from google.protobuf.message import Message

from engines.contract import Event, Rules
from tabletop.common.v1 import common_pb2


class Adapter(Protocol):
    game: str

    @property
    def rules(self) -> Rules: ...

    def options(self, request: Any) -> dict[str, Any]:
        """Engine options from the CreateGame request (only the options that were set)."""
        ...

    def view(self, view: Mapping[str, Any]) -> Message:
        """The game's View message from an engine view."""
        ...

    def view_json(self, reply: Any) -> dict[str, Any]:
        """The engine view back from a GetView reply (for bots, told only what GetView says)."""
        ...

    def event(self, event: Event) -> Message:
        """The game's Event message from an engine event."""
        ...

    @property
    def create_response(self) -> Callable[..., Message]: ...
    @property
    def view_response(self) -> Callable[..., Message]: ...
    @property
    def play_response(self) -> Callable[..., Message]: ...
    @property
    def watch_response(self) -> Callable[..., Message]: ...


def result_json(message: common_pb2.Result) -> dict[str, Any]:
    """A GameStatus result as `engines.contract.Result.to_json` gave it."""
    return {
        "winners": list(message.winners),
        "scores": {str(seat): score for seat, score in sorted(message.scores.items())},
        "detail": json_format.MessageToDict(message.detail),
    }
