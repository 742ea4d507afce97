"""`tabletop register`, `login`, `logout`, `whoami`: an account on a gateway, kept as the
client's identity there (client/identity.py).

The password is asked at the terminal without echo; from a pipe it is the first line of the
standard input (`printf '%s\n' "$PASSWORD" | tabletop login alice`), never an argument (a
command line is visible to everyone on the machine).
"""

from __future__ import annotations

import argparse
import contextlib
import getpass
import sys
import time
from collections.abc import Awaitable, Callable

import grpc

from client.identity import (
    Account,
    forget_identity,
    identity_of,
    load_identity,
    save_identity,
)
from client.session import Session
from tabletop.lobby.v1 import lobby_pb2
from wire.errors import error_info


def read_password(prompt: str = "password: ") -> str:
    if sys.stdin.isatty():
        return getpass.getpass(prompt)
    return sys.stdin.readline().rstrip("\n")


def _failed(command: str, error: grpc.aio.AioRpcError) -> int:
    reason, _ = error_info(error)
    print(f"tabletop {command}: {reason or error.code().name}: {error.details()}", file=sys.stderr)
    return 1


async def register(args: argparse.Namespace) -> int:
    """A new account; the guest this client plays as here (if any) claims it: its games stay
    its own."""
    guest = load_identity(args.gateway)
    claims = guest is not None and not guest.account and guest.valid()

    async def call(session: Session) -> lobby_pb2.LoginResponse:
        if claims and guest is not None:
            session.token = guest.token
        return await session.register(args.username, read_password())

    kept = " (your games as a guest are yours)" if claims else ""
    return await _log_in(args, "register", call, "registered and logged in as {name}" + kept)


async def login(args: argparse.Namespace) -> int:
    async def call(session: Session) -> lobby_pb2.LoginResponse:
        return await session.account_login(args.username, read_password())

    return await _log_in(args, "login", call, "logged in as {name}")


async def _log_in(
    args: argparse.Namespace,
    command: str,
    call: Callable[[Session], Awaitable[lobby_pb2.LoginResponse]],
    said: str,
) -> int:
    """A login (`call`) kept as the client's identity on the gateway; `said` once it is."""
    session = Session(args.gateway, tls=args.tls)
    try:
        reply = await call(session)
    except grpc.aio.AioRpcError as error:
        return _failed(command, error)
    finally:
        await session.close()
    with contextlib.suppress(OSError):
        save_identity(args.gateway, identity_of(reply, reply.name))
    print(said.format(name=reply.name))
    return 0


async def logout(args: argparse.Namespace) -> int:
    """End this session (or every session of the account) and forget it here."""
    saved = load_identity(args.gateway)
    if saved is None or not saved.account:
        print(f"not logged in to an account on {args.gateway}")
        return 0
    session = Session(args.gateway, tls=args.tls)
    account = Account(session, None, saved.name)
    try:
        account.use_saved()
        await account.sign_in()
        ended = await account.call(lambda: session.logout(args.everywhere))
    except grpc.aio.AioRpcError as error:
        return _failed("logout", error)
    finally:
        await session.close()
        with contextlib.suppress(OSError):
            forget_identity(args.gateway)
    print(f"logged out ({ended} session{'s' if ended != 1 else ''} ended)")
    return 0


async def whoami(args: argparse.Namespace) -> int:
    saved = load_identity(args.gateway)
    if saved is None:
        print(f"nobody yet on {args.gateway}: `tabletop play` plays as a guest")
        return 0
    session = Session(args.gateway, tls=args.tls)
    account = Account(session, None, saved.name)
    try:
        account.use_saved()
        await account.sign_in()
        me = await account.call(
            lambda: session.auth.WhoAmI(lobby_pb2.WhoAmIRequest(), metadata=session.metadata)
        )
    except grpc.aio.AioRpcError as error:
        return _failed("whoami", error)
    finally:
        await session.close()
    left = max(0, int(me.expires_at.seconds - time.time()))
    print(f"{me.name} ({me.kind}, player id {me.player_id}) on {args.gateway}")
    if me.kind == "guest":
        print(f"a guest for {left // 3600} h more; `tabletop register NAME` keeps you for good")
    return 0
