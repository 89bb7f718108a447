"""The message history: a plain list of API-shaped dicts, and the rules it must keep.

The history is what the model sees every turn. agentlab never wraps it in a
class: it is exactly the ``messages=`` list of the Anthropic Messages API, so a
student can print it, save it as JSON and send it as is.

``validate`` checks a whole history the way the API does and words each problem
the way the API's 400 error does: first the shape of every message and block
(read from the SDK's own request types, see ``agentlab.schema``), then the rules
that tie messages together. ``check_next`` checks one new message against the
one before it, which is all ``append`` needs (O(1) in the history's length).

``save`` writes atomically and refuses what JSON cannot hold; ``load`` says
clearly why a file is not a history.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import math
import os
import re
import stat
import sys
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import Any

from agentlab.i18n import t
from agentlab.usage import USAGE_KEYS, usage_of

__all__ = [
    "HistoryError",
    "HistoryFileError",
    "Pairing",
    "Problem",
    "LoopResult",
    "as_dict",
    "as_message",
    "blocks",
    "cache_points",
    "check_at",
    "check_next",
    "final_text",
    "load",
    "misplaced_system",
    "pairings",
    "result_text",
    "save",
    "tool_calls",
    "validate",
]


class HistoryError(ValueError):
    """Raised by ``append`` instead of making a history the API would reject."""

    def __init__(self, problems: Sequence[Problem]):
        self.problems = list(problems)
        lines = [str(p) for p in self.problems]
        hints = [f"{t('hint.label')}: {p.hint}" for p in self.problems if p.hint]
        super().__init__("\n".join(lines + hints))


@dataclass(frozen=True)
class Problem:
    """One rule a history breaks. ``str()`` is the API's own wording."""

    message: str
    hint: str = ""
    index: int | None = None  # which message (``messages.N``)
    rule: str = ""  # a short name: "unanswered", "unexpected_result", ...

    def __str__(self) -> str:
        return self.message


# --------------------------------------------------------------------------
# Reading messages whatever their form (plain dicts or SDK pydantic objects)
# --------------------------------------------------------------------------


def as_dict(obj: Any) -> Any:
    """Turn SDK objects (pydantic models) into plain JSON data, recursively.

    The lesson's own loop appends ``response.content`` (SDK objects) to the
    history; the API accepts that because the SDK serialises them. We read both.
    """
    kind = type(obj)
    if kind is str or kind is int or kind is float or kind is bool or obj is None:
        return obj
    if kind is dict:
        return _plain_dict(obj)
    if kind is list or kind is tuple:
        return [_plain_dict(v) if type(v) is dict else as_dict(v) for v in obj]
    if isinstance(obj, Mapping):
        return {k: as_dict(v) for k, v in obj.items()}
    if hasattr(obj, "model_dump"):
        return obj.model_dump(mode="json", exclude_none=True)
    return obj


def _plain_dict(obj: dict[Any, Any]) -> dict[Any, Any]:
    for v in obj.values():
        if type(v) is not str and type(v) is not bool:
            return {k: as_dict(v) for k, v in obj.items()}
    return dict(obj)  # strings and booleans only (a tool result, a text block): one copy


def blocks(message: Mapping[str, Any] | Any) -> list[dict[str, Any]]:
    """The content blocks of one message, as dicts. A string is one text block."""
    content = (
        message.get("content") if type(message) is dict or isinstance(message, Mapping) else None
    )
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if not isinstance(content, (list, tuple)):
        return []
    out = []
    for b in content:
        # Reading only: a dict is used as it is, an SDK object is converted.
        d = b if type(b) is dict else as_dict(b)
        out.append(d if isinstance(d, dict) else {"type": "?", "value": d})
    return out


def _role(message: Any) -> Any:
    if type(message) is dict or isinstance(message, Mapping):
        return message.get("role")
    return None


def _ids(bs: Iterable[dict[str, Any]], kind: str, key: str) -> list[str]:
    return [str(b.get(key)) for b in bs if b.get("type") == kind]


# --------------------------------------------------------------------------
# The rules
# --------------------------------------------------------------------------


