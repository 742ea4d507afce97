"""The e-SOLO-e game service: `python -m services.esoloe` (port 50051 unless LISTEN is set)."""

from services.runtime.main import run_game_service

if __name__ == "__main__":
    run_game_service("esoloe")
