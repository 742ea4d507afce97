"""What the lobby calls players, read when it answers: an account's username, asked of the
accounts service (runtime/accounts_client.py; a guest who registered keeps its player id, so
every game it played as a guest is the account's), else the name stored beside the player (an
archived seat's) or the name the lobby last saw them under; "<level> bot" for a bot seat; the
player id when nothing else is known. And the other way: the player id of an account's
username."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Sequence

from psycopg_pool import AsyncConnectionPool

from runtime.accounts_client import AccountsClient
from services.game.players import PlayerStore
from wire.errors import ApiError
from wire.metadata import Caller
from wire.players import PLAYER_ID_PATTERN, display_name, is_bot

log = logging.getLogger("tabletop.lobby")


class Names:
    """Players' names for the lobby's answers, and accounts found by username."""

    def __init__(
        self,
        database: AsyncConnectionPool | None,
        games: PlayerStore | None,
        accounts: AccountsClient | None = None,
    ) -> None:
        self.database = database
        """The lobby's database (the follows); None: none."""
        self.accounts = accounts
        """The accounts service; None: no accounts (names are the ones stored or seen)."""
        self.games = games
        """Where the names the lobby last saw are kept (None: nowhere)."""

    async def current(
        self,
        players: Sequence[str],
        caller: Caller,
        stored: Sequence[str] | None = None,
    ) -> list[str]:
        """What to call each of `players` now: an account's username; else `stored[i]` (the
        name kept beside the player, e.g. an archived seat's) when given, else the name the
        lobby last saw (the caller's own from the call); "<level> bot" for a bot seat; the
        player id when none is known. One call of the accounts service for them all; with it
        away, the names stored or seen."""
        accounts = await self._usernames(players)
        if stored is not None:
            return [
                accounts.get(player) or display_name(player, name)
                for player, name in zip(players, stored, strict=True)
            ]
        rest = [player for player in players if player not in accounts]
        seen: dict[str, str] = {}
        if rest and self.games is not None:
            seen = dict(zip(rest, await self.games.player_names(rest, caller), strict=True))
        return [accounts.get(p) or seen.get(p) or display_name(p, None) for p in players]

    async def _usernames(self, players: Sequence[str]) -> dict[str, str]:
        """The usernames of those of `players` who have an account (one call of the accounts
        service); with the service away, none (the names stored or seen stand)."""
        wanted = sorted({p for p in players if not is_bot(p) and PLAYER_ID_PATTERN.fullmatch(p)})
        if not wanted or self.accounts is None:
            return {}
        try:
            return await self.accounts.usernames(wanted)
        except ApiError as error:
            if error.reason != "UNAVAILABLE":
                raise
            log.warning("accounts unreachable: names as stored", extra={"error": str(error)})
            return {}

    async def account(self, username: str) -> str:
        """The player id of the account named `username` (whatever its case): PLAYER_NOT_FOUND
        when there is none, ACCOUNTS_DISABLED on a platform without accounts. Its username is
        remembered as the name the games made for it show."""
        if self.accounts is None:
            raise ApiError(
                "ACCOUNTS_DISABLED",
                "this platform keeps no accounts: name the player by player id",
            )
        found = None
        if 1 <= len(username) <= 40 and username.isascii() and username.isprintable():
            # (no username has another name: a NUL would not even reach the database)
            try:
                found = await self.accounts.named(username)
            except ApiError as error:
                if error.reason != "UNAVAILABLE":
                    raise
                raise ApiError("UNAVAILABLE", "the accounts cannot be reached; retry") from None
        if found is None:
            raise ApiError("PLAYER_NOT_FOUND", f"no account is named {username[:40]!r}")
        player, name = found
        if self.games is not None:  # the name a game made for the player shows (best effort)
            with contextlib.suppress(ApiError):
                await self.games.remember_name(player, name)
        return player

    async def player(self, player_id: str, username: str, caller: Caller) -> str:
        """The player a request names, by `player_id` (empty or "me": the caller) or by an
        account's `username`; not both."""
        if player_id and username:
            raise ApiError("INVALID_ARGUMENT", "name the player: player_id or username, not both")
        if username:
            return await self.account(username)
        if player_id in ("", "me"):
            if not caller.player:
                raise ApiError("INVALID_ARGUMENT", "name a player: player_id or username")
            return caller.player
        if not PLAYER_ID_PATTERN.fullmatch(player_id):
            raise ApiError(
                "INVALID_ARGUMENT",
                f"not a player id (1 to 64 printable characters): {player_id[:40]!r}",
            )
        return player_id
