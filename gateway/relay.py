"""The gateway's end of its relay links to a service (proto/tabletop/relay/v1/relay.proto).

The gateway sends each unary call (of a game service, of the lobby) as one message on a
long-lived stream, a link, instead of as a gRPC call of its own: an open stream carries a message
for about half the CPU and latency of a new call at both ends. A `Relay` keeps up to `links`
links open to one service's target. The channel's round-robin policy places each new link on the
next replica, so links spread over the replicas; a link is retired after `max_age` seconds, so
replicas added later get their share.

A link is a `RelayFrames` stream: the calls ready in the same turn of the event loop go to the
service as one frame on one link (runtime.relay.Outbox: a lone call goes at once; a link's
calls that come while its frame before is being written go in its next), the next call after
a frame to the next link; the service answers likewise. A service that does not know that rpc
(an older one: UNIMPLEMENTED) gets `Relay` links, a call to a message, until the replicas
change.

Failures behave as the direct calls' retry policy did: a call whose link breaks, or that the
service answers UNAVAILABLE, is tried again on another link (up to ATTEMPTS times in all, with
backoff, within the caller's deadline). That is safe: the gateway gives every call a request id,
so a retried move is applied once. A service that stops gracefully first asks the gateway to send
no new calls on its links, then answers the calls in flight, so a rolling restart fails no call.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Callable, Sequence
from typing import Any

import grpc

from runtime.relay import (
    CODES,
    FRAME_CALL_BYTES,
    FRAME_CALLS,
    FRAMES_METHOD,
    RELAY_METHOD,
    Outbox,
    failure,
    frame_of,
    relayed_fields,
)
from runtime.replicas import Replicas
from tabletop.relay.v1 import relay_pb2
from wire.errors import ApiError
from wire.proof import proof, prove

LINKS = 8
"""Links kept open to a service's target, by default (round robin spreads them)."""
MAX_AGE_SECONDS = 60.0
"""A link takes no new calls after this long, by default."""
TIDY_SECONDS = 1.0
"""How often the links are looked over (those past their age retired, the finished ones let
go), at most: a call picks a link from the list made then, and a link it finds closed since
has the list made again at once."""
ATTEMPTS = 4
UNAVAILABLE = grpc.StatusCode.UNAVAILABLE.value[0]
BACKOFF_SECONDS = 0.05
MAX_BACKOFF_SECONDS = 0.5


class Link:
    """One relay stream to a service, carrying many calls at once: frames of them (`framed`,
    RelayFrames), or one to a message (Relay)."""

    def __init__(
        self,
        replicas: Replicas,
        internal_key: str,
        framed: bool = True,
        unframed: Callable[[], None] = lambda: None,
    ) -> None:
        """`unframed`: called when the service turns out not to serve RelayFrames."""
        self.replicas = replicas
        self.framed = framed
        self._unframed = unframed
        channel = self.channel = replicas.acquire()
        method = FRAMES_METHOD if framed else RELAY_METHOD
        open_stream: grpc.aio.StreamStreamMultiCallable[bytes, Any] = channel.stream_stream(
            method,
            response_deserializer=(
                relay_pb2.RelayResponseFrame.FromString
                if framed
                else relay_pb2.RelayResponse.FromString
            ),
        )
        # The link is proven once, as it opens: the calls it carries are the gateway's.
        self.stream = open_stream(metadata=prove(internal_key, method, ()))
        self.opened = time.monotonic()
        self.open = True
        """Takes new calls (false once retired, drained or broken)."""
        self.pending: dict[int, asyncio.Future[relay_pb2.RelayResponse | None]] = {}
        self._ids = itertools.count(1)
        # One writer sends every message, in turn: a caller that gives up never cuts a write
        # short (grpc cancels the whole stream when a write is cancelled).
        self.outbox = Outbox(FRAME_CALLS, FRAME_CALL_BYTES)
        self._closing = False
        self.writer = asyncio.create_task(self._write())
        self.reader = asyncio.create_task(self._read())

    async def call(
        self, request: relay_pb2.RelayRequest, deadline: float
    ) -> relay_pb2.RelayResponse | None:
        """The service's answer; None when the link broke first (the call may or may not have
        been served). Raises TimeoutError at `deadline` (event loop time)."""
        call_id = request.call_id = next(self._ids)
        answer: asyncio.Future[relay_pb2.RelayResponse | None] = (
            asyncio.get_running_loop().create_future()
        )
        self.pending[call_id] = answer
        self.outbox.put(request.SerializeToString())
        try:
            async with asyncio.timeout_at(deadline):
                return await answer
        finally:
            del self.pending[call_id]
            if not self.open and not self.pending:
                self.close()

    async def _write(self) -> None:
        try:
            while (calls := await self.outbox.take()) is not None:
                if self.framed:
                    await self.stream.write(frame_of(calls))
                else:
                    for call in calls:
                        await self.stream.write(call)
            await self.stream.done_writing()
        except (grpc.aio.AioRpcError, asyncio.InvalidStateError, grpc.aio.UsageError) as error:
            self._broke(error)
            self.stream.cancel()  # broken: the reader ends and the calls due are tried again

    async def _read(self) -> None:
        try:
            while True:
                message: Any = await self.stream.read()
                if message is grpc.aio.EOF:
                    break
                responses: Sequence[relay_pb2.RelayResponse] = (
                    message.answers if self.framed else (message,)
                )
                for response in responses:
                    if response.drain:
                        self.retire()
                        continue
                    answer = self.pending.get(response.call_id)
                    if answer is not None and not answer.done():
                        answer.set_result(response)
        except (grpc.aio.AioRpcError, asyncio.CancelledError) as error:
            self._broke(error)  # the service went away, or the gateway is stopping
        finally:
            self.open = False
            for answer in self.pending.values():
                if not answer.done():
                    answer.set_result(None)
            self.writer.cancel()
            self.replicas.release(self.channel)

    def _broke(self, error: BaseException) -> None:
        if (
            self.framed
            and isinstance(error, grpc.aio.AioRpcError)
            and error.code() == grpc.StatusCode.UNIMPLEMENTED
        ):
            self._unframed()  # an older service: the calls due are tried again on Relay links

    def retire(self) -> None:
        """Take no new calls; close once the calls still due are answered."""
        self.open = False
        if not self.pending:
            self.close()

    def close(self) -> None:
        """Close the gateway's side (after the messages already queued); the service then
        finishes the stream."""
        if not self._closing:
            self._closing = True
            self.outbox.close()

    @property
    def finished(self) -> bool:
        return self.reader.done()


