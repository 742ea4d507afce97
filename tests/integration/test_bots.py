"""Games against bots through the real gateway, game services, Redis and bot workers."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from typing import Any

import grpc
import pytest
from prometheus_client import REGISTRY
from redis.asyncio import Redis
from redis.exceptions import ResponseError

from client.session import Session
from engines.bots.base import Turn
from games import Game
from runtime import keys
from runtime.localredis import free_port
from runtime.redis import connect_redis
from services.bots.worker import BotWorker, choose_move
from tabletop.common.v1 import common_pb2
from tabletop.esoloe.v1 import esoloe_pb2
from tabletop.lobby.v1 import lobby_pb2, lobby_pb2_grpc
from tabletop.solace.v1 import solace_pb2
from tabletop.solo.v1 import solo_pb2
from tabletop.zoxso.v1 import zoxso_pb2
from tests.platform import TEST_BOT_KEY, Platform, play_until_finished
from tests.timing import eventually, patience
from wire.players import new_bot_id

pytestmark = pytest.mark.integration

GAMES = ("esoloe", "solo", "solace", "zoxso")


async def _new_bot_game(
    session: Session, game: str, *, watch_only: bool = False, options: dict[str, Any] | None = None
) -> lobby_pb2.PlayAgainstBotsResponse:
    lobby = lobby_pb2_grpc.LobbyServiceStub(session.channel)
    request = lobby_pb2.PlayAgainstBotsRequest(game=game, watch_only=watch_only)
    if game == "solo":
        request.options.solo.CopyFrom(solo_pb2.Options(**(options or {})))
    if game == "zoxso":
        request.options.zoxso.CopyFrom(zoxso_pb2.Options(**(options or {})))
    reply: lobby_pb2.PlayAgainstBotsResponse = await lobby.PlayAgainstBots(
        request, metadata=session.metadata
    )
    return reply


@pytest.mark.parametrize("game", GAMES)
async def test_bots_play_their_seats_until_the_game_ends(redis_url: str, game: str) -> None:
    async with Platform(redis_url, games=GAMES, bot_workers=2) as platform:
        player = Session(platform.target)
        await player.login("human")
        if game in ("esoloe", "zoxso"):  # against a bot
            options: dict[str, Any] = {"max_plies": 80} if game == "zoxso" else {}
            reply = await _new_bot_game(player, game, options=options)
            assert reply.seat in (0, 1)
            seats = [s.player_id for s in reply.status.seats]
            assert seats[reply.seat] == player.player_id
            assert seats[1 - reply.seat].startswith("bot-random-")
        else:  # bots on every seat, watched
            options = {"players": 2, "mode": solo_pb2.MODE_ROUNDS, "rounds": 1}
            reply = await _new_bot_game(
                player, game, watch_only=True, options=options if game == "solo" else None
            )
            assert not reply.HasField("seat")
            assert all(s.player_id.startswith("bot-") for s in reply.status.seats)
        seat = reply.seat if reply.HasField("seat") else -1
        await play_until_finished(player, game, reply.status.game_id, seat, timeout=60)


async def test_play_against_bots_checks_its_request(redis_url: str) -> None:
    async with Platform(redis_url, games=("esoloe",)) as platform:
        player = Session(platform.target)
        await player.login("human")
        lobby = lobby_pb2_grpc.LobbyServiceStub(player.channel)
        for request, code in [
            (lobby_pb2.PlayAgainstBotsRequest(game="chess"), grpc.StatusCode.INVALID_ARGUMENT),
            (lobby_pb2.PlayAgainstBotsRequest(game="esoloe", level="genius"),
             grpc.StatusCode.INVALID_ARGUMENT),
            (lobby_pb2.PlayAgainstBotsRequest(game="esoloe", seat=2),
             grpc.StatusCode.INVALID_ARGUMENT),
            (lobby_pb2.PlayAgainstBotsRequest(game="esoloe", seat=-1),  # unset is a random seat
             grpc.StatusCode.INVALID_ARGUMENT),
        ]:  # fmt: skip
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await lobby.PlayAgainstBots(request, metadata=player.metadata)
            assert caught.value.code() == code
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await lobby.PlayAgainstBots(lobby_pb2.PlayAgainstBotsRequest(game="esoloe"))
        assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
        # A bot seat's token needs the bot key; a guest can never log in as a bot.
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await Session(platform.target).bot_login("bot-random-0123456789ab", "guess")
        assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED


async def test_a_dead_workers_job_is_taken_over(redis_url: str) -> None:
    """A worker takes a job and dies holding it; another claims it and the game finishes."""
    async with Platform(redis_url, games=("esoloe",)) as platform:
        slow = subprocess.Popen(
            [sys.executable, "-m", "services.bots"],
            env={
                **os.environ,
                "REDIS_URL": redis_url,
                "GATEWAY_ADDR": platform.target,
                "BOT_KEY": TEST_BOT_KEY,
                "LISTEN": f"127.0.0.1:{free_port()}",
                "BOT_DELAY_SECONDS": "60",  # it takes a job and sits on it
            },
        )
        redis = Redis.from_url(redis_url)
        try:
            player = Session(platform.target)
            await player.login("spectator")
            reply = await _new_bot_game(player, "esoloe", watch_only=True)

            async def slow_holds_a_job() -> bool:
                try:
                    pending = await redis.xpending(keys.BOT_TURNS, keys.BOT_GROUP)
                except ResponseError:  # NOGROUP: the worker has not made its group yet
                    return False
                return bool(pending["pending"]) and any(
                    c["name"].decode().endswith(f"-{slow.pid}") for c in pending["consumers"]
                )

            await eventually(slow_holds_a_job, 10, "the slow worker takes the first job")
            slow.send_signal(signal.SIGKILL)
            slow.wait()
            await platform.start_bot_worker("rescuer", claim_idle_seconds=1.0)
            await play_until_finished(player, "esoloe", reply.status.game_id, -1, timeout=60)
        finally:
            if slow.poll() is None:
                slow.kill()
                slow.wait()
            await redis.aclose()


async def test_a_game_whose_bot_job_was_lost_is_woken_by_the_sweep(redis_url: str) -> None:
    """The job that gives a bot its turn is lost (its service stopped just after the commit):
    a worker's sweep finds the stalled game, queues the job again, and the game finishes."""
    async with Platform(redis_url, games=("esoloe",)) as platform:
        redis = Redis.from_url(redis_url)
        try:
            player = Session(platform.target)
            await player.login("spectator")
            reply = await _new_bot_game(player, "esoloe", watch_only=True)
            await redis.delete(keys.BOT_TURNS)  # no worker has seen the first job: it is gone
            game_id = reply.status.game_id
            assert await redis.zscore(keys.LIVE_GAMES, game_id) is not None
            worker = await platform.start_bot_worker("sweeper", stall_seconds=0.5)
            await play_until_finished(player, "esoloe", game_id, -1, timeout=60)
            await redis.delete(keys.BOT_SWEEP_LOCK)
            assert await worker.sweep() == 0  # nothing stalls any more
            assert await redis.zscore(keys.LIVE_GAMES, game_id) is None
        finally:
            await redis.aclose()


