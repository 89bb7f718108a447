"""Approval: who decides whether a tool call the model asked for may run.

``execute(..., approve=...)`` asks ``approve(call)`` before each tool runs. It
may answer ``True``/``False``, a reason string (a denial), or a ``Verdict``
(approve, deny with a reason, or edit the input). A denial is not an error in
the loop: it becomes an ``is_error`` tool result carrying the reason, so the
model can adapt.

``Policy`` is a ready-made ``approve``: a mode (``auto``, ``confirm``,
``deny``) plus allow/ask/deny patterns, checked deny -> ask -> allow, first
match wins.

``lesson_blocklist`` is the lesson's substring check. It is a teaching aid,
NOT security: ``rm -r -f /`` slips past a check for ``rm -rf /``. Real limits
are the bash tool's timeout, output cap, clean environment and workspace, plus
asking a person (``confirm``).
"""

from __future__ import annotations

import fnmatch
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["Policy", "Verdict", "as_verdict", "describe_call", "lesson_blocklist"]

Mode = Literal["auto", "confirm", "deny"]


@dataclass(frozen=True)
class Verdict:
    """The answer to "may this tool call run?"."""

    action: Literal["approve", "deny", "edit"]
    reason: str = ""
    input: dict[str, Any] | None = None  # the edited input, for action == "edit"

    @classmethod
    def approve(cls, reason: str = "") -> Verdict:
        return cls("approve", reason)

    @classmethod
    def deny(cls, reason: str = "") -> Verdict:
        return cls("deny", reason)

    @classmethod
    def edit(cls, new_input: Mapping[str, Any], reason: str = "") -> Verdict:
        return cls("edit", reason, dict(new_input))


def as_verdict(answer: Any) -> Verdict:
    """Normalise what an ``approve`` callback returned."""
    if isinstance(answer, Verdict):
        return answer
    if answer is True:
        return Verdict.approve()
    if answer is False or answer is None:
        return Verdict.deny()
    if isinstance(answer, str):
        return Verdict.deny(answer)
    if isinstance(answer, Mapping):
        return Verdict.edit(answer)
    raise TypeError(
        f"approve() returned {answer!r}; return True, False, a reason string or a Verdict"
    )


def describe_call(call: Any) -> str:
    """A one-line text for a tool call: the command for bash, else name(json)."""
    name = getattr(call, "name", None) or (call.get("name") if isinstance(call, Mapping) else "?")
    data = getattr(call, "input", None)
    if data is None and isinstance(call, Mapping):
        data = call.get("input")
    if isinstance(data, Mapping) and set(data) == {"command"}:
        return str(data["command"])
    return f"{name}({json.dumps(data, ensure_ascii=False)})"


def _matches(patterns: Iterable[str], text: str) -> str | None:
    for p in patterns:
        if fnmatch.fnmatchcase(text, p):
            return p
    return None


@dataclass
class Policy:
    """An ``approve`` callback built from a mode and patterns.

    Patterns are shell-style globs (``fnmatch``) matched against the command
    for bash, or ``name(json-input)`` for other tools: ``"ls*"``, ``"git status*"``.
    Order: ``deny`` patterns, then ``ask``, then ``allow``; the first match
    wins. With no match the mode decides: ``auto`` runs, ``deny`` refuses,
    ``confirm`` asks ``ask_user(call) -> bool | str | Verdict``.
    """

    mode: Mode = "auto"
    allow: list[str] = field(default_factory=list)
    ask: list[str] = field(default_factory=list)
    deny: list[str] = field(default_factory=list)
    ask_user: Callable[[Any], Any] | None = None

    def __post_init__(self) -> None:
        if self.mode not in ("auto", "confirm", "deny"):
            raise ValueError(f"mode must be 'auto', 'confirm' or 'deny', not {self.mode!r}")

    def __call__(self, call: Any) -> Verdict:
        text = describe_call(call)
        if p := _matches(self.deny, text):
            return Verdict.deny(f"matches the deny pattern {p!r}")
        if _matches(self.ask, text):
            return self._ask(call)
        if _matches(self.allow, text):
            return Verdict.approve()
        if self.mode == "auto":
            return Verdict.approve()
        if self.mode == "deny":
            return Verdict.deny("this harness runs no tools (approval mode 'deny')")
        return self._ask(call)

    def _ask(self, call: Any) -> Verdict:
        if self.ask_user is None:
            return Verdict.deny("approval needed, but nobody was asked (no ask_user callback)")
        return as_verdict(self.ask_user(call))


DANGEROUS = ("rm -rf /", "sudo", "shutdown", "reboot", "> /dev/")


def lesson_blocklist(call: Any) -> Verdict:
    """The lesson's substring blocklist, as an ``approve`` callback.

    A teaching example only: it looks for fixed substrings, so it is easy to
    slip past (``rm -r -f /``, ``rm -rf  /``, ``$(echo rm) -rf /``). Never treat
    it as protection.
    """
    text = describe_call(call)
    for bad in DANGEROUS:
        if bad in text:
            return Verdict.deny(f"blocked: contains {bad!r}")
    return Verdict.approve()
