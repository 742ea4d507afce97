"""A channel that follows a service's replicas as they come and go.

gRPC resolves a `dns:///` target when a channel starts and again only when a connection to it
is lost: replicas added later (a Deployment scaled up, an autoscaler at work) get no calls until
a connection ages out, minutes later. `Replicas` resolves the name itself every `interval`
seconds; when the set of addresses changes, a new channel to exactly those addresses replaces
the current one, and those who hold the old channel (relay links, open streams) finish on it:
it is closed once the last of them lets it go. A target that names addresses (`ipv4:`, an IP
literal, `unix:`) is used as it is.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import ipaddress
import logging
import socket
from collections.abc import Callable, Iterator, Mapping

import grpc

from runtime.tasks import stop_tasks

log = logging.getLogger("tabletop")

RESOLVE_SECONDS = 5.0
"""How often a service's name is resolved again, by default (RESOLVE_SECONDS)."""

ADDRESS_SCHEMES = ("ipv4", "ipv6", "unix", "unix-abstract", "vsock")


def dns_name(target: str) -> tuple[str, int] | None:
    """The host and port to resolve for `target`, or None when it names its addresses:
    `dns:///host:port`, `dns://server/host:port` and a bare `host:port` are names (gRPC reads
    a target without a scheme as `dns:///`)."""
    scheme, _, rest = target.partition(":")
    if scheme in ADDRESS_SCHEMES:
        return None
    if scheme == "dns":
        rest = rest.removeprefix("//")
        if "/" in rest:
            rest = rest.split("/", 1)[1]  # the DNS server named, if any, is the system's
    else:
        rest = target
    host, _, port = rest.rpartition(":")
    host = host.strip("[]")
    if not host or not port.isdigit():
        return None
    with contextlib.suppress(ValueError):
        ipaddress.ip_address(host)
        return None  # an address already
    return host, int(port)


async def lookup(host: str, port: int) -> str:
    """A gRPC target naming every address `host` resolves to now ("" when none), in a stable
    order so that an unchanged set gives the same string."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    v4 = sorted({info[4][0] for info in infos if info[0] == socket.AF_INET})
    if v4:
        return "ipv4:" + ",".join(f"{address}:{port}" for address in v4)
    v6 = sorted({info[4][0] for info in infos if info[0] == socket.AF_INET6})
    return "ipv6:" + ",".join(f"[{address}]:{port}" for address in v6) if v6 else ""


class Replicas:
    """The current channel to a service's target, and the ones still in use before it.

    `make` builds a channel for a target (the same options every time). Holders take the
    current channel with `acquire()` and give it back with `release()`; `on_change` callbacks
    run after each change (the gateway's relay retires its links on the old channel)."""

    def __init__(
        self,
        target: str,
        make: Callable[[str], grpc.aio.Channel],
        *,
        interval: float = RESOLVE_SECONDS,
    ) -> None:
        self.target = target
        self._make = make
        self.channel = make(target)
        self.name = dns_name(target)
        self.addresses = ""
        """The target of the current channel once resolved here ("" before)."""
        self.interval = interval
        self.on_change: list[Callable[[], None]] = []
        self.changes = 0
        self._uses: dict[grpc.aio.Channel, int] = {}
        self._old: set[grpc.aio.Channel] = set()
        """Channels replaced and still held."""
        self._closing: set[asyncio.Task[None]] = set()
        self._task: asyncio.Task[None] | None = None

    @classmethod
    def fixed(cls, channel: grpc.aio.Channel) -> Replicas:
        """An open channel as it is: never resolved again, never closed here."""
        return cls("", lambda _target: channel)

    def acquire(self) -> grpc.aio.Channel:
        channel = self.channel
        self._uses[channel] = self._uses.get(channel, 0) + 1
        return channel

    def release(self, channel: grpc.aio.Channel) -> None:
        left = self._uses.get(channel, 0) - 1
        if left > 0:
            self._uses[channel] = left
            return
        self._uses.pop(channel, None)
        if channel in self._old:
            self._old.discard(channel)
            self._close(channel)

    @contextlib.contextmanager
    def using(self) -> Iterator[grpc.aio.Channel]:
        """The current channel, held for the block: a change meanwhile does not close it."""
        channel = self.acquire()
        try:
            yield channel
        finally:
            self.release(channel)

    def _close(self, channel: grpc.aio.Channel) -> None:
        task = asyncio.create_task(channel.close())
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def refresh(self) -> bool:
        """Resolve the name again; whether the channel changed."""
        if self.name is None:
            return False
        try:
            addresses = await lookup(*self.name)
        except OSError as error:  # the DNS is unreachable or the name unknown for now
            log.warning("cannot resolve", extra={"target": self.target, "error": str(error)})
            return False
        if not addresses or addresses == self.addresses:
            return False
        old, self.channel = self.channel, self._make(addresses)
        self.addresses = addresses
        self.changes += 1
        if self._uses.get(old):
            self._old.add(old)
        else:
            self._close(old)
        if self.changes > 1:  # the first one only pins what gRPC had resolved at the start
            log.info("replicas changed", extra={"target": self.target, "addresses": addresses})
        for callback in self.on_change:
            callback()
        return True

    async def _run(self) -> None:
        while True:
            await self.refresh()
            await asyncio.sleep(self.interval)

    def start(self) -> None:
        if self.name is not None and self._task is None:
            self._task = asyncio.create_task(self._run())

    async def close(self) -> None:
        if self._task is not None:
            await stop_tasks([self._task])
        for channel in {self.channel, *self._old}:
            await channel.close()
        await asyncio.gather(*self._closing, return_exceptions=True)


def following(
    targets: Mapping[str, str], make: Callable[[str, str], grpc.aio.Channel]
) -> dict[str, Replicas]:
    """A `Replicas` for each of `targets` (by key), its channels made by `make(key, target)`,
    resolving again every RESOLVE_SECONDS; `start()` each from within the event loop."""
    return {
        key: Replicas(target, functools.partial(make, key), interval=RESOLVE_SECONDS)
        for key, target in targets.items()
    }
