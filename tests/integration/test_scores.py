"""Solace's score tables on the real stack (PostgreSQL, Redis, the game service, the lobby, the
gateway and the ratings consumer): each finished game of an account counts once, guests' and
aborted games for nobody; the deal of the day is one deal for everyone, once a day each, with
its own table; Redis's tables are written again from PostgreSQL after Redis lost them."""

from __future__ import annotations

import asyncio
import datetime
import random
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
import psycopg
import pytest
import pytest_asyncio

from client.session import Session
from runtime import keys
from runtime.localredis import free_port
from runtime.redis import connect_redis
from services.ratings.scores import ScoreCache
from tabletop.accounts.v1 import accounts_pb2, accounts_pb2_grpc
from tabletop.common.v1 import common_pb2
from tabletop.lobby.v1 import lobby_pb2
from tabletop.solace.v1 import solace_pb2
from tests.integration.test_accounts import PASSWORD
from tests.integration.test_client import state_dir, tabletop
from tests.integration.test_ratings import Consumer, acknowledged, finished_entry, fresh_stream
from tests.platform import Platform, assert_refused
from tests.timing import eventually
from wire.errors import error_info

pytestmark = pytest.mark.integration

__all__ = ["state_dir"]  # the fixture of tests/integration/test_client.py

DAILY = solace_pb2.Options(deal_of_the_day=True)
INVALID = grpc.StatusCode.INVALID_ARGUMENT
UNAUTHENTICATED = grpc.StatusCode.UNAUTHENTICATED


@pytest_asyncio.fixture
async def stack(redis_url: str, database_url: str) -> AsyncIterator[Platform]:
    await fresh_stream(redis_url)
    async with Platform(
        redis_url,
        games=("solace",),
        database_url=database_url,
        sweep_seconds=0.1,
        gateway_settings={"login_rate_burst": 1000.0},
    ) as platform:
        yield platform


async def create(session: Session, **fields: Any) -> str:
    created = await session.game("solace").CreateGame(
        solace_pb2.CreateGameRequest(players=[session.player_id], **fields),
        metadata=session.metadata,
    )
    game_id: str = created.status.game_id
    return game_id


async def play_out(session: Session, game_id: str, seed: int, moves: int = 1000) -> float:
    """Random moves (at most `moves`), then `stop`: the game's score."""
    stub, rng = session.game("solace"), random.Random(seed)
    for _ in range(moves):
        legal = await stub.LegalMoves(
            common_pb2.LegalMovesRequest(game_id=game_id), metadata=session.metadata
        )
        if len(legal.moves) <= 1:
            break
        await stub.Play(
            common_pb2.PlayRequest(game_id=game_id, move=rng.choice(legal.moves[:-1])),
            metadata=session.metadata,
        )
    view = await stub.GetView(common_pb2.GetViewRequest(game_id=game_id), metadata=session.metadata)
    if not view.status.finished:
        reply = await stub.Play(
            common_pb2.PlayRequest(game_id=game_id, move="stop"), metadata=session.metadata
        )
        view = await stub.GetView(
            common_pb2.GetViewRequest(game_id=game_id), metadata=session.metadata
        )
        assert reply.status.finished
    return float(view.status.result.scores[0])


async def scores(session: Session, player_id: str = "") -> lobby_pb2.ScoreInfo:
    reply: lobby_pb2.ScoreInfo = await session.lobby.GetScores(
        lobby_pb2.GetScoresRequest(game="solace", player_id=player_id), metadata=session.metadata
    )
    return reply


async def table(session: Session, day: str = "", **fields: Any) -> lobby_pb2.ListScoreTableResponse:
    reply: lobby_pb2.ListScoreTableResponse = await session.lobby.ListScoreTable(
        lobby_pb2.ListScoreTableRequest(game="solace", day=day, **fields), metadata=session.metadata
    )
    return reply


def rows(database_url: str, *players: str) -> list[tuple[str, float]]:
    with psycopg.connect(database_url) as conn:
        return [
            (player, score)
            for player, score in conn.execute(
                "SELECT player_id, score FROM scores WHERE player_id = ANY(%s) ORDER BY game_id",
                (list(players),),
            )
        ]


