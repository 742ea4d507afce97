"""e-SOLO-e's protobuf API <-> the engine's values."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from engines.contract import Event
from games.adapter import result_json
from games.esoloe.rules import RULES
from tabletop.esoloe.v1 import esoloe_pb2


def _cells(faces: Sequence[int | None], seats: Sequence[int | None]) -> list[esoloe_pb2.Cell]:
    return [
        esoloe_pb2.Cell(face=face or 0, seat=seat) for face, seat in zip(faces, seats, strict=True)
    ]


def _rows(grid: Mapping[str, Any]) -> list[esoloe_pb2.Row]:
    return [
        esoloe_pb2.Row(cells=_cells(faces, seats))
        for faces, seats in zip(grid["faces"], grid["seats"], strict=True)
    ]


def _grid_json(cells: Sequence[esoloe_pb2.Cell]) -> tuple[list[Any], list[Any]]:
    """Faces and seats of a row of cells, gaps as None (the inverse of _cells)."""
    return [c.face or None for c in cells], [c.seat if c.HasField("seat") else None for c in cells]


class EsoloeAdapter:
    game = "esoloe"
    rules = RULES
    create_response = esoloe_pb2.CreateGameResponse
    view_response = esoloe_pb2.GetViewResponse
    play_response = esoloe_pb2.PlayResponse
    watch_response = esoloe_pb2.WatchResponse

    def options(self, request: Any) -> dict[str, Any]:
        return {}

    def view(self, view: Mapping[str, Any]) -> esoloe_pb2.View:
        grids = view["views"]
        to_move = view["to_move"]
        return esoloe_pb2.View(
            stacks=[
                esoloe_pb2.Stack(cubes=[esoloe_pb2.Cube(**cube) for cube in stack])
                for stack in view["stacks"]
            ],
            front=_rows(grids["F"]),
            back=_rows(grids["B"]),
            left=_cells(grids["L"]["faces"], grids["L"]["seats"]),
            right=_cells(grids["R"]["faces"], grids["R"]["seats"]),
            upper=_cells(grids["U"]["faces"], grids["U"]["seats"]),
            cubes_left=view["cubes_left"],
            to_move=None if view["result"] is not None else to_move,
            ply=view["ply"],
        )

    def view_json(self, reply: esoloe_pb2.GetViewResponse) -> dict[str, Any]:
        """The engine's view back from a GetView reply (what a bot worker is told). A finished
        game's result comes from the reply's status (the View does not carry it), and so does
        the rules edition: 0 (unset) is a game stored before editions existed, edition 1."""
        message = reply.view
        result = reply.status.result if reply.status.HasField("result") else None
        grids: dict[str, Any] = {}
        for name, rows in (("F", message.front), ("B", message.back)):
            faces, seats = zip(*(_grid_json(row.cells) for row in rows), strict=True)
            grids[name] = {"faces": list(faces), "seats": list(seats)}
        for name, cells in (("L", message.left), ("R", message.right), ("U", message.upper)):
            faces, seats = _grid_json(cells)
            grids[name] = {"faces": faces, "seats": seats}
        finished = not message.HasField("to_move")
        if finished and result is None:
            raise ValueError("the game is over: its view needs the GameStatus result")
        return {
            "game": self.game,
            "edition": reply.status.rules_edition or 1,
            "stacks": [
                [{"seat": c.seat, "top": c.top, "front": c.front} for c in stack.cubes]
                for stack in message.stacks
            ],
            "views": grids,
            "cubes_left": list(message.cubes_left),
            "to_move": None if finished else message.to_move,
            "ply": message.ply,
            "result": result_json(result) if finished and result is not None else None,
        }

    def event(self, event: Event) -> esoloe_pb2.Event:
        data = event.data
        if event.kind == "placed":
            return esoloe_pb2.Event(
                placed=esoloe_pb2.Placed(
                    seat=data["seat"],
                    square=data["square"],
                    level=data["level"],
                    top=data["top"],
                    front=data["front"],
                )
            )
        if event.kind == "won":
            return esoloe_pb2.Event(
                won=esoloe_pb2.Won(
                    seat=data["seat"],
                    methods=data["methods"],
                    lines=[
                        esoloe_pb2.Line(
                            view=line["view"],
                            method=line["method"],
                            cells=[
                                esoloe_pb2.Position(square=square, level=level)
                                for square, level in line["cells"]
                            ],
                        )
                        for line in data["lines"]
                    ],
                )
            )
        if event.kind == "draw":
            return esoloe_pb2.Event(draw=esoloe_pb2.Drawn(reason=data["reason"]))
        if event.kind == "resigned":
            return esoloe_pb2.Event(resigned=esoloe_pb2.Resigned(seat=data["seat"]))
        raise ValueError(f"unknown e-SOLO-e event {event.kind!r}")


ADAPTER = EsoloeAdapter()
