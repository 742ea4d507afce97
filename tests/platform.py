"""The platform's real servers, started in the test's event loop on free ports."""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
from collections.abc import Awaitable, Coroutine, Mapping, Sequence
from types import TracebackType
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from redis.asyncio import Redis

from client.session import Session, Tls
from engines.contract import State
from gateway.server import Gateway, GatewaySettings
from gateway.web import WebEdge, WebSettings
from runtime import keys
from runtime.config import ServiceSettings
from runtime.redis import connect_redis
from runtime.relay import RelayServicer
from runtime.server import Server, TlsFiles, awaiting, where_tasks_are
from services.accounts.main import AccountsService, AccountsSettings, start_accounts_service
from services.bots.worker import BotWorker
from services.game.limits import Limits
from services.game.main import GameService, start_game_service
from services.game.opening import new_game_id
from services.lobby.following import FollowSettings
from services.lobby.friends import FriendsSettings
from services.lobby.main import LobbyService, LobbySettings, start_lobby_service
from services.matchmaker.matchmaker import Matchmaker
from tabletop.common.v1 import common_pb2
from tests.timing import eventually, patience
from wire.api import api
from wire.errors import error_info
from wire.proof import ProveCalls, platform_channel

TEST_SECRET = "test-signing-key-0123456789-abcdefghij"
TEST_BOT_KEY = "test-bot-key-0123456789"
TEST_INTERNAL_KEY = "test-internal-key-0123456789"
"""What the test platform's gateway, lobby and matchmakers prove their calls with."""


