"""Ctrl-C at every line of the loop: the history must always end valid, and the loop go on.

A ``sys.settrace`` sweep: run a scenario once to count the lines the loop's
modules execute, then run it again once per line, raising KeyboardInterrupt
at that line (a trace function that raises makes the exception appear in the
traced code, and tracing stops there). After each interrupt the history must
be one the API accepts, and the conversation must be able to go on.

``python tests/test_interrupts.py`` prints the figures kept in
``tests/interrupt_report.txt``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

import agentlab as al
from agentlab import errors, history, loop, stepper
from agentlab.fakeapi.offline import ScriptedClient, make_message, text, tool_use

LOOP_FILES = {m.__file__ for m in (loop, stepper, history, errors)}


@al.tool
def echo(words: str) -> str:
    """Say the words back."""
    return words


@al.tool
def crash(why: str) -> str:
    """Fail the way argparse does."""
    raise SystemExit(2)


def listener(event: Any) -> None:
    """A view's callback: the sweep interrupts its lines too."""
    kinds = [event.kind]
    kinds.append(len(kinds))


def approve(call: Any) -> Any:
    """An approval callback: the sweep interrupts its lines too."""
    if call.input.get("words") == "no":
        return al.Verdict.deny("not this one")
    return True


TRACED_CODE = {listener.__code__, approve.__code__}


# --- the scenarios --------------------------------------------------------------


def script_tools() -> list[Any]:
    return [
        [text("Three calls."), tool_use("echo", {"words": "a"}), tool_use("crash", {"why": "x"})],
        [tool_use("echo", {"words": "no"}), tool_use("nope", {})],
        "All done.",
    ]


def script_cut_off() -> list[Any]:
    return [
        make_message("half", "pause_turn"),
        [tool_use("echo", {"words": "b"})],
        make_message([text("cut"), tool_use("echo", {"words": "c"})], "max_tokens"),
    ]


def script_limit() -> Callable[[dict[str, Any]], Any]:
    return lambda params: [text("again"), tool_use("echo", {"words": "again"})]


SCRIPTS: dict[str, tuple[Callable[[], Any], dict[str, Any]]] = {
    "tools, a crash, a denial, an unknown tool": (script_tools, {"approve": approve}),
    "pause_turn, then a call cut off by max_tokens": (script_cut_off, {}),
    "turn limit, streaming": (script_limit, {"max_turns": 2, "stream": True}),
}


@dataclass
class Run:
    messages: list[Any]
    client: ScriptedClient
    options: dict[str, Any]
    loop: al.AgentLoop | None = None
    seen: list[str] = field(default_factory=list)


def fresh(script: str) -> Run:
    make, options = SCRIPTS[script]
    return Run([{"role": "user", "content": "Do it"}], ScriptedClient(make()), options)


def new_loop(run: Run) -> al.AgentLoop:
    run.loop = al.AgentLoop(
        run.client, run.messages, tools=[echo, crash], on_event=listener, **run.options
    )
    return run.loop


def via_agent_loop(run: Run) -> None:
    al.agent_loop(run.messages, run.client, tools=[echo, crash], on_event=listener, **run.options)


def via_run(run: Run) -> None:
    new_loop(run).run()


def via_turn(run: Run) -> None:
    stepper_ = new_loop(run)
    while not stepper_.done:
        stepper_.turn()


def via_step(run: Run) -> None:
    stepper_ = new_loop(run)
    while not stepper_.done:
        stepper_.step()


DRIVERS = {
    "agent_loop": via_agent_loop,
    "AgentLoop.run": via_run,
    "AgentLoop.turn": via_turn,
    "AgentLoop.step": via_step,
}


# --- the sweep ------------------------------------------------------------------


class Interrupter:
    """A trace function that raises KeyboardInterrupt at the ``at``-th line the
    loop's modules run (``at=0``: never; it only counts)."""

    def __init__(self, at: int) -> None:
        self.at, self.count, self.where = at, 0, ""

    def __call__(self, frame: Any, event: str, arg: Any) -> Any:
        code = frame.f_code
        if code.co_filename in LOOP_FILES or code in TRACED_CODE:
            return self.line
        return None

    def line(self, frame: Any, event: str, arg: Any) -> Any:
        if event == "line":
            self.count += 1
            if self.count == self.at:
                self.where = f"{frame.f_code.co_filename.rsplit('/', 1)[-1]}:{frame.f_lineno}"
                raise KeyboardInterrupt
        return self.line


