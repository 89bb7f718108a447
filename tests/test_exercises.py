"""The exercise checkers: they pass the reference, catch the mistakes students
really make with the right hint, and cannot be broken by the student's code."""

from __future__ import annotations

import html
import json
import re
import threading
from pathlib import Path

import pytest
from exercises_wrong import WRONG, Wrong

from agentlab.exercises import answer, check, forget_tries, list_exercises, reference
from agentlab.exercises.scenarios import SCENARIOS
from agentlab.exercises.strings import EN, ZH
from agentlab.i18n import set_language

ROOT = Path(__file__).resolve().parent.parent
FAST = 0.5  # seconds per scenario: plenty for scripted replies, short for endless loops

CONTRACT = {
    "first_message": "first_message(query: str) -> dict",
    "decide": "decide(response) -> str",
    "tool_result": "tool_result(block, output: str) -> dict",
    "run_tools": "run_tools(response, run_bash) -> list[dict]",
    "append_results": "append_results(messages: list, results: list[dict]) -> None",
    "agent_loop": "agent_loop(client, messages, tools, run_bash) -> None",
    "guarded_loop": "guarded_loop(client, messages, tools, run_bash, max_turns: int, approve) -> None",
    "todo_update": "todo_update(items: list, update: dict) -> list",
    "todo_reminder": "todo_reminder(results: list, rounds_since_todo: int) -> list",
    "subagent": "subagent(client, prompt: str, tools: dict) -> str",
}


@pytest.fixture(autouse=True)
def first_try():
    forget_tries()  # each test starts at the first try of every exercise
    yield
    forget_tries()


# -- the list and the reference --------------------------------------------------


def test_list_exercises_is_the_contract_in_the_lessons_order():
    exercises = list_exercises()
    assert [(e.name, e.signature) for e in exercises] == list(CONTRACT.items())
    assert [e.number for e in exercises] == list(range(1, 11))
    for e in exercises:
        assert e.task and e.title and e.idea_title and e.points > 0
        assert e.scenarios == [s.name for s in SCENARIOS[e.name]]
    assert "| 6. agent_loop |" in exercises._repr_markdown_()


@pytest.mark.parametrize("name", list(CONTRACT))
def test_the_reference_solution_passes(name):
    report = check(name, getattr(reference, name), timeout=FAST)
    assert report.passed, str(report)
    assert report.failures == [] and report.score(3) == 3.0
    assert "all" in report.summary()


def test_every_required_kind_of_scenario_is_there():
    names = {s.name for scenarios in SCENARIOS.values() for s in scenarios}
    for wanted in (
        "parallel_calls",
        "unknown_tool",
        "failing_tool",
        "cut_off_call",
        "pause_turn",
        "refusal",
        "max_tokens",
        "context_window",
        "unknown_stop_reason",
        "stop_sequence",
    ):
        assert wanted in names
    assert len(SCENARIOS["decide"]) == 10  # every stop reason, and a cut-off tool call


def test_the_lessons_loop_passes_with_notes_for_what_a_real_harness_must_handle():
    report = check("agent_loop", reference.agent_loop, timeout=FAST)
    assert report.passed
    cut_off = next(r for r in report.results if r.scenario == "cut_off_call")
    assert cut_off.passed and any("max_tokens" in n and "real harness" in n for n in cut_off.notes)
    assert any("pause_turn" in n for n in report.notes)
    assert "what a real harness must handle" in str(report)
    # the guarded loop handles both, so it gets no notes
    assert check("guarded_loop", reference.guarded_loop, timeout=FAST).notes == []


# -- wrong answers students really write ---------------------------------------------


@pytest.mark.parametrize("wrong", WRONG, ids=[w.id for w in WRONG])
def test_a_real_mistake_fails_with_the_right_hint(wrong: Wrong):
    report = check(wrong.exercise, wrong.fn, timeout=FAST)
    assert not report.passed
    failed = {r.scenario: r for r in report.failures}
    assert wrong.scenario in failed, str(report)
    result = failed[wrong.scenario]
    assert result.idea == wrong.idea, str(report)
    assert result.hint == EN[f"ex.hint.{wrong.idea}"]
    assert result.expected and result.happened
    assert report.score(3) < 3
    assert "all" not in report.summary()  # never "all passed" while a check failed


