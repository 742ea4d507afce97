"""Player sessions: one long-lived stream per client carrying its calls in and their answers
and streamed messages out (tabletop.session.v1, proto/tabletop/session/v1/session.proto).

A call on a session goes through the steps of a call of its own (gateway/routing.py `Proxy`):
the token checked again (expired, session ended), the player's rate limit, an API token's
scopes, a new request id, then the same relay link or backend stream, so its answer, error
reason and trailers are the ones a call of its own would end with. What a session may make
the gateway hold is bounded: it is one of the player's open streams and so is each streaming
call on it, at most `max_calls` calls are in progress on it at once, and at most `OUTBOX`
messages wait for a client that does not read (then the calls wait, and the transport's flow
control holds the client).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator

import grpc

from gateway.auth import Identity
from gateway.routing import Proxy, Route, too_large
from runtime.observability import rpc_seconds
from runtime.relay import CODE_NAMES
from runtime.server import MAX_REQUEST_BYTES, Context
from tabletop.session.v1 import session_pb2, session_pb2_grpc
from wire.errors import ApiError, abort

MAX_CALLS = 64
"""Calls in progress on one session at once (SESSION_MAX_CALLS); one more is refused with
LIMIT_REACHED."""
OUTBOX = 256
"""Messages a session holds for a client that does not read them."""
MAX_TIMEOUT_SECONDS = 300.0
"""The longest `timeout_ms` a unary call on a session is given."""

SERVICE = session_pb2.DESCRIPTOR.services_by_name["SessionService"].full_name


class SessionServicer(session_pb2_grpc.SessionServiceServicer):
    def __init__(self, proxy: Proxy, max_calls: int = MAX_CALLS) -> None:
        self.proxy = proxy
        self.max_calls = max_calls

    async def Open(
        self, requests: AsyncIterator[session_pb2.OpenRequest], context: Context
    ) -> AsyncIterator[session_pb2.OpenResponse]:
        try:
            guard = self.proxy.guard
            token = guard.token(context)
            identity = guard.check(token)
            guard.limit(identity)  # opening one is a call too
            with self.proxy.stream_slot(identity.player_id):
                session = _Session(self.proxy, identity, token, self.max_calls)
                reader = asyncio.create_task(session.read(requests))
                try:
                    while (message := await session.outbox.get()) is not None:
                        yield message
                finally:
                    reader.cancel()
                    await session.stop()
        except ApiError as error:
            await abort(context, error)


class _Session:
    def __init__(self, proxy: Proxy, identity: Identity, token: str, max_calls: int) -> None:
        self.proxy = proxy
        self.identity = identity
        self.token = token
        self.max_calls = max_calls
        self.outbox: asyncio.Queue[session_pb2.OpenResponse | None] = asyncio.Queue(OUTBOX)
        self.calls: dict[int, asyncio.Task[None]] = {}
        self.streaming: set[int] = set()

    async def read(self, requests: AsyncIterator[session_pb2.OpenRequest]) -> None:
        """Takes the client's requests until it closes its side; then the unary calls in
        progress are answered, the streaming ones end, and so does the session."""
        with contextlib.suppress(grpc.aio.AioRpcError, asyncio.InvalidStateError):
            async for request in requests:
                kind = request.WhichOneof("kind")
                if kind == "call":
                    await self.start(request.call)
                elif kind == "cancel":
                    task = self.calls.get(request.cancel)
                    if task is not None:
                        task.cancel()
                elif kind == "token":
                    await self.renew(request.token)
        for call_id in self.streaming:
            self.calls[call_id].cancel()
        await asyncio.gather(*self.calls.values(), return_exceptions=True)
        await self.outbox.put(None)

    async def stop(self) -> None:
        """The stream is gone: every call in progress stops."""
        for task in self.calls.values():
            task.cancel()
        await asyncio.gather(*self.calls.values(), return_exceptions=True)

    async def start(self, call: session_pb2.Call) -> None:
        refusal = None
        if call.call_id == 0:
            refusal = ApiError("INVALID_ARGUMENT", "call_id must be set (not 0)")
        elif call.call_id in self.calls:
            refusal = ApiError(
                "INVALID_ARGUMENT",
                f"call {call.call_id} is still in progress on this session: use a new call_id",
            )
        elif len(self.calls) >= self.max_calls:
            refusal = ApiError(
                "LIMIT_REACHED",
                f"{len(self.calls)} calls are in progress on this session: at most "
                f"{self.max_calls} at once; wait for answers first",
                limit="session_calls",
                max=str(self.max_calls),
            )
        if refusal is not None:
            await self.outbox.put(_refused(call.call_id, refusal))
            return
        route = self.proxy.routes.get(call.method)
        if route is not None and route.streaming:
            self.streaming.add(call.call_id)
        self.calls[call.call_id] = asyncio.create_task(self.run(call, route))

    async def renew(self, token: str) -> None:
        try:
            identity = self.proxy.guard.check(token)
            if (identity.player_id, identity.worker) != (
                self.identity.player_id,
                self.identity.worker,
            ):
                raise ApiError(
                    "UNAUTHENTICATED", "a session's next token must be for the same player"
                )
        except ApiError as error:
            await self.outbox.put(_refused(0, error))
            return
        self.token, self.identity = token, identity
        await self.outbox.put(session_pb2.OpenResponse(token_accepted=True))

    def _caller(self, call: session_pb2.Call) -> Identity:
        """Who makes `call`, checked now as a call of its own is when it arrives."""
        guard = self.proxy.guard
        identity = guard.acting(guard.check(self.token), [call.bot_seat] if call.bot_seat else [])
        guard.limit(identity)
        return identity

    async def run(self, call: session_pb2.Call, route: Route | None) -> None:
        """Serve one call and send its last response, timed into tabletop_rpc_seconds under
        the method's name like a call of its own."""
        started = time.perf_counter()
        last = _response(call.call_id, grpc.StatusCode.CANCELLED, "cancelled")
        try:
            last = await self._serve(call, route)
            await self.outbox.put(last)
        except asyncio.CancelledError:
            # Cancelled by the client (answered) or because the session is gone (nobody reads).
            with contextlib.suppress(asyncio.QueueFull):
                self.outbox.put_nowait(last)
        finally:
            del self.calls[call.call_id]
            self.streaming.discard(call.call_id)
            method = call.method if route is not None else "unknown"
            rpc_seconds(method, _code(last.code)).observe(time.perf_counter() - started)

    async def _serve(self, call: session_pb2.Call, route: Route | None) -> session_pb2.OpenResponse:
        """The call's last response (its answer, or why it failed)."""
        call_id, request_id = call.call_id, ""
        try:
            if len(call.request) > MAX_REQUEST_BYTES:
                exhausted = grpc.StatusCode.RESOURCE_EXHAUSTED
                return _response(call_id, exhausted, too_large(call.request))
            if route is None:
                unknown = (
                    f"no public method {call.method[:200]!r}: name one as '/package.Service/Method'"
                )
                return _response(call_id, grpc.StatusCode.UNIMPLEMENTED, unknown)
            identity = self._caller(call)
            request_id = self.proxy.permit(identity, route)
            if route.streaming:
                await self._stream(call, route, identity, request_id)
                last = session_pb2.OpenResponse(call_id=call_id, done=True)
            else:
                seconds = call.timeout_ms / 1000 if call.timeout_ms else None
                answer = await self.proxy.call(
                    identity,
                    route,
                    call.request,
                    request_id,
                    min(seconds or self.proxy.call_timeout_seconds, MAX_TIMEOUT_SECONDS),
                )
                last = session_pb2.OpenResponse(
                    call_id=call_id,
                    done=True,
                    code=answer.code,
                    response=answer.response,
                    details=answer.details,
                    trailers=[_trailer(t.key, t.value) for t in answer.trailers],
                )
        except ApiError as error:
            last = _refused(call_id, error)
        except grpc.aio.AioRpcError as error:
            last = _failed(call_id, error)
        last.request_id = request_id
        return last

    async def _stream(
        self, call: session_pb2.Call, route: Route, identity: Identity, request_id: str
    ) -> None:
        with self.proxy.stream_slot(identity.player_id):
            messages = self.proxy.stream(identity, route, call.request, request_id)
            async with contextlib.aclosing(messages):
                async for message in messages:
                    await self.outbox.put(
                        session_pb2.OpenResponse(
                            call_id=call.call_id, response=message, request_id=request_id
                        )
                    )


def _code(number: int) -> str:
    return CODE_NAMES.get(number, "UNKNOWN")


def _response(call_id: int, code: grpc.StatusCode, details: str) -> session_pb2.OpenResponse:
    return session_pb2.OpenResponse(call_id=call_id, done=True, code=code.value[0], details=details)


def _refused(call_id: int, error: ApiError) -> session_pb2.OpenResponse:
    status = error.to_status()
    return session_pb2.OpenResponse(
        call_id=call_id,
        done=True,
        code=status.code.value[0],
        details=status.details,
        trailers=[_trailer(k, v) for k, v in status.trailing_metadata],
    )


def _failed(call_id: int, error: grpc.aio.AioRpcError) -> session_pb2.OpenResponse:
    return session_pb2.OpenResponse(
        call_id=call_id,
        done=True,
        code=error.code().value[0],
        details=error.details() or "",
        trailers=[
            _trailer(k, v) for k, v in error.trailing_metadata() or () if not k.startswith(":")
        ],
    )


def _trailer(key: str, value: str | bytes) -> session_pb2.Trailer:
    return session_pb2.Trailer(key=key, value=value if isinstance(value, bytes) else value.encode())
