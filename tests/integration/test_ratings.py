"""Ratings on the real stack: game services on a real Redis write the finished games' stream in
the commit that finishes a game; the ratings consumer counts each rated game once into a real
PostgreSQL and keeps Redis's leaderboards in step (docs/ratings.md)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import psycopg
import pytest
import pytest_asyncio
from redis.asyncio import Redis
from redis.exceptions import ResponseError

from runtime import bot_turns, db, keys
from runtime.accounts_client import AccountsClient
from runtime.consumer import GroupConsumer
from runtime.redis import connect_redis
from services.archive.archiver import ARCHIVE_GROUP
from services.ratings.cache import RatingCache
from services.ratings.consumer import RatingsConsumer, with_moves
from services.ratings.model import MU, PLAYED_MOVES
from services.ratings.store import count, rebuild
from tabletop.common.v1 import common_pb2
from tests.platform import TEST_INTERNAL_KEY, Platform, spread
from tests.timing import eventually, patience
from wire.api import api
from wire.metadata import PLAYER_METADATA, RATED_METADATA, rated_value
from wire.proof import platform_channel
from wire.records import FinishedGame

pytestmark = pytest.mark.integration


def account() -> str:
    return "a-" + secrets.token_hex(8)


async def fresh_stream(redis_url: str) -> None:
    """The session's finished games' stream emptied, and its consumer groups past its end: a
    test's consumers read the test's own games, not those earlier tests left unread (each
    test has a database of its own, the session one Redis)."""
    redis = connect_redis(redis_url)
    try:
        await redis.xtrim(keys.FINISHED_GAMES, maxlen=0)
        for group in (keys.RATINGS_GROUP, ARCHIVE_GROUP):
            with contextlib.suppress(ResponseError):  # no such group (or stream) yet
                await redis.xgroup_setid(keys.FINISHED_GAMES, group, "$")
    finally:
        await redis.aclose()


@pytest_asyncio.fixture
async def stack(redis_url: str, database_url: str) -> AsyncIterator[tuple[Platform, Redis]]:
    await fresh_stream(redis_url)
    async with Platform(redis_url, games=("esoloe", "solo"), sweep_seconds=0.1) as platform:
        redis = connect_redis(redis_url)
        try:
            yield platform, redis
        finally:
            await redis.aclose()


class Consumer:
    """A consumer of the finished games' stream (a ratings consumer unless `kind` says
    otherwise) running in this test's loop, stopped when the test ends. `accounts`: the
    accounts service's target, for a ratings consumer that counts deals of the day on their
    day's tables (it asks the service when accounts were made)."""

    def __init__(
        self,
        redis_url: str,
        database_url: str,
        name: str,
        kind: Callable[..., GroupConsumer] = RatingsConsumer,
        accounts: str = "",
        **settings: Any,
    ) -> None:
        self.redis = connect_redis(redis_url)
        self.database = db.pool(database_url)
        self.accounts = AccountsClient(accounts, TEST_INTERNAL_KEY) if accounts else None
        if self.accounts is not None:
            settings["accounts"] = self.accounts
        self.consumer = kind(
            redis=self.redis, database=self.database, consumer=name,
            claim_idle_seconds=0.2, block_seconds=0.05, **settings,
        )  # fmt: skip
        self.stop = asyncio.Event()
        self.task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Any:  # the consumer, of its kind
        await self.database.open(wait=True)
        self.task = asyncio.create_task(self.consumer.run(self.stop))
        return self.consumer

    async def __aexit__(self, *_: object) -> None:
        self.stop.set()
        assert self.task is not None
        await asyncio.wait_for(self.task, patience(5))
        if self.accounts is not None:
            await self.accounts.close()
        await self.database.close()
        await self.redis.aclose()


async def create(
    platform: Platform, game: str, players: list[str], accounts: list[int] | None, **fields: Any
) -> str:
    """A game made as the lobby makes one: rated when `accounts` (its account seats) is given."""
    request = api(game).pb2.CreateGameRequest(players=players, **fields)
    metadata = () if accounts is None else ((RATED_METADATA, rated_value(accounts)),)
    target = platform.replica_target(0, game)
    async with platform_channel(target, api(game).full_name, TEST_INTERNAL_KEY) as channel:
        created = (
            await api(game)
            .stub(channel)
            .CreateGame(request, metadata=metadata, timeout=patience(10))
        )
    return str(created.status.game_id)


async def play(platform: Platform, game: str, game_id: str, players: Sequence[str]) -> None:
    """Each seat plays PLAYED_MOVES moves (`spread`), whoever is to act: a game played, which
    may count (docs/ratings.md)."""
    target = platform.replica_target(0, game)
    made = [0] * len(players)
    async with platform_channel(target, api(game).full_name, TEST_INTERNAL_KEY) as channel:
        stub = api(game).stub(channel)
        while min(made) < PLAYED_MOVES:
            as_first = ((PLAYER_METADATA, players[0]),)
            view = await stub.GetView(
                common_pb2.GetViewRequest(game_id=game_id, public=True), metadata=as_first
            )
            assert not view.status.finished, "the game ended before each seat played twice"
            seat = view.status.to_act[0]
            player = ((PLAYER_METADATA, players[seat]),)
            legal = await stub.LegalMoves(
                common_pb2.LegalMovesRequest(game_id=game_id), metadata=player
            )
            move = spread(legal.moves, sum(made))
            await stub.Play(
                common_pb2.PlayRequest(game_id=game_id, move=move, expected_version=legal.version),
                metadata=player,
                timeout=patience(10),
            )
            made[seat] += 1


