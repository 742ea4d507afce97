"""Matchmaking through the gateway and a real matchmaker, Redis and game services."""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
from typing import Any

import grpc
import pytest
from redis.asyncio import Redis
from redis.exceptions import ResponseError

from client.session import Session
from runtime import keys
from tabletop.common.v1 import common_pb2
from tabletop.lobby.v1 import lobby_pb2, lobby_pb2_grpc
from tabletop.solo.v1 import solo_pb2
from tabletop.zoxso.v1 import zoxso_pb2
from tests.platform import Platform, assert_refused, logged_in, play_until_finished
from tests.timing import eventually, patience

pytestmark = pytest.mark.integration

GAMES = ("esoloe", "solo", "solace", "zoxso")
QUEUED, MATCHED, CANCELLED = (
    lobby_pb2.TICKET_STATE_QUEUED,
    lobby_pb2.TICKET_STATE_MATCHED,
    lobby_pb2.TICKET_STATE_CANCELLED,
)


def lobby(session: Session) -> Any:
    """The lobby stub (async: the generated type hints describe the blocking one)."""
    return lobby_pb2_grpc.LobbyServiceStub(session.channel)


async def find(session: Session, game: str, **fields: object) -> lobby_pb2.Ticket:
    request = lobby_pb2.FindMatchRequest(game=game, **fields)  # type: ignore[arg-type]
    ticket: lobby_pb2.Ticket = await lobby(session).FindMatch(request, metadata=session.metadata)
    return ticket


async def final(session: Session, ticket_id: str, timeout: float = 20) -> lobby_pb2.Ticket:
    """The ticket's last state, once it leaves the queue."""

    async def last() -> lobby_pb2.Ticket:
        states = [
            t
            async for t in lobby(session).WatchTicket(
                lobby_pb2.WatchTicketRequest(ticket_id=ticket_id), metadata=session.metadata
            )
        ]
        assert states[0].state == QUEUED
        assert all(t.state == QUEUED for t in states[:-1])
        last_state: lobby_pb2.Ticket = states[-1]
        return last_state

    return await asyncio.wait_for(last(), patience(timeout))


async def cancel(session: Session, ticket_id: str) -> lobby_pb2.Ticket:
    ticket: lobby_pb2.Ticket = await lobby(session).CancelTicket(
        lobby_pb2.CancelTicketRequest(ticket_id=ticket_id), metadata=session.metadata
    )
    return ticket


@pytest.mark.parametrize("game", GAMES)
async def test_bots_now_gives_a_game_that_bots_finish(redis_url: str, game: str) -> None:
    async with Platform(redis_url, games=GAMES, bot_workers=1, matchmakers=1) as platform:
        (player,) = await logged_in(platform, "human")
        options = lobby_pb2.GameOptions()
        if game == "solo":
            options.solo.CopyFrom(solo_pb2.Options(mode=solo_pb2.MODE_ROUNDS, rounds=1))
        if game == "zoxso":
            options.zoxso.CopyFrom(zoxso_pb2.Options(max_plies=80))
        seats = 2 if game == "solo" else 0
        ticket = await find(player, game, options=options, seats=seats, bots=lobby_pb2.BOT_FILL_NOW)
        matched = await final(player, ticket.ticket_id)
        assert matched.state == MATCHED
        assert matched.game_id.startswith(f"{game}-")
        await play_until_finished(player, game, matched.game_id, matched.seat, timeout=90)


async def test_people_who_ask_alike_are_matched_and_others_never(redis_url: str) -> None:
    async with Platform(redis_url, games=("esoloe", "zoxso"), matchmakers=2) as platform:
        alice, bob, carol, dave = await logged_in(platform, "alice", "bob", "carol", "dave")
        first = await find(alice, "esoloe")
        second = await find(bob, "esoloe")
        a, b = await asyncio.gather(final(alice, first.ticket_id), final(bob, second.ticket_id))
        assert a.state == b.state == MATCHED
        assert a.game_id == b.game_id
        assert {a.seat, b.seat} == {0, 1}
        # Different options never meet.
        short = lobby_pb2.GameOptions(zoxso=zoxso_pb2.Options(max_plies=100))
        long = lobby_pb2.GameOptions(zoxso=zoxso_pb2.Options(max_plies=200))
        c = await find(carol, "zoxso", options=short)
        d = await find(dave, "zoxso", options=long)
        await platform.scans_done(2)
        assert (await cancel(carol, c.ticket_id)).state == CANCELLED
        assert (await cancel(dave, d.ticket_id)).state == CANCELLED


