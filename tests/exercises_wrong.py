"""Wrong answers students really write, one per function, with the scenario that
must catch it and the lesson idea its hint must name.

``tests/test_exercises.py`` checks each of them: the report must fail, list
that scenario among its failures, and give that idea's hint.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

MODEL = "claude-sonnet-5-5"


@dataclass(frozen=True)
class Wrong:
    exercise: str
    scenario: str  # must be among the failures
    idea: str  # the idea that failure's hint names
    fn: Callable[..., Any]
    diff: str = ""  # for a change of the reference answer: the lines changed

    @property
    def id(self) -> str:
        return f"{self.exercise}-{self.fn.__name__}"


WRONG: list[Wrong] = []


def wrong(
    exercise: str, scenario: str, idea: str
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        WRONG.append(Wrong(exercise, scenario, idea, fn))
        return fn

    return register


# ---------------------------------------------------------------------------
# first_message(query)
# ---------------------------------------------------------------------------


@wrong("first_message", "simple", "history")
def returns_the_whole_history(query):
    return [{"role": "user", "content": query}]


@wrong("first_message", "simple", "history")
def system_role(query):
    return {"role": "system", "content": query}


@wrong("first_message", "simple", "history")
def text_key_instead_of_content(query):
    return {"role": "user", "text": query}


@wrong("first_message", "simple", "history")
def json_string(query):
    return json.dumps({"role": "user", "content": query})


@wrong("first_message", "simple", "history")
def adds_a_prefix(query):
    return {"role": "user", "content": f"Task: {query}"}


@wrong("first_message", "exact_text", "history")
def strips_the_query(query):
    return {"role": "user", "content": [{"type": "text", "text": query.strip()}]}


_FIRST: dict[str, Any] = {"role": "user"}


@wrong("first_message", "new_each_time", "history")
def one_shared_dict(query):
    _FIRST["content"] = query
    return _FIRST


@wrong("first_message", "new_each_time", "history")
def returns_nothing(query):
    message = {"role": "user", "content": query}
    print(message)  # shown, but not returned


# ---------------------------------------------------------------------------
# decide(response)
# ---------------------------------------------------------------------------


@wrong("decide", "tool_use", "model_decides")
def reads_the_first_block(response):  # the first block is a thinking block on today's model
    if response.content and response.content[0].type == "tool_use":
        return "execute"
    return "continue" if response.stop_reason == "pause_turn" else "stop"


@wrong("decide", "cut_off_call", "cut_off")
def execute_when_a_tool_use_block_appears(response):
    if any(block.type == "tool_use" for block in response.content):
        return "execute"
    return "stop"


@wrong("decide", "refusal", "stop_rule")
def stop_only_on_end_turn(response):
    if response.stop_reason == "end_turn":
        return "stop"
    return "execute"


@wrong("decide", "pause_turn", "pause_turn")
def pause_turn_forgotten(response):
    return "execute" if response.stop_reason == "tool_use" else "stop"


@wrong("decide", "pause_turn", "pause_turn")
def pause_turn_runs_tools(response):
    return "execute" if response.stop_reason in ("tool_use", "pause_turn") else "stop"


@wrong("decide", "tool_use", "model_decides")
def returns_a_bool(response):
    return response.stop_reason == "tool_use"


@wrong("decide", "end_turn", "stop_rule")
def reads_the_reply_like_a_dict(response):
    return "execute" if response["stop_reason"] == "tool_use" else "stop"


# ---------------------------------------------------------------------------
# tool_result(block, output)
# ---------------------------------------------------------------------------


@wrong("tool_result", "basic", "pair_by_id")
def id_key_instead_of_tool_use_id(block, output):
    return {"type": "tool_result", "id": block.id, "content": output}


@wrong("tool_result", "basic", "pair_by_id")
def pairs_by_tool_name(block, output):
    return {"type": "tool_result", "tool_use_id": block.name, "content": output}


@wrong("tool_result", "pairs_by_id", "pair_by_id")
def first_id_for_every_result(block, output):
    return {"type": "tool_result", "tool_use_id": "toolu_01Dt", "content": output}


@wrong("tool_result", "basic", "result_shape")
def wraps_it_in_a_user_message(block, output):
    return {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": block.id, "content": output}],
    }


@wrong("tool_result", "basic", "result_shape")
def echoes_the_command(block, output):
    return {"type": "tool_result", "tool_use_id": block.id, "content": block.input["command"]}


@wrong("tool_result", "output_unchanged", "result_shape")
def strips_the_output(block, output):
    return {"type": "tool_result", "tool_use_id": block.id, "content": output.strip()}


# ---------------------------------------------------------------------------
# run_tools(response, run_bash)
# ---------------------------------------------------------------------------


@wrong("run_tools", "parallel_calls", "every_call")
def only_the_first_tool_use(response, run_bash):
    block = next(b for b in response.content if b.type == "tool_use")
    return [
        {
            "type": "tool_result",
            "tool_use_id": block.id,
            "content": run_bash(block.input["command"]),
        }
    ]


@wrong("run_tools", "unknown_tool", "unknown_tool")
def runs_every_tool_with_bash(response, run_bash):
    return [
        {"type": "tool_result", "tool_use_id": b.id, "content": run_bash(b.input["command"])}
        for b in response.content
        if b.type == "tool_use"
    ]


@wrong("run_tools", "unknown_tool", "unknown_tool")
def skips_unknown_tools(response, run_bash):
    return [
        {"type": "tool_result", "tool_use_id": b.id, "content": run_bash(b.input["command"])}
        for b in response.content
        if b.type == "tool_use" and b.name == "bash"
    ]


@wrong("run_tools", "lookalike_tool", "unknown_tool")
def tells_tools_apart_by_their_input(response, run_bash):
    results = []
    for b in response.content:
        if b.type != "tool_use":
            continue
        if "command" in b.input:  # any tool with a command is taken for bash
            content, is_error = run_bash(b.input["command"]), False
        else:
            content, is_error = f"Unknown tool {b.name!r}.", True
        results.append(
            {"type": "tool_result", "tool_use_id": b.id, "content": content, "is_error": is_error}
        )
    return results


@wrong("run_tools", "failing_tool", "tool_fails")
def lets_a_failing_tool_crash(response, run_bash):
    results = []
    for b in response.content:
        if b.type != "tool_use":
            continue
        if b.name != "bash":
            error = f"Unknown tool {b.name!r}."
            results.append({"type": "tool_result", "tool_use_id": b.id, "content": error})
            results[-1]["is_error"] = True
            continue
        output = run_bash(b.input["command"])  # no try: a timeout ends the whole loop
        results.append({"type": "tool_result", "tool_use_id": b.id, "content": output})
    return results


@wrong("run_tools", "one_call", "pair_by_id")
def counts_its_own_ids(response, run_bash):
    calls = [b for b in response.content if b.type == "tool_use"]
    return [
        {
            "type": "tool_result",
            "tool_use_id": f"toolu_{i}",
            "content": run_bash(b.input["command"]),
        }
        for i, b in enumerate(calls)
    ]


@wrong("run_tools", "one_call", "result_shape")
def returns_a_user_message(response, run_bash):
    results = [
        {"type": "tool_result", "tool_use_id": b.id, "content": run_bash(b.input["command"])}
        for b in response.content
        if b.type == "tool_use"
    ]
    return {"role": "user", "content": results}


@wrong("run_tools", "text_between_calls", "only_tool_use")
def keeps_the_text_blocks(response, run_bash):
    out = []
    for b in response.content:
        if b.type == "tool_use":
            out.append(
                {
                    "type": "tool_result",
                    "tool_use_id": b.id,
                    "content": run_bash(b.input["command"]),
                }
            )
        else:
            out.append({"type": "text", "text": b.text})
    return out


@wrong("run_tools", "one_call", "command")
def passes_the_input_dict(response, run_bash):
    out = []
    for b in response.content:
        if b.type == "tool_use":
            try:
                output = run_bash(b.input)  # the whole input dict, not its "command"
                out.append({"type": "tool_result", "tool_use_id": b.id, "content": output})
            except Exception as e:
                error = {"type": "tool_result", "tool_use_id": b.id, "content": str(e)}
                out.append({**error, "is_error": True})
    return out


# ---------------------------------------------------------------------------
# append_results(messages, results)
# ---------------------------------------------------------------------------


@wrong("append_results", "one_result", "results_user")
def results_in_an_assistant_message(messages, results):
    messages.append({"role": "assistant", "content": results})


@wrong("append_results", "parallel_results", "one_message")
def one_message_per_result(messages, results):
    for result in results:
        messages.append({"role": "user", "content": [result]})


@wrong("append_results", "one_result", "in_place")
def returns_a_new_list(messages, results):
    return messages + [{"role": "user", "content": results}]


@wrong("append_results", "one_result", "results_first")
def text_before_the_results(messages, results):
    messages.append(
        {"role": "user", "content": [{"type": "text", "text": "Here are the results:"}] + results}
    )


@wrong("append_results", "one_result", "results_user")
def appends_the_bare_list(messages, results):
    messages.append(results)


@wrong("append_results", "one_result", "results_user")
def extends_with_the_blocks(messages, results):
    messages.extend(results)


@wrong("append_results", "one_result", "results_user")
def adds_them_to_the_assistant_message(messages, results):
    messages[-1]["content"].extend(results)


@wrong("append_results", "parallel_results", "results_user")
def drops_is_error(messages, results):
    clean = [
        {"type": r["type"], "tool_use_id": r["tool_use_id"], "content": r["content"]}
        for r in results
    ]
    messages.append({"role": "user", "content": clean})


# ---------------------------------------------------------------------------
# agent_loop(client, messages, tools, run_bash)
# ---------------------------------------------------------------------------


def _ask(client, messages, tools):
    return client.messages.create(model=MODEL, max_tokens=8000, messages=messages, tools=tools)


def _results(response, run_bash, ids=None):
    calls = [b for b in response.content if b.type == "tool_use"]
    return [
        {
            "type": "tool_result",
            "tool_use_id": ids(i) if ids else b.id,
            "content": run_bash(b.input["command"]),
        }
        for i, b in enumerate(calls)
    ]


@wrong("agent_loop", "refusal", "stop_rule")
def loop_stops_only_on_end_turn(client, messages, tools, run_bash):
    while True:
        response = _ask(client, messages, tools)
        messages.append({"role": "assistant", "content": response.content})
        if response.stop_reason == "end_turn":
            return
        messages.append({"role": "user", "content": _results(response, run_bash)})


@wrong("agent_loop", "parallel_calls", "every_call")
def loop_runs_only_the_first_call(client, messages, tools, run_bash):
    while True:
        response = _ask(client, messages, tools)
        messages.append({"role": "assistant", "content": response.content})
        if response.stop_reason != "tool_use":
            return
        messages.append({"role": "user", "content": _results(response, run_bash)[:1]})


@wrong("agent_loop", "one_call", "results_user")
def loop_results_as_assistant(client, messages, tools, run_bash):
    while True:
        response = _ask(client, messages, tools)
        messages.append({"role": "assistant", "content": response.content})
        if response.stop_reason != "tool_use":
            return
        messages.append({"role": "assistant", "content": _results(response, run_bash)})


@wrong("agent_loop", "one_call", "save_reply")
def loop_forgets_the_reply(client, messages, tools, run_bash):
    while True:
        response = _ask(client, messages, tools)
        if response.stop_reason != "tool_use":
            messages.append({"role": "assistant", "content": response.content})
            return
        messages.append({"role": "user", "content": _results(response, run_bash)})


@wrong("agent_loop", "one_call", "save_reply")
def loop_saves_the_reply_after_the_results(client, messages, tools, run_bash):
    while True:
        response = _ask(client, messages, tools)
        if response.stop_reason != "tool_use":
            messages.append({"role": "assistant", "content": response.content})
            return
        results = _results(response, run_bash)
        messages.append({"role": "user", "content": results})
        messages.append({"role": "assistant", "content": response.content})


@wrong("agent_loop", "one_call", "results_first")
def loop_text_before_results(client, messages, tools, run_bash):
    while True:
        response = _ask(client, messages, tools)
        messages.append({"role": "assistant", "content": response.content})
        if response.stop_reason != "tool_use":
            return
        note = {"type": "text", "text": "Tool output follows."}
        messages.append({"role": "user", "content": [note] + _results(response, run_bash)})


@wrong("agent_loop", "one_call", "pair_by_id")
def loop_mismatched_ids(client, messages, tools, run_bash):
    while True:
        response = _ask(client, messages, tools)
        messages.append({"role": "assistant", "content": response.content})
        if response.stop_reason != "tool_use":
            return
        messages.append(
            {"role": "user", "content": _results(response, run_bash, ids=lambda i: f"call_{i}")}
        )


@wrong("agent_loop", "cut_off_call", "cut_off")
def loop_stops_when_no_calls(client, messages, tools, run_bash):
    while True:
        response = _ask(client, messages, tools)
        messages.append({"role": "assistant", "content": response.content})
        results = _results(response, run_bash)
        if not results:
            return
        messages.append({"role": "user", "content": results})


@wrong("agent_loop", "answer_without_tools", "stop_rule")
def loop_never_stops(client, messages, tools, run_bash):
    while True:
        response = _ask(client, messages, tools)
        messages.append({"role": "assistant", "content": response.content})
        results = _results(response, run_bash)
        if results:
            messages.append({"role": "user", "content": results})


@wrong("agent_loop", "one_call", "in_place")
def loop_rebinds_the_history(client, messages, tools, run_bash):
    while True:
        response = _ask(client, messages, tools)
        messages = messages + [{"role": "assistant", "content": response.content}]
        if response.stop_reason != "tool_use":
            return
        messages = messages + [{"role": "user", "content": _results(response, run_bash)}]


@wrong("agent_loop", "answer_without_tools", "send_tools")
def loop_without_tools(client, messages, tools, run_bash):
    while True:
        response = client.messages.create(model=MODEL, max_tokens=8000, messages=messages)
        messages.append({"role": "assistant", "content": response.content})
        if response.stop_reason != "tool_use":
            return
        messages.append({"role": "user", "content": _results(response, run_bash)})


@wrong("agent_loop", "pause_turn", "pause_turn")
def loop_treats_pause_turn_as_tool_use(client, messages, tools, run_bash):
    while True:
        response = _ask(client, messages, tools)
        messages.append({"role": "assistant", "content": response.content})
        if response.stop_reason not in ("tool_use", "pause_turn"):
            return
        messages.append({"role": "user", "content": _results(response, run_bash)})


@wrong("agent_loop", "thinking_blocks", "keep_thinking")
def loop_keeps_only_text_and_tool_use(client, messages, tools, run_bash):
    while True:
        response = _ask(client, messages, tools)
        kept = [b for b in response.content if b.type in ("text", "tool_use")]
        messages.append({"role": "assistant", "content": kept})
        if response.stop_reason != "tool_use":
            return
        messages.append({"role": "user", "content": _results(response, run_bash)})


@wrong("agent_loop", "thinking_blocks", "keep_thinking")
def loop_fills_in_the_empty_thinking(client, messages, tools, run_bash):
    while True:
        response = _ask(client, messages, tools)
        content = [b.model_dump(exclude_none=True) for b in response.content]
        for block in content:
            if block["type"] == "thinking" and not block["thinking"]:
                block["thinking"] = (
                    "(hidden)"  # "helpfully" filled in: the signature no longer fits
                )
        messages.append({"role": "assistant", "content": content})
        if response.stop_reason != "tool_use":
            return
        messages.append({"role": "user", "content": _results(response, run_bash)})


# ---------------------------------------------------------------------------
# guarded_loop(client, messages, tools, run_bash, max_turns, approve)
# ---------------------------------------------------------------------------


_DENIAL = 'results.append(answer(block, "Denied: the user did not allow this command.", True))'
_CUT_OFF = """\
            if calls:  # cut off by max_tokens: never run it, but answer it
                reason = f"Not run: the reply was cut off ({response.stop_reason})."
                messages.append(
                    {"role": "user", "content": [answer(b, reason, True) for b in calls]}
                )
