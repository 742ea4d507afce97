"""Bad ZoxSo input through the gateway: each answered with its status code, a stable reason and a
message saying what is allowed, and the game left unchanged."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import grpc
import pytest
import pytest_asyncio
from google.protobuf import json_format
from redis.asyncio import Redis

from client.session import Session
from games.zoxso.adapter import ADAPTER
from games.zoxso.rules import RULES
from runtime import keys
from tabletop.common.v1 import common_pb2
from tabletop.zoxso.v1 import zoxso_pb2
from tests.platform import Platform, assert_refused, store_as_before_editions
from wire.errors import error_info

pytestmark = pytest.mark.integration

GAME = "zoxso"

# Twenty placements (Z5), Dark first. Dark ends up along row 2 and row 1 below the Wall: c2, d2,
# e2 sit on the Wall's ring, with the inside Pearls c3, d3, e3 just across it.
DARK = ["M@c2", "M@d2", "M@e2", "M@a1", "D@b1", "D@c1", "D@d1", "D@e1", "D@f1", "X@h1"]
LIGHT = ["M@a8", "M@b8", "M@c8", "M@d8", "D@e8", "D@f8", "D@g8", "D@h8", "D@a7", "X@h7"]
# Dark's Xing on the ring Pearl e2 instead, to walk it to d4, a corner Pearl of the Throne D4:
# e2^D2-D3 (flip onto a Stone, step), then D3^d4 (flip onto the inside Pearl); Light steps a7-a6-a5.
THRONE_DARK = ["M@a1", "M@b1", "M@c1", "M@d1", "D@f1", "D@g1", "D@h1", "D@a2", "D@h2", "X@e2"]
TO_THRONE = ["e2^D2-D3", "a7-a6", "D3^d4", "a6-a5"]


class Table:
    """A ZoxSo game between alice (Dark, seat 0) and bob (Light, seat 1)."""

    def __init__(self, platform: Platform) -> None:
        self.platform = platform
        self.alice = Session(platform.target)
        self.bob = Session(platform.target)
        self.game_id = ""

    async def open(self, **options: int) -> Table:
        await self.alice.login("alice")
        await self.bob.login("bob")
        created = await self.platform.create_game(  # as the lobby seats two players
            GAME,
            zoxso_pb2.CreateGameRequest(
                players=[self.alice.player_id, self.bob.player_id],
                options=zoxso_pb2.Options(**options),
            ),
        )
        self.game_id = created.status.game_id
        return self

    async def to_phase_two(self, dark_moves: list[str] = DARK) -> None:
        for dark, light in zip(dark_moves, LIGHT, strict=True):
            await self.play(self.alice, dark)
            await self.play(self.bob, light)

    async def xing_next_to_the_throne(self) -> None:
        """Phase 2 with Dark's Xing on d4, Dark to move (Z9: it may flip onto the Throne)."""
        await self.to_phase_two(THRONE_DARK)
        for index, move in enumerate(TO_THRONE):
            await self.play(self.bob if index % 2 else self.alice, move)

    async def legal(self, session: Session) -> list[str]:
        reply = await session.game(GAME).LegalMoves(
            common_pb2.LegalMovesRequest(game_id=self.game_id), metadata=session.metadata
        )
        return list(reply.moves)

    async def play(self, session: Session, move: str, **fields: object) -> zoxso_pb2.PlayResponse:
        request = common_pb2.PlayRequest(game_id=self.game_id, move=move, **fields)  # type: ignore[arg-type]
        reply: zoxso_pb2.PlayResponse = await session.game(GAME).Play(
            request, metadata=session.metadata
        )
        return reply

    async def snapshot(self) -> zoxso_pb2.GetViewResponse:
        reply: zoxso_pb2.GetViewResponse = await self.alice.game(GAME).GetView(
            common_pb2.GetViewRequest(game_id=self.game_id), metadata=self.alice.metadata
        )
        return reply

    async def close(self) -> None:
        await self.alice.close()
        await self.bob.close()


@pytest_asyncio.fixture
async def table(redis_url: str) -> AsyncIterator[Table]:
    async with Platform(redis_url, games=(GAME,)) as platform:
        table = await Table(platform).open()
        yield table
        await table.close()


async def test_malformed_notation(table: Table) -> None:
    before = await table.snapshot()
    bad = [
        ("b9-b3", "does not exist"),
        ("i1-b2", "does not exist"),
        ("H1-G1", "does not exist"),
        ("Q@b2", "unknown piece"),
        ("M@B2", "Pearls"),
        ("b2", "not a ZoxSo move"),
        ("b2-b3-b4", "not a ZoxSo move"),
        ("b2^c2", "changes layer"),
        ("b2^B2-b3", "new layer"),
        ("b2-B3", "one layer"),
        ("", "empty"),
    ]
    for move, words in bad:
        await assert_refused(
            table.play(table.alice, move), grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED_MOVE", words
        )
    assert await table.snapshot() == before


