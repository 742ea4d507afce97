"""`tabletop register`, `login`, `logout`, `whoami`, `tokens`: an account on a gateway, kept as
the client's identity there (client/identity.py), and its API tokens (for the account's
programs: a bot, a client of its own).

The password is asked at the terminal without echo; from a pipe it is the first line of the
standard input (`printf '%s\n' "$PASSWORD" | tabletop login alice`), never an argument (a
command line is visible to everyone on the machine).
"""

from __future__ import annotations

import argparse
import contextlib
import getpass
import re
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
from client.runner import as_saved, failed
from client.session import Session
from tabletop.lobby.v1 import lobby_pb2
from wire.players import is_bot


def read_password(prompt: str = "password: ") -> str:
    if sys.stdin.isatty():
        return getpass.getpass(prompt)
    return sys.stdin.readline().rstrip("\n")


PLAYER_ID = re.compile(r"[pab]-[0-9a-f]{6,40}")
"""A player id as the platform makes them; anything else names an account by its username."""


def player_fields(who: str) -> dict[str, str]:
    """The request fields that name the player `who` stands for: a player id (empty or "me":
    you) or an account's username."""
    if not who or who == "me" or PLAYER_ID.fullmatch(who) or is_bot(who):
        return {"player_id": who}
    return {"username": who}


async def register(args: argparse.Namespace) -> int:
    """A new account; the guest this client plays as here (if any) claims it: its games stay
    its own."""
    guest = load_identity(args.gateway)
    claims = guest is not None and not guest.account and guest.valid()

    async def call(session: Session) -> lobby_pb2.LoginResponse:
        if claims and guest is not None:
            session.token = guest.token
        return await session.register(args.username, read_password(), bot=args.bot)

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
        return failed(command, error)
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
        return failed("logout", error)
    finally:
        await session.close()
        with contextlib.suppress(OSError):
            forget_identity(args.gateway)
    print(f"logged out ({ended} session{'s' if ended != 1 else ''} ended)")
    return 0


async def whoami(args: argparse.Namespace) -> int:
    me = await as_saved(
        args,
        "whoami",
        lambda session: session.auth.WhoAmI(lobby_pb2.WhoAmIRequest(), metadata=session.metadata),
    )
    if isinstance(me, int):
        return me
    left = max(0, int(me.expires_at.seconds - time.time()))
    print(f"{me.name} ({me.kind}, player id {me.player_id}) on {args.gateway}")
    if me.kind == "guest":
        print(f"a guest for {left // 3600} h more; `tabletop register NAME` keeps you for good")
    return 0


async def tokens(args: argparse.Namespace) -> int:
    """List, make or revoke the account's API tokens. A new token is printed once: the
    gateway keeps only its digest."""
    if args.action == "create":
        request = lobby_pb2.CreateApiTokenRequest(
            name=args.what, scopes=args.scope, expires_in_days=args.days
        )
        made = await as_saved(
            args,
            "tokens",
            lambda session: session.auth.CreateApiToken(request, metadata=session.metadata),
        )
        if isinstance(made, int):
            return made
        print(
            f"{made.token_id} {made.name!r} ({', '.join(made.scopes) or 'read only'}), "
            f"until {_day(made.expires_at.seconds)}:"
        )
        print(made.token)
        print("keep it secret: it is shown this once (a program exchanges it with TokenLogin)")
        return 0
    if args.action == "revoke":
        revoked = await as_saved(
            args,
            "tokens",
            lambda session: session.auth.RevokeApiToken(
                lobby_pb2.RevokeApiTokenRequest(token_id=args.what), metadata=session.metadata
            ),
        )
        if isinstance(revoked, int):
            return revoked
        print(f"revoked {args.what}")
        return 0
    listed = await as_saved(
        args,
        "tokens",
        lambda session: session.auth.ListApiTokens(
            lobby_pb2.ListApiTokensRequest(), metadata=session.metadata
        ),
    )
    if isinstance(listed, int):
        return listed
    if not listed.tokens:
        print("no API tokens: `tabletop tokens create NAME --scope play` makes one")
    for token in listed.tokens:
        used = _day(token.last_used_at.seconds) if token.HasField("last_used_at") else "never"
        print(
            f"{token.token_id}  {token.name!r}  {', '.join(token.scopes) or 'read only'}  "
            f"until {_day(token.expires_at.seconds)}  last used {used}"
        )
    return 0


def _day(seconds: int) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(seconds))
