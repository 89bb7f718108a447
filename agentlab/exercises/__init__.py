"""Classroom exercises: write one piece of the agent loop, get specific feedback.

    from agentlab.exercises import list_exercises, check
    list_exercises()            # the seven exercises, in the order of the lesson
    check("decide", decide)     # run your decide() on every scenario: a Report
    check("decide", decide, show_answer=True)   # the same, with the model answer
    check("decide", decide, scenarios=["max_tokens", "cut_off_call"])  # a lesson's quick check

Each exercise is one function with a fixed name and signature. ``check`` runs
it on scenarios built with the offline clients (parallel calls, unknown and
failing tools, every stop reason, a tool call cut off by ``max_tokens``) and
returns a ``Report``: ``.passed``, the failures with what was expected and what
happened, a hint for each lesson idea they break, and ``.score(points)`` for
nbgrader. Hints nudge first: in one kernel ``check`` counts the failing tries of
each exercise; the first report names what to look at, the second points at the
exact field or line, the third (or ``show_answer=True``) shows the answer. Nothing the function does can break the checker: each scenario runs
in its own process with fresh objects and a hard time limit, and exceptions,
``sys.exit``, ``os._exit``, wrong types, endless loops and values that cannot
be compared are all reported (see ``agentlab.exercises.sandbox``).

The notebooks in ``notebooks/exercises`` and ``notebooks/solutions`` are made
from ``agentlab.exercises.reference`` by ``tools/make_exercises.py``.
"""

from __future__ import annotations

import inspect
import types
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from agentlab.exercises import reference
from agentlab.exercises import strings as _strings  # noqa: F401  (registers the texts)
from agentlab.exercises.report import Report, Result
from agentlab.exercises.sandbox import (
    Crashed,
    Forked,
    Outcome,
    Refused,
    can_fork,
    describe_error,
    run,
)
from agentlab.exercises.scenarios import (
    DEFAULT_TIMEOUT,
    QUICK_TIMEOUT,
    SCENARIOS,
    Scenario,
    evaluate,
    record,
    replay,
)
from agentlab.exercises.scenarios import _build as _build_scenarios
from agentlab.i18n import get_language, t
from agentlab.tools.shell import reaping

__all__ = [
    "DEFAULT_TIMEOUT",
    "Exercise",
    "Report",
    "Result",
    "answer",
    "check",
    "forget_tries",
    "get",
    "list_exercises",
]

# A scenario's process is killed after twice its time limit (a scenario calls the
# function at most twice) plus this margin for starting it and judging the value.
MARGIN = 3.0


@dataclass(frozen=True)
class Exercise:
    """One function a student writes. ``name`` and ``signature`` are a contract."""

    number: int
    name: str
    signature: str
    idea: str  # the lesson idea it practises (a key; ``idea_title`` is the words)
    points: int  # what nbgrader's autograded cell is worth
    params: int  # how many arguments it is called with

    @property
    def title(self) -> str:
        return t(f"ex.{self.name}.title")

    @property
    def task(self) -> str:
        """What to do, in two or three sentences."""
        return t(f"ex.{self.name}.task")

    @property
    def idea_title(self) -> str:
        return t(f"ex.idea.{self.idea}")

    @property
    def intro(self) -> str:
        """The notebook's introduction (Markdown): the lesson's idea, with an example."""
        return t(f"ex.{self.name}.intro")

    @property
    def recap(self) -> str:
        return t(f"ex.{self.name}.recap")

    @property
    def scenarios(self) -> list[str]:
        return [s.name for s in SCENARIOS[self.name]]

    def __repr__(self) -> str:
        return f"Exercise({self.number}, {self.name!r}, {self.signature!r})"

    def _repr_markdown_(self) -> str:
        return (
            f"**{self.number}. {self.title}** `{self.signature}`\n\n{self.task}\n\n"
            f"*{t('ex.report.idea')}* {self.idea_title}\n"
        )


