"""e-SOLO-e's solved records (games/esoloe/solved-e1.jsonl.gz, solved-e2.jsonl.gz: every
position value the solver proved from the sample positions, `make esoloe-solved`), checked
against the engine's own rules with the independent plain search of test_esoloe_solver, and a
part of them regenerated.
"""

from __future__ import annotations

import random

from games.esoloe import solver
from games.esoloe.solver import Solver
from tests.engines.test_esoloe_solver import DEEP, EDITIONS, plain_value

RECORD_GAMES = 60
RECORD_PLIES = 6
RECORD_NODES = 5_000
"""The command that wrote the records (Makefile `esoloe-solved`): python -m games.esoloe.solver
--edition E --record 60 --plies 6 --max-nodes 5000 --out games/esoloe/solved-eE.jsonl.gz"""


def load_record(edition: int) -> Solver:
    path = solver.RECORDS[edition]
    assert path.exists(), f"{path} is missing: make esoloe-solved"
    search = Solver(edition)
    assert search.load(path) > 1000
    return search


@EDITIONS
def test_the_record_agrees_with_the_engine(edition: int) -> None:
    """A seeded sample of the record's values, every one whose position has 12 or more cubes
    re-derived by the plain search; the rest by a fresh solver with no record."""
    record = load_record(edition).exact()
    rng = random.Random(edition)
    keys = sorted(record)
    deep = [key for key in keys if sum(map(len, key)) >= DEEP]
    shallow = [key for key in keys if sum(map(len, key)) < DEEP - 2]
    assert len(deep) >= 25
    assert len(shallow) >= 5
    for key in rng.sample(deep, 25):
        assert plain_value(solver.state_from_key(key, edition)) == record[key], key
    for key in rng.sample(shallow, 5):
        fresh = Solver(edition).value(solver.state_from_key(key, edition), max_nodes=20_000)
        assert fresh in (None, record[key]), key


@EDITIONS
def test_the_record_regenerates(edition: int) -> None:
    """The first sample position, solved again as the record's command does: every value proved
    is in the record, the same (the record's first game ran on an empty table too)."""
    record = load_record(edition).exact()
    first = next(
        seed
        for seed in range(RECORD_GAMES)
        if solver.sample_position(seed, RECORD_PLIES, edition) is not None
    )
    search, roots = solver.build_record(edition, range(first + 1), RECORD_PLIES, RECORD_NODES)
    assert roots
    fresh = search.exact()
    assert fresh
    for key, value in fresh.items():
        assert record.get(key) == value, key
    for key, root in roots.values():
        if root is not None:
            assert record[key] == root
