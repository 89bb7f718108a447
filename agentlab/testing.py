"""A local HTTP server that speaks the Anthropic Messages API, for tests and classes.

    import anthropic
    from agentlab.testing import FakeMessagesServer

    with FakeMessagesServer(["Hello!"]) as server:
        client = anthropic.Anthropic(api_key="test", base_url=server.url, max_retries=0)
        client.messages.create(model="claude-sonnet-5-5", max_tokens=100,
                               messages=[{"role": "user", "content": "hi"}])

The real ``anthropic`` SDK talks to it over HTTP, so the SDK's own request
building, retries and streaming code all run. The server

- answers ``POST /v1/messages`` with JSON, or with server-sent events when the
  request says ``"stream": true`` (the API's real event sequence), and
  ``POST /v1/messages/count_tokens``;
- checks every request with the rules the offline clients use
  (``agentlab.offline.check_request``) and answers a broken one with a 400 in
  the API's error shape and wording;
- plays scripted replies, in the forms ``ScriptedClient`` takes (a string, a
  list of blocks, a message dict, a ``Message``, or a function of the request);
  with no script it is the offline demo model, so ``agentlab serve`` can serve
  a whole class without a key;
- fails on request: ``server.fail(529, times=3)``, ``server.drop()``,
  ``server.slow(2.0)``, ``server.break_stream(after=2)``, ``server.cut_stream()``;
- records every request (body, headers without any key, the SDK's retry count)
  in ``server.requests``;
- simulates prompt caching: a request marked with ``cache_control`` writes its
  prompt to a cache, and a later request that starts with the same prompt reads
  it (``cache_read_input_tokens``). Token counts are estimates (4 characters a token).
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import re
import socket
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from agentlab.history import as_dict
from agentlab.i18n import t
from agentlab.offline import DEMO_MODEL, check_request, demo_reply, make_message

__all__ = ["Fault", "FakeMessagesServer", "RecordedRequest", "main"]

# The error "type" the API uses for each status code.
ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}
ERROR_MESSAGES = {
    401: "invalid x-api-key",
    403: "Your API key does not have permission to use the specified resource.",
    404: "Not found",
    413: "Request exceeds the maximum allowed number of bytes.",
    429: "Number of requests has exceeded your rate limit. Please try again later.",
    500: "Internal server error",
    504: "Request timed out",
    529: "Overloaded",
}
SECRET_HEADER = re.compile(r"auth|key|token|secret|cookie", re.IGNORECASE)


@dataclass(frozen=True)
class Fault:
    """One planned failure, used by the next request that reaches the server.

    ``kind`` is ``"status"`` (answer ``status`` with an API error body),
    ``"drop"`` (close the connection without answering), ``"slow"`` (wait
    ``delay`` seconds, then answer normally), ``"stream_error"`` (send
    ``after`` content deltas, then an SSE ``error`` event) or ``"stream_cut"``
    (send ``after`` deltas, then close the connection). A stream fault on a
    request that does not stream becomes the matching error status instead.
    """

    kind: str
    status: int = 529
    retry_after: float | None = None
    message: str | None = None
    delay: float = 0.0
    after: int = 1


@dataclass
class RecordedRequest:
    """One request as the server saw it. Keys and auth headers are never kept."""

    method: str
    path: str
    body: Any
    headers: dict[str, str]
    retry_count: int  # the SDK's x-stainless-retry-count: 0 on a first attempt
    status: int | None = None  # what the server answered; None if it dropped the connection
    fault: str | None = None  # the kind of Fault applied, if any
    streamed: bool = False

    @property
    def messages(self) -> list[Any]:
        return list(self.body.get("messages") or []) if isinstance(self.body, dict) else []


def _tokens(data: Any) -> int:
    """A rough token count: 4 characters of compact JSON a token."""
    if data is None or data == [] or data == "":
        return 0
    return max(1, len(json.dumps(data, ensure_ascii=False, separators=(",", ":"))) // 4)


def _marked(body: dict[str, Any]) -> bool:
    """Does this request ask for prompt caching (top-level or on any block)?"""
    if body.get("cache_control"):
        return True
    return '"cache_control"' in json.dumps(
        [body.get("tools"), body.get("system"), body.get("messages")]
    )


def error_body(status: int, message: str | None = None, request_id: str = "") -> dict[str, Any]:
    """The API's error shape for ``status``."""
    return {
        "type": "error",
        "error": {
            "type": ERROR_TYPES.get(status, "api_error"),
            "message": message or ERROR_MESSAGES.get(status, "Error"),
        },
        "request_id": request_id,
    }


