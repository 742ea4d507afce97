"""ZoxSo: a two-player abstract on Pearls and Stones with flipping pieces. Rules:
docs/rules/zoxso.md."""

from games.clock import TimeControl
from games.declaration import Game

GAME = Game(
    name="zoxso",
    title="ZoxSo",
    package="games.zoxso",
    proto_package="tabletop.zoxso.v1",
    service="ZoxsoService",
    option_limits=(("max_plies", 2000),),
    unattended_limits=(("max_plies", 400),),
    port=50054,
    time_control=TimeControl(clock_seconds=600, increment_seconds=5, abort_seconds=120),
)
