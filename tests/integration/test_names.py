"""Names that follow the player, on the real stack (PostgreSQL, Redis, the game services, the
lobby, the gateway, the archiver and the ratings consumer): a guest who registers is called by
their username in their history, their archived games (those played as a guest too), the
leaderboard, their rating and rating changes; players are found by username; `tabletop show`
says who won and how, and shows the board at any move as the engine replays it."""

from __future__ import annotations

import datetime
import io
import json
import random
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import psycopg
import pytest
import pytest_asyncio
from google.protobuf import json_format
from google.protobuf.any_pb2 import Any as AnyMessage
from redis.asyncio import Redis
from rich.console import Console

import games
from client.archive import draw_at
from client.boards import board_of
from client.session import Session
from runtime.redis import connect_redis
from services.archive.archiver import Archiver
from services.ratings.cache import RatingCache
from services.ratings.model import Rating
from tabletop.common.v1 import common_pb2
from tabletop.esoloe.v1 import esoloe_pb2
from tabletop.lobby.v1 import lobby_pb2
from tabletop.solo.v1 import solo_pb2
from tests.integration.test_accounts import PASSWORD
from tests.integration.test_archive import archived_rows, play_out
from tests.integration.test_client import state_dir, tabletop
from tests.integration.test_ratings import Consumer, counted, create, fresh_stream, play, resign
from tests.platform import Platform, assert_refused
from tests.timing import eventually

pytestmark = pytest.mark.integration

__all__ = ["state_dir"]  # the fixture of tests/integration/test_client.py

NOT_FOUND = grpc.StatusCode.NOT_FOUND


@pytest_asyncio.fixture
async def stack(redis_url: str, database_url: str) -> AsyncIterator[tuple[Platform, Redis]]:
    await fresh_stream(redis_url)
    async with Platform(
        redis_url,
        games=("esoloe", "solo"),
        database_url=database_url,
        gateway_settings={"login_rate_burst": 1000.0},
    ) as platform:
        redis = connect_redis(redis_url)
        try:
            yield platform, redis
        finally:
            await redis.aclose()


