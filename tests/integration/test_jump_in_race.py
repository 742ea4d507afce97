"""The race a jump-in is, measured on the real stack: a scripted person (an API client: Watch,
LegalMoves, Play through the gateway) sits at Solo tables with two bots of one level, with the
table's default jump-in window (Solo's `jump_in_window_ms`, 2500 ms), against bot workers as
deployed (no cap on the window). Whenever LegalMoves offers the person a jump-in, they answer
after a human reaction: 0.8 to 1.5 s after LegalMoves showed it (a person reads the card, finds
it in their hand, and plays it). Against every level, they must win most of these races.

The race depends on timing, so the person needs a margin that a busy machine cannot erase: the
bots wait at least the window (2.5 s) from the moment their job starts, which is after the move
was committed; the person's slowest answer is 1.5 s after LegalMoves, itself after the Watch
message that showed the move. What a busy machine adds to the person's side (the Watch message,
a LegalMoves and a Play through the gateway) would have to exceed a second for a race to be
lost that the person should win; and nothing here asserts a time, only who won.

The deals are made so that chances come often (the person holds the twin of every card the bot
before them holds: each card that bot plays is a chance, raced by the bot after it, in turn);
the person otherwise draws and keeps, so that the twins stay in hand. The strong level thinks
0.3 s a move here, not its 1 s: a bot's thinking counts within the window (it waits the window
less the time it thought), so a shorter think changes nothing of the race and spares the
shared machine the CPU.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import statistics
from dataclasses import dataclass, field
from typing import Any

import grpc
import pytest
from redis.asyncio import Redis

from games.clock import MAX_JUMP_IN_WINDOW_MS
from games.solo.rules import FULL_DECK
from runtime import bot_turns
from runtime.game_log import now_ms
from tabletop.common.v1 import common_pb2
from tests.integration.test_solo_helpers import create_with_setup, dealt_setup
from tests.platform import Platform, logged_in
from tests.timing import patience
from wire.errors import error_info
from wire.players import new_bot_id
from wire.records import GameMeta

pytestmark = [pytest.mark.integration, pytest.mark.heavy]

LEVELS = ("random", "greedy", "strong")
CHANCES = 20
"""Jump-in chances raced per level."""
TABLES = 5
"""Tables per level played at once (each game gives several chances)."""
REACTION = (0.8, 1.5)
"""Seconds from LegalMoves showing a jump-in to the person sending it."""
NUMBERS = [c for c in dict.fromkeys(FULL_DECK) if c[0] in "rgby" and c[1] in "123456789"]


@dataclass
class Tally:
    """One level's races."""

    won: int = 0
    lost: int = 0
    gaps_ms: list[int] = field(default_factory=list)
    """Between a version's commit and the commit of a bot's move right after it."""
    answered_ms: list[int] = field(default_factory=list)
    """For each race: the person's answer was sent this long after the chance's commit."""

    @property
    def raced(self) -> int:
        return self.won + self.lost


def chance_rich_deal(rng: random.Random) -> dict[str, Any]:
    """Seat 1 (a bot, to move first) holds 8 number cards, the person at seat 0 their twins;
    seat 2 (a bot) 8 others."""
    kinds = rng.sample(NUMBERS, 8)
    top = rng.choice([c for c in NUMBERS if c not in kinds])
    return dealt_setup([list(kinds), list(kinds), []], top, rng, start_seat=1)


def pick(moves: list[str]) -> str:
    """A jump-in, with the Solo call when it leaves one card (S12)."""
    return next((m for m in moves if m.endswith("!")), moves[0])