def _schema(i: int, message: Any) -> list[Problem]:
    """What the API's request schema rejects in message ``i`` (see ``agentlab.schema``)."""
    from agentlab import schema

    problems = []
    for e in schema.check_message(message, i):
        top = len(e.path) <= 3  # messages.N or messages.N.<key>
        if len(e.path) == 2:
            rule, hint = "shape", t("hint.dict")
        elif top and e.key == "role":
            rule, hint = "role", t("hint.role")
        elif top and e.key == "content":
            rule, hint = "shape", t("hint.content")
        elif top:
            rule, hint = "shape", t("hint.schema.message_keys")
        else:
            rule, hint = "schema", _schema_hint(e)
        problems.append(Problem(str(e), hint, i, rule))
    return problems


def _schema_hint(e: Any) -> str:
    """A hint for a content block that does not fit the SDK's types."""
    from agentlab import schema

    if e.kind == "tag":
        return t("hint.schema.tag")
    if e.kind == "type" and e.key in ("input", "is_error") and "tool_" in e.where:
        return t(f"hint.schema.{e.key}")
    if e.kind == "type" and e.path[-2:-1] == ("tool_result",) and e.key == "content":
        return t("hint.schema.result_content")
    if e.kind == "type" and isinstance(e.path[-1], int):
        return t("hint.schema.block")
    if e.owner is not None:
        required, optional = schema.fields(e.owner)
        return t(
            "hint.schema.fields",
            type=e.owner.__name__,
            required=", ".join(required),
            optional=", ".join(optional) or "-",
        )
    return t("hint.schema.block")


def _check_message(i: int, message: Any, last: bool) -> list[Problem]:
    """Rules about one message on its own, beyond its shape (``_schema`` checks that)."""
    if type(message) is not dict and not isinstance(message, Mapping):
        return []
    role = message.get("role")
    content = message.get("content")
    if role not in ("user", "assistant", "system") or not isinstance(content, (str, list, tuple)):
        return []
    problems = []
    empty = (isinstance(content, str) and content == "") or (
        isinstance(content, (list, tuple)) and len(content) == 0
    )
    if empty and not (last and role == "assistant"):
        problems.append(
            Problem(
                f"messages.{i}: all messages must have non-empty content except for "
                "the optional final assistant message",
                t("hint.empty_message"),
                i,
                "empty",
            )
        )
    seen: set[str] = set()
    for k, b in enumerate(blocks(message)):
        kind = b.get("type")
        if kind == "text":
            text = b.get("text")
            if text == "":
                if not empty:  # an empty string content was reported above
                    problems.append(
                        Problem(
                            "messages: text content blocks must be non-empty",
                            t("hint.empty_text"),
                            i,
                            "empty_text",
                        )
                    )
            elif isinstance(text, str) and not text.strip():
                problems.append(
                    Problem(
                        "messages: text content blocks must contain non-whitespace text",
                        t("hint.empty_text"),
                        i,
                        "empty_text",
                    )
                )
        elif kind == "tool_use":
            if role != "assistant":
                problems.append(
                    Problem(
                        f"messages.{i}: `tool_use` blocks can only be in `assistant` messages",
                        t("hint.tool_use_role"),
                        i,
                        "role",
                    )
                )
            tid = str(b.get("id"))
            if tid in seen:
                problems.append(
                    Problem(
                        f"messages.{i}.content.{k}: `tool_use` ids must be unique",
                        t("hint.duplicate_id"),
                        i,
                        "duplicate_id",
                    )
                )
            seen.add(tid)
            if isinstance(b.get("id"), str) and not TOOL_USE_ID.fullmatch(b["id"]):
                problems.append(
                    Problem(
                        f"messages.{i}.content.{k}.tool_use.id: String should match pattern "
                        "'^[a-zA-Z0-9_-]+$'",
                        t("hint.tool_use_id"),
                        i,
                        "id_pattern",
                    )
                )
        elif kind == "tool_result" and "tool_use_id" not in b:
            # The API's pydantic-style location (as in `tools.0.custom.name`); the
            # part before `tool_use_id` is inferred, not confirmed.
            problems.append(
                Problem(
                    f"messages.{i}.content.{k}.tool_result.tool_use_id: Field required",
                    t("hint.unexpected_result"),
                    i,
                    "shape",
                )
            )
        elif kind == "tool_result" and role != "user":
            problems.append(
                Problem(
                    f"messages.{i}: `tool_result` blocks can only be in `user` messages",
                    t("hint.result_role"),
                    i,
                    "role",
                )
            )
        elif kind in ("thinking", "redacted_thinking") and role != "assistant":
            # The API refuses thinking blocks the model did not write; its exact words
            # for one in a user message are not known from public material. These
            # follow its wording for tool_use blocks.
            problems.append(
                Problem(
                    f"messages.{i}.content.{k}: `{kind}` blocks can only be in "
                    "`assistant` messages",
                    t("hint.thinking_role"),
                    i,
                    "role",
                )
            )
    return problems


