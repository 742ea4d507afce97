"""The rules of accounts, with no I/O: which usernames, passwords, API token names and scopes are
good, and the form names are compared in."""

from __future__ import annotations

import re
import unicodedata

from wire.errors import ApiError

USERNAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{1,19}")
PASSWORD_MIN, PASSWORD_MAX = 8, 128
SCOPES = ("play", "bot")
"""What an API token may do beyond reading (views, legal moves, watching, listing games):
`play` (an account's games: make, join, play, resign, find matches) and `bot` (the same, for a
bot account: its only way to play)."""


RESERVED_NAMES = frozenset(
    {
        "admin",
        "administrator",
        "root",
        "system",
        "moderator",
        "mod",
        "support",
        "staff",
        "tabletop",
        "bot",
        "bots",
        "guest",
        "null",
        "none",
        "anonymous",
    }
)
"""Usernames nobody may take (whatever the case): they would pass for the platform's own."""
RESERVED_PATTERN = re.compile(r"bot[-_0-9].*|bot(random|greedy|strong|expert).*")
"""Usernames that would pass for the platform's bots (whose seats are named bot-<level>-<hex>)."""


def name_key(name: str) -> str:
    """The form two names are compared in: NFKC, then case-folded."""
    return unicodedata.normalize("NFKC", name).casefold()


def is_reserved(name: str) -> bool:
    key = name_key(name)
    return key in RESERVED_NAMES or RESERVED_PATTERN.fullmatch(key) is not None


def visible(text: str) -> str:
    """`text` without control and format characters (bidi overrides, zero widths...), NFKC."""
    kept = "".join(c for c in text if unicodedata.category(c) not in ("Cc", "Cf"))
    return unicodedata.normalize("NFKC", kept)


def check_username(username: str) -> str:
    if not USERNAME_PATTERN.fullmatch(username):
        raise ApiError(
            "INVALID_ARGUMENT",
            "a username is 2 to 20 letters, digits, '-' or '_', starting with a letter or digit"
            f"; got {username[:40]!r}",
        )
    if is_reserved(username):
        raise ApiError(
            "INVALID_ARGUMENT",
            f"the username {username!r} is reserved (it would pass for the platform's own "
            "staff or bots); choose another",
        )
    return username


def check_password(password: str) -> str:
    if not PASSWORD_MIN <= len(password) <= PASSWORD_MAX:
        raise ApiError(
            "INVALID_ARGUMENT",
            f"a password is {PASSWORD_MIN} to {PASSWORD_MAX} characters; got {len(password)}",
        )
    if any(unicodedata.category(c) == "Cc" for c in password):
        raise ApiError(
            "INVALID_ARGUMENT",
            "a password may not hold control characters (NUL, tabs, line breaks...)",
        )
    return password


def check_token_name(name: str) -> str:
    if not 1 <= len(name) <= 40 or not name.isprintable():
        raise ApiError(
            "INVALID_ARGUMENT",
            f"an API token's name is 1 to 40 printable characters; got {name[:40]!r}",
        )
    return name


def check_scopes(scopes: list[str], bot: bool) -> tuple[str, ...]:
    """The scopes asked for, checked: known ones, each once; `bot` only for a bot account,
    and `play` only for a person's."""
    unknown = [s for s in scopes if s not in SCOPES]
    if unknown:
        raise ApiError(
            "INVALID_ARGUMENT",
            f"unknown scope {unknown[0][:20]!r}: the scopes are {', '.join(SCOPES)}",
        )
    if bot and "play" in scopes:
        raise ApiError("INVALID_ARGUMENT", "a bot account plays with the 'bot' scope, not 'play'")
    if not bot and "bot" in scopes:
        raise ApiError(
            "INVALID_ARGUMENT",
            "the 'bot' scope is for bot accounts (registered as bots); a person's token "
            "plays with 'play'",
        )
    return tuple(sorted(set(scopes)))
