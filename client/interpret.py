"""What a line typed at the table means: a pure function of the line, the game, the seat's legal
moves and its view, so that it can be tested on any text without a server.

- Commands are read in any case (`HELP`, `Quit`).
- A legal move is played as itself. A line that is not one but equals exactly one legal move when
  case is ignored is played as that move (ZoxSo notation is case-sensitive: `m@a8` is `M@a8`,
  `b2^b2` is `b2^B2`); two such moves are offered as a choice. Where a game's notation leaves no
  doubt about case (e-SOLO-e, Solace, Solo, ZoxSo's pieces), the line is also put in that case
  before it is checked (`C12` is `c12`, `w:r` is `play W:r`).
- In Solo a bare card means playing it: `r5` is `play r5`, `W4:b!` is `play W4:b!`.
- Anything else is checked against the game's notation (by the engine's own parser): a typo is
  explained at once with the closest legal moves. A well-formed move that is not in the legal
  list is still sent (the list may be a moment old): the server's refusal says why, and the
  closest legal moves follow it.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from client.narrate import actor_name
from client.notation import notation_error

COMMAND_WORDS = {
    "help": "help",
    "moves": "help",
    "legal": "help",
    "?": "help",
    "board": "board",
    "wait": "wait",
    "auto": "auto",
    "resign": "resign",
    "quit": "quit",
    "exit": "quit",
    "leave": "quit",
    "yes": "yes",
    "no": "no",
}
"""Typed word (any case) -> command."""

SOLO_VERBS = ("play", "draw", "pass", "solo")
SUGGESTIONS = 4


@dataclass(frozen=True)
class Command:
    """A table command: help, board, wait, auto, resign, quit, yes, no."""

    name: str


@dataclass(frozen=True)
class Send:
    """Send `move`. `note` says how the line was read (printed first); `hint` is printed if the
    server refuses the move."""

    move: str
    note: str = ""
    hint: str = ""


@dataclass(frozen=True)
class Tell:
    """Send nothing; say `text`."""

    text: str


@dataclass(frozen=True)
class Nothing:
    """An empty line."""


Action = Command | Send | Tell | Nothing


def command_of(line: str) -> str | None:
    """The command a line names, or None when it is not one."""
    return COMMAND_WORDS.get(" ".join(line.split()).lower())


def interpret(line: str, game: str, legal: Sequence[str] | None, view: Any = None) -> Action:
    """What to do with a typed `line` in `game`.

    `legal` is the seat's legal moves now (None: not known, e.g. the server could not be asked);
    `view` is the seat's GetViewResponse (None: not known), used to explain a refusal."""
    text = " ".join(line.split())
    if not text:
        return Nothing()
    command = command_of(text)
    if command is not None:
        return Command(command)
    move = _solo_move(text) if game == "solo" else text
    canon = canonical_case(game, move)
    read_as = f"read {text!r} as {canon!r}" if canon != move else ""
    if legal is not None:
        if move in legal:  # (a Solo card alone is a play: no need to say so)
            return Send(move, note=_solo_call_note(game, move, legal))
        if canon in legal:
            return Send(canon, note=_join(read_as, _solo_call_note(game, canon, legal)))
        same = [m for m in legal if m.lower() == move.lower()]
        if len(same) == 1:
            return Send(
                same[0],
                note=_join(f"read {text!r} as {same[0]!r}", _solo_call_note(game, same[0], legal)),
            )
        if len(same) > 1:
            return Tell(f"{text!r} could be {_either(same)}: {_case_rule(game)}")
    problem = _notation_problem(game, canon)
    if problem is not None and canon != move:  # explain the line as it was typed
        problem = _notation_problem(game, move) or problem
    if problem is not None:
        return Tell(f"not a move: {problem}.{_suggest(canon, legal, view, game)}")
    if legal is not None and not legal:
        return Tell(_cannot_act(game, view))
    reason = _solo_reason(canon, view) if game == "solo" else None
    if reason is not None:
        return Tell(f"{reason}.{_suggest(canon, legal, view, game)}")
    return Send(canon, note=read_as, hint=_suggest(canon, legal, view, game).strip())


# ---- helpers (all pure)


def _join(*parts: str) -> str:
    return "; ".join(part for part in parts if part)


def _either(moves: Sequence[str]) -> str:
    quoted = [f"`{m}`" for m in moves]
    return ", ".join(quoted[:-1]) + " or " + quoted[-1]


def _case_rule(game: str) -> str:
    if game == "zoxso":
        return "ZoxSo is case-sensitive: Pearls are a1..h8, Stones A1..G7, pieces M, D, X"
    return "the notation is case-sensitive; type the one you mean"


