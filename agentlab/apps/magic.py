"""``%agent`` and ``%%agent``: run the agent loop from a notebook cell.

    %load_ext agentlab

    %%agent
    How many .py files are here?

The cell's body is the task. It goes into one conversation per kernel, kept
in the notebook's namespace as ``_agent`` (``_agent.messages`` is the plain
history), so the next cell is a follow-up that sees everything before it.
Each cell makes a fresh ``AgentLoop`` over that same history and calls
``.ask(task)`` on it, so ``--max-turns`` and the turn count belong to the
cell they are written on. The tools are ``_agent.tools`` (the lesson's
``bash``, running in the notebook's current folder); ``%load_ext`` makes
``_agent``, so ``_agent.tools = [al.bash_tool(workspace=True)]`` can come
first and give the model a folder of its own (the kernel stays where it is).

``{name}`` in a task is filled from the namespace (``{{`` and ``}}`` are
literal braces). ``%agent --help`` lists the options; ``%agent reset``,
``%agent history``, ``%agent save PATH`` and ``%agent load PATH`` manage the
conversation.

What you see depends on where the magic runs (``frontend``):

- in a Jupyter kernel (an ipykernel ``ZMQInteractiveShell``) with
  ipywidgets: a ``HistoryView`` that grows while the loop runs, with the
  model's text under it as it streams. A kernel cannot tell whether the page
  draws widgets (nbconvert does not), so when the run ends the live view is
  replaced by a one-line summary, and the cell's value, the ``LoopResult``,
  shows the answer with the transcript folded below it. Without ipywidgets
  the live view is a plain-text transcript updated in place.
- anywhere else (terminal IPython, scripts, tests): the transcript is
  printed as it happens. ``%config AgentMagics.view = "text"`` asks for
  this in a notebook too.

``--step`` and, in a notebook, ``--confirm`` return a ``LoopView`` instead:
the kernel handles no click while a cell runs, so the stepper's buttons
drive the loop after the cell has ended (``--confirm`` runs on by itself and
stops at each tool call for Approve / Deny / Edit). In a terminal
``--confirm`` asks with ``input()``. With a real model (a key or a base URL)
every cell asks, as with ``--confirm``, unless it says ``--yes``; with the
offline demo model tools run unasked.

A failed request prints what went wrong, without a traceback, and returns
the result with ``ended == "error"``; if nothing else happened the
task is taken back out, so running the cell again is the retry. Ctrl-C (the
notebook's stop button) leaves a valid history (``AgentLoop`` answers the
unfinished tool calls) and ends the cell with ``AgentStopped``, a
``KeyboardInterrupt`` that IPython shows as one line instead of a traceback
(what was stopped, and that the history is valid), so "Run All" stops as you
asked; ``_agent.loop.result()`` has what ran.
"""

from __future__ import annotations

import importlib
import json
import keyword
import os
import re
import shlex
import string
import sys
import textwrap
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class, no_var_expand
from IPython.core.magic_arguments import argument, magic_arguments
from traitlets import Bool, Enum

from agentlab.errors import RequestError
from agentlab.history import HistoryError, blocks, validate
from agentlab.i18n import t
from agentlab.loop import Event, Interrupted
from agentlab.stepper import AgentLoop
from agentlab.tools.policy import Verdict, describe_call, prompt_verdict

__all__ = [
    "AgentMagics",
    "AgentSession",
    "fill_task",
    "load_ipython_extension",
    "unload_ipython_extension",
]

SESSION_NAME = "_agent"  # where the conversation lives in the notebook's namespace
COMMANDS = ("reset", "history", "save", "load")
_told_demo = False  # "no key, so the demo model" is said once per kernel


# ---------------------------------------------------------------------------
# The conversation kept between cells
# ---------------------------------------------------------------------------


