"""Ratings, without I/O: who a finished game counts for, how its seats rank, their new ratings
(OpenSkill's Weng-Lin Plackett-Luce model), the number shown and when a rating is still
provisional. docs/ratings.md says the same in words.

A game counts when it is rated, finished with a result, played (every seat made PLAYED_MOVES
moves of its own) and has a rated person and another rated seat. Bot levels' ratings are fixed;
an established player's rating moves only with the other established seats' results.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from openskill.models import PlackettLuce

import games
from games.replay import PLATFORM_MOVES
from services.ratings.bot_seeds import BOT_SEEDS
from wire.players import plays_as_bot
from wire.records import FinishedGame, VersionStatus

MU = 25.0
"""A new player's mean (OpenSkill's default)."""
SIGMA = MU / 3
"""A new player's uncertainty (OpenSkill's default)."""
DISPLAY_SCALE = 40.0
DISPLAY_OFFSET = 1000.0
"""The rating shown: DISPLAY_OFFSET + DISPLAY_SCALE × (mu − 3 sigma), rounded (a new player
shows 1000; OpenSkill's `ordinal(alpha, target)`)."""
PROVISIONAL_GAMES = 10
"""A rating is provisional while it counts fewer rated games than this..."""
PROVISIONAL_SIGMA = 7.0
"""... or while its sigma is still above this (a new player's is 8.33; ten two-seat games
bring it to about 6.8)."""
MAX_SEATS = 10
SEED_SIGMA = 4.0
"""A bot level's fixed rating is at least this uncertain, whatever the arena found (the arena
played bots against bots, not people)."""
PLAYED_MOVES = 2
"""A game counts only when every seat made at least this many moves of its own (a resignation,
the platform's steps and a bot's moves for a seat it took over are not the seat's moves): a
game resigned at once, or that one side never played, rates nobody."""

MODEL = PlackettLuce(mu=MU, sigma=SIGMA)

BOT_RATING_PREFIX = "bot-"
NO_RESULT = frozenset(("aborted", "abandoned", "stopped_by_sponsor"))
"""A finished game's result reasons when the platform ended it without a result."""


@dataclass(frozen=True, slots=True)
class Rating:
    mu: float = MU
    sigma: float = SIGMA
    games: int = 0
    fixed: bool = False
    """A bot level's: games never move it, and it is never provisional."""

    @property
    def conservative(self) -> float:
        """mu − 3 sigma: the skill the player very likely has at least."""
        return self.mu - 3 * self.sigma

    @property
    def display(self) -> int:
        return round(DISPLAY_OFFSET + DISPLAY_SCALE * self.conservative)

    @property
    def provisional(self) -> bool:
        if self.fixed:
            return False
        return self.sigma > PROVISIONAL_SIGMA or self.games < PROVISIONAL_GAMES

    def to_json(self) -> str:
        """As Redis holds it: `[mu, sigma, games]` (never a bot level's)."""
        return json.dumps([self.mu, self.sigma, self.games])

    @classmethod
    def from_json(cls, value: bytes | str | None) -> Rating:
        """A rating as Redis holds it (a new player's when None)."""
        if value is None:
            return cls()
        mu, sigma, games = json.loads(value)
        return cls(float(mu), float(sigma), int(games))


@dataclass(frozen=True, slots=True)
class Change:
    """What one rated seat's game did to its holder's rating."""

    seat: int
    player: str
    """The rated player: an account's id, or `bot-<level>`."""
    rank: int
    """0 for the first place; equal for a tie."""
    before: Rating
    after: Rating

    def to_json(self) -> dict[str, Any]:
        return {
            "seat": self.seat,
            "player": self.player,
            "rank": self.rank,
            "before": [self.before.mu, self.before.sigma, self.before.games],
            "after": [self.after.mu, self.after.sigma, self.after.games],
        }

    @staticmethod
    def from_json(obj: Mapping[str, Any]) -> Change:
        player = str(obj["player"])
        fixed = is_bot_level(player)
        return Change(
            int(obj["seat"]),
            player,
            int(obj["rank"]),
            Rating(*_triple(obj["before"]), fixed=fixed),
            Rating(*_triple(obj["after"]), fixed=fixed),
        )


def _triple(values: Sequence[Any]) -> tuple[float, float, int]:
    mu, sigma, games = values
    return float(mu), float(sigma), int(games)


def is_bot_level(player: str) -> bool:
    """Whether a rated player is a bot level (`bot-<level>`), not an account."""
    return player.startswith(BOT_RATING_PREFIX)


def on_the_board(player: str, rating: Rating) -> bool:
    """Whether a player is on the leaderboard: an established account (not provisional, not a
    bot level)."""
    return not is_bot_level(player) and not rating.provisional


def rated_player(player: str, account: bool) -> str | None:
    """Who a seat's results count for: the account, the bot level (`bot-<level>` for a seat of
    the platform's bots `bot-<level>-<hex>`), or nobody (a guest's seat)."""
    if player.startswith(BOT_RATING_PREFIX):
        parts = player.split("-")
        return f"{BOT_RATING_PREFIX}{parts[1]}" if len(parts) == 3 and parts[1] else None
    return player if account else None


def ranks(seats: int, result: Mapping[str, Any], last: Sequence[int] = ()) -> list[int]:
    """Each seat's place (0 first, ties equal) in a finished game's result (Result.to_json):
    the seats in `last` (and the one that resigned or ran out of time) last, then winners,
    then the rest by score, higher first."""
    detail = result.get("detail") or {}
    losers = set(last)
    if detail.get("reason") == "timeout" and isinstance(detail.get("seat"), int):
        losers.add(detail["seat"])
    if isinstance(detail.get("resigned"), int):
        losers.add(detail["resigned"])
    winners = {int(w) for w in result.get("winners", ())}
    scores = {int(s): float(v) for s, v in (result.get("scores") or {}).items()}

    def key(seat: int) -> tuple[int, int, float]:
        return (seat in losers, seat not in winners, -scores.get(seat, 0.0))

    order = sorted(range(seats), key=key)
    places = [0] * seats
    for index, seat in enumerate(order):
        same = index > 0 and key(seat) == key(order[index - 1])
        places[seat] = places[order[index - 1]] if same else index
    return places


def has_result(status: VersionStatus) -> bool:
    """Whether a finished game ended with a result (not aborted, stopped or abandoned)."""
    result = status.result
    if not status.finished or result is None:
        return False
    return (result.get("detail") or {}).get("reason") not in NO_RESULT


def score_of(record: FinishedGame) -> tuple[str, float] | None:
    """(the player, their score) of a finished game played alone that goes to its score table:
    an account's, with a result, the seat still theirs at the end; None for any other."""
    status = record.status
    if not record.scored or not has_result(status) or status.replaced:
        return None
    scores = (status.result or {}).get("scores") or {}
    return record.seats[0], float(scores.get("0", 0.0))


CHOSEN_SETTINGS = frozenset(("players",))
"""The table settings a rated table may choose: the seat count (Solo's 2 to 10)."""


def off_standard(asked: Mapping[str, Any], standard: Mapping[str, Any]) -> list[str]:
    """The settings of a rated table (its options, table settings and time control, each by
    name) that are not the standard ones, as `name value (standard: value)`: a rated game is
    played with the standard settings, so that a rare choice makes no pool of the player's own
    (where they would meet whom they chose). Only CHOSEN_SETTINGS may differ."""
    return [
        f"{name} {asked.get(name)} (standard: {standard.get(name)})"
        for name in sorted(set(asked) | set(standard))
        if name not in CHOSEN_SETTINGS and asked.get(name) != standard.get(name)
    ]


def own_moves(seats: int, steps: Iterable[tuple[int, str, VersionStatus]]) -> list[int]:
    """How many moves each seat made itself, from a game's log after its creation: (the actor,
    the move, the status after it) of each version. A resignation, the platform's steps
    (timeouts, aborts, stops, take-backs) and the moves of a bot holding a timed-out seat are
    not the seat's."""
    made = [0] * seats
    replaced: set[int] = set()
    for actor, move, status in steps:
        own = actor not in replaced and move not in (*PLATFORM_MOVES, "resign", "")
        if own and 0 <= actor < seats:
            made[actor] += 1
        replaced = {int(seat) for seat in status.taken_over}
    return made


def played(record: FinishedGame) -> bool:
    """Whether every seat of a finished game made PLAYED_MOVES moves of its own (the record's
    `moves`, own_moves; a record without them was not seen played)."""
    moves = record.moves
    if moves is None or len(moves) != len(record.seats):
        return False
    return all(isinstance(m, int) and m >= PLAYED_MOVES for m in moves)


def counts(record: FinishedGame) -> bool:
    """Whether a finished game changes ratings: rated, with a result, played (`played`), with
    a rated person and another rated seat."""
    if not record.rated or not has_result(record.status) or not played(record):
        return False
    seats = record.seats
    if not 2 <= len(seats) <= MAX_SEATS:
        return False
    accounts = set(record.accounts)
    person = any(i in accounts and not plays_as_bot(seats[i]) for i in range(len(seats)))
    return person and len(rated_seats(seats, record.accounts)) >= 2


def rated_seats(seats: Sequence[str], accounts: Iterable[int]) -> dict[int, str]:
    """seat -> who its results count for, for a rated game's seats that count (`accounts`:
    the seats held by accounts)."""
    held = set(accounts)
    found = {}
    for seat, player in enumerate(seats):
        rated = rated_player(player, seat in held)
        if rated is not None:
            found[seat] = rated
    return found


def update(before: Sequence[Rating], places: Sequence[int]) -> list[tuple[float, float]]:
    """The model's step: each seat's (mu, sigma) after a game in which the seats, rated
    `before`, finished at `places` (0 first, ties equal)."""
    teams = [[MODEL.rating(mu=r.mu, sigma=r.sigma)] for r in before]
    rated = MODEL.rate(teams, ranks=[float(p) for p in places])
    return [(team[0].mu, team[0].sigma) for team in rated]


def starting(game: str, player: str) -> Rating:
    """The rating a player starts from: a new player's, or a bot level's fixed one, from the
    arena (services/ratings/bot_seeds.py, `make bot-ratings`). A level the arena has not rated
    has the next level's below that it has (expert, the strong bot with more time, strong's),
    or a new player's when there is none."""
    if not is_bot_level(player):
        return Rating()
    seeds = BOT_SEEDS.get(game, {})
    seeded = seeds.get(player)
    if seeded is None and player[4:] in games.LEVELS:
        below = reversed(games.LEVELS[: games.LEVELS.index(player[4:])])
        seeded = next((seeds[f"bot-{level}"] for level in below if f"bot-{level}" in seeds), None)
    mu, sigma = (MU, SIGMA) if seeded is None else (seeded[0], max(seeded[1], SEED_SIGMA))
    return Rating(mu, sigma, 0, fixed=True)


def held_rating(game: str, player: str, held: bytes | str | None) -> Rating:
    """A rating as Redis holds it; the player's starting one when it holds none (a bot
    level's is always its fixed one)."""
    if held is None or is_bot_level(player):
        return starting(game, player)
    return Rating.from_json(held)


def rate(record: FinishedGame, current: Mapping[str, Rating]) -> list[Change]:
    """The changes a finished game makes to its rated seats' ratings (`current`: the players'
    ratings now, bot levels' fixed ones included; a player missing starts new). Nothing for a
    game that does not count.

    A provisional player is rated against every seat. An established one (and bot levels count
    as established) is rated against the other established seats only: a provisional
    opponent's rating says too little to learn from (and a new account costs nothing), so
    with no other established seat an established rating does not move. A bot level's fixed
    rating never moves. A player at several seats takes the mean of their steps."""
    if not counts(record):
        return []
    seats = rated_seats(record.seats, record.accounts)
    replaced = [int(s) for s in record.status.taken_over]
    places = ranks(len(record.seats), record.status.result or {}, replaced)
    order = sorted(seats)
    before = {seat: _now(current, seats[seat]) for seat in order}
    steps = _steps(order, before, places)
    settled = [s for s in order if not before[s].provisional]
    if len(settled) >= 2:
        among = _steps(settled, before, places)
        steps |= {s: among[s] for s in settled}
    else:
        steps = {s: steps[s] for s in order if before[s].provisional}
    moved: dict[str, list[tuple[float, float]]] = {}
    for seat, step in steps.items():
        if not before[seat].fixed:
            moved.setdefault(seats[seat], []).append(step)
    after = {}
    for player, values in moved.items():
        old = _now(current, player)
        after[player] = Rating(
            sum(mu for mu, _ in values) / len(values),
            sum(sigma for _, sigma in values) / len(values),
            old.games + 1,
        )
    return [
        Change(s, seats[s], places[s], before[s], after.get(seats[s], before[s])) for s in order
    ]


def _now(current: Mapping[str, Rating], player: str) -> Rating:
    """A player's rating now: a new player's when missing; a bot level's is fixed."""
    found = current.get(player, Rating())
    return replace(found, fixed=True) if is_bot_level(player) else found


def _steps(
    seats: Sequence[int], before: Mapping[int, Rating], places: Sequence[int]
) -> dict[int, tuple[float, float]]:
    """Each of `seats`' (mu, sigma) after a game among those seats only."""
    found = update([before[s] for s in seats], [places[s] for s in seats])
    return dict(zip(seats, found, strict=True))
