"""The series' harness pieces: the todo list with its reminder, and the task tool."""

from __future__ import annotations

import pytest

from agentlab.exercises import check
from agentlab.fakeapi.offline import ScriptedClient, make_message, text, tool_use
from agentlab.history import validate
from agentlab.tools.base import Tool
from agentlab.tools.task import NO_SUMMARY, subagent, task_tool
from agentlab.tools.todo import (
    MAX_ITEMS,
    REMINDER,
    TodoList,
    todo_tool,
    update_items,
    with_reminder,
)

FAST = 0.5


def test_the_harness_pieces_pass_the_exercises_own_checkers():
    assert check("todo_update", update_items, timeout=FAST).passed
    assert check("todo_reminder", with_reminder, timeout=FAST).passed


def test_the_todo_tool_keeps_the_plan_outside_the_messages():
    todos = TodoList()
    todo = todo_tool(todos)
    assert isinstance(todo, Tool) and todo.definition["name"] == "todo"
    assert todo.run({"text": "Read agent.py"}) == "[ ] 1. Read agent.py"
    todo.run({"text": "Count its lines"})
    assert todo.run({"id": "1", "status": "in_progress"}).splitlines()[0] == "[>] 1. Read agent.py"
    with pytest.raises(ValueError, match="already in progress"):
        todo.run({"id": "2", "status": "in_progress"})
    with pytest.raises(ValueError, match="no item with id '9'"):
        todo.run({"id": "9", "status": "completed"})
    with pytest.raises(ValueError, match="unknown status 'done'"):
        todo.run({"id": "1", "status": "done"})
    assert [i["status"] for i in todos.items] == [
        "in_progress",
        "pending",
    ]  # refusals changed nothing
    for k in range(MAX_ITEMS - 2):
        todos.update({"text": f"step {k}"})
    with pytest.raises(ValueError, match="full"):
        todos.update({"text": "one too many"})
    assert len(todos.items) == MAX_ITEMS


def test_the_reminder_comes_after_the_results_and_the_api_would_refuse_it_before():
    # tool_result blocks first in the user message, any text after them (Anthropic docs,
    # Implement tool use, docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use, 2026)
    call = {"type": "tool_use", "id": "toolu_01Ls", "name": "bash", "input": {"command": "ls"}}
    result = {"type": "tool_result", "tool_use_id": "toolu_01Ls", "content": "README.md"}
    head = [{"role": "user", "content": "Plan it."}, {"role": "assistant", "content": [call]}]
    assert with_reminder([result], 2) == [result]
    content = with_reminder([result], 3)
    assert content == [result, {"type": "text", "text": REMINDER}]
    assert validate([*head, {"role": "user", "content": content}]) == []
    backwards = [content[1], content[0]]
    problems = validate([*head, {"role": "user", "content": backwards}])
    assert problems and problems[0].rule == "results_first"


def bash_tool() -> tuple[Tool, list[str]]:
    ran: list[str] = []

    def run(command: str) -> str:
        ran.append(command)
        return f"(output of {command})"

    schema = {"type": "object", "properties": {"command": {"type": "string"}}}
    return Tool("bash", "Run a command.", schema, run), ran


def test_a_subagent_runs_on_a_fresh_history_without_task_and_returns_its_final_text():
    bash, ran = bash_tool()
    client = ScriptedClient(
        [
            make_message([text("Let me look."), tool_use("bash", {"command": "cat agent.py"})]),
            make_message("agent.py runs the loop."),
        ]
    )
    tools: list[object] = [bash]
    task = task_tool(client, tools)
    tools.append(task)  # the parent has task; the child gets the list without it
    assert task.run({"prompt": "What does agent.py do?"}) == "agent.py runs the loop."
    assert ran == ["cat agent.py"]
    first = client.requests[0]
    assert first["messages"] == [{"role": "user", "content": "What does agent.py do?"}]
    assert all([t["name"] for t in r["tools"]] == ["bash"] for r in client.requests)


def test_a_subagent_stops_at_its_round_limit_and_says_when_it_has_no_summary():
    bash, ran = bash_tool()

    def endless(params):
        n = len(params["messages"])
        return make_message([tool_use("bash", {"command": "ls"}, id=f"toolu_01E{n:03d}")])

    client = ScriptedClient(endless)
    assert subagent(client, "Look around.", [bash], max_rounds=4) == NO_SUMMARY
    assert len(client.requests) == 4 and len(ran) <= 4
    quiet = ScriptedClient([make_message([], "end_turn")])
    assert subagent(quiet, "Say nothing.", [bash]) == NO_SUMMARY


