"""The terminal client without a server: what typed lines mean (fuzzed per game), the table's
command handling against a fake game service backed by the real engine, event sentences and
results for whole random games, option checking, and the saved identity."""

from __future__ import annotations

import asyncio
import io
import itertools
import os
import random
import re
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import grpc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.console import Console

import games
from client.identity import Identity, identity_file, load_identity, save_identity
from client.interpret import Command, Nothing, Send, Tell, interpret
from client.narrate import describe_result, describe_update
from client.notation import notation_error
from client.play import Table, game_options
from client.runner import UsageError
from engines.contract import GameError, State, visible_events
from services.game.core import status_of
from tabletop.common.v1 import common_pb2
from tests.timing import patience
from wire.errors import ApiError
from wire.records import GameMeta
from wire.status import status_message

GAMES = ("esoloe", "solo", "solace", "zoxso")
OPTIONS: dict[str, dict[str, Any]] = {
    "esoloe": {},
    "solo": {"players": 3, "mode": "rounds", "rounds": 1},
    "solace": {},
    "zoxso": {"max_plies": 90},
}
NAMES = ["Alice", "random bot", "random bot"]
ME = 0


def _meta(game: str, state: State) -> GameMeta:
    seats = state.num_seats
    return GameMeta(
        game=game,
        seats=[f"p-{i}" for i in range(seats)],
        names=NAMES[:seats],
        edition=state.edition,
    )


def _status(game: str, state: State, version: int) -> common_pb2.GameStatus:
    return status_message(f"{game}-0", version, _meta(game, state), status_of(state))


def _view(game: str, state: State, version: int, seat: int) -> Any:
    adapter = games.get(game).adapter
    return adapter.view_response(
        status=_status(game, state, version), seat=seat, view=adapter.view(state.view(seat))
    )


@dataclass(frozen=True)
class Snapshot:
    legal: tuple[str, ...]
    view: Any


@dataclass
class Playout:
    snapshots: list[Snapshot]
    updates: list[Any]
    final: common_pb2.GameStatus


def _step(state: State, rng: random.Random) -> tuple[int, str]:
    seat = rng.choice(state.to_act())
    return seat, rng.choice(state.legal_moves(seat))


@cache
def playout(game: str, seed: int) -> Playout:
    """A random game seen from seat ME: a snapshot (legal moves, view) before every move, the
    Watch message of every move, and the final status."""
    adapter = games.get(game).adapter
    state = games.rules(game).new_game(seed, OPTIONS[game])
    rng = random.Random(seed)
    snapshots: list[Snapshot] = []
    updates: list[Any] = []
    version = 0
    while not state.finished and version < 5000:
        if version < 200:
            legal = tuple(state.legal_moves(ME))
            snapshots.append(Snapshot(legal, _view(game, state, version, ME)))
        seat, move = _step(state, rng)
        state, events = state.apply(seat, move)
        version += 1
        updates.append(
            adapter.watch_response(
                envelope=common_pb2.EventEnvelope(
                    game_id=f"{game}-0", version=version, actor=seat, move=move
                ),
                status=_status(game, state, version),
                events=[adapter.event(e) for e in visible_events(events, ME)],
            )
        )
    assert state.finished
    return Playout(snapshots, updates, _status(game, state, version))


def snapshots(game: str) -> list[Snapshot]:
    return [snap for seed in (1, 2) for snap in playout(game, seed).snapshots]


def _swap_case(text: str, flips: Sequence[bool]) -> str:
    return "".join(c.swapcase() if flips[i % len(flips)] else c for i, c in enumerate(text))


# ---- the pure interpretation of a line

ANY_LINE = st.one_of(
    st.text(max_size=30),
    st.text(alphabet="abcdefghMDXBC12345678 -^@:!WrgbySRplayw", max_size=14),
    st.sampled_from(["help", "QUIT", " Board ", "resign", "yes", "no", "r5", "play", "solo", "!"]),
)


@pytest.mark.parametrize("game", GAMES)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), line=ANY_LINE)
def test_any_typed_line_is_understood_or_explained(game: str, data: Any, line: str) -> None:
    snap = data.draw(st.sampled_from(snapshots(game)))
    for legal, view in ((list(snap.legal), snap.view), (None, None), ([], snap.view)):
        action = interpret(line, game, legal, view)
        assert isinstance(action, Command | Send | Tell | Nothing)
        if isinstance(action, Send):
            # Nothing that is not notation is ever sent.
            assert notation_error(game, action.move) is None, action
        if isinstance(action, Tell):
            assert action.text


