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

import games
from client.session import Session
from engines.bots.base import Turn
from games import Game
from runtime import keys
from runtime.localredis import LocalRedis, free_port
from runtime.redis import connect_redis
from services.bots.worker import BotWorker, choose_move
from services.game.limits import Limits
from tabletop.common.v1 import common_pb2
from tabletop.esoloe.v1 import esoloe_pb2
from tabletop.lobby.v1 import lobby_pb2, lobby_pb2_grpc
from tabletop.solace.v1 import solace_pb2
from tabletop.solo.v1 import solo_pb2
from tabletop.zoxso.v1 import zoxso_pb2
from tests.integration.test_crowd import own_redis
from tests.platform import (
    TEST_BOT_KEY,
    Platform,
    assert_refused,
    logged_in,
    play_until_finished,
    watch_all,
)
from tests.timing import eventually, patience
from wire.players import new_bot_id

pytestmark = pytest.mark.integration
__all__ = ["own_redis"]

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


def _records_loaded() -> list[int]:
    """The e-SOLO-e editions whose solved record a thinking process holds (run in one)."""
    from games.esoloe import solver

    return sorted(solver._SHARED)


async def test_a_thinking_process_loads_the_solved_record_before_its_first_job(
    redis_url: str,
) -> None:
    """Loading e-SOLO-e's solved record takes about half a second: a worker's thinking
    processes load it as they start, so no bot's first decision pays for it."""
    redis = connect_redis(redis_url)
    worker = BotWorker(
        redis=redis, gateway=f"127.0.0.1:{free_port()}", bot_key=TEST_BOT_KEY,
        consumer="loader", processes=1,
    )  # fmt: skip
    try:
        loaded = await asyncio.get_running_loop().run_in_executor(
            worker._thinkers(), _records_loaded
        )
        assert loaded == [games.rules("esoloe").edition]
    finally:
        await worker.close()
        await redis.aclose()


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


async def _jobs_all_done(redis: Redis) -> bool:
    """Every bot-turn job was read and acknowledged (a Redis of the test's own)."""
    groups = await redis.xinfo_groups(keys.BOT_TURNS)
    return all(group["pending"] == 0 and group["lag"] == 0 for group in groups)


