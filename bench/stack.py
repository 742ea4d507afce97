"""The whole stack as separate processes: bot-vs-bot games finished per minute (1 and 4 bot
workers), matchmaking throughput and latency (FindMatch to matched), and how soon a player's
bot answers a move, alone and while another player churns bot games (makes and resigns them as
fast as its rate limit lets it: each one queues a bot job)."""

from __future__ import annotations

import asyncio
import contextlib
import statistics
import time
from typing import Any

import grpc
import uvloop

import games
from bench import sized
from client.session import Session
from runtime.launch import Launch
from runtime.localredis import LocalRedis
from tabletop.common.v1 import common_pb2
from tabletop.lobby.v1 import lobby_pb2, lobby_pb2_grpc
from tabletop.solo.v1 import solo_pb2

SECRET = "bench-signing-key-0123456789-0123456789"
BOT_KEY = "bench-bot-key-0123456789"
GAMES_AT_ONCE = int(sized(8, 2))
SECONDS = sized(10.0, 1.0)
"""How long the matchmaking players and the churning player go on."""


def _options(game: str) -> lobby_pb2.GameOptions:
    options = lobby_pb2.GameOptions()
    if game == "solo":  # one round of two seats: a whole game is a long random walk
        options.solo.CopyFrom(solo_pb2.Options(players=2, mode=solo_pb2.MODE_ROUNDS, rounds=1))
    return options


async def _bot_games(session: Session, game: str, count: int) -> float:
    """Start `count` all-bot games at once; seconds until every one has finished."""
    lobby: Any = lobby_pb2_grpc.LobbyServiceStub(session.channel)
    started = time.perf_counter()
    replies = await asyncio.gather(*(
        lobby.PlayAgainstBots(
            lobby_pb2.PlayAgainstBotsRequest(
                game=game, options=_options(game), watch_only=True, bot_pace_ms=0  # full speed
            ),
            metadata=session.metadata,
        )
        for _ in range(count)
    ))  # fmt: skip

    async def until_finished(game_id: str) -> None:
        async for update in session.game(game).Watch(
            common_pb2.WatchRequest(game_id=game_id, public=True), metadata=session.metadata
        ):
            if update.status.finished:
                return

    await asyncio.gather(*(until_finished(r.status.game_id) for r in replies))
    return time.perf_counter() - started


async def _matchmaking(sessions: list[Session], seconds: float) -> tuple[int, list[float]]:
    """Pairs of players ask for e-SOLO-e games again and again: tickets matched, latencies."""
    deadline = time.perf_counter() + seconds
    latencies: list[float] = []

    async def player(session: Session) -> None:
        lobby: Any = lobby_pb2_grpc.LobbyServiceStub(session.channel)
        while time.perf_counter() < deadline:
            started = time.perf_counter()
            ticket = await lobby.FindMatch(
                lobby_pb2.FindMatchRequest(game="esoloe"), metadata=session.metadata
            )
            # At the end a player may queue once more and find nobody left to meet: it stops
            # waiting a little after the deadline and withdraws its ticket.
            waiting = max(0.0, deadline - time.perf_counter()) + 5.0
            try:
                async for state in lobby.WatchTicket(
                    lobby_pb2.WatchTicketRequest(ticket_id=ticket.ticket_id),
                    metadata=session.metadata,
                    timeout=waiting,
                ):
                    if state.state != lobby_pb2.TICKET_STATE_QUEUED:
                        latencies.append(time.perf_counter() - started)
                        break
            except grpc.aio.AioRpcError as error:
                if error.code() != grpc.StatusCode.DEADLINE_EXCEEDED:
                    raise
                await lobby.CancelTicket(
                    lobby_pb2.CancelTicketRequest(ticket_id=ticket.ticket_id),
                    metadata=session.metadata,
                )
                return

    await asyncio.gather(*(player(s) for s in sessions))
    return len(latencies), latencies


CHURN_RATE = 50.0
"""Calls a second of the churning player: the gateway's default per-player rate limit."""


async def _churn(session: Session, until: float) -> int:
    """Make bot games in which the bot moves first, and resign each at once; how many."""
    lobby: Any = lobby_pb2_grpc.LobbyServiceStub(session.channel)
    made = 0
    while time.perf_counter() < until:
        started = time.perf_counter()
        reply = await lobby.PlayAgainstBots(
            lobby_pb2.PlayAgainstBotsRequest(game="esoloe", seat=1), metadata=session.metadata
        )
        await session.game("esoloe").Resign(
            common_pb2.ResignRequest(game_id=reply.status.game_id), metadata=session.metadata
        )
        made += 1
        await asyncio.sleep(max(0.0, 2 / CHURN_RATE - (time.perf_counter() - started)))
    return made


