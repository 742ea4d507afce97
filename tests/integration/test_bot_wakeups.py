"""What a move makes the platform do must not depend on hidden cards: after a Solo move, the
same bot seats are woken whether or not a bot holds a card to jump in with (otherwise the time
the answer takes tells the table that a bot holds a copy of the card just played)."""

from __future__ import annotations

import random
from typing import Any

import pytest
from redis.asyncio import Redis

from runtime import keys
from tabletop.common.v1 import common_pb2
from tests.integration.test_solo_helpers import create_with_setup, dealt_setup
from tests.platform import Platform, logged_in
from wire.players import new_bot_id

pytestmark = pytest.mark.integration


async def _woken(redis_url: str, game_id: str) -> list[tuple[int, int]]:
    """The (version, seat) of every bot-turn job queued for the game, in order."""
    redis = Redis.from_url(redis_url)
    try:
        entries: Any = await redis.xrange(keys.BOT_TURNS)
    finally:
        await redis.aclose()
    return [
        (int(fields[b"version"]), int(fields[b"seat"]))
        for _, fields in entries
        if fields[b"game_id"].decode() == game_id
    ]


async def test_the_bots_woken_after_a_move_do_not_depend_on_their_hidden_cards(
    redis_url: str,
) -> None:
    async with Platform(redis_url, games=("solo",)) as platform:  # no bot worker: jobs stay
        (person,) = await logged_in(platform, "person")
        players = [person.player_id, new_bot_id("random"), new_bot_id("random")]
        woken = []
        for bot_holds_a_copy in (True, False):
            # The same public position: the same top card, the same hand sizes, the person to
            # play r5. Only where the other r5 is differs: in seat 2's hand, or in the pile.
            bot_hand = ["r5", "g9"] if bot_holds_a_copy else ["b7", "g9"]
            setup = dealt_setup([["r5", "b1"], ["y2", "y3"], bot_hand], "r3", random.Random(4), 2)
            game_id = await create_with_setup(redis_url, players, setup)
            await person.game("solo").Play(
                common_pb2.PlayRequest(game_id=game_id, move="play r5", expected_version=0),
                metadata=person.metadata,
            )
            legal = await person.game("solo").LegalMoves(
                common_pb2.LegalMovesRequest(game_id=game_id), metadata=person.metadata
            )
            assert legal.version == 1
            woken.append(await _woken(redis_url, game_id))
        assert woken[0] == woken[1] == [(1, 1), (1, 2)]
