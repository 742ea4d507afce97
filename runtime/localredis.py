"""Throwaway redis-servers on free ports in temporary directories (for `make run`, tests and the
soak): one server, or a Redis Cluster of several masters."""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

WAIT_SECONDS = 60.0
"""How long a wait for a local Redis (to answer after starting, to fail over, to form a cluster)
lasts before it is called failed. Each wait ends as soon as its condition holds, so the bound is
generous: a busy machine can take many times what an idle one does."""
CLI_SECONDS = 30.0
"""How long one redis-cli call may take."""


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
        password: str = "",
        config: Sequence[str] = (),
        sentinel: Sequence[str] = (),
    ) -> None:
        """`data_dir`: keep the data there, across runs (it is never deleted); by default a
        temporary directory that `stop()` removes. `password`: clients must authenticate with
        it (REDIS_PASSWORD); given on redis-server's standard input, never on its command
        line. `config`: more configuration lines (e.g. "replicaof 127.0.0.1 6380"). `sentinel`:
        run a Sentinel instead, with these lines in its configuration file (which it
        rewrites as it learns)."""
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
        if sentinel:
            conf = self.dir / "sentinel.conf"
            conf.write_text(
                "".join(
                    f"{line}\n"
                    for line in [f"port {self.port}", "bind 127.0.0.1", f"dir {self.dir}",
                                 f"logfile {self.dir / 'redis.log'}", *sentinel]
                )
            )  # fmt: skip
            self.args = [binary, str(conf), "--sentinel"]
        if cluster:
            # The bus port on its own free port: the default (port + 10000) may not exist.
            self.args += ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                          "--cluster-port", str(free_port())]  # fmt: skip
        self.password = password
        self.config = [*config]
        if password:
            self.config += [f"requirepass {password}", f"masterauth {password}"]
        if self.config:
            self.args.append("-")  # the rest of the configuration comes from standard input
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process = self._start()

    def _start(self) -> subprocess.Popen[bytes]:
        self.process = subprocess.Popen(
            self.args,
            stdin=subprocess.PIPE if self.config else subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        if self.config:
            assert self.process.stdin is not None
            self.process.stdin.write("".join(f"{line}\n" for line in self.config).encode())
            self.process.stdin.close()
        self._wait_ready()
        return self.process

    def _wait_ready(self, timeout: float = WAIT_SECONDS) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"redis-server exited: see {self.dir / 'redis.log'}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as sock:
                    if self.password:
                        sock.sendall(b"AUTH %s\r\n" % self.password.encode())
                        sock.recv(64)
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
                self.process.wait(timeout=WAIT_SECONDS)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def restart(self, down_seconds: float = 0.0) -> None:
        """Stop redis-server (it flushes its append-only file) and start it again on the same
        port with the same data, after `down_seconds`."""
        self.down()
        time.sleep(down_seconds)
        self.up()

    def down(self) -> None:
        """Stop redis-server, keeping its data and port for `up()`."""
        self._terminate()

    def up(self) -> None:
        """Start redis-server again after `down()`, on the same port with the same data."""
        self._start()

    def stop(self) -> None:
        self._terminate()
        if not self.keep:
            shutil.rmtree(self.dir, ignore_errors=True)

    def kill(self) -> None:
        """Die at once (SIGKILL), as a lost node does: nothing is flushed."""
        self.process.kill()
        self.process.wait()


class LocalRedisSentinel:
    """A primary, `replicas` replicas of it and `sentinels` Sentinels watching them (quorum: a
    majority), as `MASTER_NAME`: kill the primary and the Sentinels promote a replica within
    a few seconds. `sentinels_env` is what the platform's processes need to follow it
    (REDIS_SENTINELS, REDIS_SENTINEL_MASTER).

    `link_port(primary_port)`: the port each replica, in turn, dials to reach the primary
    (default: the primary's own), for a test to put something of its own in between."""

    MASTER_NAME = "tabletop"

    def __init__(
        self,
        *,
        replicas: int = 1,
        sentinels: int = 3,
        appendonly: bool = True,
        down_after_ms: int = 1000,
        link_port: Callable[[int], int] | None = None,
    ) -> None:
        self.nodes: list[LocalRedis] = []
        self.sentinels: list[LocalRedis] = []
        try:
            # Replicas sync at once (the default waits 5 s for more replicas to sync together).
            primary = LocalRedis(appendonly=appendonly, config=["repl-diskless-sync-delay 0"])
            self.nodes.append(primary)
            for _ in range(replicas):
                dial = link_port(primary.port) if link_port else primary.port
                self.nodes.append(
                    LocalRedis(appendonly=appendonly, config=[f"replicaof 127.0.0.1 {dial}"])
                )
            quorum = sentinels // 2 + 1
            for _ in range(sentinels):
                self.sentinels.append(
                    _sentinel(self.MASTER_NAME, primary.port, quorum, down_after_ms)
                )
            self._wait_watched(replicas)
        except BaseException:
            self.stop()
            raise
        self.url = "redis://127.0.0.1/0"
        self.sentinels_env = {
            "REDIS_SENTINELS": ",".join(f"127.0.0.1:{s.port}" for s in self.sentinels),
            "REDIS_SENTINEL_MASTER": self.MASTER_NAME,
        }

    def _ask(self, *command: str) -> str:
        """A Sentinel's answer (the first that answers)."""
        for sentinel in self.sentinels:
            done = subprocess.run(
                [_binary("redis-cli"), "-p", str(sentinel.port), *command],
                capture_output=True, text=True, timeout=CLI_SECONDS,
            )  # fmt: skip
            if done.returncode == 0 and done.stdout.strip():
                return done.stdout
        return ""

    def _wait_watched(self, replicas: int, timeout: float = WAIT_SECONDS) -> None:
        """Until the replicas are in sync and every Sentinel knows them and the others (a
        failover needs both)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            synced = subprocess.run(
                [_binary("redis-cli"), "-p", str(self.nodes[0].port), "info", "replication"],
                capture_output=True, text=True, timeout=CLI_SECONDS,
            ).stdout.count("state=online")  # fmt: skip
            if synced < replicas:
                time.sleep(0.1)
                continue
            info = self._ask("sentinel", "master", self.MASTER_NAME).split()
            fields = dict(zip(info[::2], info[1::2], strict=False))
            if (
                int(fields.get("num-slaves", 0)) >= replicas
                and int(fields.get("num-other-sentinels", 0)) >= len(self.sentinels) - 1
            ):
                return
            time.sleep(0.1)
        raise RuntimeError("the Sentinels did not see the primary's replicas in time")

    def primary(self) -> LocalRedis:
        """The node the Sentinels name primary now."""
        port = int(self._ask("sentinel", "get-master-addr-by-name", self.MASTER_NAME).split()[1])
        return next(node for node in self.nodes if node.port == port)

    def wait_failover(self, old: LocalRedis, timeout: float = WAIT_SECONDS) -> LocalRedis:
        """Until the Sentinels name a primary other than `old`, and it takes writes."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with contextlib.suppress(ValueError, IndexError, StopIteration):
                primary = self.primary()
                if primary is not old:
                    role = subprocess.run(
                        [_binary("redis-cli"), "-p", str(primary.port), "role"],
                        capture_output=True, text=True, timeout=CLI_SECONDS,
                    ).stdout  # fmt: skip
                    if role.startswith("master"):
                        return primary
            time.sleep(0.1)
        raise RuntimeError("no failover in time")

    def stop(self) -> None:
        for node in [*self.sentinels, *self.nodes]:
            node.stop()


def _sentinel(master: str, port: int, quorum: int, down_after_ms: int) -> LocalRedis:
    """A Sentinel on a free port watching the primary at `port`."""
    return LocalRedis(
        sentinel=[
            f"sentinel monitor {master} 127.0.0.1 {port} {quorum}",
            f"sentinel down-after-milliseconds {master} {down_after_ms}",
            f"sentinel failover-timeout {master} {max(3 * down_after_ms, 3000)}",
            f"sentinel parallel-syncs {master} 1",
        ]
    )


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
                check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=WAIT_SECONDS,
            )  # fmt: skip
            self._wait_ok()
        except BaseException:
            self.stop()
            raise
        self.url = f"redis://127.0.0.1:{self.nodes[0].port}/0"

    def _wait_ok(self, timeout: float = WAIT_SECONDS) -> None:
        """Wait until every node says the cluster is ok (all slots served, config agreed)."""
        deadline = time.monotonic() + timeout
        cli = _binary("redis-cli")
        while time.monotonic() < deadline:
            states = [
                subprocess.run(
                    [cli, "-p", str(node.port), "cluster", "info"],
                    capture_output=True,
                    text=True,
                    timeout=CLI_SECONDS,
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
