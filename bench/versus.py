"""Side by side with boardgame.io: the same workloads on its server and on ours, in one run.

boardgame.io 0.50 (its own Server: socket.io, in-memory storage) plays a two-player counter
game (each move adds one, bench/bgio/) with M matches in play, each created and joined through
its Lobby API and played by two socket.io clients (bench/bgio/load.js). Ours plays random games
of the same length through the gateway (separate processes, a local redis-server with
appendonly): 15-move games are e-SOLO-e games cut after 15 moves, 200-move games ZoxSo games
cut after 200, each created (untimed, as boardgame.io's are) inside the timed loop, with M
games in play, each driven by a coroutine of its own, first with a gRPC call per move (unary),
then with every call on the player's session stream. Each game slot is a player of its own (it
holds both seats) on a connection of its own, as each boardgame.io client has its socket.

The shape's floor (bench/echo.py) plays the same workloads through bare grpc.aio servers in our
shape with none of its work: a relay in front of an echo server that writes each message to
the same Redis; no server of this shape answers moves faster. The batched floor is the same with
batching on the inner hop and on Redis (`bench.echo --batched`): the relay passes every game's
messages on one stream of frames, and the echo server stores each frame's in one round trip.

Per setting boardgame.io (a fresh server each time), ours unary, ours on sessions and both floors
take turns, ROUNDS times, so that the machine's background load hits all five alike. Moves count
when answered inside a round's measured window (after a warm-up); moves/s comes with a 95%
interval over the windows' tenths. CPU per move is read from /proc for every process:
boardgame.io's server and load client; our gateway, game service, redis and this process (our
load client); the floors' relay, echo server, redis and this process.

boardgame.io is installed by `make .bench/bgio/.installed` (`make bench` and `make test-tools`
do it): `npm ci` of bench/bgio/package-lock.json into .bench/bgio (git-ignored).
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import random
import shutil
import statistics
import subprocess
import threading
import time
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import uvloop

from bench import sized
from bench.echo import STREAM_METHOD, same
from bench.gateway import SECRET, _cpu_seconds
from client.session import Session, gateway_channel
from engines.contract import Rules
from games.esoloe.rules import RULES as ESOLOE
from games.zoxso.rules import RULES as ZOXSO
from runtime.launch import Launch
from runtime.localredis import LocalRedis, free_port
from tabletop.common.v1 import common_pb2
from tabletop.esoloe.v1 import esoloe_pb2
from tabletop.lobby.v1 import lobby_pb2
from tabletop.zoxso.v1 import zoxso_pb2
from wire.api import NO_BDP_PROBE

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = ROOT / "bench" / "bgio"
NODE_MODULES = ROOT / ".bench" / "bgio" / "node_modules"

LENGTHS = {15: "esoloe", 200: "zoxso"}
"""Moves per game -> our game that plays them (random games at least that long, cut there)."""
MATCHES = (1, 64)
GAMES_PER_SESSION = 1
"""Game slots per player (each player its own connection and, in session mode, its stream)."""
ROUNDS = sized(3, 1)
"""boardgame.io and ours take turns this many times per setting, so that a change in the
machine's background load hits all alike."""
WARMUP = sized(2.0, 0.2)
"""Seconds before each round's window."""
SECONDS = sized(5.0, 0.5)
"""Each round's measured window."""
BINS = 10
"""A window's parts, for the 95% intervals of moves/s."""
CREATE = {"esoloe": esoloe_pb2.CreateGameRequest, "zoxso": zoxso_pb2.CreateGameRequest}
RULES: dict[str, Rules] = {"esoloe": ESOLOE, "zoxso": ZOXSO}