EXERCISES: tuple[Exercise, ...] = (
    Exercise(1, "first_message", "first_message(query: str) -> dict", "history", 1, 1),
    Exercise(2, "decide", "decide(response) -> str", "model_decides", 2, 1),
    Exercise(3, "tool_result", "tool_result(block, output: str) -> dict", "pair_by_id", 1, 2),
    Exercise(4, "run_tools", "run_tools(response, run_bash) -> list[dict]", "every_call", 3, 2),
    Exercise(
        5,
        "append_results",
        "append_results(messages: list, results: list[dict]) -> None",
        "results_user",
        1,
        2,
    ),
    Exercise(
        6, "agent_loop", "agent_loop(client, messages, tools, run_bash) -> None", "loop", 3, 4
    ),
    Exercise(
        7,
        "guarded_loop",
        "guarded_loop(client, messages, tools, run_bash, max_turns: int, approve) -> None",
        "approval",
        4,
        6,
    ),
    Exercise(
        8,
        "todo_update",
        "todo_update(items: list, update: dict) -> list",
        "todo_one_in_progress",
        2,
        2,
    ),
    Exercise(
        9,
        "todo_reminder",
        "todo_reminder(results: list, rounds_since_todo: int) -> list",
        "reminder_after",
        1,
        2,
    ),
    Exercise(
        10, "subagent", "subagent(client, prompt: str, tools: dict) -> str", "fresh_history", 3, 3
    ),
)


class ExerciseList(list[Exercise]):
    """``list_exercises()``: a plain list that also shows itself as a table."""

    def _repr_markdown_(self) -> str:
        head = [t("ex.report.col_exercise"), t("ex.report.col_signature"), t("ex.report.idea")]
        rows = [f"| {' | '.join(head)} |", "|---|---|---|"]
        rows += [f"| {e.number}. {e.name} | `{e.signature}` | {e.idea_title} |" for e in self]
        return "\n".join(rows) + "\n"


def list_exercises() -> ExerciseList:
    """The exercises, in the order of the lesson."""
    return ExerciseList(EXERCISES)


def get(name: str) -> Exercise:
    for exercise in EXERCISES:
        if exercise.name == name:
            return exercise
    names = ", ".join(e.name for e in EXERCISES)
    raise ValueError(f"no exercise named {name!r}; the exercises are: {names}")


def _not_run(scenario: Scenario, why: str) -> Result:
    return Result(
        scenario.name,
        scenario.title,
        passed=False,
        expected=t("ex.expect.checkable"),
        happened=why,
        idea=scenario.idea,
        idea_title=t(f"ex.idea.{scenario.idea}"),
        hint=t(f"ex.hint.{scenario.idea}"),
    )


def _signature_problem(exercise: Exercise, fn: Callable[..., Any]) -> str:
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):  # some builtins have none: just call them
        return ""
    try:
        signature.bind(*range(exercise.params))
    except TypeError:
        name = getattr(fn, "__name__", exercise.name)
        return t("ex.report.signature", want=exercise.signature, got=f"{name}{signature}")
    return ""


# per exercise in this kernel: how many tries failed on each lesson idea, and the last code
_tries: dict[str, tuple[Counter[str], Any]] = {}


def forget_tries(name: str | None = None) -> None:
    """Start counting tries again (for one exercise, or all): the next hints nudge."""
    for key in list(_tries):
        if name is None or key.split(":")[0] == name:
            del _tries[key]


def answer(name: str) -> str:
    """The reference solution of exercise ``name``, as the third hint shows it."""
    source = inspect.getsource(getattr(reference, get(name).name))
    code = "\n".join(line for line in source.rstrip("\n").split("\n") if "### " not in line)
    return _strings.translate_code(code, get_language())  # its comments in the language


def check(
    name: str,
    fn: Callable[..., Any],
    *,
    timeout: float = DEFAULT_TIMEOUT,
    show_answer: bool = False,
    scenarios: Sequence[str] | None = None,
) -> Report:
    """Run ``fn`` on every scenario of exercise ``name``; never raises for the student's code.

    ``timeout`` is the time limit per scenario, in seconds; once a scenario has
    timed out, the others get at most ``QUICK_TIMEOUT``. The report says "all
    passed" only when every scenario passed. Each failing check of the same
    exercise with changed code says more (see ``Report.level``; the same code checked
    again gets the same hints); ``show_answer=True`` shows the
    answer at once. ``scenarios`` runs only those (by name, e.g. a lesson's
    on-the-spot check: ``check("decide", decide, scenarios=["max_tokens",
    "cut_off_call"])``); its tries are counted apart from the whole exercise's.
    """
    chosen = _chosen(name, scenarios)
    key = name if scenarios is None else f"{name}:{','.join(s.name for s in chosen)}"
    return _with_hints(_check(name, fn, timeout, chosen), show_answer, key, fn)


def _chosen(name: str, names: Sequence[str] | None) -> list[Scenario]:
    every = SCENARIOS[get(name).name]
    if names is None:
        return every
    if isinstance(names, str):
        names = [names]
    unknown = [n for n in names if n not in {s.name for s in every}]
    if unknown or not names:
        known = ", ".join(s.name for s in every)
        raise ValueError(f"{name} has no scenario named {unknown or names!r}; it has: {known}")
    return [s for s in every if s.name in names]


