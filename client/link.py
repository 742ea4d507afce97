"""A player session on one stream (tabletop.session.v1): every call of the player goes as a
message on one long-lived stream to the gateway instead of a gRPC call of its own.

`SessionLink.stub(descriptor)` gives an object with the methods of a generated stub, called
the same way (`await stub.Play(request, metadata=...)`, `async for m in stub.Watch(...)`), that
fail the same way (grpc.aio.AioRpcError with the code, details and trailers a call of its own
would have), so code written for the stubs runs on a session unchanged.

After a drop (the connection broke, the gateway restarted) the link opens a new stream at the
next call and sends again the unary calls still waiting that are safe to repeat: reads, and
requests with a `request_id` (a move retried with its id is applied once and answered as the
first was). Any other call still waiting fails with UNAVAILABLE, as a call of its own cut off
would, since it may or may not have been served; so does a streaming call, which its caller
asks again from where it was (a Watch from the last version received + 1: no gap, no
duplicate).
"""

from __future__ import annotations

import asyncio
import functools
import itertools
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import grpc
from google.protobuf import message_factory
from google.protobuf.descriptor import MethodDescriptor, ServiceDescriptor
from google.protobuf.message import Message

from runtime.relay import CODES
from runtime.server import MAX_REQUEST_BYTES
from tabletop.session.v1 import session_pb2
from wire.api import READS
from wire.metadata import BOT_SEAT_METADATA

OPEN_METHOD = "/tabletop.session.v1.SessionService/Open"

MAX_CALLS = 64
"""Calls in progress at once on the session (the gateway's default SESSION_MAX_CALLS)."""
REOPEN_SECONDS = (0.1, 0.2, 0.4, 0.8, 1.6, 3.2)
"""How long after a drop the link opens a new stream for the calls waiting, by how many times
they were sent again already: a call safe to repeat is sent again this many times, over about
6 s (a gateway's restart), before it fails."""

LONGEST_TIMEOUT_SECONDS = 24 * 3600.0
"""A longer timeout is this one (the gateway gives a call on a session at most 5 minutes)."""

Metadata = Sequence[tuple[str, str | bytes]]


class _Call:
    """A call in progress: a unary call's one answer comes in a future, a streaming call's
    answers in a queue (None there: the iteration ends)."""

    __slots__ = ("answer", "answers", "message", "repeatable", "resends", "sent_on")

    def __init__(self, message: session_pb2.Call, repeatable: bool, streaming: bool) -> None:
        self.message = message
        self.repeatable = repeatable
        self.sent_on = 0
        """The stream (by number) the call was last sent on."""
        self.resends = 0
        self.answers: asyncio.Queue[session_pb2.OpenResponse | None] | None = None
        self.answer: asyncio.Future[session_pb2.OpenResponse | None] | None = None
        if streaming:
            self.answers = asyncio.Queue()
        else:
            self.answer = asyncio.get_running_loop().create_future()

    def put(self, answer: session_pb2.OpenResponse | None) -> None:
        if self.answers is not None:
            self.answers.put_nowait(answer)
        elif self.answer is not None and not self.answer.done():
            self.answer.set_result(answer)


