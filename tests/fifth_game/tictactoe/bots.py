"""Tic-tac-toe's bots: greedy wins or blocks at once; strong plays perfectly (minimax)."""

from __future__ import annotations

import random
from functools import cache

from engines.bots.base import Turn, levels
from tests.fifth_game.tictactoe.rules import LINES, MARKS, SQUARES


def _winner(board: str) -> str:
    for line in LINES:
        marks = {board[i] for i in line}
        if len(marks) == 1 and "." not in marks:
            return marks.pop()
    return ""


@cache
def _value(board: str, mark: str) -> int:
    """+1 when `mark`, to move, wins with best play; 0 for a draw; -1 when it loses."""
    other = MARKS[1 - MARKS.index(mark)]
    if _winner(board):
        return -1  # the other side has just made a line
    if "." not in board:
        return 0
    return max(-_value(_put(board, i, mark), other) for i, c in enumerate(board) if c == ".")


def _put(board: str, index: int, mark: str) -> str:
    return board[:index] + mark + board[index + 1 :]


class Greedy:
    def choose(self, turn: Turn, rng: random.Random) -> str | None:
        board: str = turn.view["board"]
        mark, other = MARKS[turn.seat], MARKS[1 - turn.seat]
        for who in (mark, other):  # win, else block
            for move in turn.moves:
                if _winner(_put(board, SQUARES.index(move), who)):
                    return move
        return rng.choice(list(turn.moves))


class Strong:
    def choose(self, turn: Turn, rng: random.Random) -> str | None:
        board: str = turn.view["board"]
        mark, other = MARKS[turn.seat], MARKS[1 - turn.seat]
        scored = [(-_value(_put(board, SQUARES.index(m), mark), other), m) for m in turn.moves]
        best = max(score for score, _ in scored)
        return rng.choice([move for score, move in scored if score == best])


def greedy() -> Greedy:
    return Greedy()


def strong() -> Strong:
    return Strong()


LEVELS = levels(greedy=greedy, strong=strong)
