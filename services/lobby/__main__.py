"""`python -m services.lobby`: the lobby service (see services/lobby/main.py)."""

from services.lobby.main import run_lobby_service

if __name__ == "__main__":
    run_lobby_service()
