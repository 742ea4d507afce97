"""Games stored before rules editions existed go on under edition 1, exactly as the code of
that time played them (tests/fixtures/before_editions.json holds what that code wrote and
listed); new games are played under each game's current edition."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import games
from engines.contract import InvalidOptions

FIXTURE = Path(__file__).parent / "fixtures" / "before_editions.json"
BEFORE: dict[str, Any] = json.loads(FIXTURE.read_text())["games"]


@pytest.mark.parametrize("game", sorted(BEFORE))
def test_a_snapshot_from_before_editions_plays_edition_1(game: str) -> None:
    stored = BEFORE[game]
    rules = games.rules(game)
    start = rules.deserialize(stored["start"].encode())
    after = rules.deserialize(stored["after"].encode())
    assert (start.edition, after.edition) == (1, 1)
    meta = stored["meta"]
    replayed = rules.new_game(meta["seed"], meta["options"], stored["setup"], edition=1)
    assert replayed == start
    for seat, move in stored["moves"]:
        replayed, _ = replayed.apply(seat, move)
    if game == "solo":
        # The round's public log came after the fixture: the stored state loads with an empty
        # log, the replay keeps one. Everything else must be as the old code left it.
        data = json.loads(replayed.serialize())
        assert data["log"], "the replay records the round's public log"
        data["log"] = []
        replayed = rules.deserialize(json.dumps(data).encode())
    assert replayed == after
    legal = {str(seat): after.legal_moves(seat) for seat in range(after.num_seats)}
    assert legal == stored["legal"], "edition 1 lists other moves than the code before editions"


@pytest.mark.parametrize("game", games.names())
def test_new_games_take_the_current_edition_and_only_known_ones(game: str) -> None:
    rules = games.rules(game)
    assert rules.editions[-1] == rules.edition
    assert list(rules.editions) == sorted(set(rules.editions))
    state = rules.new_game(1)
    assert state.edition == rules.edition
    assert rules.deserialize(state.serialize()).edition == rules.edition
    for edition in rules.editions:
        assert rules.new_game(1, edition=edition).edition == edition
    with pytest.raises(InvalidOptions, match="no rules edition 99"):
        rules.new_game(1, edition=99)


def test_the_revised_games_are_in_edition_2() -> None:
    """E8, S11, S12 and Z9 were revised on 2026-12-01: their games moved to edition 2."""
    assert {game: games.rules(game).edition for game in games.names()} == {
        "esoloe": 2,
        "solace": 1,
        "solo": 2,
        "zoxso": 2,
    }
