"""e-SOLO-e's learned evaluation: how likely the seat to move is to win a quiet position (no win
at once for it, threats on at most one square against it), from a few cheap features, by a
logistic model fitted offline on the solved record (games/esoloe/solved-e2.jsonl.gz).

The strong bot values its search's leaves with it (`score`). The weights are in
`evaluation-e2.json` next to this module, loaded at import; ``python -m games.esoloe.evaluation
fit`` writes them again (deterministic: the same record gives the same file), and
``python -m games.esoloe.evaluation report`` prints the held-out accuracy by cubes placed.

The features, for the seat to move (``m``) and the other (``o``), from the engine's analysis
of the position (already built at a leaf: the search asked for both seats' threats):

- ``threat_o``: squares where ``o`` would win with its next cube (0 or 1 at a leaf);
- ``hot_sets_m``, ``hot_sets_o``: per seat, together (3 * hot + sets): the squares where a
  cube of that seat would make a new set or a run of 4 (some orientation), up to 3, where a
  threat can come from; and the sets (E8) it holds, up to 2;
- ``full``: stacks of 3 cubes (a 4th cube only goes there to win);
- ``cubes``: cubes placed; ``first``: the mover is the seat that began.

Each is one-hot encoded (one weight per value), so the model is a table of additive log-odds.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import math
import random
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Final

from games.esoloe import solver as exact
from games.esoloe.rules import _NEW, MAX_STACK, NUM_SQUARES, EsoloeState

WEIGHTS_PATH: Final = Path(__file__).with_name("evaluation-e2.json")
"""The fitted weights (`fit` writes them)."""
RECORD: Final = exact.RECORDS[2]

FEATURES: Final[tuple[tuple[str, int], ...]] = (
    ("threat_o", 3),
    ("hot_sets_m", 12),
    ("hot_sets_o", 12),
    ("full", 6),
    ("cubes", 17),
    ("first", 2),
)
"""Each feature's name and how many values it takes (0..n-1, larger values clipped)."""
_OFFSETS: Final = tuple(sum(n for _, n in FEATURES[:i]) for i in range(len(FEATURES)))
SIZE: Final = sum(n for _, n in FEATURES)
"""Weights of the model, the bias not counted."""

HOLD_OUT: Final = 5
"""One position in HOLD_OUT is held out of the fit (by a stable hash of its key)."""
SEED: Final = 2026


def hot_squares(state: EsoloeState, seat: int) -> int:
    """On how many squares a cube of `seat` would make a new set or a run of 4 (E6-E8) with
    some orientation, the stack being open (a threat is such a square; not every one is)."""
    an = state._analysis()
    memo, effects = an.memo, an._effects
    n = 0
    for s in range(NUM_SQUARES):
        for c, _ in an.changed[s]:  # none on a stack of 4
            by_symbol = memo[c * 2 + seat] or effects(c, seat)
            if by_symbol[4] >= _NEW:
                n += 1
                break
    return n


def features(state: EsoloeState, threats_o: int | None = None) -> tuple[int, ...]:
    """The feature values (see the module docstring), in FEATURES' order, for the seat to move
    in `state` (a game not over). `threats_o`: the other seat's threat squares if known."""
    m = state._ply % 2
    o = 1 - m
    an = state._analysis()
    if threats_o is None:
        threats_o = len({move[0] for move in state.winning_placements(o)})
    heights = state._heights
    full = 0
    for h in heights:
        if h >= MAX_STACK:
            full += 1
    owned = an.owned
    return (
        min(threats_o, 2),
        min(hot_squares(state, m), 3) * 3 + min(owned[m], 2),
        min(hot_squares(state, o), 3) * 3 + min(owned[o], 2),
        full,
        state._ply,
        1 - m,
    )


def indices(values: Sequence[int]) -> list[int]:
    """The active one-hot weights for these feature values."""
    return [off + v for off, v in zip(_OFFSETS, values, strict=True)]


