"""A service's end of the gateway's relay links (proto/tabletop/relay/v1/relay.proto).

Each message on a link is one call of the service's unary methods, served by the same handler
as a direct gRPC call (`handlers`: the method's name -> an async function of the request and the
`Caller`), with the same metrics and error mapping; only the transport differs. Calls on a link
run concurrently, and their answers go back as they finish. The game services and the lobby
serve their unary methods this way.

A link is either rpc: `RelayFrames` (what the gateway opens) carries frames of calls and of
answers, `Relay` (older gateways) one of each to a message. Only the framing differs: each call
is served by `_serve` alone, whichever rpc brought it. An answer goes back at once, in a frame
of its own, unless a frame is being written: the answers that come meanwhile go together in the
next (`Outbox`).
"""

from __future__ import annotations

import asyncio
import collections
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any

import grpc
from google.protobuf import message_factory
from google.protobuf.descriptor import ServiceDescriptor
from google.protobuf.message import DecodeError, Message

from runtime.observability import RELAY_FRAME, rpc_seconds
from runtime.server import MAX_REQUEST_BYTES
from runtime.tasks import stop_tasks
from tabletop.relay.v1 import relay_pb2
from wire.errors import ApiError
from wire.metadata import GUEST_METADATA, NAME_METADATA, PLAYER_METADATA, REQUEST_METADATA, Caller
from wire.proof import FRESH_SECONDS, check, given_proof, issued_at

log = logging.getLogger("tabletop.relay")

RELAY_METHOD = "/tabletop.relay.v1.RelayService/Relay"
FRAMES_METHOD = "/tabletop.relay.v1.RelayService/RelayFrames"

FRAME_CALLS = 128
"""The most calls in one frame."""
FRAME_CALL_BYTES = MAX_REQUEST_BYTES
"""The most bytes of calls in one frame (a lone larger call goes alone): with the frame's few
bytes a call, a frame stays within what a service takes (RELAY_ALLOWANCE_BYTES)."""
FRAME_ANSWERS = 128
"""The most answers in one frame."""
FRAME_ANSWER_BYTES = 1024 * 1024
"""The most bytes of answers in one frame (a lone larger answer goes alone)."""

DRAIN_NOTICE_SECONDS = 1.0
"""How long a stopping service tries to tell a link to drain before it gives up on it."""

CODES = {code.value[0]: code for code in grpc.StatusCode}
"""gRPC status codes by number."""
CODE_NAMES = {number: code.name for number, code in CODES.items()}
"""Their names, by number."""

Handler = Callable[[Any, Caller], Awaitable[Message]]
"""A unary method of a service: the request and who calls -> the answer (or an ApiError)."""


def failure(
    call_id: int,
    code: grpc.StatusCode,
    details: str,
    trailers: Sequence[tuple[str, str | bytes]] = (),
) -> relay_pb2.RelayResponse:
    """The answer to a call that ended with `code` (not OK)."""
    return relay_pb2.RelayResponse(
        call_id=call_id,
        code=code.value[0],
        details=details,
        trailers=[
            relay_pb2.Trailer(key=key, value=value if isinstance(value, bytes) else value.encode())
            for key, value in trailers
        ],
    )


def refusal(call_id: int, error: ApiError) -> relay_pb2.RelayResponse:
    """The answer to a call refused with `error`, as a direct call's status and trailer."""
    status = error.to_status()
    return failure(call_id, status.code, status.details, status.trailing_metadata)


