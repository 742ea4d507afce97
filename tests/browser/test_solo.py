"""Solo in the browser: a guest plays whole games against bots by clicking the board, and what
the browser received never holds a card of another seat (S14)."""

from __future__ import annotations

import base64
import json
import re
import struct
from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import descriptor_pool, message_factory
from google.protobuf.json_format import MessageToDict
from playwright.sync_api import Browser, Page, Request, Route, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
from redis import Redis

from runtime import keys
from tabletop.common.v1 import common_pb2
from tabletop.lobby.v1 import lobby_pb2
from tabletop.solo.v1 import solo_pb2
from tests.browser.conftest import new_context
from tests.browser.helpers import board, guest, shoot

pytestmark = pytest.mark.browser

CARD = re.compile(r"^(?:[rgby](?:[1-9]|[SRDX])|W|W4|WX)$")
SHORT = {"mode": solo_pb2.MODE_ROUNDS, "rounds": 1, "jump_in_window_ms": 500}
"""One round, and bots that leave half a second for a jump-in (the default 2.5 s makes a game
of minutes): what the test asks the lobby for instead of a whole points game."""


def short_games(page: Page, players: int, window_ms: int = SHORT["jump_in_window_ms"]) -> None:
    """Every PlayAgainstBots the page sends asks for one round of `players` seats, the bots
    leaving `window_ms` for a jump-in."""

    def shorten(route: Route) -> None:
        request = lobby_pb2.PlayAgainstBotsRequest.FromString(route.request.post_data_buffer or b"")
        options = request.options.solo
        options.players = players
        for field, value in {**SHORT, "jump_in_window_ms": window_ms}.items():
            setattr(options, field, value)
        route.continue_(post_data=request.SerializeToString())

    page.route("**/tabletop.lobby.v1.LobbyService/PlayAgainstBots", shorten)


def start(page: Page, name: str, players: int, window_ms: int = SHORT["jump_in_window_ms"]) -> None:
    guest(page, name)
    short_games(page, players, window_ms)
    new_game(page, players)


def new_game(page: Page, players: int) -> None:
    """From the lobby (back to it from a table: the same page, no reload): a table of `players`
    seats with random bots."""
    if "#/game/" in page.url:
        page.get_by_role("link", name="Back to the lobby").click()
    page.get_by_label("Solo: players").select_option(str(players))
    page.get_by_label("Solo: bot level").select_option("random")
    page.get_by_role("button", name="Play Solo against bots").click()
    expect(page).to_have_url(re.compile(r"#/game/solo/solo-"))
    expect(board(page)).not_to_have_attribute("data-version", "")


def solo(page: Page):  # type: ignore[no-untyped-def]
    return page.locator(".solo-board")


def one_action(page: Page) -> bool:
    """Wait until this seat may act (or the game ends), then act by clicking: a highlighted card
    and the choices it asks for, else draw, or keep the drawn card; a jump-in when the button
    is live. False once the game is over."""
    result = page.locator(".result:visible")
    mine = page.locator(".solo-board[data-turn='me']")
    jump = page.get_by_role("button", name=re.compile(r"^Jump in with"))
    expect(result.or_(mine).or_(jump).first).to_be_visible(timeout=60_000)
    if result.is_visible():
        return False
    version = board(page).get_attribute("data-version") or ""
    for _ in range(6):  # the card, then at most a colour or seat and the call
        choices = solo(page).locator("[data-target^='choice:']")
        if choices.count():
            call = solo(page).locator("[data-target='choice:call:yes']")
            (call if call.count() else choices.first).click()
            continue
        if jump.is_visible() and jump.is_enabled():
            jump.click()
            continue
        if board(page).get_attribute("data-version") != version or not mine.count():
            break
        cards = solo(page).locator("[role=button][data-target^='card:']")
        keep = solo(page).locator("button[data-target='pass']")
        draw = solo(page).locator("button[data-target='draw']")
        if cards.count():
            expect(cards.first).to_have_attribute("aria-label", re.compile(r", (playable|jump in)"))
            cards.first.click()
        elif keep.count():
            keep.click()
        elif draw.count():
            draw.click()
        else:
            break
        if not solo(page).locator("[data-target^='choice:']").count():
            break
    expect(board(page)).not_to_have_attribute("data-version", version, timeout=60_000)
    return True


