"""A game's typed records keep their stored formats: a log entry read from Redis gives back the
status and events it was written with, and the finished games' stream's record is the same JSON
it always was, read back whole."""

from __future__ import annotations

import json
from typing import Any

from runtime.game_log import entry_of, finished_record
from wire.records import FinishedGame, GameMeta, VersionStatus

ALICE, BOB = "a-" + "1" * 16, "bot-greedy-" + "b" * 12


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True)


def test_a_log_entry_reads_its_status_and_events_typed_and_writes_them_back() -> None:
    status = {
        "to_act": [],
        "finished": True,
        "result": {"winners": [0], "scores": {"0": 1.0}, "detail": {"reason": "win"}},
        "clock": {"remaining": [1000, 2000], "abort_at": None},
        "replaced": {"1": BOB},
    }
    events = [
        {"kind": "moved", "data": {"to": "c12"}, "to": None},
        {"kind": "drew", "data": {}, "to": 1},
    ]
    fields = {
        b"actor": b"0",
        b"move": b"c12",
        b"events": _dumps(events).encode(),
        b"status": _dumps(status).encode(),
        b"t": b"1234",
    }
    entry = entry_of(b"7-0", fields)
    assert (entry.version, entry.actor, entry.move, entry.time_ms) == (7, 0, "c12", 1234)
    assert entry.status.finished
    assert entry.status.taken_over == {"1": BOB}
    assert entry.status.to_json() == status
    assert [e.to_json() for e in entry.events] == events
    assert entry.events[1].to == 1
    assert entry.table_event is None


def test_the_finished_record_is_the_json_it_always_was() -> None:
    status = VersionStatus(
        to_act=[],
        finished=True,
        result={"winners": [0], "scores": {}, "detail": {"reason": "resigned", "resigned": 1}},
    )
    games: list[dict[str, Any]] = [
        {"game": "esoloe", "seats": [ALICE, BOB], "seed": 3, "options": {}},
        {
            "game": "solace",
            "seats": [ALICE],
            "seed": 4,
            "options": {},
            "accounts": [0],
            "rated": True,
            "scored": True,
            "day": "2026-01-02",
        },
    ]
    for stored in games:
        record = finished_record(GameMeta.from_json(stored), status)
        assert record is not None
        before = {  # the record as the stream has always held it
            "seats": list(stored["seats"]),
            "accounts": list(stored.get("accounts", ())),
            "rated": bool(stored.get("rated")),
            "scored": bool(stored.get("scored")),
            "day": stored.get("day"),
            "status": status.to_json(),
        }
        assert _dumps(record.to_json()) == _dumps(before)
        assert FinishedGame.from_json(json.loads(_dumps(before))) == record
    unfinished = VersionStatus(to_act=[0], finished=False)
    assert finished_record(GameMeta(game="esoloe", seats=[ALICE, BOB]), unfinished) is None
    assert finished_record(GameMeta(game="esoloe", seats=[BOB, BOB]), status) is None


def test_the_moves_the_ratings_consumer_adds_are_never_on_the_stream_unless_read() -> None:
    status = VersionStatus(to_act=[], finished=True)
    record = FinishedGame([ALICE, BOB], [0], True, False, None, status)
    assert "moves" not in record.to_json()
    counted = FinishedGame.from_json({**record.to_json(), "moves": [3, 4]})
    assert counted.moves == [3, 4]
    assert counted.to_json()["moves"] == [3, 4]