"""
_TURNS = "for _ in range(max_turns):  # max_turns counts model requests"


def _mutant(scenario: str, idea: str, name: str, *changes: tuple[str, str]) -> None:
    """The reference guarded loop with one thing done wrong: each change replaces an exact
    piece of ``reference.guarded_loop``, so the mistake is a few lines of the real answer
    (``Wrong.diff`` shows them) and cannot drift from it."""
    import difflib
    import inspect
    import linecache

    from agentlab.exercises import reference

    lines = inspect.getsource(reference.guarded_loop).splitlines(keepends=True)
    before = "".join(line for line in lines if "### " not in line)
    after = before
    for old, new in changes:
        assert after.count(old) == 1, f"{name}: {old!r} is not in the reference loop"
        after = after.replace(old, new)
    filename = f"<mistake {name}>"
    linecache.cache[filename] = (len(after), None, after.splitlines(True), filename)
    namespace: dict[str, Any] = {"MODEL": reference.MODEL, "MAX_TOKENS": reference.MAX_TOKENS}
    exec(compile(after, filename, "exec"), namespace)
    fn = namespace["guarded_loop"]
    fn.__name__ = name
    diff = difflib.unified_diff(before.splitlines(), after.splitlines(), n=1, lineterm="")
    shown = [line for line in diff if not line.startswith(("---", "+++"))]
    WRONG.append(Wrong("guarded_loop", scenario, idea, fn, "\n".join(shown)))


_mutant(
    "denied_call",
    "approval",
    "runs_a_denied_call",
    (
        f"            elif not approve(block.input):\n                {_DENIAL}\n            else:\n",
        "            else:\n                approve(block.input)  # asked, but the answer is not used\n",
    ),
)
_mutant(
    "mixed_approval",
    "approval",
    "leaves_a_denied_call_unanswered",
    (_DENIAL, "continue  # not run, and not answered either"),
)
_mutant(
    "denied_call",
    "approval",
    "denial_without_is_error",
    (", True))\n            else:", "))\n            else:"),
)
_mutant(
    "approved_call",
    "approval",
    "asks_approve_with_the_block",
    ("not approve(block.input)", "not approve(block)"),
)
_mutant("max_turns", "max_turns", "one_turn_too_many", (_TURNS, "for _ in range(max_turns + 1):"))
_mutant("max_turns", "max_turns", "one_turn_too_few", (_TURNS, "for _ in range(max_turns - 1):"))
_mutant(
    "max_turns",
    "max_turns",
    "counts_tool_calls",
    (_TURNS, "calls_made = 0\n    while calls_made < max_turns:  # counts tool calls"),
    ("        for block in calls:\n", "        for block in calls:\n            calls_made += 1\n"),
)
_mutant(
    "pause_turn",
    "pause_turn",
    "stops_at_pause_turn",
    (
        '        if response.stop_reason == "pause_turn":\n'
        "            continue  # send the paused turn back as it is; the model carries on\n",
        "",
    ),
)
_mutant("cut_off_call", "answer_cut_off", "leaves_the_cut_off_call_unanswered", (_CUT_OFF, ""))


@wrong("guarded_loop", "cut_off_call", "cut_off")
def guarded_runs_the_cut_off_call(client, messages, tools, run_bash, max_turns, approve):
    for _ in range(max_turns):
        response = _ask(client, messages, tools)
        messages.append({"role": "assistant", "content": response.content})
        calls = [b for b in response.content if b.type == "tool_use"]
        if not calls:
            return
        results = []
        for b in calls:
            ok = approve(b.input)
            content = run_bash(b.input["command"]) if ok else "Denied."
            results.append(
                {"type": "tool_result", "tool_use_id": b.id, "content": content, "is_error": not ok}
            )
        messages.append({"role": "user", "content": results})


# ---------------------------------------------------------------------------
# todo_update(items, update)
# ---------------------------------------------------------------------------


def _todo_add(new, update):
    new.append({"id": str(len(new) + 1), "text": update["text"], "status": "pending"})
    return new


@wrong("todo_update", "two_in_progress", "todo_one_in_progress")
def allows_two_in_progress(items, update):
    if "id" not in update:
        return _todo_checked(items, update)
    new = [dict(item) for item in items]
    if update["status"] not in ("pending", "in_progress", "completed"):
        raise ValueError("bad status")
    for item in new:
        if item["id"] == update["id"]:
            item["status"] = update["status"]
            return new
    raise ValueError("unknown id")


@wrong("todo_update", "unknown_id", "todo_known_ids")
def ignores_an_unknown_id(items, update):
    if "id" not in update or update["status"] == "in_progress":
        return _todo_checked(items, update)
    new = [dict(item) for item in items]
    if update["status"] not in ("pending", "in_progress", "completed"):
        raise ValueError("bad status")
    for item in new:
        if item["id"] == update["id"]:
            item["status"] = update["status"]
    return new  # an id nobody has: the list comes back as it was, no error


@wrong("todo_update", "add_first", "todo_copy")
def changes_the_list_in_place(items, update):
    if "id" not in update:
        if len(items) >= 20:
            raise ValueError("full")
        return _todo_add(items, update)  # appends to the caller's list
    return _todo_status(items, update)  # and changes its items


@wrong("todo_update", "full_list", "todo_bounded")
def grows_without_bound(items, update):
    new = [dict(item) for item in items]
    if "id" not in update:
        return _todo_add(new, update)
    return _todo_status(new, update)


@wrong("todo_update", "bad_status", "todo_statuses")
def keeps_any_status(items, update):
    if "id" not in update:
        return _todo_checked(items, update)
    new = [dict(item) for item in items]
    found = [item for item in new if item["id"] == update["id"]]
    if not found:
        raise ValueError("unknown id")
    if update["status"] == "in_progress" and any(i["status"] == "in_progress" for i in new):
        raise ValueError("one at a time")
    found[0]["status"] = update["status"]
    return new


@wrong("todo_update", "two_in_progress", "todo_one_in_progress")
def returns_the_error_instead_of_raising(items, update):
    try:
        return _todo_checked(items, update)
    except ValueError as e:
        return f"Error: {e}"


def _todo_status(new, update):
    if update["status"] not in ("pending", "in_progress", "completed"):
        raise ValueError("bad status")
    found = [item for item in new if item["id"] == update["id"]]
    if not found:
        raise ValueError("unknown id")
    if update["status"] == "in_progress" and any(
        i["status"] == "in_progress" and i is not found[0] for i in new
    ):
        raise ValueError("one at a time")
    found[0]["status"] = update["status"]
    return new


def _todo_checked(items, update):
    new = [dict(item) for item in items]
    if "id" not in update:
        if len(new) >= 20:
            raise ValueError("full")
        return _todo_add(new, update)
    return _todo_status(new, update)


@wrong("todo_update", "add_first", "todo_add")
def starts_a_new_item_in_progress(items, update):
    if "id" not in update:
        new = [dict(item) for item in items]
        if len(new) >= 20:
            raise ValueError("full")
        new.append({"id": str(len(new) + 1), "text": update["text"], "status": "in_progress"})
        return new
    return _todo_checked(items, update)


# ---------------------------------------------------------------------------
# todo_reminder(results, rounds_since_todo)
# ---------------------------------------------------------------------------

REMINDER = {"type": "text", "text": "Reminder: update your todo list."}


@wrong("todo_reminder", "third_round", "reminder_after")
def puts_the_reminder_first(results, rounds_since_todo):
    if rounds_since_todo >= 3:
        return [REMINDER, *results]
    return list(results)


@wrong("todo_reminder", "just_called", "remind_when")
def reminds_every_round(results, rounds_since_todo):
    return [*results, REMINDER]


@wrong("todo_reminder", "third_round", "remind_when")
def reminds_one_round_late(results, rounds_since_todo):
    if rounds_since_todo > 3:
        return [*results, REMINDER]
    return list(results)


@wrong("todo_reminder", "third_round", "keep_results")
def the_reminder_replaces_the_results(results, rounds_since_todo):
    if rounds_since_todo >= 3:
        return [REMINDER]
    return list(results)


@wrong("todo_reminder", "third_round", "reminder_says")
def reminds_of_nothing_in_particular(results, rounds_since_todo):
    if rounds_since_todo >= 3:
        return [*results, {"type": "text", "text": "Keep going."}]
    return list(results)


@wrong("todo_reminder", "third_round", "keep_results")
def appends_the_reminder_to_the_list_it_was_given(results, rounds_since_todo):
    if rounds_since_todo >= 3:
        results.append(REMINDER)
    return results


@wrong("todo_reminder", "parallel_results", "keep_results")
def keeps_only_the_last_result(results, rounds_since_todo):
    content = results[-1:]
    if rounds_since_todo >= 3:
        content.append(REMINDER)
    return content


# ---------------------------------------------------------------------------
# subagent(client, prompt, tools)
# ---------------------------------------------------------------------------


def _child(client, messages, tools, limit=30):
    """The reference child loop on ``messages``; returns the last reply."""
    response = None
    for _ in range(limit):
        response = client.messages.create(
            model=MODEL, max_tokens=8000, messages=messages, tools=[d for d, _ in tools.values()]
        )
        messages.append({"role": "assistant", "content": response.content})
        if response.stop_reason != "tool_use":
            break
        results = []
        for b in response.content:
            if b.type != "tool_use":
                continue
            if b.name in tools:
                results.append(
                    {
                        "type": "tool_result",
                        "tool_use_id": b.id,
                        "content": tools[b.name][1](b.input),
                    }
                )
            else:
                results.append(
                    {
                        "type": "tool_result",
                        "tool_use_id": b.id,
                        "content": "Unknown tool.",
                        "is_error": True,
                    }
                )
        messages.append({"role": "user", "content": results})
    return response


def _words(response):
    return "".join(b.text for b in response.content if b.type == "text") or "(no summary)"


def _without_task(tools):
    return {name: pair for name, pair in tools.items() if name != "task"}


# the notebook's own history, which a child must not continue
messages = [
    {"role": "user", "content": "Tidy up this repository."},
    {"role": "assistant", "content": [{"type": "text", "text": "First I will look around."}]},
]


@wrong("subagent", "answers_at_once", "fresh_history")
def continues_the_parents_history(client, prompt, tools):
    history = [*messages, {"role": "user", "content": prompt}]
    return _words(_child(client, history, _without_task(tools)))


_kept: list = []


@wrong("subagent", "fresh_each_time", "fresh_history")
def keeps_one_history_for_every_child(client, prompt, tools):
    _kept.append({"role": "user", "content": prompt})
    return _words(_child(client, _kept, _without_task(tools)))


@wrong("subagent", "answers_at_once", "no_task")
def gives_the_child_task(client, prompt, tools):
    return _words(_child(client, [{"role": "user", "content": prompt}], tools))


@wrong("subagent", "answers_at_once", "no_task")
def takes_task_out_of_the_parents_tools(client, prompt, tools):
    tools.pop("task")  # the child has no task now, and neither has the parent
    return _words(_child(client, [{"role": "user", "content": prompt}], tools))


@wrong("subagent", "answers_at_once", "final_text")
def returns_the_whole_child_history(client, prompt, tools):
    history = [{"role": "user", "content": prompt}]
    _child(client, history, _without_task(tools))
    return history


@wrong("subagent", "round_limit", "round_limit")
def has_no_round_limit(client, prompt, tools):
    return _words(
        _child(client, [{"role": "user", "content": prompt}], _without_task(tools), 10**6)
    )


@wrong("subagent", "one_tool_round", "final_text")
def returns_every_replys_words(client, prompt, tools):
    history = [{"role": "user", "content": prompt}]
    _child(client, history, _without_task(tools))
    return "".join(b.text for m in history[1::2] for b in m["content"] if b.type == "text")


@wrong("subagent", "no_summary", "final_text")
def returns_an_empty_summary(client, prompt, tools):
    response = _child(client, [{"role": "user", "content": prompt}], _without_task(tools))
    return "".join(b.text for b in response.content if b.type == "text")
