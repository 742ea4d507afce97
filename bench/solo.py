"""Solo engine speed next to RLCard's UNO environment (random agents), engine only, no I/O.

Two ways to play Solo at random:
- *uniform*: every move drawn uniformly from the acting seat's legal moves (bench/engines.py's
  random game). Solo lets a player draw even when it could play (S5), so such games are long.
- *as RLCard*: the policy RLCard's UNO imposes on its random agents: draw only when no card can be
  played (RLCard lists `draw` as its only legal action then), and play a playable drawn card
  (RLCard plays it at once). An RLCard UNO game is one hand, so the like-for-like Solo game is
  one round (`mode: rounds, rounds: 1`). The ratio is taken on this basis.

RLCard runs as a subprocess (bench/rlcard_uno.py) with the separate benchmark virtualenv
/work/main/.bench-venv: rlcard is not a dependency of the product. Speeds are CPU time (process
time) on both sides, so other load on a shared machine matters less.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from games.solo.rules import RULES, SoloState

ROOT = Path(__file__).resolve().parent.parent
BENCH_PYTHON = ROOT / ".bench-venv" / "bin" / "python"
RLCARD_DRIVER = ROOT / "bench" / "rlcard_uno.py"
TARGET_RATIO = 3.0
ONE_ROUND = {"mode": "rounds", "rounds": 1}

Policy = Callable[[list[str], random.Random], str]


def uniform(moves: list[str], rng: random.Random) -> str:
    return rng.choice(moves)


def as_rlcard(moves: list[str], rng: random.Random) -> str:
    """Play when possible; `draw` (or `pass`, keeping a drawn card) only when nothing else. A
    play that leaves one card is always made with the Solo call (`!`): RLCard's UNO has no call
    to forget, so its agents never pay for one."""
    plays = [move for move in moves if move != "draw" and move != "pass"]
    called = {move[:-1] for move in plays if move.endswith("!")}
    plays = [move for move in plays if move not in called]
    return rng.choice(plays or moves)


def random_game(seed: int, options: dict[str, object], policy: Policy) -> int:
    """One game with random acting seats and random legal moves; returns the plies."""
    rng = random.Random(seed)
    state: SoloState = RULES.new_game(seed, options)
    plies = 0
    while True:
        to_act = state.to_act()
        if not to_act:
            return plies
        seat = to_act[0] if len(to_act) == 1 else rng.choice(to_act)
        new, _ = state.apply(seat, policy(state.legal_moves(seat), rng))
        state = new  # type: ignore[assignment]
        plies += 1


def measure(seconds: float, options: dict[str, object], policy: Policy) -> tuple[float, float]:
    """(games per CPU second, plies per game)."""
    start = time.process_time()
    games = plies = 0
    while time.process_time() - start < seconds:
        plies += random_game(games, options, policy)
        games += 1
    return games / (time.process_time() - start), plies / games


def rlcard_uno(seconds: float) -> dict[str, float] | None:
    """RLCard UNO (2 players, random agents) figures, or None when the venv is missing."""
    if not BENCH_PYTHON.exists():
        return None
    done = subprocess.run(
        [str(BENCH_PYTHON), str(RLCARD_DRIVER), str(seconds)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120 + seconds,
    )
    figures: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def run(seconds: float = 3.0) -> list[str]:
    lines = []
    like: dict[int, float] = {}
    for players in (2, 4):
        games, plies = measure(seconds, {"players": players}, uniform)
        lines.append(
            f"solo {players}p full games (default options), uniform random moves: "
            f"{games:8.1f} games/s  ({plies:6.0f} plies/game)"
        )
        games, plies = measure(seconds, {"players": players, **ONE_ROUND}, uniform)
        lines.append(
            f"solo {players}p one round, uniform random moves:                  "
            f"{games:8.1f} games/s  ({plies:6.0f} plies/game)"
        )
        games, plies = measure(seconds, {"players": players, **ONE_ROUND}, as_rlcard)
        like[players] = games
        lines.append(
            f"solo {players}p one round, random as RLCard (draw only if no play): "
            f"{games:8.1f} games/s  ({plies:6.0f} plies/game)"
        )
    uno = rlcard_uno(seconds)
    if uno is None:
        lines.append(
            f"RLCard UNO: skipped, no benchmark virtualenv at {BENCH_PYTHON.parent.parent}; "
            "create it with: python3 -m venv .bench-venv && "
            ".bench-venv/bin/pip install rlcard==1.2.0 numpy==2.4.6 termcolor==3.3.0"
        )
        return lines
    ratio = like[2] / uno["games_per_second"]
    lines.append(
        f"RLCard UNO 2p, random agents:                                      "
        f"{uno['games_per_second']:8.1f} games/s  ({uno['steps_per_game']:6.0f} steps/game)"
    )
    verdict = "meets" if ratio >= TARGET_RATIO else "MISSES"
    lines.append(
        f"ratio solo 2p one round (as RLCard) / RLCard UNO 2p: {ratio:.2f}x "
        f"({verdict} the {TARGET_RATIO:.0f}x target)"
    )
    return lines


if __name__ == "__main__":
    for line in run(float(sys.argv[1]) if len(sys.argv) > 1 else 3.0):
        print(line, flush=True)
