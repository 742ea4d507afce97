"""The terminal client (`tabletop play`, `tabletop watch`, `tabletop stop`) driven by scripted
input, as a separate process, against the real gateway, game services, Redis and bot workers."""

from __future__ import annotations

import asyncio
import io
import json
import os
import re
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
import pytest_asyncio
from rich.console import Console

from client.play import Table, game_options, with_bots
from client.runner import UsageError
from client.session import Session
from gateway.server import Gateway
from tabletop.common.v1 import common_pb2
from tabletop.esoloe.v1 import esoloe_pb2
from tabletop.lobby.v1 import lobby_pb2, lobby_pb2_grpc
from tabletop.solo.v1 import solo_pb2
from tests.platform import Platform, logged_in, watch_all
from tests.timing import patience

pytestmark = pytest.mark.integration

GAMES = ("esoloe", "solo", "solace", "zoxso")
SHORT_SOLO = {"mode": "rounds", "rounds": 1}


@dataclass
class Run:
    code: int
    out: str
    err: str

    @property
    def game_id(self) -> str:
        found = re.search(r"game (\S+)(?:,|$)", self.out, flags=re.MULTILINE)
        assert found, self.out
        return found.group(1)


@pytest_asyncio.fixture
async def platform(redis_url: str) -> AsyncIterator[Platform]:
    async with Platform(redis_url, games=GAMES, bot_workers=1) as running:
        yield running


@pytest.fixture(autouse=True)
def state_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Each test's client keeps its identity in a directory of its own (the subprocesses inherit
    the environment)."""
    directory = tmp_path / "state"
    monkeypatch.setenv("TABLETOP_STATE_DIR", str(directory))
    return directory


async def tabletop(
    platform: Platform,
    *args: str,
    script: str = "",
    gateway_flag: str = "--gateway",
    state: Path | None = None,
) -> Run:
    """Run the `tabletop` command with `script` as its standard input (a pipe, not a TTY);
    `state`: another state directory than the test's (another machine of the player)."""
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    if state is not None:
        env["TABLETOP_STATE_DIR"] = str(state)
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "client.cli", *args, gateway_flag, platform.target,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )  # fmt: skip
    try:
        out, err = await asyncio.wait_for(process.communicate(script.encode()), patience(30))
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert process.returncode is not None
    return Run(process.returncode, out.decode(), err.decode())


async def public_status(platform: Platform, game: str, game_id: str) -> common_pb2.GameStatus:
    spectator = Session(platform.target)
    await spectator.login("referee")
    try:
        reply = await spectator.game(game).GetView(
            common_pb2.GetViewRequest(game_id=game_id, public=True), metadata=spectator.metadata
        )
    finally:
        await spectator.close()
    status: common_pb2.GameStatus = reply.status
    return status


FULL_GAME_ARGS = {
    "esoloe": [],
    "solo": ["--bots", "1", "--options", json.dumps(SHORT_SOLO)],
    "solace": [],
    "zoxso": ["--options", '{"max_plies": 60}'],
}
PRIVATE = r"dealt|drew \d+ cards?(?: \([^)]*\))?: "
"""A Solo sentence that shows cards: dealt ones, drawn ones."""
BOARD_MARKS = {"esoloe": "upper", "solo": "your hand", "solace": "C5", "zoxso": "Throne D4"}


@pytest.mark.parametrize("game", GAMES)
async def test_a_whole_game_against_bots(platform: Platform, game: str) -> None:
    run = await tabletop(platform, "play", game, *FULL_GAME_ARGS[game], script="auto\n")
    assert run.code == 0, run.err
    status = await public_status(platform, game, run.game_id)
    assert status.finished
    seat = int(re.search(r"you are seat (\d+)", run.out).group(1))  # type: ignore[union-attr]
    assert status.seats[seat].player_id.startswith("tester") is False  # a guest id, not the name
    assert BOARD_MARKS[game] in run.out
    assert f"#{status.version} " in run.out  # every move was shown, up to the last one
    assert run.out.count("game over") == 1
    assert not re.search(r"\bp-[0-9a-f]{6,}|bot-random-|target 0|[a-z]_[a-z]+:", run.out)
    movers = re.findall(r"^#\d+ (you|random bot|Dark|Light)", run.out, flags=re.MULTILINE)
    assert "you" in movers or "Dark" in movers or "Light" in movers, run.out  # names, not ids
    if game == "solo":  # private events (dealt cards, drawn cards) reach their own seat only (S14)
        sentences = [s for line in run.out.splitlines() for s in line.split("; ")]
        private = [s for s in sentences if re.search(PRIVATE, s)]
        assert all(re.match(r"(#\d+ )?you (were dealt|drew)", s) for s in private), private
        if any(re.match(r"(#\d+ )?you drew", s) for s in sentences):  # a round may end first
            assert private, run.out