def go_on(run: Run) -> list[Any]:
    """Carry on after the interrupt; return the problems of the final history."""
    if run.loop is None or run.loop.done:  # a new question, as a student would ask
        again = ScriptedClient(["Fine, carrying on."])
        if run.loop is None:
            al.append(run.messages, "Please go on.")
            al.agent_loop(run.messages, again, tools=[echo, crash])
        else:
            run.loop.client = again
            assert run.loop.ask("Please go on.").run().text == "Fine, carrying on."
    else:  # the stepper was stopped between stages: step on
        run.loop.run()
    return al.validate(run.messages)


def sweep(script: str, driver: str) -> dict[str, Any]:
    drive = DRIVERS[driver]
    counter = Interrupter(0)
    sys.settrace(counter)
    try:
        drive(fresh(script))
    finally:
        sys.settrace(None)
    points, tried, invalid, failures = counter.count, 0, 0, []
    for at in range(1, points + 1):
        run, trace = fresh(script), Interrupter(at)
        escaped: BaseException | None = None
        sys.settrace(trace)
        try:
            drive(run)
        except KeyboardInterrupt as e:
            escaped = e
        finally:
            sys.settrace(None)
        if not trace.where:
            continue  # this run took a shorter path and ended before line ``at``
        tried += 1
        stepping = driver in ("AgentLoop.step", "AgentLoop.turn")
        if stepping and run.loop is not None and not run.loop.done:
            # interrupted between two stages: a paused stepper, its reply may await results
            problems = al.validate(run.messages, pending_ok=True)
        else:
            problems = al.validate(run.messages)
        if escaped is None:
            problems = [*problems, "the interrupt was swallowed"]
        if not problems:
            try:
                problems = go_on(run)
            except Exception as e:  # noqa: BLE001 - a loop that cannot go on is a failure
                problems = [f"could not go on: {type(e).__name__}: {e}"]
        if problems:
            invalid += 1
            failures.append(f"{trace.where}: {problems[0]}")
    return {"points": points, "tried": tried, "invalid": invalid, "failures": failures[:5]}


CASES = [(s, d) for s in SCRIPTS for d in DRIVERS]


@pytest.mark.parametrize(("script", "driver"), CASES)
def test_an_interrupt_at_any_line_leaves_a_valid_history_that_can_go_on(script, driver):
    figures = sweep(script, driver)
    assert figures["tried"] > 100  # the sweep really went through the loop's code
    assert figures["invalid"] == 0, figures["failures"]


# --- exceptions from tools, approvals and views ------------------------------------------


class Custom(BaseException):
    pass


def raiser(error: BaseException) -> Any:
    @al.tool
    def raises(x: int) -> str:
        """Raise something."""
        raise error

    return raises


@pytest.mark.parametrize("error", [SystemExit(2), GeneratorExit(), Custom("odd"), ValueError("v")])
def test_a_tool_raising_any_base_exception_is_an_error_result(error):
    client = ScriptedClient(
        [[tool_use("raises", {"x": 1}), tool_use("echo", {"words": "b"})], "ok"]
    )
    messages = [{"role": "user", "content": "go"}]
    result = al.agent_loop(messages, client, tools=[raiser(error), echo])
    first, second = messages[2]["content"]
    assert first["is_error"] and type(error).__name__ in first["content"]
    assert second["content"] == "b" and result.text == "ok" and al.validate(messages) == []


def test_keyboard_interrupt_from_a_tool_keeps_its_meaning():
    client = ScriptedClient([[tool_use("raises", {"x": 1})], "never"])
    messages = [{"role": "user", "content": "go"}]
    with pytest.raises(al.Interrupted):
        al.agent_loop(messages, client, tools=[raiser(KeyboardInterrupt())])
    assert al.validate(messages) == [] and len(client.requests) == 1


@pytest.mark.parametrize("where", ["approve", "listener"])
def test_an_exception_in_an_approval_or_a_view_callback_ends_the_loop_with_a_valid_history(where):
    def broken(*args: Any) -> Any:
        raise RuntimeError("a bug in a callback")

    client = ScriptedClient([[tool_use("echo", {"words": "a"})], "never"])
    messages = [{"role": "user", "content": "go"}]
    loop_ = al.AgentLoop(client, messages, tools=[echo])
    if where == "approve":
        loop_.approve = broken
    else:
        loop_.subscribe(lambda e: broken() if e.kind == "tool_start" else None)
    with pytest.raises(RuntimeError, match="a bug in a callback"):
        loop_.run()
    assert al.validate(messages) == [] and loop_.ended == "error" and loop_.stopped_at == "execute"
    assert "RuntimeError" in loop_.explanation and messages[-1]["content"][0]["is_error"]
    loop_.client = ScriptedClient(["fine"])
    assert loop_.ask("go on").run().text == "fine"