async def resign(platform: Platform, game: str, game_id: str, player: str) -> None:
    target = platform.replica_target(0, game)
    async with platform_channel(target, api(game).full_name, TEST_INTERNAL_KEY) as channel:
        await (
            api(game)
            .stub(channel)
            .Resign(
                common_pb2.ResignRequest(game_id=game_id),
                metadata=((PLAYER_METADATA, player),),
                timeout=patience(10),
            )
        )


def _entry(entry_id: bytes | str) -> tuple[int, int]:
    ms, seq = (entry_id.decode() if isinstance(entry_id, bytes) else entry_id).split("-")
    return int(ms), int(seq)


async def acknowledged(
    redis: Redis, entry_id: bytes | str, group_name: str = keys.RATINGS_GROUP
) -> bool:
    """Whether a consumer group (the ratings consumers') has read and acknowledged the
    finished games' stream up to `entry_id`."""
    groups: Any = await redis.xinfo_groups(keys.FINISHED_GAMES)
    group = next(g for g in groups if g["name"] == group_name.encode())
    return _entry(group["last-delivered-id"]) >= _entry(entry_id) and group["pending"] == 0


def ratings(database_url: str, game: str, *players: str) -> dict[str, tuple[float, int]]:
    with psycopg.connect(database_url) as connection:
        rows = connection.execute(
            "SELECT player_id, mu, games FROM ratings WHERE game = %s AND player_id = ANY(%s)",
            (game, list(players)),
        ).fetchall()
    return {p: (mu, games) for p, mu, games in rows}


def counted(database_url: str, game_id: str) -> int:
    with psycopg.connect(database_url) as connection:
        row = connection.execute(
            "SELECT count(*) FROM rated_games WHERE game_id = %s", (game_id,)
        ).fetchone()
    assert row is not None
    return int(row[0])


async def finished_entry(redis: Redis, game_id: str) -> tuple[Any, dict[bytes, bytes]]:
    async def find() -> tuple[Any, dict[bytes, bytes]] | None:
        entries: Any = await redis.xrevrange(keys.FINISHED_GAMES, count=200)
        return next((e for e in entries if e[1][b"game_id"].decode() == game_id), None)

    return await eventually(find, 10, f"{game_id} in the finished games' stream")


async def test_a_rated_game_counts_once_through_a_crash_and_a_replay(
    stack: tuple[Platform, Redis], redis_url: str, database_url: str
) -> None:
    platform, redis = stack
    alice, bob = account(), account()
    game_id = await create(platform, "esoloe", [alice, bob], [0, 1])
    await play(platform, "esoloe", game_id, [alice, bob])
    await resign(platform, "esoloe", game_id, alice)
    entry_id, fields = await finished_entry(redis, game_id)
    # A consumer counted the game and was killed before it acknowledged the entry: the
    # PostgreSQL transaction committed, the entry is still pending.
    with contextlib.suppress(ResponseError):  # BUSYGROUP
        await redis.xgroup_create(keys.FINISHED_GAMES, keys.RATINGS_GROUP, id="0", mkstream=True)
    await redis.xreadgroup(keys.RATINGS_GROUP, "killed", {keys.FINISHED_GAMES: "0"}, count=1)
    await redis.xclaim(keys.FINISHED_GAMES, keys.RATINGS_GROUP, "killed", 0, [entry_id])
    async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as conn:
        stored = FinishedGame.from_json(json.loads(fields[b"record"]))
        record = await with_moves(redis, game_id, stored)
        first, _ = await count(conn, "esoloe", game_id, record)
    assert first
    after_crash = ratings(database_url, "esoloe", alice, bob)
    assert after_crash[bob][0] > MU > after_crash[alice][0]
    # The finished event is sent again too (a replay).
    resent: dict[Any, Any] = dict(fields)
    replay = await redis.xadd(keys.FINISHED_GAMES, resent)
    async with Consumer(redis_url, database_url, "survivor"):
        cache = RatingCache(redis)
        await eventually(lambda: cache.change(game_id), 10, "the game's rating change in Redis")
        await eventually(
            lambda: acknowledged(redis, replay), 10, "the pending entry taken over, the replay"
        )
    assert ratings(database_url, "esoloe", alice, bob) == after_crash
    assert after_crash[alice][1] == after_crash[bob][1] == 1
    assert counted(database_url, game_id) == 1
    board = await cache.board("esoloe", 0, 10_000)
    assert not {alice, bob} & {p for p, _ in board}  # provisional: not on the leaderboard
    rating, place = await cache.rating("esoloe", bob)
    assert rating.games == 1
    assert place is None
    pending: Any = await redis.xpending(keys.FINISHED_GAMES, keys.RATINGS_GROUP)
    assert pending["pending"] == 0
    # Redis loses the ratings: they are written again from PostgreSQL.
    await redis.delete(keys.leaderboard("esoloe"), keys.ratings("esoloe"))
    assert (await cache.rating("esoloe", bob))[0].games == 0
    carol = account()  # an established player, as PostgreSQL keeps one
    async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as conn:
        await conn.execute(
            "INSERT INTO ratings (game, player_id, mu, sigma, games) VALUES (%s, %s, 30, 3, 40)",
            ("esoloe", carol),
        )
        written = await rebuild(cache, conn)
    assert written["esoloe"] >= 3
    rebuilt, place = await cache.rating("esoloe", bob)
    assert rebuilt == rating
    assert place is None
    assert (await cache.rating("esoloe", carol))[1] is not None  # back on the leaderboard