async def stored_window(redis_url: str, game_id: str) -> int | None:
    """The jump-in window the game was made with, as its meta holds it."""
    redis = Redis.from_url(redis_url)
    try:
        meta: Any = await redis.hget(keys.game_state(game_id), "meta")
    finally:
        await redis.aclose()
    window: int | None = json.loads(meta).get("jump_in_window_ms")
    return window


def windowed(ms: int | None, **options: Any) -> lobby_pb2.GameOptions:
    """Solo options with this jump-in window (None: unset, the table's default)."""
    solo = solo_pb2.Options(**options)
    if ms is not None:
        solo.jump_in_window_ms = ms
    return lobby_pb2.GameOptions(solo=solo)


async def test_the_jump_in_window_is_chosen_however_a_game_is_made(redis_url: str) -> None:
    """Solo's `jump_in_window_ms` is taken by CreateGame, PlayAgainstBots and FindMatch (0: bots
    act at once, for a program; unset: 2500), refused out of 0..5000 with INVALID_OPTIONS
    and nothing made; matchmaking pools tables by it like any option (unset and 2500 meet)."""
    async with Platform(redis_url, games=("solo",), matchmakers=1) as platform:
        alice, bob, carol, dave = await logged_in(platform, "alice", "bob", "carol", "dave")
        for ms in (-1, 5001):
            await assert_refused(
                alice.game("solo").CreateGame(
                    solo_pb2.CreateGameRequest(
                        options=solo_pb2.Options(players=2, jump_in_window_ms=ms),
                        players=[alice.player_id] * 2,
                    ),
                    metadata=alice.metadata,
                ),
                grpc.StatusCode.INVALID_ARGUMENT,
                "INVALID_OPTIONS",
                "jump_in_window_ms",
                "0..5000",
            )
            for call in (
                lobby(alice).PlayAgainstBots(
                    lobby_pb2.PlayAgainstBotsRequest(game="solo", options=windowed(ms)),
                    metadata=alice.metadata,
                ),
                lobby(alice).FindMatch(
                    lobby_pb2.FindMatchRequest(game="solo", options=windowed(ms)),
                    metadata=alice.metadata,
                ),
            ):
                await assert_refused(call, grpc.StatusCode.INVALID_ARGUMENT, "INVALID_OPTIONS")
        listed = await lobby(alice).ListGames(lobby_pb2.ListGamesRequest(), metadata=alice.metadata)
        assert list(listed.games) == []  # nothing was made
        own = await alice.game("solo").CreateGame(
            solo_pb2.CreateGameRequest(
                options=solo_pb2.Options(players=2, jump_in_window_ms=0),
                players=[alice.player_id] * 2,
            ),
            metadata=alice.metadata,
        )
        assert await stored_window(redis_url, own.status.game_id) == 0
        for asked, stored in ((0, 0), (None, 2500), (4000, 4000)):
            made = await lobby(alice).PlayAgainstBots(
                lobby_pb2.PlayAgainstBotsRequest(game="solo", options=windowed(asked)),
                metadata=alice.metadata,
            )
            assert await stored_window(redis_url, made.status.game_id) == stored
        # Pools: a program's table (0) and the default one never meet; 2500 and unset do.
        quick = await find(alice, "solo", options=windowed(0, players=2))
        usual = await find(bob, "solo", options=windowed(None, players=2))
        await platform.scans_done(2)
        same = await find(carol, "solo", options=windowed(2500, players=2))
        other = await find(dave, "solo", options=windowed(0, players=2))
        for session, ticket, partner in ((bob, usual, carol), (alice, quick, dave)):
            matched = await final(session, ticket.ticket_id)
            assert matched.state == MATCHED
            seen = await session.game("solo").GetView(
                common_pb2.GetViewRequest(game_id=matched.game_id), metadata=session.metadata
            )
            seated = {s.player_id for s in seen.status.seats}
            assert seated == {session.player_id, partner.player_id}
        assert await stored_window(redis_url, (await final(carol, same.ticket_id)).game_id) == 2500
        assert await stored_window(redis_url, (await final(dave, other.ticket_id)).game_id) == 0


