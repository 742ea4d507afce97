"""A plain HTTP client of the web edge (gateway/web.py) for the tests: the Connect protocol and
gRPC-Web, written from their specifications (connectrpc.com/docs/protocol,
github.com/grpc/grpc/blob/master/doc/PROTOCOL-WEB.md) with the standard library only, so that
the tests check the wire, not another copy of the server's library."""

from __future__ import annotations

import base64
import http.client
import json
import struct
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field

from google.rpc import error_details_pb2, status_pb2

PROTOCOLS = ("connect", "grpc-web")


@dataclass
class Answer:
    """How a call ended: `code` "ok" or the error's code as Connect names it ("not_found"...),
    its message, and the reason and metadata of its google.rpc.ErrorInfo."""

    code: str = "ok"
    message: str = ""
    reason: str = ""
    metadata: dict[str, str] = field(default_factory=dict)
    messages: list[bytes] = field(default_factory=list)
    """The answer (unary), or the messages streamed before the end."""

    @property
    def error(self) -> tuple[str, str, dict[str, str]]:
        return self.code, self.reason, self.metadata


GRPC_CODES = [
    "ok", "canceled", "unknown", "invalid_argument", "deadline_exceeded", "not_found",
    "already_exists", "permission_denied", "resource_exhausted", "failed_precondition",
    "aborted", "out_of_range", "unimplemented", "internal", "unavailable", "data_loss",
    "unauthenticated",
]  # fmt: skip
"""Connect's names of the gRPC status codes, by number."""


def _info(details: list[tuple[str, bytes]]) -> tuple[str, dict[str, str]]:
    for type_name, value in details:
        if type_name.removeprefix("type.googleapis.com/") == "google.rpc.ErrorInfo":
            info = error_details_pb2.ErrorInfo.FromString(value)
            return info.reason, dict(info.metadata)
    return "", {}


def _b64(text: str) -> bytes:
    return base64.b64decode(text + "=" * (-len(text) % 4))


def _envelope(flags: int, data: bytes) -> bytes:
    return struct.pack(">BI", flags, len(data)) + data


def _envelopes(response: http.client.HTTPResponse) -> Iterator[tuple[int, bytes]]:
    while header := response.read(5):
        flags, length = struct.unpack(">BI", header)
        yield flags, response.read(length)


class Call:
    """One call (unary or server-streaming) over one HTTP connection: `messages()` yields the
    answers as they arrive, then `answer` says how it ended. `close()` drops the connection
    (a network that fails)."""

    def __init__(
        self,
        base_url: str,
        path: str,
        request: bytes,
        *,
        protocol: str = "connect",
        streaming: bool = False,
        token: str = "",
        timeout: float = 30.0,
        headers: dict[str, str] | None = None,
    ) -> None:
        url = urllib.parse.urlsplit(base_url)
        self.connection = http.client.HTTPConnection(url.hostname or "", url.port, timeout=timeout)
        self.protocol, self.streaming = protocol, streaming
        sent = {**(headers or {}), **({"authorization": f"Bearer {token}"} if token else {})}
        if protocol == "grpc-web":
            sent |= {"content-type": "application/grpc-web+proto", "x-grpc-web": "1"}
            body = _envelope(0, request)
        elif streaming:
            sent |= {"content-type": "application/connect+proto", "connect-protocol-version": "1"}
            body = _envelope(0, request)
        else:
            sent |= {"content-type": "application/proto", "connect-protocol-version": "1"}
            body = request
        self.connection.request("POST", path, body=body, headers=sent)
        self.response = self.connection.getresponse()
        self.answer = Answer()

    def close(self) -> None:
        self.connection.close()

    def messages(self) -> Iterator[bytes]:
        try:
            if self.protocol == "grpc-web":
                yield from self._grpc_web()
            elif self.streaming:
                yield from self._connect_stream()
            else:
                yield from self._connect_unary()
        finally:
            self.connection.close()

    def run(self) -> Answer:
        """Read the call to its end."""
        self.answer.messages = list(self.messages())
        return self.answer

    def _connect_unary(self) -> Iterator[bytes]:
        body = self.response.read()
        if self.response.status == 200:
            yield body
        else:
            self._connect_error(json.loads(body))

    def _connect_error(self, error: dict[str, object]) -> None:
        details = [(str(d["type"]), _b64(str(d["value"])))
                   for d in error.get("details", []) or []]  # type: ignore[attr-defined]  # fmt: skip
        reason, metadata = _info(details)
        self.answer.code = str(error.get("code", "unknown"))
        self.answer.message = str(error.get("message", ""))
        self.answer.reason, self.answer.metadata = reason, metadata

    def _connect_stream(self) -> Iterator[bytes]:
        assert self.response.status == 200, self.response.status
        for flags, data in _envelopes(self.response):
            if flags & 0x02:  # the end of the stream
                end = json.loads(data or b"{}")
                if end.get("error"):
                    self._connect_error(end["error"])
                return
            yield data
        self.answer.code = "unknown"  # ended without its end message: cut
        self.answer.message = "the stream ended without its end message"

    def _grpc_web(self) -> Iterator[bytes]:
        assert self.response.status == 200, self.response.status
        trailers = {k.lower(): v for k, v in self.response.getheaders()}
        for flags, data in _envelopes(self.response):
            if flags & 0x80:
                for line in data.decode().split("\r\n"):
                    key, _, value = line.partition(":")
                    if key:
                        trailers[key.strip().lower()] = value.strip()
                break
            yield data
        code = int(trailers.get("grpc-status", "2"))
        self.answer.code = GRPC_CODES[code]
        self.answer.message = urllib.parse.unquote(trailers.get("grpc-message", ""))
        if "grpc-status-details-bin" in trailers:
            status = status_pb2.Status.FromString(_b64(trailers["grpc-status-details-bin"]))
            details = [(d.type_url, d.value) for d in status.details]
            self.answer.reason, self.answer.metadata = _info(details)


def call(base_url: str, path: str, request: bytes, **options: object) -> Answer:
    """One call read to its end (see `Call`)."""
    return Call(base_url, path, request, **options).run()  # type: ignore[arg-type]