def test_the_loop_given_a_todo_list_offers_the_tool_and_reminds_after_the_results():
    from agentlab.loop import agent_loop, steps

    bash_call = [tool_use("bash", {"command": "true"})]
    replies = [
        [tool_use("todo", {"text": "Look around"})],
        bash_call,
        bash_call,
        bash_call,  # the third round without todo: the reminder is added after its result
        [tool_use("todo", {"id": "1", "status": "completed"})],
        "Done.",
    ]
    client = ScriptedClient(replies)
    todos = TodoList()
    messages: list = [{"role": "user", "content": "Plan, then look around."}]
    kinds = [e.kind for e in steps(messages, client, todos=todos)]
    assert kinds.count("reminder") == 1
    assert [t["name"] for t in client.requests[0]["tools"]] == ["bash", "todo"]
    reminded = messages[8]["content"]
    assert [b["type"] for b in reminded] == ["tool_result", "text"]
    assert reminded[-1]["text"] == REMINDER
    assert todos.items == [{"id": "1", "text": "Look around", "status": "completed"}]
    assert todos.rounds_since == 0 and validate(messages) == []
    # without a todo list the same loop adds nothing
    plain: list = [{"role": "user", "content": "Look around."}]
    agent_loop(plain, ScriptedClient([bash_call, bash_call, bash_call, bash_call, "Done."]))
    assert all(b["type"] == "tool_result" for m in plain[2::2] for b in m["content"])


def test_reset_puts_the_plan_back_as_it_was_when_the_loop_was_made():
    from agentlab.stepper import AgentLoop

    todos = TodoList()
    todos.update({"text": "Read the task"})  # a plan written before the loop starts
    look = Tool("look", "Look.", {"type": "object", "properties": {}}, fn=lambda: "ok")
    replies = [
        [tool_use("todo", {"id": "1", "status": "completed"})],
        [tool_use("look", {})],
        "Done.",
    ]
    loop = AgentLoop(ScriptedClient(replies), "Go.", todos=todos, tools=[look])
    loop.run()
    assert todos.items[0]["status"] == "completed" and todos.rounds_since == 1
    loop.reset()
    assert todos.items == [{"id": "1", "text": "Read the task", "status": "pending"}]
    assert todos.rounds_since == 0 and not todos.reminded and len(loop.messages) == 1


def _recording_bash(ran: list):
    def bash(command: str) -> str:
        ran.append(command)
        return "ok"

    return Tool(
        "bash",
        "Run a command.",
        {"type": "object", "properties": {"command": {"type": "string"}}},
        bash,
    )


def test_a_helper_asks_what_its_parent_asks_so_a_task_cannot_get_round_the_rules():
    from agentlab.loop import agent_loop
    from agentlab.tools.policy import Verdict

    ran: list = []
    replies = [
        [tool_use("task", {"prompt": "Tidy up."})],  # the parent hands the work on
        [tool_use("bash", {"command": "rm -rf data"})],  # the helper tries what the parent may not
        "Could not tidy up.",  # the helper's summary
        "The helper could not do it.",
    ]
    client = ScriptedClient(replies)
    asked: list = []

    def approve(use):
        asked.append(use.input)
        command = use.input.get("command", "")
        return Verdict.deny("no rm") if command.startswith("rm") else Verdict.approve()

    bash = _recording_bash(ran)
    tools = [bash]
    task = task_tool(client, tools)
    tools.append(task)
    messages: list = [{"role": "user", "content": "Clean the folder."}]
    agent_loop(messages, client, tools=tools, approve=approve)
    assert ran == []  # the helper's rm was asked about and denied, never run
    assert {"command": "rm -rf data"} in asked and {"prompt": "Tidy up."} in asked
    child = task.subagents.histories[0]
    denied = child[2]["content"][0]
    assert denied["is_error"] is True and "no rm" in denied["content"]
    assert validate(messages) == [] and validate(child) == []


def test_a_task_tool_given_its_own_approve_uses_it_for_the_helper():
    from agentlab.loop import agent_loop
    from agentlab.tools.policy import Verdict

    ran: list = []
    replies = [
        [tool_use("task", {"prompt": "Look."})],
        [tool_use("bash", {"command": "ls"})],
        "Saw nothing.",
        "Done.",
    ]
    client = ScriptedClient(replies)
    tools: list = [_recording_bash(ran)]
    tools.append(task_tool(client, tools, approve=lambda use: Verdict.deny("helpers may not")))
    agent_loop([{"role": "user", "content": "Look around."}], client, tools=tools)
    assert ran == []  # the parent approves everything; the helper's own rule denied it
