"""Games of bots that people watch move at a pace they can follow: a table made with a bot pace
(`bot_pace_ms`; LobbyService.PlayAgainstBots gives a game made to be watched a move a second
unless it asks for another) has its bots let at least that long pass after each move before
they act. The pace is a table setting kept in the game's meta: no rule, no move, nothing in the
game's record. These tests run a bot worker as deployed (no cap on the pace, BOT_MAX_PACE_MS)
and measure the pace on the times the game service stored with each version: a lower bound
only, which a busy machine cannot break (it can only make bots slower)."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import grpc
import pytest
from redis.asyncio import Redis

from client.session import Session
from games.clock import MAX_BOT_PACE_MS, WATCHED_BOT_PACE_MS
from runtime import keys
from tabletop.common.v1 import common_pb2
from tabletop.lobby.v1 import lobby_pb2, lobby_pb2_grpc
from tests.platform import Platform, assert_refused, logged_in
from tests.timing import patience

pytestmark = pytest.mark.integration

MOVES = 4
"""Bot moves measured per game (the game is stopped then)."""


async def watched(
    session: Session, game: str, *, watch_only: bool = True, pace_ms: int | None = None
) -> str:
    """A game of random bots made for the session's player (every seat a bot with watch_only);
    its id."""
    request = lobby_pb2.PlayAgainstBotsRequest(game=game, watch_only=watch_only)
    if pace_ms is not None:
        request.bot_pace_ms = pace_ms
    lobby = lobby_pb2_grpc.LobbyServiceStub(session.channel)
    reply = await lobby.PlayAgainstBots(request, metadata=session.metadata)
    game_id: str = reply.status.game_id
    return game_id


async def stored_meta(redis_url: str, game_id: str) -> dict[str, Any]:
    redis = Redis.from_url(redis_url)
    try:
        meta: Any = await redis.hget(keys.game_state(game_id), "meta")
    finally:
        await redis.aclose()
    found: dict[str, Any] = json.loads(meta)
    return found


async def gaps_ms(session: Session, game: str, game_id: str, moves: int) -> list[int]:
    """The time between each of the game's first `moves` versions after its creation and the
    version before it, as the game service stored them (fewer when the game ends first); then
    the game is stopped."""
    times: list[int] = []
    finished = False
    updates = session.game(game).Watch(
        common_pb2.WatchRequest(game_id=game_id, from_version=0, public=True),
        metadata=session.metadata,
    )

    async def follow() -> None:
        nonlocal finished
        async for update in updates:
            times.append(update.envelope.time.ToMilliseconds())
            finished = update.status.finished
            if finished or len(times) > moves:
                break

    try:
        await asyncio.wait_for(follow(), patience(10 + moves * 5))
    finally:
        updates.cancel()
    if not finished:
        await session.game(game).StopGame(
            common_pb2.StopGameRequest(game_id=game_id), metadata=session.metadata
        )
    return [later - earlier for earlier, later in itertools.pairwise(times)]


@pytest.mark.parametrize("game", ["esoloe", "solo"])
async def test_bots_at_a_watched_table_keep_its_pace(redis_url: str, game: str) -> None:
    """A game of bots made to be watched keeps a move a second by default, or the pace it asked
    for: every bot move is stored at least that long after the version before it (in Solo,
    where every bot seat may jump in at any moment, too)."""
    async with Platform(redis_url, games=(game,)) as platform:
        await platform.start_bot_worker("as-deployed", max_bot_pace_ms=MAX_BOT_PACE_MS)
        (watcher,) = await logged_in(platform, "watcher")
        for asked, pace in ((None, WATCHED_BOT_PACE_MS), (400, 400)):
            gaps: list[int] = []
            while len(gaps) < MOVES:  # random bots may end a game sooner: another one then
                game_id = await watched(watcher, game, pace_ms=asked)
                assert (await stored_meta(redis_url, game_id))["bot_pace_ms"] == pace
                gaps += await gaps_ms(watcher, game, game_id, MOVES - len(gaps))
            assert min(gaps) >= pace, (pace, gaps)


async def test_a_table_without_a_pace_has_none(redis_url: str) -> None:
    """A person's own game against bots has no pace unless asked (bots answer at once, as
    ever), nor has a game of bots that asks for 0 (a program watching); the bot-turn jobs say
    so, and such a game of random bots plays on to its end. A pace out of bounds is refused."""
    async with Platform(redis_url, games=("esoloe",)) as platform:
        await platform.start_bot_worker("as-deployed", max_bot_pace_ms=MAX_BOT_PACE_MS)
        (player,) = await logged_in(platform, "player")
        against = await watched(player, "esoloe", watch_only=False)
        program = await watched(player, "esoloe", pace_ms=0)
        for game_id in (against, program):
            assert "bot_pace_ms" not in await stored_meta(redis_url, game_id)
        redis = Redis.from_url(redis_url)
        try:
            jobs: Any = await redis.xrange(keys.BOT_TURNS)
        finally:
            await redis.aclose()
        paces = {fields[b"pace_ms"] for _, fields in jobs if fields[b"game_id"].decode() == program}
        assert paces == {b"0"}
        updates = player.game("esoloe").Watch(
            common_pb2.WatchRequest(game_id=program, public=True), metadata=player.metadata
        )

        async def last_update() -> Any:
            last = None
            async for update in updates:
                last = update
            return last

        last = await asyncio.wait_for(last_update(), patience(30))
        assert last is not None
        assert last.status.finished
        lobby = lobby_pb2_grpc.LobbyServiceStub(player.channel)
        for wrong in (-1, MAX_BOT_PACE_MS + 1):
            await assert_refused(
                lobby.PlayAgainstBots(
                    lobby_pb2.PlayAgainstBotsRequest(
                        game="esoloe", watch_only=True, bot_pace_ms=wrong
                    ),
                    metadata=player.metadata,
                    timeout=patience(10),
                ),
                grpc.StatusCode.INVALID_ARGUMENT,
                "INVALID_OPTIONS",
                "bot_pace_ms must be 0..5000",
            )


async def test_tabletop_watch_asks_for_a_pace(redis_url: str, tmp_path: Path) -> None:
    """`tabletop watch GAME --pace MS` makes its game of bots with that pace."""
    async with Platform(redis_url, games=("esoloe",)) as platform:  # no worker: nobody moves
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "client.cli", "watch", "esoloe", "--pace", "300",
            "--gateway", platform.target,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env={**os.environ, "PYTHONIOENCODING": "utf-8", "TABLETOP_STATE_DIR": str(tmp_path)},
        )  # fmt: skip
        out, err = await asyncio.wait_for(process.communicate(b"quit\n"), patience(30))
        assert process.returncode == 0, err.decode()
        found = re.search(r"watching esoloe game (\S+);", out.decode())
        assert found, out.decode()
        assert (await stored_meta(redis_url, found.group(1)))["bot_pace_ms"] == 300
