"""Clients that need no network, drop-ins for ``anthropic.Anthropic()``.

They answer ``client.messages.create(**params)`` with real
``anthropic.types.Message`` objects, and check every request with the rules
the API applies: a broken history raises ``anthropic.BadRequestError`` with the
API's own wording, so mistakes look the same offline as online.

- ``ScriptedClient(replies)``: plays back replies you write (tests, exercises).
- ``DemoClient()``: the offline demo model, a small script that uses bash
  for a handful of tasks. It is not Claude and says so.
- ``connect()``: the real client when a key is set, else the demo model.

How they are built (a design choice, and why)
---------------------------------------------
A student's code must not be able to tell these from the real client, apart
from the answers. So every surface except one *is* the SDK: each offline
client holds a real ``anthropic.Anthropic`` whose HTTP requests are answered
in-process (``httpx2.MockTransport``, see ``ScriptedClient._answer``), never
leaving the machine. ``messages.stream()``, ``create(stream=True)``,
``count_tokens``, ``with_raw_response``, ``beta.messages.tool_runner`` and
``.thread()`` are therefore the SDK's own code, fed the same JSON and
server-sent events (``agentlab.fakeapi.streaming``) that ``agentlab serve`` sends.

The one exception is a plain ``messages.create`` (keywords the installed
SDK's ``Messages.create`` takes, no stream, no request options): it is
answered directly. Going through the SDK costs a full copy and JSON encoding
of the history on every request: 0.6 to 1.8 ms for a short history and about
26 ms for 1,000 messages on the (shared) test machine, against about 2 µs
directly (``benchmarks/offline_clients.py``), and the loop benchmarks and the
property tests run thousands of such requests. The direct path keeps the SDK's contract: the
keywords are read from the SDK at run time, and anything else (a typo, a
missing ``max_tokens``, ``temperature=``) is handed to the SDK, which raises
its own ``TypeError``. What a reply function sees differs only in form: the
direct path passes the request as given (its message list copied, as it was when
sent), the SDK path as JSON dicts.

Scripted exceptions reach the caller as they are, on every path, and nothing
is retried: the script, not a retry policy, decides what happens.
"""

from __future__ import annotations

import functools
import inspect
import itertools
import json
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from agentlab.fakeapi import (
    controls,  # max_tokens, stop_sequences, tool_choice: as agentlab serve applies them
    thinking,
)
from agentlab.fakeapi.checks import (  # the API's rules
    bad_request,
    check_request,
    fingerprint,
    not_found,
    unknown_model,
)
from agentlab.fakeapi.streaming import events, sse
from agentlab.history import as_dict
from agentlab.i18n import t

if TYPE_CHECKING:
    from anthropic.types import Message

__all__ = [
    "DemoClient",
    "ScriptError",
    "asks_by_default",
    "ScriptedClient",
    "Threads",
    "bad_request",
    "check_request",
    "connect",
    "make_message",
    "text",
    "tool_use",
]

DEMO_MODEL = "agentlab-demo"


# ---------------------------------------------------------------------------
# Building replies
# ---------------------------------------------------------------------------


def text(value: str) -> dict[str, Any]:
    """A text block, for scripted replies."""
    return {"type": "text", "text": value}


def tool_use(
    name: str, input: Mapping[str, Any] | None = None, id: str | None = None
) -> dict[str, Any]:
    """A tool_use block, for scripted replies (an id is filled in when omitted)."""
    block: dict[str, Any] = {"type": "tool_use", "name": name, "input": dict(input or {})}
    if id is not None:
        block["id"] = id
    return block


