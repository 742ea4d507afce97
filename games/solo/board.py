"""Solo at the terminal: your hand, the table, and every seat's count and points (S14: never
another hand); each move in words; the result; and Solo's input shorthand (a bare card plays it,
`!` calls Solo).

Cards are written in notation (`r5`, `gD`, `W4`), so that the board stays readable without
colour; colour only repeats them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from games.board import BaseBoard, Board, plural, result_detail, seat_name, seat_names, verb, won
from tabletop.common.v1 import common_pb2
from tabletop.solo.v1 import solo_pb2

CARD_STYLES = {"r": "bold red", "g": "bold green", "b": "bold blue", "y": "bold yellow"}
COLOURS = {"r": "red", "g": "green", "b": "blue", "y": "yellow"}


# --------------------------------------------------------------------------------------------
# The board


def card_text(card: str) -> Text:
    """A card in notation (`r5`, `gD`, `W4`), coloured as it is printed."""
    return Text(card, style=CARD_STYLES.get(card[:1], "bold magenta"))


def _card_texts(cards: Sequence[str]) -> Text:
    text = Text()
    for index, card in enumerate(cards):
        if index:
            text.append(" ")
        text.append_text(card_text(card))
    return text


def draw(reply: solo_pb2.GetViewResponse, me: int) -> RenderableType:
    view = reply.view
    if view.mode == solo_pb2.MODE_ROUNDS:
        rounds = f"round {view.round} of {view.rounds}"
    else:
        rounds = f"round {view.round}, points mode"
    arrow = "increasing seats ->" if view.direction >= 0 else "<- decreasing seats"
    head = Text(f"Solo, {rounds}, direction: {arrow}")
    table_line = Text("top card ")
    table_line.append_text(card_text(view.top))
    if view.free_play:
        table_line.append("   free play: any card (swap-in-turn)")
    elif view.colour:
        colour = COLOURS.get(view.colour, view.colour)
        table_line.append(f"   colour in force: {colour}", style=CARD_STYLES.get(view.colour))
    table_line.append(f"   pending draw: {view.pending_draw or 'none'}")
    table_line.append(f"   draw pile: {view.draw_pile_size}")
    names = seat_names(reply.status, me)
    seats = Table(box=box.SIMPLE_HEAD, pad_edge=False)
    for name in ("", "seat", "player", "cards", "points", ""):
        seats.add_column(name)
    for seat in range(view.players):
        notes = []
        if view.solo_called and view.solo_called[seat]:
            notes.append("called Solo")
        if view.HasField("late_call_seat") and seat == view.late_call_seat:
            notes.append("one card, no Solo call: draws 2 at the next card played")
        if view.HasField("top_played_by") and seat == view.top_played_by:
            notes.append("played the top card")
        moves = view.HasField("to_move") and seat == view.to_move
        seats.add_row(
            ">" if moves else "",
            str(seat),
            names[seat] if seat < len(names) else "",
            str(view.hand_sizes[seat]),
            str(view.points[seat]),
            ", ".join(notes),
            style="bold" if moves else None,
        )
    parts: list[RenderableType] = [head, table_line, seats]
    if me >= 0:
        hand = Text(f"your hand ({len(view.hand)}): ")
        hand.append_text(_card_texts(view.hand))
        parts.append(hand)
        if view.drawn_card:
            drawn = Text("you drew ")
            drawn.append_text(card_text(view.drawn_card))
            drawn.append(": play it, or keep it with `pass`")
            parts.append(drawn)
    return Group(*parts)


# --------------------------------------------------------------------------------------------
# Sentences


def _card(card: str) -> str:
    return card or "?"


def _cards(cards: Sequence[str]) -> str:
    return " ".join(cards) if cards else "no card"


def events(update: Any, me: int) -> list[str]:
    status = update.status
    out: list[str] = []
    drew_cards: dict[int, list[list[str]]] = {}
    for event in update.events:
        if event.WhichOneof("kind") == "drew_cards":
            drew_cards.setdefault(event.drew_cards.seat, []).append(list(event.drew_cards.cards))

    def name(seat: int) -> str:
        return seat_name(status, seat, me)

    for event in update.events:
        kind = event.WhichOneof("kind")
        if kind == "round_started":
            r = event.round_started
            out.append(f"round {r.round} begins: {name(r.start_seat)} starts on {_card(r.top)}")
        elif kind == "dealt":
            d = event.dealt
            were = verb(name(d.seat), "were", "was")
            out.append(f"{name(d.seat)} {were} dealt {_cards(d.cards)}")
        elif kind == "played":
            p = event.played
            who = name(p.seat)
            text = f"{who} jumped in with {p.card}" if p.jump_in else f"{who} played {p.card}"
            if p.colour:
                text += f" and named {COLOURS.get(p.colour, p.colour)}"
            if p.HasField("target"):
                text += f" on {name(p.target)}"
            if p.solo:
                text += ", calling Solo!"
            out.append(text)
        elif kind == "drew":
            d = event.drew
            who = name(d.seat)
            text = f"{who} drew {plural(d.count, 'card')}"
            if d.reason == solo_pb2.DRAW_REASON_STACK:
                text += " (the draw stack)"
            elif d.reason == solo_pb2.DRAW_REASON_PENALTY:
                text += f" (penalty: {who} did not call Solo)"
            pending = drew_cards.get(d.seat)
            if pending:
                text += f": {_cards(pending.pop(0))}"
            out.append(text)
        elif kind == "drew_cards":
            left = drew_cards.get(event.drew_cards.seat)
            if left and left[0] == list(event.drew_cards.cards):  # no Drew event told it
                left.pop(0)
                cards = event.drew_cards.cards
                out.append(
                    f"{name(event.drew_cards.seat)} drew {plural(len(cards), 'card')}: "
                    + _cards(cards)
                )
        elif kind == "reshuffled":
            out.append(
                f"the discard pile was shuffled into a new draw pile of "
                f"{plural(event.reshuffled.count, 'card')}"
            )
        elif kind == "kept":
            who = name(event.kept.seat)
            out.append(f"{who} kept the card {'you' if who == 'you' else 'they'} drew")
        elif kind == "solo":
            out.append(f"{name(event.solo.seat)} called Solo")
        elif kind == "skipped":
            who = name(event.skipped.seat)
            out.append(f"{who} {verb(who, 'miss', 'misses')} a turn")
        elif kind == "reversed":
            way = "increasing" if event.reversed.direction >= 0 else "decreasing"
            out.append(f"play now goes to {way} seats")
        elif kind == "swapped":
            s = event.swapped
            if len(s.seats) == 2 and len(s.sizes) == 2:
                a, b = (name(seat) for seat in s.seats)
                out.append(
                    f"hands swapped: {a} now {verb(a, 'have', 'has')} "
                    f"{plural(s.sizes[0], 'card')}, {b} {s.sizes[1]}"
                )
        elif kind == "hands_passed":
            way = "up" if event.hands_passed.direction >= 0 else "down"
            out.append(f"every hand moved on to the next seat {way}")
        elif kind == "round_ended":
            out.append(_round_ended(event.round_ended, name))
        elif kind == "resigned":
            out.append(f"{name(event.resigned.seat)} resigned")
        # game_ended: the result line says it
    return out


def _round_ended(r: Any, name: Callable[[int], str]) -> str:
    text = f"round {r.round} is over: {name(r.winner)} played their last card"
    if name(r.winner) == "you":
        text = f"round {r.round} is over: you played your last card"
    lost = [
        f"{name(seat)} {r.penalties[seat]} ({_cards(hand.cards)})"
        for seat, hand in enumerate(r.hands)
        if seat < len(r.penalties) and r.penalties[seat]
    ]
    if lost:
        text += "; points lost: " + ", ".join(lost)
    if r.points:
        text += "; points now: " + ", ".join(
            f"{name(seat)} {points}" for seat, points in enumerate(r.points)
        )
    return text


def result(status: common_pb2.GameStatus, me: int, detail: dict[str, Any]) -> str:
    """`Alice wins with 212 points; you 180` (and who resigned)."""
    names = seat_names(status, me)
    scores = {seat: int(score) for seat, score in status.result.scores.items()}
    winners = list(status.result.winners)
    if not winners:
        return "a draw"
    best = scores.get(winners[0])
    text = won([names[s] for s in winners])
    if best is not None:
        text += f" with {plural(best, 'point')}"
    others = [
        f"{names[seat]} {points}"
        for seat, points in sorted(scores.items(), key=lambda item: -item[1])
        if seat not in winners and 0 <= seat < len(names)
    ]
    if others:
        text += "; " + ", ".join(others)
    resigned = detail.get("resigned")
    if isinstance(resigned, (int, float)) and 0 <= int(resigned) < len(names):
        text += f" ({names[int(resigned)]} resigned)"
    return text


# --------------------------------------------------------------------------------------------
# Reading a typed move

VERBS = ("play", "draw", "pass", "solo")
_JOKERS = {"w": "W", "w4": "W4", "wx": "WX"}
_CARD = re.compile(r"(?i)^play ([rgby][1-9sSrRdDxX]|w4|wx|w)(:[rgby])?(@\d+)?(!?)$")
_PLAY = re.compile(r"play ([^\s:@!]+)")


def read_move(text: str) -> str:
    """A Solo line as a move: the verb in lower case, a bare card as `play <card>`."""
    first, _, rest = text.partition(" ")
    if first.lower() in VERBS:
        return f"{first.lower()} {rest}".strip()
    return f"play {text}"


def canonical_case(move: str) -> str:
    """Colours lower case and card values upper case (`play W4:b`, `play rS`)."""
    if move.lower() in ("draw", "pass", "solo"):
        return move.lower()
    found = _CARD.match(move)
    if found is None:
        return move
    card, colour, seat, call = found.groups()
    card = _JOKERS.get(card.lower()) or card[0].lower() + card[1].upper()
    return f"play {card}{(colour or '').lower()}{seat or ''}{call}"


def call_note(move: str, legal: Sequence[str]) -> str:
    """A reminder when a play leaves one card without the call (`!`)."""
    if move.endswith("!") or f"{move}!" not in legal:
        return ""
    return (
        f"this play leaves you one card without calling Solo: you will draw 2 when the next card "
        f"is played (`{move}!` would have called it)"
    )


def not_held(move: str, view: Any) -> str | None:
    """Why a well-formed play cannot be made, when the seat's own view shows it: a card the
    player does not hold."""
    found = _PLAY.match(move)
    board = getattr(view, "view", None)
    if found is None or board is None or not view.HasField("seat"):  # the public view
        return None
    card = found.group(1)
    hand = list(board.hand)
    if board.drawn_card:
        hand.append(board.drawn_card)
    if card in hand:
        return None
    return f"you do not hold {card}; your hand: {' '.join(board.hand) or 'empty'}"


# --------------------------------------------------------------------------------------------


class SoloBoard(BaseBoard):
    help_note = "in Solo a card alone plays it: r5 is play r5; add ! to call Solo (play r5!)"
    moves_on_turn = True
    watch_options: ClassVar[Mapping[str, Any]] = {"mode": "rounds", "rounds": 1}
    """One round: a points-mode game of bots can go on for an hour."""

    def draw(self, reply: Any, me: int) -> RenderableType:
        return draw(reply, me)

    def events(self, update: Any, me: int) -> list[str]:
        return events(update, me)

    def result(
        self, status: common_pb2.GameStatus, me: int, final_events: Sequence[Any] = ()
    ) -> str:
        return result(status, me, result_detail(status))

    def read_move(self, text: str) -> str:
        return read_move(text)

    def canonical_case(self, move: str) -> str:
        return canonical_case(move)

    def did_you_mean(self, text: str) -> str | None:
        """`play r5` for `r5`."""
        return None if text.startswith("play ") else f"play {text}"

    def move_note(self, move: str, legal: Sequence[str]) -> str:
        return call_note(move, legal)

    def why_not(self, move: str, view: Any) -> str | None:
        return not_held(move, view)

    def not_your_turn(self, view: Any) -> str:
        top = getattr(getattr(view, "view", None), "top", "")
        return f"out of turn you may only jump in with the other {top}" if top else ""

    def turn_note(self, legal: Sequence[str]) -> str:
        calls = [move for move in legal if move.endswith("!")]
        if not calls:
            return ""
        return (
            "you can play down to one card: call Solo with that play by adding ! "
            f"({', '.join(calls[:3])})"
        )

    def offer(self, moves: Sequence[str]) -> list[str]:
        """A jump-in (S11) is private (it tells a card of the hand): only LegalMoves shows it."""
        plays = [move for move in moves if move.startswith("play ")]
        others = [move for move in moves if not move.startswith("play ")]
        lines = []
        if plays:
            lines.append(
                "you may jump in now: " + ", ".join(plays) + "  (j: jump in, n: pass, bots go on)"
            )
        if others:
            lines.append("you may act now: " + ", ".join(others))
        return lines

    def quick(self, moves: Sequence[str]) -> str | None:
        """A jump-in: the first card offered (the identical cards are alike)."""
        return next((move for move in moves if move.startswith("play ")), None)


BOARD: Board = SoloBoard()
