"""Coming back to a game with the `tabletop` client: the saved identity, `tabletop games`,
`tabletop play --game ID` after the client was killed, and how a player leaves (quit, end of
input, Ctrl-C). The client runs as a separate process against the real gateway, game services,
Redis and a bot worker."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import sys
from pathlib import Path

import pytest
from redis.asyncio import Redis

from client.identity import identity_file, load_identity
from client.session import Session
from services.game.store import GameStore
from tabletop.common.v1 import common_pb2
from tests.integration.test_client import GAMES, Run, platform, public_status, state_dir
from tests.platform import Platform, logged_in, resign_for_good
from tests.timing import eventually, patience

pytestmark = pytest.mark.integration

START_ARGS = {
    "esoloe": ["--seat", "0"],
    "solo": ["--bots", "1", "--options", '{"mode": "rounds", "rounds": 1}'],
    "solace": [],
    "zoxso": ["--options", '{"max_plies": 60}'],
}
SEAT_LABELS = {"esoloe": r"0 \(front\)", "zoxso": r"\d \((Dark|Light)\)"}


__all__ = ["platform", "state_dir"]  # the fixtures of tests/integration/test_client.py


class LiveClient:
    """`tabletop ...` running with a pipe for its input that stays open until closed, its
    output read as it comes."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.out = ""
        self._reader = asyncio.create_task(self._read())

    @classmethod
    async def start(cls, platform: Platform, *args: str) -> LiveClient:
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "client.cli", *args, "--gateway", platform.target,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env={**os.environ, "PYTHONIOENCODING": "utf-8"},
        )  # fmt: skip
        return cls(process)

    async def _read(self) -> None:
        assert self.process.stdout is not None
        while chunk := await self.process.stdout.read(4096):
            self.out += chunk.decode(errors="replace")

    async def expect(self, pattern: str, timeout: float = 20) -> re.Match[str]:
        async def seen() -> re.Match[str]:
            while not (found := re.search(pattern, self.out, flags=re.MULTILINE)):
                if self._reader.done():
                    raise AssertionError(f"{pattern!r} never came:\n{self.out}")
                await asyncio.sleep(0.05)
            return found

        try:
            return await asyncio.wait_for(seen(), patience(timeout))
        except TimeoutError:
            raise AssertionError(
                f"{pattern!r} not within {patience(timeout):.0f} s:\n{self.out}"
            ) from None

    def type(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line.encode() + b"\n")

    async def end(self, timeout: float = 20) -> Run:
        """Wait for the process to exit (killing it after `patience(timeout)`)."""
        try:
            await asyncio.wait_for(self.process.wait(), patience(timeout))
        except TimeoutError:
            raise AssertionError(
                f"still running after {patience(timeout):.0f} s; its output:\n{self.out}"
            ) from None
        finally:
            if self.process.returncode is None:
                self.process.kill()
                await self.process.wait()
        await self._reader
        assert self.process.stderr is not None
        err = (await self.process.stderr.read()).decode(errors="replace")
        assert self.process.returncode is not None
        return Run(self.process.returncode, self.out, err)


async def tabletop(platform: Platform, *args: str, script: str = "") -> Run:
    client = await LiveClient.start(platform, *args)
    assert client.process.stdin is not None
    client.process.stdin.write(script.encode())
    client.process.stdin.close()
    return await client.end(timeout=40)


@pytest.mark.parametrize("game", GAMES)
async def test_a_killed_client_sits_back_down_in_its_seat_and_finishes(
    platform: Platform, game: str
) -> None:
    first = await LiveClient.start(platform, "play", game, *START_ARGS[game], "--name", "Ada")
    found = await first.expect(r"^\w+ game (\S+), you are seat (\d+)")
    game_id, seat = found.group(1), int(found.group(2))
    await first.expect(r"your turn|to move")
    if game == "esoloe":  # make a move of our own before the crash (seat 0 moves first)
        first.type("C12")
        await first.expect(r"^#1 you played c12")
    first.process.kill()  # SIGKILL: nothing is said, nothing is saved
    killed = await first.end()
    assert killed.code == -signal.SIGKILL
    status = await public_status(platform, game, game_id)
    assert not status.finished

    listed = await tabletop(platform, "games")
    assert listed.code == 0, listed.err
    row = next(line for line in listed.out.splitlines() if game_id in line)
    label = SEAT_LABELS.get(game, str(seat))
    assert re.search(rf"^{game}\s+{game_id}\s+{label}\s", row), listed.out
    assert "live: " in row, row
    live = await tabletop(platform, "games", "--live")
    assert game_id in live.out, live.out

    back = await tabletop(platform, "play", "--game", game_id, script="auto\n")
    assert back.code == 0, back.err
    assert f"{game} game {game_id}, you are back in seat {seat}" in back.out
    assert "playing as Ada" in back.out
    history = r"^(the last moves \(of \d+\):|the moves so far:|no move has been played yet)$"
    assert re.search(history, back.out, flags=re.MULTILINE), back.out
    assert back.out.count("game over") == 1
    final = await public_status(platform, game, game_id)
    assert final.finished
    saved = load_identity(platform.target)
    assert saved is not None
    assert final.seats[seat].player_id == saved.player_id  # the same player, back in the seat
    assert final.seats[seat].name == "Ada"