class Platform:
    """Game services (`replicas` of each game in `games`) and a gateway routing to all of them.

    `replicas` and `replica_target` refer to the first game's replicas."""

    def __init__(
        self,
        redis_url: str,
        *,
        games: Sequence[str] = ("esoloe",),
        replicas: int = 1,
        rate_per_second: float = 1000.0,
        rate_burst: float = 2000.0,
        bot_workers: int = 0,
        bot_settings: Mapping[str, Any] | None = None,
        matchmakers: int = 0,
        sweep_seconds: float = 0.2,
        tls: tuple[TlsFiles, Tls] | None = None,
        wait_replicas: int = 0,
        database_url: str = "",
        gateway_settings: Mapping[str, Any] | None = None,
        limits: Limits | None = None,
        friends: FriendsSettings | None = None,
        following: FollowSettings | None = None,
        web: WebSettings | None = None,
    ) -> None:
        """`limits`: the per-player limits of the game services and the lobby (default: the
        platform's defaults); `friends`: the lobby's bounds and waits of challenges, invites and
        open tables (default: the platform's); `following`: the lobby's bounds on follows and
        notification streams; `web`: the gateway's web edge too (its listen
        address with port 0: a free one; `web_url` says where)."""
        self.web_settings = web
        self.web: WebEdge | None = None
        self.friends = friends or FriendsSettings()
        self.following = following or FollowSettings()
        self.redis_url = redis_url
        self.limits = limits or Limits()
        self.database_url = database_url
        self.gateway_settings = dict(gateway_settings or {})
        self.games = list(games)
        self.replica_count = replicas
        self.rate = (rate_per_second, rate_burst)
        self.servers: dict[str, list[Server]] = {}
        self.relays: dict[str, list[RelayServicer]] = {}
        """Each replica's end of the gateway's relay links."""
        self._redis: list[Redis] = []
        self.services: list[GameService] = []
        self.gateway: Gateway | None = None
        self.lobby: LobbyService | None = None
        self.accounts: AccountsService | None = None
        """The accounts service, with a database (`database_url`)."""
        self.accounts_settings = {
            name: self.gateway_settings.pop(name)
            for name in ("accounts_per_address_day", "refresh_ttl_seconds")
            if name in self.gateway_settings
        }
        """AccountsSettings' fields given among `gateway_settings` (the gateway kept them once)."""
        self.bot_workers = bot_workers
        self.bot_settings = dict(bot_settings or {})
        """The `bot_workers`' settings (BotWorker's keyword arguments) over the tests' own."""
        self.workers: list[tuple[BotWorker, asyncio.Event, asyncio.Task[None]]] = []
        self.matchmaker_count = matchmakers
        self.matchmakers: list[tuple[Matchmaker, asyncio.Event, asyncio.Task[None]]] = []
        self.backends: dict[str, str] = {}
        self.sweep_seconds = sweep_seconds
        """How often the game services apply the timeouts and aborts that are due."""
        self.tls = tls
        self.wait_replicas = wait_replicas
        """Moves are answered once this many Redis replicas hold them (REDIS_WAIT_REPLICAS)."""
        """The gateway's certificate, and how its clients (bot workers) trust it: the public
        port speaks TLS only."""

    @property
    def target(self) -> str:
        assert self.gateway is not None
        return f"127.0.0.1:{self.gateway.port}"

    @property
    def accounts_target(self) -> str:
        """The accounts service's target ("": none)."""
        return "" if self.accounts is None else f"127.0.0.1:{self.accounts.server.port}"

    @property
    def web_url(self) -> str:
        assert self.web is not None, "the platform has no web edge"
        return f"http://127.0.0.1:{self.web.port}"

    @property
    def replicas(self) -> list[Server]:
        return self.servers[self.games[0]]

    def replica_target(self, index: int, game: str | None = None) -> str:
        return f"127.0.0.1:{self.servers[game or self.games[0]][index].port}"

    async def __aenter__(self) -> Platform:
        settings = ServiceSettings(
            redis_url=self.redis_url,
            listen="127.0.0.1:0",
            grace_seconds=1.0,
            sweep_seconds=self.sweep_seconds,
            internal_key=TEST_INTERNAL_KEY,
            wait_replicas=self.wait_replicas,
            wait_timeout_ms=300,
        )
        backends = self.backends
        for game in self.games:
            self.servers[game] = []
            self.relays[game] = []
            for _ in range(self.replica_count):
                service = await start_game_service(game, settings, self.limits)
                self.servers[game].append(service.server)
                self.relays[game].append(service.relay)
                self.services.append(service)
            ports = ",".join(f"127.0.0.1:{s.port}" for s in self.servers[game])
            backends[game] = f"ipv4:{ports}"
        if self.database_url:
            self.accounts = await start_accounts_service(
                AccountsSettings(
                    database_url=self.database_url,
                    listen="127.0.0.1:0",
                    grace_seconds=1.0,
                    internal_key=TEST_INTERNAL_KEY,
                    **self.accounts_settings,
                )
            )
        self.lobby = await start_lobby_service(
            LobbySettings(
                redis_url=self.redis_url,
                listen="127.0.0.1:0",
                backends=backends,
                grace_seconds=1.0,
                internal_key=TEST_INTERNAL_KEY,
                limits=self.limits,
                database_url=self.database_url,
                accounts=self.accounts_target,
                friends=self.friends,
                following=self.following,
            )
        )
        self.gateway = Gateway(
            GatewaySettings(
                listen="127.0.0.1:0",
                token_secret=TEST_SECRET,
                rate_per_second=self.rate[0],
                rate_burst=self.rate[1],
                backends=backends,
                grace_seconds=1.0,
                bot_key=TEST_BOT_KEY,
                lobby=f"127.0.0.1:{self.lobby.server.port}",
                internal_key=TEST_INTERNAL_KEY,
                tls=self.tls[0] if self.tls else None,
                health_listen="127.0.0.1:0" if self.tls else "",
                accounts=self.accounts_target,
                **self.gateway_settings,
            )
        )
        await self.gateway.start()
        if self.web_settings is not None:
            self.web = WebEdge(self.gateway.proxy, self.gateway.auth, self.web_settings)
            await self.web.start()
        for index in range(self.bot_workers):
            await self.start_bot_worker(f"test-worker-{index}", **self.bot_settings)
        for index in range(self.matchmaker_count):
            await self.start_matchmaker(f"test-matchmaker-{index}")
        return self

    def internal_channel(self, target: str) -> grpc.aio.Channel:
        """A channel to a service behind the gateway, as the platform's own processes open one:
        every call carries the proof made with the test key (wire.proof)."""
        return grpc.aio.insecure_channel(target, interceptors=[ProveCalls(TEST_INTERNAL_KEY)])

    async def create_game(self, game: str, request: Any) -> Any:
        """CreateGame as the platform's own lobby and matchmaker call it (they may seat anyone:
        players may only create tables they hold entirely), straight to a replica."""
        target = self.replica_target(0, game)
        async with platform_channel(target, api(game).full_name, TEST_INTERNAL_KEY) as channel:
            return await api(game).stub(channel).CreateGame(request, timeout=patience(10))

    async def sweeps_done(self, count: int) -> None:
        """Wait until every game service has done `count` more deadline sweeps (with 2, one
        began after now)."""
        sweeps = [service.sweep for service in self.services]
        wanted = [sweep.sweeps + count for sweep in sweeps]
        await eventually(
            lambda: all(s.sweeps >= n for s, n in zip(sweeps, wanted, strict=True)),
            10,
            f"{count} more deadline sweeps",
        )

    async def scans_done(self, count: int) -> None:
        """Wait until every matchmaker has looked at every pool `count` more times (with 2, one
        began after now)."""
        matchmakers = [matchmaker for matchmaker, _, _ in self.matchmakers]
        wanted = [matchmaker.scans + count for matchmaker in matchmakers]
        await eventually(
            lambda: all(m.scans >= n for m, n in zip(matchmakers, wanted, strict=True)),
            10,
            f"{count} more matchmaker scans",
        )

    async def start_matchmaker(self, consumer: str, **settings: Any) -> Matchmaker:
        redis = connect_redis(self.redis_url)
        self._redis.append(redis)
        matchmaker = Matchmaker(
            redis=redis, backends=self.backends, consumer=consumer,
            internal_key=TEST_INTERNAL_KEY, **{"scan_seconds": 0.2, **settings},
        )  # fmt: skip
        stop = asyncio.Event()
        self.matchmakers.append((matchmaker, stop, asyncio.create_task(matchmaker.run(stop))))
        return matchmaker

    async def start_bot_worker(self, consumer: str, **settings: float) -> BotWorker:
        redis = connect_redis(self.redis_url)
        self._redis.append(redis)
        worker = BotWorker(
            redis=redis, gateway=self.target, bot_key=TEST_BOT_KEY, consumer=consumer,
            tls=self.tls[1] if self.tls else None,
            **{"max_jump_in_window_ms": 0, "max_bot_pace_ms": 0, **settings},  # type: ignore[arg-type]
        )  # fmt: skip
        stop = asyncio.Event()
        self.workers.append((worker, stop, asyncio.create_task(worker.run(stop))))
        return worker

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        steps: list[tuple[str, Coroutine[Any, Any, object]]] = []
        for worker, stop, task in self.workers:
            stop.set()
            steps.append((f"bot worker {worker.consumer}", _ended(task)))
            steps.append(("its close", worker.close()))
        for matchmaker, stop, task in self.matchmakers:
            stop.set()
            steps.append((f"matchmaker {matchmaker.consumer}", _ended(task)))
            steps.append(("its close", matchmaker.close()))
        if self.web is not None:
            steps.append(("the web edge's stop", self.web.stop()))
        if self.gateway is not None:
            steps.append(("the gateway's stop", self.gateway.stop(0.5)))
        if self.lobby is not None:
            steps += [
                ("the lobby's server's stop", self.lobby.server.stop(0.5)),
                ("the lobby's close", self.lobby.close()),
            ]
        if self.accounts is not None:
            steps += [
                ("the accounts service's server's stop", self.accounts.server.stop(0.5)),
                ("the accounts service's close", self.accounts.close()),
            ]
        for game, servers in self.servers.items():
            steps += [(f"a {game} server's stop", server.stop(0.5)) for server in servers]
        steps += [("a game service's close", service.close()) for service in self.services]
        steps += [("a Redis client's close", redis.aclose()) for redis in self._redis]
        stuck = [what for what, step in steps if not await _finished(what, step, patience(10))]
        assert not stuck, f"the test platform did not stop: {', '.join(stuck)} (tasks above)"


