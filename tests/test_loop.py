import copy

import pytest

import agentlab as al
from agentlab.fakeapi.offline import ScriptedClient, make_message, text, tool_use
from tests.seed_loop import seed_loop

STOP_REASONS = [
    "end_turn",
    "stop_sequence",
    "max_tokens",
    "refusal",
    "model_context_window_exceeded",
    "weird_new",
]


@al.tool
def echo(words: str) -> str:
    """Say the words back."""
    return words


def task(q="Do it"):
    return [{"role": "user", "content": q}]


# --- request --------------------------------------------------------------


def test_request_does_not_mutate_and_sends_tool_definitions():
    client = ScriptedClient(["hi"])
    messages = task()
    before = copy.deepcopy(messages)
    raw = {
        "name": "raw",
        "description": "a raw dict",
        "input_schema": {"type": "object", "properties": {}},
    }
    reply = al.request(client, messages, system="sys", tools=[echo, raw], model="m", max_tokens=5)
    assert messages == before
    sent = client.requests[0]
    assert sent["system"] == "sys" and sent["model"] == "m" and sent["max_tokens"] == 5
    assert [t["name"] for t in sent["tools"]] == ["echo", "raw"]
    assert sent["tools"][0]["input_schema"]["properties"]["words"]["type"] == "string"
    assert sent["tools"][1] == raw
    assert reply.content[0].text == "hi"


def test_request_streaming_reports_text_and_returns_the_message():
    client = ScriptedClient(["one two three"])
    seen = []
    reply = al.request(client, task(), stream=True, on_text=seen.append)
    assert "".join(seen) == "one two three" and len(seen) == 3
    assert reply.stop_reason == "end_turn"


# --- decide ---------------------------------------------------------------


def test_decide_tool_use_executes_in_order():
    reply = make_message(
        [
            text("x"),
            tool_use("bash", {"command": "a"}, "t1"),
            tool_use("bash", {"command": "b"}, "t2"),
        ]
    )
    d = al.decide(reply)
    assert d.action == "execute" and d.reason == "tool_use"
    assert [u.id for u in d.tool_uses] == ["t1", "t2"]
    assert d.explanation and d == al.decide(reply)  # pure


@pytest.mark.parametrize("reason", STOP_REASONS)
def test_decide_never_executes_other_stop_reasons(reason):
    reply = make_message([text("partial"), tool_use("bash", {"command": "rm -rf x"}, "t1")], reason)
    d = al.decide(reply)
    assert d.action == "stop" and d.tool_uses == ()
    assert [u.id for u in d.unanswered] == ["t1"]
    assert d.explanation


def test_decide_pause_turn_continues():
    assert al.decide(make_message("thinking...", "pause_turn")).action == "continue"


def test_decide_unknown_reason_is_explained():
    d = al.decide(make_message("x", "brand_new_reason"))
    assert d.action == "stop" and "brand_new_reason" in d.explanation


# --- execute --------------------------------------------------------------


def uses(*pairs):
    return list(make_message([tool_use(n, i, f"t{k}") for k, (n, i) in enumerate(pairs)]).content)


def test_execute_one_result_per_call_in_order_with_errors_as_data():
    @al.tool
    def boom(x: int) -> str:
        """Always fails."""
        raise RuntimeError("kaput")

    calls = uses(
        ("echo", {"words": "hi"}),
        ("nope", {}),
        ("boom", {"x": 1}),
        ("echo", {"words": 5}),
        ("echo", {}),
    )
    results = al.execute(calls, [echo, boom])
    assert [r["tool_use_id"] for r in results] == ["t0", "t1", "t2", "t3", "t4"]
    assert results[0] == {"type": "tool_result", "tool_use_id": "t0", "content": "hi"}
    assert results[1]["is_error"] and "Unknown tool 'nope'" in results[1]["content"]
    assert results[2]["is_error"] and "RuntimeError: kaput" in results[2]["content"]
    assert results[3]["is_error"] and "Invalid input" in results[3]["content"]
    assert results[4]["is_error"] and "missing" in results[4]["content"]


