"""Rated play through the gateway, on the real stack (PostgreSQL, Redis, the lobby, a
matchmaker and the ratings consumer): two accounts ask for a rated game, are matched, play it
out; the game is counted once and GetRating, ListLeaderboard and GetRatingChange show it.
Guests cannot ask for one, and rated and casual tickets never meet."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from client.session import Session
from runtime import keys
from runtime.redis import connect_redis
from services.matchmaker.skill import Window
from services.ratings.cache import RatingCache
from services.ratings.model import PLAYED_MOVES, Rating, starting
from tabletop.common.v1 import common_pb2
from tabletop.lobby.v1 import lobby_pb2
from tests.integration.test_accounts import PASSWORD, refused
from tests.integration.test_client import state_dir, tabletop
from tests.integration.test_ratings import Consumer, fresh_stream
from tests.platform import Platform, play_moves
from tests.timing import eventually

pytestmark = pytest.mark.integration

__all__ = ["state_dir"]  # the fixture of tests/integration/test_client.py


@pytest_asyncio.fixture
async def stack(redis_url: str, database_url: str) -> AsyncIterator[Platform]:
    await fresh_stream(redis_url)
    async with Platform(
        redis_url,
        games=("esoloe", "solace"),
        database_url=database_url,
        matchmakers=1,
        gateway_settings={"login_rate_burst": 1000.0},
    ) as platform:
        yield platform


async def matched(session: Session, ticket_id: str) -> lobby_pb2.Ticket:
    async for state in session.lobby.WatchTicket(
        lobby_pb2.WatchTicketRequest(ticket_id=ticket_id), metadata=session.metadata
    ):
        if state.state != lobby_pb2.TICKET_STATE_QUEUED:
            found: lobby_pb2.Ticket = state
            return found
    raise AssertionError("the ticket stream ended queued")


async def rating(session: Session, player_id: str = "") -> lobby_pb2.RatingInfo:
    reply: lobby_pb2.RatingInfo = await session.lobby.GetRating(
        lobby_pb2.GetRatingRequest(game="esoloe", player_id=player_id), metadata=session.metadata
    )
    return reply


async def test_a_rated_match_is_counted_once_and_shown(
    stack: Platform, redis_url: str, database_url: str, state_dir: Path
) -> None:
    redis = connect_redis(redis_url)  # the session's Redis: other tests' players leave
    await redis.delete(keys.leaderboard("esoloe"), keys.ratings("esoloe"))
    await redis.aclose()
    ann, bob = Session(stack.target), Session(stack.target)
    await ann.register("ann", PASSWORD)
    await bob.register("bob", PASSWORD)
    before = await rating(ann)
    assert (before.rating, before.games, before.provisional) == (1000, 0, True)
    assert not before.HasField("place")
    cal = Session(stack.target)
    await cal.register("cal", PASSWORD)
    casual = await cal.lobby.FindMatch(
        lobby_pb2.FindMatchRequest(game="esoloe"), metadata=cal.metadata
    )
    tickets = [
        await s.lobby.FindMatch(
            lobby_pb2.FindMatchRequest(game="esoloe", rated=True), metadata=s.metadata
        )
        for s in (ann, bob)
    ]
    ann_ticket, bob_ticket = await asyncio.gather(
        matched(ann, tickets[0].ticket_id), matched(bob, tickets[1].ticket_id)
    )
    assert ann_ticket.game_id == bob_ticket.game_id  # the two rated tickets met
    view = await ann.game("esoloe").GetView(
        common_pb2.GetViewRequest(game_id=ann_ticket.game_id), metadata=ann.metadata
    )
    assert view.status.rated
    assert [(s.rating, s.provisional) for s in view.status.seats] == [(1000, True)] * 2
    left = await cal.lobby.CancelTicket(
        lobby_pb2.CancelTicketRequest(ticket_id=casual.ticket_id), metadata=cal.metadata
    )
    assert left.state == lobby_pb2.TICKET_STATE_CANCELLED  # the casual one met nobody
    loser = ann if ann_ticket.seat == 0 else bob
    winner = bob if loser is ann else ann
    # played (it counts: docs/ratings.md), then resigned
    await play_moves({0: loser, 1: winner}, "esoloe", ann_ticket.game_id, PLAYED_MOVES)
    await loser.game("esoloe").Resign(
        common_pb2.ResignRequest(game_id=ann_ticket.game_id), metadata=loser.metadata
    )
    async with Consumer(redis_url, database_url, "ratings-1"):

        async def counted() -> Any:
            reply = await ann.lobby.GetRatingChange(
                lobby_pb2.GetRatingChangeRequest(game_id=ann_ticket.game_id),
                metadata=ann.metadata,
            )
            return reply if reply.counted else None

        change = await eventually(counted, 10, "the game counted")
    by_player = {c.player_id: c for c in change.changes}
    assert set(by_player) == {ann.player_id, bob.player_id}
    assert by_player[winner.player_id].place == 1
    assert by_player[loser.player_id].place == 2
    assert by_player[winner.player_id].after > by_player[loser.player_id].after
    mine = await rating(winner)
    assert (mine.games, mine.provisional, mine.HasField("place")) == (1, True, False)
    other = await rating(winner, loser.player_id)  # another's, by id
    assert (other.games, other.HasField("place")) == (1, False)
    # the leaderboard lists established players only: neither yet
    board = await ann.lobby.ListLeaderboard(
        lobby_pb2.ListLeaderboardRequest(game="esoloe"), metadata=ann.metadata
    )
    assert list(board.entries) == []
    around = await ann.lobby.ListLeaderboard(
        lobby_pb2.ListLeaderboardRequest(game="esoloe", around_player="me", limit=1),
        metadata=ann.metadata,
    )
    assert list(around.entries) == []
    # the terminal client, as ann
    await tabletop(stack, "login", "ann", script=PASSWORD + "\n")
    shown = await tabletop(stack, "rating", "esoloe")
    assert shown.out.startswith(f"esoloe  {(await rating(ann)).rating}?  unranked  1 rated game")
    # her seat at the finished game: the client says what it did to her rating
    back = await tabletop(stack, "play", "--game", ann_ticket.game_id)
    delta = by_player[ann.player_id].after - by_player[ann.player_id].before
    assert f"your esoloe rating: 1000 -> {by_player[ann.player_id].after}? ({delta:+d})" in back.out
    # a rated game against a bot from the client: the seats' ratings are said at the start
    started = await tabletop(stack, "play", "esoloe", "--rated", "--seat", "0", script="quit\n")
    assert "rated game: you " in started.out, started.out + started.err
    top = await tabletop(stack, "top", "esoloe")
    assert "established" in top.out  # nobody on it yet
    redis = connect_redis(redis_url)
    try:  # cal, established, as the ratings consumer would have left him
        await RatingCache(redis).put("esoloe", {cal.player_id: Rating(30.0, 3.0, 40)})
    finally:
        await redis.aclose()
    top = await tabletop(stack, "top", "esoloe")
    assert [line.split()[:3] for line in top.out.splitlines()] == [["1.", "cal", "1840"]]
    for session in (ann, bob, cal):
        await session.close()


async def test_rated_play_is_for_accounts_and_games_with_ratings(stack: Platform) -> None:
    guest = Session(stack.target)
    await guest.login("gus")
    rated = lobby_pb2.FindMatchRequest(game="esoloe", rated=True)
    assert await refused(guest.lobby.FindMatch, rated, metadata=guest.metadata) == (
        "INVALID_ARGUMENT"
    )
    bots = lobby_pb2.PlayAgainstBotsRequest(game="esoloe", rated=True)
    assert await refused(guest.lobby.PlayAgainstBots, bots, metadata=guest.metadata) == (
        "INVALID_ARGUMENT"
    )
    account = Session(stack.target)
    await account.register("cyd", PASSWORD)
    watch = lobby_pb2.PlayAgainstBotsRequest(game="esoloe", rated=True, watch_only=True)
    assert await refused(account.lobby.PlayAgainstBots, watch, metadata=account.metadata) == (
        "INVALID_ARGUMENT"
    )  # bots only: never rated
    for game in ("solace", "chess"):
        assert (
            await refused(
                account.lobby.GetRating,
                lobby_pb2.GetRatingRequest(game=game),
                metadata=account.metadata,
            )
            == "INVALID_ARGUMENT"
        )
    for bad in (lobby_pb2.ListLeaderboardRequest(game="esoloe", limit=101),
                lobby_pb2.ListLeaderboardRequest(game="esoloe", from_place=-1)):  # fmt: skip
        assert (
            await refused(account.lobby.ListLeaderboard, bad, metadata=account.metadata)
            == "INVALID_ARGUMENT"
        )
    too_long = lobby_pb2.GetRatingRequest(game="esoloe", player_id="x" * 65)
    assert await refused(account.lobby.GetRating, too_long, metadata=account.metadata) == (
        "INVALID_ARGUMENT"
    )
    level = await account.lobby.GetRating(
        lobby_pb2.GetRatingRequest(game="esoloe", player_id="bot-strong"),
        metadata=account.metadata,
    )
    # a bot level before its first rated game: its seed from the arena
    seeded = starting("esoloe", "bot-strong")
    assert (level.name, level.rating, level.games) == ("strong bot", seeded.display, 0)
    assert seeded.display != Rating().display
    against = await account.lobby.PlayAgainstBots(bots, metadata=account.metadata)
    assert against.HasField("seat")  # an account's rated game against a bot is made
    for session in (guest, account):
        await session.close()


async def test_players_far_apart_in_rating_are_not_matched_before_the_window_allows(
    redis_url: str, database_url: str
) -> None:
    async with Platform(
        redis_url,
        games=("esoloe",),
        database_url=database_url,
        gateway_settings={"login_rate_burst": 1000.0},
    ) as platform:
        await platform.start_matchmaker("skill", window=Window(start=100, per_second=0, most=100))
        ann, bob, cal = (Session(platform.target) for _ in range(3))
        for session, name in ((ann, "ann"), (bob, "bob"), (cal, "cal")):
            await session.register(name, PASSWORD)
        redis = connect_redis(redis_url)
        try:  # as the ratings consumer would have left them
            await RatingCache(redis).put(
                "esoloe",
                {
                    ann.player_id: Rating(40.0, 2.0, 30),  # shown 2360
                    bob.player_id: Rating(20.0, 2.0, 30),  # shown 1560
                    cal.player_id: Rating(41.0, 2.0, 30),  # shown 2400
                },
            )
        finally:
            await redis.aclose()
        rated = lobby_pb2.FindMatchRequest(game="esoloe", rated=True)
        far = [await s.lobby.FindMatch(rated, metadata=s.metadata) for s in (ann, bob)]
        await platform.scans_done(3)
        waited = await bob.lobby.CancelTicket(
            lobby_pb2.CancelTicketRequest(ticket_id=far[1].ticket_id), metadata=bob.metadata
        )
        assert waited.state == lobby_pb2.TICKET_STATE_CANCELLED  # never matched with ann
        again = await bob.lobby.FindMatch(rated, metadata=bob.metadata)
        near = await cal.lobby.FindMatch(rated, metadata=cal.metadata)
        ann_ticket, cal_ticket = await asyncio.gather(
            matched(ann, far[0].ticket_id), matched(cal, near.ticket_id)
        )
        assert ann_ticket.game_id == cal_ticket.game_id  # the close ones met at once
        view = await ann.game("esoloe").GetView(
            common_pb2.GetViewRequest(game_id=ann_ticket.game_id), metadata=ann.metadata
        )
        shown = {s.player_id: (s.rating, s.provisional) for s in view.status.seats}
        assert shown == {ann.player_id: (2360, False), cal.player_id: (2400, False)}
        await platform.scans_done(2)
        left = await bob.lobby.CancelTicket(
            lobby_pb2.CancelTicketRequest(ticket_id=again.ticket_id), metadata=bob.metadata
        )
        assert left.state == lobby_pb2.TICKET_STATE_CANCELLED  # bob still waits alone
        for session in (ann, bob, cal):
            await session.close()
