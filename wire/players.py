"""Player ids: `p-<hex>` for people (AuthService.Login makes them), `bot-<level>-<hex>` for bot
seats (only the platform seats bots, and only BotLogin, with the bot key, acts for them)."""

from __future__ import annotations

import re
import secrets

PLAYER_ID_PATTERN = re.compile(r"[\x21-\x7e]{1,64}")
"""Any player id: 1..64 printable ASCII characters without spaces (what can travel in metadata)."""

BOT_PREFIX = "bot-"
BOT_ID_PATTERN = re.compile(r"bot-[a-z]+-[0-9a-f]{8,32}")


def is_bot(player_id: str) -> bool:
    return player_id.startswith(BOT_PREFIX)


def new_bot_id(level: str) -> str:
    return f"{BOT_PREFIX}{level}-{secrets.token_hex(6)}"


def level_of(player_id: str) -> str:
    """The level in a bot player id ("" when it is not one)."""
    if not BOT_ID_PATTERN.fullmatch(player_id):
        return ""
    return player_id.split("-")[1]


def display_name(player_id: str, name: str | None) -> str:
    """What to call a seat's holder: the name they logged in with, "<level> bot" for a bot
    seat, the player id when no name is known."""
    if is_bot(player_id):
        level = level_of(player_id)
        return f"{level} bot" if level else player_id
    return name or player_id
