"""The scenarios each exercise is checked on, and the fakes they use.

A scenario builds fresh inputs (a scripted reply, a history, a fake
``run_bash``), calls the student's function once through ``sandbox.run``, and
judges what happened. The first thing that is wrong raises ``Fail`` with what
was expected, what happened, and the lesson's idea it breaks; ``evaluate``
turns that into a ``Result`` for the report.

Histories are judged with ``agentlab.history.validate``, so a broken history is
described in the API's own words. ``run_bash`` is never a shell here: it is a
``FakeBash`` that records commands and returns canned output, so checks are
fast and safe.
"""

from __future__ import annotations

import re
import reprlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, NoReturn

from agentlab.exercises.report import Report, Result
from agentlab.exercises.sandbox import Crashed, Foreign, Outcome, Stop, describe_error, plain, run
from agentlab.fakeapi.offline import ScriptedClient, make_message, text, tool_use
from agentlab.fakeapi.thinking import hidden, make_block, sign
from agentlab.history import Problem, as_dict, blocks, validate
from agentlab.i18n import t

if TYPE_CHECKING:
    from anthropic.types import Message

__all__ = [
    "DEFAULT_TIMEOUT",
    "QUICK_TIMEOUT",
    "SCENARIOS",
    "STEP_TWO",
    "ExerciseClient",
    "Fail",
    "FakeApprove",
    "FakeBash",
    "Scenario",
    "evaluate",
    "step",
]

DEFAULT_TIMEOUT = 2.0  # seconds per scenario; a correct answer takes milliseconds
QUICK_TIMEOUT = (
    0.5  # per scenario once one has timed out, so an endless loop costs seconds, not minutes
)
CALL_LIMIT = 40  # a fake called more often than this ends the student's code with Stop
MODEL = "claude-sonnet-5-5"  # the model the exercises name (as reference.MODEL); it thinks

# ---------------------------------------------------------------------------
# Fakes: stand-ins for the shell, the user and the model
# ---------------------------------------------------------------------------

OUTPUTS = {
    "ls": "README.md\nagent.py\nnotes.txt",
    "wc -l agent.py": "42 agent.py",
    "date": "Mon Jan  5 09:00:00 UTC 2026",
    "uname -s": "Linux",
    "cat notes.txt": "buy milk\nfinish the agent loop",
    "git status --short": " M agent.py",
}


class FakeBash:
    """Stands in for ``run_bash(command) -> str``: records each command, returns canned
    output, and never starts a shell. Commands in ``failing`` raise ``TimeoutError``."""

    def __init__(self, failing: Iterable[str] = (), limit: int = CALL_LIMIT):
        self.calls: list[Any] = []
        self.failing = set(failing)
        self.limit = limit

    def __call__(self, command: Any) -> str:
        self.calls.append(command)
        if len(self.calls) > self.limit:
            raise Stop("run_bash was called too often")
        if not isinstance(command, str):
            raise TypeError(f"run_bash takes the command as a string, not {type(command).__name__}")
        if command in self.failing:
            raise TimeoutError(f"command timed out after 30 s: {command}")
        return OUTPUTS.get(command, f"(output of {command})")

    @property
    def commands(self) -> list[Any]:
        return list(self.calls)


class FakeApprove:
    """Stands in for the user: ``approve(tool_input) -> bool``; says no to ``deny``."""

    def __init__(self, deny: Iterable[str] = (), limit: int = CALL_LIMIT):
        self.calls: list[Any] = []
        self.deny = set(deny)
        self.limit = limit

    def __call__(self, tool_input: Any) -> bool:
        self.calls.append(tool_input)
        if len(self.calls) > self.limit:
            raise Stop("approve was called too often")
        command = tool_input.get("command") if isinstance(tool_input, Mapping) else None
        return command not in self.deny


class ExerciseClient(ScriptedClient):
    """A ScriptedClient that also keeps what each request sent (a snapshot of the
    history at that moment), the requests the API would have refused, and stops a
    loop that keeps asking long after the script ran out."""

    def __init__(self, replies: Sequence[Any] | Callable[[dict[str, Any]], Any], limit: int):
        super().__init__(replies)
        self.limit = limit
        self.attempts = 0  # every call of messages.create
        self.sent: list[list[Any]] = []  # the history each accepted request carried
        self.tools_sent: list[Any] = []
        self.models: list[str] = []  # the model each accepted request named
        self.rejected: list[str] = []  # the API's 400 message for each refused request

    def _reply(self, params: dict[str, Any]) -> Message:
        self.attempts += 1
        if self.attempts > self.limit + 5:
            raise Stop("the model was asked too often")
        accepted = len(self.requests)
        try:
            return _signed_for(super()._reply(params), str(params.get("model") or MODEL))
        except Exception as e:
            if len(self.requests) == accepted:
                self.rejected.append(describe_error(e))
            raise
        finally:
            if len(self.requests) > accepted:
                self.sent.append(as_dict(list(params.get("messages") or [])))
                self.tools_sent.append(as_dict(params.get("tools")))
                self.models.append(str(params.get("model") or MODEL))


def _signed_for(message: Message, model: str) -> Message:
    """The reply with its thinking blocks signed for the model the request named, as
    the real API signs them (so a student's own model name works too)."""
    content = [
        b.model_copy(update={"signature": sign(model, hidden(b) or "")})
        if b.type == "thinking"
        else b
        for b in message.content
    ]
    return message.model_copy(update={"content": content})


# ---------------------------------------------------------------------------
# Scenarios
# ---------------------------------------------------------------------------


class Fail(Exception):
    """One scenario failed: what was expected, what happened, which idea it breaks."""

    def __init__(self, expected: str, happened: str, idea: str | None = None):
        super().__init__(happened)
        self.expected, self.happened, self.idea = expected, happened, idea


@dataclass(frozen=True)
class Scenario:
    exercise: str
    name: str
    idea: str  # the lesson's idea this scenario is about (a key of ex.idea.*)
    body: Callable[[Trial], None] = field(repr=False, compare=False)

    @property
    def title(self) -> str:
        return t(f"ex.{self.exercise}.{self.name}")