async def test_one_live_ticket_per_player_and_game(redis_url: str) -> None:
    async with Platform(redis_url, games=("esoloe",)) as platform:  # no matchmaker: it waits
        (alice,) = await logged_in(platform, "alice")
        ticket = await find(alice, "esoloe")
        details = await assert_refused(
            find(alice, "esoloe"), grpc.StatusCode.FAILED_PRECONDITION, "TICKET_LIVE"
        )
        assert ticket.ticket_id in details
        (mallory,) = await logged_in(platform, "mallory")
        await assert_refused(
            cancel(mallory, ticket.ticket_id), grpc.StatusCode.NOT_FOUND, "TICKET_NOT_FOUND"
        )
        assert (await cancel(alice, ticket.ticket_id)).state == CANCELLED
        again = await find(alice, "esoloe")
        assert again.state == QUEUED
        await assert_refused(
            find(alice, "esoloe", seats=3), grpc.StatusCode.INVALID_ARGUMENT, "INVALID_ARGUMENT"
        )
        assert (await cancel(alice, again.ticket_id)).state == CANCELLED  # leave the pool empty


async def test_a_cancel_racing_a_match_ends_in_one_state(redis_url: str) -> None:
    async with Platform(redis_url, games=("esoloe",), matchmakers=1) as platform:
        rng = random.Random(4)
        outcomes = set()
        alice, bob = await logged_in(platform, "alice", "bob")
        for _round in range(12):
            a = await find(alice, "esoloe")

            async def late_cancel(ticket_id: str = a.ticket_id, who: Session = alice) -> Any:
                await asyncio.sleep(rng.random() * 0.01)
                return await cancel(who, ticket_id)

            # Bob's ticket (which the matchmaker pairs with Alice's at once) races her cancel.
            b, answer = await asyncio.gather(find(bob, "esoloe"), late_cancel())
            end_a = await final(alice, a.ticket_id)
            assert answer.state == end_a.state
            if end_a.state == MATCHED:
                end_b = await final(bob, b.ticket_id)
                assert end_b.state == MATCHED
                assert end_b.game_id == end_a.game_id
            else:
                assert end_a.state == CANCELLED
                assert (await cancel(bob, b.ticket_id)).state == CANCELLED
            outcomes.add(end_a.state)
        print(f"cancel-vs-match outcomes: {sorted(outcomes)}")
        assert outcomes <= {MATCHED, CANCELLED}


async def test_a_dead_matchmakers_tickets_are_not_lost(redis_url: str) -> None:
    async with Platform(redis_url, games=("esoloe",)) as platform:
        redis = Redis.from_url(redis_url)
        try:
            alice, bob = await logged_in(platform, "alice", "bob")
            a = await find(alice, "esoloe")
            b = await find(bob, "esoloe")
            # A matchmaker takes both entries and dies before matching or acknowledging them.
            with contextlib.suppress(ResponseError):  # BUSYGROUP
                await redis.xgroup_create(keys.TICKETS, keys.MATCHMAKER_GROUP, id="0")
            taken = await redis.xreadgroup(
                keys.MATCHMAKER_GROUP, "dead-matchmaker", {keys.TICKETS: ">"}, count=100
            )
            assert taken
            await platform.start_matchmaker("rescuer", claim_idle_seconds=0.5)
            end_a, end_b = await asyncio.gather(final(alice, a.ticket_id), final(bob, b.ticket_id))
            assert end_a.state == end_b.state == MATCHED
            assert end_a.game_id == end_b.game_id

            async def all_acknowledged() -> bool:
                pending = await redis.xpending(keys.TICKETS, keys.MATCHMAKER_GROUP)
                return not pending["pending"]

            # The dead one's entries end up acknowledged by the rescuer.
            await eventually(all_acknowledged, 5, "every ticket entry acknowledged")
        finally:
            await redis.aclose()


async def test_a_ticket_nobody_joins_expires(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("services.matchmaker.matchmaker.TICKET_TTL_SECONDS", 0.5)
    async with Platform(redis_url, games=("esoloe",), matchmakers=1) as platform:
        (alice,) = await logged_in(platform, "alice")
        ticket = await find(alice, "esoloe", seats=2)
        end = await final(alice, ticket.ticket_id)
        assert end.state == lobby_pb2.TICKET_STATE_EXPIRED
        again = await find(alice, "esoloe")  # no live ticket was left behind
        assert again.state == QUEUED
        assert (await cancel(alice, again.ticket_id)).state == CANCELLED
