"""Classroom exercises: write one piece of the agent loop, get specific feedback.

    from agentlab.exercises import list_exercises, check
    list_exercises()            # the seven exercises, in the order of the lesson
    check("decide", decide)     # run your decide() on every scenario: a Report

Each exercise is one function with a fixed name and signature. ``check`` runs
it on scenarios built with the offline clients (parallel calls, unknown and
failing tools, every stop reason, a tool call cut off by ``max_tokens``) and
returns a ``Report``: ``.passed``, the failures with what was expected, what
happened and a hint naming the lesson's idea, and ``.score(points)`` for
nbgrader. Nothing the function does can break the checker: exceptions, wrong
types and endless loops are reported (see ``agentlab.exercises.sandbox``).

The notebooks in ``notebooks/exercises`` and ``notebooks/solutions`` are made
from ``agentlab.exercises.reference`` by ``tools/make_exercises.py``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from agentlab.exercises import strings as _strings  # noqa: F401  (registers the texts)
from agentlab.exercises.report import Report, Result
from agentlab.exercises.scenarios import (
    DEFAULT_TIMEOUT,
    QUICK_TIMEOUT,
    SCENARIOS,
    Scenario,
    evaluate,
)
from agentlab.i18n import t

__all__ = ["DEFAULT_TIMEOUT", "Exercise", "Report", "Result", "check", "get", "list_exercises"]


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


def check(name: str, fn: Callable[..., Any], *, timeout: float = DEFAULT_TIMEOUT) -> Report:
    """Run ``fn`` on every scenario of exercise ``name``; never raises for the student's code.

    ``timeout`` is the time limit per scenario, in seconds; once a scenario has
    timed out, the others get at most ``QUICK_TIMEOUT``. The report says "all
    passed" only when every scenario passed.
    """
    exercise = get(name)
    scenarios = SCENARIOS[exercise.name]
    if not callable(fn):
        why = t("ex.report.not_callable", kind=type(fn).__name__)
        return Report(name, tuple(_not_run(s, why) for s in scenarios), problem=why)
    problem = _signature_problem(exercise, fn)
    if problem:
        return Report(name, tuple(_not_run(s, problem) for s in scenarios), problem=problem)
    results: list[Result] = []
    limit = timeout
    for scenario in scenarios:
        if results and results[-1].stuck:  # a thread we could not stop: run nothing beside it
            results.append(_not_run(scenario, t("ex.happened.skipped_stuck")))
            results[-1] = replace(results[-1], stuck=True)
            continue
        results.append(evaluate(scenario, fn, limit))
        if results[-1].timed_out:  # a working function needs milliseconds: wait less from now on
            limit = min(timeout, QUICK_TIMEOUT)
    if all(r.stub for r in results):
        problem = t("ex.report.stub", name=name)
    return Report(name, tuple(results), problem=problem)