class Trial:
    """One scenario being run: calls the student's function and collects notes."""

    def __init__(self, scenario: Scenario, fn: Callable[..., Any], timeout: float):
        self.scenario, self.fn, self.timeout = scenario, fn, timeout
        self.outcome = Outcome()
        self.notes: list[str] = []

    def run(self, *args: Any) -> Outcome:
        self.outcome = run(self.fn, args, self.timeout)
        return self.outcome

    def call(self, *args: Any) -> Any:
        """Run the function and return its value; an error or a timeout fails the scenario."""
        return self.returned(self.run(*args))

    def returned(self, outcome: Outcome) -> Any:
        if outcome.timed_out:
            self.fail(t("ex.expect.finish"), t("ex.happened.timeout", seconds=self.timeout))
        if outcome.error is not None:
            self.fail(t("ex.expect.no_error"), crashed(outcome))
        return outcome.value

    def fail(self, expected: str, happened: str, idea: str | None = None) -> NoReturn:
        raise Fail(expected, happened, idea or self.scenario.idea)

    def note(self, key: str, **values: Any) -> None:
        self.notes.append(t(key, **values))


def crashed(outcome: Outcome) -> str:
    assert outcome.error is not None
    if isinstance(outcome.error, NotImplementedError):
        return t("ex.happened.stub")
    text_ = t("ex.happened.raised", error=describe_error(outcome.error))
    if outcome.where:
        text_ += "\n" + t("ex.happened.at", line=outcome.where)
    return text_


def evaluate(scenario: Scenario, fn: Callable[..., Any], timeout: float) -> Result:
    """Run one scenario; whatever the student's function does, return a Result."""
    return _judged(Trial(scenario, fn, timeout))


# -- judging in the kernel what the checked process did -----------------------------
# ``check`` runs the student's function in a forked process, which the function
# controls: a verdict made there could be forged (the function can find the pipe and
# send "passed" itself). So that process only *records* each call: what it returned
# or raised, what it printed, and what the fakes and lists it was given hold after it,
# all as plain data (``sandbox.plain``). The kernel then runs the same scenario with
# a ``Replay`` trial, which gives the judging code those records instead of calling
# the function: the kernel decides pass or fail.


class Recorder(Trial):
    """A trial in the checked process that keeps a plain record of each call."""

    def __init__(self, scenario: Scenario, fn: Callable[..., Any], timeout: float):
        super().__init__(scenario, fn, timeout)
        self.records: list[dict[str, Any]] = []
        self._values: list[Any] = []  # what each call returned (for "the same object")

    def run(self, *args: Any) -> Outcome:
        outcome = super().run(*args)
        same = next((k for k, v in enumerate(self._values) if v is outcome.value), None)
        self._values.append(outcome.value)
        error = outcome.error
        self.records.append(
            {
                "value": None if same is not None else plain(outcome.value),
                "same_as": same if outcome.value is not None else None,
                "error": None if error is None else describe_error(error),
                "stub": isinstance(error, NotImplementedError),
                "where": outcome.where,
                "timed_out": outcome.timed_out,
                "stuck": outcome.stuck,
                "printed": outcome.printed,
                "state": [_state(a) for a in args],
            }
        )
        return outcome


class Replay(Trial):
    """A trial in the kernel: each call gives back the next record, puts the fakes
    and lists in the state recorded, and never runs the student's code."""

    def __init__(self, scenario: Scenario, records: Any, timeout: float):
        super().__init__(scenario, _never_called, timeout)
        self.records = list(records) if isinstance(records, list) else None
        self._values: list[Any] = []

    def run(self, *args: Any) -> Outcome:
        if self.records is None:
            raise TypeError("the checked process sent no list of calls")
        if not self.records:
            raise LookupError("the checked process sent fewer calls than the scenario makes")
        r = self.records.pop(0)
        strings = ("where", "printed")
        flags = ("timed_out", "stuck", "stub")
        if (
            not isinstance(r, dict)
            or not all(type(r.get(k)) is str for k in strings)
            or not all(type(r.get(k)) is bool for k in flags)
            or not (r.get("error") is None or type(r["error"]) is str)
            or not isinstance(r.get("state"), list)
            or len(r["state"]) != len(args)
        ):
            raise TypeError("the checked process sent a call record of the wrong shape")
        same = r.get("same_as")
        if same is not None and not (type(same) is int and 0 <= same < len(self._values)):
            raise TypeError("the checked process sent a call record of the wrong shape")
        for arg, state in zip(args, r["state"]):
            _restore(arg, state)
        value = self._values[same] if same is not None else r.get("value")
        self._values.append(value)
        error: BaseException | None = None
        if r["stub"]:
            error = NotImplementedError()
        elif r["error"] is not None:
            error = Crashed(r["error"], raised=True)
        self.outcome = Outcome(value, error, r["where"], r["timed_out"], r["stuck"], r["printed"])
        return self.outcome


def _never_called(*args: Any) -> None:
    raise AssertionError("a replayed trial never calls the student's function")


def _state(arg: Any) -> Any:
    """What the judging code reads of an argument after the call, as plain data."""
    if isinstance(arg, (FakeBash, FakeApprove)):
        return {"calls": plain(arg.calls)}
    if isinstance(arg, ExerciseClient):
        fields = ("attempts", "sent", "tools_sent", "rejected", "models")
        return {name: plain(getattr(arg, name)) for name in fields}
    if isinstance(arg, list):
        return plain(arg)
    if _tool_table(arg):  # subagent's tools: {name: (definition, run)}
        return {name: _state(pair[-1]) for name, pair in arg.items()}
    return None  # not changed by the call as far as the judge reads it (a reply, a str)


def _restore(arg: Any, state: Any) -> None:
    """Put an argument (made afresh by the scenario in the kernel) in the state recorded."""
    if isinstance(arg, (FakeBash, FakeApprove)):
        if not (isinstance(state, dict) and isinstance(state.get("calls"), list)):
            raise TypeError("the checked process sent a fake's calls of the wrong shape")
        arg.calls[:] = state["calls"]
    elif isinstance(arg, ExerciseClient):
        kinds = {
            "attempts": int,
            "sent": list,
            "tools_sent": list,
            "rejected": list,
            "models": list,
        }
        if not (isinstance(state, dict) and all(type(state.get(k)) is v for k, v in kinds.items())):
            raise TypeError("the checked process sent the model's requests in the wrong shape")
        if not all(type(r) is str for r in state["rejected"] + state["models"]):
            raise TypeError("the checked process sent the model's requests in the wrong shape")
        for name in kinds:
            setattr(arg, name, state[name])
    elif isinstance(arg, list):
        if not isinstance(state, list):
            raise TypeError("the checked process sent a list of the wrong shape")
        arg[:] = state
    elif _tool_table(arg):
        if not isinstance(state, dict):
            raise TypeError("the checked process sent the tools in the wrong shape")
        for name, pair in list(arg.items()):
            if name in state:
                _restore(pair[-1], state[name])
            else:  # the function took it out of the caller's table
                del arg[name]


