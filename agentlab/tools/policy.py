"""Approval: who decides whether a tool call the model asked for may run.

``execute(..., approve=...)`` asks ``approve(call)`` before each tool runs. It
may answer ``True``/``False``, a reason string (a denial), or a ``Verdict``
(approve, deny with a reason, or edit the input). A denial is not an error in
the loop: it becomes an ``is_error`` tool result carrying the reason, so the
model can adapt.

``Policy`` is a ready-made ``approve``: a mode (``auto``, ``confirm``,
``deny``) plus allow/ask/deny patterns, checked deny -> ask -> allow, first
match wins. An allow pattern approves a shell command only when *every*
simple command in it matches an allow pattern and nothing in it expands,
redirects or groups (``$(...)``, backticks, ``$VAR``, ``>``, ``<(...)``,
``( )``, ``{ }``, ``if``, ``VAR=value cmd``): ``allow=["ls*"]`` approves
``ls -la`` but asks about ``ls; curl x | sh``, ``ls $(rm x)`` and ``ls > f``.
Commands are split with the standard library's ``shlex`` (see
``split_commands``). Deny and ask patterns are a convenience, not a wall: a
command can always be spelt so that no pattern sees it (``r''m -rf /``).

``lesson_blocklist`` is the lesson's substring check. It is a teaching aid,
NOT security: ``rm -r -f /`` slips past a check for ``rm -rf /``. Real limits
are the bash tool's timeout, output cap, clean environment and workspace, plus
asking a person (``confirm``).
"""

from __future__ import annotations

import fnmatch
import json
import re
import shlex
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = [
    "Commands",
    "Policy",
    "Verdict",
    "as_verdict",
    "asks_by_default",
    "describe_call",
    "lesson_blocklist",
    "read_answer",
    "split_commands",
]

Mode = Literal["auto", "confirm", "deny"]


@dataclass(frozen=True)
class Verdict:
    """The answer to "may this tool call run?"."""

    action: Literal["approve", "deny", "edit"]
    reason: str = ""
    input: dict[str, Any] | None = None  # the edited input, for action == "edit"
    by: Literal["person", "policy"] = "person"  # who decided: a person asked, or a rule

    @classmethod
    def approve(cls, reason: str = "") -> Verdict:
        return cls("approve", reason)

    @classmethod
    def deny(cls, reason: str = "", *, by: Literal["person", "policy"] = "person") -> Verdict:
        return cls("deny", reason, by=by)

    @classmethod
    def edit(cls, new_input: Mapping[str, Any], reason: str = "") -> Verdict:
        return cls("edit", reason, dict(new_input))


def read_answer(answer: str) -> tuple[str | None, str]:
    """A typed answer at an approval prompt: ``("approve" | "deny" | "edit" | None, rest)``.

    ``y``/``yes``/``是`` approve; Enter, ``n``/``no``/``否`` deny (the rest of the line is the
    reason); ``e``/``edit``/``改`` edit (the rest is the new command). None: not understood.
    """
    word, _, rest = answer.strip().partition(" ")
    word, rest = word.lower(), rest.strip()
    if word in ("y", "yes", "是"):
        return "approve", rest
    if word in ("", "n", "no", "否"):
        return "deny", rest
    if word in ("e", "edit", "改"):
        return "edit", rest
    return None, rest


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


def _is_command(call: Any) -> bool:
    data = getattr(call, "input", None)
    if data is None and isinstance(call, Mapping):
        data = call.get("input")
    return isinstance(data, Mapping) and set(data) == {"command"}


@dataclass(frozen=True)
class Commands:
    """A shell command split into its simple commands (see ``split_commands``)."""

    commands: list[str]  # each simple command: its words, joined by single spaces
    problem: str = ""  # why an allow pattern cannot approve it ("" if it can)


# Words bash reads as the start of a compound command (or a negation).
_RESERVED = {
    "!", "{", "}", "[[", "]]", "case", "coproc", "do", "done", "elif", "else", "esac",
    "fi", "for", "function", "if", "in", "select", "then", "time", "until", "while",
}  # fmt: skip
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[.*\])?\+?=")
_OPERATORS = ";&|<>()\n"


