"""The archive on the real stack (PostgreSQL, Redis, the game services, the lobby, the gateway
and the archiver): every finished game is written once, through a crash and a replayed event;
it replays to the same end after Redis lost it; a player's history pages and filters; nothing
in an archived game shown to another player holds a hidden card or the seed."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import gzip
import json
import random
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
import psycopg
import pytest
import pytest_asyncio
from google.protobuf import text_format
from redis.asyncio import Redis
from redis.exceptions import ResponseError

from client.cli import main as cli
from client.session import Session
from runtime import game_log, keys
from runtime.redis import connect_redis
from services.archive.archiver import ARCHIVE_GROUP, Archiver
from services.archive.record import archived
from services.archive.store import store
from services.ratings.cache import RatingCache
from services.ratings.model import Rating
from tabletop.common.v1 import common_pb2
from tabletop.esoloe.v1 import esoloe_pb2
from tabletop.lobby.v1 import lobby_pb2
from tabletop.solo.v1 import solo_pb2
from tests.integration.test_accounts import PASSWORD
from tests.integration.test_client import state_dir, tabletop
from tests.integration.test_rated_play import matched
from tests.integration.test_ratings import Consumer, acknowledged, finished_entry, fresh_stream
from tests.platform import Platform, assert_refused
from tests.timing import eventually

pytestmark = pytest.mark.integration

__all__ = ["state_dir"]  # the fixture of tests/integration/test_client.py


@pytest_asyncio.fixture
async def stack(redis_url: str, database_url: str) -> AsyncIterator[tuple[Platform, Redis]]:
    await fresh_stream(redis_url)
    async with Platform(
        redis_url,
        games=("esoloe", "solo"),
        database_url=database_url,
        matchmakers=1,
        gateway_settings={"login_rate_burst": 1000.0},
    ) as platform:
        redis = connect_redis(redis_url)
        try:
            yield platform, redis
        finally:
            await redis.aclose()


def archived_rows(database_url: str, game_id: str) -> int:
    with psycopg.connect(database_url) as connection:
        row = connection.execute(
            "SELECT count(*) FROM archived_games WHERE game_id = %s", (game_id,)
        ).fetchone()
    assert row is not None
    return int(row[0])


async def play_out(sessions: dict[int, Session], game: str, game_id: str, seed: int) -> Any:
    """Random legal moves by whichever seat is to act until the game ends: the final view."""
    rng = random.Random(seed)
    anyone = next(iter(sessions.values()))
    stub = anyone.game(game)
    while True:
        view = await stub.GetView(
            common_pb2.GetViewRequest(game_id=game_id, public=True), metadata=anyone.metadata
        )
        if view.status.finished:
            return view
        seat = view.status.to_act[0]
        session = sessions[seat]
        legal = await stub.LegalMoves(
            common_pb2.LegalMovesRequest(game_id=game_id, seat=seat), metadata=session.metadata
        )
        await stub.Play(
            common_pb2.PlayRequest(
                game_id=game_id,
                move=rng.choice(list(legal.moves)),
                seat=seat,
                expected_version=view.status.version,
            ),
            metadata=session.metadata,
        )


async def test_every_finished_game_is_archived_once_and_replays_after_redis_lost_it(
    stack: tuple[Platform, Redis], redis_url: str, database_url: str
) -> None:
    platform, redis = stack
    ann, bob = Session(platform.target), Session(platform.target)
    await ann.register("ann", PASSWORD)
    await bob.register("bob", PASSWORD)
    request = lobby_pb2.FindMatchRequest(game="esoloe")
    tickets = [await s.lobby.FindMatch(request, metadata=s.metadata) for s in (ann, bob)]
    found = await asyncio.gather(
        *(matched(s, t.ticket_id) for s, t in zip((ann, bob), tickets, strict=True))
    )
    game_id = found[0].game_id
    seats = {t.seat: s for t, s in zip(found, (ann, bob), strict=True)}
    final = await play_out(seats, "esoloe", game_id, 7)
    entry_id, fields = await finished_entry(redis, game_id)
    # An archiver wrote the game and was killed before it acknowledged the entry.
    with contextlib.suppress(ResponseError):  # BUSYGROUP
        await redis.xgroup_create(keys.FINISHED_GAMES, ARCHIVE_GROUP, id="0", mkstream=True)
    await redis.xreadgroup(ARCHIVE_GROUP, "killed", {keys.FINISHED_GAMES: "0"}, count=1)
    await redis.xclaim(keys.FINISHED_GAMES, ARCHIVE_GROUP, "killed", 0, [entry_id])
    meta, entries = await game_log.full(redis, game_id)
    assert meta is not None
    async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as conn:
        assert await store(conn, archived(game_id, meta, entries))
    resent: dict[Any, Any] = dict(fields)
    replay = await redis.xadd(keys.FINISHED_GAMES, resent)  # and the event comes again
    async with Consumer(redis_url, database_url, "survivor", Archiver, keep_seconds=60):
        await eventually(
            lambda: acknowledged(redis, replay, ARCHIVE_GROUP),
            10,
            "the pending entry taken over, the replay handled",
        )
    assert archived_rows(database_url, game_id) == 1
    assert 0 < await redis.ttl(keys.game_state(game_id)) <= 60  # Redis keeps it less long
    record = await ann.lobby.GetArchivedGame(
        lobby_pb2.GetArchivedGameRequest(game_id=game_id), metadata=ann.metadata
    )
    assert len(record.moves) == final.status.version
    assert [m.move for m in record.moves] == [e.move for e in entries[1:]]
    assert record.result == final.status.result
    assert {s.player_id for s in record.seats} == {ann.player_id, bob.player_id}
    # Redis loses the game: the archive still has it, and replays it to the same end.
    await redis.delete(keys.game_state(game_id), keys.game_events(game_id))
    end = await bob.lobby.GetArchivedView(
        lobby_pb2.GetArchivedViewRequest(game_id=game_id, version=len(record.moves)),
        metadata=bob.metadata,
    )
    assert end.finished
    shown = esoloe_pb2.View()
    assert end.view.Unpack(shown)
    assert shown == final.view
    first = await bob.lobby.GetArchivedView(
        lobby_pb2.GetArchivedViewRequest(game_id=game_id, version=0), metadata=bob.metadata
    )
    assert not first.finished
    for bad in (-1, len(record.moves) + 1):
        await assert_refused(
            bob.lobby.GetArchivedView(
                lobby_pb2.GetArchivedViewRequest(game_id=game_id, version=bad),
                metadata=bob.metadata,
            ),
            grpc.StatusCode.INVALID_ARGUMENT,
            "INVALID_ARGUMENT",
            "version",
        )
    # the history: ann's, bob's, filtered and paged
    mine = await ann.lobby.ListArchivedGames(
        lobby_pb2.ListArchivedGamesRequest(), metadata=ann.metadata
    )
    assert [g.game_id for g in mine.games] == [game_id]
    ann_seat = next(t.seat for t, s in zip(found, (ann, bob), strict=True) if s is ann)
    assert mine.games[0].outcome == record.seats[ann_seat].outcome != lobby_pb2.OUTCOME_NONE
    assert mine.games[0].moves == len(record.moves)
    theirs = await ann.lobby.ListArchivedGames(
        lobby_pb2.ListArchivedGamesRequest(player_id=bob.player_id, opponent=ann.player_id),
        metadata=ann.metadata,
    )
    assert [g.game_id for g in theirs.games] == [game_id]
    for empty in (
        lobby_pb2.ListArchivedGamesRequest(game="solo"),
        lobby_pb2.ListArchivedGamesRequest(opponent="a-" + "0" * 16),
        lobby_pb2.ListArchivedGamesRequest(
            outcome=lobby_pb2.OUTCOME_WIN
            if mine.games[0].outcome != lobby_pb2.OUTCOME_WIN
            else lobby_pb2.OUTCOME_LOSS
        ),
    ):
        listed = await ann.lobby.ListArchivedGames(empty, metadata=ann.metadata)
        assert list(listed.games) == [], empty
    await assert_refused(
        ann.lobby.ListArchivedGames(
            lobby_pb2.ListArchivedGamesRequest(page_token="nonsense"), metadata=ann.metadata
        ),
        grpc.StatusCode.INVALID_ARGUMENT,
        "INVALID_ARGUMENT",
        "page_token",
    )
    for session in (ann, bob):
        await session.close()


async def test_an_archived_game_shows_no_hidden_card_nor_its_seed(
    stack: tuple[Platform, Redis], redis_url: str, database_url: str
) -> None:
    platform, redis = stack
    ann, bob = Session(platform.target), Session(platform.target)
    await ann.register("ann", PASSWORD)
    await bob.register("bob", PASSWORD)
    created = await ann.game("solo").CreateGame(
        solo_pb2.CreateGameRequest(
            players=[ann.player_id, ann.player_id], options=solo_pb2.Options(players=2)
        ),
        metadata=ann.metadata,
    )
    game_id = created.status.game_id
    meta, _ = await game_log.full(redis, game_id)
    assert meta is not None
    seed = str(meta.seed)
    stub = ann.game("solo")
    rng = random.Random(3)
    for _ in range(12):  # a few moves, then a resignation
        view = await stub.GetView(
            common_pb2.GetViewRequest(game_id=game_id, seat=0), metadata=ann.metadata
        )
        if view.status.finished:
            break
        seat = view.status.to_act[0]
        legal = await stub.LegalMoves(
            common_pb2.LegalMovesRequest(game_id=game_id, seat=seat), metadata=ann.metadata
        )
        await stub.Play(
            common_pb2.PlayRequest(game_id=game_id, move=rng.choice(list(legal.moves)), seat=seat),
            metadata=ann.metadata,
        )
    view = await stub.GetView(
        common_pb2.GetViewRequest(game_id=game_id, public=True), metadata=ann.metadata
    )
    if not view.status.finished:
        await stub.Resign(common_pb2.ResignRequest(game_id=game_id, seat=0), metadata=ann.metadata)
    public = await stub.GetView(
        common_pb2.GetViewRequest(game_id=game_id, public=True), metadata=bob.metadata
    )
    async with Consumer(redis_url, database_url, "archiver", Archiver) as arch:
        await eventually(lambda: archived_rows(database_url, game_id) == 1, 10, "archived")
        assert arch.missed == 0
    record = await bob.lobby.GetArchivedGame(
        lobby_pb2.GetArchivedGameRequest(game_id=game_id), metadata=bob.metadata
    )
    said = [text_format.MessageToString(record)]
    for version in range(len(record.moves) + 1):
        archived_view = await bob.lobby.GetArchivedView(
            lobby_pb2.GetArchivedViewRequest(game_id=game_id, version=version),
            metadata=bob.metadata,
        )
        shown = solo_pb2.View()
        assert archived_view.view.Unpack(shown)
        assert list(shown.hand) == []  # what a spectator sees
        assert shown.drawn_card == ""
        said.append(text_format.MessageToString(shown))
    assert shown == public.view  # the last one: the live public view at the end
    assert seed not in "".join(said)


async def test_without_a_database_there_is_no_archive(redis_url: str) -> None:
    async with Platform(redis_url, games=("esoloe",)) as platform:
        guest = Session(platform.target)
        await guest.login("gus")
        await assert_refused(
            guest.lobby.ListArchivedGames(
                lobby_pb2.ListArchivedGamesRequest(), metadata=guest.metadata
            ),
            grpc.StatusCode.FAILED_PRECONDITION,
            "ACCOUNTS_DISABLED",
        )
        await guest.close()


async def test_the_client_lists_shows_exports_and_replays_archived_games(
    stack: tuple[Platform, Redis],
    redis_url: str,
    database_url: str,
    state_dir: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    platform, _ = stack
    ann = Session(platform.target)
    await ann.register("ann", PASSWORD)
    ids = []
    for game, request in (
        ("esoloe", esoloe_pb2.CreateGameRequest(players=[ann.player_id] * 2)),
        (
            "solo",
            solo_pb2.CreateGameRequest(
                players=[ann.player_id] * 2, options=solo_pb2.Options(players=2)
            ),
        ),
    ):
        created = await ann.game(game).CreateGame(request, metadata=ann.metadata)
        ids.append(created.status.game_id)
    await play_out({0: ann, 1: ann}, "esoloe", ids[0], 11)
    await ann.game("solo").Resign(
        common_pb2.ResignRequest(game_id=ids[1], seat=0), metadata=ann.metadata
    )
    async with Consumer(redis_url, database_url, "archiver", Archiver):
        await eventually(
            lambda: all(archived_rows(database_url, g) for g in ids), 10, "both archived"
        )
    await tabletop(platform, "login", "ann", script=PASSWORD + "\n")
    listed = await tabletop(platform, "history")
    assert [line.split()[-1] for line in listed.out.splitlines()[:2]] == ids[::-1]
    only = await tabletop(platform, "history", "--game", "solo")
    assert ids[1] in only.out
    assert ids[0] not in only.out
    text = await tabletop(platform, "show", ids[0], "--text")
    assert text.out.startswith('[Game "esoloe"]')
    (state_dir / "game.txt").write_text(text.out)
    assert cli(["replay", "--file", str(state_dir / "game.txt")]) == 0
    again = capsys.readouterr().out
    assert "1 game(s): 1 replayed to the recorded result, 0 not" in again
    lines = text.out.splitlines()  # a record whose moves do not give its result
    last = max(i for i, line in enumerate(lines) if line[:1].isdigit())
    (state_dir / "cut.txt").write_text("\n".join(lines[:last]) + "\n")
    assert cli(["replay", "--file", str(state_dir / "cut.txt")]) == 1
    assert "0 replayed to the recorded result, 1 not" in capsys.readouterr().out
    shown = await tabletop(platform, "show", ids[0])
    assert "ended: " in shown.out
    month = datetime.datetime.now(datetime.UTC).strftime("%Y-%m")
    out = state_dir / "month.ndjson.gz"
    exported = await tabletop(platform, "export", "--month", month, "--out", str(out))
    assert exported.out.startswith("2 games written"), exported.out + exported.err
    refused = await tabletop(platform, "export", "--month", "2026-13", "--out", str(out) + ".x")
    assert refused.code == 1, refused
    assert "games written" not in refused.out
    assert "2026-13" in refused.out + refused.err
    records = [json.loads(line) for line in gzip.decompress(out.read_bytes()).splitlines()]
    assert [r["game_id"] for r in records] == ids
    assert all("seed" not in r for r in records)
    assert cli(["replay", "--file", str(out)]) == 0
    assert (
        "2 game(s): 1 replayed to the recorded result, 0 not; 1 with hidden information"
        in capsys.readouterr().out
    )
    await assert_refused(
        consume(ann.lobby.ExportArchive(
            lobby_pb2.ExportArchiveRequest(month="2026-13"), metadata=ann.metadata
        )),
        grpc.StatusCode.INVALID_ARGUMENT,
        "INVALID_ARGUMENT",
        "month",
    )  # fmt: skip
    await ann.close()


async def consume(stream: Any) -> list[Any]:
    return [item async for item in stream]


async def test_live_games_to_watch_best_rated_first(
    stack: tuple[Platform, Redis], state_dir: Path
) -> None:
    platform, redis = stack
    ann, bob, cal = (Session(platform.target) for _ in range(3))
    for session, name in ((ann, "ann"), (bob, "bob"), (cal, "cal")):
        await session.register(name, PASSWORD)
    await RatingCache(redis).put(
        "esoloe", {ann.player_id: Rating(40.0, 2.0, 30), bob.player_id: Rating(41.0, 2.0, 30)}
    )  # shown 2360 and 2400
    casual = await cal.game("esoloe").CreateGame(
        esoloe_pb2.CreateGameRequest(players=[cal.player_id] * 2), metadata=cal.metadata
    )
    rated = lobby_pb2.FindMatchRequest(game="esoloe", rated=True)
    tickets = [await s.lobby.FindMatch(rated, metadata=s.metadata) for s in (ann, bob)]
    found = await asyncio.gather(
        *(matched(s, t.ticket_id) for s, t in zip((ann, bob), tickets, strict=True))
    )
    ours = [found[0].game_id, casual.status.game_id]

    async def listed() -> list[Any] | None:
        reply = await cal.lobby.ListLiveGames(
            lobby_pb2.ListLiveGamesRequest(game="esoloe", limit=50), metadata=cal.metadata
        )
        games_here = [g for g in reply.games if g.status.game_id in ours]
        return games_here if len(games_here) == 2 else None

    live = await eventually(listed, 10, "both games listed")
    assert [g.status.game_id for g in live] == ours  # the rated one first
    assert live[0].rating == 2400
    assert not live[1].HasField("rating")  # cal has no rating yet
    await tabletop(platform, "login", "cal", script=PASSWORD + "\n")
    shown = await tabletop(platform, "live", "esoloe", "--limit", "50")
    assert shown.out.index(ours[0]) < shown.out.index(ours[1])
    loser = ann if found[0].seat == 0 else bob
    await loser.game("esoloe").Resign(
        common_pb2.ResignRequest(game_id=ours[0]), metadata=loser.metadata
    )

    async def gone() -> bool:
        reply = await cal.lobby.ListLiveGames(
            lobby_pb2.ListLiveGamesRequest(game="esoloe", limit=50), metadata=cal.metadata
        )
        return ours[0] not in {g.status.game_id for g in reply.games}

    await eventually(gone, 10, "a finished game is no longer listed")
    await assert_refused(
        cal.lobby.ListLiveGames(lobby_pb2.ListLiveGamesRequest(limit=51), metadata=cal.metadata),
        grpc.StatusCode.INVALID_ARGUMENT,
        "INVALID_ARGUMENT",
        "limit",
    )
    for session in (ann, bob, cal):
        await session.close()


async def test_a_private_tables_game_is_shown_to_its_players_only(
    stack: tuple[Platform, Redis], redis_url: str, database_url: str
) -> None:
    platform, _ = stack
    ann, bob, eve = (Session(platform.target) for _ in range(3))
    for session, name in ((ann, "ann"), (bob, "bob"), (eve, "eve")):
        await session.register(name, PASSWORD)
    invite = await ann.lobby.CreateInvite(
        lobby_pb2.CreateInviteRequest(game="esoloe"), metadata=ann.metadata
    )
    joined = await bob.lobby.JoinInvite(
        lobby_pb2.JoinInviteRequest(code=invite.code), metadata=bob.metadata
    )

    async def started() -> str:
        mine = await bob.lobby.ListChallenges(
            lobby_pb2.ListChallengesRequest(), metadata=bob.metadata
        )
        return next(
            (c.game_id for c in mine.challenges if c.challenge_id == joined.challenge_id), ""
        )

    game_id = await eventually(started, 10, "the invite's game made")
    listed = await eve.lobby.ListLiveGames(
        lobby_pb2.ListLiveGamesRequest(game="esoloe", limit=50), metadata=eve.metadata
    )
    assert game_id not in {g.status.game_id for g in listed.games}  # not to watch
    await ann.game("esoloe").Resign(
        common_pb2.ResignRequest(game_id=game_id), metadata=ann.metadata
    )
    async with Consumer(redis_url, database_url, "archiver", Archiver):
        await eventually(lambda: archived_rows(database_url, game_id) == 1, 10, "archived")
    own = await ann.lobby.ListArchivedGames(
        lobby_pb2.ListArchivedGamesRequest(), metadata=ann.metadata
    )
    assert game_id in {g.game_id for g in own.games}  # her own history has it
    theirs = await eve.lobby.ListArchivedGames(
        lobby_pb2.ListArchivedGamesRequest(player_id=ann.player_id), metadata=eve.metadata
    )
    assert game_id not in {g.game_id for g in theirs.games}  # nobody else's view of it
    record = await bob.lobby.GetArchivedGame(
        lobby_pb2.GetArchivedGameRequest(game_id=game_id), metadata=bob.metadata
    )
    assert record.game_id == game_id
    await assert_refused(
        eve.lobby.GetArchivedGame(
            lobby_pb2.GetArchivedGameRequest(game_id=game_id), metadata=eve.metadata
        ),
        grpc.StatusCode.NOT_FOUND,
        "GAME_NOT_FOUND",
    )
    for session in (ann, bob, eve):
        await session.close()
