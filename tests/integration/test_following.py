"""Following, presence and notifications on the real stack (gateway, lobby, game services,
Redis, PostgreSQL for the accounts and their follows): follow, unfollow, list, refuse, bound;
presence while a notification stream is open; challenges and their answers, a followed player's
game starting and a person's turn, told on the notification stream; its bounds (the lobby's,
and the gateway's on a player's streams); resuming it; the terminal client's commands."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import grpc
import psycopg
import pytest
from redis.asyncio import Redis

from client.session import Session
from runtime import keys
from services.lobby.following import FollowSettings, lock_follows
from services.lobby.friends import FriendsSettings
from tabletop.common.v1 import common_pb2
from tabletop.lobby.v1 import lobby_pb2
from tests.integration.test_accounts import PASSWORD
from tests.integration.test_client import state_dir, tabletop
from tests.integration.test_friends import (
    EXHAUSTED,
    FAILED,
    NOT_FOUND,
    accounts,
    answer,
    call,
    challenge,
    stack,
    status,
)
from tests.platform import Platform, assert_refused, logged_in, play_moves
from tests.timing import eventually
from wire.errors import error_info

pytestmark = pytest.mark.integration

__all__ = ["state_dir"]  # the fixture of tests/integration/test_client.py

N = lobby_pb2.NotificationKind


class Notified:
    """Everything a player's WatchNotifications stream says, as it comes."""

    def __init__(self, session: Session, after_id: str = "") -> None:
        self.session = session
        self.seen: list[lobby_pb2.Notification] = []
        self.call = session.lobby.WatchNotifications(
            lobby_pb2.WatchNotificationsRequest(after_id=after_id), metadata=session.metadata
        )
        self.task = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for notification in self.call:
            self.seen.append(notification)

    async def told(self, kind: Any, **fields: str) -> lobby_pb2.Notification:
        def found() -> lobby_pb2.Notification | None:
            if self.task.done():
                self.task.result()  # the stream failed: say why
            return next(
                (
                    n for n in self.seen
                    if n.kind == kind and all(getattr(n, k) == v for k, v in fields.items())
                ),
                None,
            )  # fmt: skip

        told: lobby_pb2.Notification = await eventually(found, 10, f"told {N.Name(kind)}")
        return told

    async def close(self) -> None:
        self.call.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.task

    async def __aenter__(self) -> Notified:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()


async def follow(session: Session, username: str) -> lobby_pb2.FollowedPlayer:
    found: lobby_pb2.FollowedPlayer = await call(
        session, "FollowPlayer", lobby_pb2.FollowPlayerRequest(username=username)
    )
    return found


async def following(session: Session) -> list[lobby_pb2.FollowedPlayer]:
    found = await call(session, "ListFollowing", lobby_pb2.ListFollowingRequest())
    return list(found.players)


async def online(session: Session, player_id: str) -> bool:
    return any(p.online for p in await following(session) if p.player_id == player_id)


async def test_follow_unfollow_list_refuse_and_bound(redis_url: str, database_url: str) -> None:
    async with stack(redis_url, database_url, following=FollowSettings(follows=2)) as platform:
        ann, bob, cy, dee = await accounts(platform, "ann", "bob", "cy", "dee")
        (guest,) = await logged_in(platform, "gus")
        followed = await follow(ann, "BOB")  # by username, whatever its case
        assert (followed.player_id, followed.name, followed.online) == (bob.player_id, "bob", False)
        assert followed.since.seconds > 0
        assert (await follow(ann, "bob")).player_id == bob.player_id  # again: still one follow
        await follow(ann, "cy")
        assert [p.name for p in await following(ann)] == ["bob", "cy"]
        listed = await call(bob, "ListFollowers", lobby_pb2.ListFollowersRequest())
        assert [(f.player_id, f.name) for f in listed.followers] == [(ann.player_id, "ann")]
        await assert_refused(follow(ann, "dee"), EXHAUSTED, "LIMIT_REACHED", "at most 2")
        await assert_refused(follow(ann, "nobody-here"), NOT_FOUND, "PLAYER_NOT_FOUND")
        await assert_refused(
            follow(ann, "ann"), grpc.StatusCode.INVALID_ARGUMENT, "INVALID_ARGUMENT"
        )
        await assert_refused(
            follow(guest, "bob"), grpc.StatusCode.PERMISSION_DENIED, "NOT_PERMITTED", "guest"
        )
        await call(ann, "UnfollowPlayer", lobby_pb2.UnfollowPlayerRequest(username="cy"))
        await call(ann, "UnfollowPlayer", lobby_pb2.UnfollowPlayerRequest(username="cy"))  # done
        assert [p.name for p in await following(ann)] == ["bob"]
        await follow(ann, "dee")  # room again
        # dee takes no followers: ann's follow of her ends, and no one may follow her anew
        nobody = lobby_pb2.SetFollowSettingRequest(accept_from=lobby_pb2.ACCEPT_FROM_NOBODY)
        setting = await call(dee, "SetFollowSetting", nobody)
        assert setting.accept_from == lobby_pb2.ACCEPT_FROM_NOBODY
        got = await call(dee, "GetFollowSetting", lobby_pb2.GetFollowSettingRequest())
        assert got.accept_from == lobby_pb2.ACCEPT_FROM_NOBODY
        assert [p.name for p in await following(ann)] == ["bob"]
        await assert_refused(follow(cy, "dee"), FAILED, "FOLLOWS_REFUSED", "no followers")
        everyone = lobby_pb2.SetFollowSettingRequest(accept_from=lobby_pb2.ACCEPT_FROM_EVERYONE)
        await call(dee, "SetFollowSetting", everyone)
        await follow(cy, "dee")