def _tool_table(arg: Any) -> bool:
    """Is this a table of tools {name: (definition, fake)}, as subagent is given?"""
    return (
        type(arg) is dict
        and bool(arg)
        and all(type(v) is tuple and isinstance(v[-1], FakeBash) for v in arg.values())
    )


def record(scenario: Scenario, fn: Callable[..., Any], timeout: float) -> tuple[Result, list[Any]]:
    """In the checked process: run the scenario, and return its Result (a failure there
    stays a failure: the student's value may misbehave only there) and the records."""
    trial = Recorder(scenario, fn, timeout)
    return _judged(trial), trial.records


def replay(scenario: Scenario, records: Any, timeout: float) -> Result:
    """In the kernel: judge the scenario on the records the checked process sent."""
    return _judged(Replay(scenario, records, timeout))


def _judged(trial: Trial) -> Result:
    scenario = trial.scenario
    try:
        scenario.body(trial)
    except Fail as f:
        idea = f.idea or scenario.idea
        return Result(
            scenario.name,
            scenario.title,
            passed=False,
            expected=f.expected,
            happened=f.happened,
            idea=idea,
            idea_title=t(f"ex.idea.{idea}"),
            hint=t(f"ex.hint.{idea}"),
            notes=tuple(trial.notes),
            printed=trial.outcome.printed,
            timed_out=trial.outcome.timed_out,
            stuck=trial.outcome.stuck,
            stub=isinstance(trial.outcome.error, NotImplementedError),
        )
    except Exception as e:  # judging the student's value broke: a failure, never a pass
        return Result(
            scenario.name,
            scenario.title,
            passed=False,
            expected=t("ex.expect.checkable"),
            happened=t("ex.happened.unjudgeable", error=describe_error(e)),
            idea=scenario.idea,
            idea_title=t(f"ex.idea.{scenario.idea}"),
            hint=t(f"ex.hint.{scenario.idea}"),
            printed=trial.outcome.printed,
        )
    return Result(
        scenario.name,
        scenario.title,
        passed=True,
        notes=tuple(trial.notes),
        printed=trial.outcome.printed,
    )


# -- showing values -----------------------------------------------------------

_repr = reprlib.Repr()
_repr.maxstring, _repr.maxother, _repr.maxlevel = 120, 120, 5
_repr.maxdict, _repr.maxlist = 8, 8


def show(value: Any) -> str:
    """A short, deterministic repr (no memory addresses)."""
    return re.sub(r" at 0x[0-9a-fA-F]+", "", _repr.repr(as_dict(value)))


def kind(value: Any) -> str:
    name = value.type_name if isinstance(value, Foreign) else type(value).__name__
    return t("ex.happened.kind", type=name, value=show(value))


def text_of(content: Any) -> str | None:
    """The text of a content value: a string, or a list of text blocks; else None."""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and content:
        parts = [as_dict(b) for b in content]
        if all(isinstance(b, dict) and b.get("type") == "text" for b in parts):
            return "".join(str(b.get("text")) for b in parts)
    return None


# -- judging histories ---------------------------------------------------------


def _has_results_for(message: Any, ids: Iterable[str]) -> bool:
    wanted = set(ids)
    return any(
        b.get("type") == "tool_result" and str(b.get("tool_use_id")) in wanted
        for b in blocks(message)
    )


SPECIAL = ("approval", "unknown_tool", "tool_fails", "cut_off", "max_turns")


def idea_for(problem: Problem, messages: Sequence[Any], default: str) -> str:
    """Which lesson idea a broken history breaks, from the rule and its context."""
    i = problem.index
    if problem.rule == "role":
        if "`tool_use` blocks can only be in" in problem.message:
            return "save_reply"
        return "results_user"
    if problem.rule == "shape":
        return "results_user"
    if problem.rule == "first":
        return "history"
    if problem.rule == "results_first":
        return "results_first"
    if problem.rule == "unexpected_result" and i is not None and i >= 1:
        prev = messages[i - 1]
        prev_uses = [b for b in blocks(prev) if b.get("type") == "tool_use"]
        if isinstance(prev, Mapping) and prev.get("role") == "assistant" and prev_uses:
            return "pair_by_id"
        if any(b.get("type") == "tool_result" for b in blocks(prev)):
            return "one_message"
        return "save_reply"
    if problem.rule == "unanswered" and i is not None:
        ids = [str(b.get("id")) for b in blocks(messages[i]) if b.get("type") == "tool_use"]
        later = messages[i + 2 :] if i + 2 <= len(messages) else []
        if any(_has_results_for(m, ids) for m in later):
            return "one_message"
        if i + 1 < len(messages) and default not in SPECIAL:
            return "every_call"  # in a scenario about a special call, missing it is the point
    return default


def judge_history(
    trial: Trial, messages: Sequence[Any], *, pending_ok: bool, default: str | None = None
) -> None:
    problems = validate(messages, pending_ok=pending_ok)
    if problems:
        idea = idea_for(problems[0], messages, default or trial.scenario.idea)
        trial.fail(t("ex.expect.valid_history"), t("ex.happened.api", error=problems[0]), idea)


# ---------------------------------------------------------------------------
# Replies and histories used by the scenarios
# ---------------------------------------------------------------------------

TASK = "How many lines are in agent.py, and what else is here?"
TOOLS = [
    {
        "name": "bash",
        "description": "Run a shell command and return its output.",
        "input_schema": {
            "type": "object",
            "properties": {"command": {"type": "string"}},
            "required": ["command"],
        },
    }
]


def bash_call(command: str, id: str) -> dict[str, Any]:
    return tool_use("bash", {"command": command}, id=id)


def thinking(note: str) -> dict[str, Any]:
    """A thinking block as claude-sonnet-5-5 returns it by default (display "omitted":
    empty text and a signature). The API wants it sent back unchanged; the offline
    clients check its signature (``agentlab.fakeapi.thinking``)."""
    return make_block(MODEL, note)


def reply(*content: Any, stop: str | None = None) -> Message:
    """A scripted reply. One that asks for tools starts with a thinking block, as
    today's default model's replies do (a loop must send it back)."""
    parts = list(content)
    asks = any(isinstance(b, dict) and b.get("type") == "tool_use" for b in parts)
    if asks and not (isinstance(parts[0], dict) and parts[0].get("type") == "thinking"):
        parts.insert(0, thinking("Which command answers this?"))
    return make_message(parts, stop)


