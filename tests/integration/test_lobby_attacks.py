"""What an independent adversary did to the lobby and the archive through the public API, each
replayed on the real stack (gateway, lobby, game services, Redis, PostgreSQL, the archiver and
the ratings consumer), with what must hold instead:

4. the Solace deal of the day copied from another's finished game: others see a deal of the day
   (history, GetArchivedGame and GetArchivedView, ExportArchive, Watch and GetView, the live
   list) once its day is over; its day's table counts accounts made before the day began, and
   games that ended on it;
5. challenge spam burying a friend's challenge: the challenges of players one knows come first,
   and strangers' are bounded per maker and in all;
6. UNKNOWN answers to a page token and a month out of range (and their siblings);
7. Solace tables that never start, holding one of the player's places: refused, saying how to
   play it.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import json
import random
from collections.abc import AsyncIterator, Mapping
from typing import Any

import grpc
import psycopg
import pytest

from client.session import Session
from runtime import keys
from runtime.redis import connect_redis
from services.archive.archiver import Archiver
from services.lobby.friends import FriendsSettings
from tabletop.common.v1 import common_pb2
from tabletop.lobby.v1 import lobby_pb2
from tabletop.solace.v1 import solace_pb2
from tests.integration.test_accounts import PASSWORD
from tests.integration.test_ratings import Consumer, acknowledged, finished_entry, fresh_stream
from tests.platform import Platform, assert_refused
from tests.timing import eventually, patience
from wire.errors import error_info

pytestmark = pytest.mark.integration

DAILY = solace_pb2.Options(deal_of_the_day=True)
INVALID, NOT_FOUND, DENIED, EXHAUSTED = (
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.NOT_FOUND,
    grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.RESOURCE_EXHAUSTED,
)
OPEN = lobby_pb2.CHALLENGE_STATE_OPEN


@contextlib.asynccontextmanager
async def stack(redis_url: str, database_url: str, *games: str) -> AsyncIterator[Platform]:
    await fresh_stream(redis_url)
    async with Platform(
        redis_url,
        games=games,
        database_url=database_url,
        gateway_settings={"login_rate_burst": 1000.0, "accounts_per_address_day": 1000},
        friends=FriendsSettings(sweep_seconds=0.1),
    ) as platform:
        yield platform


async def accounts(platform: Platform, *names: str) -> list[Session]:
    sessions = [Session(platform.target) for _ in names]
    for session, name in zip(sessions, names, strict=True):
        await session.register(name, PASSWORD)
    return sessions


def made_before_today(database_url: str, *sessions: Session) -> None:
    """These accounts were made two days ago (as a player's account usually was)."""
    with psycopg.connect(database_url) as connection:
        connection.execute(
            "UPDATE accounts SET created_at = now() - interval '2 days' WHERE id = ANY(%s)",
            ([s.player_id for s in sessions],),
        )


def archived(database_url: str, game_id: str) -> bool:
    with psycopg.connect(database_url) as connection:
        row = connection.execute(
            "SELECT count(*) FROM archived_games WHERE game_id = %s", (game_id,)
        ).fetchone()
    return row is not None and row[0] == 1


async def daily(session: Session) -> str:
    created = await session.game("solace").CreateGame(
        solace_pb2.CreateGameRequest(players=[session.player_id], options=DAILY),
        metadata=session.metadata,
    )
    game_id: str = created.status.game_id
    return game_id


async def play_out(session: Session, game_id: str, seed: int, moves: int) -> float:
    """`moves` random moves (fewer if the game has none), then `stop`: the game's score."""
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
    if not view.status.finished:  # (a deal may end by itself)
        await stub.Play(
            common_pb2.PlayRequest(game_id=game_id, move="stop"), metadata=session.metadata
        )
        view = await stub.GetView(
            common_pb2.GetViewRequest(game_id=game_id), metadata=session.metadata
        )
    assert view.status.finished
    return float(view.status.result.scores[0])


async def first_of(stream: Any) -> Any:
    async for message in stream:
        return message
    return None


async def history(session: Session, player: Session) -> set[str]:
    listed = await session.lobby.ListArchivedGames(
        lobby_pb2.ListArchivedGamesRequest(player_id=player.player_id, game="solace"),
        metadata=session.metadata,
    )
    return {g.game_id for g in listed.games}


async def exported(session: Session) -> set[str]:
    month = datetime.datetime.now(datetime.UTC).strftime("%Y-%m")
    found = set()
    async for piece in session.lobby.ExportArchive(
        lobby_pb2.ExportArchiveRequest(month=month, game="solace"), metadata=session.metadata
    ):
        found |= {json.loads(line)["game_id"] for line in piece.ndjson.decode().splitlines()}
    return found


async def day_table(session: Session, day: str) -> dict[str, float]:
    listed = await session.lobby.ListScoreTable(
        lobby_pb2.ListScoreTableRequest(game="solace", day=day, limit=100),
        metadata=session.metadata,
    )
    return {e.player_id: e.score for e in listed.entries}


# ---- 4: the deal of the day copied --------------------------------------------------------


async def test_a_deal_of_the_day_is_shown_to_others_once_its_day_is_over(
    redis_url: str, database_url: str
) -> None:
    async with stack(redis_url, database_url, "solace") as platform:
        ann, bob, eve = await accounts(platform, "ann", "bob", "eve")
        made_before_today(database_url, ann, bob)  # eve: an account made today, to scout
        redis = connect_redis(redis_url)
        async with (
            Consumer(redis_url, database_url, "archiver", Archiver),
            Consumer(
                redis_url, database_url, "scores", accounts=platform.accounts_target
            ) as scores,
        ):
            # ann plays today's deal to its end; eve looks for it at once, to copy it
            game_id = await daily(ann)
            ann_score = await play_out(ann, game_id, seed=1, moves=25)
            await eventually(lambda: archived(database_url, game_id), 10, "ann's deal archived")
            assert game_id not in await history(eve, ann)
            for refused in (
                eve.lobby.GetArchivedGame(
                    lobby_pb2.GetArchivedGameRequest(game_id=game_id), metadata=eve.metadata
                ),
                eve.lobby.GetArchivedView(
                    lobby_pb2.GetArchivedViewRequest(game_id=game_id, version=1),
                    metadata=eve.metadata,
                ),
            ):
                await assert_refused(refused, NOT_FOUND, "GAME_NOT_FOUND", "day is over")
            assert game_id not in await exported(eve)
            # the game is still in Redis (for a day): not shown there either
            stub = eve.game("solace")
            for public in (True, False):
                await assert_refused(
                    stub.GetView(
                        common_pb2.GetViewRequest(game_id=game_id, public=public),
                        metadata=eve.metadata,
                    ),
                    DENIED,
                    "NOT_YOUR_GAME",
                    "midnight UTC",
                )
                await assert_refused(
                    first_of(
                        stub.Watch(
                            common_pb2.WatchRequest(game_id=game_id, public=public),
                            metadata=eve.metadata,
                        )
                    ),
                    DENIED,
                    "NOT_YOUR_GAME",
                )
            # bob's deal, live: not to watch, not in the list of games to watch
            live = await daily(bob)
            listed = await eve.lobby.ListLiveGames(
                lobby_pb2.ListLiveGamesRequest(game="solace", limit=50), metadata=eve.metadata
            )
            assert live not in {g.status.game_id for g in listed.games}
            await assert_refused(
                first_of(
                    stub.Watch(
                        common_pb2.WatchRequest(game_id=live, public=True), metadata=eve.metadata
                    )
                ),
                DENIED,
                "NOT_YOUR_GAME",
            )
            # its own player sees it all: the game, her history, the archived record
            mine = await ann.game("solace").GetView(
                common_pb2.GetViewRequest(game_id=game_id, public=True), metadata=ann.metadata
            )
            assert mine.status.finished
            assert game_id in await history(ann, ann)
            record = await ann.lobby.GetArchivedGame(
                lobby_pb2.GetArchivedGameRequest(game_id=game_id), metadata=ann.metadata
            )
            assert record.day
            assert record.moves
            # eve's own try (an account made today) and bob's: on today's table, bob only
            eve_game = await daily(eve)
            await play_out(eve, eve_game, seed=2, moves=3)
            bob_score = await play_out(bob, live, seed=3, moves=3)
            await eventually(lambda: scores.counted >= 3, 10, "three deals counted")
            today = datetime.datetime.now(datetime.UTC).date()
            table = await day_table(eve, "today")
            assert table.get(ann.player_id) == ann_score
            assert table.get(bob.player_id) == bob_score
            assert eve.player_id not in table
            # a deal that ends after its day is over (its moves shown to others by then) is
            # not on its day's table: bob's game, as if made yesterday
            _, fields = await finished_entry(redis, live)
            late: dict[Any, Any] = dict(fields)
            record_json = json.loads(late[b"record"])
            record_json["day"] = (today - datetime.timedelta(days=1)).isoformat()
            late[b"record"] = json.dumps(record_json).encode()
            late[b"game_id"] = b"solace-" + b"0" * 20
            sent = await redis.xadd(keys.FINISHED_GAMES, late)
            await eventually(lambda: acknowledged(redis, sent), 10, "the late deal counted")
            assert bob.player_id not in await day_table(eve, record_json["day"])
        # once the day is over, everyone sees the day's games
        with psycopg.connect(database_url) as connection:
            connection.execute(
                "UPDATE archived_games SET day = day - 1 WHERE game_id = %s",
                (game_id,),
            )
        assert game_id in await history(eve, ann)
        shown = await eve.lobby.GetArchivedGame(
            lobby_pb2.GetArchivedGameRequest(game_id=game_id), metadata=eve.metadata
        )
        assert [m.move for m in shown.moves] == [m.move for m in record.moves]
        await redis.aclose()
        for session in (ann, bob, eve):
            await session.close()


# ---- 5: challenge spam --------------------------------------------------------------------


async def test_strangers_cannot_bury_a_friends_challenge(redis_url: str, database_url: str) -> None:
    async with stack(redis_url, database_url, "esoloe") as platform:
        vic, pal = await accounts(platform, "vic", "pal")
        spammers = await accounts(platform, *(f"spam{i}" for i in range(11)))
        # vic and pal played together: vic challenged pal, who accepted
        first = await vic.lobby.ChallengePlayer(
            lobby_pb2.ChallengePlayerRequest(game="esoloe", player_id=pal.player_id),
            metadata=vic.metadata,
        )
        started = await pal.lobby.AnswerChallenge(
            lobby_pb2.AnswerChallengeRequest(challenge_id=first.challenge_id, accept=True),
            metadata=pal.metadata,
        )
        await pal.game("esoloe").Resign(
            common_pb2.ResignRequest(game_id=started.game_id), metadata=pal.metadata
        )
        # pal challenges vic again; then 11 fresh accounts send 55 challenges at once
        friendly = await pal.lobby.ChallengePlayer(
            lobby_pb2.ChallengePlayerRequest(game="esoloe", player_id=vic.player_id),
            metadata=pal.metadata,
        )

        async def spam(spammer: Session) -> list[str]:
            sent: list[str] = []
            limits: list[tuple[grpc.StatusCode, str, Mapping[str, str]]] = []
            for _ in range(5):
                try:
                    made = await spammer.lobby.ChallengePlayer(
                        lobby_pb2.ChallengePlayerRequest(game="esoloe", player_id=vic.player_id),
                        metadata=spammer.metadata,
                    )
                    sent.append(made.challenge_id)
                except grpc.aio.AioRpcError as error:
                    limits.append((error.code(), *error_info(error)))
            assert {(code, reason) for code, reason, _ in limits} <= {(EXHAUSTED, "LIMIT_REACHED")}
            bounds = {metadata["limit"] for _, _, metadata in limits}
            assert bounds <= {"challenges_to_player", "challenges_from_strangers"}
            return sent

        sent = [c for made in await asyncio.gather(*map(spam, spammers)) for c in made]

        async def listed() -> list[str]:
            reply = await vic.lobby.ListChallenges(
                lobby_pb2.ListChallengesRequest(open_only=True), metadata=vic.metadata
            )
            return [c.challenge_id for c in reply.challenges]

        shown = await listed()
        assert friendly.challenge_id in shown, "the friend's challenge is not listed"
        assert shown[0] == friendly.challenge_id  # friends first
        assert len(sent) <= 20  # strangers' challenges waiting for one player: bounded
        assert set(shown) == {friendly.challenge_id, *sent}

        async def snapshot(expected: set[str]) -> list[str]:
            """What WatchChallenges tells first, until it told every one `expected` (or, after
            a while, what it told by then)."""
            stream = vic.lobby.WatchChallenges(
                lobby_pb2.WatchChallengesRequest(), metadata=vic.metadata
            )
            told: list[str] = []

            async def read() -> None:
                async for challenge in stream:
                    told.append(challenge.challenge_id)
                    if expected <= set(told):
                        return

            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(read(), patience(10))
            stream.cancel()
            return told

        told = await snapshot({friendly.challenge_id, *sent})
        assert friendly.challenge_id in told, "the friend's challenge is not in the snapshot"
        assert told.index(friendly.challenge_id) < min(told.index(c) for c in sent)
        # the spammers withdraw theirs and send more, over and over: the friend's stays
        for _ in range(3):
            for spammer in spammers:
                mine = await spammer.lobby.ListChallenges(
                    lobby_pb2.ListChallengesRequest(open_only=True), metadata=spammer.metadata
                )
                for challenge in mine.challenges:
                    await spammer.lobby.CancelChallenge(
                        lobby_pb2.CancelChallengeRequest(challenge_id=challenge.challenge_id),
                        metadata=spammer.metadata,
                    )
            sent = [c for made in await asyncio.gather(*map(spam, spammers)) for c in made]
        shown = await listed()
        assert shown[0] == friendly.challenge_id
        told = await snapshot({friendly.challenge_id, *sent})
        assert friendly.challenge_id in told
        # whoever makes them, one player may have 3 challenges waiting for another's answer
        spam0 = spammers[0]
        mine = await spam0.lobby.ListChallenges(
            lobby_pb2.ListChallengesRequest(open_only=True), metadata=spam0.metadata
        )
        for challenge in mine.challenges:
            await spam0.lobby.CancelChallenge(
                lobby_pb2.CancelChallengeRequest(challenge_id=challenge.challenge_id),
                metadata=spam0.metadata,
            )
        to_pal = lobby_pb2.ChallengePlayerRequest(game="esoloe", player_id=pal.player_id)
        for _ in range(3):
            await spam0.lobby.ChallengePlayer(to_pal, metadata=spam0.metadata)
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await spam0.lobby.ChallengePlayer(to_pal, metadata=spam0.metadata)
        assert error_info(caught.value) == (
            "LIMIT_REACHED",
            {"limit": "challenges_to_player", "max": "3", "player_id": pal.player_id},
        )
        for session in (vic, pal, *spammers):
            await session.close()


# ---- 6: UNKNOWN answers -------------------------------------------------------------------


async def test_out_of_range_tokens_months_and_ids_are_refused_with_a_reason(
    redis_url: str, database_url: str
) -> None:
    async with stack(redis_url, database_url, "esoloe") as platform:
        ann, bob = await accounts(platform, "ann", "bob")
        lobby, metadata = ann.lobby, ann.metadata
        game_id = "esoloe-" + "0" * 20
        for token in (
            "99999999999999999999999.x",  # the report's
            f"99999999999999999999999.{game_id}",
            f"{'9' * 400}.{game_id}",
            f"١٢٣.{game_id}",  # digits, but not ASCII ones
            f"12.{game_id}\x00",
            "-5.x",
        ):
            await assert_refused(
                lobby.ListArchivedGames(
                    lobby_pb2.ListArchivedGamesRequest(page_token=token), metadata=metadata
                ),
                INVALID,
                "INVALID_ARGUMENT",
                "page_token",
            )
        for month in ("9999-12", "0000-01", "2026-13", "2026-00", "٢٠٢٦-01", "+2026-1"):
            await assert_refused(
                first_of(
                    lobby.ExportArchive(
                        lobby_pb2.ExportArchiveRequest(month=month), metadata=metadata
                    )
                ),
                INVALID,
                "INVALID_ARGUMENT",
                "month",
            )
        for bad_id in ("esoloe-\x00", f"{game_id}\x00", "x" * 40):
            await assert_refused(
                lobby.GetArchivedGame(
                    lobby_pb2.GetArchivedGameRequest(game_id=bad_id), metadata=metadata
                ),
                INVALID,
                "INVALID_ARGUMENT",
                "game_id",
            )
            await assert_refused(
                lobby.GetArchivedView(
                    lobby_pb2.GetArchivedViewRequest(game_id=bad_id), metadata=metadata
                ),
                INVALID,
                "INVALID_ARGUMENT",
                "game_id",
            )
        await assert_refused(
            lobby.ChallengePlayer(
                lobby_pb2.ChallengePlayerRequest(game="esoloe", username="bob\x00"),
                metadata=metadata,
            ),
            NOT_FOUND,
            "PLAYER_NOT_FOUND",
        )
        # numbers at their ends: answered, or refused with a reason
        assert not (
            await lobby.ListScoreTable(
                lobby_pb2.ListScoreTableRequest(game="solace", from_place=2**31 - 1),
                metadata=metadata,
            )
        ).entries
        await assert_refused(
            lobby.GetArchivedView(
                lobby_pb2.GetArchivedViewRequest(game_id=game_id, version=2**63 - 1),
                metadata=metadata,
            ),
            NOT_FOUND,
            "GAME_NOT_FOUND",
        )
        for session in (ann, bob):
            await session.close()


# ---- 7: Solace tables that never start ----------------------------------------------------


async def test_solace_is_refused_where_it_cannot_be_played_with_others(
    redis_url: str, database_url: str
) -> None:
    async with stack(redis_url, database_url, "solace", "esoloe") as platform:
        ann, bob = await accounts(platform, "ann", "bob")
        lobby, metadata = ann.lobby, ann.metadata
        solace = lobby_pb2.GameOptions(solace=solace_pb2.Options())
        daily_options = lobby_pb2.GameOptions(solace=DAILY)
        await assert_refused(
            lobby.FindMatch(
                lobby_pb2.FindMatchRequest(game="solace", options=daily_options), metadata=metadata
            ),
            INVALID,
            "INVALID_OPTIONS",
            "PlayAgainstBots",
            "SolaceService.CreateGame",
        )
        for method, request in (
            ("CreateInvite", lobby_pb2.CreateInviteRequest(game="solace")),
            ("CreateInvite", lobby_pb2.CreateInviteRequest(game="solace", options=solace)),
            ("OpenTable", lobby_pb2.OpenTableRequest(game="solace")),
            ("OpenTable", lobby_pb2.OpenTableRequest(game="solace", seats=1)),
            (
                "ChallengePlayer",
                lobby_pb2.ChallengePlayerRequest(game="solace", player_id=bob.player_id),
            ),
        ):
            await assert_refused(
                getattr(lobby, method)(request, metadata=metadata),
                INVALID,
                "INVALID_ARGUMENT",
                "played alone",
                "PlayAgainstBots",
                "deal_of_the_day",
            )
        await assert_refused(
            lobby.CreateInvite(
                lobby_pb2.CreateInviteRequest(game="solace", options=daily_options),
                metadata=metadata,
            ),
            INVALID,
            "INVALID_OPTIONS",
            "PlayAgainstBots",
        )
        # a rematch of a game played alone: the same answer
        created = await ann.game("solace").CreateGame(
            solace_pb2.CreateGameRequest(players=[ann.player_id]), metadata=metadata
        )
        played = created.status.game_id
        await ann.game("solace").Play(
            common_pb2.PlayRequest(game_id=played, move="stop"), metadata=metadata
        )
        await assert_refused(
            lobby.OfferRematch(lobby_pb2.OfferRematchRequest(game_id=played), metadata=metadata),
            INVALID,
            "INVALID_ARGUMENT",
            "played alone",
        )
        # nothing waits, nothing holds a place: ann's list is empty, her places free
        listed = await lobby.ListChallenges(lobby_pb2.ListChallengesRequest(), metadata=metadata)
        assert list(listed.challenges) == []
        ticket = await lobby.FindMatch(lobby_pb2.FindMatchRequest(game="solace"), metadata=metadata)
        await lobby.CancelTicket(
            lobby_pb2.CancelTicketRequest(ticket_id=ticket.ticket_id), metadata=metadata
        )
        for _ in range(FriendsSettings().invites):
            await lobby.CreateInvite(
                lobby_pb2.CreateInviteRequest(game="esoloe"), metadata=metadata
            )
        # the way the refusals name: the deal of the day through the lobby
        mine = await lobby.PlayAgainstBots(
            lobby_pb2.PlayAgainstBotsRequest(game="solace", options=daily_options),
            metadata=metadata,
        )
        assert mine.status.game_id.startswith("solace-")
        for session in (ann, bob):
            await session.close()
