"""What a new player met at the terminal client: `tabletop hotseat` reading lines as `play`
does, clocks said once and when they matter, Solace's `stop` asked first, typos explained as
typed with the nearest moves, `tabletop watch GAME` saying what its new game costs, a closed
output, the boards in plain text. The client runs as a separate process against the real
gateway, game services, Redis and a bot worker."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import sys
from pathlib import Path

import pytest

from client.session import Session
from tabletop.common.v1 import common_pb2
from tabletop.solo.v1 import solo_pb2
from tests.integration.test_client import (
    SHORT_SOLO,
    platform,
    public_status,
    state_dir,
    tabletop,
)
from tests.integration.test_client_rejoin import LiveClient
from tests.platform import Platform
from tests.timing import patience

pytestmark = pytest.mark.integration

__all__ = ["platform", "state_dir"]  # the fixtures of tests/integration/test_client.py

ROOT = Path(__file__).resolve().parents[2]


# ---- 1, 9: people at one terminal


async def test_hotseat_reads_lines_as_play_does(platform: Platform) -> None:
    """Case forgiven, `clock` a command, typos explained with the closest moves, `resign`
    asked first, seats called by the players' names."""
    script = "E14\nclock\nc19\nresign\nno\nc12\nresign\nyes\n"
    run = await tabletop(platform, "hotseat", "esoloe", script=script)
    assert run.code == 0, run.err
    assert "player 1 in seat 0 (front), player 2 in seat 1 (back)" in run.out
    assert "read 'E14' as 'e14'" in run.out
    assert "#1 player 1 played e14: a cube on e at level 1" in run.out
    assert re.search(r"^clocks: player 1 \d:\d\d", run.out, flags=re.MULTILINE), run.out
    assert (
        "not a move: front face '9' is not a face; faces are 1..6. closest legal moves: c12, c13, "
        in run.out
    )
    assert run.out.count(f"resign game {run.game_id} for player 2? type yes") == 1
    assert "not resigned; the game goes on" in run.out
    assert "#2 player 2 played c12" in run.out
    assert f"resign game {run.game_id} for player 1? type yes" in run.out
    assert "game over. player 2 wins: player 1 resigned" in run.out
    assert "player 2 to move: type a move" in run.out
    assert not re.search(r"hotseat \(seat|MALFORMED_MOVE|INVALID_ARGUMENT|refused \(", run.out)
    status = await public_status(platform, "esoloe", run.game_id)
    assert status.finished
    assert status.version == 3  # e14, c12 and the resignation: nothing else was sent


async def test_zoxso_is_played_at_one_terminal_and_games_that_hide_things_are_not(
    platform: Platform,
) -> None:
    run = await tabletop(platform, "hotseat", "zoxso", "--names", "Ada,Bob", script="m@b2\nD@a1\n")
    assert run.code == 0, run.err
    assert "Ada in seat 0 (Dark), Bob in seat 1 (Light)" in run.out
    assert "#1 Dark (Ada) placed a Ma on b2" in run.out
    assert "#2 Light (Bob) placed a Dao on a1" in run.out
    assert "Dark (Ada) to move: type a move" in run.out
    assert f"you left game {run.game_id}" in run.out
    status = await public_status(platform, "zoxso", run.game_id)
    assert status.version == 2
    solo = await tabletop(platform, "hotseat", "solo")
    assert solo.code == 2
    assert "solo is not played at one terminal: it hides things" in solo.err
    assert "hotseat games: esoloe, zoxso" in solo.err
    solace = await tabletop(platform, "hotseat", "solace")
    assert solace.code == 2
    assert "solace is played alone: `tabletop play solace`" in solace.err


# ---- 4: clocks


async def test_the_clock_line_says_a_bots_move_starts_no_clock(platform: Platform) -> None:
    run = await tabletop(platform, "play", "esoloe", "--seat", "1", script="wait\nclock\nquit\n")
    assert run.code == 0, run.err
    status = await public_status(platform, "esoloe", run.game_id)
    assert status.version == 1  # the bot moved
    assert "they start at your first move" in run.out
    assert "aborted in " in run.out
    assert "someone moves" not in run.out


