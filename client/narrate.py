"""What happened, in words: who sits where, each move's events as sentences, and how a game ended.

Every function reads only what the gateway sent (a GameStatus, a Watch message's envelope and
events), for one viewer: `me` is the viewer's seat, -1 for a spectator. Seats are called by the
names their players logged in with ("random bot" for a bot), the viewer's own seat "you"; when two
seats share a name, the seat number tells them apart.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from google.protobuf import json_format

from tabletop.common.v1 import common_pb2
from tabletop.solace.v1 import solace_pb2
from tabletop.solo.v1 import solo_pb2
from tabletop.zoxso.v1 import zoxso_pb2

ZOXSO_SIDES = ("Dark", "Light")
ESOLOE_VIEWS = {"F": "front", "B": "back", "L": "left", "R": "right", "U": "upper"}
SOLO_COLOURS = {"r": "red", "g": "green", "b": "blue", "y": "yellow"}
ZOXSO_PIECES = {
    zoxso_pb2.PIECE_TYPE_MA: "Ma",
    zoxso_pb2.PIECE_TYPE_DAO: "Dao",
    zoxso_pb2.PIECE_TYPE_XING: "Xing",
}
_SOLACE_COLOURS = {solace_pb2.COLOUR_BLACK: "black", solace_pb2.COLOUR_CLEAR: "clear"}


# --------------------------------------------------------------------------------------------
# Names


def seat_names(status: common_pb2.GameStatus, me: int) -> list[str]:
    """What to call each seat: "you", the player's name, or "name (seat 2)" when names repeat."""
    raw = [seat.name or seat.player_id or f"seat {i}" for i, seat in enumerate(status.seats)]
    names = []
    for index, name in enumerate(raw):
        if index == me:
            names.append("you")
        elif sum(1 for i, other in enumerate(raw) if other == name and i != me) > 1:
            names.append(f"{name} (seat {index})")
        else:
            names.append(name)
    return names


def seat_name(status: common_pb2.GameStatus, seat: int, me: int) -> str:
    """One seat's name as `seat_names` gives it (`seat 7` for a seat the status does not list)."""
    names = seat_names(status, me)
    return names[seat] if 0 <= seat < len(names) else f"seat {seat}"


def side_name(status: common_pb2.GameStatus, seat: int, me: int) -> str:
    """A ZoxSo seat with its side, `Dark (you)`, `Light (strong bot)`."""
    side = ZOXSO_SIDES[seat] if 0 <= seat < 2 else f"seat {seat}"
    return f"{side} ({seat_name(status, seat, me)})"


def actor_name(game: str, status: common_pb2.GameStatus, seat: int, me: int) -> str:
    """How a sentence names the seat that acted: with its side in ZoxSo, where the board shows
    sides, by name elsewhere."""
    if game == "zoxso":
        return side_name(status, seat, me)
    return seat_name(status, seat, me)


def seat_label(game: str, seat: int) -> str:
    """`seat 0 (Dark)`, `seat 1 (back)`, `seat 3`."""
    if game == "zoxso" and 0 <= seat < 2:
        return f"seat {seat} ({ZOXSO_SIDES[seat]})"
    if game == "esoloe" and 0 <= seat < 2:
        return f"seat {seat} ({('front', 'back')[seat]})"
    return f"seat {seat}"


def _verb(subject: str, base: str, third: str) -> str:
    return base if subject == "you" else third


