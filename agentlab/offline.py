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
server-sent events (``agentlab.events``) that ``agentlab serve`` sends.

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
direct path passes the request as given, the SDK path as JSON dicts.

Scripted exceptions reach the caller as they are, on every path, and nothing
is retried: the script, not a retry policy, decides what happens.
"""

from __future__ import annotations

import functools
import inspect
import itertools
import json
import os
import re
import shlex
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from agentlab.events import events, sse
from agentlab.history import as_dict, blocks, check_at, validate
from agentlab.i18n import t

if TYPE_CHECKING:
    from anthropic.types import Message

__all__ = [
    "DemoClient",
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
    # The prompt-cache counts are in every usage, 0 when nothing was cached, as
    # agentlab's server sends them (tests/test_dropin.py compares the two).
    usage = {"input_tokens": input_tokens, "output_tokens": _tokens(data["content"])}
    data.setdefault(
        "usage", {**usage, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
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


Reply = (
    Any  # a Message, a dict, a string, a list of blocks, an Exception, or a function of the request
)


class ScriptedClient:
    """Plays back the replies you give it, one per request, in order.

    ``replies`` is a list (each item a Message, a message dict, a string, a
    list of blocks, or an exception to raise) or a function
    ``fn(request_params) -> item``. Every request is checked like the API
    checks it (``check=False`` turns that off) and kept in ``.requests``.

    Everything ``anthropic.Anthropic()`` has works the same way here:
    ``messages.stream``, ``create(stream=True)``, ``messages.count_tokens``,
    ``with_raw_response``, ``beta.messages.tool_runner`` and ``.thread``. There
    are no retries: a scripted error reaches you at once.
    """

    def __init__(
        self, replies: Sequence[Reply] | Callable[[dict[str, Any]], Reply], *, check: bool = True
    ):
        self._replies = replies
        self._index = 0
        self._ids = itertools.count(1)
        self._request_ids = itertools.count(1)
        self.check = check
        self.requests: list[dict[str, Any]] = []
        self.messages = _Messages(self)
        self._seen: list[Any] = []
        self._threads = Threads()

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
        message = self._reply(full)
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


def stream_of(message: Message) -> Any:
    """The SDK's own ``client.messages.stream(...)`` for a reply already made:
    ``with stream_of(m) as s: s.text_stream, s.get_final_message(), ...``."""
    client = ScriptedClient([message], check=False)
    ask = [{"role": "user", "content": "."}]
    return client._sdk.messages.stream(model=message.model, max_tokens=1, messages=ask)


_Stream = stream_of  # the name agentlab.recording imports


# ---------------------------------------------------------------------------
# The offline demo model
# ---------------------------------------------------------------------------


def _has(text: str, *words: str) -> bool:
    return any(w in text for w in words)


def _quoted(task: str) -> str | None:
    m = re.search(r"[\"'“‘「`]([^\"'”’」`]+)[\"'”’」`]", task)
    return m.group(1) if m else None


def _filename(task: str, default: str) -> str:
    m = re.search(r"([\w./-]+\.[A-Za-z0-9]{1,8})\b", task)
    return m.group(1) if m else default


def _plan(task: str) -> tuple[str, list[list[str]], str | None]:
    """The kind of task, its steps (each a list of commands run in parallel),
    and a fallback command to try if a step fails."""
    low = task.lower()
    q = shlex.quote
    if _has(low, "create", "write a file", "make a file", "创建", "新建", "写一个文件"):
        name = _filename(task, "hello.txt")
        said = re.search(
            r"(?:containing|saying|with the (?:text|words?))\s+(.+?)"
            r"(?:,?\s+(?:and|then)\s+(?:check|verify|read|show).*)?[.!]?$",
            task,
        )
        words = _quoted(task) or (said.group(1).strip() if said else "hello from agentlab")
        return "create", [[f"printf '%s\\n' {q(words)} > {q(name)}"], [f"cat {q(name)}"]], None
    if _has(low, "disk", "space", "磁盘", "空间"):
        return "disk", [["du -sh ."]], "df -h ."
    if _has(low, "date", "time", "system", "machine", "日期", "时间", "系统"):
        return "system", [["date", "uname -a"]], None
    if _has(low, "search", "grep", "containing", "contain", "mention", "搜索", "查找", "包含"):
        word = _quoted(task) or ("TODO" if "todo" in low else None)
        if word is None:
            m = re.search(r"(?:for|word|containing|contain|mention)\s+([\w.-]+)", task)
            word = m.group(1) if m else "TODO"
        cmd = (
            f"grep -rn --exclude-dir=.git --exclude-dir=.ipynb_checkpoints {q(word)} . | head -n 20"
        )
        return "search", [[cmd]], None
    if _has(low, "how many", "count", "number of", "多少", "几个", "统计"):
        if _has(low, "line", "行"):
            name = _filename(task, "")
            if name and not name.startswith("."):
                return "lines", [[f"wc -l < {q(name)}"]], None
            return "lines", [["find . -name '*.py' -not -path '*/.*' -exec cat {} + | wc -l"]], None
        if _has(low, ".py", "python") or re.search(r"\bpy\b", low):
            return "count_py", [["find . -name '*.py' -not -path '*/.*' | wc -l"]], None
        return "count", [["find . -type f -not -path '*/.*' | wc -l"]], None
    if _has(
        low, "list", "files", "ls", "what is here", "directory", "folder", "列出", "文件", "目录"
    ):
        where = re.search(r"\bin (?:the )?(?:folder|directory|dir)\s+([\w./-]+)", task)
        return "list", [[f"ls -la {q(where.group(1))}" if where else "ls -la"]], None
    return "unknown", [], None


def _output(content: Any) -> tuple[str, int]:
    """The text of a tool result and the exit code written at its end (0 if none)."""
    if isinstance(content, list):
        content = "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    out = str(content or "")
    m = re.search(r"\(exit code (-?\d+)\)\s*$", out)
    if m:
        return out[: m.start()].rstrip(), int(m.group(1))
    m = re.fullmatch(r"\(no output, exit (-?\d+)\)\s*", out)
    if m:
        return "", int(m.group(1))
    return out.rstrip(), 0


def _answer(kind: str, commands: list[str], outputs: list[str]) -> str:
    out = outputs[-1].strip() if outputs else ""
    cmd = commands[-1] if commands else ""
    if kind == "search":
        if not out:
            return t("demo.search.none", cmd=cmd)
        return t("demo.answer.search", n=len(out.splitlines()), cmd=cmd, out=out)
    first = outputs[0].strip() if outputs else ""
    return t(f"demo.answer.{kind}", cmd=cmd, out=out, first=first)


def _turns(messages: list[dict[str, Any]]) -> list[tuple[list[str], list[tuple[str, int]]]]:
    """The demo's earlier tool turns: the commands it asked for, and what came back."""
    turns: list[tuple[list[str], list[tuple[str, int]]]] = []
    for m in messages:
        bs = blocks(m)
        if m.get("role") == "assistant" and any(b.get("type") == "tool_use" for b in bs):
            cmds = [
                str((b.get("input") or {}).get("command", ""))
                for b in bs
                if b.get("type") == "tool_use"
            ]
            turns.append((cmds, []))
        elif m.get("role") == "user" and turns:
            for b in bs:
                if b.get("type") == "tool_result":
                    out, code = _output(b.get("content"))
                    if b.get("is_error") and code == 0:
                        code = 1  # denied, unknown tool, interrupted, timed out
                    turns[-1][1].append((out, code))
    return turns