def _tokens(data: Any) -> int:
    return max(1, len(json.dumps(as_dict(data), ensure_ascii=False)) // 4)


def make_message(
    content: str | Sequence[Any] | Mapping[str, Any],
    stop_reason: str | None = None,
    *,
    model: str = DEMO_MODEL,
    ids: Iterator[int] | None = None,
    input_tokens: int = 10,
    **fields: Any,
) -> Message:
    """A real ``anthropic.types.Message`` from short-hand content.

    ``content`` is a string (one text block), a list of blocks (``text()``,
    ``tool_use()`` or dicts), or a full message dict. ``stop_reason``
    defaults to ``tool_use`` when there is a tool call, else ``end_turn``.
    """
    from anthropic.types import Message

    counter = ids or itertools.count(1)
    if isinstance(content, Mapping) and "content" in content:
        data = as_dict(dict(content))
    else:
        items = [content] if isinstance(content, (str, Mapping)) else list(content)
        data = {"content": [text(b) if isinstance(b, str) else as_dict(b) for b in items]}
    for b in data["content"]:
        if b.get("type") == "tool_use" and not b.get("id"):
            b["id"] = f"toolu_{next(counter):02d}"
        if b.get("type") == "tool_use":
            b.setdefault("input", {})
    has_tool = any(b.get("type") == "tool_use" for b in data["content"])
    data.setdefault("stop_reason", stop_reason or ("tool_use" if has_tool else "end_turn"))
    if stop_reason is not None:
        data["stop_reason"] = stop_reason
    data.setdefault("id", f"msg_{next(counter):02d}")
    data.setdefault("type", "message")
    data.setdefault("role", "assistant")
    data.setdefault("model", model)
    data.setdefault("stop_sequence", None)
    # The prompt-cache counts are in every usage, 0 when nothing was cached, as
    # agentlab's server sends them (tests/test_dropin.py compares the two).
    # Output tokens as max_tokens counts them (controls.output_tokens): what was written.
    written = controls.output_tokens(as_dict(list(data["content"])))
    usage = {"input_tokens": input_tokens, "output_tokens": written}
    none = {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0}
    data.setdefault(
        "usage",
        {**usage, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
         "cache_creation": none},
    )  # fmt: skip
    data.update(fields)
    reason = data["stop_reason"]
    known = ("end_turn", "max_tokens", "stop_sequence", "tool_use", "pause_turn", "refusal")
    if reason not in known + ("model_context_window_exceeded",):
        # A stop reason this SDK version does not know yet: the SDK keeps such
        # values as they come from the server, so do we.
        message = Message.model_validate({**data, "stop_reason": "end_turn"})
        message.stop_reason = reason
        return message
    return Message.model_validate(data)


# ---------------------------------------------------------------------------
# The clients: the SDK's own client, answered in-process
# ---------------------------------------------------------------------------

OFFLINE_URL = "http://offline.agentlab.invalid"  # never reached: the script answers in-process


@functools.cache
def _create_keywords() -> tuple[frozenset[str], frozenset[str], frozenset[type]]:
    """The keywords the installed SDK's ``Messages.create`` takes for a plain call
    (no stream, no request options), the ones it requires, and the SDK's
    "not given" types (``anthropic.omit``, ``anthropic.NOT_GIVEN``)."""
    import anthropic
    from anthropic.resources.messages import Messages

    params = inspect.signature(Messages.create).parameters.values()
    named = [p for p in params if p.kind is p.KEYWORD_ONLY]
    options = {"stream", "extra_headers", "extra_query", "extra_body", "timeout"}
    plain = frozenset(p.name for p in named if p.name not in options)
    required = frozenset(p.name for p in named if p.default is p.empty)
    return plain, required, frozenset({anthropic.Omit, anthropic.NotGiven})


def _raise_as_scripted(request: Any, call_next: Any) -> Any:
    """SDK middleware: what the script raises reaches the caller as it is.

    The SDK wraps anything its transport raises, its own errors apart, in
    ``APIConnectionError`` (``anthropic._base_client``, ``_attempt_request``).
    Here the transport is the script: unwrap, so a scripted ``RuntimeError`` or
    the ``IndexError`` of a script that ran out looks the same on every path.
    """
    import anthropic

    try:
        return call_next(request)
    except anthropic.APIConnectionError as e:
        if type(e) is anthropic.APIConnectionError and e.__cause__ is not None:
            raise e.__cause__ from None
        raise


def _error(kind: str, message: str, **details: Any) -> dict[str, Any]:
    """The API's error body."""
    error: dict[str, Any] = {"type": kind, "message": message}
    if details:
        error["details"] = details
    return {"type": "error", "error": error, "request_id": None}


class Threads:
    """Message threads, kept the way a server keeps them (the beta that the SDK's
    ``beta.messages.thread()`` and ``tool_runner()`` use).

    The first request of a thread says ``"thread": {"type": "create"}``; later
    ones say ``{"type": "continue", "previous_message_id": ...}`` and carry only
    the new messages, without ``system`` and ``tools``: the rest is the
    thread's. (The fields are the ones the SDK sends: ``anthropic.lib.threads``.)
    """

    def __init__(self) -> None:
        self._held: dict[str, dict[str, Any]] = {}  # reply id -> the whole request + reply

    def expand(self, body: dict[str, Any]) -> dict[str, Any] | None:
        """The whole request this one stands for (its ``thread`` field removed);
        None when it continues a thread that is not kept here."""
        thread = body.pop("thread", None)
        if not thread or thread.get("type") != "continue":
            return body
        held = self._held.get(thread.get("previous_message_id"))
        if held is None:
            return None
        return {**held, **body, "messages": held["messages"] + body["messages"]}

    def keep(self, body: dict[str, Any], message: Any) -> None:
        """Remember the conversation up to ``message``, the reply to ``body`` (a
        whole request, as ``expand`` gives it)."""
        reply = {"role": "assistant", "content": as_dict(list(message.content))}
        self._held[message.id] = {**body, "messages": [*body["messages"], reply]}

    def clear(self) -> None:
        """Forget every thread (a server restarting, say)."""
        self._held.clear()


class _Messages:
    """``client.messages``. A plain ``create`` (the keywords the SDK takes, no
    stream) is answered at once; anything else goes to the SDK's own resource:
    ``stream``, ``count_tokens``, ``with_raw_response``, ``create(stream=True)``,
    and a call the SDK refuses (it raises its own ``TypeError``)."""

    def __init__(self, owner: ScriptedClient):
        self._owner = owner

    def create(self, *args: Any, **params: Any) -> Any:
        plain, required, omitted = _create_keywords()
        if (
            args
            or not (required <= params.keys() <= plain)
            or not omitted.isdisjoint(map(type, params.values()))
        ):
            return self._owner._sdk.messages.create(*args, **params)
        return self._owner._reply(params)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._owner._sdk.messages, name)