def play_to_end(page: Page, max_actions: int = 800) -> str:
    for _ in range(max_actions):
        if not one_action(page):
            break
    text = page.locator(".result-text")
    expect(text).to_have_text(re.compile(r"won|lost"), timeout=60_000)
    expect(text).to_contain_text("Final points")
    return text.inner_text()


def test_guest_plays_a_whole_solo_game_against_bots(page: Page, screenshots: Path | None) -> None:
    start(page, "sol", players=3)
    expect(solo(page).get_by_role("img", name=re.compile(r"^Discard pile top: "))).to_be_visible()
    expect(solo(page).locator("[aria-label^='Draw pile']")).to_have_count(1)
    expect(solo(page).locator("[data-seat]")).to_have_count(3)  # the seats, as card counts
    for _ in range(3):
        one_action(page)
    shoot(page, screenshots, "solo")
    text = play_to_end(page)
    # the board says it too, in words
    expect(solo(page).locator(".solo-status")).to_contain_text("Game over:")
    shoot(page, screenshots, "solo-end")
    assert "Final points" in text


TURNS_FOR_A_JUMP_IN = 60
"""Turns of this seat to wait for a jump-in at most. It draws until it may play a card it holds
twice (a bigger hand holds more pairs), plays one, and jumps in on its own card with the other
(S11, revised): chances come every few turns, so 60 without a jump-in is not a deal but a fault."""

LIVE_JUMP = """() => {
  const button = [...document.querySelectorAll("button.jump-in")].find((b) => !b.disabled);
  const top = document.querySelector(".solo-board[data-turn='other'] [data-top]");
  return button && top && [button.getAttribute("aria-label"), top.getAttribute("aria-label")];
}"""
"""The live Jump in button's name and the discard pile's top, read at one moment (the window may
close any time), or null."""


@pytest.mark.timeout(900)
def test_a_jump_in_is_played_by_its_button(page: Page) -> None:
    """S11: out of turn, the one Jump in button goes live while this seat holds the top card's
    twin (LegalMoves for the seat at the version shown; here on its own card, just played), and
    a click plays the twin out of turn. A click after the window closed is refused (the game
    moved on): the next chance is taken."""
    start(page, "jo", players=2, window_ms=1000)
    live = page.get_by_role("button", name=re.compile(r"^Jump in with")).and_(
        page.locator("button:enabled")
    )
    log = page.get_by_label("Moves so far")
    for _ in range(TURNS_FOR_A_JUMP_IN):
        expect(page.locator(".solo-board[data-turn='me'], .result:visible").first).to_be_visible(
            timeout=60_000
        )
        if page.locator(".result").is_visible():
            new_game(page, players=2)  # a new deal, the same player
            continue
        pair = page.evaluate(
            """() => {
              const all = (q) => [...document.querySelectorAll(q)];
              const hand = all(".solo-board [data-card]").map((g) => g.dataset.card);
              const playable = all(".solo-board [role=button][data-target^='card:']")
                .map((g) => g.dataset.target.slice(5));
              const twice = (c) => hand.filter((h) => h === c).length >= 2;
              return playable.find((c) => !c.startsWith("W") && twice(c)) ?? null;
            }"""
        )
        if pair is None:
            draw_a_card(page)
            continue
        version = board(page).get_attribute("data-version") or ""
        solo(page).locator(f"[role=button][data-target='card:{pair}']").first.click()
        call = solo(page).locator("[data-target='choice:call:yes']")
        if call.count():
            call.click()
        expect(board(page)).not_to_have_attribute("data-version", version, timeout=30_000)
        try:
            seen = page.wait_for_function(LIVE_JUMP, polling="raf", timeout=5_000).json_value()
        except PlaywrightTimeoutError:  # the bot moved first
            continue
        name, label = seen
        top = label.removeprefix("Discard pile top: ").split(",")[0]
        assert name == f"Jump in with {top}", seen  # the twin of the top card
        version = board(page).get_attribute("data-version") or ""
        try:
            live.click(timeout=2_000)
        except PlaywrightTimeoutError:  # the window closed first
            continue
        expect(board(page)).not_to_have_attribute("data-version", version, timeout=30_000)
        if "you jumped in with" in (log.text_content() or ""):
            expect(log).to_contain_text(f"you played {top}")
            expect(log).to_contain_text(f"you jumped in with {top}")
            return
    pytest.fail(f"no jump-in was played in {TURNS_FOR_A_JUMP_IN} turns")


