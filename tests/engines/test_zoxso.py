"""ZoxSo engine tests: every ruling Z1-Z10, notation, refusals, perft counts, properties, and the
rules editions (edition 2 plays the revised Z9; edition 1 the rules before it)."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Mapping
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engines.contract import (
    JSON,
    Event,
    GameError,
    GameOver,
    IllegalMove,
    InvalidOptions,
    InvalidSeat,
    InvalidSetup,
    MalformedMove,
    NotYourTurn,
)
from games.zoxso import rules as zoxso
from games.zoxso.rules import RULES, ZoxsoState, picture, render

# --------------------------------------------------------------------------------------------
# Helpers


EDITIONS = [1, 2]
"""Every rules edition the engine plays; 2 is the current one (the revised Z9)."""


def pos(pieces: Mapping[str, str], edition: int | None = None, **extra: JSON) -> ZoxsoState:
    """A position built from an explicit setup (phase 2 unless told), in `edition` (default:
    the current one)."""
    return RULES.new_game(0, setup={"pieces": dict(pieces), **extra}, edition=edition)


def play(state: ZoxsoState, *moves: str) -> ZoxsoState:
    for move in moves:
        seat = state.to_act()[0]
        state, _ = state.apply(seat, move)
    return state


def refused(state: ZoxsoState, move: str, error: type[GameError] = IllegalMove) -> str:
    """Assert `move` is refused with `error`, leaves the state as it was; return the message."""
    before = state.serialize()
    assert move not in state.legal_moves(state.to_move)
    with pytest.raises(error) as info:
        state.apply(state.to_move, move)
    assert state.serialize() == before
    return info.value.message


def moves_from(state: ZoxsoState, prefix: str) -> set[str]:
    return {m for m in state.legal_moves(state.to_move) if m.startswith(prefix)}


def winners(state: ZoxsoState) -> tuple[int, ...] | None:
    """The winners of a finished game, or None while it runs."""
    result = state.result()
    return None if result is None else result.winners


def reason(state: ZoxsoState) -> str | None:
    result = state.result()
    return None if result is None else str(result.detail["reason"])


def random_state(seed: int, plies: int, edition: int | None = None) -> ZoxsoState:
    rng = random.Random(seed)
    state = RULES.new_game(seed, edition=edition)
    for _ in range(plies):
        if not state.to_act():
            break
        seat = state.to_act()[0]
        state, _ = state.apply(seat, rng.choice(state.legal_moves(seat)))
    return state


# --------------------------------------------------------------------------------------------
# A naive reference generator, written from the rulings over the public view only.

FILES = "abcdefgh"


def _pearl(c: int, r: int) -> str:
    return f"{FILES[c]}{r + 1}"


def _stone(c: int, r: int) -> str:
    return f"{FILES[c].upper()}{r + 1}"


def _xy(square: str) -> tuple[int, int]:
    return FILES.index(square[0].lower()), int(square[1:]) - 1


def _inside(c: int, r: int) -> bool:
    return 2 <= c <= 5 and 2 <= r <= 5  # Z2


def reference_moves(state: ZoxsoState) -> list[str]:
    view = state.view(None)
    if view["result"] is not None:
        return []
    me = "dl"[view["to_move"]]
    pearls: dict[str, str] = dict(view["pearls"])
    stones: dict[str, str] = dict(view["stones"])
    out: set[str] = set()
    if view["phase"] == 1:  # Z5
        for kind, n in view["in_hand"][me].items():
            if n:
                for c in range(8):
                    for r in range(8):
                        if not _inside(c, r) and _pearl(c, r) not in pearls:
                            out.add(f"{kind}@{_pearl(c, r)}")
        return sorted(out)

    def pearl_nbrs(sq: str) -> list[str]:
        c, r = _xy(sq)
        return [
            _pearl(c + dc, r + dr)
            for dc, dr in ((1, 0), (-1, 0), (0, 1), (0, -1))
            if 0 <= c + dc < 8 and 0 <= r + dr < 8 and _inside(c + dc, r + dr) == _inside(c, r)
        ]

    def pearl_dests(sq: str, board: dict[str, str]) -> set[str]:
        chain, todo = {sq}, [sq]  # Z7
        while todo:
            for n in pearl_nbrs(todo.pop()):
                if board.get(n, " ")[0] == me and n not in chain:
                    chain.add(n)
                    todo.append(n)
        return {n for m in chain for n in pearl_nbrs(m) if board.get(n, " ")[0] != me}

    def stone_dests(kind: str, sq: str, board: dict[str, str]) -> set[str]:
        c, r = _xy(sq)
        res: set[str] = set()
        if kind == "M":
            for dc, dr in ((1, 2), (2, 1), (-1, 2), (-2, 1), (1, -2), (2, -1), (-1, -2), (-2, -1)):
                if 0 <= c + dc < 7 and 0 <= r + dr < 7:
                    res.add(_stone(c + dc, r + dr))
        elif kind == "X":
            for dc, dr in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                if 0 <= c + dc < 7 and 0 <= r + dr < 7:
                    res.add(_stone(c + dc, r + dr))
        else:
            for dc, dr in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                x, y = c + dc, r + dr
                while 0 <= x < 7 and 0 <= y < 7:
                    res.add(_stone(x, y))
                    if _stone(x, y) in board:
                        break
                    x, y = x + dc, y + dr
        res = {s for s in res if board.get(s, " ")[0] != me}
        if kind != "X":
            res.discard("D4")  # Z8
        return res

    for sq, piece in pearls.items():
        if piece[0] != me:
            continue
        out.update(f"{sq}-{d}" for d in pearl_dests(sq, pearls))
        c, r = _xy(sq)
        for sc in (c - 1, c):
            for sr in (r - 1, r):
                if 0 <= sc < 7 and 0 <= sr < 7 and _stone(sc, sr) not in stones:
                    t = _stone(sc, sr)
                    if t != "D4" or piece[1] == "X":
                        out.add(f"{sq}^{t}")
                    if t == "D4" and piece[1] == "X" and view["edition"] == 2:
                        continue  # Z9 (revised): a Xing's flip onto the Throne ends the turn
                    after = {**stones, t: piece}
                    out.update(f"{sq}^{t}-{d}" for d in stone_dests(piece[1], t, after))
    for sq, piece in stones.items():
        if piece[0] != me:
            continue
        out.update(f"{sq}-{d}" for d in stone_dests(piece[1], sq, stones))
        c, r = _xy(sq)
        for pc in (c, c + 1):
            for pr in (r, r + 1):
                t = _pearl(pc, pr)
                if t not in pearls:
                    out.add(f"{sq}^{t}")
                    after = {**pearls, t: piece}
                    out.update(f"{sq}^{t}-{d}" for d in pearl_dests(t, after))
    return sorted(out) or ["pass"]


# --------------------------------------------------------------------------------------------
# Z1-Z3 geometry


def test_z1_board_names_and_corners() -> None:
    assert len(zoxso.PEARL_NAMES) == 64
    assert zoxso.PEARL_NAMES[0] == "a1"
    assert zoxso.PEARL_NAMES[63] == "h8"
    assert len(zoxso.STONE_NAMES) == 49
    assert zoxso.STONE_NAMES[48] == "G7"
    assert zoxso.STONE_NAMES[zoxso.THRONE] == "D4"

    def corners(stone: str) -> set[str]:
        return {zoxso.PEARL_NAMES[p] for p in zoxso.STONE_PEARLS[zoxso.STONE_INDEX[stone]]}

    assert corners("B2") == {"b2", "c2", "b3", "c3"}
    assert corners("A1") == {"a1", "b1", "a2", "b2"}
    assert corners("G7") == {"g7", "h7", "g8", "h8"}
    assert corners("D4") == {"d4", "e4", "d5", "e5"}


def test_z3_pearl_stone_adjacency_is_symmetric() -> None:
    def stones(pearl: str) -> set[str]:
        return {zoxso.STONE_NAMES[s] for s in zoxso.PEARL_STONES[zoxso.PEARL_INDEX[pearl]]}

    assert stones("a1") == {"A1"}
    assert stones("h8") == {"G7"}
    assert stones("a5") == {"A4", "A5"}
    assert stones("d4") == {"C3", "D3", "C4", "D4"}
    for p in range(64):
        for s in zoxso.PEARL_STONES[p]:
            assert p in zoxso.STONE_PEARLS[s]
    assert sum(len(x) for x in zoxso.PEARL_STONES) == 49 * 4


def test_z2_wall_inside_pearls() -> None:
    inside = {zoxso.PEARL_NAMES[p] for p in range(64) if zoxso.INSIDE[p]}
    assert inside == {f"{c}{r}" for c in "cdef" for r in "3456"}
    assert len(zoxso.OUTSIDE_PEARLS) == 48
    walled = {zoxso.STONE_NAMES[s] for s in range(49) if zoxso.WALLED_STONE[s]}
    assert walled == {f"{c}{r}" for c in "BCDEF" for r in "23456"}
    # Z3 adjacency never crosses the Wall; 16 Pearl pairs straddle it.
    crossing = {
        (p, q)
        for p in range(64)
        for q in zoxso.PEARL_NEIGHBOURS[p]
        if zoxso.INSIDE[p] != zoxso.INSIDE[q]
    }
    assert len(crossing) == 32
    for p, q in crossing:
        assert q not in zoxso.PEARL_ADJ[p]


WALL_STEPS = sorted(
    f"{zoxso.PEARL_NAMES[p]}-{zoxso.PEARL_NAMES[q]}"
    for p in range(64)
    for q in zoxso.PEARL_NEIGHBOURS[p]
    if zoxso.INSIDE[p] != zoxso.INSIDE[q]
)


@pytest.mark.parametrize("move", WALL_STEPS)
def test_z2_every_wall_crossing_step_is_refused(move: str) -> None:
    src, dst = move.split("-")
    state = pos({src: "dD", "a8": "dX", "h1": "lX"})
    assert dst not in {m.split("-")[1] for m in moves_from(state, f"{src}-")}
    assert refused(state, move).startswith(f"{move} crosses the Wall")
    # Also as a capture: the enemy on the far side stays out of reach.
    state = pos({src: "dD", dst: "lM", "a8": "dX", "h1": "lX"})
    assert "crosses the Wall" in refused(state, move)


@pytest.mark.parametrize("move", WALL_STEPS)
def test_z2_every_wall_crossing_chain_move_is_refused(move: str) -> None:
    # A chain partner beside the source on the same side of the Wall cannot lend the crossing.
    src, dst = move.split("-")
    c, r = _xy(src)
    partner = next(
        _pearl(c + dc, r + dr)
        for dc, dr in ((1, 0), (-1, 0), (0, 1), (0, -1))
        if 0 <= c + dc < 8
        and 0 <= r + dr < 8
        and _inside(c + dc, r + dr) == _inside(c, r)
        and _pearl(c + dc, r + dr) != dst
    )
    state = pos({src: "dD", partner: "dM", "a8": "dX", "h1": "lX"})
    assert f"{partner}-{dst}" not in state.legal_moves(0)
    assert "crosses the Wall" in refused(state, f"{partner}-{dst}")


def test_z7_chain_touching_the_wall_stays_on_its_side() -> None:
    # Outside chain b3-b4-b5 runs along the Wall; c4 (inside, Dark) is not part of it.
    state = pos({"b3": "dM", "b4": "dD", "b5": "dM", "c4": "dD", "h8": "dX", "h1": "lX"})
    chain_targets = {"b2", "a3", "a4", "a5", "b6"}
    for member in ("b3", "b4", "b5"):
        got = {m.split("-")[1] for m in moves_from(state, f"{member}-")}
        assert got == chain_targets, member
    assert {m.split("-")[1] for m in moves_from(state, "c4-")} == {"c3", "c5", "d4"}
    assert "crosses the Wall" in refused(state, "b3-c4")
    assert "crosses the Wall" in refused(state, "c4-b3")
    # After a flip onto an inside Pearl the move is checked there too.
    state = pos({"B2": "dM", "h8": "dX", "h1": "lX"})
    assert "after the flip, c3-b3 crosses the Wall" in refused(state, "B2^c3-b3")
    assert "B2^c3-c4" in state.legal_moves(0)
    assert "B2^b2-b1" in state.legal_moves(0)


def test_z2_wall_never_blocks_stones_or_flips() -> None:
    # Stones move across the Wall's line freely: a Dao slides from outside through B3..F3 to G3,
    # a Ma jumps in, a Xing steps in.
    state = pos({"A3": "dD", "A1": "dM", "A4": "dX", "h8": "lX"})
    stones = moves_from(state, "A")
    assert {"A3-G3", "A3-C3", "A1-B3", "A1-C2", "A4-B4"} <= stones
    # Flips ignore the Wall: ring Pearl b3 (outside) onto the walled Stone B3, walled Stone B3
    # onto the inside Pearl c4 (then a step inside) or the outside Pearl b3.
    state = pos({"b3": "dD", "B5": "dM", "h8": "dX", "a1": "lX"})
    legal = state.legal_moves(0)
    assert {"b3^B3", "b3^B3-F3", "b3^A2", "B5^c5", "B5^c6-d6", "B5^b5", "B5^b6-a6"} <= set(legal)
    new = play(state, "b3^B3")
    assert new.piece_at("B3") == "dD"
    new = play(state, "B5^c5-d5")
    assert new.piece_at("d5") == "dM"
    assert "crosses the Wall" in refused(state, "B5^c5-b5")


def test_z8_dao_flipped_onto_throne_leaves_capturing_the_first_enemy() -> None:
    state = pos({"d4": "dD", "D6": "lM", "D7": "lD", "B4": "dM", "a8": "dX", "h1": "lX"})
    from_throne = {m.split("-")[1] for m in moves_from(state, "d4^D4-")}
    # Up: D5, D6 (capture), not D7 behind it; left: C4, not B4 (own); right: E4..G4; down D3..D1.
    assert from_throne == {"D5", "D6", "C4", "E4", "F4", "G4", "D3", "D2", "D1"}
    assert "blocked by the piece on D6" in refused(state, "d4^D4-D7")
    assert "own piece" in refused(state, "d4^D4-B4")
    new, events = state.apply(0, "d4^D4-D6")
    assert [e.kind for e in events] == ["flipped", "moved"]
    assert events[1].data["captured"] == "lM"
    assert new.piece_at("D4") is None
    assert new.piece_at("D7") == "lD"


# --------------------------------------------------------------------------------------------
# Z4-Z5 pieces and Phase 1


def test_z4_z5_start_and_full_placement_phase() -> None:
    state = RULES.new_game(3)
    assert state.phase == 1
    assert state.to_act() == (0,)
    view = state.view(None)
    assert view["in_hand"] == {"d": {"M": 4, "D": 5, "X": 1}, "l": {"M": 4, "D": 5, "X": 1}}
    moves = state.legal_moves(0)
    assert len(moves) == 3 * 48  # every type on every empty outside Pearl
    assert not any(m.split("@")[1] in {f"{c}{r}" for c in "cdef" for r in "3456"} for m in moves)
    assert state.legal_moves(1) == []
    state = play(state, "X@a1")
    assert state.to_act() == (1,)
    assert len(state.legal_moves(1)) == 3 * 47
    state = play(state, "M@b1")
    assert len(state.legal_moves(0)) == 2 * 46  # Dark's Xing is down
    assert not any(m.startswith("X@") for m in state.legal_moves(0))


def test_z5_placement_refusals() -> None:
    state = play(RULES.new_game(0), "X@a1")
    assert "inside the Wall" in refused(state, "M@d4")
    assert "occupied" in refused(state, "M@a1")
    assert "not on Stones" in refused(state, "M@B2", MalformedMove)
    assert "Phase 1" in refused(state, "a1-a2")
    assert "Phase 1" in refused(state, "a1^A1")
    state = play(state, "M@h8")
    assert "no Xing left" in refused(state, "X@b1")


def test_z5_phase_two_starts_after_twenty_with_dark() -> None:
    state = RULES.new_game(0)
    outside = [zoxso.PEARL_NAMES[p] for p in zoxso.OUTSIDE_PEARLS]
    order = ["M"] * 4 + ["D"] * 5 + ["X"]
    events: list[Event] = []
    for i in range(20):
        state, events = state.apply(i % 2, f"{order[i // 2]}@{outside[i]}")
    assert state.phase == 2
    assert state.to_act() == (0,)
    assert [e.kind for e in events] == ["placed", "phase"]
    assert not any("@" in m for m in state.legal_moves(0))
    assert "Phase 1 is over" in refused(state, "M@a5")


# --------------------------------------------------------------------------------------------
# Z6 turn structure: flip then (optionally) move; never move-then-flip or two flips


def test_z6_move_then_flip_and_double_flip_refused() -> None:
    state = pos({"b2": "dM", "a8": "dX", "h1": "lX"})
    assert "b2^B2" in state.legal_moves(0)
    assert "you cannot move then flip" in refused(state, "b2-b3^B3")
    assert "you cannot flip twice" in refused(state, "b2^B2^c3")


def test_z6_flip_onto_occupied_square_refused() -> None:
    state = pos({"b2": "dM", "B2": "lD", "A1": "dD", "c2": "lM", "a8": "dX", "h1": "lX"})
    assert "occupied" in refused(state, "b2^B2")  # enemy Stone
    assert "occupied" in refused(state, "b2^A1")  # own Stone
    assert "occupied" in refused(state, "A1^b2")  # Pearl occupied by own
    state = pos({"B2": "dD", "c2": "lM", "a8": "dX", "h1": "lX"})
    assert "occupied" in refused(state, "B2^c2")  # Pearl occupied by enemy
    assert "B2^c3" in state.legal_moves(0)


def test_z6_flip_only_to_adjacent_and_changes_layer() -> None:
    state = pos({"b2": "dM", "C5": "dD", "a8": "dX", "h1": "lX"})
    assert "not next to b2" in refused(state, "b2^C3")
    assert "not a corner of C5" in refused(state, "C5^c7")
    assert "changes layer" in refused(state, "b2^c2", MalformedMove)
    assert "new layer" in refused(state, "b2^B2-b3", MalformedMove)
    assert "one layer" in refused(state, "b2-B3", MalformedMove)


def test_z6_flip_then_move_events_and_board() -> None:
    state = pos({"b2": "dD", "B6": "lD", "a8": "dX", "h1": "lX"})
    new, events = state.apply(0, "b2^B2-B6")
    assert [e.kind for e in events] == ["flipped", "moved"]
    assert events[0].data == {
        "seat": 0,
        "move": "b2^B2-B6",
        "piece": "dD",
        "from": "b2",
        "to": "B2",
    }
    assert events[1].data["captured"] == "lD"
    assert new.piece_at("b2") is None
    assert new.piece_at("B2") is None
    assert new.piece_at("B6") == "dD"
    assert new.to_act() == (1,)


def test_z6_flip_from_stone_then_chain_move_with_new_chain() -> None:
    # C3 flips to c4, which joins the inside chain c5-d5; then it may take d5's step to d6.
    state = pos({"C3": "dM", "c5": "dD", "d5": "dD", "a8": "dX", "h1": "lX"})
    after = {m.split("-")[1] for m in moves_from(state, "C3^c4-")}
    # c4: c3, d4; c5: c6; d5: d4, e5, d6 (b4/b5 are across the Wall).
    assert after == {"c3", "d4", "c6", "e5", "d6"}
    new = play(state, "C3^c4-d6")
    assert new.piece_at("d6") == "dM"
    assert new.piece_at("c5") == "dD"


# --------------------------------------------------------------------------------------------
# Z7 Pearls: steps and Zox-chains


def test_z7_step_targets_empty_or_enemy_only() -> None:
    state = pos({"a1": "dX", "a2": "lM", "b1": "dM", "h8": "lX"})
    # a1-b1 chain: a1 steps a2 (capture); b1 steps c1, b2.
    assert {m.split("-")[1] for m in moves_from(state, "a1-")} == {"a2", "c1", "b2"}
    assert "own piece" in refused(state, "a1-b1")
    assert "does not move" in refused(state, "a1-a1")


def test_z7_chain_moves_any_member_anywhere_a_member_can_step() -> None:
    state = pos({"a1": "dM", "b1": "dD", "c1": "dM", "c5": "lM", "h8": "dX", "h1": "lX"})
    targets = {"a2", "b2", "c2", "d1"}
    for member in ("a1", "b1", "c1"):
        assert {m.split("-")[1] for m in moves_from(state, f"{member}-")} == targets
    new, events = state.apply(0, "a1-d1")
    assert new.piece_at("d1") == "dM"
    assert new.piece_at("c1") == "dM"
    assert events[0].data == {
        "seat": 0,
        "move": "a1-d1",
        "piece": "dM",
        "from": "a1",
        "to": "d1",
        "captured": None,
    }
    msg = refused(state, "a1-a3")
    assert "neither a step nor a Zox-chain move" in msg
    assert "a2, b2, c2, d1" in msg


def test_z7_chain_capture_and_any_type_moves_alike() -> None:
    # Ma, Dao and Xing all move the same on Pearls: each member reaches the same squares.
    state = pos({"a1": "dX", "b1": "dD", "c1": "dM", "d2": "lD", "h8": "lX"})
    reach = [{m.split("-")[1] for m in moves_from(state, f"{sq}-")} for sq in ("a1", "b1", "c1")]
    assert reach[0] == reach[1] == reach[2] == {"a2", "b2", "c2", "d1"}
    # The Xing at a1 captures on c2 with c1's step.
    state = pos({"a1": "dX", "b1": "dD", "c1": "dM", "c2": "lD", "h8": "lX"})
    new, events = state.apply(0, "a1-c2")
    assert events[0].data["captured"] == "lD"
    assert new.piece_at("c2") == "dX"
    assert new.piece_at("a1") is None


def test_z7_separate_groups_do_not_share() -> None:
    state = pos({"a1": "dM", "c1": "dD", "h8": "dX", "h1": "lX"})  # b1 empty: not a chain
    assert {m.split("-")[1] for m in moves_from(state, "a1-")} == {"a2", "b1"}


def test_z7_pearls_and_stones_do_not_interact() -> None:
    state = pos({"b2": "dD", "B2": "lD", "b3": "lM", "a8": "dX", "h1": "lX"})
    assert "b2-b3" in state.legal_moves(0)
    new = play(state, "b2-b3")
    assert new.piece_at("B2") == "lD"


# --------------------------------------------------------------------------------------------
# Z8 Stones


def test_z8_ma_jumps_over_pieces() -> None:
    state = pos(
        {
            "B1": "dM",
            "A1": "lD",
            "C1": "lD",
            "A2": "dD",
            "B2": "lD",
            "C2": "dD",
            "a8": "dX",
            "h1": "lX",
        }
    )
    assert moves_from(state, "B1-") == {"B1-A3", "B1-C3", "B1-D2"}
    assert "knight" in refused(state, "B1-B3")


def test_z8_ma_captures_on_landing() -> None:
    state = pos({"B1": "dM", "C3": "lD", "a8": "dX", "h1": "lX"})
    _, events = state.apply(0, "B1-C3")
    assert events[0].data["captured"] == "lD"


def test_z8_dao_stops_at_own_and_captures_first_enemy() -> None:
    state = pos({"A1": "dD", "A4": "dM", "E1": "lM", "G1": "lD", "a8": "dX", "h1": "lX"})
    assert moves_from(state, "A1-") == {"A1-A2", "A1-A3", "A1-B1", "A1-C1", "A1-D1", "A1-E1"}
    assert "own piece" in refused(state, "A1-A4")
    assert "blocked by the piece on A4" in refused(state, "A1-A6")
    assert "blocked by the piece on E1" in refused(state, "A1-G1")
    assert "straight line" in refused(state, "A1-B2") or "row or column" in refused(state, "A1-B2")
    _, events = state.apply(0, "A1-E1")
    assert events[0].data["captured"] == "lM"


def test_z8_dao_crosses_the_throne_but_never_stops_there() -> None:
    state = pos({"D2": "dD", "a8": "dX", "h1": "lX"})
    up = {m for m in moves_from(state, "D2-D")}
    assert up == {"D2-D1", "D2-D3", "D2-D5", "D2-D6", "D2-D7"}
    assert "only a Xing may end a turn on the Throne" in refused(state, "D2-D4")


def test_z8_ma_never_lands_on_throne() -> None:
    state = pos({"C2": "dM", "a8": "dX", "h1": "lX"})
    assert "C2-D4" not in state.legal_moves(0)
    assert "only a Xing" in refused(state, "C2-D4")


def test_z8_xing_steps_one_stone() -> None:
    state = pos({"B2": "dX", "B3": "dM", "C2": "lD", "h1": "lX"})
    assert moves_from(state, "B2-") == {"B2-A2", "B2-B1", "B2-C2"}
    assert "one Stone orthogonally" in refused(state, "B2-B4")
    assert "own piece" in refused(state, "B2-B3")


@pytest.mark.parametrize("edition", EDITIONS)
@pytest.mark.parametrize("kind", ["M", "D"])
def test_z8_ma_or_dao_flipping_onto_throne_must_leave(kind: str, edition: int) -> None:
    # Z8 is the same in both editions: the revised Z9 ends the turn only for a Xing's flip.
    state = pos({"d4": f"d{kind}", "a8": "dX", "h1": "lX"}, edition)
    name = {"M": "Ma", "D": "Dao"}[kind]
    msg = refused(state, "d4^D4")
    assert f"a {name} that flips onto the Throne must move off it in the same turn" in msg
    off = moves_from(state, "d4^D4")
    assert off
    assert all(m.startswith("d4^D4-") for m in off)
    target = "F5" if kind == "M" else "D7"
    assert f"d4^D4-{target}" in off
    new, events = state.apply(0, f"d4^D4-{target}")
    assert new.piece_at("D4") is None
    assert new.piece_at(target) == f"d{kind}"
    assert new.result() is None
    assert [e.kind for e in events] == ["flipped", "moved"]


# --------------------------------------------------------------------------------------------
# Z9 winning


# Z9 (revised, edition 2): a Xing that lands on the Throne wins at once, whether it steps or
# flips there; a flip onto the Throne ends the turn, so `e5^D4-D5` is no longer a move. Each
# test below plays one scenario in both editions: edition 2 gives the revised outcome and
# edition 1 (the rules before the revision, kept for games started under them) the old one, so
# the edition-2 assertions fail on the old engine.

THRONE_CORNERS = ["d4", "e4", "d5", "e5"]
"""The Pearls at the Throne's corners (Z1, Z3): the only Pearls a piece flips onto D4 from."""
AROUND_THRONE = ["C4", "E4", "D3", "D5"]
"""The Stones one Xing step from the Throne."""