def _list(items: Sequence[str]) -> str:
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _number(value: Any) -> str:
    """A Struct number (always a float) as it was written: 3, not 3.0."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


# --------------------------------------------------------------------------------------------
# e-SOLO-e


def _views(lines: Sequence[Any]) -> str:
    """`the front view`, `the back, front and right views`."""
    views = sorted({ESOLOE_VIEWS.get(line.view, line.view) for line in lines})
    if len(views) == 1:
        return f"the {views[0]} view"
    return f"the {_list(views)} views"


def _esoloe_win(won: Any, owner: str) -> str:
    """How an e-SOLO-e win was made, from its Won event: `4 cubes of your colour in a row in the
    front view`."""
    parts = []
    colour = "your" if owner == "you" else "their"
    for method in won.methods:
        lines = [line for line in won.lines if line.method == method]
        if not lines:
            parts.append(_ESOLOE_METHODS.get(method, method))
            continue
        longest = max(len(line.cells) for line in lines)
        if method == "colour":
            parts.append(f"{longest} cubes of {colour} colour in a row in {_views(lines)}")
        elif method == "symbol":
            parts.append(f"{longest} matching symbols in a row in {_views(lines)}")
        else:
            parts.append(f"two sets of three matching symbols in {_views(lines)}")
    return "; ".join(parts)


_ESOLOE_METHODS = {
    "colour": "4 cubes of one colour in a row",
    "symbol": "4 matching symbols in a row",
    "two_sets": "two sets of three matching symbols",
}


def _esoloe_events(update: Any, me: int) -> list[str]:
    status = update.status
    out: list[str] = []
    for event in update.events:
        kind = event.WhichOneof("kind")
        if kind == "placed":
            p = event.placed
            who = seat_name(status, p.seat, me)
            front = str(p.front) if p.front <= 3 else "a blank face"
            out.append(
                f"{who} played {update.envelope.move or p.square}: a cube on {p.square} at level "
                f"{p.level + 1}, {p.top} on top and {front} in front"
            )
        elif kind == "won":
            who = seat_name(status, event.won.seat, me)
            how = _esoloe_win(event.won, who)
            out.append(f"{who} {_verb(who, 'win', 'wins')}: {how}" if how else f"{who} won")
        elif kind == "draw":
            out.append("the game is drawn: the player to move cannot place a cube")
        elif kind == "resigned":
            out.append(f"{seat_name(status, event.resigned.seat, me)} resigned")
    return out


# --------------------------------------------------------------------------------------------
# Solo


def _card(card: str) -> str:
    return card or "?"


def _cards(cards: Sequence[str]) -> str:
    return " ".join(cards) if cards else "no card"


def _solo_events(update: Any, me: int) -> list[str]:
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
            verb = _verb(name(d.seat), "were", "was")
            out.append(f"{name(d.seat)} {verb} dealt {_cards(d.cards)}")
        elif kind == "played":
            p = event.played
            who = name(p.seat)
            text = f"{who} jumped in with {p.card}" if p.jump_in else f"{who} played {p.card}"
            if p.colour:
                text += f" and named {SOLO_COLOURS.get(p.colour, p.colour)}"
            if p.HasField("target"):
                text += f" on {name(p.target)}"
            if p.solo:
                text += ", calling Solo!"
            out.append(text)
        elif kind == "drew":
            d = event.drew
            who = name(d.seat)
            text = f"{who} drew {_plural(d.count, 'card')}"
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
                    f"{name(event.drew_cards.seat)} drew {_plural(len(cards), 'card')}: "
                    + _cards(cards)
                )
        elif kind == "reshuffled":
            out.append(
                f"the discard pile was shuffled into a new draw pile of "
                f"{_plural(event.reshuffled.count, 'card')}"
            )
        elif kind == "kept":
            who = name(event.kept.seat)
            out.append(f"{who} kept the card {'you' if who == 'you' else 'they'} drew")
        elif kind == "solo":
            out.append(f"{name(event.solo.seat)} called Solo")
        elif kind == "skipped":
            who = name(event.skipped.seat)
            out.append(f"{who} {_verb(who, 'miss', 'misses')} a turn")
        elif kind == "reversed":
            way = "increasing" if event.reversed.direction >= 0 else "decreasing"
            out.append(f"play now goes to {way} seats")
        elif kind == "swapped":
            s = event.swapped
            if len(s.seats) == 2 and len(s.sizes) == 2:
                a, b = (name(seat) for seat in s.seats)
                out.append(
                    f"hands swapped: {a} now {_verb(a, 'have', 'has')} "
                    f"{_plural(s.sizes[0], 'card')}, {b} {s.sizes[1]}"
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


def _round_ended(r: Any, name: Any) -> str:
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


# --------------------------------------------------------------------------------------------
# Solace


def _solace_piece(piece: Any) -> str:
    if piece.hidden:
        return f"a hidden {piece.size}"
    return _SOLACE_COLOURS.get(piece.colour, "?")[:1] + str(piece.size)


def _solace_events(update: Any, me: int) -> list[str]:
    status = update.status
    out: list[str] = []
    who = seat_name(status, update.envelope.actor, me) if update.envelope.actor >= 0 else ""
    for event in update.events:
        kind = event.WhichOneof("kind")
        if kind == "moved":
            m = event.moved
            piece = _solace_piece(m.piece) if m.HasField("piece") else "the tower"
            if m.kind == solace_pb2.MOVE_KIND_FOUNDATION:
                text = f"{who} lifted {piece} from {m.from_space} onto {m.to_space}: a new tower"
            elif m.kind == solace_pb2.MOVE_KIND_BUILD:
                text = f"{who} built {piece} from {m.from_space} onto the tower on {m.to_space}"
            else:
                colour = _SOLACE_COLOURS.get(m.tower_colour, "")
                text = (
                    f"{who} promoted the {colour + ' ' if colour else ''}tower from "
                    f"{m.from_space} to {m.to_space}: {_plural(m.score, 'promoted tower')}"
                )
            out.append(text)
        elif kind == "revealed":
            r = event.revealed
            shown = f"{r.space} now shows "
            if out and out[-1].startswith(shown):
                out[-1] += f" {_solace_piece(r.piece)}"
            else:
                out.append(shown + _solace_piece(r.piece))
        elif kind == "stopped":
            out.append(f"{who} stopped with {_plural(event.stopped.score, 'promoted tower')}")
        # game_over: the result line says it
    return out


# --------------------------------------------------------------------------------------------
# ZoxSo


def _zoxso_piece(piece: Any) -> str:
    return ZOXSO_PIECES.get(piece.type, "piece")


def _zoxso_events(update: Any, me: int) -> list[str]:
    status = update.status
    out: list[str] = []

    def side(seat: int) -> str:
        return side_name(status, seat, me)

    events = list(update.events)
    index = 0
    while index < len(events):
        event = events[index]
        kind = event.WhichOneof("kind")
        index += 1
        if kind == "placed":
            p = event.placed
            out.append(f"{side(p.seat)} placed a {_zoxso_piece(p.piece)} on {p.to_square}")
        elif kind == "phase_started":
            out.append(
                f"all pieces are down: phase {event.phase_started.phase}, moving and flipping, "
                "begins"
            )
        elif kind == "flipped":
            f = event.flipped
            text = f"{side(f.seat)} flipped a {_zoxso_piece(f.piece)} from {f.from_square} onto "
            text += f.to_square
            if index < len(events) and events[index].WhichOneof("kind") == "moved":
                m = events[index].moved
                index += 1
                text += f", then moved it to {m.to_square}" + _captured(m, status, me)
            out.append(text)
        elif kind == "moved":
            m = event.moved
            out.append(
                f"{side(m.seat)} moved a {_zoxso_piece(m.piece)} from {m.from_square} to "
                f"{m.to_square}" + _captured(m, status, me)
            )
        elif kind == "passed":
            out.append(f"{side(event.passed.seat)} passed: no legal move")
        elif kind == "won":
            w = event.won
            if w.reason == zoxso_pb2.WIN_REASON_THRONE:
                win = f"{side(w.seat)} wins on the Throne"
            elif w.reason == zoxso_pb2.WIN_REASON_XING_CAPTURED:
                win = f"{side(w.seat)} wins by capturing the enemy Xing"
            else:
                win = f"{side(w.seat)} wins"
            winner = side(w.seat)
            if w.reason != zoxso_pb2.WIN_REASON_RESIGNATION and out and out[-1].startswith(winner):
                out[-1] += " and " + win.removeprefix(winner + " ")
            else:
                out.append(win)
        elif kind == "draw":
            reason = {
                zoxso_pb2.DRAW_REASON_TWO_PASSES: "both players passed in a row",
                zoxso_pb2.DRAW_REASON_MAX_PLIES: "the ply limit is reached",
            }.get(event.draw.reason, "drawn")
            out.append(f"the game is drawn: {reason}")
        elif kind == "resigned":
            out.append(f"{side(event.resigned.seat)} resigned")
    return out


def _captured(moved: Any, status: common_pb2.GameStatus, me: int) -> str:
    if not moved.HasField("captured"):
        return ""
    owner = seat_name(status, moved.captured.seat, me)
    whose = "your" if owner == "you" else f"{ZOXSO_SIDES[moved.captured.seat % 2]}'s"
    return f", capturing {whose} {_zoxso_piece(moved.captured)}"


# --------------------------------------------------------------------------------------------

_EVENTS = {
    "esoloe": _esoloe_events,
    "solo": _solo_events,
    "solace": _solace_events,
    "zoxso": _zoxso_events,
}


def describe_events(game: str, update: Any, me: int) -> list[str]:
    """A Watch message's events as sentences, for the viewer at seat `me`."""
    try:
        return _EVENTS[game](update, me)
    except (KeyError, IndexError, ValueError, AttributeError):  # a newer server's event
        return []


