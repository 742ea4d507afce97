"""Level against level, engines only: `python -m games.arena GAME [--levels a,b]
[--games N] [--budget SECONDS | --max-nodes N] [--players P] [--seed S] [--jobs J]
[--fresh-bots]`.

Without --levels it plays each adjacent pair (random vs greedy, greedy vs strong) and prints,
for each pair, how the higher level did with a 95% confidence interval:
- esoloe, zoxso, and Solo with 2 players (one round a game): the higher level's win rate, draws
  counting half (Wilson interval), in all and by the seat it played (seat 0 moves first). Seats
  alternate from game to game, and each deal (seed) is played once from each side.
- Solo with 4 players (one round a game): seats alternate levels A B A B, the seating rotated
  from game to game; mean points lost per seat (start points - final points) for each level.
- solace (one seat): mean score of each level over the same deals, and how often the higher
  level scored more on a deal (draws half).

Bots are told only their seat's view and legal moves (`engines.bots.base.Turn`), as the bot
worker tells them. A seat keeps its bot for the whole game, unless `--fresh-bots`: then every
decision is made by a new bot, as the bot worker makes them (any worker process may take any
job), so a bot that needs memory between decisions shows what it loses live. With `--max-nodes` the
searching levels stop at a node cap instead of the clock (`node_caps`), so that the results do
not depend on the machine's load. The computation (`run_match`) is pure; only `main` prints.
"""

from __future__ import annotations

import argparse
import itertools
import math
import random
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from functools import partial

import games
from engines.bots.base import Bot, BotFactory, Turn
from engines.bots.search import IterativeDeepening
from engines.contract import JSON, Seat, State
from games import DEFAULT_BUDGETS, LEVELS

Z95 = 1.959963984540054
MAX_STEPS = 100_000
"""No game of the four needs anywhere near this many moves; reaching it means a bug."""

SOLO_OPTIONS: Mapping[str, JSON] = {"mode": "rounds", "rounds": 1}


# --------------------------------------------------------------------------------- node caps


def node_caps(strong: int, budgets: Mapping[str, float] = DEFAULT_BUDGETS) -> dict[str, int]:
    """Positions a decision each searching level may search when the strong level may search
    `strong`: in proportion to the levels' time budgets (expert five times strong's by default).
    Levels without a budget (random, greedy) do not search and get none."""
    return {
        level: max(1, round(strong * budget / budgets["strong"]))
        for level, budget in budgets.items()
        if budget > 0
    }


def capped(factory: BotFactory, max_nodes: int) -> Callable[[], Bot]:
    """`factory`'s bots, searching at most `max_nodes` positions a decision instead of watching
    the clock; ValueError if its bots do not search by nodes (`IterativeDeepening`)."""
    if not isinstance(factory(), IterativeDeepening):
        raise ValueError("its bots do not count the positions they search")

    def make() -> Bot:
        bot = factory()
        assert isinstance(bot, IterativeDeepening)
        bot.max_nodes = max_nodes
        return bot

    return make


def level_factories(game: str, max_nodes: Mapping[str, int] | None = None) -> dict[str, BotFactory]:
    """The bot factory of each of `game`'s levels, those in `max_nodes` capped at their count."""
    factories = dict(games.get(game).levels())
    for level, nodes in (max_nodes or {}).items():
        if level in factories:
            try:
                factories[level] = capped(factories[level], nodes)
            except ValueError as error:
                raise ValueError(f"{game}'s {level} level takes no node cap: {error}") from None
    return factories


# --------------------------------------------------------------------------------- statistics


@dataclass(frozen=True, slots=True)
class Interval:
    value: float
    low: float
    high: float


def wilson(successes: float, trials: int, z: float = Z95) -> Interval:
    """The Wilson score interval of a proportion (successes may be fractional: a draw is half a
    win). Unlike the normal approximation it stays inside [0, 1] and behaves at 0 and 1."""
    if trials <= 0:
        return Interval(math.nan, 0.0, 1.0)
    p = successes / trials
    z2 = z * z
    centre = (p + z2 / (2 * trials)) / (1 + z2 / trials)
    half = z / (1 + z2 / trials) * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials))
    return Interval(p, max(0.0, centre - half), min(1.0, centre + half))