def solution_lines(name: str) -> list[str]:
    """The code lines of the reference answer (comments dropped), long enough to mean
    something: none of them may be in a first report."""
    lines = []
    for line in answer(name).splitlines()[1:]:  # not the def line: the notebook shows it
        code = line.split("  #")[0].strip()
        if len(code) >= 10 and not code.startswith(('"""', "#")):
            lines.append(code)
    return lines


# Bits of the answers a first hint must not hand over, though they are not whole lines.
GIVEAWAYS = ("block.id", "response.content", "messages.append", "block.input[", '!= "tool_use"')


@pytest.mark.parametrize("wrong", WRONG, ids=[w.id for w in WRONG])
def test_the_first_report_names_what_to_look_at_and_holds_no_solution_code(wrong: Wrong):
    report = check(wrong.exercise, wrong.fn, timeout=FAST)
    assert report.level == 1 and not report.answer
    for text in (str(report), report._repr_markdown_(), html.unescape(report._repr_html_())):
        for line in solution_lines(wrong.exercise) + list(GIVEAWAYS):
            hints = "\n".join(h for _, h in report.hint_texts())
            assert line not in hints, f"{wrong.id}: the first hint gives away {line!r}"
        assert EN[f"ex.nudge.{wrong.idea}"] in text.replace("\\", "")
        assert EN[f"ex.hint.{wrong.idea}"] not in text.replace("\\", "")


def one_per_exercise() -> list[Wrong]:
    return [next(w for w in WRONG if w.exercise == name) for name in CONTRACT]


@pytest.mark.parametrize("wrong", one_per_exercise(), ids=lambda w: w.id)
def test_each_try_says_more_and_the_third_shows_the_answer(wrong: Wrong):
    # three tries: the code changed each time (the same code again is not a new try)
    tries = [
        wrong.fn,
        lambda *a, **k: wrong.fn(*a, **k),
        lambda *a, **k: (None, wrong.fn(*a, **k))[1],
    ]
    first, second, third = (check(wrong.exercise, fn, timeout=FAST) for fn in tries)
    assert [r.level for r in (first, second, third)] == [1, 2, 3]
    assert len({str(first), str(second), str(third)}) == 3  # three different reports
    assert EN[f"ex.hint.{wrong.idea}"] in str(second)  # the exact field or line
    assert EN[f"ex.nudge.{wrong.idea}"] not in str(second)
    assert third.answer == answer(wrong.exercise) and third.answer in third._repr_markdown_()
    assert html.escape(third.answer) in third._repr_html_()
    assert "### BEGIN SOLUTION" not in third.answer
    assert all(line not in str(first) + str(second) for line in solution_lines(wrong.exercise))
    # show_answer=True shows it on any try; another exercise still starts at the first
    forget_tries()
    shown = check(wrong.exercise, wrong.fn, timeout=FAST, show_answer=True)
    assert shown.level == 3 and "def " + wrong.exercise in str(shown)
    # a passing check, a stub or a wrong signature is not a try
    assert check(wrong.exercise, getattr(reference, wrong.exercise), timeout=FAST).level == 1


def test_the_same_code_checked_again_gets_the_same_hints():
    # Run All twice, or the check cell again without a change: no more of the answer.
    def decide(response):
        return "stop"

    reports = [check("decide", decide, timeout=FAST) for _ in range(3)]
    assert [r.level for r in reports] == [1, 1, 1] and not reports[-1].answer

    def decide(response):  # noqa: F811  (the student's next version, in the same cell)
        return "execute"

    # pause_turn fails again and says more; stop_rule and cut_off fail for the first time
    # (student trial: a new mistake got the detailed hint, or the answer, because another
    # idea had failed before).
    second = check("decide", decide, timeout=FAST)
    assert dict(second.tried) == {"stop_rule": 1, "cut_off": 1, "pause_turn": 2}
    hints = dict(second.hint_texts())
    assert hints[EN["ex.idea.pause_turn"]] == EN["ex.hint.pause_turn"]
    assert hints[EN["ex.idea.stop_rule"]] == EN["ex.nudge.stop_rule"]
    assert second.level == 1 and not second.answer


