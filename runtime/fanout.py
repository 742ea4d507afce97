"""Redis Stream entries fanned out to every local watcher, with no Redis connection per watcher.

Writers publish the name of a stream they append to on the stream's own channel
(`keys.changed_channel`, from their Lua script). In each process a `StreamHub` holds one
subscription, to the channels of the streams its watchers follow (and only those: a process
hears of the games watched in it, not of every move of its kind), and reads a changed stream
once (XRANGE from the earliest position its watchers wait at) for all of its local watchers,
however many. A watcher costs a small queue and a coroutine, never a connection: the process's
Redis connections are its one subscription and the few short reads of its pool.

Notifications are fire and forget (Redis drops them only with the subscriber's connection, and
the hub then reads every watched stream as it subscribes again; a stream's first watcher is
caught up by a read when it starts and another once its channel's subscription is confirmed, so
no entry falls between the two), so the hub also looks at every
watched stream every `poll_seconds`, a slice at a time: a lost notification delays delivery by at
most that, and never loses an entry. A watcher
resumes from any entry id and gets every entry after it, in order, once.

A watcher holds at most `max_pending` entries: one that reads slowly is served more when it has
taken some (a long history is read in steps, never buffered whole). One whose queue stays full
for `stall_seconds` does not read at all and is cut: its next read raises `TooSlow`, and it
resumes from where it was (the client does it, as after any drop).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from redis.asyncio import Redis

from runtime import keys
from runtime.redis import redis_failed
from runtime.tasks import stop_tasks

log = logging.getLogger("tabletop.fanout")

Entry = tuple[str, dict[bytes, bytes]]
"""A stream entry: its id and fields, as Redis answers them."""

READ_COUNT = 200
POLL_SLICES = 10
"""The periodic look at every watched stream is spread over this many steps."""
ANCHOR = keys.changed_channel("")
"""A channel nothing publishes on (no stream is named ""): the subscription holds it from the
start, so its connection is a subscriber's before any stream is watched."""


class TooSlow(Exception):
    """The watcher fell too far behind and was cut; `after` is the last entry it was given."""

    def __init__(self, after: str) -> None:
        super().__init__(after)
        self.after = after


def _id_key(entry_id: str) -> tuple[int, int]:
    ms, _, seq = entry_id.partition("-")
    return int(ms), int(seq or 0)


class Watcher:
    """One reader of one stream: the entries after `after`, in order, as they come."""

    def __init__(self, hub: StreamHub, stream: str, after: str, max_pending: int) -> None:
        self.hub = hub
        self.stream = stream
        self.after = after
        """The id of the last entry given to this watcher (taken or queued)."""
        self.delivered = after
        """The id of the last entry the watcher has taken from its queue."""
        self.max_pending = max_pending
        self.queue: asyncio.Queue[Entry] = asyncio.Queue()
        self.full_since: float | None = None
        """When the queue last filled up with entries still to come (None: it has room)."""
        self.too_slow = False
        self._wake = asyncio.Event()

    def offer(self, entries: Sequence[Entry], now: float) -> bool:
        """Queue the entries newer than the last one queued, as many as there is room for (the
        hub reads the rest when this watcher has taken some). False when some did not fit."""
        fitted = True
        for entry_id, fields in entries:
            if _id_key(entry_id) <= _id_key(self.after):
                continue
            if self.queue.qsize() >= self.max_pending:
                fitted = False
                break
            self.queue.put_nowait((entry_id, fields))
            self.after = entry_id
        if fitted:
            self.full_since = None
        elif self.full_since is None:
            self.full_since = now
        self._wake.set()
        return fitted

    async def next(self) -> list[Entry]:
        """The entries queued since the last call (waits for at least one)."""
        while True:
            if self.too_slow:
                raise TooSlow(self.delivered)
            if not self.queue.empty():
                taken = []
                while not self.queue.empty():
                    taken.append(self.queue.get_nowait())
                self.delivered = taken[-1][0]
                if self.full_since is not None:  # room again: read on for it
                    self.full_since = asyncio.get_running_loop().time()  # it does read
                    self.hub.wanted(self)
                return taken
            self._wake.clear()
            await self._wake.wait()

    def cut(self) -> None:
        self.too_slow = True
        self._wake.set()

    def close(self) -> None:
        self.hub.forget(self)