def _worker_process(
    platform: Platform, redis_url: str, *args: str, **env: str
) -> subprocess.Popen[bytes]:
    """`python -m services.bots` with `args`, working for the platform."""
    return subprocess.Popen(
        [sys.executable, "-m", "services.bots", *args],
        env={
            **os.environ,
            "REDIS_URL": redis_url,
            "GATEWAY_ADDR": platform.target,
            "BOT_KEY": TEST_BOT_KEY,
            "LISTEN": f"127.0.0.1:{free_port()}",
            **env,
        },
    )


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=patience(15))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


async def test_greedy_and_strong_bots_finish_their_games(redis_url: str) -> None:
    """Searching bots play through the real stack: a worker process given a small budget on
    its command line, thinking in its process pool, from the views the gateway serves."""
    async with Platform(redis_url, games=("esoloe", "solace")) as platform:
        worker = _worker_process(
            platform, redis_url, "--budget", "strong=0.2", "--budget", "greedy=0",
            BOT_PROCESSES="1",
        )  # fmt: skip
        try:
            referee = Session(platform.target)
            await referee.login("referee")
            esoloe = await platform.create_game(
                "esoloe",
                esoloe_pb2.CreateGameRequest(players=[new_bot_id("greedy"), new_bot_id("strong")]),
            )
            solace = [
                await platform.create_game(
                    "solace", solace_pb2.CreateGameRequest(players=[new_bot_id(level)])
                )
                for level in ("greedy", "strong")
            ]
            for game, created in [("esoloe", esoloe), ("solace", solace[0]), ("solace", solace[1])]:
                game_id = created.status.game_id
                await play_until_finished(referee, game, game_id, -1, timeout=90)
                final = await referee.game(game).GetView(
                    common_pb2.GetViewRequest(game_id=game_id), metadata=referee.metadata
                )
                assert final.status.finished
                assert final.status.version > 0
        finally:
            _stop(worker)


def pass_optional_chances(level: str, turn: Turn, seed: int, game: Game) -> str | None:
    """Lets every optional chance pass, else chooses as the level would (runs in the worker's
    thinking processes, which import it from this module)."""
    return None if turn.optional else choose_move(level, turn, seed, game)


def _bot_jobs(game: str, outcome: str) -> float:
    value = REGISTRY.get_sample_value("tabletop_bot_jobs_total", {"game": game, "outcome": outcome})
    return value or 0.0


async def test_a_bot_letting_a_jump_in_pass_acknowledges_its_job(redis_url: str) -> None:
    """Solo seats that may jump in get a job; a bot that lets the chance pass acknowledges it
    (nothing stays pending) and the game goes on to its end."""
    async with Platform(redis_url, games=("solo",)) as platform:
        redis = connect_redis(redis_url)
        worker = BotWorker(
            redis=redis, gateway=platform.target, bot_key=TEST_BOT_KEY, consumer="passer",
            processes=1, choose=pass_optional_chances,
        )  # fmt: skip
        stop = asyncio.Event()
        running = asyncio.create_task(worker.run(stop))
        try:
            referee = Session(platform.target)
            await referee.login("referee")
            passed_before = _bot_jobs("solo", "passed")
            options = solo_pb2.Options(players=4, mode=solo_pb2.MODE_ROUNDS, rounds=1)
            for _ in range(5):  # a round almost always offers a jump-in; a few make it sure
                created = await platform.create_game(
                    "solo",
                    solo_pb2.CreateGameRequest(
                        options=options, players=[new_bot_id("greedy") for _ in range(4)]
                    ),
                )
                await play_until_finished(referee, "solo", created.status.game_id, -1, 120)
                if _bot_jobs("solo", "passed") > passed_before:
                    break
            assert _bot_jobs("solo", "passed") > passed_before

            async def all_acknowledged() -> bool:
                pending = await redis.xpending_range(
                    keys.BOT_TURNS, keys.BOT_GROUP, "-", "+", 100, consumername="passer"
                )
                return not pending

            # The last acknowledgements follow the last move closely.
            await eventually(all_acknowledged, 5, "every job the passer took is acknowledged")
        finally:
            stop.set()
            await running
            await worker.close()
            await redis.aclose()