def test_a_stub_whose_only_failures_are_its_own_line_is_not_a_try():
    # Lesson 04's my_decide is written but for one line, which raises NotImplementedError:
    # Run All before the student wrote it must not spend a try (student trial).
    def decide(response):
        if response.stop_reason == "tool_use":
            return "execute"
        if response.stop_reason == "pause_turn":
            return "continue"
        if response.stop_reason == "max_tokens":
            raise NotImplementedError("your line")
        return "stop"

    unwritten = check("decide", decide, timeout=FAST)
    assert "not written yet" in unwritten.problem and not unwritten.passed

    def decide(response):  # noqa: F811  (a first real try, and a wrong one)
        return "continue" if response.stop_reason in ("max_tokens", "pause_turn") else "execute"

    first = check("decide", decide, timeout=FAST)
    assert first.level == 1 and set(dict(first.tried).values()) == {1}


def test_a_new_mistake_gets_a_nudge_not_the_answer():
    # Three tries, each failing on another idea (approval, the turn limit, pause_turn): each
    # is a first try at that idea. The idea that fails again gets the second hint.
    by_name = {w.fn.__name__: w for w in WRONG if w.exercise == "guarded_loop"}
    mistakes = ["runs_a_denied_call", "one_turn_too_many", "stops_at_pause_turn"]
    reports = [check("guarded_loop", by_name[m].fn, timeout=FAST) for m in mistakes]
    assert [r.level for r in reports] == [1, 1, 1] and not any(r.answer for r in reports)
    again = by_name["runs_a_denied_call"].fn
    second = check("guarded_loop", lambda *a: again(*a), timeout=FAST)
    assert second.level == 2 and EN["ex.hint.approval"] in str(second)
    third = check("guarded_loop", lambda *a: (None, again(*a))[1], timeout=FAST)
    assert third.level == 3 and third.answer


def test_a_stub_does_not_count_as_a_try():
    def decide(response):
        raise NotImplementedError

    for _ in range(3):
        assert check("decide", decide, timeout=FAST).problem
    assert check("decide", lambda r: "stop", timeout=FAST).level == 1


def test_each_distinct_hint_appears_once_per_report():
    def decide(response):  # wrong everywhere but end_turn: many failures, few ideas
        return "stop" if response.stop_reason == "end_turn" else "execute"

    for _ in range(3):
        report = check("decide", decide, timeout=FAST)
        assert len(report.failures) > len(report.hints) >= 2
        text, page = str(report), report._repr_html_()
        for title, hint in report.hint_texts():
            assert text.count(hint) == 1, hint
            assert page.count(html.escape(hint)) == 1, hint
            assert text.count(title) == 1
        assert "Hint" not in text.split("\n\n")[1]  # not under each failing scenario


def test_the_hints_agree_with_the_accepted_answers():
    # After `if response.stop_reason == "end_turn": return`, the hints must not say that
    # pause_turn goes on: the model answer (`!= "tool_use": return`) stops there and passes.
    def agent_loop(client, messages, tools, run_bash):
        while True:
            response = client.messages.create(
                model=reference.MODEL, max_tokens=100, messages=messages, tools=tools
            )
            messages.append({"role": "assistant", "content": response.content})
            if response.stop_reason == "end_turn":
                return
            results = []
            for block in response.content:
                if block.type == "tool_use":
                    output = run_bash(block.input["command"])
                    results.append(
                        {"type": "tool_result", "tool_use_id": block.id, "content": output}
                    )
            messages.append({"role": "user", "content": results})

    assert check("agent_loop", reference.agent_loop, timeout=FAST).passed
    for _ in range(2):
        report = check("agent_loop", agent_loop, timeout=FAST)
        assert "stop_rule" in report.hints
        stop_rule = dict(zip(report.hints, (h for _, h in report.hint_texts())))["stop_rule"]
        assert "pause_turn" not in stop_rule and "except" not in stop_rule
    for table in (EN, ZH):
        assert "pause_turn" not in table["ex.hint.stop_rule"]
        assert "pause_turn" not in table["ex.nudge.stop_rule"]


def test_the_score_line_says_what_it_counts():
    report = check("decide", lambda r: "stop", timeout=FAST)
    assert report.summary() == "decide: 7 of 10 scenarios passed."
    set_language("zh")
    try:
        assert "10 个场景中通过了 7 个" in report.summary()
        assert "提示" in str(report) and ZH["ex.nudge.model_decides"] in str(report)
    finally:
        set_language("en")