def test_execute_denial_and_edit():
    calls = uses(("echo", {"words": "a"}), ("echo", {"words": "b"}))
    answers = iter([al.Verdict.deny("not today"), al.Verdict.edit({"words": "edited"})])
    results = al.execute(calls, [echo], approve=lambda call: next(answers))
    assert results[0]["is_error"] and "not today" in results[0]["content"]
    assert results[1]["content"].endswith("\nedited")  # the model is told what really ran
    assert 'echo({"words": "edited"})' in results[1]["content"]
    assert al.execute(calls[:1], [echo], approve=lambda c: False)[0]["is_error"]


def test_execute_interrupt_answers_every_call_then_reraises():
    @al.tool
    def stop(x: int) -> str:
        """Pretend the user pressed stop."""
        raise KeyboardInterrupt

    calls = uses(("echo", {"words": "a"}), ("stop", {"x": 1}), ("echo", {"words": "c"}))
    with pytest.raises(al.Interrupted) as info:
        al.execute(calls, [echo, stop])
    results = info.value.results
    assert [r["tool_use_id"] for r in results] == ["t0", "t1", "t2"]
    assert not results[0].get("is_error") and results[1]["is_error"] and results[2]["is_error"]
    assert isinstance(info.value, KeyboardInterrupt)


def test_execute_raw_definition_without_code_is_an_error_result():
    raw = {"name": "raw", "description": "d", "input_schema": {"type": "object"}}
    [r] = al.execute(uses(("raw", {})), [raw])
    assert r["is_error"] and "no implementation" in r["content"]


# --- append ---------------------------------------------------------------


def test_append_message_results_and_text():
    messages = task()
    reply = make_message([text("x"), tool_use("echo", {"words": "hi"}, "t1")])
    al.append(messages, reply)
    assert messages[-1] == {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "x"},
            {"type": "tool_use", "id": "t1", "name": "echo", "input": {"words": "hi"}},
        ],
    }
    al.append(messages, [{"type": "tool_result", "tool_use_id": "t1", "content": "hi"}])
    assert messages[-1]["role"] == "user"
    al.append(messages, make_message("done"))
    al.append(messages, "thanks, next")
    assert messages[-1] == {"role": "user", "content": "thanks, next"}
    assert al.validate(messages) == []


def test_append_keeps_its_own_copy_of_what_it_is_given():
    """The history changes only through append: changing the results (or a message
    dict) after appending them leaves the history as it was."""
    messages = task()
    al.append(messages, make_message([tool_use("echo", {"words": "hi"}, "t1")]))
    picture = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": "iVBO"},
    }
    results = [
        {"type": "tool_result", "tool_use_id": "t1", "content": [picture], "is_error": False}
    ]
    al.append(messages, results)
    kept = copy.deepcopy(messages)
    results[0]["is_error"] = True
    results[0]["content"][0]["source"]["data"] = "changed"
    results.append({"type": "text", "text": "more"})
    follow_up = {"role": "assistant", "content": [{"type": "text", "text": "A picture."}]}
    al.append(messages, follow_up)
    follow_up["content"][0]["text"] = "changed"
    assert messages[:3] == kept and messages[3]["content"][0]["text"] == "A picture."


def test_append_refuses_a_history_the_api_rejects_and_changes_nothing():
    messages = task()
    al.append(messages, make_message([tool_use("echo", {"words": "hi"}, "t1")]))
    before = copy.deepcopy(messages)
    with pytest.raises(al.HistoryError, match="Did not find 1 `tool_result` block") as info:
        al.append(messages, "forgot the results")
    assert isinstance(info.value, ValueError) and messages == before
    with pytest.raises(al.HistoryError, match="unexpected `tool_use_id`"):
        al.append(messages, [{"type": "tool_result", "tool_use_id": "t2", "content": "x"}])
    with pytest.raises(TypeError):
        al.append(messages, 42)