def won_events(events: list[Event]) -> list[tuple[str, dict[str, JSON]]]:
    return [(e.kind, dict(e.data)) for e in events if e.kind in ("won", "draw")]


@pytest.mark.parametrize("edition", EDITIONS)
@pytest.mark.parametrize("corner", THRONE_CORNERS)
def test_z9_xing_flip_onto_throne_wins_and_ends_the_turn(corner: str, edition: int) -> None:
    state = pos({corner: "dX", "h1": "lX", "a8": "dM"}, edition)
    flips = moves_from(state, f"{corner}^D4")
    if edition == 2:
        assert flips == {f"{corner}^D4"}  # Z9 (revised): nothing may follow the flip
    else:  # edition 1: the Xing could also step off the Throne again
        assert flips == {f"{corner}^D4"} | {f"{corner}^D4-{s}" for s in AROUND_THRONE}
    new, events = state.apply(0, f"{corner}^D4")
    assert [e.kind for e in events] == ["flipped", "won"]
    assert events[0].data["to"] == "D4"
    assert won_events(events) == [("won", {"seat": 0, "reason": "throne"})]
    result = new.result()
    assert result is not None
    assert result.winners == (0,)
    assert dict(result.scores) == {0: 1.0, 1: 0.0}
    assert result.detail == {"reason": "throne"}
    assert new.piece_at("D4") == "dX"
    assert new.to_act() == ()
    assert new.legal_moves(1) == []
    assert new.edition == edition
    with pytest.raises(GameOver):
        new.apply(1, "h1-h2")


