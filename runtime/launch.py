"""Launching the platform's processes: the one way `make run`, the soak and the benchmarks start
game services, the lobby, the accounts service, gateways, matchmakers and bot workers, wired to
each other."""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import games
from runtime.localredis import free_port
from wire.api import LOBBY_SERVICE, api


@dataclass
class Process:
    """One process of the platform (`python -m <module> <args>`), started again when asked."""

    kind: str
    """gateway, game, lobby, accounts, matchmaker, ratings or bots."""
    args: list[str]
    env: dict[str, str]
    log: Path | None = None
    """Where its output goes (appended, across restarts); None: this process's own output."""
    quiet: bool = False
    """Send its output nowhere (when it has no log)."""
    popen: subprocess.Popen[bytes] | None = None
    restarts: list[float] = field(default_factory=list)

    def start(self) -> None:
        """Start (again)."""
        if self.log is not None:
            with open(self.log, "ab") as out:
                self.popen = subprocess.Popen(self.args, env=self.env, stdout=out, stderr=out)
        elif self.quiet:
            self.popen = subprocess.Popen(
                self.args, env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
        else:
            self.popen = subprocess.Popen(self.args, env=self.env)

    @property
    def running(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    @property
    def pid(self) -> int:
        assert self.popen is not None
        return self.popen.pid

    def send(self, sig: int = signal.SIGTERM) -> None:
        if self.running:
            assert self.popen is not None
            self.popen.send_signal(sig)

    def stop(self, sig: int = signal.SIGTERM, wait: float = 15.0) -> None:
        """Stop it (SIGTERM: gracefully) and wait; killed if it takes longer than `wait`."""
        if not self.running:
            return
        assert self.popen is not None
        self.popen.send_signal(sig)
        try:
            self.popen.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            self.popen.wait()


def wait_serving(target: str, services: Sequence[str] = (), timeout: float = 30.0) -> bool:
    """Wait until `target` reports SERVING overall and for each of `services`."""
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    deadline = time.monotonic() + timeout
    pending = ["", *services]
    with grpc.insecure_channel(target) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        while pending and time.monotonic() < deadline:
            try:
                reply = stub.Check(health_pb2.HealthCheckRequest(service=pending[0]), timeout=1)
                if reply.status == health_pb2.HealthCheckResponse.SERVING:
                    pending.pop(0)
                    continue
            except grpc.RpcError:
                pass
            time.sleep(0.2)
    return not pending


class Ports:
    """Where each process listens: consecutive ports from `base` (as `make run` documents
    them), or free ports when `base` is None."""

    def __init__(self, base: int | None = None) -> None:
        self._next = base

    def take(self) -> int:
        if self._next is None:
            return free_port()
        port, self._next = self._next, self._next + 1
        return port


@dataclass
class Launch:
    """Every process of the platform against one Redis, wired to each other.

    `gateways`: their ports (None: free ports). Game services take `replicas` each; the lobby,
    the accounts service (with DATABASE_URL: the gateways, the lobby and the ratings consumer
    reach it; the gateways hold no database URL), `matchmakers` and `bot_workers` (which reach
    the first gateway, or the one of their index) follow. Extra environment `env` goes to every
    process; `logs`: a directory for each process's output (None: this process's output;
    `quiet`: nowhere)."""

    redis_url: str
    env: Mapping[str, str]
    gateways: Sequence[int | None] = (None,)
    web: Sequence[int | None] = ()
    """The gateways' web ports, by index (None: a free one); fewer than `gateways`: the
    others have none. Their files: WEB_ROOT in `env`."""
    games: Sequence[str] = ()
    replicas: int = 1
    lobby: bool = True
    matchmakers: int = 1
    bot_workers: int = 1
    base_port: int | None = None
    logs: Path | None = None
    quiet: bool = False
    processes: list[Process] = field(default_factory=list)
    backends: dict[str, str] = field(default_factory=dict)
    """<GAME>_ADDR (and LOBBY_ADDR) -> target, as every process is told."""
    gateway_targets: list[str] = field(default_factory=list)
    web_urls: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        ports = Ports(self.base_port)
        # A key of their own for the processes' proofs to each other (wire.proof), unless one
        # is given: nothing outside this launch needs it.
        own_key = {"INTERNAL_KEY": secrets.token_urlsafe(32)}
        common = {**own_key, **os.environ, **self.env, "REDIS_URL": self.redis_url}
        for game in self.games or games.names():
            targets = [f"127.0.0.1:{ports.take()}" for _ in range(self.replicas)]
            self.backends[f"{game.upper()}_ADDR"] = (
                targets[0] if len(targets) == 1 else "ipv4:" + ",".join(targets)
            )
            for target in targets:
                self.add("game", ["services.game", game], {**common, "LISTEN": target})
        lobby = f"127.0.0.1:{ports.take()}" if self.lobby else ""
        accounts: dict[str, str] = {}
        if common.get("DATABASE_URL"):  # accounts are kept in PostgreSQL
            accounts["ACCOUNTS_ADDR"] = f"127.0.0.1:{ports.take()}"
        if lobby:  # it asks the accounts service for accounts' usernames
            env = {**common, **self.backends, **accounts, "LISTEN": lobby}
            self.add("lobby", ["services.lobby"], env)
            self.backends["LOBBY_ADDR"] = lobby
        if accounts:
            env = {**common, "LISTEN": accounts["ACCOUNTS_ADDR"]}
            self.add("accounts", ["services.accounts"], env)
        self.accounts_target = accounts.get("ACCOUNTS_ADDR", "")
        self.gateway_targets = [f"127.0.0.1:{port or free_port()}" for port in self.gateways]
        webs = [f"127.0.0.1:{port or free_port()}" for port in self.web]
        self.web_urls = [f"http://{listen}" for listen in webs]
        for index, target in enumerate(self.gateway_targets):
            env = {**common, **self.backends, **accounts, "LISTEN": target}
            env.pop("DATABASE_URL", None)  # the accounts service holds the database
            if index < len(webs):
                env["WEB_LISTEN"] = webs[index]
            self.add("gateway", ["gateway"], env)
        for _ in range(self.matchmakers):
            listen = f"127.0.0.1:{ports.take()}"
            env = {**common, **self.backends, "LISTEN": listen}
            self.add("matchmaker", ["services.matchmaker"], env)
        self.common = common
        for index in range(self.bot_workers):
            self.add_bot_worker(index, ports.take())
        if common.get("DATABASE_URL"):  # ratings are kept in PostgreSQL
            # it asks the accounts service when accounts were made (the deal of the day's tables)
            env = {**common, **accounts, "LISTEN": f"127.0.0.1:{ports.take()}"}
            self.add("ratings", ["services.ratings"], env)

    def add(self, kind: str, module: list[str], env: dict[str, str]) -> Process:
        log = None if self.logs is None else self.logs / f"{kind}-{len(self.processes)}.log"
        process = Process(kind, [sys.executable, "-m", *module], env, log=log, quiet=self.quiet)
        self.processes.append(process)
        return process

    def add_bot_worker(self, index: int = 0, port: int | None = None) -> Process:
        """One more bot worker (not started), reaching the gateway of its index."""
        gateway = self.gateway_targets[index % len(self.gateway_targets)]
        listen = f"127.0.0.1:{port or free_port()}"
        env = {**self.common, "GATEWAY_ADDR": gateway, "LISTEN": listen}
        return self.add("bots", ["services.bots"], env)

    def of(self, kind: str) -> list[Process]:
        return [process for process in self.processes if process.kind == kind]

    @property
    def services(self) -> list[str]:
        """What a gateway of this launch serves, once everything is up."""
        names = [api(game).full_name for game in self.games or games.names()]
        return [*names, LOBBY_SERVICE] if self.lobby else names

    def start(self, processes: Iterable[Process] | None = None) -> None:
        for process in self.processes if processes is None else processes:
            process.start()

    def ready(self, timeout: float = 60.0) -> bool:
        """Whether every gateway reports SERVING for every service, and the accounts service
        (when there is one) SERVING, within `timeout`."""
        accounts = [self.accounts_target] if self.accounts_target else []
        return all(wait_serving(t, self.services, timeout) for t in self.gateway_targets) and all(
            wait_serving(t, (), timeout) for t in accounts
        )

    def stop(self) -> None:
        """Stop everything gracefully: all are told at once, then waited for."""
        for process in reversed(self.processes):
            process.send(signal.SIGTERM)
        for process in self.processes:
            process.stop()