class SessionLink:
    """One player's session stream; `token` gives the current access token (a new one is sent
    on the stream before the next call)."""

    def __init__(
        self, channel: grpc.aio.Channel, token: Callable[[], str], max_calls: int = MAX_CALLS
    ) -> None:
        self._open: Any = channel.stream_stream(
            OPEN_METHOD,
            request_serializer=session_pb2.OpenRequest.SerializeToString,
            response_deserializer=session_pb2.OpenResponse.FromString,
        )
        self._token = token
        self._ids = itertools.count(1)
        self._calls: dict[int, _Call] = {}
        self._stream: Any = None
        self._outbox: asyncio.Queue[session_pb2.OpenRequest] = asyncio.Queue()
        self._tasks: list[asyncio.Task[None]] = []
        """The current stream's reader and writer."""
        self._streams = 0
        """Streams opened so far: which one a call was sent on."""
        self._ended = 0
        """The last stream whose end was dealt with."""
        self._sent_token = ""
        self._closed = False
        self.slots = asyncio.Semaphore(max_calls)
        """A call in progress holds one: the gateway serves at most MAX_CALLS at once on a
        session (SESSION_MAX_CALLS), so more wait here for their turn instead of being refused."""

    def stub(self, service: ServiceDescriptor) -> Any:
        return _Stub(self, service)

    async def close(self) -> None:
        self._closed = True
        self.drop()
        self._fail_all(grpc.StatusCode.CANCELLED, "the session was closed")

    def drop(self) -> None:
        """Break the stream, as a lost connection would: the calls safe to repeat are sent
        again on a new one, the others fail with UNAVAILABLE."""
        stream, self._stream = self._stream, None
        if stream is not None:
            stream.cancel()
            for task in self._tasks:
                task.cancel()
            self._dropped(self._streams, None)

    def _deliver(self, message: session_pb2.OpenRequest | None = None) -> None:
        """Opens the stream if there is none (and sends again the calls a dropped one left
        waiting), sends the token if it changed, then `message`. Nothing here waits: the
        stream's writer task writes what is queued, one message at a time."""
        if self._closed:
            raise _error(grpc.StatusCode.CANCELLED, "the session was closed")
        if self._stream is None:
            token = self._sent_token = self._token()
            self._stream = stream = self._open(metadata=(("authorization", f"Bearer {token}"),))
            self._streams += 1
            self._outbox = asyncio.Queue()
            self._tasks = [
                asyncio.create_task(self._read(stream, self._streams)),
                asyncio.create_task(self._write(stream, self._outbox)),
            ]
            for waiting in self._calls.values():
                self._send(waiting)
            return
        if self._token() != self._sent_token:
            self._sent_token = self._token()
            self._outbox.put_nowait(session_pb2.OpenRequest(token=self._sent_token))
        if message is not None:
            self._outbox.put_nowait(message)

    def _send(self, call: _Call) -> None:
        call.sent_on = self._streams
        self._outbox.put_nowait(session_pb2.OpenRequest(call=call.message))

    async def _write(self, stream: Any, outbox: asyncio.Queue[session_pb2.OpenRequest]) -> None:
        try:
            while True:
                await stream.write(await outbox.get())
        except (grpc.aio.AioRpcError, grpc.aio.UsageError, asyncio.InvalidStateError):
            stream.cancel()  # broken: the reader ends, and settles the calls

    async def _read(self, stream: Any, number: int) -> None:
        failure: grpc.aio.AioRpcError | None = None
        try:
            async for response in stream:
                if response.call_id == 0 and response.code:
                    # A new token the session refused (another player's: a bot worker that
                    # logged in again): the next stream opens with it.
                    asyncio.get_running_loop().call_soon(self.drop)
                    continue
                call = self._calls.get(response.call_id)
                if call is not None and call.sent_on == number:
                    call.put(response)
                    if response.done:
                        del self._calls[response.call_id]
        except grpc.aio.AioRpcError as error:
            failure = error
        except asyncio.CancelledError:
            return  # dropped or closed (`drop`)
        if self._stream is stream:
            self._stream = None
            self._tasks[1].cancel()
        self._dropped(number, failure)

    def _dropped(self, number: int, failure: grpc.aio.AioRpcError | None) -> None:
        """The stream `number` ended: its calls safe to repeat wait for the next stream (opened
        now if any wait), the others fail as a call of their own cut off would."""
        if number <= self._ended:
            return
        self._ended = number
        final = failure is not None and failure.code() in (
            grpc.StatusCode.UNAUTHENTICATED,
            grpc.StatusCode.PERMISSION_DENIED,
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            grpc.StatusCode.FAILED_PRECONDITION,
        )
        waiting, resends = False, 0
        for call_id, call in list(self._calls.items()):
            if call.sent_on != number:
                continue
            if call.repeatable and not final and call.resends < len(REOPEN_SECONDS):
                waiting, resends = True, max(resends, call.resends)
                call.resends += 1
                continue
            del self._calls[call_id]
            if failure is not None:
                call.put(_as_response(failure))
            else:
                call.put(
                    _response(grpc.StatusCode.UNAVAILABLE, "the session's stream ended; try again")
                )
        if waiting and not self._closed:
            asyncio.get_running_loop().create_task(self._reopen(REOPEN_SECONDS[resends]))

    async def _reopen(self, delay: float) -> None:
        await asyncio.sleep(delay)
        if self._stream is None and self._calls and not self._closed:
            self._deliver()

    def _fail_all(self, code: grpc.StatusCode, details: str) -> None:
        for call in self._calls.values():
            call.put(_response(code, details))
        self._calls.clear()

    def _start(self, message: session_pb2.Call, repeatable: bool, streaming: bool) -> _Call:
        message.call_id = next(self._ids)
        call = _Call(message, repeatable, streaming)
        if len(message.request) > MAX_REQUEST_BYTES:  # refused here: it would end the stream
            call.put(
                _response(
                    grpc.StatusCode.RESOURCE_EXHAUSTED,
                    f"the request is {len(message.request)} bytes: at most {MAX_REQUEST_BYTES}",
                )
            )
            return call
        try:
            self._calls[message.call_id] = call
            call.sent_on = self._streams
            self._deliver(session_pb2.OpenRequest(call=message))
        except grpc.aio.AioRpcError as error:  # the link is closed
            self._calls.pop(message.call_id, None)
            call.put(_as_response(error))
        return call

    async def unary(
        self, method: MethodDescriptor, request: Message, seconds: float | None, bot_seat: str
    ) -> Any:
        repeatable = method.name in READS or bool(getattr(request, "request_id", ""))
        if seconds is not None:
            seconds = min(seconds, LONGEST_TIMEOUT_SECONDS)
        message = session_pb2.Call(
            method=_path(method),
            request=request.SerializeToString(),
            timeout_ms=int(seconds * 1000) if seconds else 0,
            bot_seat=bot_seat,
        )
        try:
            async with self.slots:
                answer = self._start(message, repeatable, False).answer
                assert answer is not None
                if seconds:
                    async with asyncio.timeout(seconds + 5):
                        answered = await answer
                else:
                    answered = await answer
        except TimeoutError:
            self._calls.pop(message.call_id, None)
            raise _error(grpc.StatusCode.DEADLINE_EXCEEDED, "no answer in time") from None
        assert answered is not None
        if answered.code:
            raise _error(_code(answered.code), answered.details, answered.trailers)
        return _output(method).FromString(answered.response)

    def streaming(self, method: MethodDescriptor, request: Message, bot_seat: str) -> _StreamCall:
        message = session_pb2.Call(
            method=_path(method), request=request.SerializeToString(), bot_seat=bot_seat
        )
        return _StreamCall(self, message, _output(method))

    def _cancel(self, call_id: int) -> None:
        if self._calls.pop(call_id, None) is not None and self._stream is not None:
            self._outbox.put_nowait(session_pb2.OpenRequest(cancel=call_id))