@pytest.mark.parametrize("edition", EDITIONS)
@pytest.mark.parametrize("target", AROUND_THRONE)
def test_z9_xing_flip_onto_throne_then_move(target: str, edition: int) -> None:
    state = pos({"e5": "dX", "h1": "lX"}, edition)
    move = f"e5^D4-{target}"
    if edition == 2:
        msg = refused(state, move)
        assert "a Xing that flips onto the Throne D4 wins there at once" in msg
        assert "no move may follow it (Z9)" in msg
        assert "play e5^D4 to win" in msg
        return
    # Edition 1: legal; the Xing leaves the Throne and the game goes on.
    assert move in state.legal_moves(0)
    new, events = state.apply(0, move)
    assert [e.kind for e in events] == ["flipped", "moved"]
    assert new.result() is None
    assert new.piece_at("D4") is None
    assert new.piece_at(target) == "dX"


@pytest.mark.parametrize("edition", EDITIONS)
def test_z9_xing_flip_onto_throne_then_capturing_the_enemy_xing(edition: int) -> None:
    # Light's Xing on D5, next to the Throne. Edition 1: e5^D4-D5 took it (xing_captured).
    # Edition 2: that move does not exist; e5^D4 wins by the Throne, e5^E5-D5 by the capture.
    state = pos({"e5": "dX", "D5": "lX"}, edition)
    if edition == 2:
        assert "no move may follow it (Z9)" in refused(state, "e5^D4-D5")
    else:
        new, events = state.apply(0, "e5^D4-D5")
        assert events[1].data["captured"] == "lX"
        assert won_events(events) == [("won", {"seat": 0, "reason": "xing_captured"})]
        assert winners(new) == (0,)
    assert reason(play(state, "e5^D4")) == "throne"
    assert reason(play(state, "e5^E5-D5")) == "xing_captured"