def test_append_skips_an_empty_reply():
    messages = task()
    al.append(messages, make_message([], "end_turn"))
    assert messages == task()


# --- the loop -------------------------------------------------------------


def scripted_run():
    return ScriptedClient(
        [
            [
                text("Two at once."),
                tool_use("echo", {"words": "a"}),
                tool_use("echo", {"words": "b"}),
            ],
            "All done: a b",
        ]
    )


def test_agent_loop_runs_to_the_end():
    messages = task()
    result = al.agent_loop(messages, scripted_run(), tools=[echo])
    assert result.text == "All done: a b" and result.stop_reason == "end_turn" and result.turns == 2
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"]
    assert [r["content"] for r in messages[2]["content"]] == ["a", "b"]
    assert result.usage["input_tokens"] > 0 and len(result.turn_usage) == 2
    assert repr(result) == "LoopResult(ended='model', stop_reason='end_turn', turns=2, messages=4)"
    assert al.validate(messages) == []


def test_stepper_stages_one_at_a_time_and_events():
    events = []
    loop = al.AgentLoop(scripted_run(), task(), tools=[echo], on_event=events.append)
    order = []
    while not loop.done:
        order.append(loop.step())
    assert order == ["request", "decide", "execute", "append", "request", "decide"]
    kinds = [e.kind for e in events]
    assert kinds.count("tool_end") == 2 and kinds[-1] == "done"
    assert [a["name"] for a in loop.audit] == ["echo", "echo"]
    assert all(a["verdict"] == "approved" for a in loop.audit)
    assert set(loop.durations) == {"toolu_01", "toolu_02"}
    assert loop.step() == "done"  # nothing more happens


def test_turn_and_reset():
    loop = al.AgentLoop(scripted_run(), task(), tools=[echo])
    assert loop.turn() == "request" and loop.turns == 1 and len(loop.messages) == 3
    loop.reset()
    assert loop.messages == task() and loop.stage == "request" and loop.turns == 0


@pytest.mark.parametrize("reason", STOP_REASONS)
def test_a_call_that_will_not_run_is_answered_and_never_run(reason):
    ran = []

    @al.tool
    def danger(x: int) -> str:
        """Must never run."""
        ran.append(x)
        return "ran"

    client = ScriptedClient([make_message([text("cut"), tool_use("danger", {"x": 1})], reason)])
    messages = task()
    result = al.agent_loop(messages, client, tools=[danger])
    assert ran == [] and result.stop_reason == reason
    assert al.validate(messages) == []
    assert (
        messages[-1]["content"][0]["is_error"]
        and "Not run" in messages[-1]["content"][0]["content"]
    )


def test_pause_turn_sends_the_reply_back_as_is():
    client = ScriptedClient([make_message("half", "pause_turn"), "whole"])
    messages = task()
    result = al.agent_loop(messages, client, tools=[echo])
    assert result.text == "whole" and result.turns == 2
    assert client.requests[1]["messages"][-1] == {
        "role": "assistant",
        "content": [{"type": "text", "text": "half"}],
    }


def test_max_turns_ends_cleanly_with_a_valid_history():
    client = ScriptedClient(lambda params: [tool_use("echo", {"words": "again"})])
    messages = task()
    result = al.agent_loop(messages, client, tools=[echo], max_turns=3)
    assert result.ended == "turn_limit" and result.turns == 3 and len(client.requests) == 3
    assert al.validate(messages) == [] and "3" in result.explanation


def test_interrupt_in_the_loop_leaves_a_valid_history():
    @al.tool
    def stop(x: int) -> str:
        """Pretend the user pressed stop."""
        raise KeyboardInterrupt

    client = ScriptedClient([[tool_use("echo", {"words": "a"}), tool_use("stop", {"x": 1})]])
    loop = al.AgentLoop(client, task(), tools=[echo, stop])
    with pytest.raises(KeyboardInterrupt):
        loop.run()
    assert loop.done and loop.ended == "interrupted"
    assert al.validate(loop.messages) == []


