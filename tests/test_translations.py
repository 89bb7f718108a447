"""Chinese throughout: lessons made from one source, and one word per idea."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from test_student_cells import python

ROOT = Path(__file__).resolve().parent.parent
TERMS = json.loads((ROOT / "translations" / "zh" / "terms.json").read_text("utf-8"))["terms"]


def chinese_texts() -> dict[str, str]:
    """Every place a Chinese reader meets agentlab's words."""
    from agentlab.exercises import strings  # noqa: F401  (registers the exercise texts)
    from agentlab.i18n import STRINGS

    texts = {f"i18n {k}": v for k, v in STRINGS["zh"].items()}
    for path in sorted((ROOT / "notebooks" / "zh").rglob("*.ipynb")):
        nb = json.loads(path.read_text("utf-8"))
        for cell in nb["cells"]:
            src = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
            texts[f"{path.relative_to(ROOT)} {cell.get('id')}"] = src
    for path in sorted((ROOT / "translations" / "zh").glob("[0-9]*.json")):
        for cid, entry in json.loads(path.read_text("utf-8")).items():
            texts[f"{path.relative_to(ROOT)} {cid}"] = entry["zh"]
    for path in sorted((ROOT / "docs").rglob("*.zh.md")):
        texts[str(path.relative_to(ROOT))] = path.read_text("utf-8")
    return texts


def misused(term: dict, where: str, text: str) -> list[str]:
    """The words of ``term`` to avoid that ``text`` (found at ``where``) uses."""
    if "only" in term and not where.startswith(tuple(term["only"])):
        return []
    text = re.sub(r"\{#[\w-]+\}", "", text)  # heading anchors stay English: links point to them
    bad = [b for b in term["avoid"] if b in text]
    for word in term.get("avoid_word", []):  # alone, not inside a name: api_key, key=..., `key`
        if re.search(rf"(?<![A-Za-z_`]){word}(?![A-Za-z_`=])", text):
            bad.append(word)
    return bad


@pytest.mark.parametrize("term", TERMS, ids=lambda t: t["en"])
def test_one_chinese_word_per_idea(term):
    found = [
        f"{where}: {bad!r} (use {term['zh']!r})"
        for where, text in chinese_texts().items()
        for bad in misused(term, where, text)
    ]
    assert not found, "\n".join(found)


def test_a_word_to_avoid_is_found_alone_but_not_inside_a_name():
    key = next(t for t in TERMS if t["zh"] == "密钥")
    assert misused(key, "notebooks/zh/03_x.ipynb c1", "设置了 key 时") == ["key"]
    assert (
        misused(key, "notebooks/zh/03_x.ipynb c1", 'Anthropic(api_key="t"); max(xs, key=len)') == []
    )
    assert misused(key, "somewhere/else.md", "设置了 key 时") == ["key"]  # everywhere now
    assert (
        misused(key, "docs/x.zh.md", "## 密钥 {#the-api-key}") == []
    )  # an anchor is a link target
    limited = {**key, "only": ["notebooks/zh/03"]}
    assert misused(limited, "somewhere/else.md", "设置了 key 时") == []  # outside its "only"


def test_the_seed_lessons_word_for_observation_is_used():
    lessons = [v for k, v in chinese_texts().items() if k.startswith("notebooks")]
    assert any("观察结果" in text for text in lessons)


