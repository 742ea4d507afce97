"""A Solo table's jump-in window ends early once every person at the table has passed
(SoloService.PassJumpIn at the current version): the bots then act at once instead of waiting
out the window. Only people's passes, which are public choices, end it: the game service wakes
every bot seat again with no window, whatever cards the bots hold, so the time the next move
takes cannot tell anyone whether a bot could jump in.

The timing tests run a bot worker as deployed (no cap on the window) at tables with a long
window (5 s), and tell an early move by what the platform stored: the move's commit time (after
the pass, and before the window would have let a bot act) and the bot-turn job that played it
(one queued by the last pass, with no window)."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
import pytest
from redis.asyncio import Redis

from client.session import Session
from games.clock import MAX_JUMP_IN_WINDOW_MS
from runtime import bot_turns, keys
from runtime.game_log import now_ms
from tabletop.common.v1 import common_pb2
from tests.integration.test_solo_helpers import create_with_setup
from tests.platform import TEST_BOT_KEY, Platform, assert_refused, logged_in
from tests.timing import eventually, patience
from wire.players import new_bot_id
from wire.records import GameMeta

pytestmark = pytest.mark.integration

WINDOW_MS = 5000
"""The tables' jump-in window: long, so that a move that did not wait for it stands out."""


def setup(bot_holds_a_copy: bool) -> dict[str, Any]:
    """Four seats, as Solo's default: seat 3 (a bot) is to move on an r3 and can play its r5.
    Seat 2 (a bot) holds the other r3 (it can jump in) or a g1 in its place; everything public is
    the same either way."""
    copy, other = ("r3", "g1") if bot_holds_a_copy else ("g1", "r3")
    return {
        "hands": [
            ["b1", "b2", "g4", "y6"],
            ["b6", "g2", "y1", "g7"],
            [copy, "g8", "y4", "b9"],
            ["r5", "g9", "y2", "b7"],
        ],
        "draw_pile": [other, "y3", "y5", "y7", "y8", "y9", "b3", "b4", "b5"],
        "discard": ["r3"],
        "start_seat": 3,
    }


async def new_table(redis_url: str, players: list[str], bot_holds_a_copy: bool = False) -> str:
    """A table with a 5 s window at version 0, its bots woken as CreateGame wakes them."""
    game_id = await create_with_setup(
        redis_url, players, setup(bot_holds_a_copy), window_ms=WINDOW_MS
    )
    meta = GameMeta(game="solo", seats=players, jump_in_window_ms=WINDOW_MS)
    redis = Redis.from_url(redis_url)
    try:
        await bot_turns.add(redis, bot_turns.jobs(game_id, 0, meta, [3], players))
    finally:
        await redis.aclose()
    return game_id


async def jobs_of(redis_url: str, game_id: str) -> list[tuple[str, int, int, int]]:
    """(entry id, version, seat, window) of every bot-turn job queued for the game, in order."""
    redis = Redis.from_url(redis_url)
    try:
        entries: Any = await redis.xrange(keys.BOT_TURNS)
    finally:
        await redis.aclose()
    return [
        (entry_id.decode(), int(f[b"version"]), int(f[b"seat"]), int(f[b"window_ms"]))
        for entry_id, f in entries
        if f[b"game_id"].decode() == game_id
    ]


async def passes_of(redis_url: str, game_id: str) -> dict[bytes, bytes]:
    redis = Redis.from_url(redis_url)
    try:
        found: Any = await redis.hgetall(keys.game_passes(game_id))
    finally:
        await redis.aclose()
    return dict(found)


async def job_that_played(redis_url: str, game_id: str, version: int) -> str:
    """The stream id of the bot-turn job whose move made `version` (its request id names it)."""
    redis = Redis.from_url(redis_url)
    try:
        requests: Any = await redis.hgetall(keys.game_requests(game_id))
    finally:
        await redis.aclose()
    (played,) = [k.decode() for k, v in requests.items() if int(v) == version]
    entry: str = played.split(":bot-job-", 1)[1]
    return entry


def pass_request(game_id: str, version: int, **fields: Any) -> common_pb2.PassJumpInRequest:
    return common_pb2.PassJumpInRequest(game_id=game_id, version=version, **fields)


