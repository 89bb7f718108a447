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


def _crowd(calls: int):
    """A stand-in model: as a parent it starts ``calls`` helpers in one reply; as a helper
    it asks for a command forever; each reply reports 1,000 tokens."""
    usage = {"input_tokens": 600, "output_tokens": 400}

    def reply(request):
        if "task" not in [t["name"] for t in request.get("tools", [])]:  # a helper
            return make_message([tool_use("bash", {"command": "ls"})], usage=usage)
        if len(request["messages"]) == 1:  # the parent, first request
            uses = [
                tool_use("task", {"prompt": f"Part {n}."}, id=f"toolu_p{n}") for n in range(calls)
            ]
            return make_message(uses, usage=usage)
        return make_message([text("Done.")], usage=usage)

    return ScriptedClient(reply)


def _helpers(client, ran):
    tools: list = [_recording_bash(ran)]
    task = task_tool(client, tools)
    tools.append(task)
    return tools, task


def test_helpers_spend_from_their_parents_token_budget():
    """A reply with 20 task calls, each helper a model that never stops: without a budget
    that is 1 + 20 x 30 requests. With the parent's max_total_tokens, every helper request
    counts in the parent's budget and the helpers stop once it is spent."""
    from agentlab.loop import agent_loop

    ran: list = []
    client = _crowd(20)
    tools, _ = _helpers(client, ran)
    messages: list = [{"role": "user", "content": "Look everywhere."}]
    run = agent_loop(messages, client, tools=tools, max_total_tokens=10_000)
    assert run.ended == "budget" and run.turns == 1
    # the parent's request (1,000 tokens) and nine helper requests reach 10,000: no more sent
    assert len(client.requests) == 10 and len(run.helpers_usage) == 9
    assert run.usage["input_tokens"] == 600  # ``usage`` stays the parent's own
    assert {h["input_tokens"] for h in run.helpers_usage} == {600}
    results = messages[2]["content"]
    assert len(results) == 20 and all(r["is_error"] for r in results)
    assert "parent's budget is used up" in results[0]["content"]
    assert validate(messages) == []


def test_a_stepper_parent_counts_its_helpers_and_a_helper_stepped_by_hand_spends_too():
    from agentlab.stepper import AgentLoop

    ran: list = []
    client = _crowd(3)
    tools, task = _helpers(client, ran)
    loop = AgentLoop(client, "Look everywhere.", tools=tools, max_total_tokens=6_000)
    loop.step(), loop.step()  # request, decide: the three task calls wait for execute
    child = task.child("Part 0.")  # what LoopView makes for a pending call
    child.step(), child.step(), child.step(), child.step()  # one helper turn, by hand
    assert child.turns == 1 and loop.helpers_usage == []
    loop.run()
    # the parent's request, the helper's by hand, and four more under the parent's call
    assert len(client.requests) == 6 and len(loop.helpers_usage) == 5
    assert loop.ended == "budget" and child.ended == "budget"
    assert loop.result().helpers_usage == loop.helpers_usage
    assert loop.usage["input_tokens"] == 600 and loop.turns == 1


def test_a_cost_budget_prices_each_helper_request_by_the_model_that_answered():
    from agentlab.history import LoopResult
    from agentlab.usage import over_budget

    run = LoopResult([], model="claude-sonnet-5-5")
    helper = {"input_tokens": 50_000, "output_tokens": 0, "model": "claude-haiku-5-5"}
    run.helpers_usage.append(helper)
    # models.json: Haiku 5.5 at $0.10 per million input tokens (prompts up to 100k), so
    # $0.005; priced as the parent's Sonnet 5.5 it would be $0.10
    assert over_budget(run, max_cost=0.004) != "" and over_budget(run, max_cost=0.006) == ""
    run.helpers_usage.append({"input_tokens": 10, "output_tokens": 0, "model": "no-such-model"})
    assert "no-such-model" in over_budget(run, max_cost=5.0)  # no price: stop, do not guess