async def test_a_guest_who_registers_is_called_by_their_username_everywhere(
    stack: tuple[Platform, Redis], redis_url: str, database_url: str, state_dir: Path
) -> None:
    platform, redis = stack
    guest, bob = Session(platform.target), Session(platform.target)
    await guest.login("gus")
    await bob.register("bob", PASSWORD)
    # As a guest: a game against a bot (the lobby sees the guest as "gus"), resigned.
    made = await guest.lobby.PlayAgainstBots(
        lobby_pb2.PlayAgainstBotsRequest(game="esoloe", seat=0), metadata=guest.metadata
    )
    casual = made.status.game_id
    await guest.game("esoloe").Resign(
        common_pb2.ResignRequest(game_id=casual, seat=0), metadata=guest.metadata
    )
    live = await guest.lobby.PlayAgainstBots(
        lobby_pb2.PlayAgainstBotsRequest(game="esoloe", seat=0), metadata=guest.metadata
    )  # and one left live, to watch
    await guest.register("alice", PASSWORD)  # the guest claims an account: same player id
    alice = guest.player_id
    # A rated game of alice's and bob's, made as the lobby makes one (its seats named as the
    # lobby last saw them: alice as "gus"), played, then resigned.
    rated = await create(platform, "esoloe", [alice, bob.player_id], [0, 1])
    await play(platform, "esoloe", rated, [alice, bob.player_id])
    await resign(platform, "esoloe", rated, alice)
    async with (
        Consumer(redis_url, database_url, "archiver", Archiver),
        Consumer(redis_url, database_url, "ratings"),
    ):
        await eventually(
            lambda: all(archived_rows(database_url, g) == 1 for g in (casual, rated)),
            10,
            "both games archived",
        )
        await eventually(lambda: counted(database_url, rated) == 1, 10, "the rated game counted")

    async def change() -> lobby_pb2.GetRatingChangeResponse | None:
        reply = await bob.lobby.GetRatingChange(
            lobby_pb2.GetRatingChangeRequest(game_id=rated), metadata=bob.metadata
        )
        return reply if reply.counted else None

    counted_change = await eventually(change, 10, "the rating change in Redis")
    assert {c.player_id: c.name for c in counted_change.changes} == {
        alice: "alice",
        bob.player_id: "bob",
    }
    with psycopg.connect(database_url) as connection:
        stored = connection.execute(
            "SELECT seats->0->>'name' FROM archived_games WHERE game_id = %s", (casual,)
        ).fetchone()
    assert stored == ("gus",)  # the archive keeps what was; it is read by the name now
    # Her history, as bob reads it: by username or by player id, every seat called by its name.
    for request in (
        lobby_pb2.ListArchivedGamesRequest(username="Alice"),
        lobby_pb2.ListArchivedGamesRequest(player_id=alice),
    ):
        history = await bob.lobby.ListArchivedGames(request, metadata=bob.metadata)
        assert [g.game_id for g in history.games] == [rated, casual]
        names = [{s.player_id: s.name for s in g.seats} for g in history.games]
        assert names[0] == {alice: "alice", bob.player_id: "bob"}
        assert names[1][alice] == "alice"
        assert "random bot" in names[1].values()
    with_bob = await bob.lobby.ListArchivedGames(
        lobby_pb2.ListArchivedGamesRequest(username="alice", opponent_username="BOB"),
        metadata=bob.metadata,
    )
    assert [g.game_id for g in with_bob.games] == [rated]
    record = await bob.lobby.GetArchivedGame(
        lobby_pb2.GetArchivedGameRequest(game_id=casual), metadata=bob.metadata
    )
    assert record.seats[0].name == "alice"
    assert '[Seat0 "alice"]' in record.text
    month = datetime.datetime.now(datetime.UTC).strftime("%Y-%m")
    exported = [
        json.loads(line)
        async for piece in bob.lobby.ExportArchive(
            lobby_pb2.ExportArchiveRequest(month=month), metadata=bob.metadata
        )
        for line in piece.ndjson.splitlines()
    ]
    assert [r["seats"][0]["name"] for r in exported if r["game_id"] in (casual, rated)] == [
        "alice",
        "alice",
    ]
    watched = await bob.lobby.ListLiveGames(
        lobby_pb2.ListLiveGamesRequest(game="esoloe", limit=50), metadata=bob.metadata
    )
    seats = next(g.status.seats for g in watched.games if g.status.game_id == live.status.game_id)
    assert seats[0].name == "alice"
    await guest.game("esoloe").Resign(
        common_pb2.ResignRequest(game_id=live.status.game_id, seat=0), metadata=guest.metadata
    )
    # The leaderboard and her rating (established, as Redis's copy says).
    await RatingCache(redis).put("esoloe", {alice: Rating(40.0, 2.0, 30)})
    board = await bob.lobby.ListLeaderboard(
        lobby_pb2.ListLeaderboardRequest(game="esoloe", limit=100), metadata=bob.metadata
    )
    assert {e.player_id: e.name for e in board.entries}[alice] == "alice"
    found = await bob.lobby.GetRating(
        lobby_pb2.GetRatingRequest(game="esoloe", username="alice"), metadata=bob.metadata
    )
    assert (found.player_id, found.name, found.games) == (alice, "alice", 30)
    # Nobody of that name: said as such, for every call that takes a username.
    for call in (
        bob.lobby.ListArchivedGames(
            lobby_pb2.ListArchivedGamesRequest(username="nobody-here"), metadata=bob.metadata
        ),
        bob.lobby.GetRating(
            lobby_pb2.GetRatingRequest(game="esoloe", username="nobody-here"),
            metadata=bob.metadata,
        ),
        bob.lobby.GetScores(
            lobby_pb2.GetScoresRequest(game="solace", username="nobody-here"),
            metadata=bob.metadata,
        ),
    ):
        await assert_refused(call, NOT_FOUND, "PLAYER_NOT_FOUND", "nobody-here")
    await assert_refused(
        bob.lobby.ListArchivedGames(
            lobby_pb2.ListArchivedGamesRequest(player_id=alice, username="alice"),
            metadata=bob.metadata,
        ),
        grpc.StatusCode.INVALID_ARGUMENT,
        "INVALID_ARGUMENT",
        "not both",
    )
    # The terminal client, as bob: by username, by player id; nobody of that name.
    await tabletop(platform, "login", "bob", script=PASSWORD + "\n")
    for who in ("alice", alice):
        listed = await tabletop(platform, "history", who)
        assert listed.code == 0, listed.err
        assert [line.split()[-1] for line in listed.out.splitlines()[:2]] == [rated, casual]
        assert "gus" not in listed.out
        assert listed.out.splitlines()[1].count("alice") == 1
    against = await tabletop(platform, "history", "alice", "--opponent", "bob")
    assert [line.split()[-1] for line in against.out.splitlines()[:-1]] == [rated], against.out
    shown = await tabletop(platform, "rating", "esoloe", "alice")
    assert shown.code == 0, shown.err
    assert shown.out.splitlines()[0] == "alice:"
    assert "30 rated games" in shown.out
    every = await tabletop(platform, "rating", "alice")
    assert every.code == 0, every.err
    assert [line.split()[0] for line in every.out.splitlines()[1:5]] == [
        "esoloe",
        "solo",
        "zoxso",
        "solace",
    ]
    for command in (("history", "nobody-here"), ("rating", "esoloe", "nobody-here")):
        refused = await tabletop(platform, *command)
        assert refused.code == 1
        assert "PLAYER_NOT_FOUND" in refused.err
        assert "nobody-here" in refused.err
        assert "no finished games" not in refused.out
    for session in (guest, bob):
        await session.close()