def final(words: str = "agent.py has 42 lines; next to it are README.md and notes.txt.") -> Message:
    return reply(text(words))


def history_before(response: Message) -> list[dict[str, Any]]:
    """The history right after the reply was saved: [task, assistant reply]."""
    return [
        {"role": "user", "content": TASK},
        {"role": "assistant", "content": as_dict(response.content)},
    ]


def tool_uses(response: Any) -> list[dict[str, Any]]:
    return [b for b in blocks({"content": response.content}) if b.get("type") == "tool_use"]


# ===========================================================================
# 1. first_message(query) -> dict
# ===========================================================================


def _first_message(query: str) -> Callable[[Trial], None]:
    def body(trial: Trial) -> None:
        out = trial.call(query)
        expected = show({"role": "user", "content": query})
        if isinstance(out, list) and len(out) == 1:
            trial.fail(expected, t("ex.happened.list_of_one", value=show(out)))
        if not isinstance(out, dict):
            trial.fail(expected, kind(out))
        if out.get("role") != "user":
            trial.fail(t("ex.expect.role", role="user"), t("ex.happened.role", value=show(out)))
        if "content" not in out:
            trial.fail(expected, t("ex.happened.no_content", value=show(out)))
        if text_of(out["content"]) != query:
            trial.fail(show(query), t("ex.happened.content", value=show(out["content"])))
        extra = sorted(set(out) - {"role", "content"})
        if extra:
            trial.fail(expected, t("ex.happened.extra_keys", keys=", ".join(extra)))
        judge_history(trial, [out], pending_ok=False)

    return body


def _first_message_new_each_time(trial: Trial) -> None:
    first = "List the files here."
    a = trial.call(first)
    b = trial.call("What is the date?")
    if not isinstance(a, dict):
        trial.fail(show({"role": "user", "content": first}), kind(a))
    if a is b:
        trial.fail(t("ex.expect.new_dict"), t("ex.happened.same_dict", value=show(a)))
    if text_of(a.get("content")) != first:
        trial.fail(t("ex.expect.new_dict"), t("ex.happened.first_changed", value=show(a)))


# ===========================================================================
# 2. decide(response) -> "execute" | "stop" | "continue"
# ===========================================================================

DECISIONS = ("execute", "stop", "continue")


def _decide(response: Message, expected: str) -> Callable[[Trial], None]:
    def body(trial: Trial) -> None:
        out = trial.call(response)
        if not isinstance(out, str) or out not in DECISIONS:
            trial.fail(t("ex.expect.decision", value=repr(expected)), kind(out))
        if out != expected:
            reason = show(response.stop_reason)
            trial.fail(repr(expected), t("ex.happened.decision", value=repr(out), reason=reason))

    return body


CUT_OFF = bash_call("find . -name '*.py' -newer agent.py -exec rm", "toolu_01Cut")


def _decide_scenarios() -> list[tuple[str, str, Message, str]]:
    call = bash_call("wc -l agent.py", "toolu_01Wc")
    calls = [bash_call("date", "toolu_01Dt"), bash_call("uname -s", "toolu_01Un")]
    return [
        ("end_turn", "stop_rule", final(), "stop"),
        (
            "tool_use",
            "model_decides",
            reply(thinking("Count the lines with wc."), text("Let me count."), call),
            "execute",
        ),
        (
            "parallel_tool_use",
            "model_decides",
            reply(thinking("Two commands at once."), *calls),
            "execute",
        ),
        ("stop_sequence", "stop_rule", reply(text("Answer: 42"), stop="stop_sequence"), "stop"),
        ("max_tokens", "stop_rule", reply(text("The files are: REA"), stop="max_tokens"), "stop"),
        (
            "cut_off_call",
            "cut_off",
            reply(text("I'll clean up."), CUT_OFF, stop="max_tokens"),
            "stop",
        ),
        (
            "pause_turn",
            "pause_turn",
            reply(text("Still searching..."), stop="pause_turn"),
            "continue",
        ),
        ("refusal", "stop_rule", reply(text("I can't help with that."), stop="refusal"), "stop"),
        (
            "context_window",
            "stop_rule",
            reply(text("The history is too long"), stop="model_context_window_exceeded"),
            "stop",
        ),
        ("unknown_stop_reason", "stop_rule", reply(text("Hm."), stop="some_new_reason"), "stop"),
    ]


# ===========================================================================
# 3. tool_result(block, output) -> dict
# ===========================================================================


def _one_tool_result(trial: Trial, block: Any, output: str) -> None:
    out = trial.call(block, output)
    expected = show({"type": "tool_result", "tool_use_id": block.id, "content": output})
    if not isinstance(out, dict):
        trial.fail(expected, kind(out), "result_shape")
    if "role" in out:
        trial.fail(expected, t("ex.happened.message_not_block", value=show(out)), "result_shape")
    if out.get("type") != "tool_result":
        trial.fail(
            expected, t("ex.happened.block_type", value=show(out.get("type"))), "result_shape"
        )
    if out.get("tool_use_id") != block.id:
        got = show(out.get("tool_use_id"))
        trial.fail(repr(block.id), t("ex.happened.tool_use_id", value=got), "pair_by_id")
    if text_of(out.get("content")) != output:
        trial.fail(
            show(output), t("ex.happened.content", value=show(out.get("content"))), "result_shape"
        )
    if out.get("is_error"):
        trial.fail(expected, t("ex.happened.is_error_set"), "result_shape")
    response = reply(text("Let me look."), as_dict(block))
    judge_history(
        trial, [*history_before(response), {"role": "user", "content": [out]}], pending_ok=False
    )


def _calls(response: Message) -> list[Any]:
    """The tool_use blocks of a reply (the first block is a thinking block)."""
    return [b for b in response.content if b.type == "tool_use"]


def _tool_result_basic(trial: Trial) -> None:
    [block] = _calls(reply(bash_call("ls", "toolu_01Ls")))
    _one_tool_result(trial, block, OUTPUTS["ls"])


def _tool_result_pairs(trial: Trial) -> None:
    response = reply(bash_call("date", "toolu_01Dt"), bash_call("uname -s", "toolu_01Un"))
    for block, command in zip(_calls(response), ["date", "uname -s"]):
        _one_tool_result(trial, block, OUTPUTS[command])