def misplaced_system(i: int, prev: Any, message: Any) -> list[Problem]:
    """A ``system`` message at ``i`` that does not come right after a user turn.

    The API accepts ``role: "system"`` mid-conversation after a user turn
    (Sonnet 5.5 / Opus 4.8+; the Sonnet 5.5 migration guide,
    checked 2026-11-30). After an assistant turn it is refused
    here; after another ``system`` message too: the documented place is after a
    user turn, two in a row can always be merged into one, and agentlab would
    rather refuse a history the API might accept than accept one it may refuse.
    The API's wording for this error is not public: the text says it is agentlab's.
    """
    if prev is None or _role(message) != "system" or _role(prev) == "user":
        return []
    after = "another `system` message" if _role(prev) == "system" else "an `assistant` turn"
    return [
        Problem(
            f"messages.{i}: a `system` message must come right after a `user` turn, not after "
            f"{after} (agentlab's check; the API's wording for this error is not public)",
            t("hint.system_after_user"),
            i,
            "system_after_user",
        )
    ]


def _check_pair(i: int, prev: Any, message: Any | None, pending_ok: bool) -> list[Problem]:
    """Rules that tie message ``i`` (may be None: the end) to message ``i - 1``."""
    problems: list[Problem] = misplaced_system(i, prev, message)
    prev_blocks = blocks(prev) if _role(prev) == "assistant" else []
    wanted = _ids(prev_blocks, "tool_use", "id")
    cur = blocks(message) if message is not None and _role(message) == "user" else []

    # Results the model did not ask for (checked whatever came before), and a second result
    # for one call: "messages.10.content.1: each tool_use must have a single result. Found
    # multiple `tool_result` blocks with id: toolu_..." as the live API answers it, quoted in
    # github.com/anthropics/claude-code/issues/14110 (2025-12-16).
    answered_ids: set[str] = set()
    for k, b in enumerate(cur):
        if b.get("type") != "tool_result" or "tool_use_id" not in b:
            continue  # a missing id is a shape error (_check_message)
        if str(b.get("tool_use_id")) in answered_ids:
            problems.append(
                Problem(
                    f"messages.{i}.content.{k}: each tool_use must have a single result. Found "
                    f"multiple `tool_result` blocks with id: {b.get('tool_use_id')}",
                    t("hint.duplicate_result"),
                    i,
                    "duplicate_result",
                )
            )
            continue
        answered_ids.add(str(b.get("tool_use_id")))
        if str(b.get("tool_use_id")) not in wanted:
            problems.append(
                Problem(
                    f"messages.{i}.content.{k}: unexpected `tool_use_id` found in "
                    f"`tool_result` blocks: {b.get('tool_use_id')}. Each `tool_result` block "
                    "must have a corresponding `tool_use` block in the previous message.",
                    t("hint.unexpected_result"),
                    i,
                    "unexpected_result",
                )
            )
    if not wanted:
        return problems
    if message is None:
        if pending_ok:
            return problems
        missing = wanted
    elif _role(message) != "user":
        missing = wanted
    else:
        # The results must come first: as many tool_result blocks as tool_use blocks.
        leading = 0
        for b in cur:
            if b.get("type") != "tool_result":
                break
            leading += 1
        if leading < len(wanted) and leading < len(cur):
            problems.append(
                Problem(
                    f"messages.{i}: Did not find {len(wanted)} `tool_result` block(s) at the "
                    "beginning of this message. Messages following `tool_use` blocks must "
                    "begin with a matching number of `tool_result` blocks.",
                    t("hint.results_first"),
                    i,
                    "results_first",
                )
            )
            return problems
        answered = set(_ids(cur, "tool_result", "tool_use_id"))
        missing = [x for x in wanted if x not in answered]
    if missing:
        problems.append(
            Problem(
                f"messages.{i - 1}: `tool_use` ids were found without `tool_result` blocks "
                f"immediately after: {', '.join(missing)}. Each `tool_use` block must have a "
                "corresponding `tool_result` block in the next message.",
                t("hint.unanswered"),
                i - 1,
                "unanswered",
            )
        )
    return problems


