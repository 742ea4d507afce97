"""Following players and notifications from the terminal.

tabletop follow USERNAME | unfollow USERNAME
tabletop following                   whom you follow: online or not, the game they play now
tabletop followers [list] | followers refuse | followers allow
tabletop notifications [--all] [--count N]   what concerns you, printed as it comes

Following needs an account (`tabletop register`). While `tabletop notifications` runs (and while
`tabletop play` plays or a command waits for a table: they print notifications too) you are
online to those who follow you.
"""

from __future__ import annotations

import argparse
from typing import Any

from client.notifications import print_notifications
from client.play import CALL_TIMEOUT
from client.runner import once
from client.session import Session
from tabletop.lobby.v1 import lobby_pb2


def describe_followed(player: lobby_pb2.FollowedPlayer) -> str:
    """One line: name, online or not, the game they play (and how to watch it)."""
    line = f"{player.name}  {'online' if player.online else 'offline'}"
    if player.game_id:
        line += f"  playing {player.game} {player.game_id}  (tabletop watch {player.game} "
        line += f"{player.game_id})"
    return line


async def follow(args: argparse.Namespace) -> int:
    """`tabletop follow USERNAME`."""

    async def work(session: Session, lobby: Any) -> None:
        followed = await lobby.FollowPlayer(
            lobby_pb2.FollowPlayerRequest(username=args.username),
            metadata=session.metadata, timeout=CALL_TIMEOUT,
        )  # fmt: skip
        print(f"you follow {describe_followed(followed)}")

    return await once("follow", args, work)


async def unfollow(args: argparse.Namespace) -> int:
    """`tabletop unfollow USERNAME`."""

    async def work(session: Session, lobby: Any) -> None:
        await lobby.UnfollowPlayer(
            lobby_pb2.UnfollowPlayerRequest(username=args.username),
            metadata=session.metadata, timeout=CALL_TIMEOUT,
        )  # fmt: skip
        print(f"you no longer follow {args.username}")

    return await once("unfollow", args, work)


async def following(args: argparse.Namespace) -> int:
    """`tabletop following`."""

    async def work(session: Session, lobby: Any) -> None:
        reply = await lobby.ListFollowing(
            lobby_pb2.ListFollowingRequest(), metadata=session.metadata, timeout=CALL_TIMEOUT
        )
        for player in reply.players:
            print(describe_followed(player))
        if not reply.players:
            print("you follow nobody; `tabletop follow USERNAME` follows a player")

    return await once("following", args, work)


async def followers(args: argparse.Namespace) -> int:
    """`tabletop followers [list|refuse|allow]`."""
    action = args.action or "list"

    async def work(session: Session, lobby: Any) -> None:
        metadata = session.metadata
        if action == "list":
            reply = await lobby.ListFollowers(
                lobby_pb2.ListFollowersRequest(), metadata=metadata, timeout=CALL_TIMEOUT
            )
            for follower in reply.followers:
                print(follower.name)
            if not reply.followers:
                print("nobody follows you")
            return
        who = lobby_pb2.ACCEPT_FROM_NOBODY if action == "refuse" else (
            lobby_pb2.ACCEPT_FROM_EVERYONE
        )  # fmt: skip
        await lobby.SetFollowSetting(
            lobby_pb2.SetFollowSettingRequest(accept_from=who),
            metadata=metadata, timeout=CALL_TIMEOUT,
        )  # fmt: skip
        print(
            "nobody follows you now, nor may from now on"
            if action == "refuse"
            else "anyone may follow you"
        )

    return await once("followers", args, work)


async def notifications(args: argparse.Namespace) -> int:
    """`tabletop notifications`: prints each as it comes (after those kept, with --all), until
    Ctrl-C or `--count` of them; a dropped stream is opened again where it stopped."""

    async def work(session: Session, lobby: Any) -> None:
        await print_notifications(session, "0" if args.all else "", args.count)

    return await once("notifications", args, work)
