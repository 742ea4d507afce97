"""Playing with friends on the real stack (gateway, lobby, game services, Redis, PostgreSQL for
the accounts): challenges accepted, declined, cancelled, expired and refused; invite codes
joined, reused and expired; open tables whose last seat two players take at once; rematches;
the bounds on what a player may keep waiting; and the terminal client's commands."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from client.session import Session
from services.lobby.friends import FriendsSettings
from tabletop.common.v1 import common_pb2
from tabletop.lobby.v1 import lobby_pb2
from tabletop.solo.v1 import solo_pb2
from tests.integration.test_accounts import PASSWORD
from tests.integration.test_client import state_dir, tabletop
from tests.platform import Platform, assert_refused, logged_in
from tests.timing import eventually
from wire.errors import error_info

pytestmark = pytest.mark.integration

__all__ = ["state_dir"]  # the fixture of tests/integration/test_client.py

OPEN, STARTED, DECLINED, CANCELLED, EXPIRED = (
    lobby_pb2.CHALLENGE_STATE_OPEN,
    lobby_pb2.CHALLENGE_STATE_STARTED,
    lobby_pb2.CHALLENGE_STATE_DECLINED,
    lobby_pb2.CHALLENGE_STATE_CANCELLED,
    lobby_pb2.CHALLENGE_STATE_EXPIRED,
)
FAILED, NOT_FOUND, EXHAUSTED = (
    grpc.StatusCode.FAILED_PRECONDITION,
    grpc.StatusCode.NOT_FOUND,
    grpc.StatusCode.RESOURCE_EXHAUSTED,
)
QUICK = FriendsSettings(sweep_seconds=0.1)


@contextlib.asynccontextmanager
async def stack(
    redis_url: str, database_url: str, friends: FriendsSettings = QUICK, **settings: Any
) -> AsyncIterator[Platform]:
    async with Platform(
        redis_url,
        games=("esoloe", "solo", "zoxso"),
        database_url=database_url,
        gateway_settings={"login_rate_burst": 1000.0},
        friends=friends,
        **settings,
    ) as platform:
        yield platform


async def accounts(platform: Platform, *names: str) -> list[Session]:
    sessions = [Session(platform.target) for _ in names]
    for session, name in zip(sessions, names, strict=True):
        await session.register(name, PASSWORD)
    return sessions


class Watching:
    """Everything a player's WatchChallenges stream says, as it comes."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.seen: list[lobby_pb2.Challenge] = []
        self.task = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for challenge in self.session.lobby.WatchChallenges(
            lobby_pb2.WatchChallengesRequest(), metadata=self.session.metadata
        ):
            self.seen.append(challenge)

    async def told(self, challenge_id: str, state: Any) -> lobby_pb2.Challenge:
        def found() -> lobby_pb2.Challenge | None:
            if self.task.done():
                self.task.result()  # the stream failed: say why
            return next(
                (c for c in self.seen if c.challenge_id == challenge_id and c.state == state), None
            )

        name = lobby_pb2.ChallengeState.Name(state)
        told: lobby_pb2.Challenge = await eventually(found, 10, f"{challenge_id} told {name}")
        return told

    async def __aenter__(self) -> Watching:
        return self

    async def __aexit__(self, *_: object) -> None:
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.task


async def call(session: Session, method: str, request: Any) -> Any:
    return await getattr(session.lobby, method)(request, metadata=session.metadata)


async def challenge(session: Session, **fields: Any) -> lobby_pb2.Challenge:
    found: lobby_pb2.Challenge = await call(
        session, "ChallengePlayer", lobby_pb2.ChallengePlayerRequest(game="esoloe", **fields)
    )
    return found


async def answer(session: Session, challenge_id: str, accept: bool) -> lobby_pb2.Challenge:
    found: lobby_pb2.Challenge = await call(
        session,
        "AnswerChallenge",
        lobby_pb2.AnswerChallengeRequest(challenge_id=challenge_id, accept=accept),
    )
    return found