@dataclass
class Result:
    """One side's runs of one setting: the latencies (seconds) of the moves answered in the
    measured windows, the windows' length in all, the moves in each tenth of each window, and
    each process's CPU seconds in them."""

    latencies: list[float]
    seconds: float
    bins: list[int]
    cpu: dict[str, float]

    @staticmethod
    def of(runs: Sequence[Result]) -> Result:
        cpu: dict[str, float] = {}
        for run in runs:
            for name, used in run.cpu.items():
                cpu[name] = cpu.get(name, 0.0) + used
        return Result(
            [latency for run in runs for latency in run.latencies],
            sum(run.seconds for run in runs),
            [count for run in runs for count in run.bins],
            cpu,
        )

    @property
    def moves(self) -> int:
        return len(self.latencies)

    @property
    def rate(self) -> float:
        return self.moves / self.seconds

    def interval(self) -> float:
        """The 95% interval's half-width of moves/s, over the windows' tenths."""
        per_second = [count * len(self.bins) / self.seconds for count in self.bins]
        deviation = statistics.stdev(per_second) / math.sqrt(len(per_second))
        return _t975(len(per_second) - 1) * deviation

    def line(self, name: str, against: Result | None = None) -> str:
        if not self.moves:
            return f"  {name:<14} no move answered in the window"
        ratio = ""
        if against is not None and against.moves:
            r = self.rate / against.rate
            # The ratio's interval from both rates' (to first order, their relative errors add in
            # quadrature).
            relative = (self.interval() / self.rate) ** 2 + (against.interval() / against.rate) ** 2
            ratio = f"  to bgio {r:5.2f} ±{r * math.sqrt(relative):4.2f}"
        p50, p99 = _percentile(self.latencies, 0.5), _percentile(self.latencies, 0.99)
        return (
            f"  {name:<14} moves/s {self.rate:6.0f} ±{self.interval():4.0f}"
            f"  p50 {p50 * 1e3:6.2f} ms  p99 {p99 * 1e3:7.2f} ms{ratio}"
        )

    def cpu_line(self) -> str:
        if not self.moves:
            return "no move"
        return ", ".join(f"{name} {used / self.moves * 1e3:.3f}" for name, used in self.cpu.items())

    def platform_ms(self) -> float:
        """CPU ms per move of the servers alone (every process but the load client)."""
        servers = sum(used for name, used in self.cpu.items() if "client" not in name)
        return servers / self.moves * 1e3 if self.moves else math.nan


def _t975(df: int) -> float:
    """Student's t, 97.5% quantile, for `df` degrees of freedom (Cornish-Fisher: within 0.005
    from 9 up)."""
    z = 1.959964
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)