def test_every_idea_has_three_levels_in_both_languages():
    ideas = {k.removeprefix("ex.idea.") for k in EN if k.startswith("ex.idea.")}
    for table in (EN, ZH):
        for idea in ideas:
            assert table[f"ex.nudge.{idea}"] and table[f"ex.hint.{idea}"], idea
            assert table[f"ex.nudge.{idea}"] != table[f"ex.hint.{idea}"]


def test_the_exercises_do_not_give_the_loop_away():
    # exercise 6 asks for the loop from memory: its own text holds no line of the answer
    for table in (EN, ZH):
        text = "\n".join(v for k, v in table.items() if k.startswith("ex.agent_loop."))
        for line in solution_lines("agent_loop") + ["client.messages.create("]:
            assert line not in text, line


def test_at_least_three_real_mistakes_per_exercise():
    for name in CONTRACT:
        assert len([w for w in WRONG if w.exercise == name]) >= 3, name


# -- the student's code cannot break the checker -------------------------------------


def test_an_exception_is_reported_with_the_students_line():
    def decide(response):
        raise ValueError("boom <b>")

    report = check("decide", decide, timeout=FAST)
    assert not report.passed and len(report.failures) == 10
    first = report.failures[0]
    assert "ValueError: boom <b>" in first.happened
    assert 'raise ValueError("boom <b>")' in first.happened
    assert "boom &lt;b&gt;" in report._repr_html_() and "<b>" not in report._repr_html_()


def test_an_endless_loop_is_stopped_at_the_time_limit():
    def first_message(query):
        while True:
            pass

    report = check("first_message", first_message, timeout=0.2)
    assert not report.passed
    assert all("still running after 0.2 s" in r.happened for r in report.results)
    assert not any(r.stuck for r in report.results)  # the thread was stopped each time


def test_after_one_timeout_the_other_scenarios_wait_less():
    def decide(response):
        if response.stop_reason in ("end_turn", "refusal"):
            while True:
                pass
        return "execute" if response.stop_reason == "tool_use" else "stop"

    report = check("decide", decide, timeout=1)
    timed_out = {r.scenario: r.happened for r in report.results if r.timed_out}
    assert "still running after 1 s" in timed_out["end_turn"]  # the first: the full limit
    assert "still running after 0.5 s" in timed_out["refusal"]  # later ones: a short one
    assert sum(r.passed for r in report.results) == 7  # partial credit survives the loop


def test_a_function_stuck_in_c_code_is_reported_and_the_rest_skipped():
    release = threading.Event()

    def decide(response):
        release.wait()  # blocked in a lock: cannot be interrupted from outside

    try:
        report = check("decide", decide, timeout=0.2)
    finally:
        release.set()
    first, rest = report.results[0], report.results[1:]
    assert first.stuck and "still running" in first.happened
    assert all("not run" in r.happened for r in rest)
    assert not report.passed and report.score(2) == 0


def test_a_loop_that_swallows_errors_and_keeps_asking_is_ended_by_the_client():
    def agent_loop(client, messages, tools, run_bash):
        while True:
            try:
                response = client.messages.create(
                    model="m", max_tokens=100, messages=messages, tools=tools
                )
                messages.append({"role": "assistant", "content": response.content})
            except Exception:
                pass

    report = check("agent_loop", agent_loop, timeout=5)
    assert not report.passed
    assert not any(r.stuck or "still running" in r.happened for r in report.results)


@pytest.mark.parametrize(
    ("returned", "words"),
    [
        (True, "returned a value of type bool: True"),
        (None, "returned a value of type NoneType: None"),
        (42, "returned a value of type int: 42"),
    ],
)
def test_a_wrong_type_is_reported(returned, words):
    report = check("decide", lambda response: returned, timeout=FAST)
    assert not report.passed
    assert words in report.failures[0].happened


def test_prints_are_captured_and_capped():
    def first_message(query):
        print("x" * 10_000)
        return {"role": "user", "content": query}

    report = check("first_message", first_message, timeout=FAST)
    assert report.passed
    printed = report.results[0].printed
    assert printed.startswith("xxx") and "more characters" in printed and len(printed) < 2100