def test_an_interrupted_tool_is_counted_and_the_finished_one_keeps_its_output():
    @al.tool
    def stop(x: int) -> str:
        """Pretend the user pressed stop."""
        raise KeyboardInterrupt

    client = ScriptedClient([[tool_use("echo", {"words": "a"}), tool_use("stop", {"x": 1})]])
    loop_ = al.AgentLoop(client, "go", tools=[echo, stop])
    with pytest.raises(al.Interrupted) as info:
        loop_.run()
    assert [a["verdict"] for a in loop_.audit] == ["approved", "interrupted"]
    assert loop_.messages[-1]["content"][0]["content"] == "a"
    assert info.value.results == loop_.messages[-1]["content"]
    assert loop_.stopped_at == "execute" and "execute" in loop_.explanation


def test_a_history_that_came_in_broken_is_not_patched_by_the_loop():
    """Only tool calls this loop asked for are answered; a broken history handed
    in is reported (the API's 400), not silently changed."""
    messages = [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "echo", "input": {}}],
        },
    ]
    loop_ = al.AgentLoop(ScriptedClient(["x"]), messages, tools=[echo])
    with pytest.raises(al.RequestError):
        loop_.run()
    assert len(messages) == 2


# --- wrong arguments fail at once, naming the fix ------------------------------------------


def reply_with_text_and_call() -> Any:
    return make_message([text("Let me look."), tool_use("echo", {"words": "a"}, "t1")])


@pytest.mark.parametrize(
    ("call", "fix"),
    [
        (lambda r: al.execute(r, [echo]), "decision.tool_uses"),
        (lambda r: al.execute(r.content, [echo]), "decision.tool_uses"),
        (lambda r: al.execute(al.decide(r), [echo]), "decision.tool_uses"),
        (lambda r: al.execute(r.content[1], [echo]), "execute([block])"),
        (lambda r: al.decide([{"role": "user", "content": "hi"}]), "decision = decide(response)"),
        (lambda r: al.decide({"role": "assistant", "content": "hi"}), "decide(response)"),
        (lambda r: al.decide("end_turn"), "decide(response)"),
        (lambda r: al.request(ScriptedClient(["x"]), "What is here?"), '"role": "user"'),
        (
            lambda r: al.request(ScriptedClient(["x"]), {"role": "user", "content": "hi"}),
            "[message]",
        ),
        (
            lambda r: al.request([{"role": "user", "content": "hi"}], ScriptedClient(["x"])),
            "client first",
        ),
    ],
)
def test_wrong_arguments_fail_at_once_with_the_fix(call, fix):
    with pytest.raises(TypeError) as info:
        call(reply_with_text_and_call())
    assert fix in str(info.value)


def test_wrong_arguments_are_explained_in_chinese_too():
    al.set_language("zh")
    try:
        with pytest.raises(TypeError, match="decision.tool_uses") as info:
            al.execute(reply_with_text_and_call())
        assert "整个回答" in str(info.value)
    finally:
        al.set_language("en")


def test_the_right_arguments_still_work():
    reply = reply_with_text_and_call()
    decision = al.decide(reply)
    as_dict = al.decide(reply.model_dump())  # a reply as a dict is a reply
    assert (as_dict.action, as_dict.reason, len(as_dict.tool_uses)) == ("execute", "tool_use", 1)
    assert al.execute(decision.tool_uses, [echo])[0]["content"] == "a"
    assert al.execute([reply.model_dump()["content"][1]], [echo])[0]["content"] == "a"
    assert al.request(ScriptedClient(["x"]), ({"role": "user", "content": "hi"},)).content


if __name__ == "__main__":  # the figures for tests/interrupt_report.txt
    total_tried = total_invalid = 0
    print(f"{'scenario':48} {'driver':16} {'lines':>6} {'tried':>6} {'invalid':>7}")
    for script, driver in CASES:
        f = sweep(script, driver)
        total_tried, total_invalid = total_tried + f["tried"], total_invalid + f["invalid"]
        print(f"{script:48} {driver:16} {f['points']:6} {f['tried']:6} {f['invalid']:7}")
        for failure in f["failures"]:
            print("    ", failure)
    print(f"interrupt points tried: {total_tried}, invalid histories: {total_invalid} (goal 0)")