async def test_the_saved_identity_is_reused_renewed_when_refused_and_changed_by_name(
    platform: Platform, state_dir: Path
) -> None:
    first = await tabletop(platform, "play", "solace", "--name", "Ada", script="quit\n")
    assert first.code == 0, first.err
    saved = load_identity(platform.target)
    assert saved is not None
    assert saved.name == "Ada"
    assert os.stat(identity_file()).st_mode & 0o077 == 0  # the owner's only

    again = await tabletop(platform, "play", "solace", script="quit\n")  # no --name: same player
    assert "playing as Ada" in again.out
    assert load_identity(platform.target) == saved

    # A token the gateway refuses (signed elsewhere, say): UNAUTHENTICATED, so log in again.
    data = json.loads(identity_file().read_text())
    data["gateways"][platform.target]["token"] = "not-a-token"
    identity_file().write_text(json.dumps(data))
    refused = await tabletop(platform, "play", "solace", script="quit\n")
    assert refused.code == 0, refused.err
    renewed = load_identity(platform.target)
    assert renewed is not None
    assert renewed.name == "Ada"
    assert renewed.token not in ("not-a-token", saved.token)

    other = await tabletop(platform, "play", "solace", "--name", "Bea", script="quit\n")
    assert other.code == 0, other.err
    assert "playing as Bea" in other.out
    changed = load_identity(platform.target)
    assert changed is not None
    assert changed.player_id != renewed.player_id

    games = await tabletop(platform, "games")
    assert "Bea's games" in games.out
    assert other.game_id in games.out
    assert first.game_id not in games.out  # Ada's game is not Bea's
    refused_seat = await tabletop(platform, "play", "--game", first.game_id)
    assert refused_seat.code == 2
    assert f"hold no seat in game {first.game_id}" in refused_seat.err


async def test_no_games_yet_and_bad_ids_are_explained(platform: Platform) -> None:
    empty = await tabletop(platform, "games")
    assert empty.code == 0, empty.err
    assert "no games" in empty.out
    bad = await tabletop(platform, "play", "--game", "chess-123")
    assert bad.code == 2
    assert "'chess-123' is not a game id" in bad.err
    mismatch = await tabletop(platform, "play", "solo", "--game", "zoxso-" + "0" * 20)
    assert mismatch.code == 2
    assert "is a zoxso game, not solo" in mismatch.err
    missing = await tabletop(platform, "play", "--game", "zoxso-" + "0" * 20)
    assert missing.code == 1
    assert "GAME_NOT_FOUND" in missing.err


async def test_ctrl_c_leaves_with_the_way_back(platform: Platform) -> None:
    client = await LiveClient.start(platform, "play", "zoxso", "--seat", "1")
    game_id = (await client.expect(r"^zoxso game (\S+),")).group(1)
    await client.expect(r"your turn")
    client.process.send_signal(signal.SIGINT)
    run = await client.end()
    assert run.code == 130, run.err
    assert (
        f"you left game {game_id}; it goes on: rejoin with `tabletop play --game {game_id}`"
        in run.out
    )
    assert "Traceback" not in run.err
    assert run.err == ""
    status = await public_status(platform, "zoxso", game_id)
    assert not status.finished


async def test_end_of_input_and_quit_leave_with_the_way_back(platform: Platform) -> None:
    for script in ("", "Quit\n"):
        run = await tabletop(platform, "play", "esoloe", "--seat", "1", script=script)
        assert run.code == 0, run.err
        assert (
            f"you left game {run.game_id}; it goes on: rejoin with "
            f"`tabletop play --game {run.game_id}`" in run.out
        )


async def test_a_rejoined_game_shows_where_it_is(platform: Platform) -> None:
    first = await tabletop(platform, "play", "esoloe", "--seat", "0", script="c12\nwait\nquit\n")
    assert first.code == 0, first.err
    back = await tabletop(platform, "play", "--game", first.game_id, script="board\nquit\n")
    assert back.code == 0, back.err
    assert "the moves so far:\n#1 you played c12: a cube on c at level 1" in back.out
    assert re.search(r"^#2 random bot played [a-e]\d\d", back.out, flags=re.MULTILINE)
    assert "upper" in back.out  # the board
    assert "your turn: type a move" in back.out
    status = await public_status(platform, "esoloe", first.game_id)
    assert status.version == 2
    assert list(status.to_act) == [0]
    assert isinstance(status, common_pb2.GameStatus)


async def test_rejoining_takes_the_seat_back_from_the_bot_that_played_it(
    platform: Platform,
) -> None:
    """A player who left a game whose time control gives a seat out of time to a bot comes
    back with `tabletop play --game ID`: the client takes the seat back (TakeSeat) and says so,
    and the game's log holds the take-back."""
    timed = ["--move-time", "1", "--on-timeout", "bot", "--timeout-level", "random"]
    # One move (the clocks run from a person's first move), then the player leaves.
    left = await tabletop(
        platform, "play", "solo", "--bots", "1", "--seat", "0", *timed, script="draw\n"
    )
    assert left.code == 0, left.err
    game_id = left.game_id

    (referee,) = await logged_in(platform, "referee")

    async def taken_over() -> bool:
        reply = await referee.game("solo").GetView(
            common_pb2.GetViewRequest(game_id=game_id, public=True), metadata=referee.metadata
        )
        return reply.status.seats[0].bot and not reply.status.finished

    await eventually(taken_over, 20, "the seat taken over by a bot")
    await referee.close()
    back = await tabletop(platform, "play", "--game", game_id, script="quit\n")
    assert back.code == 0, back.err
    assert "a bot played your seat since your time ran out: you take it back now" in back.out
    assert f"solo game {game_id}, you are back in seat 0" in back.out
    redis = Redis.from_url(platform.redis_url)
    try:
        log = await GameStore(redis).entries(game_id, 0, count=100_000)
    finally:
        await redis.aclose()
    assert [e.actor for e in log if e.move == "take_seat"] == [0]
    saved = load_identity(platform.target)
    assert saved is not None
    player = Session(platform.target)
    player.token, player.player_id = saved.token, saved.player_id
    try:
        await resign_for_good(player, "solo", game_id)
    finally:
        await player.close()
