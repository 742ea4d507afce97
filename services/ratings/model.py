"""Ratings, without I/O: who a finished game counts for, how its seats rank, their new ratings
(OpenSkill's Weng-Lin Plackett-Luce model), the conservative number shown and when a rating is
still provisional. docs/ratings.md says the same in words.

A game counts when it is rated, finished with a result (not aborted, stopped or abandoned) and
at least one person in it is rated (an account that is not a bot account: guests are never
rated; the game records which seats were accounts when it was made, `meta["accounts"]`). Its
rated seats are the accounts' seats and the platform's bot seats (each bot level of each game
is one rated player, `bot-<level>`); a guest's seat, and a bot that took a timed-out seat
over, are not.
A seat that resigned or ran out of time ranks last; the others rank by the result: winners
first, then by score (Solo: its final standings), ties sharing a rank.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from openskill.models import PlackettLuce

import games
from services.ratings.bot_seeds import BOT_SEEDS
from wire.players import plays_as_bot

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
"""A bot level starts at least this uncertain, whatever the arena found: its games against
people, not the arena's against bots, decide where it ends up."""

MODEL = PlackettLuce(mu=MU, sigma=SIGMA)

BOT_RATING_PREFIX = "bot-"
NO_RESULT = frozenset(("aborted", "abandoned", "stopped_by_sponsor"))
"""A finished game's result reasons when the platform ended it without a result."""


@dataclass(frozen=True, slots=True)
class Rating:
    mu: float = MU
    sigma: float = SIGMA
    games: int = 0

    @property
    def conservative(self) -> float:
        """mu − 3 sigma: the skill the player very likely has at least."""
        return self.mu - 3 * self.sigma

    @property
    def display(self) -> int:
        return round(DISPLAY_OFFSET + DISPLAY_SCALE * self.conservative)

    @property
    def provisional(self) -> bool:
        return self.sigma > PROVISIONAL_SIGMA or self.games < PROVISIONAL_GAMES

    def to_json(self) -> str:
        """As Redis holds it: `[mu, sigma, games]`."""
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
        return Change(
            int(obj["seat"]),
            str(obj["player"]),
            int(obj["rank"]),
            Rating(*obj["before"]),
            Rating(*obj["after"]),
        )


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


def has_result(status: Mapping[str, Any]) -> bool:
    """Whether a finished game ended with a result (not aborted, stopped or abandoned)."""
    result = status.get("result")
    if not status.get("finished") or result is None:
        return False
    return (result.get("detail") or {}).get("reason") not in NO_RESULT


def score_of(record: Mapping[str, Any]) -> tuple[str, float] | None:
    """(the player, their score) of a finished game played alone that goes to its score table:
    an account's, with a result, the seat still theirs at the end; None for any other."""
    status = record["status"]
    if not record.get("scored") or not has_result(status) or status.get("replaced"):
        return None
    scores = status["result"].get("scores") or {}
    return record["seats"][0], float(scores.get("0", 0.0))


def counts(meta: Mapping[str, Any], status: Mapping[str, Any]) -> bool:
    """Whether a finished game changes ratings: rated, with a result, with a rated person and
    another rated seat."""
    if not meta.get("rated") or not has_result(status):
        return False
    seats: Sequence[str] = meta["seats"]
    if not 2 <= len(seats) <= MAX_SEATS:
        return False
    accounts = set(meta.get("accounts", ()))
    person = any(i in accounts and not plays_as_bot(seats[i]) for i in range(len(seats)))
    return person and len(rated_seats(meta)) >= 2


def rated_seats(meta: Mapping[str, Any]) -> dict[int, str]:
    """seat -> who its results count for, for a rated game's seats that count."""
    accounts = set(meta.get("accounts", ()))
    found = {}
    for seat, player in enumerate(meta["seats"]):
        rated = rated_player(player, seat in accounts)
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
    """The rating a player starts from: a bot level's is seeded from the arena
    (services/ratings/bot_seeds.py, `make bot-ratings`), anyone else's is a new player's. A
    level the arena has not rated starts from the next level below that it has (expert, the
    strong bot with more time, from strong's): its games against people then move it."""
    seeds = BOT_SEEDS.get(game, {})
    seeded = seeds.get(player)
    if seeded is None and player.startswith("bot-") and player[4:] in games.LEVELS:
        below = reversed(games.LEVELS[: games.LEVELS.index(player[4:])])
        seeded = next((seeds[f"bot-{level}"] for level in below if f"bot-{level}" in seeds), None)
    return Rating() if seeded is None else Rating(seeded[0], max(seeded[1], SEED_SIGMA), 0)


def held_rating(game: str, player: str, held: bytes | str | None) -> Rating:
    """A rating as Redis holds it; the player's starting one when it holds none."""
    return starting(game, player) if held is None else Rating.from_json(held)


def rate(
    meta: Mapping[str, Any], status: Mapping[str, Any], current: Mapping[str, Rating]
) -> list[Change]:
    """The changes a finished game makes to its rated seats' ratings (`current`: the players'
    ratings now; a player missing starts new). Nothing for a game that does not count. Seats
    of one rated player (two bots of a level) each move from its rating now; the player's new
    rating is their mean."""
    if not counts(meta, status):
        return []
    seats = rated_seats(meta)
    replaced = [int(s) for s in status.get("replaced", {})]
    places = ranks(len(meta["seats"]), status["result"], replaced)
    order = sorted(seats)
    before = {seat: current.get(seats[seat], Rating()) for seat in order}
    moved: dict[str, list[tuple[float, float]]] = {}
    for seat, step in zip(
        order, update([before[s] for s in order], [places[s] for s in order]), strict=True
    ):
        moved.setdefault(seats[seat], []).append(step)
    after = {}
    for player, values in moved.items():
        old = current.get(player, Rating())
        after[player] = Rating(
            sum(mu for mu, _ in values) / len(values),
            sum(sigma for _, sigma in values) / len(values),
            old.games + 1,
        )
    return [Change(s, seats[s], places[s], before[s], after[seats[s]]) for s in order]
