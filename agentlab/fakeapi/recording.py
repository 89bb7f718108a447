"""Record a session once, replay it anywhere: no key, no network, same replies.

    client = agentlab.record(anthropic.Anthropic(), "session.jsonl")   # instructor, with a key
    agentlab.agent_loop(messages, client, tools=[agentlab.bash])

    client = agentlab.ReplayClient("session.jsonl")                    # students, offline
    agentlab.agent_loop(messages, client, tools=[agentlab.bash])

A recording is a JSON Lines file: one line per successful request, holding the
request parameters as plain JSON and the response as the SDK dumps it. It
never holds an API key or an auth header (the client keeps those; ``extra_headers``
are dropped), and every known secret value that shows up anywhere in it (a
key a tool printed, in a tool result) is replaced by ``[REDACTED:NAME]``
(``agentlab.secrets.redact``). A request that failed is not recorded: it
changed nothing.

When a replayed request differs from the recording (another question, a
different tool result), ``ReplayClient`` says which message differs instead of
giving a reply that no longer fits.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from agentlab.history import HistoryFileError, Problem, as_dict, blocks
from agentlab.i18n import t
from agentlab.secrets import redact

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)  # not on Windows, where links need rights to make

if TYPE_CHECKING:
    from anthropic.types import Message

__all__ = ["RecordingClient", "ReplayClient", "ReplayMismatch", "record"]

_SECRET = re.compile(r"api_?key|auth|secret|password|cookie", re.IGNORECASE)
_DROPPED = ("extra_headers", "extra_query", "timeout")


def _plain(params: Mapping[str, Any]) -> dict[str, Any]:
    """The request as plain JSON data, without headers or anything named like a secret."""
    kept = {k: v for k, v in params.items() if k not in _DROPPED and not _SECRET.search(k)}
    return json.loads(json.dumps(as_dict(kept), ensure_ascii=False, default=str))


class _RecordingStream:
    """Wraps ``client.messages.stream(...)``: records the final message once."""

    def __init__(self, manager: Any, save: Any):
        self._manager, self._save = manager, save
        self._stream: Any = None
        self._saved = False

    def __enter__(self) -> _RecordingStream:
        self._stream = self._manager.__enter__()
        return self

    def __exit__(self, *exc: Any) -> Any:
        try:
            if exc[0] is None and not self._saved:
                self.get_final_message()
        finally:
            result = self._manager.__exit__(*exc)
        return result

    def __getattr__(self, name: str) -> Any:  # text_stream, until_done, ...
        return getattr(self._stream, name)

    def __iter__(self) -> Any:
        return iter(self._stream)

    def get_final_message(self) -> Any:
        message = self._stream.get_final_message()
        if not self._saved:
            self._saved = True
            self._save(message)
        return message


class _RecordingMessages:
    def __init__(self, owner: RecordingClient):
        self._owner = owner

    def create(self, **params: Any) -> Any:
        response = self._owner.client.messages.create(**params)
        self._owner._write(params, response)
        return response

    def stream(self, **params: Any) -> _RecordingStream:
        manager = self._owner.client.messages.stream(**params)
        return _RecordingStream(manager, lambda message: self._owner._write(params, message))

    def __getattr__(self, name: str) -> Any:  # count_tokens and friends pass through
        return getattr(self._owner.client.messages, name)


class RecordingClient:
    """A client that passes every request to ``client`` and appends it to ``path``."""

    def __init__(self, client: Any, path: str | PathLike[str]):
        self.client = client
        self.path = Path(path)
        self.count = 0
        self.messages = _RecordingMessages(self)

    def _write(self, params: Mapping[str, Any], response: Any) -> None:
        dump = getattr(response, "model_dump", None)
        data = dump(mode="json") if dump is not None else as_dict(response)
        entry = redact({"request": _plain(params), "response": data}, self.client)
        line = json.dumps(entry, ensure_ascii=False)
        # Never through a symbolic link: a model that runs commands in this folder could
        # point the recording at ~/.bashrc, where an appended line would run (as save()).
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | _NOFOLLOW, 0o644)
        except OSError as e:
            if not os.path.islink(self.path):
                raise
            why = t("file.symlink", target=os.readlink(self.path))
            problem = Problem(why, t("hint.file.symlink"), None, "file")
            raise HistoryFileError(self.path, [problem]) from e
        with os.fdopen(fd, "a", encoding="utf-8") as f:
            f.write(line + "\n")
        self.count += 1

    def __repr__(self) -> str:
        return f"RecordingClient(path={str(self.path)!r}, recorded={self.count})"


def record(client: Any, path: str | PathLike[str]) -> RecordingClient:
    """Wrap ``client`` so each request and response is appended to ``path`` (JSON Lines).

    The wrapper has the same ``.messages.create`` and ``.messages.stream``, so
    it goes wherever the client went. Replay the file with ``ReplayClient``.
    """
    return RecordingClient(client, path)


# ---------------------------------------------------------------------------
# Replay
# ---------------------------------------------------------------------------


class ReplayMismatch(ValueError):
    """A replayed request is not the one the recording holds at this point."""


def _short(value: Any, width: int = 70) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _describe(block: Mapping[str, Any]) -> str:
    kind = block.get("type")
    if kind == "text":
        return f"text {_short(block.get('text', ''))!r}"
    if kind == "tool_use":
        return f"tool_use {block.get('name')} {_short(block.get('input'))}"
    if kind == "tool_result":
        return f"tool_result {block.get('tool_use_id')}: {_short(block.get('content'))}"
    return _short(block)


def _at(role: Any, k: int, block: Any) -> str:
    return f"{role} content.{k}: " + ("(nothing)" if block is None else _describe(block))


def _first_difference(recorded: Any, now: Any) -> tuple[str, str] | None:
    """For two messages: a short description of each where they first differ."""
    if recorded == now:
        return None
    r_role, n_role = recorded.get("role"), now.get("role")
    if r_role != n_role:
        return f"role {r_role!r}", f"role {n_role!r}"
    r_blocks, n_blocks = blocks(recorded), blocks(now)
    for k in range(max(len(r_blocks), len(n_blocks))):
        r = r_blocks[k] if k < len(r_blocks) else None
        n = n_blocks[k] if k < len(n_blocks) else None
        if r != n:
            return _at(r_role, k, r), _at(r_role, k, n)
    return f"{r_role}: {_short(recorded)}", f"{n_role}: {_short(now)}"


def _tool_names(request: Mapping[str, Any]) -> list[Any]:
    return [tool.get("name") for tool in request.get("tools") or [] if isinstance(tool, dict)]


def difference(recorded: Mapping[str, Any], request: Mapping[str, Any], number: int = 1) -> str:
    """Why ``request`` is not the ``recorded`` one ("" if it is).

    Compares the messages, the system prompt and the tool names; ``number``
    is the request's position (1 = first), used in the wording.
    """
    now = redact(_plain(request))  # as it was written down
    r_messages, n_messages = recorded.get("messages") or [], now.get("messages") or []
    for i, (r, n) in enumerate(zip(r_messages, n_messages)):
        diff = _first_difference(r, n)
        if diff is not None:
            return t("replay.differs", i=number, index=i, recorded=diff[0], now=diff[1])
    if len(r_messages) != len(n_messages):
        return t("replay.length", i=number, now=len(n_messages), recorded=len(r_messages))
    if recorded.get("system") != now.get("system"):
        return t("replay.field", i=number, field="system")
    if _tool_names(recorded) != _tool_names(now):
        return t("replay.field", i=number, field="tools")
    return ""


class _Messages:
    def __init__(self, owner: ReplayClient):
        self._owner = owner

    def create(self, **params: Any) -> Message:
        return self._owner.reply(params)

    def stream(self, **params: Any) -> Any:
        from agentlab.fakeapi.offline import _Stream

        return _Stream(self._owner.reply(params))


class ReplayClient:
    """Answers requests from a recording made with ``record``, offline.

    ``match="order"`` (the default) plays the recorded responses in order and,
    with ``check=True``, raises ``ReplayMismatch`` naming the message that
    differs when a request is not the recorded one. ``match="request"`` looks
    up the recorded request with the same messages, whatever the order (what
    ``agentlab serve --replay`` uses for a whole class).
    """

    def __init__(
        self,
        path: str | PathLike[str],
        *,
        check: bool = True,
        match: Literal["order", "request"] = "order",
    ):
        self.path = Path(path)
        lines = self.path.read_text("utf-8").splitlines()
        self.entries: list[dict[str, Any]] = [json.loads(line) for line in lines if line.strip()]
        self.check, self.match = check, match
        self.index = 0
        self.requests: list[dict[str, Any]] = []
        self.messages = _Messages(self)

    @property
    def remaining(self) -> int:
        return len(self.entries) - self.index

    def _find(self, params: Mapping[str, Any]) -> dict[str, Any]:
        wanted = redact(_plain(params)).get("messages") or []
        for entry in self.entries:
            if (entry["request"].get("messages") or []) == wanted:
                return entry
        raise ReplayMismatch(t("replay.no_match", n=len(wanted)) + "\n" + t("replay.hint"))

    def reply(self, params: Mapping[str, Any]) -> Message:
        """The recorded response for this request (see the class docstring)."""
        from anthropic.types import Message

        if self.match == "request":
            entry = self._find(params)
        else:
            if self.index >= len(self.entries):
                raise ReplayMismatch(
                    t("replay.ended", path=self.path, n=len(self.entries), i=self.index + 1)
                )
            entry = self.entries[self.index]
            why = difference(entry["request"], params, self.index + 1) if self.check else ""
            if why:
                raise ReplayMismatch(why + "\n" + t("replay.hint"))
            self.index += 1
        self.requests.append(dict(params))
        return Message.model_validate(entry["response"])

    def __repr__(self) -> str:
        return f"ReplayClient(path={str(self.path)!r}, played={self.index}/{len(self.entries)})"