async def test_phase_one_refusals(table: Table) -> None:
    await table.play(table.alice, "X@b2")
    before = await table.snapshot()
    for move, words in [
        ("M@d4", "inside the Wall"),
        ("M@b2", "occupied"),
        ("b2-b3", "Phase 1"),
    ]:
        await assert_refused(
            table.play(table.bob, move), grpc.StatusCode.INVALID_ARGUMENT, "ILLEGAL_MOVE", words
        )
    await table.play(table.bob, "M@g7")
    await assert_refused(
        table.play(table.alice, "X@a1"),
        grpc.StatusCode.INVALID_ARGUMENT,
        "ILLEGAL_MOVE",
        "no Xing left",
    )
    assert (await table.snapshot()).status.version == before.status.version + 1


async def test_wall_crossing_and_turn_structure(table: Table) -> None:
    await table.to_phase_two()
    before = await table.snapshot()
    assert before.view.phase == 2
    assert before.view.to_move == 0
    # A step and a chain move across the Wall (Z2); a move then a flip, two flips (Z6).
    await assert_refused(
        table.play(table.alice, "c2-c3"),
        grpc.StatusCode.INVALID_ARGUMENT,
        "ILLEGAL_MOVE",
        "c2-c3 crosses the Wall",
        "Z2",
    )
    await assert_refused(
        table.play(table.alice, "d2-c3"),
        grpc.StatusCode.INVALID_ARGUMENT,
        "ILLEGAL_MOVE",
        "crosses the Wall",
    )
    await assert_refused(
        table.play(table.alice, "c2-b2^B2"),
        grpc.StatusCode.INVALID_ARGUMENT,
        "ILLEGAL_MOVE",
        "you cannot move then flip",
        "Z6",
    )
    await assert_refused(
        table.play(table.alice, "c2^C2^d3"),
        grpc.StatusCode.INVALID_ARGUMENT,
        "ILLEGAL_MOVE",
        "flip twice",
    )
    # A Ma may not stay on the Throne; a flip onto an occupied Pearl; another side's piece.
    await assert_refused(
        table.play(table.alice, "d2^C2-D4"),
        grpc.StatusCode.INVALID_ARGUMENT,
        "ILLEGAL_MOVE",
        "only a Xing may end a turn on the Throne",
    )
    await assert_refused(
        table.play(table.alice, "h7-g7"),
        grpc.StatusCode.INVALID_ARGUMENT,
        "ILLEGAL_MOVE",
        "Light's; you play Dark",
    )
    await assert_refused(
        table.play(table.alice, "pass"),
        grpc.StatusCode.INVALID_ARGUMENT,
        "ILLEGAL_MOVE",
        "no legal move",
    )
    assert await table.snapshot() == before
    # The legal forms go through: flip onto a walled Stone, then a flip back onto an occupied Pearl
    # is refused.
    await table.play(table.alice, "c2^C2")
    await table.play(table.bob, "h7-g7")
    before = await table.snapshot()
    await assert_refused(
        table.play(table.alice, "C2^d2"),
        grpc.StatusCode.INVALID_ARGUMENT,
        "ILLEGAL_MOVE",
        "d2 is occupied",
    )
    await table.play(table.alice, "C2^c3-d3")  # flip onto an inside Pearl, then step inside
    view = await table.snapshot()
    pearls = {s.name: s.piece for s in view.view.pearls}
    assert pearls["d3"] == zoxso_pb2.Piece(seat=0, type=zoxso_pb2.PIECE_TYPE_MA)
    assert "c2" not in pearls
    assert not view.view.stones
    assert view.status.version == before.status.version + 1


async def test_wrong_seat_and_turn(table: Table) -> None:
    before = await table.snapshot()
    await assert_refused(
        table.play(table.bob, "M@a8"),
        grpc.StatusCode.FAILED_PRECONDITION,
        "NOT_YOUR_TURN",
        "Dark's turn",
    )
    await assert_refused(
        table.play(table.alice, "M@a8", seat=1),
        grpc.StatusCode.PERMISSION_DENIED,
        "NOT_YOUR_SEAT",
        "seat 1 is not yours",
    )
    outsider = Session(table.platform.target)
    await outsider.login("mallory")
    await assert_refused(
        table.play(outsider, "M@a1"), grpc.StatusCode.PERMISSION_DENIED, "NOT_YOUR_SEAT"
    )
    await assert_refused(
        outsider.game(GAME).LegalMoves(
            common_pb2.LegalMovesRequest(game_id=table.game_id), metadata=outsider.metadata
        ),
        grpc.StatusCode.PERMISSION_DENIED,
        "NOT_YOUR_SEAT",
    )
    spectator = await outsider.game(GAME).GetView(
        common_pb2.GetViewRequest(game_id=table.game_id), metadata=outsider.metadata
    )
    assert not spectator.HasField("seat")
    assert spectator.view == before.view  # nothing is hidden in ZoxSo
    await outsider.close()
    legal = await table.bob.game(GAME).LegalMoves(
        common_pb2.LegalMovesRequest(game_id=table.game_id), metadata=table.bob.metadata
    )
    assert list(legal.moves) == []
    assert await table.snapshot() == before


