"""A full e-SOLO-e game through the gateway: two players, a spectator watching every event."""

from __future__ import annotations

import asyncio
import random

import pytest

from tabletop.common.v1 import common_pb2
from tabletop.esoloe.v1 import esoloe_pb2
from tests.platform import Platform, logged_in, watch_all

pytestmark = pytest.mark.integration


async def test_full_game_through_gateway_with_watcher(platform: Platform) -> None:
    alice, bob, carol = await logged_in(platform, "alice", "bob", "carol")
    stub = alice.game("esoloe")
    created = await stub.CreateGame(
        esoloe_pb2.CreateGameRequest(players=[alice.player_id, bob.player_id]),
        metadata=alice.metadata,
    )
    game_id = created.status.game_id
    assert created.status.version == 0
    assert list(created.status.to_act) == [0]
    watcher = asyncio.create_task(watch_all(carol, "esoloe", game_id))

    rng = random.Random(7)
    players = [alice, bob]
    played: list[str] = []
    version = 0
    finished = False
    while not finished:
        view = await stub.GetView(
            common_pb2.GetViewRequest(game_id=game_id), metadata=alice.metadata
        )
        seat = view.view.to_move
        player = players[seat]
        legal = await player.game("esoloe").LegalMoves(
            common_pb2.LegalMovesRequest(game_id=game_id), metadata=player.metadata
        )
        assert legal.seat == seat
        assert legal.moves
        move = rng.choice(list(legal.moves))
        reply = await player.game("esoloe").Play(
            common_pb2.PlayRequest(game_id=game_id, move=move, expected_version=version),
            metadata=player.metadata,
        )
        version += 1
        assert reply.status.version == version
        assert reply.events[0].placed.seat == seat
        played.append(move)
        finished = reply.status.finished

    updates = await asyncio.wait_for(watcher, timeout=10)
    assert [u.envelope.version for u in updates] == list(range(version + 1))
    assert [u.envelope.move for u in updates[1:]] == played
    assert updates[-1].status.finished
    placed = [u.events[0].placed for u in updates[1:]]
    assert [p.seat for p in placed] == [i % 2 for i in range(len(played))]
    # A watcher resuming mid-game gets the rest, with no gap and no duplicate.
    resumed = await watch_all(carol, "esoloe", game_id, from_version=3)
    assert [u.envelope.version for u in resumed] == list(range(3, version + 1))