@pytest.mark.parametrize("game", GAMES)
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), flips=st.lists(st.booleans(), min_size=1, max_size=8))
def test_a_legal_move_typed_in_any_case_is_played_as_itself(
    game: str, data: Any, flips: list[bool]
) -> None:
    snap = data.draw(st.sampled_from([s for s in snapshots(game) if s.legal]))
    legal = list(snap.legal)
    move = data.draw(st.sampled_from(legal))
    action = interpret(move, game, legal, snap.view)
    assert isinstance(action, Send)
    assert action.move == move
    typed = "  " + _swap_case(move, flips) + " "
    same = [m for m in legal if m.lower() == move.lower()]
    action = interpret(typed, game, legal, snap.view)
    if typed.strip() in legal:  # the other case is a legal move of its own
        assert isinstance(action, Send)
        assert action.move == typed.strip()
    elif len(same) == 1:
        assert isinstance(action, Send)
        assert action.move == move
    else:
        assert isinstance(action, Tell)
        assert f"`{move}`" in action.text


def test_zoxso_and_solo_lines_are_read_forgivingly() -> None:
    assert interpret("m@a8", "zoxso", ["M@a8", "D@a8"]) == Send(
        "M@a8", note="read 'm@a8' as 'M@a8'"
    )
    assert interpret("b2^b2", "zoxso", ["b2^B2", "b2-b3"]).move == "b2^B2"  # type: ignore[union-attr]
    both = interpret("b2^b2", "zoxso", ["b2^B2", "B2^b2"])
    assert isinstance(both, Tell)
    assert "`b2^B2` or `B2^b2`" in both.text
    assert interpret("r5", "solo", ["play r5", "draw"]).move == "play r5"  # type: ignore[union-attr]
    assert interpret("R5!", "solo", ["play r5!", "play r5"]).move == "play r5!"  # type: ignore[union-attr]
    assert interpret("DRAW", "solo", ["play r5", "draw"]).move == "draw"  # type: ignore[union-attr]
    for word, command in (("HELP", "help"), ("Quit", "quit"), (" board", "board"), ("?", "help")):
        assert interpret(word, "esoloe", ["c12"]) == Command(command)
    typo = interpret("z12", "esoloe", ["c12", "c13", "a12"])
    assert isinstance(typo, Tell)
    assert "square 'z' does not exist" in typo.text
    assert "closest legal moves: " in typo.text
    # Where the notation's case is never ambiguous, a line is read in it even before the legal
    # moves are known: a jump-in typed in a hurry is not refused as "not a move".
    assert interpret("C12", "esoloe", None) == Send("c12", note="read 'C12' as 'c12'")
    assert interpret("w:r", "solo", None) == Send("play W:r", note="read 'w:r' as 'play W:r'")
    late = interpret("w:r", "solo", [])
    assert isinstance(late, Tell)
    assert "not a move" not in late.text
    not_mine = interpret("c12", "esoloe", [])
    assert isinstance(not_mine, Tell)
    assert "legal move" in not_mine.text


def test_a_play_down_to_one_card_is_reminded_of_the_call() -> None:
    action = interpret("r5", "solo", ["play r5", "play r5!", "draw"])
    assert isinstance(action, Send)
    assert action.move == "play r5"
    assert "`play r5!`" in action.note


def test_solo_explains_a_card_you_do_not_hold() -> None:
    snap = next(s for s in snapshots("solo") if s.legal and s.view.view.hand)
    absent = next(
        card
        for card in ("r1", "g2", "b3", "y4", "r9", "gS", "bR", "yD", "W", "WX")
        if card not in snap.view.view.hand
    )
    action = interpret(absent, "solo", list(snap.legal), snap.view)
    assert isinstance(action, Tell)
    assert f"you do not hold {absent}" in action.text


# ---- the table's command handling, against a fake game service


