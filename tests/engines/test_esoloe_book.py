"""e-SOLO-e's book (games/esoloe/book.py): built from collected positions, resumed where it
stopped, its values and moves checked with the plain search of test_esoloe_solver, and played by
the bots where it holds the position (elsewhere they play as without it)."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import pytest

from engines.bots.base import Turn
from games.esoloe import book, bots, solver
from games.esoloe.rules import EsoloeState
from games.esoloe.solver import LOSS, WIN, Solver
from tests.engines.test_esoloe_solver import deep_positions, plain_value


@pytest.fixture
def tiny_books(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The bots' book of edition 2 is a file of the test's (none at first)."""
    path = tmp_path / "book-e2.jsonl.gz"
    monkeypatch.setitem(solver.BOOKS, 2, path)
    monkeypatch.setattr(solver, "_RECORDED", {})
    monkeypatch.setattr(solver, "_BOOK_MOVES", {})
    monkeypatch.setattr(solver, "_SHARED", {})
    return path


def forget_loaded() -> None:
    """The next solver loads the record and the book afresh (they are read once a process)."""
    for cache in (solver._RECORDED, solver._BOOK_MOVES, solver._SHARED):
        cache.clear()


def write_positions(path: Path, states: list[EsoloeState]) -> None:
    counts = {solver.key_text(solver.canonical(state)): i + 1 for i, state in enumerate(states)}
    header: dict[str, object] = {"game": "esoloe", "edition": 2, "budget": 0.25}
    header["cubes"], header["deals"] = [4, 10], [7, 8, 9, 12]
    book.write_positions(path, header, counts)


def test_build_resumes_and_its_values_and_moves_are_right(tmp_path: Path) -> None:
    states = deep_positions(2, 5)
    positions, results, out = (tmp_path / name for name in ("pos.jsonl", "res.jsonl", "b.gz"))
    write_positions(positions, states)
    first = book.build(positions, results, out, 2, max_nodes=50_000, limit=2)
    assert first["done"] == 2
    again = book.build(positions, results, out, 2, max_nodes=50_000)
    assert again["done"] == len(states) == again["solved"]
    assert len(list(book.read_results(results))) == len(states)  # none solved twice
    with gzip.open(out, "rt", encoding="ascii") as src:
        header = json.loads(src.readline())
    assert header["book"]["deals"] == [[7, 9], [12, 12]]  # the deals used, for evaluations
    moves: dict[solver.Key, str] = {}
    search = Solver(2)
    assert search.load(out, moves) == len(states)
    values = set()
    for state in states:
        key = solver.canonical(state)
        value = search.known(state)
        assert value == plain_value(state)
        values.add(value)
        if value == LOSS:
            assert key not in moves
            continue
        booked = solver.state_from_key(key, 2)
        child, _ = booked.apply(booked.to_move or 0, moves[key])
        result = child.result()
        assert (result is not None and result.winners) or -plain_value(child) == value
    assert len(values) >= 2
    lines = book.stats(positions, results, out)
    assert any(f"{len(states)} solved" in line for line in lines)


def choose(state: EsoloeState) -> str:
    seat = state.to_move
    assert seat is not None
    turn = Turn("esoloe", seat, state.view(seat), state.legal_moves(seat), 0.0)
    move = bots.StrongBot(max_nodes=2_000).choose(turn, random.Random(0))
    assert move is not None
    return move


def child_key(state: EsoloeState, move: str) -> solver.Key:
    return solver.canonical(solver.placed(state, move))


def test_the_bot_plays_the_books_move_where_it_has_one(tiny_books: Path) -> None:
    """A won position with two winning moves to different positions: without the book the bot
    plays one; a book giving the other (in the frame of the position's key, a mirror or turn of
    it) makes it play that one. Another position is played as without the book."""
    chosen = None
    for state in deep_positions(2, 40):
        key = solver.canonical(state)
        if key == solver.stacks(state) or state.winning_placements(state.to_move or 0):
            continue  # the book's frame should differ from the position's
        search = Solver(2)
        if search.value(state) != WIN:
            continue
        keeping = {child_key(state, m): m for m in search.moves_keeping(state, WIN)}
        if len(keeping) >= 2:
            chosen = state, keeping
            break
    assert chosen is not None
    state, keeping = chosen
    other = deep_positions(2, 41)[-1]
    before, other_before = choose(state), choose(other)
    target = next(k for k in keeping if k != child_key(state, before))
    # The same placement in the key's own position.
    booked = solver.state_from_key(solver.canonical(state), 2)
    move = next(
        m for m in booked.legal_moves(booked.to_move or 0) if child_key(booked, m) == target
    )
    with gzip.open(tiny_books, "wt", encoding="ascii") as out:
        out.write(json.dumps({"game": "esoloe", "edition": 2, "values": 1}) + "\n")
        out.write(f"{solver.key_text(solver.canonical(state))} {WIN} {move}\n")
    forget_loaded()
    assert solver.book_move(state) is not None
    played = choose(state)
    assert child_key(state, played) == target != child_key(state, before)
    assert choose(other) == other_before
    assert solver.book_move(other) is None


def test_a_position_the_book_holds_lost_is_played_as_without_it(tiny_books: Path) -> None:
    lost = next(s for s in deep_positions(2, 40) if Solver(2).value(s) == LOSS)
    before = choose(lost)
    with gzip.open(tiny_books, "wt", encoding="ascii") as out:
        out.write(json.dumps({"game": "esoloe", "edition": 2, "values": 1}) + "\n")
        out.write(f"{solver.key_text(solver.canonical(lost))} {LOSS}\n")
    forget_loaded()
    assert solver.book_move(lost) is None
    assert solver.recorded_solver(2).known(lost) == LOSS
    assert choose(lost) == before


def test_the_books_values_and_moves_agree_with_a_fresh_solver() -> None:
    """A seeded sample of the committed book (positions after 9 cubes, the quickest to solve):
    a solver with no record nor book finds the same value, and the book's move keeps it."""
    path = solver.BOOKS[2]
    if not path.exists():
        pytest.skip(f"{path} is not built: make esoloe-book")
    moves: dict[solver.Key, str] = {}
    loaded = Solver(2)
    assert loaded.load(path, moves) > 0
    deep = sorted(key for key in loaded.exact() if sum(map(len, key)) >= 9)
    for key in random.Random(0).sample(deep, min(5, len(deep))):
        state = solver.state_from_key(key, 2)
        value = loaded.exact()[key]
        assert Solver(2).value(state, max_nodes=50_000) == value, key
        if value == LOSS:
            assert key not in moves
            continue
        child, _ = state.apply(state.to_move or 0, moves[key])
        result = child.result()
        if result is None:
            assert Solver(2).value(child, max_nodes=50_000) == -value, key
        else:
            assert tuple(result.winners) == (state.to_move,), key