async def test_each_game_of_an_account_counts_once_on_the_score_table(
    stack: Platform, redis_url: str, database_url: str
) -> None:
    ann, bob, gus = Session(stack.target), Session(stack.target), Session(stack.target)
    await ann.register("ann", PASSWORD)
    await bob.register("bob", PASSWORD)
    await gus.login("gus")
    assert (await scores(ann)).games == 0
    redis = connect_redis(redis_url)  # the session's Redis: other tests' players leave
    await redis.delete(keys.score_stats("solace"), keys.score_table("solace"))
    async with Consumer(redis_url, database_url, "scores-1"):
        played = [await play_out(ann, await create(ann), seed) for seed in (1, 2)]
        bob_game = await create(bob)
        played_bob = await play_out(bob, bob_game, 3)
        guest_game = await create(gus)
        await play_out(gus, guest_game, 4, moves=3)
        aborted = await create(ann, time_control=common_pb2.TimeControl(abort_seconds=1))
        await finished_entry(redis, aborted)  # ended by the platform: no result
        await finished_entry(redis, guest_game)
        await eventually(
            lambda: len(rows(database_url, ann.player_id, bob.player_id)) == 3,
            10,
            "the accounts' three games",
        )
        # the finished event of bob's game sent again: counted already
        _, fields = await finished_entry(redis, bob_game)
        resent: dict[Any, Any] = dict(fields)
        replay = await redis.xadd(keys.FINISHED_GAMES, resent)
        await eventually(lambda: acknowledged(redis, replay), 10, "the replay handled")
        assert len(rows(database_url, ann.player_id, bob.player_id)) == 3
    assert sorted(s for _, s in rows(database_url, ann.player_id)) == sorted(played)
    assert rows(database_url, bob.player_id) == [(bob.player_id, played_bob)]
    assert rows(database_url, gus.player_id) == []
    mine = await scores(ann)
    assert (mine.games, mine.best, mine.average) == (2, max(played), sum(played) / 2)
    assert mine.HasField("place")
    assert not mine.HasField("today")
    assert (await scores(ann, gus.player_id)).games == 0  # a guest's games count for nobody
    listed = await table(ann)
    assert listed.day == ""
    best = {ann.player_id: max(played), bob.player_id: played_bob}
    # (the session's other tests' players may be on the table too, from the shared stream)
    ours = [e for e in listed.entries if e.player_id in best]
    assert {e.player_id: e.best for e in ours} == best
    assert [e.best for e in listed.entries] == sorted(
        (e.best for e in listed.entries), reverse=True
    )
    assert [e.place for e in listed.entries] == list(range(1, len(listed.entries) + 1))
    # Redis loses the tables: written again from PostgreSQL
    await redis.delete(keys.score_stats("solace"), keys.score_table("solace"))
    assert (await scores(ann)).games == 0
    async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as conn:
        written = await ScoreCache(redis).rebuild(conn, datetime.datetime.now(datetime.UTC).date())
    assert written["solace"] >= 2
    assert await scores(ann) == mine
    await redis.aclose()
    for session in (ann, bob, gus):
        await session.close()


async def test_the_deal_of_the_day(
    stack: Platform, redis_url: str, database_url: str, state_dir: Path
) -> None:
    ann, bob, gus = Session(stack.target), Session(stack.target), Session(stack.target)
    await ann.register("ann", PASSWORD)
    await bob.register("bob", PASSWORD)
    await gus.login("gus")
    with psycopg.connect(database_url) as conn:  # the day's table: accounts made before the day
        conn.execute(
            "UPDATE accounts SET created_at = now() - interval '2 days' WHERE id = ANY(%s)",
            ([ann.player_id, bob.player_id],),
        )
    daily = [await create(s, options=DAILY) for s in (ann, bob)]
    views = [
        await s.game("solace").GetView(common_pb2.GetViewRequest(game_id=g), metadata=s.metadata)
        for s, g in zip((ann, bob), daily, strict=True)
    ]
    assert views[0].view == views[1].view  # one deal for everyone
    other = await create(ann)
    other_view = await ann.game("solace").GetView(
        common_pb2.GetViewRequest(game_id=other), metadata=ann.metadata
    )
    assert other_view.view != views[0].view  # any other game: a deal of its own
    # once a day each: the second try is refused, with the first game's id
    with pytest.raises(grpc.aio.AioRpcError) as again:
        await create(ann, options=DAILY)
    assert again.value.code() == grpc.StatusCode.ALREADY_EXISTS
    assert error_info(again.value) == ("ALREADY_PLAYED", {"game_id": daily[0]})
    # accounts only, seated themselves, default options
    await assert_refused(create(gus, options=DAILY), INVALID, "INVALID_ARGUMENT", "accounts")
    cal = Session(stack.target)
    await cal.register("cal", PASSWORD)
    await assert_refused(
        create(cal, options=solace_pb2.Options(deal_of_the_day=True, no_monochrome=True)),
        INVALID,
        "INVALID_OPTIONS",
        "no other option",
    )
    watch_only = lobby_pb2.PlayAgainstBotsRequest(
        game="solace", options=lobby_pb2.GameOptions(solace=DAILY), watch_only=True
    )
    await assert_refused(
        cal.lobby.PlayAgainstBots(watch_only, metadata=cal.metadata),
        INVALID,
        "INVALID_ARGUMENT",
        "bots",
    )
    # the refusals used no try: cal plays it through the lobby
    mine = await cal.lobby.PlayAgainstBots(
        lobby_pb2.PlayAgainstBotsRequest(
            game="solace", options=lobby_pb2.GameOptions(solace=DAILY)
        ),
        metadata=cal.metadata,
    )
    cal_view = await cal.game("solace").GetView(
        common_pb2.GetViewRequest(game_id=mine.status.game_id), metadata=cal.metadata
    )
    assert cal_view.view == views[0].view
    async with Consumer(redis_url, database_url, "scores-2", accounts=stack.accounts_target):
        played = {
            ann.player_id: await play_out(ann, daily[0], 5, moves=0),
            bob.player_id: await play_out(bob, daily[1], 6),
        }
        await eventually(
            lambda: len(rows(database_url, *played)) == 2, 10, "the two deals of the day counted"
        )
    today = datetime.datetime.now(datetime.UTC).date().isoformat()
    day = await table(ann, "today")
    assert day.day == today
    assert {e.player_id: e.score for e in day.entries if e.player_id in played} == played
    assert [e.place for e in day.entries] == list(range(1, len(day.entries) + 1))
    assert (await table(ann, today)).entries == day.entries
    assert (await scores(bob)).today == played[bob.player_id]
    for bad in ("tomorrow", "2020-01-01", "2026-13-40", "x" * 200):
        await assert_refused(table(ann, bad), INVALID, "INVALID_ARGUMENT", "day")
    # the terminal client
    await tabletop(stack, "login", "bob", script=PASSWORD + "\n")
    shown = await tabletop(stack, "top", "solace", "--day", "today")
    assert shown.out.splitlines()[0] == f"the deal of {today}:"
    assert any(line.split()[1] == "bob" for line in shown.out.splitlines()[1:])
    mine_shown = await tabletop(stack, "rating", "solace")
    assert f"today's deal: {played[bob.player_id]:g}" in mine_shown.out
    dee = Session(stack.target)
    await dee.register("dee", PASSWORD)
    await tabletop(stack, "login", "dee", script=PASSWORD + "\n")
    dealt = await tabletop(stack, "play", "solace", "--daily", script="stop\nyes\n")
    assert "game over" in dealt.out, dealt.out + dealt.err
    twice = await tabletop(stack, "play", "solace", "--daily", script="stop\nyes\n")
    assert "ALREADY_PLAYED" in twice.err, twice.out + twice.err
    await dee.close()
    for session in (ann, bob, gus, cal):
        await session.close()


