"""``FakeMessagesServer``: what the local server answers, and the faults it plays."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import ctypes
import ctypes.util
import itertools
import json
import logging
import re
import secrets
import socket
import string
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import uvicorn

from agentlab import models as model_table
from agentlab.fakeapi import controls, thinking
from agentlab.fakeapi.checks import check_headers, check_request, fingerprint
from agentlab.fakeapi.offline import demo_reply, make_message
from agentlab.fakeapi.server import cache, threads
from agentlab.fakeapi.server.http import (
    BodyError,
    Exchange,
    Limits,
    Protocol,
    open_file_room,
    too_deep,
)

# The error "type" the API uses for each status code (Anthropic docs, "Errors",
# platform.claude.com/docs/en/api/errors, checked 2026-11-30).
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
    # The errors page: "Request exceeds the maximum allowed number of bytes. The
    # maximum request size is 32 MB for standard API endpoints."
    413: "Request exceeds the maximum allowed number of bytes.",
    429: "Number of requests has exceeded your rate limit. Please try again later.",
    500: "Internal server error",
    504: "Request timed out",
    529: "Overloaded",
}
SECRET_HEADER = re.compile(r"auth|key|token|secret|cookie", re.IGNORECASE)
PATHS = ("/v1/messages", "/v1/messages/count_tokens")


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


_ALPHABET = string.ascii_letters + string.digits


def new_id(prefix: str) -> str:
    """A random id in the API's form (``msg_01`` and 22 letters or digits): one
    student cannot guess another's message, so cannot continue their thread."""
    return prefix + "01" + "".join(secrets.choice(_ALPHABET) for _ in range(22))


def error_body(
    status: int, message: str | None = None, request_id: str = "", code: str | None = None
) -> dict[str, Any]:
    """The API's error shape for ``status`` (``code``: ``error.details.error_code``)."""
    error: dict[str, Any] = {
        "type": ERROR_TYPES.get(status, "api_error"),
        "message": message or ERROR_MESSAGES.get(status, "Error"),
    }
    if code:
        error["details"] = {"error_code": code}
    return {"type": "error", "error": error, "request_id": request_id}


Reply = Any  # what ScriptedClient takes: str, blocks, message dict, Message, exception, function


@dataclass
class Answer:
    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