async def test_what_counts_for_nobody_and_what_counts_as_a_loss(
    stack: tuple[Platform, Redis], redis_url: str, database_url: str
) -> None:
    platform, redis = stack
    casual = [account(), account()]
    guests = ["p-" + secrets.token_hex(8), account()]
    bots = ["bot-random-" + secrets.token_hex(6), "bot-greedy-" + secrets.token_hex(6)]
    aborted = [account(), account()]
    at_once = [account(), account()]
    idle = [account(), account()]
    late, prompt = account(), account()
    solo = [account(), account(), account()]
    async with Consumer(redis_url, database_url, "counter"):
        ids = []
        ids.append(await create(platform, "esoloe", casual, None))
        await resign(platform, "esoloe", ids[-1], casual[0])
        ids.append(await create(platform, "esoloe", guests, [1]))  # seat 0 a guest
        await play(platform, "esoloe", ids[-1], guests)
        await resign(platform, "esoloe", ids[-1], guests[1])
        aborting = common_pb2.TimeControl(abort_seconds=1)
        ids.append(await create(platform, "esoloe", aborted, [0, 1], time_control=aborting))
        ids.append(await create(platform, "esoloe", at_once, [0, 1]))  # not played
        await resign(platform, "esoloe", ids[-1], at_once[1])
        timed = common_pb2.TimeControl(move_seconds=1)
        ids.append(await create(platform, "esoloe", idle, [0, 1], time_control=timed))
        # Seat 0 runs out of time after both played (a move limit no busy machine exceeds
        # between the moves, which follow each other at once).
        played = common_pb2.TimeControl(move_seconds=int(patience(2)))
        ids.append(await create(platform, "esoloe", [late, prompt], [0, 1], time_control=played))
        await play(platform, "esoloe", ids[-1], [late, prompt])
        options = api("solo").pb2.Options(players=3)
        ids.append(await create(platform, "solo", solo, [0, 1, 2], options=options))
        await play(platform, "solo", ids[-1], solo)
        await resign(platform, "solo", ids[-1], solo[1])
        bot_game = await create(platform, "esoloe", bots, [])
        for game_id in ids:
            await finished_entry(redis, game_id)
        await eventually(
            lambda: all(counted(database_url, g) for g in ids[1:]), 20, "the rated games counted"
        )
    nobody = (*casual, *guests, *aborted, *at_once, *idle, "bot-random")
    assert ratings(database_url, "esoloe", *nobody) == {}
    assert counted(database_url, bot_game) == 0
    loss = ratings(database_url, "esoloe", late, prompt)
    assert loss[prompt][0] > MU > loss[late][0]  # seat 0 was to move and ran out of time
    standings = ratings(database_url, "solo", *solo)
    assert standings[solo[1]][0] < MU  # the seat that resigned is last
    assert standings[solo[0]][0] == pytest.approx(standings[solo[2]][0])  # tied
    assert standings[solo[0]][0] > MU


async def test_a_finished_game_left_on_the_live_list_is_appended_by_the_bots_sweep(
    stack: tuple[Platform, Redis], redis_url: str, database_url: str
) -> None:
    """On a Redis Cluster the commit that finishes a game does not append it to the stream (a
    script touches one slot); its process does right after, then takes it off the live list.
    One that stopped in between left it listed: the bots' sweep appends it."""
    platform, redis = stack
    alice, bob = account(), account()
    game_id = await create(platform, "esoloe", [alice, bob], [0, 1])
    await play(platform, "esoloe", game_id, [alice, bob])
    await resign(platform, "esoloe", game_id, alice)
    entry_id, _ = await finished_entry(redis, game_id)
    await redis.xdel(keys.FINISHED_GAMES, entry_id)  # never appended, still listed
    await redis.zadd(keys.LIVE_GAMES, {game_id: 0})
    await redis.incrby(keys.active_games("esoloe"), 1)
    await bot_turns.stalled(redis, idle_ms=10**9)
    assert await redis.zscore(keys.LIVE_GAMES, game_id) is None
    await finished_entry(redis, game_id)
    async with Consumer(redis_url, database_url, "after-the-sweep"):
        await eventually(lambda: counted(database_url, game_id) == 1, 10, "the game counted")
    assert ratings(database_url, "esoloe", alice, bob)[bob][0] > MU
