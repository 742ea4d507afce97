"""`python -m services.game GAME`: the game service of GAME (or of the GAME environment
variable), e.g. `python -m services.game solo`."""

import os
import sys

import games
from services.game.main import run_game_service

if __name__ == "__main__":
    name = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("GAME", "")
    if name not in games.names():
        sys.exit(f"usage: python -m services.game GAME (one of: {', '.join(games.names())})")
    run_game_service(name)