def mean_interval(values: Sequence[float], z: float = Z95) -> Interval:
    """The mean with a normal-approximation interval (sample standard deviation)."""
    n = len(values)
    if n == 0:
        return Interval(math.nan, math.nan, math.nan)
    mean = sum(values) / n
    if n == 1:
        return Interval(mean, mean, mean)
    var = sum((v - mean) ** 2 for v in values) / (n - 1)
    half = z * math.sqrt(var / n)
    return Interval(mean, mean - half, mean + half)


# --------------------------------------------------------------------------------- playing


def jump_in_order(seats: Sequence[Seat], mover: Seat, direction: int, num_seats: int) -> list[Seat]:
    """`seats` (other than the mover) nearest after the mover first, in the direction of play:
    the order in which seats with an optional chance (Solo jump-ins; in Solo's rules edition 1
    also late calls) are asked."""
    step = -1 if direction < 0 else 1
    return sorted((s for s in seats if s != mover), key=lambda s: ((s - mover) * step) % num_seats)


@dataclass(slots=True)
class Seating:
    """One game's bots, one per seat, with their generators and budgets."""

    game: str
    levels: Sequence[str]
    bots: Sequence[Bot]
    rngs: Sequence[random.Random]
    budgets: Mapping[str, float]
    think: list[list[float]] = field(default_factory=list)
    """Seconds each seat took for each of its decisions."""
    factories: Sequence[Callable[[], Bot]] = ()
    """When given, each decision is made by a fresh bot from the seat's factory (`bots` are
    then unused): as the bot worker does."""

    def __post_init__(self) -> None:
        self.think = self.think or [[] for _ in self.levels]

    def ask(self, state: State, seat: Seat, view: Mapping[str, JSON], optional: bool) -> str | None:
        level = self.levels[seat]
        turn = Turn(
            game=self.game,
            seat=seat,
            view=view,
            moves=state.legal_moves(seat),
            budget=self.budgets[level],
            optional=optional,
        )
        began = time.perf_counter()
        bot = self.factories[seat]() if self.factories else self.bots[seat]
        move = bot.choose(turn, self.rngs[seat])
        self.think[seat].append(time.perf_counter() - began)
        if move is None and not optional:
            raise RuntimeError(f"{level} bot of {self.game} passed a turn it had to take")
        if move is not None and move not in turn.moves:
            raise RuntimeError(f"{level} bot of {self.game} chose {move!r}, not a legal move")
        return move


def next_action(seating: Seating, state: State) -> tuple[Seat, str]:
    """Who acts next and how. Seats whose chance is optional are asked first, nearest after the
    mover first; the first that answers with a move plays it. Otherwise the seat to move plays."""
    to_act = state.to_act()
    views = {seat: state.view(seat) for seat in to_act}
    public_to_act = state.public_to_act()
    optional = [seat for seat in to_act if seat not in public_to_act]  # e.g. Solo jump-ins
    required = [seat for seat in to_act if seat not in optional]
    if optional:
        public = state.view(None)
        mover = public.get("to_move")
        direction = public.get("direction")
        optional = jump_in_order(
            optional,
            mover if isinstance(mover, int) else -1,
            direction if isinstance(direction, int) else 1,
            state.num_seats,
        )
    for seat in optional:
        move = seating.ask(state, seat, views[seat], True)
        if move is not None:
            return seat, move
    if not required:
        raise RuntimeError(f"{seating.game}: only optional chances and all passed")
    seat = required[0]
    move = seating.ask(state, seat, views[seat], False)
    assert move is not None
    return seat, move


