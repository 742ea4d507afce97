"""Each game's board at the terminal: found in the game's own package (`games/<game>/board.py`,
its `BOARD`, a `games.board.Board`), which draws the game with rich, tells its events and result
in words, and says how typed moves are read. The client itself knows no game.

Every board reads what the gateway sent for one seat (a GetView reply, a Watch update), so it can
never show what the seat may not see: no other seat's Solo hand, no Solace piece under a black
one.
"""

from __future__ import annotations

import games
from games.board import BaseBoard, Board

PLAIN = BaseBoard()
"""The board of a game that has none of its own (or that this client does not know): its view as
protobuf text, no sentences, results from the winners."""


def board_of(game: str) -> Board:
    """Game `game`'s board (`PLAIN` for a game without a `board` module, or not registered)."""
    try:
        spec = games.get(game)
    except KeyError:
        return PLAIN
    try:
        module = spec.part("board")
    except ModuleNotFoundError as error:
        if error.name != f"{spec.package}.board":
            raise  # the board module exists but fails to import: say so
        return PLAIN
    board: Board = module.BOARD
    return board