class AgentSession:
    """One conversation per kernel: ``_agent`` in the notebook.

    ``messages`` is the plain history (send it, save it, print it);
    ``loop`` is the ``AgentLoop`` of the last cell; ``client`` the client it
    used; ``tools`` the tools every cell offers (default: the lesson's
    ``bash``, running in the notebook's folder). ``model`` and ``system``
    are remembered from ``--model`` and ``--system`` until a reset.
    """

    def __init__(self, messages: list[Any] | None = None, tools: list[Any] | None = None):
        if tools is None:
            from agentlab.tools import bash

            tools = [bash]
        self.messages: list[Any] = [] if messages is None else messages
        self.tools: list[Any] = tools
        self.loop: AgentLoop | None = None
        self.client: Any = None
        self.model: str | None = None
        self.system: str | None = None
        self.connected: Any = None  # the client connect() made, reused from cell to cell

    def __repr__(self) -> str:
        return f"AgentSession(messages={len(self.messages)})"


def _session_ok(value: Any) -> bool:
    return isinstance(getattr(value, "messages", None), list) and hasattr(value, "tools")


# ---------------------------------------------------------------------------
# {name} in a task
# ---------------------------------------------------------------------------

_FIELD = re.compile(r"[^\W\d]\w*(\.[^\W\d_]\w*|\[\w+\])*\Z")


class _TaskFormatter(string.Formatter):
    """``str.format`` with the notebook's variables, and errors a student can act on."""

    def __init__(self, namespace: dict[str, Any]):
        self.namespace = namespace

    def get_field(self, field_name: str, args: Any, kwargs: Any) -> Any:
        if not field_name or not _FIELD.match(field_name):
            raise UsageError(t("magic.bad_field", field="{" + field_name + "}"))
        return super().get_field(field_name, args, kwargs)

    def get_value(self, key: int | str, args: Any, kwargs: Any) -> Any:
        if key not in self.namespace:
            raise UsageError(t("magic.missing_var", name=key))
        return self.namespace[key]


def fill_task(task: str, namespace: dict[str, Any]) -> str:
    """Fill ``{name}`` from ``namespace``; ``{{`` and ``}}`` stay as braces.

    Only variable names (with ``.attribute`` or ``[key]`` after them) are
    allowed; anything else raises ``UsageError`` saying how to fix it.
    """
    if "{" not in task and "}" not in task:
        return task
    try:
        return _TaskFormatter(namespace).format(task)
    except UsageError:
        raise
    except (ValueError, LookupError, AttributeError, TypeError) as e:
        raise UsageError(t("magic.bad_braces", error=e)) from None


# ---------------------------------------------------------------------------
# Reading the %agent line: options first, then the task as written
# ---------------------------------------------------------------------------

_TOKEN = re.compile(r"\s*(\"[^\"]*\"|'[^']*'|\S+)")


def split_line(line: str, takes_value: set[str]) -> tuple[list[str], str]:
    """``("--max-turns 3 What's here?")`` -> ``(["--max-turns", "3"], "What's here?")``.

    The leading options are split like a shell would; the task after them is
    kept exactly as typed (apostrophes and all). ``--`` ends the options.
    """
    argv: list[str] = []
    pos, expect_value = 0, False
    while True:
        m = _TOKEN.match(line, pos)
        if m is None:
            break
        token = m.group(1)
        if not expect_value and (token == "--" or not token.startswith("-")):
            if token == "--":
                pos = m.end()
            break
        try:
            argv += shlex.split(token)
        except ValueError as e:
            raise UsageError(t("magic.bad_quotes", error=e)) from None
        expect_value = not expect_value and token in takes_value
        pos = m.end()
    return argv, line[pos:].strip()


# ---------------------------------------------------------------------------
# Where we are: a Jupyter kernel, with or without widgets, or a terminal
# ---------------------------------------------------------------------------


def frontend(shell: Any) -> str:
    """``"widgets"``, ``"live"`` (a kernel without agentlab.views) or ``"text"``.

    A Jupyter kernel is an ``ipykernel`` ``ZMQInteractiveShell`` (or a
    subclass, as in Colab). The kernel cannot tell whether the page shows
    widgets (nbconvert does not), so the live view is replaced by plain
    output when the run ends: a saved notebook reads well everywhere.
    """
    names = {c.__name__ for c in type(shell).__mro__}
    if "ZMQInteractiveShell" not in names or getattr(shell, "kernel", None) is None:
        return "text"
    return "widgets" if _views() is not None else "live"


