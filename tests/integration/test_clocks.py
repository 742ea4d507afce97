"""Clocks on the real stack (Redis, game services, gateway, lobby, matchmaker, bot workers), with
time controls of a second or two: a silent Solo player is taken over by a bot that finishes the
game, whose result is the player's; a game whose every person timed out plays on between bots
to its end; a player takes their seat back (TakeSeat); a two-player game is forfeited on time; a
game nobody starts is aborted; a move after the deadline is refused and the timeout applied as
of the deadline, even by a service that was not up at the deadline; and a move racing its
deadline resolves to exactly one of the two."""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
from collections.abc import Awaitable
from typing import Any

import grpc
import pytest
from redis.asyncio import Redis

from client.session import Session
from runtime import keys
from runtime.game_log import now_ms
from services.game.store import GameStore
from tabletop.common.v1 import common_pb2
from tabletop.esoloe.v1 import esoloe_pb2
from tabletop.lobby.v1 import lobby_pb2
from tabletop.solo.v1 import solo_pb2
from tests.platform import (
    Platform,
    assert_refused,
    logged_in,
    play_until_finished,
    resign_for_good,
    watch_all,
)
from tests.timing import eventually, patience
from wire.errors import error_info

pytestmark = pytest.mark.integration

FORFEIT = common_pb2.TIMEOUT_FORFEIT
BOT = common_pb2.TIMEOUT_BOT


def esoloe_game(players: list[str], **tc: Any) -> esoloe_pb2.CreateGameRequest:
    return esoloe_pb2.CreateGameRequest(players=players, time_control=common_pb2.TimeControl(**tc))


async def entries(redis_url: str, game_id: str) -> list[Any]:
    redis = Redis.from_url(redis_url)
    try:
        return await GameStore(redis).entries(game_id, 0, count=10_000)
    finally:
        await redis.aclose()


async def stored_table(redis_url: str, game_id: str) -> dict[str, Any]:
    redis = Redis.from_url(redis_url)
    try:
        table: Any = await redis.hget(keys.game_state(game_id), "table")
    finally:
        await redis.aclose()
    found: dict[str, Any] = json.loads(table)
    return found


async def _longer_than_one(log: Awaitable[list[Any]]) -> list[Any] | None:
    found = await log
    return found if len(found) > 1 else None


async def view(session: Session, game: str, game_id: str) -> Any:
    return await session.game(game).GetView(
        common_pb2.GetViewRequest(game_id=game_id), metadata=session.metadata
    )


async def first_move(session: Session, game: str, game_id: str) -> Any:
    stub = session.game(game)
    legal = await stub.LegalMoves(
        common_pb2.LegalMovesRequest(game_id=game_id), metadata=session.metadata
    )
    return await stub.Play(
        common_pb2.PlayRequest(
            game_id=game_id, move=legal.moves[0], expected_version=legal.version
        ),
        metadata=session.metadata,
    )