class Model:
    """Log-odds of a win for the seat to move: bias + the weight of each feature's value."""

    __slots__ = ("bias", "weights")

    def __init__(self, bias: float, weights: Sequence[float]) -> None:
        if len(weights) != SIZE:
            raise ValueError(f"the model has {SIZE} weights, not {len(weights)}")
        self.bias = bias
        self.weights = list(weights)

    def logit(self, values: Sequence[int]) -> float:
        w = self.weights
        total = self.bias
        for i in indices(values):
            total += w[i]
        return total

    def probability(self, values: Sequence[int]) -> float:
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, self.logit(values)))))

    def to_json(self, about: dict[str, object]) -> dict[str, object]:
        names = [f"{name}={v}" for name, n in FEATURES for v in range(n)]
        return {
            "game": "esoloe",
            "edition": 2,
            "features": [[name, n] for name, n in FEATURES],
            "bias": round(self.bias, 6),
            "weights": {name: round(w, 6) for name, w in zip(names, self.weights, strict=True)},
            "fit": about,
        }

    @classmethod
    def from_json(cls, data: dict[str, object]) -> Model:
        if data.get("features") != [[name, n] for name, n in FEATURES]:
            raise ValueError("the weights file's features are not this module's")
        weights = data["weights"]
        bias = data["bias"]
        if not isinstance(weights, dict) or not isinstance(bias, int | float):
            raise ValueError("the weights file holds no weights")
        names = [f"{name}={v}" for name, n in FEATURES for v in range(n)]
        return cls(float(bias), [float(weights[name]) for name in names])


def load(path: Path = WEIGHTS_PATH) -> Model:
    return Model.from_json(json.loads(path.read_text(encoding="ascii")))


MODEL: Final = load()
SCALE: Final = 200
"""A leaf's score: SCALE * (2p - 1) for its win probability p, so within +-SCALE: below the
bots' FORK (500) and win values."""


def score(state: EsoloeState, threats_o: int) -> int:
    """The leaf score for the seat to move (`threats_o`: the other seat's threat squares)."""
    return round(SCALE * (2.0 * MODEL.probability(features(state, threats_o)) - 1.0))


# ---------------------------------------------------------------------------------- the fit


def held_out(text: str) -> bool:
    """Whether a position (its key as `solver.key_text`) is held out of the fit: by a hash
    that does not change between runs or machines."""
    return hashlib.sha256(text.encode()).digest()[0] % HOLD_OUT == 0


Sample = tuple[str, tuple[int, ...], int]
"""(key text, feature values, proven value for the mover: -1, 0, 1)."""


def samples(lines: Iterable[str]) -> list[Sample]:
    """The quiet positions of record lines (``KEY VALUE``): the mover has no win at once and
    faces threats on at most one square (what a leaf of the search is valued on)."""
    out: list[Sample] = []
    stacks: dict[str, tuple[int, ...]] = {}
    for line in lines:
        text, value = line.split()[:2]
        state = exact.state_from_key(exact.key_from_text(text, stacks))
        m = state._ply % 2
        if state.cubes_left(m) <= 0 or exact.wins_now(state, m):
            continue
        threats = exact.threat_squares(state, 1 - m)
        if threats >= 2:
            continue
        out.append((text, features(state, threats), int(value)))
    return out


def read_record(path: Path = RECORD, limit: int | None = None) -> list[str]:
    with gzip.open(path, "rt", encoding="ascii") as src:
        src.readline()
        lines = [line for line in src if line.strip()]
    return lines[:limit] if limit is not None else lines


def fit(data: Sequence[Sample], epochs: int = 60, rate: float = 0.05, l2: float = 1e-4) -> Model:
    """Logistic regression (win against not-win) by stochastic gradient descent, in an order
    shuffled by SEED: the same data give the same model."""
    rng = random.Random(SEED)
    order = list(range(len(data)))
    weights = [0.0] * SIZE
    wins = sum(1 for _, _, v in data if v == 1)
    p0 = min(max(wins / max(len(data), 1), 1e-3), 1 - 1e-3)
    bias = math.log(p0 / (1 - p0))
    active = [indices(values) for _, values, _ in data]
    targets = [1.0 if v == 1 else 0.0 for _, _, v in data]
    for epoch in range(epochs):
        rng.shuffle(order)
        step = rate / (1 + epoch / 10)
        for i in order:
            act = active[i]
            z = bias
            for j in act:
                z += weights[j]
            p = 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))
            g = p - targets[i]
            bias -= step * g
            for j in act:
                weights[j] -= step * (g + l2 * weights[j])
    return Model(bias, weights)


