"""Running a `tabletop` command that calls the platform: it signs in (`as_saved`: as the login
saved for the gateway; `once`: as that or a new guest), does its work, and says what went wrong
as `tabletop COMMAND: ...` on the standard error, with the exit status (`failed`)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import grpc

from client.identity import Account, SessionEnded, load_identity
from client.session import Session
from wire.errors import error_info

T = TypeVar("T")


class UsageError(Exception):
    """A command-line request that cannot make a game (the message says what is allowed)."""


FAILURES = (UsageError, SessionEnded, grpc.aio.AioRpcError)
"""What ends a command with a message rather than a traceback (`failed`)."""


def failed(command: str, error: BaseException) -> int:
    """Say what went wrong as `tabletop COMMAND: ...` on the standard error; the exit status:
    2 for a request that cannot be made, 1 for a refusal (the server's reason and message) or
    a lost connection."""
    if isinstance(error, grpc.aio.AioRpcError):
        reason, _ = error_info(error)
        print(
            f"tabletop {command}: {reason or error.code().name}: {error.details()}",
            file=sys.stderr,
        )
        return 1
    print(f"tabletop {command}: {error}", file=sys.stderr)
    return 2 if isinstance(error, UsageError) else 1


async def signed_in(
    command: str,
    session: Session,
    account: Account,
    work: Callable[[], Awaitable[T]],
    *,
    saved: bool,
    failures: tuple[type[BaseException], ...],
) -> T | int:
    """`work` as `account`, signed in first (`saved`: as the login saved for the gateway); one of
    `failures` is said (`failed`) and its exit status returned. The session is closed after."""
    try:
        if saved:
            account.use_saved()
        await account.sign_in()
        return await account.call(work)
    except failures as error:
        return failed(command, error)
    finally:
        await session.close()


async def as_saved(
    args: argparse.Namespace, command: str, call: Callable[[Session], Awaitable[T]]
) -> T | int:
    """`call` as the identity saved for the gateway; an exit status when it could not be."""
    saved = load_identity(args.gateway)
    if saved is None:
        print(f"nobody yet on {args.gateway}: `tabletop play` plays as a guest")
        return 0
    session = Session(args.gateway, tls=args.tls)
    account = Account(session, None, saved.name)
    return await signed_in(
        command, session, account, lambda: call(session),
        saved=True, failures=(grpc.aio.AioRpcError,),
    )  # fmt: skip


async def once(
    command: str, args: argparse.Namespace, work: Callable[[Session, Any], Awaitable[None]]
) -> int:
    """Sign in (the saved login, else a new guest) and do one thing; its exit status."""
    session = Session(args.gateway, tls=args.tls)
    account = Account(session, args.name, args.default_name)
    done = await signed_in(
        command, session, account, lambda: work(session, session.lobby),
        saved=False, failures=(SessionEnded, grpc.aio.AioRpcError),
    )  # fmt: skip
    return done if isinstance(done, int) else 0


def asking(rpc: str, request: Any) -> Callable[[Session], Awaitable[Any]]:
    """A call of the lobby's `rpc` with `request`, as the session's player (for `as_saved`)."""
    return lambda session: getattr(session.lobby, rpc)(request, metadata=session.metadata)
