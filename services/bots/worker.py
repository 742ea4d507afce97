"""Bot workers: take bot-turn jobs from a Redis Stream and play them through the gateway.

Game services append a job whenever a bot seat may act (for Solo that includes jump-in
chances). Workers share the jobs through the consumer group `bots`: each job goes to one
worker, which logs in as that bot seat (BotLogin), asks the gateway for the seat's legal moves
(and, above the random level or where seats may act out of turn, the seat's view), chooses with
the seat's level (`engines.bots`) and plays it with `expected_version` set to the job's version,
so a bot only ever sees what its seat may see and never plays on a position it did not judge.
Searching bots think in a pool of processes, so a search of a second does not stall the
worker's other jobs. A job is acknowledged once its move is accepted, once the bot lets an
optional chance pass (a Solo jump-in), or once it is stale (the game moved on: a newer job
exists if the seat can still act). A job whose worker died stays pending and is claimed by
another worker after `claim_idle_seconds` (XAUTOCLAIM); its request id (the job's stream id)
makes a move that was already accepted apply once.
"""

from __future__ import annotations

import asyncio
import collections
import functools
import logging
import multiprocessing
import random
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any

import grpc
from redis.asyncio import Redis

import games
from client.session import Session, Tls, gateway_channel
from engines.bots.base import RandomBot, Turn
from games import DEFAULT_BUDGETS, LEVELS
from games.clock import MAX_BOT_PACE_MS, MAX_JUMP_IN_WINDOW_MS
from runtime import bot_turns, keys
from runtime.config import cpu_limit
from runtime.consumer import GroupConsumer
from runtime.game_log import now_ms
from runtime.observability import (
    BOT_JOBS,
    BOT_THINK_SECONDS,
    STREAM_LAG,
    STREAM_PENDING,
)
from runtime.redis import redis_failed
from tabletop.common.v1 import common_pb2
from wire.errors import ApiError
from wire.players import is_bot, level_of

log = logging.getLogger("tabletop.bots")

# Outcomes that end a job: the move was refused for a reason a retry cannot change.
FINAL_CODES = {
    grpc.StatusCode.ABORTED,  # another move came first: the job is stale
    grpc.StatusCode.FAILED_PRECONDITION,  # not this seat's turn any more, or the game is over
    grpc.StatusCode.NOT_FOUND,
    grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.INVALID_ARGUMENT,
}


def parse_budgets(specs: Iterable[str]) -> dict[str, float]:
    """Seconds per decision for each level: DEFAULT_BUDGETS overridden by `level=seconds`
    items (each spec may hold several, comma-separated: "strong=0.5,greedy=0")."""
    budgets = dict(DEFAULT_BUDGETS)
    for spec in specs:
        for item in filter(None, (part.strip() for part in spec.split(","))):
            level, _, seconds = item.partition("=")
            try:
                value = float(seconds)
            except ValueError:
                value = -1.0
            if level not in LEVELS or not 0 <= value <= 60:
                raise ValueError(
                    f"bad budget {item!r}: write level=seconds (0..60), levels being "
                    f"{', '.join(LEVELS)}, e.g. strong=0.5"
                )
            budgets[level] = value
    return budgets


def time_budget(budget: float, status: common_pb2.GameStatus, seat: int, now_ms: int) -> float:
    """Seconds a bot may think in a timed game: its level's `budget`, but at most a quarter of
    the time its seat has left to move (a bot is never timed out, yet keeps within its clock
    like anyone at the table)."""
    for clock in status.clocks:
        if clock.seat == seat and clock.HasField("deadline"):
            left_ms = clock.deadline.ToMilliseconds() - now_ms
            return max(0.0, min(budget, left_ms / 4000))
    return budget


def out_of_turn_game(game: str) -> bool:
    """Whether seats of `game` may act out of turn (Solo jump-ins)."""
    return games.get(game).out_of_turn


