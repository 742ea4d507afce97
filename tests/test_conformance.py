"""Every registered engine passes the shared conformance checks (tests/conformance.py)."""

from __future__ import annotations

import pytest

from engines import registry
from tests.conformance import check_rules

# Random games per engine: thousands in all, within the suite's time budget.
GAMES = {"esoloe": 1500, "solo": 30, "solace": 1500, "zoxso": 120}


@pytest.mark.parametrize("game", registry.names())
def test_engine_conformance(game: str) -> None:
    count = GAMES.get(game, 100)
    assert check_rules(registry.get(game), range(count)) == count


def test_registry_knows_its_games() -> None:
    assert "esoloe" in registry.names()
    with pytest.raises(KeyError, match="unknown game 'chess'"):
        registry.get("chess")
