"""Players who find each other, in the browser: following (who is online, who plays what) in
the lobby, and the notifications shown on every page (docs/web.md)."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from services.lobby.following import PRESENCE_SECONDS
from tests.browser.conftest import new_context
from tests.browser.helpers import guest, register, shoot

pytestmark = pytest.mark.browser

TABLE = re.compile(r"#/game/esoloe/esoloe-")
ONLINE_WITHIN_MS = 10_000
"""The lobby asks every 3 s; the presence of a stream is marked as it opens."""
OFFLINE_WITHIN_MS = int(PRESENCE_SECONDS * 1000) + 10_000
"""A closed stream takes its mark away at once, or it lapses after PRESENCE_SECONDS."""


def log_in(page: Page, username: str, password: str) -> None:
    page.goto("/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("region", name="Your games")).to_be_visible()


def followed(page: Page, name: str):  # type: ignore[no-untyped-def]
    return (
        page.get_by_role("list", name="Players you follow")
        .get_by_role("listitem")
        .filter(has=page.get_by_text(name, exact=True))
    )


def test_following_presence_and_a_challenge_accepted_from_a_notification(
    browser: Browser, web_url: str, screenshots: Path | None
) -> None:
    suffix = uuid.uuid4().hex[:6]
    ann_name, bob_name = f"ann{suffix}", f"bob{suffix}"
    bob_password = "a long password 5"
    opened: list[BrowserContext] = []

    def context(width: int = 1100) -> BrowserContext:
        made = new_context(browser, web_url, width=width, height=800)
        opened.append(made)
        return made

    try:
        # bob has an account but is away
        first = context()
        register(first.new_page(), bob_name, bob_password)
        first.close()
        # ann (on a phone's width) follows him while he is offline
        ann = context(width=375).new_page()
        register(ann, ann_name, "a long password 4")
        ann.get_by_label("Username to follow").fill(bob_name)
        ann.get_by_role("button", name="Follow this player").click()
        expect(followed(ann, bob_name)).to_contain_text(re.compile(r"\boffline\b"))
        expect(ann.get_by_role("button", name=f"Unfollow {bob_name}")).to_be_visible()
        assert ann.evaluate("document.documentElement.scrollWidth") <= 375

        # he logs in: ann sees him online within seconds
        bob_context = context()
        bob = bob_context.new_page()
        log_in(bob, bob_name, bob_password)
        expect(bob.get_by_text("1 player follows you.")).to_be_visible()
        expect(followed(ann, bob_name)).to_contain_text(
            re.compile(r"\bonline\b"), timeout=ONLINE_WITHIN_MS
        )
        # he goes away (the page closed): offline within the server's bound
        bob_context.close()
        expect(followed(ann, bob_name)).to_contain_text(
            re.compile(r"\boffline\b"), timeout=OFFLINE_WITHIN_MS
        )

        # back, he sits at a game against bots: ann is told, and may watch it
        bob = context().new_page()
        log_in(bob, bob_name, bob_password)
        bob.get_by_label("e-SOLO-e: bot level").select_option("random")
        bob.get_by_role("button", name="Play e-SOLO-e against bots").click()
        expect(bob).to_have_url(TABLE)
        bots_game = bob.url
        game_id = bots_game.rsplit("/", 1)[1]
        ann_toasts = ann.get_by_role("status", name="New notifications")
        expect(ann_toasts).to_contain_text(f"{bob_name} is playing an e-SOLO-e game.")
        watch = ann_toasts.get_by_role("link", name=f"Watch {bob_name} play e-SOLO-e").first
        expect(watch).to_have_attribute("href", f"#/watch/esoloe/{game_id}")
        expect(
            ann.get_by_role("link", name=f"Watch {bob_name}'s e-SOLO-e game now")
        ).to_have_attribute("href", f"#/watch/esoloe/{game_id}")
        ann.get_by_role("button", name="Notifications: 1 unread").click()
        ann_panel = ann.get_by_role("region", name="Notifications", exact=True)
        expect(
            ann_panel.get_by_role("link", name=f"Watch {bob_name} play e-SOLO-e")
        ).to_have_attribute("href", f"#/watch/esoloe/{game_id}")
        assert ann.evaluate("document.documentElement.scrollWidth") <= 375
        ann.keyboard.press("Escape")
        expect(ann_panel).to_be_hidden()
        expect(ann.get_by_role("button", name="Notifications: 0 unread")).to_be_focused()

        # ann challenges him while he is at that table: the notification says so, he accepts
        # there, and both land at the new game's table
        ann.get_by_label("Player to challenge").fill(bob_name)
        ann.get_by_label("Game of the challenge").select_option("esoloe")
        ann.get_by_role("button", name="Challenge this player").click()
        bob_toasts = bob.get_by_role("status", name="New notifications")
        expect(bob_toasts).to_contain_text(f"{ann_name} challenges you to an e-SOLO-e game.")
        bell = bob.get_by_role("button", name=re.compile(r"^Notifications: [1-9]\d* unread$"))
        bell.focus()
        bob.keyboard.press("Enter")
        panel = bob.get_by_role("region", name="Notifications", exact=True)
        expect(panel).to_be_visible()
        expect(bob.get_by_role("button", name="Notifications: 0 unread")).to_have_attribute(
            "aria-expanded", "true"
        )
        # his own turn at the table he is looking at is not shown
        expect(panel.get_by_role("listitem").filter(has_text="Your turn")).to_have_count(0)
        shoot(bob, screenshots, "notifications")
        panel.get_by_role("button", name=f"Accept the challenge from {ann_name}").click()
        expect(bob).not_to_have_url(bots_game)
        expect(bob).to_have_url(TABLE)
        expect(ann).to_have_url(TABLE)
        assert ann.url.split("#")[1] == bob.url.split("#")[1]
        for page in (ann, bob):
            expect(page.locator(".board-wrap")).not_to_have_attribute("data-version", "")
        # ann's notification says he accepted, wherever she is
        expect(ann.get_by_role("status", name="New notifications")).to_contain_text(
            f"{bob_name} accepted your e-SOLO-e challenge."
        )
    finally:
        for made in opened:
            made.close()


def test_a_guest_is_told_to_register_to_follow(page: Page) -> None:
    guest(page, "gus")
    card = page.get_by_role("region", name="Following")
    expect(card).to_contain_text("Register an account to follow players")
    expect(card.get_by_role("textbox")).to_have_count(0)
    bell = page.get_by_role("button", name="Notifications: 0 unread")
    bell.click()
    expect(page.get_by_role("region", name="Notifications", exact=True)).to_contain_text(
        "No notification yet."
    )
    page.keyboard.press("Escape")
    expect(page.get_by_role("region", name="Notifications", exact=True)).to_be_hidden()
    expect(bell).to_be_focused()


def test_refusing_followers_and_unfollowing(browser: Browser, web_url: str) -> None:
    suffix = uuid.uuid4().hex[:6]
    cara_name, dan_name = f"cara{suffix}", f"dan{suffix}"
    cara_context, dan_context = new_context(browser, web_url), new_context(browser, web_url)
    try:
        cara, dan = cara_context.new_page(), dan_context.new_page()
        register(cara, cara_name, "a long password 6")
        register(dan, dan_name, "a long password 7")
        dan.get_by_label("Username to follow").fill(cara_name.upper())
        dan.get_by_role("button", name="Follow this player").click()
        expect(followed(dan, cara_name)).to_be_visible()
        expect(cara.get_by_text("1 player follows you.")).to_be_visible()
        # she takes no followers: his follow ends, and a new one is refused
        refuse = cara.get_by_role("checkbox", name="Refuse followers")
        refuse.check()
        expect(cara.get_by_text("0 players follow you.")).to_be_visible()
        expect(dan.get_by_text("You follow nobody yet.")).to_be_visible()
        dan.get_by_label("Username to follow").fill(cara_name)
        dan.get_by_role("button", name="Follow this player").click()
        expect(dan.get_by_role("region", name="Following")).to_contain_text("takes no followers")
        # the setting is kept with her account
        cara.reload()
        expect(cara.get_by_role("checkbox", name="Refuse followers")).to_be_checked()
        cara.get_by_role("checkbox", name="Refuse followers").uncheck()
        expect(cara.get_by_text("Anyone may follow you again.")).to_be_visible()
        dan.get_by_role("button", name="Follow this player").click()
        expect(followed(dan, cara_name)).to_be_visible()
        dan.get_by_role("button", name=f"Unfollow {cara_name}").click()
        expect(dan.get_by_text("You follow nobody yet.")).to_be_visible()
        expect(cara.get_by_text("0 players follow you.")).to_be_visible()
    finally:
        cara_context.close()
        dan_context.close()
