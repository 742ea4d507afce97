"""Player ids: `p-<hex>` for guests (AuthService.Login makes them) and `a-<hex>` for accounts
(a guest that claims an account keeps its `p-`), `b-<hex>` for bot accounts (programs registered
as bots), `bot-<level>-<hex>` for the platform's bot seats (only the platform seats bots, and
only a bot worker, with the bot key, acts for them)."""

from __future__ import annotations

import re
import secrets
from collections.abc import Sequence

PLAYER_ID_PATTERN = re.compile(r"[\x21-\x7e]{1,64}")
"""Any player id: 1..64 printable ASCII characters without spaces (what can travel in metadata)."""

BOT_PREFIX = "bot-"
BOT_ID_PATTERN = re.compile(r"bot-[a-z]+-[0-9a-f]{8,32}")


BOT_ACCOUNT_PREFIX = "b-"
GUEST_MAX_SECONDS = 30 * 24 * 3600
"""A guest's whole life, from its Login, whatever its refreshes: its tokens expire then at the
latest, and Refresh renews them no more (register to keep the player)."""
GUEST_REGISTERED = "its guest became an account (Register): log in to the account (AccountLogin)"
GUEST_REPLACED = "a newer token of this guest replaced it (Refresh): use the newest"
"""Why a guest's token ended (AuthService.Register, Refresh), as a call with it is told."""


def is_bot(player_id: str) -> bool:
    """One of the platform's bot seats."""
    return player_id.startswith(BOT_PREFIX)


def plays_as_bot(player_id: str) -> bool:
    """A bot holds it: one of the platform's bot seats, or a bot account."""
    return is_bot(player_id) or player_id.startswith(BOT_ACCOUNT_PREFIX)


def new_bot_id(level: str) -> str:
    return f"{BOT_PREFIX}{level}-{secrets.token_hex(6)}"


def level_of(player_id: str) -> str:
    """The level in a bot player id ("" when it is not one)."""
    if not BOT_ID_PATTERN.fullmatch(player_id):
        return ""
    return player_id.split("-")[1]


LEVEL_ID_PATTERN = re.compile(r"bot-([a-z]+)")
"""A bot level as one rated player (`bot-<level>`: docs/ratings.md)."""


def display_name(player_id: str, name: str | None) -> str:
    """What to call a seat's holder: the name they logged in with, "<level> bot" for a bot
    seat (or a bot level's rating), the player id when no name is known."""
    if is_bot(player_id):
        whole = LEVEL_ID_PATTERN.fullmatch(player_id)
        level = level_of(player_id) or (whole.group(1) if whole else "")
        return f"{level} bot" if level else player_id
    return name or player_id


def sponsor_of(seats: Sequence[str], sponsor: str = "") -> str:
    """The player a game's bots work for, and whose share of the bots it counts in: its sponsor
    (who asked for it: PlayAgainstBots), else its first person; "" for neither."""
    return sponsor or next((p for p in seats if not is_bot(p)), "")