async def status(session: Session, game_id: str) -> common_pb2.GameStatus:
    view = await session.game(game_id.split("-")[0]).GetView(
        common_pb2.GetViewRequest(game_id=game_id, public=True), metadata=session.metadata
    )
    found: common_pb2.GameStatus = view.status
    return found


async def test_a_challenge_accepted_makes_the_game_and_a_rematch_turns_the_seats(
    redis_url: str, database_url: str
) -> None:
    async with stack(redis_url, database_url) as platform:
        ann, bob = await accounts(platform, "ann", "bob")
        async with Watching(ann) as ann_sees, Watching(bob) as bob_sees:
            made = await challenge(ann, player_id=bob.player_id, rated=True)
            assert (made.state, made.kind) == (OPEN, lobby_pb2.CHALLENGE_KIND_CHALLENGE)
            assert [(p.player_id, p.joined) for p in made.players] == [
                (ann.player_id, True), (bob.player_id, False),
            ]  # fmt: skip
            told = await bob_sees.told(made.challenge_id, OPEN)  # at once, on bob's stream
            assert told.players[0].name == "ann"
            started = await answer(bob, made.challenge_id, accept=True)
            assert started.state == STARTED
            assert started.HasField("seat")
            ann_told = await ann_sees.told(made.challenge_id, STARTED)
            assert ann_told.game_id == started.game_id
            assert {ann_told.seat, started.seat} == {0, 1}
            game = await status(ann, started.game_id)
            assert game.rated
            assert game.seats[ann_told.seat].player_id == ann.player_id
            # answered once: again is refused
            await assert_refused(answer(bob, made.challenge_id, accept=True), FAILED, "TABLE_FULL")
            # a rematch: not before the game is over; then each player one seat on
            await assert_refused(
                call(ann, "OfferRematch", lobby_pb2.OfferRematchRequest(game_id=game.game_id)),
                grpc.StatusCode.INVALID_ARGUMENT, "INVALID_ARGUMENT", "not over",
            )  # fmt: skip
            await ann.game("esoloe").Resign(
                common_pb2.ResignRequest(game_id=game.game_id), metadata=ann.metadata
            )
            again = await call(
                bob, "OfferRematch", lobby_pb2.OfferRematchRequest(game_id=game.game_id)
            )
            assert (again.kind, again.rematch_of, again.rated) == (
                lobby_pb2.CHALLENGE_KIND_REMATCH, game.game_id, True,
            )  # fmt: skip
            await ann_sees.told(again.challenge_id, OPEN)
            restarted = await answer(ann, again.challenge_id, accept=True)
            assert restarted.state == STARTED
            rematch = await status(ann, restarted.game_id)
            # seat 1 of the first game is seat 0 of the rematch
            assert [s.player_id for s in rematch.seats] == [
                game.seats[1].player_id, game.seats[0].player_id,
            ]  # fmt: skip
            assert (await bob_sees.told(again.challenge_id, STARTED)).game_id == rematch.game_id
            listed = await call(bob, "ListChallenges", lobby_pb2.ListChallengesRequest())
            assert [c.challenge_id for c in listed.challenges] == [
                again.challenge_id, made.challenge_id,
            ]  # fmt: skip


