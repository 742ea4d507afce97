"""The soak (`make soak`): a short run with chaos on a Redis Cluster passes its audit, and the
audit catches each kind of loss or corruption it claims to."""

from __future__ import annotations

import dataclasses
import json

import games
from bench.soak import Joined, Move, Settings, audit_game, run
from runtime.game_log import Entry

GAME_ID = "esoloe-00000000000000000001"
PLAYER = "guest-x"


def _stored(moves: list[tuple[int, str]]) -> tuple[dict[bytes, bytes], list[Entry]]:
    """A game as Redis would hold it after `moves`: its state hash and its stream entries."""
    state = games.rules("esoloe").new_game(7)
    entries = [Entry(0, -1, "", [], {"finished": False}, 0)]
    for version, (seat, move) in enumerate(moves, start=1):
        state, events = state.apply(seat, move)
        entries.append(Entry(
            version, seat, move, [e.to_json() for e in events], {"finished": state.finished}, 0
        ))  # fmt: skip
    meta = {
        "game": "esoloe",
        "seats": [PLAYER, "bot-random-1"],
        "options": {},
        "seed": 7,
        "edition": state.edition,
    }
    hash_ = {
        b"version": str(len(moves)).encode(),
        b"snapshot": state.serialize(),
        b"meta": json.dumps(meta).encode(),
    }
    return hash_, entries


def _requests(joined: Joined) -> dict[bytes, bytes]:
    return {m.request_id.encode(): str(m.version).encode() for m in joined.accepted}


def _game() -> tuple[Joined, dict[bytes, bytes], list[Entry]]:
    moves = [(0, "a12"), (1, "a13"), (0, "e15"), (1, "c26")]
    state, entries = _stored(moves)
    joined = Joined("esoloe", GAME_ID, 0)
    joined.accepted = [Move(1, 0, "a12", f"{PLAYER}:r1"), Move(3, 0, "e15", f"{PLAYER}:r3")]
    return joined, state, entries


def test_the_audit_passes_a_sound_game() -> None:
    joined, state, entries = _game()
    assert audit_game([joined], state, entries, _requests(joined)) == []


def test_the_audit_finds_a_gap_in_the_stream() -> None:
    joined, state, entries = _game()
    del entries[2]
    problems = audit_game([joined], state, entries, _requests(joined))
    assert any("stream versions" in p for p in problems)


def test_the_audit_finds_a_snapshot_that_does_not_replay() -> None:
    joined, state, entries = _game()
    state[b"snapshot"] = games.rules("esoloe").new_game(7).serialize()
    problems = audit_game([joined], state, entries, _requests(joined))
    assert any("differs from the stored snapshot" in p for p in problems)


def test_the_audit_finds_a_lost_move() -> None:
    joined, state, entries = _game()
    joined.accepted.append(Move(5, 0, "b12", f"{PLAYER}:r5"))  # accepted, never written
    problems = audit_game([joined], state, entries, _requests(joined))
    assert any("is not in the log" in p for p in problems)


def test_the_audit_finds_a_move_applied_twice() -> None:
    joined, state, entries = _game()
    joined.accepted = joined.accepted[:1]  # the player had one move accepted, the log has two
    problems = audit_game([joined], state, entries, _requests(joined))
    assert any("has moves at versions [1, 3]" in p for p in problems)


def test_the_audit_counts_a_move_whose_answer_was_lost() -> None:
    joined, state, entries = _game()
    lost = joined.accepted.pop()
    joined.unknown.append(lost.request_id)
    requests = {**_requests(joined), lost.request_id.encode(): b"3"}
    assert audit_game([joined], state, entries, requests) == []


def test_the_audit_finds_other_events_than_the_replay() -> None:
    joined, state, entries = _game()
    entries[2] = dataclasses.replace(entries[2], events=[])
    problems = audit_game([joined], state, entries, _requests(joined))
    assert any("replays with other events" in p for p in problems)


def test_a_short_soak_with_chaos_on_a_redis_cluster_loses_nothing() -> None:
    """Every process kind and a cluster node restarted while games run; the audit is clean."""
    report = run(
        Settings(games=8, seconds=16, drain_seconds=25, cluster=True, chaos_every=(0.5, 1.5))
    )
    summary = "\n".join(report.lines())
    assert report.audit.problems == [], summary
    assert report.audit.finished > 0, summary
    assert report.audit.moves > 0, summary
    assert sum(report.restarts.values()) >= 3, summary
    assert report.restarts["redis"] == 1, summary
