"""A player's notifications in the terminal (LobbyService.WatchNotifications): one line each,
with the command that acts on it. `tabletop notifications` prints them; `tabletop play` and the
commands that wait for a table print them as they come too."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
from collections.abc import Callable

import grpc
from rich.console import Console

from client.session import Session
from tabletop.lobby.v1 import lobby_pb2
from wire.errors import error_info

RETRY_SECONDS = 1.0
"""The pause before a dropped notification stream is opened again."""


def _say(line: str) -> None:
    print(line, flush=True)


def describe_notification(notification: lobby_pb2.Notification) -> str:
    """One line: its time (local), what happened, what to do about it."""
    when = datetime.datetime.fromtimestamp(notification.time.ToSeconds()).strftime("%H:%M:%S")
    kind = notification.kind
    hint = ""
    if kind in (
        lobby_pb2.NOTIFICATION_KIND_CHALLENGE_RECEIVED,
        lobby_pb2.NOTIFICATION_KIND_REMATCH_OFFERED,
    ):
        hint = f"  (tabletop challenges accept {notification.challenge_id})"
    elif kind == lobby_pb2.NOTIFICATION_KIND_GAME_STARTED:
        hint = f"  (tabletop watch {notification.game} {notification.game_id})"
    elif kind == lobby_pb2.NOTIFICATION_KIND_YOUR_TURN:
        hint = f"  (tabletop play --game {notification.game_id})"
    return f"{when}  {notification.message}{hint}"


async def print_notifications(
    session: Session,
    after: str,
    count: int = 0,
    say: Callable[[str], None] = _say,
    shown: Callable[[lobby_pb2.Notification], bool] = lambda _: True,
) -> None:
    """Print (`say`) the player's notifications after `after` that are `shown` as they come,
    until `count` of them (0: for ever); a dropped stream is opened again where it stopped."""
    printed = 0
    while True:
        try:
            async for notification in session.lobby.WatchNotifications(
                lobby_pb2.WatchNotificationsRequest(after_id=after), metadata=session.metadata
            ):
                after = notification.notification_id
                if not shown(notification):
                    continue
                say(describe_notification(notification))
                printed += 1
                if printed == count:
                    return
        except grpc.aio.AioRpcError as error:
            passing = error.code() == grpc.StatusCode.UNAVAILABLE
            if not passing and error_info(error)[0] != "TOO_SLOW":
                raise
        await asyncio.sleep(RETRY_SECONDS)


async def told_meanwhile(
    session: Session, console: Console, at: Callable[[], str] = lambda: ""
) -> None:
    """Print the notifications that come while the player plays or waits (a background task),
    but "your turn" in the game they are `at` (its id, once known); a refused stream (as many
    open as the player may hold, say) ends it quietly."""

    def shown(notification: lobby_pb2.Notification) -> bool:
        mine = notification.kind == lobby_pb2.NOTIFICATION_KIND_YOUR_TURN
        return not (mine and notification.game_id == at())

    with contextlib.suppress(grpc.aio.AioRpcError):
        await print_notifications(
            session, "", shown=shown,
            say=lambda line: console.print(line, markup=False, highlight=False),
        )  # fmt: skip
