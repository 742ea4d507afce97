"""Ratings that cannot be farmed, on the real stack through the gateway (PostgreSQL, Redis, the
lobby, the game services, the ratings consumer; docs/ratings.md, "What counts"): an alt's
resignations at once rate nobody; an established player does not gain from a provisional
account's losses; the leaderboard lists established players only; a bot level's rating is
fixed; a rated game is made with the standard options only, and a rated ticket's choice of
bots makes no pool of its own (so nobody picks their rated opponent with a rare choice).

The figures of the report are printed (`pytest -s`): the main account's rating after its
alt's resignations, and the random bot's after twelve."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence

import grpc
import psycopg
import pytest
import pytest_asyncio
from redis.asyncio import Redis

from client.session import Session
from runtime import keys
from runtime.redis import connect_redis
from services.lobby.friends import FriendsSettings
from services.ratings.cache import RatingCache
from services.ratings.model import Rating, starting
from tabletop.common.v1 import common_pb2
from tabletop.lobby.v1 import lobby_pb2
from tabletop.zoxso.v1 import zoxso_pb2
from tests.integration.test_accounts import PASSWORD
from tests.integration.test_rated_play import matched
from tests.integration.test_ratings import Consumer, acknowledged, finished_entry, fresh_stream
from tests.platform import Platform, assert_refused, play_moves
from tests.timing import eventually, patience

pytestmark = pytest.mark.integration

INVALID = grpc.StatusCode.INVALID_ARGUMENT


@pytest_asyncio.fixture
async def stack(redis_url: str, database_url: str) -> AsyncIterator[tuple[Platform, Redis]]:
    await fresh_stream(redis_url)
    redis = connect_redis(redis_url)  # the session's Redis: other tests' players leave
    for game in ("esoloe", "zoxso"):
        await redis.delete(keys.leaderboard(game), keys.ratings(game))
    try:
        async with Platform(
            redis_url,
            games=("esoloe", "zoxso"),
            database_url=database_url,
            matchmakers=1,
            gateway_settings={"login_rate_burst": 1000.0},
            friends=FriendsSettings(sweep_seconds=0.1),
        ) as platform:
            yield platform, redis
    finally:
        await redis.aclose()


async def accounts(platform: Platform, *names: str) -> list[Session]:
    sessions = [Session(platform.target) for _ in names]
    for session, name in zip(sessions, names, strict=True):
        await session.register(name, PASSWORD)
    return sessions


async def rated_challenge(main: Session, alt: Session) -> tuple[str, dict[int, Session]]:
    """A rated e-SOLO-e challenge from `main` that `alt` accepts: the game, its seats' sessions."""
    made = await main.lobby.ChallengePlayer(
        lobby_pb2.ChallengePlayerRequest(game="esoloe", player_id=alt.player_id, rated=True),
        metadata=main.metadata,
    )
    started = await alt.lobby.AnswerChallenge(
        lobby_pb2.AnswerChallengeRequest(challenge_id=made.challenge_id, accept=True),
        metadata=alt.metadata,
    )
    return started.game_id, {started.seat: alt, 1 - started.seat: main}


async def resign(session: Session, game: str, game_id: str) -> None:
    await session.game(game).Resign(
        common_pb2.ResignRequest(game_id=game_id), metadata=session.metadata
    )


async def all_read(redis: Redis, game_ids: Sequence[str]) -> None:
    """Wait until the ratings consumer has read (and acknowledged) each game's end."""
    last = None
    for game_id in game_ids:
        last, _ = await finished_entry(redis, game_id)
    assert last is not None
    await eventually(lambda: acknowledged(redis, last), 20, "the games' ends read by the consumer")


async def rating_of(session: Session, game: str, player_id: str = "") -> lobby_pb2.RatingInfo:
    found: lobby_pb2.RatingInfo = await session.lobby.GetRating(
        lobby_pb2.GetRatingRequest(game=game, player_id=player_id), metadata=session.metadata
    )
    return found


async def board(session: Session, game: str) -> list[str]:
    reply = await session.lobby.ListLeaderboard(
        lobby_pb2.ListLeaderboardRequest(game=game, limit=100), metadata=session.metadata
    )
    return [entry.player_id for entry in reply.entries]


async def test_an_alts_resignations_at_once_in_rated_challenges_rate_nobody(
    stack: tuple[Platform, Redis], redis_url: str, database_url: str
) -> None:
    platform, redis = stack
    main, alt = await accounts(platform, "main", "alt")
    async with Consumer(redis_url, database_url, "farming-at-once"):
        played = []
        for _ in range(8):
            game_id, _seated = await rated_challenge(main, alt)
            await resign(alt, "esoloe", game_id)
            played.append(game_id)
        await all_read(redis, played)
    mine = await rating_of(main, "esoloe")
    print(f"\nthe main account's rating after the alt's 8 resignations at once: {mine.rating}")
    assert (mine.rating, mine.games, mine.HasField("place")) == (1000, 0, False)
    assert main.player_id not in await board(main, "esoloe")
    change = await main.lobby.GetRatingChange(
        lobby_pb2.GetRatingChangeRequest(game_id=played[-1]), metadata=main.metadata
    )
    assert not change.counted  # counts for nobody
    for session in (main, alt):
        await session.close()


