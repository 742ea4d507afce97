"""Bot workers: take bot-turn jobs from a Redis Stream and play them through the gateway.

Game services append a job whenever a bot seat may act (for Solo that includes jump-in chances
and late Solo calls). Workers share the jobs through the consumer group `bots`: each job goes to
one worker, which logs in as that bot seat (BotLogin), asks the gateway for the seat's legal
moves, chooses one with the seat's level and plays it with `expected_version` set to the job's
version, so a bot only ever sees what its seat may see and never plays on a position it did not
judge. A job is acknowledged once its move is accepted, or once it is stale (the game moved on:
a newer job exists if the seat can still act). A job whose worker died stays pending and is
claimed by another worker after `claim_idle_seconds` (XAUTOCLAIM); its request id (the job's
stream id) makes a move that was already accepted apply once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import grpc
from redis.asyncio import Redis
from redis.exceptions import RedisError, ResponseError

from client.session import Session
from services.bots.identity import level_of
from services.bots.levels import BOT_LEVELS
from services.runtime import keys
from services.runtime.observability import (
    BOT_JOBS,
    BOT_THINK_SECONDS,
    STREAM_LAG,
    STREAM_PENDING,
)
from tabletop.common.v1 import common_pb2

log = logging.getLogger("tabletop.bots")

# Outcomes that end a job: the move was refused for a reason a retry cannot change.
FINAL_CODES = {
    grpc.StatusCode.ABORTED,  # another move came first: the job is stale
    grpc.StatusCode.FAILED_PRECONDITION,  # not this seat's turn any more, or the game is over
    grpc.StatusCode.NOT_FOUND,
    grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.INVALID_ARGUMENT,
}


@dataclass(frozen=True, slots=True)
class Job:
    entry_id: str
    game: str
    game_id: str
    seat: int
    player: str
    version: int

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
        )


class BotWorker:
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
    ) -> None:
        self.redis = redis
        self.gateway = gateway
        self.bot_key = bot_key
        self.consumer = consumer
        self.concurrency = concurrency
        self.claim_idle_ms = int(claim_idle_seconds * 1000)
        self.delay_seconds = delay_seconds
        self.channel = grpc.aio.insecure_channel(gateway)
        self.sessions: dict[str, Session] = {}
        self.rng = random.Random()
        self._slots = asyncio.Semaphore(concurrency)
        self._tasks: set[asyncio.Task[None]] = set()

    async def ensure_group(self) -> None:
        with contextlib.suppress(ResponseError):  # BUSYGROUP: it exists already
            await self.redis.xgroup_create(keys.BOT_TURNS, keys.BOT_GROUP, id="0", mkstream=True)

    async def run(self, stop: asyncio.Event) -> None:
        """Take and play jobs until `stop` is set; then finish the jobs in hand."""
        last_claim = 0.0
        grouped = False
        while not stop.is_set():
            try:
                if not grouped:
                    await self.ensure_group()
                    grouped = True
                last_claim = await self._take(last_claim)
            except (RedisError, OSError) as error:  # Redis away: wait for it
                log.warning("cannot read jobs", extra={"error": str(error)})
                grouped = False
                await asyncio.sleep(1.0)
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _take(self, last_claim: float) -> float:
        """Read (and reclaim) jobs and start them; the time of the last reclaim."""
        entries: list[tuple[Any, Any]] = []
        if time.monotonic() - last_claim > min(5.0, self.claim_idle_ms / 2000):
            last_claim = time.monotonic()
            await self._report_lag()
            reply: Any = await self.redis.xautoclaim(
                keys.BOT_TURNS, keys.BOT_GROUP, self.consumer, self.claim_idle_ms,
                start_id="0-0", count=self.concurrency,
            )  # fmt: skip
            entries += [e for e in reply[1] if e[1]]
        free = max(1, self.concurrency - len(self._tasks))
        read: Any = await self.redis.xreadgroup(
            keys.BOT_GROUP, self.consumer, {keys.BOT_TURNS: ">"}, count=free, block=1000
        )
        for _stream, items in read or []:
            entries += items
        for entry_id, fields in entries:
            await self._slots.acquire()
            task = asyncio.create_task(self._handle(Job.parse(entry_id, fields)))
            self._tasks.add(task)
            task.add_done_callback(self._done)
        return last_claim

    async def _report_lag(self) -> None:
        for group in await self.redis.xinfo_groups(keys.BOT_TURNS):
            if group["name"] in (keys.BOT_GROUP, keys.BOT_GROUP.encode()):
                STREAM_LAG.labels(keys.BOT_TURNS, keys.BOT_GROUP).set(group.get("lag") or 0)
                STREAM_PENDING.labels(keys.BOT_TURNS, keys.BOT_GROUP).set(group["pending"])

    def _done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        self._slots.release()

    async def _handle(self, job: Job) -> None:
        try:
            outcome = await self.play(job)
        except Exception:
            log.exception("bot job failed", extra={"game_id": job.game_id, "job": job.entry_id})
            outcome = "error"
        BOT_JOBS.labels(job.game, outcome).inc()
        if outcome != "retry" and outcome != "error":
            await self.redis.xack(keys.BOT_TURNS, keys.BOT_GROUP, job.entry_id)

    async def _session(self, player: str) -> Session:
        session = self.sessions.get(player)
        if session is None:
            session = Session(self.gateway, self.channel)
            await session.bot_login(player, self.bot_key)
            self.sessions[player] = session
        return session

    async def play(self, job: Job) -> str:
        """Play one job: "played", "stale", "refused" or "retry" (leave it pending)."""
        level = BOT_LEVELS.get(level_of(job.player))
        if level is None:
            log.warning("unknown bot level", extra={"player": job.player})
            return "refused"
        session = await self._session(job.player)
        stub = session.game(job.game)
        try:
            legal = await stub.LegalMoves(
                common_pb2.LegalMovesRequest(game_id=job.game_id, seat=job.seat),
                metadata=session.metadata,
                timeout=10,
            )
            if legal.version != job.version or not legal.moves:
                return "stale"
            started = time.perf_counter()
            move = level.choose(job.game, legal.moves, self.rng)
            if self.delay_seconds:
                await asyncio.sleep(self.delay_seconds)
            BOT_THINK_SECONDS.labels(job.game, level.name).observe(time.perf_counter() - started)
            await stub.Play(
                common_pb2.PlayRequest(
                    game_id=job.game_id,
                    move=move,
                    expected_version=job.version,
                    request_id=f"bot-job-{job.entry_id}",
                    seat=job.seat,
                ),
                metadata=session.metadata,
                timeout=10,
            )
            return "played"
        except grpc.aio.AioRpcError as error:
            if error.code() == grpc.StatusCode.UNAUTHENTICATED:
                self.sessions.pop(job.player, None)  # the token expired: log in again
                return "retry"
            if error.code() in FINAL_CODES:
                if error.code() == grpc.StatusCode.INVALID_ARGUMENT:
                    log.warning(
                        "bot move refused",
                        extra={"game_id": job.game_id, "reason": error.details()},
                    )
                return "stale" if error.code() == grpc.StatusCode.ABORTED else "refused"
            return "retry"

    async def close(self) -> None:
        await self.channel.close()