def _code(fn: Any) -> Any:
    """What a function does, as bytecode, names and constants (not where it was
    defined: a cell run again makes the same function under another file name), with
    the functions of the same module it calls by name (a wrapper around the student's
    function changes when that function does)."""
    code = getattr(fn, "__code__", None)

    def read(c: types.CodeType) -> tuple[Any, ...]:
        consts = tuple(read(k) if isinstance(k, types.CodeType) else repr(k) for k in c.co_consts)
        return c.co_code, c.co_names, c.co_varnames, consts

    if not isinstance(code, types.CodeType):
        return None
    found = getattr(fn, "__globals__", {})
    called = [found.get(n) for n in code.co_names]
    inner = [read(f.__code__) for f in called if isinstance(f, types.FunctionType)
             and f is not fn and f.__module__ == fn.__module__]  # fmt: skip
    return read(code), tuple(inner)


def _with_hints(report: Report, show_answer: bool, key: str, fn: Any = None) -> Report:
    """The report at the level of this try. Hints say more only for an idea that failed
    before: a student who fixed one mistake and made a new one gets a nudge for the new
    one, not the answer. A stub, a wrong signature or the same code checked again is not
    a new try."""
    if report.passed or report.problem:
        return report
    failed, last = _tries.get(key, (Counter(), None))
    ideas = {r.idea for r in report.failures}
    code = _code(fn)
    if code is None or code != last:  # the same code checked again is not a new try
        failed = failed + Counter(ideas)
    _tries[key] = (failed, code)
    tried = tuple((i, min(failed[i], 3)) for i in report.hints)  # each idea by its own tries
    level = 3 if show_answer else min([3] + [n for _, n in tried]) if tried else 1
    shown = answer(report.exercise) if level == 3 else ""  # only once every idea failed 3 times
    return replace(report, level=level, answer=shown, tried=tried)


def _check(name: str, fn: Callable[..., Any], timeout: float, scenarios: list[Scenario]) -> Report:
    exercise = get(name)
    if not callable(fn):
        why = t("ex.report.not_callable", kind=type(fn).__name__)
        return Report(name, tuple(_not_run(s, why) for s in scenarios), problem=why)
    problem = _signature_problem(exercise, fn)
    if problem:
        return Report(name, tuple(_not_run(s, problem) for s in scenarios), problem=problem)
    _prepare()
    results = _forked(scenarios, fn, timeout) if can_fork() else _threads(scenarios, fn, timeout)
    failing = [r for r in results if not r.passed]
    if failing and all(r.stub for r in failing):  # only the stub's own line fails: not a try
        problem = t("ex.report.stub", name=name)
    return Report(name, tuple(results), problem=problem)


def _forked(scenarios: list[Scenario], fn: Callable[..., Any], timeout: float) -> list[Result]:
    """Each scenario built afresh and run in a forked process, under a hard limit;
    judged here, in the kernel (``_verdict``).

    One process runs the scenarios one after the other and sends back, for
    each, a record of the calls; if it ends, hangs or is killed, that scenario fails and a new
    process takes the rest. Rebuilding each scenario gives it new objects
    (replies, histories, fakes), so a function that changes what it was given
    cannot change a later scenario; the process keeps everything else it did
    (``os._exit``, a crash, changed globals) away from the kernel.
    """
    results: list[Result] = []
    limit = timeout
    child: Forked | None = None
    # The kernel is a child subreaper meanwhile, so whatever left a child's
    # process group (os.setsid, a double fork) comes back here to be killed.
    with reaping() as reaper:
        try:
            for k, scenario in enumerate(scenarios):
                if results and results[-1].stuck:  # something we could not stop: run nothing
                    results.append(
                        replace(_not_run(scenario, t("ex.happened.skipped_stuck")), stuck=True)
                    )
                    continue
                if child is None:
                    rest = [s.name for s in scenarios[k:]]
                    work = (scenario.exercise, rest, fn, timeout, limit)
                    child = Forked(_judge_all, work, reaper)
                hard = 2 * limit + MARGIN
                outcome = child.receive(hard)
                results.append(_verdict(scenario, outcome, hard, limit))
                if not outcome.ok or results[-1].stuck:
                    child.end()
                    child = None
                if results[-1].timed_out:  # a working function needs milliseconds: wait less
                    limit = min(timeout, QUICK_TIMEOUT)
        finally:
            if child is not None:
                child.end()
    return results