def choose_move(level: str, turn: Turn, seed: int, game: games.Game) -> str | None:
    """A fresh bot of `level` of `game` chooses in `turn` (run in a pool process: bots keep
    nothing between jobs, which may be for any game and position; the game's declaration comes
    along, so a game registered only in the worker's process is known there too)."""
    bot = game.levels()[level]()
    return bot.choose(turn, random.Random(seed))


def prepare_bots(declared: list[games.Game]) -> None:
    """A thinker process's start: each game's bots load what they read (e-SOLO-e's solved
    record) before the first job, so that no bot's first decision pays for it. A game that
    cannot prepare is left as it is (a job of it meets the error itself), not the pool."""
    for game in declared:
        try:
            game.prepare_bots()
        except Exception:
            log.exception("cannot prepare a game's bots", extra={"game": game.name})


def view_of(game: str, reply: Any) -> dict[str, Any]:
    """The seat's engine view from a GetView reply (the game adapter's `view_json`)."""
    return games.get(game).adapter.view_json(reply)


Chooser = Callable[[str, Turn, int, games.Game], str | None]
"""How a bot of a level of a game chooses in a Turn, given a seed for its random generator."""


@dataclass(frozen=True, slots=True)
class Job:
    entry_id: str
    game: str
    game_id: str
    seat: int
    player: str
    version: int
    sponsor: str = ""
    """The player the bots' work is for (see runtime.bot_turns.jobs)."""
    window_ms: int = -1
    """The table's jump-in window (runtime.bot_turns.jobs); -1: a job that does not say (from
    a game service older than windows), which gets the game's default."""
    pace_ms: int = 0
    """The table's bot pace (runtime.bot_turns.jobs): how long the bot lets pass after the move
    before it acts, whoever sits at the table."""

    @staticmethod
    def parse(entry_id: bytes | str, fields: Mapping[bytes, bytes]) -> Job:
        text = {k.decode(): v.decode() for k, v in fields.items()}
        return Job(
            entry_id=entry_id.decode() if isinstance(entry_id, bytes) else entry_id,
            game=text["game"],
            game_id=text["game_id"],
            seat=int(text["seat"]),
            player=text["player"],
            version=int(text["version"]),
            sponsor=text.get("sponsor", ""),
            window_ms=int(text.get("window_ms", -1)),
            pace_ms=int(text.get("pace_ms", 0)),
        )