class FakeGame:
    """A game service backed by the engine: the seat ME is the client's, every other seat plays
    at random (like bots) until ME may act again."""

    def __init__(self, game: str, seed: int) -> None:
        self.game = game
        self.state = games.rules(game).new_game(seed, OPTIONS[game])
        self.version = 0
        self.rng = random.Random(seed)
        self.calls: list[str] = []
        self._others()

    def _others(self) -> None:
        while not self.state.finished and ME not in self.state.public_to_act():
            seat = self.rng.choice([s for s in self.state.to_act() if s != ME])
            move = self.rng.choice(self.state.legal_moves(seat))
            self.state, _ = self.state.apply(seat, move)
            self.version += 1

    def _refuse(self, error: ApiError) -> grpc.aio.AioRpcError:
        status = error.to_status()
        return grpc.aio.AioRpcError(
            status.code,
            grpc.aio.Metadata(),
            grpc.aio.Metadata(*status.trailing_metadata),
            details=status.details,
        )

    async def GetView(self, request: Any, **call: Any) -> Any:
        self.calls.append("GetView")
        return _view(self.game, self.state, self.version, -1 if request.public else ME)

    async def LegalMoves(self, request: Any, **call: Any) -> Any:
        self.calls.append("LegalMoves")
        return common_pb2.LegalMovesResponse(
            game_id=request.game_id,
            version=self.version,
            seat=ME,
            moves=[] if self.state.finished else self.state.legal_moves(ME),
        )

    async def Play(self, request: Any, **call: Any) -> Any:
        self.calls.append(f"Play {request.move}")
        try:
            self.state, events = self.state.apply(ME, request.move)
        except GameError as error:
            raise self._refuse(ApiError.from_game_error(error)) from None
        self.version += 1
        self._others()  # the bots answer at once (the table here has no Watch stream)
        status = _status(self.game, self.state, self.version)
        adapter = games.get(self.game).adapter
        return adapter.play_response(
            status=status, events=[adapter.event(e) for e in visible_events(events, ME)]
        )

    async def PassJumpIn(self, request: Any, **call: Any) -> Any:
        self.calls.append(f"PassJumpIn {request.version}")
        return common_pb2.PassJumpInResponse(
            game_id=request.game_id, version=request.version, seat=ME, passed=[ME]
        )

    async def Resign(self, request: Any, **call: Any) -> Any:
        self.calls.append("Resign")
        self.state, _ = self.state.resign(ME)
        self.version += 1
        return games.get(self.game).adapter.play_response(
            status=_status(self.game, self.state, self.version)
        )


class FakeSession:
    target = "fake:0"
    metadata = (("authorization", "Bearer fake"),)

    def __init__(self, stub: FakeGame) -> None:
        self.stub = stub

    def game(self, game: str) -> FakeGame:
        return self.stub


async def _at_table(game: str, seed: int, lines: Sequence[str]) -> tuple[Table, FakeGame, str]:
    fake = FakeGame(game, seed)
    out = io.StringIO()
    console = Console(file=out, highlight=False, markup=False, soft_wrap=True, width=100)
    table = Table(FakeSession(fake), game, f"{game}-0", ME, console)  # type: ignore[arg-type]
    await table._view()
    for line in lines:
        if not await asyncio.wait_for(table.command(line), patience(10)):
            break
    return table, fake, out.getvalue()


TABLE_LINE = st.one_of(
    ANY_LINE,
    st.sampled_from(["auto", "board", "help", "wait", "resign", "yes", "no", "quit"]),
)


@pytest.mark.parametrize("game", GAMES)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 3), lines=st.lists(TABLE_LINE, max_size=8))
def test_the_table_handles_any_input(game: str, seed: int, lines: list[str]) -> None:
    _, fake, out = asyncio.run(_at_table(game, seed, lines))
    assert "Traceback" not in out
    # Only a confirmed resignation resigns.
    confirmed = any(
        a.strip().lower() == "resign" and b.strip().lower() == "yes"
        for a, b in itertools.pairwise(lines)
    )
    if "Resign" in fake.calls:
        assert confirmed


@pytest.mark.parametrize("game", GAMES)
async def test_resigning_asks_first(game: str) -> None:
    table, fake, out = await _at_table(game, 0, ["resign", "no", "board"])
    assert f"resign game {game}-0? type yes" in out
    assert "not resigned" in out
    assert "Resign" not in fake.calls
    table, fake, out = await _at_table(game, 0, ["Resign", "YES", "board"])
    assert "you resigned" in out
    assert fake.calls.count("Resign") == 1
    assert table.status.finished


