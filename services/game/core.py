"""A game, played: the game service's logic, free of any transport.

`GameCore` answers every call of a game's API (CreateGame, GetView, LegalMoves, Play, Resign,
StopGame, TakeSeat, Watch; PassJumpIn in a game played out of turn) given the request and the
`Caller`; the gRPC servicer and the relay links both call it, and neither it nor they fake the
other's context. It loads the game from Redis, asks the engine, commits the result with a
version check, and builds the answer. Everything game-specific sits in the engine (rules) and in
the game's adapter (protobuf <-> engine values).
The authoritative state is in Redis: any replica serves any game, two replicas can serve one
game interleaved, and killing one loses nothing (a replica only keeps version-checked hints, see
`Hints`).

The caller is who the gateway says it is; the core maps the player to its seat, and cuts every
view and event to that seat.
"""

from __future__ import annotations

from services.game.opening import Opening, new_game_id
from services.game.playing import Playing
from services.game.state import status_of
from services.game.watching import Watching

__all__ = ["GameCore", "new_game_id", "status_of"]


class GameCore(Opening, Playing, Watching):
    """Every call of one game's API, on the games stored in Redis: opening a game
    (services/game/opening.py), playing it (playing.py), its deadlines and seats taken over
    (clocks.py), watching it (watching.py), on the reading and writing they share (base.py)."""