class BotWorker(GroupConsumer):
    failure_message = "cannot read jobs"

    def __init__(
        self,
        *,
        redis: Redis,
        gateway: str,
        bot_key: str,
        consumer: str,
        concurrency: int = 32,
        claim_idle_seconds: float = 15.0,
        delay_seconds: float = 0.0,
        budgets: Mapping[str, float] = DEFAULT_BUDGETS,
        processes: int = 0,
        choose: Chooser = choose_move,
        stall_seconds: float = 30.0,
        max_jump_in_window_ms: int = MAX_JUMP_IN_WINDOW_MS,
        max_bot_pace_ms: int = MAX_BOT_PACE_MS,
        per_sponsor: int = 0,
        tls: Tls | None = None,
    ) -> None:
        """`budgets`: seconds each level may think about a move. `processes`: how many
        processes the searching levels think in (0: one per CPU), started at the first job
        that needs one. `choose` runs in those processes (a module-level function).
        `stall_seconds`: a live game with no move for this long whose turn is a bot's gets a
        new job (its job was lost: see `sweep`). In a game where seats may act out of turn
        (Solo jump-ins) and a person holds a seat, bots let the table's jump-in window pass
        after each move before they act (between 1 and 1.25 times it: bots racing each other
        for a jump-in take turns winning), so that the person can jump in first; a table made
        with a window of 0 gets its bots' moves at once. `max_jump_in_window_ms` caps every
        table's window (0: bots never wait; for load tests and the test suite). At a table made
        with a bot pace (`bot_pace_ms`: games of bots that people watch), bots let that long
        pass after each move before they act, within `max_bot_pace_ms` (0: never; for load
        tests and the test suite). Thinking counts within both waits.
        `per_sponsor`: jobs of one sponsor (the player the bots' work is for) in hand at once
        (0: an eighth of `concurrency`, at least 1; see `_dispatch`). `tls`: the gateway
        speaks TLS (client.session.Tls)."""
        super().__init__(
            redis=redis, stream=keys.BOT_TURNS, group=keys.BOT_GROUP, consumer=consumer,
            claim_idle_seconds=claim_idle_seconds, block_seconds=1.0,
            claim_every_seconds=min(5.0, claim_idle_seconds / 2), claim_count=concurrency,
        )  # fmt: skip
        self.gateway = gateway
        self.bot_key = bot_key
        self.concurrency = concurrency
        self.delay_seconds = delay_seconds
        self.budgets = dict(budgets)
        self.processes = processes or cpu_limit()
        self._pool: ProcessPoolExecutor | None = None
        self.choose = choose
        self.channel = gateway_channel(gateway, tls)
        self.session = Session(gateway, self.channel)
        """The worker's own session: one token for every bot seat it plays, and one stream
        (a player session) for all their calls."""
        self.session.open_stream()
        self._login = asyncio.Lock()
        self.rng = random.Random()
        self.per_sponsor = per_sponsor or max(1, concurrency // 8)
        self._queues: dict[str, collections.deque[Job]] = {}
        """Jobs read and waiting to start, by sponsor (taken in turn)."""
        self._running: dict[str, int] = {}
        """Jobs in hand by sponsor, less those that only wait to play (see `_sleep`)."""
        self._sleeping: set[str] = set()
        """The jobs (entry ids) that only wait to play: they hold no sponsor's share."""
        self._tasks: set[asyncio.Task[None]] = set()
        self.stall_ms = int(stall_seconds * 1000)
        self._last_sweep = 0.0
        self.max_window_ms = max_jump_in_window_ms
        self.max_pace_ms = max_bot_pace_ms

    async def run(self, stop: asyncio.Event) -> None:
        """Take and play jobs until `stop` is set; then finish the jobs in hand."""
        self._last_sweep = time.monotonic()
        await super().run(stop)
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    def passing(self, error: BaseException) -> bool:
        return isinstance(error, ApiError) or super().passing(error)

    async def reclaiming(self) -> bool:
        """Jobs left idle are taken over at most every 5 seconds (and the stream's lag is
        reported then)."""
        reclaim = await super().reclaiming()
        if reclaim:
            await self._report_lag()
        return reclaim

    def read_count(self) -> int:
        """Backpressure: no more jobs are read than there is room for (four times
        `concurrency`, less those in hand or waiting to start)."""
        return max(1, 4 * self.concurrency - len(self._tasks) - self.waiting)

    async def consume(self, entries: list[tuple[Any, Any]], *, reclaimed: bool) -> None:
        """Queue the read's jobs and start those there is room for (each is acknowledged
        when it ends: `_handle`); now and then, `sweep`."""
        for entry_id, fields in entries:
            job = Job.parse(entry_id, fields)
            self._queues.setdefault(job.sponsor, collections.deque()).append(job)
        self._dispatch()
        if time.monotonic() - self._last_sweep > self.stall_ms / 2000:
            self._last_sweep = time.monotonic()
            await self.sweep()

    async def sweep(self) -> int:
        """Queue a job for each bot seat a stalled live game waits on; how many were queued.

        A game service queues a bot's job after committing the move that gave it the turn. If
        the service stopped in between, or Redis was away just then, the job never existed and
        the game would wait forever. One worker at a time sweeps (a short lock); a job queued
        twice is harmless (only one move can be played at a version)."""
        lock = self.stall_ms // 2
        if not await self.redis.set(keys.BOT_SWEEP_LOCK, self.consumer, nx=True, px=lock):
            return 0
        jobs = await bot_turns.stalled(self.redis, self.stall_ms)
        if jobs:
            await bot_turns.add(self.redis, jobs)
            log.warning("stalled games: bot jobs queued again", extra={"jobs": len(jobs)})
        return len(jobs)

    @property
    def waiting(self) -> int:
        """Jobs read and not started yet."""
        return sum(len(queue) for queue in self._queues.values())

    @property
    def working(self) -> int:
        """Jobs in hand that ask or think (not those that only wait to play: `_sleep`)."""
        return len(self._tasks) - len(self._sleeping)

    def _dispatch(self) -> None:
        """Start waiting jobs, taking the players in turn: each sponsor has at most
        `per_sponsor` jobs in hand, so one player's many games against strong bots cannot
        keep everyone else's bots waiting."""
        started = True
        while started and self.working < self.concurrency:
            started = False
            for sponsor in list(self._queues):
                queue = self._queues[sponsor]
                if self._running.get(sponsor, 0) >= self.per_sponsor:
                    continue
                job = queue.popleft()
                if not queue:
                    del self._queues[sponsor]
                self._running[sponsor] = self._running.get(sponsor, 0) + 1
                task = asyncio.create_task(self._handle(job))
                self._tasks.add(task)
                task.add_done_callback(functools.partial(self._done, job))
                started = True
                if self.working >= self.concurrency:
                    break

    async def _report_lag(self) -> None:
        for group in await self.redis.xinfo_groups(keys.BOT_TURNS):
            if group["name"] in (keys.BOT_GROUP, keys.BOT_GROUP.encode()):
                STREAM_LAG.labels(keys.BOT_TURNS, keys.BOT_GROUP).set(group.get("lag") or 0)
                STREAM_PENDING.labels(keys.BOT_TURNS, keys.BOT_GROUP).set(group["pending"])

    def _done(self, job: Job, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if job.entry_id in self._sleeping:
            self._sleeping.discard(job.entry_id)
        else:
            self._free_share(job.sponsor)
        self._dispatch()

    def _free_share(self, sponsor: str) -> None:
        left = self._running[sponsor] - 1
        if left:
            self._running[sponsor] = left
        else:
            del self._running[sponsor]

    async def _sleep(self, job: Job, seconds: float) -> None:
        """Wait `seconds` before playing the job's chosen move, holding neither its sponsor's
        share nor a place among the `concurrency` jobs at work: those are for asking and
        thinking, and a job that waits out a window must not keep its table's other jobs from
        starting (those queued when every person passed, PassJumpIn, above all: whether they
        start at once must not depend on how many bots hold a card to jump in with and wait to
        play it)."""
        if job.entry_id not in self._sleeping:
            self._sleeping.add(job.entry_id)
            self._free_share(job.sponsor)
            self._dispatch()
        await asyncio.sleep(seconds)

    async def _handle(self, job: Job) -> None:
        try:
            outcome = await self.play(job)
        except Exception:
            log.exception("bot job failed", extra={"game_id": job.game_id, "job": job.entry_id})
            outcome = "error"
        BOT_JOBS.labels(job.game, outcome).inc()
        if outcome != "retry" and outcome != "error":
            try:
                await self.ack(job.entry_id)
            except Exception as error:
                if not redis_failed(error):
                    raise
                # Still pending: a worker takes it over later and finds it stale.
                log.warning(
                    "job not acknowledged", extra={"job": job.entry_id, "error": f"{error}"}
                )

    async def _metadata(self, bot: str) -> tuple[tuple[str, str], ...]:
        """The metadata of a call of the bot seat `bot`: the worker's one token (logged in
        once, with the bot key, for every seat it plays) and the seat it acts for."""
        if not self.session.token:
            async with self._login:
                if not self.session.token:
                    await self.session.worker_login(self.bot_key)
        return self.session.acting_for(bot)

    def _thinkers(self) -> ProcessPoolExecutor:
        if self._pool is None:
            # Spawned, not forked: this process runs gRPC threads, which a fork would copy
            # mid-flight.
            self._pool = ProcessPoolExecutor(
                self.processes,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=prepare_bots,
                initargs=([games.get(name) for name in games.names()],),
            )
        return self._pool

    async def play(self, job: Job) -> str:
        """Play one job: "played", "passed" (an optional chance let go), "stale", "refused" or
        "retry" (leave it pending)."""
        level = level_of(job.player)
        if level not in LEVELS:
            log.warning("unknown bot level", extra={"player": job.player})
            return "refused"
        metadata = await self._metadata(job.player)
        stub = self.session.game(job.game)
        try:
            legal = await stub.LegalMoves(
                common_pb2.LegalMovesRequest(game_id=job.game_id, seat=job.seat),
                metadata=metadata,
                timeout=10,
            )
            if legal.version != job.version or not legal.moves:
                return "stale"
            started = time.perf_counter()
            window_ms = 0
            if level == "random" and not out_of_turn_game(job.game):
                # as cheap as it always was: no view, no process
                turn = Turn(job.game, job.seat, {}, list(legal.moves), 0.0)
                move = RandomBot().choose(turn, self.rng)
            else:
                reply = await stub.GetView(
                    common_pb2.GetViewRequest(game_id=job.game_id, seat=job.seat),
                    metadata=metadata,
                    timeout=10,
                )
                if reply.status.version != job.version:
                    return "stale"
                if out_of_turn_game(job.game) and any(
                    not is_bot(seat.player_id) for seat in reply.status.seats
                ):  # a person at the table: the table's window, within the worker's cap
                    window_ms = min(self.window_of(job), self.max_window_ms)
                view = view_of(job.game, reply)
                turn = Turn(
                    game=job.game,
                    seat=job.seat,
                    view=view,
                    moves=list(legal.moves),
                    budget=time_budget(self.budgets[level], reply.status, job.seat, now_ms()),
                    # not among the public seats to act: a chance it may let pass (a jump-in)
                    optional=job.seat not in reply.status.to_act,
                )
                if level == "random":
                    move = RandomBot().choose(turn, self.rng)
                else:
                    try:
                        move = await asyncio.get_running_loop().run_in_executor(
                            self._thinkers(),
                            self.choose,
                            level,
                            turn,
                            self.rng.getrandbits(64),
                            games.get(job.game),
                        )
                    except BrokenProcessPool:  # a thinker died (killed?): start afresh
                        self._pool = None
                        return "retry"
            BOT_THINK_SECONDS.labels(job.game, level).observe(time.perf_counter() - started)
            if move is None:
                return "passed"
            wait = self.delay_seconds
            until = min(job.pace_ms, self.max_pace_ms) / 1000  # the table's pace
            if window_ms > 0:  # a person at the table: leave them their chance to jump in first
                until = max(until, window_ms / 1000 * self.rng.uniform(1.0, 1.25))
            if until > 0:
                wait = max(wait, until - (time.perf_counter() - started))
            if wait > 0:
                await self._sleep(job, wait)
            await stub.Play(
                common_pb2.PlayRequest(
                    game_id=job.game_id,
                    move=move,
                    expected_version=job.version,
                    request_id=f"bot-job-{job.entry_id}",
                    seat=job.seat,
                ),
                metadata=metadata,
                timeout=10,
            )
            return "played"
        except grpc.aio.AioRpcError as error:
            if error.code() == grpc.StatusCode.UNAUTHENTICATED:
                self.session.token = ""  # the token expired: log in again
                return "retry"
            if error.code() in FINAL_CODES:
                if error.code() == grpc.StatusCode.INVALID_ARGUMENT:
                    log.warning(
                        "bot move refused",
                        extra={"game_id": job.game_id, "reason": error.details()},
                    )
                return "stale" if error.code() == grpc.StatusCode.ABORTED else "refused"
            return "retry"

    @staticmethod
    def window_of(job: Job) -> int:
        """The jump-in window of the job's table (ms): the job's, else the game's default."""
        return job.window_ms if job.window_ms >= 0 else games.get(job.game).jump_in_window_ms

    async def close(self) -> None:
        await self.session.close()
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
