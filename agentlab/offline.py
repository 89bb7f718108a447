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
import shlex
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from agentlab.checks import bad_request, check_request  # the API's request rules
from agentlab.history import as_dict, blocks
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
