"""Playing with friends from the terminal: challenges, invite codes, open tables, rematches.

tabletop challenge PLAYER GAME [--rated] [--options JSON]   waits for the answer, then plays
tabletop challenges [list] | accept ID | decline ID | cancel ID | refuse | allow
tabletop invite GAME [--seats N]     prints the code, waits for the table to fill, then plays
tabletop join CODE                   takes a seat at a private table, then plays
tabletop tables [GAME] | tables join ID | tables open GAME [--seats N]
tabletop rematch GAME_ID             the same game again with its players, each one seat on

A command that makes or joins a table waits for its game (WatchChallenges says when it is made),
then sits at it as `tabletop play` does (client.play.run_table); Ctrl-C while waiting withdraws
what the player made.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from rich.console import Console

from client.accounts import player_fields
from client.identity import Account
from client.play import CALL_TIMEOUT, game_options, run_table
from client.runner import UsageError, once
from client.session import Session
from tabletop.lobby.v1 import lobby_pb2

_KINDS = {
    lobby_pb2.CHALLENGE_KIND_CHALLENGE: "challenge",
    lobby_pb2.CHALLENGE_KIND_INVITE: "invite",
    lobby_pb2.CHALLENGE_KIND_OPEN_TABLE: "open table",
    lobby_pb2.CHALLENGE_KIND_REMATCH: "rematch",
}

Made = Callable[[Session, Any], Awaitable[lobby_pb2.Challenge]]
"""A call that makes or joins a table (with the session and its lobby stub)."""


def state_name(challenge: lobby_pb2.Challenge) -> str:
    return lobby_pb2.ChallengeState.Name(challenge.state).removeprefix("CHALLENGE_STATE_").lower()


def describe(challenge: lobby_pb2.Challenge, me: str) -> str:
    """One line: id, kind, game, who, how many seated, state."""
    host = challenge.players[0]
    seated = sum(p.joined for p in challenge.players)
    if challenge.kind in (lobby_pb2.CHALLENGE_KIND_CHALLENGE, lobby_pb2.CHALLENGE_KIND_REMATCH):
        others = ", ".join(p.name for p in challenge.players[1:])
        who = f"to {others}" if host.player_id == me else f"from {host.name}"
    else:
        who = f"by {host.name}" if host.player_id != me else "yours"
        if challenge.code:
            who += f", code {challenge.code}"
    rated = " rated" if challenge.rated else ""
    game = f" game {challenge.game_id}" if challenge.game_id else ""
    return (
        f"{challenge.challenge_id}  {_KINDS.get(challenge.kind, '?')}  {challenge.game}{rated}  "
        f"{who}  {seated}/{challenge.seats} seated  {state_name(challenge)}{game}"
    )


async def wait_started(
    session: Session, made: lobby_pb2.Challenge, console: Console, *, withdraw: bool
) -> tuple[str, str, int, str]:
    """Wait until the table's game is made (WatchChallenges): its game, id, the player's seat
    and `run_table`'s mode. Ctrl-C withdraws the table when `withdraw` (the player made it)."""
    challenge = made
    seated = sum(p.joined for p in challenge.players)
    try:
        if challenge.state == lobby_pb2.CHALLENGE_STATE_OPEN:
            async for update in session.lobby.WatchChallenges(
                lobby_pb2.WatchChallengesRequest(), metadata=session.metadata
            ):
                if update.challenge_id != made.challenge_id:
                    continue
                challenge = update
                if challenge.state != lobby_pb2.CHALLENGE_STATE_OPEN:
                    break
                now = sum(p.joined for p in challenge.players)
                if now != seated:
                    seated = now
                    console.print(f"{seated} of {challenge.seats} seats taken")
    except asyncio.CancelledError:
        if withdraw:
            await session.lobby.CancelChallenge(
                lobby_pb2.CancelChallengeRequest(challenge_id=made.challenge_id),
                metadata=session.metadata,
                timeout=CALL_TIMEOUT,
            )
            console.print("you stopped waiting; it is withdrawn")
        raise
    if challenge.state != lobby_pb2.CHALLENGE_STATE_STARTED:
        raise UsageError(f"no game: it was {state_name(challenge)}")
    return challenge.game, challenge.game_id, challenge.seat, "new"