def _views() -> Any:
    """``agentlab.views`` if it can be used (it needs ipywidgets), else None."""
    try:
        views = importlib.import_module("agentlab.views")
    except ImportError:
        return None
    return views if hasattr(views, "HistoryView") and hasattr(views, "LoopView") else None


# ---------------------------------------------------------------------------
# Showing a run: a transcript line by line
# ---------------------------------------------------------------------------


def _short(text: str, lines: int = 12) -> str:
    rows = text.rstrip("\n").splitlines() or [""]
    if len(rows) > lines:
        rows = rows[:lines] + [t("magic.more_lines", n=len(rows) - lines)]
    return "\n".join(rows)


def _indent(text: str, prefix: str = "    ") -> str:
    return "\n".join(prefix + row for row in text.splitlines())


def message_lines(message: Any, *, skip_text: bool = False, roles: bool = True) -> list[str]:
    """A message as readable lines: text, ``$ command`` for bash, results indented."""
    out: list[str] = []
    role = message.get("role") if isinstance(message, dict) else None
    for b in blocks(message):
        kind = b.get("type")
        if kind == "text" and not skip_text and str(b.get("text", "")).strip():
            out.append(f"{t('role.' + str(role))}: {b['text']}" if roles else str(b["text"]))
        elif kind == "tool_use":
            out.append(f"  $ {describe_call(b)}")
        elif kind == "tool_result":
            content = b.get("content")
            if isinstance(content, list):
                content = "\n".join(str(c.get("text", "")) for c in content if isinstance(c, dict))
            mark = t("magic.error_mark") + " " if b.get("is_error") else ""
            out.append(_indent(mark + _short(str(content or ""))))
    return out


def history_text(messages: list[Any]) -> str:
    """The whole history as text: ``[i] role`` over each message's lines."""
    parts = []
    for i, m in enumerate(messages):
        role = m.get("role") if isinstance(m, dict) else None
        results = any(b.get("type") == "tool_result" for b in blocks(m))
        label = t("role.tool_results") if results else t(f"role.{role}")
        parts.append(f"[{i}] {label}\n" + _indent("\n".join(message_lines(m, roles=False)), "  "))
    return "\n".join(parts)


class Transcript:
    """Turns loop events into transcript lines and hands them to ``write``.

    ``write(text)`` gets whole lines (and, with ``--stream``, pieces of the
    model's text as they arrive).
    """

    def __init__(self, loop: AgentLoop, write: Callable[[str], None]):
        self.loop, self.write = loop, write
        self.streamed = False
        self.first = len(loop.messages)  # the task itself is not echoed back

    def __call__(self, event: Event) -> None:
        if event.kind == "text":
            if not self.streamed:
                self.write(t("role.assistant") + ": ")
            self.streamed = True
            self.write(str(event.data["text"]))
        elif event.kind == "append" and event.data["index"] >= self.first:
            if self.streamed:
                self.write("\n")
            lines = message_lines(event.data["message"], skip_text=self.streamed)
            self.streamed = False
            if lines:
                self.write("\n".join(lines) + "\n")


class _Live:
    """A live text transcript in one output area, updated in place.

    It is a display handle (``update_display_data``), which every Jupyter
    front end understands, widgets or not. ``done`` replaces it with ``text``.
    """

    def __init__(self, loop: AgentLoop) -> None:
        from IPython.display import display

        self.text = ""
        self.handle = display({"text/plain": "…"}, raw=True, display_id=True)
        self.listener: Callable[[Event], None] = Transcript(loop, self.write)

    def write(self, piece: str) -> None:
        from agentlab.terminal import plain  # text/plain is drawn with ANSI colours and bidi

        self.text += plain(piece)
        self.handle.update({"text/plain": self.text}, raw=True)

    def done(self, text: str) -> None:
        self.handle.update({"text/plain": text}, raw=True)


