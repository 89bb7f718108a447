"""The HTTP side of the local server: uvicorn (with h11) and a small ASGI adapter.

uvicorn parses HTTP (h11, a pure-Python parser, so nothing needs compiling) and
holds thousands of connections on one event loop; this module adds what a
classroom server needs on top, each limit in one place:

- **connections**: at most ``max_connections`` open, and never more than the
  process's open-file limit (``RLIMIT_NOFILE``) leaves room for. One more
  closes the oldest connection that is only waiting (idle, or still sending
  its headers), so an idle crowd cannot lock others out; if every connection
  is busy answering, the newcomer gets 529 ``overloaded_error`` (the SDK
  retries that);
- **time**: a request's headers must all arrive within ``header_timeout``
  of its first byte (of the connection's opening, for a new connection); an
  idle keep-alive connection is closed after ``idle_timeout``; a body that has
  not all arrived ``body_timeout`` after the headers gets a 400
  ``request_body_timeout``; a client that stops reading an answer for
  ``io_timeout`` is cut off;
- **size**: a body larger than ``max_body`` gets a 413 as soon as that many
  bytes have come, whether it was announced by Content-Length or sent
  chunked (h11 reads a chunk as it arrives, and a malformed chunk size such
  as ``-1`` is a 400); JSON nested deeper than ``max_depth`` is refused
  before any code walks it, and a body with more than ``max_containers``
  brackets (``[`` and ``{``, counted in a few milliseconds) before it is
  parsed: 32 MB of ``[[],[],...]`` would take over 700 MB;
- **errors in the API's shape**: whatever h11 refuses (a bad Content-Length
  such as ``abc`` or ``²``, a malformed chunk, headers too long) gets a 400
  JSON error body, never uvicorn's plain-text one.
"""

from __future__ import annotations

import asyncio
import json
import resource
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from agentlab.fakeapi.streaming import events

if TYPE_CHECKING:
    from agentlab.fakeapi.server.server import Answer, Fault

Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


@dataclass(frozen=True)
class Limits:
    """How much one client may take from the server."""

    max_body: int = 32 * 1024 * 1024  # the API's limit for /v1/messages (32 MB)
    max_depth: int = 100  # JSON nesting
    # JSON arrays and objects in one body (counted by their brackets, strings too): about
    # 70 bytes of memory each, so 32 MB of "[[],[],...]" would take over 700 MB
    max_containers: int = 1_000_000
    max_connections: int = 1000  # lowered to what RLIMIT_NOFILE allows
    header_timeout: float = 10.0  # all of a request's headers, from its first byte
    idle_timeout: float = 30.0  # a keep-alive connection waiting for its next request
    body_timeout: float = 30.0  # all of the body, from the end of the headers
    io_timeout: float = 20.0  # a client that reads none of an answer this long is cut off