async def test_stale_version(table: Table) -> None:
    await table.play(table.alice, "M@a1", expected_version=0)
    before = await table.snapshot()
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await table.play(table.bob, "M@h8", expected_version=0)
    assert caught.value.code() == grpc.StatusCode.ABORTED
    reason, metadata = error_info(caught.value)
    assert reason == "STALE_VERSION"
    assert metadata["version"] == "1"
    assert await table.snapshot() == before


async def test_game_over_and_bad_options(table: Table) -> None:
    await table.play(table.alice, "M@a1")
    await table.bob.game(GAME).Resign(
        common_pb2.ResignRequest(game_id=table.game_id), metadata=table.bob.metadata
    )
    before = await table.snapshot()
    await assert_refused(
        table.play(table.bob, "M@h8"), grpc.StatusCode.FAILED_PRECONDITION, "GAME_OVER"
    )
    assert await table.snapshot() == before
    for bad in (0, -3):
        await assert_refused(
            table.alice.game(GAME).CreateGame(
                zoxso_pb2.CreateGameRequest(
                    players=[table.alice.player_id, table.alice.player_id],  # a hot-seat table
                    options=zoxso_pb2.Options(max_plies=bad),
                ),
                metadata=table.alice.metadata,
            ),
            grpc.StatusCode.INVALID_ARGUMENT,
            "INVALID_OPTIONS",
            "max_plies",
        )
    await assert_refused(
        table.alice.game(GAME).CreateGame(
            zoxso_pb2.CreateGameRequest(players=[table.alice.player_id]),
            metadata=table.alice.metadata,
        ),
        grpc.StatusCode.INVALID_ARGUMENT,
        "INVALID_ARGUMENT",
        "2 seats",
    )


async def test_xing_flip_onto_the_throne_ends_the_turn(table: Table) -> None:
    """Z9 (revised, rules edition 2): the flip onto the Throne wins at once, so no move may
    follow it; `d4^D4-D5` is refused with the reason and the winning move."""
    await table.xing_next_to_the_throne()
    before = await table.snapshot()
    assert before.status.rules_edition == 2
    assert ADAPTER.view_json(before)["edition"] == 2
    legal = await table.legal(table.alice)
    assert "d4^D4" in legal
    assert not [move for move in legal if move.startswith("d4^D4-")]
    await assert_refused(
        table.play(table.alice, "d4^D4-D5"),
        grpc.StatusCode.INVALID_ARGUMENT,
        "ILLEGAL_MOVE",
        "wins there at once",
        "no move may follow it (Z9)",
        "play d4^D4 to win",
    )
    assert await table.snapshot() == before
    reply = await table.play(table.alice, "d4^D4")
    assert [e.WhichOneof("kind") for e in reply.events] == ["flipped", "won"]
    assert reply.events[0].flipped.to_square == "D4"
    assert reply.events[1].won == zoxso_pb2.Won(seat=0, reason=zoxso_pb2.WIN_REASON_THRONE)
    assert reply.status.finished
    assert list(reply.status.result.winners) == [0]
    assert json_format.MessageToDict(reply.status.result.detail) == {"reason": "throne"}


async def test_a_game_stored_before_the_revision_finishes_under_edition_1(table: Table) -> None:
    """A game stored before rules editions existed (snapshot and meta without an edition) is
    played under edition 1, where a Xing could still flip onto the Throne and move off it.

    The stored game is written as the service before the revision wrote it: the position after
    the same placements and moves as above, with Dark's Xing on d4, at version 0 (no replica
    has served it, so each reads it from Redis)."""
    state = RULES.new_game(0, edition=1)
    for dark, light in zip(THRONE_DARK, LIGHT, strict=True):
        state = state.apply(0, dark)[0].apply(1, light)[0]
    for move in TO_THRONE:
        state = state.apply(state.to_move, move)[0]
    table.game_id = await store_as_before_editions(table.platform.redis_url, table.game_id, state)
    before = await table.snapshot()
    assert before.status.version == 0
    assert before.status.rules_edition == 1
    assert ADAPTER.view_json(before)["edition"] == 1
    assert "d4^D4-D5" in await table.legal(table.alice)
    reply = await table.play(table.alice, "d4^D4-D5", expected_version=0)
    assert [e.WhichOneof("kind") for e in reply.events] == ["flipped", "moved"]
    assert not reply.status.finished
    assert reply.status.rules_edition == 1
    redis = Redis.from_url(table.platform.redis_url)
    stored = await redis.hget(keys.game_state(table.game_id), "snapshot")
    await redis.aclose()
    assert isinstance(stored, bytes)
    assert json.loads(stored)["edition"] == 1  # the engine now writes the edition it plays
    view = await table.snapshot()
    assert {s.name for s in view.view.stones} == {"D5"}
    assert view.status.rules_edition == 1
    await table.play(table.bob, "a5-a4")
    await table.play(table.alice, "D5-D4")  # a step onto the Throne wins in edition 1 too
    final = await table.snapshot()
    assert final.status.finished
    assert json_format.MessageToDict(final.status.result.detail) == {"reason": "throne"}