async def test_a_follow_waits_for_a_change_of_the_followed_players_setting(
    redis_url: str, database_url: str
) -> None:
    """A follow and a change of the followed player's setting never cross: a follow made while
    the change is under way waits for it, and then sees it (the lobby's own lock, not the
    accounts' rows)."""
    async with stack(redis_url, database_url) as platform:
        ann, bob = await accounts(platform, "ann", "bob")
        async with await psycopg.AsyncConnection.connect(database_url) as connection:
            async with connection.transaction():  # bob's change to nobody, as the lobby makes it
                await lock_follows(connection, [bob.player_id])
                await connection.execute(
                    "INSERT INTO follow_settings (account_id, accept_from) VALUES (%s, 'nobody')",
                    (bob.player_id,),
                )
                following_bob = asyncio.create_task(follow(ann, "bob"))
                await asyncio.sleep(0.5)
                assert not following_bob.done(), "a follow crossed a change of the setting"
            await assert_refused(following_bob, FAILED, "FOLLOWS_REFUSED", "no followers")
        assert await following(ann) == []


async def test_presence_follows_the_notification_stream_and_the_game_played(
    redis_url: str, database_url: str
) -> None:
    async with stack(redis_url, database_url) as platform:
        ann, bob = await accounts(platform, "ann", "bob")
        await follow(ann, "bob")
        assert not await online(ann, bob.player_id)
        away = Session(platform.target)
        await away.account_login("bob", PASSWORD)
        watching = Notified(away)
        await eventually(lambda: online(ann, bob.player_id), 10, "bob online")
        await away.close()  # the connection drops
        # at once: well within the time its presence would take to lapse (PRESENCE_SECONDS)
        await eventually(lambda: _not(online(ann, bob.player_id)), 1, "bob offline")
        with contextlib.suppress(Exception):
            await watching.close()
        # the same on a player session: its notification stream is a call on it
        on_session = Session(platform.target)
        await on_session.account_login("bob", PASSWORD)
        on_session.open_stream()
        watching = Notified(on_session)
        await eventually(lambda: online(ann, bob.player_id), 10, "bob online on a session")
        await on_session.close()
        await eventually(lambda: _not(online(ann, bob.player_id)), 1, "bob offline again")
        with contextlib.suppress(Exception):
            await watching.close()
        # the public game bob plays now, to watch
        played = await call(bob, "PlayAgainstBots", lobby_pb2.PlayAgainstBotsRequest(game="zoxso"))
        (shown,) = await following(ann)
        assert (shown.game, shown.game_id) == ("zoxso", played.status.game_id)
        await bob.game("zoxso").Resign(
            common_pb2.ResignRequest(game_id=played.status.game_id), metadata=bob.metadata
        )
        (shown,) = await following(ann)
        assert (shown.game, shown.game_id) == ("", "")


async def _not(check: Any) -> bool:
    return not await check


