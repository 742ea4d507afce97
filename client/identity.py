"""Who the player is on each gateway, kept between runs so that games can be rejoined.

A guest is their token: `AuthService.Login(name)` makes a new player (a new id) with a token
valid for a day. The client keeps the token, the player id and the name per gateway address in
`<state dir>/identity.json` (readable by its owner only), reuses them while they are valid, and
logs in anew only when there is none, when the saved one has expired or is refused
(UNAUTHENTICATED), or when `--name` asks for another name.

An account (`tabletop register`, `tabletop login`) is kept the same way, with its refresh
token: a short-lived access token is renewed with it (each refresh token works once: the new
one is saved at once), and when the session has ended the client says so instead of playing
on as a new guest.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TypeVar

import grpc

from client.session import Session
from runtime.config import state_dir

FILE_NAME = "identity.json"
MARGIN_SECONDS = 60.0
"""A token this close to its expiry is not reused: a game started with it would soon fail."""

REFRESH_SECONDS = 12 * 3600.0
"""A saved token with less than this left is refreshed when the client starts."""

ACCOUNT_MARGIN_SECONDS = 120.0
"""An account's access token with less than this left is renewed (it lives 15 minutes)."""

T = TypeVar("T")


@dataclass(frozen=True)
class Identity:
    token: str
    player_id: str
    name: str
    expires_at: float
    """Seconds since the epoch; 0 when unknown."""
    refresh_token: str = ""
    """An account's (empty for a guest)."""

    @property
    def account(self) -> bool:
        return bool(self.refresh_token)

    def valid(self, now: float | None = None) -> bool:
        if not self.token or not self.player_id:
            return False
        if not self.expires_at:
            return True
        return (time.time() if now is None else now) < self.expires_at - MARGIN_SECONDS


def identity_file() -> Path:
    return state_dir() / FILE_NAME


