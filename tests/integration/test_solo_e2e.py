"""Solo end to end through the gateway: a game created through the API and played to its end
with a spectator watching, and a 4-seat round played by concurrent clients (one task per seat)
that starts with a jump-in race between two seats holding identical cards."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterable

import grpc
import pytest

from client.session import Session
from services.runtime.errors import error_info
from tabletop.common.v1 import common_pb2
from tabletop.solo.v1 import solo_pb2
from tests.integration.test_solo_helpers import (
    close_all,
    create_with_setup,
    dealt_setup,
    legal,
    play,
    solo_platform,
    view,
)
from tests.platform import Platform, logged_in, watch_all

pytestmark = pytest.mark.integration
__all__ = ["solo_platform"]


def choose(moves: list[str], rng: random.Random) -> str:
    """A random legal move that makes progress: calls first, then plays, then the rest."""
    if "solo" in moves:
        return "solo"
    plays = [m for m in moves if m.startswith("play")]
    called = [m for m in plays if m.endswith("!")]
    return rng.choice(called or plays or moves)


def kinds(events: Iterable[solo_pb2.Event]) -> list[str]:
    return [str(event.WhichOneof("kind")) for event in events]


async def test_created_game_played_to_the_end_with_watchers(solo_platform: Platform) -> None:
    alice, bob, carol = await logged_in(solo_platform, "alice", "bob", "carol")
    players = [alice, bob]
    options = solo_pb2.Options(players=2, mode=solo_pb2.MODE_ROUNDS, rounds=1, start_points=100)
    created = await alice.game("solo").CreateGame(
        solo_pb2.CreateGameRequest(options=options, players=[alice.player_id, bob.player_id]),
        metadata=alice.metadata,
    )
    game_id = created.status.game_id
    assert created.status.version == 0
    assert list(created.status.to_act) == [0]
    spectator = asyncio.create_task(watch_all(carol, "solo", game_id))
    seat_watch = asyncio.create_task(watch_all(bob, "solo", game_id))

    first = await view(alice, game_id)
    assert len(first.view.hand) == 8
    assert list(first.view.hand_sizes) == [8, 8]
    assert first.view.mode == solo_pb2.MODE_ROUNDS
    assert first.view.points == [100, 100]
    public = await view(carol, game_id)
    assert public.seat == -1
    assert not public.view.hand

    rng = random.Random(5)
    played: list[str] = []
    version = 0
    status = created.status
    while not status.finished:
        seat = status.to_act[0]
        player = players[seat]
        moves = await legal(player, game_id)
        assert moves.version == version
        move = choose(list(moves.moves), rng)
        reply = await play(player, game_id, move, expected_version=version)
        version += 1
        assert reply.status.version == version
        played.append(move)
        status = reply.status
        assert len(played) < 2000
    assert status.result.winners
    assert set(status.result.scores) == {0, 1}

    updates = await asyncio.wait_for(spectator, timeout=10)
    assert [u.envelope.version for u in updates] == list(range(version + 1))
    assert [u.envelope.move for u in updates[1:]] == played
    assert updates[-1].status.finished
    everything = [e for u in updates for e in u.events]
    assert "drew_cards" not in kinds(everything)  # private to the drawer
    assert kinds(updates[-1].events)[-2:] == ["round_ended", "game_ended"]
    ended = updates[-1].events[-2].round_ended
    assert not ended.hands[ended.winner].cards
    assert list(ended.points) == list(updates[-1].events[-1].game_ended.points)

    mine = await asyncio.wait_for(seat_watch, timeout=10)
    assert [u.envelope.version for u in mine] == list(range(version + 1))
    for update in mine:
        for event in update.events:
            if event.HasField("drew_cards"):
                assert event.drew_cards.seat == 1
    # Resuming mid-game: the rest, with no gap and no duplicate.
    resumed = await watch_all(carol, "solo", game_id, from_version=3)
    assert [u.envelope.version for u in resumed] == list(range(3, version + 1))
    await close_all([alice, bob, carol])


async def _seat_client(
    session: Session, game_id: str, seat: int, rng: random.Random, log: list[tuple[int, int, str]]
) -> int:
    """Watch the game as `seat` and play its legal moves whenever it has some, until the game
    ends. Returns how many of its moves lost a race (each refused with ABORTED, STALE_VERSION
    and a newer version)."""
    stub = session.game("solo")
    refusals: list[tuple[int, grpc.aio.AioRpcError]] = []
    async for update in stub.Watch(
        common_pb2.WatchRequest(game_id=game_id, from_version=0), metadata=session.metadata
    ):
        if update.status.finished:
            break
        moves = await legal(session, game_id)
        if moves.version != update.envelope.version or not moves.moves:
            continue  # a newer update is on its way, or nothing to do
        move = choose(list(moves.moves), rng)
        try:
            reply = await play(session, game_id, move, expected_version=moves.version)
        except grpc.aio.AioRpcError as error:
            refusals.append((moves.version, error))
            continue
        log.append((reply.status.version, seat, move))
    for version, refusal in refusals:
        reason, metadata = error_info(refusal)
        assert (refusal.code(), reason) == (grpc.StatusCode.ABORTED, "STALE_VERSION")
        assert int(metadata["version"]) > version
    return len(refusals)


async def test_concurrent_four_seat_round_with_jump_in_race(
    solo_platform: Platform, redis_url: str
) -> None:
    sessions = await logged_in(solo_platform, "ann", "ben", "cat", "dan", "eve")
    seats, spectator = sessions[:4], sessions[4]
    # Seats 0, 2 and 3 hold a Wild; seat 0 moves first.
    setup = dealt_setup([["W"], [], ["W"], ["W"]], "g7", random.Random(11))
    game_id = await create_with_setup(
        redis_url,
        [s.player_id for s in seats],
        setup,
        options={"mode": "rounds", "rounds": 1},
    )
    watcher = asyncio.create_task(watch_all(spectator, "solo", game_id))

    first = await play(seats[0], game_id, "play W:r", expected_version=0)
    assert first.status.version == 1
    # The status shows only the seat to move: a chance to jump in would reveal a card (S14).
    assert list(first.status.to_act) == [1]
    # Seats 2 and 3 both jump in with their identical Wild at version 1: exactly one wins.
    assert "play W:b" in (await legal(seats[2], game_id)).moves
    assert "play W:y" in (await legal(seats[3], game_id)).moves
    outcomes = await asyncio.gather(
        play(seats[2], game_id, "play W:b", expected_version=1),
        play(seats[3], game_id, "play W:y", expected_version=1),
        return_exceptions=True,
    )
    won = [o for o in outcomes if isinstance(o, solo_pb2.PlayResponse)]
    lost = [o for o in outcomes if isinstance(o, grpc.aio.AioRpcError)]
    assert len(won) == 1
    assert len(lost) == 1
    assert lost[0].code() == grpc.StatusCode.ABORTED
    reason, metadata = error_info(lost[0])
    assert reason == "STALE_VERSION"
    assert metadata["version"] == "2"
    winner = 2 if isinstance(outcomes[0], solo_pb2.PlayResponse) else 3
    assert f"seat {winner} played 'play W:" in (lost[0].details() or "")  # what changed
    jump = won[0].events[0].played
    assert (jump.seat, jump.card, jump.jump_in) == (winner, "W", True)
    after = await view(spectator, game_id)
    assert after.status.version == 2
    assert after.view.top_played_by == winner
    assert after.view.to_move == (winner + 1) % 4  # play continues after the jumper (S11)
    assert after.view.hand_sizes[winner] == 7
    assert after.view.hand_sizes[5 - winner] == 8  # the loser kept its Wild

    # Now every seat plays concurrently until the round (and so the game) ends.
    log: list[tuple[int, int, str]] = []
    clients = [
        _seat_client(session, game_id, seat, random.Random(seat), log)
        for seat, session in enumerate(seats)
    ]
    await asyncio.wait_for(asyncio.gather(*clients), timeout=40)
    updates = await asyncio.wait_for(watcher, timeout=10)
    final = updates[-1]
    assert final.status.finished
    # Every version once, in order; each accepted move appears exactly where it was accepted.
    assert [u.envelope.version for u in updates] == list(range(final.envelope.version + 1))
    for version, seat, move in log:
        assert (updates[version].envelope.actor, updates[version].envelope.move) == (seat, move)
    assert len(log) == final.envelope.version - 2
    assert kinds(list(final.events))[-2:] == ["round_ended", "game_ended"]
    await close_all(sessions)
