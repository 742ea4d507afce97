"""The ZoxSo game service: `python -m services.zoxso` (port 50054 unless LISTEN is set)."""

from services.runtime.main import run_game_service

if __name__ == "__main__":
    run_game_service("zoxso")
