"""Subagents: a ``task`` tool that runs a second loop and hands back a summary.

The parent calls ``task`` with a prompt. The harness runs a child loop on a
fresh history (the prompt alone), with the parent's tools minus ``task`` (so
the child cannot start children of its own) and at most ``max_rounds`` model
requests. Only the child's final text comes back as the tool's result: the
child's whole history stays here, and the parent's context stays small.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from agentlab.history import blocks
from agentlab.tools.base import Tool, as_tool

__all__ = ["MAX_ROUNDS", "NO_SUMMARY", "final_text", "subagent", "task_tool"]

MAX_ROUNDS = 30
NO_SUMMARY = "(no summary)"


def final_text(messages: list[Any]) -> str:
    """The text of the last assistant message, or NO_SUMMARY when it has none."""
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "assistant":
            words = "".join(b.get("text", "") for b in blocks(message) if b.get("type") == "text")
            return words.strip() or NO_SUMMARY
    return NO_SUMMARY


def subagent(client: Any, prompt: str, tools: Iterable[Any], max_rounds: int = MAX_ROUNDS) -> str:
    """Run a child loop on ``prompt`` alone; return only its final text."""
    from agentlab.loop import agent_loop  # the lesson's loop (imported late: no cycle)

    child_tools = [t for t in tools if as_tool(t).name != "task"]  # no recursion
    messages: list[Any] = [{"role": "user", "content": prompt}]  # a fresh history
    agent_loop(messages, client, tools=child_tools, max_turns=max_rounds)
    return final_text(messages)


def task_tool(client: Any, tools: list[Any], max_rounds: int = MAX_ROUNDS) -> Tool:
    """The parent's ``task`` tool. ``tools`` is the parent's list (it may hold this
    tool too); each child gets it minus ``task``."""

    def run(prompt: str) -> str:
        return subagent(client, prompt, tools, max_rounds)

    schema = {
        "type": "object",
        "properties": {"prompt": {"type": "string", "description": "what the helper should do"}},
        "required": ["prompt"],
    }
    description = (
        "Hand a self-contained piece of work to a helper with a fresh context. "
        "It returns only the helper's final summary."
    )
    return Tool("task", description, schema, run)