class FakeMessagesServer:
    """A Messages-API server on 127.0.0.1 (a free port unless ``port`` is given).

    ``replies`` is a list of replies or a function ``fn(request_body) -> reply``;
    ``None`` serves the offline demo model. ``model`` names the model in the
    replies (default: the model the request asked for, the demo's replies too). A model that is not in ``agentlab.models`` gets a 404
    as on the real API, unless ``any_model=True``; ``models`` narrows the
    accepted names further. With ``api_key`` set, other keys get a 401.
    ``chunk_delay`` slows streams down so a class can watch the text arrive.
    ``record`` is how many requests ``server.requests`` keeps (None: all;
    ``agentlab serve`` keeps none). ``limits`` bounds what one client may take
    (see ``agentlab.fakeapi.server.http``); message threads are kept up to
    ``max_threads`` and ``max_thread_bytes`` of JSON (``threads``).

    It runs uvicorn in a background thread: ``start()`` (or ``with``) returns
    once it listens.
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
        any_model: bool = False,
        chunk_delay: float = 0.0,
        record: int | None = None,
        limits: Limits | None = None,
        max_threads: int = 1000,
        max_thread_bytes: int = 64 * 1024 * 1024,
        log: Callable[[str], None] | None = None,
    ):
        self.host, self.port = host, port
        # The demo too names the model asked for, as the API echoes it (and as DemoClient
        # does): a client such as Claude Code drops thinking blocks whose reply named
        # another model, and its next request would then be refused.
        self.model = model
        self.check = check
        self.models = list(models) if models is not None else None
        self.any_model = any_model
        self.chunk_delay = chunk_delay
        self.limits = limits or Limits()
        self.log = log
        self._api_key = api_key
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._uvicorn: _Uvicorn | None = None
        self._thread: threading.Thread | None = None
        self._ids = itertools.count(1)  # request ids
        self._message_ids = itertools.count(1)  # tool_use ids (message ids are random)
        self._run = secrets.token_hex(4)  # ids differ from one server run to the next
        self.record = record
        self.requests: list[RecordedRequest] = []
        self.count = 0  # requests seen (also when none are recorded)
        self.faults: list[Fault] = []
        self.cache = cache.PromptCache()
        self.threads = threads.ThreadStore(max_threads, max_thread_bytes)
        self._paused: collections.OrderedDict[str, None] = collections.OrderedDict()
        # ids of tool calls this server gave out with a thinking block (bounded)
        self._thought: collections.OrderedDict[str, None] = collections.OrderedDict()
        self.script(demo_reply if replies is None else replies)

    # -- scripting ----------------------------------------------------------
    def script(self, replies: Sequence[Reply] | Callable[[dict[str, Any]], Reply]) -> None:
        """Play these replies from now on (the count starts again at the first)."""
        with self._lock:
            self._replies = replies
            self._index = 0

    def reset(self) -> None:
        """Forget recorded requests, planned faults, threads and the prompt cache (the
        script goes on where it was; ``script()`` starts a new one)."""
        with self._lock:
            self.requests.clear()
            self.faults.clear()
            self._paused.clear()
            self._thought.clear()
        self.cache.clear()
        self.threads.clear()

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
        """Listen (raises OSError if the port is taken) and serve from a background thread."""
        if self._uvicorn is not None:
            return self
        # Build one message now: it imports the SDK's types (seconds on a busy
        # machine), which the first request would otherwise wait for.
        make_message("ready")
        sock = socket.create_server((self.host, self.port), backlog=1024)
        self.port = int(sock.getsockname()[1])
        self._closing.clear()
        self._uvicorn = _Uvicorn(self, self.limits)
        self._thread = threading.Thread(
            target=self._uvicorn.run, kwargs={"sockets": [sock]}, daemon=True, name="agentlab-serve"
        )
        self._thread.start()
        self._uvicorn.ready.wait()  # set once uvicorn listens, or has failed to
        if not self._uvicorn.started:
            self.stop()
            raise RuntimeError("FakeMessagesServer: uvicorn did not start")
        return self

    def stop(self) -> None:
        if self._uvicorn is None:
            return
        self._closing.set()  # wakes a reply function waiting in wait()
        self._uvicorn.finish()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._uvicorn = self._thread = None

    def __enter__(self) -> FakeMessagesServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"FakeMessagesServer(url={self.url!r}, requests={self.count})"

    @property
    def connections(self) -> int:
        """Connections open right now."""
        return len(self._uvicorn.server_state.connections) if self._uvicorn is not None else 0

    @property
    def retry_counts(self) -> list[int]:
        """The SDK's retry count of each recorded request, in order."""
        return [r.retry_count for r in self.requests]

    def wait(self, seconds: float) -> bool:
        """Sleep up to ``seconds``; True if the server is shutting down."""
        return self._closing.wait(seconds)

    # -- answering ------------------------------------------------------------
    def _request_id(self) -> str:
        return f"req_{self._run}{next(self._ids):06d}"

    def _next_fault(self) -> Fault | None:
        with self._lock:
            return self.faults.pop(0) if self.faults else None

    def _authorised(self, headers: dict[str, str]) -> bool:
        if self._api_key is None:
            return True
        bearer = headers.get("authorization", "").removeprefix("Bearer ").strip()
        return self._api_key in (headers.get("x-api-key"), bearer)

    def _usage(self, body: dict[str, Any]) -> dict[str, Any]:
        info = model_table.get(body.get("model"))
        return self.cache.usage(body, info.min_cache_tokens if info else 1024)

    def _reply(self, body: dict[str, Any]) -> Any:
        """The next scripted reply as a Message, or an Answer for an error."""
        with self._lock:
            replies, index = self._replies, self._index
            self._index += 1
        try:
            if callable(replies):
                item = replies(body)
            elif index < len(replies):
                item = replies[index]
            else:
                return Answer(
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
            return Answer(400, error_body(400, str(e)))
        if isinstance(item, BaseException):
            status = getattr(item, "status_code", None)
            data = getattr(item, "body", None)
            if isinstance(status, int) and isinstance(data, dict):
                return Answer(status, data)
            return Answer(500, error_body(500, str(item)), {"x-should-retry": "false"})
        if controls.forcing(body):  # the script must do what tool_choice asks
            built = item if hasattr(item, "stop_reason") else make_message(item)
            wrong = controls.disobeys(built.model_dump(mode="json"), body, index + 1)
            if wrong:  # the script's mistake: a 500 the SDK does not retry
                return Answer(500, error_body(500, wrong), {"x-should-retry": "false"})
        built = item if hasattr(item, "stop_reason") else make_message(item)
        wrong = controls.unfit(built.model_dump(mode="json"), body, index + 1)
        if wrong:  # the script's text must fit output_config.format: a 500 not retried
            return Answer(500, error_body(500, wrong), {"x-should-retry": "false"})
        if hasattr(item, "stop_reason"):
            return item  # a ready Message is sent exactly as it is
        exact = isinstance(item, dict) and "content" in item and "usage" in item
        message = make_message(
            item, ids=self._message_ids, model=self.model or body.get("model", "")
        )
        if exact and "id" not in item:
            message.id = new_id("msg_")
        if exact:
            return message
        data = message.model_dump(mode="json", exclude_none=True)
        if not (isinstance(item, dict) and "id" in item):
            data["id"] = new_id("msg_")
        data["usage"] = {**data["usage"], **self._usage(body)}
        data = controls.apply(data, body)
        if any(b.get("type") == "thinking" and b.get("signature") == "" for b in data["content"]):
            data["content"] = thinking.bind(data["content"], body)  # a block max_tokens cut
        # A stop reason this SDK does not know yet is kept as it came (as make_message does).
        built = type(message).model_validate({**data, "stop_reason": "end_turn"})
        built.stop_reason = data["stop_reason"]
        return built

    def _check(self, body: Any, path: str, headers: dict[str, str]) -> Answer | None:
        """The error to answer for this request, if any."""
        if not isinstance(body, dict):
            # The API's wording for a body that is not JSON is not public (agentlab's).
            return Answer(400, error_body(400, "The request body is not valid JSON."))
        if not self._authorised(headers):
            return Answer(401, error_body(401))
        if self.check and not (headers.get("x-api-key") or headers.get("authorization")):
            # The API's 401 for a request with no key, as public reports quote it; any key
            # is taken here unless the server was given one to check.
            return Answer(401, error_body(401, "x-api-key header is required"))
        if not self.check:
            return None
        errors = check_headers(headers)
        model = body.get("model")
        known = model_table.get(model) is not None
        if not errors and isinstance(model, str):
            if (not known and not self.any_model) or (
                self.models is not None and model not in self.models
            ):
                # "model: NAME", the API's 404 for an unknown model (public reports,
                # 2025-2026); the list of accepted names after it is agentlab's.
                accepted = ", ".join(self.models if self.models is not None else model_table.ids())
                text = f"model: {model} (this server accepts: {accepted})"
                return Answer(404, error_body(404, text))
        if not errors:
            errors = check_request(
                body,
                api_version=headers.get("anthropic-version", ""),
                beta="anthropic-beta" in headers,
                count_tokens=path.endswith("/count_tokens"),
                paused=self._paused,
                thought=self._thought,
            )
        return Answer(400, error_body(400, errors[0])) if errors else None

    def _answer(self, body: Any, path: str, headers: dict[str, str]) -> Answer | Any:
        """What to answer (besides faults): an error Answer, a token count, or a Message."""
        if path not in PATHS:
            return Answer(404, error_body(404, f"Not found: {path}"))
        continued = None
        owner = threads.owner(headers)
        if isinstance(body, dict) and isinstance(body.get("thread"), dict):
            whole, continued = threads.expand(body, self.threads, owner)
            if whole is None and continued is not None and self.threads.continued(continued):
                # The SDK's description of thread_already_continued (its error types).
                text = ("The response that `previous_message_id` names has already been "
                        "continued, and each response can be continued only once. Continue "
                        "from the Thread's most recent response `id`.")  # fmt: skip
                return Answer(400, error_body(400, text, code="thread_already_continued"))
            if whole is None:
                # The SDK's description of thread_not_found (types/thread_not_found_error.py).
                text = f"No usable Thread state was found for `previous_message_id`: {continued}"
                return Answer(404, error_body(404, text, code="thread_not_found"))
            errors = threads.continue_errors(body) if self.check else []
            if errors:
                return Answer(400, error_body(400, errors[0]))
            body = whole
        problem = self._check(body, path, headers)
        if problem is not None:
            return problem
        if path.endswith("/count_tokens"):
            return Answer(200, {"input_tokens": cache.count(body)})
        dropped: list[dict[str, Any]] = []
        if self.check and thinking.dropping(body):  # prefix_mismatch_behavior "drop_block"
            body, dropped = thinking.drop_unbound(body)
        reply = self._reply(body)
        if not isinstance(reply, Answer):
            if dropped:
                reply.input_transformations = dropped  # see thinking.drop_unbound
            self._remember(body, reply, continued, owner)
        return reply

    def _remember(
        self, body: dict[str, Any], reply: Any, continued: str | None, owner: str
    ) -> None:
        """Keep what a later request may refer to: paused turns and threads."""
        content = reply.model_dump(mode="json", exclude_none=True)["content"]
        if content and content[0].get("type") in ("thinking", "redacted_thinking"):
            with self._lock:
                for b in content:
                    if b.get("type") == "tool_use":
                        self._thought[b["id"]] = None
                while len(self._thought) > 100_000:
                    self._thought.popitem(last=False)
        if reply.stop_reason == "pause_turn":
            with self._lock:
                self._paused[fingerprint(content)] = None
                while len(self._paused) > 10_000:
                    self._paused.popitem(last=False)
        if body.get("thread"):
            history = list(body.get("messages") or []) + [{"role": "assistant", "content": content}]
            fields = {k: body[k] for k in threads.CREATE_ONLY if k in body}
            held = self.threads.get(continued, owner) if continued else None
            # Only what is new is measured: a long thread costs nothing more per turn.
            size = held.size if held else threads.json_size(fields)
            size += threads.json_size(history[len(held.messages) :] if held else history)
            thread = threads.Thread(history, fields, owner, size)
            self.threads.save(reply.id, thread, replaces=continued)

    # -- HTTP entry points (the ASGI app uvicorn calls) --------------------------
    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        ex = Exchange(scope, receive, send, self.limits)
        if ex.method == "POST":
            await self.handle_post(ex)
        else:
            request_id = self._request_id()
            answer = self._get(ex.method, ex.path)
            if answer.status >= 400:  # in the error body too, as the API's carry it
                answer.body["request_id"] = request_id
            await ex.send(answer, request_id)
        if self.log is not None:
            client = scope.get("client") or ("-", 0)
            self.log(f'{client[0]} "{ex.method} {ex.path}" {ex.status or "-"}')

    def _get(self, method: str, path: str) -> Answer:
        path = path.rstrip("/")
        name = path.rsplit("/", 1)[1] if path.startswith("/v1/models/") else ""
        if method == "HEAD" and path == "":
            return Answer(200, {})  # clients check that the server is up (Claude Code does)
        if method not in ("GET", "HEAD"):
            # The API's answer to another method is not public (agentlab's).
            return Answer(405, error_body(405, f"{method} is not allowed on {path or '/'}"))
        if path == "/v1/models":
            rows = [_model_info(m) for m in model_table.ids()]
            return Answer(200, {"data": rows, "has_more": False, "first_id": rows[0]["id"],
                                "last_id": rows[-1]["id"]})  # fmt: skip
        if name and model_table.get(name):
            return Answer(200, _model_info(name))
        if name:
            return Answer(404, error_body(404, f"model: {name}"))
        return Answer(404, error_body(404, f"Not found: {path or '/'}"))

    def _take(
        self, raw: bytes | bytearray, ex: Exchange
    ) -> tuple[RecordedRequest, Any, str | None, Fault | None]:
        """Read the body, count and record the request, and take the next planned fault."""
        body, problem = parse(raw, self.limits.max_depth, self.limits.max_containers)
        headers = ex.headers
        retries = str(headers.get("x-stainless-retry-count") or "0")
        record = RecordedRequest(
            method="POST",
            path=ex.path,
            body=body,
            headers={k: v for k, v in headers.items() if not SECRET_HEADER.search(k)},
            retry_count=int(retries) if retries.isdigit() else 0,
            streamed=isinstance(body, dict) and body.get("stream") is True,
        )
        with self._lock:
            self.count += 1
            if self.record is None or self.record > 0:
                self.requests.append(record)
                if self.record is not None and len(self.requests) > self.record:
                    del self.requests[0]
        return record, body, problem, self._next_fault()

    def _work(
        self, raw: bytes | bytearray, ex: Exchange
    ) -> tuple[RecordedRequest, Any, str | None, Fault | None, Any]:
        """Take the request; answer it unless a planned fault answers first (reply None)."""
        record, body, problem, fault = self._take(raw, ex)
        if fault is not None and (fault.kind in ("drop", "slow", "status") or not record.streamed):
            return record, body, problem, fault, None
        return record, body, problem, fault, self._respond(record, body, problem, ex.headers)

    def _respond(
        self, record: RecordedRequest, body: Any, problem: str | None, headers: dict[str, str]
    ) -> Any:
        """The answer: an error Answer, a token count, or a Message (never raises)."""
        if problem is not None:
            return Answer(400, error_body(400, problem))
        try:
            return self._answer(body, record.path, headers)
        except Exception as e:  # a bug here, or in a reply function: say so, keep serving
            if self.log is not None:
                self.log(f"error answering {record.path}: {type(e).__name__}: {e}")
            text = f"FakeMessagesServer could not answer: {type(e).__name__}: {e}"
            return Answer(500, error_body(500, text), {"x-should-retry": "false"})

    async def handle_post(self, ex: Exchange) -> None:
        request_id = self._request_id()
        try:
            raw = await ex.read_body()
        except BodyError as e:
            ex.close = True  # the rest of the stream cannot be trusted
            if e.status:
                await ex.send(
                    Answer(e.status, error_body(e.status, e.message, request_id, e.code)), ""
                )
            if e.status == 413:  # up to max_body was read: give that memory back
                await asyncio.get_running_loop().run_in_executor(None, _trim)
            return
        loop = asyncio.get_running_loop()
        # Parsing, checking and the reply functions run in a worker thread (one hop
        # per request): a large body or a slow reply function never holds up the
        # other connections.
        record, body, problem, fault, reply = await loop.run_in_executor(None, self._work, raw, ex)
        if fault is not None:
            record.fault = fault.kind
        if reply is None:  # the fault answers instead
            assert fault is not None
            if fault.kind == "drop":
                ex.abort()
                return
            if fault.kind != "slow":
                status = fault.status
                answer = Answer(status, error_body(status, fault.message, request_id))
                if fault.retry_after is not None:
                    seconds = fault.retry_after
                    answer.headers["retry-after"] = str(seconds)
                    answer.headers["retry-after-ms"] = str(max(1, round(seconds * 1000)))
                record.status = status
                await ex.send(answer, request_id)
                return
            await asyncio.sleep(fault.delay)
            fault = None
            reply = await loop.run_in_executor(
                None, self._respond, record, body, problem, ex.headers
            )
        if isinstance(reply, Answer):
            if reply.status >= 400:
                reply.body["request_id"] = reply.body.get("request_id") or request_id
            record.status = reply.status
            await ex.send(reply, request_id)
            return
        record.status = 200
        if record.streamed:
            await ex.stream(reply, request_id, fault, self.chunk_delay)
        else:
            data = reply.model_dump(mode="json", exclude_none=True)
            data.setdefault("stop_sequence", None)  # null, not missing, as the API sends it
            await ex.send(Answer(200, data), request_id)
        if len(raw) > 1 << 20:  # a large request: give the memory it used back
            await loop.run_in_executor(None, _trim)


def _trim() -> None:
    """Ask the C allocator to return free memory to the system (glibc only): the
    worker threads allocate in arenas of their own, which otherwise keep what a
    large request used."""
    try:
        ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass  # not glibc: nothing to do


def parse(
    raw: bytes | bytearray, max_depth: int, max_containers: int = 1_000_000
) -> tuple[Any, str | None]:
    """The JSON body, and what is wrong with it if it cannot be answered."""
    if raw.count(b"[") + raw.count(b"{") > max_containers:  # a few ms for 32 MB
        # The API's limit and wording for this are not public (agentlab's).
        return None, f"The request body holds more than {max_containers:,} JSON arrays and objects."
    try:
        body = json.loads(raw or b"null")
    except (ValueError, RecursionError):  # not JSON, or not UTF-8 (UnicodeDecodeError)
        # The API's wording for a body that is not JSON is not public (agentlab's).
        return None, "The request body is not valid JSON."
    if too_deep(body, max_depth):
        # The API's limit and wording for nesting are not public (agentlab's).
        return None, "The request body is nested too deeply."
    if b"\\u" in raw:
        try:
            json.dumps(body, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            return None, _surrogate_error(raw)
    return body, None


# A \uD800-\uDBFF escape with no \uDC00-\uDFFF escape after it, or a lone low one
# (an even number of backslashes before it: the escape is not itself escaped).
_LONE = re.compile(
    rb"(?<!\\)(?:\\\\)*(\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F])"
    rb"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2})"
)


def _surrogate_error(raw: bytes | bytearray) -> str:
    """The API's 400 for a lone surrogate, as widely quoted in public reports (e.g.
    github.com/anthropics/claude-code/issues/2108, 2025-06-15): "The request body is
    not valid JSON: no low surrogate in string: line 1 column 50086 (char 50085)".
    Where exactly the API's position points is not public: here, at the escape."""
    found = _LONE.search(raw)
    at = len(raw[: found.start(1)].decode("utf-8", "replace")) if found else 0
    text = raw.decode("utf-8", "replace")
    line = text.count("\n", 0, at) + 1
    column = at - (text.rfind("\n", 0, at) + 1) + 1
    return (
        f"The request body is not valid JSON: no low surrogate in string: "
        f"line {line} column {column} (char {at})"
    )


class _Uvicorn(uvicorn.Server):
    """uvicorn's server, run from a thread: ``ready`` is set once it has started
    (``started``) or failed to; ``finish()`` stops it at once from any thread."""

    def __init__(self, app: FakeMessagesServer, limits: Limits):
        room, backlog = open_file_room(limits.max_connections)
        protocol = type("Bound", (Protocol,), {"limits": limits, "room": room})
        config = uvicorn.Config(
            app,
            http=protocol,
            ws="none",
            lifespan="off",
            loop="asyncio",
            log_config=None,
            access_log=False,
            server_header=False,
            proxy_headers=False,
            timeout_keep_alive=limits.idle_timeout,  # type: ignore[arg-type]
            backlog=backlog,
        )
        super().__init__(config)
        # uvicorn's own log says "Invalid HTTP request received." for each refusal;
        # the client got a 400 that says more, and the server logs its requests itself.
        quiet = logging.getLogger("uvicorn")
        quiet.propagate = False
        if not quiet.handlers:
            quiet.addHandler(logging.NullHandler())
        self.ready = threading.Event()
        self._wake: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def startup(self, sockets: Any = None) -> None:
        self._loop, self._wake = asyncio.get_running_loop(), asyncio.Event()
        try:
            await super().startup(sockets)
            for sock in sockets or []:
                # The kernel may queue many more connections than asyncio accepts
                # in one turn (config.backlog, kept small: see open_file_room).
                sock.listen(1024)
        finally:
            self.ready.set()

    async def main_loop(self) -> None:
        ticks = 0
        while not await self.on_tick(ticks):  # on_tick refreshes the Date header
            ticks += 10
            assert self._wake is not None
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), 1.0)

    async def shutdown(self, sockets: Any = None) -> None:
        for server in self.servers:
            server.close()
        for connection in list(self.server_state.connections):
            connection.abort()  # type: ignore[union-attr]

    def finish(self) -> None:
        self.should_exit = True
        if self._loop is not None and self._wake is not None:
            with contextlib.suppress(RuntimeError):  # the loop has ended already
                self._loop.call_soon_threadsafe(self._wake.set)


def _model_info(model: str) -> dict[str, Any]:
    """One row of ``GET /v1/models`` (the SDK's ``ModelInfo`` fields)."""
    info = model_table.get(model)
    assert info is not None
    released = info.released or "1970-01-01"  # the API uses the epoch when unknown
    return {
        "type": "model",
        "id": info.id,
        "display_name": info.name,
        "created_at": f"{released}T00:00:00Z",
        "lifecycle": "active",
        "max_input_tokens": info.context_window,
        "max_tokens": info.max_output,
    }
