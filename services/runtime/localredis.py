"""A throwaway redis-server on a free port in a temporary directory (for `make run` and tests)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class LocalRedis:
    """Starts `redis-server` bound to 127.0.0.1; `url` is where to connect; `stop()` ends it."""

    def __init__(self, *, appendonly: bool = True, port: int | None = None) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError(
                "redis-server is not installed: run `make setup` (as root) or "
                "install it from your OS packages"
            )
        self.port = port or free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="tabletop-redis-"))
        self.args = [
            binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.dir),
            "--save", "", "--appendonly", "yes" if appendonly else "no",
            "--logfile", str(self.dir / "redis.log"),
        ]  # fmt: skip
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process = self._start()

    def _start(self) -> subprocess.Popen[bytes]:
        self.process = subprocess.Popen(
            self.args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        self._wait_ready()
        return self.process

    def _wait_ready(self, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"redis-server exited: see {self.dir / 'redis.log'}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as sock:
                    sock.sendall(b"PING\r\n")
                    if sock.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                pass
            time.sleep(0.05)
        raise RuntimeError("redis-server did not answer PING in time")

    def _terminate(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def restart(self, down_seconds: float = 0.0) -> None:
        """Stop redis-server (it flushes its append-only file) and start it again on the same
        port with the same data, after `down_seconds`."""
        self._terminate()
        time.sleep(down_seconds)
        self._start()

    def stop(self) -> None:
        self._terminate()
        shutil.rmtree(self.dir, ignore_errors=True)