async def _ended(task: asyncio.Task[None]) -> None:
    await task


async def health_of(target: str, service: str = "") -> int | None:
    """What `target`'s health service says of `service` ("": overall), None when it does not
    answer (not listening yet, or gone)."""
    async with grpc.aio.insecure_channel(target) as channel:
        try:
            reply = await health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=service), timeout=patience(1)
            )
        except grpc.aio.AioRpcError:
            return None
    return int(reply.status)


async def health_becomes(target: str, status: int, service: str = "", seconds: float = 20) -> None:
    """Wait until `target`'s health says `status` for `service` (fail after
    `patience(seconds)`)."""

    async def reached() -> bool:
        return await health_of(target, service) == status

    name = health_pb2.HealthCheckResponse.ServingStatus.Name(status)
    await eventually(reached, seconds, f"{target} reports {name} for {service!r}")


async def _finished(what: str, step: Coroutine[Any, Any, object], seconds: float) -> bool:
    """Whether `step` finished within `seconds`; if not, where it and every task of the loop
    wait is printed, and it is cancelled (a stop that hangs is a bug to find, not to wait
    out)."""
    task = asyncio.ensure_future(step)
    done, _ = await asyncio.wait({task}, timeout=seconds)
    if done:
        task.result()
        return True
    print(f"{what} is waiting at:", *awaiting(step), sep="\n")
    print(where_tasks_are())
    task.cancel()
    await asyncio.wait({task}, timeout=seconds)
    return False