def split_commands(command: str) -> Commands:
    """Split a shell command at ``;``, ``&&``, ``||``, ``|``, ``&`` and newlines.

    We use ``shlex`` (standard library, with ``punctuation_chars``) rather
    than ``bashlex``: bashlex parses more of bash, but it is GPL-licensed and
    we only need one answer, "is this a list of plain commands?", which can
    be given conservatively. shlex removes quotes, so ``';'`` looks like a
    separator and ``'$x'`` like an expansion: such commands are asked about
    although they are harmless. The reverse never happens: shlex never sees
    fewer commands or expansions than bash does. (``#`` is not read as a
    comment, for the same reason: ``ls#; rm x`` is two commands to bash.)
    """
    lexer = shlex.shlex(command, posix=True, punctuation_chars=_OPERATORS)
    lexer.whitespace = " \t"  # a newline separates commands, as in bash
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        tokens = list(lexer)
    except ValueError as e:  # an unclosed quote or a trailing backslash
        return Commands([], f"cannot be split ({e})")
    commands: list[list[str]] = [[]]
    problem = ""
    for token in tokens:
        if token and set(token) <= set(_OPERATORS):
            if set(token) <= set(";&|\n"):  # a separator or a pipe
                commands.append([])
                continue
            problem = problem or f"it redirects or groups ({token.strip()!r})"
        elif "$" in token or "`" in token:
            problem = problem or "it expands or substitutes ($ or `)"
        elif not commands[-1] and (token in _RESERVED or _ASSIGNMENT.match(token)):
            problem = problem or f"it starts with {token!r}"
        commands[-1].append(token)
    words = [" ".join(c) for c in commands if c]
    if not words:
        problem = problem or "there is no command in it"
    return Commands(words, problem)


def _matches(patterns: Iterable[str], text: str) -> str | None:
    for p in patterns:
        if fnmatch.fnmatchcase(text, p):
            return p
    return None


@dataclass
class Policy:
    """An ``approve`` callback built from a mode and patterns.

    Patterns are shell-style globs (``fnmatch``) matched against the command
    for bash, or ``name(json-input)`` for other tools: ``"ls"``, ``"ls *"``,
    ``"git status*"`` (``"ls*"`` also matches ``lsof``).
    Order: ``deny`` patterns, then ``ask``, then ``allow``; the first match
    wins. ``deny`` and ``ask`` match the whole command or any simple command
    in it. ``allow`` approves only a command whose every simple command is
    matched and in which nothing expands, redirects or groups (see
    ``split_commands``); an allow pattern trusts the arguments it matches
    (``"find *"`` allows ``find . -delete``). With no match the mode
    decides: ``auto`` runs, ``deny`` refuses, ``confirm`` asks
    ``ask_user(call) -> bool | str | Verdict``.
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
        parts = split_commands(text) if _is_command(call) else Commands([text])
        texts = [text, *parts.commands]
        for t in texts:
            if p := _matches(self.deny, t):
                return Verdict.deny(f"matches the deny pattern {p!r}", by="policy")
        if any(_matches(self.ask, t) for t in texts):
            return self._ask(call)
        if not parts.problem and all(_matches(self.allow, c) for c in parts.commands):
            return Verdict.approve()
        if self.mode == "auto":
            return Verdict.approve()
        if self.mode == "deny":
            return Verdict.deny("this harness runs no tools (approval mode 'deny')", by="policy")
        return self._ask(call)

    def _ask(self, call: Any) -> Verdict:
        if self.ask_user is None:
            return Verdict.deny(
                "approval needed, but nobody was asked (no ask_user callback)", by="policy"
            )
        return as_verdict(self.ask_user(call))


def asks_by_default(client: Any) -> bool:
    """The one approval default: ask before each tool unless the model is offline.

    agentlab's offline clients (the demo model, scripted and replayed ones)
    run tools unasked; anything else (the real SDK, with a key or a base URL,
    or a client we do not know) is asked about. ``agentlab run`` and
    ``%%agent`` follow this unless told ``--yes``.
    """
    from agentlab.fakeapi.offline import ScriptedClient
    from agentlab.fakeapi.recording import RecordingClient, ReplayClient

    while isinstance(client, RecordingClient):
        client = client.client
    return not isinstance(client, (ScriptedClient, ReplayClient))


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
            return Verdict.deny(f"blocked: contains {bad!r}", by="policy")
    return Verdict.approve()
