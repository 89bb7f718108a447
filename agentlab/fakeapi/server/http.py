"""The HTTP side of the local server: reading requests safely, writing JSON and SSE.

Why ``ThreadingHTTPServer`` (the standard library) with limits, and not an
ASGI app on uvicorn: a classroom server must install with nothing beyond
Python, and students read this code next to the lesson, where a thread per
connection that reads a request, answers it and moves on is the plainest
picture of what an API server does. Its known weaknesses are closed here:

- a listen backlog of 1024 (the default of 5 turned 200 simultaneous clients
  into connection errors);
- at most ``max_connections`` open connections; one more is answered at once
  with 529 ``overloaded_error`` (the SDK retries that) and closed;
- deadlines watched by one reaper thread: an idle keep-alive connection is
  closed after ``idle_timeout``; a request whose headers and body have not all
  arrived within ``request_timeout`` (a slow sender) gets a 400
  ``request_body_timeout`` or is closed, so idle or slow clients never keep
  others out; every socket operation also times out (``io_timeout``), so a
  client that stops reading a stream frees its thread;
- the body is read by ``Content-Length`` (digits only) or chunked
  transfer-encoding, at most ``max_body`` bytes (413 with the API's error
  body), and JSON nested deeper than ``max_depth`` is refused before any code
  walks it;
- nothing is kept per finished request (``record=0`` turns off the request log).

An asyncio server (uvicorn) would hold thousands of idle connections more
cheaply; for a class of a few hundred students the thread pool measured in
``benchmarks/serve_load.py`` is enough.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import socket
import sys
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

from agentlab.fakeapi.streaming import events

if TYPE_CHECKING:
    from agentlab.fakeapi.server.server import Answer, FakeMessagesServer, Fault


@dataclass(frozen=True)
class Limits:
    """How much one client may take from the server."""

    max_body: int = 32 * 1024 * 1024  # the API's limit for /v1/messages (32 MB)
    max_depth: int = 100  # JSON nesting
    max_connections: int = 1000
    idle_timeout: float = 30.0  # a keep-alive connection waiting for its next request
    request_timeout: float = 30.0  # headers and body of one request
    io_timeout: float = 20.0  # any one read or write


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
    """The request body could not be read: answer ``status`` (0: just close)."""

    def __init__(self, status: int, message: str = "", code: str | None = None):
        super().__init__(message)
        self.status, self.message, self.code = status, message, code


class Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # stop() does not wait for a slow answer to finish
    request_queue_size = 1024
    allow_reuse_address = True

    def __init__(self, address: Any, handler: Any, limits: Limits):
        self.limits = limits
        self._active = 0
        self._lock = threading.Lock()
        self._deadlines: dict[socket.socket, float] = {}
        self._expired: set[socket.socket] = set()  # cut off by the reaper
        self._stopping = threading.Event()
        super().__init__(address, handler)
        self._reaper = threading.Thread(target=self._reap, daemon=True, name="agentlab-reaper")
        self._reaper.start()

    @property
    def active(self) -> int:
        """Open connections right now."""
        return self._active

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._lock:
            busy = self._active >= self.limits.max_connections
            if not busy:
                self._active += 1
        if busy:
            try:
                request.settimeout(1.0)
                request.sendall(_overloaded())
            except OSError:
                pass
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except Exception:
            with self._lock:
                self._active -= 1
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            with self._lock:
                self._active -= 1
                self._deadlines.pop(request, None)
                self._expired.discard(request)

    def watch(self, sock: socket.socket, seconds: float | None) -> None:
        """Close ``sock`` if it is still being watched ``seconds`` from now (None: stop)."""
        with self._lock:
            if seconds is None:
                self._deadlines.pop(sock, None)
            else:
                self._deadlines[sock] = time.monotonic() + seconds

    def expired(self, sock: socket.socket) -> bool:
        """Did ``sock`` miss its deadline?"""
        with self._lock:
            return sock in self._expired

    def _reap(self) -> None:
        busy = False
        while not self._stopping.wait(0.25):
            if self._active:
                busy = True
            elif busy:  # all connections closed: give freed memory back to the system
                busy = False
                _trim()
            now = time.monotonic()
            with self._lock:
                late = [s for s, at in self._deadlines.items() if at < now]
                for s in late:
                    del self._deadlines[s]
                    self._expired.add(s)
            for s in late:
                try:
                    s.shutdown(socket.SHUT_RD)  # a blocked read returns; we may still answer
                except OSError:
                    pass

    def server_close(self) -> None:
        self._stopping.set()
        super().server_close()

    def handle_error(self, request: Any, client_address: Any) -> None:
        error = sys.exc_info()[1]
        if isinstance(error, (BrokenPipeError, ConnectionResetError, TimeoutError, OSError)):
            return  # the client gave up, timed out or was cut off: nothing to report
        super().handle_error(request, client_address)


def _trim() -> None:
    """Ask the C allocator to return free memory to the system (glibc only).

    Threads allocate in arenas of their own; without this, memory freed after a
    busy hour stays counted against the server until it is used again."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.malloc_trim(0)
    except (OSError, AttributeError):
        pass  # not glibc: nothing to do


