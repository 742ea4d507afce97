"""What one player may hold at once, so that nobody can make the platform work for them alone:
live games, games against bots (and against the strong and expert levels), and the options of a
game; and what the whole platform runs at once of a bot level, shared fairly between players.

The game service checks them when a player creates a table of their own; the lobby when it makes
a game for a player (PlayAgainstBots) or queues a ticket (FindMatch). A refusal is
LIMIT_REACHED (RESOURCE_EXHAUSTED) naming the limit and its value; ending a game frees room.

Platform-wide, a bot level may have a cap (`platform_bot_games_by_level`, strong: 200, expert:
40): the live games with a bot of that level, whoever holds them. Its fair share: while fewer
than half of the cap are in use, anyone may start one (within their own limits); from half on,
a player may start another only while they hold fewer than their share of the free places,
which is the free places divided by the players holding such games (counting them), rounded
up. So a player who holds none gets one while any place is free, and nobody holds more than
half of the cap. The game service checks the cap, the share and lists the game in one script
(services/game/store.py, `_CLAIM`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import games
from runtime.config import env_int
from wire.errors import ApiError
from wire.players import is_bot, level_of


@dataclass(frozen=True, kw_only=True)
class Limits:
    live_games: int = 20
    """Games not finished yet that a player holds a seat in (or waits for, with a ticket)."""
    bot_games: int = 10
    """Of those, games with a bot at the table (watching bots play counts too)."""
    bot_games_by_level: Mapping[str, int] = field(
        default_factory=lambda: {"strong": 3, "expert": 1}
    )
    """Of those, games with a bot of a level (the strong bots think long, the expert ones five
    times as long: games.DEFAULT_BUDGETS)."""
    platform_bot_games_by_level: Mapping[str, int] = field(
        default_factory=lambda: {"strong": 200, "expert": 40}
    )
    """Games with a bot of a level live at once on the whole platform, whoever holds them (a
    level absent or 0: no cap); from half of a cap on, each player gets a fair share of the
    free places (module doc)."""
    guests: Limits | None = None
    """A guest's limits (tighter: a guest is for trying the platform, and costs nothing to
    make); None: the same as everyone's."""

    def of(self, guest: bool) -> Limits:
        """The limits of a player who is a `guest` or not."""
        if not guest or self.guests is None:
            return self
        # The platform-wide caps are the platform's, whoever asks.
        return replace(self.guests, platform_bot_games_by_level=self.platform_bot_games_by_level)

    @staticmethod
    def from_env() -> Limits:
        return Limits(
            live_games=env_int("MAX_LIVE_GAMES", 20),
            bot_games=env_int("MAX_BOT_GAMES", 10),
            bot_games_by_level={
                "strong": env_int("MAX_STRONG_BOT_GAMES", 3),
                "expert": env_int("MAX_EXPERT_BOT_GAMES", 1),
            },
            guests=Limits(
                live_games=env_int("GUEST_MAX_LIVE_GAMES", 5),
                bot_games=env_int("GUEST_MAX_BOT_GAMES", 3),
                bot_games_by_level={
                    "strong": env_int("GUEST_MAX_STRONG_BOT_GAMES", 1),
                    "expert": env_int("GUEST_MAX_EXPERT_BOT_GAMES", 1),
                },
            ),
            platform_bot_games_by_level={
                "strong": env_int("MAX_PLATFORM_STRONG_BOT_GAMES", 200),
                "expert": env_int("MAX_PLATFORM_EXPERT_BOT_GAMES", 40),
            },
        )

    def capped_levels(self, seats: Sequence[str]) -> list[str]:
        """The bot levels at a table with these seats that the platform caps."""
        return [level for level in levels_at(seats) if self.platform_bot_games_by_level.get(level)]


@dataclass(frozen=True)
class Load:
    """What a player holds now."""

    live_games: int
    bot_games: int
    bot_games_by_level: Mapping[str, int]


def levels_at(seats: Sequence[str]) -> list[str]:
    """The bot levels at a table with these seats (each once)."""
    return sorted({level_of(p) for p in seats if is_bot(p)})


def load_of(tables: Iterable[Sequence[str]]) -> Load:
    """The load of a player from the bot levels at each of their live games."""
    bot_games = 0
    by_level: dict[str, int] = {}
    count = 0
    for levels in tables:
        count += 1
        if levels:
            bot_games += 1
        for level in set(levels):
            by_level[level] = by_level.get(level, 0) + 1
    return Load(count, bot_games, by_level)


def refusal(limit: str, held: int, value: int) -> ApiError:
    """LIMIT_REACHED: the player holds `held` of what `limit` allows `value` of."""
    if limit == "live_games":
        what = f"{held} games going on"
    elif limit == "bot_games":
        what = f"{held} games with bots"
    else:
        what = f"{held} games against {limit.removesuffix('_bot_games')} bots"
    return ApiError(
        "LIMIT_REACHED",
        f"you already have {what}: at most {value} at once; finish or resign one first",
        limit=limit,
        max=str(value),
    )


def platform_refusal(limit: str, level: str, held: int, most: int, used: int) -> ApiError:
    """LIMIT_REACHED for a platform-wide cap of a bot level (`limit`
    "platform_<level>_bot_games": `used` games are going on, `most` is the cap) or for a
    player's fair share of it ("<level>_bot_games_share": they hold `held`, `most` is their
    share now, `used` games of the cap are going on)."""
    if limit.startswith("platform_"):
        message = (
            f"the platform already runs {used} games against {level} bots, as many as it runs "
            f"at once ({most}); try again when some have ended, or choose another level"
        )
    else:
        message = (
            f"{level} bots are in demand: {used} games against them are going on, so each "
            f"player may hold no more than an equal share of the places left ({most} now); "
            f"you hold {held}: finish or stop one first, or choose another level"
        )
    return ApiError("LIMIT_REACHED", message, limit=limit, max=str(most))


def over(load: Load, limits: Limits, seats: Sequence[str]) -> tuple[str, int, int] | None:
    """The limit one more game with these `seats` would break for a player holding `load`:
    (its name, what is held, its value); None when it is allowed."""
    if load.live_games >= limits.live_games:
        return "live_games", load.live_games, limits.live_games
    levels = levels_at(seats)
    if levels and load.bot_games >= limits.bot_games:
        return "bot_games", load.bot_games, limits.bot_games
    for level in levels:
        cap = limits.bot_games_by_level.get(level)
        held = load.bot_games_by_level.get(level, 0)
        if cap is not None and held >= cap:
            return f"{level}_bot_games", held, cap
    return None


def check_load(load: Load, limits: Limits, seats: Sequence[str]) -> None:
    """Refuse one more game with these `seats` for a player holding `load`."""
    broken = over(load, limits, seats)
    if broken is not None:
        raise refusal(*broken)


def check_options(game: str, options: Mapping[str, Any], seats: Sequence[str]) -> None:
    """Refuse options beyond the platform's bounds for `game` (tighter with no person at the
    table); `options` with every default filled in."""
    declared = games.get(game)
    unattended = all(is_bot(p) for p in seats)
    bounds = dict(declared.option_limits)
    if unattended:
        for name, cap in declared.unattended_limits:
            bounds[name] = min(cap, bounds.get(name, cap))
    for name, cap in sorted(bounds.items()):
        value = options.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and value > cap:
            where = " at a table with no person (bots only)" if unattended else ""
            raise ApiError("INVALID_OPTIONS", f"{name} may be at most {cap}{where}; got {value}")
