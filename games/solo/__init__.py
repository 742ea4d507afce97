"""Solo: an UNO-like card game for 2-10 with swaps, draw stacks and out-of-turn jump-ins. Rules:
docs/rules/solo.md."""

from games.clock import TimeControl
from games.declaration import Game

GAME = Game(
    name="solo",
    title="Solo",
    package="games.solo",
    proto_package="tabletop.solo.v1",
    service="SoloService",
    option_limits=(("start_points", 1000), ("rounds", 50)),
    unattended_limits=(("start_points", 200), ("rounds", 5)),
    hidden=True,
    port=50052,
    out_of_turn=True,  # jump-ins (S11)
    # Bots act 2.5 to 3.1 s after each move at a table with a person: a person who answers a
    # jump-in chance within 1.5 s wins the race (tests/integration/test_jump_in_race.py).
    jump_in_window_ms=2500,
    # One player's forfeit would end the game for all (a resignation does): bots take over.
    time_control=TimeControl(move_seconds=30, on_timeout="bot", abort_seconds=120),
    timeouts=("bot",),
)