async def version_time(session: Session, game_id: str, version: int) -> int:
    """When `version` was committed (ms), once it is."""
    updates = session.game("solo").Watch(
        common_pb2.WatchRequest(game_id=game_id, from_version=version), metadata=session.metadata
    )
    try:
        update = await asyncio.wait_for(updates.read(), patience(10))
    finally:
        updates.cancel()
    assert update.envelope.version == version
    return int(update.envelope.time.ToMilliseconds())


@pytest.mark.parametrize("bot_holds_a_copy", [False, True])
async def test_once_every_person_passed_the_bots_act_at_once(
    redis_url: str, bot_holds_a_copy: bool
) -> None:
    """The person passes at version 0; the next move comes after the pass, well before the 5 s
    window, played by a job the pass queued (with no window). Whether a bot could jump in (and
    may have) changes none of that: the early end is the same, whoever's card it is."""
    async with Platform(redis_url, games=("solo",)) as platform:
        # One job of the person's table in hand at a time: a job that waits out the window must
        # not keep the others (those the pass queued) from starting.
        await platform.start_bot_worker(
            "windowed", max_jump_in_window_ms=MAX_JUMP_IN_WINDOW_MS, per_sponsor=1
        )
        (person,) = await logged_in(platform, "person")
        # Random bots think in no process of their own: their answer takes no time to speak of.
        players = [person.player_id, *(new_bot_id("random") for _ in range(3))]
        game_id = await new_table(redis_url, players, bot_holds_a_copy)
        stub = person.game("solo")
        passed_at = now_ms()
        reply = await stub.PassJumpIn(pass_request(game_id, 0), metadata=person.metadata)
        assert (reply.version, reply.seat, list(reply.passed), reply.window_ended) == (
            0,
            0,
            [0],
            True,
        )
        moved_at = await version_time(person, game_id, 1)
        early = {
            entry: seat
            for entry, version, seat, window in await jobs_of(redis_url, game_id)
            if version == 0 and window == 0
        }
        assert sorted(early.values()) == [1, 2, 3]  # every bot seat, whatever it holds
        assert await job_that_played(redis_url, game_id, 1) in early
        print(
            f"bot holds a copy: {bot_holds_a_copy}; moved {moved_at - passed_at} ms after the pass"
        )
        assert passed_at <= moved_at < passed_at + WINDOW_MS


async def test_the_window_ends_when_the_last_person_passes(redis_url: str) -> None:
    """At a table of two people and two bots, one pass ends nothing; the second wakes every bot
    seat with no window, once: a pass repeated answers the same and wakes nobody again. A pass
    says nothing of the passer's cards and is no move: the game stays at its version."""
    async with Platform(redis_url, games=("solo",)) as platform:  # no worker: jobs stay
        first, second = await logged_in(platform, "first", "second")
        bots = [new_bot_id("greedy"), new_bot_id("random")]
        players = [first.player_id, bots[0], bots[1], second.player_id]
        game_id = await create_with_setup(
            redis_url,
            players,
            {
                "hands": [["b1", "b2"], ["r5", "g9"], ["g1", "g8"], ["y1", "y4"]],
                "draw_pile": ["r3", "y3", "y5", "y7", "b3", "b4", "b5"],
                "discard": ["r3"],
                "start_seat": 1,
            },
            window_ms=WINDOW_MS,
        )
        one = await first.game("solo").PassJumpIn(pass_request(game_id, 0), metadata=first.metadata)
        assert (list(one.passed), one.window_ended) == ([0], False)
        assert await jobs_of(redis_url, game_id) == []
        for _ in range(2):
            two = await second.game("solo").PassJumpIn(
                pass_request(game_id, 0), metadata=second.metadata
            )
            assert (two.seat, list(two.passed), two.window_ended) == (3, [0, 3], True)
        assert [job[1:] for job in await jobs_of(redis_url, game_id)] == [(0, 1, 0), (0, 2, 0)]
        again = await first.game("solo").PassJumpIn(
            pass_request(game_id, 0), metadata=first.metadata
        )
        assert (list(again.passed), again.window_ended) == ([0, 3], True)
        assert len(await jobs_of(redis_url, game_id)) == 2
        view = await first.game("solo").GetView(
            common_pb2.GetViewRequest(game_id=game_id), metadata=first.metadata
        )
        assert view.status.version == 0