def validate(messages: Sequence[Any], pending_ok: bool = False) -> list[Problem]:
    """Every rule the API would enforce on ``messages``; ``[]`` means it would accept them.

    ``pending_ok=True`` accepts a history that ends on an assistant turn whose
    ``tool_use`` blocks are not answered yet: the state between saving the
    model's reply and appending the tool results.
    """
    if not isinstance(messages, (list, tuple)):
        return [Problem("messages: Input should be a valid list", t("hint.list"), None, "shape")]
    if not messages:
        return [
            Problem("messages: at least one message is required", t("hint.first"), None, "shape")
        ]
    # The API checks the request's shape first (its schema) and the rules that tie
    # messages together after, so every shape problem comes before the others:
    # the first problem is the one the API's 400 names.
    problems: list[Problem] = []
    for i, message in enumerate(messages):
        problems += _schema(i, message)
    problems += _first_role(messages[0])
    for i, message in enumerate(messages):
        problems += _check_message(i, message, last=i == len(messages) - 1)
        if i > 0:
            problems += _check_pair(i, messages[i - 1], message, pending_ok)
        else:
            problems += _check_pair(0, None, message, pending_ok)
    problems += _check_pair(len(messages), messages[-1], None, pending_ok)
    problems += cache_points(messages)
    if not problems:
        problems += _thinking_prefix(messages)
    return problems


MAX_CACHE_POINTS = 4


def cache_points(messages: Sequence[Any], tools: Any = None, system: Any = None) -> list[Problem]:
    """More than four blocks marked ``cache_control`` in one request (tools, system and
    messages together): "A maximum of 4 blocks with cache_control may be provided.
    Found 5." as the live API answers it, quoted in
    github.com/griffinmartin/opencode-claude-auth/issues/121 (2026-04-03) and
    github.com/VicBilibily/GCMP/pull/83 (2026-02-16). The top-level ``cache_control``
    (automatic caching) is not counted here: whether it takes one of the four is not public."""
    found = 0
    for block in [*(tools or []), *(system if isinstance(system, list) else [])]:
        found += isinstance(block, Mapping) and "cache_control" in block
    for message in messages:
        for b in blocks(message) if isinstance(message, Mapping) else []:
            found += "cache_control" in b
            inner = b.get("content") if b.get("type") == "tool_result" else None
            if isinstance(inner, list):  # a tool result's own blocks (not a string, not junk)
                found += sum(isinstance(x, Mapping) and "cache_control" in x for x in inner)
    if found <= MAX_CACHE_POINTS:
        return []
    text = (
        f"A maximum of {MAX_CACHE_POINTS} blocks with cache_control may be provided. Found {found}."
    )
    return [Problem(text, t("hint.cache_points"), None, "cache_points")]


def _thinking_prefix(messages: Sequence[Any]) -> list[Problem]:
    """A thinking block whose earlier messages changed since the model wrote it (the
    prefix check of preserved thinking). Only the offline emulator
    (``agentlab.fakeapi.thinking``) writes signatures agentlab can read, so when it
    is not loaded there is nothing to check; the core does not import it."""
    thinking: Any = sys.modules.get("agentlab.fakeapi.thinking")
    found = None if thinking is None else thinking.prefix_mismatch(messages)
    if found is None:
        return []
    i, k = found
    text = thinking.BOUND_ELSEWHERE.format(where=f"messages.{i}.content.{k}")
    hint = t("hint.thinking_prefix", block=i)
    return [Problem(text, hint, i, "thinking_prefix")]


def _first_role(message: Any) -> list[Problem]:
    if _role(message) in ("assistant", "system"):
        return [
            Problem('messages: first message must use the "user" role', t("hint.first"), 0, "first")
        ]
    return []


