"""Bot seats' player ids: `bot-<level>-<hex>`. Only BotLogin, with the bot key, signs tokens for
them (guests are `p-<hex>`), so a person can never act for a bot seat, nor a bot for a person."""

from __future__ import annotations

import re
import secrets

from services.runtime.keys import BOT_PLAYER_PREFIX

BOT_ID_PATTERN = re.compile(r"bot-[a-z]+-[0-9a-f]{8,32}")


def new_bot_id(level: str) -> str:
    return f"{BOT_PLAYER_PREFIX}{level}-{secrets.token_hex(6)}"


def level_of(player_id: str) -> str:
    """The level in a bot player id ("" when it is not one)."""
    if not BOT_ID_PATTERN.fullmatch(player_id):
        return ""
    return player_id.split("-")[1]