def _text(renderable: object) -> str:
    """A board as the terminal client prints it through a pipe (no colours, 80 columns)."""
    console = Console(
        file=io.StringIO(), width=80, color_system=None, highlight=False, markup=False,
        soft_wrap=True,
    )  # fmt: skip
    console.print(renderable)
    out = console.file.getvalue()  # type: ignore[attr-defined]
    return str(out)


async def test_show_says_who_won_and_how_and_steps_to_any_move(
    stack: tuple[Platform, Redis], redis_url: str, database_url: str, state_dir: Path
) -> None:
    platform, _ = stack
    ann, bob, cal = (Session(platform.target) for _ in range(3))
    for session, name in ((ann, "ann"), (bob, "bob"), (cal, "cal")):
        await session.register(name, PASSWORD)
    for seed in range(5):  # (a game of random moves may end in a draw: another, then)
        won = await create(platform, "esoloe", [ann.player_id, bob.player_id], None)
        final = await play_out({0: ann, 1: bob}, "esoloe", won, seed)
        if final.status.result.winners:
            break
    resigned = await create(platform, "esoloe", [ann.player_id, bob.player_id], None)
    await resign(platform, "esoloe", resigned, bob.player_id)
    solo = await create(
        platform, "solo", [ann.player_id, bob.player_id, cal.player_id], None,
        options=solo_pb2.Options(players=3),
    )  # fmt: skip
    await resign(platform, "solo", solo, cal.player_id)
    ids = (won, resigned, solo)
    async with Consumer(redis_url, database_url, "archiver", Archiver):
        await eventually(
            lambda: all(archived_rows(database_url, g) for g in ids), 10, "the games archived"
        )
    await tabletop(platform, "login", "cal", script=PASSWORD + "\n")

    # A win played to its end: who won, the places, the way it ended.
    winner = final.status.result.winners[0]
    names = ["ann", "bob"]
    shown = await tabletop(platform, "show", won)
    assert shown.code == 0, shown.err
    assert f"result: {names[winner]} wins: " in shown.out
    assert f"places: 1. {names[winner]}, 2. {names[1 - winner]}\n" in shown.out
    assert "ended: played to the end\n" in shown.out
    # A resignation.
    shown = await tabletop(platform, "show", resigned)
    assert "result: ann wins: bob resigned\n" in shown.out
    assert "places: 1. ann, 2. bob\n" in shown.out
    assert "ended: by resignation: bob resigned\n" in shown.out
    # Solo: places by points (the two left share the win), who resigned.
    shown = await tabletop(platform, "show", solo)
    assert "result: ann and bob share the win with 200 points; cal -1 (cal resigned)\n" in (
        shown.out
    ), shown.out
    assert "places: 1. ann 200, 1. bob 200, 3. cal -1\n" in shown.out
    assert "ended: by resignation: cal resigned\n" in shown.out

    # Move N's board, as the engine replays the game to move N from its seed.
    record = await cal.lobby.GetArchivedGame(
        lobby_pb2.GetArchivedGameRequest(game_id=won), metadata=cal.metadata
    )
    with psycopg.connect(database_url) as connection:
        row = connection.execute(
            "SELECT seed FROM archived_games WHERE game_id = %s", (won,)
        ).fetchone()
    assert row is not None
    rules, adapter = games.get("esoloe").rules, games.get("esoloe").adapter
    board = board_of("esoloe")
    for n in sorted({0, random.Random(won).randrange(1, len(record.moves)), len(record.moves)}):
        state = rules.new_game(
            int(row[0]), json_format.MessageToDict(record.options), edition=record.rules_edition
        )
        for played in record.moves[:n]:
            state, _ = state.apply(played.seat, played.move)
        packed = AnyMessage()
        packed.Pack(adapter.view(state.view(None)))
        replayed = lobby_pb2.ArchivedView(
            version=n,
            to_act=[] if state.finished else list(state.public_to_act()),
            finished=state.finished,
            view=packed,
        )
        at = await tabletop(platform, "show", won, "--move", str(n))
        assert at.code == 0, at.err
        expected = _text(draw_at(record, board, replayed))
        assert expected.strip()
        assert expected in at.out, (n, at.out)
        moved = f"{n}. {names[record.moves[n - 1].seat]}: {record.moves[n - 1].move}"
        assert (moved if n else "0. the start") in at.out
    unpacked = esoloe_pb2.View()
    assert replayed.view.Unpack(unpacked)
    assert unpacked == final.view  # the last: the live end
    beyond = await tabletop(platform, "show", won, "--move", str(len(record.moves) + 1))
    assert beyond.code == 2
    assert f"move is 0 to {len(record.moves)}" in beyond.err
    for session in (ann, bob, cal):
        await session.close()
