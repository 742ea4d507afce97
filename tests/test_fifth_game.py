"""A game is its package, its proto and one registration line: tic-tac-toe, which only the tests
register (tests/fifth_game/), passes the engine contract and plays whole games through the real
gateway, lobby, Watch streams and bot workers, with no edit anywhere else."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterator
from pathlib import Path

import pytest

import games
from tabletop.common.v1 import common_pb2
from tabletop.lobby.v1 import lobby_pb2, lobby_pb2_grpc
from tests.conformance import check_rules
from tests.fifth_game.compile import compile_proto
from tests.fifth_game.tictactoe import GAME
from tests.platform import Platform, logged_in, watch_all
from tests.timing import patience


@pytest.fixture
def tictactoe(tmp_path: Path) -> Iterator[games.Game]:
    compile_proto(tmp_path)
    games.register(GAME)  # the one line
    try:
        yield GAME
    finally:
        games.unregister(GAME.name)


def test_the_fifth_game_keeps_the_engine_contract(tictactoe: games.Game) -> None:
    assert "tictactoe" in games.names()
    assert check_rules(tictactoe.rules, range(200)) == 200


def test_the_bots_of_the_fifth_game_are_its_levels(tictactoe: games.Game) -> None:
    from tests.fifth_game.tictactoe.rules import RULES

    levels = tictactoe.levels()
    assert list(levels) == list(games.LEVELS)
    state = RULES.new_game(0)
    for move in ["a1", "a2", "b1", "b2"]:  # X threatens c1, O threatens c2
        state, _ = state.apply(state.to_act()[0], move)
    from engines.bots.base import Turn

    turn = Turn("tictactoe", 0, state.view(0), state.legal_moves(0), 0.0)
    for level in ("greedy", "strong"):
        assert levels[level]().choose(turn, random.Random(0)) == "c1"  # wins at once


@pytest.mark.integration
async def test_the_fifth_game_is_played_through_the_platform(
    redis_url: str, tictactoe: games.Game
) -> None:
    async with Platform(redis_url, games=("tictactoe",), bot_workers=1) as platform:
        (person,) = await logged_in(platform, "person")
        lobby = lobby_pb2_grpc.LobbyServiceStub(person.channel)
        started = await lobby.PlayAgainstBots(
            lobby_pb2.PlayAgainstBotsRequest(game="tictactoe", level="strong"),
            metadata=person.metadata,
        )
        game_id, seat = started.status.game_id, started.seat
        assert started.status.seats[1 - seat].name == "strong bot"
        stub = person.game("tictactoe")
        watching = asyncio.create_task(watch_all(person, "tictactoe", game_id))
        rng = random.Random(5)
        while True:
            view = await stub.GetView(
                common_pb2.GetViewRequest(game_id=game_id), metadata=person.metadata
            )
            if view.status.finished:
                break
            legal = await stub.LegalMoves(
                common_pb2.LegalMovesRequest(game_id=game_id), metadata=person.metadata
            )
            if legal.moves and legal.version == view.status.version:
                await stub.Play(
                    common_pb2.PlayRequest(
                        game_id=game_id,
                        move=rng.choice(list(legal.moves)),
                        expected_version=legal.version,
                    ),
                    metadata=person.metadata,
                )
            else:
                await asyncio.sleep(0.02)
        updates = await asyncio.wait_for(watching, patience(10))
        assert [u.envelope.version for u in updates] == list(range(view.status.version + 1))
        assert updates[-1].status.finished
        bot_moves = [u for u in updates if u.envelope.actor == 1 - seat]
        assert bot_moves, "the bot took its seat"
        assert all(u.events[0].marked.seat == u.envelope.actor for u in updates[1:])
        # A strong bot never loses tic-tac-toe: a random player at best draws.
        assert seat not in updates[-1].status.result.winners
        listed = await lobby.ListGames(lobby_pb2.ListGamesRequest(), metadata=person.metadata)
        assert [g.status.game_id for g in listed.games] == [game_id]