class _WidgetLive:
    """A ``HistoryView`` following the loop (one card per message appended),
    with the model's text under it while it streams in."""

    def __init__(self, loop: AgentLoop) -> None:
        import ipywidgets as w
        from IPython.display import display

        self.history = _views().HistoryView(loop)
        self.stream = w.Textarea(layout=w.Layout(width="100%", display="none"), disabled=True)
        self.box = w.VBox([self.history, self.stream])
        self.handle = display(self.box, display_id=True)
        self.listener = self.on_event

    def on_event(self, event: Event) -> None:
        if event.kind == "text":
            self.stream.value += str(event.data["text"])
            self.stream.layout.display = ""
        elif event.kind == "append" and self.stream.value:  # the new card shows it now
            self.stream.value = ""
            self.stream.layout.display = "none"

    def done(self, text: str) -> None:
        self.history.close()  # stops following the loop
        self.stream.close()
        self.box.close()
        self.handle.update({"text/plain": text}, raw=True)


def _print(piece: str) -> None:
    """Model text and tool output to a terminal: escape sequences and control characters removed."""
    from agentlab.terminal import plain

    print(plain(piece), end="", flush=True)


def summary(loop: AgentLoop) -> str:
    """One line about a finished run: model, requests, tool calls, how it ended."""
    # The offline demo answers under the model's name asked for; the summary names the demo.
    demo = getattr(loop.client, "demo_model", None)
    model = demo or getattr(loop.response, "model", None) or loop.model or "?"
    ended = t(f"loopcore.ended.{loop.ended}", reason=loop.stop_reason) if loop.ended else "?"
    return t("loopcore.summary", model=model, turns=loop.turns, tools=tool_calls(loop), ended=ended)


def tool_calls(loop: AgentLoop) -> int:
    """The tool calls the model asked for in this run, as the transcript counts them:
    every tool_use, also one that never ran (an unknown tool, a denied or interrupted call)."""
    new = loop.result().new_messages
    return sum(1 for m in new for b in blocks(m) if b.get("type") == "tool_use")


class AgentStopped(Interrupted):
    """Ctrl-C (the notebook's ■) during ``%%agent``, after the loop made the history valid.

    It is still a ``KeyboardInterrupt``, so "Run All" stops here; IPython shows
    ``_render_traceback_`` instead of a traceback: one line saying what stopped.
    """

    def __init__(self, line: str, results: list[Any]):
        super().__init__(results, line)
        self.line = line

    def _render_traceback_(self) -> list[str]:
        return [self.line]


def stopped_line(loop: AgentLoop, took_back: bool) -> str:
    """What ■ stopped, and that the history is valid, in one line."""
    if took_back:
        return t("loopcore.magic.stopped_back", n=len(loop.messages))
    stage = loop.stopped_at or loop.stage
    running = [a for a in loop.audit if a.get("verdict") == "interrupted"]
    if running:
        from agentlab.views.render import oneline, shown

        call = oneline(shown(describe_call(running[-1])), 120)  # one short line, nothing hidden
        what = t("loopcore.what.tool", call=call)
    elif stage == "request":
        what = t("loopcore.what.request")
    else:
        what = t("loopcore.what.stage", stage=t(f"stage.{stage}"))
    return t(
        "loopcore.magic.stopped",
        what=what,
        turns=loop.turns,
        tools=tool_calls(loop),
        n=len(loop.messages),
    )


# ---------------------------------------------------------------------------
# Asking before a tool runs (--confirm) in a terminal
# ---------------------------------------------------------------------------


def ask_in_terminal(call: Any) -> Verdict:
    """``--confirm`` without widgets: ask with ``input()``. Enter alone means no.

    The call is shown with its control characters written out (``\\x1b``,
    ``\\r``), so what you approve is what runs; an answer it does not know
    is asked again.
    """
    from agentlab.terminal import command_lines, command_warnings

    command = describe_call(call)
    lines, many = command_lines(command)
    if many:
        print(many, flush=True)
    print(t("magic.confirm_call", call="\n".join(lines)), flush=True)
    for warning in command_warnings(command):  # hidden characters, long runs of spaces
        if warning != many:
            print(warning, flush=True)
    if many:
        print(many, flush=True)
    answer = prompt_verdict(input, lambda line: print(line, flush=True), t("magic.confirm_prompt"))
    if not isinstance(answer, str):
        return answer
    try:
        new = answer or input(t("magic.confirm_edit")).strip()
    except EOFError:
        return Verdict.deny(t("cli.no_answer"))
    data = getattr(call, "input", None) or {}
    if set(data) == {"command"}:
        return Verdict.edit({"command": new})
    try:
        return Verdict.edit(json.loads(new))
    except (json.JSONDecodeError, TypeError):
        return Verdict.deny(t("magic.confirm_bad_edit"))