def describe_update(game: str, update: Any, me: int) -> str:
    """A Watch message as one line: `#version` then what happened, in sentences."""
    envelope = update.envelope
    sentences = describe_events(game, update, me)
    if envelope.actor < 0:
        sentences.insert(0, "the game begins")
    elif not sentences:
        who = actor_name(game, update.status, envelope.actor, me)
        sentences.append(f"{who} played {envelope.move}")
    return f"#{envelope.version} " + "; ".join(sentences)


# --------------------------------------------------------------------------------------------
# Results


def result_detail(status: common_pb2.GameStatus) -> dict[str, Any]:
    """The result's detail as plain values (a Struct's numbers are floats)."""
    if not status.result.HasField("detail"):
        return {}
    detail: dict[str, Any] = json_format.MessageToDict(status.result.detail)
    return detail


def _winners(status: common_pb2.GameStatus, me: int) -> list[str]:
    return [seat_name(status, seat, me) for seat in status.result.winners]


def _won(names: Sequence[str]) -> str:
    """`you won`, `Bob wins`, `Bob and you share the win`."""
    if len(names) > 1:
        return f"{_list(names)} share the win"
    if names and names[0] == "you":
        return "you won"
    return f"{names[0]} wins" if names else "nobody wins"


def describe_result(
    status: common_pb2.GameStatus, me: int, final_events: Sequence[Any] = ()
) -> str:
    """How a finished game ended, in words, from the viewer's side: "you won: 4 cubes of your
    colour in a row in the front view", "Alice wins with 212 points; you 180".

    `final_events` are the last move's events where the viewer saw them (they tell, e.g., which
    e-SOLO-e lines won); without them the result's detail is enough."""
    game = status.game
    detail = result_detail(status)
    reason = str(detail.get("reason", ""))
    winners = _winners(status, me)
    try:
        if game == "solo":
            return _solo_result(status, me, detail)
        if game == "solace":
            return _solace_result(status, me, detail)
        if not winners:
            return _draw(game, reason)
        won = _won(winners)
        if reason == "resignation":
            loser = [i for i in range(len(status.seats)) if i not in status.result.winners]
            if loser:
                return f"{won}: {seat_name(status, loser[0], me)} resigned"
            return f"{won}: the other side resigned"
        if game == "esoloe":
            return f"{won}: {_esoloe_result(status, me, detail, final_events)}"
        if game == "zoxso":
            return f"{won}: {_zoxso_result(status, me, reason)}"
    except (KeyError, IndexError, ValueError, TypeError, AttributeError):
        pass
    return won if winners else "a draw"