def check_next(messages: Sequence[Any], message: Any, *, pending_ok: bool = True) -> list[Problem]:
    """Problems that appending ``message`` to ``messages`` would create.

    Looks only at the new message and the one before it, so it costs the same
    for a history of 3 messages or of 3,000.
    """
    prev = messages[-1] if messages else None
    if _fine(prev, message, pending_ok):  # the turns a loop writes: one pass, no list built
        return []
    return check_at(len(messages), prev, message, pending_ok=pending_ok)


def check_at(i: int, prev: Any, message: Any, *, pending_ok: bool = True) -> list[Problem]:
    """Problems of ``message`` standing at index ``i`` right after ``prev`` (None: first)."""
    if _fine(prev, message, pending_ok):
        return []
    problems = _schema(i, message)
    if prev is None:
        problems += _first_role(message)
    problems += _check_message(i, message, last=True)
    if prev is not None and _role(prev) == "assistant":  # an empty reply may only come last
        problems += [p for p in _check_message(i - 1, prev, last=False) if p.rule == "empty"]
    problems += _check_pair(i, prev, message, pending_ok)
    problems += _check_pair(i + 1, message, None, pending_ok)
    return problems


_MESSAGE_KEYS = frozenset({"role", "content"})
_TEXT_KEYS = frozenset({"type", "text"})
_TOOL_USE_KEYS = frozenset({"type", "id", "name", "input"})
_TOOL_RESULT_KEYS = frozenset({"type", "tool_use_id", "content", "is_error"})
_THINKING_KEYS = frozenset({"type", "thinking", "signature"})
# The pattern the API holds a tool_use id to. Its 400 reads "messages.1.content.1.tool_use.id:
# String should match pattern '^[a-zA-Z0-9_-]+$'", as quoted from the real API (with request
# ids) in github.com/BlockRunAI/ClawRouter/issues/17 (2026-02-10) and
# github.com/CommandCodeAI/command-code/issues/323 (2026-05-06); Anthropic's docs do not state it.
TOOL_USE_ID = re.compile(r"[a-zA-Z0-9_-]+")
_ID_OK = TOOL_USE_ID.fullmatch


def _block_kind(b: Any) -> str | None:
    """The type of block ``b`` if it is one a loop writes every turn (text,
    tool_use, tool_result, thinking) and well formed; None otherwise."""
    if type(b) is not dict:
        return None
    kind, keys = b.get("type"), b.keys()
    if kind == "text":
        ok = keys == _TEXT_KEYS and type(b["text"]) is str
    elif kind == "tool_use":
        ok = keys == _TOOL_USE_KEYS and type(b["input"]) is dict
        ok = ok and type(b["id"]) is str and _ID_OK(b["id"]) is not None and type(b["name"]) is str
    elif kind == "tool_result":
        ok = "tool_use_id" in keys and keys <= _TOOL_RESULT_KEYS
        ok = ok and type(b["tool_use_id"]) is str and type(b.get("content", "")) is str
        ok = ok and type(b.get("is_error", False)) is bool
    elif kind == "thinking":
        ok = keys == _THINKING_KEYS and type(b["thinking"]) is str
        ok = ok and type(b["signature"]) is str
    else:
        return None
    return kind if ok else None


