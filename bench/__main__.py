"""`make bench`: prints the platform's speed figures."""

from __future__ import annotations

import logging
import sys

from bench import engines, gateway


def main() -> int:
    logging.disable(logging.INFO)
    print("== engines (random legal moves, no I/O)")
    for line in engines.run():
        print(line, flush=True)
    print("== e-SOLO-e Play through the gateway (separate processes, local redis-server)")
    for line in gateway.run():
        print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