def _seating(
    args: argparse.Namespace, make: Made, say: Callable[[lobby_pb2.Challenge], str]
) -> Callable[[Session, Account, Console], Awaitable[tuple[str, str, int, str]]]:
    """What `run_table` seats the player with: `make` the table, `say` what waits, wait."""

    async def seating(
        session: Session, account: Account, console: Console
    ) -> tuple[str, str, int, str]:
        made = await account.call(lambda: make(session, session.lobby))
        mine = made.players[0].player_id == session.player_id
        if made.state == lobby_pb2.CHALLENGE_STATE_OPEN:
            console.print(say(made) + ("; Ctrl-C withdraws it" if mine else ""))
        return await wait_started(session, made, console, withdraw=mine)

    return seating


def _options(args: argparse.Namespace) -> lobby_pb2.GameOptions:
    return game_options(args.game, args.options)


async def challenge(args: argparse.Namespace) -> int:
    """`tabletop challenge PLAYER GAME`."""

    async def make(session: Session, lobby: Any) -> lobby_pb2.Challenge:
        request = lobby_pb2.ChallengePlayerRequest(
            game=args.game, options=_options(args), rated=args.rated,
            time_control=args.time_control,
        )  # fmt: skip
        for field, value in player_fields(args.player).items():
            setattr(request, field, value)
        found: lobby_pb2.Challenge = await lobby.ChallengePlayer(
            request, metadata=session.metadata, timeout=CALL_TIMEOUT
        )
        return found

    def say(made: lobby_pb2.Challenge) -> str:
        name = made.players[1].name
        return f"challenge {made.challenge_id} sent to {name}; waiting for an answer"

    return await run_table(args, _seating(args, make, say))


async def invite(args: argparse.Namespace) -> int:
    """`tabletop invite GAME`: a private table; prints its code."""

    async def make(session: Session, lobby: Any) -> lobby_pb2.Challenge:
        found: lobby_pb2.Challenge = await lobby.CreateInvite(
            lobby_pb2.CreateInviteRequest(
                game=args.game, options=_options(args), seats=args.seats or 0, rated=args.rated,
                time_control=args.time_control,
            ),
            metadata=session.metadata, timeout=CALL_TIMEOUT,
        )  # fmt: skip
        return found

    def say(made: lobby_pb2.Challenge) -> str:
        return (
            f"invite code {made.code}: whoever you give it to joins with `tabletop join "
            f"{made.code}`; waiting for {made.seats - 1} more"
        )

    return await run_table(args, _seating(args, make, say))


def _waiting(made: lobby_pb2.Challenge) -> str:
    seated = sum(p.joined for p in made.players)
    return f"you took a seat ({seated} of {made.seats}); waiting for the others"


async def join(args: argparse.Namespace) -> int:
    """`tabletop join CODE`."""

    async def make(session: Session, lobby: Any) -> lobby_pb2.Challenge:
        found: lobby_pb2.Challenge = await lobby.JoinInvite(
            lobby_pb2.JoinInviteRequest(code=args.code), metadata=session.metadata,
            timeout=CALL_TIMEOUT,
        )  # fmt: skip
        return found

    return await run_table(args, _seating(args, make, _waiting))


async def rematch(args: argparse.Namespace) -> int:
    """`tabletop rematch GAME_ID`."""

    async def make(session: Session, lobby: Any) -> lobby_pb2.Challenge:
        found: lobby_pb2.Challenge = await lobby.OfferRematch(
            lobby_pb2.OfferRematchRequest(game_id=args.game_id_of), metadata=session.metadata,
            timeout=CALL_TIMEOUT,
        )  # fmt: skip
        return found

    def say(made: lobby_pb2.Challenge) -> str:
        others = ", ".join(p.name for p in made.players[1:])
        return f"rematch {made.challenge_id} offered to {others}; waiting for an answer"

    return await run_table(args, _seating(args, make, say))


