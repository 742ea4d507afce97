"""Solace through the gateway: a whole game by its one player, a spectator watching every event,
options, the best score shown once the game is over, and bad input refused."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator

import grpc
import pytest
import pytest_asyncio

from client.session import Session
from tabletop.common.v1 import common_pb2
from tabletop.solace.v1 import solace_pb2
from tests.platform import Platform, assert_refused, logged_in, watch_all
from tests.timing import patience

pytestmark = pytest.mark.integration


@pytest_asyncio.fixture
async def solace(redis_url: str) -> AsyncIterator[Platform]:
    """One Solace replica and a gateway on free ports."""
    async with Platform(redis_url, games=("solace",)) as running:
        yield running


async def _create(session: Session, **options: bool) -> str:
    created = await session.game("solace").CreateGame(
        solace_pb2.CreateGameRequest(
            players=[session.player_id], options=solace_pb2.Options(**options)
        ),
        metadata=session.metadata,
    )
    assert created.status.version == 0
    assert created.status.game == "solace"
    assert [s.player_id for s in created.status.seats] == [session.player_id]
    assert list(created.status.to_act) == [0]
    game_id: str = created.status.game_id
    return game_id


async def _view(session: Session, game_id: str, **fields: bool) -> solace_pb2.GetViewResponse:
    reply: solace_pb2.GetViewResponse = await session.game("solace").GetView(
        common_pb2.GetViewRequest(game_id=game_id, **fields), metadata=session.metadata
    )
    return reply


async def _legal(session: Session, game_id: str) -> list[str]:
    reply = await session.game("solace").LegalMoves(
        common_pb2.LegalMovesRequest(game_id=game_id), metadata=session.metadata
    )
    return list(reply.moves)


async def _play(
    session: Session, game_id: str, move: str, **fields: int | str
) -> solace_pb2.PlayResponse:
    request = common_pb2.PlayRequest(game_id=game_id, move=move, **fields)  # type: ignore[arg-type]
    reply: solace_pb2.PlayResponse = await session.game("solace").Play(
        request, metadata=session.metadata
    )
    return reply


def _shown_colours(view: solace_pb2.View) -> set[int]:
    return {p.colour for space in view.spaces for p in [*space.nest, *space.tower]}


async def test_full_game_through_gateway_with_watcher(solace: Platform) -> None:
    player, watcher_session = await logged_in(solace, "solitaire", "kibitzer")
    game_id = await _create(player)
    watcher = asyncio.create_task(watch_all(watcher_session, "solace", game_id))

    first = await _view(player, game_id)
    assert first.HasField("seat")
    assert first.seat == 0
    assert [s.name for s in first.view.spaces] == [
        *(f"B{i}" for i in range(1, 6)),
        *(f"C{i}" for i in range(1, 6)),
    ]
    assert not first.view.HasField("best_score")
    assert not first.view.finished
    for space in first.view.spaces:
        assert space.state == solace_pb2.SPACE_STATE_NEST
        assert [p.size for p in space.nest] == [3, 2, 1]
        if space.name.startswith("B"):  # L4: a black 3 hides its whole inside
            assert space.nest[0].colour == solace_pb2.COLOUR_BLACK
            assert [p.hidden for p in space.nest] == [False, True, True]
            assert [p.colour for p in space.nest[1:]] == [solace_pb2.COLOUR_UNSPECIFIED] * 2

    rng = random.Random(11)
    played: list[str] = []
    version = 0
    finished = False
    reply = None
    while not finished:
        legal = await _legal(player, game_id)
        assert legal[-1] == "stop"
        move = rng.choice(legal[:-1])
        reply = await _play(player, game_id, move, expected_version=version)
        version += 1
        played.append(move)
        assert reply.status.version == version
        assert reply.events[0].moved.move == move
        finished = reply.status.finished
        # The spectator sees exactly what the player sees.
        mine = await _view(player, game_id)
        theirs = await _view(watcher_session, game_id)
        assert not theirs.HasField("seat")
        assert theirs.view == mine.view
        assert theirs.status == mine.status
    assert reply is not None
    ended = reply.events[-1].game_over
    assert ended.reason == "no_moves"
    final = await _view(player, game_id)
    assert final.view.finished
    assert final.view.HasField("best_score")
    assert ended.best_score == final.view.best_score
    assert final.view.score <= final.view.best_score <= 8
    assert final.view.score == ended.score <= final.view.best_score
    assert final.status.result.winners == [0]
    assert final.status.result.scores[0] == final.view.score
    assert final.status.result.detail["best_score"] == final.view.best_score
    assert await _legal(player, game_id) == []

    updates = await asyncio.wait_for(watcher, timeout=patience(10))
    assert [u.envelope.version for u in updates] == list(range(version + 1))
    assert [u.envelope.move for u in updates[1:]] == played
    assert [u.events[0].moved.move for u in updates[1:]] == played
    assert updates[-1].status.finished
    resumed = await watch_all(watcher_session, "solace", game_id, from_version=4)
    assert [u.envelope.version for u in resumed] == list(range(4, version + 1))
    assert [list(u.events) for u in resumed] == [list(u.events) for u in updates[4:]]


async def test_stop_and_resign_end_the_game_with_the_best_score(solace: Platform) -> None:
    (player,) = await logged_in(solace, "quitter")
    game_id = await _create(player)
    legal = await _legal(player, game_id)
    await _play(player, game_id, legal[0])
    reply = await _play(player, game_id, "stop")
    assert reply.status.finished
    assert [e.WhichOneof("kind") for e in reply.events] == ["stopped", "game_over"]
    assert reply.events[1].game_over.reason == "stopped"
    view = await _view(player, game_id)
    assert view.view.stopped
    assert 1 <= view.view.best_score == reply.events[1].game_over.best_score <= 8
    await assert_refused(
        _play(player, game_id, "stop"), grpc.StatusCode.FAILED_PRECONDITION, "GAME_OVER"
    )

    other = await _create(player)
    resigned = await player.game("solace").Resign(
        common_pb2.ResignRequest(game_id=other), metadata=player.metadata
    )
    assert resigned.status.finished
    assert [e.WhichOneof("kind") for e in resigned.events] == ["stopped", "game_over"]
    assert resigned.events[1].game_over.score == 0


async def test_no_monochrome_option(solace: Platform) -> None:
    (player,) = await logged_in(solace, "purist")
    for _ in range(3):
        game_id = await _create(player, no_monochrome=True)
        view = (await _view(player, game_id)).view
        assert view.options.HasField("no_monochrome")
        assert view.options.no_monochrome
        # A visible full clear nest would be monochrome: c3 over c2 over c1 never shows.
        for space in view.spaces:
            assert [p.colour for p in space.nest] != [solace_pb2.COLOUR_CLEAR] * 3
    default = await _create(player)
    assert not (await _view(player, default)).view.options.no_monochrome


async def test_bad_input_is_refused_and_changes_nothing(solace: Platform) -> None:
    player, outsider = await logged_in(solace, "careful", "mallory")
    stub = player.game("solace")
    await assert_refused(
        stub.CreateGame(
            solace_pb2.CreateGameRequest(players=[player.player_id, player.player_id]),
            metadata=player.metadata,
        ),
        grpc.StatusCode.INVALID_ARGUMENT,
        "INVALID_ARGUMENT",
        "1 seats",
    )
    game_id = await _create(player)
    before = await _view(player, game_id)
    await assert_refused(
        _play(player, game_id, "B1B2"),
        grpc.StatusCode.INVALID_ARGUMENT,
        "MALFORMED_MOVE",
        "FROM-TO",
    )
    await assert_refused(
        _play(player, game_id, "B6-B1"), grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED_MOVE"
    )
    await assert_refused(
        _play(player, game_id, ""), grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED_MOVE"
    )
    await assert_refused(
        _play(player, game_id, "B1-C1"),
        grpc.StatusCode.INVALID_ARGUMENT,
        "ILLEGAL_MOVE",
        "same colour",
    )
    await assert_refused(
        _play(player, game_id, "B1-B1"), grpc.StatusCode.INVALID_ARGUMENT, "ILLEGAL_MOVE", "nowhere"
    )
    await assert_refused(
        _play(outsider, game_id, "B1-B2"), grpc.StatusCode.PERMISSION_DENIED, "NOT_YOUR_SEAT"
    )
    await assert_refused(
        _play(player, game_id, "B1-B2", seat=1),
        grpc.StatusCode.INVALID_ARGUMENT,
        "INVALID_ARGUMENT",
        "seats are 0..0",
    )
    await assert_refused(
        outsider.game("solace").LegalMoves(
            common_pb2.LegalMovesRequest(game_id=game_id), metadata=outsider.metadata
        ),
        grpc.StatusCode.PERMISSION_DENIED,
        "NOT_YOUR_SEAT",
    )
    await assert_refused(
        _play(player, game_id, "B1-B2", expected_version=3),
        grpc.StatusCode.ABORTED,
        "STALE_VERSION",
    )
    await assert_refused(
        _play(player, "solace-" + "0" * 20, "B1-B2"), grpc.StatusCode.NOT_FOUND, "GAME_NOT_FOUND"
    )
    assert await _view(player, game_id) == before
    # A retried request is applied once.
    first = await _play(player, game_id, "B1-B2", request_id="r1")
    again = await _play(player, game_id, "B1-B2", request_id="r1")
    assert first.status.version == again.status.version == 1
    assert again.events[0].moved.move == "B1-B2"
