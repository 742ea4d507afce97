"""Solace in the browser: a guest plays a whole deal by clicking the spaces (the first move with
the keyboard), on a phone's width; black pieces are drawn sealed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.conftest import new_context
from tests.browser.helpers import board, guest, shoot

pytestmark = pytest.mark.browser


def solace(page: Page):  # type: ignore[no-untyped-def]
    return page.locator(".solace-board")


def start(page: Page, name: str) -> None:
    guest(page, name)
    page.get_by_role("button", name="Play Solace against bots").click()
    expect(page).to_have_url(re.compile(r"#/game/solace/solace-"))
    expect(board(page)).not_to_have_attribute("data-version", "")


def one_move(page: Page, keyboard: bool = False) -> bool:
    """The space a move leaves, then the space it reaches; False once the game is over."""
    result = page.locator(".result:visible")
    source = solace(page).locator("[data-role=source]").first
    expect(result.or_(source).first).to_be_visible(timeout=30_000)
    if result.is_visible():
        return False
    version = board(page).get_attribute("data-version") or ""
    if keyboard:
        source.focus()
        page.keyboard.press("Enter")
        target = solace(page).locator("[data-role=target]").first
        expect(target).to_have_attribute("aria-label", re.compile(r"Move [BC]\d-[BC]\d here"))
        target.focus()
        page.keyboard.press(" ")
    else:
        source.click()
        expect(solace(page).locator("[data-role=picked]")).to_have_count(1)
        solace(page).locator("[data-role=target]").first.click()
    expect(board(page)).not_to_have_attribute("data-version", version)
    return True


def test_guest_plays_a_whole_solace_deal_by_clicking(
    browser: Browser, web_url: str, screenshots: Path | None
) -> None:
    context = new_context(browser, web_url, width=375, height=800)
    try:
        page = context.new_page()
        start(page, "sue")
        spaces = solace(page).locator("[data-space]")
        expect(spaces).to_have_count(10)
        # the B row starts sealed: a black 3 and nothing of its inside (L4)
        for name in ("B1", "B2", "B3", "B4", "B5"):
            sealed = rf"^{name}: nest of black 3, sealed \(2 pieces unseen inside\)"
            expect(solace(page).locator(f"[data-space={name}]")).to_have_attribute(
                "aria-label", re.compile(sealed)
            )
        assert page.evaluate("document.documentElement.scrollWidth") <= 375
        assert one_move(page, keyboard=True)
        for _ in range(4):
            one_move(page)
        shoot(page, screenshots, "solace")
        for _ in range(60):  # a deal has at most 30 moves or so
            if not one_move(page):
                break
        text = page.locator(".result-text")
        best = re.compile(r"promoted towers? \(the best this deal allowed: \d\)")
        expect(text).to_contain_text(best)
        expect(solace(page).locator(".solace-status")).to_contain_text("Game over")
        shoot(page, screenshots, "solace-end")
    finally:
        context.close()


def test_stop_ends_a_solace_game_after_a_confirmation(page: Page) -> None:
    start(page, "stu")
    one_move(page)
    stop = page.get_by_role("button", name=re.compile(r"^Stop with \d promoted towers?"))
    stop.click()
    page.get_by_role("button", name="Keep playing").click()
    expect(page.locator(".result")).to_be_hidden()
    stop.click()
    page.get_by_role("button", name="Yes, stop").click()
    expect(page.locator(".result-text")).to_contain_text("You stopped with")
