"""The docs site's sources: the FAQ quotes the API's real wording, every page and public name is there.

The site itself is built by CI with ``mkdocs build --strict`` (see mkdocs.yml);
these checks are the fast part that needs no docs dependencies.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

import agentlab
from agentlab.fakeapi import thinking
from agentlab.fakeapi.offline import check_request
from agentlab.history import validate

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
FAQ = (DOCS / "faq.md").read_text("utf-8")


def tool_use(i: str) -> dict:
    return {"type": "tool_use", "id": i, "name": "bash", "input": {"command": "ls"}}


def tool_result(i: str) -> dict:
    return {"type": "tool_result", "tool_use_id": i, "content": "ok"}


def user(content) -> dict:
    return {"role": "user", "content": content}


def assistant(content) -> dict:
    return {"role": "assistant", "content": content}


# The broken histories the FAQ explains, one each.
HISTORIES = {
    "unanswered": [user("List"), assistant([tool_use("toolu_01"), tool_use("toolu_02")]),
                   user([tool_result("toolu_01")])],
    "results_first": [user("List"), assistant([tool_use("toolu_01")]), user("Well?")],
    "unexpected": [user("List"), assistant("OK."), user([tool_result("toolu_99")])],
    "duplicate": [user("List"), assistant([tool_use("toolu_01"), tool_use("toolu_01")]),
                  user([tool_result("toolu_01"), tool_result("toolu_01")])],
    "tool_use_role": [user([tool_use("toolu_01")])],
    "tool_result_role": [user("List"), assistant([tool_result("toolu_01")])],
    "first": [assistant("Hello."), user("List")],
    "none": [],
    "empty_message": [user("List"), assistant([]), user("Again")],
    "empty_text": [user([{"type": "text", "text": ""}])],
    "blank_text": [user([{"type": "text", "text": "  "}])],
    "role": [user("List"), {"role": "tool", "content": "ok"}],
    "tool_input": [user("List"), {"role": "assistant", "content": [{**tool_use("t1"), "input": "ls"}]},
                   user([tool_result("t1")])],
    "is_error": [user("List"), assistant([tool_use("t1")]), user([{**tool_result("t1"), "is_error": "true"}])],
    "unknown_block": [user([{"type": "txt", "text": "List"}])],
    # A thinking block written after "List", sent back after an edited first message.
    "prefix": [user("List them"), assistant([thinking.make_block(
        "claude-sonnet-5-5", "x", "omitted", {"model": "claude-sonnet-5-5", "messages": [user("List")]}),
        tool_use("toolu_01")]), user([tool_result("toolu_01")])],
}  # fmt: skip

REQUESTS = {
    "tool_name": {"tools": [{"name": "my tool", "input_schema": {"type": "object"}}]},
    "tool_names": {"tools": [{"name": "t", "input_schema": {"type": "object"}}] * 2},
    "input_schema": {"tools": [{"name": "t"}]},
    "schema_type": {"tools": [{"name": "t", "input_schema": {}}]},
    "schema_invalid": {
        "tools": [
            {
                "name": "t",
                "input_schema": {"type": "object", "properties": {"path": {"type": "str"}}},
            }
        ]
    },
    "tools_needed": {
        "messages": [user("List"), assistant([tool_use("t1")]), user([tool_result("t1")])],
        "thinking": {"type": "disabled"},
    },
    "max_tokens": {"max_tokens": None},
}


def api_messages() -> dict[str, list[str]]:
    out = {name: [str(p) for p in validate(h)] for name, h in HISTORIES.items()}
    for name, extra in REQUESTS.items():
        params = {"model": "m", "max_tokens": 100, "messages": [user("hi")], **extra}
        if extra.get("max_tokens", 0) is None:
            del params["max_tokens"]
        out[name] = check_request(params)
    return out


def test_every_error_the_faq_explains_is_the_apis_exact_wording():
    produced = api_messages()
    for name, messages in produced.items():
        assert messages, f"{name}: this history should be broken"
        for message in messages:
            assert f"```text\n{message}\n```" in FAQ, f"faq.md lacks the exact text of {name}"


def test_the_faq_quotes_nothing_agentlab_does_not_produce():
    quoted = re.findall(r"```text\n(.*?)\n```", FAQ, flags=re.S)
    produced = {m for messages in api_messages().values() for m in messages}
    assert len(quoted) >= 12
    assert set(quoted) <= produced


def nav_files(items) -> list[str]:
    files = []
    for item in items:
        value = next(iter(item.values())) if isinstance(item, dict) else item
        files += nav_files(value) if isinstance(value, list) else [value]
    return files


def test_every_page_in_the_nav_exists_and_every_lesson_is_in_it():
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text("utf-8"))
    assert config["strict"] is True
    pages = nav_files(config["nav"])
    for page in pages:
        assert (DOCS / page).is_file(), page
    lessons = sorted(p.name for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    assert lessons and all(f"lessons/{name}" in pages for name in lessons)
    zh = sorted(p.name for p in (ROOT / "notebooks/zh").glob("*.ipynb"))
    assert zh and all(f"lessons/zh/{name}" in pages for name in zh)
    assert (DOCS / "lessons").resolve() == (ROOT / "notebooks").resolve()


def test_every_public_name_is_in_the_reference():
    index = (DOCS / "reference/index.md").read_text("utf-8")
    for name in agentlab._EXPORTS:
        assert f"`{name}`" in index, name
    pages = " ".join(p.read_text("utf-8") for p in (DOCS / "reference").glob("*.md"))
    for module in set(agentlab._EXPORTS.values()):
        assert f"::: {module}" in pages, module


def test_the_instructor_page_covers_what_a_class_needs():
    text = (DOCS / "instructors.md").read_text("utf-8").lower()
    for topic in [
        "offline demo model",
        "record",
        "replay",
        "policy(mode=",
        "does **not** protect",
        "jupyterhub",
        "anthropic_base_url",
        "agentlab serve",
    ]:
        assert topic in text, topic


# -- lessons v2 (issue 15): one vocabulary, current guidance --------------------------

GLOSSARY_TERMS = ["harness", "history", "request", "turn", "stage", "step", "observation"]


def test_the_glossary_defines_each_word_in_both_languages():
    en = (DOCS / "glossary.md").read_text("utf-8")
    zh = (DOCS / "glossary.zh.md").read_text("utf-8")
    for term in GLOSSARY_TERMS:
        assert re.search(rf"^\*\*{term}\*\*", en, flags=re.M | re.I), term
    for term in ["Harness", "历史", "请求", "轮", "阶段", "步骤", "观察结果"]:
        assert re.search(rf"^\*\*{term}", zh, flags=re.M), term
    for page in (en, zh):  # the one mapping: five seed steps, four stages
        rows = [line for line in page.splitlines() if re.match(r"\| [1-5]\. ", line)]
        assert len([r for r in rows if "agentlab." in r or "messages = " in r]) == 5


def test_the_faq_has_the_size_and_length_errors_right():
    row_413 = next(line for line in FAQ.splitlines() if line.startswith("| 413 |"))
    assert "32 MB" in row_413
    row_400 = next(line for line in FAQ.splitlines() if "prompt is too long" in line)
    assert row_400.startswith("| 400 |") and "N tokens > M maximum" in row_400


def test_the_faq_gives_each_stop_reason_its_documented_recovery():
    table = FAQ.split("## Stop reasons are not errors", 1)[1]
    rows = {
        line.split("|")[1].strip(" `"): line
        for line in table.splitlines()
        if line.startswith("| `")
    }
    for reason in ["end_turn", "tool_use", "stop_sequence", "max_tokens", "pause_turn",
                   "refusal", "model_context_window_exceeded"]:  # fmt: skip
        assert reason in rows, reason
    assert "raise `max_tokens`" in rows["max_tokens"] and "never run" in rows["max_tokens"]
    assert "server tool" in rows["pause_turn"]
    # Today's advice (build-with-claude/refusals-and-fallback and handling-stop-reasons,
    # read 2026-12-01): retry on another model; a reply that filled the window is truncated.
    assert "stop_details" in rows["refusal"] and "recommended_model" in rows["refusal"]
    assert "truncated" in rows["model_context_window_exceeded"]
    assert "your" in rows["stop_sequence"]


def test_every_lesson_leads_to_an_exercise_in_the_map():
    text = (DOCS / "exercises.md").read_text("utf-8")
    from agentlab.exercises import list_exercises

    for exercise in list_exercises():
        assert f"| {exercise.number}. `{exercise.name}` |" in text, exercise.name


def _python_block(page: str, heading: str) -> str:
    text = (DOCS / page).read_text("utf-8")
    section = text.split(heading, 1)[1]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


@pytest.mark.parametrize(
    ("page", "heading", "answer"),
    [
        ("getting-started.md", "## From Python", "Python (.py) files here"),
        ("getting-started.zh.md", "## 在 Python 里", ".py"),
    ],
)
def test_getting_started_ends_with_the_answer_and_a_readable_history(
    page, heading, answer, tmp_path, monkeypatch, capsys
):
    monkeypatch.chdir(tmp_path)
    for name in ("a.py", "b.py"):
        (tmp_path / name).write_text("x = 1\n")
    exec(compile(_python_block(page, heading), page, "exec"), {})
    out = capsys.readouterr().out
    assert answer in out and "2" in out  # the model's final answer, with the real count
    assert "tool_result" in out or "tool_use" in out  # the history, as Markdown
    assert out.rstrip().endswith("[]")  # and nothing the API would refuse
    assert "{'role'" not in out  # not a raw list echo


def test_the_readmes_python_example_runs_offline(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text("x = 1\n")
    text = (ROOT / "README.md").read_text("utf-8")
    block = text.split("## Use it from Python", 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    scope: dict = {}
    exec(compile(block, "README.md", "exec"), scope)  # the same system and tools every request
    assert scope["al"].validate(scope["messages"]) == []
    assert scope["messages"][-1]["role"] == "assistant"
