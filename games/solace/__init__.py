"""Solace: a one-player patience with pyramids, where black pieces hide what is inside. Rules:
docs/rules/solace.md."""

from games.clock import TimeControl
from games.declaration import Game

GAME = Game(
    name="solace",
    title="Solace",
    package="games.solace",
    proto_package="tabletop.solace.v1",
    service="SolaceService",
    hidden=True,
    port=50053,
    # A patience: untimed; a deal nobody starts is aborted after ten minutes. A seat taken over
    # by a bot would leave nobody at the table, so a timeout can only end the game.
    time_control=TimeControl(abort_seconds=600),
    timeouts=("forfeit",),
)
