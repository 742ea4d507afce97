"""Solo's protobuf API <-> the engine's values. Translation only: the rules are in rules.py."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engines.contract import Event
from games.solo.rules import RULES
from tabletop.solo.v1 import solo_pb2

_MODES = {solo_pb2.MODE_POINTS: "points", solo_pb2.MODE_ROUNDS: "rounds"}
_MODE_ENUMS = {name: number for number, name in _MODES.items()}
_DRAW_REASONS = {
    "turn": solo_pb2.DRAW_REASON_TURN,
    "stack": solo_pb2.DRAW_REASON_STACK,
    "penalty": solo_pb2.DRAW_REASON_PENALTY,
}


def _seat_or_none(seat: int) -> int | None:
    """An engine seat that is -1 for "none" as a proto3 optional field's value (None: unset)."""
    return None if seat < 0 else seat


def _by_seat(values: Mapping[str, Any]) -> list[Any]:
    """A {"0": x, "1": y, ...} mapping as a list in seat order."""
    return [values[str(seat)] for seat in range(len(values))]


class SoloAdapter:
    game = "solo"
    rules = RULES
    create_response = solo_pb2.CreateGameResponse
    view_response = solo_pb2.GetViewResponse
    play_response = solo_pb2.PlayResponse
    watch_response = solo_pb2.WatchResponse

    def options(self, request: Any) -> dict[str, Any]:
        given: solo_pb2.Options = request.options
        options: dict[str, Any] = {}
        for name in ("players", "start_points", "rounds", "mixed_stacking"):
            if given.HasField(name):
                options[name] = getattr(given, name)
        if given.HasField("mode") and given.mode != solo_pb2.MODE_UNSPECIFIED:
            # An unknown enum number goes to the engine as is, which refuses it.
            options["mode"] = _MODES.get(given.mode, given.mode)
        return options

    def view(self, view: Mapping[str, Any]) -> solo_pb2.View:
        finished = view["finished"]
        return solo_pb2.View(
            players=view["players"],
            mode=_MODE_ENUMS[view["mode"]],
            rounds=view["rounds"],
            mixed_stacking=view["mixed_stacking"],
            round=view["round"],
            points=view["points"],
            hand_sizes=view["hand_sizes"],
            discard=view["discard"],
            top=view["top"],
            colour=view["colour"],
            free_play=view["free_play"],
            draw_pile_size=view["draw_pile_size"],
            pending_draw=view["pending_draw"],
            direction=view["direction"],
            to_move=None if finished else view["to_move"],
            top_played_by=_seat_or_none(view["top_played_by"]),
            drawn_waiting=view["drawn_waiting"],
            solo_called=view["solo_called"],
            late_call_seat=_seat_or_none(view["exposed"]),
            finished=finished,
            winners=view["winners"] or [],
            hand=view.get("hand") or [],
            drawn_card=view.get("drawn_card") or "",
            log=view.get("log") or [],
            hand_history=view.get("hand_history") or [],
        )

    def view_json(self, reply: solo_pb2.GetViewResponse) -> dict[str, Any]:
        """The engine's view back from a GetView reply (what a bot worker is told): exact for
        every view of a game in progress. The seat comes from the reply (unset: the public
        view); once the game is over the proto leaves to_move unset where the engine keeps its
        last seat, and this gives -1. The engine's -1 for "no seat" (top_played_by, exposed) is
        an unset field on the wire. The rules edition comes from the status (0, unset, from a
        server that predates editions: edition 1); the round's public log is empty from a server
        that predates it."""
        message = reply.view
        viewer = reply.seat if reply.HasField("seat") else None
        out: dict[str, Any] = {
            "seat": viewer,
            "edition": reply.status.rules_edition or 1,
            "players": message.players,
            "mode": _MODES[message.mode],
            "rounds": message.rounds,
            "mixed_stacking": message.mixed_stacking,
            "round": message.round,
            "points": list(message.points),
            "hand_sizes": list(message.hand_sizes),
            "discard": list(message.discard),
            "top": message.top,
            "colour": message.colour,
            "free_play": message.free_play,
            "draw_pile_size": message.draw_pile_size,
            "pending_draw": message.pending_draw,
            "direction": message.direction,
            "to_move": message.to_move if message.HasField("to_move") else -1,
            "top_played_by": message.top_played_by if message.HasField("top_played_by") else -1,
            "drawn_waiting": message.drawn_waiting,
            "solo_called": list(message.solo_called),
            "exposed": message.late_call_seat if message.HasField("late_call_seat") else -1,
            "finished": message.finished,
            "winners": list(message.winners) if message.finished else None,
            "log": list(message.log),
        }
        if viewer is not None:
            out["hand"] = list(message.hand)
            out["drawn_card"] = message.drawn_card or None
            out["hand_history"] = list(message.hand_history)
        return out

    def event(self, event: Event) -> solo_pb2.Event:
        data = event.data
        kind = event.kind
        if kind == "play":
            return solo_pb2.Event(
                played=solo_pb2.Played(
                    seat=data["seat"],
                    card=data["card"],
                    jump_in=data["jump_in"],
                    solo=data["solo"],
                    colour=data.get("colour", ""),
                    target=data.get("target"),
                )
            )
        if kind == "drew":
            return solo_pb2.Event(
                drew=solo_pb2.Drew(
                    seat=data["seat"], count=data["count"], reason=_DRAW_REASONS[data["reason"]]
                )
            )
        if kind == "drew_cards":
            return solo_pb2.Event(
                drew_cards=solo_pb2.DrewCards(seat=data["seat"], cards=data["cards"])
            )
        if kind == "round_start":
            return solo_pb2.Event(
                round_started=solo_pb2.RoundStarted(
                    round=data["round"],
                    start_seat=data["start_seat"],
                    top=data["top"],
                    hand_sizes=data["hand_sizes"],
                    draw_pile_size=data["draw_pile_size"],
                    points=data["points"],
                )
            )
        if kind == "dealt":
            return solo_pb2.Event(dealt=solo_pb2.Dealt(seat=data["seat"], cards=data["cards"]))
        if kind == "reshuffled":
            return solo_pb2.Event(reshuffled=solo_pb2.Reshuffled(count=data["count"]))
        if kind == "kept":
            return solo_pb2.Event(kept=solo_pb2.Kept(seat=data["seat"]))
        if kind == "solo":  # a late call: rules edition 1 only (edition 2 has none, S12)
            return solo_pb2.Event(solo=solo_pb2.SoloCalled(seat=data["seat"]))
        if kind == "skipped":
            return solo_pb2.Event(skipped=solo_pb2.Skipped(seat=data["seat"]))
        if kind == "reversed":
            return solo_pb2.Event(reversed=solo_pb2.Reversed(direction=data["direction"]))
        if kind == "swapped":
            return solo_pb2.Event(
                swapped=solo_pb2.Swapped(seats=data["seats"], sizes=data["sizes"])
            )
        if kind == "hands_passed":
            return solo_pb2.Event(
                hands_passed=solo_pb2.HandsPassed(
                    direction=data["direction"], hand_sizes=data["hand_sizes"]
                )
            )
        if kind == "round_end":
            return solo_pb2.Event(
                round_ended=solo_pb2.RoundEnded(
                    round=data["round"],
                    winner=data["winner"],
                    hands=[solo_pb2.Hand(cards=cards) for cards in _by_seat(data["hands"])],
                    penalties=_by_seat(data["penalties"]),
                    points=data["points"],
                )
            )
        if kind == "game_end":
            return solo_pb2.Event(
                game_ended=solo_pb2.GameEnded(winners=data["winners"], points=data["points"])
            )
        if kind == "resigned":
            return solo_pb2.Event(resigned=solo_pb2.Resigned(seat=data["seat"]))
        raise ValueError(f"unknown Solo event {kind!r}")


ADAPTER = SoloAdapter()
