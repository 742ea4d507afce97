"""ZoxSo's protobuf API <-> the engine's values (translation only; the rules live in the engine)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engines.contract import Event
from games.adapter import result_json
from games.zoxso.rules import PEARL_INDEX, RULES, STONE_INDEX
from tabletop.zoxso.v1 import zoxso_pb2

_TYPES = {
    "M": zoxso_pb2.PIECE_TYPE_MA,
    "D": zoxso_pb2.PIECE_TYPE_DAO,
    "X": zoxso_pb2.PIECE_TYPE_XING,
}
_SIDES = {"d": 0, "l": 1}
_TYPE_LETTERS = {kind: letter for letter, kind in _TYPES.items()}
_SIDE_LETTERS = {seat: side for side, seat in _SIDES.items()}
_WIN_REASONS = {
    "throne": zoxso_pb2.WIN_REASON_THRONE,
    "xing_captured": zoxso_pb2.WIN_REASON_XING_CAPTURED,
    "resignation": zoxso_pb2.WIN_REASON_RESIGNATION,
}
_DRAW_REASONS = {
    "two_passes": zoxso_pb2.DRAW_REASON_TWO_PASSES,
    "max_plies": zoxso_pb2.DRAW_REASON_MAX_PLIES,
}


def piece(name: str) -> zoxso_pb2.Piece:
    """`dM`, `lX`, ... (side d/l + type M/D/X) as a Piece."""
    return zoxso_pb2.Piece(seat=_SIDES[name[0]], type=_TYPES[name[1]])


def _squares(board: Mapping[str, str], order: Mapping[str, int]) -> list[zoxso_pb2.Square]:
    return [
        zoxso_pb2.Square(name=name, piece=piece(board[name]))
        for name in sorted(board, key=order.__getitem__)
    ]


def _hand(counts: Mapping[str, int]) -> zoxso_pb2.Counts:
    """A hand `{"M": 4, "D": 5, "X": 1}` as Counts."""
    return zoxso_pb2.Counts(ma=counts["M"], dao=counts["D"], xing=counts["X"])


def _on(board: Mapping[str, str], side: str) -> zoxso_pb2.Counts:
    """How many pieces of each type `side` (d/l) has on one layer."""
    kinds = [name[1] for name in board.values() if name[0] == side]
    return zoxso_pb2.Counts(ma=kinds.count("M"), dao=kinds.count("D"), xing=kinds.count("X"))


def _name(message: zoxso_pb2.Piece) -> str:
    """A Piece as `dM`, `lX`, ... (the inverse of `piece`)."""
    return _SIDE_LETTERS[message.seat] + _TYPE_LETTERS[message.type]


class ZoxsoAdapter:
    game = "zoxso"
    rules = RULES
    create_response = zoxso_pb2.CreateGameResponse
    view_response = zoxso_pb2.GetViewResponse
    play_response = zoxso_pb2.PlayResponse
    watch_response = zoxso_pb2.WatchResponse

    def options(self, request: Any) -> dict[str, Any]:
        options: dict[str, Any] = {}
        if request.options.HasField("max_plies"):
            options["max_plies"] = request.options.max_plies
        return options

    def view(self, view: Mapping[str, Any]) -> zoxso_pb2.View:
        pearls: Mapping[str, str] = view["pearls"]
        stones: Mapping[str, str] = view["stones"]
        forces = [
            zoxso_pb2.Force(
                seat=seat,
                in_hand=_hand(view["in_hand"][side]),
                on_pearls=_on(pearls, side),
                on_stones=_on(stones, side),
            )
            for side, seat in _SIDES.items()
        ]
        return zoxso_pb2.View(
            pearls=_squares(pearls, PEARL_INDEX),
            stones=_squares(stones, STONE_INDEX),
            forces=forces,
            phase=view["phase"],
            to_move=None if view["result"] is not None else view["to_move"],
            ply=view["ply"],
            max_plies=view["max_plies"],
            passes=view["passes"],
            throne=view["throne"],
        )

    def view_json(self, reply: zoxso_pb2.GetViewResponse) -> dict[str, Any]:
        """The engine's view back from a GetView reply (what a bot worker is told).

        A finished game's result comes from the reply's status (the View does not carry it).
        Nor does a finished game's View say whose turn it would have been (to_move is unset): it is
        recomputed as ply % 2 (Dark moves on even plies in both phases, which holds for every
        game started by new_game without a setup). The rules edition comes from the status too;
        0 (unset: a server from before rules editions) means edition 1."""
        message = reply.view
        result = reply.status.result if reply.status.HasField("result") else None
        finished = not message.HasField("to_move")
        if finished and result is None:
            raise ValueError("the game is over: its view needs the GameStatus result")
        hands = {_SIDE_LETTERS[force.seat]: force.in_hand for force in message.forces}
        return {
            "game": self.game,
            "phase": message.phase,
            "to_move": message.ply % 2 if finished else message.to_move,
            "ply": message.ply,
            "max_plies": message.max_plies,
            "passes": message.passes,
            "throne": message.throne,
            "pearls": {square.name: _name(square.piece) for square in message.pearls},
            "stones": {square.name: _name(square.piece) for square in message.stones},
            "in_hand": {
                side: {"M": counts.ma, "D": counts.dao, "X": counts.xing}
                for side, counts in sorted(hands.items())
            },
            "result": result_json(result) if finished and result is not None else None,
            "edition": reply.status.rules_edition or 1,
        }

    def event(self, event: Event) -> zoxso_pb2.Event:
        data = event.data
        kind = event.kind
        if kind == "placed":
            return zoxso_pb2.Event(
                placed=zoxso_pb2.Placed(
                    seat=data["seat"],
                    move=data["move"],
                    piece=piece(data["piece"]),
                    to_square=data["to"],
                )
            )
        if kind == "phase":
            return zoxso_pb2.Event(phase_started=zoxso_pb2.PhaseStarted(phase=data["phase"]))
        if kind == "flipped":
            return zoxso_pb2.Event(
                flipped=zoxso_pb2.Flipped(
                    seat=data["seat"],
                    move=data["move"],
                    piece=piece(data["piece"]),
                    from_square=data["from"],
                    to_square=data["to"],
                )
            )
        if kind == "moved":
            moved = zoxso_pb2.Moved(
                seat=data["seat"],
                move=data["move"],
                piece=piece(data["piece"]),
                from_square=data["from"],
                to_square=data["to"],
            )
            if data["captured"] is not None:
                moved.captured.CopyFrom(piece(data["captured"]))
            return zoxso_pb2.Event(moved=moved)
        if kind == "passed":
            return zoxso_pb2.Event(passed=zoxso_pb2.Passed(seat=data["seat"]))
        if kind == "won":
            return zoxso_pb2.Event(
                won=zoxso_pb2.Won(seat=data["seat"], reason=_WIN_REASONS[data["reason"]])
            )
        if kind == "draw":
            return zoxso_pb2.Event(draw=zoxso_pb2.Drawn(reason=_DRAW_REASONS[data["reason"]]))
        if kind == "resigned":
            return zoxso_pb2.Event(resigned=zoxso_pb2.Resigned(seat=data["seat"]))
        raise ValueError(f"unknown ZoxSo event {kind!r}")


ADAPTER = ZoxsoAdapter()