async def test_challenges_and_their_answers_are_notified(redis_url: str, database_url: str) -> None:
    short = FriendsSettings(sweep_seconds=0.1, challenge_seconds=1.0)
    async with stack(redis_url, database_url, short) as platform:
        ann, bob = await accounts(platform, "ann", "bob")
        async with Notified(ann) as ann_told, Notified(bob) as bob_told:
            made = await challenge(ann, player_id=bob.player_id)
            got = await bob_told.told(N.NOTIFICATION_KIND_CHALLENGE_RECEIVED)
            assert (got.challenge_id, got.player_id, got.name, got.game) == (
                made.challenge_id, ann.player_id, "ann", "esoloe",
            )  # fmt: skip
            assert "ann" in got.message
            assert got.time.seconds > 0
            assert got.notification_id
            accepted = await answer(bob, made.challenge_id, accept=True)
            got = await ann_told.told(
                N.NOTIFICATION_KIND_CHALLENGE_ACCEPTED, challenge_id=made.challenge_id
            )
            assert (got.player_id, got.name) == (bob.player_id, "bob")
            await bob.game("esoloe").Resign(
                common_pb2.ResignRequest(game_id=accepted.game_id), metadata=bob.metadata
            )
            again = await call(
                ann, "OfferRematch", lobby_pb2.OfferRematchRequest(game_id=accepted.game_id)
            )
            got = await bob_told.told(
                N.NOTIFICATION_KIND_REMATCH_OFFERED, challenge_id=again.challenge_id
            )
            assert got.game_id == accepted.game_id
            await answer(bob, again.challenge_id, accept=False)
            await ann_told.told(
                N.NOTIFICATION_KIND_CHALLENGE_DECLINED, challenge_id=again.challenge_id
            )
            unanswered = await challenge(bob, player_id=ann.player_id)
            await ann_told.told(
                N.NOTIFICATION_KIND_CHALLENGE_EXPIRED, challenge_id=unanswered.challenge_id,
                player_id=bob.player_id,
            )  # fmt: skip
            await bob_told.told(
                N.NOTIFICATION_KIND_CHALLENGE_EXPIRED, challenge_id=unanswered.challenge_id,
                player_id=ann.player_id,
            )  # fmt: skip


async def test_a_followed_players_game_starting_is_notified(
    redis_url: str, database_url: str
) -> None:
    async with stack(redis_url, database_url) as platform:
        ann, bob, cy = await accounts(platform, "ann", "bob", "cy")
        await follow(ann, "bob")
        async with Notified(ann) as ann_told, Notified(cy) as cy_told:
            played = await call(
                bob, "PlayAgainstBots", lobby_pb2.PlayAgainstBotsRequest(game="zoxso")
            )
            game_id = played.status.game_id
            got = await ann_told.told(N.NOTIFICATION_KIND_GAME_STARTED, game_id=game_id)
            assert (got.game, got.player_id, got.name) == ("zoxso", bob.player_id, "bob")
            # a private table's game is nobody else's
            invite = await call(bob, "CreateInvite", lobby_pb2.CreateInviteRequest(game="esoloe"))
            joined = await call(cy, "JoinInvite", lobby_pb2.JoinInviteRequest(code=invite.code))
            later = await call(
                bob, "PlayAgainstBots", lobby_pb2.PlayAgainstBotsRequest(game="esoloe")
            )
            await ann_told.told(N.NOTIFICATION_KIND_GAME_STARTED, game_id=later.status.game_id)
            assert joined.game_id not in {n.game_id for n in ann_told.seen}
            assert not cy_told.seen  # cy follows nobody
            for game, ended in (("zoxso", game_id), ("esoloe", later.status.game_id)):
                await bob.game(game).Resign(
                    common_pb2.ResignRequest(game_id=ended), metadata=bob.metadata
                )


async def test_notification_streams_are_bounded_and_resume_after_the_last_id(
    redis_url: str, database_url: str
) -> None:
    async with stack(
        redis_url, database_url, following=FollowSettings(notification_streams=2)
    ) as platform:
        ann, bob = await accounts(platform, "ann", "bob")
        first = Notified(bob)
        for _ in range(3):
            await challenge(ann, player_id=bob.player_id)
        await eventually(lambda: len(first.seen) == 3, 10, "three challenges told")
        second = Notified(bob, after_id=first.seen[0].notification_id)
        await eventually(lambda: len(second.seen) == 2, 10, "the two after the first told")
        assert [n.notification_id for n in second.seen] == [
            n.notification_id for n in first.seen[1:]
        ]
        third = Notified(bob)
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await third.task
        assert caught.value.code() == EXHAUSTED
        assert "notification streams" in (caught.value.details() or "")
        await first.close()
        # one closed: room for another, which resumes from the start without a gap or repeat
        everything = Notified(bob, after_id="0")
        await eventually(lambda: len(everything.seen) == 3, 10, "all three from the start")
        assert [n.notification_id for n in everything.seen] == [
            n.notification_id for n in first.seen
        ]
        await second.close()
        await everything.close()


