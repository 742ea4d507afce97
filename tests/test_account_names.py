"""Usernames and passwords an account may have: no reserved names (whatever the case, after
NFKC), no control characters in a password, and a provider's name stripped of control and
format characters (bidi overrides) before a username is made of it."""

from __future__ import annotations

import pytest

from services.accounts.rules import check_password, check_username, is_reserved, visible
from wire.errors import ApiError


@pytest.mark.parametrize(
    "name",
    [
        "admin",
        "ADMIN",
        "Administrator",
        "root",
        "system",
        "moderator",
        "support",
        "tabletop",
        "bot",
        "bot-strong-1a2b",
        "bot_expert",
        "bot2",
        "botstrong",
        "guest",
        "null",
        "Ａｄｍｉｎ",
    ],
)
def test_reserved_names_are_refused_whatever_the_case(name: str) -> None:
    assert is_reserved(name)
    if name.isascii():
        with pytest.raises(ApiError, match="reserved") as refused:
            check_username(name)
        assert refused.value.reason == "INVALID_ARGUMENT"


@pytest.mark.parametrize("name", ["bottle", "botany", "admiral", "alice", "rooted", "guesty"])
def test_ordinary_names_are_not_reserved(name: str) -> None:
    assert not is_reserved(name)
    assert check_username(name) == name


@pytest.mark.parametrize("password", ["\x00" * 8, "password\n", "pass\tword", "abc\x7fdefgh"])
def test_a_password_with_control_characters_is_refused(password: str) -> None:
    with pytest.raises(ApiError, match="control characters") as refused:
        check_password(password)
    assert refused.value.reason == "INVALID_ARGUMENT"


def test_a_password_of_any_printable_characters_is_taken() -> None:
    assert check_password("correct horse ☃ battery")


def test_bidi_and_format_characters_are_stripped_before_a_name_is_made() -> None:
    assert visible("\u202eadmin") == "admin"
    assert visible("ad\u200bmin\u2066") == "admin"
    assert is_reserved(visible("\u202eAdmin"))