async def test_a_silent_solo_player_is_taken_over_by_a_bot_that_finishes_the_game(
    redis_url: str,
) -> None:
    async with Platform(redis_url, games=("solo",), bot_workers=1) as platform:
        alice, bob = await logged_in(platform, "alice", "bob")
        created = await platform.create_game(
            "solo",
            solo_pb2.CreateGameRequest(
                options=solo_pb2.Options(players=2, mode=solo_pb2.MODE_ROUNDS, rounds=1),
                players=[alice.player_id, bob.player_id],
                time_control=common_pb2.TimeControl(
                    move_seconds=1, on_timeout=BOT, bot_level="random"
                ),
            ),
        )
        game_id = created.status.game_id
        assert created.status.time_control.move_seconds == 1
        running = [c.seat for c in created.status.clocks if c.running]
        assert running == list(created.status.to_act)
        assert created.status.clocks[running[0]].HasField("deadline")
        bob_watch = asyncio.create_task(watch_all(bob, "solo", game_id))
        # Alice plays her seat; Bob never moves.
        await asyncio.wait_for(play_until_finished(alice, "solo", game_id, 0, 60), patience(90))
        final = await view(alice, "solo", game_id)
        assert final.status.finished
        assert final.status.seats[1].player_id.startswith("bot-random-")
        assert final.status.seats[1].name == "random bot"
        # The result is the engine's (the round was played out), naming the seat the bot held
        # at the end: Bob's result all the same.
        assert final.status.result.detail["reason"] == "rounds"
        assert list(final.status.result.detail["taken_over"]) == [1]
        log = await entries(redis_url, game_id)
        timeouts = [e for e in log if e.move == "timeout"]
        assert len(timeouts) == 1, [e.move for e in log]
        (timeout,) = timeouts
        assert timeout.actor == 1
        assert timeout.table_event["outcome"] == "bot"
        assert timeout.time_ms >= timeout.table_event["deadline"]
        bot_moves = [e for e in log if e.version > timeout.version and e.actor == 1]
        assert bot_moves, "the bot played Bob's seat after the takeover"
        await assert_refused(
            bob.game("solo").Play(
                common_pb2.PlayRequest(game_id=game_id, move="draw"), metadata=bob.metadata
            ),
            grpc.StatusCode.PERMISSION_DENIED,
            "NOT_YOUR_SEAT",
            "a bot plays your seat",
            "TakeSeat",
        )
        # Bob's Watch carried on as a spectator's from the takeover: the bot's hand, dealt to
        # seat 1, is never shown to him.
        seen = await asyncio.wait_for(bob_watch, patience(10))
        public = await watch_all(alice, "solo", game_id, public=True)
        after = [u for u in seen if u.envelope.version >= timeout.version]
        assert after == [u for u in public if u.envelope.version >= timeout.version]
        (event,) = [u for u in seen if u.envelope.move == "timeout"]
        assert event.envelope.table_event.kind == common_pb2.TableEvent.KIND_TIMEOUT
        assert event.envelope.table_event.outcome == BOT
        assert event.envelope.actor == 1


async def test_a_game_whose_every_person_timed_out_is_played_to_its_end_by_bots(
    redis_url: str,
) -> None:
    """Nobody is left at the table once both players' time ran out: the game does not end for
    that; the bots play it to its end, and the result (a win, or a draw when nobody can place a
    cube) is the players'."""
    async with Platform(redis_url, bot_workers=1) as platform:
        alice, bob = await logged_in(platform, "alice", "bob")
        created = await platform.create_game(
            "esoloe",
            esoloe_game(
                [alice.player_id, bob.player_id],
                move_seconds=1,
                on_timeout=BOT,
                bot_level="random",
            ),
        )
        game_id = created.status.game_id
        updates = await asyncio.wait_for(watch_all(alice, "esoloe", game_id), patience(60))
        timeouts = [u for u in updates if u.envelope.move == "timeout"]
        assert [u.envelope.actor for u in timeouts] == [0, 1]
        assert not any(u.envelope.table_event.abandoned for u in timeouts)
        assert not timeouts[1].status.finished  # nobody left at the table: it goes on
        last = updates[-1].status
        assert last.finished
        assert last.version > timeouts[1].envelope.version
        reason = last.result.detail["reason"]
        assert reason != "abandoned"
        assert len(last.result.winners) == (0 if reason == "no_legal_placement" else 1)
        assert sorted(last.result.detail["taken_over"]) == [0, 1]
        listed = await alice.lobby.ListGames(lobby_pb2.ListGamesRequest(), metadata=alice.metadata)
        (summary,) = [g for g in listed.games if g.status.game_id == game_id]
        assert (list(summary.seats), summary.status.finished) == ([0], True)


