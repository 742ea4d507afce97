"""What the browser tests do on the page, as a player would: by the buttons' names."""

from __future__ import annotations

import re
from pathlib import Path

from playwright.sync_api import Page, expect

RESULT = re.compile(r"won|draw|lost|without a result", re.IGNORECASE)


def guest(page: Page, name: str, query: str = "") -> None:
    """Open the client and log in as a guest."""
    page.goto(f"/{query}")
    page.get_by_label("Your name").fill(name)
    page.get_by_role("button", name="Play as a guest").click()
    expect(page.get_by_role("region", name="Your games")).to_be_visible()


def register(page: Page, username: str, password: str) -> None:
    page.goto("/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Register a new account").click()
    expect(page.get_by_role("region", name="Your games")).to_be_visible()


def play_bots(page: Page, title: str, level: str = "random") -> None:
    page.get_by_label(f"{title}: bot level").select_option(level)
    page.get_by_role("button", name=f"Play {title} against bots").click()
    expect(page.locator(".board-wrap[data-version]")).not_to_have_attribute("data-version", "")


def board(page: Page):  # type: ignore[no-untyped-def]
    return page.locator(".board-wrap")


def my_turn(page: Page) -> bool:
    """Whether targets are offered now (the board drawn with legal moves) or the game ended."""
    legal = board(page).get_attribute("data-legal") or "0"
    return legal != "0"


def finished(page: Page) -> bool:
    return page.locator(".result").is_visible()


def wait_turn_or_end(page: Page) -> None:
    """Until the board offers moves or the result shows."""
    expect(page.locator(".result:visible, .board-wrap:not([data-legal='0'])").first).to_be_visible(
        timeout=60_000
    )


def click_first_move(page: Page) -> None:
    """One whole move by clicking: a highlighted target, then each next one (the last drawn
    targets are the next step's), until the move is sent and the board moves on. Nothing when
    the game is over."""
    version = board(page).get_attribute("data-version") or ""
    clicked = False
    for _ in range(8):
        if finished(page) or board(page).get_attribute("data-legal") == "0":
            break
        board(page).locator("[data-target]").last.click()
        clicked = True
    if clicked:
        expect(board(page)).not_to_have_attribute("data-version", version, timeout=30_000)


def play_to_end(page: Page, max_moves: int = 400) -> str:
    """Click moves until the result shows; the result's text."""
    for _ in range(max_moves):
        wait_turn_or_end(page)
        if finished(page):
            break
        click_first_move(page)
    result = page.locator(".result-text")
    expect(result).to_have_text(RESULT, timeout=60_000)
    return result.inner_text()


def shoot(page: Page, folder: Path | None, name: str) -> None:
    if folder is not None:
        page.screenshot(path=str(folder / f"{name}.png"), full_page=True)