def test_z9_edition_2_refusal_comes_before_the_move_checks() -> None:
    # A move that would also be wrong after the flip (own piece on D5, C4 out of a Xing's reach)
    # is refused for the revised Z9 first; edition 1 explains the move itself.
    pieces = {"e5": "dX", "D5": "dM", "h1": "lX"}
    for move, old in (("e5^D4-D5", "own piece"), ("e5^D4-B4", "one Stone orthogonally")):
        assert "no move may follow it (Z9)" in refused(pos(pieces, 2), move)
        assert old in refused(pos(pieces, 1), move)
    # Refusals that do not depend on the Throne are the same in both editions.
    for edition in EDITIONS:
        assert "no piece on d5" in refused(pos(pieces, edition), "d5^D4-D3")
        assert "D3 is not next to e5" in refused(pos(pieces, edition), "e5^D3-D4")


@pytest.mark.parametrize("edition", EDITIONS)
@pytest.mark.parametrize("start", AROUND_THRONE)
def test_z9_xing_stepping_onto_throne_wins(start: str, edition: int) -> None:
    state = pos({start: "dX", "h1": "lX"}, edition)
    new, events = state.apply(0, f"{start}-D4")
    assert [e.kind for e in events] == ["moved", "won"]
    assert (events[0].data["from"], events[0].data["to"]) == (start, "D4")
    assert won_events(events) == [("won", {"seat": 0, "reason": "throne"})]
    result = new.result()
    assert result is not None
    assert result.detail == {"reason": "throne"}
    assert result.winners == (0,)


@pytest.mark.parametrize("edition", EDITIONS)
def test_z9_xing_flip_then_step_onto_throne_wins(edition: int) -> None:
    state = pos({"C4": "lX", "a1": "dX"}, edition, to_move=1)
    assert winners(play(state, "C4-D4")) == (1,)
    state = pos({"d3": "dX", "h8": "lX"}, edition)
    assert play(state, "d3^C3-C4").result() is None
    new, events = state.apply(0, "d3^D3-D4")
    assert [e.kind for e in events] == ["flipped", "moved", "won"]
    assert won_events(events) == [("won", {"seat": 0, "reason": "throne"})]
    assert reason(new) == "throne"


def test_z9_capturing_xing_on_pearls_wins() -> None:
    state = pos({"a1": "dM", "a2": "lX", "h8": "dX"})
    new, events = state.apply(0, "a1-a2")
    assert events[0].data["captured"] == "lX"
    assert reason(new) == "xing_captured"
    assert events[-1].data == {"seat": 0, "reason": "xing_captured"}


def test_z9_capturing_xing_on_pearls_by_chain_wins() -> None:
    state = pos({"a1": "dM", "b1": "dD", "b2": "lX", "h8": "dX"})
    new = play(state, "a1-b2")
    assert winners(new) == (0,)


def test_z9_capturing_xing_on_stones_wins() -> None:
    state = pos({"A1": "dD", "A6": "lX", "h8": "dX"})
    new, _events = state.apply(0, "A1-A6")
    assert winners(new) == (0,)
    state = pos({"b2": "dM", "C4": "lX", "h8": "dX"})  # flip then capture
    new = play(state, "b2^B2-C4")
    assert winners(new) == (0,)


# --------------------------------------------------------------------------------------------
# Z10 passes and max_plies


def test_z10_pass_only_when_no_move(monkeypatch: pytest.MonkeyPatch) -> None:
    # With at most 10 pieces a side always has a move (Pearl pieces can always step; no set of
    # <= 10 Stone pieces blocks itself), so a stalemate is forced by patching the generator.
    state = pos({"a1": "dX", "h8": "lX"})
    assert "pass" not in state.legal_moves(0)
    assert "no legal move" in refused(state, "pass")
    monkeypatch.setattr(ZoxsoState, "_gen_play", lambda self: [])
    stuck = pos({"a1": "dX", "h8": "lX"})
    assert stuck.legal_moves(0) == ["pass"]
    new, events = stuck.apply(0, "pass")
    assert [e.kind for e in events] == ["passed"]
    assert new.result() is None
    assert new.view(None)["passes"] == 1
    final, events = new.apply(1, "pass")
    assert [e.kind for e in events] == ["passed", "draw"]
    assert events[-1].data == {"reason": "two_passes"}
    result = final.result()
    assert result is not None
    assert result.winners == ()
    assert result.detail["reason"] == "two_passes"


def test_z10_pass_counter_resets_after_a_move() -> None:
    state = pos({"a1": "dX", "h8": "lX"}, passes=1)
    new = play(state, "a1-a2")
    assert new.view(None)["passes"] == 0


def test_z10_max_plies_draws() -> None:
    state = RULES.new_game(0, {"max_plies": 3})
    state = play(state, "M@a1", "M@h8")
    assert state.result() is None
    new, events = state.apply(0, "M@a2")
    assert events[-1].kind == "draw"
    assert events[-1].data == {"reason": "max_plies"}
    result = new.result()
    assert result is not None
    assert result.is_draw
    assert dict(result.scores) == {0: 0.5, 1: 0.5}


