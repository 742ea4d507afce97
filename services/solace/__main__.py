"""The Solace game service: `python -m services.solace` (port 50053 unless LISTEN is set)."""

from services.runtime.main import run_game_service

if __name__ == "__main__":
    run_game_service("solace")
