"""LoopView: step through the agent loop by hand and watch every stage.

    loop = al.AgentLoop(client, "How many .py files are here?", tools=[al.bash])
    al.LoopView(loop)

The lesson's diagram with the next stage lit up; buttons **Next stage**,
**Run turn**, **Run to end**, **Reset** and **Stop**; the last Decision with
its stop reason; a turn counter; tokens per turn with running totals and
cost; the model's text as it streams in; the history (one card per message,
earlier turns folded) and the table of tool pairs (hover a row, or a result
waiting to be appended, and its two cards light up: the history's script,
``agentlab.views.pins``, with ``anywidget`` installed); **Copy history as JSON**.
Keys **N** (Next stage) and **T** (Run turn) while the focus is in the view
(with ``anywidget`` installed, see ``agentlab.views.keys``). A loop made with
``todos=TodoList()`` (lesson 06) gets a **Plan** panel beside the history: the
list as the harness holds it, the rounds since the last ``todo`` call, and the
reminder when the harness adds it (marked in the history too).

Layout: two columns (diagram and decision; history) that wrap into one on a
narrow screen (flex-wrap, no fixed widths). Whatever needs an answer (the
approval panel, a turn-limit or budget stop with its **Continue** button, an
error) sits right under the buttons, so it is on screen wherever they are.

How clicks drive the loop
-------------------------
Nothing here ever waits for a click inside Python code: each click does its
work in the button's callback and returns (widget updates reach the browser
while it runs, so streamed text appears as it arrives).

Stages run on the kernel's main thread, the one that runs cells. JupyterLab
4.6+ sends widget messages to a kernel *subshell* (a second thread), so a
click may be handled while a cell or a stage is still running; such a click
hands its run to the main thread's event loop and returns at once. Clicked,
*Run turn* / *Run to end* run one stage per callback and schedule the next
(``call_later``), so the kernel handles other clicks between stages.

**Stop** sets a flag checked between stages, so the run stops before the next
one. If a stage is running on the main thread at that moment and the click
is handled anyway (a subshell), Stop also interrupts it, as the kernel's
interrupt (■) does: a running tool gets an ``is_error`` "interrupted" result,
a request in flight is dropped, and the history stays valid. Without
subshells, a click waits for the running stage; then use ■ to cut a slow
tool short: the view catches the ``KeyboardInterrupt`` the same way.
Called as methods in a cell (``view.run_to_end()``), and outside a kernel,
a run goes on to its end in the same call. While a stage runs, the status
line shows the elapsed time (a small thread updates it).

Confirm mode: asking a person before a tool runs
------------------------------------------------
We split the execute stage in two, rather than blocking in a callback until
a button is pressed (with ``jupyter-ui-poll``): the first half works out which
calls need a person (the loop's ``Policy`` may allow or deny some by pattern),
shows **Approve** / **Deny** (with a reason the model will read) / **Run
edited** for the first of them, and returns: the state is "waiting for
approval" and the kernel is free. Each answer is kept as a ``Verdict``; after
the last one the execute stage runs with those verdicts, from that click's
callback. A denial becomes an ``is_error`` tool_result carrying the reason, so
the model reads it on the next request. Nothing blocks, no event is replayed
behind the kernel's back, and an unanswered question costs nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import signal
import sys
import threading
import time
import traceback
import weakref
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import ipywidgets as W

from agentlab.errors import RequestError
from agentlab.history import HistoryError, as_dict, blocks
from agentlab.i18n import gap, t
from agentlab.loop import Event
from agentlab.terminal import command_warnings, has_hidden
from agentlab.tools.policy import Policy, Verdict, as_verdict, describe_call
from agentlab.views.base import dispose
from agentlab.views.diagram import diagram_svg
from agentlab.views.history_view import HistoryView
from agentlab.views.keys import shortcuts
from agentlab.views.pairing_view import PairingView
from agentlab.views.render import (
    STYLE,
    block_html,
    decision_html,
    ended_text,
    error_html,
    escape,
    fresh_tag,
    oneline,
    role_of,
    runs_of,
    section,
    shown,
    tn,
    todo_html,
    tokens_html,
    totals_html,
)

__all__ = ["LoopView"]

Goal = str  # "stage", "turn" or "end": how far the current click wants to go
LIMITED = ("turn_limit", "budget")  # endings a person can lift with Continue


def _get(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, dict) else getattr(obj, key, None)


def _preload(module: str) -> None:
    """Import ``module`` in a background thread, unless it is imported already."""
    if module in sys.modules:
        return

    def load() -> None:
        with contextlib.suppress(Exception):  # the first request imports it again, and says why
            importlib.import_module(module)

    # not a daemon: a process that ends mid-import would abort; it waits for the import instead
    threading.Thread(target=load, name="agentlab-preload").start()


def todos_of(loop: Any) -> Any:
    """The loop's ``TodoList`` (``AgentLoop(..., todos=TodoList())``), or None."""
    todos = getattr(loop, "todos", None)
    if todos is None:
        todos = (getattr(loop, "params", None) or {}).get("todos")
    return todos


def task_of(loop: Any) -> Any:
    """The loop's ``task`` tool when it can make child loops (``task_tool``), or None."""
    for tool in getattr(loop, "tools", None) or ():
        if getattr(tool, "name", None) == "task" and callable(getattr(tool, "child", None)):
            return tool
    return None


def _kinds(message: Any, kind: str) -> int:
    """How many blocks of type ``kind`` a message dict holds."""
    return sum(1 for b in blocks(message) if b.get("type") == kind)


