"""Games stepped through in the browser: a finished game's replay (buttons, the keyboard, the
move list, a reload keeping the move), each position checked against the archive's own public
view at that version (GetArchivedView, asked here over the web edge); a player's page."""

from __future__ import annotations

import json
import re
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tabletop.esoloe.v1 import esoloe_pb2
from tabletop.lobby.v1 import lobby_pb2
from tests.browser.helpers import board, guest, play_bots, play_to_end, register, shoot

pytestmark = pytest.mark.browser

LEVELS = 4
SQUARES = "abcde"


def call(web_url: str, page: Page, method: str, request: Any, reply: Any) -> Any:
    """One LobbyService call over the web edge (Connect, binary) as the page's player."""
    saved = json.loads(page.evaluate("localStorage.getItem('tabletop.session')"))
    sent = urllib.request.Request(
        f"{web_url}/tabletop.lobby.v1.LobbyService/{method}",
        data=request.SerializeToString(),
        headers={
            "Content-Type": "application/proto",
            "Connect-Protocol-Version": "1",
            "Authorization": f"Bearer {saved['token']}",
        },
        method="POST",
    )
    with urllib.request.urlopen(sent, timeout=30) as answer:
        reply.ParseFromString(answer.read())
    return reply


def archived_view(web_url: str, page: Page, game_id: str, version: int) -> esoloe_pb2.View:
    av = call(
        web_url,
        page,
        "GetArchivedView",
        lobby_pb2.GetArchivedViewRequest(game_id=game_id, version=version),
        lobby_pb2.ArchivedView(),
    )
    assert av.version == version
    view = esoloe_pb2.View()
    assert av.view.Unpack(view)
    return view


def words(cell: Any) -> str:
    """A cell as the board's labels say it, without the owner's name."""
    if cell is None or not cell.face:
        return "gap"
    return str(cell.face) if 1 <= cell.face <= 3 else "blank"


def expected_labels(view: esoloe_pb2.View) -> list[str]:
    """The upper, left, right and back views' labels the board must show for `view`."""

    def at(cells: Any, i: int) -> Any:
        return cells[i] if i < len(cells) else None

    upper = ", ".join(f"{sq} {words(at(view.upper, col))}" for col, sq in enumerate(SQUARES))
    sides = [
        f"{name} view, bottom to top: "
        + ", ".join(words(at(cells, level)) for level in range(LEVELS))
        for name, cells in (("Left", view.left), ("Right", view.right))
    ]
    rows = [
        " ".join(words(c) for c in view.back[level].cells) if level < len(view.back) else ""
        for level in range(LEVELS)
    ]
    back = "; ".join(r for r in rows if r) or "empty"
    return [f"Upper view, a to e: {upper}", *sides, f"Back view, bottom to top, e to a: {back}"]


def shown_labels(page: Page) -> list[str]:
    labels = (
        board(page)
        .locator("g[role=img]")
        .evaluate_all("els => els.map(e => e.getAttribute('aria-label'))")
    )
    return [re.sub(r" \([^)]*\)", "", label) for label in labels]


def check_position(page: Page, web_url: str, game_id: str, version: int, last: int) -> None:
    """The page shows `version`, marked in the move list and kept in the address, and its board is
    the archive's public view at that version."""
    expect(board(page)).to_have_attribute("data-version", str(version))
    expect(page).to_have_url(re.compile(rf"#/replay/esoloe/{game_id}/{version}$"))
    current = page.locator(".replay-moves [aria-current=step]")
    expect(current).to_have_count(1)
    expect(current).to_have_attribute("data-version", str(version))
    view = archived_view(web_url, page, game_id, version)
    assert shown_labels(page) == expected_labels(view), f"the board at version {version}"
    left = [
        int(n) for n in re.findall(r"(\d+) cubes left", board(page).locator(".hand").inner_text())
    ]
    assert left == list(view.cubes_left), f"the cubes left at version {version}"
    assert view.ply == sum(len(s.cubes) for s in view.stacks)
    expect(page.locator(".turn-line")).to_contain_text(
        "The start" if version == 0 else f"Move {version} of {last}"
    )


