"""Hosts on a network of the test's own, and partitions between them, as Jepsen makes them.

Each host is a network namespace with one interface on a bridge (`tt-br<id>`) and an address
of its own (10.<subnet>.0.<n>); this machine's own namespace sits on the bridge too (.1), where
the players and the audit run, and reaches every host whatever the partition (they stand for
clients on the internet, which reach the load balancers on both sides). A partition drops, in
each host, every packet that comes from a host of another group (iptables, INPUT): connections
across it neither fail nor answer, as when a network splits; healing removes the rules and
the packets in flight since are delivered again.

Needs root, `ip` (iproute2) and `iptables`.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import subprocess
from collections.abc import Iterable, Sequence

from tests.manifests import Host

_networks = itertools.count()


def _run(*command: str) -> None:
    subprocess.run(command, check=True, capture_output=True)


def usable() -> str:
    """Why this machine cannot make such a network ("": it can)."""
    if os.geteuid() != 0:
        return "network namespaces need root"
    for tool in ("ip", "iptables"):
        if subprocess.run(["sh", "-c", f"command -v {tool}"], capture_output=True).returncode:
            return f"{tool} is not installed (make partition installs it)"
    return ""


class Network:
    """Hosts on one bridge; `partition` splits them into groups, `heal` joins them again."""

    def __init__(self, subnet: int = 77) -> None:
        self.subnet = subnet
        self.tag = f"tt{os.getpid() % 1000}{next(_networks)}"
        self.bridge = f"{self.tag}-br"
        self.hosts: list[Host] = []
        self._cut = False
        self._numbers = itertools.count(2)
        _run("ip", "link", "add", self.bridge, "type", "bridge")
        try:
            _run("ip", "link", "set", self.bridge, "up")
            _run("ip", "addr", "add", f"10.{subnet}.0.1/24", "dev", self.bridge)
        except BaseException:
            self.close()
            raise

    @property
    def gateway(self) -> str:
        """This machine's own address on the network."""
        return f"10.{self.subnet}.0.1"

    def host(self) -> Host:
        number = next(self._numbers)
        namespace = f"{self.tag}-h{number}"
        address = f"10.{self.subnet}.0.{number}"
        _run("ip", "netns", "add", namespace)
        host = Host(address, namespace)
        self.hosts.append(host)
        link = f"{self.tag}-v{number}"
        _run("ip", "link", "add", link, "type", "veth", "peer", "name", "eth0", "netns", namespace)
        _run("ip", "link", "set", link, "master", self.bridge, "up")
        _run("ip", "-n", namespace, "addr", "add", f"{address}/24", "dev", "eth0")
        _run("ip", "-n", namespace, "link", "set", "eth0", "up")
        _run("ip", "-n", namespace, "link", "set", "lo", "up")
        return host

    def partition(self, groups: Sequence[Iterable[Host]]) -> None:
        """Split the hosts: a host hears only the hosts of its own group (and this machine).
        A host in no group is in a group of its own."""
        sides = [set(group) for group in groups]
        listed = set().union(*sides)
        sides += [{host} for host in self.hosts if host not in listed]
        self.cut([(side, [h for h in self.hosts if h not in side]) for side in sides])

    def cut(
        self,
        pairs: Sequence[tuple[Iterable[Host], Iterable[Host]]],
        one_way: Sequence[tuple[Host, Host, int]] = (),
    ) -> None:
        """Only these links fail: no host of a pair's first set hears one of its second, and
        the other way round; every other host hears everyone (a bridge: A and C both hear B,
        but not each other). `one_way`: (a, b, port): b does not hear a on its `port` (calls
        from a to b fail, while b's calls to a's ports are answered)."""
        self.heal()
        drops = set()
        for first, second in pairs:
            for a in first:
                for b in second:
                    drops |= {(a, b), (b, a)}
        for host, other in sorted(drops, key=lambda d: (d[0].address, d[1].address)):
            self._iptables(host, "-A", "INPUT", "-s", other.address, "-j", "DROP")
        for source, target, port in one_way:
            self._iptables(
                target, "-A", "INPUT", "-s", source.address, "-p", "tcp", "--dport", str(port),
                "-j", "DROP",
            )  # fmt: skip
        self._cut = bool(drops or one_way)

    def heal(self) -> None:
        for host in self.hosts:
            self._iptables(host, "-F", "INPUT")
        self._cut = False

    def cut_off(self) -> bool:
        """Whether some link is down now."""
        return self._cut

    def _iptables(self, host: Host, *rule: str) -> None:
        assert host.namespace is not None
        _run("ip", "netns", "exec", host.namespace, "iptables", "-w", *rule)

    def close(self) -> None:
        for number, host in enumerate(self.hosts, start=2):
            assert host.namespace is not None
            with contextlib.suppress(subprocess.CalledProcessError):
                _run("ip", "link", "delete", f"{self.tag}-v{number}")
            with contextlib.suppress(subprocess.CalledProcessError):
                _run("ip", "netns", "delete", host.namespace)
        with contextlib.suppress(subprocess.CalledProcessError):
            _run("ip", "link", "delete", self.bridge)
        self.hosts = []

    def __enter__(self) -> Network:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