async def test_help_lists_the_legal_moves_and_refusals_are_explained(platform: Platform) -> None:
    script = "help\nB9-B1\nB1-B1\nquit\n"
    run = await tabletop(platform, "play", "solace", script=script)
    assert run.code == 0, run.err
    listed = re.search(r"legal moves \((\d+)\): (.*)", run.out)
    assert listed, run.out
    moves = listed.group(2).split(", ")
    assert len(moves) == int(listed.group(1))
    assert "stop" in moves
    assert all(re.fullmatch(r"[BC][1-5]-[BC][1-5]|stop", move) for move in moves)
    # Not notation: refused before sending, with the engine's explanation.
    assert "not a move: 'B9-B1' is not a Solace move; moves are FROM-TO" in run.out
    # Notation, but illegal: the server's refusal, reason and message.
    assert "refused by the server (ILLEGAL_MOVE): B1-B1 goes nowhere" in run.out
    assert "closest legal moves: " in run.out  # suggestions follow the refusal
    assert (
        f"you left game {run.game_id}; it goes on: rejoin with "
        f"`tabletop play --game {run.game_id}`" in run.out
    )
    status = await public_status(platform, "solace", run.game_id)
    assert status.version == 0  # neither refused move changed the game
    assert not status.finished


async def test_resign_asks_first_then_ends_the_game(platform: Platform) -> None:
    script = "c12\nresign\nno\nRESIGN\nyes\n"
    run = await tabletop(platform, "play", "esoloe", "--seat", "0", script=script)
    assert run.code == 0, run.err
    assert "#1 you played c12" in run.out
    assert run.out.count(f"resign game {run.game_id}? type yes") == 2
    assert "not resigned; the game goes on" in run.out
    assert "you resigned" in run.out
    assert "game over. random bot wins: you resigned" in run.out
    assert run.out.count("game over") == 1
    status = await public_status(platform, "esoloe", run.game_id)
    assert status.finished
    assert list(status.result.winners) == [1]


async def test_a_spectator_watches_the_public_board_and_can_replay_it(platform: Platform) -> None:
    session = Session(platform.target)
    await session.login("host")
    lobby = lobby_pb2_grpc.LobbyServiceStub(session.channel)
    options = solo_pb2.Options(players=2, mode=solo_pb2.MODE_ROUNDS, rounds=1)
    reply = await lobby.PlayAgainstBots(
        lobby_pb2.PlayAgainstBotsRequest(
            game="solo",
            watch_only=True,
            options=lobby_pb2.GameOptions(solo=options),
            level="greedy",  # random bots draw at random: a round can last thousands of moves
        ),
        metadata=session.metadata,
    )
    game_id = reply.status.game_id
    live = await tabletop(platform, "watch", "solo", game_id)
    assert live.code == 0, live.err
    log = await watch_all(session, "solo", game_id, public=True)
    await session.close()
    assert log[-1].status.finished
    replayed = await tabletop(platform, "watch", "solo", game_id)
    for run in (live, replayed):  # live, then replayed
        assert run.code == 0, run.err
        shown = re.findall(r"^#(\d+) ", run.out, flags=re.MULTILINE)
        assert shown == [str(update.envelope.version) for update in log]
        assert "#0 the game begins; round 1 begins" in run.out  # Solo's opening events
        assert "top card" in run.out  # the public board
        assert "your hand" not in run.out
        assert not re.search(PRIVATE, run.out)  # no seat's private cards (S14)
        assert run.out.count("game over") == 1
        assert re.search(r"game over\. greedy bot \(seat \d\) wins with \d+ points", run.out)


def test_bots_and_options_are_checked_before_asking_the_gateway() -> None:
    assert with_bots("solo", SHORT_SOLO, 3) == {**SHORT_SOLO, "players": 4}
    assert with_bots("esoloe", None, 1) == {}
    with pytest.raises(UsageError, match="esoloe is played by 2: --bots must be 1"):
        with_bots("esoloe", None, 3)
    with pytest.raises(UsageError, match=re.escape("--bots must be 1..9")):
        with_bots("solo", None, 10)
    options = game_options("solo", {"players": 2, "mode": "rounds", "rounds": 1})
    assert options.solo == solo_pb2.Options(players=2, mode=solo_pb2.MODE_ROUNDS, rounds=1)
    with pytest.raises(UsageError, match="unknown option 'plies'; zoxso options are: max_plies"):
        game_options("zoxso", {"plies": 3})