Reply = Any  # what ScriptedClient takes: str, blocks, message dict, Message, exception, function


@dataclass
class _Answer:
    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


class FakeMessagesServer:
    """A Messages-API server on 127.0.0.1 (a free port unless ``port`` is given).

    ``replies`` is a list of replies or a function ``fn(request_body) -> reply``;
    ``None`` serves the offline demo model. ``model`` names the model in the
    replies (default: the model the request asked for; the demo says
    ``agentlab-demo``). With ``api_key`` set, other keys get a 401; with
    ``models`` set, other model names get a 404. ``chunk_delay`` slows streams
    down so a class can watch the text arrive.
    """

    def __init__(
        self,
        replies: Sequence[Reply] | Callable[[dict[str, Any]], Reply] | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        model: str | None = None,
        check: bool = True,
        api_key: str | None = None,
        models: Sequence[str] | None = None,
        chunk_delay: float = 0.0,
        log: Callable[[str], None] | None = None,
    ):
        self.host, self.port = host, port
        self.model = DEMO_MODEL if replies is None and model is None else model
        self.check = check
        self.models = list(models) if models is not None else None
        self.chunk_delay = chunk_delay
        self.log = log
        self._api_key = api_key
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None
        self._ids = itertools.count(1)  # request ids
        self._message_ids = itertools.count(1)  # message and tool_use ids
        self.requests: list[RecordedRequest] = []
        self.faults: list[Fault] = []
        self._cache: set[str] = set()
        self.script(demo_reply if replies is None else replies)

    # -- scripting ----------------------------------------------------------
    def script(self, replies: Sequence[Reply] | Callable[[dict[str, Any]], Reply]) -> None:
        """Play these replies from now on (the count starts again at the first)."""
        with self._lock:
            self._replies = replies
            self._index = 0

    def reset(self) -> None:
        """Forget recorded requests, planned faults and the prompt cache (the script
        goes on where it was; ``script()`` starts a new one)."""
        with self._lock:
            self.requests.clear()
            self.faults.clear()
            self._cache.clear()

    def _plan(self, fault: Fault, times: int) -> FakeMessagesServer:
        with self._lock:
            self.faults += [fault] * times
        return self

    def fail(
        self,
        status: int = 529,
        *,
        times: int = 1,
        retry_after: float | None = 0,
        message: str | None = None,
    ) -> FakeMessagesServer:
        """Answer the next ``times`` requests with ``status`` (an API error body).

        ``retry_after`` (seconds) is sent as ``retry-after`` and ``retry-after-ms``.
        0 means "retry at once" (sent as 1 ms: the SDK reads a 0 as no advice
        and would back off for about half a second). ``None`` sends neither header.
        """
        return self._plan(Fault("status", status, retry_after, message), times)

    def drop(self, *, times: int = 1) -> FakeMessagesServer:
        """Close the connection without answering, ``times`` times."""
        return self._plan(Fault("drop"), times)

    def slow(self, delay: float, *, times: int = 1) -> FakeMessagesServer:
        """Wait ``delay`` seconds before answering, ``times`` times (for timeouts)."""
        return self._plan(Fault("slow", delay=delay), times)

    def break_stream(
        self, *, after: int = 1, status: int = 529, message: str | None = None, times: int = 1
    ) -> FakeMessagesServer:
        """Send ``after`` content deltas, then an SSE ``error`` event (as the API does
        when it is overloaded mid-reply). The scripted reply being sent is used up."""
        return self._plan(Fault("stream_error", status, None, message, after=after), times)

    def cut_stream(self, *, after: int = 1, times: int = 1) -> FakeMessagesServer:
        """Send ``after`` content deltas, then close the connection mid-stream (the
        scripted reply being sent is used up)."""
        return self._plan(Fault("stream_cut", 500, after=after), times)

    # -- running ------------------------------------------------------------
    @property
    def url(self) -> str:
        """The base URL to give the SDK: ``anthropic.Anthropic(base_url=server.url)``."""
        host = "127.0.0.1" if self.host in ("", "0.0.0.0") else self.host
        return f"http://{host}:{self.port}"

    def start(self) -> FakeMessagesServer:
        if self._httpd is not None:
            return self
        handler = type("Handler", (_Handler,), {"owner": self})
        httpd = _Server((self.host, self.port), handler)
        self._httpd = httpd
        self.port = int(httpd.server_address[1])
        self._closing.clear()
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is None:
            return
        self._closing.set()  # wakes any slow answer
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = self._thread = None

    def __enter__(self) -> FakeMessagesServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"FakeMessagesServer(url={self.url!r}, requests={len(self.requests)})"

    @property
    def retry_counts(self) -> list[int]:
        """The SDK's retry count of each recorded request, in order."""
        return [r.retry_count for r in self.requests]

    def wait(self, seconds: float) -> bool:
        """Sleep up to ``seconds``; True if the server is shutting down."""
        return self._closing.wait(seconds)

    # -- answering ------------------------------------------------------------
    def _request_id(self) -> str:
        return f"req_fake_{next(self._ids):04d}"

    def _next_fault(self) -> Fault | None:
        with self._lock:
            return self.faults.pop(0) if self.faults else None

    def _authorised(self, headers: dict[str, str]) -> bool:
        if self._api_key is None:
            return True
        bearer = headers.get("authorization", "").removeprefix("Bearer ").strip()
        return self._api_key in (headers.get("x-api-key"), bearer)

    def _usage(self, body: dict[str, Any]) -> dict[str, int]:
        """Estimated input usage; a marked request reads and writes the toy cache."""
        messages = as_dict(list(body.get("messages") or []))
        head = [body.get("model"), body.get("tools"), body.get("system")]
        size = _tokens(body.get("tools")) + _tokens(body.get("system"))
        if not _marked(body):
            total = size + sum(_tokens(m) for m in messages)
            return {
                "input_tokens": max(1, total),
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
            }
        digest = hashlib.sha256(json.dumps(head, sort_keys=True).encode())
        read = 0
        with self._lock:
            for m in messages:
                digest.update(json.dumps(m, sort_keys=True).encode())
                size += _tokens(m)
                if digest.hexdigest() in self._cache:
                    read = size
            self._cache.add(digest.hexdigest())
        return {
            "input_tokens": 0,  # everything up to the cache breakpoint is cached
            "cache_creation_input_tokens": max(0, size - read),
            "cache_read_input_tokens": read,
        }

    def _reply(self, body: dict[str, Any]) -> Any:
        """The next scripted reply as a Message, or an _Answer for an error."""
        with self._lock:
            replies, index = self._replies, self._index
            self._index += 1
        try:
            if callable(replies):
                item = replies(body)
            elif index < len(replies):
                item = replies[index]
            else:
                return _Answer(
                    500,
                    error_body(
                        500,
                        f"FakeMessagesServer has no reply left for request {index + 1} "
                        f"(the script holds {len(replies)})",
                    ),
                    {"x-should-retry": "false"},
                )
            if callable(item) and not isinstance(item, BaseException):
                item = item(body)
        except ValueError as e:  # a reply function saying the request is wrong
            return _Answer(400, error_body(400, str(e)))
        if isinstance(item, BaseException):
            status = getattr(item, "status_code", None)
            data = getattr(item, "body", None)
            if isinstance(status, int) and isinstance(data, dict):
                return _Answer(status, data)
            return _Answer(500, error_body(500, str(item)), {"x-should-retry": "false"})
        if hasattr(item, "stop_reason"):
            return item
        data_with_usage = isinstance(item, dict) and "content" in item and "usage" in item
        message = make_message(
            item, ids=self._message_ids, model=self.model or body.get("model", "")
        )
        if not data_with_usage:
            message.usage = message.usage.model_copy(update=self._usage(body))
        return message

    def _answer(self, body: Any, path: str, headers: dict[str, str]) -> _Answer | Any:
        """What to answer (besides faults): an error _Answer, a token count, or a Message."""
        if not isinstance(body, dict):
            return _Answer(400, error_body(400, "The request body is not valid JSON."))
        if not self._authorised(headers):
            return _Answer(401, error_body(401))
        if path == "/v1/messages/count_tokens":
            errors = check_request({"max_tokens": 1, **body}) if self.check else []
            if errors:
                return _Answer(400, error_body(400, errors[0]))
            messages = as_dict(list(body.get("messages") or []))
            count = _tokens(body.get("tools")) + _tokens(body.get("system"))
            return _Answer(200, {"input_tokens": count + sum(_tokens(m) for m in messages)})
        if path != "/v1/messages":
            return _Answer(404, error_body(404, f"Not found: {path}"))
        errors = check_request(body) if self.check else []
        if errors:
            return _Answer(400, error_body(400, errors[0]))
        if self.models is not None and body.get("model") not in self.models:
            return _Answer(404, error_body(404, f"model: {body.get('model')}"))
        return self._reply(body)