def play_game(
    game: str,
    seat_levels: Sequence[str],
    seed: int,
    bot_seed: str,
    budgets: Mapping[str, float],
    options: Mapping[str, JSON] | None = None,
    fresh_bots: bool = False,
    max_nodes: Mapping[str, int] | None = None,
) -> tuple[State, list[list[float]]]:
    """One game with a fresh bot of the given level on each seat (`fresh_bots`: a fresh one for
    each decision; `max_nodes`: the levels searching at a node cap, and their caps); the final
    state and each seat's thinking times (seconds per decision)."""
    declared = games.get(game)
    declared.prepare_bots()  # once per process, before any decision is timed
    factories = level_factories(game, max_nodes)
    state = games.rules(game).new_game(seed, options)
    seating = Seating(
        game=game,
        levels=seat_levels,
        bots=[factories[level]() for level in seat_levels],
        rngs=[random.Random(f"{bot_seed}:{seat}") for seat in range(len(seat_levels))],
        budgets=budgets,
        factories=[factories[level] for level in seat_levels] if fresh_bots else (),
    )
    for _ in range(MAX_STEPS):
        if not state.to_act():
            return state, seating.think
        seat, move = next_action(seating, state)
        state, _ = state.apply(seat, move)
    raise RuntimeError(f"{game} seed {seed}: no end after {MAX_STEPS} moves")


# --------------------------------------------------------------------------------- matches


@dataclass(frozen=True, slots=True)
class Record:
    """One game of a match. `values` holds, for each seat (each run in Solace), its side (0: the
    lower level, 1: the higher) and its value: 1, 0.5 or 0 for a win, draw or loss; points lost
    in 4-player Solo; the score in Solace. `think` is each side's seconds per decision."""

    values: tuple[tuple[int, float], ...]
    think: tuple[tuple[float, ...], tuple[float, ...]]


def _outcome(winners: Sequence[Seat], seat: Seat) -> float:
    if seat not in winners:
        return 0.0 if winners else 0.5
    return 1.0 if len(winners) == 1 else 0.5


def _sides(game: str, index: int, players: int) -> list[int]:
    """Each seat's side in game `index`: alternating who starts, rotating Solo's seating."""
    if game == "solace":
        return [0]
    return [(seat + index) % 2 for seat in range(players)]


def play_one(
    index: int,
    *,
    game: str,
    pair: tuple[str, str],
    seed: int,
    budgets: Mapping[str, float],
    players: int,
    fresh_bots: bool = False,
    max_nodes: Mapping[str, int] | None = None,
) -> Record:
    """Game `index` of a match between the levels `pair` (lower, higher). Each deal (seed) is
    played twice, the sides swapped (Solace: each side plays it once)."""
    bot_seed = f"{game}:{seed}:{index}"
    think: tuple[list[float], list[float]] = ([], [])
    values: list[tuple[int, float]] = []
    if game == "solace":
        for side, level in enumerate(pair):
            final, times = play_game(
                game,
                [level],
                seed + index,
                f"{bot_seed}:{side}",
                budgets,
                None,
                fresh_bots,
                max_nodes,
            )
            values.append((side, float(final.view(0)["score"])))
            think[side].extend(times[0])
    else:
        options: dict[str, JSON] | None = None
        if game == "solo":
            options = {**SOLO_OPTIONS, "players": players}
        sides = _sides(game, index, players)
        final, times = play_game(
            game,
            [pair[side] for side in sides],
            seed + index // 2,
            bot_seed,
            budgets,
            options,
            fresh_bots,
            max_nodes,
        )
        for seat, side in enumerate(sides):
            think[side].extend(times[seat])
        result = final.result()
        assert result is not None
        if game == "solo" and players > 2:
            start = int(games.rules(game).default_options()["start_points"])
            values = [(side, start - result.scores[s]) for s, side in enumerate(sides)]
        else:
            values = [(side, _outcome(result.winners, s)) for s, side in enumerate(sides)]
    return Record(tuple(values), (tuple(think[0]), tuple(think[1])))


