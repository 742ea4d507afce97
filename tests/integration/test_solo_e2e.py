"""Solo end to end through the gateway: a game created through the API and played to its end
with a spectator watching, a 4-seat round played by concurrent clients (one task per seat)
that starts with a jump-in race between two seats holding identical cards, and the two rules
editions side by side (an own jump-in and no late call in edition 2; a game stored under
edition 1 keeps its late call)."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterable

import grpc
import pytest

from client.session import Session
from tabletop.common.v1 import common_pb2
from tabletop.solo.v1 import solo_pb2
from tests.integration.test_solo_helpers import (
    close_all,
    create_with_setup,
    dealt_setup,
    legal,
    play,
    refused,
    solo_platform,
    view,
)
from tests.platform import Platform, logged_in, solo_progress, watch_all
from tests.timing import patience
from wire.errors import error_info

pytestmark = pytest.mark.integration
__all__ = ["solo_platform"]


def kinds(events: Iterable[solo_pb2.Event]) -> list[str]:
    return [str(event.WhichOneof("kind")) for event in events]


async def test_created_game_played_to_the_end_with_watchers(solo_platform: Platform) -> None:
    alice, bob, carol = await logged_in(solo_platform, "alice", "bob", "carol")
    players = [alice, bob]
    options = solo_pb2.Options(players=2, mode=solo_pb2.MODE_ROUNDS, rounds=1, start_points=100)
    created = await solo_platform.create_game(  # as the lobby seats two players
        "solo",
        solo_pb2.CreateGameRequest(options=options, players=[alice.player_id, bob.player_id]),
    )
    game_id = created.status.game_id
    assert created.status.version == 0
    assert created.status.rules_edition == 2  # new games get the current edition
    assert list(created.status.to_act) == [0]
    spectator = asyncio.create_task(watch_all(carol, "solo", game_id))
    seat_watch = asyncio.create_task(watch_all(bob, "solo", game_id))

    first = await view(alice, game_id)
    assert len(first.view.hand) == 8
    assert list(first.view.hand_sizes) == [8, 8]
    assert first.view.mode == solo_pb2.MODE_ROUNDS
    assert first.view.points == [100, 100]
    public = await view(carol, game_id)
    assert not public.HasField("seat")
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
        move = solo_progress(list(moves.moves), rng)
        reply = await play(player, game_id, move, expected_version=version)
        version += 1
        assert reply.status.version == version
        played.append(move)
        status = reply.status
        assert len(played) < 2000
    assert status.result.winners
    assert set(status.result.scores) == {0, 1}

    updates = await asyncio.wait_for(spectator, timeout=patience(10))
    assert [u.envelope.version for u in updates] == list(range(version + 1))
    assert [u.envelope.move for u in updates[1:]] == played
    assert updates[-1].status.finished
    everything = [e for u in updates for e in u.events]
    assert "drew_cards" not in kinds(everything)  # private to the drawer
    assert "solo" not in kinds(everything)  # edition 2 has no late call (S12)
    assert all(u.status.rules_edition == 2 for u in updates)
    assert kinds(updates[-1].events)[-2:] == ["round_ended", "game_ended"]
    ended = updates[-1].events[-2].round_ended
    assert not ended.hands[ended.winner].cards
    assert list(ended.points) == list(updates[-1].events[-1].game_ended.points)

    mine = await asyncio.wait_for(seat_watch, timeout=patience(10))
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
        move = solo_progress(list(moves.moves), rng)
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
    await asyncio.wait_for(asyncio.gather(*clients), timeout=patience(40))
    updates = await asyncio.wait_for(watcher, timeout=patience(10))
    final = updates[-1]
    assert final.status.finished
    # Every version once, in order; each accepted move appears exactly where it was accepted.
    assert [u.envelope.version for u in updates] == list(range(final.envelope.version + 1))
    for version, seat, move in log:
        assert (updates[version].envelope.actor, updates[version].envelope.move) == (seat, move)
    assert len(log) == final.envelope.version - 2
    assert kinds(list(final.events))[-2:] == ["round_ended", "game_ended"]
    await close_all(sessions)


async def test_own_jump_in_and_no_late_call_in_edition_2_but_a_late_call_in_edition_1(
    solo_platform: Platform, redis_url: str
) -> None:
    """The same deal as a game of each edition. Seat 0 plays an r7 without the call, keeping
    the other r7 and one more card; then it jumps in on its own card (edition 2 only, S11)
    leaving one card without `!`, and can do nothing more about it: seat 1's next card costs
    it 2 (S12). Under edition 1 (a game stored before edition 2) seat 0 has no jump-in on its
    own card; once its play leaves one card without the call, it may call late with `solo`,
    shown publicly as a seat that may act, and is not penalised."""
    sessions = await logged_in(solo_platform, "ann", "ben", "cat", "spy")
    seats, spectator = sessions[:3], sessions[3]
    players = [s.player_id for s in seats]
    setup = {
        "hands": [["r7", "r7", "g1"], ["r2", "b3", "b4"], ["y1", "y2", "y3"]],
        "draw_pile": ["g5", "g6", "g7", "g8"],
        "discard": ["r5"],
    }
    new = await create_with_setup(redis_url, players, setup, {"mode": "rounds", "rounds": 1})
    first = await play(seats[0], new, "play r7")
    assert first.status.rules_edition == 2
    assert list(first.status.to_act) == [1]  # seat 0's own jump-in is secret (S14)
    assert list((await legal(seats[0], new)).moves) == ["play r7", "play r7!"]  # leaves one
    jumped = await play(seats[0], new, "play r7")
    assert (jumped.events[0].played.seat, jumped.events[0].played.jump_in) == (0, True)
    public = (await view(spectator, new, public=True)).view
    assert (public.to_move, public.top_played_by, public.hand_sizes[0]) == (1, 0, 1)
    assert public.HasField("top_played_by")
    assert public.HasField("late_call_seat")
    assert public.late_call_seat == 0  # it forgot the call: everyone saw it
    assert not (await legal(seats[0], new)).moves
    code, reason, _, message = await refused(play(seats[0], new, "solo"))
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED_MOVE")
    assert "`!`" in message
    penalised = await play(seats[1], new, "play r2")
    assert kinds(penalised.events) == ["played", "drew"]
    assert (penalised.events[1].drew.seat, penalised.events[1].drew.count) == (0, 2)
    assert penalised.events[1].drew.reason == solo_pb2.DRAW_REASON_PENALTY

    old = await create_with_setup(
        redis_url, players, setup, {"mode": "rounds", "rounds": 1}, edition=1
    )
    first = await play(seats[0], old, "play r7")
    assert first.status.rules_edition == 1
    assert not (await legal(seats[0], old)).moves  # no jump-in on one's own card
    code, reason, _, _ = await refused(play(seats[0], old, "play r7"))
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "ILLEGAL_MOVE")
    await play(seats[1], old, "draw")  # g5: not playable on r7, seat 2's turn
    await play(seats[2], old, "draw")  # g6: nor for seat 2; seat 0's turn
    forgot = await play(seats[0], old, "play r7")  # leaves g1 and no call
    assert list(forgot.status.to_act) == [0, 1]  # the late call is public in edition 1
    assert list((await legal(seats[0], old)).moves) == ["solo"]
    late = await play(seats[0], old, "solo")
    assert kinds(late.events) == ["solo"]
    assert late.events[0].solo.seat == 0
    after = await play(seats[1], old, "play r2")
    assert kinds(after.events) == ["played"]  # called in time: no penalty
    assert (await view(spectator, old, public=True)).view.hand_sizes[0] == 1
    await close_all(sessions)


async def test_round_one_starts_with_round_started_and_dealt_like_later_rounds(
    solo_platform: Platform,
) -> None:
    """A client that builds its state from events needs no special case for the first round:
    version 0 carries RoundStarted (public) and each seat's own Dealt (to that seat only)."""
    alice, bob, carol = await logged_in(solo_platform, "alice", "bob", "carol")
    request = solo_pb2.CreateGameRequest(players=[alice.player_id, bob.player_id])
    request.options.players = 2
    game_id = (await solo_platform.create_game("solo", request)).status.game_id

    async def version_0(session: Session, **fields: bool) -> list[solo_pb2.Event]:
        stream = session.game("solo").Watch(
            common_pb2.WatchRequest(game_id=game_id, from_version=0, **fields),
            metadata=session.metadata,
        )
        first = await stream.read()
        stream.cancel()
        assert first.envelope.version == 0
        return list(first.events)

    for seat, session in enumerate([alice, bob]):
        events = await version_0(session)
        assert kinds(events) == ["round_started", "dealt"]
        assert events[0].round_started.round == 1
        assert events[1].dealt.seat == seat
        view = await session.game("solo").GetView(
            common_pb2.GetViewRequest(game_id=game_id), metadata=session.metadata
        )
        assert sorted(events[1].dealt.cards) == sorted(view.view.hand)
        assert events[0].round_started.top == view.view.top
    for spectator in [await version_0(carol), await version_0(alice, public=True)]:
        assert kinds(spectator) == ["round_started"]