async def test_a_typed_legal_move_in_another_case_reaches_the_server_as_the_legal_move() -> None:
    fake = FakeGame("zoxso", 0)
    move = fake.state.legal_moves(ME)[0]  # a Phase 1 placement, e.g. M@b2
    _, fake2, out = await _at_table("zoxso", 0, [move.lower()])
    assert f"Play {move}" in fake2.calls, out


# ---- events and results in words


@pytest.mark.parametrize("game", GAMES)
@pytest.mark.parametrize("seed", [1, 2])
def test_every_event_of_a_whole_game_reads_as_a_sentence(game: str, seed: int) -> None:
    run = playout(game, seed)
    for update in run.updates:
        line = describe_update(game, update, ME)
        assert line.startswith(f"#{update.envelope.version} "), line
        assert not re.search(r"target 0|[{}]|_|p-\d", line), line  # no proto dumps, no ids
        if update.events:
            assert len(line) > len(f"#{update.envelope.version} x"), line
    for me in (ME, 1, -1):
        if game == "solace" and me == 1:
            continue
        result = describe_result(run.final, me, run.updates[-1].events)
        assert result
        assert not re.search(r"[{}]|p-\d", result), result
        assert "game over" not in result  # the client says it once, itself
    if game == "solo":
        text = describe_result(run.final, ME)
        assert re.search(r"(you won|wins|share the win) with \d+ points?", text), text


def test_solo_penalty_and_results_read_as_the_issue_asks() -> None:
    from tabletop.solo.v1 import solo_pb2

    status = common_pb2.GameStatus(
        game="solo",
        seats=[
            common_pb2.Seat(index=0, player_id="p-1", name="Alice"),
            common_pb2.Seat(index=1, player_id="p-2", name="Bob"),
        ],
        finished=True,
    )
    update = solo_pb2.WatchResponse(
        envelope=common_pb2.EventEnvelope(version=7, actor=1, move="play r5"),
        status=status,
        events=[
            solo_pb2.Event(played=solo_pb2.Played(seat=1, card="W", colour="b")),
            solo_pb2.Event(
                drew=solo_pb2.Drew(seat=0, count=2, reason=solo_pb2.DRAW_REASON_PENALTY)
            ),
            solo_pb2.Event(played=solo_pb2.Played(seat=1, card="r5")),
        ],
    )
    line = describe_update("solo", update, 0)
    assert line == (
        "#7 Bob played W and named blue; you drew 2 cards (penalty: you did not call Solo); "
        "Bob played r5"
    )
    status.result.winners.append(0)
    status.result.scores[0] = 212
    status.result.scores[1] = 180
    assert describe_result(status, 1) == "Alice wins with 212 points; you 180"
    assert describe_result(status, 0) == "you won with 212 points; Bob 180"


# ---- options and the saved identity


def test_options_are_the_documented_names_and_unknown_ones_list_them() -> None:
    assert game_options("zoxso", {"max_plies": 100}).zoxso.max_plies == 100
    assert game_options("solace", {"no_monochrome": True}).solace.no_monochrome
    with pytest.raises(UsageError) as caught:
        game_options("zoxso", {"maxPlies": 100})
    assert "zoxso options are: max_plies" in str(caught.value)
    with pytest.raises(UsageError) as caught:
        game_options("solo", {"plyers": 3})
    message = str(caught.value)
    for name in ("players", "start_points", "mode", "rounds", "mixed_stacking"):
        assert name in message
    assert not re.search(r"[a-z][A-Z]", message)  # never camelCase
    with pytest.raises(UsageError, match="esoloe has no options"):
        game_options("esoloe", {"x": 1})
    with pytest.raises(UsageError, match="mode is one of points, rounds"):
        game_options("solo", {"mode": "fast"})
    with pytest.raises(UsageError, match="whole number"):
        game_options("solo", {"players": "four"})