def _tool_result_unchanged(trial: Trial) -> None:
    [block] = _calls(reply(bash_call("cat notes.txt", "toolu_01Ct")))
    _one_tool_result(trial, block, "  indented line\n中文 ✓ 'quotes' \"too\"\n\ntrailing newline\n")


# ===========================================================================
# 4. run_tools(response, run_bash) -> list[dict]
# ===========================================================================

ERROR = object()  # in an expected result list: an is_error result with some text


def _judge_results(trial: Trial, response: Message, out: Any, expected: list[Any]) -> None:
    """``expected`` holds, per tool_use in order, the content wanted or ERROR."""
    uses = tool_uses(response)
    ids = [u["id"] for u in uses]
    if isinstance(out, dict) and "role" in out:
        trial.fail(
            t("ex.expect.result_list", n=len(ids)),
            t("ex.happened.message_not_list"),
            "result_shape",
        )
    if not isinstance(out, list):
        trial.fail(t("ex.expect.result_list", n=len(ids)), kind(out), "result_shape")
    got = [as_dict(r) for r in out]
    if any(not isinstance(r, dict) for r in got):
        trial.fail(t("ex.expect.result_list", n=len(ids)), show(got), "result_shape")
    if any(r.get("type") != "tool_result" for r in got):
        bad = next(r for r in got if r.get("type") != "tool_result")
        idea = "only_tool_use" if bad.get("type") in ("text", "thinking") else "result_shape"
        trial.fail(
            t("ex.expect.result_list", n=len(ids)),
            t("ex.happened.not_a_result", value=show(bad)),
            idea,
        )
    got_ids = [r.get("tool_use_id") for r in got]
    if len(got) < len(ids):
        missing = [i for i in ids if i not in got_ids]
        idea = trial.scenario.idea if trial.scenario.idea in SPECIAL else "every_call"
        trial.fail(
            t("ex.expect.one_each", n=len(ids)),
            t("ex.happened.missing_results", n=len(got), missing=", ".join(map(str, missing))),
            idea,
        )
    if len(got) > len(ids):
        trial.fail(
            t("ex.expect.one_each", n=len(ids)),
            t("ex.happened.too_many", n=len(got)),
            "only_tool_use",
        )
    if got_ids != ids:
        idea = "every_call" if sorted(map(str, got_ids)) == sorted(ids) else "pair_by_id"
        trial.fail(show(ids), t("ex.happened.ids", value=show(got_ids)), idea)
    for use, result, want in zip(uses, got, expected):
        if want is ERROR:
            if not result.get("is_error") or not text_of(result.get("content")):
                idea = "unknown_tool" if use["name"] != "bash" else "tool_fails"
                trial.fail(t("ex.expect.error_result", id=use["id"]), show(result), idea)
        elif text_of(result.get("content")) != want or result.get("is_error"):
            trial.fail(
                show({"type": "tool_result", "tool_use_id": use["id"], "content": want}),
                show(result),
                "result_shape",
            )
    if got:
        history = [*history_before(response), {"role": "user", "content": got}]
        judge_history(trial, history, pending_ok=False)


def _run_tools(
    response: Message, commands: list[str], expected: list[Any], failing: Iterable[str] = ()
) -> Callable[[Trial], None]:
    def body(trial: Trial) -> None:
        bash = FakeBash(failing)
        outcome = trial.run(response, bash)
        odd = [c for c in bash.calls if not isinstance(c, str)]
        if odd and commands:
            trial.fail(
                t("ex.expect.command", value=show(commands[0])),
                t("ex.happened.command", value=show(odd[0])),
                "command",
            )
        ran = [c for c in bash.calls if isinstance(c, str)]
        if outcome.ok and ran != commands:
            idea = None
            if set(ran) < set(commands):
                idea = "every_call"
            elif set(ran) - set(commands):
                idea = "unknown_tool" if trial.scenario.idea == "unknown_tool" else None
            trial.fail(
                t("ex.expect.ran", value=show(commands)),
                t("ex.happened.ran", value=show(ran)),
                idea,
            )
        out = trial.returned(outcome)
        _judge_results(trial, response, out, expected)

    return body


def _run_tools_scenarios() -> list[tuple[str, str, Callable[[Trial], None]]]:
    one = reply(text("Let me look."), bash_call("ls", "toolu_01Ls"))
    three = reply(
        text("Three things at once."),
        bash_call("date", "toolu_01Dt"),
        bash_call("uname -s", "toolu_01Un"),
        bash_call("git status --short", "toolu_01Gs"),
    )
    mixed = reply(
        thinking("List, then count."),
        text("First the file list."),
        bash_call("ls", "toolu_01Ls"),
        text("Then the line count."),
        bash_call("wc -l agent.py", "toolu_01Wc"),
    )
    unknown = reply(
        bash_call("ls", "toolu_01Ls"), tool_use("read_file", {"path": "notes.txt"}, id="toolu_01Rf")
    )
    # A tool this harness lacks whose input looks like bash's: the name, not the input,
    # says which tool was asked for.
    lookalike = reply(
        bash_call("ls", "toolu_01Ls"), tool_use("python", {"command": "print(1)"}, id="toolu_01Py")
    )
    failing = reply(bash_call("sleep 600", "toolu_01Sl"), bash_call("ls", "toolu_01Ls"))
    bad_input = reply(tool_use("bash", {"cmd": "ls"}, id="toolu_01Bd"))
    none = final()
    return [
        ("one_call", "result_shape", _run_tools(one, ["ls"], [OUTPUTS["ls"]])),
        (
            "parallel_calls",
            "every_call",
            _run_tools(
                three,
                ["date", "uname -s", "git status --short"],
                [OUTPUTS["date"], OUTPUTS["uname -s"], OUTPUTS["git status --short"]],
            ),
        ),
        (
            "text_between_calls",
            "only_tool_use",
            _run_tools(mixed, ["ls", "wc -l agent.py"], [OUTPUTS["ls"], OUTPUTS["wc -l agent.py"]]),
        ),
        ("no_calls", "only_tool_use", _run_tools(none, [], [])),
        ("unknown_tool", "unknown_tool", _run_tools(unknown, ["ls"], [OUTPUTS["ls"], ERROR])),
        ("lookalike_tool", "unknown_tool", _run_tools(lookalike, ["ls"], [OUTPUTS["ls"], ERROR])),
        (
            "failing_tool",
            "tool_fails",
            _run_tools(failing, ["sleep 600", "ls"], [ERROR, OUTPUTS["ls"]], failing=["sleep 600"]),
        ),
        ("bad_input", "tool_fails", _run_tools(bad_input, [], [ERROR])),
    ]


