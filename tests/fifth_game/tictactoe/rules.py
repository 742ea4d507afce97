"""Tic-tac-toe's rules, implementing engines.contract (pure): squares a1..c3, X (seat 0) first,
three in a row wins, a full board draws."""

from __future__ import annotations

import json
import random
from collections.abc import Mapping

from engines.contract import (
    JSON,
    Event,
    GameOver,
    IllegalMove,
    InvalidSetup,
    MalformedMove,
    NotYourTurn,
    Result,
    Seat,
    State,
    check_edition,
    check_options,
    check_seat,
)

SQUARES = tuple(f"{column}{row}" for row in "123" for column in "abc")
LINES = (
    (0, 1, 2), (3, 4, 5), (6, 7, 8),  # rows
    (0, 3, 6), (1, 4, 7), (2, 5, 8),  # columns
    (0, 4, 8), (2, 4, 6),  # diagonals
)  # fmt: skip
MARKS = "XO"


class TictactoeState(State):
    def __init__(self, board: str, result: Result | None) -> None:
        self.board = board  # nine characters: "X", "O" or "."
        self._result = result

    @property
    def num_seats(self) -> int:
        return 2

    @property
    def to_move(self) -> Seat | None:
        return None if self._result is not None else self.board.count(".") % 2 ^ 1

    def to_act(self) -> tuple[Seat, ...]:
        return () if self.to_move is None else (self.to_move,)

    def legal_moves(self, seat: Seat) -> list[str]:
        check_seat(self, seat)
        if seat != self.to_move:
            return []
        return [name for name, mark in zip(SQUARES, self.board, strict=True) if mark == "."]

    def apply(self, seat: Seat, move: str) -> tuple[TictactoeState, list[Event]]:
        check_seat(self, seat)
        if self._result is not None:
            raise GameOver("the game is over")
        if move not in SQUARES:
            raise MalformedMove(f"{move[:20]!r} is not a square; squares are a1..c3")
        if seat != self.to_move:
            raise NotYourTurn(f"it is seat {self.to_move}'s turn")
        index = SQUARES.index(move)
        if self.board[index] != ".":
            raise IllegalMove(f"{move} is taken")
        board = self.board[:index] + MARKS[seat] + self.board[index + 1 :]
        events = [Event("marked", {"seat": seat, "square": move})]
        result = None
        if any(all(board[i] == MARKS[seat] for i in line) for line in LINES):
            result = Result((seat,), {}, {"reason": "line"})
            events.append(Event("ended", {"reason": "line", "winner": seat}))
        elif "." not in board:
            result = Result((), {}, {"reason": "full"})
            events.append(Event("ended", {"reason": "full"}))
        return TictactoeState(board, result), events

    def resign(self, seat: Seat) -> tuple[TictactoeState, list[Event]]:
        check_seat(self, seat)
        if self._result is not None:
            raise GameOver("the game is over")
        result = Result((1 - seat,), {}, {"reason": "resignation"})
        ended = Event("ended", {"reason": "resignation", "winner": 1 - seat})
        return TictactoeState(self.board, result), [ended]

    def view(self, seat: Seat | None) -> dict[str, JSON]:
        if seat is not None:
            check_seat(self, seat)
        return {"board": self.board, "to_move": self.to_move}

    def result(self) -> Result | None:
        return self._result

    def serialize(self) -> bytes:
        result = None if self._result is None else self._result.to_json()
        return json.dumps({"board": self.board, "result": result}, sort_keys=True).encode()

    def determinize(self, seat: Seat | None, rng: random.Random) -> TictactoeState:
        return self  # nothing is hidden


def _result(data: JSON) -> Result | None:
    if data is None:
        return None
    scores = {int(seat): score for seat, score in data["scores"].items()}
    return Result(tuple(data["winners"]), scores, data["detail"])


class TictactoeRules:
    name = "tictactoe"
    min_seats = 2
    max_seats = 2
    edition = 1
    editions: tuple[int, ...] = (1,)

    def default_options(self) -> dict[str, JSON]:
        return {}

    def new_game(
        self,
        seed: int,
        options: Mapping[str, JSON] | None = None,
        setup: Mapping[str, JSON] | None = None,
        *,
        edition: int | None = None,
    ) -> TictactoeState:
        check_edition(self, edition)
        check_options(options, self.default_options())
        if setup is not None:
            raise InvalidSetup("tic-tac-toe has no setup")
        return TictactoeState("." * 9, None)

    def deserialize(self, data: bytes) -> TictactoeState:
        obj = json.loads(data)
        return TictactoeState(obj["board"], _result(obj["result"]))

    def from_view(self, view: Mapping[str, JSON], seat: Seat, rng: random.Random) -> TictactoeState:
        board: str = view["board"]
        state = TictactoeState(board, None)
        for line in LINES:  # a finished position's result follows from the board
            for mark_seat, mark in enumerate(MARKS):
                if all(board[i] == mark for i in line):
                    return TictactoeState(board, Result((mark_seat,), {}, {"reason": "line"}))
        if "." not in board:
            return TictactoeState(board, Result((), {}, {"reason": "full"}))
        return state


RULES = TictactoeRules()