async def test_a_pass_that_cannot_be_is_refused_and_changes_nothing(redis_url: str) -> None:
    """A bot's seat, a version that is not the current one, a spectator, a game that is over:
    each refused with its reason; nothing recorded, no bot woken."""
    async with Platform(redis_url, games=("solo",)) as platform:  # no worker: jobs stay
        person, spectator = await logged_in(platform, "person", "spectator")
        bot = new_bot_id("greedy")
        players = [person.player_id, bot, new_bot_id("random"), new_bot_id("random")]
        game_id = await create_with_setup(redis_url, players, setup(False), window_ms=WINDOW_MS)
        stub = person.game("solo")
        worker = Session(platform.target)
        await worker.worker_login(TEST_BOT_KEY)
        await assert_refused(
            worker.game("solo").PassJumpIn(
                pass_request(game_id, 0), metadata=worker.acting_for(bot)
            ),
            grpc.StatusCode.PERMISSION_DENIED,
            "NOT_PERMITTED",
            "only a person passes",
        )
        for version in (1, 7):
            await assert_refused(
                stub.PassJumpIn(pass_request(game_id, version), metadata=person.metadata),
                grpc.StatusCode.ABORTED,
                "STALE_VERSION",
                "the game is at version 0",
            )
        await assert_refused(
            stub.PassJumpIn(pass_request(game_id, -1), metadata=person.metadata),
            grpc.StatusCode.INVALID_ARGUMENT,
            "INVALID_ARGUMENT",
            "not -1",
        )
        await assert_refused(
            spectator.game("solo").PassJumpIn(
                pass_request(game_id, 0), metadata=spectator.metadata
            ),
            grpc.StatusCode.PERMISSION_DENIED,
            "NOT_YOUR_SEAT",
        )
        await assert_refused(
            stub.PassJumpIn(pass_request(game_id, 0, seat=1), metadata=person.metadata),
            grpc.StatusCode.PERMISSION_DENIED,
            "NOT_YOUR_SEAT",
        )
        assert await passes_of(redis_url, game_id) == {}
        await stub.Resign(common_pb2.ResignRequest(game_id=game_id), metadata=person.metadata)
        await assert_refused(
            stub.PassJumpIn(pass_request(game_id, 1), metadata=person.metadata),
            grpc.StatusCode.FAILED_PRECONDITION,
            "GAME_OVER",
            "is over",
        )
        assert await passes_of(redis_url, game_id) == {}
        assert await jobs_of(redis_url, game_id) == []
        await worker.close()


async def test_a_move_after_the_pass_leaves_it_behind(redis_url: str) -> None:
    """A pass is for one version: once a move is made, the window runs again in full until
    every person passes at the new version (the pass at the old one is refused as stale)."""
    async with Platform(redis_url, games=("solo",)) as platform:  # no worker: jobs stay
        (person,) = await logged_in(platform, "person")
        players = [person.player_id, *(new_bot_id("greedy") for _ in range(3))]
        game_id = await create_with_setup(redis_url, players, setup(False), window_ms=WINDOW_MS)
        stub = person.game("solo")
        worker = Session(platform.target)
        await worker.worker_login(TEST_BOT_KEY)
        await worker.game("solo").Play(
            common_pb2.PlayRequest(game_id=game_id, move="play r5", expected_version=0),
            metadata=worker.acting_for(players[3]),
        )
        await eventually(
            lambda: jobs_of(redis_url, game_id), 10, "the bots are woken after the move"
        )
        assert {job[1:] for job in await jobs_of(redis_url, game_id)} == {
            (1, 1, WINDOW_MS),
            (1, 2, WINDOW_MS),
            (1, 3, WINDOW_MS),
        }
        await assert_refused(
            stub.PassJumpIn(pass_request(game_id, 0), metadata=person.metadata),
            grpc.StatusCode.ABORTED,
            "STALE_VERSION",
            "play r5",
        )
        reply = await stub.PassJumpIn(pass_request(game_id, 1), metadata=person.metadata)
        assert reply.window_ended
        assert [job[1:] for job in await jobs_of(redis_url, game_id)][-3:] == [
            (1, 1, 0),
            (1, 2, 0),
            (1, 3, 0),
        ]
        await worker.close()
