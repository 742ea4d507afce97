"""Games played in the browser by clicking, against bots and between two players."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.conftest import new_context
from tests.browser.helpers import (
    RESULT,
    board,
    click_first_move,
    guest,
    play_bots,
    play_to_end,
    register,
    shoot,
    wait_turn_or_end,
)

pytestmark = pytest.mark.browser


def test_guest_plays_esoloe_against_a_bot_to_the_end(page: Page, screenshots: Path | None) -> None:
    guest(page, "ann")
    shoot(page, screenshots, "lobby")
    play_bots(page, "e-SOLO-e")
    expect(page).to_have_url(re.compile(r"#/game/esoloe/esoloe-"))
    wait_turn_or_end(page)
    board(page).locator("[data-target]").first.click()
    shoot(page, screenshots, "esoloe")
    text = play_to_end(page)
    assert RESULT.search(text)


def test_guest_plays_zoxso_against_a_bot_to_the_end(page: Page, screenshots: Path | None) -> None:
    guest(page, "zed")
    play_bots(page, "ZoxSo", level="greedy")
    for _ in range(12):
        wait_turn_or_end(page)
        click_first_move(page)
    shoot(page, screenshots, "zoxso")
    play_to_end(page, max_moves=600)


def test_a_reload_mid_game_puts_the_player_back_at_the_table(page: Page) -> None:
    guest(page, "rey")
    play_bots(page, "e-SOLO-e")
    wait_turn_or_end(page)
    click_first_move(page)
    url = page.url
    version = board(page).get_attribute("data-version")
    page.reload()
    expect(page).to_have_url(url)
    expect(board(page)).to_have_attribute("data-version", re.compile(r"\d+"))
    assert int(board(page).get_attribute("data-version") or 0) >= int(version or 0)
    # the lobby lists it too, and a second tab is the same player at the same table
    second = page.context.new_page()
    second.goto("/")
    second.get_by_role("link", name=re.compile("Back to your e-SOLO-e game")).click()
    expect(second).to_have_url(url)
    wait_turn_or_end(second)
    play_to_end(second)


def test_grpc_web_plays_a_whole_game(page: Page) -> None:
    guest(page, "gwen", query="?transport=grpc-web")
    play_bots(page, "e-SOLO-e")
    assert "transport=grpc-web" in page.url
    play_to_end(page)


def test_two_accounts_play_a_rated_challenge_to_the_end(browser: Browser, web_url: str) -> None:
    """Both see the result and, once the game is counted, each seat's rating change in words."""
    suffix = uuid.uuid4().hex[:6]
    ann_context, bob_context = new_context(browser, web_url), new_context(browser, web_url)
    try:
        ann, bob = ann_context.new_page(), bob_context.new_page()
        register(ann, f"ann{suffix}", "a long password 1")
        register(bob, f"bob{suffix}", "a long password 2")
        ann.get_by_label("Player to challenge").fill(f"bob{suffix}")
        ann.get_by_label("Game of the challenge").select_option("esoloe")
        ann.get_by_role("checkbox", name="Rated challenge").check()
        ann.get_by_role("button", name="Challenge this player").click()
        offer = bob.get_by_role("listitem").filter(has_text=f"ann{suffix} challenges you")
        expect(offer).to_contain_text("a rated game of e-SOLO-e")
        bob.get_by_role("button", name=f"Accept ann{suffix}'s challenge").click()
        expect(bob).to_have_url(re.compile(r"#/game/esoloe/"))
        expect(ann).to_have_url(bob.url)
        for player in (ann, bob):
            expect(board(player)).not_to_have_attribute("data-version", "")
        # whoever is to move first (the board offers targets only to them), then in turn
        mover = ann if ann.locator(".player.me.acting").count() else bob
        other = bob if mover is ann else ann
        for turn in range(40):
            wait_turn_or_end(mover)
            if mover.locator(".result").is_visible():
                break
            if turn < 4:  # two cubes each, turned apart: the game counts (docs/ratings.md)
                version = board(mover).get_attribute("data-version") or ""
                board(mover).locator(f"[data-target='{'aebd'[turn]}']").click()
                board(mover).locator("button.turn").nth(turn * 3).click()
                expect(board(mover)).not_to_have_attribute("data-version", version)
            else:
                click_first_move(mover)
            mover, other = other, mover
        change = re.compile(
            r"Your rating: 1000 → \d+ \([+-]\d+\); (ann|bob)\w+'s rating: 1000 → \d+ \([+-]\d+\)"
            r"|(ann|bob)\w+'s rating: 1000 → \d+ \([+-]\d+\); Your rating: 1000 → \d+ \([+-]\d+\)"
        )
        for player in (ann, bob):
            expect(player.locator(".result-text")).to_have_text(RESULT)
            expect(player.locator(".result .rating")).to_have_text(change, timeout=60_000)
    finally:
        ann_context.close()
        bob_context.close()
