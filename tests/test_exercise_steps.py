"""Exercise 7 in two steps, and the thinking-block scenarios (issue 15)."""

from __future__ import annotations

import pytest

from agentlab.exercises import check, reference
from agentlab.exercises.scenarios import SCENARIOS, STEP_TWO, step

FAST = 1.0


def limited_as_guarded(client, messages, tools, run_bash, max_turns, approve):
    return reference.limited_loop(client, messages, tools, run_bash, max_turns)


def test_step_one_passes_with_limits_and_endings_alone():
    report = check("guarded_loop", limited_as_guarded, timeout=FAST)
    assert step(report, 1).passed
    assert not step(report, 2).passed  # approval and errors are step 2's work
    assert {r.scenario for r in report.failures} == set(STEP_TWO)


def test_step_one_speaks_of_limited_loop():
    def limited_as_guarded_stub(client, messages, tools, run_bash, max_turns, approve):
        raise NotImplementedError

    one = step(check("guarded_loop", limited_as_guarded_stub, timeout=FAST), 1)
    assert one.exercise == "limited_loop" and not one.passed
    assert "limited_loop is not written yet" in str(one) and "guarded_loop" not in str(one)
    passing = step(check("guarded_loop", limited_as_guarded, timeout=FAST), 1)
    assert passing.passed and "limited_loop" in passing.summary()
    assert step(check("guarded_loop", limited_as_guarded_stub, timeout=FAST), 2).exercise == (
        "guarded_loop"
    )


def test_the_two_steps_split_every_scenario_once():
    report = check("guarded_loop", reference.guarded_loop, timeout=FAST)
    one, two = step(report, 1), step(report, 2)
    assert one.passed and two.passed
    names = [r.scenario for r in one.results + two.results]
    assert sorted(names) == sorted(s.name for s in SCENARIOS["guarded_loop"])
    assert {r.scenario for r in two.results} == set(STEP_TWO)
    with pytest.raises(ValueError):
        step(report, 3)


@pytest.mark.parametrize("name", ["agent_loop", "guarded_loop"])
def test_both_loops_are_checked_on_replies_with_thinking_blocks(name):
    assert "thinking_blocks" in [s.name for s in SCENARIOS[name]]


def test_the_same_dict_message_is_only_for_the_same_dict():
    def returns_none(query):
        return None

    report = check("first_message", returns_none, timeout=FAST)
    happened = " ".join(r.happened for r in report.failures)
    assert "same dict" not in happened and "NoneType" in happened

    shared = {"role": "user"}

    def one_dict(query):
        shared["content"] = query
        return shared

    report = check("first_message", one_dict, timeout=FAST)
    [failure] = report.failures
    assert "very same dict object" in failure.happened


def test_each_check_text_is_its_own_and_names_run_bash_only_where_there_is_one():
    from agentlab.exercises import list_exercises
    from agentlab.i18n import t

    texts = {e.name: t(f"ex.{e.name}.check") for e in list_exercises()}
    assert len(set(texts.values())) == len(texts)
    with_bash = {name for name, text in texts.items() if "run_bash" in text}
    assert with_bash == {"run_tools", "agent_loop", "guarded_loop"}
    for name in with_bash:  # the order rule is explained where the checker relies on it
        assert "only to keep the check simple" in texts[name]


def test_the_decide_exercise_states_meanings_not_answers():
    from agentlab.exercises import get

    intro = get("decide").intro
    for reason in ["end_turn", "tool_use", "stop_sequence", "max_tokens", "pause_turn",
                   "refusal", "model_context_window_exceeded"]:  # fmt: skip
        assert f"`{reason}`" in intro
    assert '| `"execute"` |' not in intro and "|---|" not in intro  # no answer table


def test_the_chinese_exercise_notebooks_are_what_the_generator_makes():
    import json
    from pathlib import Path

    from agentlab.exercises.notebooks import build_translated, comparable

    root = Path(__file__).resolve().parent.parent
    made = build_translated("zh")
    assert len(made) == 20  # the student's notebooks and nbgrader's sources
    for path, notebook in made.items():
        committed = json.loads((root / path).read_text("utf-8"))
        assert comparable(committed) == comparable(notebook), f"{path}: run tools/make_exercises.py"
        setup = "".join(committed["cells"][1]["source"])
        assert 'set_language("zh")' in setup  # the checker answers in Chinese


def test_the_chinese_notebooks_have_no_english_comments():
    import json
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    paths = sorted((root / "notebooks" / "zh").glob("*/[01]?_*.ipynb"))
    assert {p.parent.name for p in paths} == {"exercises", "solutions"} and len(paths) == 20
    for path in paths:
        for cell in json.loads(path.read_text("utf-8"))["cells"]:
            if cell["cell_type"] != "code":
                continue
            for line in "".join(cell["source"]).splitlines():
                if "### BEGIN SOLUTION" in line or "### END SOLUTION" in line:
                    continue  # nbgrader's markers, the same in every language
                comment = re.search(r'#(?!#).*|""".*', line)  # a comment or a docstring
                if comment and re.search(r"[A-Za-z]{3}", comment.group(0)):
                    assert re.search(r"[\u4e00-\u9fff]", comment.group(0)), f"{path.name}: {line}"


@pytest.mark.parametrize("name", ["agent_loop", "guarded_loop"])
def test_a_loop_that_names_another_model_keeps_its_thinking_blocks(name, monkeypatch):
    # The API signs a thinking block for the model the request named; a loop that sends
    # it back unchanged passes whatever model it names.
    monkeypatch.setattr(reference, "MODEL", "claude-opus-4-1")
    assert check(name, getattr(reference, name), timeout=FAST).passed


def test_step_one_tries_are_counted_on_their_own_and_each_new_limited_loop_is_a_try():
    # Student trial: step 1 was checked under guarded_loop's own tries (the approval it
    # leaves to step 2 failed each time, so step 2 began at the detailed hints), and the
    # wrapper never changed, so a second, different limited_loop was not a new try.
    from agentlab.exercises import forget_tries
    from agentlab.exercises.scenarios import STEP_ONE

    forget_tries("guarded_loop")
    namespace: dict = {}
    wrapper = (
        "def limited_as_guarded(client, messages, tools, run_bash, max_turns, approve):\n"
        "    return limited_loop(client, messages, tools, run_bash, max_turns)\n"
    )
    exec(wrapper, namespace)
    tries = []
    for turns in ("max_turns + 1", "max_turns + 2"):  # two different wrong limited_loops
        exec(
            "from agentlab.exercises import reference\n"
            "def limited_loop(client, messages, tools, run_bash, max_turns):\n"
            f"    return reference.limited_loop(client, messages, tools, run_bash, {turns})\n",
            namespace,
        )
        report = check("guarded_loop", namespace["limited_as_guarded"], timeout=FAST,
                       scenarios=STEP_ONE)  # fmt: skip
        tries.append(dict(step(report, 1).tried))
    assert tries[0] and set(tries[0].values()) == {1}
    assert 2 in tries[1].values()  # the same idea failed again, with changed code
    first_step_two = check("guarded_loop", namespace["limited_as_guarded"], timeout=FAST)
    approval = [n for i, n in first_step_two.tried if i == "approval"]
    assert approval == [1]  # step 2's ideas start from their first try
