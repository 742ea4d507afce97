"""Hidden information through the real service: two Solace deals that differ only inside black
pieces (L4) answer GetView, LegalMoves, Play, Watch and refusals identically, for the player and
for spectators, until a move lifts a black piece off a difference."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, TypeVar

import grpc
import pytest
import pytest_asyncio
from google.protobuf.message import Message
from redis.asyncio import Redis

from client.session import Session
from games.solace.layout import SPACES
from games.solace.rules import RULES
from services.game.core import new_game_id, status_of
from services.game.store import GameStore
from tabletop.common.v1 import common_pb2
from tabletop.solace.v1 import solace_pb2
from tests.platform import Platform
from wire.errors import error_info
from wire.records import GameMeta

pytestmark = pytest.mark.integration

# Seed 122's deal, and a twin: B1's 2 swapped with B3's 2 (both under black 3s), and C1's 1
# with C2's 1 (both under black 2s seen through clear 3s). Every difference is hidden.
DEAL_A = "b3b2c1 b3c2c1 b3c2b1 b3c2c1 b3b2b1 c3b2b1 c3b2c1 c3c2b1 c3c2b1 c3b2c1"
DEAL_B = "b3c2c1 b3c2c1 b3b2b1 b3c2c1 b3b2b1 c3b2c1 c3b2b1 c3c2b1 c3c2b1 c3b2c1"
SAME_MOVES = ["C3-C5", "B2-B4", "B2-C5"]  # reveal only what both deals share
REVEALING = "B1-B5"  # lifts B1's black 3: its 2 is black in one deal, clear in the other
PROBES = [f"{a}-{b}" for a in SPACES for b in SPACES] + ["stop", "B1B2"]

M = TypeVar("M", bound=Message)


def _setup(spec: str) -> dict[str, Any]:
    tokens = spec.split()
    return {"nests": {s: [t[0:2], t[2:4], t[4:6]] for s, t in zip(SPACES, tokens, strict=True)}}


def _anonymous(message: M) -> M:
    """The message without what differs between any two games: game id and time."""
    copy = type(message)()
    copy.CopyFrom(message)
    for field in ("status", "envelope"):
        if field in copy.DESCRIPTOR.fields_by_name and copy.HasField(field):
            sub = getattr(copy, field)
            sub.ClearField("game_id")
            if field == "envelope":
                sub.ClearField("time")
    return copy


@pytest_asyncio.fixture
async def solace(redis_url: str) -> AsyncIterator[Platform]:
    async with Platform(redis_url, games=("solace",)) as running:
        yield running


async def _stored_game(redis_url: str, spec: str, player: str) -> str:
    """A game created exactly as the servicer's CreateGame does, but with a chosen deal."""
    redis = Redis.from_url(redis_url)
    try:
        store = GameStore(redis)
        options: dict[str, Any] = {}
        state = RULES.new_game(1, options, _setup(spec))
        game_id = new_game_id("solace")
        meta = {"game": "solace", "seats": [player], "options": options, "seed": 1}
        await store.create(
            game_id,
            state.serialize(),
            GameMeta.from_json(meta),
            [],
            status_of(state),
            table=None,
            time_ms=0,
            listing=store.listing("solace", game_id),
        )
        return game_id
    finally:
        await redis.aclose()


class Twin:
    def __init__(self, session: Session, spectator: Session, game_id: str) -> None:
        self.session = session
        self.spectator = spectator
        self.game_id = game_id
        self.stub = session.game("solace")

    async def observe(self) -> list[Message]:
        """Everything the player and a spectator can read without moving."""
        seen: list[Message] = []
        for who, public in ((self.session, False), (self.session, True), (self.spectator, False)):
            seen.append(
                await who.game("solace").GetView(
                    common_pb2.GetViewRequest(game_id=self.game_id, public=public),
                    metadata=who.metadata,
                )
            )
        legal = await self.stub.LegalMoves(
            common_pb2.LegalMovesRequest(game_id=self.game_id), metadata=self.session.metadata
        )
        legal.game_id = ""
        return [*(_anonymous(m) for m in seen), legal]

    async def refusals(self, legal: set[str]) -> list[tuple[str, str, str]]:
        """(move, reason, message) of every probe that is not legal now."""
        out = []
        for move in PROBES:
            if move in legal:
                continue
            try:
                await self.play(move)
            except grpc.aio.AioRpcError as error:
                out.append((move, error_info(error)[0], error.details() or ""))
            else:  # pragma: no cover
                raise AssertionError(f"{move} was accepted")
        return out

    async def play(self, move: str) -> solace_pb2.PlayResponse:
        reply: solace_pb2.PlayResponse = await self.stub.Play(
            common_pb2.PlayRequest(game_id=self.game_id, move=move), metadata=self.session.metadata
        )
        return _anonymous(reply)

    async def watch(self) -> list[solace_pb2.WatchResponse]:
        out = []
        async for update in self.spectator.game("solace").Watch(
            common_pb2.WatchRequest(game_id=self.game_id), metadata=self.spectator.metadata
        ):
            out.append(_anonymous(update))
        return out


