"""Shared pieces of the Solo service tests (this module holds no tests of its own).

`create_with_setup` writes a game to Redis exactly as the service's CreateGame does, but from an
explicit setup (the API deals at random): the runtime's GameStore, the engine's serialized state,
the meta and status the servicer writes, the rules edition included (the current one unless
given: a game of edition 1 stands for one stored before edition 2).
"""

from __future__ import annotations

import random
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import grpc
import pytest_asyncio
from redis.asyncio import Redis

from client.session import Session
from games.solo.rules import FULL_DECK, RULES
from services.game.core import new_game_id, status_of
from services.game.store import GameStore
from tabletop.common.v1 import common_pb2
from tabletop.solo.v1 import solo_pb2
from tests.platform import Platform
from wire.errors import error_info
from wire.records import GameMeta


@pytest_asyncio.fixture
async def solo_platform(redis_url: str) -> AsyncIterator[Platform]:
    """Two Solo replicas and a gateway on free ports, sharing the session's Redis."""
    async with Platform(redis_url, games=("solo",), replicas=2) as running:
        yield running


async def close_all(sessions: Sequence[Session]) -> None:
    for session in sessions:
        await session.close()


async def create_with_setup(
    redis_url: str,
    players: Sequence[str],
    setup: Mapping[str, Any],
    options: Mapping[str, Any] | None = None,
    seed: int = 1,
    edition: int | None = None,
    window_ms: int | None = None,
) -> str:
    """A game created from an explicit setup, stored the way GameServicer.CreateGame stores one
    (`window_ms`: its jump-in window; None: none stored, as in a game made before tables had
    one, which gets Solo's default)."""
    opts = {"players": len(players), **(options or {})}
    state = RULES.new_game(seed, opts, setup, edition=edition)
    game_id = new_game_id("solo")
    meta = {
        "game": "solo",
        "seats": list(players),
        "options": opts,
        "edition": state.edition,
    }
    if window_ms is not None:
        meta["jump_in_window_ms"] = window_ms
    redis = Redis.from_url(redis_url)
    try:
        await GameStore(redis).create(
            game_id,
            state.serialize(),
            GameMeta.from_json(meta),
            [],
            status_of(state),
            table=None,
            time_ms=0,
        )
    finally:
        await redis.aclose()
    return game_id


def dealt_setup(
    fixed: Sequence[Sequence[str]],
    top: str,
    rng: random.Random,
    hand_size: int = 8,
    start_seat: int = 0,
) -> dict[str, Any]:
    """Hands holding the `fixed` cards, filled up to `hand_size` from the rest of the deck
    (shuffled with `rng`); `top` turned over; the rest is the draw pile."""
    rest = list(FULL_DECK)
    for card in [top, *(card for hand in fixed for card in hand)]:
        rest.remove(card)
    rng.shuffle(rest)
    hands = []
    for cards in fixed:
        extra = hand_size - len(cards)
        hands.append([*cards, *rest[:extra]])
        del rest[:extra]
    return {"hands": hands, "draw_pile": rest, "discard": [top], "start_seat": start_seat}


def play_request(game_id: str, move: str, **fields: Any) -> common_pb2.PlayRequest:
    return common_pb2.PlayRequest(game_id=game_id, move=move, **fields)


async def play(session: Session, game_id: str, move: str, **fields: Any) -> solo_pb2.PlayResponse:
    reply: solo_pb2.PlayResponse = await session.game("solo").Play(
        play_request(game_id, move, **fields), metadata=session.metadata
    )
    return reply


async def view(session: Session, game_id: str, public: bool = False) -> solo_pb2.GetViewResponse:
    reply: solo_pb2.GetViewResponse = await session.game("solo").GetView(
        common_pb2.GetViewRequest(game_id=game_id, public=public), metadata=session.metadata
    )
    return reply


async def legal(session: Session, game_id: str) -> common_pb2.LegalMovesResponse:
    reply: common_pb2.LegalMovesResponse = await session.game("solo").LegalMoves(
        common_pb2.LegalMovesRequest(game_id=game_id), metadata=session.metadata
    )
    return reply


async def refused(call: Any) -> tuple[grpc.StatusCode, str, dict[str, str], str]:
    """(code, reason, metadata, message) of a call that must fail."""
    try:
        await call
    except grpc.aio.AioRpcError as error:
        reason, metadata = error_info(error)
        return error.code(), reason, dict(metadata), error.details() or ""
    raise AssertionError("the call was expected to fail")