_SOLO_JOKERS = {"w": "W", "w4": "W4", "wx": "WX"}
_SOLO_CARD = re.compile(r"(?i)^play ([rgby][1-9sSrRdDxX]|w4|wx|w)(:[rgby])?(@\d+)?(!?)$")
_ZOXSO_PLACE = re.compile(r"^[mdx]@", re.IGNORECASE)


def canonical_case(game: str, move: str) -> str:
    """`move` in the case the game's notation writes it, where the case is never ambiguous:
    e-SOLO-e is all lower case (`c12`), Solace's spaces upper case (`B2-B4`, but `stop`), Solo's
    colours lower case and card values upper case (`play W4:b`, `play rS`), ZoxSo's pieces upper
    case (`M@b2`). ZoxSo squares are left alone: `b2` and `B2` are different squares."""
    if game == "esoloe":
        return move.lower()
    if game == "solace":
        return "stop" if move.lower() == "stop" else move.upper()
    if game == "zoxso":
        if _ZOXSO_PLACE.match(move):
            return move[0].upper() + move[1:]
        return "pass" if move.lower() == "pass" else move
    if game == "solo":
        if move.lower() in ("draw", "pass", "solo"):
            return move.lower()
        found = _SOLO_CARD.match(move)
        if found is None:
            return move
        card, colour, seat, call = found.groups()
        card = _SOLO_JOKERS.get(card.lower()) or card[0].lower() + card[1].upper()
        return f"play {card}{(colour or '').lower()}{seat or ''}{call}"
    return move


def _solo_move(text: str) -> str:
    """A Solo line as a move: the verb in lower case, a bare card as `play <card>`."""
    first, _, rest = text.partition(" ")
    if first.lower() in SOLO_VERBS:
        return f"{first.lower()} {rest}".strip()
    return f"play {text}"


def _solo_call_note(game: str, move: str, legal: Sequence[str]) -> str:
    """A reminder when a Solo play leaves one card without the call (`!`)."""
    if game != "solo" or move.endswith("!") or f"{move}!" not in legal:
        return ""
    return (
        f"this play leaves you one card without calling Solo: you will draw 2 when the next card "
        f"is played (`{move}!` would have called it)"
    )


def _notation_problem(game: str, move: str) -> str | None:
    try:
        return notation_error(game, move)
    except Exception:  # the engine's parser failed on odd text: it is no move either way
        return f"{move!r} is not a {game} move"


def _suggest(move: str, legal: Sequence[str] | None, view: Any, game: str) -> str:
    """` closest legal moves: ...` (with a leading space), or why there is none."""
    if legal is None:
        return ""
    if not legal:
        return " " + _cannot_act(game, view)
    by_folded: dict[str, str] = {}
    for candidate in legal:
        by_folded.setdefault(candidate.lower(), candidate)
    close = difflib.get_close_matches(move.lower(), list(by_folded), n=SUGGESTIONS, cutoff=0.5)
    if close:
        shown = ", ".join(by_folded[c] for c in close)
        return f" closest legal moves: {shown} (help lists all {len(legal)})"
    return " help lists your legal moves" if len(legal) > 1 else f" the only one is {legal[0]}"


def _cannot_act(game: str, view: Any) -> str:
    """Why the seat has no legal move, from its view."""
    status = getattr(view, "status", None)
    if status is None:
        return "you have no legal move now"
    if status.finished:
        return "the game is over"
    me = getattr(view, "seat", -1)
    if me < 0:
        return "you are watching: spectators do not move"
    acting = [actor_name(game, status, seat, me) for seat in status.to_act if seat != me]
    text = "it is not your turn"
    if acting:
        text += f": {', '.join(acting)} to move"
    if game == "solo":
        top = getattr(getattr(view, "view", None), "top", "")
        if top:
            text += f"; out of turn you may only jump in with the other {top}"
    return text


_SOLO_PLAY = re.compile(r"play ([^\s:@!]+)")


def _solo_reason(move: str, view: Any) -> str | None:
    """Why a well-formed Solo play cannot be made, when the seat's own view shows it: a card
    the player does not hold."""
    found = _SOLO_PLAY.match(move)
    board = getattr(view, "view", None)
    if found is None or board is None or getattr(view, "seat", -1) < 0:
        return None
    card = found.group(1)
    hand = list(board.hand)
    if board.drawn_card:
        hand.append(board.drawn_card)
    if card in hand:
        return None
    return f"you do not hold {card}; your hand: {' '.join(board.hand) or 'empty'}"