async def store_as_before_editions(redis_url: str, game_id: str, state: State) -> str:
    """A game as the code from before rules editions stored it, made from the created game
    `game_id` (its players and options): `state` (an edition-1 position) as its snapshot at
    version 0, neither the snapshot nor the meta naming an edition. It gets an id of its own,
    which no replica has served (as with a game an older release made), so each reads it from
    Redis; the id is returned."""
    snapshot = json.loads(state.serialize())
    assert snapshot.pop("edition") == 1
    redis = Redis.from_url(redis_url)
    try:
        meta = json.loads(await redis.hget(keys.game_state(game_id), "meta") or b"{}")
        meta.pop("edition")
        old_game = new_game_id(keys.kind_of(game_id))
        first: Any = await redis.xrange(keys.game_events(game_id), count=1)
        [(_, opening)] = first
        async with redis.pipeline(transaction=True) as pipe:
            pipe.hset(
                keys.game_state(old_game),
                mapping={"version": 0, "snapshot": _compact(snapshot), "meta": _compact(meta)},
            )
            pipe.xadd(keys.game_events(old_game), opening, id="0-1")
            for key in (keys.game_state(old_game), keys.game_events(old_game)):
                pipe.expire(key, 3600)
            await pipe.execute()
        return old_game
    finally:
        await redis.aclose()


