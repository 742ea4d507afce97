"""Two guests meet at a table: by invite code, at an open table, by matchmaking."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.conftest import new_context
from tests.browser.helpers import guest

pytestmark = pytest.mark.browser

TABLE = re.compile(r"#/game/esoloe/esoloe-")


@pytest.fixture
def two(browser: Browser, web_url: str) -> Iterator[tuple[Page, Page]]:
    first, second = new_context(browser, web_url), new_context(browser, web_url)
    try:
        yield first.new_page(), second.new_page()
    finally:
        first.close()
        second.close()


def both_at_one_table(host: Page, guest_page: Page) -> None:
    expect(guest_page).to_have_url(TABLE)
    expect(host).to_have_url(TABLE)
    assert host.url.split("#")[1] == guest_page.url.split("#")[1]
    for page in (host, guest_page):
        expect(page.locator(".board-wrap")).not_to_have_attribute("data-version", "")


def test_an_invite_code_seats_a_friend(two: tuple[Page, Page]) -> None:
    host, friend = two
    guest(host, "hana")
    guest(friend, "fred")
    host.get_by_role("button", name="Invite friends to e-SOLO-e").click()
    code = host.get_by_label("Invite code", exact=True).and_(host.locator("strong"))
    expect(code).not_to_be_empty()
    friend.get_by_role("textbox", name="Invite code").fill(code.inner_text())
    friend.get_by_role("button", name="Join with this invite code").click()
    both_at_one_table(host, friend)


def test_an_open_table_is_joined_from_the_list(two: tuple[Page, Page]) -> None:
    host, other = two
    guest(host, "olga")
    guest(other, "otto")
    host.get_by_role("button", name="Open an e-SOLO-e table").click()
    expect(host.get_by_text("Your table is open")).to_be_visible()
    other.reload()
    other.get_by_role("button", name="Join olga's e-SOLO-e table").click()
    both_at_one_table(host, other)


def test_matchmaking_seats_two_players_together(two: tuple[Page, Page]) -> None:
    first, second = two
    guest(first, "mia")
    guest(second, "max")
    first.get_by_role("button", name="Find an e-SOLO-e match").click()
    expect(first.get_by_text("Looking for players")).to_be_visible()
    second.get_by_role("button", name="Find an e-SOLO-e match").click()
    both_at_one_table(first, second)


def test_a_game_is_watched_by_someone_without_a_seat(two: tuple[Page, Page]) -> None:
    player, watcher = two
    guest(player, "pia")
    guest(watcher, "wes")
    player.get_by_role("button", name="Play e-SOLO-e against bots").click()
    expect(player).to_have_url(TABLE)
    game_id = player.url.rsplit("/", 1)[1]
    watcher.goto(f"/#/watch/esoloe/{game_id}")
    expect(watcher.locator(".turn-line")).to_have_text(re.compile("Watching"))
    expect(watcher.locator(".board-wrap")).to_have_attribute("data-legal", "0")
    expect(watcher.get_by_role("button", name="Resign this game")).to_have_count(0)