def test_chinese_lessons_are_made_from_the_english_ones_and_current_translations():
    out = subprocess.run(
        [sys.executable, "tools/translate_lessons.py", "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stdout + out.stderr


def test_a_changed_english_cell_is_flagged(tmp_path, monkeypatch):
    sys.path.insert(0, str(ROOT / "tools"))
    import nbformat
    import translate_lessons as tl

    lesson = sorted((ROOT / "notebooks").glob("01_*.ipynb"))[0]
    nb = nbformat.read(lesson, as_version=4)
    md = next(c for c in nb.cells if c.cell_type == "markdown")
    md.source += "\nOne more sentence."
    copy = tmp_path / lesson.name
    nbformat.write(nb, copy)
    monkeypatch.setattr(tl, "table_path", lambda p: tl.TRANSLATIONS / f"{p.stem}.json")
    assert any(md.id in line and "changed" in line for line in tl.problems(copy))


def test_plurals_are_words_not_brackets():
    from agentlab.exercises import strings  # noqa: F401  (registers the exercise texts)
    from agentlab.i18n import STRINGS

    bracketed = [k for k, v in STRINGS["en"].items() if "(s)" in v]
    assert not bracketed, f"use '{{n:one|other}}' instead of '(s)' in: {bracketed}"


def test_a_count_picks_its_word():
    from agentlab.i18n import EN, t

    EN["test.plural"] = "There {n:is|are} {n} Python {n:file|files} ({n:,} in all)"
    try:
        assert t("test.plural", n=1) == "There is 1 Python file (1 in all)"
        assert t("test.plural", n=1200) == "There are 1200 Python files (1,200 in all)"
        assert t("test.plural", n=0) == "There are 0 Python files (0 in all)"
    finally:
        del EN["test.plural"]


CJK = re.compile(r"[\u4e00-\u9fff]")


def demo_tasks(source: str) -> list[str]:
    """Tasks a code cell gives the model behind ``al.connect()``: ``%agent``/``%%agent`` tasks, and
    in a cell that uses ``client``, each user message and each string passed to ask/agent_loop/AgentLoop."""
    from agentlab.apps.magic import COMMANDS, AgentMagics, split_line

    lines = source.splitlines()
    if lines and lines[0].startswith("%%agent"):
        return ["\n".join(lines[1:])]
    parser = AgentMagics.agent.parser
    takes_value = {s for a in parser._actions if a.nargs != 0 for s in a.option_strings}
    found = []
    for line in lines:
        line = line.strip()  # a %agent line may sit inside a try: block
        if line.startswith("%agent "):
            task = split_line(line.removeprefix("%agent "), takes_value)[1]
            if task and task.split()[0].lower() not in COMMANDS:
                found.append(task)
    nodes = list(ast.walk(python(source)))
    if not any(isinstance(n, ast.Name) and n.id == "client" for n in nodes):
        return found
    for node in nodes:
        if isinstance(node, ast.Dict):
            pairs = {
                k.value: v for k, v in zip(node.keys, node.values) if isinstance(k, ast.Constant)
            }
            role, content = pairs.get("role"), pairs.get("content")
            if (
                isinstance(role, ast.Constant)
                and role.value == "user"
                and isinstance(content, ast.Constant)
            ):
                found.append(content.value)
        if isinstance(node, ast.Call):
            name = (
                node.func.attr
                if isinstance(node.func, ast.Attribute)
                else getattr(node.func, "id", "")
            )
            if name in ("ask", "agent_loop", "AgentLoop"):
                found += [
                    a.value
                    for a in node.args
                    if isinstance(a, ast.Constant) and isinstance(a.value, str)
                ]
    return found


def test_demo_tasks_are_found_in_a_cell():
    cell = 'client = al.connect()\nask(client, "How many lines?", tools)\n%agent --max-turns 2 --out r 你好\n%agent reset'
    assert demo_tasks(cell) == ["你好", "How many lines?"]
    assert demo_tasks("%%agent --new\nList the files") == ["List the files"]
    assert demo_tasks('run(["ok"], task="Please help.")') == []  # a scripted model, not the demo


def test_chinese_lessons_ask_the_demo_model_in_chinese():
    """The demo model answers in the task's language, so a Chinese lesson's tasks are Chinese."""
    english = [
        f"{path.relative_to(ROOT)} {cell.get('id')}: {task!r}"
        for path in sorted((ROOT / "notebooks" / "zh").glob("[0-9][0-9]_*.ipynb"))
        for cell in json.loads(path.read_text("utf-8"))["cells"]
        if cell["cell_type"] == "code"
        for task in demo_tasks("".join(cell["source"]))
        if not CJK.search(task)
    ]
    assert not english, "\n".join(english)


def test_no_space_after_chinese_punctuation_where_a_label_meets_its_text():
    from agentlab.i18n import gap

    assert gap("下一步：请求。") == "" and gap("提示（decide）：") == ""
    assert gap("Next: request.") == " " and gap("Hint (decide):") == " "
