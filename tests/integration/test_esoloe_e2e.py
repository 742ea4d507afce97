"""A full e-SOLO-e game through the gateway: two players, a spectator watching every event; and
the rules edition a game keeps (revised E8: new games edition 2, stored older games edition 1)."""

from __future__ import annotations

import asyncio
import json
import random

import pytest
from redis.asyncio import Redis

from client.session import Session
from games.esoloe.adapter import ADAPTER
from games.esoloe.rules import RULES
from runtime import keys
from tabletop.common.v1 import common_pb2
from tabletop.esoloe.v1 import esoloe_pb2
from tests.platform import Platform, logged_in, store_as_before_editions, watch_all
from tests.timing import patience

pytestmark = pytest.mark.integration

# Our ruling E8's example: seat 0 to move, U shows 1-1-1 on b c d (seat 0's set, as is the F set
# c0 d0 e0); d15 covers d with another 1. Edition 2: the same set, nothing new, no win. Edition 1
# (before the revised E8): a new U set b0 c0 d1, a win.
EXAMPLE = ["d12", "b14", "c12", "e32"]


async def _new_game(platform: Platform, alice: Session, bob: Session) -> str:
    created = await platform.create_game(  # as the lobby seats two players
        "esoloe", esoloe_pb2.CreateGameRequest(players=[alice.player_id, bob.player_id])
    )
    assert created.status.version == 0
    assert list(created.status.to_act) == [0]
    assert created.status.rules_edition == RULES.edition == 2  # new games: the revised E8
    return str(created.status.game_id)


async def _view(session: Session, game_id: str) -> esoloe_pb2.GetViewResponse:
    reply: esoloe_pb2.GetViewResponse = await session.game("esoloe").GetView(
        common_pb2.GetViewRequest(game_id=game_id), metadata=session.metadata
    )
    return reply


async def _play(session: Session, game_id: str, move: str, version: int) -> esoloe_pb2.PlayResponse:
    reply: esoloe_pb2.PlayResponse = await session.game("esoloe").Play(
        common_pb2.PlayRequest(game_id=game_id, move=move, expected_version=version),
        metadata=session.metadata,
    )
    return reply


async def test_full_game_through_gateway_with_watcher(platform: Platform) -> None:
    alice, bob, carol = await logged_in(platform, "alice", "bob", "carol")
    game_id = await _new_game(platform, alice, bob)
    watcher = asyncio.create_task(watch_all(carol, "esoloe", game_id))

    rng = random.Random(7)
    players = [alice, bob]
    played: list[str] = []
    local = RULES.new_game(0)  # the same moves on the engine give the views to expect
    version = 0
    finished = False
    while not finished:
        view = await _view(alice, game_id)
        assert view.status.rules_edition == 2
        assert ADAPTER.view_json(view) == local.view(0)  # what a bot is told, edition included
        seat = view.view.to_move
        player = players[seat]
        legal = await player.game("esoloe").LegalMoves(
            common_pb2.LegalMovesRequest(game_id=game_id), metadata=player.metadata
        )
        assert legal.seat == seat
        assert list(legal.moves) == local.legal_moves(seat)
        move = rng.choice(list(legal.moves))
        reply = await _play(player, game_id, move, version)
        local, _ = local.apply(seat, move)
        version += 1
        assert reply.status.version == version
        assert reply.events[0].placed.seat == seat
        played.append(move)
        finished = reply.status.finished
    assert local.finished

    updates = await asyncio.wait_for(watcher, timeout=patience(10))
    assert [u.envelope.version for u in updates] == list(range(version + 1))
    assert [u.envelope.move for u in updates[1:]] == played
    assert updates[-1].status.finished
    placed = [u.events[0].placed for u in updates[1:]]
    assert [p.seat for p in placed] == [i % 2 for i in range(len(played))]
    # A watcher resuming mid-game gets the rest, with no gap and no duplicate.
    resumed = await watch_all(carol, "esoloe", game_id, from_version=3)
    assert [u.envelope.version for u in resumed] == list(range(3, version + 1))


async def test_re_covering_a_set_wins_only_in_a_game_stored_before_the_revision(
    platform: Platform,
) -> None:
    """E8 (revised): in a new game (edition 2) the ruling's example does not win. A game stored
    before rules editions existed (snapshot and meta without an edition), at the same position,
    is played under edition 1, where the same cube wins.

    The stored game is written as the service before the revision wrote it: the position after
    the four cubes, at version 0 (no replica has served it, so each reads it from Redis); its
    status (seat 0 to act) is a new game's."""
    alice, bob = await logged_in(platform, "alice", "bob")
    players = [alice, bob]
    game_id = await _new_game(platform, alice, bob)
    for version, move in enumerate(EXAMPLE):
        await _play(players[version % 2], game_id, move, version)
    reply = await _play(alice, game_id, "d15", len(EXAMPLE))
    assert [e.WhichOneof("kind") for e in reply.events] == ["placed"]
    assert not reply.status.finished
    assert list(reply.status.to_act) == [1]
    assert reply.status.rules_edition == 2

    state = RULES.new_game(0, edition=1)
    for i, move in enumerate(EXAMPLE):
        state, _ = state.apply(i % 2, move)
    old_game = await store_as_before_editions(
        platform.redis_url, await _new_game(platform, alice, bob), state
    )
    before = await _view(alice, old_game)
    assert before.status.version == 0
    assert before.status.rules_edition == 1
    assert ADAPTER.view_json(before) == state.view(0)  # edition 1, as a bot is told
    legal = await alice.game("esoloe").LegalMoves(
        common_pb2.LegalMovesRequest(game_id=old_game), metadata=alice.metadata
    )
    assert list(legal.moves) == state.legal_moves(0)
    reply = await _play(alice, old_game, "d15", 0)
    assert [e.WhichOneof("kind") for e in reply.events] == ["placed", "won"]
    assert list(reply.events[1].won.methods) == ["two_sets"]
    assert {line.view for line in reply.events[1].won.lines} == {"F", "U"}
    assert reply.status.finished
    assert list(reply.status.result.winners) == [0]
    assert reply.status.rules_edition == 1
    redis = Redis.from_url(platform.redis_url)
    stored = await redis.hget(keys.game_state(old_game), "snapshot")
    await redis.aclose()
    assert isinstance(stored, bytes)
    assert json.loads(stored)["edition"] == 1  # the engine now writes the edition it plays
