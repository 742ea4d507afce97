"""What a line typed at the table means: a pure function of the line, the game, the seat's legal
moves and its view, so that it can be tested on any text without a server.

- Commands are read in any case (`HELP`, `Quit`).
- A game's shorthand is expanded first (its board's `read_move`: in Solo a bare card means
  playing it, `r5` is `play r5`).
- A legal move is played as itself. A line that is not one but equals exactly one legal move when
  case is ignored is played as that move (ZoxSo notation is case-sensitive: `m@a8` is `M@a8`,
  `b2^b2` is `b2^B2`); two such moves are offered as a choice. Where a game's notation leaves no
  doubt about case (its board's `canonical_case`: e-SOLO-e, Solace, Solo, ZoxSo's pieces), the
  line is also put in that case before it is checked (`C12` is `c12`, `w:r` is `play W:r`).
- Anything else is checked against the game's notation (by the engine's own parser): a typo is
  explained at once, as it was typed (its board's `typed_problem`: e-SOLO-e's any case), with
  the closest legal moves (`closest`: those that begin most like it first). A well-formed move
  that is not in the legal list is still sent (the list may be a moment old): the server's
  refusal says why, and the closest legal moves follow it.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from client.boards import board_of
from client.notation import notation_error
from games.board import Board

COMMAND_WORDS = {
    "help": "help",
    "moves": "help",
    "legal": "help",
    "?": "help",
    "board": "board",
    "clock": "clock",
    "clocks": "clock",
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

SUGGESTIONS = 4


@dataclass(frozen=True)
class Command:
    """A table command: help, board, clock, wait, auto, resign, quit, yes, no."""

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
    board = board_of(game)
    move = board.read_move(text)
    canon = board.canonical_case(move)
    read_as = f"read {text!r} as {canon!r}" if canon != move else ""
    if legal is not None:
        if move in legal:  # (a shorthand, like a Solo card alone, needs no note)
            return Send(move, note=board.move_note(move, legal))
        if canon in legal:
            return Send(canon, note=_join(read_as, board.move_note(canon, legal)))
        same = [m for m in legal if m.lower() == move.lower()]
        if len(same) == 1:
            return Send(
                same[0],
                note=_join(f"read {text!r} as {same[0]!r}", board.move_note(same[0], legal)),
            )
        if len(same) > 1:
            return Tell(f"{text!r} could be {_either(same)}: {board.case_rule}")
    problem = _notation_problem(game, canon)
    if problem is not None and move != text:  # a shorthand's: explain the line as typed
        problem = _notation_problem(game, text) or problem
    if problem is not None:
        problem = board.typed_problem(problem)
        return Tell(f"not a move: {problem}.{_suggest(canon, legal, view, game)}")
    if legal is not None and not legal:
        return Tell(_cannot_act(board, view))
    reason = board.why_not(canon, view)
    if reason is not None:
        return Tell(f"{reason}.{_suggest(canon, legal, view, game)}")
    return Send(canon, note=read_as, hint=_suggest(canon, legal, view, game).strip())


# ---- helpers (all pure)


def _join(*parts: str) -> str:
    return "; ".join(part for part in parts if part)


def _either(moves: Sequence[str]) -> str:
    quoted = [f"`{m}`" for m in moves]
    return ", ".join(quoted[:-1]) + " or " + quoted[-1]


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
        return " " + _cannot_act(board_of(game), view)
    close = closest(move, legal)
    if close:
        return f" closest legal moves: {', '.join(close)} (help lists all {len(legal)})"
    return " help lists your legal moves" if len(legal) > 1 else f" the only one is {legal[0]}"


def closest(move: str, legal: Sequence[str], n: int = SUGGESTIONS) -> list[str]:
    """The `n` legal moves closest to `move`, closest first, case ignored. Every game's notation
    reads from its most telling part on (the square, the piece, the card, where a move starts),
    so the moves that share the longest beginning with `move` come first (`c19`: `c12`, `c13`
    before `c31`), then the most alike as text; the legal list's order breaks ties. Only moves
    alike enough as text to be a likely slip are offered."""
    typed = move.lower()
    ranked = []
    seen: set[str] = set()
    for index, candidate in enumerate(legal):
        folded = candidate.lower()
        if folded in seen:
            continue
        seen.add(folded)
        alike = difflib.SequenceMatcher(None, typed, folded).ratio()
        if alike >= 0.5:
            ranked.append((-_shared_start(typed, folded), -alike, index, candidate))
    return [candidate for *_, candidate in sorted(ranked)[:n]]


def _shared_start(one: str, other: str) -> int:
    """How many characters `one` and `other` begin with alike."""
    length = 0
    while length < min(len(one), len(other)) and one[length] == other[length]:
        length += 1
    return length


def _cannot_act(board: Board, view: Any) -> str:
    """Why the seat has no legal move, from its view."""
    status = getattr(view, "status", None)
    if status is None:
        return "you have no legal move now"
    if status.finished:
        return "the game is over"
    if not view.HasField("seat"):  # the public view
        return "you are watching: spectators do not move"
    me = view.seat
    acting = [board.actor_name(status, seat, me) for seat in status.to_act if seat != me]
    text = "it is not your turn"
    if acting:
        text += f": {', '.join(acting)} to move"
    still = board.not_your_turn(view)
    if still:
        text += f"; {still}"
    return text