async def challenges(args: argparse.Namespace) -> int:
    """`tabletop challenges [list|accept|decline|cancel ID|refuse|allow]`."""
    action = args.action or "list"
    if action in ("accept", "decline", "cancel") and not args.challenge_id:
        print(f"tabletop challenges {action}: which? give its ID", file=sys.stderr)
        return 2
    if action == "accept":

        async def make(session: Session, lobby: Any) -> lobby_pb2.Challenge:
            found: lobby_pb2.Challenge = await lobby.AnswerChallenge(
                lobby_pb2.AnswerChallengeRequest(challenge_id=args.challenge_id, accept=True),
                metadata=session.metadata, timeout=CALL_TIMEOUT,
            )  # fmt: skip
            return found

        return await run_table(args, _seating(args, make, _waiting))

    async def work(session: Session, lobby: Any) -> None:
        metadata = session.metadata
        if action == "list":
            reply = await lobby.ListChallenges(
                lobby_pb2.ListChallengesRequest(), metadata=metadata, timeout=CALL_TIMEOUT
            )
            for found in reply.challenges:
                print(describe(found, session.player_id))
            if not reply.challenges:
                print("no challenges, invites or tables")
        elif action in ("decline", "cancel"):
            if action == "decline":
                answered = await lobby.AnswerChallenge(
                    lobby_pb2.AnswerChallengeRequest(challenge_id=args.challenge_id),
                    metadata=metadata, timeout=CALL_TIMEOUT,
                )  # fmt: skip
            else:
                answered = await lobby.CancelChallenge(
                    lobby_pb2.CancelChallengeRequest(challenge_id=args.challenge_id),
                    metadata=metadata, timeout=CALL_TIMEOUT,
                )  # fmt: skip
            print(describe(answered, session.player_id))
        else:
            who = lobby_pb2.ACCEPT_FROM_NOBODY if action == "refuse" else (
                lobby_pb2.ACCEPT_FROM_EVERYONE
            )  # fmt: skip
            await lobby.SetChallengeSetting(
                lobby_pb2.SetChallengeSettingRequest(accept_from=who),
                metadata=metadata, timeout=CALL_TIMEOUT,
            )  # fmt: skip
            print("you take no challenges" if action == "refuse" else "anyone may challenge you")

    return await once("challenges", args, work)


async def tables(args: argparse.Namespace) -> int:
    """`tabletop tables [GAME] | tables join ID | tables open GAME`."""
    words = list(args.words)
    if words[:1] == ["join"] and len(words) == 2:

        async def join_table(session: Session, lobby: Any) -> lobby_pb2.Challenge:
            found: lobby_pb2.Challenge = await lobby.JoinTable(
                lobby_pb2.JoinTableRequest(challenge_id=words[1]), metadata=session.metadata,
                timeout=CALL_TIMEOUT,
            )  # fmt: skip
            return found

        return await run_table(args, _seating(args, join_table, _waiting))
    if words[:1] == ["open"] and len(words) == 2:
        args.game = words[1]

        async def open_table(session: Session, lobby: Any) -> lobby_pb2.Challenge:
            found: lobby_pb2.Challenge = await lobby.OpenTable(
                lobby_pb2.OpenTableRequest(
                    game=args.game, options=_options(args), seats=args.seats or 0,
                    rated=args.rated, time_control=args.time_control,
                ),
                metadata=session.metadata, timeout=CALL_TIMEOUT,
            )  # fmt: skip
            return found

        def say(made: lobby_pb2.Challenge) -> str:
            return f"open table {made.challenge_id}: waiting for {made.seats - 1} more"

        return await run_table(args, _seating(args, open_table, say))
    if len(words) > 1 or words[:1] in (["join"], ["open"]):
        print("tabletop tables: [GAME] | join ID | open GAME", file=sys.stderr)
        return 2

    async def listing(session: Session, lobby: Any) -> None:
        reply = await lobby.ListOpenTables(
            lobby_pb2.ListOpenTablesRequest(game=words[0] if words else ""),
            metadata=session.metadata, timeout=CALL_TIMEOUT,
        )  # fmt: skip
        for table in reply.tables:
            print(describe(table, session.player_id))
        if not reply.tables:
            print("no open tables; `tabletop tables open GAME` opens one")

    return await once("tables", args, listing)