def test_a_failed_request_changes_nothing_and_can_be_retried():
    client = ScriptedClient([al.fakeapi.offline.bad_request("boom"), "fine"])
    loop = al.AgentLoop(client, task(), tools=[echo])
    with pytest.raises(al.RequestError, match="boom"):
        loop.step()
    assert loop.messages == task() and loop.stage == "request" and loop.error is not None
    assert loop.run().text == "fine"


def test_ask_continues_the_conversation():
    client = ScriptedClient(["first", "second"])
    loop = al.AgentLoop(client, "q1", tools=[echo])
    assert loop.run().text == "first"
    assert loop.ask("q2").run().text == "second"
    assert [m["role"] for m in loop.messages] == ["user", "assistant", "user", "assistant"]


def test_the_lessons_loop_runs_unchanged_against_the_demo_model(tmp_path, monkeypatch):
    """The seed's code, unchanged (tests/seed_loop.py), with client = agentlab.connect()."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text("print(1)\n")
    agent_loop = seed_loop(al.connect())

    messages = [{"role": "user", "content": "How many .py files are here?"}]
    agent_loop(messages)
    assert "There is 1 Python" in messages[-1]["content"][-1].text
    assert al.validate(messages) == []


@pytest.mark.parametrize("stop_at", [0, 1, 2])
def test_interrupt_at_every_tool_index_leaves_a_valid_history(stop_at):
    ran = []

    @al.tool
    def step(i: int) -> str:
        """Run step i; the user presses stop at one of them."""
        if i == stop_at:
            raise KeyboardInterrupt
        ran.append(i)
        return f"step {i}"

    client = ScriptedClient([[tool_use("step", {"i": i}) for i in range(3)], "never reached"])
    loop = al.AgentLoop(client, task(), tools=[step])
    with pytest.raises(KeyboardInterrupt):
        loop.run()
    assert ran == list(range(stop_at))  # nothing after the interrupt ran
    assert al.validate(loop.messages) == []
    results = loop.messages[-1]["content"]
    assert [bool(r.get("is_error")) for r in results] == [i >= stop_at for i in range(3)]
    assert "Interrupted" in results[stop_at]["content"] and len(client.requests) == 1


def test_interrupt_kills_a_running_bash_command_and_the_history_stays_valid(tmp_path):
    """Ctrl-C while a command runs: SIGINT is sent once the command has started (it
    writes a file first), not after a fixed time (importing the SDK alone can take 2 s).
    A shell that starts the tests in the background ignores SIGINT, so the test puts
    Python's own handler in place for its run."""
    import os
    import signal
    import threading
    import time

    started = tmp_path / "started"
    client = ScriptedClient(
        [
            [
                tool_use("bash", {"command": "touch started; sleep 30"}),
                tool_use("bash", {"command": "echo no"}),
            ]
        ]
    )
    loop = al.AgentLoop(client, task(), tools=[al.bash_tool(cwd=tmp_path)])

    def interrupt_once_running() -> None:
        deadline = time.monotonic() + 60
        while not started.exists() and time.monotonic() < deadline:
            time.sleep(0.01)  # polling for the file the command writes: the event waited on
        os.kill(os.getpid(), signal.SIGINT)

    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        sender = threading.Thread(target=interrupt_once_running)
        sender.start()
        with pytest.raises(KeyboardInterrupt):
            loop.run()
        sender.join()
    finally:
        signal.signal(signal.SIGINT, old)
    assert started.exists(), "the command never started: SIGINT came from somewhere else"
    assert al.validate(loop.messages) == [] and loop.ended == "interrupted"
    assert loop.turns == 1 and len(loop.messages[-1]["content"]) == 2
    assert "Interrupted" in loop.messages[-1]["content"][0]["content"]