class ScriptError(ValueError):
    """A scripted reply the API could never send for this request (one that breaks
    its ``tool_choice``): the script's mistake, not the code under test's."""


Reply = (
    Any  # a Message, a dict, a string, a list of blocks, an Exception, or a function of the request
)


class ScriptedClient:
    """Plays back the replies you give it, one per request, in order.

    ``replies`` is a list (each item a Message, a message dict, a string, a
    list of blocks, or an exception to raise) or a function
    ``fn(request_params) -> item``. Every request is checked like the API
    checks it (``check=False`` turns that off) and kept in ``.requests``.
    A reply built from short-hand (a string, blocks, a dict) names the model
    asked for, as the API echoes it, and follows the request's ``max_tokens``,
    ``stop_sequences`` and ``tool_choice`` as ``agentlab serve`` does
    (``agentlab.fakeapi.controls``); a ready ``Message`` is returned exactly as it is.
    A reply that breaks the request's ``tool_choice`` (no call under ``any``
    or ``tool``, another tool under ``tool``, a call under ``none``) raises
    ``ScriptError``: the API never answers like that, so the script is wrong.
    A model not in ``agentlab.models`` raises the SDK's ``NotFoundError``
    unless ``any_model=True`` (the default here, so a script may name any
    model; ``DemoClient`` is strict, as the server is).

    Everything ``anthropic.Anthropic()`` has works the same way here:
    ``messages.stream``, ``create(stream=True)``, ``messages.count_tokens``,
    ``with_raw_response``, ``beta.messages.tool_runner`` and ``.thread``. There
    are no retries: a scripted error reaches you at once.
    """

    def __init__(
        self,
        replies: Sequence[Reply] | Callable[[dict[str, Any]], Reply],
        *,
        check: bool = True,
        any_model: bool = True,
    ):
        self._replies = replies
        self.any_model = any_model
        self._index = 0
        self._ids = itertools.count(1)
        self._request_ids = itertools.count(1)
        self.check = check
        self.requests: list[dict[str, Any]] = []
        self.messages = _Messages(self)
        self._seen: list[Any] = []
        self._threads = Threads()
        # What later requests may send back: pause_turn replies (so a history ending
        # on one is a continuation, not a prefill) and tool calls made with thinking.
        self._paused: set[str] = set()
        self._thought: set[str] = set()
        self._beta = False  # the request being answered came with an anthropic-beta header
        self._counted: tuple[int, int, Any, Any] = (0, 0, None, None)  # see _input_tokens

    def _reply(self, params: dict[str, Any]) -> Message:
        if type(params.get("messages")) is list:  # what was sent, kept as it was then
            params = {**params, "messages": list(params["messages"])}
        if self.check:
            missing = None if self.any_model else unknown_model(params)
            if missing:
                raise not_found(missing)
            errors = check_request(
                params,
                seen=self._seen,
                paused=self._paused,
                thought=self._thought,
                beta=self._beta,
            )
            if errors:
                raise bad_request(errors[0], params)
            self._seen = params.get("messages") or []
            self.requests.append(params)
        else:
            self.requests.append(params)
        dropped: list[dict[str, Any]] = []
        if self.check and thinking.dropping(params):  # the model never sees the invalid blocks
            params, dropped = thinking.drop_unbound(params)
        if callable(self._replies):
            item = self._replies(params)
        else:
            if self._index >= len(self._replies):
                raise IndexError(
                    f"ScriptedClient has no reply left for request {self._index + 1} "
                    f"(the script holds {len(self._replies)})"
                )
            item = self._replies[self._index]
        self._index += 1
        if isinstance(item, BaseException):
            raise item
        if callable(item):
            item = item(params)
        if controls.forcing(params):  # the script must do what tool_choice asks
            built = item if hasattr(item, "stop_reason") else make_message(item)
            wrong = controls.disobeys(built.model_dump(mode="json"), params, self._index)
            if wrong:
                raise ScriptError(wrong)
        built = item if hasattr(item, "stop_reason") else make_message(item)
        wrong = controls.unfit(built.model_dump(mode="json"), params, self._index)
        if wrong:  # the script's text must fit output_config.format, as the API's does
            raise ScriptError(wrong)
        if not hasattr(item, "stop_reason"):
            model = params.get("model")
            item = make_message(
                item,
                ids=self._ids,
                input_tokens=self._input_tokens(params.get("messages")),
                model=model if isinstance(model, str) and model else DEMO_MODEL,
            )
            item = _controlled(item, params)
            item = _signed(item, params)
        if dropped:
            item.input_transformations = dropped  # see thinking.drop_unbound
        self._remember(item)
        return item

    def _input_tokens(self, messages: Any) -> int:
        """The prompt's estimated size, counting only messages not counted before
        (a conversation that grows costs the same per turn at turn 10 and 1,000)."""
        if not isinstance(messages, list) or not messages:
            return _tokens(messages)
        n, total, first, last = self._counted
        if 0 < n <= len(messages) and messages[0] is first and messages[n - 1] is last:
            total += sum(_tokens(m) for m in messages[n:])
        else:
            total = sum(_tokens(m) for m in messages)
        self._counted = (len(messages), total, messages[0], messages[-1])
        return max(1, total)

    def _remember(self, message: Any) -> None:
        content = list(getattr(message, "content", None) or [])
        if message.stop_reason == "pause_turn":
            self._paused.add(fingerprint(content))
        if content and getattr(content[0], "type", None) in ("thinking", "redacted_thinking"):
            self._thought.update(b.id for b in content if b.type == "tool_use")

    # -- the SDK's own client, for everything but a plain create ---------------

    @functools.cached_property
    def _sdk(self) -> Any:
        """``anthropic.Anthropic`` whose HTTP requests ``_answer`` answers in-process."""
        import anthropic
        import httpx2

        return anthropic.Anthropic(
            api_key="offline",
            base_url=OFFLINE_URL,
            max_retries=0,
            http_client=httpx2.Client(transport=httpx2.MockTransport(self._answer)),
            middleware=[_raise_as_scripted],
        )

    def __getattr__(self, name: str) -> Any:
        # beta, models, with_options, base_url, ...: the SDK client's own.
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._sdk, name)

    def _answer(self, request: Any) -> Any:
        """Answer one HTTP request of the SDK the way the API would."""
        import httpx2

        headers = {"request-id": f"req_offline_{next(self._request_ids):04d}"}
        body = json.loads(request.content or b"null")
        if request.url.path == "/v1/messages/count_tokens":
            errors = check_request({"max_tokens": 1, **body}) if self.check else []
            if errors:
                raise bad_request(errors[0])
            count = sum(_tokens(body[k]) for k in ("system", "tools", "messages") if body.get(k))
            return httpx2.Response(200, json={"input_tokens": count}, headers=headers)
        if request.url.path != "/v1/messages":
            not_found = _error("not_found_error", f"Not found: {request.url.path}")
            return httpx2.Response(404, json=not_found, headers=headers)
        stream, threaded = body.pop("stream", False), "thread" in body
        full = self._threads.expand(body)
        if full is None:
            # The error code is the one the SDK reads (anthropic.lib.threads,
            # _thread_state); the API's exact wording is not known to us.
            lost = _error("not_found_error", "thread not found", error_code="thread_not_found")
            return httpx2.Response(404, json=lost, headers=headers)
        # Beta fields (fallbacks, context_management...) come with an anthropic-beta header.
        self._beta = "anthropic-beta" in request.headers
        try:
            message = self._reply(full)
        finally:
            self._beta = False
        if threaded:
            self._threads.keep(full, message)
        if not stream:
            data = message.model_dump(mode="json", exclude_none=True)
            return httpx2.Response(200, json=data, headers=headers)
        headers["content-type"] = "text/event-stream; charset=utf-8"
        return httpx2.Response(
            200, headers=headers, content=(sse(name, data) for name, data in events(message))
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}(requests={len(self.requests)})"