class Outbox:
    """Serialized messages on their way over one link, taken as frames.

    Nothing waits to fill a frame. The gateway's writer task `take`s: the first call put wakes
    it, which asyncio schedules with `call_soon`, so it takes every call put in the same turn of
    the event loop. A service's answers go the same way: the first waits for the end of the
    turn it is ready in (the answers of one group commit come in the same turn) and `take_now`s
    them all, unless a frame is being written: the answers that come meanwhile go together in
    the next. A frame holds at most `max_items` messages and `max_bytes` of them (or one larger
    message alone)."""

    def __init__(self, max_items: int, max_bytes: int) -> None:
        self.max_items = max_items
        self.max_bytes = max_bytes
        self._messages: collections.deque[bytes] = collections.deque()
        self._ready = asyncio.Event()
        self._closed = False

    def __len__(self) -> int:
        """Messages waiting for the next frame."""
        return len(self._messages)

    def put(self, message: bytes) -> None:
        self._messages.append(message)
        self._ready.set()

    def close(self) -> None:
        """Nothing more will be put: `take` gives what is left, then None."""
        self._closed = True
        self._ready.set()

    def take_now(self) -> list[bytes]:
        """The next frame's messages (none: nothing waits)."""
        if not self._messages:
            return []
        first = self._messages.popleft()
        frame, size = [first], len(first)
        while (
            self._messages
            and len(frame) < self.max_items
            and size + len(self._messages[0]) <= self.max_bytes
        ):
            message = self._messages.popleft()
            frame.append(message)
            size += len(message)
        return frame

    async def take(self) -> list[bytes] | None:
        """The next frame's messages, as soon as there is one; None once closed and empty."""
        while not self._messages:
            if self._closed:
                return None
            self._ready.clear()
            await self._ready.wait()
        return self.take_now()


def frame_of(messages: Iterable[bytes]) -> bytes:
    """A RelayRequestFrame (of serialized RelayRequests) or a RelayResponseFrame (of serialized
    RelayResponses), serialized: both are the messages as their field 1, in order."""
    return b"".join(b"\x0a" + _varint(len(message)) + message for message in messages)


def _varint(number: int) -> bytes:
    out = bytearray()
    while number > 0x7F:
        out.append(number & 0x7F | 0x80)
        number >>= 7
    out.append(number)
    return bytes(out)


CALLS_PER_FRAME = RELAY_FRAME.labels("calls")
ANSWERS_PER_FRAME = RELAY_FRAME.labels("answers")

DRAIN = relay_pb2.RelayResponse(drain=True)
"""The notice that a link takes no new calls."""


class _Answers:
    """A link's way back (Relay): each answer a message of its own, written in turn."""

    def __init__(self, context: Any) -> None:
        self.context = context
        self.writes = asyncio.Lock()

    async def send(self, answer: relay_pb2.RelayResponse) -> None:
        async with self.writes:
            await self.context.write(answer)

    async def drain(self) -> None:
        """Tell the gateway to send no new calls (within DRAIN_NOTICE_SECONDS, or never)."""
        try:
            async with asyncio.timeout(DRAIN_NOTICE_SECONDS), self.writes:
                await self.context.write(DRAIN)
        except Exception:  # the link is gone or stuck: stopping goes on regardless
            log.info("relay drain notice not delivered")


class _FramedAnswers(_Answers):
    """A link's way back (RelayFrames): an answer goes at the end of the event loop's turn when
    no frame is being written, with every answer ready in that turn; the answers that come
    while one is go together in the next."""

    def __init__(self, context: Any) -> None:
        super().__init__(context)
        self.outbox = Outbox(FRAME_ANSWERS, FRAME_ANSWER_BYTES)
        self.writing = False

    async def send(self, answer: relay_pb2.RelayResponse) -> None:
        await self._send(answer.SerializeToString())

    async def drain(self) -> None:
        try:
            async with asyncio.timeout(DRAIN_NOTICE_SECONDS):
                await self._send(DRAIN.SerializeToString())
        except Exception:  # the link is gone or stuck: stopping goes on regardless
            log.info("relay drain notice not delivered")

    async def _send(self, message: bytes) -> None:
        self.outbox.put(message)
        if self.writing:
            return  # the write under way sends it next
        self.writing = True
        try:
            await asyncio.sleep(0)  # the other answers ready in this turn join the frame
            while frame := self.outbox.take_now():
                ANSWERS_PER_FRAME.observe(len(frame))
                await self.context.write(frame_of(frame))
        finally:
            self.writing = False