async def test_declined_cancelled_refused_and_by_username(
    redis_url: str, database_url: str
) -> None:
    async with stack(redis_url, database_url) as platform:
        ann, bob = await accounts(platform, "ann", "bob")
        (guest,) = await logged_in(platform, "gus")
        async with Watching(ann) as ann_sees:
            made = await challenge(ann, username="BOB")  # by username, whatever its case
            assert made.players[1].player_id == bob.player_id
            declined = await answer(bob, made.challenge_id, accept=False)
            assert declined.state == DECLINED
            await ann_sees.told(made.challenge_id, DECLINED)
            await assert_refused(
                answer(bob, made.challenge_id, accept=True), FAILED, "CHALLENGE_CLOSED", "declined"
            )
        cancelled = await challenge(ann, player_id=bob.player_id)
        await assert_refused(  # only its maker cancels it
            call(bob, "CancelChallenge", lobby_pb2.CancelChallengeRequest(
                challenge_id=cancelled.challenge_id)),
            NOT_FOUND, "CHALLENGE_NOT_FOUND",
        )  # fmt: skip
        gone = await call(
            ann, "CancelChallenge",
            lobby_pb2.CancelChallengeRequest(challenge_id=cancelled.challenge_id),
        )  # fmt: skip
        assert gone.state == CANCELLED
        # bob takes no challenges
        nobody = lobby_pb2.SetChallengeSettingRequest(accept_from=lobby_pb2.ACCEPT_FROM_NOBODY)
        assert (await call(bob, "SetChallengeSetting", nobody)).accept_from == (
            lobby_pb2.ACCEPT_FROM_NOBODY
        )
        await assert_refused(
            challenge(ann, player_id=bob.player_id), FAILED, "CHALLENGES_REFUSED", "no challenges"
        )
        await assert_refused(challenge(ann, username="nobody-here"), NOT_FOUND, "PLAYER_NOT_FOUND")
        # a guest may not challenge, but may be challenged (casual games only)
        await assert_refused(
            challenge(guest, player_id=ann.player_id),
            grpc.StatusCode.PERMISSION_DENIED, "NOT_PERMITTED", "register",
        )  # fmt: skip
        rated = await challenge(ann, player_id=guest.player_id, rated=True)
        await assert_refused(
            answer(guest, rated.challenge_id, accept=True),
            grpc.StatusCode.INVALID_ARGUMENT, "INVALID_ARGUMENT", "casual",
        )  # fmt: skip
        # a challenge is a game of two
        await assert_refused(
            call(ann, "ChallengePlayer", lobby_pb2.ChallengePlayerRequest(
                game="solo", player_id=guest.player_id,
                options=lobby_pb2.GameOptions(solo=solo_pb2.Options(players=3)))),
            grpc.StatusCode.INVALID_ARGUMENT, "INVALID_ARGUMENT", "3 seats",
        )  # fmt: skip


async def test_challenges_and_invites_expire(redis_url: str, database_url: str) -> None:
    short = FriendsSettings(sweep_seconds=0.1, challenge_seconds=0.5, invite_seconds=0.5)
    async with stack(redis_url, database_url, short) as platform:
        ann, bob = await accounts(platform, "ann", "bob")
        async with Watching(ann) as ann_sees, Watching(bob) as bob_sees:
            made = await challenge(ann, player_id=bob.player_id)
            await bob_sees.told(made.challenge_id, EXPIRED)
            await ann_sees.told(made.challenge_id, EXPIRED)
            await assert_refused(
                answer(bob, made.challenge_id, accept=True), FAILED, "CHALLENGE_CLOSED", "expired"
            )
            invite = await call(ann, "CreateInvite", lobby_pb2.CreateInviteRequest(game="esoloe"))
            await ann_sees.told(invite.challenge_id, EXPIRED)
            refused = await assert_refused(
                call(bob, "JoinInvite", lobby_pb2.JoinInviteRequest(code=invite.code)),
                FAILED, "CHALLENGE_CLOSED", "expired",
            )  # fmt: skip
            assert refused