def _controlled(message: Message, params: Mapping[str, Any]) -> Message:
    """``message`` cut and filtered as the request's generation controls ask."""
    data = controls.apply(message.model_dump(mode="json", exclude_none=True), dict(params))
    if data["content"] == message.model_dump(mode="json", exclude_none=True)["content"] and (
        data["stop_reason"] == message.stop_reason
    ):
        return message
    built = type(message).model_validate({**data, "stop_reason": "end_turn"})
    built.stop_reason = data["stop_reason"]  # kept as it came (see make_message)
    return built


def _signed(message: Message, params: Mapping[str, Any]) -> Message:
    """A scripted reply's thinking blocks, signed as the requested model signs them
    (a hand-written signature is a placeholder) and bound to the request's prefix
    (preserved thinking), so sending them back unchanged passes the checks the real
    API makes. A block already signed and bound so stays as it is."""
    if not any(b.type == "thinking" for b in message.content):
        return message
    content = [b.model_dump(mode="json", exclude_none=True) for b in message.content]
    bound = thinking.bind(content, params)
    if bound == content:
        return message
    data = message.model_dump(mode="json", exclude_none=True)
    built = type(message).model_validate({**data, "content": bound, "stop_reason": "end_turn"})
    built.stop_reason = message.stop_reason  # kept as it came (see make_message)
    return built