def _judge_all(
    send: Callable[[Any], None],
    exercise: str,
    names: list[str],
    fn: Callable[..., Any],
    timeout: float,
    limit: float,
) -> None:
    """In the child: run the named scenarios in order, with the parent's rule for limits,
    sending for each its Result there and the record of its calls (``scenarios.record``)."""
    for name in names:
        result, records = record(_fresh(exercise, name), fn, limit)
        send((name, result, records if result.passed else None))
        if result.timed_out:
            limit = min(timeout, QUICK_TIMEOUT)


def _verdict(scenario: Scenario, outcome: Outcome, hard: float, limit: float) -> Result:
    """The kernel's verdict on what the child sent for ``scenario``.

    The child is the student's: what it sends may be forged. So the kernel
    judges the records itself (``scenarios.replay``) and a scenario passes
    only if that judgment passes. A failure the child saw stands as it is,
    with no records sent (a 100 MB wrong answer stays in the child): the
    student's value may misbehave only there (an ``__eq__`` that exits), and
    a forged failure harms no one but its author.
    """
    if not outcome.ok:
        return _result(scenario, outcome, hard)
    try:
        return _judge_sent(scenario, outcome.value, limit)
    except Exception as e:  # a last guard: nothing the child sent raises in the kernel
        return _not_run(scenario, t("ex.happened.unjudgeable", error=describe_error(e)))


def _judge_sent(scenario: Scenario, sent: Any, limit: float) -> Result:
    if not (isinstance(sent, tuple) and len(sent) == 3 and sent[0] == scenario.name):
        return _not_run(scenario, t("ex.happened.forged", value=_kind_of(sent)))
    _, there, records = sent
    well_formed = isinstance(there, Result) and _plain_result(there)
    if well_formed and not there.passed:
        return there  # its own failure (records are only sent with a pass)
    here = replay(scenario, records, limit)
    if here.passed and not well_formed:
        return _not_run(scenario, t("ex.happened.forged", value=_kind_of(there)))
    return here


def _kind_of(value: Any) -> str:
    return type(value).__name__


def _plain_result(result: Result) -> bool:
    """Does every field of this Result (unpickled from the child) have its own type?"""
    texts = ("scenario", "title", "expected", "happened", "idea", "idea_title", "hint", "printed")
    flags = ("passed", "timed_out", "stuck", "stub")
    notes = getattr(result, "notes", None)
    return (
        all(type(getattr(result, f, None)) is str for f in texts)
        and all(type(getattr(result, f, None)) is bool for f in flags)
        and type(notes) is tuple
        and all(type(n) is str for n in notes)
    )


def _threads(scenarios: list[Scenario], fn: Callable[..., Any], timeout: float) -> list[Result]:
    """Without ``fork`` (Windows): each scenario in a thread with the same limits."""
    results: list[Result] = []
    limit = timeout
    for scenario in scenarios:
        if results and results[-1].stuck:
            results.append(replace(_not_run(scenario, t("ex.happened.skipped_stuck")), stuck=True))
            continue
        hard = 2 * limit + MARGIN
        fresh = _fresh(scenario.exercise, scenario.name)
        results.append(_result(scenario, run(evaluate, (fresh, fn, limit), hard), hard))
        if results[-1].timed_out:
            limit = min(timeout, QUICK_TIMEOUT)
    return results


def _fresh(exercise: str, name: str) -> Scenario:
    """The scenario built anew: new replies, histories and fakes."""
    return next(s for s in _build_scenarios()[exercise] if s.name == name)


def _result(scenario: Scenario, outcome: Outcome, hard: float) -> Result:
    """The Result the thread sent back, or a failure saying what stopped the process or thread."""
    if outcome.ok and isinstance(outcome.value, Result):
        return outcome.value
    if outcome.timed_out:
        result = _not_run(scenario, t("ex.happened.judge_timeout", seconds=hard))
        return replace(result, timed_out=True, stuck=True)
    error = outcome.error
    if isinstance(error, Refused):
        return _not_run(scenario, str(error))
    if isinstance(error, Crashed) and not error.raised:
        return _not_run(scenario, t("ex.happened.process_ended", how=str(error)))
    text = str(error) if isinstance(error, Crashed) else describe_error(error or TypeError())
    why = t("ex.happened.raised", error=text)
    if outcome.where:
        why += "\n" + t("ex.happened.at", line=outcome.where)
    return _not_run(scenario, why)


def _prepare() -> None:
    """Read the SDK's types once here, so each scenario's process does not repeat it."""
    from agentlab import rules

    rules.prepare()
