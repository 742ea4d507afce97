"""The Solo game service: `python -m services.solo` (port 50052 unless LISTEN is set)."""

from services.runtime.main import run_game_service

if __name__ == "__main__":
    run_game_service("solo")
