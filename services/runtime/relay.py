"""The game service's end of the gateway's relay links (proto/tabletop/relay/v1/relay.proto).

Each message on a link is one call of the game service's unary methods. It is served by the
same servicer method, metrics and error mapping as a direct gRPC call; only the transport
differs. Calls on a link run concurrently, and their answers go back as they finish.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from typing import Any, NoReturn

import grpc
from google.protobuf import message_factory
from google.protobuf.descriptor import ServiceDescriptor

from services.runtime.observability import Behavior, timed_unary
from services.runtime.servicer import PLAYER_METADATA, REQUEST_METADATA
from tabletop.relay.v1 import relay_pb2

log = logging.getLogger("tabletop.relay")

RELAY_METHOD = "/tabletop.relay.v1.RelayService/Relay"

DRAIN_NOTICE_SECONDS = 1.0
"""How long a stopping service tries to tell a link to drain before it gives up on it."""

CODES = {code.value[0]: code for code in grpc.StatusCode}
"""gRPC status codes by number."""


class Aborted(Exception):
    """A relayed call ended with a status other than OK (its context's `abort`)."""

    def __init__(
        self, code: grpc.StatusCode, details: str, trailers: Sequence[tuple[str, str | bytes]]
    ) -> None:
        super().__init__(details)
        self.code = code
        self.details = details
        self.trailers = trailers


class RelayedContext:
    """What a servicer method uses of its gRPC context, for a call that came over a link."""

    __slots__ = ("_code", "_deadline", "_metadata")

    def __init__(self, request: relay_pb2.RelayRequest) -> None:
        self._metadata = (
            (PLAYER_METADATA, request.player_id),
            (REQUEST_METADATA, request.request_id),
        )
        self._deadline = (
            time.monotonic() + request.timeout_ms / 1000 if request.timeout_ms else None
        )
        self._code: grpc.StatusCode | None = None

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return self._metadata

    def time_remaining(self) -> float | None:
        return None if self._deadline is None else max(0.0, self._deadline - time.monotonic())

    def code(self) -> grpc.StatusCode | None:
        return self._code

    async def abort(
        self,
        code: grpc.StatusCode,
        details: str = "",
        trailing_metadata: Sequence[tuple[str, str | bytes]] = (),
    ) -> NoReturn:
        self._code = code
        raise Aborted(code, details, trailing_metadata)


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


class RelayServicer:
    """Serves the unary methods of `service` (implemented by `servicer`) over relay links."""

    def __init__(self, service: ServiceDescriptor, servicer: Any) -> None:
        self._methods: dict[str, Behavior] = {}
        for method in service.methods:
            if method.client_streaming or method.server_streaming:
                continue  # Watch streams stay direct calls: a stream's setup cost does not matter
            parse = message_factory.GetMessageClass(method.input_type).FromString
            path = f"/{service.full_name}/{method.name}"
            self._methods[method.name] = timed_unary(path, getattr(servicer, method.name), parse)
        self._links: dict[Any, asyncio.Lock] = {}
        """Each open link's context, and the lock its writers take turns with."""
        self.calls = 0
        """Calls served so far (for tests and the curious)."""
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
                    )
                },
            ),
        ))  # fmt: skip

    async def Relay(self, request_iterator: Any, context: Any) -> None:
        """Serve one link until the gateway closes its side, then finish the calls in flight."""
        writes = self._links[context] = asyncio.Lock()
        if self.draining:  # opened just as the service began to stop
            await self._notify(context, writes)
        calls: set[asyncio.Task[None]] = set()
        try:
            while True:
                request = await context.read()
                if request is grpc.aio.EOF:
                    break
                call = asyncio.create_task(self._serve(request, context, writes))
                calls.add(call)
                call.add_done_callback(calls.discard)
            if calls:
                await asyncio.wait(set(calls))
        finally:
            del self._links[context]

    async def _serve(
        self, request: relay_pb2.RelayRequest, context: Any, writes: asyncio.Lock
    ) -> None:
        self.calls += 1
        response = await self.call(request)
        async with writes:
            try:
                await context.write(response)
            except Exception:  # the link is gone: the gateway retries or reports the call
                log.info("relay answer not delivered", extra={"method": request.method})

    async def call(self, request: relay_pb2.RelayRequest) -> relay_pb2.RelayResponse:
        """Serve one relayed call; its answer (never raises)."""
        behavior = self._methods.get(request.method)
        if behavior is None:
            return failure(
                request.call_id,
                grpc.StatusCode.UNIMPLEMENTED,
                f"no unary method {request.method[:80]!r} here",
            )
        seconds = request.timeout_ms / 1000 if request.timeout_ms else None
        try:
            # Past its deadline a call stops, as a direct call's handler is cancelled.
            async with asyncio.timeout(seconds):
                reply = await behavior(request.request, RelayedContext(request))
        except TimeoutError:
            return failure(request.call_id, grpc.StatusCode.DEADLINE_EXCEEDED, "Deadline Exceeded")
        except Aborted as error:
            return failure(request.call_id, error.code, error.details, error.trailers)
        except Exception:
            log.exception("relayed call failed", extra={"method": request.method})
            return failure(
                request.call_id, grpc.StatusCode.UNKNOWN, "the game service failed to answer; retry"
            )
        return relay_pb2.RelayResponse(call_id=request.call_id, response=reply.SerializeToString())

    async def drain(self) -> None:
        """The service is stopping: ask the gateway on every link to send no new calls."""
        self.draining = True
        await asyncio.gather(*(self._notify(c, w) for c, w in list(self._links.items())))

    @staticmethod
    async def _notify(context: Any, writes: asyncio.Lock) -> None:
        try:
            async with asyncio.timeout(DRAIN_NOTICE_SECONDS), writes:
                await context.write(relay_pb2.RelayResponse(drain=True))
        except Exception:  # the link is gone or stuck: stopping goes on regardless
            log.info("relay drain notice not delivered")
