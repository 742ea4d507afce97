"""A person at a Solo table with bots gets a fair chance to jump in: bots act between 1 and 1.25
times the table's jump-in window (`jump_in_window_ms`, chosen when the game is made) after each
move, so a person who sees a card they hold played can jump in before the next bot plays in
turn; a table made with a window of 0 (a program's) has its bots act at once. These tests run a
bot worker as deployed: no cap on the windows (BOT_MAX_JUMP_IN_WINDOW_MS)."""

from __future__ import annotations

import asyncio

import grpc
import pytest
from redis.asyncio import Redis

from games.clock import MAX_JUMP_IN_WINDOW_MS
from runtime import bot_turns
from tabletop.common.v1 import common_pb2
from tests.integration.test_solo_helpers import create_with_setup
from tests.platform import Platform, assert_refused, logged_in
from tests.timing import patience
from wire.players import new_bot_id
from wire.records import GameMeta

pytestmark = pytest.mark.integration


REACTION_SECONDS = 0.3
"""A quick person: the time from seeing a card played to their jump-in arriving."""
SOLO_WINDOW_MS = 2500
"""Solo's default window (games/solo/__init__.py): a table made without one."""


@pytest.mark.parametrize("window_ms", [None, 0])
async def test_a_person_jumps_in_before_the_next_bot_plays(
    redis_url: str, window_ms: int | None
) -> None:
    """With Solo's default window the person's jump-in lands, and the bot to move has not
    played before it; with a window of 0, the bot to move plays in turn at once, before the
    person could react (its move is committed well within the window it did not wait), and the
    jump-in comes too late."""
    async with Platform(redis_url, games=("solo",)) as platform:
        await platform.start_bot_worker("windowed", max_jump_in_window_ms=MAX_JUMP_IN_WINDOW_MS)
        (person,) = await logged_in(platform, "person")
        bots = [new_bot_id("greedy"), new_bot_id("random")]
        players = [person.player_id, *bots]
        setup = {
            # Seat 1 (a bot) is to move and plays its r5; seat 2 (a bot) could play at once on
            # it, in turn; the person at seat 0 holds the other r5 and jumps in first.
            "hands": [["r5", "b1", "b2"], ["r5", "g9"], ["r7", "r8", "y1"]],
            "draw_pile": ["y2", "y3", "y4", "y5", "y6", "y7", "y8", "y9"],
            "discard": ["r3"],
            "start_seat": 1,
        }
        game_id = await create_with_setup(redis_url, players, setup, window_ms=window_ms)
        redis = Redis.from_url(redis_url)
        try:
            meta = GameMeta(game="solo", seats=players, jump_in_window_ms=window_ms)
            await bot_turns.add(redis, bot_turns.jobs(game_id, 0, meta, [1], meta.seats))
        finally:
            await redis.aclose()
        stub = person.game("solo")
        updates = stub.Watch(
            common_pb2.WatchRequest(game_id=game_id, from_version=1), metadata=person.metadata
        )
        played = await asyncio.wait_for(updates.read(), patience(10))
        assert (played.envelope.actor, played.envelope.move.split("!")[0]) == (1, "play r5")
        legal = await stub.LegalMoves(
            common_pb2.LegalMovesRequest(game_id=game_id), metadata=person.metadata
        )
        assert legal.version == 1
        assert "play r5" in legal.moves  # the chance, shown the moment it exists
        jump_in = common_pb2.PlayRequest(game_id=game_id, move="play r5", expected_version=1)
        if window_ms == 0:
            bot = await asyncio.wait_for(updates.read(), patience(10))
            updates.cancel()
            assert (bot.envelope.version, bot.envelope.actor) == (2, 2)
            gap = bot.envelope.time.ToMilliseconds() - played.envelope.time.ToMilliseconds()
            assert gap < SOLO_WINDOW_MS  # it did not wait for the person
            await assert_refused(
                stub.Play(jump_in, metadata=person.metadata),
                grpc.StatusCode.ABORTED,
                "STALE_VERSION",
            )
            return
        await asyncio.sleep(REACTION_SECONDS)
        jumped = await stub.Play(jump_in, metadata=person.metadata)
        updates.cancel()
        assert jumped.status.version == 2
        after = await stub.Watch(
            common_pb2.WatchRequest(game_id=game_id, from_version=2), metadata=person.metadata
        ).read()
        assert (after.envelope.actor, after.envelope.move) == (0, "play r5")
