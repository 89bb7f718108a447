"""A todo list the harness keeps for the model, outside the messages.

The model plans with the ``todo`` tool: it adds items and moves each one from
``pending`` to ``in_progress`` to ``completed``. The list lives here, in the
harness, not in the history; the tool's result shows the model the list as it
now stands. The rules keep the plan honest: at most one item in progress, at
most ``MAX_ITEMS`` items, known statuses, and no update to an id that does not
exist (a refused update changes nothing and comes back as an error result).

When the model goes ``REMIND_AFTER`` rounds without calling ``todo``,
``with_reminder`` adds a short text block to the next user message, *after*
its ``tool_result`` blocks: a user message that answers tool calls must begin
with them, any text after them (Anthropic docs, *Implement tool use*,
docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use, 2026),
so a reminder before them is refused.
"""

from __future__ import annotations

from typing import Any

from agentlab.harness import get
from agentlab.tools.base import Tool

__all__ = [
    "MAX_ITEMS",
    "REMINDER",
    "REMIND_AFTER",
    "STATUSES",
    "TodoList",
    "todo_tool",
    "update_items",
    "with_reminder",
]

STATUSES = ("pending", "in_progress", "completed")
MAX_ITEMS = 20
REMIND_AFTER = 3  # rounds without a todo call
REMINDER = "Reminder: update your todo list (the todo tool) before you go on."


def update_items(items: list[dict[str, str]], update: dict[str, Any]) -> list[dict[str, str]]:
    """The list after one update; ``items`` is not changed. Raises ValueError to refuse.

    ``{"text": "..."}`` adds a pending item with the next id;
    ``{"id": "2", "status": "completed"}`` changes one item's status.
    """
    new = [dict(item) for item in items]
    if "id" not in update:
        if len(new) >= MAX_ITEMS:
            raise ValueError(f"the list is full ({MAX_ITEMS} items): finish some first")
        text = str(update.get("text") or "").strip()
        if not text:
            raise ValueError("a new item needs a text")
        new.append({"id": str(len(new) + 1), "text": text, "status": "pending"})
        return new
    status = update.get("status")
    if status not in STATUSES:
        raise ValueError(f"unknown status {status!r}: use one of {', '.join(STATUSES)}")
    found = [item for item in new if item["id"] == str(update["id"])]
    if not found:
        raise ValueError(f"no item with id {update['id']!r}")
    busy = [i for i in new if i["status"] == "in_progress" and i is not found[0]]
    if status == "in_progress" and busy:
        raise ValueError(f"item {busy[0]['id']} is already in progress: finish it first")
    found[0]["status"] = status
    return new


class TodoList:
    """The plan, as the harness holds it."""

    def __init__(self) -> None:
        self.items: list[dict[str, str]] = []
        self.rounds_since = 0  # rounds since the model last called ``todo``
        self.reminded = False  # whether the last round's results got the reminder

    def after_round(self, tool_uses: Any, results: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Count one round (back to 0 when it called ``todo``); return the next user
        message's content: ``results``, with the reminder after them when it is due."""
        called = any(get(use, "name") == "todo" for use in tool_uses)
        self.rounds_since = 0 if called else self.rounds_since + 1
        content = with_reminder(results, self.rounds_since)
        self.reminded = len(content) > len(results)
        return content

    def saved(self) -> tuple[list[dict[str, str]], int, bool]:
        """The list as it is now, for ``restore`` (``AgentLoop.reset`` puts it back)."""
        return [dict(i) for i in self.items], self.rounds_since, self.reminded

    def restore(self, saved: tuple[list[dict[str, str]], int, bool]) -> None:
        items, self.rounds_since, self.reminded = saved
        self.items = [dict(i) for i in items]

    def update(self, update: dict[str, Any]) -> str:
        """Apply one update; return the list as the model will read it."""
        self.items = update_items(self.items, update)
        return self.render()

    def render(self) -> str:
        marks = {"pending": "[ ]", "in_progress": "[>]", "completed": "[x]"}
        lines = [f"{marks[i['status']]} {i['id']}. {i['text']}" for i in self.items]
        return "\n".join(lines) or "(the list is empty)"


def todo_tool(todos: TodoList) -> Tool:
    """The ``todo`` tool, writing to ``todos``. A refused update raises ValueError,
    which the loop turns into an ``is_error`` result the model reads."""

    def run(id: str | None = None, text: str | None = None, status: str | None = None) -> str:
        update = {k: v for k, v in {"id": id, "text": text, "status": status}.items() if v}
        return todos.update(update)

    schema = {
        "type": "object",
        "properties": {
            "id": {"type": "string", "description": "the item to change (leave out to add)"},
            "text": {"type": "string", "description": "a new item's text"},
            "status": {"type": "string", "enum": list(STATUSES)},
        },
    }
    description = (
        "Keep your plan. Add an item with {text}; change one with {id, status}. "
        f"At most one item in progress, at most {MAX_ITEMS} items."
    )
    return Tool("todo", description, schema, run)


def with_reminder(
    results: list[dict[str, Any]], rounds_since_todo: int, text: str = REMINDER
) -> list[dict[str, Any]]:
    """The next user message's content: every tool_result first, then the reminder
    when the model has gone ``REMIND_AFTER`` rounds without calling ``todo``."""
    content = list(results)
    if rounds_since_todo >= REMIND_AFTER:
        content.append({"type": "text", "text": text})  # after the results, never before
    return content
