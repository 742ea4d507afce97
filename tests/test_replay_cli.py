"""The `tabletop replay` command."""

from __future__ import annotations

import json

import pytest

from client.cli import main


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, object]:
    assert main(["replay", *argv]) == 0
    report: dict[str, object] = json.loads(capsys.readouterr().out)
    return report


def test_replay_reports_state_and_legal_moves(capsys: pytest.CaptureFixture[str]) -> None:
    report = _run(capsys, "esoloe", "0:c12", "1:c13")
    assert report["game"] == "esoloe"
    assert report["applied"] == 2
    assert report["error"] is None
    assert report["finished"] is False
    assert report["result"] is None
    assert report["to_act"] == [0]
    legal = report["legal"]
    assert isinstance(legal, dict)
    assert legal["1"] == []
    assert len(legal["0"]) == 60


def test_replay_stops_at_the_first_illegal_move(capsys: pytest.CaptureFixture[str]) -> None:
    report = _run(capsys, "esoloe", "0:c12", "0:c13", "1:d12")
    assert report["applied"] == 1
    assert report["error"] == {
        "index": 1,
        "move": "c13",
        "reason": "NOT_YOUR_TURN",
        "message": report["error"]["message"],  # type: ignore[index]
    }
    assert report["to_act"] == [1]


def test_replay_finished_game(capsys: pytest.CaptureFixture[str]) -> None:
    # Seat 0's third cube with 1 up and 2 in front makes two new sets at once: 2-2-2 in the front
    # view and 1-1-1 in the upper view (E8).
    report = _run(capsys, "esoloe", "0:a12", "1:e14", "0:b12", "1:e26", "0:c12")
    assert report["finished"] is True
    assert report["result"] == {
        "winners": [0],
        "scores": {},
        "detail": {"reason": "win", "methods": ["two_sets"]},
    }
    assert report["to_act"] == []
    assert report["legal"] == {"0": [], "1": []}


def test_replay_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", "esoloe", "c12"]) == 2
    assert "SEAT:MOVE" in capsys.readouterr().err
    assert main(["replay", "esoloe", "--options", '{"speed": 2}']) == 2
    assert "unknown option" in capsys.readouterr().err


def test_replay_options_anywhere(capsys: pytest.CaptureFixture[str]) -> None:
    first = _run(capsys, "esoloe", "--seed", "3", "0:c12", "1:c13")
    second = _run(capsys, "esoloe", "0:c12", "--seed", "3", "1:c13")
    third = _run(capsys, "--seed", "3", "esoloe", "0:c12", "1:c13")
    assert first == second == third
    assert first["applied"] == 2


def test_replay_plays_each_rules_edition(capsys: pytest.CaptureFixture[str]) -> None:
    # E8: seat 0's last cube re-covers the upper row's 1-1-1 on b, c, d. Edition 1 counted that
    # as a new set (a win); edition 2 counts a set by what is seen, so nothing new is made.
    moves = ["0:d12", "1:b14", "0:c12", "1:e32", "0:d15"]
    old = _run(capsys, "esoloe", "--edition", "1", *moves)
    new = _run(capsys, "esoloe", *moves)
    assert (old["edition"], old["finished"]) == (1, True)
    assert (new["edition"], new["finished"]) == (2, False)
    assert main(["replay", "esoloe", "--edition", "9", "0:c12"]) == 2
    assert "no rules edition 9" in capsys.readouterr().err


def test_replay_applies_timeouts_and_aborts_as_the_log_records_them(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`SEAT:timeout` and `abort` replay what the platform did at a deadline, with the game's
    default time control; one that was not due is refused like an illegal move."""
    forfeit = _run(capsys, "esoloe", "0:c12", "1:timeout")
    assert forfeit["result"] == {
        "winners": [0], "scores": {}, "detail": {"reason": "timeout", "seat": 1},
    }  # fmt: skip
    aborted = _run(capsys, "solo", "abort")
    assert aborted["finished"] is True
    assert aborted["result"] == {"winners": [], "scores": {}, "detail": {"reason": "aborted"}}
    taken = _run(capsys, "solo", "--options", '{"players": 3}', "0:draw", "1:timeout")
    assert taken["error"] is None
    assert taken["finished"] is False
    assert taken["taken_over"] == {"1": "bot-greedy-00000001"}
    refused = _run(capsys, "esoloe", "0:c12", "0:timeout")
    assert refused["applied"] == 1
    assert refused["error"]["reason"] == "ILLEGAL_MOVE"  # type: ignore[index]
    assert "a timeout of seat 1" in refused["error"]["message"]  # type: ignore[index]
    late = _run(capsys, "esoloe", "0:c12", "abort")
    assert late["error"]["reason"] == "ILLEGAL_MOVE"  # type: ignore[index]
