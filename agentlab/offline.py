"""Clients that need no network, drop-ins for ``anthropic.Anthropic()``.

They answer ``client.messages.create(**params)`` (and ``.messages.stream``)
with real ``anthropic.types.Message`` objects, and check every request with
the rules the API applies: a broken history raises ``anthropic.BadRequestError``
with the API's own wording, so mistakes look the same offline as online.

- ``ScriptedClient(replies)``: plays back replies you write (tests, exercises).
- ``DemoClient()``: the offline demo model, a small script that uses bash
  for a handful of tasks. It is not Claude and says so.
- ``connect()``: the real client when a key is set, else the demo model.
"""

from __future__ import annotations

import itertools
import json
import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from agentlab.history import as_dict, check_at, validate
from agentlab.i18n import t

if TYPE_CHECKING:
    from anthropic.types import Message

__all__ = [
    "DemoClient",
    "ScriptedClient",
    "bad_request",
    "check_request",
    "connect",
    "make_message",
    "text",
    "tool_use",
]

DEMO_MODEL = "agentlab-demo"
_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,128}$")


# ---------------------------------------------------------------------------
# Checking a request the way the API does
# ---------------------------------------------------------------------------


def check_request(params: Mapping[str, Any], *, seen: list[Any] | None = None) -> list[str]:
    """The API's error messages for this ``messages.create`` request; [] if fine.

    ``seen`` is the message list of an earlier request that passed: when the
    new history still starts with those very objects, only the new messages
    are checked (each against the one before it), so a long conversation
    costs the same per turn as a short one.
    """
    errors: list[str] = []
    for key in ("model", "max_tokens", "messages"):
        if key not in params:
            errors.append(f"{key}: Field required")
    max_tokens = params.get("max_tokens")
    if "max_tokens" in params and (not isinstance(max_tokens, int) or max_tokens < 1):
        errors.append("max_tokens: Input should be greater than or equal to 1")
    messages = params.get("messages")
    if isinstance(messages, list) and messages and seen and _extends(messages, seen):
        for i in range(len(seen), len(messages)):
            last = i == len(messages) - 1
            problems = check_at(i, messages[i - 1], messages[i], pending_ok=not last)
            errors += [str(p) for p in problems]
    elif "messages" in params:
        errors += [str(p) for p in validate(as_dict(list(messages or [])))]
    names: set[str] = set()
    for i, tool in enumerate(as_dict(list(params.get("tools") or []))):
        if not isinstance(tool, dict):
            errors.append(f"tools.{i}: Input should be a valid dictionary")
            continue
        kind = tool.get("type", "custom")
        name = tool.get("name")
        if not isinstance(name, str) or not _NAME.match(name):
            errors.append(
                f"tools.{i}.{kind}.name: String should match pattern '^[a-zA-Z0-9_-]{{1,128}}$'"
            )
        if kind == "custom" and not isinstance(tool.get("input_schema"), dict):
            errors.append(f"tools.{i}.custom.input_schema: Field required")
        if name in names:
            errors.append("tools: Tool names must be unique.")
        names.add(str(name))
    return errors


def _extends(messages: list[Any], seen: list[Any]) -> bool:
    """Does ``messages`` start with the same objects as ``seen``? (first and last checked)"""
    n = len(seen)
    return len(messages) > n and messages[0] is seen[0] and messages[n - 1] is seen[n - 1]


def bad_request(message: str) -> Exception:
    """An ``anthropic.BadRequestError`` exactly as the SDK raises it for a 400."""
    import anthropic
    import httpx2

    body = {
        "type": "error",
        "error": {"type": "invalid_request_error", "message": message},
        "request_id": "req_offline",
    }
    req = httpx2.Request("POST", "https://api.anthropic.com/v1/messages")
    response = httpx2.Response(400, request=req, json=body)
    return anthropic.BadRequestError(f"Error code: 400 - {body}", response=response, body=body)


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
    data.setdefault(
        "usage", {"input_tokens": input_tokens, "output_tokens": _tokens(data["content"])}
    )
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


class _Stream:
    """What ``client.messages.stream(...)`` returns, for offline clients."""

    def __init__(self, message: Message):
        self._message = message

    def __enter__(self) -> _Stream:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    @property
    def text_stream(self) -> Iterator[str]:
        for b in self._message.content:
            if b.type == "text":
                yield from re.findall(r"\S+\s*|\s+", b.text)

    def until_done(self) -> None:
        for _ in self.text_stream:
            pass

    def get_final_message(self) -> Message:
        return self._message


class _Messages:
    def __init__(self, owner: ScriptedClient):
        self._owner = owner

    def create(self, **params: Any) -> Message:
        return self._owner._reply(params)

    def stream(self, **params: Any) -> _Stream:
        return _Stream(self._owner._reply(params))


Reply = (
    Any  # a Message, a dict, a string, a list of blocks, an Exception, or a function of the request
)


class ScriptedClient:
    """Plays back the replies you give it, one per request, in order.

    ``replies`` is a list (each item a Message, a message dict, a string, a
    list of blocks, or an exception to raise) or a function
    ``fn(request_params) -> item``. Every request is checked like the API
    checks it (``check=False`` turns that off) and kept in ``.requests``.
    """

    def __init__(
        self, replies: Sequence[Reply] | Callable[[dict[str, Any]], Reply], *, check: bool = True
    ):
        self._replies = replies
        self._index = 0
        self._ids = itertools.count(1)
        self.check = check
        self.requests: list[dict[str, Any]] = []
        self.messages = _Messages(self)
        self._seen: list[Any] = []

    def _reply(self, params: dict[str, Any]) -> Message:
        if self.check:
            errors = check_request(params, seen=self._seen)
            if errors:
                raise bad_request(errors[0])
            self._seen = list(params.get("messages") or [])
            self.requests.append(params)
        else:
            self.requests.append(params)
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
        if hasattr(item, "stop_reason"):
            return item
        return make_message(item, ids=self._ids, input_tokens=_tokens(params.get("messages")))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(requests={len(self.requests)})"


# ---------------------------------------------------------------------------
# The offline demo model (the package agentlab.demo)
# ---------------------------------------------------------------------------

from agentlab.demo import demo_reply  # noqa: E402  (kept importable from here)


class DemoClient(ScriptedClient):
    """agentlab's offline demo model: a short script, not Claude.

    It can list files, count files or lines, search text, show the date and
    system, create a file and check it, and report disk use, with the bash
    tool. It reads the tool results and reacts to failures. Anything else gets
    an honest answer saying what it is and how to use a real model.
    """

    def __init__(self, *, check: bool = True):
        super().__init__(demo_reply, check=check)


def connect(offline: bool = False, *, model: str | None = None, quiet: bool = False) -> Any:
    """``anthropic.Anthropic()`` when ``ANTHROPIC_API_KEY`` (or
    ``ANTHROPIC_BASE_URL``) is set, else the offline ``DemoClient``. Says which.
    """
    from agentlab.loop import DEFAULT_MODEL

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