async def test_a_player_takes_their_seat_back_from_the_bot(redis_url: str) -> None:
    """Bob (seat 0) times out on a chess clock of 1 s with 30 s increments: a bot plays his
    seat. While that clock is empty he cannot take it back (NO_TIME_LEFT: he would time out at
    once); once the bot has moved (and earned increments), TakeSeat gives it back: a version of
    the game (move "take_seat", KIND_SEAT_TAKEN_BACK, the bot named), Bob's seat in the status
    and his clock running again when he is to act. His Watch, opened before the timeout, shows
    the bot's versions as a spectator's and his own again from the take-back (his drawn cards).
    Alice times out too meanwhile: with nobody left at the table the bots play on."""
    async with Platform(redis_url, games=("solo",)) as platform:
        bob, alice = await logged_in(platform, "bob", "alice")
        created = await platform.create_game(
            "solo",
            solo_pb2.CreateGameRequest(
                options=solo_pb2.Options(players=2),
                players=[bob.player_id, alice.player_id],
                time_control=common_pb2.TimeControl(
                    clock_seconds=1, increment_seconds=30, on_timeout=BOT, bot_level="random"
                ),
            ),
        )
        game_id = created.status.game_id
        stub = bob.game("solo")
        bob_watch = stub.Watch(
            common_pb2.WatchRequest(game_id=game_id, from_version=1), metadata=bob.metadata
        )

        async def held_by_bots(*seats: int) -> Any:
            status = (await view(alice, "solo", game_id)).status
            return status if all(status.seats[s].bot for s in seats) else None

        await eventually(lambda: held_by_bots(0), 30, "Bob's seat taken over")
        take = common_pb2.TakeSeatRequest(game_id=game_id)
        await assert_refused(
            stub.TakeSeat(take, metadata=bob.metadata),
            grpc.StatusCode.FAILED_PRECONDITION,
            "NO_TIME_LEFT",
            "no time left",
        )
        await assert_refused(  # only the seat's own player takes it back
            alice.game("solo").TakeSeat(
                common_pb2.TakeSeatRequest(game_id=game_id, seat=0), metadata=alice.metadata
            ),
            grpc.StatusCode.PERMISSION_DENIED,
            "NOT_YOUR_SEAT",
        )
        await platform.start_bot_worker("after-the-timeout")
        # The bot plays Bob's seat; Alice, silent, times out in her turn too: bots only now.
        both = await eventually(lambda: held_by_bots(0, 1), 30, "both seats taken over")
        await eventually(lambda: _later(alice, game_id, both.version), 30, "the bots playing on")
        back = await stub.TakeSeat(take, metadata=bob.metadata)
        status = back.status
        assert (status.seats[0].player_id, status.seats[0].bot) == (bob.player_id, False)
        assert (status.seats[1].bot, status.finished) == (True, False)
        again = await stub.TakeSeat(take, metadata=bob.metadata)  # harmless to repeat
        assert again.status.version >= status.version
        log = await entries(redis_url, game_id)
        (entry,) = [e for e in log if e.move == "take_seat"]
        assert (entry.version, entry.actor) == (status.version, 0)
        assert entry.table_event["kind"] == "seat_taken_back"
        assert entry.table_event["bot"].startswith("bot-random-")
        mine = await stub.GetView(common_pb2.GetViewRequest(game_id=game_id), metadata=bob.metadata)
        assert (mine.HasField("seat"), mine.seat) == (True, 0)
        assert len(mine.view.hand) > 0
        # Bob plays his seat again: draw when his turn comes (his clock has 30 s per bot move);
        # taken back just after the bot drew, the turn holds a drawn card: he keeps it (pass)
        # and draws in his next turn.
        drawn = None
        async for update in bob_watch:
            if update.envelope.version < status.version:
                # The bot's versions: a spectator's view (the bot's drawn cards never shown).
                assert not any(e.HasField("drew_cards") for e in update.events)
                continue
            if update.envelope.version == status.version:
                event = update.envelope.table_event
                assert event.kind == common_pb2.TableEvent.KIND_SEAT_TAKEN_BACK
                assert (event.seat, update.envelope.actor) == (0, 0)
            if update.envelope.actor == 0 and update.envelope.move == "draw":
                drawn = update
                break
            if 0 in update.status.to_act:
                clock = update.status.clocks[0]
                assert (clock.running, clock.HasField("deadline")) == (True, True)
                with contextlib.suppress(grpc.aio.AioRpcError):  # a bot moved first: go on
                    legal = await stub.LegalMoves(
                        common_pb2.LegalMovesRequest(game_id=game_id), metadata=bob.metadata
                    )
                    await stub.Play(
                        common_pb2.PlayRequest(
                            game_id=game_id,
                            move="draw" if "draw" in legal.moves else "pass",
                            expected_version=legal.version,
                        ),
                        metadata=bob.metadata,
                    )
        bob_watch.cancel()
        assert drawn is not None
        assert any(e.HasField("drew_cards") for e in drawn.events)  # his own again
        await resign_for_good(bob, "solo", game_id)


async def _later(session: Session, game_id: str, version: int) -> bool:
    return bool((await view(session, "solo", game_id)).status.version > version)