# ===========================================================================
# 5. append_results(messages, results) -> None
# ===========================================================================


def _result(id: str, command: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": id, "content": OUTPUTS[command]}


def _append_results(history: list[Any], results: list[dict[str, Any]]) -> Callable[[Trial], None]:
    def body(trial: Trial) -> None:
        messages = as_dict(history)
        before = as_dict(history)
        given = as_dict(results)
        out = trial.call(messages, given)
        wanted = {"role": "user", "content": as_dict(results)}
        if len(messages) == len(before) and messages == before:
            happened = (
                t("ex.happened.returned_instead", value=show(out))
                if out is not None
                else t("ex.happened.unchanged", n=len(before))
            )
            trial.fail(t("ex.expect.grew", n=len(before) + 1), happened, "in_place")
        if len(messages) < len(before) or messages[: len(before)] != before:
            # same length but changed: the results went into an earlier message
            idea = "results_user" if len(messages) == len(before) else "in_place"
            trial.fail(t("ex.expect.kept", n=len(before)), t("ex.happened.changed_earlier"), idea)
        if len(messages) > len(before) + 1:
            added = len(messages) - len(before)
            idea = "one_message" if len(results) > 1 and added == len(results) else "results_user"
            trial.fail(t("ex.expect.one_message"), t("ex.happened.added", n=added), idea)
        judge_history(trial, messages, pending_ok=False, default="results_user")
        new = as_dict(messages[-1])
        if new != wanted:
            trial.fail(show(wanted), show(new), "results_user")
        if out is not None:
            trial.note("ex.note.returns_none", value=show(out))

    return body


def _append_results_scenarios() -> list[tuple[str, str, Callable[[Trial], None]]]:
    one = reply(text("Let me look."), bash_call("ls", "toolu_01Ls"))
    three = reply(
        bash_call("date", "toolu_01Dt"),
        bash_call("uname -s", "toolu_01Un"),
        bash_call("sleep 600", "toolu_01Sl"),
    )
    three_results = [
        _result("toolu_01Dt", "date"),
        _result("toolu_01Un", "uname -s"),
        {
            "type": "tool_result",
            "tool_use_id": "toolu_01Sl",
            "content": "Error: timed out",
            "is_error": True,
        },
    ]
    second = reply(text("Now the lines."), bash_call("wc -l agent.py", "toolu_01Wc"))
    longer = [
        *history_before(one),
        {"role": "user", "content": [_result("toolu_01Ls", "ls")]},
        {"role": "assistant", "content": as_dict(second.content)},
    ]
    return [
        (
            "one_result",
            "results_user",
            _append_results(history_before(one), [_result("toolu_01Ls", "ls")]),
        ),
        ("parallel_results", "one_message", _append_results(history_before(three), three_results)),
        (
            "longer_history",
            "in_place",
            _append_results(longer, [_result("toolu_01Wc", "wc -l agent.py")]),
        ),
    ]


# ===========================================================================
# 6 and 7. agent_loop and guarded_loop
# ===========================================================================


@dataclass
class Loop:
    """One loop scenario: the script, the fakes, and what to expect."""

    script: list[Message] | Callable[[dict[str, Any]], Any]
    commands: list[str] = field(default_factory=list)  # what must run, in order
    requests: tuple[int, ...] = (1,)  # how many model requests are right
    never: tuple[str, ...] = ()  # commands that must not run
    never_idea: str = "cut_off"
    failing: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()  # tool_use ids whose result must be is_error
    approvals: list[dict[str, Any]] | None = None  # the inputs approve must be asked about
    max_turns: int = 10
    pending: str = "every_call"  # idea if the history ends on an unanswered tool_use
    pending_note: str | None = None  # accept that ending, with this note
    more_requests: str = "stop_rule"  # idea if the model was asked after the script ended
    notes: dict[int, str] = field(default_factory=dict)  # a note when it made this many requests
    also: tuple[tuple[str, ...], ...] = ()  # other runs (besides ``commands``) that are right too
    thinking: bool = False  # the replies carry thinking blocks the loop must send back


def _task() -> list[dict[str, Any]]:
    return [{"role": "user", "content": TASK}]


def _judge_loop(trial: Trial, case: Loop, guarded: bool) -> None:
    script = case.script
    limit = len(script) if isinstance(script, list) else max(case.requests)
    client = ExerciseClient(script, limit=limit)
    bash = FakeBash(case.failing)
    approve = FakeApprove(case.deny)
    messages = _task()
    args: tuple[Any, ...] = (client, messages, as_dict(TOOLS), bash)
    if guarded:
        args += (case.max_turns, approve)
    outcome = trial.run(*args)
    if outcome.timed_out:
        trial.returned(outcome)
    refused = [r for r in client.rejected if "thinking" in r]
    if refused:  # the client refused a history whose thinking block was dropped or changed
        trial.fail(
            t("ex.expect.thinking_kept", n=len(client.sent) + 1),
            t("ex.happened.api", error=refused[0]),
            "keep_thinking",
        )
    ran = [c for c in bash.calls if isinstance(c, str)]
    bad = [c for c in ran if c in case.never]
    if bad:
        trial.fail(
            t("ex.expect.not_run", value=show(bad[0])),
            t("ex.happened.ran", value=show(ran)),
            case.never_idea,
        )
    odd = [c for c in bash.calls if not isinstance(c, str)]
    if odd:
        trial.fail(
            t("ex.expect.command", value="block.input['command']"),
            t("ex.happened.command", value=show(odd[0])),
            "command",
        )
    if client.attempts == 0:
        trial.returned(outcome)
        trial.fail(t("ex.expect.requests", n=min(case.requests)), t("ex.happened.no_request"))
    if len(messages) == 1:
        trial.returned(outcome)
        longest = max((len(sent) for sent in client.sent), default=0)
        if longest > 1:  # it sent a history that is not the list it was given
            trial.fail(
                t("ex.expect.saved"), t("ex.happened.rebound", sent=longest, n=1), "in_place"
            )
        trial.fail(t("ex.expect.saved"), t("ex.happened.unchanged", n=1), "save_reply")
    judge_history(trial, messages, pending_ok=True)
    problems = validate(messages)
    if problems:
        if case.pending_note is None:
            trial.fail(
                t("ex.expect.valid_history"), t("ex.happened.api", error=problems[0]), case.pending
            )
        trial.note(case.pending_note)
    accepted = len(client.sent)
    # a request sent after the model's answer is refused as a prefill by the newest models
    # (the history ends on an assistant message): it still asked again
    asked = accepted + sum(1 for r in client.rejected if "prefill" in r)
    if asked > limit:
        trial.fail(
            t("ex.expect.requests", n=max(case.requests)),
            t("ex.happened.asked_again", n=asked),
            case.more_requests,
        )
    trial.returned(outcome)
    if accepted not in case.requests:
        trial.fail(
            t("ex.expect.requests", n=max(case.requests)), t("ex.happened.requests", n=accepted)
        )
    if ran != case.commands and tuple(ran) not in case.also:
        idea = "every_call" if set(ran) < set(case.commands) else None
        trial.fail(
            t("ex.expect.ran", value=show(case.commands)),
            t("ex.happened.ran", value=show(ran)),
            idea,
        )
    for sent in client.tools_sent:
        if sent != as_dict(TOOLS):
            trial.fail(t("ex.expect.tools"), t("ex.happened.tools", value=show(sent)), "send_tools")
    if case.thinking and isinstance(script, list):
        _judge_thinking(trial, client, script)
    _judge_answers(trial, messages, case)
    if guarded and case.approvals is not None and approve.calls != case.approvals:
        trial.fail(
            t("ex.expect.approve", value=show(case.approvals)),
            t("ex.happened.approve", value=show(approve.calls)),
            "approval",
        )
    if accepted in case.notes:
        trial.note(case.notes[accepted])


def _judge_thinking(trial: Trial, client: ExerciseClient, script: list[Message]) -> None:
    """Each request that continues a tool exchange must send the assistant turn it
    continues with that turn's thinking block first, unchanged.

    The real API refuses such a request ("Expected `thinking` or `redacted_thinking`,
    but found `text`. When `thinking` is enabled, a final `assistant` message must
    start with a thinking block ...", and "Invalid `signature` in `thinking` block"
    for an altered one; wording from public error reports, 2026). The
    offline clients may not check it yet, so the checker looks at the history the
    loop sent itself."""
    for k, sent in enumerate(client.sent[1:], start=1):
        # the reply as the API signed it: for the model the request before named
        model = client.models[k - 1] if k - 1 < len(client.models) else MODEL
        reply = _signed_for(script[k - 1], model)
        wanted = [b for b in as_dict(reply.content) if b.get("type") == "thinking"]
        if not wanted or script[k - 1].stop_reason != "tool_use":
            continue
        turns = [m for m in sent if isinstance(m, Mapping) and m.get("role") == "assistant"]
        first = blocks(turns[-1])[:1] if turns else []
        if not first or first[0].get("type") != "thinking":
            got = show(first[0] if first else None)
            trial.fail(
                t("ex.expect.thinking_kept", n=k + 1),
                t("ex.happened.thinking_dropped", n=k + 1, value=got),
                "keep_thinking",
            )
        if first[0] != wanted[0]:
            trial.fail(
                show(wanted[0]),
                t("ex.happened.thinking_changed", n=k + 1, value=show(first[0])),
                "keep_thinking",
            )


def _judge_answers(trial: Trial, messages: list[Any], case: Loop) -> None:
    """Each result carries the output of its command, or is an error where it must be."""
    uses: dict[str, dict[str, Any]] = {}
    for m in messages:
        for b in blocks(m):
            if b.get("type") == "tool_use":
                uses[str(b.get("id"))] = b
            if b.get("type") != "tool_result":
                continue
            use = uses.get(str(b.get("tool_use_id")), {})
            command = (use.get("input") or {}).get("command")
            if str(b.get("tool_use_id")) in case.errors:
                if not b.get("is_error") or not text_of(b.get("content")):
                    idea = {"bash": "tool_fails"}.get(str(use.get("name")), "unknown_tool")
                    if command in case.deny:
                        idea = "approval"
                    trial.fail(t("ex.expect.error_result", id=b.get("tool_use_id")), show(b), idea)
            elif case.also and b.get("is_error") and text_of(b.get("content")):
                continue  # a call the loop chose not to run (say, at the turn limit), answered
            elif command in OUTPUTS and text_of(b.get("content")) != OUTPUTS[command]:
                want = {
                    "type": "tool_result",
                    "tool_use_id": b.get("tool_use_id"),
                    "content": OUTPUTS[command],
                }
                trial.fail(show(want), show(b), "result_shape")


def _loop(case: Loop, guarded: bool = False) -> Callable[[Trial], None]:
    def body(trial: Trial) -> None:
        _judge_loop(trial, case, guarded)

    return body


def _endless(params: dict[str, Any]) -> Message:
    """A model that asks for two more commands every time it is asked."""
    n = len(params.get("messages") or [])
    return reply(bash_call("ls", f"toolu_01Ls{n:02d}"), bash_call("date", f"toolu_01Dt{n:02d}"))


def _loop_cases(guarded: bool) -> list[tuple[str, str, Loop]]:
    ls = bash_call("ls", "toolu_01Ls")
    wc = bash_call("wc -l agent.py", "toolu_01Wc")
    three = [
        bash_call("date", "toolu_01Dt"),
        bash_call("uname -s", "toolu_01Un"),
        bash_call("git status --short", "toolu_01Gs"),
    ]
    parallel = ["date", "uname -s", "git status --short"]
    cut_note = None if guarded else "ex.note.cut_off"
    cases = [
        ("answer_without_tools", "stop_rule", Loop([final()])),
        ("one_call", "loop", Loop([reply(text("Let me look."), ls), final()], ["ls"], (2,))),
        (
            "parallel_calls",
            "every_call",
            Loop([reply(text("All at once."), *three), final()], parallel, (2,)),
        ),
        (
            "two_rounds",
            "loop",
            Loop(
                [reply(ls), reply(text("Now the lines."), wc), final()],
                ["ls", "wc -l agent.py"],
                (3,),
            ),
        ),
        (
            "thinking_blocks",
            "keep_thinking",
            Loop(
                [
                    reply(thinking("First see what is here."), ls),
                    reply(thinking("Now count the lines."), text("Now the lines."), wc),
                    reply(thinking("I can answer now."), text("agent.py has 42 lines.")),
                ],
                ["ls", "wc -l agent.py"],
                (3,),
                thinking=True,
            ),
        ),
        ("stop_sequence", "stop_rule", Loop([reply(text("Answer: 42"), stop="stop_sequence")])),
        ("max_tokens", "stop_rule", Loop([reply(text("The files are: REA"), stop="max_tokens")])),
        ("refusal", "stop_rule", Loop([reply(text("I can't help with that."), stop="refusal")])),
        (
            "context_window",
            "stop_rule",
            Loop([reply(text("Too long"), stop="model_context_window_exceeded")]),
        ),
        ("unknown_stop_reason", "stop_rule", Loop([reply(text("Hm."), stop="some_new_reason")])),
        (
            "cut_off_call",
            "cut_off",
            Loop(
                [
                    reply(text("I'll clean up."), CUT_OFF, stop="max_tokens"),
                    final("Sorry, I was cut off."),
                ],
                requests=(1, 2),
                never=(CUT_OFF["input"]["command"],),
                pending="answer_cut_off",  # not run (right), but not answered
                pending_note=cut_note,
            ),
        ),
        (
            "pause_turn",
            "pause_turn",
            Loop(
                [reply(text("Still searching..."), stop="pause_turn"), final()],
                requests=(1, 2) if not guarded else (2,),
                notes={1: "ex.note.pause_turn"} if not guarded else {},
            ),
        ),
    ]
    if not guarded:
        return cases
    denied = "rm -rf ~/notes"
    cases += [
        (
            "approved_call",
            "approval",
            Loop([reply(ls), final()], ["ls"], (2,), approvals=[{"command": "ls"}]),
        ),
        (
            "denied_call",
            "approval",
            Loop(
                [
                    reply(text("Let me tidy up."), bash_call(denied, "toolu_01Rm")),
                    final("OK, I won't."),
                ],
                requests=(2,),
                never=(denied,),
                never_idea="approval",
                deny=(denied,),
                errors=("toolu_01Rm",),
                approvals=[{"command": denied}],
            ),
        ),
        (
            "mixed_approval",
            "approval",
            Loop(
                [reply(ls, bash_call(denied, "toolu_01Rm")), final()],
                ["ls"],
                (2,),
                never=(denied,),
                never_idea="approval",
                deny=(denied,),
                errors=("toolu_01Rm",),
                approvals=[{"command": "ls"}, {"command": denied}],
            ),
        ),
        (
            "max_turns",
            "max_turns",
            Loop(
                _endless,
                ["ls", "date"] * 3,
                (3,),
                also=(("ls", "date") * 2,),  # the last calls answered "not run" is right too
                max_turns=3,
                pending="max_turns",
                more_requests="max_turns",
            ),
        ),
        (
            "max_turns_one",
            "max_turns",
            Loop(
                _endless,
                ["ls", "date"],
                (1,),
                also=((),),
                max_turns=1,
                pending="max_turns",
                more_requests="max_turns",
            ),
        ),
        ("ends_early", "stop_rule", Loop([reply(ls), final()], ["ls"], (2,), max_turns=5)),
        (
            "unknown_tool",
            "unknown_tool",
            Loop(
                [reply(tool_use("python", {"code": "print(1)"}, id="toolu_01Py")), final()],
                requests=(2,),
                errors=("toolu_01Py",),
            ),
        ),
        (
            "failing_tool",
            "tool_fails",
            Loop(
                [reply(bash_call("sleep 600", "toolu_01Sl"), ls), final()],
                ["sleep 600", "ls"],
                (2,),
                failing=("sleep 600",),
                errors=("toolu_01Sl",),
            ),
        ),
    ]
    return cases


# Exercise 7 is written in two steps. Step 1 (limits and endings) is checked on the
# guarded_loop scenarios that need no approval and no error results; step 2 adds them.
STEP_TWO = ("approved_call", "denied_call", "mixed_approval", "unknown_tool", "failing_tool")


def step(report: Report, number: int) -> Report:
    """Only the scenarios of one step of exercise 7 (1: limits and endings; 2: approval
    and errors), so a student can finish step 1 before reading about step 2."""
    if number not in (1, 2):
        raise ValueError("exercise 7 has steps 1 and 2")
    keep = [r for r in report.results if (r.scenario in STEP_TWO) == (number == 2)]
    if number == 2:
        return replace(report, results=tuple(keep))
    # Step 1 is the student's limited_loop: the report speaks of it, not of guarded_loop.
    problem = report.problem
    if problem == t("ex.report.stub", name=report.exercise):
        problem = t("ex.report.stub", name="limited_loop")
    return replace(report, exercise="limited_loop", results=tuple(keep), problem=problem)


# ---------------------------------------------------------------------------
# The registry: exercise name -> its scenarios, in the order they are checked
# ---------------------------------------------------------------------------


def _build() -> dict[str, list[Scenario]]:
    s: dict[str, list[Scenario]] = {}
    s["first_message"] = [
        Scenario(
            "first_message", "simple", "history", _first_message("How many .py files are here?")
        ),
        Scenario(
            "first_message", "unicode", "history", _first_message("这个目录里有多少个 .py 文件？")
        ),
        Scenario(
            "first_message",
            "exact_text",
            "history",
            _first_message("Find 'TODO' in *.py\nthen count them  "),
        ),
        Scenario("first_message", "new_each_time", "history", _first_message_new_each_time),
    ]
    s["decide"] = [
        Scenario("decide", name, idea, _decide(response, want))
        for name, idea, response, want in _decide_scenarios()
    ]
    s["tool_result"] = [
        Scenario("tool_result", "basic", "result_shape", _tool_result_basic),
        Scenario("tool_result", "pairs_by_id", "pair_by_id", _tool_result_pairs),
        Scenario("tool_result", "output_unchanged", "result_shape", _tool_result_unchanged),
    ]
    s["run_tools"] = [Scenario("run_tools", n, i, b) for n, i, b in _run_tools_scenarios()]
    s["append_results"] = [
        Scenario("append_results", n, i, b) for n, i, b in _append_results_scenarios()
    ]
    s["agent_loop"] = [Scenario("agent_loop", n, i, _loop(c)) for n, i, c in _loop_cases(False)]
    s["guarded_loop"] = [
        Scenario("guarded_loop", n, i, _loop(c, True)) for n, i, c in _loop_cases(True)
    ]
    from agentlab.exercises import series  # the series' exercises: planning and subagents

    for exercise, cases in series.build().items():
        s[exercise] = [Scenario(exercise, n, i, b) for n, i, b in cases]
    return s


SCENARIOS: dict[str, list[Scenario]] = _build()
# Step 1 of exercise 7 on its own scenarios (its own tries: approval is step 2's).
STEP_ONE = tuple(s.name for s in SCENARIOS["guarded_loop"] if s.name not in STEP_TWO)
