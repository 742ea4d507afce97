"""The Node.js example client (examples/node/play.js, the one docs/api.md walks through) plays
whole games against bots through the real gateway, written from the protos alone."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
from pathlib import Path

import pytest

from games.clock import MAX_JUMP_IN_WINDOW_MS
from tests.platform import Platform
from tests.timing import patience

pytestmark = pytest.mark.integration

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "node"


async def play_node(
    platform: Platform, game: str, *args: str, env: dict[str, str] | None = None
) -> str:
    """Run the example against the platform's gateway (`env`: more of its environment)."""
    node = shutil.which("node")
    assert node is not None, "node is not installed: the Node.js example cannot run"
    assert (EXAMPLE / "node_modules").is_dir(), "run `make test-tools` (npm ci in examples/node)"
    process = await asyncio.create_subprocess_exec(
        node,
        str(EXAMPLE / "play.js"),
        game,
        *args,
        env={**os.environ, "TABLETOP_GATEWAY": platform.target, **(env or {})},
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(process.communicate(), timeout=patience(120))
    assert process.returncode == 0, (out + err).decode()
    return out.decode()


@pytest.mark.parametrize(
    ("game", "args"),
    [("esoloe", ()), ("solo", ("--options", '{"players": 3, "mode": "MODE_ROUNDS", "rounds": 1}'))],
)
async def test_the_node_example_plays_a_whole_game(
    redis_url: str, game: str, args: tuple[str, ...]
) -> None:
    """Its bot worker is as deployed (no cap on a table's jump-in window): the example's Solo
    table asks for none (0), or the bots would wait 2.5 s after each move."""
    async with Platform(redis_url, games=(game,)) as platform:
        await platform.start_bot_worker("as-deployed", max_jump_in_window_ms=MAX_JUMP_IN_WINDOW_MS)
        out = await play_node(platform, game, *args)
    assert f"{game} game {game}-" in out
    assert "game over after" in out
    played = re.search(r"I played (\d+) moves", out)
    assert played is not None, out
    assert int(played[1]) > 0, out
