"""Tic-tac-toe's declaration: the one line that registers it is `games.register(GAME)` (the
tests do it; tests/test_fifth_game.py)."""

from games import Game

GAME = Game(
    name="tictactoe",
    title="Tic-tac-toe",
    package="tests.fifth_game.tictactoe",
    proto_package="tabletop.tictactoe.v1",
    service="TictactoeService",
    port=50059,
)