class RelayServicer:
    """Serves the unary methods of `service` (by `handlers`) over relay links."""

    def __init__(
        self,
        service: ServiceDescriptor,
        handlers: Mapping[str, Handler],
        internal_key: str = "",
        accept_unbound_proofs: bool = False,
    ) -> None:
        """`internal_key`: each call must carry a good proof made with it (wire.proof), and a
        link takes calls only within its opening proof's window; empty: no proofs (tests).
        `accept_unbound_proofs`: an older gateway's calls, without proofs of their own, are
        taken on a link it proved (during an upgrade)."""
        self.internal_key = internal_key
        self.accept_unbound = accept_unbound_proofs
        self._methods: dict[str, tuple[str, Callable[[bytes], Any], Handler]] = {}
        for method in service.methods:
            if method.client_streaming or method.server_streaming:
                continue  # streams stay direct calls: a stream's setup cost does not matter
            parse = message_factory.GetMessageClass(method.input_type).FromString
            path = f"/{service.full_name}/{method.name}"
            self._methods[method.name] = (path, parse, handlers[method.name])
        self._links: dict[Any, _Answers] = {}
        """Each open link's context, and its way back."""
        self._calls: set[asyncio.Task[None]] = set()
        """The calls being served, on every link (a link that ends leaves its calls to end)."""
        self.calls = 0
        """Calls served so far (for tests and the curious)."""
        self.frames = 0
        """Frames of calls received so far (RelayFrames)."""
        self.draining = False

    def add_to(self, server: grpc.aio.Server) -> None:
        # Registered by hand: the generated servicer base class types a streaming method as an
        # iterator of answers, and this one writes its answers as they are ready.
        server.add_generic_rpc_handlers((
            grpc.method_handlers_generic_handler(
                relay_pb2.DESCRIPTOR.services_by_name["RelayService"].full_name,
                {
                    "Relay": grpc.stream_stream_rpc_method_handler(
                        self.Relay,
                        request_deserializer=relay_pb2.RelayRequest.FromString,
                        response_serializer=relay_pb2.RelayResponse.SerializeToString,
                    ),
                    # Frames of answers are written serialized already (frame_of).
                    "RelayFrames": grpc.stream_stream_rpc_method_handler(
                        self.RelayFrames,
                        request_deserializer=relay_pb2.RelayRequestFrame.FromString,
                    ),
                },
            ),
        ))  # fmt: skip

    async def Relay(self, request_iterator: Any, context: Any) -> None:
        """Serve one link (a call to a message) until the gateway closes its side, then finish
        the calls in flight."""
        await self._link(context, _Answers(context), lambda request: (request,))

    async def RelayFrames(self, request_iterator: Any, context: Any) -> None:
        """Serve one link (frames of calls and of answers), as Relay."""

        def calls(frame: relay_pb2.RelayRequestFrame) -> Sequence[relay_pb2.RelayRequest]:
            self.frames += 1
            CALLS_PER_FRAME.observe(len(frame.calls))
            return frame.calls

        await self._link(context, _FramedAnswers(context), calls)

    async def _link(
        self,
        context: Any,
        answers: _Answers,
        calls_in: Callable[[Any], Iterable[relay_pb2.RelayRequest]],
    ) -> None:
        self._links[context] = answers
        try:
            if self.draining:  # opened just as the service began to stop
                await answers.drain()
            ends_ms = self._link_ends_ms(context)
            told = False
            calls: set[asyncio.Task[None]] = set()
            while True:
                message = await context.read()
                if message is grpc.aio.EOF:
                    break
                # Past its opening proof's window a link takes no more calls (the gateway
                # tries them again on a new link), whoever holds it.
                stale = ends_ms is not None and time.time() * 1000 > ends_ms
                if stale and not told:
                    told = True
                    await answers.drain()
                for request in calls_in(message):
                    call = asyncio.create_task(self._serve(request, answers, stale))
                    calls.add(call)
                    call.add_done_callback(calls.discard)
                    self._calls.add(call)
                    call.add_done_callback(self._calls.discard)
            if calls:
                await asyncio.wait(set(calls))
        finally:
            del self._links[context]

    async def _serve(self, request: relay_pb2.RelayRequest, answers: _Answers, stale: bool) -> None:
        """One call of a link, whichever rpc brought it: served, and its answer sent back."""
        self.calls += 1
        if stale:
            expired = ApiError(
                "UNAVAILABLE", "this relay link has expired (its proof went stale); retry"
            )
            response = refusal(request.call_id, expired)
        else:
            response = await self.call(request)
        try:
            await answers.send(response)
        except Exception:  # the link is gone: the gateway retries or reports the call
            log.info("relay answer not delivered", extra={"method": request.method})

    def _link_ends_ms(self, context: Any) -> int | None:
        """When a link stops taking calls: its opening proof's window (None: no proofs here)."""
        if not self.internal_key:
            return None
        metadata = {k: v for k, v in context.invocation_metadata() or () if isinstance(v, str)}
        issued = issued_at(given_proof(metadata))
        return 0 if issued is None else issued + FRESH_SECONDS * 1000

    async def call(self, request: relay_pb2.RelayRequest) -> relay_pb2.RelayResponse:
        """Serve one relayed call; its answer (never raises)."""
        found = self._methods.get(request.method)
        if found is None:
            return failure(
                request.call_id,
                grpc.StatusCode.UNIMPLEMENTED,
                f"no unary method {request.method[:80]!r} here",
            )
        path, parse, handler = found
        if self.internal_key and (request.proof or not self.accept_unbound):
            wrong = check(
                self.internal_key, path, request.proof, relayed_fields(request), request.request
            )
            if wrong is not None:
                return refusal(
                    request.call_id,
                    ApiError("UNAUTHENTICATED", f"a relayed call without a good proof ({wrong})"),
                )
        seconds = request.timeout_ms / 1000 if request.timeout_ms else None
        start = time.perf_counter()
        try:
            # Past its deadline a call stops, as a direct call's handler is cancelled.
            async with asyncio.timeout(seconds):
                reply = await handler(
                    _parsed(path, parse, request.request),
                    Caller(
                        request.player_id,
                        request.request_id,
                        request.player_name,
                        guest=request.guest,
                    ),
                )
            answer = relay_pb2.RelayResponse(
                call_id=request.call_id, response=reply.SerializeToString()
            )
        except TimeoutError:
            answer = failure(
                request.call_id, grpc.StatusCode.DEADLINE_EXCEEDED, "Deadline Exceeded"
            )
        except ApiError as error:
            answer = refusal(request.call_id, error)
        except Exception:
            log.exception("relayed call failed", extra={"method": request.method})
            answer = failure(
                request.call_id, grpc.StatusCode.UNKNOWN, "the service failed to answer; retry"
            )
        rpc_seconds(path, CODE_NAMES[answer.code]).observe(time.perf_counter() - start)
        return answer

    async def drain(self) -> None:
        """The service is stopping: ask the gateway on every link to send no new calls."""
        self.draining = True
        await asyncio.gather(*(answers.drain() for answers in list(self._links.values())))

    async def close(self) -> None:
        """After the server stopped: the calls still being served end (cancelled, as a direct
        call's handler is when its server stops), so that none uses what the service closes
        next (its Redis client)."""
        await stop_tasks(self._calls)


def relayed_fields(request: relay_pb2.RelayRequest) -> dict[str, str]:
    """The identity fields of a relayed call, as a direct call's metadata names them."""
    return {
        PLAYER_METADATA: request.player_id,
        NAME_METADATA: request.player_name,
        REQUEST_METADATA: request.request_id,
        GUEST_METADATA: "1" if request.guest else "",
    }


def _parsed(path: str, parse: Callable[[bytes], Any], request: bytes) -> Any:
    try:
        return parse(request)
    except DecodeError:
        raise ApiError("INVALID_ARGUMENT", f"the request is not a {path} request") from None
