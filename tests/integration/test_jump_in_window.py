"""A person at a Solo table with bots gets a fair chance to jump in: bots act about
`people_window_seconds` after each move (BOT_PEOPLE_WINDOW_SECONDS), so a person who sees a card
they hold played can jump in before the next bot plays in turn."""

from __future__ import annotations

import asyncio

import grpc
import pytest
from redis.asyncio import Redis

from runtime import bot_turns
from tabletop.common.v1 import common_pb2
from tests.integration.test_solo_helpers import create_with_setup
from tests.platform import Platform, assert_refused, logged_in
from tests.timing import patience
from wire.players import new_bot_id

pytestmark = pytest.mark.integration


REACTION_SECONDS = 0.3
"""A quick person: the time from seeing a card played to their jump-in arriving."""


@pytest.mark.parametrize("window", [True, False])
async def test_a_person_jumps_in_before_the_next_bot_plays(redis_url: str, window: bool) -> None:
    """With the window the person's jump-in lands; without it (0), the next bot has played in
    turn long before a person can react, and the jump-in comes too late. (The window is the
    person's reaction plus room for its own calls, which a slow machine makes slower.)"""
    async with Platform(redis_url, games=("solo",)) as platform:
        seconds = REACTION_SECONDS + patience(0.3) if window else 0.0
        await platform.start_bot_worker("windowed", people_window_seconds=seconds)
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
        game_id = await create_with_setup(redis_url, players, setup)
        redis = Redis.from_url(redis_url)
        try:
            meta = {"game": "solo", "seats": players}
            await bot_turns.add(redis, bot_turns.jobs(game_id, 0, meta, [1], meta["seats"]))
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
        # The person reacts; without the window, as slowly as a slow machine's bot could take.
        await asyncio.sleep(REACTION_SECONDS if window else patience(REACTION_SECONDS))
        jump_in = stub.Play(
            common_pb2.PlayRequest(game_id=game_id, move="play r5", expected_version=1),
            metadata=person.metadata,
        )
        updates.cancel()
        if not window:
            await assert_refused(jump_in, grpc.StatusCode.ABORTED, "STALE_VERSION")
            return
        jumped = await jump_in
        assert jumped.status.version == 2
        after = await stub.Watch(
            common_pb2.WatchRequest(game_id=game_id, from_version=2), metadata=person.metadata
        ).read()
        assert (after.envelope.actor, after.envelope.move) == (0, "play r5")