async def test_a_two_player_game_is_forfeited_on_time(redis_url: str) -> None:
    async with Platform(redis_url) as platform:
        alice, bob = await logged_in(platform, "alice", "bob")
        created = await platform.create_game(
            "esoloe",
            esoloe_game(
                [alice.player_id, bob.player_id],
                clock_seconds=2,
                increment_seconds=1,
                on_timeout=FORFEIT,
                abort_seconds=30,
            ),
        )
        game_id = created.status.game_id
        assert created.status.HasField("abort_at")
        assert not any(c.running for c in created.status.clocks)  # until a person moves
        moved = await first_move(alice, "esoloe", game_id)
        clocks = moved.status.clocks
        assert not moved.status.HasField("abort_at")
        assert clocks[0].remaining_ms == 2000  # no clock ran before this first move
        assert clocks[1].running
        assert clocks[1].remaining_ms == 2000
        deadline = clocks[1].deadline.ToMilliseconds()
        assert deadline == clocks[1].since.ToMilliseconds() + 2000
        updates = await asyncio.wait_for(watch_all(alice, "esoloe", game_id, 1), patience(10))
        last = updates[-1]
        assert last.envelope.move == "timeout"
        assert last.envelope.actor == 1
        assert last.envelope.table_event.outcome == FORFEIT
        assert last.envelope.table_event.deadline.ToMilliseconds() == deadline
        assert last.status.finished
        assert list(last.status.result.winners) == [0]
        assert last.status.result.detail["reason"] == "timeout"
        assert last.status.result.detail["seat"] == 1
        assert last.status.clocks[1].remaining_ms == 0
        await assert_refused(
            bob.game("esoloe").Play(
                common_pb2.PlayRequest(game_id=game_id, move="c12"), metadata=bob.metadata
            ),
            grpc.StatusCode.FAILED_PRECONDITION,
            "GAME_OVER",
        )


async def test_a_game_nobody_starts_is_aborted_and_vanishes(redis_url: str) -> None:
    async with Platform(redis_url, matchmakers=1) as platform:
        alice, bob = await logged_in(platform, "alice", "bob")
        lobby = alice.lobby
        tickets = []
        for player in (alice, bob):
            tickets.append(
                await player.lobby.FindMatch(
                    lobby_pb2.FindMatchRequest(
                        game="esoloe",
                        time_control=common_pb2.TimeControl(clock_seconds=60, abort_seconds=1),
                    ),
                    metadata=player.metadata,
                )
            )
        async for update in lobby.WatchTicket(
            lobby_pb2.WatchTicketRequest(ticket_id=tickets[0].ticket_id),
            metadata=alice.metadata,
            timeout=patience(10),
        ):
            if update.state == lobby_pb2.TICKET_STATE_MATCHED:
                game_id = update.game_id
                break
        started = await view(alice, "esoloe", game_id)
        assert started.status.time_control.abort_seconds == 1
        updates = await asyncio.wait_for(watch_all(alice, "esoloe", game_id), patience(10))
        last = updates[-1]
        assert last.envelope.move == "abort"
        assert not last.envelope.HasField("actor")
        assert last.envelope.table_event.kind == common_pb2.TableEvent.KIND_ABORTED
        assert last.status.finished
        assert list(last.status.result.winners) == []
        assert last.status.result.detail["reason"] == "aborted"
        listed = await lobby.ListGames(
            lobby_pb2.ListGamesRequest(live_only=True), metadata=alice.metadata
        )
        assert game_id not in [g.status.game_id for g in listed.games]
        redis = Redis.from_url(redis_url)
        try:
            assert await redis.zscore(keys.LIVE_GAMES, game_id) is None
            assert await redis.zscore(keys.deadlines("esoloe"), game_id) is None
        finally:
            await redis.aclose()


