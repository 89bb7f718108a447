"""The message history: a plain list of API-shaped dicts.

The history is what the model sees every turn. agentlab never wraps it in a
class: it is exactly the ``messages=`` list of the Anthropic Messages API, so a
student can print it, save it as JSON and send it as is.

Here: a run's result (``LoopResult``), each tool call with what answered it
(``pairings``), and ``save`` / ``load``: ``save`` writes atomically and refuses
what JSON cannot hold; ``load`` says clearly why a file is not a history.

How a message is read and made (``blocks``, ``as_message``, ``final_text``...),
and the rules a history must keep with ``validate`` and ``check_next`` that
check them, are in ``agentlab.rules``; they are importable from here too.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import stat
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path
from typing import Any

from agentlab.i18n import t
from agentlab.rules import (
    Problem,
    as_dict,
    as_message,
    blocks,
    cache_points,
    check_at,
    check_next,
    ends_on_answer,
    final_text,
    misplaced_system,
    role_of,
    tool_calls,
    validate,
)
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
    "ends_on_answer",
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
    # the requests of the helper loops its tools ran (``task``): one usage dict each, with
    # the model that answered; a budget counts them, ``usage`` does not
    helpers_usage: list[dict[str, Any]] = field(default_factory=list, repr=False)

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
        if role_of(message) != "assistant":
            continue
        turn += 1
        nxt = blocks(messages[i + 1]) if i + 1 < len(messages) else []
        results = {
            str(b.get("tool_use_id")): b
            for b in nxt
            if b.get("type") == "tool_result" and role_of(messages[i + 1]) == "user"
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
    written as ``[REDACTED:NAME]``. A symbolic link is refused, not followed: a model
    that can run commands in the folder could point ``history.json`` at a file that
    runs code (``~/.bashrc``), and saving would write the history there.
    """
    if os.path.islink(path):
        problem = t("file.symlink", target=os.readlink(path))
        raise HistoryFileError(path, [Problem(problem, t("hint.file.symlink"), None, "file")])
    p = Path(os.path.abspath(path))
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


def result_text(content: Any) -> str:
    """The text of a tool_result's content (a string or a list of blocks)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return "" if content is None else str(content)