class StreamHub:
    """Delivers new entries of watched streams to this process's watchers."""

    def __init__(
        self,
        redis: Redis,
        *,
        poll_seconds: float = 10.0,
        max_pending: int = 256,
        stall_seconds: float = 30.0,
    ) -> None:
        self.redis = redis
        self.poll_seconds = poll_seconds
        self.max_pending = max_pending
        self.stall_seconds = stall_seconds
        """A watcher whose queue stays full this long is cut (TooSlow)."""
        self.watchers: dict[str, set[Watcher]] = {}
        self._dirty: dict[str, set[Watcher] | None] = {}
        """Streams to read soon, each for all its watchers (None) or only for some (a new
        watcher catching up does not make the others' entries be offered again)."""
        self._wake = asyncio.Event()
        self._subscribed: set[str] = set()
        """Streams whose channel the subscription holds or has asked for."""
        self._resubscribe = asyncio.Event()
        """The watched streams changed: the subscription follows."""
        self._tasks: list[asyncio.Task[None]] = []

    @property
    def count(self) -> int:
        """Watchers open in this process."""
        return sum(len(w) for w in self.watchers.values())

    async def start(self) -> None:
        self._tasks = [
            asyncio.create_task(self._listen(), name="fanout-listen"),
            asyncio.create_task(self._deliver(), name="fanout-deliver"),
            asyncio.create_task(self._poll(), name="fanout-poll"),
        ]

    async def stop(self) -> None:
        """Stop the hub's tasks (raising what killed one, if anything did)."""
        tasks, self._tasks = self._tasks, []
        await stop_tasks(tasks)

    def watch(self, stream: str, after: str) -> Watcher:
        """A watcher of `stream` from the entry after `after` ("0-0": from the start)."""
        watcher = Watcher(self, stream, after, self.max_pending)
        if stream not in self.watchers:
            self.watchers[stream] = set()
            self._resubscribe.set()
        self.watchers[stream].add(watcher)
        self.wanted(watcher)  # catch up at once
        return watcher

    def forget(self, watcher: Watcher) -> None:
        watchers = self.watchers.get(watcher.stream)
        if watchers is not None:
            watchers.discard(watcher)
            if not watchers:
                del self.watchers[watcher.stream]
                self._resubscribe.set()

    def changed(self, stream: str) -> None:
        """`stream` may have new entries: read it for its watchers soon."""
        if stream in self.watchers:
            self._dirty[stream] = None
            self._wake.set()

    def wanted(self, watcher: Watcher) -> None:
        """`watcher` has room for entries it has not been offered: read them for it soon."""
        stream = watcher.stream
        if stream not in self._dirty:
            self._dirty[stream] = {watcher}
        elif (only := self._dirty[stream]) is not None:
            only.add(watcher)
        self._wake.set()

    def _all_changed(self) -> None:
        self._dirty = dict.fromkeys(self.watchers)
        self._wake.set()

    async def _listen(self) -> None:
        """The one subscription: every notification marks its stream changed."""
        while True:
            pubsub = self.redis.pubsub()
            tasks: list[asyncio.Task[None]] = []
            try:
                # A cluster client knows the slots (whose node a channel is on) only once
                # initialized; a pub/sub before its first command would find none.
                await self.redis.initialize()
                await pubsub.subscribe(ANCHOR)
                self._subscribed = set()
                self._resubscribe.set()
                self._all_changed()  # anything missed while away
                tasks = [
                    asyncio.create_task(self._hear(pubsub), name="fanout-hear"),
                    asyncio.create_task(self._follow(pubsub), name="fanout-follow"),
                ]
                done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
                for task in done:
                    task.result()  # raises what ended it
            except asyncio.CancelledError:
                raise
            except Exception as error:
                # The one subscription must outlive anything: the cluster client, for one,
                # raises a KeyError while it relearns the slots after a node restart.
                if redis_failed(error):
                    log.warning("notifications lost; resubscribing", extra={"error": str(error)})
                else:
                    log.exception("notifications failed; resubscribing")
                await asyncio.sleep(0.5)
            finally:
                with contextlib.suppress(Exception):
                    await stop_tasks(tasks)
                with contextlib.suppress(Exception):
                    await pubsub.aclose()  # type: ignore[no-untyped-call]

    async def _hear(self, pubsub: Any) -> None:
        """Mark each notified stream changed, and each stream whose channel was just subscribed
        to (an entry may have come between its first read and the subscription)."""
        prefix = len(ANCHOR)
        while True:
            message: Any = await pubsub.get_message(timeout=10.0)
            if message is not None and message["type"] in ("message", "subscribe"):
                channel = message["channel"]
                name = channel.decode() if isinstance(channel, bytes) else channel
                self.changed(name[prefix:])

    async def _follow(self, pubsub: Any) -> None:
        """Keep the subscription to the channels of the streams watched now."""
        while True:
            await self._resubscribe.wait()
            self._resubscribe.clear()
            watched = set(self.watchers)
            new, gone = watched - self._subscribed, self._subscribed - watched
            if new:
                self._subscribed |= new
                await pubsub.subscribe(*(keys.changed_channel(stream) for stream in new))
            if gone:
                self._subscribed -= gone
                await pubsub.unsubscribe(*(keys.changed_channel(stream) for stream in gone))

    async def _poll(self) -> None:
        """Every watched stream, once every poll_seconds, a slice at a time (so the reads spread
        over the period instead of coming all at once): nothing waits longer on a lost note.
        And cut the watchers whose queue has been full for stall_seconds: they do not read."""
        loop = asyncio.get_running_loop()
        slices = POLL_SLICES
        turn = 0
        while True:
            await asyncio.sleep(min(self.poll_seconds, self.stall_seconds / 2) / slices)
            now = loop.time()
            streams = list(self.watchers)
            for stream in streams[turn % slices :: slices]:
                for watcher in list(self.watchers.get(stream, ())):
                    since = watcher.full_since
                    if since is not None and now - since >= self.stall_seconds:
                        watcher.cut()
                if stream not in self._dirty:
                    self._dirty[stream] = None
            turn += 1
            self._wake.set()

    async def _deliver(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            dirty, self._dirty = self._dirty, {}
            streams = list(dirty)
            for start in range(0, len(streams), 500):
                batch = {stream: dirty[stream] for stream in streams[start : start + 500]}
                try:
                    await self._read(batch)
                except asyncio.CancelledError:
                    raise
                except Exception as error:
                    if not redis_failed(error):  # as in _listen: never stop delivering
                        log.exception("reading watched streams failed; retrying")
                    for stream in streams[start:]:  # try again after a pause
                        self._dirty[stream] = None
                    await asyncio.sleep(0.5)
                    self._wake.set()
                    break

    async def _read(self, batch: Mapping[str, set[Watcher] | None]) -> None:
        """One round trip for a batch of streams: what is new since their slowest watcher (of
        the ones each stream is read for)."""
        targets: dict[str, list[Watcher]] = {}
        starts: dict[str, str] = {}
        for stream, only in batch.items():
            present = self.watchers.get(stream, set())
            eligible = [
                w
                for w in (present if only is None else only & present)
                if not w.too_slow and w.queue.qsize() < w.max_pending
            ]
            if eligible:
                targets[stream] = eligible
                starts[stream] = min((w.after for w in eligible), key=_id_key)
        if not targets:
            return
        async with self.redis.pipeline(transaction=False) as pipe:
            for stream in targets:
                pipe.xrange(stream, min=f"({starts[stream]}", count=READ_COUNT)
            replies = await pipe.execute()
        now = asyncio.get_running_loop().time()
        for watchers, items in zip(targets.values(), replies, strict=True):
            if not items:
                continue
            entries = [(entry_id.decode(), fields) for entry_id, fields in items]
            for watcher in watchers:
                watcher.offer(entries, now)
            if len(items) == READ_COUNT:  # more to come, for the same watchers
                for watcher in watchers:
                    self.wanted(watcher)
