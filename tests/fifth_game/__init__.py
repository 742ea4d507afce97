"""A fifth game, tic-tac-toe, that only the tests register: the proof that a game is its package
(tests/fifth_game/tictactoe/), its proto (tests/fifth_game/proto/) and one registration line."""