class Relay:
    """Calls one service's unary methods over a few relay links."""

    def __init__(
        self,
        replicas: Replicas,
        *,
        service: str,
        internal_key: str,
        links: int = LINKS,
        max_age: float = MAX_AGE_SECONDS,
    ) -> None:
        """`service`: the full name of the service behind (each call's proof names its method's
        full path)."""
        self.replicas = replicas
        self.service = service
        replicas.on_change.append(self.retire_all)
        self.internal_key = internal_key
        self.links_wanted = links
        self.max_age = max_age
        self.links: list[Link] = []
        self._live: list[Link] = []
        """The links open when last looked over (`_tidy`)."""
        self._tidy_at = 0.0
        self._turn = itertools.count()
        self._last: Link | None = None
        self.opened = 0
        """Links opened so far."""
        self.framed = True
        """New links are RelayFrames streams (false: Relay, for an older service)."""

    def _link(self) -> Link:
        now = time.monotonic()
        if now >= self._tidy_at:
            self._tidy(now)
        while True:
            if len(self._live) < self.links_wanted:
                link = Link(self.replicas, self.internal_key, self.framed, self._unframed)
                self.links.append(link)
                self._live.append(link)
                self.opened += 1
                return link
            # A frame still forming (its writer has not taken it yet) takes the call too;
            # otherwise the next link in turn, so frames, and the calls in them, spread over
            # the replicas.
            last = self._last
            if last is not None and last.open and 0 < len(last.outbox) < FRAME_CALLS:
                return last
            link = self._live[next(self._turn) % len(self._live)]
            if link.open:
                self._last = link
                return link
            self._tidy(now)  # closed since the list was made

    def _tidy(self, now: float) -> None:
        """Retire the links past their age; the list of open links, the finished ones let go."""
        live = []
        for link in self.links:
            if link.open and now - link.opened > self.max_age:
                link.retire()
            if link.open:
                live.append(link)
        self.links = [link for link in self.links if not link.finished]
        self._live = live
        self._tidy_at = now + min(TIDY_SECONDS, self.max_age / 4)

    def _unframed(self) -> None:
        self.framed = False

    def retire_all(self) -> None:
        """The replicas changed: new calls go on new links, over the new set (RelayFrames
        again: an older service may have been replaced)."""
        self.framed = True
        for link in self.links:
            link.retire()
        self._tidy_at = 0.0

    async def call(
        self,
        method: str,
        request: bytes,
        *,
        player_id: str,
        request_id: str,
        seconds: float,
        player_name: str = "",
        guest: bool = False,
    ) -> relay_pb2.RelayResponse:
        """The answer to one call of `method` within `seconds` (UNAVAILABLE or DEADLINE_EXCEEDED
        when none came)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        message = relay_pb2.RelayRequest(
            method=method,
            request=request,
            player_id=player_id,
            request_id=request_id,
            player_name=player_name,
            guest=guest,
        )
        message.proof = proof(
            self.internal_key, f"/{self.service}/{method}", relayed_fields(message), request
        )
        backoff = BACKOFF_SECONDS
        for attempt in range(1, ATTEMPTS + 1):
            left = deadline - loop.time()
            message.timeout_ms = max(1, int(left * 1000))
            try:
                response = await self._link().call(message, deadline)
            except TimeoutError:
                return failure(0, grpc.StatusCode.DEADLINE_EXCEEDED, "Deadline Exceeded")
            if response is not None and response.code != UNAVAILABLE:
                return response
            if attempt == ATTEMPTS or deadline - loop.time() <= backoff:
                break
            await asyncio.sleep(backoff)
            backoff = min(MAX_BACKOFF_SECONDS, backoff * 2)
        if response is not None:
            return response
        status = ApiError("UNAVAILABLE", "the service cannot be reached; retry").to_status()
        return failure(0, status.code, status.details, status.trailing_metadata)

    async def __aenter__(self) -> Relay:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Cut every link (calls still due fail) and wait until they are gone."""
        for link in self.links:
            link.stream.cancel()
        await asyncio.gather(
            *(task for link in self.links for task in (link.reader, link.writer)),
            return_exceptions=True,
        )


def status_code(response: relay_pb2.RelayResponse) -> grpc.StatusCode:
    return CODES.get(response.code, grpc.StatusCode.UNKNOWN)