async def test_the_player_who_watches_bots_stops_their_game(own_redis: LocalRedis) -> None:
    """The sponsor of a game of bots stops it mid-game: their watcher sees a last version
    ("stop_game", no result) and the end of the stream; the game frees its place (a second
    game, refused before, is made); the bots play it no more; a second stop answers the same
    final status. Nobody else may stop it."""
    limits = Limits(bot_games=1)
    async with Platform(own_redis.url, games=("esoloe",), limits=limits) as platform:
        # Slow bots: the game is still going on when it is stopped.
        await platform.start_bot_worker("slow", delay_seconds=0.2)
        sponsor, other = await logged_in(platform, "sponsor", "other")
        made = await _new_bot_game(sponsor, "esoloe", watch_only=True)
        game_id = made.status.game_id
        watching = asyncio.create_task(watch_all(sponsor, "esoloe", game_id, public=True))
        await assert_refused(
            _new_bot_game(sponsor, "esoloe", watch_only=True),
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            "LIMIT_REACHED",
            "1 games with bots",
        )
        esoloe = sponsor.game("esoloe")
        view = common_pb2.GetViewRequest(game_id=game_id, public=True)

        async def moved() -> bool:
            status = (await esoloe.GetView(view, metadata=sponsor.metadata)).status
            return int(status.version) >= 2

        await eventually(moved, 30, "the bots play a move or two")
        stop = common_pb2.StopGameRequest(game_id=game_id)
        await assert_refused(
            other.game("esoloe").StopGame(stop, metadata=other.metadata),
            grpc.StatusCode.PERMISSION_DENIED,
            "NOT_YOUR_GAME",
            "only the player who asked for",
        )
        stopped = (await esoloe.StopGame(stop, metadata=sponsor.metadata)).status
        assert stopped.finished
        assert not stopped.to_act
        assert not any(clock.running for clock in stopped.clocks)
        assert list(stopped.result.winners) == []
        assert stopped.result.detail["reason"] == "stopped_by_sponsor"
        updates = await asyncio.wait_for(watching, patience(10))
        last = updates[-1]
        assert (last.envelope.version, last.envelope.move) == (stopped.version, "stop_game")
        assert not last.envelope.HasField("actor")
        assert last.envelope.table_event.kind == common_pb2.TableEvent.KIND_STOPPED
        assert last.status.finished
        assert [u.envelope.version for u in updates] == list(range(stopped.version + 1))
        again = (await esoloe.StopGame(stop, metadata=sponsor.metadata)).status
        assert again == stopped
        await assert_refused(
            esoloe.StopGame(stop, metadata=other.metadata),
            grpc.StatusCode.PERMISSION_DENIED,
            "NOT_YOUR_GAME",
        )
        # Its place is free: the game refused before is made now (untimed, this one: it has
        # no clock, before or after its stop).
        untimed = lobby_pb2.PlayAgainstBotsRequest(
            game="esoloe", watch_only=True, time_control=common_pb2.TimeControl()
        )
        lobby = lobby_pb2_grpc.LobbyServiceStub(sponsor.channel)
        second = await lobby.PlayAgainstBots(untimed, metadata=sponsor.metadata)
        ended = await esoloe.StopGame(
            common_pb2.StopGameRequest(game_id=second.status.game_id), metadata=sponsor.metadata
        )
        assert ended.status.finished
        assert ended.status.result.detail["reason"] == "stopped_by_sponsor"
        assert not ended.status.clocks
        assert not ended.status.HasField("time_control")
        redis = Redis.from_url(own_redis.url)
        try:
            await eventually(lambda: _jobs_all_done(redis), 30, "the workers drop the jobs left")
            assert await redis.zscore(keys.LIVE_GAMES, game_id) is None
            assert not await redis.hlen(keys.player_live(sponsor.player_id))
        finally:
            await redis.aclose()
        final = (await esoloe.GetView(view, metadata=sponsor.metadata)).status
        assert final.version == stopped.version  # no bot played it after the stop
        await sponsor.close()
        await other.close()


async def test_only_a_game_of_bots_can_be_stopped(redis_url: str) -> None:
    """StopGame refuses a game with a person at the table (theirs against bots, a table of
    their own), an unknown game and a malformed id, changing nothing."""
    async with Platform(redis_url, games=("esoloe",)) as platform:
        (player,) = await logged_in(platform, "seated")
        esoloe = player.game("esoloe")
        against = await _new_bot_game(player, "esoloe")
        table = await esoloe.CreateGame(
            esoloe_pb2.CreateGameRequest(players=[player.player_id] * 2), metadata=player.metadata
        )
        for status in (against.status, table.status):
            await assert_refused(
                esoloe.StopGame(
                    common_pb2.StopGameRequest(game_id=status.game_id), metadata=player.metadata
                ),
                grpc.StatusCode.FAILED_PRECONDITION,
                "PEOPLE_SEATED",
                "resignation",
            )
            view = await esoloe.GetView(
                common_pb2.GetViewRequest(game_id=status.game_id, public=True),
                metadata=player.metadata,
            )
            assert not view.status.finished
        await assert_refused(
            esoloe.StopGame(
                common_pb2.StopGameRequest(game_id="esoloe-" + "0" * 20), metadata=player.metadata
            ),
            grpc.StatusCode.NOT_FOUND,
            "GAME_NOT_FOUND",
        )
        await assert_refused(
            esoloe.StopGame(common_pb2.StopGameRequest(game_id="nope"), metadata=player.metadata),
            grpc.StatusCode.INVALID_ARGUMENT,
            "INVALID_ARGUMENT",
        )
        await player.close()