async def test_a_move_on_a_timed_game_is_one_script_call_that_also_indexes_its_deadline(
    redis_url: str,
) -> None:
    """The move, its log entry and the game's next deadline in the sweeps' index are written by
    one script: one round trip to Redis for the move (on a Redis Cluster, whose scripts touch one
    slot, the index is a second call). The index holds the deadline of the seat to move now,
    as of the move's version."""
    async with Platform(redis_url, sweep_seconds=600) as platform:
        (alice,) = await logged_in(platform, "alice")
        created = await platform.create_game(
            "esoloe", esoloe_game([alice.player_id] * 2, clock_seconds=60, on_timeout=FORFEIT)
        )
        game_id = created.status.game_id
        stub = alice.game("esoloe")
        redis = Redis.from_url(redis_url)
        try:
            for version, (seat, move) in enumerate([(0, "c12"), (1, "d12"), (0, "c23")], 1):
                before = await _script_calls(redis)
                reply = await stub.Play(
                    common_pb2.PlayRequest(game_id=game_id, move=move, seat=seat),
                    metadata=alice.metadata,
                )
                calls = await _script_calls(redis) - before
                assert reply.status.version == version
                deadline = reply.status.clocks[1 - seat].deadline.ToMilliseconds()
                assert await redis.zscore(keys.deadlines("esoloe"), game_id) == deadline
                indexed = await redis.hget(keys.deadline_versions("esoloe"), game_id)
                assert indexed == str(version).encode()
                if version > 1:  # the first move may read the game (this replica's hint)
                    assert calls == 1, calls
        finally:
            await redis.aclose()


async def _script_calls(redis: Redis) -> int:
    stats = await redis.info("commandstats")
    return sum(stats.get(f"cmdstat_{name}", {}).get("calls", 0) for name in ("evalsha", "eval"))


async def test_a_move_after_the_deadline_is_refused_and_the_timeout_applied_as_of_it(
    redis_url: str,
) -> None:
    # No sweep within the test: only the late move finds the deadline passed.
    async with Platform(redis_url, sweep_seconds=600) as platform:
        (alice,) = await logged_in(platform, "alice")
        created = await platform.create_game(
            "esoloe",
            esoloe_game([alice.player_id] * 2, clock_seconds=1, on_timeout=FORFEIT),
        )
        game_id = created.status.game_id
        deadline = created.status.clocks[0].deadline.ToMilliseconds()
        await asyncio.sleep(max(0.0, (deadline - now_ms()) / 1000) + 0.3)
        message = await assert_refused(
            alice.game("esoloe").Play(
                common_pb2.PlayRequest(game_id=game_id, move="c12", seat=0),
                metadata=alice.metadata,
            ),
            grpc.StatusCode.FAILED_PRECONDITION,
            "TIME_UP",
            "your time ran out",
            "forfeit",
        )
        assert "ms after the deadline" in message
        log = await entries(redis_url, game_id)
        assert [e.move for e in log] == ["", "timeout"]
        assert log[1].table_event["deadline"] == deadline
        assert log[1].time_ms > deadline
        table = await stored_table(redis_url, game_id)
        assert table["remaining"] == [0, 1000]  # charged up to the deadline, not the late move
        assert table["forfeited"] == 0


async def test_a_timeout_is_applied_by_a_service_that_was_down_at_the_deadline(
    redis_url: str,
) -> None:
    async with Platform(redis_url) as platform:
        (alice,) = await logged_in(platform, "alice")
        created = await platform.create_game(
            "esoloe",
            esoloe_game([alice.player_id] * 2, move_seconds=1, on_timeout=FORFEIT),
        )
        game_id = created.status.game_id
        deadline = created.status.clocks[0].deadline.ToMilliseconds()
        await alice.close()
    await asyncio.sleep(max(0.0, (deadline - now_ms()) / 1000) + 1.0)  # nothing runs
    async with Platform(redis_url) as platform:
        (bob,) = await logged_in(platform, "bob")
        updates = await asyncio.wait_for(
            watch_all(bob, "esoloe", game_id, public=True), patience(10)
        )
    last = updates[-1]
    assert last.envelope.move == "timeout"
    assert last.envelope.table_event.deadline.ToMilliseconds() == deadline
    assert last.envelope.time.ToMilliseconds() >= deadline + 1000  # late, as of the deadline
    assert list(last.status.result.winners) == [1]


