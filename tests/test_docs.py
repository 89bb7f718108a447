"""The docs site's sources: the FAQ quotes the API's real wording, every page and public name is there.

The site itself is built by CI with ``mkdocs build --strict`` (see mkdocs.yml);
these checks are the fast part that needs no docs dependencies.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

import agentlab
from agentlab.history import validate
from agentlab.offline import check_request

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
}  # fmt: skip

REQUESTS = {
    "tool_name": {"tools": [{"name": "my tool", "input_schema": {}}]},
    "tool_names": {"tools": [{"name": "t", "input_schema": {}}, {"name": "t", "input_schema": {}}]},
    "input_schema": {"tools": [{"name": "t"}]},
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