async def test_an_unreachable_gateway_or_a_bad_request_exits_with_a_message(
    platform: Platform,
) -> None:
    run = await tabletop(platform, "play", "esoloe", "--bots", "2")
    assert run.code == 2
    assert "esoloe is played by 2" in run.err
    run = await tabletop(platform, "watch", "zoxso", "zoxso-" + "0" * 20)
    assert run.code == 1
    assert "GAME_NOT_FOUND" in run.err


async def test_the_watcher_of_a_game_of_bots_stops_it(platform: Platform, tmp_path: Path) -> None:
    """`tabletop watch esoloe` makes a game of (strong, so slow) bots and says how to stop it;
    `tabletop stop ID` from the same player ends it, and the watch shows the stop and exits.
    Another player's stop is refused."""
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    watch = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "client.cli", "watch", "esoloe", "--level", "strong",
        "--gateway", platform.target,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )  # fmt: skip
    try:
        assert watch.stdout is not None
        first = (await asyncio.wait_for(watch.stdout.readline(), patience(30))).decode()
        found = re.search(r"watching esoloe game (\S+); `tabletop stop (\S+)` ends it", first)
        assert found, first
        game_id = found.group(1)
        assert found.group(2) == game_id
        nobody = await tabletop(platform, "stop", game_id, state=tmp_path / "nobody")
        assert nobody.code == 2
        assert "only the player who watches a game of bots may stop it" in nobody.err
        elsewhere = tmp_path / "elsewhere"  # another player, who played a game of their own
        played = await tabletop(platform, "play", "esoloe", script="quit\n", state=elsewhere)
        assert played.code == 0, played.err
        stranger = await tabletop(platform, "stop", game_id, state=elsewhere)
        assert stranger.code == 1
        assert "NOT_YOUR_GAME" in stranger.err
        stopped = await tabletop(platform, "stop", game_id)
        assert stopped.code == 0, stopped.err
        assert stopped.out.strip() == (
            f"esoloe game {game_id} is over: no result: stopped by the player watching the bots"
        )
        out, err = await asyncio.wait_for(watch.communicate(), patience(30))
    finally:
        if watch.returncode is None:
            watch.kill()
            await watch.wait()
    assert watch.returncode == 0, err.decode()
    assert "The player watching these bots stopped the game (no result" in out.decode()
    again = await tabletop(platform, "stop", game_id)  # over already: said again
    assert again.code == 0, again.err
    assert "is over: no result: stopped by the player watching the bots" in again.out
    bad = await tabletop(platform, "stop", "chess-123")
    assert bad.code == 2
    assert "is not a game id" in bad.err


async def test_hotseat_still_draws_the_esoloe_board(platform: Platform) -> None:
    run = await tabletop(platform, "hotseat", "esoloe", "c12", "c13", gateway_flag="--target")
    assert run.code == 0, run.err
    assert "#2 player 2 played c13" in run.out
    assert "front" in run.out
    assert "upper" in run.out


async def test_a_move_sent_while_the_gateway_restarts_is_played_once(redis_url: str) -> None:
    """The gateway goes away (a rolling update, a crash) as the player moves: the client tries
    again, waiting longer each time, and the move is played once, when the gateway is back."""
    async with Platform(redis_url) as platform:
        alice, bob = await logged_in(platform, "alice", "bob")
        created = await platform.create_game(
            "esoloe", esoloe_pb2.CreateGameRequest(players=[alice.player_id, bob.player_id])
        )
        game_id = created.status.game_id
        table = Table(alice, "esoloe", game_id, 0, Console(file=io.StringIO()))
        old = platform.gateway
        assert old is not None
        await old.stop(0)

        async def come_back() -> Gateway:
            await asyncio.sleep(1.5)  # nothing listens on the port meanwhile
            restarted = Gateway(replace(old.settings, listen=f"127.0.0.1:{old.port}"))
            await restarted.start()
            return restarted

        back = asyncio.create_task(come_back())
        try:
            assert await table.play("c12")
        finally:
            platform.gateway = await back  # the platform stops this one
        view = await bob.game("esoloe").GetView(
            common_pb2.GetViewRequest(game_id=game_id), metadata=bob.metadata
        )
        assert view.status.version == 1
        for session in (alice, bob):
            await session.close()
