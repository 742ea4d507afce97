"""Network partitions on the prod Redis topology, tested as Jepsen tests them.

The prod overlay's Redis nodes and Sentinels run with their manifests' own commands and
settings (tests/manifests.py), each pod on a host of its own (a network namespace: net.py); two
app hosts each run an e-SOLO-e game service and a gateway (REDIS_WAIT_REPLICAS=1, following the
Sentinels), and players on this machine play hot-seat games through both gateways as fast as
they are answered, retrying what is not answered with the same request id, as every client
should. Meanwhile the network splits in a shape of the run's (`SHAPES`), heals, splits again.
Then the network heals for good, Redis settles on one primary, and every game is audited from
it (bench/soak.py's audit): every move a player was told was played is in its game's log, at
the version it was told, exactly once; no version was told to two different moves; the logs
replay. It counts what was acknowledged and what of that was lost.

`topology`: "sidecar" (the manifests': a Sentinel in each Redis pod) or "separate" (the same
commands with each Sentinel on a host of its own, as the prod overlay had them before: the
Sentinel majority is then not the data majority). `--app-code` runs the game services and
gateways from another tree (PYTHONPATH), to measure another version in the same world: the
code from before the commits were confirmed loses hundreds of acknowledged moves in the first
shape with the Sentinels apart (docs/reliability.md, "Partitions").

    python -m tests.partition.suite --shape primary-and-replica --runs 5 [--topology separate]
    python -m tests.partition.suite --shape quiet --writers 1      # what a move costs
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import itertools
import os
import random
import re
import secrets
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc

from bench.soak import RETRYABLE, Joined, Move, audit
from client.session import Session
from runtime.launch import wait_serving
from tabletop.common.v1 import common_pb2
from tabletop.esoloe.v1 import esoloe_pb2
from tests.leftovers import RUN_MARK, mark_this_run
from tests.manifests import Host, ProdRedis
from tests.partition.net import Network
from tests.timing import patience
from wire.api import api
from wire.errors import error_info

GAME_PORT = 50051
GATEWAY_PORT = 50050
NODE_PORT = 6379
SENTINEL_PORT = 26379


@dataclass
class Roles:
    """Who is who when a shape is drawn."""

    primary: Host
    replicas: list[Host]
    sentinels: dict[Host, Host]
    """Each node's Sentinel (its own host, or another's)."""
    apps: list[Host]

    def with_sentinels(self, nodes: Sequence[Host], extra: int = 0) -> list[Host]:
        """The nodes, each with its Sentinel when it is a sidecar."""
        return [*nodes, *(self.sentinels[n] for n in nodes if self.sentinels[n] != n)]


Step = tuple[list[list[Host]] | None, float]
"""A partition (its groups; None: healed) and how long it lasts."""


def _primary_and_replica(roles: Roles, seconds: float, rng: random.Random) -> list[Step]:
    """The primary and a replica cut off from the other replica and two of the three
    Sentinels (where Sentinels have hosts of their own; sidecars go with their node)."""
    near, far = roles.replicas
    a = [roles.primary, near, roles.apps[0]]
    b = [far, roles.apps[1]]
    sentinels = [roles.sentinels[n] for n in (roles.primary, near, far)]
    if sentinels[0] == roles.primary:  # sidecars
        return [([a, b], seconds)]
    return [([[*a, sentinels[0]], [*b, sentinels[1], sentinels[2]]], seconds)]


def _primary_alone(roles: Roles, seconds: float, rng: random.Random) -> list[Step]:
    lone = roles.with_sentinels([roles.primary])
    rest = [h for h in _everyone(roles) if h not in lone and h != roles.apps[0]]
    return [([[*lone, roles.apps[0]], rest], seconds)]


def _replica_alone(roles: Roles, seconds: float, rng: random.Random) -> list[Step]:
    lone = roles.with_sentinels([roles.replicas[-1]])
    return [([lone, [h for h in _everyone(roles) if h not in lone]], seconds)]


def _flapping(roles: Roles, seconds: float, rng: random.Random) -> list[Step]:
    """Seven or eight partitions of 2 to 12 s, each of a random shape, with short heals."""
    steps: list[Step] = []
    hosts = _everyone(roles)
    for _ in range(rng.choice([7, 8])):
        a = [h for h in hosts if rng.random() < 0.5]
        steps.append(([a, [h for h in hosts if h not in a]], rng.uniform(2, 12)))
        steps.append((None, rng.uniform(0.5, 3)))
    return steps


def _heal_during_failover(roles: Roles, seconds: float, rng: random.Random) -> list[Step]:
    """The primary cut off just long enough for the others to begin a failover (the
    Sentinels' down-after is 5 s), healed while it is under way; twice."""
    steps: list[Step] = []
    for _ in range(2):
        steps += _primary_alone(roles, 5 + rng.uniform(0.5, 3), rng)
        steps.append((None, 12.0))
    return steps


def _quiet(roles: Roles, seconds: float, rng: random.Random) -> list[Step]:
    """No partition: what a move costs when nothing goes wrong (not one of the shapes)."""
    return [(None, seconds)]


class Faults:
    """What a shape does to the network, each change noted with when it began (the run's
    availability is counted between them)."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.started = time.monotonic()
        self.windows: list[tuple[str, float]] = [("before", self.started)]
        """Each change: what it was and when it began (monotonic)."""

    def note(self, what: str) -> None:
        self.windows.append((what, time.monotonic()))

    def partition(self, groups: list[list[Host]], what: str = "") -> None:
        self.world.net.partition(groups)
        self.note(what or " | ".join(",".join(_short(h) for h in g) for g in groups))

    def cut(
        self,
        pairs: list[tuple[list[Host], list[Host]]],
        what: str,
        one_way: Sequence[tuple[Host, Host, int]] = (),
    ) -> None:
        self.world.net.cut(pairs, one_way)
        self.note(what)

    def heal(self) -> None:
        self.world.net.heal()
        self.note("healed")

    async def steps(self, steps: list[Step]) -> None:
        for groups, duration in steps:
            if groups is None:
                self.heal()
            else:
                self.partition(groups)
            await asyncio.sleep(duration)


def _short(host: Host) -> str:
    return host.address.rsplit(".", 1)[1]


Scripted = Callable[["World", Roles, float, random.Random, Faults, int], Awaitable[None]]
"""A shape that watches what happens as it goes; the last argument: how many rounds."""


async def _moved_during_failover(
    world: World, roles: Roles, seconds: float, rng: random.Random, faults: Faults, rounds: int
) -> None:
    """The primary's pod cut off alone (both app hosts on the other side); the moment a
    Sentinel logs that it has told a replica to become primary (its failover's
    `+failover-state-wait-promotion`), the partition moves: the primary rejoins everyone and
    that replica's pod is cut off alone for `seconds`. When the leading Sentinel is the one in
    that pod, the replica is promoted there and the newer configuration exists only there,
    while the other two Sentinels still name the old primary: every write the old primary
    takes meanwhile is thrown away at the heal, unless refused. `rounds` times, each after a
    settled heal.

    Which Sentinel leads is otherwise a race; the first round makes it the one beside the
    replica it promotes: the primary is cut off from the other replica's pod STAGGER seconds
    before the rest (so the replica beside the leader-to-be holds more of the stream and is
    the one promoted), and the other replica's Sentinel cannot call the leader-to-be's (a
    one-way cut of its port, while the calls the other way are answered): it cannot learn
    that the primary is objectively down, so it never begins a failover of its own, and votes
    for the one that asks. The next rounds leave the race to the Sentinels."""
    for steered in [True] + [False] * (rounds - 1):
        roles = world.roles()
        lone = roles.with_sentinels([roles.primary])
        rest = [h for h in _everyone(roles) if h not in lone]
        marks = {a: _log_size(world, a) for a in world.redis.sentinel_addresses}
        if steered:
            leader, other = rng.sample(roles.replicas, 2)
            others_sentinel, leaders_sentinel = roles.sentinels[other], roles.sentinels[leader]
            block = [(others_sentinel, leaders_sentinel, world.redis.sentinel_port)]
            faults.cut(
                [(lone, roles.with_sentinels([other]))],
                f"the primary's pod and .{_short(other)}'s apart, .{_short(other)}'s Sentinel "
                f"cannot call .{_short(leader)}'s",
                one_way=block,
            )
            await asyncio.sleep(STAGGER)
            faults.cut([(lone, rest)], "the primary's pod cut off", one_way=block)
        else:
            faults.partition([lone, rest], "the primary's pod cut off")
        leader_at, promoted = await _promotion(world, marks)
        pod = [h for h in roles.with_sentinels(roles.replicas) if h.address == promoted]
        beside = "in its pod" if leader_at == promoted else "in another pod"
        faults.partition(
            [pod, [h for h in _everyone(roles) if h not in pod]],
            f"the promoted replica .{promoted.rsplit('.', 1)[1]} cut off (leader {beside})",
        )
        await asyncio.sleep(seconds)
        faults.heal()
        await asyncio.to_thread(world.redis.wait, world.following, "no primary after healing", 90)
        await asyncio.sleep(8)


STAGGER = 2.0


def _log_size(world: World, address: str) -> int:
    path = world.redis.log_path("sentinel", address)
    return path.stat().st_size if path.exists() else 0


async def _promotion(world: World, marks: dict[str, int]) -> tuple[str, str]:
    """Wait for a Sentinel to log `+failover-state-wait-promotion` after `marks` (each log's
    size when the fault began): that Sentinel's address (the leader) and the replica's."""
    deadline = time.monotonic() + patience(90)
    while time.monotonic() < deadline:
        for address, mark in marks.items():
            with world.redis.log_path("sentinel", address).open("rb") as log:
                log.seek(mark)
                text = log.read().decode(errors="replace")
            for line in text.splitlines():
                if "+failover-state-wait-promotion slave " in line:
                    named = line.split("+failover-state-wait-promotion slave ", 1)[1]
                    return address, named.split()[0].rsplit(":", 1)[0]
        await asyncio.sleep(0.02)
    raise AssertionError("no Sentinel began a promotion")


async def _bridge(
    world: World, roles: Roles, seconds: float, rng: random.Random, faults: Faults, rounds: int
) -> None:
    """The primary's pod and one replica's pod cannot reach each other, while both reach the
    third pod and everything reaches the app hosts: that replica's Sentinel alone sees the
    primary down (no majority does, so no failover), and its replica falls out of sync.
    `rounds` times, with 5 s between."""
    near, far = roles.with_sentinels([roles.primary]), roles.with_sentinels([roles.replicas[0]])
    for _ in range(rounds):
        faults.cut([(near, far)], f"the primary's pod and .{_short(roles.replicas[0])}'s apart")
        await asyncio.sleep(seconds)
        faults.heal()
        await asyncio.sleep(5)


SHAPES: dict[str, Callable[[Roles, float, random.Random], list[Step]]] = {
    "primary-and-replica": _primary_and_replica,
    "primary-alone": _primary_alone,
    "replica-alone": _replica_alone,
    "flapping": _flapping,
    "heal-during-failover": _heal_during_failover,
}
SCRIPTED: dict[str, Scripted] = {
    "moved-during-failover": _moved_during_failover,
    "bridge": _bridge,
}
QUIET = {"quiet": _quiet}
EVERY = [*SHAPES, *SCRIPTED]


def _everyone(roles: Roles) -> list[Host]:
    nodes = [roles.primary, *roles.replicas]
    return [*roles.with_sentinels(nodes), *roles.apps]


# ---------------------------------------------------------------------------- the world


class World:
    """The network, Redis as the prod overlay runs it, and two app hosts."""

    def __init__(self, tmp: Path, topology: str, app_code: str = "") -> None:
        self.tmp = tmp
        self.app_code = app_code
        """Where the app hosts' processes take the platform's code from (PYTHONPATH; "": this
        tree), to measure another version side by side."""
        self.net = Network()
        self.password = secrets.token_hex(16)
        self.internal_key = secrets.token_urlsafe(32)
        self.token_secret = secrets.token_urlsafe(32)
        self.processes: list[subprocess.Popen[bytes]] = []
        try:
            nodes = [self.net.host() for _ in range(3)]
            sentinels = None if topology == "sidecar" else [self.net.host() for _ in range(3)]
            self.redis = ProdRedis(
                tmp, self.password, nodes, sentinels,
                node_port=NODE_PORT, sentinel_port=SENTINEL_PORT,
            )  # fmt: skip
            if topology == "sidecar":
                assert self.redis.sidecar, "the manifests run their Sentinels apart"
            else:  # today's manifests, or the sidecar's commands placed apart
                self.redis.sentinel_hosts = sentinels or []
                self.redis.sentinels = ",".join(
                    f"{h.address}:{SENTINEL_PORT}" for h in self.redis.sentinel_hosts
                )
            self.apps = [self.net.host() for _ in range(2)]
        except BaseException:
            self.net.close()
            raise

    @property
    def sentinel_env(self) -> dict[str, str]:
        return {
            "REDIS_SENTINELS": self.redis.sentinels,
            "REDIS_SENTINEL_MASTER": self.redis.master,
            "REDIS_PASSWORD": self.password,
        }

    @property
    def targets(self) -> list[str]:
        """Each app host's gateway (which calls the game service beside it)."""
        return [f"{a.address}:{GATEWAY_PORT}" for a in self.apps]

    def start(self) -> None:
        self.redis.start_all()
        self.redis.wait(self.settled, "Redis did not settle on a primary and two replicas")
        self.start_apps()
        self.wait_apps()

    def wait_apps(self) -> None:
        """Until every gateway serves e-SOLO-e (its game service reachable)."""
        for target in self.targets:
            assert wait_serving(target, [api("esoloe").full_name], 60), f"{target} not serving"

    def start_apps(self) -> None:
        common = {
            **os.environ,
            **({"PYTHONPATH": self.app_code} if self.app_code else {}),
            **self.sentinel_env,
            RUN_MARK: os.environ[RUN_MARK],
            "REDIS_URL": "redis://sentinel/0",
            "REDIS_WAIT_REPLICAS": "1",
            "INTERNAL_KEY": self.internal_key,
            "GRACE_SECONDS": "2",
            # Players leave games that a partition stalls and start new ones.
            "MAX_LIVE_GAMES": "100000",
            "GUEST_MAX_LIVE_GAMES": "100000",  # they play as guests
        }
        for app in self.apps:
            self._start(app, ["services.game", "esoloe"], common | {
                "LISTEN": f"{app.address}:{GAME_PORT}",
            })  # fmt: skip
            self._start(app, ["gateway"], common | {
                "LISTEN": f"{app.address}:{GATEWAY_PORT}",
                "ESOLOE_ADDR": f"{app.address}:{GAME_PORT}",
                "TOKEN_SECRET": self.token_secret,
                "RATE_LIMIT_PER_SECOND": "100000",
                "RATE_LIMIT_BURST": "100000",
                "LOGIN_RATE_LIMIT_PER_SECOND": "100000",
                "LOGIN_RATE_LIMIT_BURST": "100000",
            })  # fmt: skip

    def _start(self, host: Host, module: list[str], env: dict[str, str]) -> None:
        log = (self.tmp / f"{module[0]}-{host.address}.log").open("ab")
        with log:  # from a directory of no code: PYTHONPATH (or the install) decides
            command = [sys.executable, "-m", *module]
            self.processes.append(
                host.popen(command, env=env, stdout=log, stderr=log, cwd=self.tmp)
            )

    def roles(self) -> Roles:
        """Who is primary now, by the Sentinels' majority."""
        primary = self.agreed_primary()
        assert primary is not None, "no primary the Sentinels agree on"
        nodes = {h.address: h for h in self.redis.nodes}
        sentinels = dict(zip(self.redis.nodes, self.redis.sentinel_hosts, strict=True))
        return Roles(
            nodes[primary],
            [h for h in self.redis.nodes if h.address != primary],
            sentinels,
            self.apps,
        )

    def agreed_primary(self) -> str | None:
        """The node every Sentinel names primary (None: they do not agree, or do not answer)."""
        named = set()
        for address in self.redis.sentinel_addresses:
            try:
                with self.redis.sentinel(address, timeout=2) as client:
                    found = client.sentinel_get_master_addr_by_name(self.redis.master)
            except Exception:
                return None
            named.add(None if found is None else found[0])
        return named.pop() if len(named) == 1 else None

    def settled(self) -> bool:
        """One primary all Sentinels name, which says it is, with both replicas following it
        and caught up."""
        return self._settled(exact=True)

    def following(self) -> bool:
        """As `settled`, but with players writing: both replicas in sync (acknowledging), not
        necessarily at the last write."""
        return self._settled(exact=False)

    def _settled(self, exact: bool) -> bool:
        primary = self.agreed_primary()
        if primary is None:
            return False
        try:
            with self.redis.node(primary, timeout=2) as client:
                info = client.info("replication")
                if info["role"] != "master" or info["connected_slaves"] != 2:
                    return False
                replicas = [info[f"slave{i}"] for i in range(2)]
                offset = info["master_repl_offset"]
                return all(
                    r["state"] == "online" and (r["offset"] == offset if exact else r["lag"] <= 1)
                    for r in replicas
                )
        except Exception:
            return False

    def stop_apps(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self.processes = []

    def stop(self) -> None:
        self.stop_apps()
        self.redis.stop()
        self.net.close()


# ---------------------------------------------------------------------------- the players


@dataclass
class Tally:
    joined: list[Joined] = field(default_factory=list)
    errors: collections.Counter[str] = field(default_factory=collections.Counter)
    latencies: list[float] = field(default_factory=list)
    answered: dict[str, float] = field(default_factory=dict)
    """When each acknowledged move was answered (monotonic), by request id."""


class Writer:
    """One player: hot-seat games, one after another, each move retried until answered."""

    def __init__(self, name: str, channel: grpc.aio.Channel, tally: Tally, seed: int) -> None:
        self.name = name
        self.session = Session("", channel)
        self.stub = self.session.game("esoloe")
        self.tally = tally
        self.rng = random.Random(seed)
        self.sent = 0

    async def call(self, method: Any, request: Any, until: float) -> Any:
        """A call retried (with backoff) while it is refused as retryable, until `until`."""
        attempt = 0
        while True:
            try:
                return await method(request, metadata=self.session.metadata, timeout=5)
            except grpc.aio.AioRpcError as error:
                self.tally.errors[error_info(error)[0] or error.code().name] += 1
                if error.code() not in RETRYABLE or time.monotonic() > until:
                    raise
                attempt += 1
                await asyncio.sleep(min(1.0, 0.05 * 2**attempt))

    async def run(self, until: float) -> None:
        while True:
            try:
                await self.session.login(self.name)
                break
            except grpc.aio.AioRpcError:
                await asyncio.sleep(0.2)
        while time.monotonic() < until:
            try:
                created = await self.call(
                    self.stub.CreateGame,
                    esoloe_pb2.CreateGameRequest(players=[self.session.player_id] * 2),
                    until,
                )
            except grpc.aio.AioRpcError:
                continue
            game_id = created.status.game_id
            seats = [Joined("esoloe", game_id, 0), Joined("esoloe", game_id, 1)]
            self.tally.joined += seats
            await self.play(seats, until)

    async def play(self, seats: list[Joined], until: float) -> None:
        game_id = seats[0].game_id
        while time.monotonic() < until:
            try:
                view = await self.call(
                    self.stub.GetView, common_pb2.GetViewRequest(game_id=game_id, seat=0), until
                )
                if view.status.finished:
                    return
                seat = view.status.to_act[0]
                legal = await self.call(
                    self.stub.LegalMoves,
                    common_pb2.LegalMovesRequest(game_id=game_id, seat=seat),
                    until,
                )
            except grpc.aio.AioRpcError:
                await asyncio.sleep(0.1)
                continue
            if legal.version != view.status.version or not legal.moves:
                continue
            await self.move(seats[seat], legal.version, self.rng.choice(list(legal.moves)), until)

    async def move(self, joined: Joined, version: int, move: str, until: float) -> None:
        """Play `move` at `version` until answered, with a request id of its own (a player who
        sees the same version again, from another primary, and picks another move uses another
        id). A move is unknown (maybe applied) from its first send until an answer settles it:
        one whose answer never came (the run ended while it was under way), or came as a
        refusal after an attempt whose answer was lost, stays unknown, and the audit finds it
        by its request id."""
        self.sent += 1
        given = f"w-{joined.game_id}-{version}-{self.sent}"
        request_id = f"{self.session.player_id}:{given}"
        request = common_pb2.PlayRequest(
            game_id=joined.game_id, move=move, expected_version=version,
            request_id=given, seat=joined.seat,
        )  # fmt: skip
        started = time.perf_counter()
        lost_answers = 0
        joined.unknown.append(request_id)
        while True:
            try:
                reply = await self.stub.Play(request, metadata=self.session.metadata, timeout=5)
                break
            except grpc.aio.AioRpcError as error:
                self.tally.errors[error_info(error)[0] or error.code().name] += 1
                if error.code() not in RETRYABLE or time.monotonic() > until + 20:
                    if not lost_answers:  # refused at once: certainly not applied
                        joined.unknown.remove(request_id)
                    return
                lost_answers += 1
                await asyncio.sleep(min(1.0, 0.05 * 2 ** min(lost_answers, 5)))
        self.tally.latencies.append(time.perf_counter() - started)
        self.tally.answered[request_id] = time.monotonic()
        joined.unknown.remove(request_id)
        joined.accepted.append(Move(reply.status.version, joined.seat, move, request_id))


# ---------------------------------------------------------------------------- a run


@dataclass
class Result:
    shape: str
    topology: str
    acknowledged: int
    lost: list[str]
    twice: list[str]
    problems: list[str]
    errors: collections.Counter[str]
    steps: list[str]
    latencies: list[float]
    """Of the players' Play calls answered, from the first attempt to the answer."""
    availability: list[tuple[str, float, float]] = field(default_factory=list)
    """Each stretch of the run (before, each fault, each heal): moves acknowledged a second,
    and its seconds."""

    @property
    def ok(self) -> bool:
        return not (self.lost or self.twice or self.problems)

    def line(self) -> str:
        errors = ", ".join(f"{k} {v}" for k, v in self.errors.most_common(4)) or "none"
        lat = sorted(self.latencies) or [0.0]
        return (
            f"{self.shape} ({self.topology}): {self.acknowledged} moves acknowledged,"
            f" {len(self.lost)} of them lost, {len(self.twice)} versions acknowledged twice,"
            f" {len(self.problems)} other problems; Play p50 {lat[len(lat) // 2] * 1e3:.1f} ms,"
            f" p99 {lat[int(0.99 * (len(lat) - 1))] * 1e3:.1f} ms; refusals seen: {errors}"
        )

    def rates(self) -> str:
        """Moves acknowledged a second in each stretch of the run."""
        return "; ".join(f"{what} {rate:.0f}/s ({seconds:.1f} s)"
                         for what, rate, seconds in self.availability)  # fmt: skip


def run(
    shape: str,
    topology: str,
    seconds: float,
    seed: int,
    writers: int = 8,
    app_code: str = "",
    rounds: int = 2,
) -> Result:
    """One run of `shape`; `rounds`: how many times a scripted shape does its faults."""
    tmp = Path(tempfile.mkdtemp(prefix="tabletop-partition-"))
    world = World(tmp, topology, app_code)
    try:
        world.start()
        return asyncio.run(_run(world, shape, topology, seconds, seed, writers, rounds))
    finally:
        world.stop()


async def _run(
    world: World, shape: str, topology: str, seconds: float, seed: int, writers: int, rounds: int
) -> Result:
    rng = random.Random(seed)
    tally = Tally()
    channels = [grpc.aio.insecure_channel(target) for target in world.targets]
    until = time.monotonic() + 3600  # the players stop when the faults are over
    players = [  # half of them on each app host, whichever side of a partition it is on
        asyncio.create_task(
            Writer(f"w{i}", channels[i % len(channels)], tally, rng.randrange(10**9)).run(until)
        )
        for i in range(writers)
    ]
    faults = Faults(world)
    try:
        await asyncio.sleep(5)  # play before anything happens
        if shape in SCRIPTED:
            await SCRIPTED[shape](world, world.roles(), seconds, rng, faults, rounds)
        else:
            await faults.steps({**SHAPES, **QUIET}[shape](world.roles(), seconds, rng))
        if world.net.cut_off():
            faults.heal()
        await asyncio.to_thread(world.redis.wait, world.following, "no primary after healing", 60)
        await asyncio.sleep(5)  # the players find the primary and play on
        faults.note("end")
    finally:
        for player in players:
            player.cancel()
        await asyncio.gather(*players, return_exceptions=True)
        for channel in channels:
            await channel.close()
    await asyncio.to_thread(world.redis.wait, world.settled, "Redis did not settle", 60)
    os.environ.update(world.sentinel_env)
    found = await audit("redis://sentinel/0", False, tally.joined)
    acknowledged = [m for j in tally.joined for m in j.accepted]
    windows = faults.windows

    def stretch(problem: str) -> str:
        """The stretch of the run in which the move a problem names was acknowledged."""
        named = re.search(r"request_id='([^']+)'", problem)
        answered = tally.answered.get(named.group(1)) if named else None
        if answered is None:
            return problem
        what = max((w for w in windows if w[1] <= answered), key=lambda w: w[1])[0]
        return f"{problem} (acknowledged {answered - faults.started:.1f} s in, during: {what})"

    lost = [stretch(p) for p in found.problems if "is not in the log" in p or "is gone" in p]
    told: dict[tuple[str, int], set[str]] = collections.defaultdict(set)
    for joined in tally.joined:
        for move in joined.accepted:
            told[joined.game_id, move.version].add(move.move)
    twice = [f"{g} version {v}: {sorted(m)}" for (g, v), m in told.items() if len(m) > 1]
    others = [p for p in found.problems if "is not in the log" not in p and "is gone" not in p]
    availability = []
    for (what, begun), (_next, ended) in itertools.pairwise(windows):
        answered = sum(1 for t in tally.answered.values() if begun <= t < ended)
        availability.append((what, answered / max(ended - begun, 1e-9), ended - begun))
    steps = [f"{what} {ended - begun:.1f} s" for (what, begun), (_n, ended)
             in itertools.pairwise(windows)][1:]  # fmt: skip
    return Result(
        shape, topology, len(acknowledged), lost, twice, others, tally.errors, steps,
        tally.latencies, availability,
    )  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.partition.suite", description=__doc__)
    parser.add_argument("--shape", choices=[*EVERY, *QUIET, "all"], default="all")
    parser.add_argument("--topology", choices=["sidecar", "separate"], default="sidecar")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=30.0, help="how long a partition lasts")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--writers", type=int, default=8, help="players at once")
    parser.add_argument(
        "--rounds", type=int, default=2, help="how many times a watching shape does its faults"
    )
    parser.add_argument(
        "--app-code",
        default="",
        help="PYTHONPATH for the game services and gateways (another tree)",
    )
    args = parser.parse_args(argv)
    if RUN_MARK not in os.environ:
        mark_this_run()
    shapes = EVERY if args.shape == "all" else [args.shape]
    failed = False
    for shape in shapes:
        for index in range(args.runs):
            result = run(
                shape, args.topology, args.seconds, args.seed + index, args.writers,
                args.app_code, args.rounds,
            )  # fmt: skip
            print(result.line(), flush=True)
            print("  steps: " + "; ".join(result.steps), flush=True)
            print("  acknowledged: " + result.rates(), flush=True)
            for problem in [*result.lost, *result.twice, *result.problems][:10]:
                print(f"  {problem}", flush=True)
            failed |= not result.ok
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