def open_file_room(wanted: int) -> tuple[int, int]:
    """How many connections fit under the open-file limit (at most ``wanted``), and
    how many asyncio may accept in one go (its ``backlog``).

    A quarter of the limit (at least 16) stays free, for everything else the
    process opens and for connections accepted but not yet counted: asyncio
    accepts up to ``backlog`` of them each turn of its loop, and a few turns
    pass before a new connection can be counted and another one closed."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return wanted, 128
    spare = max(16, soft // 4)
    return max(1, min(wanted, soft - spare)), max(1, min(128, spare // 8))


def too_deep(data: Any, limit: int) -> bool:
    """Is ``data`` nested more than ``limit`` levels? (no recursion)"""
    stack = [(data, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        if isinstance(item, dict):
            stack += [(v, depth + 1) for v in item.values() if isinstance(v, (dict, list))]
        elif isinstance(item, list):
            stack += [(v, depth + 1) for v in item if isinstance(v, (dict, list))]
    return False


class BodyError(Exception):
    """The request body could not be read: answer ``status``."""

    def __init__(self, status: int, message: str = "", code: str | None = None):
        super().__init__(message)
        self.status, self.message, self.code = status, message, code


def error_bytes(status: int, message: str) -> bytes:
    """An API error body, for answers written before any request reached the app."""
    from agentlab.fakeapi.server.server import error_body

    return json.dumps(error_body(status, message)).encode()


class Protocol(H11Protocol):
    """uvicorn's h11 connection with the limits above. ``room`` is set per server."""

    room = 1000  # connections at most (see open_file_room)
    limits = Limits()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)  # type: ignore[arg-type]
        self.since = self.loop.time()  # when it last started waiting
        self.aborted = False
        self._late: asyncio.TimerHandle | None = None
        self._expect_headers()
        app = self.app

        async def with_abort(scope: Any, receive: Any, send: Any) -> None:
            scope["agentlab.abort"] = self.abort  # the faults close connections on purpose
            await app(scope, receive, send)

        self.app = with_abort
        if len(self.connections) > self.room:
            waiting = [c for c in self.connections if isinstance(c, Protocol) and c.waiting()]
            if waiting:
                min(waiting, key=lambda c: c.since).abort()
            else:
                body = error_bytes(529, "Overloaded")
                transport.write(  # type: ignore[attr-defined]
                    b"HTTP/1.1 529 Overloaded\r\ncontent-type: application/json\r\n"
                    b"content-length: %d\r\nconnection: close\r\nretry-after: 1\r\n\r\n%s"
                    % (len(body), body)
                )
                self.abort(flush=True)

    def waiting(self) -> bool:
        """Open, but neither running a request nor in the middle of an answer."""
        idle = self.cycle is None or self.cycle.response_complete
        return idle and self.conn.their_state is h11.IDLE and not self.transport.is_closing()

    def _expect_headers(self) -> None:
        if self._late is None:
            self._late = self.loop.call_later(self.limits.header_timeout, self._headers_late)

    def _headers_late(self) -> None:
        self._late = None
        if self.conn.their_state is h11.IDLE:  # the headers never finished
            self.abort()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state is h11.IDLE and self.conn.our_state is h11.IDLE:
            self._expect_headers()  # the next request has begun (or nothing came yet)
        elif self._late is not None:
            self._late.cancel()
            self._late = None

    def on_response_complete(self) -> None:
        self.since = self.loop.time()
        super().on_response_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._late is not None:
            self._late.cancel()
            self._late = None
        super().connection_lost(exc)

    def abort(self, flush: bool = False) -> None:
        """Close the connection now; the request being answered, if any, is dropped."""
        self.aborted = True
        if self.cycle is not None:
            self.cycle.disconnected = True  # uvicorn sends nothing more on it
        if flush:
            self.transport.close()
        else:
            self.transport.abort()

    def send_400_response(self, msg: str) -> None:
        """What h11 refused, as the API's error body (uvicorn's own is plain text)."""
        if self.conn.our_state not in (h11.IDLE, h11.SEND_RESPONSE):
            self.abort()  # an answer had begun: the stream cannot be trusted
            return
        # The API's wording for a malformed request is not public (agentlab's).
        body = error_bytes(
            400,
            "The request is not valid HTTP/1.1 (a malformed header such as Content-Length, "
            "or a malformed chunk of the body).",
        )
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"connection", b"close"),
        ]
        try:
            self.transport.write(self.conn.send(h11.Response(status_code=400, headers=headers)))
            self.transport.write(self.conn.send(h11.Data(data=body)))
            self.transport.write(self.conn.send(h11.EndOfMessage()))
        except h11.LocalProtocolError:
            pass
        self.transport.close()

    def handle_events(self) -> None:
        try:
            super().handle_events()
        except h11.LocalProtocolError:  # an answer to a broken request could not be sent
            self.abort()


