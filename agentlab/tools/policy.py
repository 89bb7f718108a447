"""Approval: who decides whether a tool call the model asked for may run.

``execute(..., approve=...)`` asks ``approve(call)`` before each tool runs. It
may answer ``True``/``False``, a reason string (a denial), or a ``Verdict``
(approve, deny with a reason, or edit the input). A denial is not an error in
the loop: it becomes an ``is_error`` tool result carrying the reason, so the
model can adapt.

``Policy`` is a ready-made ``approve``: a mode (``auto``, ``confirm``,
``deny``) plus allow/ask/deny patterns, checked deny -> ask -> allow, first
match wins. Commands are read as bash reads them, with a real bash grammar
(tree-sitter-bash, see ``split_commands``). An allow pattern approves a shell
command only when the parser shows it is *one plain simple command*: no
``;``, ``&&``, ``|``, ``&``, newline, comment, control character, backslash,
``$``-expansion, backticks, redirection, group or ``VAR=value`` prefix, and
nothing the parser cannot read. ``allow=["ls*"]`` approves ``ls -la`` but asks
about ``ls; curl x | sh``, ``ls #'<newline>touch x<newline>#'`` and ``ls > f``.
Deny and ask patterns are matched against every simple command inside
(``$(...)`` and ``if`` bodies included), but they are a convenience, not a
wall: a command can always be spelt so that no pattern sees it
(``/bin/rm``, ``$(echo rm)``).

``lesson_blocklist`` is the lesson's substring check. It is a teaching aid,
NOT security: ``rm -r -f /`` slips past a check for ``rm -rf /``. Real limits
are the bash tool's timeout, output cap, clean environment and workspace, plus
asking a person (``confirm``).
"""

from __future__ import annotations

import fnmatch
import functools
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from agentlab.i18n import t
from agentlab.terminal import has_hidden