def _read_all(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    gateways = data.get("gateways") if isinstance(data, dict) else None
    return gateways if isinstance(gateways, dict) else {}


def load_identity(gateway: str) -> Identity | None:
    """The identity saved for `gateway`, or None (none saved, or the file is unreadable)."""
    entry = _read_all(identity_file()).get(gateway)
    if not isinstance(entry, dict):
        return None
    try:
        return Identity(
            token=str(entry["token"]),
            player_id=str(entry["player_id"]),
            name=str(entry["name"]),
            expires_at=float(entry.get("expires_at", 0)),
            refresh_token=str(entry.get("refresh_token", "")),
        )
    except (KeyError, TypeError, ValueError):
        return None


def forget_identity(gateway: str) -> None:
    """No identity kept for `gateway` any more."""
    path = identity_file()
    gateways = _read_all(path)
    if gateways.pop(gateway, None) is not None:
        _write_all(path, gateways)


def save_identity(gateway: str, identity: Identity) -> Path:
    """Keep `identity` for `gateway` (other gateways' entries stay). The file is written whole,
    then renamed over the old one, and is readable and writable by its owner only (0600)."""
    path = identity_file()
    gateways = _read_all(path)
    gateways[gateway] = asdict(identity)
    _write_all(path, gateways)
    return path


def _write_all(path: Path, gateways: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    text = json.dumps({"gateways": gateways}, indent=2, sort_keys=True) + "\n"
    fd, temporary = tempfile.mkstemp(prefix=".identity-", dir=path.parent)
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def identity_of(reply: Any, name: str) -> Identity:
    """What a login or a refresh answered (a LoginResponse), to keep."""
    expires = float(reply.expires_at.seconds) if reply.HasField("expires_at") else 0.0
    return Identity(reply.token, reply.player_id, name, expires, reply.refresh_token)


class SessionEnded(Exception):
    """The account's session has ended (logged out, or its refresh token was used elsewhere):
    log in again with `tabletop login`."""


def is_unauthenticated(error: BaseException) -> bool:
    return (
        isinstance(error, grpc.aio.AioRpcError) and error.code() == grpc.StatusCode.UNAUTHENTICATED
    )


class Account:
    """A session's identity on its gateway: the saved one when it can be, else a new login.

    `name` is the name asked for on the command line (None: keep the saved one, or log in as
    `default_name` when there is none)."""

    def __init__(self, session: Session, name: str | None, default_name: str) -> None:
        self.session = session
        self.gateway = session.target
        self.asked = name
        self.default_name = default_name
        self.name = ""
        self.renewed = False
        """True when this run logged in anew (a new player: earlier games are not theirs)."""
        self.expires_at = 0.0

    def saved(self) -> Identity | None:
        saved = load_identity(self.gateway)
        if saved is None or not (saved.valid() or saved.account):
            return None
        if self.asked is not None and self.asked != saved.name and not saved.account:
            return None
        return saved

    def use_saved(self) -> bool:
        """Take the saved identity if it is valid and has the asked name (an account's, whatever
        the name asked); no call is made."""
        saved = self.saved()
        if saved is None:
            return False
        self.session.token = saved.token
        self.session.player_id = saved.player_id
        self.session.refresh_token = saved.refresh_token
        self.name = saved.name
        self.expires_at = saved.expires_at
        return True

    async def keep_fresh(self) -> None:
        """For an account: renew the access token shortly before it expires, for as long as
        this runs (a game outlasts a 15-minute token). A guest's token lasts the day: nothing
        to do."""
        while self.session.refresh_token:
            left = self.expires_at - time.time() - ACCOUNT_MARGIN_SECONDS
            await asyncio.sleep(max(5.0, left))
            if self.expires_at - time.time() < ACCOUNT_MARGIN_SECONDS:
                await self.login()

    async def sign_in(self) -> None:
        """The saved identity, or a new login (saved for next time). A saved token past half
        its life is refreshed (the same player, a new expiry), so a player who comes back
        daily stays the same player and keeps their games. An account's access token is
        renewed when it has little left."""
        if not self.use_saved():
            await self.login()
            return
        saved = self.saved()
        if saved is not None and saved.account:
            if not saved.valid(time.time() + ACCOUNT_MARGIN_SECONDS):
                await self.login()
            return
        if (
            saved is not None
            and saved.expires_at
            and saved.expires_at - time.time() < REFRESH_SECONDS
        ):
            with contextlib.suppress(grpc.aio.AioRpcError):  # refused: the token still works
                reply = await self.session.refresh()
                expires = float(reply.expires_at.seconds) if reply.HasField("expires_at") else 0.0
                with contextlib.suppress(OSError):
                    save_identity(
                        self.gateway,
                        Identity(reply.token, saved.player_id, saved.name, expires_at=expires),
                    )

    async def login(self) -> None:
        """A new guest login; for an account, a refresh of its session (SessionEnded when it
        has ended: the player logs in again, they do not become a new guest unawares)."""
        if self.session.refresh_token:
            try:
                reply = await self.session.refresh()
            except grpc.aio.AioRpcError as error:
                if not is_unauthenticated(error):
                    raise
                with contextlib.suppress(OSError):
                    forget_identity(self.gateway)
                raise SessionEnded(
                    f"your session as {self.name} has ended ({error.details()}): log in again "
                    "with `tabletop login`"
                ) from None
            renewed = identity_of(reply, self.name)
            self.expires_at = renewed.expires_at
            with contextlib.suppress(OSError):
                save_identity(self.gateway, renewed)
            return
        name = self.asked or self.name or self.default_name
        reply = await self.session.login(name)
        expires = float(reply.expires_at.seconds) if reply.HasField("expires_at") else 0.0
        self.name = name
        self.renewed = True
        with contextlib.suppress(OSError):  # a read-only state dir: this run still plays
            save_identity(
                self.gateway, Identity(reply.token, reply.player_id, name, expires_at=expires)
            )

    async def call(self, make: Callable[[], Awaitable[T]]) -> T:
        """`make()` (a call with the session's token); when the token is refused, log in anew
        and try once more."""
        try:
            return await make()
        except grpc.aio.AioRpcError as error:
            if not is_unauthenticated(error):
                raise
        await self.login()
        return await make()