async def _bot_answers(session: Session, seconds: float) -> list[float]:
    """Games against a random bot, played as fast as the bot answers for `seconds`: the time
    from each accepted move to the bot's answer (seen on Watch)."""
    lobby: Any = lobby_pb2_grpc.LobbyServiceStub(session.channel)
    stub = session.game("esoloe")
    waits: list[float] = []
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        reply = await lobby.PlayAgainstBots(
            lobby_pb2.PlayAgainstBotsRequest(game="esoloe", seat=0), metadata=session.metadata
        )
        game_id = reply.status.game_id
        over = False
        updates = stub.Watch(
            common_pb2.WatchRequest(game_id=game_id, from_version=1), metadata=session.metadata
        )
        try:
            while time.perf_counter() < deadline:
                legal = await stub.LegalMoves(
                    common_pb2.LegalMovesRequest(game_id=game_id), metadata=session.metadata
                )
                if not legal.moves:
                    break
                await stub.Play(
                    common_pb2.PlayRequest(game_id=game_id, move=legal.moves[0]),
                    metadata=session.metadata,
                )
                played = time.perf_counter()
                mine = await updates.read()
                over = mine.status.finished
                if over:
                    break
                answer = await updates.read()
                waits.append(time.perf_counter() - played)
                over = answer.status.finished
                if over:
                    break
        finally:
            updates.cancel()
        if not over:
            with contextlib.suppress(grpc.aio.AioRpcError):  # over already
                await stub.Resign(
                    common_pb2.ResignRequest(game_id=game_id), metadata=session.metadata
                )
    return waits


def _spread(waits: list[float]) -> str:
    waits = sorted(waits)
    return (
        f"p50 {statistics.median(waits) * 1e3:.0f} ms, "
        f"p99 {waits[int(0.99 * (len(waits) - 1))] * 1e3:.0f} ms, max {waits[-1] * 1e3:.0f} ms "
        f"({len(waits)} moves)"
    )


async def _fair_bots(gateway: str) -> list[str]:
    honest, churner = Session(gateway), Session(gateway)
    await honest.login("honest")
    await churner.login("churner")
    alone = await _bot_answers(honest, SECONDS * 0.8)
    until = time.perf_counter() + SECONDS
    churning = asyncio.create_task(_churn(churner, until))
    await asyncio.sleep(SECONDS * 0.2)  # the churn's backlog builds first
    beside = await _bot_answers(honest, SECONDS * 0.8)
    made = await churning
    await honest.close()
    await churner.close()
    return [
        f"a random bot's answer, 1 worker, alone: {_spread(alone)}",
        f"the same while another player churns bot games ({made / SECONDS:.0f} made and resigned "
        f"a second): {_spread(beside)}",
    ]


async def _bench(gateway: str, add_workers: Any) -> list[str]:
    session = Session(gateway)
    await session.login("bench")
    lines = []
    add_workers(1)
    lines += await _fair_bots(gateway)
    for workers in sized((1, 4), (1,)):
        add_workers(workers)
        await asyncio.sleep(1.0)
        for game in sized(games.names(), ["esoloe", "solace"]):
            elapsed = await _bot_games(session, game, GAMES_AT_ONCE)
            lines.append(
                f"bot-vs-bot {game:<7} {workers} worker(s): {GAMES_AT_ONCE / elapsed * 60:7.1f} "
                f"games/min ({GAMES_AT_ONCE} at once)"
            )
    players = [Session(gateway) for _ in range(16)]
    for index, player in enumerate(players):
        await player.login(f"player{index}")
    matched, latencies = await _matchmaking(players, SECONDS)
    latencies.sort()
    lines.append(
        f"matchmaking (16 players, pairs, 1 matchmaker): {matched / SECONDS:.1f} tickets "
        "matched/s, "
        f"FindMatch to matched p50 {statistics.median(latencies) * 1e3:.1f} ms, "
        f"p99 {latencies[int(0.99 * (len(latencies) - 1))] * 1e3:.1f} ms"
    )
    return lines


def run() -> list[str]:
    redis = LocalRedis(appendonly=True)
    launch = Launch(
        redis_url=redis.url,
        env={"TOKEN_SECRET": SECRET, "BOT_KEY": BOT_KEY, "MATCHMAKER_SCAN_SECONDS": "0.5",
             "RATE_LIMIT_PER_SECOND": "100000", "RATE_LIMIT_BURST": "100000",
             # its guests watch 8 games of bots at once, and its matchmaking players are matched
             # again and again without playing: as many live games as they get (a quick pass on
             # an idle machine matches each more than 20 times)
             "GUEST_MAX_LIVE_GAMES": "1000000", "GUEST_MAX_BOT_GAMES": "10"},
        bot_workers=0,
        quiet=True,
    )  # fmt: skip

    def add_workers(total: int) -> None:
        while len(launch.of("bots")) < total:
            launch.add_bot_worker().start()

    try:
        launch.start()
        if not launch.ready():
            raise RuntimeError("the stack did not start")
        return uvloop.run(_bench(launch.gateway_targets[0], add_workers))
    finally:
        launch.stop()
        redis.stop()