def _fine(prev: Any, message: Any, pending_ok: bool) -> bool:
    """True when ``message`` after ``prev`` is one of the turns a loop writes every
    turn and breaks no rule above: a task, a reply, its tool results.

    The same answer as the rules, found in one pass, for the messages ``append``
    sees every turn; anything unusual answers False and gets the full check
    (tests/test_history.py compares the two on generated histories).
    """
    if type(message) is not dict or message.keys() != _MESSAGE_KEYS:
        return False
    role, content = message["role"], message["content"]
    if role != "user" and role != "assistant":
        return False
    wanted: list[str] = []  # the tool calls of prev: message must answer them
    if prev is None:
        if role != "user":
            return False
    elif type(prev) is not dict:
        return False
    elif prev.get("role") == "assistant":
        before = prev.get("content")
        if not before or type(before) not in (str, list):
            return False  # an empty reply may only be the last message
        for b in before if type(before) is list else ():
            if type(b) is not dict:
                return False
            if b.get("type") == "tool_use":
                if type(b.get("id")) is not str or b["id"] in wanted:
                    return False
                wanted.append(b["id"])
    if type(content) is str:
        return not wanted and content.strip() != ""
    if type(content) is not list or not content:
        return False
    if role == "assistant":
        seen: set[str] = set()
        for b in content:
            kind = _block_kind(b)  # None: not a well-formed block of these kinds
            if kind == "tool_use":
                if b["id"] in seen:
                    return False
                seen.add(b["id"])
            elif kind == "text":
                if not b["text"].strip():
                    return False
            elif kind != "thinking":
                return False
        return not wanted and (pending_ok or not seen)
    answered = 0  # a user turn: the results first (in the calls' order here), then text
    for b in content:
        kind = _block_kind(b)
        if kind == "tool_result":
            if answered < len(wanted) and b["tool_use_id"] == wanted[answered]:
                answered += 1
                continue
            return False
        if kind != "text" or not b["text"].strip() or answered < len(wanted):
            return False
    return answered == len(wanted)


def as_message(item: Any) -> dict[str, Any] | None:
    """What ``append`` adds for ``item``, as plain dicts (None: a reply with no content).

    An SDK ``Message`` becomes an assistant turn (its blocks as the JSON the API
    sent), a list of blocks a ``user`` message, a string a ``user`` text turn; a
    message dict is copied as it is. Past this point the loop reads dicts only."""
    if type(item) is list:  # tool results (the commonest, so asked first)
        return {"role": "user", "content": as_dict(item)}
    if hasattr(item, "stop_reason") and hasattr(item, "content"):  # an SDK Message
        content = [_dump(b) for b in item.content]
        return {"role": "assistant", "content": content} if content else None
    if isinstance(item, str):
        return {"role": "user", "content": item}
    if isinstance(item, list | tuple):
        return {"role": "user", "content": as_dict(item)}
    if isinstance(item, dict) and "role" in item:
        return as_dict(item)
    raise TypeError(
        "append() takes a Message, a list of tool_result blocks, a string or a message dict, "
        f"not {item!r}"
    )


def _dump(block: Any) -> Any:
    """One SDK content block as the JSON the API sent (``None`` fields left out): what
    ``block.model_dump(mode="json", exclude_none=True)`` returns, from pydantic's own
    serializer without the wrapper around it (half the cost, paid on every reply)."""
    serializer = getattr(block, "__pydantic_serializer__", None)
    if serializer is None:
        return as_dict(block)
    return serializer.to_python(block, mode="json", exclude_none=True)


def tool_calls(message: Any) -> list[dict[str, Any]]:
    """The ``tool_use`` blocks of an assistant message (a plain dict); [] for any other."""
    if _role(message) != "assistant":
        return []
    return [b for b in blocks(message) if b.get("type") == "tool_use"]


def ends_on_answer(messages: Sequence[Any]) -> bool:
    """Whether the history ends on the model's answer (an assistant message with no tool
    call): sending it again would be a prefill."""
    last = messages[-1] if messages else None
    return isinstance(last, dict) and _role(last) == "assistant" and not tool_calls(last)


# --------------------------------------------------------------------------
# A run of the loop: its history and how it ended
# --------------------------------------------------------------------------


@dataclass
class LoopResult:
    """How a run of the loop ended (``steps`` keeps it up to date as it runs)."""

    messages: list[Any]
    text: str = ""
    stop_reason: str | None = None  # the API's stop_reason of the last reply (None if no reply)
    turns: int = 0
    replies_usage: list[Any] = field(default_factory=list, repr=False)  # as the API sent them
    explanation: str = ""
    start: int = 0  # where this run's task is in ``messages`` (a follow-up starts later)
    ended: str | None = None  # why the loop ended: ENDINGS (agentlab's word, not the API's)
    model: str | None = None  # the model that answered (what a cost budget is priced by)

    @property
    def turn_usage(self) -> list[dict[str, int]]:
        """The tokens of each model request, in order."""
        return [usage_of(u) for u in self.replies_usage]

    @property
    def usage(self) -> dict[str, int]:
        """The tokens of the whole run (``{}`` before any reply)."""
        rows = self.turn_usage
        return {k: sum([u[k] for u in rows]) for k in USAGE_KEYS} if rows else {}

    def final_text(self) -> str:
        return final_text(self.new_messages)

    @property
    def new_messages(self) -> list[Any]:
        """The messages this run added, starting with its task."""
        return self.messages[self.start :]

    def __repr__(self) -> str:
        n = len(self.messages)
        return t("result.repr", ended=self.ended, reason=self.stop_reason, turns=self.turns, n=n)

    # Shown by Jupyter: the answer on top, the transcript folded below. Drawing is the
    # views' work (agentlab/views/render.py), loaded only when a notebook shows a result.
    def _repr_markdown_(self) -> str:
        return _render().result_markdown(self)

    def _repr_html_(self) -> str:
        return _render().result_html(self)


