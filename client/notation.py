"""Checking a typed move's notation before it is sent, with the engines' own parsers."""

from __future__ import annotations

from functools import cache

from engines import registry
from engines.contract import GameError, MalformedMove, State


@cache
def _fresh(game: str) -> State:
    return registry.get(game).new_game(0)


def notation_error(game: str, text: str) -> str | None:
    """Why `text` is not a move in `game`'s notation, or None when it is one.

    The engine judges: a move tried on a new game fails as MalformedMove exactly when it is not
    notation, and only the server knows whether a well-formed move is legal now, so that
    question is left to it.
    """
    problem = _malformed(game, text)
    bare_card = game == "solo" and not text.startswith("play ")  # `r5` for `play r5`
    if problem is not None and bare_card and _malformed(game, f"play {text}") is None:
        return f"{problem} (did you mean `play {text}`?)"
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
