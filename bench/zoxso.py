"""ZoxSo engine speed (no I/O): random games per second, and legal-move generations per second
in a mid-game position. `python -m bench.zoxso` prints them."""

from __future__ import annotations

import random
import time

from bench.engines import games_per_second
from games.zoxso.rules import RULES, ZoxsoState


def midgame(min_stone_pieces: int = 4, plies: int = 60) -> ZoxsoState:
    """A reproducible Phase 2 position after `plies` random plies with pieces on both layers."""
    for seed in range(1000):
        rng = random.Random(seed)
        state = RULES.new_game(seed)
        for _ in range(plies):
            if not state.to_act():
                break
            state, _ = state.apply(state.to_move, rng.choice(state.legal_moves(state.to_move)))
        view = state.view(None)
        if state.to_act() and len(view["stones"]) >= min_stone_pieces:
            return state
    raise RuntimeError("no mid-game position found")  # pragma: no cover


def generations_per_second(state: ZoxsoState, seconds: float = 2.0) -> tuple[float, int]:
    """(legal-move lists per second, moves in the list) for the side to move in `state`.

    Every round asks a fresh copy of the position (a state caches its list after the first
    call), so each call generates the whole list: Zox-chains, steps, flips, flip-then-moves and
    Stone moves, sorted."""
    seat = state.to_move
    blob = state.serialize()
    moves = len(state.legal_moves(seat))
    rounds = 0
    batch = 200
    elapsed = 0.0
    while elapsed < seconds:
        copies = [RULES.deserialize(blob) for _ in range(batch)]
        start = time.perf_counter()
        for copy in copies:
            copy.legal_moves(seat)
        elapsed += time.perf_counter() - start
        rounds += batch
    return rounds / elapsed, moves


def run(seconds: float = 3.0) -> list[str]:
    games, plies = games_per_second(RULES, seconds)
    state = midgame()
    per_second, moves = generations_per_second(state, seconds)
    view = state.view(None)
    return [
        f"zoxso    random games/s {games:10.1f}   plies/s {plies:10.0f}",
        f"zoxso    legal-move lists/s {per_second:10.0f}   (mid-game, ply {view['ply']}, "
        f"{len(view['pearls'])} pieces on Pearls, {len(view['stones'])} on Stones, "
        f"{moves} legal moves)",
    ]


if __name__ == "__main__":
    for line in run():
        print(line)