@dataclass(frozen=True, slots=True)
class MatchReport:
    game: str
    pair: tuple[str, str]
    players: int
    records: Sequence[Record]
    seconds: float
    max_nodes: Mapping[str, int] | None = None
    """The node caps the searching levels played at (None: the clock)."""

    @property
    def kind(self) -> str:
        """ "winrate" (two seats), "points lost" (4-player Solo) or "score" (Solace)."""
        if self.game == "solace":
            return "score"
        return "points lost" if self.game == "solo" and self.players > 2 else "winrate"

    def values(self, side: int) -> list[float]:
        """Every value of `side` (0: the lower level, 1: the higher), game after game."""
        return [v for record in self.records for s, v in record.values if s == side]

    def higher_wins(self) -> tuple[float, int, int, int]:
        """How the higher level did, game by game: (wins + draws / 2, wins, draws, losses).
        In Solace a deal is won by the higher score; in 4-player Solo a game by losing fewer
        points a seat than the other level."""
        wins = draws = losses = 0
        for record in self.records:
            side_values: tuple[list[float], list[float]] = ([], [])
            for side, value in record.values:
                side_values[side].append(value)
            low, high = (sum(v) / len(v) for v in side_values)
            if self.kind == "score":
                diff = high - low
            elif self.kind == "points lost":
                diff = low - high
            else:
                diff = high - 0.5
            wins += diff > 0
            draws += diff == 0
            losses += diff < 0
        return wins + draws / 2, wins, draws, losses

    def win_rate(self) -> Interval:
        """The higher level's share of games won (draws half), with its Wilson interval."""
        return wilson(self.higher_wins()[0], len(self.records))

    def seat_win_rates(self) -> list[Interval]:
        """Two seats: the higher level's share of the games it played on each seat (draws half),
        with its Wilson interval."""
        if self.kind != "winrate":
            raise ValueError("only two-seat games have a win rate per seat")
        scores = [0.0, 0.0]
        played = [0, 0]
        for record in self.records:
            for seat, (side, value) in enumerate(record.values):
                if side == 1:
                    scores[seat] += value
                    played[seat] += 1
        return [wilson(score, n) for score, n in zip(scores, played, strict=True)]

    def think(self, side: int) -> list[float]:
        return [t for record in self.records for t in record.think[side]]

    def lines(self) -> list[str]:
        n = len(self.records)
        seats = f", {self.players} players" if self.game == "solo" else ""
        low, high = self.pair
        caps = ""
        if self.max_nodes:
            caps = ", " + ", ".join(
                f"{level} at {self.max_nodes[level]} nodes"
                for level in self.pair
                if level in self.max_nodes
            )
        out = [f"{self.game}{seats}: {low} vs {high}, {n} games ({self.seconds:.1f} s{caps})"]
        _, won, drawn, lost = self.higher_wins()
        ci = self.win_rate()
        if self.kind == "winrate":
            out.append(f"  {high} wins {_pct(ci)}  ({won} won, {drawn} drawn, {lost} lost)")
            first, second = self.seat_win_rates()
            out.append(f"  {high} on the first seat {_pct(first)}, on the second {_pct(second)}")
        else:
            for side, level in enumerate(self.pair):
                mean = mean_interval(self.values(side))
                out.append(
                    f"  {level}: mean {self.kind} {mean.value:.2f} "
                    f"[95% CI {mean.low:.2f}-{mean.high:.2f}]"
                )
        if self.kind == "score":
            out.append(
                f"  {high} scores more on {_pct(ci)} of deals ({won} more, {drawn} equal, "
                f"{lost} less)"
            )
        if self.kind == "points lost":
            out.append(
                f"  {high} loses fewer points a seat in {_pct(ci)} of games ({won} fewer, "
                f"{drawn} equal, {lost} more)"
            )
        for side, level in enumerate(self.pair):
            times = self.think(side)
            if times:
                out.append(
                    f"  {level}: {1000 * sum(times) / len(times):.1f} ms a decision on average, "
                    f"slowest {1000 * max(times):.0f} ms ({len(times)} decisions)"
                )
        return out


def _pct(ci: Interval) -> str:
    return f"{100 * ci.value:.1f}% [95% CI {100 * ci.low:.1f}-{100 * ci.high:.1f}%]"


