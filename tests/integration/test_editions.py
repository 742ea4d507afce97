"""A game stored by the code from before rules editions, played on after the upgrade: it keeps
the rules it started with (edition 1), and the soak's audit (replay == snapshot) still holds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import games
from bench.soak import Joined, Move, audit
from runtime.redis import connect_redis
from services.game.core import new_game_id, status_of
from services.game.store import GameStore
from tabletop.common.v1 import common_pb2
from tests.platform import Platform, logged_in
from wire.records import GameMeta

pytestmark = pytest.mark.integration

FIXTURE = Path(__file__).parents[1] / "fixtures" / "before_editions.json"


async def test_a_game_from_before_the_upgrade_finishes_under_its_rules_and_audits(
    redis_url: str,
) -> None:
    stored = json.loads(FIXTURE.read_text())["games"]["esoloe"]
    rules = games.rules("esoloe")
    async with Platform(redis_url) as platform:
        (player,) = await logged_in(platform, "upgrader")
        game_id = new_game_id("esoloe")
        meta = {**stored["meta"], "seats": [player.player_id] * 2}  # no "edition": as before
        assert "edition" not in meta
        assert "edition" not in json.loads(stored["start"])
        redis = connect_redis(redis_url)
        try:
            store = GameStore(redis)
            state = rules.deserialize(stored["start"].encode())
            await store.create(
                game_id,
                stored["start"].encode(),
                GameMeta.from_json(meta),
                [],
                status_of(state),
                table=None,
                time_ms=0,
                listing=store.listing("esoloe", game_id),
            )
        finally:
            await redis.aclose()
        stub = player.game("esoloe")
        view = await stub.GetView(
            common_pb2.GetViewRequest(game_id=game_id, public=True), metadata=player.metadata
        )
        assert view.status.rules_edition == 1
        # The fixture's moves, then d15: a re-cover of the upper row's 1-1-1, which won before
        # the revised E8 (and does not in a new game, edition 2).
        joined = [Joined("esoloe", game_id, seat) for seat in (0, 1)]
        for version, (seat, move) in enumerate([*stored["moves"], [0, "d15"]]):
            given = f"upgrade-{version}"
            reply = await stub.Play(
                common_pb2.PlayRequest(
                    game_id=game_id, move=move, expected_version=version, request_id=given,
                    seat=seat,
                ),
                metadata=player.metadata,
            )  # fmt: skip
            joined[seat].accepted.append(
                Move(reply.status.version, seat, move, f"{player.player_id}:{given}")
            )
        assert reply.status.finished
        assert list(reply.status.result.winners) == [0]
        assert reply.status.rules_edition == 1
        report = await audit(redis_url, False, joined)
        await player.close()
    assert report.games == 1
    assert report.problems == []
    assert report.finished == 1