def test_not_a_function_or_the_wrong_parameters_is_a_problem_not_a_crash():
    report = check("decide", None)
    assert not report.passed and "check('decide', decide)" in report.problem
    assert "decide(response) -> str" in check("decide", lambda: "stop").problem
    with pytest.raises(ValueError, match="no exercise named"):
        check("decid", lambda r: "stop")


def test_the_stub_says_not_written_yet_and_lists_what_will_be_checked():
    def run_tools(response, run_bash):
        # YOUR CODE HERE
        raise NotImplementedError()

    report = check("run_tools", run_tools, timeout=FAST)
    assert not report.passed and report.score(3) == 0.0
    assert "not written yet" in report.problem
    text = str(report)
    assert "parallel_calls" in text and "expected:" not in text


def test_a_checker_that_cannot_judge_the_value_fails_never_passes():
    class Weird(dict):
        def get(self, key, default=None):
            raise RuntimeError("no")

    report = check("first_message", lambda q: Weird(role="user", content=q), timeout=FAST)
    assert not report.passed


# -- the report ------------------------------------------------------------------------


def test_student_and_model_text_is_escaped_everywhere():
    def first_message(query):
        return {"role": "user", "content": "<script>alert(1)</script> `x` *y*"}

    report = check("first_message", first_message, timeout=FAST)
    page = report._repr_html_()
    assert "<script>" not in page and html.escape("<script>") in page
    # In Markdown, student text sits only inside code fences, where it is shown as text.
    markdown = re.sub(r"(?ms)^\s*(`{3,})text$.*?^\s*\1$", "", report._repr_markdown_())
    assert "<script>" in report._repr_markdown_() and "<script>" not in markdown
    assert "<script>" in str(report)  # plain text stays plain


def test_repr_is_short_and_the_same_every_time():
    a = check("decide", reference.decide, timeout=FAST)
    b = check("decide", lambda r: "stop", timeout=FAST)
    assert repr(a) == "Report('decide', passed=True, scenarios=10/10)"
    assert repr(b) == "Report('decide', passed=False, scenarios=7/10)"
    assert a._repr_html_() == check("decide", reference.decide)._repr_html_()


def test_the_same_failure_everywhere_is_shown_once():
    report = check("decide", lambda r: r["stop_reason"], timeout=FAST)
    assert str(report).count("not subscriptable") == 1
    assert "The same happened in:" in str(report)


def test_reports_speak_chinese_too():
    assert set(ZH) == set(EN)
    set_language("zh")
    try:
        report = check("decide", lambda r: "stop", timeout=FAST)
        assert "个场景中通过了" in str(report)
        assert "提示" in report._repr_html_()
    finally:
        set_language("en")


def test_texts_are_valid_format_strings_in_both_languages():
    import string

    for table in (EN, ZH):
        for key, text in table.items():
            fields = {f for _, f, _, _ in string.Formatter().parse(text) if f}
            assert fields == {f for _, f, _, _ in string.Formatter().parse(EN[key]) if f}, key


# -- the notebooks are made from one source ------------------------------------------


def test_committed_notebooks_are_what_the_generator_makes():
    from agentlab.exercises.notebooks import build, comparable

    made = build()
    assert len(made) == 20
    for path, notebook in made.items():
        committed = json.loads((ROOT / path).read_text("utf-8"))
        assert comparable(committed) == comparable(notebook), (
            f"{path} is out of date: run python tools/make_exercises.py"
        )


def is_solution(cell) -> bool:
    return bool(cell.metadata.get("nbgrader", {}).get("solution"))


def test_student_notebooks_have_stubs_and_solutions_have_the_reference():
    from agentlab.exercises.notebooks import build

    made = build()
    for e in list_exercises():
        stem = f"{e.number:02d}_{e.name}.ipynb"
        student = made[f"notebooks/exercises/{stem}"].cells
        solution = made[f"notebooks/solutions/{stem}"].cells
        # exercise 7 has a second solution cell (its step 1, limited_loop): pick this one by name
        [mine] = [c.source for c in student if is_solution(c) and f"def {e.name}(" in c.source]
        [answer] = [c.source for c in solution if is_solution(c) and f"def {e.name}(" in c.source]
        assert "raise NotImplementedError()" in mine and "BEGIN SOLUTION" not in mine
        assert "### BEGIN SOLUTION" in answer and "NotImplementedError" not in answer
        assert answer.startswith(f"def {e.name}(") and mine.startswith(f"def {e.name}(")
        [graded] = [c for c in student if c.metadata.get("nbgrader", {}).get("grade")]
        assert f'check("{e.name}", {e.name})' in graded.source
        assert (
            graded.metadata["nbgrader"]["points"] == e.points
            and graded.metadata["editable"] is False
        )


