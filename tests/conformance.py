"""The checks every engine must pass, whatever the game (the contract in engines/contract.py).

`check_rules(rules, seeds)` plays one random game per seed and checks, at every step:
- the game never raises on a listed move, and every seat in to_act() has legal moves;
- to_act() is empty exactly when the game is over, and the game ends;
- every listed legal move of the acting seat applies (all of them are tried on sampled steps);
- a move not listed raises a GameError and leaves the state unchanged;
- serialize/deserialize gives the same state back;
- what a seat sees (view, legal moves) does not change when everything hidden from it is redrawn
  (determinize), and neither does the public view;
- a bot's position built from a seat's view alone (`Rules.from_view`) shows that seat the same
  view and gives it the same legal moves.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable

import pytest

from engines.contract import GameError, Rules, State

GARBAGE_MOVES = ["", " ", "???", "x" * 300, "pass pass", "\x00", "play", "a-", "-", "stop now", "1"]


def _check_state(rules: Rules, state: State, rng: random.Random, deep: bool) -> None:
    blob = state.serialize()
    assert rules.deserialize(blob) == state, "serialize/deserialize is not exact"
    assert rules.deserialize(blob).serialize() == blob
    to_act = state.to_act()
    assert list(to_act) == sorted(set(to_act)), "to_act must be ascending and distinct"
    assert (not to_act) == state.finished, "to_act must be empty exactly when the game is over"
    json.dumps(state.view(None))
    for seat in range(state.num_seats):
        moves = state.legal_moves(seat)
        assert len(moves) == len(set(moves)), f"seat {seat} has duplicate legal moves"
        assert bool(moves) == (seat in to_act), f"seat {seat}: legal moves disagree with to_act"
        view = state.view(seat)
        json.dumps(view)
        if deep:
            other = state.determinize(seat, rng)
            assert other.view(seat) == view, f"seat {seat}'s view depends on hidden information"
            assert other.legal_moves(seat) == moves, f"seat {seat}'s legal moves leak"
            rebuilt = rules.from_view(view, seat, rng)
            assert rebuilt.view(seat) == view, f"seat {seat}: from_view changes the view"
            assert rebuilt.legal_moves(seat) == moves, f"seat {seat}: from_view's legal moves"
    public = state.public_to_act()
    assert set(public) <= set(to_act), "public_to_act must be part of to_act"
    if deep:
        hidden = state.determinize(None, rng)
        assert hidden.view(None) == state.view(None), "public view leaks"
        assert hidden.public_to_act() == public, "public_to_act leaks"
        listed = {m for s in to_act for m in state.legal_moves(s)}
        for garbage in [*GARBAGE_MOVES, *(m + "x" for m in list(listed)[:3])]:
            for seat in range(state.num_seats):
                if garbage in state.legal_moves(seat):
                    continue
                with pytest.raises(GameError):
                    state.apply(seat, garbage)
        # Once for all of them (a state serializes in up to a millisecond in a long Solo game).
        assert state.serialize() == blob, "a refused move changed the state"


def play_random_game(
    rules: Rules,
    seed: int,
    deep_every: int = 7,
    max_steps: int = 20_000,
    edition: int | None = None,
) -> State:
    """Play one game (of `edition`, default the current one) with random legal moves of random
    acting seats, checking every step."""
    rng = random.Random(seed)
    state = rules.new_game(seed, edition=edition)
    assert state.edition == (edition or rules.edition)
    for step in range(max_steps):
        deep = step % deep_every == 0
        _check_state(rules, state, rng, deep)
        to_act = state.to_act()
        if not to_act:
            return state
        seat = rng.choice(to_act)
        moves = state.legal_moves(seat)
        if deep and len(moves) <= 80:
            for move in moves:  # every listed move applies
                state.apply(seat, move)
        before = state.serialize()
        state, events = state.apply(seat, rng.choice(moves))
        assert state.edition == (edition or rules.edition), "a move changed the rules edition"
        assert rules.deserialize(before).serialize() == before
        for event in events:
            json.dumps(event.to_json())
            assert event.to is None or 0 <= event.to < state.num_seats
    raise AssertionError(f"seed {seed}: no end after {max_steps} steps")


def check_rules(rules: Rules, seeds: Iterable[int], edition: int | None = None) -> int:
    """Run the conformance checks over one random game per seed (of `edition`, default the
    current one); returns the games played."""
    played = 0
    for seed in seeds:
        final = play_random_game(rules, seed, edition=edition)
        result = final.result()
        assert result is not None
        assert all(0 <= w < final.num_seats for w in result.winners)
        json.dumps(result.to_json())
        with pytest.raises(GameError):
            final.apply(0, (final.legal_moves(0) or ["pass"])[0])
        played += 1
    return played