async def test_a_move_racing_its_deadline_is_either_played_or_timed_out_never_both(
    redis_url: str,
) -> None:
    """Moves sent around the deadline (from 60 ms before to 60 ms after), while the sweep
    runs every 20 ms: each game's version 1 is the move or the timeout, as the player was
    told, and both outcomes happen."""
    async with Platform(redis_url, sweep_seconds=0.02) as platform:
        (alice,) = await logged_in(platform, "alice")
        rng = random.Random(7)

        async def race(offset_ms: int) -> str:
            created = await platform.create_game(
                "esoloe",
                esoloe_game([alice.player_id] * 2, move_seconds=1, on_timeout=FORFEIT),
            )
            game_id = created.status.game_id
            deadline = created.status.clocks[0].deadline.ToMilliseconds()
            await asyncio.sleep(max(0.0, (deadline + offset_ms - now_ms()) / 1000))
            refused = None
            try:
                await alice.game("esoloe").Play(
                    common_pb2.PlayRequest(game_id=game_id, move="c12", seat=0, expected_version=0),
                    metadata=alice.metadata,
                )
            except grpc.aio.AioRpcError as error:
                refused = error
            if refused is not None:
                assert error_info(refused)[0] in ("TIME_UP", "STALE_VERSION", "GAME_OVER")
            told = "played" if refused is None else "timed out"
            # A refused move: the timeout is in the log by now, or soon.
            log = await eventually(
                lambda: _longer_than_one(entries(redis_url, game_id)), 5, "version 1 is in the log"
            )
            assert [e.move for e in log[1:2]] == (["c12"] if told == "played" else ["timeout"])
            assert all(e.move != "c12" for e in log[2:])
            if told == "played":
                assert log[1].time_ms <= deadline
            return told

        # Rounds of 10 games at once, until both outcomes have happened: the moves are sent
        # from `spread` ms before the deadline to as long after it, and the spread doubles each
        # round (a busy machine's moves take longer to arrive than an idle one's).
        outcomes: list[str] = []
        spread = 60
        while len(outcomes) < 40 or set(outcomes) != {"played", "timed out"}:
            assert spread <= 1000, outcomes
            offsets = [rng.randint(-spread, spread) for _ in range(10)]
            outcomes += await asyncio.gather(*(race(o) for o in offsets))
            if len(outcomes) >= 40:
                spread *= 2


async def test_bot_seats_are_never_timed_out(redis_url: str) -> None:
    async with Platform(redis_url) as platform:  # no bot worker: the bots never move
        (alice,) = await logged_in(platform, "alice")
        reply = await alice.lobby.PlayAgainstBots(
            lobby_pb2.PlayAgainstBotsRequest(
                game="esoloe",
                watch_only=True,
                time_control=common_pb2.TimeControl(move_seconds=1, abort_seconds=1),
            ),
            metadata=alice.metadata,
        )
        game_id = reply.status.game_id
        assert not reply.status.HasField("abort_at")  # no person at the table to wait for
        assert reply.status.clocks[0].HasField("deadline")  # shown, never enforced
        deadline = reply.status.clocks[0].deadline.ToMilliseconds()
        await asyncio.sleep(max(0.0, (deadline - now_ms()) / 1000))
        await platform.sweeps_done(2)  # so at least one began after the deadline
        now = await view(alice, "esoloe", game_id)
        assert now.status.version == 0
        assert not now.status.finished