def test_the_identity_is_kept_per_gateway_for_its_owner_only(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TABLETOP_STATE_DIR", str(tmp_path / "state"))
    assert load_identity("127.0.0.1:1") is None
    first = Identity("token-1", "p-1", "Alice", expires_at=4e9)
    save_identity("127.0.0.1:1", first)
    save_identity("127.0.0.1:2", Identity("token-2", "p-2", "Bob", expires_at=4e9))
    assert load_identity("127.0.0.1:1") == first
    assert load_identity("127.0.0.1:2") == Identity("token-2", "p-2", "Bob", 4e9)
    mode = stat.S_IMODE(os.stat(identity_file()).st_mode)
    assert mode == 0o600
    assert not Identity("t", "p", "n", expires_at=1.0).valid()
    identity_file().write_text("not json")
    assert load_identity("127.0.0.1:1") is None  # a damaged file: log in anew


def _jump_in_position() -> tuple[State, int]:
    """A Solo position where seat ME may jump in while another seat is to move."""
    for seed in range(200):
        state = games.rules("solo").new_game(seed, OPTIONS["solo"])
        rng = random.Random(seed)
        for version in range(1, 300):
            seat, move = _step(state, rng)
            state, _ = state.apply(seat, move)
            if state.finished:
                break
            if ME not in state.public_to_act() and state.legal_moves(ME):
                return state, version
    raise AssertionError("no jump-in in 200 games")


async def test_a_jump_in_chance_is_announced_the_moment_it_exists() -> None:
    state, version = _jump_in_position()
    fake = FakeGame("solo", 0)
    fake.state, fake.version = state, version
    out = io.StringIO()
    console = Console(file=out, highlight=False, markup=False, soft_wrap=True, width=100)
    table = Table(FakeSession(fake), "solo", "solo-0", ME, console)  # type: ignore[arg-type]
    adapter = games.get("solo").adapter
    update = adapter.watch_response(
        envelope=common_pb2.EventEnvelope(game_id="solo-0", version=version, actor=1, move="x"),
        status=_status("solo", state, version),
    )
    await table._on_update(update)
    jumps = [m for m in state.legal_moves(ME) if m.startswith("play ")]
    offer = f"you may jump in now: {', '.join(jumps)}  (j: jump in, n: pass, bots go on)"
    assert offer in out.getvalue()
    await table._on_update(update)  # the same chance again: said once
    assert out.getvalue().count("you may jump in now") == 1
    assert await table.command("n")  # one keystroke passes at the version shown
    assert f"PassJumpIn {version}" in fake.calls
    assert f"you pass at #{version}: the bots go on once everyone" in out.getvalue()
    assert await table.command("j")  # one keystroke jumps in: a race
    assert f"Play {jumps[0]}" in fake.calls


# ---- each game's board is its own package's


def test_every_game_has_its_board_and_the_client_knows_no_game() -> None:
    from pathlib import Path

    from client.boards import PLAIN, board_of
    from games.board import Board

    for game in GAMES:
        board: Board = games.get(game).part("board").BOARD
        assert board_of(game) is board
        assert board is not PLAIN
    # A game without a board module (or one this client does not know) is still shown.
    assert board_of("no-such-game") is PLAIN
    snap = snapshots("zoxso")[0]
    out = io.StringIO()
    Console(file=out, highlight=False, markup=False, width=100).print(PLAIN.draw(snap.view, ME))
    assert "throne" in out.getvalue()
    run = playout("esoloe", 1)
    assert PLAIN.events(run.updates[0], ME) == []
    assert re.match(r"(a draw|you won|random bot wins)", PLAIN.result(run.final, ME))
    # client/ holds generic code only: no game's proto, no test of a game's name.
    names = "|".join(games.names())
    for path in Path(__file__).parents[1].joinpath("client").glob("*.py"):
        source = path.read_text(encoding="utf-8")
        assert not re.search(rf"tabletop\.({names})\.|games\.({names})\b", source), path
        assert not re.search(rf"""[!=]= ?["']({names})["']""", source), path


def test_every_command_run_by_its_name_has_that_function() -> None:
    """`tabletop history` runs client/archive.py's `history`, and so on: a command whose module
    lacks the function of its name would fail only when someone ran it."""
    import importlib

    from client import cli

    by_name = [(c.name, c.run.module) for c in cli.COMMANDS if isinstance(c.run, cli._In)]
    assert len(by_name) >= 20
    for name, module in by_name:
        assert callable(getattr(importlib.import_module(f"client.{module}"), name, None)), name