async def test_the_clocks_are_shown_when_the_turn_comes_or_goes_not_after_every_move(
    platform: Platform,
) -> None:
    """At a Solo table of four, the clocks are shown as the player's turn comes (with the
    board) or goes (a bot jumping in takes it): never after a bot's move that leaves the turn
    to another bot."""
    client = await LiveClient.start(
        platform, "play", "solo", "--bots", "3", "--level", "greedy",
        "--options", json.dumps(SHORT_SOLO),
    )  # fmt: skip
    await client.expect(r"^your turn")
    client.type("auto")  # the player's first legal move on each turn, as soon as it comes
    await client.expect(r"^auto: (.|\n)*^auto: (.|\n)*^auto: (.|\n)*^auto: |^game over", 60)
    client.type("quit")
    run = await client.end()
    assert run.code == 0, run.err
    lines = run.out.splitlines()
    bots = [i for i, line in enumerate(lines) if re.match(r"#\d+ greedy bot", line)]
    assert len(bots) >= 2, run.out

    def took_the_players_turn(index: int) -> bool:
        """Whether the bot's move at `index` jumped in while the player's clock ran."""
        shown = [line for line in lines[:index] if line.startswith("clocks: ")]
        return "jumped in" in lines[index] and bool(shown and re.search(r"you \S+ ▶", shown[-1]))

    after = [lines[i + 1] for i in bots if i + 1 < len(lines) and not took_the_players_turn(i)]
    assert not [line for line in after if line.startswith("clocks: ")], run.out


async def test_hurry_comes_when_little_of_a_short_turn_is_left(platform: Platform) -> None:
    """An 8-second move is told to hurry at 2 s left (a quarter of it), not as it starts."""
    client = await LiveClient.start(platform, "play", "esoloe", "--seat", "0", "--move-time", "8")
    await client.expect(r"^your turn")
    client.type("c12")  # the first move of a person starts the clocks
    await client.expect(r"^#2 random bot played")
    found = await client.expect(r"^hurry: 0:0(\d\.\d) left to move", timeout=30)
    assert float(found.group(1)) <= 2.0, client.out
    await client.expect(r"you ran out of time and forfeit", timeout=30)
    run = await client.end()
    assert run.code == 0, run.err
    assert run.out.count("hurry: ") == 1


# ---- 5: Solace's stop


async def test_solace_stop_asks_first(platform: Platform) -> None:
    run = await tabletop(platform, "play", "solace", script="stop\nno\nSTOP\nyes\n")
    assert run.code == 0, run.err
    question = "stop now and end the game with 0 promoted towers? type yes"
    assert run.out.count(question) == 2
    assert "stop not played; the game goes on" in run.out
    assert run.out.index("stop not played") < run.out.index("#1 you stopped")
    assert "game over. you stopped with 0 promoted towers" in run.out
    status = await public_status(platform, "solace", run.game_id)
    assert status.finished
    assert status.version == 1  # one stop: the one confirmed


# ---- 6: typos


async def test_typos_are_explained_as_typed_with_the_nearest_moves(platform: Platform) -> None:
    run = await tabletop(platform, "play", "esoloe", "--seat", "0", script="z12\nc19\nquit\n")
    assert run.code == 0, run.err
    assert "square 'z' does not exist; squares are a..e (in any case)" in run.out
    assert "front face '9' is not a face; faces are 1..6. closest legal moves: c12, c13" in run.out
    solo = await tabletop(
        platform, "play", "solo", "--bots", "1", "--options", json.dumps(SHORT_SOLO),
        script="hello there\nquit\n",
    )  # fmt: skip
    assert solo.code == 0, solo.err
    assert "not a move: 'hello there' is not a Solo move" in solo.out
    assert "play hello" not in solo.out
    for game_id, game in ((run.game_id, "esoloe"), (solo.game_id, "solo")):
        status = await public_status(platform, game, game_id)
        assert not status.finished