def _compact(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


async def logged_in(platform: Platform, *names: str) -> list[Session]:
    """A logged-in session to the platform's gateway for each name."""
    sessions = [Session(platform.target) for _ in names]
    for session, name in zip(sessions, names, strict=True):
        await session.login(name)
    return sessions


async def watch_all(
    session: Session, game: str, game_id: str, from_version: int = 0, *, public: bool = False
) -> list[Any]:
    """Every Watch message of a game from a version on, until the game ends."""
    return [
        update
        async for update in session.game(game).Watch(
            common_pb2.WatchRequest(game_id=game_id, from_version=from_version, public=public),
            metadata=session.metadata,
        )
    ]


async def assert_refused(
    call: Awaitable[object], code: grpc.StatusCode, reason: str, *words: str
) -> str:
    """Await a call that must fail with `code` and `reason`, its message naming each of
    `words`; returns the message."""
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call
    error = caught.value
    assert error.code() == code, error.details()
    assert error_info(error)[0] == reason, error.details()
    for word in words:
        assert word in (error.details() or ""), error.details()
    return error.details() or ""


async def resign_for_good(session: Session, game: str, game_id: str) -> None:
    """End a game the session's player is seated at by resigning, taking their seat back first
    if a bot holds it: a takeover never ends a game, and left alone its bots would play on in
    the tests that follow (they share Redis), whose workers sweep every live game."""
    stub = session.game(game)

    async def ended() -> bool:
        with contextlib.suppress(grpc.aio.AioRpcError):  # timed out again meanwhile: again
            await stub.TakeSeat(
                common_pb2.TakeSeatRequest(game_id=game_id), metadata=session.metadata
            )
            await stub.Resign(common_pb2.ResignRequest(game_id=game_id), metadata=session.metadata)
        view = await stub.GetView(
            common_pb2.GetViewRequest(game_id=game_id, public=True), metadata=session.metadata
        )
        return bool(view.status.finished)

    await eventually(ended, 10, f"game {game_id} ended")


def spread(moves: Sequence[str], played: int) -> str:
    """The legal move to play after `played` moves: spread over the legal ones (the first legal
    ones, played in turn, can end an e-SOLO-e game on its third ply: a 3-high stack of one
    symbol seen from two sides)."""
    return moves[(13 * played + 3) % len(moves)]


async def play_moves(seated: Mapping[int, Session], game: str, game_id: str, each: int = 2) -> None:
    """Each seat plays `each` moves (`spread`), whoever is to act; `seated`: each seat's
    session. A game so played may count for ratings (services/ratings/model.py,
    PLAYED_MOVES)."""
    made = dict.fromkeys(seated, 0)
    while min(made.values()) < each:
        some = next(iter(seated.values()))
        stub = some.game(game)
        view = await stub.GetView(
            common_pb2.GetViewRequest(game_id=game_id, public=True), metadata=some.metadata
        )
        assert not view.status.finished, f"the game ended before each seat played {each}"
        seat = view.status.to_act[0]
        legal = await stub.LegalMoves(
            common_pb2.LegalMovesRequest(game_id=game_id), metadata=seated[seat].metadata
        )
        await stub.Play(
            common_pb2.PlayRequest(
                game_id=game_id,
                move=spread(legal.moves, sum(made.values())),
                expected_version=legal.version,
            ),
            metadata=seated[seat].metadata,
        )
        made[seat] += 1


def solo_progress(moves: list[str], rng: random.Random) -> str:
    """A random legal Solo move that makes progress: plays with the Solo call first (the only
    call there is, S12), then plays, then the rest (a player who draws at random can keep a
    round going for thousands of moves)."""
    plays = [m for m in moves if m.startswith("play")]
    called = [m for m in plays if m.endswith("!")]
    return rng.choice(called or plays or moves)


async def play_until_finished(
    session: Session, game: str, game_id: str, seat: int, timeout: float, poll: float = 0.01
) -> None:
    """Play `seat` with random legal moves (if seated; in Solo, moves that make progress) until
    the game ends, looking at the game every `poll` seconds while others are to act; fail
    after `patience(timeout)`."""
    stub = session.game(game)
    rng = random.Random(1)
    choose = solo_progress if game == "solo" else lambda moves, rng: rng.choice(moves)

    async def loop() -> None:
        while True:
            view = await stub.GetView(
                common_pb2.GetViewRequest(game_id=game_id), metadata=session.metadata
            )
            if view.status.finished:
                return
            if seat >= 0 and seat in view.status.to_act:
                legal = await stub.LegalMoves(
                    common_pb2.LegalMovesRequest(game_id=game_id), metadata=session.metadata
                )
                if legal.moves and legal.version == view.status.version:
                    try:
                        await stub.Play(
                            common_pb2.PlayRequest(
                                game_id=game_id,
                                move=choose(list(legal.moves), rng),
                                expected_version=legal.version,
                            ),
                            metadata=session.metadata,
                        )
                    except grpc.aio.AioRpcError as error:  # a bot jumped in first
                        if error.code() != grpc.StatusCode.ABORTED:
                            raise
                    continue
            await asyncio.sleep(poll)

    await asyncio.wait_for(loop(), patience(timeout))