def test_a_pass_ends_the_jump_in_window_for_the_bots(page: Page) -> None:
    """Out of turn, Pass says "no jump-in from me" at the version shown (PassJumpIn): the one
    person at the table has passed, so the window ends and the bot plays on."""
    start(page, "pat", players=2, window_ms=5000)
    for _ in range(20):  # until the bot is to move after this seat's move
        expect(
            page.locator(".solo-board[data-turn='me'], .solo-board[data-turn='other']").first
        ).to_be_visible()
        if page.locator(".solo-board[data-turn='other']").count():
            break
        one_action(page)
    else:
        pytest.fail("the bot was never to move")
    version = board(page).get_attribute("data-version") or ""
    with page.expect_response("**/tabletop.solo.v1.SoloService/PassJumpIn") as answer:
        solo(page).get_by_role("button", name=re.compile(r"^Pass: no jump-in")).click()
    reply = common_pb2.PassJumpInResponse.FromString(answer.value.body())
    assert (reply.version, reply.window_ended) == (int(version), True), reply
    expect(board(page)).not_to_have_attribute("data-version", version)


def draw_a_card(page: Page) -> None:
    """This seat's turn by drawing (a draw stack taken, the drawn card kept) where it may: its
    hand grows."""
    version = board(page).get_attribute("data-version") or ""
    for target in ("draw", "pass"):
        button = solo(page).locator(f"button[data-target='{target}']:enabled")
        if not button.count():
            continue
        try:
            button.click(timeout=5_000)
        except PlaywrightTimeoutError:  # drawn again meanwhile: the loop looks again
            return
        expect(board(page)).not_to_have_attribute("data-version", version, timeout=30_000)
        version = board(page).get_attribute("data-version") or ""
        if not page.locator(".solo-board[data-turn='me']").count():
            return
    if page.locator(".solo-board[data-turn='me']").count():
        one_action(page)


def test_solo_board_at_375_pixels_by_keyboard(
    browser: Browser, web_url: str, screenshots: Path | None
) -> None:
    """On a phone's width: the board fits, and a move is made with the keyboard alone."""
    context = new_context(browser, web_url, width=375, height=800)
    try:
        page = context.new_page()
        start(page, "kim", players=2)
        expect(page.locator(".solo-board[data-turn='me']")).to_be_visible(timeout=60_000)
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 375
        version = board(page).get_attribute("data-version") or ""
        playable = "[role=button][data-target^='card:'], button[data-target='draw']"
        target = solo(page).locator(playable).first
        expect(target).to_have_attribute("aria-label", re.compile(r"playable|[Dd]raw"))
        target.focus()
        expect(target).to_be_focused()
        page.keyboard.press("Enter")
        for _ in range(3):  # a colour, a seat, the call: Enter on the choice focused first
            if board(page).get_attribute("data-version") != version:
                break
            if not solo(page).locator("[data-target^='choice:']").count():
                break
            expect(solo(page).locator("[data-target^='choice:']").first).to_be_focused()
            page.keyboard.press("Enter")
        expect(board(page)).not_to_have_attribute("data-version", version)
        shoot(page, screenshots, "solo-375")
    finally:
        context.close()


# --------------------------------------------------------------------------------------------
# S14: what the browser received


def _message(path: str) -> Any:
    """The answer type of the method at a URL's path (/<service>/<method>)."""
    service, method = path.strip("/").split("/")[-2:]
    pool = descriptor_pool.Default()
    output = pool.FindServiceByName(service).FindMethodByName(method).output_type
    return message_factory.GetMessageClass(output)


