"""The bot framework: Solace's from_view, view_json and levels; the arena; worker budgets."""

from __future__ import annotations

import asyncio
import collections
import random
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import games
from engines.bots.base import Turn
from engines.contract import JSON, Seat, State
from games import DEFAULT_BUDGETS, arena
from games.solace.bots import GreedyBot, StrongBot
from games.solace.layout import BLACK, CLEAR, STOP
from games.solace.rules import RULES, SolaceState
from games.solo.rules import RULES as SOLO
from runtime import bot_turns
from services.bots.worker import BotWorker, Job, parse_budgets, time_budget, view_of
from services.game.core import status_of
from tabletop.common.v1 import common_pb2
from wire.clock import timestamp
from wire.records import GameMeta
from wire.status import status_message


def _positions(seed: int, no_monochrome: bool = False) -> Iterator[SolaceState]:
    """Every position of one game of random board moves (never `stop`), the last one over."""
    rng = random.Random(seed)
    state = RULES.new_game(seed, {"no_monochrome": no_monochrome})
    yield state
    while state.to_act():
        board = [m for m in state.legal_moves(0) if m != STOP]
        state, _ = state.apply(0, rng.choice(board))
        yield state


def _turn(state: SolaceState, budget: float = 0.0) -> Turn:
    return Turn("solace", 0, state.view(0), state.legal_moves(0), budget)


# ---------------------------------------------------------------------------- Solace from_view


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), draw=st.integers(0, 10**6), no_mono=st.booleans())
def test_solace_from_view_is_a_position_the_player_cannot_tell_apart(
    seed: int, draw: int, no_mono: bool
) -> None:
    for state in _positions(seed, no_mono):
        view = state.view(0)
        rebuilt = RULES.from_view(view, 0, random.Random(draw))
        assert rebuilt.view(0) == view
        assert rebuilt.legal_moves(0) == state.legal_moves(0)
        # Five pieces of each colour and size (L1), and no monochrome nest when dealt without.
        for idx in range(3):
            assert Counter(nest[idx] for nest in rebuilt.deal) == {BLACK: 5, CLEAR: 5}
        if no_mono:
            assert not any(n[0] == n[1] == n[2] for n in rebuilt.deal)


def test_solace_from_view_redraws_hidden_pieces_from_the_view_alone() -> None:
    start = RULES.new_game(3)
    assert start.hidden_slots()
    draws = {RULES.from_view(start.view(0), 0, random.Random(i)).deal for i in range(30)}
    assert len(draws) > 1  # hidden pieces are drawn, not read
    # The same view and generator give the same position, whatever the real deal is.
    twin = start.determinize(0, random.Random(99))
    assert twin.deal != start.deal
    assert RULES.from_view(twin.view(0), 0, random.Random(5)) == RULES.from_view(
        start.view(0), 0, random.Random(5)
    )


# ---------------------------------------------------------------------------- Solace levels


def test_solace_greedy_plays_on_and_takes_a_promotion_first() -> None:
    bot = GreedyBot()
    promoted = False
    for seed in range(20):
        state = RULES.new_game(seed)
        rng = random.Random(seed)
        while state.to_act():
            move = bot.choose(_turn(state), rng)
            assert move is not None
            assert move != STOP  # the score only grows: never stop while a move is left
            before = state.score
            promotions = [m for m in state.legal_moves(0) if m != STOP and _is_promotion(state, m)]
            state, _ = state.apply(0, move)
            if promotions:
                assert state.score == before + 1
                promoted = True
    assert promoted


def _is_promotion(state: SolaceState, move: str) -> bool:
    source = ("B1", "B2", "B3", "B4", "B5", "C1", "C2", "C3", "C4", "C5").index(move[:2])
    return state.counts[source] == 3 and state.towers[source] == 3


def _play(bot: StrongBot, state: SolaceState, seed: int) -> tuple[SolaceState, list[str]]:
    rng = random.Random(seed)
    moves = []
    while state.to_act():
        move = bot.choose(_turn(state, budget=0.2), rng)
        assert move is not None
        moves.append(move)
        state, _ = state.apply(0, move)
    return state, moves


def test_solace_strong_is_deterministic_and_a_used_bot_plays_like_a_fresh_one() -> None:
    used = StrongBot()
    _play(used, RULES.new_game(10), seed=1)
    again, moves = _play(used, RULES.new_game(11), seed=2)
    fresh, fresh_moves = _play(StrongBot(), RULES.new_game(11), seed=3)
    assert moves == fresh_moves
    assert again.score == fresh.score


