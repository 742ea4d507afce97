"""The partition suite (suite.py) as tests: one run of each shape on the prod topology, with
partitions of PARTITION_SECONDS (default 12: longer than the Sentinels' 5 s down-after, so the
far side of a partition fails over), and the client's way to a new primary. `make partition`
runs them (as root: network namespaces); `python -m tests.partition.suite` runs more, longer.
"""

from __future__ import annotations

import asyncio
import os
import random
import tempfile
import time
from pathlib import Path
from typing import Any

import grpc
import pytest

from bench.soak import RETRYABLE
from client.session import Session
from tabletop.common.v1 import common_pb2
from tabletop.esoloe.v1 import esoloe_pb2
from tests.partition import net, suite
from tests.timing import patience

pytestmark = pytest.mark.partition

SECONDS = float(os.environ.get("PARTITION_SECONDS", "12"))


@pytest.fixture(autouse=True)
def _root() -> None:
    problem = net.usable()
    if problem:
        pytest.fail(f"the partition suite cannot run here: {problem}")


@pytest.mark.parametrize("shape", suite.EVERY)
def test_no_acknowledged_move_is_lost_in_a_partition(shape: str) -> None:
    """One run of each shape; the shapes that watch what happens do their faults once (the
    partition moved during a failover: with the leader in the promoted replica's pod)."""
    result = suite.run(shape, "sidecar", SECONDS, seed=1, rounds=1)
    print(result.line())
    print("steps: " + "; ".join(result.steps))
    print("acknowledged: " + result.rates())
    assert result.acknowledged > 0, "nothing was played: the run shows nothing"
    assert not result.lost, result.lost[:10]
    assert not result.twice, result.twice[:10]
    assert not result.problems, result.problems[:10]


FOLLOW_BOUND = 10.0
"""Seconds from a failover (the Sentinels' majority names a new primary) to a move played on it,
for a player whose service asks, first in its list, a Sentinel on the far side: the Sentinels'
answer timeout (0.5 s) and the follower's period (1 s) and the player's retry backoff, with room.
Scaled by the tests' PATIENCE (a busy machine's processes answer late)."""


def test_a_player_reaches_the_new_primary_though_the_first_sentinel_is_cut_off() -> None:
    """The primary and the Sentinel listed first in REDIS_SENTINELS (its own, in its pod) are cut
    off with one app host; the other app host's game service, on the majority side, asks that
    Sentinel first. After the failover its moves are played on the new primary within
    FOLLOW_BOUND, and none is lost."""
    world = suite.World(Path(tempfile.mkdtemp(prefix="tabletop-partition-")), "sidecar")
    try:
        world.start()
        roles = world.roles()
        # The primary's Sentinel first in everyone's list.
        order = [roles.primary, *roles.replicas]
        world.redis.sentinels = ",".join(f"{h.address}:{suite.SENTINEL_PORT}" for h in order)
        world.stop_apps()
        world.start_apps()
        world.wait_apps()
        elapsed = asyncio.run(_follow(world, roles))
        print(f"a move played on the new primary {elapsed:.1f} s after the failover")
        assert elapsed < patience(FOLLOW_BOUND)
    finally:
        world.stop()


async def _follow(world: suite.World, roles: suite.Roles) -> float:
    player = Session(world.targets[1])  # the app host on the majority side
    await player.login("far")
    stub = player.game("esoloe")
    create = esoloe_pb2.CreateGameRequest(players=[player.player_id] * 2)
    game_id = (await _retry(stub.CreateGame, create, player)).status.game_id
    world.net.partition([[roles.primary, world.apps[0]], [*roles.replicas, world.apps[1]]])
    failed_over = await asyncio.to_thread(_failed_over, world, roles.primary.address)
    rng = random.Random(3)
    seat = 0
    while True:
        legal = await _retry(
            stub.LegalMoves, common_pb2.LegalMovesRequest(game_id=game_id, seat=seat), player
        )
        request = common_pb2.PlayRequest(
            game_id=game_id, move=rng.choice(list(legal.moves)), seat=seat,
            expected_version=legal.version, request_id=f"far-{legal.version}",
        )  # fmt: skip
        await _retry(stub.Play, request, player)
        seat = 1 - seat
        if time.monotonic() > failed_over:
            elapsed = time.monotonic() - failed_over
            break
    world.net.heal()
    await player.close()
    return elapsed


def _failed_over(world: suite.World, old: str) -> float:
    """Wait for a majority of the Sentinels to name another primary than `old`; when."""
    deadline = time.monotonic() + patience(60)
    while time.monotonic() < deadline:
        named = []
        for address in world.redis.sentinel_addresses:
            try:
                with world.redis.sentinel(address, timeout=0.5) as client:
                    found = client.sentinel_get_master_addr_by_name(world.redis.master)
                named.append(found[0] if found else None)
            except Exception:
                named.append(None)
        if sum(1 for n in named if n not in (None, old)) >= 2:
            return time.monotonic()
        time.sleep(0.1)
    raise AssertionError("no failover")


async def _retry(method: Any, request: Any, player: Session) -> Any:
    """A call tried again while it is refused as retryable (a minute at most)."""
    deadline = time.monotonic() + patience(60)
    while True:
        try:
            return await method(request, metadata=player.metadata, timeout=5)
        except grpc.aio.AioRpcError as error:
            if error.code() not in RETRYABLE or time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.1)