def run_match(
    game: str,
    pair: tuple[str, str],
    games: int,
    *,
    seed: int = 0,
    budgets: Mapping[str, float] = DEFAULT_BUDGETS,
    players: int = 2,
    jobs: int = 1,
    fresh_bots: bool = False,
    max_nodes: Mapping[str, int] | None = None,
) -> MatchReport:
    """Play `games` games of `pair` (lower level first); `jobs` > 1 plays them in that many
    processes (the records are the same, in the same order); `fresh_bots`: a fresh bot for each
    decision; `max_nodes`: the levels that search at a node cap instead of the clock, and their
    caps (`node_caps`). ValueError if a level of the pair in `max_nodes` takes no cap."""
    caps = {level: n for level, n in (max_nodes or {}).items() if level in pair} or None
    level_factories(game, caps)  # refuses before any game is played
    began = time.perf_counter()
    play = partial(
        play_one,
        game=game,
        pair=pair,
        seed=seed,
        budgets=dict(budgets),
        players=players,
        fresh_bots=fresh_bots,
        max_nodes=caps,
    )
    if jobs <= 1:
        records = [play(i) for i in range(games)]
    else:
        with ProcessPoolExecutor(jobs) as pool:
            records = list(pool.map(play, range(games)))
    return MatchReport(game, pair, players, records, time.perf_counter() - began, caps)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m games.arena", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("game", choices=games.names())
    parser.add_argument("--levels", help="two levels, lower first (default: each adjacent pair)")
    parser.add_argument("--games", type=int, default=100, help="games per pair (default 100)")
    limit = parser.add_mutually_exclusive_group()
    limit.add_argument(
        "--budget", type=float, help="seconds per decision for every level but random "
        f"(default: {', '.join(f'{k} {v:g}' for k, v in DEFAULT_BUDGETS.items())})",
    )  # fmt: skip
    limit.add_argument(
        "--max-nodes", type=int, metavar="N", help="search by a node cap instead of the clock, "
        "so that load does not change the results: strong searches at most N positions a "
        "decision (e-SOLO-e: the solver, the search and each check, each), expert five times N "
        "(its share of strong's, as its time budget is five times strong's); greedy and random "
        "do not search. Games whose bots search by nodes only (e-SOLO-e, ZoxSo)",
    )  # fmt: skip
    parser.add_argument("--players", type=int, default=2, help="Solo only: 2 or 4 (default 2)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first deal")
    parser.add_argument("--jobs", type=int, default=1, help="processes to play games in")
    parser.add_argument(
        "--fresh-bots",
        action="store_true",
        help="a fresh bot for every decision, as the bot worker asks (default: one bot a seat "
        "for the whole game)",
    )
    args = parser.parse_args(argv)
    if args.levels:
        names = args.levels.split(",")
        if len(names) != 2 or any(name not in LEVELS for name in names):
            parser.error(f"--levels takes two of {', '.join(LEVELS)}, e.g. random,greedy")
        pairs = [(names[0], names[1])]
    else:
        pairs = list(itertools.pairwise(LEVELS))
    if args.games < 1 or args.jobs < 1:
        parser.error("--games and --jobs must be at least 1")
    if args.players not in (2, 4) or (args.players != 2 and args.game != "solo"):
        parser.error("--players is 2, or 4 for solo")
    max_nodes = None
    if args.max_nodes is not None:
        if args.max_nodes < 1:
            parser.error("--max-nodes must be at least 1")
        max_nodes = node_caps(args.max_nodes)
        for pair in pairs:
            caps = {level: n for level, n in max_nodes.items() if level in pair}
            try:
                level_factories(args.game, caps)
            except ValueError as error:
                parser.error(f"--max-nodes: {error}")
    budgets = dict(DEFAULT_BUDGETS)
    if args.budget is not None:
        budgets = {k: (v if k == "random" else args.budget) for k, v in budgets.items()}
    for pair in pairs:
        report = run_match(
            args.game, pair, args.games, seed=args.seed, budgets=budgets,
            players=args.players, jobs=args.jobs, fresh_bots=args.fresh_bots, max_nodes=max_nodes,
        )  # fmt: skip
        for line in report.lines():
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
