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
from redis.asyncio import Redis
from redis.exceptions import ResponseError

from client.session import Session
from services.runtime import keys
from services.runtime.localredis import free_port
from tabletop.lobby.v1 import lobby_pb2, lobby_pb2_grpc
from tabletop.solo.v1 import solo_pb2
from tabletop.zoxso.v1 import zoxso_pb2
from tests.platform import TEST_BOT_KEY, Platform, play_until_finished

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
            assert reply.seat == -1
            assert all(s.player_id.startswith("bot-") for s in reply.status.seats)
        await play_until_finished(player, game, reply.status.game_id, reply.seat, timeout=60)


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
            for _ in range(200):  # wait until the slow worker holds the first job
                try:
                    pending = await redis.xpending(keys.BOT_TURNS, keys.BOT_GROUP)
                except ResponseError:  # NOGROUP: the worker has not made its group yet
                    pending = {"pending": 0}
                if pending["pending"] and any(
                    c["name"].decode().endswith(f"-{slow.pid}") for c in pending["consumers"]
                ):
                    break
                await asyncio.sleep(0.05)
            else:
                raise AssertionError("the slow worker never took the job")
            slow.send_signal(signal.SIGKILL)
            slow.wait()
            await platform.start_bot_worker("rescuer", claim_idle_seconds=1.0)
            await play_until_finished(player, "esoloe", reply.status.game_id, -1, timeout=60)
        finally:
            if slow.poll() is None:
                slow.kill()
                slow.wait()
            await redis.aclose()
