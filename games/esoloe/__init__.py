"""e-SOLO-e: two players stack symbol cubes on a 1x5 board; four in a row seen from five angles.
Rules: docs/rules/esoloe.md."""

from games.clock import TimeControl
from games.declaration import Game

GAME = Game(
    name="esoloe",
    title="e-SOLO-e",
    package="games.esoloe",
    proto_package="tabletop.esoloe.v1",
    service="EsoloeService",
    port=50051,
    time_control=TimeControl(clock_seconds=300, increment_seconds=5, abort_seconds=120),
)