def decode(url: str, kind: str, body: bytes) -> list[dict[str, Any]]:
    """The messages of an answer as the client read them (Connect, binary): a unary body is one
    message; a stream is enveloped messages and a JSON end; an error is JSON."""
    path = url.split("?", 1)[0].split("://", 1)[1].split("/", 1)[1]
    if kind.startswith("application/json"):
        return [json.loads(body or b"{}")]
    if kind.startswith("application/proto"):
        return [MessageToDict(_message(path).FromString(body), preserving_proto_field_name=True)]
    if kind.startswith("application/connect+proto"):
        out, at = [], 0
        while at + 5 <= len(body):
            flags, length = struct.unpack(">BI", body[at : at + 5])
            data = body[at + 5 : at + 5 + length]
            at += 5 + length
            if flags & 2:
                out.append(json.loads(data or b"{}"))
            else:
                message = _message(path).FromString(data)
                out.append(MessageToDict(message, preserving_proto_field_name=True))
        return out
    return []


TEE = """
(() => {
  const answers = (window.__answers = []);
  const fetch0 = window.fetch.bind(window);
  window.fetch = async (input, init) => {
    const response = await fetch0(input, init);
    if (!response.url.includes("/tabletop.") || !response.body) return response;
    const chunks = [];
    answers.push({
      url: response.url, type: response.headers.get("content-type") || "",
      data: () => {
        const bytes = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
        let at = 0;
        for (const c of chunks) { bytes.set(c, at); at += c.length; }
        let text = "";
        for (const b of bytes) text += String.fromCharCode(b);
        return btoa(text);
      },
    });
    const [mine, theirs] = response.body.tee();
    (async () => {
      const reader = theirs.getReader();
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          chunks.push(value);
        }
      } catch {}
    })();
    const { status, statusText, headers } = response;
    return new Response(mine, { status, statusText, headers });
  };
})();
"""
"""Keeps a copy of every API answer's bytes in the page as they arrive (window.__answers)."""


PUBLIC = {"discard", "top", "log", "move", "played", "round_started", "round_ended", "text"}
"""Fields whose cards everyone sees: the discard pile, the public log, a played card, the move
as played, the card turned over, the hands shown at a round's end (S14), and a finished game's
archived record (its moves and those hands; docs/archive.md), which the table fetches for its
Replay link."""


def cards_in(value: Any, public: bool = False, key: str = "") -> Iterator[tuple[str, bool]]:
    """Every card named anywhere in a decoded message, and whether it stands in a public field."""
    public = public or key in PUBLIC
    if isinstance(value, Mapping):
        for k, v in value.items():
            yield from cards_in(v, public, k)
    elif isinstance(value, list):
        for item in value:
            yield from cards_in(item, public, key)
    elif isinstance(value, str):
        for token in re.split(r"[\s:@!,;()\"']+", value):
            if CARD.match(token):
                yield token, public


def version_of(message: Mapping[str, Any]) -> int | None:
    """The version a message is of (0 is left out of a decoded message, as every default)."""
    for holder in ("envelope", "status"):
        if holder in message:
            return int(message[holder].get("version", 0))
    if "text" in message:  # an ArchivedGame: the game as it ended
        return None
    if "game_id" in message and "moves" in message:  # LegalMovesResponse
        return int(message.get("version", 0))
    return None


def hands_by_version(redis: Redis, game_id: str, players: int) -> dict[int, list[list[str]]]:
    """Every seat's hand after each version, as the server's own record of the game (its event
    stream, private events included) tells it."""
    hands: list[list[str]] = [[] for _ in range(players)]
    out: dict[int, list[list[str]]] = {}
    entries: list[tuple[bytes, dict[bytes, bytes]]] = redis.xrange(keys.game_events(game_id))  # type: ignore[assignment]
    for entry_id, fields in entries:
        for event in json.loads(fields[b"events"]):
            kind, data = event["kind"], event["data"]
            if kind == "dealt":
                hands[data["seat"]] = list(data["cards"])
            elif kind == "play":
                hands[data["seat"]].remove(data["card"])
            elif kind == "drew_cards":
                hands[data["seat"]].extend(data["cards"])
            elif kind == "swapped":
                a, b = data["seats"]
                hands[a], hands[b] = hands[b], hands[a]
            elif kind == "hands_passed":
                way = data["direction"]
                hands = [hands[(seat - way) % players] for seat in range(players)]
        out[keys.version_of_entry_id(entry_id.decode())] = [hand[:] for hand in hands]
    return out


