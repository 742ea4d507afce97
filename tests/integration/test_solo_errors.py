"""Bad input to the Solo service through the gateway: each refused with the right status code and
reason, and the game left unchanged."""

from __future__ import annotations

import grpc
import pytest

from client.session import Session
from tabletop.common.v1 import common_pb2
from tabletop.solo.v1 import solo_pb2
from tests.integration.test_solo_helpers import (
    close_all,
    create_with_setup,
    legal,
    play,
    refused,
    solo_platform,
    view,
)
from tests.platform import Platform, logged_in

pytestmark = pytest.mark.integration
__all__ = ["solo_platform"]

INVALID = grpc.StatusCode.INVALID_ARGUMENT
SETUP = {
    "hands": [
        ["r3", "r8", "bX", "g2", "W4"],
        ["y5", "y6", "bS", "g9", "gR"],
        ["r5", "b1", "b2", "g3", "yD"],
    ],
    "draw_pile": ["b7", "y1", "g4", "r9", "b4", "y9"],
    "discard": ["g5", "r5"],
    "start_seat": 0,
}


async def _everything(sessions: list[Session], game_id: str) -> list[solo_pb2.GetViewResponse]:
    """Every seat's view and the public view."""
    return [await view(s, game_id) for s in sessions] + [await view(sessions[0], game_id, True)]


async def test_create_game_refuses_bad_options_and_players(solo_platform: Platform) -> None:
    (alice, bob) = await logged_in(solo_platform, "alice", "bob")
    stub = alice.game("solo")
    two = [alice.player_id, alice.player_id]  # a hot-seat table: players may create only those
    cases = [
        (solo_pb2.Options(players=11), "INVALID_OPTIONS", "players"),
        (solo_pb2.Options(players=2, start_points=0), "INVALID_OPTIONS", "start_points"),
        (solo_pb2.Options(players=2, rounds=0), "INVALID_OPTIONS", "rounds"),
        (solo_pb2.Options(players=2, mode=7), "INVALID_OPTIONS", "mode"),  # type: ignore[arg-type]
        (solo_pb2.Options(), "INVALID_ARGUMENT", "4 seats"),  # default 4 players
    ]
    for options, reason, word in cases:
        code, got, _, message = await refused(
            stub.CreateGame(
                solo_pb2.CreateGameRequest(options=options, players=two), metadata=alice.metadata
            )
        )
        assert (code, got) == (INVALID, reason), message
        assert word in message
    created = await stub.CreateGame(
        solo_pb2.CreateGameRequest(
            options=solo_pb2.Options(players=2, mode=solo_pb2.MODE_UNSPECIFIED), players=two
        ),
        metadata=alice.metadata,
    )
    assert created.status.rules_edition == 2  # new games: the current rules edition
    defaults = (await view(alice, created.status.game_id, public=True)).view
    assert (defaults.players, defaults.mode, defaults.rounds) == (2, solo_pb2.MODE_POINTS, 5)
    assert list(defaults.points) == [200, 200]
    assert not defaults.mixed_stacking
    await close_all([alice, bob])


async def test_refused_moves_leave_the_game_unchanged(
    solo_platform: Platform, redis_url: str
) -> None:
    sessions = await logged_in(solo_platform, "ann", "ben", "cat", "mallory")
    ann, ben, cat, mallory = sessions
    game_id = await create_with_setup(redis_url, [s.player_id for s in sessions[:3]], SETUP)
    before = await _everything(sessions[:3], game_id)
    cases: list[tuple[Session, str, grpc.StatusCode, str, str]] = [
        (ann, "play z9", INVALID, "MALFORMED_MOVE", "not a Solo move"),
        (ann, "hit me", INVALID, "MALFORMED_MOVE", "draw"),
        (ann, "play g2", INVALID, "ILLEGAL_MOVE", "not playable"),
        (ann, "play y5", INVALID, "ILLEGAL_MOVE", "you hold no y5"),
        (ann, "play r3!", INVALID, "ILLEGAL_MOVE", "`!` is refused"),
        (ann, "play W4", INVALID, "ILLEGAL_MOVE", "names a colour"),
        (ann, "play W4:r@1", INVALID, "ILLEGAL_MOVE", "nothing else"),
        (ann, "pass", INVALID, "ILLEGAL_MOVE", "none waiting"),
        (ann, "solo", INVALID, "MALFORMED_MOVE", "`play r5!`"),  # no late call (S12, ed. 2)
        (ben, "draw", grpc.StatusCode.FAILED_PRECONDITION, "NOT_YOUR_TURN", "seat 0's turn"),
        (ben, "play y5", grpc.StatusCode.FAILED_PRECONDITION, "NOT_YOUR_TURN", "jump-in"),
        (cat, "play r5!", INVALID, "ILLEGAL_MOVE", "`!` is refused"),  # a jump-in form
        (mallory, "draw", grpc.StatusCode.PERMISSION_DENIED, "NOT_YOUR_SEAT", "no seat"),
        (ann, "", INVALID, "MALFORMED_MOVE", "empty"),
    ]
    for session, move, code, reason, word in cases:
        got = await refused(play(session, game_id, move))
        assert got[:2] == (code, reason), (move, got)
        assert word in got[3], (move, got[3])
    assert await _everything(sessions[:3], game_id) == before

    # A stale expected_version is refused with the current version; then a retry applies once.
    await play(ann, game_id, "play r3", expected_version=0, request_id="m1")
    again = await play(ann, game_id, "play r3", expected_version=0, request_id="m1")
    assert again.status.version == 1
    assert again.events[0].played.card == "r3"
    after = await _everything(sessions[:3], game_id)
    code, reason, metadata, _ = await refused(play(ben, game_id, "draw", expected_version=0))
    assert (code, reason, metadata["version"]) == (grpc.StatusCode.ABORTED, "STALE_VERSION", "1")
    assert await _everything(sessions[:3], game_id) == after

    # Resigning ends the game; nothing can be played after it.
    reply = await ben.game("solo").Resign(
        common_pb2.ResignRequest(game_id=game_id), metadata=ben.metadata
    )
    assert reply.status.finished
    assert [e.WhichOneof("kind") for e in reply.events] == ["resigned", "game_ended"]
    assert 1 not in reply.status.result.winners
    code, reason, _, _ = await refused(play(cat, game_id, "draw"))
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "GAME_OVER")
    assert not (await legal(cat, game_id)).moves
    await close_all(sessions)