async def test_time_controls_are_checked_and_keep_matchmaking_pools_apart(
    redis_url: str,
) -> None:
    async with Platform(redis_url, games=("esoloe", "solo"), matchmakers=1) as platform:
        alice, bob, carol = await logged_in(platform, "alice", "bob", "carol")
        checks: list[tuple[str, dict[str, Any], tuple[str, ...]]] = [
            ("solo", {"move_seconds": 5, "on_timeout": FORFEIT}, ("forfeit", "bot")),
            ("esoloe", {"increment_seconds": 2}, ("increment_seconds needs clock_seconds",)),
            ("esoloe", {"move_seconds": 90_000}, ("move_seconds", "86400")),
            ("esoloe", {"move_seconds": 5, "bot_level": "godlike"}, ("godlike",)),
            # an enum number the protos do not know is refused, never read as the default
            ("solo", {"move_seconds": 5, "on_timeout": 99}, ("99", "may be: bot")),
            ("esoloe", {"move_seconds": 5, "on_timeout": -1}, ("-1", "forfeit, bot")),
        ]
        for game, tc, words in checks:
            await assert_refused(
                alice.lobby.FindMatch(
                    lobby_pb2.FindMatchRequest(
                        game=game, time_control=common_pb2.TimeControl(**tc)
                    ),
                    metadata=alice.metadata,
                ),
                grpc.StatusCode.INVALID_ARGUMENT,
                "INVALID_OPTIONS",
                *words,
            )
        await assert_refused(
            alice.lobby.FindMatch(
                lobby_pb2.FindMatchRequest(game="esoloe", bots=7),  # type: ignore[arg-type]
                metadata=alice.metadata,
            ),
            grpc.StatusCode.INVALID_ARGUMENT,
            "INVALID_ARGUMENT",
            "bots",
            "7",
        )
        blitz = common_pb2.TimeControl(clock_seconds=180, increment_seconds=2)
        first = await alice.lobby.FindMatch(
            lobby_pb2.FindMatchRequest(game="esoloe", time_control=blitz), metadata=alice.metadata
        )
        # Bob asks for the game's default time control: another pool.
        bobs = await bob.lobby.FindMatch(
            lobby_pb2.FindMatchRequest(game="esoloe"), metadata=bob.metadata
        )
        await platform.scans_done(2)  # so at least one looked at both tickets
        found = await alice.lobby.WatchTicket(
            lobby_pb2.WatchTicketRequest(ticket_id=first.ticket_id), metadata=alice.metadata
        ).read()
        assert found.state == lobby_pb2.TICKET_STATE_QUEUED
        # Carol asks for Alice's: they are matched, and the game has that time control.
        await carol.lobby.FindMatch(
            lobby_pb2.FindMatchRequest(game="esoloe", time_control=blitz), metadata=carol.metadata
        )
        async for update in alice.lobby.WatchTicket(
            lobby_pb2.WatchTicketRequest(ticket_id=first.ticket_id),
            metadata=alice.metadata,
            timeout=patience(10),
        ):
            if update.state == lobby_pb2.TICKET_STATE_MATCHED:
                break
        game = await view(alice, "esoloe", update.game_id)
        assert game.status.time_control.clock_seconds == 180
        assert {s.player_id for s in game.status.seats} == {alice.player_id, carol.player_id}
        # Untimed on request: no clocks at all.
        untimed = await alice.lobby.PlayAgainstBots(
            lobby_pb2.PlayAgainstBotsRequest(game="esoloe", time_control=common_pb2.TimeControl()),
            metadata=alice.metadata,
        )
        assert not untimed.status.HasField("time_control")
        assert not untimed.status.clocks
        # Leave the pools empty: the next test's matchmaker must not seat Bob.
        await bob.lobby.CancelTicket(
            lobby_pb2.CancelTicketRequest(ticket_id=bobs.ticket_id), metadata=bob.metadata
        )


async def test_a_retried_move_gets_its_first_answer_after_a_bot_took_the_seat_over(
    redis_url: str,
) -> None:
    """A player whose answer was lost retries the same move (same request id) after a timeout
    gave their seat to a bot: the retry is answered as the first try was, not NOT_YOUR_SEAT
    (the move was theirs and was played)."""
    async with Platform(redis_url, games=("esoloe",), bot_workers=1) as platform:
        bob, alice = await logged_in(platform, "bob", "alice")
        created = await platform.create_game(
            "esoloe",
            esoloe_game(
                [bob.player_id, alice.player_id],
                move_seconds=1,
                on_timeout=BOT,
                bot_level="random",
            ),
        )
        game_id = created.status.game_id
        stub = bob.game("esoloe")
        legal = await stub.LegalMoves(
            common_pb2.LegalMovesRequest(game_id=game_id), metadata=bob.metadata
        )
        request = common_pb2.PlayRequest(
            game_id=game_id, move=legal.moves[0], expected_version=legal.version, request_id="r1"
        )
        first = await stub.Play(request, metadata=bob.metadata)
        await first_move(alice, "esoloe", game_id)  # then Bob falls silent: his seat times out

        async def taken_over() -> bool:
            status = (await view(alice, "esoloe", game_id)).status
            return bool(status.seats[0].player_id.startswith("bot-"))

        await eventually(taken_over, 30, "Bob's seat taken over by a bot")
        again = await stub.Play(request, metadata=bob.metadata)
        assert again.status.version == first.status.version
        assert again.status.to_act == first.status.to_act
        await assert_refused(  # a new move is refused: the seat is the bot's now
            stub.Play(
                common_pb2.PlayRequest(game_id=game_id, move=legal.moves[0], request_id="r2"),
                metadata=bob.metadata,
            ),
            grpc.StatusCode.PERMISSION_DENIED,
            "NOT_YOUR_SEAT",
        )
        await resign_for_good(bob, "esoloe", game_id)