def demo_reply(params: Mapping[str, Any]) -> list[dict[str, Any]] | str:
    """The demo model's next reply for this request (content blocks, or text)."""
    messages = as_dict(list(params.get("messages") or []))
    tools = [
        tl.get("name") for tl in as_dict(list(params.get("tools") or [])) if isinstance(tl, dict)
    ]
    # The task is the newest user text; what follows it is the demo's progress.
    start = 0
    for i, m in enumerate(messages):
        if m.get("role") == "user" and any(b.get("type") == "text" for b in blocks(m)):
            start = i
    task = " ".join(
        str(b.get("text", "")) for b in blocks(messages[start]) if b.get("type") == "text"
    )
    kind, steps, fallback = _plan(task)
    sign = "\n\n" + t("demo.sign")
    if kind == "unknown":
        return t("demo.intro") + " " + t("demo.help")
    if "bash" not in tools:
        return t("demo.no_bash") + sign
    turns = _turns(messages[start + 1 :])
    if turns:
        cmds, results = turns[-1]
        for cmd, (out, code) in zip(cmds, results):
            if code == 0:
                continue
            if fallback and fallback not in cmds:
                return [
                    text(t("demo.fallback", cmd=cmd, fallback=fallback)),
                    tool_use("bash", {"command": fallback}),
                ]
            if kind == "search" and code == 1 and not out:
                return t("demo.search.none", cmd=cmd) + sign
            why = out.splitlines()[-1] if out else f"exit code {code}"
            return t("demo.failed", cmd=cmd, why=why) + sign
        if len(turns) >= len(steps) or (fallback and fallback in cmds):
            return _answer(kind, cmds, [out for out, _ in results]) + sign
    commands = steps[len(turns)]
    if kind == "create":
        intro = t("demo.intro.check" if turns else "demo.intro.create")
    else:
        intro = t("demo.intro.system" if kind == "system" else "demo.intro.bash")
    return [text(intro)] + [tool_use("bash", {"command": c}) for c in commands]


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