def _overloaded() -> bytes:
    body = json.dumps(
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    ).encode()
    head = (
        "HTTP/1.1 529 Overloaded\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\nretry-after: 1\r\n\r\n"
    )
    return head.encode() + body


class Handler(BaseHTTPRequestHandler):
    owner: FakeMessagesServer
    server: Server
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out at once: no 40 ms stall per reply

    def setup(self) -> None:
        self.connection = self.request
        self.request.settimeout(self.server.limits.io_timeout)  # every read and write
        super().setup()

    def handle_one_request(self) -> None:
        self.server.watch(self.connection, self.server.limits.idle_timeout)
        super().handle_one_request()

    def parse_request(self) -> bool:
        self.server.watch(self.connection, self.server.limits.request_timeout)
        ok = super().parse_request()
        if ok and self.server.expired(self.connection):  # the headers never finished
            self.close_connection = True
            return False
        return ok

    def log_message(self, format: str, *args: Any) -> None:
        if self.owner.log is not None:
            self.owner.log(format % args)

    # -- reading ------------------------------------------------------------
    def read_body(self) -> bytes:
        """The raw body, by Content-Length or chunked; raises BodyError."""
        limit = self.server.limits.max_body
        if "chunked" in self.headers.get("transfer-encoding", "").lower():
            return self._read_chunked(limit)
        length = self.headers.get("content-length")
        if length is None:
            return b""
        if not length.strip().isdigit():
            # The API's own wording for a malformed header is not public (agentlab's).
            raise BodyError(400, f"Content-Length: {length!r} is not a number of bytes")
        n = int(length)
        if n > limit:
            raise BodyError(413)
        return self._read_exactly(n)

    def _read_exactly(self, n: int) -> bytes:
        data = self.rfile.read(n)
        if len(data) < n:  # the sender stopped or was too slow
            raise BodyError(
                400,
                # The SDK's description of this error (request_body_timeout).
                "The request body did not finish arriving in time, so nothing was done.",
                "request_body_timeout",
            )
        return data

    def _read_chunked(self, limit: int) -> bytes:
        parts: list[bytes] = []
        total = 0
        while True:
            line = self.rfile.readline(1024)
            try:
                size = int(line.split(b";")[0].strip(), 16)
            except ValueError:
                raise BodyError(400, "Malformed chunked request body") from None
            if size == 0:
                while self.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                    pass  # trailers
                return b"".join(parts)
            total += size
            if total > limit:
                raise BodyError(413)
            parts.append(self._read_exactly(size))
            self.rfile.readline(3)  # the CRLF after each chunk

    def headers_seen(self, secret: Any) -> dict[str, str]:
        """The request's headers, lower-cased, without keys or auth of any kind."""
        return {k.lower(): v for k, v in self.headers.items() if not secret.search(k.lower())}

    # -- writing --------------------------------------------------------------
    def send(self, answer: Answer, request_id: str) -> None:
        data = json.dumps(answer.body, ensure_ascii=False).encode("utf-8")
        self.send_response(answer.status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        if request_id:
            self.send_header("request-id", request_id)
        for k, v in answer.headers.items():
            self.send_header(k, v)
        if self.close_connection:
            self.send_header("connection", "close")
        self.end_headers()
        self.wfile.write(data)

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _event(self, name: str, data: dict[str, Any]) -> None:
        payload = json.dumps(data, ensure_ascii=False)
        self._chunk(f"event: {name}\ndata: {payload}\n\n".encode())

    def stream(self, message: Any, request_id: str, fault: Fault | None) -> None:
        from agentlab.fakeapi.server.server import error_body

        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.send_header("request-id", request_id)
        self.end_headers()
        sent = 0
        for name, data in events(message):
            if fault is not None and name == "content_block_delta" and sent >= fault.after:
                if fault.kind == "stream_cut":
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self._event("error", error_body(fault.status, fault.message, request_id))
                break
            self._event(name, data)
            if name == "content_block_delta":
                sent += 1
                if self.owner.chunk_delay and self.owner.wait(self.owner.chunk_delay):
                    self.close_connection = True
                    return
        self._chunk(b"")  # the last chunk: the stream is complete

    # -- methods --------------------------------------------------------------
    def do_GET(self) -> None:
        self.owner.handle_get(self)

    def do_POST(self) -> None:
        self.owner.handle_post(self)