def days(database_url: str, *game_ids: str) -> dict[str, str | None]:
    """The day whose table each counted game is on (None: on none)."""
    with psycopg.connect(database_url) as conn:
        return {
            game_id: day and day.isoformat()
            for game_id, day in conn.execute(
                "SELECT game_id, day FROM scores WHERE game_id = ANY(%s)", (list(game_ids),)
            )
        }


async def test_a_deal_of_the_day_waits_for_the_accounts_service(
    stack: Platform, redis_url: str, database_url: str
) -> None:
    """Whether a deal of the day goes on its day's table is asked of the accounts service (when
    the account was made): while the service is out of reach the game waits, counted nowhere,
    and once it answers the game counts, on the day's table for an account made before the
    day began only."""
    old, new = Session(stack.target), Session(stack.target)
    await old.register("old", PASSWORD)
    await new.register("new", PASSWORD)
    with psycopg.connect(database_url) as conn:
        conn.execute(
            "UPDATE accounts SET created_at = now() - interval '2 days' WHERE id = %s",
            (old.player_id,),
        )
    redis = connect_redis(redis_url)
    try:
        daily = {s.player_id: await create(s, options=DAILY) for s in (old, new)}
        away = f"127.0.0.1:{free_port()}"  # no accounts service there
        async with Consumer(redis_url, database_url, "scores-away", accounts=away) as waiting:
            for session in (old, new):
                await play_out(session, daily[session.player_id], 7, moves=0)
            last, _ = await finished_entry(redis, daily[new.player_id])

            async def tried() -> bool:
                groups: Any = await redis.xinfo_groups(keys.FINISHED_GAMES)
                group = next(g for g in groups if g["name"] == keys.RATINGS_GROUP.encode())
                return bool(group["pending"] == 2)  # both read, neither acknowledged

            await eventually(tried, 10, "the deals read")
            await asyncio.sleep(1.0)  # tried again meanwhile
            assert waiting.counted == 0
            assert rows(database_url, old.player_id, new.player_id) == []
            assert not await acknowledged(redis, last)
        async with Consumer(redis_url, database_url, "scores-back", accounts=stack.accounts_target):
            await eventually(lambda: acknowledged(redis, last), 10, "the deals counted")
        today = datetime.datetime.now(datetime.UTC).date().isoformat()
        assert days(database_url, *daily.values()) == {
            daily[old.player_id]: today,
            daily[new.player_id]: None,  # an account made today: off the day's table
        }
        # the service answers the platform's own processes only
        async with grpc.aio.insecure_channel(stack.accounts_target) as channel:
            unproven = accounts_pb2_grpc.AccountsServiceStub(channel).AccountsMade(
                accounts_pb2.AccountsMadeRequest(account_ids=[old.player_id])
            )
            await assert_refused(unproven, UNAUTHENTICATED, "UNAUTHENTICATED")
    finally:
        await redis.aclose()
        for session in (old, new):
            await session.close()