async def test_an_invite_code_seats_whoever_holds_it_once(
    redis_url: str, database_url: str
) -> None:
    async with stack(redis_url, database_url) as platform:
        host, second, third, late = await logged_in(platform, "host", "second", "third", "late")
        async with Watching(host) as host_sees, Watching(third) as third_sees:
            invite = await call(
                host, "CreateInvite", lobby_pb2.CreateInviteRequest(game="solo", seats=3)
            )
            assert re.fullmatch(r"[A-Z2-9]{10}", invite.code)
            assert invite.seats == 3
            joined = await call(
                second, "JoinInvite", lobby_pb2.JoinInviteRequest(code=invite.code.lower())
            )
            assert joined.state == OPEN
            assert joined.code == ""  # the code is its maker's to show
            started = await call(third, "JoinInvite", lobby_pb2.JoinInviteRequest(code=invite.code))
            assert started.state == STARTED
            told = await host_sees.told(invite.challenge_id, STARTED)
            assert told.game_id == started.game_id
            assert (await third_sees.told(invite.challenge_id, STARTED)).seat == started.seat
            game = await status(host, started.game_id)
            assert sorted(s.player_id for s in game.seats) == sorted(
                s.player_id for s in (host, second, third)
            )
            await assert_refused(
                call(late, "JoinInvite", lobby_pb2.JoinInviteRequest(code=invite.code)),
                FAILED, "TABLE_FULL",
            )  # fmt: skip
            await assert_refused(
                call(late, "JoinInvite", lobby_pb2.JoinInviteRequest(code="NOSUCHCODE")),
                NOT_FOUND, "CHALLENGE_NOT_FOUND",
            )  # fmt: skip


async def test_two_players_taking_the_last_seat_at_once_one_gets_it(
    redis_url: str, database_url: str
) -> None:
    async with stack(redis_url, database_url) as platform:
        host, *joiners = await logged_in(platform, "host", "p1", "p2", "p3", "p4")
        for first, second in (joiners[:2], joiners[2:]):
            table = await call(host, "OpenTable", lobby_pb2.OpenTableRequest(game="esoloe"))
            listed = await call(first, "ListOpenTables", lobby_pb2.ListOpenTablesRequest())
            assert table.challenge_id in [t.challenge_id for t in listed.tables]
            request = lobby_pb2.JoinTableRequest(challenge_id=table.challenge_id)
            results = await asyncio.gather(
                call(first, "JoinTable", request),
                call(second, "JoinTable", request),
                return_exceptions=True,
            )
            won = [r for r in results if isinstance(r, lobby_pb2.Challenge)]
            lost = [r for r in results if isinstance(r, grpc.aio.AioRpcError)]
            assert len(won) == len(lost) == 1, results
            assert won[0].state == STARTED
            assert (lost[0].code(), error_info(lost[0])[0]) == (FAILED, "TABLE_FULL")
            listed = await call(first, "ListOpenTables", lobby_pb2.ListOpenTablesRequest())
            assert table.challenge_id not in [t.challenge_id for t in listed.tables]
        await assert_refused(  # an invite is joined by its code only
            call(joiners[0], "JoinTable", lobby_pb2.JoinTableRequest(challenge_id=(await call(
                host, "CreateInvite", lobby_pb2.CreateInviteRequest(game="esoloe"))).challenge_id)),
            NOT_FOUND, "CHALLENGE_NOT_FOUND",
        )  # fmt: skip


async def test_what_a_player_keeps_waiting_is_bounded(redis_url: str, database_url: str) -> None:
    bounds = FriendsSettings(
        sweep_seconds=0.1, challenges=1, invites=2, open_tables=1, guest_invites=1
    )
    async with stack(redis_url, database_url, bounds) as platform:
        ann, bob, cat = await accounts(platform, "ann", "bob", "cat")
        (guest,) = await logged_in(platform, "gus")
        first = await challenge(ann, player_id=bob.player_id)
        await assert_refused(challenge(ann, player_id=cat.player_id), EXHAUSTED, "LIMIT_REACHED")
        await answer(bob, first.challenge_id, accept=False)  # an answer frees the place
        await challenge(ann, player_id=cat.player_id)
        invite = lobby_pb2.CreateInviteRequest(game="esoloe")
        for _ in range(2):
            await call(ann, "CreateInvite", invite)
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await call(ann, "CreateInvite", invite)
        assert error_info(caught.value) == ("LIMIT_REACHED", {"limit": "invites", "max": "2"})
        await call(guest, "CreateInvite", invite)  # a guest's bound is its own
        await assert_refused(call(guest, "CreateInvite", invite), EXHAUSTED, "LIMIT_REACHED", "1")
        table = lobby_pb2.OpenTableRequest(game="esoloe")
        opened = await call(ann, "OpenTable", table)
        await assert_refused(call(ann, "OpenTable", table), EXHAUSTED, "LIMIT_REACHED")
        await call(ann, "CancelChallenge", lobby_pb2.CancelChallengeRequest(
            challenge_id=opened.challenge_id))  # fmt: skip
        await call(ann, "OpenTable", table)