def _percentile(samples: Sequence[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _plays(game: str, moves: int, count: int) -> list[list[tuple[int, str]]]:
    """`count` random games of `game` at least `moves` long, cut after `moves` moves: (seat,
    move) each, chosen beforehand so the timed loop only makes calls."""
    rules = RULES[game]
    chosen: list[list[tuple[int, str]]] = []
    seed = 0
    while len(chosen) < count:
        rng = random.Random(seed)
        state = rules.new_game(seed)
        played: list[tuple[int, str]] = []
        while state.to_act() and len(played) < moves:
            seat = state.to_act()[0]
            move = rng.choice(state.legal_moves(seat))
            played.append((seat, move))
            state, _ = state.apply(seat, move)
        if len(played) == moves:
            chosen.append(played)
        seed += 1
    return chosen


def _node() -> str:
    node = shutil.which("node")
    if node is None or not (NODE_MODULES / "boardgame.io").is_dir():
        raise RuntimeError(
            "boardgame.io is not installed in .bench/bgio (or node is missing): "
            "run `make .bench/bgio/.installed` (`make bench` and `make test-tools` do)"
        )
    return node


def bgio(moves: int, matches: int, warmup: float, seconds: float) -> Result:
    """boardgame.io on `moves`-move games, `matches` at once: a fresh server, then the load."""
    node = _node()
    env = {
        **os.environ,
        "NODE_PATH": str(NODE_MODULES),
        "NODE_ENV": "production",
        "BGIO_MOVES": str(moves),
    }
    server = subprocess.Popen(
        [node, str(SCRIPTS / "server.js")], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        assert server.stdout is not None
        port = ""
        while not port:
            line = server.stdout.readline()
            if not line:
                raise RuntimeError("the boardgame.io server ended before it listened")
            if line.startswith("PORT "):
                port = line.split()[1]
        load = subprocess.Popen(
            [node, str(SCRIPTS / "load.js"), f"http://127.0.0.1:{port}", str(matches),
             str(warmup), str(seconds)],
            stdout=subprocess.PIPE, text=True, env=env,
        )  # fmt: skip
        assert load.stdout is not None
        # The load client ends by itself (a move left unanswered ends it too); in case not:
        timer = threading.Timer(warmup + seconds + 60, load.kill)
        timer.daemon = True
        timer.start()
        pids = {"bgio server": server.pid, "bgio load client": load.pid}
        cpu: dict[str, float] = {}
        report: dict[str, Any] = {}
        for line in load.stdout:
            if line.strip() == "START":
                cpu = {name: _cpu_seconds(pid) for name, pid in pids.items()}
            elif line.strip() == "END":
                cpu = {name: _cpu_seconds(pid) - cpu[name] for name, pid in pids.items()}
            elif line.startswith("{"):
                report = json.loads(line)
        timer.cancel()
        if load.wait() != 0 or not report:
            raise RuntimeError(f"the boardgame.io load client failed (exit {load.returncode})")
    finally:
        server.terminate()
        server.wait()
    latencies = [ms / 1e3 for ms in report["latencies_ms"]]
    return Result(latencies, report["seconds"], report["bins"], cpu)


class _Window:
    """One round of one side: a warm-up, then the measured window; the moves answered in it,
    their latencies, the moves in each tenth, and each process's CPU seconds over it."""

    def __init__(self, warmup: float, seconds: float, pids: dict[str, int]) -> None:
        self.start = time.perf_counter() + warmup
        self.end = self.start + seconds
        self.seconds = seconds
        self.pids = pids
        self.latencies: list[float] = []
        self.bins = [0] * BINS
        self.cpu: dict[str, float] = {}

    def open(self) -> bool:
        return time.perf_counter() < self.end

    def answered(self, asked: float) -> None:
        """A move asked at `asked` (perf_counter) has its answer now."""
        now = time.perf_counter()
        if self.start <= now < self.end:
            self.latencies.append(now - asked)
            self.bins[int(BINS * (now - self.start) / self.seconds)] += 1

    async def run(self, slots: Sequence[Awaitable[None]]) -> Result:
        """Drive `slots` (each keeps a game in play while the window is open) and read each
        process's CPU over the window."""

        async def clock() -> None:
            await asyncio.sleep(self.start - time.perf_counter())
            before = {name: _cpu_seconds(pid) for name, pid in self.pids.items()}
            await asyncio.sleep(self.end - time.perf_counter())
            self.cpu = {name: _cpu_seconds(pid) - before[name] for name, pid in self.pids.items()}

        await asyncio.gather(clock(), *slots)
        return Result(self.latencies, self.seconds, self.bins, self.cpu)


async def ours(
    target: str,
    game: str,
    plays: list[list[tuple[int, str]]],
    matches: int,
    stream: bool,
    warmup: float,
    seconds: float,
    pids: dict[str, int],
    per_player: int = GAMES_PER_SESSION,
) -> Result:
    """Our platform on `plays`' games (cut to their length), `matches` at once, each by a
    coroutine of its own, `per_player` of them for each player; with `stream` every call goes
    on the players' session streams."""
    players = []
    for index in range((matches + per_player - 1) // per_player):
        # A connection of its own (no subchannel shared with the other players' channels).
        channel = gateway_channel(target, options=[("grpc.use_local_subchannel_pool", 1)])
        player = Session(target, channel=channel)
        # from an address of its own (the gateway trusts the bench as its proxy): guests
        # made are bounded per address
        address = (("x-forwarded-for", f"10.9.{index // 250}.{index % 250}"),)
        reply = await player.auth.Login(
            lobby_pb2.LoginRequest(name=f"versus{index}"), metadata=address
        )
        player.token, player.player_id = reply.token, reply.player_id
        if stream:
            player.open_stream()
        players.append(player)
    window = _Window(warmup, seconds, pids)

    async def slot(index: int) -> None:
        player = players[index // per_player]
        stub = player.game(game)
        seats = [player.player_id] * 2  # one player holds both seats, and names each move's
        request = CREATE[game](players=seats, time_control=common_pb2.TimeControl())  # untimed
        games_played = 0
        while window.open():
            created = await stub.CreateGame(request, metadata=player.metadata)
            status = created.status
            for seat, move in plays[(index + games_played * matches) % len(plays)]:
                if not window.open():
                    return
                asked = time.perf_counter()
                reply = await stub.Play(
                    common_pb2.PlayRequest(
                        game_id=status.game_id,
                        move=move,
                        expected_version=status.version,
                        seat=seat,
                    ),
                    metadata=player.metadata,
                )
                window.answered(asked)
                status = reply.status
            games_played += 1

    result = await window.run([slot(index) for index in range(matches)])
    for player in players:
        await player.close()
    return result


async def floor(
    target: str, moves: int, matches: int, warmup: float, seconds: float, pids: dict[str, int]
) -> Result:
    """The shape's floor (bench/echo.py): `matches` games at once through a relay to an echo
    server that stores each message in Redis, each on a stream (and connection) of its own; a
    game is one message that stands for its creation (untimed) and `moves` timed ones, each
    the size of a Play."""
    message = common_pb2.PlayRequest(
        game_id="zoxso-" + "0" * 26, move="d2-d3", expected_version=120, seat=1
    ).SerializeToString()
    channels = []
    for _ in range(matches):
        channel = grpc.aio.insecure_channel(
            target, options=[("grpc.use_local_subchannel_pool", 1), NO_BDP_PROBE]
        )
        await asyncio.wait_for(channel.channel_ready(), 60)
        channels.append(channel)
    window = _Window(warmup, seconds, pids)

    async def slot(channel: grpc.aio.Channel) -> None:
        stream = channel.stream_stream(
            STREAM_METHOD, request_serializer=same, response_deserializer=same
        )()
        while window.open():
            await stream.write(message)  # the game's creation
            await stream.read()
            for _ in range(moves):
                if not window.open():
                    break
                asked = time.perf_counter()
                await stream.write(message)
                await stream.read()
                window.answered(asked)
        stream.cancel()

    result = await window.run([slot(channel) for channel in channels])
    for channel in channels:
        await channel.close()
    return result


async def _compare(
    target: str,
    pids: dict[str, dict[str, int]],
    relays: Sequence[str],
    floor_pids: Sequence[dict[str, int]],
) -> list[str]:
    """Every setting, boardgame.io's run, ours and the shape's floors (`relays`: the floor's
    and the batched floor's), on one event loop (gRPC's asyncio calls keep to the loop they
    started on)."""
    lines = []
    for moves, game in LENGTHS.items():
        plays = _plays(game, moves, int(sized(16, 4)))
        for matches in MATCHES:
            runs: list[list[Result]] = [[], [], [], [], []]
            for _round in range(ROUNDS):
                runs[0].append(await asyncio.to_thread(bgio, moves, matches, WARMUP, SECONDS))
                for stream, side in ((False, runs[1]), (True, runs[2])):
                    side.append(
                        await ours(
                            target, game, plays, matches, stream, WARMUP, SECONDS, pids[game]
                        )
                    )
                for relay, used, side in zip(relays, floor_pids, runs[3:], strict=True):
                    side.append(await floor(relay, moves, matches, WARMUP, SECONDS, used))
            theirs, unary, streamed, least, batched = (Result.of(side) for side in runs)
            lines.append(f"{moves}-move games ({game} for ours), {matches} at once:")
            lines.append(theirs.line("boardgame.io"))
            lines.append(unary.line("ours, unary", theirs))
            lines.append(streamed.line("ours, session", theirs))
            lines.append(least.line("shape's floor", theirs))
            lines.append(batched.line("batched floor", theirs))
            lines.append("  CPU ms per move:")
            lines.append(f"    boardgame.io: {theirs.cpu_line()}")
            lines.append(f"    ours, unary: {unary.cpu_line()}")
            lines.append(f"    ours, session: {streamed.cpu_line()}")
            lines.append(f"    shape's floor: {least.cpu_line()}")
            lines.append(f"    batched floor: {batched.cpu_line()}")
            lines.append(
                f"  platform only (CPU ms per move, the load client left out): ours, unary"
                f" {unary.platform_ms():.3f}; ours, session {streamed.platform_ms():.3f};"
                f" shape's floor {least.platform_ms():.3f}; batched floor"
                f" {batched.platform_ms():.3f}; boardgame.io {theirs.platform_ms():.3f}"
            )
    return lines


def run() -> list[str]:
    _node()  # fails now, not after our half, when boardgame.io is not installed
    redis = LocalRedis(appendonly=True)
    launch = Launch(
        redis_url=redis.url,
        # A bench player holds every game it drives (and the cut ones stay live), 64 players
        # log in at once: no per-player or login limits.
        env={"TOKEN_SECRET": SECRET,
             "RATE_LIMIT_PER_SECOND": "1000000", "RATE_LIMIT_BURST": "1000000",
             "LOGIN_RATE_LIMIT_PER_SECOND": "1000000", "LOGIN_RATE_LIMIT_BURST": "1000000",
             "MAX_LIVE_GAMES": "1000000", "GUEST_MAX_LIVE_GAMES": "1000000",
             "TRUSTED_PROXIES": "127.0.0.1/32"},
        games=list(LENGTHS.values()),
        lobby=False,
        matchmakers=0,
        bot_workers=0,
        quiet=True,
    )  # fmt: skip
    echo_port, relay_port, batched_port = free_port(), free_port(), free_port()
    echo = launch.add("echo", ["bench.echo", str(echo_port), "--redis", redis.url], launch.common)
    upstream = ["--relay", f"127.0.0.1:{echo_port}"]
    relay = launch.add("relay", ["bench.echo", str(relay_port), *upstream], launch.common)
    batched = launch.add(
        "relay", ["bench.echo", str(batched_port), *upstream, "--batched"], launch.common
    )
    try:
        launch.start()
        if not launch.ready():
            raise RuntimeError("the gateway did not start")
        services = dict(zip(LENGTHS.values(), launch.of("game"), strict=True))
        pids = {
            game: {
                "gateway": launch.of("gateway")[0].pid,
                "game service": service.pid,
                "redis": redis.process.pid,
                "bench client": os.getpid(),
            }
            for game, service in services.items()
        }
        floor_pids = [
            {"relay": each.pid, "echo": echo.pid, "redis": redis.process.pid,
             "bench client": os.getpid()}
            for each in (relay, batched)
        ]  # fmt: skip
        relays = [f"127.0.0.1:{relay_port}", f"127.0.0.1:{batched_port}"]
        return uvloop.run(_compare(launch.gateway_targets[0], pids, relays, floor_pids))
    finally:
        launch.stop()
        redis.stop()