def test_a_finished_game_steps_through_its_replay(
    page: Page, web_url: str, screenshots: Path | None
) -> None:
    guest(page, "rita")
    play_bots(page, "e-SOLO-e")
    game_id = page.url.rsplit("/", 1)[1]
    play_to_end(page)
    replay = page.get_by_role("link", name="Replay this game")
    expect(replay).to_be_visible(timeout=60_000)
    replay.click()

    game = call(
        web_url,
        page,
        "GetArchivedGame",
        lobby_pb2.GetArchivedGameRequest(game_id=game_id),
        lobby_pb2.ArchivedGame(),
    )
    last = max(m.version for m in game.moves)
    assert last >= 3
    # the result in words, as the table says it
    expect(page.locator(".replay-result")).to_have_text(re.compile(r"won|draw|without a result"))
    check_position(page, web_url, game_id, last, last)
    # the views differ from one version to the next: a wrong version cannot pass
    assert expected_labels(archived_view(web_url, page, game_id, 1)) != expected_labels(
        archived_view(web_url, page, game_id, 2)
    )

    back = page.get_by_role("button", name="Back one move")
    for version in range(last - 1, 0, -1):
        back.click()
        check_position(page, web_url, game_id, version, last)
    forward = page.get_by_role("button", name="Forward one move")
    for version in range(2, last + 1):
        forward.click()
        check_position(page, web_url, game_id, version, last)
    expect(forward).to_be_disabled()

    # the keyboard
    page.keyboard.press("Home")
    check_position(page, web_url, game_id, 0, last)
    page.keyboard.press("ArrowRight")
    check_position(page, web_url, game_id, 1, last)
    page.keyboard.press("ArrowRight")
    check_position(page, web_url, game_id, 2, last)
    page.keyboard.press("ArrowLeft")
    check_position(page, web_url, game_id, 1, last)
    page.keyboard.press("End")
    check_position(page, web_url, game_id, last, last)

    # a move in the list, then a reload keeps it
    page.get_by_role("button", name=re.compile(r"^Move 3: ")).click()
    check_position(page, web_url, game_id, 3, last)
    page.reload()
    check_position(page, web_url, game_id, 3, last)
    shoot(page, screenshots, "replay")


def test_a_players_page_shows_ratings_and_games(
    page: Page, web_url: str, screenshots: Path | None
) -> None:
    register(page, "petra", "a long password 7")
    page.get_by_label("Rated e-SOLO-e game").check()
    play_bots(page, "e-SOLO-e")
    play_to_end(page)
    expect(page.locator(".result .rating")).to_contain_text("Your rating", timeout=60_000)
    expect(page.get_by_role("link", name="Replay this game")).to_be_visible(timeout=60_000)
    # the table's names link to the player's page
    page.locator(".players").get_by_role("link", name="petra's page").click()
    expect(page).to_have_url(re.compile(r"#/player/petra$"))
    ratings = page.locator("#ratings")
    expect(ratings.locator("[data-game=esoloe]")).to_contain_text(
        re.compile(r"e-SOLO-e: \d+ \(provisional\): 1 rated game")
    )
    expect(ratings.locator("[data-game=zoxso]")).to_contain_text("0 rated games")
    games = page.locator("#recent-games").get_by_role("link", name=re.compile(r"^Replay e-SOLO-e"))
    expect(games).to_have_count(1, timeout=30_000)
    expect(page.locator("#rating-chart polyline")).to_have_count(1)
    expect(page.locator("#rating-chart")).to_contain_text("over 1 rated game")
    shoot(page, screenshots, "player")
    games.click()
    expect(page).to_have_url(re.compile(r"#/replay/esoloe/esoloe-[^/]+/\d+$"))
    expect(board(page)).not_to_have_attribute("data-version", "")

    # the leaders' page, from the lobby
    page.goto("/#/")
    page.get_by_role("link", name="Leaders and the deal of the day").click()
    expect(page.get_by_role("region", name="e-SOLO-e leaderboard")).to_be_visible()
    expect(page.get_by_role("region", name="Solace: the deal of the day")).to_contain_text(
        "today's deal"
    )


def test_a_solace_game_is_replayed_with_its_own_board(page: Page) -> None:
    """Another game's module draws its replay: a Solace deal played two moves, then stopped."""
    guest(page, "sol")
    page.get_by_role("button", name="Play Solace against bots").click()
    expect(page).to_have_url(re.compile(r"#/game/solace/solace-"))
    for _ in range(2):
        version = board(page).get_attribute("data-version") or ""
        page.locator(".solace-board [data-role=source]").first.click()
        page.locator(".solace-board [data-role=target]").first.click()
        expect(board(page)).not_to_have_attribute("data-version", version)
    page.get_by_role("button", name=re.compile(r"^Stop with")).click()
    page.get_by_role("button", name="Yes, stop").click()
    replay = page.get_by_role("link", name="Replay this game")
    expect(replay).to_be_visible(timeout=60_000)
    replay.click()
    expect(page).to_have_url(re.compile(r"#/replay/solace/solace-[^/]+/3$"))
    expect(page.locator(".replay-result")).to_contain_text("stopped with")
    spaces = page.locator(".solace-board [data-space]")
    expect(spaces).to_have_count(10)
    # no move offered in a replay
    expect(page.locator(".solace-board [data-role=source]")).to_have_count(0)
    page.keyboard.press("Home")
    expect(board(page)).to_have_attribute("data-version", "0")
    for name in ("B1", "B2", "B3", "B4", "B5"):
        expect(page.locator(f".solace-board [data-space={name}]")).to_have_attribute(
            "aria-label", re.compile(rf"^{name}: nest of black 3, sealed")
        )
    expect(page).to_have_url(re.compile(r"/0$"))