async def test_played_games_against_a_new_account_leave_an_established_rating_and_the_board(
    stack: tuple[Platform, Redis], redis_url: str, database_url: str
) -> None:
    """The alt plays two moves each game, then resigns: the games count, but only for the
    alt while the main is established, and a provisional main stays off the leaderboard."""
    platform, redis = stack
    main, new, alt = await accounts(platform, "main", "new", "alt")
    settled = Rating(35.0, 3.0, 40)  # as the consumer would have left an established player
    with psycopg.connect(database_url, autocommit=True) as connection:
        connection.execute(
            "INSERT INTO ratings (game, player_id, mu, sigma, games) VALUES (%s, %s, %s, %s, %s)",
            ("esoloe", main.player_id, settled.mu, settled.sigma, settled.games),
        )
    await RatingCache(redis).put("esoloe", {main.player_id: settled})
    assert await board(main, "esoloe") == [main.player_id]
    async with Consumer(redis_url, database_url, "farming-played"):
        played = []
        for farmer in (main, new):
            for _ in range(4):
                game_id, seated = await rated_challenge(farmer, alt)
                await play_moves(seated, "esoloe", game_id)
                await resign(alt, "esoloe", game_id)
                played.append(game_id)
        await all_read(redis, played)
    established = await rating_of(main, "esoloe")
    newcomer = await rating_of(new, "esoloe")
    print(
        f"\nan established main ({settled.display}) after 4 played games an alt resigned: "
        f"{established.rating}; a new main after 4: {newcomer.rating}"
    )
    assert (established.rating, established.games) == (settled.display, settled.games)
    assert (newcomer.games, newcomer.provisional) == (4, True)  # two newcomers rate each other
    assert newcomer.rating > 1000
    assert not newcomer.HasField("place")
    assert await board(main, "esoloe") == [main.player_id]  # the provisional ones are not on it
    assert (await rating_of(alt, "esoloe")).games == 8
    for session in (main, new, alt):
        await session.close()


async def test_resignations_against_a_bot_leave_its_levels_rating_where_the_arena_put_it(
    stack: tuple[Platform, Redis], redis_url: str, database_url: str
) -> None:
    platform, redis = stack
    alts = await accounts(platform, "alt1", "alt2", "alt3")
    seed = starting("zoxso", "bot-random")
    async with Consumer(redis_url, database_url, "bot-farming"):
        played = []
        for _ in range(4):
            for alt in alts:
                game = await alt.lobby.PlayAgainstBots(
                    lobby_pb2.PlayAgainstBotsRequest(
                        game="zoxso", level="random", seat=0, rated=True
                    ),
                    metadata=alt.metadata,
                )
                await resign(alt, "zoxso", game.status.game_id)
                played.append(game.status.game_id)
        await all_read(redis, played)
    bot = await rating_of(alts[0], "zoxso", "bot-random")
    print(f"\nZoxSo's random bot after {len(played)} resignations against it: {bot.rating}")
    assert (bot.rating, bot.mu, bot.provisional) == (seed.display, seed.mu, False)
    assert "bot-random" not in await board(alts[0], "zoxso")
    for session in alts:
        await session.close()


async def test_a_rated_game_has_the_standard_options_and_a_rated_ticket_no_pool_of_its_own(
    stack: tuple[Platform, Redis],
) -> None:
    platform, _ = stack
    main, alt, other = await accounts(platform, "main", "alt", "other")
    rare = lobby_pb2.GameOptions(zoxso=zoxso_pb2.Options(max_plies=37))
    refused = await assert_refused(
        main.lobby.FindMatch(
            lobby_pb2.FindMatchRequest(game="zoxso", options=rare, rated=True),
            metadata=main.metadata,
        ),
        INVALID, "INVALID_OPTIONS", "max_plies 37", "standard", "casual",
    )  # fmt: skip
    assert "400" in refused
    slow = common_pb2.TimeControl(clock_seconds=3541)
    await assert_refused(
        main.lobby.FindMatch(
            lobby_pb2.FindMatchRequest(game="esoloe", time_control=slow, rated=True),
            metadata=main.metadata,
        ),
        INVALID, "INVALID_OPTIONS", "time_control.clock_seconds 3541",
    )  # fmt: skip
    await assert_refused(
        main.lobby.PlayAgainstBots(
            lobby_pb2.PlayAgainstBotsRequest(game="zoxso", options=rare, seat=0, rated=True),
            metadata=main.metadata,
        ),
        INVALID, "INVALID_OPTIONS", "max_plies",
    )  # fmt: skip
    await assert_refused(
        main.lobby.ChallengePlayer(
            lobby_pb2.ChallengePlayerRequest(
                game="zoxso", player_id=alt.player_id, options=rare, rated=True
            ),
            metadata=main.metadata,
        ),
        INVALID, "INVALID_OPTIONS", "max_plies",
    )  # fmt: skip
    casual = await main.lobby.FindMatch(
        lobby_pb2.FindMatchRequest(game="zoxso", options=rare), metadata=main.metadata
    )  # a casual game may have any options
    await main.lobby.CancelTicket(
        lobby_pb2.CancelTicketRequest(ticket_id=casual.ticket_id), metadata=main.metadata
    )
    # A rare choice of bots (its level, how long to wait) is no pool of its own either: the main
    # meets whoever else waits for a rated game, not only an alt that chose the same.
    chosen = await main.lobby.FindMatch(
        lobby_pb2.FindMatchRequest(
            game="esoloe", rated=True, level="expert",
            bots=lobby_pb2.BOT_FILL_AFTER, bots_after_seconds=3517,
        ),
        metadata=main.metadata,
    )  # fmt: skip
    plain = await other.lobby.FindMatch(
        lobby_pb2.FindMatchRequest(game="esoloe", rated=True), metadata=other.metadata
    )
    met = await asyncio.wait_for(
        asyncio.gather(matched(main, chosen.ticket_id), matched(other, plain.ticket_id)),
        patience(10),
    )
    assert met[0].game_id == met[1].game_id
    await resign(main, "esoloe", met[0].game_id)
    for session in (main, alt, other):
        await session.close()
