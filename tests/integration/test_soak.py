"""The soak (`make soak`): a short run with chaos on a Redis Cluster passes its audit, and the
audit catches each kind of loss or corruption it claims to."""

from __future__ import annotations

import dataclasses
import json

import games
from bench.soak import Audit, Joined, Move, Settings, audit_game, run
from games import replay
from games.clock import TimeControl
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


TIMED = TimeControl(move_seconds=5, abort_seconds=10)
START = 1_000_000


def _timed(
    steps: list[tuple[int, str, int]], tc: TimeControl = TIMED
) -> tuple[dict[bytes, bytes], list[Entry]]:
    """A timed game (5 s a move) as Redis would hold it after `steps` (seat, move, time in ms
    after its creation), replayed with the platform's own step function."""
    position = replay.start("esoloe", 7, {}, time_control=tc, time_ms=START)
    entries = [Entry(0, -1, "", [], {"finished": False}, START)]
    for version, (seat, move, at) in enumerate(steps, start=1):
        position = replay.step(position, tc, replay.Step(seat, move, START + at))
        events = [e.to_json() for e in position.events]
        status = {"finished": position.finished}
        entries.append(Entry(version, seat, move, events, status, START + at, position.table_event))
    assert position.table is not None
    meta = {"game": "esoloe", "seats": [PLAYER, PLAYER + "2"], "options": {}, "seed": 7,
            "edition": position.state.edition, "time_control": tc.to_json()}  # fmt: skip
    hash_ = {
        b"version": str(len(steps)).encode(),
        b"snapshot": position.state.serialize(),
        b"meta": json.dumps(meta).encode(),
        b"table": json.dumps(position.table.to_json()).encode(),
    }
    return hash_, entries


def _first_mover() -> tuple[list[Joined], dict[bytes, bytes]]:
    """Seat 0, whose player had its first move (a12) accepted, and the game's request ids."""
    joined = Joined("esoloe", GAME_ID, 0, [Move(1, 0, "a12", f"{PLAYER}:r1")])
    return [joined], _requests(joined)


def test_the_audit_counts_a_timeout_and_how_late_it_came() -> None:
    state, entries = _timed([(0, "a12", 2_000), (1, "timeout", 7_300)])
    seated, requests = _first_mover()
    audit = Audit()
    assert audit_game(seated, state, entries, requests, audit) == []
    assert audit.applied == {"forfeit": 1}
    assert audit.lateness_ms == [300]  # seat 1's turn began at 2 s: its deadline was 7 s


def test_the_audit_finds_a_timeout_applied_twice() -> None:
    state, entries = _timed([(0, "a12", 2_000), (1, "timeout", 7_300)])
    entries.append(dataclasses.replace(entries[-1], version=3))
    state[b"version"] = b"3"
    seated, requests = _first_mover()
    problems = audit_game(seated, state, entries, requests)
    assert any("version 3 does not replay" in p for p in problems), problems


def test_the_audit_tells_the_bots_moves_from_the_players_around_a_take_back() -> None:
    """Seat 1 times out, a bot plays it, its player takes it back and plays: the take-back
    replays, and only the player's own moves (before the timeout, after the take-back) are
    theirs."""
    bot = TimeControl(move_seconds=5, on_timeout="bot")
    moves = ["a12", "a13", "e15", "c26"]
    steps = [
        (0, moves[0], 2_000), (1, "timeout", 7_300), (1, moves[1], 7_400),
        (0, moves[2], 8_000), (1, "take_seat", 8_500), (1, moves[3], 9_000),
    ]  # fmt: skip
    hash_, entries = _timed(steps, bot)
    joined = Joined("esoloe", GAME_ID, 1, [Move(6, 1, moves[3], f"{PLAYER}:r6")])
    assert audit_game([joined], hash_, entries, _requests(joined)) == []
    joined.accepted = []  # had the player not played version 6, it would be missing
    problems = audit_game([joined], hash_, entries, _requests(joined))
    assert problems, problems


def test_the_audit_finds_a_timeout_before_its_deadline() -> None:
    state, entries = _timed([(0, "a12", 2_000), (1, "timeout", 6_900)])
    seated, requests = _first_mover()
    problems = audit_game(seated, state, entries, requests)
    assert any("applied before its deadline" in p for p in problems), problems


def test_the_audit_finds_a_move_accepted_after_its_deadline() -> None:
    state, entries = _timed([(0, "a12", 2_000), (1, "a13", 7_001)])
    seated, requests = _first_mover()
    problems = audit_game(seated, state, entries, requests)
    assert any("a move after the deadline" in p for p in problems), problems


def test_the_audit_finds_a_game_left_waiting_past_its_deadline() -> None:
    state, entries = _timed([(0, "a12", 2_000)])
    seated, requests = _first_mover()
    assert (
        audit_game(seated, state, entries, requests, now_ms=START + 9_000, overdue_ms=2_000) == []
    )
    problems = audit_game(seated, state, entries, requests, now_ms=START + 9_001, overdue_ms=2_000)
    assert any("its timeout was due 2001 ms ago" in p for p in problems), problems


def test_a_short_soak_with_chaos_and_clocks_on_a_redis_cluster_loses_nothing() -> None:
    """Every process kind and a cluster node restarted while games run with short clocks and
    players who walk away (half their games here); the audit is clean, and timeouts or aborts
    were applied."""
    report = run(
        Settings(
            games=8, seconds=16, drain_seconds=25, cluster=True, chaos_every=(0.5, 1.5),
            clocks=True, walk_away=0.25, never_move=0.25,
        )
    )  # fmt: skip
    summary = "\n".join(report.lines())
    assert report.audit.problems == [], summary
    assert report.audit.finished > 0, summary
    assert report.audit.moves > 0, summary
    assert sum(report.audit.applied.values()) > 0, summary
    assert sum(report.restarts.values()) >= 3, summary
    assert report.restarts["redis"] == 1, summary