def stream_of(message: Message) -> Any:
    """The SDK's own ``client.messages.stream(...)`` for a reply already made:
    ``with stream_of(m) as s: s.text_stream, s.get_final_message(), ...``."""
    client = ScriptedClient([message], check=False)
    ask = [{"role": "user", "content": "."}]
    return client._sdk.messages.stream(model=message.model, max_tokens=1, messages=ask)


_Stream = stream_of  # the name agentlab.fakeapi.recording imports


# ---------------------------------------------------------------------------
# The offline demo model (the package agentlab.fakeapi.demo)
# ---------------------------------------------------------------------------

from agentlab.fakeapi.demo import demo_reply  # noqa: E402  (kept importable from here)


class DemoClient(ScriptedClient):
    """agentlab's offline demo model: a short script, not Claude.

    It can list files, count files or lines, search text, show the date and
    system, create a file and check it, and report disk use, with the bash
    tool. Its replies name the model asked for (the API echoes it) and its
    text says it is the demo. An unknown model raises ``NotFoundError``
    unless ``any_model=True``. It reads the tool results and reacts to failures. Anything else gets
    an honest answer saying what it is and how to use a real model.
    """

    demo_model = DEMO_MODEL  # what answers, whatever model a reply names (agentlab.usage)

    def __init__(self, *, check: bool = True, any_model: bool = False):
        super().__init__(demo_reply, check=check, any_model=any_model)


def asks_by_default(client: Any) -> bool:
    """The one approval default: ask before each tool unless the model is offline.

    agentlab's offline clients (the demo model, scripted and replayed ones)
    run tools unasked; anything else (the real SDK, with a key or a base URL,
    or a client we do not know) is asked about. ``agentlab run`` and
    ``%%agent`` follow this unless told ``--yes``. It lives here, beside
    ``connect()``, because only the emulator knows its own clients.
    """
    from agentlab.fakeapi.recording import RecordingClient, ReplayClient

    while isinstance(client, RecordingClient):
        client = client.client
    return not isinstance(client, (ScriptedClient, ReplayClient))


def connect(offline: bool = False, *, model: str | None = None, quiet: bool = False) -> Any:
    """``anthropic.Anthropic()`` when ``ANTHROPIC_API_KEY`` (or
    ``ANTHROPIC_BASE_URL``) is set, else the offline ``DemoClient``. Says which.
    """
    from agentlab.models import DEFAULT_MODEL

    key, url = os.environ.get("ANTHROPIC_API_KEY"), os.environ.get("ANTHROPIC_BASE_URL")
    if offline or not (key or url):
        if not quiet:
            print(t("connect.offline" if (key or url) else "connect.demo"))
        return DemoClient()
    import anthropic

    client = anthropic.Anthropic(api_key=key or "no-key-needed")
    if not quiet:
        if url:
            print(t("connect.base_url", url=url, model=model or DEFAULT_MODEL))
        else:
            print(t("connect.api", model=model or DEFAULT_MODEL))
    return client