def test_z10_win_on_last_ply_beats_max_plies() -> None:
    state = RULES.new_game(0, {"max_plies": 10}, {"pieces": {"e5": "dX", "h1": "lX"}, "ply": 9})
    new = play(state, "e5^D4")
    assert winners(new) == (0,)


def test_options_validation() -> None:
    assert RULES.default_options() == {"max_plies": 400}
    for bad in (0, -1, "10", True, 2.5):
        with pytest.raises(InvalidOptions):
            RULES.new_game(0, {"max_plies": bad})
    with pytest.raises(InvalidOptions, match="unknown option"):
        RULES.new_game(0, {"plies": 3})


# --------------------------------------------------------------------------------------------
# Notation, parsing and turn errors


@pytest.mark.parametrize(
    ("move", "needle"),
    [
        ("", "not a ZoxSo move"),
        ("b2", "not a ZoxSo move"),
        ("i9-b2", "does not exist"),
        ("b2-b9", "does not exist"),
        ("H1-G1", "does not exist"),
        ("Q@b2", "unknown piece"),
        ("m@b2", "unknown piece"),
        ("b2-b3-b4", "not a ZoxSo move"),
        ("b2^B2-B3-B4", "at most one move"),
        ("PASS", "not a ZoxSo move"),
    ],
)
def test_malformed_moves(move: str, needle: str) -> None:
    state = pos({"b2": "dM", "a8": "dX", "h1": "lX"})
    assert needle in refused(state, move, MalformedMove)


def test_turn_seat_and_owner_errors() -> None:
    state = pos({"b2": "dM", "g7": "lM", "a8": "dX", "h1": "lX"})
    with pytest.raises(NotYourTurn, match="Dark's turn"):
        state.apply(1, "g7-g6")
    with pytest.raises(InvalidSeat):
        state.apply(2, "b2-b3")
    with pytest.raises(InvalidSeat):
        state.legal_moves(-1)
    assert "no piece on c2" in refused(state, "c2-c1")
    assert "Light's; you play Dark" in refused(state, "g7-g6")
    assert "Light's" in refused(state, "g7^F6")


def test_legal_lists_canonical_sorted_distinct() -> None:
    for seed in range(5):
        state = random_state(seed, 30)
        moves = state.legal_moves(state.to_move)
        assert moves == sorted(set(moves))
        assert state.legal_moves(1 - state.to_move) == []


# --------------------------------------------------------------------------------------------
# Perft: hand-counted move numbers and 2-ply position counts


def perft(state: ZoxsoState, depth: int) -> int:
    if depth == 0:
        return 1
    if not state.to_act():
        return 0
    seat = state.to_act()[0]
    total = 0
    for move in state.legal_moves(seat):
        new, _ = state.apply(seat, move)
        total += perft(new, depth - 1)
    return total


PERFT = [
    # Xing a1 vs Xing h8: steps a2, b1; flip a1^A1 (+ A2, B1) = 5. Light mirrors: 5. 25 at 2 ply.
    ({"a1": "dX", "h8": "lX"}, 5, 25),
    # Xing on Stone C4: C4-B4/C3/C5 and C4-D4 (wins) = 4; flips to c4 (then c3 d4 c5; b4 is across
    # the Wall), d4 (c4 e4 d3 d5), c5 (c4 c6 d5), d5 (c5 e5 d4 d6): 4 + 3+4+3+4 = 18. Total 22.
    # Light Xing h1 has 5 moves; C4-D4 ends the game: 21 * 5 = 105.
    ({"C4": "dX", "h1": "lX"}, 22, 105),
    # Chain a1 a2 b2: union of steps {b1, a3, c2, b3} for 3 members = 12. Flips: Xing a1^A1 (+A2,
    # B1) 3; Ma a2^A1 (+B3, C2) 3, a2^A2 (+B4, C3, C1) 4; Dao b2 to A1, B1, A2, B2: 12 slides + 1
    # each = 52. Total 74. Light h8: 5. 74 * 5 = 370.
    ({"a1": "dX", "a2": "dM", "b2": "dD", "h8": "lX"}, 74, 370),
    # Dao D2: 3 left, 3 right, D1, up D3 D5 D6 D7 (crosses D4) = 11; flips d2 e2 d3 e3, each + 3
    # steps (the Wall cuts d2|d3, e2|e3) = 16; Xing a8: 5. Total 32.
    ({"D2": "dD", "a8": "dX", "h1": "lX"}, 32, 32 * 5),
    # Ma d4: 4 steps; flips C3, D3, C4 with 8 jumps each (+ bare) = 27; D4 only with its 8 jumps.
    # + Xing a8 5 = 44.
    ({"d4": "dM", "a8": "dX", "h1": "lX"}, 44, 44 * 5),
    # Dao d4: 4 steps; C3 12+1, D3 11+1 (through D4), C4 11+1, D4 12 (no bare flip) + 5 = 58.
    ({"d4": "dD", "a8": "dX", "h1": "lX"}, 58, 58 * 5),
    # Interacting Xings a1 (Dark) and b2 (Light). Dark: a1-a2, a1-b1, a1^A1, a1^A1-A2, a1^A1-B1.
    # Light's Xing b2: 4 steps (capturing a Dark Xing on a2/b1 counts) + flips A1 (bare, A2, B1),
    # B1 (bare, A1, C1, B2), A2 (bare, A1, A3, B2), B2 (bare, A2, C2, B1, B3) = 20. A Dark Xing on
    # A1 removes the A1 flip (17); on A2 or B1 it removes that flip (16): 20+20+17+16+16 = 89.
    ({"a1": "dX", "b2": "lX"}, 5, 89),
]


@pytest.mark.parametrize("edition", EDITIONS)
@pytest.mark.parametrize(("pieces", "n1", "n2"), PERFT)
def test_perft_hand_counted(pieces: dict[str, str], n1: int, n2: int, edition: int) -> None:
    # No Xing can flip onto the Throne in these positions: both editions count the same.
    state = pos(pieces, edition)
    assert len(state.legal_moves(0)) == n1
    assert perft(state, 1) == n1
    assert perft(state, 2) == n2
    assert state.legal_moves(0) == reference_moves(state)


@pytest.mark.parametrize(("edition", "n1", "n2"), [(1, 24, 105), (2, 20, 85)])
def test_perft_xing_next_to_the_throne(edition: int, n1: int, n2: int) -> None:
    # Xing e5: 4 steps; flips E4, D5, E5 each + 4 steps = 15; the flip onto D4 (wins) and, in
    # edition 1 only, D4 + its 4 steps off (Z9 revised: edition 2 ends the turn on the Throne).
    # Edition 2: 4 + 15 + 1 = 20; 3 win at once (e5^D4, e5^E4-D4, e5^D5-D4): 17 * 5 = 85.
    # Edition 1: 4 + 15 + 5 = 24; the same 3 win: 21 * 5 = 105.
    state = pos({"e5": "dX", "h1": "lX"}, edition)
    assert perft(state, 1) == n1
    assert perft(state, 2) == n2
    assert state.legal_moves(0) == reference_moves(state)


def test_perft_phase_one_start() -> None:
    state = RULES.new_game(0)
    assert perft(state, 1) == 144
    # Light: for each Dark placement, 3 types on 47 empty outside Pearls.
    assert perft(state, 2) == 144 * 141


# --------------------------------------------------------------------------------------------
# Setups


def test_setup_validation() -> None:
    with pytest.raises(InvalidSetup, match="unknown setup key"):
        RULES.new_game(0, setup={"pieces": {}, "board": 1})
    with pytest.raises(InvalidSetup, match="does not exist"):
        pos({"z9": "dM", "a1": "dX", "h8": "lX"})
    with pytest.raises(InvalidSetup, match="pieces are d"):
        pos({"b2": "xM", "a1": "dX", "h8": "lX"})
    with pytest.raises(InvalidSetup, match="Xing on the board"):
        pos({"a1": "dX"})
    with pytest.raises(InvalidSetup, match="Throne"):
        pos({"D4": "dX", "h8": "lX"})
    with pytest.raises(InvalidSetup, match="5 Ma"):
        pos({"a1": "dX", "h8": "lX", **{f"b{i}": "dM" for i in range(1, 6)}})
    with pytest.raises(InvalidSetup, match="outside the Wall"):
        pos({"d4": "dM"}, phase=1)
    with pytest.raises(InvalidSetup, match="on a Pearl"):
        pos({"D2": "dM"}, phase=1)
    with pytest.raises(InvalidSetup, match="turn"):
        pos({"a1": "dM"}, phase=1, to_move=0)
    with pytest.raises(InvalidSetup, match="in_hand must be empty"):
        pos({"a1": "dX", "h8": "lX"}, in_hand={"d": {"M": 1}})
    with pytest.raises(InvalidSetup, match="alternate"):
        pos({"a1": "dM", "a2": "dD"}, phase=1)
    with pytest.raises(InvalidSetup, match="ply"):
        RULES.new_game(0, {"max_plies": 5}, {"pieces": {"a1": "dX", "h8": "lX"}, "ply": 5})


