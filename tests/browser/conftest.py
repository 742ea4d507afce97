"""The web client in a real browser against the real platform (make test-browser): the stack of
tests/platform.py with its web edge serving web/dist (built by `make web/dist`), started once for
the session in a thread of its own, and Debian's Chromium driven by Playwright, a new browser
context (its own storage: another player) for each test. Nothing is skipped: without a built
client or without /usr/bin/chromium the tests fail and say so.

SCREENSHOTS=<folder> (make screenshots) writes screenshots of the lobby and each board there."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from playwright.sync_api import (
    Browser,
    BrowserContext,
    Page,
    Playwright,
    expect,
    sync_playwright,
)

from runtime.localpg import DATABASE, LocalPostgres
from tests.browser.stack import Stack

ROOT = Path(__file__).resolve().parents[2]
WEB_ROOT = ROOT / "web" / "dist"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")

# Every expect waits up to 30 s for its condition (Playwright's default is 5 s): the platform,
# its bots and Chromium share CI's cores with whatever else runs there.
expect.set_options(timeout=30_000)


@pytest.fixture(scope="session")
def web_database_url(postgres: LocalPostgres) -> str:
    """A database of the browser tests' own (accounts, ratings), migrated."""
    name = f"test_web_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres.admin_url, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}" TEMPLATE "{DATABASE}"')
    return postgres.url.rsplit("/", 1)[0] + "/" + name


@pytest.fixture(scope="session")
def stack(redis_url: str, web_database_url: str) -> Iterator[Stack]:
    if not (WEB_ROOT / "index.html").is_file():
        pytest.fail(f"the web client is not built ({WEB_ROOT}): run `make web/dist`", pytrace=False)
    running = Stack(redis_url, web_database_url, WEB_ROOT).start()
    yield running
    running.stop()


@pytest.fixture(scope="session")
def web_url(stack: Stack) -> str:
    return stack.url


@pytest.fixture(scope="session")
def playwright() -> Iterator[Playwright]:
    with sync_playwright() as driver:
        yield driver


@pytest.fixture(scope="session")
def browser(playwright: Playwright) -> Iterator[Browser]:
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(
            f"no Chromium at {CHROMIUM}: install Debian's (`apt-get install chromium`, as "
            "`make test-browser` does when it runs as root) or set CHROMIUM to one",
            pytrace=False,
        )
    launched = playwright.chromium.launch(
        executable_path=CHROMIUM, args=["--no-sandbox", "--disable-dev-shm-usage"]
    )
    yield launched
    launched.close()


def new_context(
    browser: Browser, web_url: str, width: int = 1100, height: int = 900
) -> BrowserContext:
    context = browser.new_context(base_url=web_url, viewport={"width": width, "height": height})
    context.set_default_timeout(30_000)
    return context


@pytest.fixture
def context(browser: Browser, web_url: str) -> Iterator[BrowserContext]:
    made = new_context(browser, web_url)
    yield made
    made.close()


@pytest.fixture
def page(context: BrowserContext) -> Page:
    return context.new_page()


@pytest.fixture
def screenshots() -> Path | None:
    """Where to write screenshots (SCREENSHOTS), or None."""
    folder = os.environ.get("SCREENSHOTS")
    if not folder:
        return None
    path = Path(folder) if Path(folder).is_absolute() else ROOT / folder
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture(autouse=True)
def no_process_left_behind() -> None:
    """The session's stack grows its bots' process pools when a game first needs them, and
    Chromium its renderers: both belong to the session, which checks at its end that nothing is
    left running (tests/conftest.py's pytest_sessionfinish)."""