def crude(values: Sequence[int]) -> int:
    """The old leaf value (threats against the mover) as a predictor's score."""
    return -values[0]


def parents(text: str) -> list[str]:
    """The positions (key texts) one cube earlier: a top cube of the seat that just moved
    taken off, up to symmetry."""
    key = exact.key_from_text(text)
    mover = sum(len(s) for s in key) % 2
    out = []
    for s, stack in enumerate(key):
        if stack and (stack[-1] - 1) // 12 != mover:
            before = tuple(st[:-1] if i == s else st for i, st in enumerate(key))
            out.append(exact.key_text(exact.canonical(exact.state_from_key(before))))
    return out


def report(model: Model, train: Sequence[Sample], test: Sequence[Sample]) -> list[str]:
    """Held-out accuracy (win against not-win; draws are rare and count as not-win) by cubes
    placed: the model's (a win when p > 0.5) against the old leaf value's (a win when no threat
    stands against the mover, or never, whichever did better in `train`); then the same on the
    held-out positions none of whose parents (one cube earlier) is in `train`."""
    train_keys = {t for t, _, _ in train}
    crude_rule = _best_crude(train)
    rows: dict[int, list[int]] = {}
    total = [0] * 6
    for text, values, value in test:
        win = value == 1
        got = (model.probability(values) > 0.5) == win
        old = crude_rule(values) == win
        apart = not any(p in train_keys for p in parents(text))
        for row in (rows.setdefault(values[4], [0] * 6), total):
            row[0] += 1
            row[1] += got
            row[2] += old
            row[3] += apart
            row[4] += apart and got
            row[5] += apart and old
    lines = ["cubes  held out  learned     old   no parent in fit  learned     old"]
    for k, row in [*sorted(rows.items()), ("all", total)]:
        n, a, b, na, aa, ab = row
        lines.append(
            f"{k!s:>5}  {n:8d}  {a / n:7.1%}  {b / n:6.1%}  {na:16d}  "
            f"{aa / max(na, 1):7.1%}  {ab / max(na, 1):6.1%}"
        )
    return lines


def _best_crude(train: Sequence[Sample]) -> Callable[[Sequence[int]], bool]:
    def no_threat(values: Sequence[int]) -> bool:
        return crude(values) >= 0

    def never(values: Sequence[int]) -> bool:
        return False

    def hits(rule: Callable[[Sequence[int]], bool]) -> int:
        return sum(1 for _, values, v in train if rule(values) == (v == 1))

    return max((no_threat, never), key=hits)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m games.esoloe.evaluation",
        description="Fit e-SOLO-e's learned evaluation on the solved record, or report it.",
    )
    parser.add_argument("command", choices=("fit", "report"))
    parser.add_argument("--limit", type=int, default=None, help="only the record's first N")
    parser.add_argument("--out", type=Path, default=WEIGHTS_PATH)
    args = parser.parse_args(argv)
    data = samples(read_record(limit=args.limit))
    train = [s for s in data if not held_out(s[0])]
    test = [s for s in data if held_out(s[0])]
    if args.command == "fit":
        model = fit(train)
        about = {
            "record": RECORD.name,
            "positions": len(data),
            "train": len(train),
            "held_out": len(test),
            "seed": SEED,
        }
        args.out.write_text(json.dumps(model.to_json(about), indent=1) + "\n", encoding="ascii")
        print(f"fitted on {len(train)} positions ({len(test)} held out); wrote {args.out}")
    else:
        model = load(args.out)
    for line in report(model, train, test):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