def test_setup_phase_one_defaults() -> None:
    state = pos({"a1": "dX"}, phase=1)
    assert state.to_move == 1
    assert state.phase == 1
    assert state.view(None)["in_hand"]["d"] == {"M": 4, "D": 5, "X": 0}
    same = pos(
        {"a1": "dX"},
        phase=1,
        to_move=1,
        in_hand={"d": {"M": 4, "D": 5}, "l": {"M": 4, "D": 5, "X": 1}},
    )
    assert same == state


# --------------------------------------------------------------------------------------------
# View, render, events, resign, serialization


def test_view_contents() -> None:
    state = pos({"b2": "dM", "C3": "lD", "a8": "dX", "h1": "lX"}, ply=7)
    view = state.view(None)
    assert view["pearls"] == {"b2": "dM", "a8": "dX", "h1": "lX"}
    assert view["stones"] == {"C3": "lD"}
    assert view["phase"] == 2
    assert view["to_move"] == 0
    assert view["ply"] == 7
    assert view["passes"] == 0
    assert view["result"] is None
    assert view["throne"] == "D4"
    assert state.view(0) == state.view(1) == view  # Z4: nothing hidden
    json.dumps(view)
    assert state.determinize(0, random.Random(1)) is state


def _rendered_squares(text: str) -> tuple[dict[str, tuple[int, int]], list[str]]:
    """Where render() drew every Pearl and Stone: name -> (line, column), and the lines of the
    picture (from its file letters on: the line before them says where the game is)."""
    lines = text.splitlines()[1:]
    header = lines[0]
    xs = {ch: header.index(ch) for ch in "aAbBcCdDeEfFgGh"}
    where: dict[str, tuple[int, int]] = {}
    for i, line in enumerate(lines[1:16], start=1):
        is_pearl = line[0] != " "
        number = line.split()[0]
        for ch, x in xs.items():
            if ch.islower() == is_pearl:
                where[f"{ch}{number}"] = (i, x)
    return where, lines


def test_render_board_layout() -> None:
    state = pos({"b2": "dM", "C3": "lD", "d4": "dD", "a8": "dX", "h1": "lX", "g7": "lM"})
    text = render(state)
    where, lines = _rendered_squares(text)
    assert lines[0].split() == list("aAbBcCdDeEfFgGh")
    # file letters, 8 Pearl rows, 7 Stone rows, 2 legend lines (and the head before them)
    assert len(lines) == 1 + 8 + 7 + 2
    assert lines[1:16] == picture(state.view(None)["pearls"], state.view(None)["stones"])[1:]
    assert len(where) == 64 + 49
    for name, (i, x) in where.items():
        piece = state.piece_at(name)
        if piece is not None:
            assert lines[i][x : x + 2] == piece, name
    assert lines[where["D4"][0]][where["D4"][1] - 1 : where["D4"][1] + 3] == "[__]"
    assert text.splitlines()[0] == "ZoxSo, phase 2, ply 0/400, Dark to move"
    won = play(pos({"e5": "dX", "h1": "lX"}), "e5^D4")
    assert "[dX]" in render(won)
    assert "Dark won (throne)" in render(won)


def test_render_wall_encloses_exactly_the_walled_squares() -> None:
    # Z2, drawn as it lies: a box of `=` and `|` through the ring Pearls b2..g7 around Stones
    # B2..F6.
    state = pos({"b2": "dM", "C3": "lD", "d4": "dD", "a8": "dX", "h1": "lX", "g7": "lM"})
    where, lines = _rendered_squares(render(state))
    top, left = where["b7"]
    bottom, right = where["g2"]
    assert (top, right) == where["g7"]
    assert (bottom, left) == where["b2"]
    walls = {(i, x) for i, line in enumerate(lines[:16]) for x, ch in enumerate(line) if ch in "=|"}
    box = {(top, x) for x in range(left, right + 1)} | {(bottom, x) for x in range(left, right + 1)}
    box |= {(i, x) for i in range(top, bottom + 1) for x in (left, right)}
    assert walls <= box  # nothing but the box is drawn as Wall
    tokens = {(i, x + k) for n, (i, x) in where.items() if n[0].islower() for k in (0, 1)}
    assert box - tokens <= walls  # ... and the box is closed between its Pearls
    stones = {n for n in where if n[0].isupper()}
    for name, (i, x) in where.items():
        strictly_inside = top < i < bottom and left < x < right
        if name[0].isupper():
            assert strictly_inside == zoxso.WALLED_STONE[zoxso.STONE_INDEX[name]], name
        else:
            assert strictly_inside == zoxso.INSIDE[zoxso.PEARL_INDEX[name]], name
            on_wall = (i in (top, bottom) and left <= x <= right) or (
                x in (left, right) and top <= i <= bottom
            )
            ring = (name[0] in "bg" and 2 <= int(name[1]) <= 7) or (
                name[1] in "27" and "b" <= name[0] <= "g"
            )
            assert on_wall == ring, name
            if state.piece_at(name) is None:  # empty inside Pearls are marked, others are dots
                assert lines[i][x] == ("+" if strictly_inside else "."), name
    assert len(stones) == 49
    # The Wall columns sit on the Pearl files b and g, never on a Stone column.
    header = lines[0]
    assert header[left] == "b"
    assert header[right] == "g"


def test_resign() -> None:
    state = pos({"b2": "dM", "a8": "dX", "h1": "lX"})
    new, events = state.resign(1)  # not Light's turn: still allowed
    assert [e.kind for e in events] == ["resigned", "won"]
    assert events[1].data == {"seat": 0, "reason": "resignation"}
    result = new.result()
    assert result is not None
    assert result.winners == (0,)
    assert dict(result.scores) == {0: 1.0, 1: 0.0}
    assert state.result() is None
    with pytest.raises(GameOver):
        new.resign(0)


def test_serialize_round_trip_and_apply_does_not_mutate() -> None:
    state = random_state(11, 35)
    blob = state.serialize()
    assert RULES.deserialize(blob) == state
    assert RULES.deserialize(blob).serialize() == blob
    assert json.loads(blob)["pearls"].count(".") + len(state.view(None)["pearls"]) == 64
    for move in state.legal_moves(state.to_move)[:40]:
        state.apply(state.to_move, move)
        assert state.serialize() == blob


# --------------------------------------------------------------------------------------------
# Rules editions: 2 (current, the revised Z9) and 1 (before it); a game keeps its edition.

# A snapshot the engine stored before rules editions existed (no "edition" key): Dark's Xing on
# e5, next to the Throne, Dark to move.
PRE_EDITION_SNAPSHOT = (
    b'{"hand":[0,0,0,0,0,0],"max_plies":400,"passes":0,"pearls":".......x.......................'
    b'.....X...................M.......","phase":2,"ply":31,"reason":null,"seed":7,"stones":'
    b'"........d........................................","to_move":0,"v":1,"winner":null}'
)


def test_editions_current_and_known() -> None:
    assert RULES.edition == 2
    assert RULES.editions == (1, 2)
    assert RULES.new_game(0).edition == 2
    assert RULES.new_game(0, edition=None).edition == 2
    assert RULES.new_game(0, edition=1).edition == 1
    assert pos({"a1": "dX", "h8": "lX"}, 1).edition == 1
    assert pos({"a1": "dX", "h8": "lX"}).edition == 2
    for bad in (0, 3, -1, True):
        with pytest.raises(InvalidOptions, match="no rules edition"):
            RULES.new_game(0, edition=bad)
        with pytest.raises(InvalidOptions, match="no rules edition"):
            RULES.new_game(0, setup={"pieces": {"a1": "dX", "h8": "lX"}}, edition=bad)


@pytest.mark.parametrize("edition", EDITIONS)
def test_every_derived_state_keeps_its_edition(edition: int) -> None:
    state = random_state(3, 40, edition)
    assert state.edition == edition
    assert state.view(None)["edition"] == edition
    assert state.view(0)["edition"] == edition
    blob = state.serialize()
    assert json.loads(blob)["edition"] == edition
    back = RULES.deserialize(blob)
    assert back.edition == edition
    assert back == state
    assert back.serialize() == blob  # exact round trip
    seat = state.to_move
    for move in state.legal_moves(seat)[:30]:
        assert state.apply(seat, move)[0].edition == edition
    assert state.resign(seat)[0].edition == edition
    assert state.determinize(seat, random.Random(0)).edition == edition
    rebuilt = RULES.from_view(state.view(seat), seat, random.Random(0))
    assert rebuilt.edition == edition
    assert rebuilt.legal_moves(seat) == state.legal_moves(seat)
    finished = random_state(3, 400, edition)
    assert finished.finished
    assert finished.edition == edition
    assert RULES.deserialize(finished.serialize()) == finished