# ---- 7: watching a game of bots


async def _watched_options(platform: Platform, game_id: str) -> solo_pb2.View:
    referee = Session(platform.target)
    await referee.login("referee")
    try:
        reply = await referee.game("solo").GetView(
            common_pb2.GetViewRequest(game_id=game_id, public=True), metadata=referee.metadata
        )
    finally:
        await referee.close()
    view: solo_pb2.View = reply.view
    return view


async def test_watching_a_new_game_says_what_it_is_and_that_it_goes_on(
    platform: Platform,
) -> None:
    client = await LiveClient.start(platform, "watch", "solo")
    found = await client.expect(r"^watching solo game (\S+); `tabletop stop \S+` ends it\. A new")
    game_id = found.group(1)
    await client.expect(r"counts among your live games until it ends, and it goes on if you")
    await client.expect(r"^Solo, round 1 of 1")  # a short game
    client.type("quit")
    run = await client.end()
    assert run.code == 0, run.err
    assert f"stopped watching game {game_id}; it goes on" in run.out
    assert "(mode rounds, rounds 1: a short game; --options sets others)" in run.out
    view = await _watched_options(platform, game_id)
    assert (view.mode, view.rounds) == (solo_pb2.MODE_ROUNDS, 1)

    client = await LiveClient.start(platform, "watch", "solo")
    game_id = (await client.expect(r"^watching solo game (\S+);")).group(1)
    await client.expect(r"^#1 ")
    client.process.send_signal(signal.SIGINT)
    run = await client.end()
    assert run.code == 130, run.err
    assert f"stopped watching game {game_id}; it goes on: the bots play it to its end" in run.out
    assert f"(`tabletop stop {game_id}` ends it; `tabletop watch solo {game_id}`" in run.out


# ---- 8: a closed output


async def test_a_closed_output_ends_the_command_quietly(platform: Platform) -> None:
    """`tabletop games | head -4` once `head` has gone: no traceback."""
    first = await tabletop(platform, "play", "solace", script="quit\n")
    assert first.code == 0, first.err
    read, write = os.pipe()
    os.close(read)  # the reader is gone before anything is written
    try:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "client.cli", "games", "--gateway", platform.target,
            stdin=asyncio.subprocess.DEVNULL, stdout=write, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
    finally:
        os.close(write)
    _, err = await asyncio.wait_for(process.communicate(), patience(30))
    assert err.decode() == ""
    assert process.returncode == 128 + signal.SIGPIPE


# ---- 10: boards in plain text


async def test_esoloe_marks_both_sides_cubes_in_plain_text(platform: Platform) -> None:
    run = await tabletop(platform, "hotseat", "esoloe", "e14", "a12")
    assert run.code == 0, run.err
    lines = [line.rstrip() for line in run.out.splitlines()]
    assert "1  2o .  .  .  #x   1  3x .  .  .  #o   1  #o   1  2x" in lines  # front, back, L, R
    assert "       1o  .   .   .   1x" in lines  # the upper view
    assert "x marks the front seat's cubes (player 1), o the back seat's (player 2)" in run.out


async def test_the_zoxso_board_is_drawn_as_the_rules_draw_it(platform: Platform) -> None:
    run = await tabletop(platform, "play", "zoxso", "--seat", "0", script="quit\n")
    assert run.code == 0, run.err
    rules = (ROOT / "docs" / "rules" / "zoxso.md").read_text()
    drawn = re.search(r"```text\n(.*?)```", rules, flags=re.DOTALL)  # the empty board
    assert drawn is not None
    picture = [line for line in drawn.group(1).splitlines() if re.match(r"( ?\d|   a)", line)]
    assert len(picture) == 16
    shown = "\n".join(line.rstrip() for line in run.out.splitlines())
    assert "\n".join(picture) in shown, shown
    assert "= and | the Wall (+ an empty Pearl inside it); [..] the Throne D4" in rules