async def sit_and_race(platform: Platform, level: str, tally: Tally, seed: int) -> None:
    """One game: answer each jump-in chance after a reaction, until the level has raced
    CHANCES (then resign) or the game ends. A person of their own at each table: the workers
    share their time between players (BOT_PER_SPONSOR), and one player's many tables would
    slow their own bots down."""
    redis_url = platform.redis_url
    (person,) = await logged_in(platform, f"person-{seed}")
    rng = random.Random(seed)
    players = [person.player_id, new_bot_id(level), new_bot_id(level)]
    game_id = await create_with_setup(
        redis_url, players, chance_rich_deal(rng), {"mode": "rounds", "rounds": 1}, seed=seed
    )
    redis = Redis.from_url(redis_url)
    try:  # made without the API: wake the bots as CreateGame does
        meta = GameMeta(game="solo", seats=players)
        await bot_turns.add(redis, bot_turns.jobs(game_id, 0, meta, [1], players))
    finally:
        await redis.aclose()
    stub = person.game("solo")
    watch = stub.Watch(
        common_pb2.WatchRequest(game_id=game_id, from_version=1), metadata=person.metadata
    )
    committed: dict[int, int] = {}
    try:
        async for update in watch:
            version = update.envelope.version
            committed[version] = update.envelope.time.ToMilliseconds()
            if update.envelope.actor != 0 and version - 1 in committed:
                tally.gaps_ms.append(committed[version] - committed[version - 1])
            if update.status.finished:
                return
            if tally.raced >= CHANCES:
                await stub.Resign(
                    common_pb2.ResignRequest(game_id=game_id), metadata=person.metadata
                )
                return
            legal = await stub.LegalMoves(
                common_pb2.LegalMovesRequest(game_id=game_id), metadata=person.metadata
            )
            if legal.version != version or not legal.moves:
                continue  # nothing to do, or the game moved on: its next update comes
            moves = list(legal.moves)
            if 0 in update.status.to_act:  # in turn: draw and keep, the twins stay in hand
                move = "draw" if "draw" in moves else "pass" if "pass" in moves else moves[0]
                with contextlib.suppress(grpc.aio.AioRpcError):  # a jump-in came first
                    await stub.Play(
                        common_pb2.PlayRequest(
                            game_id=game_id, move=move, expected_version=version
                        ),
                        metadata=person.metadata,
                    )
                continue
            await asyncio.sleep(rng.uniform(*REACTION))  # a jump-in chance: react
            tally.answered_ms.append(now_ms() - committed[version])
            try:
                await stub.Play(
                    common_pb2.PlayRequest(
                        game_id=game_id, move=pick(moves), expected_version=version
                    ),
                    metadata=person.metadata,
                )
                tally.won += 1
            except grpc.aio.AioRpcError as error:
                if error_info(error)[0] != "STALE_VERSION":  # only a lost race may refuse it
                    raise
                tally.lost += 1
    finally:
        watch.cancel()
        await person.close()


async def race_level(platform: Platform, level: str, tally: Tally) -> None:
    """Play tables of `level`, TABLES at a time, until CHANCES races are run."""
    seed = LEVELS.index(level) * 1000
    while tally.raced < CHANCES:
        seeds = range(seed, seed + TABLES)
        seed += TABLES
        await asyncio.gather(*(sit_and_race(platform, level, tally, s) for s in seeds))


async def test_a_person_wins_most_jump_in_races_against_every_level(redis_url: str) -> None:
    async with Platform(redis_url, games=("solo",)) as platform:
        await platform.start_bot_worker(
            "as-deployed",
            max_jump_in_window_ms=MAX_JUMP_IN_WINDOW_MS,
            budgets={"random": 0.0, "greedy": 0.0, "strong": 0.3},  # type: ignore[arg-type]
        )
        tallies = {level: Tally() for level in LEVELS}
        await asyncio.wait_for(
            asyncio.gather(*(race_level(platform, lv, tallies[lv]) for lv in LEVELS)),
            patience(180),
        )
    report = {
        level: (
            f"won {t.won}/{t.raced}; the person answered "
            f"{min(t.answered_ms)}..{max(t.answered_ms)} ms after the move; bots moved "
            f"{min(t.gaps_ms)}..{max(t.gaps_ms)} ms after a move "
            f"(median {statistics.median(t.gaps_ms):.0f})"
        )
        for level, t in tallies.items()
    }
    print("jump-in races:", report)
    for tally in tallies.values():
        assert tally.raced >= CHANCES, report
        assert tally.won > tally.raced / 2, report