async def test_the_terminal_client_follows_and_prints_notifications(
    redis_url: str, database_url: str
) -> None:
    async with stack(redis_url, database_url) as platform:
        ann, cy = await accounts(platform, "ann", "cy")
        await tabletop(platform, "register", "bob", script=PASSWORD + "\n")
        followed = await tabletop(platform, "follow", "ann")
        assert followed.code == 0, followed.err
        assert "you follow ann  offline" in followed.out
        played = await call(ann, "PlayAgainstBots", lobby_pb2.PlayAgainstBotsRequest(game="zoxso"))
        game_id = played.status.game_id
        shown = await tabletop(platform, "following")
        assert f"ann  offline  playing zoxso {game_id}  (tabletop watch zoxso {game_id})" in (
            shown.out
        )
        refused = await tabletop(platform, "follow", "nobody-here")
        assert refused.code == 1
        assert "PLAYER_NOT_FOUND" in refused.err
        await tabletop(platform, "followers", "refuse")
        assert (await tabletop(platform, "followers")).out.strip() == "nobody follows you"
        assert "FOLLOWS_REFUSED" in (await follow_as(cy, "bob"))
        await tabletop(platform, "followers", "allow")
        await follow(cy, "bob")
        assert (await tabletop(platform, "followers")).out.strip() == "cy"
        made = await challenge(cy, username="bob")
        told = await tabletop(platform, "notifications", "--all", "--count", "2")
        assert told.code == 0, told.err
        lines = told.out.splitlines()
        assert f"ann is playing zoxso: watch game {game_id}" in lines[0]
        assert f"(tabletop challenges accept {made.challenge_id})" in lines[1]
        assert (await tabletop(platform, "unfollow", "ann")).code == 0
        assert "you follow nobody" in (await tabletop(platform, "following")).out
        await ann.game("zoxso").Resign(
            common_pb2.ResignRequest(game_id=game_id), metadata=ann.metadata
        )


async def follow_as(session: Session, username: str) -> str:
    """The reason a follow was refused."""
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await follow(session, username)
    return error_info(caught.value)[0]


async def test_your_turn_is_told_when_the_turn_comes_to_a_person(
    redis_url: str, database_url: str
) -> None:
    async with stack(redis_url, database_url) as platform:
        ann, bob = await accounts(platform, "ann", "bob")
        async with Notified(ann) as ann_told, Notified(bob) as bob_told:
            made = await call(
                ann, "ChallengePlayer",
                lobby_pb2.ChallengePlayerRequest(player_id=bob.player_id, game="zoxso"),
            )  # fmt: skip
            game_id = (await answer(bob, made.challenge_id, accept=True)).game_id
            seats = [s.player_id for s in (await status(ann, game_id)).seats]
            told = {ann.player_id: ann_told, bob.player_id: bob_told}
            by_id = {ann.player_id: ann, bob.player_id: bob}
            seated = {seat: by_id[player] for seat, player in enumerate(seats)}
            first = seats[(await status(ann, game_id)).to_act[0]]
            await play_moves(seated, "zoxso", game_id, each=1)
            (second,) = [p for p in seats if p != first]
            turn = await told[second].told(N.NOTIFICATION_KIND_YOUR_TURN, game_id=game_id)
            assert (turn.game, turn.game_id) == ("zoxso", game_id)
            # the first mover's turn came back with the second's move, not with their own
            mine = await told[first].told(N.NOTIFICATION_KIND_YOUR_TURN, game_id=game_id)
            assert len([n for n in told[first].seen if n.kind == mine.kind]) == 1
            assert len([n for n in told[second].seen if n.kind == mine.kind]) == 1
            await ann.game("zoxso").Resign(
                common_pb2.ResignRequest(game_id=game_id), metadata=ann.metadata
            )


async def test_notification_streams_count_among_the_players_streams(
    redis_url: str, database_url: str
) -> None:
    async with Platform(
        redis_url, database_url=database_url, gateway_settings={"streams_per_player": 2}
    ) as platform:
        (ann,) = await accounts(platform, "ann")
        held = [Notified(ann) for _ in range(2)]
        redis = Redis.from_url(redis_url)
        try:
            await eventually(
                lambda: _equal(redis.zcard(keys.presence(ann.player_id)), 2), 10, "both open"
            )
        finally:
            await redis.aclose()
        third = ann.lobby.WatchChallenges(lobby_pb2.WatchChallengesRequest(), metadata=ann.metadata)
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            async for _ in third:
                pass
        assert caught.value.code() == EXHAUSTED
        assert error_info(caught.value)[1]["limit"] == "streams"
        for stream in held:
            await stream.close()


async def _equal(check: Any, value: int) -> bool:
    return bool(await check == value)
