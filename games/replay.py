"""Replay a game from a move list (pure): the `tabletop replay` command's engine."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import games
from engines.contract import GameError, State


def parse_seat_move(text: str) -> tuple[int, str]:
    """`SEAT:MOVE`, e.g. `0:c12` or `2:play W4:b`."""
    seat, sep, move = text.partition(":")
    if not sep or not seat.strip().isdigit():
        raise ValueError(f"{text!r} is not SEAT:MOVE (e.g. 0:c12)")
    return int(seat), move


def describe(game: str, state: State) -> dict[str, Any]:
    """The finished/result/to_act/legal part of a replay report."""
    result = state.result()
    return {
        "finished": result is not None,
        "result": None if result is None else result.to_json(),
        "to_act": list(state.to_act()),
        "legal": {str(seat): state.legal_moves(seat) for seat in range(state.num_seats)},
    }


def replay(
    game: str,
    moves: Sequence[tuple[int, str]],
    *,
    seed: int = 0,
    options: Mapping[str, Any] | None = None,
    setup: Mapping[str, Any] | None = None,
    edition: int | None = None,
) -> dict[str, Any]:
    """Apply `moves` in order from a new game of the given rules edition (default: the current
    one); stop at the first refused move and report it."""
    rules = games.rules(game)
    state = rules.new_game(seed, options, setup, edition=edition)
    applied = 0
    error = None
    for index, (seat, move) in enumerate(moves):
        try:
            state, _events = state.apply(seat, move)
        except GameError as refused:
            error = {
                "index": index,
                "move": move,
                "reason": refused.reason,
                "message": refused.message,
            }
            break
        applied += 1
    return {
        "game": game,
        "edition": state.edition,
        "applied": applied,
        "error": error,
        **describe(game, state),
    }
