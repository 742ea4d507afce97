"""An archived game's row, from the game's log as Redis holds it (pure: no I/O). What others may
see of it is what a spectator could: the seats, the moves as played (public notation), the
clocks and the result; the seed (which decides hidden cards) is kept but never shown."""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from typing import Any

from runtime.game_log import Entry
from services.ratings.model import Change, has_result
from wire.players import plays_as_bot
from wire.records import GameMeta, VersionStatus
from wire.status import holders_of, names_of

OUTCOMES = ("win", "loss", "draw", "none")


def outcome(seat: int, seats: int, status: VersionStatus) -> str:
    """How a finished game of `seats` seats ended for `seat`: win, loss, draw (no winner, or
    every seat a winner), or none (no result)."""
    if not has_result(status) or status.result is None:
        return "none"
    winners = status.result["winners"]
    if seat not in winners:
        return "loss" if winners else "draw"
    return "win" if seats == 1 or len(winners) < seats else "draw"


def _at(ms: int) -> datetime.datetime:
    return datetime.datetime.fromtimestamp(ms / 1000, datetime.UTC)


def archived(game_id: str, meta: GameMeta, entries: Sequence[Entry]) -> dict[str, Any]:
    """The `archived_games` row of a finished game (its log from version 0 to its end), from its
    meta and log."""
    last = entries[-1]
    status = last.status
    ratings = meta.ratings or {}
    seats = [
        {
            "player_id": player,
            "name": name,
            "bot": plays_as_bot(player),
            **({"rating": ratings[str(i)][0]} if str(i) in ratings else {}),
        }
        for i, (player, name) in enumerate(zip(meta.seats, names_of(meta), strict=True))
    ]
    holders = holders_of(meta, status)
    for seat, holder in enumerate(holders):
        if holder != meta.seats[seat]:
            seats[seat]["taken_over_by"] = holder  # a bot played it from a timeout on
    return {
        "game_id": game_id,
        "game": meta.game,
        "edition": meta.rules_edition,
        "options": dict(meta.options or {}),
        "time_control": meta.time_control,
        "seed": meta.seed,
        "day": meta.day,
        "rated": meta.rated,
        "public": not meta.private,
        "seats": seats,
        "result": status.result if has_result(status) else None,
        "end_reason": (status.result or {}).get("detail", {}).get("reason", ""),
        "moves": [
            [
                e.actor,
                e.move,
                e.time_ms,
                (e.status.clock or {}).get("remaining"),
                (e.table_event or {}).get("bot", ""),
            ]
            for e in entries[1:]
        ],
        "created_at": _at(entries[0].time_ms),
        "finished_at": _at(last.time_ms),
        "outcomes": [outcome(seat, len(seats), status) for seat in range(len(seats))],
    }


def _iso(at: datetime.datetime) -> str:
    return at.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def public_seats(row: Mapping[str, Any]) -> list[dict[str, Any]]:
    """An archived game's seats as anyone may read them: who, their ratings before and after
    (in a rated game, once counted), their outcome. `row`: with `seats`, `outcomes` (per seat)
    and `changes` (the game's rating changes, or None)."""
    after = {c.seat: c.after.display for c in (Change.from_json(c) for c in row["changes"] or ())}
    outcomes = row["outcomes"] or []
    seats = []
    for index, seat in enumerate(row["seats"]):
        shown = {key: seat[key] for key in ("player_id", "name", "bot", "rating", "taken_over_by")
                 if key in seat}  # fmt: skip
        if index in after:
            shown["rating_after"] = after[index]
        shown["outcome"] = outcomes[index] if index < len(outcomes) else "none"
        seats.append(shown)
    return seats


def public_record(row: Mapping[str, Any]) -> dict[str, Any]:
    """What anyone may read of an archived game, as one JSON object (a line of the archive's
    export): everything but the seed. `row`: an archived game as the store reads it."""
    return {
        "game_id": row["game_id"],
        "game": row["game"],
        "edition": row["edition"],
        "options": row["options"],
        "time_control": row["time_control"],
        "rated": row["rated"],
        "day": row["day"].isoformat() if row["day"] else None,
        "seats": public_seats(row),
        "result": row["result"],
        "end": row["end_reason"],
        "created_at": _iso(row["created_at"]),
        "finished_at": _iso(row["finished_at"]),
        "moves": [[actor, move, ms, remaining] for actor, move, ms, remaining, _ in row["moves"]],
    }