def test_ask_counts_max_turns_per_task_and_the_result_shows_only_this_run():
    client = ScriptedClient(lambda params: [tool_use("echo", {"words": "x"})])
    loop = al.AgentLoop(client, "first", tools=[echo], max_turns=2)
    assert loop.run().ended == "turn_limit" and loop.turns == 2
    result = loop.ask("second").run()
    assert result.ended == "turn_limit" and loop.turns == 4  # two more, not zero
    assert result.new_messages[0] == {"role": "user", "content": "second"}
    assert "first" not in result._repr_markdown_() and "&lt;" not in result._repr_markdown_()


def test_the_public_names_of_the_loop_import_from_the_package():
    names = ["DEFAULT_MODEL", "DEFAULT_SYSTEM", "Decision", "Event"]
    names += ["Interrupted", "LoopResult", "agent_loop", "append", "decide", "execute", "not_run"]
    names += ["request", "steps", "AgentLoop", "validate"]
    for name in names:
        assert getattr(al, name) is not None, name
    import agentlab.loop as loop_module

    assert set(loop_module.__all__) <= set(dir(loop_module))
    assert not hasattr(loop_module, "__getattr__")  # no names served from elsewhere
    with pytest.raises(AttributeError):
        loop_module.AgentLoop  # noqa: B018 - the stepper is agentlab.stepper's


def test_the_loop_file_holds_the_four_stages_and_the_loop_and_imports_no_upper_layer():
    """loop.py is read beside the lesson: the four stages, then the loop made of them."""
    import ast
    import inspect

    import agentlab.loop as loop_module

    source = inspect.getsource(loop_module)
    tree = ast.parse(source)
    public = {
        node.name
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and not node.name.startswith("_")
    }
    stages = {"request", "decide", "Decision", "not_run", "execute", "append"}
    assert public == stages | {"steps", "agent_loop"}
    imported = {
        node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module
    }
    upper = ("agentlab.views", "agentlab.fakeapi", "agentlab.apps", "agentlab.exercises")
    assert not any(m.startswith((*upper, "ipywidgets")) for m in imported)
    assert "while True:" in inspect.getsource(loop_module.steps)
    assert len(source.splitlines()) <= 320


def test_the_stepper_is_a_thin_wrapper_over_the_loop():
    """stepper.py only advances ``steps``: no loop of its own, small enough to read."""
    import inspect

    import agentlab.stepper as stepper_module

    source = inspect.getsource(stepper_module)
    assert "steps(" in source and "while True:" not in source
    assert len(source.splitlines()) <= 250


# --- a loop over a history that ends on the model's turn -------------------


def answered(*content):
    """A conversation that ends on an assistant turn holding ``content``."""
    return [{"role": "user", "content": "Do it"}, {"role": "assistant", "content": list(content)}]


def test_a_loop_over_a_finished_conversation_starts_done_and_takes_a_follow_up():
    # A request ending on the model's own turn is a prefill, refused on
    # claude-sonnet-5-5 (Sonnet 5.5 migration guide, checked 2026-11-30); the offline client
    # says so too. The loop starts done, waiting for ask().
    client = ScriptedClient(["second answer"])
    loop = al.AgentLoop(client, answered(text("first answer")), tools=[echo])
    assert loop.stage == "done" and loop.ended == "model" and loop.turns == 0
    assert "follow-up" in loop.explanation
    assert loop.step() == "done" and client.requests == []  # nothing sent
    assert loop.result().text == "first answer"
    assert loop.ask("and then?").run().text == "second answer"
    assert al.validate(loop.messages) == [] and len(loop.messages) == 4


def test_agent_loop_on_a_finished_conversation_sends_nothing():
    client = ScriptedClient([])
    messages = answered(text("the answer"))
    result = al.agent_loop(messages, client, tools=[echo])
    assert result.ended == "model" and result.text == "the answer" and client.requests == []


