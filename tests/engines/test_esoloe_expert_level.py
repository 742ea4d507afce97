"""The expert bot level (games.LEVELS): every game has it, and the limits on bot work bound it
(services/game/limits.py) so that its 5 s budget does not let one player hold more bot time
than before it existed."""

from __future__ import annotations

import pytest

import games
from engines.bots.base import RandomBot, levels
from services.game.limits import Limits, Load, over
from wire.players import level_of, new_bot_id


def test_expert_is_the_last_level_with_the_largest_budget() -> None:
    assert games.LEVELS == ("random", "greedy", "strong", "expert")
    assert games.DEFAULT_BUDGETS["expert"] == 5.0
    assert max(games.DEFAULT_BUDGETS.values()) == games.DEFAULT_BUDGETS["expert"]


@pytest.mark.parametrize("name", ["esoloe", "zoxso", "solo", "solace"])
def test_every_game_has_an_expert_bot(name: str) -> None:
    made = games.get(name).levels()
    assert list(made) == list(games.LEVELS)
    assert made["expert"]() is not None


def test_expert_defaults_to_the_strong_factory() -> None:
    def strong() -> RandomBot:
        return RandomBot()

    assert levels(greedy=RandomBot, strong=strong)["expert"] is strong


def test_a_player_may_hold_one_expert_game() -> None:
    seats = ["alice", new_bot_id("expert")]
    assert level_of(seats[1]) == "expert"
    for limits in (Limits.from_env(), Limits.from_env().of(guest=True), Limits()):
        none = Load(live_games=0, bot_games=0, bot_games_by_level={})
        assert over(none, limits, seats) is None
        one = Load(live_games=1, bot_games=1, bot_games_by_level={"expert": 1})
        assert over(one, limits, seats) == ("expert_bot_games", 1, 1)
        assert limits.capped_levels(seats) == ["expert"]
        assert limits.platform_bot_games_by_level["expert"] == 40
