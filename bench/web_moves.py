"""The web client's move latency: a guest plays e-SOLO-e against random bots in Chromium
(Playwright, Debian's /usr/bin/chromium) on the local platform's web edge, and each move is timed
in the page from the click that completes it to the board drawn at the next version (the Play
answer, GetView and LegalMoves, over HTTP/1.1), once with the Connect protocol and once with
gRPC-Web. Needs web/dist built (`make web/dist`).

    python -m bench.web_moves [--moves 200]
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from playwright.sync_api import Page, sync_playwright

from runtime import db
from runtime.localpg import LocalPostgres
from runtime.localredis import LocalRedis
from tests.browser.stack import Stack

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")

TIMED_CLICK = """() => new Promise((resolve) => {
  const board = document.querySelector(".board-wrap");
  const before = board.getAttribute("data-version");
  const target = [...board.querySelectorAll("[data-target]")].pop();
  const t0 = performance.now();
  const seen = new MutationObserver(() => {
    if (board.getAttribute("data-version") !== before) {
      seen.disconnect();
      resolve(performance.now() - t0);
    }
  });
  seen.observe(board, { attributes: true, attributeFilter: ["data-version"] });
  target.dispatchEvent(new MouseEvent("click", { bubbles: true }));
})"""
"""Click the last target (the move's last part) and time until the board shows a new version."""


def _percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _new_game(page: Page, transport: str) -> None:
    page.goto(f"/?transport={transport}#/")
    page.get_by_label("e-SOLO-e: bot level").select_option("random")
    page.get_by_role("button", name="Play e-SOLO-e against bots").click()
    page.locator(".board-wrap:not([data-version=''])").wait_for()


def _my_turn_or_end(page: Page) -> bool:
    """Waits for the board to offer moves (True) or the game to end (False)."""
    page.locator(".result:visible, .board-wrap:not([data-legal='0'])").first.wait_for(
        timeout=60_000
    )
    return not page.locator(".result").is_visible()


def measure(page: Page, transport: str, moves: int) -> list[float]:
    samples: list[float] = []
    _new_game(page, transport)
    while len(samples) < moves:
        if not _my_turn_or_end(page):
            _new_game(page, transport)
            continue
        page.locator(".board-wrap [data-target]").last.click()  # the square
        page.locator(".turns button[data-target]").first.wait_for()
        samples.append(float(page.evaluate(TIMED_CLICK)))
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--moves", type=int, default=200, help="moves timed per protocol")
    args = parser.parse_args()
    web_root = ROOT / "web" / "dist"
    if not (web_root / "index.html").is_file():
        raise SystemExit("the web client is not built: run `make web/dist`")
    redis, postgres = LocalRedis(), LocalPostgres()
    try:
        db.migrate(postgres.url)
        stack = Stack(redis.url, postgres.url, web_root).start()
        try:
            with sync_playwright() as driver:
                browser = driver.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
                print(f"e-SOLO-e against random bots, {args.moves} moves a protocol, "
                      "click to the board drawn at the next version (ms)")  # fmt: skip
                for transport in ("connect", "grpc-web"):
                    context = browser.new_context(base_url=stack.url)
                    page = context.new_page()
                    page.goto(f"/?transport={transport}")
                    page.get_by_label("Your name").fill(f"bench {transport}")
                    page.get_by_role("button", name="Play as a guest").click()
                    page.get_by_role("region", name="Your games").wait_for()
                    measure(page, transport, 5)  # warm up
                    samples = measure(page, transport, args.moves)
                    print(
                        f"  {transport:9} p50 {_percentile(samples, 0.5):6.1f}  "
                        f"p99 {_percentile(samples, 0.99):6.1f}  max {max(samples):6.1f}"
                    )
                    context.close()
                browser.close()
        finally:
            stack.stop()
    finally:
        postgres.stop()
        redis.stop()


if __name__ == "__main__":
    main()