async def waiting_for(session: Session, kind: int) -> lobby_pb2.Challenge:
    """The session's player's waiting challenge (or table) of a kind, once there is one."""

    async def found() -> lobby_pb2.Challenge | None:
        reply = await call(session, "ListChallenges", lobby_pb2.ListChallengesRequest())
        return next((c for c in reply.challenges if c.state == OPEN and c.kind == kind), None)

    return await eventually(found, 30, "a waiting challenge")


async def test_the_terminal_client_challenges_invites_and_joins(
    redis_url: str, database_url: str, tmp_path: Path
) -> None:
    async with stack(redis_url, database_url) as platform:
        ann, bob = await accounts(platform, "ann", "bob")
        await tabletop(platform, "login", "bob", script=PASSWORD + "\n")
        games_of_ann: list[str] = []

        async def seated(run: Any) -> None:
            assert run.code == 0, run.err
            games_of_ann.append(run.game_id)

        # bob challenges ann by her username; she accepts; he sits at the game
        challenging = asyncio.create_task(
            tabletop(platform, "challenge", "ann", "esoloe", script="quit\n")
        )
        made = await waiting_for(ann, lobby_pb2.CHALLENGE_KIND_CHALLENGE)
        listed = await tabletop(platform, "challenges")
        assert f"{made.challenge_id}  challenge  esoloe  to ann  1/2 seated  open" in listed.out
        await answer(ann, made.challenge_id, accept=True)
        await seated(await challenging)
        # ann challenges bob; he accepts from the terminal
        made = await challenge(ann, player_id=bob.player_id)
        await seated(await tabletop(platform, "challenges", "accept", made.challenge_id,
                                    script="quit\n"))  # fmt: skip
        # bob's private table: its code, joined by ann
        inviting = asyncio.create_task(tabletop(platform, "invite", "esoloe", script="quit\n"))
        invite = await waiting_for(bob, lobby_pb2.CHALLENGE_KIND_INVITE)
        await call(ann, "JoinInvite", lobby_pb2.JoinInviteRequest(code=invite.code))
        run = await inviting
        assert f"invite code {invite.code}" in run.out
        await seated(run)
        # ann's invite and open table, joined by bob from the terminal
        invite = await call(ann, "CreateInvite", lobby_pb2.CreateInviteRequest(game="esoloe"))
        await seated(await tabletop(platform, "join", invite.code, script="quit\n"))
        table = await call(ann, "OpenTable", lobby_pb2.OpenTableRequest(game="zoxso"))
        shown = await tabletop(platform, "tables", "zoxso")
        assert f"{table.challenge_id}  open table  zoxso  by ann  1/2 seated  open" in shown.out
        await seated(await tabletop(platform, "tables", "join", table.challenge_id,
                                    script="quit\n"))  # fmt: skip
        refused = await tabletop(platform, "join", invite.code)
        assert refused.code == 1
        assert "TABLE_FULL" in refused.err
        for game_id in games_of_ann:
            await ann.game(game_id.split("-")[0]).Resign(
                common_pb2.ResignRequest(game_id=game_id), metadata=ann.metadata
            )
