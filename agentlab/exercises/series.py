"""The scenarios of the series' exercises: a todo list for planning, and subagents.

``todo_update`` and ``todo_reminder`` are checked on plain lists; ``subagent`` on
a scripted child model (``ExerciseClient``) and fake tools that only record
their input. The mistakes they catch: two items in progress, an unknown id
accepted, a full list grown, a bad status kept; the reminder before the
``tool_result`` blocks (the API refuses that message), or at the wrong count;
the child given more than the prompt, given ``task``, left without a round
limit, or returning its whole history instead of its final text.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentlab.exercises.sandbox import Crashed, Stop, describe_error
from agentlab.exercises.scenarios import (
    ExerciseClient,
    FakeBash,
    Trial,
    bash_call,
    final,
    judge_history,
    kind,
    reply,
    show,
)
from agentlab.fakeapi.offline import make_message, text, tool_use
from agentlab.history import as_dict, blocks
from agentlab.i18n import t

__all__ = ["FakeTool", "build"]

Body = Callable[[Trial], None]

# ===========================================================================
# 8. todo_update(items, update) -> list
# ===========================================================================


def _items(*statuses: str) -> list[dict[str, str]]:
    texts = ["Read agent.py", "Count its lines", "Write the summary", "Check the tests"]
    return [
        {"id": str(k + 1), "text": texts[k % len(texts)], "status": s}
        for k, s in enumerate(statuses)
    ]


def _raised(trial: Trial) -> str | None:
    """``Type: message`` of what the call raised, or None."""
    error = trial.outcome.error
    if error is None:
        return None
    return str(error) if isinstance(error, Crashed) else describe_error(error)


def _todo_ok(items: list[dict[str, str]], update: dict[str, Any], wanted: list[Any]) -> Body:
    def body(trial: Trial) -> None:
        given, before = as_dict(items), as_dict(items)
        out = trial.call(given, dict(update))
        if given != before:
            trial.fail(t("ex.expect.todo_unchanged"), show(given), "todo_copy")
        if not isinstance(out, list):
            trial.fail(show(wanted), kind(out))
        if as_dict(out) != wanted:
            trial.fail(show(wanted), show(out))

    return body


def _todo_refused(items: list[dict[str, str]], update: dict[str, Any]) -> Body:
    def body(trial: Trial) -> None:
        given, before = as_dict(items), as_dict(items)
        outcome = trial.run(given, dict(update))
        if outcome.timed_out:
            trial.returned(outcome)
        raised = _raised(trial)
        if raised is None:
            trial.fail(t("ex.expect.refused"), t("ex.happened.accepted", value=show(outcome.value)))
        if not raised.startswith("ValueError"):
            trial.returned(outcome)  # a crash, not a refusal: report it as one
        if given != before:
            trial.fail(t("ex.expect.todo_unchanged"), show(given), "todo_copy")

    return body


def _todo_scenarios() -> list[tuple[str, str, Body]]:
    full = _items(*["pending"] * 20)
    return [
        (
            "add_first",
            "todo_add",
            _todo_ok([], {"text": "Read agent.py"}, _items("pending")),
        ),
        (
            "add_next",
            "todo_add",
            _todo_ok(
                _items("completed", "pending"),
                {"text": "Write the summary"},
                _items("completed", "pending", "pending"),
            ),
        ),
        (
            "start_one",
            "todo_statuses",
            _todo_ok(
                _items("pending", "pending"),
                {"id": "1", "status": "in_progress"},
                _items("in_progress", "pending"),
            ),
        ),
        (
            "finish_and_start",
            "todo_statuses",
            _todo_ok(
                _items("completed", "in_progress", "pending"),
                {"id": "2", "status": "completed"},
                _items("completed", "completed", "pending"),
            ),
        ),
        (
            "two_in_progress",
            "todo_one_in_progress",
            _todo_refused(_items("in_progress", "pending"), {"id": "2", "status": "in_progress"}),
        ),
        (
            "same_in_progress",
            "todo_one_in_progress",
            _todo_ok(
                _items("in_progress", "pending"),
                {"id": "1", "status": "in_progress"},
                _items("in_progress", "pending"),
            ),
        ),
        (
            "unknown_id",
            "todo_known_ids",
            _todo_refused(_items("pending", "pending"), {"id": "9", "status": "completed"}),
        ),
        (
            "bad_status",
            "todo_statuses",
            _todo_refused(_items("pending"), {"id": "1", "status": "done"}),
        ),
        ("full_list", "todo_bounded", _todo_refused(full, {"text": "One more thing"})),
    ]


# ===========================================================================
# 9. todo_reminder(results, rounds_since_todo) -> list
# ===========================================================================


def _calls(n: int) -> list[dict[str, Any]]:
    commands = ["ls", "wc -l agent.py", "date"]
    return [bash_call(commands[k], f"toolu_01R{k}") for k in range(n)]


def _answers(n: int) -> list[dict[str, Any]]:
    return [
        {"type": "tool_result", "tool_use_id": f"toolu_01R{k}", "content": f"(output {k})"}
        for k in range(n)
    ]


def _reminder(calls: int, rounds: int) -> Body:
    remind = rounds >= 3

    def body(trial: Trial) -> None:
        given = _answers(calls)
        out = trial.call(given, rounds)
        if given != _answers(calls):  # the harness still holds that list: it must stay as it was
            trial.fail(
                show(_answers(calls)),
                t("ex.happened.results_changed", value=show(given)),
                "keep_results",
            )
        if not isinstance(out, list):
            trial.fail(t("ex.expect.content_list"), kind(out))
        parts = as_dict(out)
        results = [b for b in parts if isinstance(b, dict) and b.get("type") == "tool_result"]
        others = [b for b in parts if not (isinstance(b, dict) and b.get("type") == "tool_result")]
        first_other = next((k for k, b in enumerate(parts) if b in others), len(parts))
        if results and first_other < len(results):  # something before a tool_result
            trial.fail(
                t("ex.expect.results_then_reminder"),
                t("ex.happened.before_results", value=show(parts[first_other])),
                "reminder_after",
            )
        if results != _answers(calls):
            trial.fail(show(_answers(calls)), show(results), "keep_results")
        if remind and not others:
            trial.fail(
                t("ex.expect.reminder", n=rounds), t("ex.happened.no_reminder"), "remind_when"
            )
        if not remind and others:
            trial.fail(
                t("ex.expect.no_reminder", n=rounds),
                t("ex.happened.extra", value=show(others)),
                "remind_when",
            )
        if others and not all(_names_the_list(b) for b in others):
            trial.fail(t("ex.expect.text_block"), show(others[0]), "reminder_says")
        history = [
            {"role": "user", "content": "Plan and do the task."},
            {"role": "assistant", "content": as_dict(reply(*_calls(calls)).content)},
            {"role": "user", "content": parts},
        ]
        judge_history(trial, history, pending_ok=False, default="reminder_after")

    return body


def _names_the_list(block: Any) -> bool:
    """A text block whose text speaks of the todo list (in English or Chinese)."""
    if not (isinstance(block, dict) and block.get("type") == "text"):
        return False
    text = str(block.get("text", "")).lower()
    return "todo" in text or "to-do" in text or "待办" in text


def _reminder_scenarios() -> list[tuple[str, str, Body]]:
    return [
        ("just_called", "remind_when", _reminder(1, 0)),
        ("two_rounds", "remind_when", _reminder(2, 2)),
        ("third_round", "reminder_after", _reminder(1, 3)),
        ("parallel_results", "reminder_after", _reminder(3, 3)),
        ("long_silence", "remind_when", _reminder(2, 7)),
    ]


# ===========================================================================
# 10. subagent(client, prompt, tools) -> str
# ===========================================================================


class FakeTool(FakeBash):
    """A tool the harness runs: ``run(tool_input) -> str``; records each input."""

    def __call__(self, tool_input: Any) -> str:
        self.calls.append(tool_input)
        if len(self.calls) > self.limit:
            raise Stop("the tool was called too often")
        command = tool_input.get("command") if isinstance(tool_input, dict) else tool_input
        return f"(output of {command})"


def _definition(name: str, field: str) -> dict[str, Any]:
    return {
        "name": name,
        "description": f"The {name} tool.",
        "input_schema": {
            "type": "object",
            "properties": {field: {"type": "string"}},
            "required": [field],
        },
    }


def child_tools() -> dict[str, tuple[dict[str, Any], FakeTool]]:
    return {
        "bash": (_definition("bash", "command"), FakeTool()),
        "task": (_definition("task", "prompt"), FakeTool()),
    }


PROMPT = "Find out what agent.py does and summarise it in one sentence."
SUMMARY = "agent.py runs the agent loop with one bash tool."
MAX_ROUNDS = 30


def _endless(params: dict[str, Any]) -> Any:
    n = len(params.get("messages") or [])
    return reply(bash_call("ls", f"toolu_01E{n:03d}"))


def _subagent(
    script: list[Any] | Callable[[dict[str, Any]], Any],
    wanted: str,
    commands: list[str],
    requests: int,
    twice: tuple[str, int] | None = None,
) -> Body:
    """``commands`` and ``requests``: what all calls together must run and ask; ``twice``:
    a second prompt, and the index of the request that must start its fresh history."""

    def body(trial: Trial) -> None:
        limit = len(script) if isinstance(script, list) else requests
        client = ExerciseClient(script, limit=limit)
        tools = child_tools()
        bash, task = tools["bash"][1], tools["task"][1]
        outcome = trial.run(client, PROMPT, tools)
        if twice is not None and outcome.error is None and not outcome.timed_out:
            outcome = trial.run(client, twice[0], tools)
        if len(client.sent) > MAX_ROUNDS:
            trial.fail(
                t("ex.expect.requests", n=MAX_ROUNDS),
                t("ex.happened.requests", n=len(client.sent)),
                "round_limit",
            )
        out = trial.returned(outcome)
        starts = [(0, PROMPT)] + ([(twice[1], twice[0])] if twice else [])
        for k, prompt in starts:
            if k >= len(client.sent):
                trial.fail(t("ex.expect.requests", n=requests), t("ex.happened.requests", n=k))
            fresh = [{"role": "user", "content": prompt}]
            sent = client.sent[k]
            if not (
                len(sent) == 1
                and as_dict(sent[0]).get("role") == "user"
                and _text(as_dict(sent[0]).get("content")) == prompt
            ):
                trial.fail(
                    show(fresh), t("ex.happened.first_request", value=show(sent)), "fresh_history"
                )
        for sent in client.tools_sent:
            names = [d.get("name") for d in sent or [] if isinstance(d, dict)]
            if "task" in names:
                trial.fail(
                    t("ex.expect.no_task"), t("ex.happened.tools", value=show(names)), "no_task"
                )
        if sorted(tools) != ["bash", "task"]:
            trial.fail(
                t("ex.expect.tools_kept"),
                t("ex.happened.tools_changed", value=show(sorted(tools))),
                "no_task",
            )
        if task.calls:
            trial.fail(t("ex.expect.no_task"), t("ex.happened.task_ran"), "no_task")
        if client.rejected:
            trial.fail(
                t("ex.expect.valid_history"), t("ex.happened.api", error=client.rejected[0]), "loop"
            )
        ran = [c.get("command") if isinstance(c, dict) else c for c in bash.calls]
        if ran != commands:
            trial.fail(
                t("ex.expect.ran", value=show(commands)),
                t("ex.happened.ran", value=show(ran)),
                "loop",
            )
        if not isinstance(out, str):
            trial.fail(show(wanted), kind(out), "final_text")
        if out != wanted:
            trial.fail(show(wanted), t("ex.happened.returned", value=show(out)), "final_text")
        if len(client.sent) != requests:
            trial.fail(
                t("ex.expect.requests", n=requests), t("ex.happened.requests", n=len(client.sent))
            )

    return body


def _text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    parts = blocks({"content": content}) if isinstance(content, list) else []
    if parts and all(b.get("type") == "text" for b in parts):
        return "".join(str(b.get("text")) for b in parts)
    return None


def _subagent_scenarios() -> list[tuple[str, str, Body]]:
    look = reply(text("Let me look first."), bash_call("cat agent.py", "toolu_01Ca"))
    return [
        ("answers_at_once", "final_text", _subagent([final(SUMMARY)], SUMMARY, [], 1)),
        (
            "one_tool_round",
            "final_text",
            _subagent([look, final(SUMMARY)], SUMMARY, ["cat agent.py"], 2),
        ),
        (
            "asks_for_task",
            "no_task",
            _subagent(
                [
                    reply(tool_use("task", {"prompt": "Read it for me."}, id="toolu_01Tk")),
                    final(SUMMARY),
                ],
                SUMMARY,
                [],
                2,
            ),
        ),
        (
            "no_summary",
            "final_text",
            _subagent([look, make_message([], "end_turn")], "(no summary)", ["cat agent.py"], 2),
        ),
        (
            "fresh_each_time",
            "fresh_history",
            _subagent(
                [look, final(SUMMARY), final("It has 42 lines.")],
                "It has 42 lines.",
                ["cat agent.py"],
                3,
                twice=("How many lines has agent.py?", 2),
            ),
        ),
        ("round_limit", "round_limit", _subagent(_endless, "(no summary)", ["ls"] * 30, 30)),
    ]


def build() -> dict[str, list[tuple[str, str, Body]]]:
    return {
        "todo_update": _todo_scenarios(),
        "todo_reminder": _reminder_scenarios(),
        "subagent": _subagent_scenarios(),
    }