class _Ticker:
    """Calls ``show(seconds)`` every ``every`` seconds from a thread until stopped."""

    def __init__(self, show: Callable[[float], None], every: float = 0.5) -> None:
        self.show, self.every = show, every
        self._done = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._done.clear()
        start = time.monotonic()

        def run() -> None:
            while not self._done.wait(self.every):
                self.show(time.monotonic() - start)

        self._thread = threading.Thread(target=run, name="agentlab-ticker", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._done.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None


SHORTCUTS = {"n": "al-key-next", "t": "al-key-turn"}  # key -> class of the button it clicks


def _button(key: str, icon: str, style: str = "") -> W.Button:
    return W.Button(
        description=t(key),
        tooltip=t(key + ".tip"),
        icon=icon,
        button_style=style,
        layout=W.Layout(width="auto", min_width="96px"),
    )


def _refresh_after_cells(view: LoopView) -> None:
    """Redraw ``view`` after any cell that moved its loop without it (``loop.step()``
    typed in a cell): its header, stage and decision then match the loop again."""
    shell = getattr(sys.modules.get("IPython"), "get_ipython", lambda: None)()
    if shell is None:
        return
    ref = weakref.ref(view)

    def refresh(*_: Any) -> None:
        seen = ref()
        if seen is None or seen.comm is None:  # the view is gone or closed: stop listening
            shell.events.unregister("post_run_cell", refresh)
        elif seen._stale and not seen._busy:
            seen._stale = False
            seen._update()

    shell.events.register("post_run_cell", refresh)


class LoopView(W.VBox):
    """The stepper: drive an ``AgentLoop`` stage by stage with buttons.

    ``confirm``: ask a person (Approve / Deny / Run edited) before each tool
    runs. ``None`` (the default) turns it on when the loop's ``approve`` is a
    ``Policy`` that would ask (mode ``"confirm"`` or ``ask`` patterns). With
    a Policy, its deny and allow patterns still decide without asking; with
    another ``approve`` callback, what it denies is denied without asking.
    The checkbox in the view switches confirm mode on and off.
    """

    def __init__(self, loop: Any, *, confirm: bool | None = None) -> None:
        super().__init__()
        # The offline clients load the SDK on their first request (one to three seconds):
        # load it in the background while the view is drawn, so that neither the first
        # picture nor the first click waits for it (a click that comes sooner waits for
        # the import to finish, as Python's import lock makes it).
        _preload("anthropic.types")

        self.loop = loop
        self.add_class("al-root")
        self.add_class("al-loop")
        if confirm is None:
            approve = loop.approve
            confirm = isinstance(approve, Policy) and (
                approve.mode == "confirm" or bool(approve.ask)
            )
        # what Continue adds to a limit the loop reached
        self._limits = (loop.max_turns, loop.max_total_tokens, loop.max_cost)
        self.history = HistoryView(loop)
        self.history.mark_appends = True  # the card a stage appends is marked "just added"
        self.pairings = PairingView(loop)

        # header: title, turn counter, status line
        self.title = W.HTML(f'<div class="al-title">{escape(t("view.loop.title"))}</div>')
        self.turn_label = W.HTML()
        self.status = W.HTML()
        self.did = W.HTML()  # what the last stage did, in one line
        # controls
        self.next_button = _button("view.button.next", "step-forward", "primary")
        self.turn_button = _button("view.button.turn", "forward")
        self.run_button = _button("view.button.run", "fast-forward")
        self.reset_button = _button("view.button.reset", "undo")
        self.stop_button = _button("view.button.stop", "stop")
        self.confirm_box = W.Checkbox(
            value=bool(confirm),
            description=t("view.confirm"),
            indent=False,
            layout=W.Layout(width="auto"),
        )
        self.next_button.on_click(lambda _: self._go("stage", from_click=True))
        self.turn_button.on_click(lambda _: self._go("turn", from_click=True))
        self.run_button.on_click(lambda _: self._go("end", from_click=True))
        self.reset_button.on_click(lambda _: self.reset())
        self.stop_button.on_click(lambda _: self.stop())
        # N and T click Next stage and Run turn while the focus is in this view
        # (with anywidget installed; without it the view explains Tab, Enter, Space)
        self.shortcuts = shortcuts(SHORTCUTS, scope=".al-loop")
        for name, button in (("N", self.next_button), ("T", self.turn_button)):
            button.add_class(SHORTCUTS[name.lower()])
            if self.shortcuts is not None:
                button.tooltip = f"{button.tooltip} · {t('view.keys.hint', name=name)}"
        text = t("view.keys.shortcuts" if self.shortcuts is not None else "view.keys")
        keys = W.HTML(f'<div class="al-keys">{text}</div>')  # our own markup
        # under the controls: what needs an answer (approval, a limit reached, an error)
        self.approval_info = W.HTML()
        self.approve_button = _button("view.approval.approve", "check", "success")
        self.deny_button = _button("view.approval.deny", "times", "danger")
        self.deny_reason = W.Text(
            placeholder=t("view.approval.reason"), layout=W.Layout(flex="1 1 160px", min_width="0")
        )
        self.edit_input = W.Textarea(rows=2, layout=W.Layout(flex="1 1 200px", min_width="0"))
        self.edit_button = _button("view.approval.edit", "pencil", "warning")
        self.approve_button.on_click(lambda _: self.answer(Verdict.approve()))
        self.deny_button.on_click(
            lambda _: self.answer(Verdict.deny(self.deny_reason.value.strip()))
        )
        self.edit_button.on_click(lambda _: self._answer_edit())
        wrap = W.Layout(flex_flow="row wrap", align_items="flex-start")
        self.approval = W.VBox(
            [
                self.approval_info,
                W.HBox([self.approve_button, self.deny_button, self.deny_reason], layout=wrap),
                W.HTML(f'<div class="al-muted">{escape(t("view.approval.edit_label"))}</div>'),
                W.HBox([self.edit_input, self.edit_button], layout=wrap),
            ],
            layout=W.Layout(display="none"),
        )
        self.approval.add_class("al-approval")
        self.ended_info = W.HTML()
        self.continue_button = _button("view.button.continue", "play", "primary")
        self.continue_button.on_click(lambda _: self.continue_run(from_click=True))
        self.ended_box = W.HBox(
            [self.ended_info, self.continue_button],
            layout=W.Layout(display="none", flex_flow="row wrap", align_items="center"),
        )
        self.ended_box.add_class("al-ended")
        self.error = W.HTML()
        # left column: diagram, what the next stage does, decision, tokens
        self.diagram = W.HTML()
        self.diagram.add_class("al-diagram")
        self.about = W.HTML()
        self.decision = W.HTML(decision_html(loop.decision))
        # lesson 06: the plan the harness keeps beside the history (with todos= only)
        self.todos = todos_of(loop)
        self.todo_box = W.HTML(layout=W.Layout(display="none" if self.todos is None else ""))
        self.tokens = W.HTML()
        # right column: streamed text, results waiting to be appended, history, pairs
        self.stream_box = W.HTML(layout=W.Layout(display="none"))
        self.results_box = W.HTML()
        # lesson 07: a child LoopView for each pending task call (see _show_helpers)
        self.helpers = W.VBox(layout=W.Layout(display="none"))
        self.helpers.add_class("al-helpers")
        self.helper_views: list[LoopView] = []
        self.held = False  # a parent's execute is running this loop: its buttons wait
        self.ask_input = W.Text(
            placeholder=t("view.ask.placeholder"), layout=W.Layout(flex="1 1 auto", min_width="0")
        )
        self.ask_input.on_msg(self._on_ask_key)  # Enter in the box: the widget's "submit"
        self.ask_button = _button("view.ask.button", "comment")
        self.ask_button.on_click(lambda _: self.ask(self.ask_input.value, from_click=True))
        self.ask_row = W.HBox([self.ask_input, self.ask_button], layout=W.Layout(display="none"))
        self.copy_button = _button("view.copy", "copy")
        self.copy_button.on_click(lambda _: self.copy_json())
        self.copy_out = W.Output()
        self.copy_text = W.Textarea(layout=W.Layout(display="none", width="100%", height="8em"))

        header = W.HBox(
            [self.title, self.turn_label],
            layout=W.Layout(
                justify_content="space-between", align_items="baseline", flex_flow="row wrap"
            ),
        )
        buttons = W.HBox(
            [
                self.next_button,
                self.turn_button,
                self.run_button,
                self.reset_button,
                self.stop_button,
            ],
            layout=W.Layout(flex_flow="row wrap"),
        )
        controls = W.HBox(
            [buttons, self.confirm_box],
            layout=W.Layout(
                justify_content="space-between", align_items="center", flex_flow="row wrap"
            ),
        )
        left = W.VBox(
            [self.diagram, self.about, self.decision, self.todo_box, self.tokens],
            layout=W.Layout(flex="0 1 420px", min_width="0"),
        )
        self.history_title = W.HTML(section(t("view.history.title")))
        right = W.VBox(
            [
                self.stream_box,
                self.results_box,
                self.history_title,
                self.history,
                self.helpers,  # right after the history, whose last card holds the task calls
                self.ask_row,
                self.pairings,
                W.HBox([self.copy_button, self.copy_out]),
                self.copy_text,
            ],
            layout=W.Layout(flex="1 1 340px", min_width="0"),
        )
        columns = W.HBox(
            [left, right],
            layout=W.Layout(flex_flow="row wrap", align_items="flex-start", margin="8px 0 0 0"),
        )
        columns.add_class("al-columns")
        self.children = (
            W.HTML(STYLE),
            header,
            controls,
            keys,
            self.status,
            self.did,
            self.approval,
            self.ended_box,
            self.error,
            columns,
        ) + ((self.shortcuts,) if self.shortcuts is not None else ())

        self._counts = [0]  # _replies: assistant replies in messages[:k], for each k
        self._counted: Any = None  # the last message counted
        self._goal: Goal | None = None
        self._cooperative = False  # a click's run: give the kernel a turn between stages
        self._busy = False
        self._stop_requested = False
        self._verdicts: dict[str, Verdict] | None = None  # confirm mode: answers for this execute
        self._waiting: list[Any] = []  # tool calls still waiting for a person
        self._streamed = ""
        self._activity = ""
        self._note = ""  # the status line when idle: stopped, interrupted, failed ...
        self._fresh = ""  # what the last stage added outside the history: "decision", "results"
        self._todo_before: list[dict[str, str]] | None = None  # the plan as execute began
        self._reminder: tuple[int, str] | None = None  # the last reminder: (message index, text)
        self._helped: Any = None  # the decision whose task calls the helpers belong to
        self._helper_heads: list[tuple[W.HTML, int, int]] = []  # (head, pair number, index)
        self._ticker = _Ticker(self._show_elapsed)
        self._in_stage = False  # a stage is running on the main thread, interruptible
        self._main_loop: asyncio.AbstractEventLoop | None = None  # the kernel's, if made in a cell
        if threading.current_thread() is threading.main_thread():
            with contextlib.suppress(RuntimeError):
                self._main_loop = asyncio.get_running_loop()
        loop.subscribe(self._on_event)
        self._stale = False  # the loop moved without this view (loop.step() in a cell)
        _refresh_after_cells(self)
        self.tokens.value = self._tokens_html()
        self._show_todos()
        self._update()

    # -- state, for reading and for tests -------------------------------------------
    @property
    def confirm(self) -> bool:
        return bool(self.confirm_box.value)

    @confirm.setter
    def confirm(self, value: bool) -> None:
        self.confirm_box.value = bool(value)

    @property
    def waiting(self) -> bool:
        """True while a tool call waits for Approve / Deny / Run edited."""
        return bool(self._waiting)

    @property
    def busy(self) -> bool:
        """True while a click's run is going (stages still scheduled)."""
        return self._busy

    # -- the buttons ---------------------------------------------------------------
    def next_stage(self) -> None:
        """Run the next stage only (in confirm mode, execute may first ask you)."""
        self._go("stage")

    def run_turn(self) -> None:
        """Run stages until the model is asked again (or the loop ends)."""
        self._go("turn")

    def run_to_end(self) -> None:
        """Run until the loop ends (confirm mode still asks before each tool)."""
        self._go("end")

    def stop(self) -> None:
        """Stop before the next stage; interrupt a stage running on the main thread
        (when this click is handled while it runs); while waiting for approval,
        stop asking: the panel goes away and the call stays unrun (Next stage asks again)."""
        self._stop_requested = True
        kill = getattr(signal, "pthread_kill", None)  # POSIX only
        elsewhere = threading.current_thread() is not threading.main_thread()
        if self._in_stage and elsewhere and kill is not None:
            kill(threading.main_thread().ident, signal.SIGINT)  # what the kernel's ■ does
        if self._waiting:
            self._waiting, self._verdicts = [], None
            self.approval.layout.display = "none"
            self._end(t("view.stopped.approval"))

    def reset(self) -> None:
        """Put the history back as it was when the loop was made, and start over
        (a todo list too: ``AgentLoop.reset`` puts its plan back)."""
        self._waiting, self._verdicts, self._goal = [], None, None
        self.approval.layout.display = "none"
        self.loop.reset()  # the views hear "reset" and redraw

    def ask(self, text: str, run: bool = True, from_click: bool = False) -> None:
        """Add a follow-up user message and (``run=True``) run the loop on it."""
        if not text.strip() or self._busy or self._waiting:
            return
        try:
            self.loop.ask(text)
        except (HistoryError, RuntimeError) as e:
            self.error.value = error_html(e)
            return
        self.ask_input.value = ""
        self._note = ""
        self._update()
        if run:
            self._go("end", from_click=from_click)

    def _on_ask_key(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if isinstance(content, dict) and content.get("event") == "submit":
            self.ask(self.ask_input.value, from_click=True)

    def continue_run(self, from_click: bool = False) -> None:
        """After a turn limit or budget stop: allow as many turns (or as much budget)
        again, and run on."""
        loop = self.loop
        if loop.stage != "done" or loop.ended not in LIMITED or self._busy:
            return
        turns, tokens, cost = self._limits
        if loop.ended == "turn_limit":
            loop.max_turns += turns
        if loop.ended == "budget":  # the same budget again, on top of what is used
            from agentlab.usage import estimate_cost, totals

            if tokens is not None:
                loop.max_total_tokens = totals(loop)["total_tokens"] + tokens
            if cost is not None:
                loop.max_cost = (estimate_cost(loop).dollars or 0.0) + cost
        loop.stage, loop.ended, loop.explanation = "request", None, ""
        self._note = ""
        self._go("end", from_click=from_click)

    def copy_json(self) -> str:
        """Copy the history, as the JSON the API is sent, to the browser's clipboard.

        The text also appears in a box under the button (select it and copy by
        hand if the browser refused the clipboard). Returns the JSON."""
        # SDK blocks (response.content appended as it came) as the JSON objects the SDK sends
        from agentlab.secrets import redact  # keys become [REDACTED:NAME], as in save()

        clean = redact(as_dict(self.loop.messages), self.loop.client)
        data = json.dumps(clean, ensure_ascii=False, indent=1, default=str)
        literal = json.dumps(data).replace("</", "<\\/")  # a JS string: no text of ours runs
        code = f"navigator.clipboard && navigator.clipboard.writeText({literal});"
        note = tn("view.copy.done", len(self.loop.messages), size=f"{len(data) / 1000:.1f} kB")
        self.copy_out.outputs = (  # the output a kernel would send, built by hand
            {
                "output_type": "display_data",
                "data": {"application/javascript": code, "text/plain": note},
                "metadata": {},
            },
            {"output_type": "stream", "name": "stdout", "text": note + "\n"},
        )
        self.copy_text.value = data
        self.copy_text.layout.display = "block"
        return data

    def answer(self, verdict: Verdict) -> None:
        """The person's answer for the tool call shown (confirm mode)."""
        if not self._waiting or self._verdicts is None:
            return
        use = self._waiting.pop(0)
        self._verdicts[str(_get(use, "id"))] = verdict
        self.deny_reason.value = ""
        if self._waiting:
            self._show_approval()
            return
        self.approval.layout.display = "none"
        self._busy = True  # the run goes on: execute, then on toward the goal
        self._update()
        if not self._on_main(self._advance):
            self._advance()

    def _answer_edit(self) -> None:
        """Run edited: the input as edited. Unchanged, it is a plain approval."""
        if not self._waiting:
            return
        original = _get(self._waiting[0], "input")
        text = self.edit_input.value
        if isinstance(original, dict) and set(original) == {"command"}:
            # The box shows hidden characters written out; left as shown, it is the original.
            same = text == shown(str(original["command"]))
            new: Any = original if same else {"command": text}
        else:
            try:
                new = json.loads(text)
            except ValueError as e:
                self._show_approval(problem=t("view.approval.bad_json", error=e))
                return
            if not isinstance(new, dict):
                self._show_approval(problem=t("view.approval.bad_json", error="not a JSON object"))
                return
        self.answer(Verdict.approve() if new == original else Verdict.edit(new))

    # -- running stages --------------------------------------------------------------
    def _go(self, goal: Goal, from_click: bool = False) -> None:
        if self._busy or self._waiting or self.held or self.loop.stage == "done":
            return
        self._goal, self._stop_requested, self._note = goal, False, ""
        self._cooperative = from_click
        self.error.value = ""
        self._busy = True
        self._update()
        if not self._on_main(self._advance):
            self._advance()

    def _advance(self) -> None:
        """Run stages toward the goal; return when it is reached, when a person
        must answer, or after one stage when the kernel's event loop can call
        us back (so clicks such as Stop are handled in between)."""
        loop = self.loop
        while True:
            if self._stop_requested:
                self._end(t("view.stopped", stage=t(f"stage.{loop.stage}")))
                return
            if loop.stage == "done":
                self._end()
                return
            if loop.stage == "execute" and self.confirm and not self._ready_to_execute():
                self._busy = False
                self._update()
                return
            if not self._step():
                self._end()
                return
            if self._goal == "stage" or (
                self._goal == "turn" and loop.stage in ("request", "done")
            ):
                self._end()
                return
            if self._later(self._advance):
                return

    def _later(self, fn: Callable[[], None]) -> bool:
        """Call ``fn`` from the kernel's event loop soon, if this run came from a
        click and an event loop is running (a method called in a cell runs on
        to the end before the cell returns, as a student expects)."""
        if not self._cooperative:
            return False
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            return False
        running.call_later(0.01, self._safely(fn))  # a moment for the kernel to read clicks
        return True

    def _on_main(self, fn: Callable[[], None]) -> bool:
        """From another thread (a kernel subshell), run ``fn`` on the main thread's
        event loop instead; True if handed over."""
        if threading.current_thread() is threading.main_thread():
            return False
        if self._main_loop is None or not self._main_loop.is_running():
            return False
        self._main_loop.call_soon_threadsafe(self._safely(fn))
        return True

    def _safely(self, fn: Callable[[], None]) -> Callable[[], None]:
        """``fn`` for the event loop: a failure shows in the view, never in the kernel's loop."""

        def call() -> None:
            try:
                fn()
            except (Exception, KeyboardInterrupt) as e:  # a bug in the view, or a late Stop
                self.error.value = error_html(e, traceback.format_exc())
                self._end()

        return call

    @contextlib.contextmanager
    def _interruptible(self) -> Iterator[None]:
        """Let SIGINT (the kernel's ■, or Stop) raise KeyboardInterrupt while a stage runs.

        ipykernel ignores SIGINT while it is idle, and a stage scheduled on the
        event loop runs outside any request, so for the stage we put Python's
        default handler in place (it raises KeyboardInterrupt), then the old one back.
        """
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        old = signal.getsignal(signal.SIGINT) or signal.default_int_handler  # None: set from C
        signal.signal(signal.SIGINT, signal.default_int_handler)
        self._in_stage = True
        try:
            yield
        finally:
            self._in_stage = False
            while True:
                try:
                    signal.signal(signal.SIGINT, old)
                    break
                except KeyboardInterrupt:  # a Stop just too late: the stage is over anyway
                    continue

    def _step(self) -> bool:
        """Run one stage; show any failure in the view. True if it went well."""
        loop = self.loop
        stage = loop.stage
        saved = loop.approve
        if stage == "execute" and self._verdicts is not None:
            verdicts, unasked = self._verdicts, Verdict.deny(t("view.helper.unasked"))
            # a call nobody was asked about here is a helper's: it asks in its own view
            loop.approve = lambda use: verdicts.get(str(_get(use, "id"))) or unasked
        self._activity = t(f"stage.{stage}")
        before = (len(loop.messages), len(loop.audit))
        self.did.value, self._fresh = "", ""
        self._ticker.start()
        try:
            with self._interruptible():
                loop.step()
            self._show_did(stage, *before)
            return True
        except KeyboardInterrupt:  # the kernel's interrupt, or Interrupted from a tool
            if loop.stage != "done":  # the loop did not record it: nothing changed
                self._note = t("view.interrupted", stage=t(f"stage.{stage}"))
            return False
        except (RequestError, HistoryError) as e:
            self.error.value = error_html(e)
            return False
        except Exception as e:  # shown in the view, with the traceback folded away
            self.error.value = error_html(e, traceback.format_exc())
            return False
        finally:
            self._ticker.stop()
            loop.approve = saved
            if stage == "execute":
                self._verdicts = None
                self._helpers_ran()
            self._update()

    def _end(self, note: str | None = None) -> None:
        self._goal, self._busy, self._stop_requested = None, False, False
        if note is not None:
            self._note = note
        self._update()

    # -- confirm mode ----------------------------------------------------------------
    def _ready_to_execute(self) -> bool:
        """Confirm mode, before execute: True when every call has a verdict.
        Otherwise show the first call that needs a person and return False."""
        if self._verdicts is None:
            decision = self.loop.decision
            uses = list(decision.tool_uses) if decision is not None else []
            self._verdicts, self._waiting = {}, []
            for use in uses:
                verdict = self._rule_verdict(use)
                if verdict is None:
                    self._waiting.append(use)
                else:
                    self._verdicts[str(_get(use, "id"))] = verdict
        if self._waiting:
            self._show_approval()
            return False
        return True

    def _rule_verdict(self, use: Any) -> Verdict | None:
        """What the loop's own approve rule says without asking anyone; None: ask."""
        approve = self.loop.approve
        if approve is None:
            return None
        if isinstance(approve, Policy):
            asked: list[Any] = []

            def record(call: Any) -> Verdict:
                asked.append(call)
                return Verdict.approve()

            verdict = replace(approve, mode="confirm", ask_user=record)(use)
            return None if asked else verdict
        verdict = as_verdict(approve(use))
        return verdict if verdict.action == "deny" else None

    def _show_approval(self, problem: str = "") -> None:
        use = self._waiting[0]
        done = len(self._verdicts or {})
        total = done + len(self._waiting)
        pair = self.history.pair(_get(use, "id"))
        block = {
            "type": "tool_use",
            "id": _get(use, "id"),
            "name": _get(use, "name"),
            "input": _get(use, "input"),
        }
        title = t("view.approval.title", k=done + 1, n=total, name=_get(use, "name"))
        data = _get(use, "input")
        as_json = json.dumps(data, ensure_ascii=False, indent=1)
        # the terminal prompt's warnings: hidden characters, long runs of spaces, many lines
        warnings = [problem] if problem else []
        if isinstance(data, dict) and isinstance(data.get("command"), str):
            warnings += command_warnings(data["command"])
        elif has_hidden(as_json):
            warnings.append(t("view.approval.hidden"))
        warn = "".join(f'<div class="al-bad al-warning">⚠ {escape(w)}</div>' for w in warnings)
        whole = block_html(block, pair, whole=True)  # all of it, in a box that scrolls
        self.approval_info.value = f"<b>⚠ {escape(title)}</b>{warn}{whole}"
        if not problem:  # the edit box never holds a character that cannot be seen
            if isinstance(data, dict) and set(data) == {"command"}:
                self.edit_input.value = shown(str(data["command"]))
            else:
                self.edit_input.value = shown(as_json)
        self.approval.layout.display = "flex"
        self._update()

    # -- events from the loop --------------------------------------------------------
    def _on_event(self, event: Event) -> None:
        kind, data = event.kind, event.data
        self._stale = self._stale or not self._in_stage
        if kind in ("stage", "tool_end", "reminder", "append", "reset") and self.todos is not None:
            if kind == "stage":  # an item the coming execute changes is marked until the next stage
                before = self.todos.items if data["stage"] == "execute" else None
                self._todo_before = None if before is None else [dict(i) for i in before]
            elif kind == "reminder":
                self._reminder = (len(self.loop.messages), str(data.get("text", "")))
            elif kind == "reset":
                self._todo_before, self._reminder = None, None
            self._show_todos()
        if kind == "stage" and data["stage"] == "execute" and self.helper_views:
            for helper in self.helper_views:  # the call runs them: their own run waits
                helper._hold()
        if kind == "stage":
            self.diagram.value = diagram_svg(data["stage"], running=True)
            self._activity = t(f"stage.{data['stage']}")
            self._show_elapsed(0.0)
        elif kind == "request" and self.loop.stream:
            self._streamed = ""
            self.stream_box.value = (
                f'<div class="al-stream al-muted">{escape(t("view.stream.title"))}</div>'
            )
            self.stream_box.layout.display = "block"
        elif kind == "text":
            self._streamed += str(data.get("text", ""))
            title = section(t("view.stream.title"))
            self.stream_box.value = f'<div class="al-stream">{title}{escape(self._streamed)}</div>'
        elif kind == "response":
            self.stream_box.layout.display = "none"
            self.tokens.value = self._tokens_html()
        elif kind == "tool_start":
            use = data.get("tool_use")
            call = {"name": _get(use, "name"), "input": data.get("input")}
            self._activity = f"{t('stage.execute')}: {oneline(describe_call(call), 120)}"
            self._show_elapsed(0.0)
        elif kind == "results":
            self._show_results(data.get("results") or [])
        elif kind == "append":
            self.results_box.value = ""
        elif kind == "reset":
            self._drop_helpers()
            self._note, self._streamed, self._fresh = "", "", ""
            self.did.value = ""
            for box in (self.error, self.results_box):
                box.value = ""
            self.tokens.value = self._tokens_html()
            self.stream_box.layout.display = "none"
            self.approval.layout.display = "none"
            self._update()

    def _show_did(self, stage: str, n_before: int, audit_before: int) -> None:
        """After a stage: one plain line saying what it did, and which part it added
        is marked (the new card, the decision, the results waiting to be appended)."""
        loop = self.loop
        did, fresh = "", ""
        if stage == "request" and loop.stage == "decide":  # the reply is in the history
            uses = _kinds(loop.messages[-1], "tool_use")
            reply = (
                tn("view.did.reply.tools", uses)
                if uses
                else t("view.did.reply.none", reason=loop.stop_reason)
            )
            sent = (
                tn("view.count.messages", n_before),
                tn("view.count.tools", len(loop.tools) + (self.todos is not None)),
            )  # todos= adds todo
            did = t("view.did.request", messages=sent[0], tools=sent[1], reply=reply)
        elif stage == "decide" and loop.decision is not None:
            d = loop.decision
            action = (
                tn("view.did.decide.execute", len(d.tool_uses))
                if d.action == "execute"
                else t(f"view.action.{d.action}")
            )
            did, fresh = t("view.did.decide", reason=d.reason, action=action), "decision"
        elif stage == "execute":
            records = loop.audit[audit_before:]
            ran = [a for a in records if a.get("verdict") in ("approved", "edited")]
            denied = sum(1 for a in records if a.get("verdict") == "denied")
            exits = [str(a["exit_code"]) for a in ran if a.get("exit_code") is not None]
            errors = sum(1 for a in ran if a.get("exit_code") is None and a.get("is_error"))
            how = [t("view.did.exit", codes=", ".join(exits))] if exits else []
            how += [tn("view.did.errors", errors)] if errors else []
            how += [tn("view.did.denied", denied)] if denied else []
            seconds = sum(float(a.get("duration") or 0.0) for a in ran)
            how_text = ", ".join(how) or t("view.status.ok")
            did = tn("view.did.execute", len(ran), seconds=seconds, how=how_text)
            fresh = "results"
        elif stage == "append" and len(loop.messages) > n_before:
            reminded = self._reminder is not None and self._reminder[0] == n_before
            key = "view.did.append.reminder" if reminded else "view.did.append"
            did = tn(key, _kinds(loop.messages[-1], "tool_result"))
        if stage in ("decide", "execute"):
            self.history.mark(None)  # the stage added nothing to the history
        self._fresh = fresh
        if did:
            name, _, rest = did.partition(t("view.did.sep"))
            rest_html = escape(t("view.did.sep") + rest) if rest else ""
            self.did.value = f'<div class="al-did"><b>{escape(name)}</b>{rest_html}</div>'

    def _start_note(self) -> str:
        """What the loop does with the history it was given, while it has made no
        request and no decision (it ends on the model's turn); else ''."""
        loop = self.loop
        if loop.turns or loop.decision is not None or loop.ended not in (None, "model"):
            return ""
        return str(loop.explanation)

    def _show_results(self, results: list[dict[str, Any]]) -> None:
        runs = runs_of(self.loop)
        parts = []
        for r in results:
            key = str(r.get("tool_use_id"))
            note = t("view.results.note")
            run = runs.get(key)
            if run and run.get("verdict") in ("edited", "denied"):
                note = t(f"view.run.{run['verdict']}") + " · " + note
            parts.append(block_html(r, self.history.pair(key), note))
        title = section(t("view.results.title")).replace("</div>", f" {fresh_tag()}</div>", 1)
        self.results_box.value = f'<div class="al-panel al-fresh">{title}{"".join(parts)}</div>'

    # -- drawing ----------------------------------------------------------------------
    def _show_todos(self) -> None:
        """The todo panel: the plan as the loop's TodoList holds it now."""
        todos = self.todos
        if todos is None:
            return
        items = list(todos.items)
        changed: list[str] = []
        if self._todo_before is not None:
            old = {str(i.get("id")): i for i in self._todo_before}
            changed = [str(i.get("id")) for i in items if old.get(str(i.get("id"))) != i]
        reminder = self._reminder if getattr(todos, "reminded", False) else None
        html = todo_html(items, int(todos.rounds_since), reminder=reminder, changed=changed)
        if html != self.todo_box.value:
            self.todo_box.value = html

    def _tokens_html(self) -> str:
        loop = self.loop
        if not loop.turn_usage:
            return ""
        from agentlab.usage import estimate_cost

        cost = estimate_cost(loop)
        return tokens_html(loop.turn_usage, totals_html(loop.usage, cost.dollars, cost.model))

    def _show_elapsed(self, seconds: float) -> None:
        text = t("view.running", what=self._activity, seconds=seconds)
        self.status.value = f'<div class="al-status">◷ {escape(text)}</div>'

    def _status_html(self) -> str:
        loop = self.loop
        if self._waiting:
            text = f'<span class="al-wait">⚠ {escape(t("view.waiting"))}</span>'
        elif self._note:
            text = f'<span class="al-wait">■ {escape(self._note)}</span>'
        elif loop.stage == "done":
            css, mark = ("al-ok", "✓") if loop.ended in (None, "model") else ("al-wait", "■")
            done = ended_text(loop.ended, loop.stop_reason)
            # said in a box already: the limit's (with Continue), the start's (decision box)
            why = "" if loop.ended in LIMITED or self._start_note() else escape(loop.explanation)
            text = f'<span class="{css}">{mark} {escape(done)}</span>{gap(done)}{why}'
        elif self.error.value:
            text = f'<span class="al-bad">✗ {escape(t("view.failed"))}</span>'
        else:
            text = escape(t("view.ready"))
        return f'<div class="al-status">{text}</div>'

    def _update(self) -> None:
        loop, self._stale = self.loop, False
        stage = loop.stage
        self.diagram.value = diagram_svg(stage, ended=loop.ended)
        next_stage = t("view.next", stage=t(f"stage.{stage}"))
        about = t(f"stage.{stage}.about")
        self.about.value = f'<div class="al-about"><b>{escape(next_stage)}</b>{gap(next_stage)}{escape(about)}</div>'
        if stage == "decide":  # the reply is in, not decided yet
            self.decision.value = decision_html(None, answered=str(loop.stop_reason))
        else:
            fresh = self._fresh == "decision"
            self.decision.value = decision_html(loop.decision, note=self._start_note(), fresh=fresh)
        self.turn_label.value = f'<div class="al-status">{escape(self._turn_text())}</div>'
        if not self._busy:
            self.status.value = self._status_html()
        stuck = self._busy or self.waiting
        for b in (self.next_button, self.turn_button, self.run_button):
            b.disabled = stuck or self.held or stage == "done"
        self.reset_button.disabled = self._busy or self.held
        self.stop_button.disabled = not stuck
        asking = stage == "done" and not stuck and not self.held
        self.ask_row.layout.display = "flex" if asking else "none"
        limited = stage == "done" and loop.ended in LIMITED and not stuck
        if limited:
            why = escape(ended_text(loop.ended, loop.stop_reason))
            self.ended_info.value = f"<b>■ {why}</b> {escape(loop.explanation)}"
        self.ended_box.layout.display = "flex" if limited else "none"
        if not self._waiting:
            self.approval.layout.display = "none"
        if stage == "execute":
            self._show_helpers()

    # -- subagents (lesson 07) ----------------------------------------------------------
    def _show_helpers(self) -> None:
        """Before execute: a child LoopView for each pending ``task`` call, made by the
        task tool (``task.child(prompt)``), so its run can be stepped before the parent's
        execute finishes it. Kept on screen, finished, until the next task calls."""
        loop, task = self.loop, task_of(self.loop)
        decision = loop.decision
        if task is None or decision is None or decision is self._helped:
            return
        calls = [u for u in decision.tool_uses if _get(u, "name") == "task"]
        prompts = [(_get(u, "input") or {}).get("prompt") for u in calls]
        # a blank prompt makes no child (the API refuses blank text): the call gets its error
        calls = [
            (u, p) for u, p in zip(calls, prompts, strict=True) if isinstance(p, str) and p.strip()
        ]
        if not calls:
            return
        self._drop_helpers()
        self._helped = decision
        boxes, seen = [], dict[str, int]()
        index = len(loop.messages) - 1  # the reply holding the calls
        for use, prompt in calls:
            n, seen[prompt] = seen.get(prompt, 0), seen.get(prompt, 0) + 1
            child = task.child(prompt, n)
            child.approve = child.approve or loop.approve  # the parent's rules hold for it too
            view = LoopView(child, confirm=self.confirm)
            view.title.value = (
                f'<div class="al-title al-helper-title">{escape(t("view.helper.title"))}</div>'
            )
            pair = self.history.pair(_get(use, "id"))
            number = pair.number if pair else 0
            head = W.HTML(self._helper_head(number, index, view))
            self.helper_views.append(view)
            self._helper_heads.append((head, number, index))
            box = W.VBox([head, view])
            box.add_class("al-helper")
            boxes.append(box)
        title = W.HTML(section(t("view.helpers.title")))
        self.helpers.children = (title, *boxes)
        self.helpers.layout.display = "flex"

    def _helper_head(self, number: int, index: int, view: LoopView, note: str = "") -> str:
        prompt = view.loop.messages[0].get("content") if view.loop.messages else ""
        about = escape(note or t("view.helper.about"))
        return (
            f'<div class="al-helper-head"><b>{escape(t("view.helper.for", n=number, i=index))}</b>'
            f'<div class="al-helper-prompt">task: {escape(oneline(prompt, 300))}</div>'
            f'<div class="al-muted">{about}</div></div>'
        )

    def _hold(self) -> None:
        """A parent's execute runs this loop now: no clicks of its own, no question left."""
        if self.confirm:  # clicks were asked for, and none can come now: nothing runs unasked
            unasked = Verdict.deny(t("view.helper.unasked"))
            self.loop.approve = lambda use: unasked
        self.held = True
        self._waiting, self._verdicts = [], None
        self.approval.layout.display = "none"
        self._update()

    def _helpers_ran(self) -> None:
        """After the parent's execute: each helper says whether its run was used."""
        task = task_of(self.loop)
        for (head, number, index), view in zip(self._helper_heads, self.helper_views, strict=True):
            ran = view.loop.stage == "done"
            note = t("view.helper.done" if ran else "view.helper.not_run")
            head.value = self._helper_head(number, index, view, note)
            if ran:  # the parent ran it on: the line of the last stage stepped by hand is stale
                view.did.value, view.results_box.value = "", ""
            view.held = True  # its run is over for the parent (used or dropped): buttons off
            view._update()
        if task is not None:
            task.subagents.clear()  # a denied or edited call's child is never run later

    def _drop_helpers(self) -> None:
        for view in self.helper_views:
            view.close()
        self.helper_views, self._helper_heads, self._helped = [], [], None
        for box in self.helpers.children:
            dispose(box)
        self.helpers.children = ()
        self.helpers.layout.display = "none"
        task = task_of(self.loop)
        if task is not None:
            task.subagents.clear()

    # -- display ----------------------------------------------------------------------
    def _repr_html_(self) -> str:
        """The view as it is drawn now, as one HTML page (a saved notebook's picture)."""
        return STYLE + self._picture()

    def _picture(self) -> str:
        """The view as it is drawn now, as HTML without the stylesheet.

        Made of the very HTML the live widgets hold, panel by panel, so a snapshot
        can never tell another story than the view: the status and what the last
        stage did, an approval question or a limit reached, the diagram, the
        decision, the tokens, the results waiting to be appended, the history's
        cards and the pairs table. Only the buttons are left out (and the status does not
        say to press one)."""

        def panel(box: W.Widget, html: str, css: str = "") -> str:
            if box.layout.display == "none":
                return ""
            return f'<div class="{css}">{html}</div>' if css else html

        # a picture has no buttons: its status does not say to press one
        status = self.status.value.replace(escape(t("view.ready")), escape(t("view.ready.picture")))
        diagram = f'<div class="al-diagram">{self.diagram.value}</div>'
        left = diagram + "".join(w.value for w in (self.about, self.decision))
        left += panel(self.todo_box, self.todo_box.value) + self.tokens.value
        right = (
            panel(self.stream_box, self.stream_box.value)
            + self.results_box.value
            + self.history_title.value
            + f'<div class="al-root">{self.history.drawn_html()}</div>'
            + self._helpers_picture()
            + self.pairings.table.value
        )
        return (
            f'<div class="al-root al-loop">{self.title.value}{self.turn_label.value}'
            f"{status}{self.did.value}"
            f"{panel(self.approval, self.approval_info.value, 'al-approval')}"
            f"{panel(self.ended_box, self.ended_info.value, 'al-ended')}{self.error.value}"
            f'<div class="al-columns"><div class="al-left">{left}</div>'
            f'<div class="al-right">{right}</div></div></div>'
        )

    def _helpers_picture(self) -> str:
        if self.helpers.layout.display == "none":
            return ""
        title = self.helpers.children[0].value if self.helpers.children else ""
        boxes = "".join(
            f'<div class="al-helper">{head.value}{view._picture()}</div>'
            for (head, _, _), view in zip(self._helper_heads, self.helper_views, strict=True)
        )
        return f'<div class="al-helpers">{title}{boxes}</div>'

    def _replies(self, k: int) -> int:
        """How many assistant replies ``messages[:k]`` holds, counted once per message
        (the header is drawn after every stage, with 2,000 messages too)."""
        messages, counts = self.loop.messages, self._counts
        done = len(counts) - 1
        if done > len(messages) or (done and messages[done - 1] is not self._counted):
            del counts[1:]  # the list changed (a reset): count again
            done = 0
        for m in messages[done:]:
            counts.append(counts[-1] + (role_of(m) == "assistant"))
        if messages:
            self._counted = messages[-1]
        return counts[min(k, len(messages))]

    def _turn_text(self) -> str:
        """The turn number as the pairs table counts it (assistant replies in the history)."""
        loop = self.loop
        n = self._replies(len(loop.messages))
        messages = tn("view.count.messages", len(loop.messages))
        # max_turns counts the current task's requests: say so when earlier tasks replied too
        task = n - self._replies(loop.result().start)
        if task != n:
            return t("view.turn.task", n=n, k=task, max=loop.max_turns, messages=messages)
        if n == 0:  # before the first request: no "turn 0"
            return t("view.turn.none", max=loop.max_turns, messages=messages)
        return t("view.turn", n=n, max=loop.max_turns, messages=messages)

    def __repr__(self) -> str:
        loop = self.loop
        return f"LoopView(stage={loop.stage!r}, turns={loop.turns}, messages={len(loop.messages)})"

    def close(self) -> None:
        if not hasattr(self, "_ticker"):  # __init__ failed before it subscribed: nothing else
            return super().close()
        for view in self.helper_views:
            view.close()
        self.loop.unsubscribe(self._on_event)
        self.history.close()
        self.pairings.close()
        self._ticker.stop()
        for part in (self.approval, *self.children):  # every widget inside, so none keeps the view
            dispose(part)
        super().close()