def _render() -> Any:
    return importlib.import_module("agentlab.views.render")  # the views: when a page shows one


# --------------------------------------------------------------------------
# Pairings: each tool_use and what answered it
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Pairing:
    """One ``tool_use`` and its ``tool_result`` (if any)."""

    turn: int  # which assistant turn asked for it (1-based)
    use_index: int  # message index of the tool_use
    result_index: int | None  # message index of its tool_result, None if missing
    id: str
    name: str
    input: Any
    status: str  # "ok", "error" or "missing"
    result: Any = None  # the tool_result's content
    # The model's thinking right before this call, in the same message: None when
    # there was no thinking block, "" when the API hid its text (display "omitted",
    # or a redacted_thinking block).
    thinking: str | None = None


def pairings(messages: Sequence[Any]) -> list[Pairing]:
    """Every ``tool_use`` in the history with the ``tool_result`` that answers it."""
    out: list[Pairing] = []
    turn = 0
    for i, message in enumerate(messages):
        if _role(message) != "assistant":
            continue
        turn += 1
        nxt = blocks(messages[i + 1]) if i + 1 < len(messages) else []
        results = {
            str(b.get("tool_use_id")): b
            for b in nxt
            if b.get("type") == "tool_result" and _role(messages[i + 1]) == "user"
        }
        thought: list[str] = []
        for b in blocks(message):
            if b.get("type") in ("thinking", "redacted_thinking"):
                thought.append(str(b.get("thinking") or ""))
                continue
            if b.get("type") != "tool_use":
                continue
            thinking = "\n".join(x for x in thought if x) if thought else None
            thought = []
            r = results.get(str(b.get("id")))
            status = "missing" if r is None else ("error" if r.get("is_error") else "ok")
            out.append(
                Pairing(
                    turn=turn,
                    use_index=i,
                    result_index=None if r is None else i + 1,
                    id=str(b.get("id")),
                    name=str(b.get("name")),
                    input=b.get("input"),
                    status=status,
                    result=None if r is None else r.get("content"),
                    thinking=thinking,
                )
            )
    return out


# --------------------------------------------------------------------------
# Save, load, export
# --------------------------------------------------------------------------


MAX_DEPTH = 100  # nesting a saved history may have; a real one stays under 20


class HistoryFileError(HistoryError):
    """Raised by ``save`` and ``load``: the file could not be written or read as a history.

    When ``save`` raises it, the file on disk is the one that was there before.
    """

    def __init__(self, path: str | PathLike[str], problems: Sequence[Problem]):
        self.path = Path(path)
        super().__init__(problems)
        self.args = (f"{self.path}: {self.args[0]}",)


def save(messages: Sequence[Any], path: str | PathLike[str]) -> Path:
    """Write the history as JSON (plain dicts; SDK objects are converted).

    The write is atomic: the JSON goes to a temporary file in the same folder,
    is flushed to disk, and only then takes the old file's name. A value JSON
    cannot hold (bytes, a set, NaN, a lone surrogate...) raises
    ``HistoryFileError`` naming where it is, and the old file stays as it was.
    Any known secret value (the API key, ``*_TOKEN``, ``*_KEY`` variables) is
    written as ``[REDACTED:NAME]``.
    """
    p = Path(os.path.realpath(path))  # through a symlink, replace what it points to
    try:
        data = as_dict(list(messages))
    except RecursionError:
        problem = f"messages: nested more than {MAX_DEPTH} levels deep"
    else:
        from agentlab.secrets import redact

        data = redact(data)  # a key a tool printed never reaches the file (agentlab.secrets)
        problem = _unsaveable(data)
    if problem:
        raise HistoryFileError(path, [Problem(problem, t("hint.file.save"), None, "file")])
    raw = (json.dumps(data, ensure_ascii=False, indent=1, allow_nan=False) + "\n").encode("utf-8")
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=".tmp", dir=p.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, _mode(p))
        os.replace(tmp, p)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _sync_folder(p.parent)
    return Path(path)


