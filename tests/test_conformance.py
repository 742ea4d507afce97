"""Every registered engine passes the shared conformance checks (tests/conformance.py): the one
place they run for every engine."""

from __future__ import annotations

import pytest

import games
from tests.conformance import check_rules

# Random games per engine: thousands in all, within the suite's time budget (a random Solo game
# to 500 points runs about 1,800 steps, each checked: about 8 s).
GAMES = {"esoloe": 1500, "solo": 20, "solace": 1500, "zoxso": 120}


@pytest.mark.parametrize("game", games.names())
def test_engine_conformance(game: str) -> None:
    count = GAMES.get(game, 100)
    assert check_rules(games.rules(game), range(count)) == count


@pytest.mark.parametrize(
    ("game", "edition"),
    [(g, e) for g in games.names() for e in games.rules(g).editions[:-1]],
)
def test_older_editions_conformance(game: str, edition: int) -> None:
    """Games stored under an older rules edition are still played by the engine: the same
    checks, on a tenth as many games."""
    count = max(4, GAMES.get(game, 100) // 10)
    assert check_rules(games.rules(game), range(count), edition=edition) == count


def test_registry_knows_its_games() -> None:
    assert "esoloe" in games.names()
    with pytest.raises(KeyError, match="unknown game 'chess'"):
        games.rules("chess")