def test_no_card_of_another_seat_reaches_the_browser(page: Page, redis_url: str) -> None:
    whole: dict[str, list[bytes]] = {}
    failed: list[str] = []

    def finished(request: Request) -> None:
        """Each answer's body as soon as the browser has all of it."""
        response = request.response()
        if response is not None and "/tabletop." in request.url:
            whole.setdefault(request.url, []).append(response.body())

    page.on("requestfinished", finished)
    # (a stream the page left before its first message had no answer at all: nothing to read)
    page.on(
        "requestfailed",
        lambda request: failed.append(request.url) if request.response() is not None else None,
    )
    # A stream the page ends itself (a Watch it leaves) fails for Playwright, which then has no
    # body for it: the page's own copy of every answer's bytes, as they arrive, keeps them.
    page.add_init_script(TEE)
    start(page, "sam", players=3)
    play_to_end(page)
    game_id = page.url.rsplit("/", 1)[1]

    decoded: list[tuple[str, dict[str, Any]]] = []
    received = [
        (url, kind, base64.b64decode(data))
        for url, kind, data in page.evaluate("window.__answers.map(a => [a.url, a.type, a.data()])")
    ]
    # the copy is the answers as Playwright saw them, and holds the ones it could not read
    for url, bodies in whole.items():
        copies = [body for u, _, body in received if u == url]
        assert all(body in copies for body in bodies), url
    assert {url for url in failed if "/tabletop." in url} <= {url for url, _, _ in received}
    for url, kind, body in received:
        for message in decode(url, kind, body):
            decoded.append((url, message))
    views = [m for url, m in decoded if url.endswith("SoloService/GetView") and "view" in m]
    assert views, "the browser fetched no view"
    me = {int(m["seat"]) for m in views if "seat" in m}
    assert len(me) == 1, f"views of seats {me}"
    seat = me.pop()

    redis = Redis.from_url(redis_url)
    try:
        hands = hands_by_version(redis, game_id, 3)
        snapshot = json.loads(redis.hget(keys.game_state(game_id), "snapshot") or b"{}")
    finally:
        redis.close()
    last = max(hands)
    stored = [Counter(hand) for hand in snapshot["hands"]]
    assert [Counter(hand) for hand in hands[last]] == stored, "the record and the game disagree"

    def mine_until(version: int) -> Counter[str]:
        """Every card this seat has held up to `version`, each as often as it held it at once."""
        out: Counter[str] = Counter()
        for v, at in hands.items():
            if v <= version:
                out |= Counter(at[seat])
        return out

    checked = secret = 0
    for url, message in decoded:
        version = version_of(message)
        at = last if version is None else version
        known = mine_until(at)
        found = list(cards_in(message))
        private = {card for card, public in found if not public}
        shown = {card for card, public in found if public}
        # every card outside the public fields is one this seat held
        assert private <= set(known), f"{url} at version {at}: {private - set(known)} not mine"
        # private events name this seat only
        for event in message.get("events", []):
            for kind in ("dealt", "drew_cards"):
                if kind in event:
                    assert int(event[kind].get("seat", 0)) == seat, f"{url}: {kind} of another seat"
        if url.endswith("SoloService/GetView") and "seat" in message:
            # the seat's own view holds its hand as the server has it, and nothing else
            assert int(message["seat"]) == seat
            assert Counter(message["view"].get("hand", [])) == Counter(hands[at][seat]), at
        # the other seats' cards: none of those this seat never held shows unless it is public
        others = {card for s, hand in enumerate(hands.get(at, [])) if s != seat for card in hand}
        hidden = others - set(known) - shown
        leaked = hidden & {card for card, _ in found}
        assert not leaked, f"{url} at version {at} shows {leaked} of another seat"
        checked += 1
        secret += len(hidden)
    assert checked > 20, checked
    assert secret > 0, "the other seats never held a card this seat did not"