def test_guarded_loop_may_answer_the_last_turns_calls_without_running_them():
    """At the turn limit, answering the last calls with is_error 'not run' is right too."""
    from agentlab.exercises import check

    def guarded_loop(client, messages, tools, run_bash, max_turns, approve):
        for turn in range(1, max_turns + 1):
            response = client.messages.create(
                model="m", max_tokens=1000, messages=messages, tools=tools
            )
            messages.append({"role": "assistant", "content": response.content})
            if response.stop_reason != "tool_use":
                return
            results = []
            for block in response.content:
                if block.type != "tool_use":
                    continue
                if turn == max_turns:
                    output, error = "not run: turn limit reached", True
                elif block.name != "bash":
                    output, error = f"unknown tool {block.name}", True
                elif not approve(block.input):
                    output, error = "denied by the user", True
                else:
                    output, error = run_bash(block.input["command"]), False
                result = {"type": "tool_result", "tool_use_id": block.id, "content": output}
                if error:
                    result["is_error"] = True
                results.append(result)
            messages.append({"role": "user", "content": results})

    report = check("guarded_loop", guarded_loop)
    failed = [r.scenario for r in report.failures] if hasattr(report, "failures") else []
    assert "max_turns" not in failed and "max_turns_one" not in failed, str(report)
    assert "cut_off_call" in failed  # the checker still sees its real mistakes


# -- the instructors' sheet of mistakes ----------------------------------------------


def test_the_mistakes_sheet_is_the_checkers_own_report_on_each_wrong_answer():
    import sys

    sys.path.insert(0, str(ROOT / "tools"))
    from make_mistakes import PAGE, page

    text = page()  # runs every wrong answer through the checker
    assert PAGE.read_text("utf-8") == text, "run python tools/make_mistakes.py"
    entries = text.split("\n### ")[1:]
    assert len(entries) == len(WRONG)
    for w, entry in zip(WRONG, entries):
        entry = entry.split("\n## ")[0]  # the last of a section: not the next section's head
        lines = entry.strip().splitlines()
        assert len(lines) <= 25, f"{w.id}: {len(lines)} lines, not a few"
        assert f"- **Caught by** `{w.scenario}`" in entry, w.id
        assert f"- **Hint**: {' '.join(EN[f'ex.nudge.{w.idea}'].split())}" in entry, w.id
        if w.diff:  # a changed model answer: only the lines changed, with a line around
            assert "```diff" in entry and "def guarded_loop" not in entry
    # no template flags or helpers that the page does not show
    for word in ("count_calls", "honour_denial", "pause_continues", "_guarded("):
        assert word not in text
    assert "def _ask(" in text and "def _results(" in text  # shown once, before the loops


def test_a_lesson_checks_some_scenarios_and_counts_its_tries_apart():
    def decide(response):  # runs the cut-off call: the lesson 4 mistake
        return "execute" if response.content[-1].type == "tool_use" else "stop"

    only = ["max_tokens", "cut_off_call"]
    first = check("decide", decide, timeout=FAST, scenarios=only)
    assert [r.scenario for r in first.results] == only
    assert first.summary() == "decide: 1 of 2 scenarios passed." and first.level == 1
    assert check("decide", decide, timeout=FAST, scenarios=only).level == 1  # the same code
    again = lambda r: decide(r)  # noqa: E731  (changed code: the next try)
    assert check("decide", again, timeout=FAST, scenarios=only).level == 2
    assert check("decide", again, timeout=FAST).level == 1  # the exercise's own first try
    assert check("decide", reference.decide, timeout=FAST, scenarios=only).passed
    with pytest.raises(ValueError, match="no scenario named"):
        check("decide", decide, scenarios=["no_such_scenario"])
