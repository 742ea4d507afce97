"""Solace's protobuf API <-> the engine's values (translation only; rules live in the engine)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engines.contract import Event
from games.solace.rules import RULES
from tabletop.solace.v1 import solace_pb2

_COLOURS = {"black": solace_pb2.COLOUR_BLACK, "clear": solace_pb2.COLOUR_CLEAR}
_STATES = {
    "nest": solace_pb2.SPACE_STATE_NEST,
    "open": solace_pb2.SPACE_STATE_OPEN,
    "promoted": solace_pb2.SPACE_STATE_PROMOTED,
}
_COLOUR_NAMES = {number: name for name, number in _COLOURS.items()}
_STATE_NAMES = {number: name for name, number in _STATES.items()}
_KINDS = {
    "foundation": solace_pb2.MOVE_KIND_FOUNDATION,
    "build": solace_pb2.MOVE_KIND_BUILD,
    "promotion": solace_pb2.MOVE_KIND_PROMOTION,
}


def _piece(piece: Mapping[str, Any], size: int) -> solace_pb2.Piece:
    """A piece; a hidden one keeps only its size, which follows from the nest's structure."""
    if piece.get("hidden"):
        return solace_pb2.Piece(colour=solace_pb2.COLOUR_UNSPECIFIED, size=size, hidden=True)
    return solace_pb2.Piece(colour=_COLOURS[piece["colour"]], size=piece["size"])


def _piece_json(piece: solace_pb2.Piece) -> dict[str, Any]:
    if piece.hidden:
        return {"hidden": True}
    return {"colour": _COLOUR_NAMES[piece.colour], "size": piece.size}


def _nest(pieces: list[Mapping[str, Any]]) -> list[solace_pb2.Piece]:
    # Outer to inner: a nest of n pieces holds sizes n, n-1, ..., 1.
    return [_piece(p, len(pieces) - i) for i, p in enumerate(pieces)]


class SolaceAdapter:
    game = "solace"
    rules = RULES
    create_response = solace_pb2.CreateGameResponse
    view_response = solace_pb2.GetViewResponse
    play_response = solace_pb2.PlayResponse
    watch_response = solace_pb2.WatchResponse

    def options(self, request: Any) -> dict[str, Any]:
        options: dict[str, Any] = {}
        if request.HasField("options") and request.options.HasField("no_monochrome"):
            options["no_monochrome"] = request.options.no_monochrome
        return options

    def view(self, view: Mapping[str, Any]) -> solace_pb2.View:
        message = solace_pb2.View(
            spaces=[
                solace_pb2.Space(
                    name=name,
                    row=_COLOURS[space["row"]],
                    state=_STATES[space["state"]],
                    nest=_nest(space["nest"]),
                    tower=[_piece(p, p["size"]) for p in space["tower"]],
                )
                for name, space in view["spaces"].items()
            ],
            score=view["score"],
            finished=view["finished"],
            stopped=view["stopped"],
            moves_played=view["moves_played"],
            options=solace_pb2.Options(no_monochrome=view["options"]["no_monochrome"]),
        )
        if view.get("best_score") is not None:
            message.best_score = view["best_score"]
        return message

    def view_json(self, reply: solace_pb2.GetViewResponse) -> dict[str, Any]:
        """The engine's view back from a GetView reply: what a bot worker is told, turned into
        what `Rules.from_view` reads (exact)."""
        message = reply.view
        finished = message.finished
        return {
            "game": "solace",
            "spaces": {
                space.name: {
                    "row": _COLOUR_NAMES[space.row],
                    "state": _STATE_NAMES[space.state],
                    "nest": [_piece_json(p) for p in space.nest],
                    "tower": [_piece_json(p) for p in space.tower],
                }
                for space in message.spaces
            },
            "score": message.score,
            "finished": finished,
            "stopped": message.stopped,
            "moves_played": message.moves_played,
            "options": {"no_monochrome": message.options.no_monochrome},
            "to_act": [] if finished else [0],
            "best_score": message.best_score if message.HasField("best_score") else None,
        }

    def event(self, event: Event) -> solace_pb2.Event:
        data = event.data
        if event.kind == "moved":
            moved = solace_pb2.Moved(
                move=data["move"],
                kind=_KINDS[data["kind"]],
                from_space=data["from"],
                to_space=data["to"],
                score=data["score"],
            )
            if "piece" in data:
                moved.piece.CopyFrom(_piece(data["piece"], data["piece"]["size"]))
            if "tower" in data:
                moved.tower_colour = _COLOURS[data["tower"]["colour"]]
            return solace_pb2.Event(moved=moved)
        if event.kind == "revealed":
            piece = data["piece"]
            return solace_pb2.Event(
                revealed=solace_pb2.Revealed(
                    space=data["space"], depth=data["depth"], piece=_piece(piece, piece["size"])
                )
            )
        if event.kind == "stopped":
            return solace_pb2.Event(stopped=solace_pb2.Stopped(score=data["score"]))
        if event.kind == "game_over":
            return solace_pb2.Event(
                game_over=solace_pb2.GameEnded(
                    reason=data["reason"],
                    score=data["score"],
                    best_score=data.get("best_score") or 0,
                )
            )
        raise ValueError(f"unknown Solace event {event.kind!r}")


ADAPTER = SolaceAdapter()
