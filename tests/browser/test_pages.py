"""The other pages and ways in: the keyboard, a phone's width, logging out (Solo's and Solace's
tables: test_solo.py, test_solace.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.conftest import new_context
from tests.browser.helpers import board, guest, play_bots, shoot, wait_turn_or_end

pytestmark = pytest.mark.browser


def test_a_move_made_with_the_keyboard_only(page: Page) -> None:
    guest(page, "kay")
    play_bots(page, "e-SOLO-e")
    wait_turn_or_end(page)
    version = board(page).get_attribute("data-version") or ""
    target = board(page).locator("[data-target]").first
    target.focus()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("Enter")
    expect(page.get_by_role("group", name="How to turn the cube")).to_be_visible()
    page.get_by_role("button", name="Place on").first.focus()
    page.keyboard.press("Enter")
    expect(board(page)).not_to_have_attribute("data-version", version)


def test_a_phone_width_fits_the_lobby_and_the_board(
    browser: Browser, web_url: str, screenshots: Path | None
) -> None:
    context = new_context(browser, web_url, width=375, height=740)
    try:
        page = context.new_page()
        guest(page, "pip")
        assert page.evaluate("document.documentElement.scrollWidth") <= 375
        shoot(page, screenshots, "lobby-phone")
        play_bots(page, "ZoxSo")
        wait_turn_or_end(page)
        assert page.evaluate("document.documentElement.scrollWidth") <= 375
        shoot(page, screenshots, "zoxso-phone")
    finally:
        context.close()


def test_log_out_and_back_in_with_an_account(page: Page) -> None:
    page.goto("/")
    page.get_by_label("Username").fill("lou")
    page.get_by_label("Password").fill("a long password 3")
    page.get_by_role("button", name="Register a new account").click()
    expect(page.get_by_text("lou", exact=True)).to_be_visible()
    page.get_by_role("button", name="Log out").click()
    expect(page.get_by_role("button", name="Play as a guest")).to_be_visible()
    page.get_by_label("Username").fill("lou")
    page.get_by_label("Password").fill("a long password 3")
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("region", name="Your games")).to_be_visible()
