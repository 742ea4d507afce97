"""Throwaway redis-servers on free ports in temporary directories (for `make run`, tests and the
soak): one server, or a Redis Cluster of several masters."""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path


def _binary(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise RuntimeError(
            f"{name} is not installed: run `make setup` (as root) or install redis from your "
            "OS packages"
        )
    return path


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class LocalRedis:
    """Starts `redis-server` bound to 127.0.0.1; `url` is where to connect; `stop()` ends it."""

    def __init__(
        self,
        *,
        appendonly: bool = True,
        port: int | None = None,
        cluster: bool = False,
        data_dir: Path | None = None,
    ) -> None:
        """`data_dir`: keep the data there, across runs (it is never deleted); by default a
        temporary directory that `stop()` removes."""
        binary = _binary("redis-server")
        self.port = port or free_port()
        self.keep = data_dir is not None
        if data_dir is not None:
            data_dir.mkdir(parents=True, exist_ok=True)
        self.dir = data_dir or Path(tempfile.mkdtemp(prefix="tabletop-redis-"))
        self.args = [
            binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.dir),
            "--save", "", "--appendonly", "yes" if appendonly else "no",
            "--logfile", str(self.dir / "redis.log"),
        ]  # fmt: skip
        if cluster:
            # The bus port on its own free port: the default (port + 10000) may not exist.
            self.args += ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                          "--cluster-port", str(free_port())]  # fmt: skip
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
        if not self.keep:
            shutil.rmtree(self.dir, ignore_errors=True)


class LocalRedisCluster:
    """A Redis Cluster of `masters` redis-servers (no replicas), joined with
    `redis-cli --cluster create`. `url` names one node; cluster clients find the others."""

    def __init__(self, *, masters: int = 3, appendonly: bool = True) -> None:
        self.nodes: list[LocalRedis] = []
        try:
            for _ in range(masters):
                self.nodes.append(LocalRedis(appendonly=appendonly, cluster=True))
            addresses = [f"127.0.0.1:{node.port}" for node in self.nodes]
            subprocess.run(
                [_binary("redis-cli"), "--cluster", "create", *addresses,
                 "--cluster-replicas", "0", "--cluster-yes"],
                check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=60,
            )  # fmt: skip
            self._wait_ok()
        except BaseException:
            self.stop()
            raise
        self.url = f"redis://127.0.0.1:{self.nodes[0].port}/0"

    def _wait_ok(self, timeout: float = 30.0) -> None:
        """Wait until every node says the cluster is ok (all slots served, config agreed)."""
        deadline = time.monotonic() + timeout
        cli = _binary("redis-cli")
        while time.monotonic() < deadline:
            states = [
                subprocess.run(
                    [cli, "-p", str(node.port), "cluster", "info"],
                    capture_output=True,
                    text=True,
                    timeout=5,
                ).stdout
                for node in self.nodes
            ]
            if all("cluster_state:ok" in info for info in states):
                return
            time.sleep(0.1)
        raise RuntimeError("the Redis Cluster did not reach cluster_state:ok in time")

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()