def test_a_snapshot_without_edition_is_edition_1() -> None:
    state = RULES.deserialize(PRE_EDITION_SNAPSHOT)
    assert state.edition == 1
    assert state.view(None)["edition"] == 1
    assert json.loads(state.serialize()) == {**json.loads(PRE_EDITION_SNAPSHOT), "edition": 1}
    # It plays on under the rules it started with: the Xing may still leave the Throne.
    assert "e5^D4-D5" in state.legal_moves(0)
    after, _ = state.apply(0, "e5^D4-D5")
    assert after.edition == 1
    assert after.result() is None
    assert RULES.deserialize(after.serialize()) == after
    # The same position stored now (edition 2) refuses it.
    current = dict(json.loads(PRE_EDITION_SNAPSHOT), edition=2)
    assert "e5^D4-D5" not in RULES.deserialize(json.dumps(current).encode()).legal_moves(0)


@pytest.mark.parametrize("bad", [0, 3, "2", None, True])
def test_unknown_editions_in_snapshots_and_views_are_refused(bad: object) -> None:
    blob = dict(json.loads(PRE_EDITION_SNAPSHOT), edition=bad)
    with pytest.raises(ValueError, match="rules edition"):
        RULES.deserialize(json.dumps(blob).encode())
    view = dict(pos({"a1": "dX", "h8": "lX"}).view(0), edition=bad)
    with pytest.raises(ValueError, match="rules edition"):
        RULES.from_view(view, 0, random.Random(0))


def test_from_view_without_edition_is_the_current_edition() -> None:
    view = pos({"e5": "dX", "h1": "lX"}, 1).view(0)
    assert RULES.from_view(view, 0, random.Random(0)).edition == 1
    del view["edition"]
    assert RULES.from_view(view, 0, random.Random(0)).edition == RULES.edition


# --------------------------------------------------------------------------------------------
# Properties


@pytest.mark.parametrize("edition", EDITIONS)
def test_random_positions_match_reference_generator(edition: int) -> None:
    checked = 0
    for seed in range(25):
        rng = random.Random(seed)
        state = RULES.new_game(seed, edition=edition)
        while state.to_act() and checked < 3000:
            assert state.legal_moves(state.to_move) == reference_moves(state)
            seat = state.to_act()[0]
            state, _ = state.apply(seat, rng.choice(state.legal_moves(seat)))
            checked += 1
    assert checked > 1000


_SQ = st.sampled_from([*zoxso.PEARL_NAMES, *zoxso.STONE_NAMES])
_CANDIDATE = st.one_of(
    st.builds(lambda a, b: f"{a}-{b}", _SQ, _SQ),
    st.builds(lambda a, b: f"{a}^{b}", _SQ, _SQ),
    st.builds(lambda a, b, c: f"{a}^{b}-{c}", _SQ, _SQ, _SQ),
    st.builds(lambda k, a: f"{k}@{a}", st.sampled_from("MDX"), _SQ),
    st.just("pass"),
    st.text(max_size=8),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 40),
    plies=st.integers(0, 60),
    move=_CANDIDATE,
    edition=st.sampled_from(EDITIONS),
)
def test_apply_accepts_exactly_the_listed_moves(
    seed: int, plies: int, move: str, edition: int
) -> None:
    state = random_state(seed, plies, edition)
    if not state.to_act():
        return
    seat = state.to_move
    blob = state.serialize()
    if move in state.legal_moves(seat):
        new, events = state.apply(seat, move)
        assert events
        assert all(json.dumps(e.to_json()) for e in events)
        assert new.serialize() != blob
    else:
        with pytest.raises(GameError) as info:
            state.apply(seat, move)
        assert info.value.message
    assert state.serialize() == blob


@pytest.mark.parametrize("edition", EDITIONS)
def test_random_games_end_and_events_are_consistent(edition: int) -> None:
    for seed in range(30):
        rng = random.Random(seed)
        state = RULES.new_game(seed, edition=edition)
        while state.to_act():
            seat = state.to_act()[0]
            move = rng.choice(state.legal_moves(seat))
            new, events = state.apply(seat, move)
            assert new.view(None)["ply"] == state.view(None)["ply"] + 1
            for event in events:
                if event.kind in ("placed", "moved", "flipped"):
                    assert event.data["move"] == move
                    assert event.data["seat"] == seat
            state = new
        result = state.result()
        assert result is not None
        assert state.view(None)["ply"] <= 400
        assert state.edition == edition


_OFF_THRONE = [n for n in (*zoxso.PEARL_NAMES, *zoxso.STONE_NAMES) if n != "D4"]


@st.composite
def _near_the_throne(draw: st.DrawFn) -> dict[str, str]:
    """A Phase 2 position with a Xing on a corner Pearl of the Throne (so it may flip onto it)
    and up to 12 more pieces anywhere but on the Throne."""
    pieces = {draw(st.sampled_from(THRONE_CORNERS)): draw(st.sampled_from(["dX", "lX"]))}
    other = "lX" if "dX" in pieces.values() else "dX"
    pieces[draw(st.sampled_from([n for n in _OFF_THRONE if n not in pieces]))] = other
    extras = draw(
        st.lists(st.tuples(st.sampled_from(_OFF_THRONE), st.sampled_from(["dM", "dD", "lM", "lD"])))
    )
    count: dict[str, int] = {}
    for square, piece in extras[:12]:
        if square not in pieces and count.get(piece, 0) < (4 if piece[1] == "M" else 5):
            pieces[square] = piece
            count[piece] = count.get(piece, 0) + 1
    return pieces


def _xing_flip_then_move(state: ZoxsoState, move: str) -> bool:
    """Whether `move` flips a Xing from a Pearl onto the Throne and then moves it."""
    flip, _, after = move.partition("^")
    return (
        after.startswith("D4-")
        and flip in zoxso.PEARL_INDEX
        and (state.piece_at(flip) or " ")[1] == "X"
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    pieces=_near_the_throne(),
    to_move=st.integers(0, 1),
    edition=st.sampled_from(EDITIONS),
    seed=st.integers(0, 2**16),
)
def test_playouts_near_the_throne_follow_the_edition(
    pieces: dict[str, str], to_move: int, edition: int, seed: int
) -> None:
    """Random playouts from positions around the Throne, in both editions: every listed move
    applies (without raising, keeping the edition), the lists are the reference generator's, a
    Xing's flip onto D4 wins at once, and in edition 2 no listed move is a Xing's flip onto the
    Throne followed by a move (Z9 revised); in edition 1 some are, whenever the flip is."""
    rng = random.Random(seed)
    state = pos(pieces, edition, to_move=to_move)
    for _ in range(8):
        if not state.to_act():
            break
        seat = state.to_move
        moves = state.legal_moves(seat)
        assert moves == reference_moves(state)
        after_flip = [m for m in moves if _xing_flip_then_move(state, m)]
        flips = [m for m in moves if m.endswith("^D4") and m[:2] in zoxso.PEARL_INDEX]
        xing_flips = [m for m in flips if (state.piece_at(m[:2]) or " ")[1] == "X"]
        if edition == 2:
            assert after_flip == []
        else:  # edition 1: after each Xing flip, every step off the Throne it could take
            own = "dl"[seat]
            off = [s for s in AROUND_THRONE if (state.piece_at(s) or " ")[0] != own]
            assert sorted(after_flip) == sorted(f"{m}-{s}" for m in xing_flips for s in off)
        for move in moves:
            new, events = state.apply(seat, move)
            assert events
            assert new.edition == edition
            if move in xing_flips:
                assert reason(new) == "throne"
                assert winners(new) == (seat,)
        state, _ = state.apply(seat, rng.choice(moves))


# apply checks the one move it is given (ZoxsoState._allows) instead of looking it up among every
# legal move. Before that change apply accepted exactly the listed moves and refused any other
# with `_refusal`'s error: `listed_verdict` is that former answer, and the tests below hold
# apply to it in every position of random playouts, both phases and both editions.


def listed_verdict(state: ZoxsoState, move: str) -> tuple[type[GameError], str] | None:
    """What apply answered when it checked membership in the legal moves: None for a listed
    move, else the type and message of the refusal."""
    if move in state.legal_moves(state.to_move):
        return None
    error = state._refusal(move)
    return type(error), error.message