def test_solace_strong_plays_from_any_position_with_a_fresh_bot() -> None:
    for seed in range(3):
        positions = list(_positions(seed))
        middle = positions[len(positions) // 2]
        if middle.to_act():
            move = StrongBot().choose(_turn(middle, 0.1), random.Random(0))
            assert move in middle.legal_moves(0)


# ---------------------------------------------------------------------------- arena


def test_wilson_interval_known_values() -> None:
    assert arena.wilson(5, 10).low == pytest.approx(0.2366, abs=1e-4)
    assert arena.wilson(5, 10).high == pytest.approx(0.7634, abs=1e-4)
    none = arena.wilson(0, 10)
    assert (none.value, none.low) == (0.0, 0.0)
    assert none.high == pytest.approx(0.2775, abs=1e-4)
    every = arena.wilson(10, 10)
    assert every.low == pytest.approx(0.7225, abs=1e-4)
    assert every.high == pytest.approx(1.0)
    half_draws = arena.wilson(40 + 20 / 2, 100)  # draws count half
    assert half_draws.value == 0.5
    assert half_draws.low == pytest.approx(0.4038, abs=1e-4)


def test_mean_interval() -> None:
    ci = arena.mean_interval([1.0, 2.0, 3.0, 4.0])
    assert ci.value == 2.5
    assert ci.high - ci.value == pytest.approx(1.96 * (5 / 3 / 4) ** 0.5, rel=1e-3)


def test_jump_in_order_asks_the_nearest_after_the_mover_first() -> None:
    assert arena.jump_in_order([0, 1, 3], mover=1, direction=1, num_seats=4) == [3, 0]
    assert arena.jump_in_order([0, 1, 3], mover=1, direction=-1, num_seats=4) == [0, 3]
    assert arena.jump_in_order([2, 4], mover=3, direction=1, num_seats=5) == [4, 2]


class _Recorder:
    """Answers from a script and records who was asked, to follow next_action's questions."""

    def __init__(self, seat: Seat, log: list[tuple[Seat, bool]], passes: bool) -> None:
        self.seat, self.log, self.passes = seat, log, passes

    def choose(self, turn: Turn, rng: random.Random) -> str | None:
        self.log.append((turn.seat, turn.optional))
        return None if turn.optional and self.passes else turn.moves[0]


def _solo_state_with_jump_ins() -> State:
    rng = random.Random(0)
    for seed in range(200):
        state: State = SOLO.new_game(seed, {"players": 4})
        for _ in range(300):
            if len(state.to_act()) > 2:
                return state
            seat = rng.choice(state.to_act())
            state, _ = state.apply(seat, rng.choice(state.legal_moves(seat)))
            if not state.to_act():
                break
    raise AssertionError("no Solo position with two jump-in chances found")


@pytest.mark.parametrize("passes", [True, False])
def test_next_action_asks_optional_seats_first_then_the_mover(passes: bool) -> None:
    state = _solo_state_with_jump_ins()
    public: dict[str, JSON] = state.view(None)
    mover = public["to_move"]
    log: list[tuple[Seat, bool]] = []
    seating = arena.Seating(
        game="solo",
        levels=["random"] * 4,
        bots=[_Recorder(seat, log, passes) for seat in range(4)],
        rngs=[random.Random(seat) for seat in range(4)],
        budgets=DEFAULT_BUDGETS,
    )
    seat, move = arena.next_action(seating, state)
    others = arena.jump_in_order(state.to_act(), mover, public["direction"], 4)
    assert not set(others) & set(state.public_to_act())  # jump-ins: chances the seats may let go
    if passes:  # every optional seat asked in order, then the mover plays
        assert log == [*((s, True) for s in others), (mover, False)]
        assert seat == mover
    else:  # the nearest optional seat answers and plays
        assert log == [(others[0], True)]
        assert seat == others[0]
    assert move == state.legal_moves(seat)[0]


@pytest.mark.parametrize(
    ("game", "players", "games"),
    [("esoloe", 2, 4), ("zoxso", 2, 2), ("solo", 2, 2), ("solo", 4, 2), ("solace", 1, 4)],
)
def test_a_small_arena_run_gives_sane_counts(game: str, players: int, games: int) -> None:
    report = arena.run_match(game, ("random", "random"), games, seed=3, players=max(players, 2))
    assert len(report.records) == games
    _, won, drawn, lost = report.higher_wins()
    assert won + drawn + lost == games
    if report.kind == "winrate":
        for index, record in enumerate(report.records):
            assert [side for side, _ in record.values] == [index % 2, (index + 1) % 2]
            assert sorted(v for _, v in record.values) in ([0.0, 1.0], [0.5, 0.5])
    elif report.kind == "points lost":
        assert [len(r.values) for r in report.records] == [4] * games
        assert all(v >= 0 for r in report.records for _, v in r.values)
        assert any(v == 0 for r in report.records for _, v in r.values)  # someone went out
    else:
        assert all(0 <= v <= 10 for r in report.records for _, v in r.values)
    lines = report.lines()
    assert lines[0].startswith(game)
    assert f"{games} games" in lines[0]
    # The same seed replays the same games.
    again = arena.run_match(game, ("random", "random"), games, seed=3, players=max(players, 2))
    assert [r.values for r in again.records] == [r.values for r in report.records]


def test_arena_levels_beat_random_at_solace(capsys: pytest.CaptureFixture[str]) -> None:
    report = arena.run_match("solace", ("random", "greedy"), 12, seed=0)
    assert report.kind == "score"
    assert sum(report.values(1)) > sum(report.values(0))
    assert arena.main(["solace", "--levels", "random,greedy", "--games", "3"]) == 0
    out = capsys.readouterr().out
    assert "greedy scores more on" in out
    assert "mean score" in out


def test_arena_cli_refuses_bad_arguments() -> None:
    with pytest.raises(SystemExit):
        arena.main(["solace", "--levels", "random,genius"])
    with pytest.raises(SystemExit):
        arena.main(["esoloe", "--players", "4"])


def test_node_caps_follow_the_time_budgets() -> None:
    assert arena.node_caps(1000) == {"strong": 1000, "expert": 5000}
    assert arena.node_caps(50, {"random": 0, "greedy": 0, "strong": 0.5, "expert": 1.0}) == {
        "strong": 50,
        "expert": 100,
    }


def test_a_node_capped_arena_run_gives_each_searching_level_its_cap() -> None:
    caps = arena.node_caps(50)
    factories = arena.level_factories("esoloe", caps)
    strong, expert = factories["strong"](), factories["expert"]()
    assert (strong.max_nodes, expert.max_nodes) == (50, 250)  # type: ignore[attr-defined]
    assert type(expert) is type(games.get("esoloe").levels()["expert"]())
    assert games.get("esoloe").levels()["strong"]().max_nodes is None  # type: ignore[attr-defined]
    report = arena.run_match("esoloe", ("strong", "expert"), 2, seed=5, max_nodes=caps)
    assert report.max_nodes == {"strong": 50, "expert": 250}
    assert "strong at 50 nodes, expert at 250 nodes" in report.lines()[0]
    assert len(report.records) == 2
    # Positions searched, not seconds: the same games again, whatever the machine's load.
    again = arena.run_match("esoloe", ("strong", "expert"), 2, seed=5, max_nodes=caps)
    assert [r.values for r in again.records] == [r.values for r in report.records]
    first, second = report.seat_win_rates()
    assert first.value + second.value == 2 * report.win_rate().value


def test_the_arena_refuses_a_node_cap_for_bots_that_search_by_the_clock_alone(
    capsys: pytest.CaptureFixture[str],
) -> None:
    for game in ("solo", "solace"):
        with pytest.raises(SystemExit) as refused:
            arena.main([game, "--levels", "greedy,strong", "--max-nodes", "10"])
        assert refused.value.code == 2
        assert f"{game}'s strong level takes no node cap" in capsys.readouterr().err
        with pytest.raises(ValueError, match="takes no node cap"):
            arena.run_match(game, ("greedy", "strong"), 2, max_nodes={"strong": 10})
    # Levels that do not search need no cap, in any game; nor does the clock and a cap at once.
    assert (
        arena.main(["solace", "--levels", "random,greedy", "--games", "2", "--max-nodes", "9"]) == 0
    )
    with pytest.raises(SystemExit):
        arena.main(["esoloe", "--levels", "greedy,strong", "--budget", "1", "--max-nodes", "10"])
    with pytest.raises(SystemExit):
        arena.main(["esoloe", "--levels", "greedy,strong", "--max-nodes", "0"])


def test_a_node_capped_arena_run_of_zoxso(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        arena.main(["zoxso", "--levels", "greedy,strong", "--games", "2", "--max-nodes", "30"]) == 0
    )
    out = capsys.readouterr().out
    assert "greedy vs strong, 2 games" in out
    assert "strong at 30 nodes" in out
    assert "strong on the first seat" in out


# ---------------------------------------------------------------------------- worker budgets


def test_worker_budgets_parse_level_items() -> None:
    assert parse_budgets([]) == dict(DEFAULT_BUDGETS)
    assert parse_budgets(["strong=0.5,greedy=0.1", "strong=2"])["strong"] == 2.0
    assert parse_budgets(["", " strong=0.25 "])["strong"] == 0.25
    for bad in ["strong", "genius=1", "strong=fast", "strong=-1"]:
        with pytest.raises(ValueError, match="level=seconds"):
            parse_budgets([bad])


def _reply(game: str, state: State, seat: int | None) -> Any:
    """The GetView reply a game service gives `seat` (None: a spectator) at `state`."""
    adapter = games.get(game).adapter
    meta = GameMeta(game=game, seats=["p"] * state.num_seats, edition=state.edition)
    status = status_message("g", 0, meta, status_of(state))
    return adapter.view_response(status=status, seat=seat, view=adapter.view(state.view(seat)))


@pytest.mark.parametrize("game", ["esoloe", "solo", "solace", "zoxso"])
def test_the_worker_gets_back_each_seats_view_from_a_getview_reply(game: str) -> None:
    """What the worker rebuilds from GetView (the adapter's view_json) is the engine's view, for
    every seat and spectators, at positions reached by random play up to the game's end, so bots
    see what the arena shows them."""
    rng = random.Random(1)
    rules = games.rules(game)
    for seed, edition in enumerate([*rules.editions, rules.edition]):
        state: State = rules.new_game(seed, edition=edition)
        while True:
            for seat in [None, *range(state.num_seats)]:
                expected = state.view(seat)
                if game == "solo" and state.finished:  # to_move is unset once it is over,
                    expected["to_move"] = -1  # which view_json gives back as -1
                assert view_of(game, _reply(game, state, seat)) == expected
            if not state.to_act():
                break
            acting = rng.choice(state.to_act())
            state, _ = state.apply(acting, rng.choice(state.legal_moves(acting)))


async def test_the_worker_takes_players_in_turn() -> None:
    """One player's many games cannot keep another's bots waiting: jobs start round robin by
    sponsor, each with at most `per_sponsor` in hand, whatever order they were read in."""
    started: list[str] = []
    release = asyncio.Event()

    class Recorder(BotWorker):
        async def play(self, job: Job) -> str:
            started.append(job.game_id)
            await release.wait()
            return "retry"  # nothing to acknowledge

    worker = Recorder(
        redis=None,  # type: ignore[arg-type]
        gateway="127.0.0.1:1",
        bot_key="k",
        consumer="c",
        concurrency=4,
        per_sponsor=1,
    )
    bot = "bot-strong-0001aaaa"
    jobs = [Job(str(i), "zoxso", f"greedy-{i}", 1, bot, 0, "greedy") for i in range(8)]
    jobs.append(Job("8", "zoxso", "patient", 1, "bot-strong-0002bbbb", 0, "patient"))
    for job in jobs:
        worker._queues.setdefault(job.sponsor, collections.deque()).append(job)
    worker._dispatch()
    await asyncio.sleep(0)
    assert started == ["greedy-0", "patient"]  # one each, though eight came first
    release.set()
    for _ in range(20):  # each finished job lets the next of its sponsor start
        await asyncio.sleep(0)
    assert started == ["greedy-0", "patient", *(f"greedy-{i}" for i in range(1, 8))]
    await worker.close()


async def test_a_job_that_waits_to_play_holds_no_share_of_its_player() -> None:
    """A job waiting out a window (or a pace) before it plays lets the next job of its sponsor
    start, and takes no place among the jobs at work; the counts come back to nothing once all
    are done."""
    started: list[str] = []
    thought, release = asyncio.Event(), asyncio.Event()

    class Waiter(BotWorker):
        async def play(self, job: Job) -> str:
            started.append(job.game_id)
            if job.game_id == "waits":
                await thought.wait()
                await self._sleep(job, 0.01)
                await release.wait()
            return "retry"  # nothing to acknowledge

    worker = Waiter(
        redis=None,  # type: ignore[arg-type]
        gateway="127.0.0.1:1",
        bot_key="k",
        consumer="c",
        concurrency=4,
        per_sponsor=1,
    )
    bot = "bot-random-0001aaaa"
    for name in ("waits", "next"):
        job = Job(name, "solo", name, 1, bot, 0, "person")
        worker._queues.setdefault(job.sponsor, collections.deque()).append(job)
    worker._dispatch()
    for _ in range(5):
        await asyncio.sleep(0)
    assert started == ["waits"]  # it thinks: the next job of the same player waits its turn
    thought.set()
    for _ in range(5):
        await asyncio.sleep(0)
    assert started == ["waits", "next"]  # it waits to play: the next one starts meanwhile
    assert (len(worker._tasks), worker.working) == (1, 0)  # it waits, "next" is done
    release.set()
    await asyncio.gather(*worker._tasks)
    for _ in range(5):  # the tasks' done callbacks
        await asyncio.sleep(0)
    assert (worker._running, worker._sleeping, worker._tasks) == ({}, set(), set())
    await worker.close()


def test_a_bot_thinks_at_most_a_quarter_of_the_time_its_seat_has_left() -> None:
    """Bots are never timed out, but keep within their clock: the level's budget, capped at a
    quarter of what is left before the seat's deadline (never below zero); untimed: the budget."""
    status = common_pb2.GameStatus(
        clocks=[
            common_pb2.Clock(seat=0, running=False),
            common_pb2.Clock(seat=1, running=True, deadline=timestamp(10_000)),
        ]
    )
    assert time_budget(1.0, status, 1, now_ms=2_000) == 1.0  # 8 s left: 2 s allowed
    assert time_budget(1.0, status, 1, now_ms=8_000) == 0.5  # 2 s left
    assert time_budget(1.0, status, 1, now_ms=12_000) == 0.0  # past it: answer at once
    assert time_budget(1.0, status, 0, now_ms=8_000) == 1.0  # not running: no deadline
    assert time_budget(1.0, common_pb2.GameStatus(), 1, now_ms=8_000) == 1.0


def test_a_bot_turn_job_carries_its_tables_jump_in_window() -> None:
    """Jobs name the window the table was made with (a table made before tables had one: the
    game's default; a game not played out of turn: 0), and a worker reads it back; a job from
    an older service, without one, gets the game's default."""
    seats = ["p-1", "bot-greedy-00aa11bb", "bot-random-00aa11cc"]

    def windows(meta: dict[str, Any]) -> set[int | str]:
        return {
            job["window_ms"] for job in bot_turns.jobs("g", 3, GameMeta.from_json(meta), [1], seats)
        }

    assert windows({"game": "solo", "seats": seats, "jump_in_window_ms": 0}) == {0}
    assert windows({"game": "solo", "seats": seats, "jump_in_window_ms": 4000}) == {4000}
    assert windows({"game": "solo", "seats": seats}) == {games.get("solo").jump_in_window_ms}
    assert games.get("solo").jump_in_window_ms == 2500
    assert windows({"game": "esoloe", "seats": seats[:2]}) == {0}
    meta = GameMeta.from_json({"game": "solo", "seats": seats[:2]})
    (job,) = bot_turns.jobs("g", 3, meta, [1], seats[:2])
    fields = {key.encode(): str(value).encode() for key, value in job.items()}
    assert Job.parse(b"1-1", fields).window_ms == 2500
    del fields[b"window_ms"]
    older = Job.parse(b"1-1", fields)
    assert (older.window_ms, BotWorker.window_of(older)) == (-1, 2500)


def test_a_bot_turn_job_carries_its_tables_pace() -> None:
    """Jobs name the bot pace the table was made with (none: 0), in every game, and a worker
    reads it back; a job from an older service, without one, has none."""
    seats = ["bot-greedy-00aa11bb", "bot-random-00aa11cc"]

    def paces(meta: dict[str, Any]) -> set[int | str]:
        return {
            job["pace_ms"]
            for job in bot_turns.jobs("g", 3, GameMeta.from_json(meta), [0, 1], seats)
        }

    assert paces({"game": "esoloe", "seats": seats, "bot_pace_ms": 1000}) == {1000}
    assert paces({"game": "solo", "seats": seats, "bot_pace_ms": 250}) == {250}
    assert paces({"game": "esoloe", "seats": seats}) == {0}
    (job, _) = bot_turns.jobs(
        "g", 3, GameMeta.from_json({"game": "solo", "seats": seats, "bot_pace_ms": 700}), [0], seats
    )
    fields = {key.encode(): str(value).encode() for key, value in job.items()}
    assert Job.parse(b"1-1", fields).pace_ms == 700
    del fields[b"pace_ms"]
    assert Job.parse(b"1-1", fields).pace_ms == 0
