"""`make bench`: prints the platform's speed figures."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable

from bench import (
    accounts,
    archive,
    engines,
    gateway,
    sized,
    solace,
    solo,
    stack,
    versus,
    watchers,
    zoxso,
)

SECONDS = sized(3.0, 0.2)
SECTIONS: list[tuple[str, Callable[[], list[str]]]] = [
    ("engines (random legal moves, no I/O)", lambda: engines.run(SECONDS)),
    ("Solo next to RLCard's UNO (engine only)", lambda: solo.run(SECONDS)),
    ("Solace (engine only)", lambda: solace.run(SECONDS, int(sized(500, 5)))),
    ("ZoxSo (engine only)", lambda: zoxso.run(SECONDS)),
    (
        "e-SOLO-e Play through the gateway (separate processes, local redis-server)",
        lambda: gateway.run(sized(5.0, 0.5)),
    ),
    (
        "side by side with boardgame.io 0.50 (15- and 200-move games, 1 and 64 at once)",
        versus.run,
    ),
    ("the whole stack: bots and matchmaking (separate processes)", stack.run),
    (
        "watchers: Watch streams on one replica through one gateway (separate processes)",
        lambda: watchers.run(int(sized(1000, 10)), int(sized(10, 2))),
    ),
    (
        "accounts: logins and refreshes through the gateway (PostgreSQL, separate processes)",
        accounts.run,
    ),
    ("the archive: finished games archived (local Redis and PostgreSQL)", archive.run),
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