__all__ = [
    "Commands",
    "Policy",
    "Verdict",
    "as_verdict",
    "describe_call",
    "lesson_blocklist",
    "prompt_verdict",
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


def prompt_verdict(read: Callable[[str], str], say: Callable[[str], Any], prompt: str) -> Any:
    """Ask at a terminal until the answer is understood (the CLI's and ``%agent``'s prompt).

    Returns a Verdict for approve or deny (no answer at all: deny), or the edit's text
    (a str, "" when the command is still to be asked for)."""
    while True:
        try:
            what, rest = read_answer(read(prompt))
        except EOFError:
            return Verdict.deny(t("cli.no_answer"))
        if what == "approve":
            return Verdict.approve()
        if what == "deny":
            return Verdict.deny(rest or t("result.denied_default"))
        if what == "edit":
            return rest
        say(t("cli.unknown_answer"))


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
    data = _input(call)
    if isinstance(data, Mapping) and set(data) == {"command"}:
        return str(data["command"])
    return f"{name}({json.dumps(data, ensure_ascii=False)})"


def _input(call: Any) -> Any:
    """A call's input, from a block written as a dict or the SDK's."""
    data = getattr(call, "input", None)
    if data is None and isinstance(call, Mapping):
        data = call.get("input")
    return data


def _is_command(call: Any) -> bool:
    data = _input(call)
    return isinstance(data, Mapping) and set(data) == {"command"}


def _command(call: Any) -> str | None:
    """The input's ``command`` string, whatever other keys it has (None: none)."""
    data = _input(call)
    command = data.get("command") if isinstance(data, Mapping) else None
    return command if isinstance(command, str) else None


@dataclass(frozen=True)
class Commands:
    """A shell command split into its simple commands (see ``split_commands``)."""

    commands: list[str]  # each simple command: its words, joined by single spaces
    problem: str = ""  # why an allow pattern cannot approve it ("" if it can)


# Argument nodes tree-sitter-bash gives a plain word: no expansion, substitution,
# redirection or assignment can hide in them.
_PLAIN = {"word", "raw_string", "string", "string_content", "concatenation", "number", '"'}
# Characters between which a command may start, to bash or to a parser that reads
# less than bash does (``ls#; rm x`` is two commands to bash, one comment to some).
_SEPARATORS = re.compile(r"[;&|\n\r()`{}]|\$\(|<\(|>\(")


@functools.cache
def _bash() -> Any:
    import tree_sitter
    import tree_sitter_bash

    return tree_sitter.Language(tree_sitter_bash.language())


def _parse(command: str) -> Any:
    """The tree-sitter-bash syntax tree of ``command`` (its root node)."""
    import tree_sitter

    return tree_sitter.Parser(_bash()).parse(command.encode("utf-8", "surrogatepass")).root_node


def _text(node: Any) -> str:
    return str(node.text.decode("utf-8", "replace"))


def _value(node: Any) -> str:
    """What bash makes of one word, as far as it is literal: quotes and escapes removed."""
    if node.type == "raw_string":
        return _text(node)[1:-1]
    if node.type in ("string", "concatenation", "command_name"):
        return "".join(_value(c) for c in node.children if c.type != '"')
    if node.type in ("word", "string_content"):
        return re.sub(r"\\(.)", r"\1", _text(node), flags=re.S)
    return _text(node)


def _simple_commands(node: Any) -> Iterator[Any]:
    """Every simple command in the tree, at any depth ($(...), subshells, if bodies...)."""
    if node.type == "command":
        yield node
    for child in node.children:
        yield from _simple_commands(child)


def _is_plain(node: Any) -> bool:
    return node.type in _PLAIN and all(_is_plain(c) for c in node.children)


def _problem(command: str, root: Any) -> str:
    """Why ``command`` is not one plain simple command ("" if it is one)."""
    if root.has_error:
        return "the shell parser cannot read it"
    if "\n" in command or "\r" in command:
        return "it has several lines"
    if has_hidden(command):
        return "it has control or invisible characters"
    if "\\" in command:
        return "it has a backslash escape"
    if len(root.children) != 1 or root.children[0].type != "command":
        kinds = {c.type for c in root.children}
        if "comment" in kinds:
            return "it has a comment"
        return "it is not one simple command (a list, pipeline, redirection or compound)"
    name, *args = root.children[0].children
    if name.type != "command_name" or not all(_is_plain(c) for c in name.children):
        return f"it starts with {_text(name)!r}"
    for arg in args:
        if not _is_plain(arg):
            return f"it expands, substitutes or redirects ({_text(arg)!r})"
    return ""


def split_commands(command: str) -> Commands:
    """The simple commands in ``command`` as bash reads them, and why an allow
    pattern cannot approve it.

    The command is parsed with a real bash grammar (tree-sitter-bash). Each
    simple command, wherever it is (after ``;``, in a pipeline, inside
    ``$(...)`` or an ``if``), becomes its words with quotes and escapes
    removed, joined by single spaces: ``r''m -rf x`` is ``rm -rf x``.
    ``problem`` is "" only for one plain simple command: no list, pipeline,
    comment, newline, control character, backslash, assignment, expansion,
    substitution or redirection, and nothing the parser could not read.
    """
    root = _parse(command)
    words = [" ".join(_value(c) for c in node.children) for node in _simple_commands(root)]
    problem = _problem(command, root) if command.strip() else "there is no command in it"
    return Commands(words, problem)


def _candidates(text: str, parts: Commands) -> list[str]:
    """Everything deny and ask patterns are matched against (see ``Policy``)."""
    pieces = [p.strip() for p in _SEPARATORS.split(text)]
    return [text, *parts.commands, *(p for p in pieces if p)]


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
    wins. ``deny`` and ``ask`` match the whole command, every simple command
    in it and every piece between separator characters. ``allow`` approves
    only one plain simple command (see ``split_commands``); an allow pattern
    trusts the arguments it matches (``"find *"`` allows ``find . -delete``).
    With no match the mode decides: ``auto`` runs, ``deny`` refuses,
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
        shell = _is_command(call)
        parts = split_commands(text) if shell else Commands([text])
        texts = _candidates(text, parts) if shell else [text]
        command = _command(call)
        if command is not None and not shell:  # {"command": ..., "timeout": 5}: seen too
            texts += _candidates(command, split_commands(command))
        for text in texts:
            if p := _matches(self.deny, text):
                return Verdict.deny(t("policy.deny_pattern", pattern=p), by="policy")
        if any(_matches(self.ask, text) for text in texts):
            return self._ask(call)
        if (
            not parts.problem
            and len(parts.commands) == 1
            and _matches(self.allow, parts.commands[0])
        ):
            return Verdict.approve()
        if self.mode == "auto":
            return Verdict.approve()
        if self.mode == "deny":
            return Verdict.deny(t("policy.mode_deny"), by="policy")
        return self._ask(call)

    def _ask(self, call: Any) -> Verdict:
        if self.ask_user is None:
            return Verdict.deny(t("policy.nobody_asked"), by="policy")
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
            return Verdict.deny(t("policy.blocked", bad=bad), by="policy")
    return Verdict.approve()