def test_reset_puts_a_loop_over_a_finished_conversation_back_to_done():
    client = ScriptedClient(["more"])
    loop = al.AgentLoop(client, answered(text("first")), tools=[echo])
    loop.ask("again").run()
    loop.reset()
    assert loop.stage == "done" and loop.ended == "model" and len(loop.messages) == 2


def test_unanswered_calls_the_history_ends_on_are_not_taken_for_an_answer():
    # They need their results before anything else (no follow-up can go before
    # them), and this loop did not ask for them: it does not answer them itself
    # (test_interrupts: a broken history is reported, not patched).
    messages = answered(text("Writing."), tool_use("echo", {"words": "x"}, id="toolu_left"))
    loop = al.AgentLoop(ScriptedClient(["x"]), messages, tools=[echo])
    assert loop.stage == "request" and loop.ended is None
    with pytest.raises(al.HistoryError):
        loop.ask("something else")
    assert len(messages) == 2


def test_a_paused_reply_the_loop_got_itself_is_still_sent_back():
    # pause_turn (platform.claude.com/docs/en/build-with-claude/handling-stop-reasons):
    # the reply goes back as it is and the model carries on. Only a fresh loop
    # over a plain history cannot tell a paused reply from a finished one.
    client = ScriptedClient([make_message("half", "pause_turn"), "whole"])
    loop = al.AgentLoop(client, task(), tools=[echo])
    assert loop.run().text == "whole" and loop.turns == 2
    assert client.requests[1]["messages"][-1]["role"] == "assistant"


# --- layers: the core imports no upper layer; a turn runs in few files ---------------

CORE = ["agentlab", "agentlab.loop", "agentlab.stepper", "agentlab.history", "agentlab.errors"]
CORE += ["agentlab.harness"]
CORE += ["agentlab.models", "agentlab.usage", "agentlab.i18n", "agentlab.secrets"]
CORE += ["agentlab.terminal", "agentlab.tools", "agentlab.tools.base", "agentlab.tools.shell"]
UPPER = ("agentlab.fakeapi", "agentlab.views", "agentlab.apps", "agentlab.exercises")


@pytest.mark.parametrize("module", CORE)
def test_a_core_module_imports_no_emulator_view_app_or_exercise(module):
    import subprocess
    import sys

    code = f"import sys, {module}; print(sorted(m for m in sys.modules if m.startswith({UPPER})))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_one_agent_loop_run_executes_code_in_at_most_six_agentlab_files():
    import sys
    from pathlib import Path

    from anthropic.types import Message

    class Client:  # the duck-typed client of the issue: six lines
        def __init__(self, replies):
            self.replies, self.messages = iter(replies), self

        def create(self, **params):
            return next(self.replies)

    usage = {"input_tokens": 10, "output_tokens": 5}
    call = {"type": "tool_use", "id": "toolu_1", "name": "noop", "input": {}}
    replies = [
        Message.model_validate({"id": "msg_1", "type": "message", "role": "assistant",
                                "model": "m", "content": [call], "stop_reason": "tool_use",
                                "usage": usage}),
        Message.model_validate({"id": "msg_2", "type": "message", "role": "assistant",
                                "model": "m", "content": [{"type": "text", "text": "done"}],
                                "stop_reason": "end_turn", "usage": usage}),
    ]  # fmt: skip

    @al.tool
    def noop() -> str:
        """Do nothing."""
        return "ok"

    messages = [{"role": "user", "content": "go"}]
    al.agent_loop([*messages], Client(list(replies)), tools=[noop])  # everything imported first
    package, files = str(Path(al.__file__).parent), set()

    def profile(frame, event, arg):
        if event == "call" and frame.f_code.co_filename.startswith(package):
            files.add(frame.f_code.co_filename)

    sys.setprofile(profile)
    try:
        result = al.agent_loop(messages, Client(replies), tools=[noop])
    finally:
        sys.setprofile(None)
    assert result.text == "done" and al.validate(messages) == []
    assert len(files) <= 6, sorted(f.removeprefix(package) for f in files)