def _events(message: Any) -> Iterator[tuple[str, dict[str, Any]]]:
    """The server-sent events the API sends for ``message``, in order.

    Content deltas are marked with the event name ``"content_block_delta"`` so
    a stream fault can count them.
    """
    data = message.model_dump(mode="json", exclude_none=True)
    blocks, usage = data.pop("content"), data.pop("usage")
    start = {**data, "content": [], "stop_reason": None, "stop_sequence": None}
    start["usage"] = {**usage, "output_tokens": 1}
    yield "message_start", {"type": "message_start", "message": start}
    for i, block in enumerate(blocks):
        kind = block.get("type")
        if kind == "text":
            first: dict[str, Any] = {"type": "text", "text": ""}
            deltas = [
                {"type": "text_delta", "text": piece}
                for piece in re.findall(r"\S+\s*|\s+", block["text"])
            ]
        elif kind == "tool_use":
            first = {**block, "input": {}}
            raw = json.dumps(block.get("input") or {}, ensure_ascii=False)
            deltas = [
                {"type": "input_json_delta", "partial_json": raw[k : k + 16]}
                for k in range(0, len(raw), 16)
            ]
        elif kind == "thinking":
            first = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [{"type": "thinking_delta", "thinking": block.get("thinking", "")}]
            deltas.append({"type": "signature_delta", "signature": block.get("signature", "")})
        else:  # other blocks arrive whole
            first, deltas = block, []
        yield (
            "content_block_start",
            {"type": "content_block_start", "index": i, "content_block": first},
        )
        if i == 0:
            yield "ping", {"type": "ping"}
        for delta in deltas:
            yield "content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": i}
    final = {"stop_reason": data.get("stop_reason"), "stop_sequence": data.get("stop_sequence")}
    yield "message_delta", {"type": "message_delta", "delta": final, "usage": usage}
    yield "message_stop", {"type": "message_stop"}


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # stop() does not wait for a slow answer to finish

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            return  # the client gave up (a timeout, a test that ended): nothing to report
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    owner: FakeMessagesServer
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out at once: no 40 ms stall per reply

    def log_message(self, format: str, *args: Any) -> None:
        if self.owner.log is not None:
            self.owner.log(format % args)

    def _headers(self) -> dict[str, str]:
        """The request's headers, lower-cased, without keys or auth of any kind."""
        return {
            k.lower(): v for k, v in self.headers.items() if not SECRET_HEADER.search(k.lower())
        }

    def do_GET(self) -> None:
        self._send(_Answer(404, error_body(404, f"Not found: {self.path}")), "")

    def do_POST(self) -> None:
        server = self.owner
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            body = None
        headers = {k.lower(): v for k, v in self.headers.items()}
        record = RecordedRequest(
            method="POST",
            path=self.path.split("?")[0],
            body=body,
            headers=self._headers(),
            retry_count=int(headers.get("x-stainless-retry-count") or 0),
            streamed=isinstance(body, dict) and bool(body.get("stream")),
        )
        with server._lock:
            server.requests.append(record)
        request_id = server._request_id()
        fault = server._next_fault()
        if fault is not None:
            record.fault = fault.kind
            if fault.kind == "drop":
                self.close_connection = True
                return
            if fault.kind == "slow":
                if server.wait(fault.delay):
                    self.close_connection = True
                    return
                fault = None
            elif fault.kind == "status" or not record.streamed:
                status = fault.status
                answer = _Answer(status, error_body(status, fault.message, request_id))
                if fault.retry_after is not None:
                    seconds = fault.retry_after
                    answer.headers["retry-after"] = str(seconds)
                    answer.headers["retry-after-ms"] = str(max(1, round(seconds * 1000)))
                record.status = status
                self._send(answer, request_id)
                return
        reply = server._answer(body, record.path, headers)
        if isinstance(reply, _Answer):
            if reply.status >= 400:
                reply.body.setdefault("request_id", request_id)
                reply.body["request_id"] = reply.body["request_id"] or request_id
            record.status = reply.status
            self._send(reply, request_id)
            return
        record.status = 200
        if record.streamed:
            self._stream(reply, request_id, fault)
        else:
            self._send(_Answer(200, reply.model_dump(mode="json", exclude_none=True)), request_id)

    def _send(self, answer: _Answer, request_id: str) -> None:
        data = json.dumps(answer.body, ensure_ascii=False).encode("utf-8")
        self.send_response(answer.status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        if request_id:
            self.send_header("request-id", request_id)
        for k, v in answer.headers.items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _event(self, name: str, data: dict[str, Any]) -> None:
        payload = json.dumps(data, ensure_ascii=False)
        self._chunk(f"event: {name}\ndata: {payload}\n\n".encode())

    def _stream(self, message: Any, request_id: str, fault: Fault | None) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        self.send_header("transfer-encoding", "chunked")
        self.send_header("request-id", request_id)
        self.end_headers()
        sent = 0
        for name, data in _events(message):
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


# ---------------------------------------------------------------------------
# `agentlab serve` / `python -m agentlab.testing`
# ---------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="agentlab serve",
        description="Serve a fake Anthropic Messages API (the offline demo model by default).",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (0.0.0.0: all)")
    p.add_argument("--port", type=int, default=8765, help="port (default 8765; 0: any free one)")
    p.add_argument("--script", metavar="JSON", help="a JSON list of replies to play in order")
    p.add_argument(
        "--replay", metavar="JSONL", help="answer from a recording made with agentlab.record"
    )
    p.add_argument("--chunk-delay", type=float, default=0.0, help="seconds between streamed pieces")
    p.add_argument("--quiet", action="store_true", help="do not log each request")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run the server until Ctrl-C. Students then set ``ANTHROPIC_BASE_URL``."""
    args = _parser().parse_args(argv)
    replies: Any = None
    if args.script:
        with open(args.script, encoding="utf-8") as f:
            replies = json.load(f)
    elif args.replay:
        from agentlab.recording import ReplayClient

        replies = ReplayClient(args.replay, match="request").reply

    def log(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    server = FakeMessagesServer(
        replies,
        host=args.host,
        port=args.port,
        chunk_delay=args.chunk_delay,
        log=None if args.quiet else log,
    )
    with server:
        what = t("serve.demo") if replies is None else args.script or args.replay
        print(t("serve.started", url=server.url, what=what), flush=True)
        # Listening on every address: students reach this machine by its name.
        public = f"http://{socket.gethostname()}:{server.port}"
        shared = args.host in ("", "0.0.0.0")
        print(t("serve.students", url=public if shared else server.url), flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            print(t("serve.stopped", n=len(server.requests)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
