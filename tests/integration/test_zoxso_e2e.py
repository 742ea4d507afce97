"""Full ZoxSo games through the gateway: two authenticated players, a spectator watching."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from google.protobuf import json_format

from client.session import Session
from engines.contract import visible_events
from games.zoxso.adapter import ADAPTER
from games.zoxso.rules import RULES, ZoxsoState
from tabletop.common.v1 import common_pb2
from tabletop.zoxso.v1 import zoxso_pb2
from tests.platform import Platform, logged_in, watch_all
from tests.timing import patience

pytestmark = pytest.mark.integration

GAME = "zoxso"


@pytest_asyncio.fixture
async def zoxso_platform(redis_url: str) -> AsyncIterator[Platform]:
    """Two ZoxSo replicas behind a gateway: consecutive calls may land on either."""
    async with Platform(redis_url, games=(GAME,), replicas=2) as running:
        yield running


async def _close(*sessions: Session) -> None:
    for session in sessions:
        await session.close()


@pytest.mark.parametrize(
    ("rng_seed", "max_plies", "ending", "final_move"),
    [
        (5, 90, "xing_captured", "h4-h5"),  # Light's random moves capture Dark's Xing at ply 30
        (170, 120, "throne", "d5^C4-D4"),  # Light's Xing flips, then steps onto the Throne
        (355, 120, "throne", "e5^D4"),  # Light's Xing flips onto the Throne at ply 72 (Z9)
        (4, 90, "max_plies", "A4^a5-a6"),  # nobody wins in 90 plies: a draw
    ],
)
async def test_full_random_game_through_gateway_with_watcher(
    zoxso_platform: Platform, rng_seed: int, max_plies: int, ending: str, final_move: str
) -> None:
    alice, bob, carol = await logged_in(zoxso_platform, "alice", "bob", "carol")
    stub = alice.game(GAME)
    created = await zoxso_platform.create_game(  # as the lobby seats two players
        GAME,
        zoxso_pb2.CreateGameRequest(
            players=[alice.player_id, bob.player_id],
            options=zoxso_pb2.Options(max_plies=max_plies),
        ),
    )
    game_id = created.status.game_id
    assert game_id.startswith("zoxso-")
    assert created.status.version == 0
    assert list(created.status.to_act) == [0]
    assert created.status.rules_edition == RULES.edition == 2  # new games: the revised Z9
    watcher = asyncio.create_task(watch_all(carol, GAME, game_id))

    # The same moves replayed on the engine give the events and views to expect.
    local: ZoxsoState = RULES.new_game(0, {"max_plies": max_plies})
    expected_events: list[list[zoxso_pb2.Event]] = []
    rng = random.Random(rng_seed)
    players = [alice, bob]
    played: list[str] = []
    version = 0
    finished = False
    while not finished:
        view = await stub.GetView(
            common_pb2.GetViewRequest(game_id=game_id), metadata=alice.metadata
        )
        assert view.status.version == version
        assert view.view == ADAPTER.view(local.view(0))
        assert ADAPTER.view_json(view) == local.view(0)  # what a bot is told, edition included
        seat = view.view.to_move
        player = players[seat]
        legal = await player.game(GAME).LegalMoves(
            common_pb2.LegalMovesRequest(game_id=game_id), metadata=player.metadata
        )
        assert legal.seat == seat
        assert list(legal.moves) == local.legal_moves(seat)
        move = rng.choice(list(legal.moves))
        reply = await player.game(GAME).Play(
            common_pb2.PlayRequest(game_id=game_id, move=move, expected_version=version),
            metadata=player.metadata,
        )
        local, events = local.apply(seat, move)
        expected = [ADAPTER.event(e) for e in visible_events(events, None)]
        assert list(reply.events) == expected
        expected_events.append(expected)
        version += 1
        assert reply.status.version == version
        played.append(move)
        finished = reply.status.finished

    result = local.result()
    assert result is not None
    assert result.detail["reason"] == ending
    assert played[-1] == final_move
    assert version == local.ply
    assert local.phase == 2  # the game got past the placements
    final = await stub.GetView(common_pb2.GetViewRequest(game_id=game_id), metadata=bob.metadata)
    assert final.status.finished
    assert list(final.status.result.winners) == list(result.winners)
    assert json_format.MessageToDict(final.status.result.detail) == dict(result.detail)
    assert not final.view.HasField("to_move")
    assert list(final.status.to_act) == []

    updates = await asyncio.wait_for(watcher, timeout=patience(10))
    # Every version exactly once, in order, each with the events of its move.
    assert [u.envelope.version for u in updates] == list(range(version + 1))
    assert [u.envelope.move for u in updates[1:]] == played
    assert [u.envelope.actor for u in updates[1:]] == [i % 2 for i in range(version)]
    assert [list(u.events) for u in updates[1:]] == expected_events
    assert updates[-1].status.finished
    last = updates[-1].events[-1]
    assert last.HasField("draw" if ending == "max_plies" else "won")
    assert not updates[0].events
    # The placements came first and Phase 2 began after the 20th.
    assert all(u.events[0].HasField("placed") for u in updates[1:21])
    assert updates[20].events[-1].HasField("phase_started")

    # A watcher resuming mid-game gets the rest, with no gap and no duplicate.
    resumed = await watch_all(carol, GAME, game_id, from_version=7)
    assert [u.envelope.version for u in resumed] == list(range(7, version + 1))
    await _close(alice, bob, carol)


async def test_resign_and_options(zoxso_platform: Platform) -> None:
    alice, bob = await logged_in(zoxso_platform, "alice", "bob")
    stub = alice.game(GAME)
    created = await zoxso_platform.create_game(
        GAME, zoxso_pb2.CreateGameRequest(players=[alice.player_id, bob.player_id])
    )
    game_id = created.status.game_id
    view = await stub.GetView(common_pb2.GetViewRequest(game_id=game_id), metadata=alice.metadata)
    assert view.view.max_plies == 400  # the default
    assert view.view.phase == 1
    assert view.view.throne == "D4"
    assert [f.seat for f in view.view.forces] == [0, 1]
    for force in view.view.forces:
        assert (force.in_hand.ma, force.in_hand.dao, force.in_hand.xing) == (4, 5, 1)
    await stub.Play(common_pb2.PlayRequest(game_id=game_id, move="X@b2"), metadata=alice.metadata)
    view = await stub.GetView(
        common_pb2.GetViewRequest(game_id=game_id, public=True), metadata=bob.metadata
    )
    assert not view.HasField("seat")
    assert [(s.name, s.piece.seat, s.piece.type) for s in view.view.pearls] == [
        ("b2", 0, zoxso_pb2.PIECE_TYPE_XING)
    ]
    assert view.view.forces[0].in_hand.xing == 0
    assert view.view.forces[0].on_pearls.xing == 1
    reply = await bob.game(GAME).Resign(
        common_pb2.ResignRequest(game_id=game_id), metadata=bob.metadata
    )
    assert [e.WhichOneof("kind") for e in reply.events] == ["resigned", "won"]
    assert reply.events[1].won == zoxso_pb2.Won(seat=0, reason=zoxso_pb2.WIN_REASON_RESIGNATION)
    assert reply.status.finished
    assert list(reply.status.result.winners) == [0]
    await _close(alice, bob)
