"""Games stored before rules editions existed go on under edition 1, exactly as the code of
that time played them (tests/fixtures/before_editions.json holds what that code wrote and
listed); new games are played under each game's current edition."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import games
from engines.contract import InvalidOptions, State

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
    assert _as_before_round_records(game, replayed) == start
    for seat, move in stored["moves"]:
        replayed, _ = replayed.apply(seat, move)
    assert _as_before_round_records(game, replayed) == after
    legal = {str(seat): after.legal_moves(seat) for seat in range(after.num_seats)}
    assert legal == stored["legal"], "edition 1 lists other moves than the code before editions"


def _as_before_round_records(game: str, state: State) -> State:
    """Solo's round records (the public log, each seat's own hand history) came after the
    fixture: its stored states load without them. Everything else must be as the old code
    left it."""
    if game != "solo":
        return state
    data = json.loads(state.serialize())
    assert "log" in data, "the replay keeps the round's log"
    assert data["seen"], "and each seat's hand history"
    data["log"] = []
    data["seen"] = [[] for _ in data["seen"]]
    return games.rules(game).deserialize(json.dumps(data).encode())


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