class _StreamCall:
    """What a server-streaming stub call answers: iterate it (once); `cancel()` stops it."""

    def __init__(self, link: SessionLink, message: session_pb2.Call, output: Any) -> None:
        self._link = link
        self._message = message
        self._output = output
        self._call: _Call | None = None
        self._cancelled = False

    def __aiter__(self) -> AsyncIterator[Any]:
        return self._messages()

    async def _messages(self) -> AsyncIterator[Any]:
        if self._cancelled:
            return
        async with self._link.slots:
            call = self._call = self._link._start(self._message, False, True)
            try:
                assert call.answers is not None
                while (answer := await call.answers.get()) is not None:
                    if answer.done:
                        if answer.code:
                            raise _error(_code(answer.code), answer.details, answer.trailers)
                        return
                    yield self._output.FromString(answer.response)
            finally:
                self._link._cancel(self._message.call_id)

    def cancel(self) -> bool:
        self._cancelled = True
        if self._call is not None:
            self._call.put(None)  # the iteration ends, and the call with it
        return True


class _Stub:
    def __init__(self, link: SessionLink, service: ServiceDescriptor) -> None:
        self._link = link
        self._service = service

    def __getattr__(self, name: str) -> Callable[..., Any]:
        method = self._service.methods_by_name.get(name)
        if method is None:
            raise AttributeError(name)
        link = self._link
        if method.server_streaming:

            def stream(
                request: Message, metadata: Metadata = (), timeout: float | None = None
            ) -> _StreamCall:
                return link.streaming(method, request, _bot_seat(metadata))

            setattr(self, name, stream)  # made once: found as an attribute from now on
            return stream

        async def unary(
            request: Message,
            metadata: Metadata = (),
            timeout: float | None = None,  # noqa: ASYNC109 (a generated stub's signature)
        ) -> Any:
            return await link.unary(method, request, timeout, _bot_seat(metadata))

        setattr(self, name, unary)
        return unary


def _bot_seat(metadata: Metadata | None) -> str:
    for key, value in metadata or ():
        if key == BOT_SEAT_METADATA and isinstance(value, str):
            return value
    return ""


@functools.cache
def _path(method: MethodDescriptor) -> str:
    return f"/{method.containing_service.full_name}/{method.name}"


@functools.cache
def _output(method: MethodDescriptor) -> Any:
    """The class of `method`'s answers."""
    return message_factory.GetMessageClass(method.output_type)


def _code(number: int) -> grpc.StatusCode:
    return CODES.get(number, grpc.StatusCode.UNKNOWN)


def _response(code: grpc.StatusCode, details: str) -> session_pb2.OpenResponse:
    return session_pb2.OpenResponse(done=True, code=code.value[0], details=details)


def _as_response(error: grpc.aio.AioRpcError) -> session_pb2.OpenResponse:
    return session_pb2.OpenResponse(
        done=True,
        code=error.code().value[0],
        details=error.details() or "",
        trailers=[
            session_pb2.Trailer(key=k, value=v if isinstance(v, bytes) else v.encode())
            for k, v in error.trailing_metadata() or ()
            if not k.startswith(":")
        ],
    )


def _error(
    code: grpc.StatusCode, details: str, trailers: Sequence[session_pb2.Trailer] = ()
) -> grpc.aio.AioRpcError:
    metadata = grpc.aio.Metadata(
        *((t.key, t.value if t.key.endswith("-bin") else t.value.decode()) for t in trailers)
    )
    return grpc.aio.AioRpcError(code, grpc.aio.Metadata(), metadata, details)