async def test_deals_differing_only_in_hidden_pieces_look_the_same(
    solace: Platform, redis_url: str
) -> None:
    player, spectator = Session(solace.target), Session(solace.target)
    await player.login("alone")
    await spectator.login("onlooker")
    a = Twin(player, spectator, await _stored_game(redis_url, DEAL_A, player.player_id))
    b = Twin(player, spectator, await _stored_game(redis_url, DEAL_B, player.player_id))
    assert RULES.new_game(1, {}, _setup(DEAL_A)).deal != RULES.new_game(1, {}, _setup(DEAL_B)).deal

    for move in SAME_MOVES:
        seen_a, seen_b = await a.observe(), await b.observe()
        assert seen_a == seen_b
        legal = set(seen_a[-1].moves)  # type: ignore[attr-defined]
        assert await a.refusals(legal) == await b.refusals(legal)
        assert await a.play(move) == await b.play(move)
    assert await a.observe() == await b.observe()

    # Lifting B1's black 3 shows its 2: only now do the games differ, by that reveal.
    reply_a, reply_b = await a.play(REVEALING), await b.play(REVEALING)
    assert reply_a != reply_b
    revealed_a = [e.revealed for e in reply_a.events if e.HasField("revealed")]
    revealed_b = [e.revealed for e in reply_b.events if e.HasField("revealed")]
    assert [r.piece.colour for r in revealed_a] == [solace_pb2.COLOUR_BLACK]
    assert [r.piece.colour for r in revealed_b] == [
        solace_pb2.COLOUR_CLEAR,
        solace_pb2.COLOUR_CLEAR,
    ]
    assert reply_a.events[0] == reply_b.events[0]  # the move itself looks the same
    assert await a.observe() != await b.observe()

    await a.play("stop")
    await b.play("stop")
    watched_a, watched_b = await a.watch(), await b.watch()
    same = len(SAME_MOVES) + 1  # creation and the shared moves
    assert watched_a[:same] == watched_b[:same]
    assert watched_a[same] != watched_b[same]
    for update in [*watched_a, *watched_b]:
        for event in update.events:
            if event.HasField("revealed"):
                assert event.revealed.piece.colour != solace_pb2.COLOUR_UNSPECIFIED


async def test_views_never_hold_a_colour_inside_a_black_piece(solace: Platform) -> None:
    """Along a whole game, every hidden piece is sent without a colour, and every shown piece
    has nothing black outside it in its nest."""
    player = Session(solace.target)
    await player.login("looker")
    stub = player.game("solace")
    created = await stub.CreateGame(
        solace_pb2.CreateGameRequest(players=[player.player_id]), metadata=player.metadata
    )
    game_id = created.status.game_id
    while True:
        view = (
            await stub.GetView(common_pb2.GetViewRequest(game_id=game_id), metadata=player.metadata)
        ).view
        for space in view.spaces:
            covered = False
            for piece in space.nest:
                assert piece.hidden == covered
                assert (piece.colour == solace_pb2.COLOUR_UNSPECIFIED) == covered
                covered = covered or piece.colour == solace_pb2.COLOUR_BLACK
        if view.finished:
            break
        legal = await stub.LegalMoves(
            common_pb2.LegalMovesRequest(game_id=game_id), metadata=player.metadata
        )
        await stub.Play(
            common_pb2.PlayRequest(game_id=game_id, move=legal.moves[0]), metadata=player.metadata
        )
