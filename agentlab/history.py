"""The message history: a plain list of API-shaped dicts, and the rules it must keep.

The history is what the model sees every turn. agentlab never wraps it in a
class: it is exactly the ``messages=`` list of the Anthropic Messages API, so a
student can print it, save it as JSON and send it as is.

``validate`` checks a whole history the way the API does and words each problem
the way the API's 400 error does. ``check_next`` checks one new message against
the one before it, which is all ``append`` needs (O(1) in the history's length).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import Any

from agentlab.i18n import t

__all__ = [
    "HistoryError",
    "Pairing",
    "Problem",
    "as_dict",
    "blocks",
    "check_at",
    "check_next",
    "load",
    "pairings",
    "result_text",
    "save",
    "to_markdown",
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
    if kind is dict or isinstance(obj, Mapping):
        return {k: as_dict(v) for k, v in obj.items()}
    if kind is list or kind is tuple:
        return [as_dict(v) for v in obj]
    if hasattr(obj, "model_dump"):
        return obj.model_dump(mode="json", exclude_none=True)
    return obj


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


def _check_message(i: int, message: Any, last: bool) -> list[Problem]:
    """Rules about one message on its own."""
    if type(message) is not dict and not isinstance(message, Mapping):
        return [
            Problem(f"messages.{i}: Input should be a valid dictionary", t("hint.dict"), i, "shape")
        ]
    role = message.get("role")
    if role not in ("user", "assistant"):
        return [
            Problem(
                f"messages.{i}.role: Input should be 'user' or 'assistant'",
                t("hint.role"),
                i,
                "role",
            )
        ]
    content = message.get("content")
    if not isinstance(content, (str, list, tuple)):
        return [Problem(f"messages.{i}.content: Field required", t("hint.content"), i, "shape")]
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
            if not isinstance(text, str) or text == "":
                if not empty:  # an empty string content was reported above
                    problems.append(
                        Problem(
                            "messages: text content blocks must be non-empty",
                            t("hint.empty_text"),
                            i,
                            "empty_text",
                        )
                    )
            elif not text.strip():
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
    return problems


def _check_pair(i: int, prev: Any, message: Any | None, pending_ok: bool) -> list[Problem]:
    """Rules that tie message ``i`` (may be None: the end) to message ``i - 1``."""
    problems: list[Problem] = []
    prev_blocks = blocks(prev) if _role(prev) == "assistant" else []
    wanted = _ids(prev_blocks, "tool_use", "id")
    cur = blocks(message) if message is not None and _role(message) == "user" else []

    # Results the model did not ask for (checked whatever came before).
    for k, b in enumerate(cur):
        if b.get("type") != "tool_result" or "tool_use_id" not in b:
            continue  # a missing id is a shape error (_check_message)
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
    problems: list[Problem] = []
    if _role(messages[0]) == "assistant":
        problems.append(
            Problem('messages: first message must use the "user" role', t("hint.first"), 0, "first")
        )
    for i, message in enumerate(messages):
        problems += _check_message(i, message, last=i == len(messages) - 1)
        if i > 0:
            problems += _check_pair(i, messages[i - 1], message, pending_ok)
        else:
            problems += _check_pair(0, None, message, pending_ok)
    problems += _check_pair(len(messages), messages[-1], None, pending_ok)
    return problems


def check_next(messages: Sequence[Any], message: Any, *, pending_ok: bool = True) -> list[Problem]:
    """Problems that appending ``message`` to ``messages`` would create.

    Looks only at the new message and the one before it, so it costs the same
    for a history of 3 messages or of 3,000.
    """
    return check_at(
        len(messages), messages[-1] if messages else None, message, pending_ok=pending_ok
    )


def check_at(i: int, prev: Any, message: Any, *, pending_ok: bool = True) -> list[Problem]:
    """Problems of ``message`` standing at index ``i`` right after ``prev`` (None: first)."""
    problems = _check_message(i, message, last=True)
    if prev is None and _role(message) == "assistant":
        problems.append(
            Problem('messages: first message must use the "user" role', t("hint.first"), 0, "first")
        )
    if prev is not None and not blocks(prev) and _role(prev) == "assistant":
        problems += [p for p in _check_message(i - 1, prev, last=False) if p.rule == "empty"]
    problems += _check_pair(i, prev, message, pending_ok)
    problems += _check_pair(i + 1, message, None, pending_ok)
    return problems


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
        for b in blocks(message):
            if b.get("type") != "tool_use":
                continue
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
                )
            )
    return out


# --------------------------------------------------------------------------
# Save, load, export
# --------------------------------------------------------------------------


def save(messages: Sequence[Any], path: str | PathLike[str]) -> Path:
    """Write the history as JSON (plain dicts; SDK objects are converted)."""
    p = Path(path)
    p.write_text(json.dumps(as_dict(list(messages)), ensure_ascii=False, indent=1) + "\n", "utf-8")
    return p


def load(path: str | PathLike[str]) -> list[dict[str, Any]]:
    """Read a history written by ``save``; it must be a JSON list of messages."""
    data = json.loads(Path(path).read_text("utf-8"))
    if not isinstance(data, list):
        raise HistoryError([Problem("messages: Input should be a valid list", t("hint.list"))])
    return data


def result_text(content: Any) -> str:
    """The text of a tool_result's content (a string or a list of blocks)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return "" if content is None else str(content)


def to_markdown(messages: Sequence[Any]) -> str:
    """A readable transcript: one section per message, tools as code blocks."""
    parts = []
    for i, message in enumerate(messages):
        role = _role(message)
        label = t(f"role.{role}") if role in ("user", "assistant") else str(role)
        if role == "user" and any(b.get("type") == "tool_result" for b in blocks(message)):
            label = t("role.tool_results")
        lines = [f"**{i}. {label}**", ""]
        for b in blocks(message):
            kind = b.get("type")
            if kind == "text":
                lines += [str(b.get("text", "")), ""]
            elif kind == "tool_use":
                args = json.dumps(b.get("input"), ensure_ascii=False)
                lines += [
                    f"`tool_use` **{b.get('name')}** `{b.get('id')}`",
                    "",
                    "```json",
                    args,
                    "```",
                    "",
                ]
            elif kind == "tool_result":
                flag = " (is_error)" if b.get("is_error") else ""
                text = result_text(b.get("content"))
                lines += [
                    f"`tool_result` for `{b.get('tool_use_id')}`{flag}",
                    "",
                    "```text",
                    text,
                    "```",
                    "",
                ]
            else:
                lines += [f"`{kind}` block", ""]
        parts.append("\n".join(lines))
    return "\n".join(parts)