def _draw(game: str, reason: str) -> str:
    why = {
        "no_legal_placement": "the player to move cannot place a cube",
        "two_passes": "both players passed in a row",
        "max_plies": "the ply limit was reached",
    }.get(reason, reason.replace("_", " "))
    return f"a draw: {why}" if why else "a draw"


def _esoloe_result(
    status: common_pb2.GameStatus, me: int, detail: Mapping[str, Any], events: Sequence[Any]
) -> str:
    for event in events:
        if hasattr(event, "WhichOneof") and event.WhichOneof("kind") == "won":
            return _esoloe_win(event.won, seat_name(status, event.won.seat, me))
    methods = [str(m) for m in detail.get("methods", [])]
    return _list([_ESOLOE_METHODS.get(m, m) for m in methods]) or "a winning line"


def _zoxso_result(status: common_pb2.GameStatus, me: int, reason: str) -> str:
    winner = status.result.winners[0]
    loser = 1 - winner
    mine = winner == me
    if reason == "throne":
        return "your Xing reached the Throne" if mine else "their Xing reached the Throne"
    if reason == "xing_captured":
        victim = "your" if loser == me else f"{ZOXSO_SIDES[loser]}'s"
        return f"{victim} Xing was captured"
    return reason.replace("_", " ") or "won"


def _solo_result(status: common_pb2.GameStatus, me: int, detail: Mapping[str, Any]) -> str:
    names = seat_names(status, me)
    scores = {seat: int(score) for seat, score in status.result.scores.items()}
    winners = list(status.result.winners)
    if not winners:
        return "a draw"
    best = scores.get(winners[0])
    text = _won([names[s] for s in winners])
    if best is not None:
        text += f" with {_plural(best, 'point')}"
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


def _solace_result(status: common_pb2.GameStatus, me: int, detail: Mapping[str, Any]) -> str:
    score = detail.get("score", status.result.scores.get(0, 0))
    towers = _plural(int(float(score)), "promoted tower")
    who = seat_name(status, 0, me)
    if detail.get("reason") == "stopped":
        text = f"{who} stopped with {towers}"
    else:
        text = f"no move left: {towers}"
    best = detail.get("best_score")
    if isinstance(best, (int, float)):
        text += f" (the best this deal allowed: {_number(best)})"
    return text


def short_result(status: common_pb2.GameStatus, me: int) -> str:
    """A finished game's outcome in a few words, for lists: `you won`, `strong bot wins`."""
    if status.game == "solace":
        score = status.result.scores.get(0, 0)
        return _plural(int(score), "promoted tower")
    winners = _winners(status, me)
    return _won(winners) if winners else "a draw"