def well_formed_moves(state: ZoxsoState, rng: random.Random) -> list[str]:
    """Up to 60 well-formed moves, listed or not, drawn from every step, Stone move, flip and
    flip-then-move string from a few random squares (one of them holding a piece of the side to
    move, when there is one), a few placements, and pass."""
    pearls, stones = state.boards()
    own = [i for i, v in enumerate(pearls) if zoxso.SIDE_OF[v] == state.to_move]
    own += [64 + i for i, v in enumerate(stones) if zoxso.SIDE_OF[v] == state.to_move]
    squares = [rng.randrange(64 + 49), rng.randrange(64 + 49)]
    if own:
        squares.append(rng.choice(own))
    out = ["pass", *(zoxso._PLACE_STR[rng.randrange(3)][rng.randrange(64)] for _ in range(3))]
    for square in squares:
        if square < 64:
            out += zoxso._STEP_STR[square]
            for _, flip, then in zoxso._FLIPS_PS[square]:
                out += [flip, *then]
            # A flip onto a Stone that is not one of the Pearl's corners, and on from it.
            far = rng.randrange(49)
            out += [f"{zoxso.PEARL_NAMES[square]}^{zoxso._STONE_STR[far][rng.randrange(49)]}"]
        else:
            out += zoxso._STONE_STR[square - 64]
            for _, flip, then in zoxso._FLIPS_SP[square - 64]:
                out += [flip, *then]
            far = rng.randrange(64)
            out += [f"{zoxso.STONE_NAMES[square - 64]}^{zoxso._STEP_STR[far][rng.randrange(64)]}"]
    return rng.sample(out, min(len(out), 60))


def assert_apply_as_listed(state: ZoxsoState, rng: random.Random) -> None:
    """In `state`: every listed move is accepted, plays as before, and leaves `state` as it
    was; a sample of other well-formed moves is refused with the former type and message."""
    seat = state.to_move
    blob = state.serialize()
    moves = state.legal_moves(seat)
    for move in moves:
        new, events = state.apply(seat, move)
        old_new, old_events = state._play(seat, zoxso.parse_move(move), move)
        assert new.serialize() == old_new.serialize()
        assert events == old_events
    for move in well_formed_moves(state, rng):
        verdict = listed_verdict(state, move)
        if verdict is None:
            assert move in moves
            state.apply(seat, move)
            continue
        with pytest.raises(GameError) as info:
            state.apply(seat, move)
        assert (type(info.value), info.value.message) == verdict, move
    assert state.serialize() == blob


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**16), edition=st.sampled_from(EDITIONS))
def test_apply_checks_each_move_as_the_listed_moves_did(seed: int, edition: int) -> None:
    """Whole random games, Phase 1 and Phase 2 (captures, Throne wins, draws at max_plies):
    every position reached accepts exactly the listed moves and refuses the others as before."""
    rng = random.Random(seed)
    state = RULES.new_game(seed, edition=edition)
    while state.to_act():
        assert_apply_as_listed(state, rng)
        state, _ = state.apply(state.to_move, rng.choice(state.legal_moves(state.to_move)))
    assert state.result() is not None


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    pieces=_near_the_throne(),
    to_move=st.integers(0, 1),
    edition=st.sampled_from(EDITIONS),
    seed=st.integers(0, 2**16),
)
def test_apply_checks_each_move_near_the_throne_as_the_listed_moves_did(
    pieces: dict[str, str], to_move: int, edition: int, seed: int
) -> None:
    """The same in playouts around the Throne, where the editions differ (Z9): a Xing's flip
    onto D4, then a move or not, and a Ma's or Dao's flip onto it."""
    rng = random.Random(seed)
    state = pos(pieces, edition, to_move=to_move)
    for _ in range(8):
        if not state.to_act():
            break
        assert_apply_as_listed(state, rng)
        for corner in THRONE_CORNERS:  # every flip onto the Throne, then every move after it
            for stone, flip, thens in zoxso._FLIPS_PS[zoxso.PEARL_INDEX[corner]]:
                if stone != zoxso.THRONE:
                    continue
                for then in (flip, *thens):
                    verdict = listed_verdict(state, then)
                    if verdict is None:
                        state.apply(state.to_move, then)
                        continue
                    with pytest.raises(GameError) as info:
                        state.apply(state.to_move, then)
                    assert (type(info.value), info.value.message) == verdict, then
        state, _ = state.apply(state.to_move, rng.choice(state.legal_moves(state.to_move)))


@pytest.mark.parametrize("edition", EDITIONS)
def test_apply_does_not_generate_every_move(monkeypatch: pytest.MonkeyPatch, edition: int) -> None:
    """apply checks a listed move other than pass by itself: it never runs the move generators
    (the cost it had under load), in either phase."""
    positions: list[tuple[bytes, str]] = []
    for seed in range(3):
        rng = random.Random(seed)
        state = RULES.new_game(seed, edition=edition)
        while state.to_act():
            moves = state.legal_moves(state.to_move)
            sample = rng.sample(moves, min(5, len(moves)))
            positions += [(state.serialize(), move) for move in sample]
            state, _ = state.apply(state.to_move, rng.choice(moves))
    assert any("@" in move for _, move in positions)
    assert any("^" in move for _, move in positions)

    def generate(self: ZoxsoState) -> list[str]:
        raise AssertionError("apply generated every legal move")

    for name in ("_moves", "_gen_place", "_gen_play"):
        monkeypatch.setattr(ZoxsoState, name, generate)
    for blob, move in positions:
        state = RULES.deserialize(blob)  # a fresh state: no legal moves cached
        _, events = state.apply(state.to_move, move)
        assert events


# --------------------------------------------------------------------------------------------
# docs/rules/zoxso.md: its boards are what render() draws, and its examples are true

DOC = Path(__file__).resolve().parents[2] / "docs" / "rules" / "zoxso.md"
_DOC_BOARD = re.compile(
    r"<!-- zoxso-board setup=(\{[^\n]*?\})(?: moves=([^\n]*?))? -->\n```text\n(.*?)```", re.DOTALL
)


def test_docs_stand_on_their_own() -> None:
    """Every link and path the rules doc gives is a file of this repository."""
    text = DOC.read_text()
    root = DOC.parents[2]
    for target in re.findall(r"\]\(([^)#]+)", text):
        assert (DOC.parent / target).resolve().is_relative_to(root), target
        assert (DOC.parent / target).resolve().exists(), target
    assert "../" not in text.replace("](../", "](")
    assert "## Rules editions" in text
    assert "Edition 2** (current, since 2026-12-01)" in text


def test_docs_boards_are_rendered_positions() -> None:
    boards = _DOC_BOARD.findall(DOC.read_text())
    assert len(boards) >= 4
    for setup, moves, drawn in boards:
        state = RULES.new_game(0, setup=json.loads(setup))
        for item in moves.split():
            seat, move = item.split(":", 1)
            state, _ = state.apply(int(seat), move)
        assert render(state) == drawn


def test_docs_examples_hold() -> None:
    chain = pos(
        {"b3": "dM", "b4": "dD", "b5": "dM", "c4": "dD", "h1": "dX", "a4": "lM", "g8": "lX"}
    )
    for member in ("b3", "b4", "b5"):
        reach = {m.split("-")[1] for m in moves_from(chain, f"{member}-")}
        assert reach == {"b2", "a3", "a4", "a5", "b6"}
    assert moves_from(chain, "c4-") == {"c4-c3", "c4-c5", "c4-d4"}
    throne = pos({"e5": "dX", "d4": "dD", "D6": "lM", "C2": "lX"})
    assert "must move off" in refused(throne, "d4^D4")
    assert "blocked by the piece on D6" in refused(throne, "d4^D4-D7")
    assert {"d4^D4-D6", "d4^D4-G4"} <= set(throne.legal_moves(0))
    assert reason(play(throne, "d4^D4-D6", "C2-D2", "e5^D4")) == "throne"
    assert reason(play(throne, "e5^E4-D4")) == reason(play(throne, "e5^D5-D4")) == "throne"
    assert "no move may follow it (Z9)" in refused(throne, "e5^D4-D5")
    # Two Xings next to the Throne (Z9 revised; edition 1 as the doc's Rules editions says).
    pieces = {"e5": "dX", "D5": "lX", "b2": "dD", "g7": "lM"}
    two = pos(pieces)
    assert reason(play(two, "e5^D4")) == "throne"
    assert reason(play(two, "e5^E5-D5")) == "xing_captured"
    assert "play e5^D4 to win" in refused(two, "e5^D4-D5")
    assert reason(play(pos(pieces, 1), "e5^D4-D5")) == "xing_captured"
    assert reason(play(pos(pieces, 1), "e5^D4-C4")) is None
    stones = pos(
        {
            "A1": "dD",
            "A4": "dM",
            "E1": "lM",
            "B2": "lD",
            "C3": "dM",
            "B1": "lD",
            "h8": "dX",
            "a8": "lX",
        }
    )
    assert moves_from(stones, "A1-") == {"A1-A2", "A1-A3", "A1-B1"}
    assert moves_from(stones, "A4-") == {"A4-B2", "A4-B6", "A4-C5"}
    jumps = {"A2", "B1", "B5", "D1", "D5", "E2", "E4"}
    assert moves_from(stones, "C3-") == {f"C3-{s}" for s in jumps}
    assert {"A1^b2-b3", "C3^d4-d5"} <= set(stones.legal_moves(0))
    assert "only a Xing" in refused(pos({"C2": "dM", "a8": "dX", "h1": "lX"}), "C2-D4")
