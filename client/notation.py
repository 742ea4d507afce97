"""Checking a typed move's notation before it is sent, with the engines' own parsers."""

from __future__ import annotations

from functools import cache

import games
from client.boards import board_of
from engines.contract import GameError, MalformedMove, State


@cache
def _fresh(game: str) -> State:
    return games.rules(game).new_game(0)


def notation_error(game: str, text: str) -> str | None:
    """Why `text` is not a move in `game`'s notation, or None when it is one.

    The engine judges: a move tried on a new game fails as MalformedMove exactly when it is not
    notation, and only the server knows whether a well-formed move is legal now, so that
    question is left to it.
    """
    problem = _malformed(game, text)
    if problem is None:
        return None
    meant = board_of(game).did_you_mean(text)  # Solo: `play r5` for `r5`
    if meant is not None and _malformed(game, meant) is None:
        return f"{problem} (did you mean `{meant}`?)"
    return problem


def _malformed(game: str, text: str) -> str | None:
    state = _fresh(game)
    try:
        state.apply(state.to_act()[0], text)
    except MalformedMove as error:
        return error.message
    except GameError:
        pass
    return None