# ---------------------------------------------------------------------------
# The magic
# ---------------------------------------------------------------------------


@magics_class
class AgentMagics(Magics):
    """``%agent`` / ``%%agent``. Settings: ``%config AgentMagics.confirm = True``."""

    shell: Any  # the InteractiveShell (IPython sets it)

    confirm = Bool(
        False,
        help="Ask before every tool call, even with the offline demo model, unless a cell "
        "says --yes. (With a real model the magic asks anyway.)",
    ).tag(config=True)
    view = Enum(
        ["auto", "text"],
        "auto",
        help="'auto': a live view in a notebook, a printed transcript elsewhere; "
        "'text': always the printed transcript.",
    ).tag(config=True)

    # -- the conversation ---------------------------------------------------
    @property
    def session(self) -> AgentSession:
        ns = self.shell.user_ns
        value = ns.get(SESSION_NAME)
        if not _session_ok(value):
            value = ns[SESSION_NAME] = AgentSession()
        return value

    def _fresh(self) -> AgentSession:
        """A new, empty conversation; the tools and the connected client stay."""
        old = self.shell.user_ns.get(SESSION_NAME)
        session = AgentSession(tools=old.tools if _session_ok(old) else None)
        session.connected = getattr(old, "connected", None)
        self.shell.user_ns[SESSION_NAME] = session
        return session

    # -- the command ----------------------------------------------------------
    @magic_arguments()
    @argument("-h", "--help", action="store_true", help=t("magic.help.help"))
    @argument("--model", help=t("magic.help.model"))
    @argument("--max-turns", type=int, default=20, metavar="N", help=t("magic.help.max_turns"))
    @argument("--system", metavar="TEXT_OR_NAME", help=t("magic.help.system"))
    @argument("--step", action="store_true", help=t("magic.help.step"))
    @argument("--confirm", action="store_true", help=t("magic.help.confirm"))
    @argument("--yes", action="store_true", help=t("magic.help.yes"))
    @argument("--stream", action="store_true", help=t("magic.help.stream"))
    @argument("--new", action="store_true", help=t("magic.help.new"))
    @argument("--offline", action="store_true", help=t("magic.help.offline"))
    @argument("--out", metavar="NAME", help=t("magic.help.out"))
    @argument("--client", metavar="NAME", help=t("magic.help.client"))
    @no_var_expand
    @line_cell_magic
    def agent(self, line: str = "", cell: str | None = None) -> Any:
        """Run the agent loop on a task: ``%agent TASK`` or a ``%%agent`` cell.

        The conversation carries on from cell to cell (``_agent.messages``).
        ``{name}`` in the task is filled from your variables; ``{{``/``}}`` are braces.
        Also: ``%agent reset``, ``%agent history``, ``%agent save PATH``,
        ``%agent load PATH``.
        """
        parser = self.agent.parser
        parser.allow_abbrev = False  # "--mod" is not "--model": options stay easy to spot
        takes_value = {s for a in parser._actions if a.nargs != 0 for s in a.option_strings}
        argv, rest = split_line(line, takes_value)
        try:
            args = parser.parse_args(argv)
        except UsageError as e:  # argparse's message, plus how to fix it
            raise UsageError(t("magic.bad_option", error=e)) from None
        if args.help:
            print(help_text(parser))
            return None
        if cell is not None:
            if rest:
                raise UsageError(t("magic.words_on_cell_line", words=rest))
            task = cell.strip()
            if not task:
                raise UsageError(t("magic.empty_cell"))
        else:
            word = rest.split(maxsplit=1)[0].lower() if rest else ""
            if word in COMMANDS:
                return self._command(word, rest[len(word) :].strip(), args)
            task = rest
            if not task:
                if args.new:
                    self._fresh()
                    print(t("magic.reset"))
                    return None
                raise UsageError(t("magic.no_task"))
        return self._run(args, fill_task(task, self.shell.user_ns))

    # -- reset / history / save / load ---------------------------------------------
    def _command(self, word: str, rest: str, args: Any) -> Any:
        try:
            paths = shlex.split(rest)
        except ValueError as e:
            raise UsageError(t("magic.bad_quotes", error=e)) from None
        if word in ("save", "load") and len(paths) != 1:
            raise UsageError(t("magic.needs_path", command=word))
        if word in ("reset", "history") and paths:
            raise UsageError(t("magic.no_args", command=word, words=rest))
        if word == "reset":
            n = len(self.session.messages)
            self._fresh()
            print(t("magic.reset_n", n=n))
            return None
        if word == "history":
            return self._history()
        path = Path(os.path.expanduser(paths[0]))
        if word == "save":
            from agentlab.history import save

            try:
                save(self.session.messages, path)
            except (OSError, HistoryError) as e:  # HistoryError: something JSON cannot hold
                raise UsageError(t("magic.save_failed", path=path, error=e)) from None
            print(t("magic.saved", n=len(self.session.messages), path=path))
            return None
        messages = load_history(path)
        session = self._fresh()
        session.messages = messages
        print(t("magic.loaded", n=len(messages), path=path))
        return None

    def _history(self) -> Any:
        messages = self.session.messages
        if self.view == "auto" and frontend(self.shell) == "widgets":
            return _views().HistoryView(messages)
        if not messages:
            print(t("magic.history_empty"))
            return None
        _print(history_text(messages) + "\n")  # escape sequences from the model removed
        return None

    # -- running a task -------------------------------------------------------
    def _client(self, args: Any) -> Any:
        global _told_demo
        session = self.session
        if args.client:
            client = self.shell.user_ns.get(args.client)
            if client is None:
                raise UsageError(t("magic.no_variable", option="--client", name=args.client))
            if not hasattr(getattr(client, "messages", None), "create"):
                raise UsageError(t("magic.not_a_client", name=args.client))
            return client
        from agentlab.fakeapi.offline import DemoClient, connect

        if args.offline:
            return DemoClient()
        online = bool(os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_BASE_URL"))
        client = session.connected  # made by connect(); remade if a key was set or removed since
        if client is None or isinstance(client, DemoClient) == online:
            client = session.connected = connect(quiet=True)
        if isinstance(client, DemoClient) and not _told_demo:
            _told_demo = True
            print(t("connect.demo"))
        return client

    def _system(self, value: str | None) -> str | None:
        if value is None:
            return None
        if value.isidentifier() and not keyword.iskeyword(value):
            if value not in self.shell.user_ns:
                raise UsageError(t("magic.no_system_variable", name=value))
            found = self.shell.user_ns[value]
            if not isinstance(found, str):
                raise UsageError(t("magic.system_not_text", name=value, kind=type(found).__name__))
            return found
        return value

    def _check(self, args: Any) -> None:
        if args.max_turns < 1:
            raise UsageError(t("magic.max_turns", n=args.max_turns))
        if args.confirm and args.yes:
            raise UsageError(t("magic.confirm_and_yes"))
        if args.model is not None and not args.model.strip():
            raise UsageError(t("magic.empty_model"))
        for option, name in (("--out", args.out), ("--client", args.client)):
            if name is not None and (not name.isidentifier() or keyword.iskeyword(name)):
                raise UsageError(t("magic.bad_name", option=option, name=name))
        if args.client and args.offline:
            raise UsageError(t("magic.client_and_offline"))

    def _run(self, args: Any, task: str) -> Any:
        self._check(args)
        system = self._system(args.system)
        client = self._client(args)
        session = self._fresh() if args.new else self.session
        busy = session.loop
        if busy is not None and busy.stage in ("decide", "execute", "append"):
            raise UsageError(t("magic.busy", stage=busy.stage))
        kept = session.model, session.system  # back again if the cell changes nothing
        if args.model:
            session.model = args.model
        if system is not None:
            session.system = system
        # One rule (README, "Approval"): the offline demo runs tools unasked; a
        # real model asks before each tool unless --yes.
        from agentlab.fakeapi.offline import asks_by_default

        confirm = args.confirm or (not args.yes and (self.confirm or asks_by_default(client)))
        mode = "text" if self.view == "text" else frontend(self.shell)
        if args.step and mode != "widgets":
            raise UsageError(t("magic.step_needs_widgets"))
        in_view = mode == "widgets" and (args.step or confirm)  # the stepper drives the loop
        from agentlab.loop import DEFAULT_SYSTEM

        loop = AgentLoop(
            client,
            session.messages,
            tools=session.tools,
            system=session.system if session.system is not None else DEFAULT_SYSTEM,
            model=session.model,
            max_turns=args.max_turns,
            approve=ask_in_terminal if confirm and not in_view else None,
            stream=args.stream,
        )
        session.loop, session.client = loop, client
        before = len(session.messages)
        loop.ask(task)
        if in_view:  # the view runs the requests, in this cell or on later clicks
            loop.subscribe(_settings_follow(loop, session, kept))
            view = self._in_view(loop, run=not args.step, confirm=confirm)
            if args.out:
                self.shell.user_ns[args.out] = view
            return view
        with self._showing(loop, mode):
            try:
                loop.run()
            except RequestError as e:
                took_back = _take_back(loop, before)
                if took_back:  # "nothing was added": nor is a --model or --system kept
                    session.model, session.system = kept
                print(t("magic.request_failed", explanation=e.explanation), file=sys.stderr)
                if not took_back:
                    key = "magic.kept"
                elif e.status_code in (400, 404, 413, 422):  # refused again if sent unchanged
                    key = "magic.took_back_fix"
                else:
                    key = "magic.took_back"
                print(t(key, n=len(loop.messages)), file=sys.stderr)
                loop.stage, loop.ended, loop.explanation = "done", "error", e.explanation
            except KeyboardInterrupt as e:  # the loop has answered every tool call already
                took_back = _take_back(loop, before)
                if took_back:
                    session.model, session.system = kept
                results = getattr(e, "results", [])
                raise AgentStopped(stopped_line(loop, took_back), results) from None
        result = loop.result()
        if args.out:
            self.shell.user_ns[args.out] = result
        return result

    @contextmanager
    def _showing(self, loop: AgentLoop, mode: str) -> Iterator[None]:
        """Show the run while it goes; in a notebook, leave a one-line summary after."""
        live: _Live | _WidgetLive | None = None
        if mode == "widgets":
            live = _WidgetLive(loop)
        elif mode == "live":
            live = _Live(loop)
        listener = live.listener if live is not None else Transcript(loop, _print)
        loop.subscribe(listener)
        try:
            yield
        finally:
            loop.unsubscribe(listener)
            if live is not None:
                live.done(summary(loop))

    def _in_view(self, loop: AgentLoop, *, run: bool, confirm: bool) -> Any:
        """``--step`` and ``--confirm`` in a notebook: the cell returns a ``LoopView``.

        The kernel handles no click while a cell runs, so the stepper's buttons
        drive the loop after the cell has ended. With ``--confirm`` the view runs
        on by itself and stops at each tool call for Approve / Deny / Edit; the
        result is ``_agent.loop.result()`` once it is done.
        """
        view = _views().LoopView(loop, confirm=confirm)
        if run:
            view.run_to_end()
        return view


def help_text(parser: Any) -> str:
    """``%agent --help``, in the language chosen with ``agentlab.set_language``."""
    for action in parser._actions:
        action.help = t(f"magic.help.{action.dest}")
    parser.description = t("magic.help.epilog")
    # IPython writes the usage for a docstring ("::", a blank line, indented): as a plain text
    usage, gap, rest = str(parser.format_help()).removeprefix("::\n\n").partition("\n\n")
    return textwrap.dedent(usage) + gap + rest


def _settings_follow(
    loop: AgentLoop, session: AgentSession, kept: tuple[str | None, str | None]
) -> Callable[[Event], None]:
    """For a cell shown in a ``LoopView``: as in the text path, the cell's ``--model``
    and ``--system`` stay only if its first request works. A failed first request
    puts the ones ``kept`` back; a retry in the view that works brings the cell's again."""
    chosen = session.model, session.system

    def listener(event: Event) -> None:
        if event.kind == "error" and loop.turns == 0:
            session.model, session.system = kept
        elif event.kind == "response":
            session.model, session.system = chosen
            loop.unsubscribe(listener)  # later failures keep what the cell set

    return listener


def _take_back(loop: AgentLoop, before: int) -> bool:
    """After a failed first request, remove the task again: the cell changed nothing."""
    if loop.turns == 0 and len(loop.messages) == before + 1:
        loop.messages.pop()
        loop.stage = "done"
        return True
    return False


def load_history(path: Path) -> list[Any]:
    """Read a saved history and check it; a clear ``UsageError`` if it is not one."""
    from agentlab.history import load

    try:
        messages = load(path)
    except FileNotFoundError:
        raise UsageError(t("magic.no_file", path=path)) from None
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(t("magic.load_failed", path=path, error=e)) from None
    except json.JSONDecodeError as e:
        raise UsageError(t("magic.not_json", path=path, error=e)) from None
    except HistoryError as e:
        raise UsageError(t("magic.not_history", path=path, problems=e)) from None
    if not messages:
        return messages
    problems = validate(messages)
    if problems:
        listed = "\n".join(f"- {p}" + (f" ({p.hint})" if p.hint else "") for p in problems[:3])
        more = len(problems) - 3
        if more > 0:
            listed += "\n" + t("magic.more_problems", n=more)
        raise UsageError(t("magic.not_history", path=path, problems=listed))
    return messages


# ---------------------------------------------------------------------------
# %load_ext agentlab / %unload_ext agentlab
# ---------------------------------------------------------------------------


_QUESTION = re.compile(r"^(\s*)([\w.]+\s*=\s*)?%agent(\s+\S.*\?)\s*$")


def keep_question_marks(lines: list[str]) -> list[str]:
    """Let ``%agent How many .py files are here?`` end with its question mark.

    IPython reads a line ending in ``?`` as a request for help on the last
    word (``here?``), before any magic sees it. This input transformer turns
    such an ``%agent`` line into the explicit call IPython would have made,
    so the task arrives whole. ``%agent?`` (help on the magic) is left alone.
    """
    if lines and lines[0].startswith("%%"):  # a cell magic's body is its own business
        return lines
    out = []
    for line in lines:
        m = _QUESTION.match(line)
        if m:
            indent, assign, rest = m.group(1), m.group(2) or "", m.group(3).strip()
            line = f"{indent}{assign}get_ipython().run_line_magic('agent', {rest!r})\n"
        out.append(line)
    return out


def load_ipython_extension(ipython: Any) -> None:
    """Register ``%agent`` and ``%%agent``, and make ``_agent`` (the conversation) if
    there is none yet, so its tools can be set before the first cell runs."""
    ipython.register_magics(AgentMagics)
    if not _session_ok(ipython.user_ns.get(SESSION_NAME)):
        ipython.user_ns[SESSION_NAME] = AgentSession()
    if keep_question_marks not in ipython.input_transformers_cleanup:
        ipython.input_transformers_cleanup.append(keep_question_marks)


def unload_ipython_extension(ipython: Any) -> None:
    """Remove ``%agent`` and ``%%agent`` again. The conversation (``_agent``) stays."""
    manager = ipython.magics_manager
    for kind in ("line", "cell"):
        manager.magics[kind].pop("agent", None)
    manager.registry.pop(AgentMagics.__name__, None)
    if keep_question_marks in ipython.input_transformers_cleanup:
        ipython.input_transformers_cleanup.remove(keep_question_marks)
