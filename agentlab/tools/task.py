"""Subagents: a ``task`` tool that runs a second loop and hands back a summary.

The parent calls ``task`` with a prompt. The harness runs a child loop on a
fresh history (the prompt alone), with the parent's tools minus ``task`` (so
the child cannot start children of its own) and at most ``max_rounds`` model
requests. Only the child's final text comes back as the tool's result: the
child's whole history stays here, and the parent's context stays small.

A view can show the child's run before the parent runs it: ``task.child(prompt)``
(``task = task_tool(...)``) makes the child loop for a pending call, an
``AgentLoop`` to step by hand; when the parent's execute then runs the call,
``run`` finishes that same child from wherever it was left and returns its final
text. Without a child made beforehand, ``run`` is ``subagent`` as it stands.

A child asks before its tool calls whatever the parent asks before its own: the
``approve`` given to ``task_tool``, or else the parent's ``approve`` (a Policy, a
prompt) that let the ``task`` call run. Without that, a model could reach past its
parent's rules by handing the command to a helper. For the same reason a child
spends from its parent's budget (``max_total_tokens``, ``max_cost``): each of its
requests is counted in the parent's ``helpers_usage``, and it stops when the
parent's budget is used up.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agentlab.harness import PARENT, Parent
from agentlab.history import blocks
from agentlab.i18n import t
from agentlab.tools.base import Tool, as_tool
from agentlab.usage import model_of

if TYPE_CHECKING:
    from agentlab.stepper import AgentLoop

__all__ = [
    "MAX_ROUNDS",
    "NO_SUMMARY",
    "Subagents",
    "TaskTool",
    "final_text",
    "subagent",
    "task_tool",
]

MAX_ROUNDS = 30
NO_SUMMARY = "(no summary)"


def final_text(messages: list[Any]) -> str:
    """The text of the last assistant message, or NO_SUMMARY when it has none."""
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "assistant":
            words = "".join(b.get("text", "") for b in blocks(message) if b.get("type") == "text")
            return words.strip() or NO_SUMMARY
    return NO_SUMMARY


def subagent(
    client: Any,
    prompt: str,
    tools: Iterable[Any],
    max_rounds: int = MAX_ROUNDS,
    approve: Any = None,
) -> str:
    """Run a child loop on ``prompt`` alone; return only its final text."""
    messages: list[Any] = [{"role": "user", "content": prompt}]  # a fresh history
    _run_child(messages, client, tools, max_rounds, approve)
    return final_text(messages)


def _run_child(
    messages: list[Any], client: Any, tools: Iterable[Any], max_rounds: int, approve: Any = None
) -> None:
    from agentlab.loop import agent_loop  # the lesson's loop (imported late: no cycle)

    parent = PARENT.get() or Parent(None)  # the loop whose task call this is
    approve = approve or parent.approve  # the parent's rules hold for its helper too

    def spend(event: Any) -> None:  # each of the helper's requests counts in its parent's
        if event.kind == "response":
            _record(parent, client, event.data["response"])

    run = agent_loop(
        messages, client, tools=_child_tools(tools), max_turns=max_rounds, approve=approve,
        budget=lambda _: parent.spent(), on_event=spend,
    )  # fmt: skip
    if run.ended == "budget":  # the tool's result says so (is_error)
        raise RuntimeError(t("task.budget", what=parent.spent()))


def _record(parent: Parent, client: Any, response: Any) -> None:
    parent.record(response.usage, getattr(client, "demo_model", None) or response.model)


def _child_tools(tools: Iterable[Any]) -> list[Any]:
    return [t for t in tools if as_tool(t).name != "task"]  # no recursion


class Subagents:
    """The children of one ``task`` tool: ``pending``, those a view made before the
    parent ran them (for each prompt, the child loops in the order its calls come);
    ``histories``, every child's whole history once it ran (for a lesson to look at:
    none of it reaches the parent)."""

    def __init__(
        self, client: Any, tools: list[Any], max_rounds: int = MAX_ROUNDS, approve: Any = None
    ) -> None:
        self.client, self.tools, self.max_rounds = client, tools, max_rounds
        self.approve = approve  # asked before each child's calls (None: the parent's approve)
        self.pending: dict[str, list[AgentLoop]] = {}
        self.histories: list[list[Any]] = []  # each child's whole history, as they ran

    def child(self, prompt: str, n: int = 0) -> AgentLoop:
        """The child loop for the ``n``-th pending call with this prompt (made on first
        use): a fresh history holding the prompt alone, the tools minus ``task``."""
        from agentlab.stepper import AgentLoop  # imported late: the stepper imports tools

        loops = self.pending.setdefault(prompt, [])
        while len(loops) <= n:
            tools = _child_tools(self.tools)
            child = AgentLoop(self.client, prompt, tools=tools, max_turns=self.max_rounds)
            loops.append(child)
            child.approve = self.approve
        return loops[n]

    def run(self, prompt: str) -> str:
        """Finish the first child made for ``prompt`` (or run a new one); its final text."""
        loops = self.pending.get(prompt)
        if not loops:  # subagent(), keeping the history it ran on
            messages: list[Any] = [{"role": "user", "content": prompt}]
            self.histories.append(messages)
            _run_child(messages, self.client, self.tools, self.max_rounds, self.approve)
            return final_text(messages)
        child = loops.pop(0)
        if not loops:
            del self.pending[prompt]
        self.histories.append(child.messages)
        parent = PARENT.get() or Parent(None)  # the parent's rules and budget hold here too
        child.approve, child.parent = child.approve or parent.approve, parent
        for usage in child.replies:  # the requests a view stepped before the parent ran it
            parent.record(usage, model_of(child))

        def spend(event: Any) -> None:
            if event.kind == "response":
                _record(parent, self.client, event.data["response"])

        child.subscribe(spend)
        child.run()
        if child.ended == "budget" and parent.spent():
            raise RuntimeError(t("task.budget", what=parent.spent()))
        if child.ended in ("error", "interrupted", "budget"):  # the result says so (is_error)
            raise RuntimeError(child.explanation)
        return final_text(child.messages)

    def clear(self) -> None:
        """Forget the children not run (a call denied, or its prompt edited)."""
        self.pending.clear()


@dataclass
class TaskTool(Tool):
    """The ``task`` tool, with the children a view made for its pending calls."""

    subagents: Subagents = field(default_factory=lambda: Subagents(None, []), repr=False)

    def child(self, prompt: str, n: int = 0) -> AgentLoop:
        """The child loop that the parent's call ``task(prompt)`` will finish (see ``Subagents``)."""
        return self.subagents.child(prompt, n)


def task_tool(
    client: Any, tools: list[Any], max_rounds: int = MAX_ROUNDS, approve: Any = None
) -> TaskTool:
    """The parent's ``task`` tool. ``tools`` is the parent's list (it may hold this
    tool too); each child gets it minus ``task``. ``approve``: asked before each child's
    tool calls (default: whatever the parent asks before its own)."""
    subagents = Subagents(client, tools, max_rounds, approve)

    def run(prompt: str) -> str:
        return subagents.run(prompt)

    schema = {
        "type": "object",
        "properties": {"prompt": {"type": "string", "description": "what the helper should do"}},
        "required": ["prompt"],
    }
    description = (
        "Hand a self-contained piece of work to a helper with a fresh context. "
        "It returns only the helper's final summary."
    )
    return TaskTool("task", description, schema, run, subagents=subagents)
