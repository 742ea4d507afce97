"""`make test-busy`: a command (the test suite) run while other processes burn the CPUs, as on a
shared CI machine. Each burner is a process spinning on one CPU; they start before the command
and are killed when it ends, however it ends.

    python -m tests.busy [--burners N] COMMAND...   (default: 2 burners, BURNERS)
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

SPIN = "while True: pass"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.busy", description=__doc__)
    parser.add_argument("--burners", type=int, default=int(os.environ.get("BURNERS", "2")))
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    if not args.command:
        parser.error("give the command to run")
    burners = [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(args.burners)]
    print(f"busy: {len(burners)} CPU burners running", flush=True)
    try:
        return subprocess.call(args.command)
    except KeyboardInterrupt:
        return 130
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()


if __name__ == "__main__":
    sys.exit(main())
