"""`make soak`: many games at once through the gateway while a chaos loop restarts processes,
Redis and PostgreSQL; then an audit of every game, straight from Redis, and of every account.

The platform runs as separate processes on this machine: Redis (one server with append-only
persistence, or a Redis Cluster of three masters), PostgreSQL (the gateways' accounts),
`--replicas` of every game service, two gateways, two matchmakers, two bot workers and a
ratings consumer. Each of `--games` players is an account (bench/soak_accounts.py: registered,
its access token renewed with Refresh, some logging out once) and plays one game after another:
FindMatch with bots filling the other seats now, then its own seat's moves (random legal moves)
through the gateway, while bot workers play the rest. A chaos loop meanwhile stops a random process
(SIGKILL or SIGTERM) and starts it again, and restarts Redis once halfway; PostgreSQL is
restarted a quarter of the way through (a fast stop) and at three quarters (an immediate one).

When the time is up no new game starts; games in progress get `--drain` seconds to finish. Then
every game any player joined is audited:
- its event stream holds versions 0..version, none missing or repeated;
- replaying its move log from its seed gives exactly the stored snapshot, event for event;
- every move the players saw accepted is in the log, as played, by that seat, at that version;
- no move was applied twice: the seat's entries in the log are exactly the player's accepted
  moves (plus those whose answer was lost, found by their request ids).

With `--clocks` every game has a short time control (below, `CLOCKS`) and players misbehave as
real ones do: some walk away in the middle of a game, some never make a first move, some send
their move around its deadline. The audit then also replays every timeout and abort with the
moves, checks that each was applied once, never before its deadline, that no move was accepted
after one, and that no game still waits on a deadline more than `overdue_ms` past.

The accounts' audit (bench/soak_accounts.py says what is guaranteed): every account logs in as
the same player; the session each player holds refreshes with the last refresh token it was
given; used refresh tokens and ended sessions' tokens are refused, ended sessions' access tokens
by every gateway within the revocation poll. It prints the figures and exits 1 if any check
failed.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import concurrent.futures
import json
import os
import random
import signal
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import psycopg
import uvloop

import games
from bench.soak_accounts import RETRYABLE as RETRYABLE  # the partition suite's too
from bench.soak_accounts import (
    Account,
    AccountAudit,
    Keeper,
    Outage,
    audit_accounts,
    revocation_bound,
)
from client.session import Session
from games import replay
from games.clock import TimeControl
from runtime import db, keys
from runtime.game_log import Entry, entry_of, now_ms
from runtime.launch import Launch
from runtime.localpg import LocalPostgres
from runtime.localredis import LocalRedis, LocalRedisCluster, LocalRedisSentinel
from runtime.redis import connect_redis
from services.game.deadlines import HOLD_MS
from services.game.store import GameStore
from services.ratings.model import has_result
from tabletop.common.v1 import common_pb2
from tabletop.lobby.v1 import lobby_pb2, lobby_pb2_grpc
from tabletop.solo.v1 import solo_pb2
from wire.clock import time_control_message
from wire.errors import error_info
from wire.players import is_bot
from wire.records import GameMeta

SECRET = "soak-signing-key-0123456789-0123456789"
BOT_KEY = "soak-bot-key-0123456789"


@dataclass
class Settings:
    games: int = 200
    seconds: float = 300.0
    drain_seconds: float = 60.0
    replicas: int = 2
    cluster: bool = False
    sentinel: bool = False
    """A primary, two replicas and three Sentinels; the chaos kills the primary halfway."""
    wait_replicas: int = 0
    """REDIS_WAIT_REPLICAS: moves are answered once this many replicas hold them."""
    chaos: bool = True
    chaos_every: tuple[float, float] = (1.0, 4.0)
    seed: int = 1
    clocks: bool = False
    sweep_seconds: float = 1.0
    walk_away: float = 0.15
    """With `clocks`: the share of games a player leaves in the middle (a timeout follows)..."""
    never_move: float = 0.1
    """...and that it never makes a first move in (an abort follows, or a bot takes the seat)."""
    access_ttl_seconds: int = 20
    """ACCESS_TOKEN_TTL_SECONDS: short, so that every player refreshes during the run; long
    enough that a PostgreSQL restart is over before a token runs out (players refresh at half
    its life), so that play never waits on one."""
    revocation_poll_seconds: float = 1.0
    """REVOCATION_POLL_SECONDS of the gateways."""
    guests: float = 0.5
    """The share of players that log in as a guest first, then Register with its token."""
    logouts: float = 0.5
    """The share of players that log out once during the run and log in again."""


CLOCKS = {
    "esoloe": TimeControl(clock_seconds=20, increment_seconds=1, abort_seconds=8),
    "zoxso": TimeControl(clock_seconds=30, increment_seconds=1, abort_seconds=8),
    "solo": TimeControl(move_seconds=4, on_timeout="bot", bot_level="random", abort_seconds=8),
    "solace": TimeControl(move_seconds=4, abort_seconds=8),
}
"""The time controls of `--clocks`: short, so that walking away costs seconds."""

LAST_MOMENT = 0.05
"""With `--clocks`: at each turn, the chance that a player sends its move near the deadline
(±300 ms)."""

OVERDUE_MS = 2_000
"""Slack, on top of the sweep interval and a killed replica's hold on what it claimed, before the
audit calls a game that waits past its deadline a problem."""


# ---------------------------------------------------------------------------- processes


def _postgres() -> LocalPostgres:
    server = LocalPostgres()
    try:
        db.migrate(server.url)
    except BaseException:
        server.stop()
        raise
    return server


class Stack:
    """Every process of the platform, on free ports, against one Redis (or Redis Cluster) and
    one PostgreSQL (the gateways' accounts): two replicas of each game service, the lobby, two
    gateways, two matchmakers, two bot workers, a ratings consumer (which archives too)."""

    def __init__(self, settings: Settings) -> None:
        self.redis: LocalRedis | LocalRedisCluster | LocalRedisSentinel
        sentinels: dict[str, str] = {}
        with concurrent.futures.ThreadPoolExecutor(1) as starting:
            postgres = starting.submit(_postgres)  # meanwhile: initdb takes seconds
            try:
                if settings.cluster:
                    self.redis = LocalRedisCluster(masters=3)
                elif settings.sentinel:
                    self.redis = LocalRedisSentinel(replicas=2)
                    sentinels = self.redis.sentinels_env
                    os.environ.update(sentinels)  # the audit, in this process, follows it too
                else:
                    self.redis = LocalRedis(appendonly=True)
            except BaseException:
                if postgres.exception() is None:
                    postgres.result().stop()
                raise
        try:
            self.postgres = postgres.result()
        except BaseException:
            self.redis.stop()
            raise
        self.logs = Path(tempfile.mkdtemp(prefix="tabletop-soak-logs-"))
        """Every process's output (JSON log lines), kept after the run for a look."""
        self.launch = Launch(
            redis_url=self.redis.url,
            env={
                "REDIS_CLUSTER": "true" if settings.cluster else "false",
                "TOKEN_SECRET": SECRET,
                "BOT_KEY": BOT_KEY,
                "GRACE_SECONDS": "3",
                "RATE_LIMIT_PER_SECOND": "100000",
                "RATE_LIMIT_BURST": "100000",
                "LOGIN_RATE_LIMIT_PER_SECOND": "100000",
                "LOGIN_RATE_LIMIT_BURST": "100000",
                "MATCHMAKER_SCAN_SECONDS": "0.5",
                "BOT_CLAIM_IDLE_SECONDS": "3",
                "BOT_STALL_SECONDS": "5",
                "TIMEOUT_SWEEP_SECONDS": str(settings.sweep_seconds),
                "REDIS_WAIT_REPLICAS": str(settings.wait_replicas),
                "DATABASE_URL": self.postgres.url,
                "ACCESS_TOKEN_TTL_SECONDS": str(settings.access_ttl_seconds),
                "REVOCATION_POLL_SECONDS": str(settings.revocation_poll_seconds),
                "TRUSTED_PROXIES": "127.0.0.1/32",  # each player names its address
                **sentinels,
            },
            gateways=[None, None],
            replicas=settings.replicas,
            matchmakers=2,
            bot_workers=2,
            logs=self.logs,
        )
        self.processes = self.launch.processes

    @property
    def target(self) -> str:
        """Both gateways, round robin: calls go on through one while the other is down."""
        return "ipv4:" + ",".join(self.launch.gateway_targets)

    def start(self) -> None:
        self.launch.start()
        if not self.launch.ready(timeout=60):
            raise RuntimeError("the platform did not start")

    def stop(self) -> None:
        try:
            self.launch.stop()
        finally:
            self.redis.stop()
            self.postgres.stop()


async def chaos(
    stack: Stack,
    settings: Settings,
    until: float,
    counts: collections.Counter[str],
    failovers: list[float],
) -> None:
    """Stop a random process, start it again; restart Redis (or one cluster node) once halfway;
    under Sentinel, kill the primary instead (it comes back later, as a replica), and note in
    `failovers` how long it took until a new primary took writes."""
    rng = random.Random(settings.seed)
    halfway = time.monotonic() + (until - time.monotonic()) / 2
    redis_restarted = False
    while time.monotonic() < until:
        await asyncio.sleep(rng.uniform(*settings.chaos_every))
        if not redis_restarted and time.monotonic() >= halfway:
            redis_restarted = True
            if isinstance(stack.redis, LocalRedisSentinel):
                primary = stack.redis.primary()
                killed = time.monotonic()
                primary.kill()
                await asyncio.to_thread(stack.redis.wait_failover, primary)
                failovers.append(time.monotonic() - killed)
                counts["redis primary killed"] += 1
                await asyncio.sleep(rng.uniform(1.0, 3.0))
                await asyncio.to_thread(primary.restart)  # the Sentinels make it a replica
                continue
            node = (
                rng.choice(stack.redis.nodes)
                if isinstance(stack.redis, LocalRedisCluster)
                else stack.redis
            )
            await asyncio.to_thread(node.restart, 1.0)
            counts["redis"] += 1
            continue
        victim = rng.choice(stack.processes)
        sig = rng.choice([signal.SIGKILL, signal.SIGTERM])
        await asyncio.to_thread(victim.stop, sig)
        await asyncio.sleep(rng.uniform(0.2, 1.5))
        victim.start()
        counts[victim.kind] += 1


POSTGRES_RESTARTS = ((0.25, False), (0.75, True))
"""When the chaos restarts PostgreSQL (the share of the run gone), and whether the stop is
immediate (as a crash: no checkpoint, the start recovers from the log) or fast (clean)."""


async def postgres_chaos(
    stack: Stack,
    settings: Settings,
    until: float,
    counts: collections.Counter[str],
    outage: Outage,
) -> None:
    """Restart PostgreSQL (stopped, down 0.2 to 1.5 s, started on the same data and port) at
    `POSTGRES_RESTARTS`, noting in `outage` while it is down."""
    rng = random.Random(settings.seed + 1)
    start = time.monotonic()
    for share, immediate in POSTGRES_RESTARTS:
        await asyncio.sleep(max(0.0, start + (until - start) * share - time.monotonic()))
        outage.down = True
        try:
            await asyncio.to_thread(stack.postgres.restart, rng.uniform(0.2, 1.5), immediate)
        finally:
            outage.down, outage.back_at = False, time.monotonic()
        counts["postgres (immediate stop)" if immediate else "postgres (fast stop)"] += 1


# ---------------------------------------------------------------------------- players


def overdue_ms(settings: Settings) -> int:
    """How late a timeout may be applied: a sweep interval, plus a replica killed after it
    claimed the game (the others wait out its hold), plus slack."""
    return int(settings.sweep_seconds * 1000) + HOLD_MS + OVERDUE_MS


def _options(game: str) -> lobby_pb2.GameOptions:
    options = lobby_pb2.GameOptions()
    if game == "solo":  # one round of two seats: a whole game is a long random walk
        options.solo.CopyFrom(solo_pb2.Options(players=2, mode=solo_pb2.MODE_ROUNDS, rounds=1))
    return options


@dataclass
class Move:
    version: int
    seat: int
    move: str
    request_id: str
    """As the game service records it: `<player id>:<the request id the client gave>`."""


@dataclass
class Joined:
    game: str
    game_id: str
    seat: int
    accepted: list[Move] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    """Request ids of moves whose answer never came (maybe applied, maybe not)."""
    played: int = 0
    """The first version the player may still move at (a move sent once per version)."""


@dataclass
class Tally:
    joined: list[Joined] = field(default_factory=list)
    errors: collections.Counter[str] = field(default_factory=collections.Counter)
    first: dict[str, str] = field(default_factory=dict)
    """The first error's message for each status seen."""
    latencies: list[float] = field(default_factory=list)
    too_late: int = 0
    """Moves refused because they arrived after their deadline (TIME_UP)."""
    accounts: list[Account] = field(default_factory=list)
    played_while_down: int = 0
    """Moves accepted while PostgreSQL was down."""

    def saw(self, error: grpc.aio.AioRpcError) -> None:
        """Count an error a player got, by status, keeping the first message of each."""
        self.errors[error.code().name] += 1
        self.first.setdefault(error.code().name, str(error.details())[:300])


class Player:
    """One player: an account (`keeper` holds its session), playing one game after another.
    `outage`: PostgreSQL's state, to count the moves accepted while it was down."""

    def __init__(
        self, name: str, channel: grpc.aio.Channel, tally: Tally, rng: random.Random,
        settings: Settings, probes: list[Any], outage: Outage, *, as_guest: bool = False,
        logout_at: float | None = None,
    ) -> None:  # fmt: skip
        self.name = name
        self.session = Session("", channel)
        self.tally = tally
        self.rng = rng
        self.settings = settings
        self.outage = outage
        self.as_guest = as_guest
        account = Account(name)
        tally.accounts.append(account)
        bound = revocation_bound(settings.revocation_poll_seconds)
        self.keeper = Keeper(self.session, account, probes, outage, bound, logout_at)

    async def call(self, method: Any, request: Any, *, attempts: int = 30) -> Any:
        """A unary call, retried while the platform is restarting (or with the new token when
        the one sent was replaced meanwhile); errors counted by status."""
        for attempt in range(attempts):
            await self.keeper.usable()
            token = self.session.token
            try:
                return await method(request, metadata=self.session.metadata, timeout=10)
            except grpc.aio.AioRpcError as error:
                self.tally.saw(error)
                if self.keeper.stale(error, token) and attempt < attempts - 1:
                    continue
                if error.code() not in RETRYABLE or attempt == attempts - 1:
                    raise
                await asyncio.sleep(min(2.0, 0.1 * 2**attempt))
        raise AssertionError("unreachable")

    async def find_game(self, game: str, deadline: float) -> Joined | None:
        lobby: Any = lobby_pb2_grpc.LobbyServiceStub(self.session.channel)
        request = lobby_pb2.FindMatchRequest(
            game=game, options=_options(game), bots=lobby_pb2.BOT_FILL_NOW, level="random"
        )
        if self.settings.clocks:
            request.time_control.CopyFrom(time_control_message(CLOCKS[game]))
        while time.monotonic() < deadline:
            try:
                ticket_id = (await self.call(lobby.FindMatch, request)).ticket_id
            except grpc.aio.AioRpcError as error:
                # An earlier FindMatch was queued but its answer was lost: go on with that ticket.
                reason, metadata = error_info(error)
                if reason == "LIMIT_REACHED":  # games walked away from still run: wait for them
                    await asyncio.sleep(1.0)
                    continue
                if reason != "TICKET_LIVE":
                    raise
                ticket_id = metadata["ticket_id"]
            try:
                await self.keeper.usable()
                async for update in lobby.WatchTicket(
                    lobby_pb2.WatchTicketRequest(ticket_id=ticket_id),
                    metadata=self.session.metadata,
                    timeout=max(0.1, deadline - time.monotonic()),
                ):
                    if update.state == lobby_pb2.TICKET_STATE_MATCHED:
                        joined = Joined(game, update.game_id, update.seat)
                        self.tally.joined.append(joined)
                        return joined
                    if update.state != lobby_pb2.TICKET_STATE_QUEUED:
                        break  # expired: ask again
            except grpc.aio.AioRpcError as error:
                self.tally.saw(error)
                await asyncio.sleep(0.2)
        return None

    async def play(self, joined: Joined, deadline: float) -> None:
        """Play the seat's turns until the game ends or the deadline passes (with clocks: or
        until the player walks away)."""
        stub = self.session.game(joined.game)
        version = 0
        moves_left = None  # as many as the game takes
        if self.settings.clocks:
            walk = self.rng.random()
            if walk < self.settings.never_move:
                return
            if walk < self.settings.never_move + self.settings.walk_away:
                moves_left = self.rng.randint(1, 6)
        while time.monotonic() < deadline:
            try:
                await self.keeper.usable()
                async for update in stub.Watch(
                    common_pb2.WatchRequest(game_id=joined.game_id, from_version=version),
                    metadata=self.session.metadata,
                    timeout=max(0.1, deadline - time.monotonic()),
                ):
                    status = update.status
                    if not status.game_id:
                        continue
                    version = status.version + 1
                    if (
                        status.finished
                        or status.seats[joined.seat].player_id != self.session.player_id
                    ):
                        return  # over, or a bot took the seat over
                    if joined.seat in status.to_act and status.version >= joined.played:
                        if moves_left == 0:
                            return  # walks away
                        await self.move(joined, stub, status)
                        moves_left = None if moves_left is None else moves_left - 1
                    if time.monotonic() >= deadline:
                        return
            except grpc.aio.AioRpcError as error:
                self.tally.saw(error)
                await asyncio.sleep(0.2)

    async def move(self, joined: Joined, stub: Any, status: common_pb2.GameStatus) -> None:
        version = status.version
        joined.played = version + 1
        try:
            legal = await self.call(stub.LegalMoves, common_pb2.LegalMovesRequest(
                game_id=joined.game_id, seat=joined.seat))  # fmt: skip
        except grpc.aio.AioRpcError:
            return
        if legal.version != version or not legal.moves:
            return
        move = self.rng.choice(list(legal.moves))
        given = f"soak-{joined.game_id}-{version}"
        request = common_pb2.PlayRequest(
            game_id=joined.game_id, move=move, expected_version=version,
            request_id=given, seat=joined.seat,
        )  # fmt: skip
        request_id = f"{self.session.player_id}:{given}"  # as the game service records it
        clock = status.clocks[joined.seat] if len(status.clocks) > joined.seat else None
        if (
            self.settings.clocks
            and clock is not None
            and clock.HasField("deadline")
            and self.rng.random() < LAST_MOMENT
        ):
            at = clock.deadline.ToMilliseconds() + self.rng.randint(-300, 300)
            await asyncio.sleep(max(0.0, (at - now_ms()) / 1000))
        for attempt in range(30):
            await self.keeper.usable()
            token = self.session.token
            started = time.perf_counter()
            try:
                reply = await stub.Play(request, metadata=self.session.metadata, timeout=10)
            except grpc.aio.AioRpcError as error:
                self.tally.saw(error)
                if error_info(error)[0] == "TIME_UP":
                    self.tally.too_late += 1
                if self.keeper.stale(error, token):
                    continue  # refused before it reached the game: again, with the new token
                if error.code() not in RETRYABLE:
                    return  # stale, too late, or not our turn any more: the game moved on
                await asyncio.sleep(min(2.0, 0.1 * 2**attempt))
                continue
            self.tally.latencies.append(time.perf_counter() - started)
            if self.outage.down:
                self.tally.played_while_down += 1
            joined.accepted.append(Move(reply.status.version, joined.seat, move, request_id))
            return
        joined.unknown.append(request_id)

    async def run(self, game: str, until: float, drain_until: float) -> None:
        await self.keeper.open(self.as_guest)
        try:
            while time.monotonic() < until:
                joined = await self.find_game(game, drain_until)
                if joined is not None:
                    await self.play(joined, drain_until)
        finally:
            await self.keeper.close()


# ---------------------------------------------------------------------------- the audit


@dataclass
class Audit:
    games: int = 0
    finished: int = 0
    moves: int = 0
    problems: list[str] = field(default_factory=list)
    unfinished: list[str] = field(default_factory=list)
    """Games still running at the end (consistent, else they are in `problems` too)."""
    applied: collections.Counter[str] = field(default_factory=collections.Counter)
    """Timeouts and aborts the platform applied, by kind (forfeit, bot, abort)."""
    lateness_ms: list[int] = field(default_factory=list)
    """How long after its deadline each was applied."""


def audit_game(
    seated: list[Joined], state: Mapping[bytes, bytes], entries: list[Entry],
    requests: Mapping[bytes, bytes], audit: Audit | None = None, now_ms: int | None = None,
    overdue_ms: int = 0,
) -> list[str]:  # fmt: skip
    """What is wrong with one game (nothing: an empty list). `seated`: the players' seats in it
    (two in a Solo game that matched two players). With `audit`, its timeouts and aborts are
    counted there; with `now_ms`, a game whose deadline passed more than `overdue_ms` ago is a
    problem."""
    name = seated[0].game_id
    if not state:
        return [f"{name}: the game is gone from Redis"]
    version = int(state[b"version"])
    meta = GameMeta.from_json(json.loads(state[b"meta"]))
    problems = []
    if [e.version for e in entries] != list(range(version + 1)):
        problems.append(f"{name}: stream versions are not 0..{version} exactly")
    if meta.seed is None:
        return [f"{name}: the game's meta holds no seed"]
    tc = meta.clock
    position = replay.start(
        seated[0].game, meta.seed, meta.options or {}, edition=meta.rules_edition,
        time_control=tc, people=[not is_bot(p) for p in meta.seats],
        time_ms=entries[0].time_ms if entries else 0,
    )  # fmt: skip
    opening = [e.to_json() for e in position.events]
    if entries and [e.to_json() for e in entries[0].events] != opening:
        problems.append(f"{name}: version 0 holds other events than the game's opening")
    for entry in entries[1:]:
        due = None if position.table is None or position.finished else position.table.due(tc)
        bot = (entry.table_event or {}).get("bot", "")
        try:
            position = replay.step(
                position, tc, replay.Step(entry.actor, entry.move, entry.time_ms, bot)
            )
        except Exception as error:  # any refusal is a finding
            problems.append(f"{name}: version {entry.version} does not replay: {error}")
            return problems
        if [e.to_json() for e in position.events] != [e.to_json() for e in entry.events]:
            problems.append(f"{name}: version {entry.version} replays with other events")
        if position.table_event != entry.table_event:
            problems.append(f"{name}: version {entry.version} replays with another table event")
        if entry.move in replay.DEADLINE_MOVES:
            assert due is not None
            if entry.time_ms < due.at_ms:
                problems.append(f"{name}: version {entry.version} applied before its deadline")
            if audit is not None:
                audit.applied["abort" if entry.move == "abort" else tc.on_timeout] += 1
                audit.lateness_ms.append(entry.time_ms - due.at_ms)
        elif due is not None and entry.time_ms > due.at_ms:
            problems.append(f"{name}: version {entry.version} was a move after the deadline")
    if position.state != games.rules(seated[0].game).deserialize(state[b"snapshot"]):
        problems.append(f"{name}: the replayed position differs from the stored snapshot")
    stored_table = json.loads(state[b"table"]) if state.get(b"table") else None
    if (None if position.table is None else position.table.to_json()) != stored_table:
        problems.append(f"{name}: the replayed clocks differ from the stored ones")
    if now_ms is not None and position.table is not None and not position.finished:
        due = position.table.due(tc)
        if due is not None and now_ms - due.at_ms > overdue_ms:
            problems.append(
                f"{name}: its {due.kind} was due {now_ms - due.at_ms} ms ago and not applied"
            )
    by_version = {e.version: e for e in entries}
    for joined in seated:
        for move in joined.accepted:
            found = by_version.get(move.version)
            if found is None or (found.actor, found.move) != (move.seat, move.move):
                problems.append(f"{name}: accepted move {move} is not in the log")
            if int(requests.get(move.request_id.encode(), b"-1")) != move.version:
                problems.append(f"{name}: request {move.request_id} is not recorded there")
        lost = {int(requests[r.encode()]) for r in joined.unknown if r.encode() in requests}
        expected = sorted({m.version for m in joined.accepted} | lost)
        played = [
            e.version for e in entries[1:]
            if e.actor == joined.seat and e.move not in replay.PLATFORM_MOVES
            and e.version not in taken_over_after(entries, joined.seat)
        ]  # fmt: skip
        if played != expected:
            problems.append(
                f"{name}: seat {joined.seat} has moves at versions {played}, "
                f"the player had {expected} accepted"
            )
    return problems


def taken_over_after(entries: list[Entry], seat: int) -> set[int]:
    """The versions at which a bot held `seat`, from a timeout that gave it one until its
    player took it back (its moves there are the bot's)."""
    held, versions = False, set()
    for entry in entries:
        event = entry.table_event if entry.table_event is not None else {}
        mine = event.get("seat") == seat
        if mine and event.get("kind") == "seat_taken_back":
            held = False
        if held:
            versions.add(entry.version)
        if mine and event.get("outcome") == "bot":
            held = True
    return versions


# KEYS: a game's state, events and requests. Returns each whole, read in one step.
_READ_GAME = """
return {redis.call('HGETALL', KEYS[1]), redis.call('XRANGE', KEYS[2], '-', '+'),
        redis.call('HGETALL', KEYS[3])}
"""


def _pairs(flat: list[bytes]) -> dict[bytes, bytes]:
    return dict(zip(flat[::2], flat[1::2], strict=True))


async def audit(redis_url: str, cluster: bool, joined: list[Joined], overdue_ms: int = 0) -> Audit:
    """Read every game the players joined straight from Redis, once, and audit it (a game
    whose deadline passed more than `overdue_ms` ago and was not applied is a problem)."""
    redis = connect_redis(redis_url, cluster=cluster)
    read = redis.register_script(_READ_GAME)
    by_game: dict[str, list[Joined]] = collections.defaultdict(list)
    for seat in joined:
        by_game[seat.game_id].append(seat)
    result = Audit()
    try:
        for game_id, seated in by_game.items():
            # At once: a game whose seats bots took over may still be moving.
            flat_state, log, flat_requests = await read(
                keys=[
                    keys.game_state(game_id),
                    keys.game_events(game_id),
                    keys.game_requests(game_id),
                ]
            )
            state = _pairs(flat_state)
            entries = [entry_of(entry_id, _pairs(fields)) for entry_id, fields in log]
            requests = _pairs(flat_requests)
            result.games += 1
            result.moves += sum(1 for e in entries[1:] if e.move not in replay.PLATFORM_MOVES)
            if entries and entries[-1].status.finished:
                result.finished += 1
            else:
                to_act = entries[-1].status.to_act if entries else None
                result.unfinished.append(
                    f"{game_id} at version {len(entries) - 1}, to act {to_act}"
                )
            result.problems += audit_game(
                seated, state, entries, requests, result, now_ms(), overdue_ms
            )
    finally:
        await redis.aclose()
    return result


@dataclass
class ArchiveAudit:
    """The archive against the live logs: every finished game, once, as played."""

    finished: int = 0
    archived: int = 0
    seconds: float = 0.0
    """How long the archive took to hold every finished game after the run."""
    problems: list[str] = field(default_factory=list)


ARCHIVE_WAIT_SECONDS = 60.0
"""How long after the run the archivers may take to archive the last finished games."""


async def audit_archive(
    redis_url: str, cluster: bool, database_url: str, joined: list[Joined]
) -> ArchiveAudit:
    """Wait until the archive holds every finished game the players joined (a bound), then
    compare each with its live log: one row, one seat row per seat, the moves, their times and
    the result as the log has them."""
    result = ArchiveAudit()
    redis = connect_redis(redis_url, cluster=cluster)
    store = GameStore(redis)
    logs: dict[str, list[Entry]] = {}
    try:
        for game_id in sorted({seat.game_id for seat in joined}):
            entries = await store.entries(game_id, 0, count=1_000_000)
            if entries and entries[-1].status.finished:
                logs[game_id] = entries
    finally:
        await redis.aclose()
    result.finished = len(logs)
    started = time.monotonic()
    rows: dict[str, tuple[Any, ...]] = {}
    async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as conn:
        while True:
            cursor = await conn.execute(
                "SELECT g.game_id, g.moves, g.result, jsonb_array_length(g.seats),"
                " (SELECT count(*) FROM archived_seats s WHERE s.game_id = g.game_id)"
                " FROM archived_games g WHERE g.game_id = ANY(%s)",
                (list(logs),),
            )
            rows = {row[0]: row async for row in cursor}
            if len(rows) == len(logs) or time.monotonic() - started > ARCHIVE_WAIT_SECONDS:
                break
            await asyncio.sleep(0.5)
    result.seconds = time.monotonic() - started
    result.archived = len(rows)
    for game_id, entries in logs.items():
        if game_id not in rows:
            result.problems.append(f"{game_id}: finished, not archived")
            continue
        _, moves, archived_result, seats, seat_rows = rows[game_id]
        played = [[e.actor, e.move, e.time_ms] for e in entries[1:]]
        if [m[:3] for m in moves] != played:
            result.problems.append(f"{game_id}: the archived moves differ from the log")
        final = entries[-1].status
        if archived_result != (final.result if has_result(final) else None):
            result.problems.append(f"{game_id}: the archived result differs from the log")
        if seat_rows != seats:
            result.problems.append(f"{game_id}: {seat_rows} seat rows for {seats} seats")
    return result


# ---------------------------------------------------------------------------- the run


@dataclass
class Report:
    settings: Settings
    seconds: float
    audit: Audit
    tally: Tally
    restarts: collections.Counter[str]
    logs: Path
    failovers: list[float]
    """Seconds from each primary killed to a new primary taking writes (under Sentinel)."""
    accounts: AccountAudit = field(default_factory=AccountAudit)
    archive: ArchiveAudit = field(default_factory=ArchiveAudit)

    @property
    def ok(self) -> bool:
        return not (self.audit.problems or self.accounts.problems or self.archive.problems)

    def lines(self) -> list[str]:
        s, a, t = self.settings, self.audit, self.tally
        lat = sorted(t.latencies) or [0.0]
        restarts = ", ".join(f"{k} {v}" for k, v in sorted(self.restarts.items())) or "none"
        errors = ", ".join(f"{k} {v}" for k, v in t.errors.most_common()) or "none"
        return [
            f"soak: {s.games} players at once for {s.seconds:.0f} s (+ up to {s.drain_seconds:.0f}"
            f" s to finish), redis: {_redis_line(s)},"
            f" {s.replicas} replicas of every game service",
            f"games: {a.games} played, {a.finished} finished, {len(a.unfinished)} unfinished"
            + "".join(f"\n  {u}" for u in a.unfinished[:10]),
            f"moves accepted: {a.moves} ({a.moves / self.seconds:.0f}/s over {self.seconds:.0f} s);"
            f" players' Play p50 {lat[len(lat) // 2] * 1e3:.1f} ms,"
            f" p99 {lat[int(0.99 * (len(lat) - 1))] * 1e3:.1f} ms ({len(t.latencies)} calls)",
            f"chaos restarts: {restarts}",
            *(
                f"failover: a new primary took writes {seconds:.1f} s after the kill"
                for seconds in self.failovers
            ),
            f"errors seen by players, by status: {errors}",
            *(f"  first {code}: {message}" for code, message in sorted(t.first.items())),
            *([self.clock_line()] if s.clocks else []),
            *self.account_lines(),
            f"the processes' logs: {self.logs}",
            f"audit: {a.games} games, {len(a.problems)} problems"
            + "".join(f"\n  {p}" for p in a.problems[:20]),
            f"account audit: {self.accounts.accounts} accounts, {len(self.accounts.problems)}"
            " problems" + "".join(f"\n  {p}" for p in self.accounts.problems[:20]),
            f"archive audit: {self.archive.finished} finished games, {self.archive.archived}"
            f" archived (all within {self.archive.seconds:.1f} s of the end), each compared"
            f" with its log: {len(self.archive.problems)} problems"
            + "".join(f"\n  {p}" for p in self.archive.problems[:20]),
        ]

    def account_lines(self) -> list[str]:
        c = self.accounts
        restarts = sum(v for k, v in self.restarts.items() if k.startswith("postgres"))
        after = max(c.refused_after, default=0.0)
        errors = ", ".join(f"{k} {v}" for k, v in c.errors.most_common()) or "none"
        return [
            f"accounts: {c.accounts} ({c.guests} registered from a guest); refreshes {c.refreshes}"
            f" ({c.lost_answers} answers lost and retried, {c.sessions_lost} of those sessions"
            f" ended as a reuse); logouts {c.logouts}; PostgreSQL restarts {restarts}",
            f"ended sessions: {c.ended}; their access tokens refused by every gateway {c.refused}"
            f" (at most {after:.1f} s after the end or PostgreSQL's return), expired first"
            f" {c.unverified}; used or ended refresh tokens refused {c.refresh_refused}",
            f"account calls' errors, by status: {errors}; moves accepted while PostgreSQL was"
            f" down: {self.tally.played_while_down}; calls that waited for a token: {c.waited}",
        ]

    def clock_line(self) -> str:
        a = self.audit
        late = sorted(a.lateness_ms) or [0]
        applied = ", ".join(f"{k} {v}" for k, v in sorted(a.applied.items())) or "none"
        return (
            f"clocks: applied by the platform: {applied}; after their deadline by p50"
            f" {late[len(late) // 2]} ms, p99 {late[int(0.99 * (len(late) - 1))]} ms, max"
            f" {late[-1]} ms (a problem past {overdue_ms(self.settings)} ms); moves refused as"
            f" too late: {self.tally.too_late}"
        )


def _redis_line(settings: Settings) -> str:
    if settings.cluster:
        return "cluster of 3 masters"
    if settings.sentinel:
        return (
            "a primary, 2 replicas and 3 Sentinels, moves answered once "
            f"{settings.wait_replicas} replica(s) hold them"
        )
    return "one server, AOF"


async def _run(stack: Stack, settings: Settings) -> Report:
    tally = Tally()
    restarts: collections.Counter[str] = collections.Counter()
    failovers: list[float] = []
    rng = random.Random(settings.seed)
    started = time.monotonic()
    until = started + settings.seconds
    drain_until = until + settings.drain_seconds
    config = json.dumps({"loadBalancingConfig": [{"round_robin": {}}]})
    channels = [
        grpc.aio.insecure_channel(stack.target, options=[("grpc.service_config", config)])
        for _ in range(max(1, settings.games // 50))
    ]
    # One channel to each gateway: an ended session's tokens must be refused by every one.
    probing = [grpc.aio.insecure_channel(t) for t in stack.launch.gateway_targets]
    probes = [lobby_pb2_grpc.AuthServiceStub(channel) for channel in probing]
    outage = Outage()
    kinds = games.names()
    players = [
        Player(
            f"soak-{i}",
            channels[i % len(channels)],
            tally,
            random.Random(rng.random()),
            settings,
            probes,
            outage,
            as_guest=_share(i + 1, settings.guests),
            logout_at=(
                rng.uniform(started + settings.seconds / 5, until)
                if _share(i, settings.logouts)
                else None
            ),
        )
        for i in range(settings.games)
    ]
    tasks = [
        asyncio.create_task(p.run(kinds[i % len(kinds)], until, drain_until))
        for i, p in enumerate(players)
    ]
    if settings.chaos:
        tasks.append(asyncio.create_task(chaos(stack, settings, until, restarts, failovers)))
        tasks.append(asyncio.create_task(postgres_chaos(stack, settings, until, restarts, outage)))
    await asyncio.gather(*tasks)
    elapsed = time.monotonic() - started
    for channel in [*channels, *probing]:
        await channel.close()
    result, accounts, archive = await asyncio.gather(
        audit(stack.redis.url, settings.cluster, tally.joined, overdue_ms(settings)),
        audit_accounts(
            stack.launch.gateway_targets,
            tally.accounts,
            revocation_bound(settings.revocation_poll_seconds),
        ),
        audit_archive(stack.redis.url, settings.cluster, stack.postgres.url, tally.joined),
    )
    return Report(
        settings, elapsed, result, tally, restarts, stack.logs, failovers, accounts, archive
    )


def _share(index: int, share: float) -> bool:
    """Whether player `index` is one of a `share` of the players, spread evenly."""
    return int((index + 1) * share) > int(index * share)


def run(settings: Settings) -> Report:
    stack = Stack(settings)
    try:
        stack.start()
        return uvloop.run(_run(stack, settings))
    finally:
        stack.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.soak", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--games", type=int, default=200, help="players (games) at once")
    parser.add_argument("--seconds", type=float, default=300.0, help="how long new games start")
    parser.add_argument("--drain", type=float, default=60.0, help="time to finish games after")
    parser.add_argument("--replicas", type=int, default=2, help="replicas of each game service")
    parser.add_argument("--cluster", action="store_true", help="a 3-master Redis Cluster")
    parser.add_argument(
        "--sentinel",
        action="store_true",
        help="a primary, 2 replicas, 3 Sentinels; the primary is killed halfway",
    )
    parser.add_argument(
        "--wait-replicas",
        type=int,
        default=0,
        help="REDIS_WAIT_REPLICAS: answer moves once this many replicas hold them",
    )
    parser.add_argument("--no-chaos", dest="chaos", action="store_false")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--clocks", action="store_true", help="short time controls; players who walk away"
    )
    parser.add_argument(
        "--access-ttl",
        type=int,
        default=Settings.access_ttl_seconds,
        help="how long an account's access token lives (players refresh at half of it)",
    )
    args = parser.parse_args(argv)
    settings = Settings(
        games=args.games, seconds=args.seconds, drain_seconds=args.drain,
        replicas=args.replicas, cluster=args.cluster, chaos=args.chaos, seed=args.seed,
        clocks=args.clocks, sentinel=args.sentinel, wait_replicas=args.wait_replicas,
        access_ttl_seconds=args.access_ttl,
    )  # fmt: skip
    report = run(settings)
    for line in report.lines():
        print(line, flush=True)
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
