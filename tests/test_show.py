"""`tabletop show`'s pure parts: how a game ended in words (who won, places, scores, the way it
ended) and stepping through a game's moves, driven by a scripted reader instead of a terminal."""

from __future__ import annotations

from typing import Any

import pytest

from client.archive import STEP_HELP, browse, ending, move_line, places, step
from client.boards import board_of
from tabletop.lobby.v1 import lobby_pb2


def archived(
    game: str,
    names: list[str],
    end: str,
    winners: list[int] | None,
    scores: dict[int, float] | None = None,
    detail: dict[str, Any] | None = None,
    moves: int = 3,
) -> lobby_pb2.ArchivedGame:
    record = lobby_pb2.ArchivedGame(
        game_id=f"{game}-0123456789abcdef",
        game=game,
        end=end,
        seats=[
            lobby_pb2.ArchivedSeat(index=i, player_id=f"a-{i:016x}", name=name)
            for i, name in enumerate(names)
        ],
        moves=[
            lobby_pb2.ArchivedMove(version=v, seat=(v - 1) % 2, move=f"m{v}")
            for v in range(1, moves + 1)
        ],
    )
    if winners is not None:
        record.result.winners.extend(winners)
        for seat, score in (scores or {}).items():
            record.result.scores[seat] = score
        record.result.detail.update({"reason": end, **(detail or {})})
    return record


def test_a_win_by_resignation_names_the_winner_the_places_and_who_resigned() -> None:
    record = archived("esoloe", ["alice", "bob"], "resignation", [0])
    assert ending(record, board_of("esoloe")) == [
        "result: alice wins: bob resigned",
        "places: 1. alice, 2. bob",
        "ended: by resignation: bob resigned",
    ]


def test_a_loss_on_time_says_who_ran_out_of_time() -> None:
    record = archived("zoxso", ["alice", "bob"], "timeout", [1], {0: 0.0, 1: 1.0}, {"seat": 0})
    assert ending(record, board_of("zoxso")) == [
        "result: bob wins",
        "places: 1. bob, 2. alice",  # ZoxSo's scores say only who won: not shown
        "ended: on time: alice ran out of time",
    ]


def test_solo_places_by_points_ties_share_a_place() -> None:
    record = archived(
        "solo", ["ann", "bob", "cal", "dan"], "below_zero", [2],
        {0: 150.0, 1: 150.0, 2: 320.0, 3: -20.0},
    )  # fmt: skip
    lines = ending(record, board_of("solo"))
    assert lines[1] == "places: 1. cal 320, 2. ann 150, 2. bob 150, 4. dan -20"
    assert lines[2] == "ended: played to the end: a player's points went below zero"
    assert [place for place, _ in places(record)] == [1, 2, 2, 4]


def test_a_draw_and_a_game_the_platform_ended() -> None:
    draw = archived("esoloe", ["alice", "bob"], "no_legal_placement", [])
    lines = ending(draw, board_of("esoloe"))
    assert lines[0].startswith("result: a draw")
    assert lines[1:] == [
        "places: 1. alice, 1. bob",
        "ended: played to the end: no legal placement was left",
    ]
    aborted = archived("esoloe", ["alice", "bob"], "aborted", [])
    assert ending(aborted, board_of("esoloe")) == [
        "ended: aborted before it got under way: no result"
    ]
    assert places(aborted) == []


def test_seats_of_one_name_are_told_apart() -> None:
    record = archived("esoloe", ["alice", "alice"], "win", [1])
    assert ending(record, board_of("esoloe"))[1] == "places: 1. alice (seat 1), 2. alice (seat 0)"
    assert move_line(record, 2) == "2. alice (seat 1): m2"
    assert move_line(record, 0) == "0. the start"


@pytest.mark.parametrize(
    ("at", "command", "reached"),
    [
        (0, "", 1),
        (0, "n", 1),
        (5, "next", 5),
        (3, "p", 2),
        (0, "p", 0),
        (3, "first", 0),
        (3, "LAST", 5),
        (3, " 4 ", 4),
        (3, "40", 5),
        (3, "q", None),
    ],
)
def test_stepping_goes_where_the_command_says_within_the_game(
    at: int, command: str, reached: int | None
) -> None:
    assert step(at, 5, command) == reached


def test_an_unknown_command_is_refused() -> None:
    with pytest.raises(ValueError, match="jump"):
        step(2, 5, "jump")


async def test_browsing_shows_each_move_reached_until_quit() -> None:
    shown: list[int] = []
    said: list[str] = []
    typed = iter(["n", "n", "last", "n", "what", "p", "first", "3", "q", "n"])
    prompts: list[str] = []

    async def show(version: int) -> None:
        shown.append(version)

    async def read(prompt: str) -> str | None:
        prompts.append(prompt)
        return next(typed, None)

    assert await browse(5, show, read, said.append) == 3
    assert shown == [0, 1, 2, 5, 4, 0, 3]
    assert said == ["that is the last move", STEP_HELP]
    assert prompts[0] == "move 0 of 5 (n, p, first, last, N, q): "
    assert prompts[-1].startswith("move 3 of 5")


async def test_browsing_ends_with_the_input() -> None:
    shown: list[int] = []

    async def show(version: int) -> None:
        shown.append(version)

    async def read(prompt: str) -> str | None:
        return None

    assert await browse(2, show, read, print) == 0
    assert shown == [0]