class Exchange:
    """One HTTP request as the answering code sees it: read the body, send an answer."""

    def __init__(self, scope: dict[str, Any], receive: Receive, send: Send, limits: Limits):
        self.method: str = scope["method"]
        self.path: str = scope["path"]
        self.headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        self._receive, self._send, self.limits = receive, send, limits
        self._abort: Callable[..., None] = scope.get("agentlab.abort", lambda flush=False: None)
        self.close = False  # ask the client to close after this answer
        self.status: int | None = None  # what was answered (None: nothing yet)

    def abort(self, flush: bool = False) -> None:
        """Close the connection (``flush``: after what was written so far)."""
        self._abort(flush=flush)

    async def read_body(self) -> bytearray:
        """The whole body, at most ``max_body`` bytes; raises BodyError."""
        limit = self.limits.max_body
        length = self.headers.get("content-length")
        if length is not None and int(length) > limit:  # h11 checked it is digits
            raise BodyError(413)
        # One growing buffer, not a list of pieces: a large one lives in memory of
        # its own, which goes back to the system when it is freed.
        body = bytearray()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.limits.body_timeout
        while True:
            try:
                message = await asyncio.wait_for(self._receive(), deadline - loop.time())
            except TimeoutError:
                raise BodyError(
                    400,
                    # The SDK's description of this error (request_body_timeout).
                    "The request body did not finish arriving in time, so nothing was done.",
                    "request_body_timeout",
                ) from None
            if message["type"] == "http.disconnect":
                raise BodyError(0)
            body += message.get("body", b"")
            if len(body) > limit:
                raise BodyError(413)
            if not message.get("more_body"):
                return body

    async def _write(self, message: dict[str, Any]) -> None:
        """Send, or cut the client off if it has not read for ``io_timeout``."""
        loop = asyncio.get_running_loop()
        timer = loop.call_later(self.limits.io_timeout, self.abort)
        try:
            await self._send(message)
        finally:
            timer.cancel()

    async def send(self, answer: Answer, request_id: str) -> None:
        data = json.dumps(answer.body, ensure_ascii=False).encode("utf-8", "surrogatepass")
        headers = [(b"content-type", b"application/json"),
                   (b"content-length", str(len(data)).encode())]  # fmt: skip
        if request_id:
            headers.append((b"request-id", request_id.encode()))
        headers += [(k.encode(), str(v).encode()) for k, v in answer.headers.items()]
        if self.close:
            headers.append((b"connection", b"close"))
        self.status = answer.status
        await self._write({"type": "http.response.start", "status": answer.status,
                           "headers": headers})  # fmt: skip
        await self._write({"type": "http.response.body", "body": data})

    async def stream(
        self, message: Any, request_id: str, fault: Fault | None, chunk_delay: float
    ) -> None:
        """Send ``message`` as the API's server-sent events, playing ``fault`` if any.

        Events go out together unless ``chunk_delay`` spaces them (each one through
        h11 costs more than building it)."""
        from agentlab.fakeapi.server.server import error_body

        headers = [
            (b"content-type", b"text/event-stream; charset=utf-8"),
            (b"cache-control", b"no-cache"),
            (b"request-id", request_id.encode()),
        ]
        self.status = 200
        await self._write({"type": "http.response.start", "status": 200, "headers": headers})
        pending: list[str] = []

        async def flush(more: bool = True) -> None:
            body = "".join(pending).encode("utf-8", "surrogatepass")
            pending.clear()
            await self._write({"type": "http.response.body", "body": body, "more_body": more})

        sent = 0
        for name, data in events(message):
            if fault is not None and name == "content_block_delta" and sent >= fault.after:
                if fault.kind == "stream_cut":
                    await flush()
                    self.abort(flush=True)
                    return
                name, data = "error", error_body(fault.status, fault.message, request_id)
                pending.append(f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n")
                break
            pending.append(f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n")
            if name == "content_block_delta":
                sent += 1
                if chunk_delay:
                    await flush()
                    await asyncio.sleep(chunk_delay)
        await flush(more=False)  # the stream is complete