def _mode(p: Path) -> int:
    """The old file's permissions, or those a plain ``open()`` would give a new one."""
    try:
        return stat.S_IMODE(p.stat().st_mode)
    except OSError:
        umask = os.umask(0o22)  # reading the umask means setting it: put it back at once
        os.umask(umask)
        return 0o666 & ~umask


def _sync_folder(folder: Path) -> None:
    """Make the rename itself durable (POSIX; Windows cannot open folders)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _unsaveable(data: Any) -> str:
    """Where ``data`` holds something JSON (in UTF-8) cannot: ``"messages.2.content: ..."``."""
    todo: list[tuple[Any, tuple[Any, ...]]] = [(data, ())]
    while todo:
        value, path = todo.pop()
        where = ".".join(["messages", *map(str, path)])
        if len(path) > MAX_DEPTH:
            return f"{where}: nested more than {MAX_DEPTH} levels deep"
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as e:
                return f"{where}: a string that is not valid Unicode ({e.reason})"
        elif isinstance(value, float) and not math.isfinite(value):
            return f"{where}: {value} is not a JSON number"
        elif isinstance(value, dict):
            for k, v in reversed(list(value.items())):
                if not isinstance(k, str):
                    return f"{where}: the key {k!r} is not a string"
                todo.append((v, (*path, k)))
                todo.append((k, (*path, k)))
        elif isinstance(value, (list, tuple)):
            todo += [(v, (*path, k)) for k, v in reversed(list(enumerate(value)))]
        elif not (value is None or isinstance(value, (bool, int, float))):
            return f"{where}: a value of type {type(value).__name__} cannot be saved as JSON"
    return ""


def load(path: str | PathLike[str], *, check: bool = True) -> list[dict[str, Any]]:
    """Read a history written by ``save``.

    Raises ``HistoryFileError`` with a clear reason when the file is not UTF-8
    JSON, nests deeper than ``MAX_DEPTH``, is not a list of messages, or (with
    ``check=True``) is a history the API would reject. A history that ends on
    an unanswered ``tool_use`` (saved between two stages) is accepted.
    """
    raw = Path(path).read_bytes()

    def fail(message: str, hint: str = "") -> HistoryFileError:
        return HistoryFileError(path, [Problem(message, hint or t("hint.file.load"), None, "file")])

    try:
        data = json.loads(raw.decode("utf-8"), parse_constant=_no_constant)
    except UnicodeDecodeError as e:
        raise fail(f"not UTF-8 text (byte {e.start})") from None
    except json.JSONDecodeError as e:
        raise fail(f"not JSON: {e.msg} (line {e.lineno}, column {e.colno})") from None
    except RecursionError:
        raise fail(f"nested too deeply to read (more than {MAX_DEPTH} levels)") from None
    except ValueError as e:  # NaN or Infinity
        raise fail(f"not JSON: {e}") from None
    if not isinstance(data, list):
        raise fail("messages: Input should be a valid list", t("hint.list"))
    problem = _unsaveable(data)
    if problem:
        raise fail(problem)
    if check and data:
        problems = validate(data, pending_ok=True)
        if problems:
            raise HistoryFileError(path, problems)
    return data


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def final_text(messages: Sequence[Any]) -> str:
    """The text of the last assistant message that has any."""
    for message in reversed(messages):
        if _role(message) == "assistant":
            text = "\n".join(
                str(b.get("text", "")) for b in blocks(message) if b.get("type") == "text"
            )
            if text.strip():
                return text
    return ""


def result_text(content: Any) -> str:
    """The text of a tool_result's content (a string or a list of blocks)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return "" if content is None else str(content)
