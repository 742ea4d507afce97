"""`make bench`: prints the platform's speed figures."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable

from bench import accounts, engines, gateway, solace, solo, stack, watchers, zoxso

SECTIONS: list[tuple[str, Callable[[], list[str]]]] = [
    ("engines (random legal moves, no I/O)", engines.run),
    ("Solo next to RLCard's UNO (engine only)", solo.run),
    ("Solace (engine only)", solace.run),
    ("ZoxSo (engine only)", zoxso.run),
    ("e-SOLO-e Play through the gateway (separate processes, local redis-server)", gateway.run),
    ("the whole stack: bots and matchmaking (separate processes)", stack.run),
    (
        "watchers: Watch streams on one replica through one gateway (separate processes)",
        watchers.run,
    ),
    (
        "accounts: logins and refreshes through the gateway (PostgreSQL, separate processes)",
        accounts.run,
    ),
]


def main() -> int:
    logging.disable(logging.INFO)
    for title, run in SECTIONS:
        print(f"== {title}", flush=True)
        for line in run():
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
