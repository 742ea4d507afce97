"""Every process a test starts is gone when the test ends, whatever became of the test.

The test run marks its environment (RUN_MARK, a token of its own); every process started from
it inherits the mark, however it was started (subprocess, asyncio, a supervisor's children,
redis-server), and keeps it after its parent is gone. After each test, the processes with the
mark that were not there before it must be gone (given a moment to finish stopping); any left
are stopped (SIGTERM, then SIGKILL) and the test fails, naming them. The run checks the same
once more at its end, after the session's own fixtures (its Redis) are stopped.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import subprocess
import time
from collections.abc import Iterable, Iterator
from typing import Any

RUN_MARK = "TABLETOP_TEST_RUN"


def mark_this_run() -> None:
    """Give this run's environment its mark (kept when a run is started from another)."""
    os.environ[RUN_MARK] = secrets.token_hex(8)


LASTING = ("multiprocessing.resource_tracker", "multiprocessing.forkserver")
"""Helpers Python's multiprocessing starts once for the test process itself (a bot worker's
process pool needs them) and ends when it ends: they are not a test's to stop."""


def ours() -> dict[int, str]:
    """The processes of this run that are running now (not this one, nor its LASTING
    helpers), with their command lines. A process that has exited, even if not yet reaped,
    has no environment and is not listed."""
    needle = f"{RUN_MARK}={os.environ[RUN_MARK]}".encode()
    found = {}
    me = os.getpid()
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as environ:
                if needle not in environ.read().split(b"\0"):
                    continue
            with open(f"/proc/{name}/cmdline", "rb") as cmdline:
                command = cmdline.read().replace(b"\0", b" ").decode(errors="replace").strip()
            if any(helper in command for helper in LASTING) and _parent(name) == me:
                continue
            if command.startswith("postgres: "):  # a PostgreSQL server's own worker (a
                continue  # connection's, autovacuum's): it ends with its server, which is listed
        except OSError:  # gone meanwhile, or not ours to read
            continue
        found[int(name)] = command
    return found


def _parent(pid: str) -> int:
    with open(f"/proc/{pid}/stat", "rb") as stat:
        return int(stat.read().rsplit(b")", 1)[1].split()[1])


def still_running(pids: Iterable[int]) -> dict[int, str]:
    now = ours()
    return {pid: now[pid] for pid in pids if pid in now}


def wait_gone(pids: Iterable[int], seconds: float) -> dict[int, str]:
    """Wait up to `seconds` for the processes to end; those still running."""
    deadline = time.monotonic() + seconds
    left = still_running(pids)
    while left and time.monotonic() < deadline:
        time.sleep(0.1)
        left = still_running(left)
    return left


def stop(pids: Iterable[int], seconds: float = 5.0) -> None:
    """SIGTERM, then SIGKILL after `seconds` for any that did not end."""
    for pid in pids:
        _signal(pid, signal.SIGTERM)
    for pid in wait_gone(pids, seconds):
        _signal(pid, signal.SIGKILL)


@contextlib.contextmanager
def spawned(command: list[str], **popen: Any) -> Iterator[subprocess.Popen[bytes]]:
    """A process for the length of a `with` block, in a process group of its own: whatever
    happens in the block, it and every process it started are stopped at the end (SIGTERM,
    then SIGKILL after a few seconds) and reaped."""
    process: subprocess.Popen[bytes] = subprocess.Popen(command, start_new_session=True, **popen)
    try:
        yield process
    finally:
        group = [pid for pid in ours() if _group(pid) == process.pid]
        if process.poll() is None:
            _signal(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        stop(group)


def _group(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except ProcessLookupError:
        return None


def _signal(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, sig)


def describe(left: dict[int, str]) -> str:
    return "; ".join(f"pid {pid}: {command[:160]}" for pid, command in sorted(left.items()))
