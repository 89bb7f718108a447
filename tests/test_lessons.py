"""agentlab lessons: the notebooks ship with the package, copy safely, and open in JupyterLab."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from agentlab.apps import cli, lessons

ROOT = Path(__file__).resolve().parent.parent


def fake_source(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    for rel in [
        "01_the_agent_loop.ipynb",
        "02_stepping_through.ipynb",
        "zh/01_the_agent_loop.ipynb",
        "exercises/ex1.ipynb",
        "exercises/data/words.txt",
        "solutions/ex1.ipynb",
        "conftest.py",
        "notes.md",
        ".ipynb_checkpoints/01_the_agent_loop-checkpoint.ipynb",
        "exercises/.ipynb_checkpoints/ex1-checkpoint.ipynb",
    ]:
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(f"original {rel}")
    return src


def test_the_package_ships_the_repository_lessons():
    source = lessons.source_dir()
    assert source.resolve() == (ROOT / "notebooks").resolve()
    files = [p.as_posix() for p in lessons.lesson_files()]
    assert files[0] == lessons.FIRST_LESSON
    for name in ["01_the_agent_loop.ipynb", "04_when_things_go_wrong.ipynb"]:
        assert name in files
        json.loads((source / name).read_text("utf-8"))  # a real notebook, not a link stub
    assert "conftest.py" not in files
    assert not any(f.startswith("solutions/") for f in files)


def test_pyproject_puts_the_lessons_in_the_wheel():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    config = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    setuptools = config["tool"]["setuptools"]
    assert "notebooks/**/*" in setuptools["package-data"]["agentlab"]
    assert "agentlab.notebooks*" in setuptools["packages"]["find"]["exclude"]
    assert "jupyterlab>=4" in config["project"]["optional-dependencies"]["lab"]


def test_copy_takes_lessons_zh_and_exercises_only(tmp_path):
    report = lessons.copy_lessons(tmp_path / "class", fake_source(tmp_path))
    copied = sorted(p.as_posix() for p in report.copied)
    assert copied == [
        "01_the_agent_loop.ipynb",
        "02_stepping_through.ipynb",
        "exercises/data/words.txt",
        "exercises/ex1.ipynb",
        "zh/01_the_agent_loop.ipynb",
    ]
    assert report.skipped == []
    assert (tmp_path / "class/zh/01_the_agent_loop.ipynb").read_text() == (
        "original zh/01_the_agent_loop.ipynb"
    )


def test_copy_never_overwrites_a_students_file(tmp_path):
    src = fake_source(tmp_path)
    dest = tmp_path / "class"
    lessons.copy_lessons(dest, src)
    (dest / "01_the_agent_loop.ipynb").write_text("my answers")
    (dest / "exercises/ex1.ipynb").unlink()  # deleted by the student: comes back

    report = lessons.copy_lessons(dest, src)

    assert (dest / "01_the_agent_loop.ipynb").read_text() == "my answers"
    assert [p.as_posix() for p in report.copied] == ["exercises/ex1.ipynb"]
    assert Path("01_the_agent_loop.ipynb") in report.skipped


def test_copy_from_an_empty_folder_says_the_install_is_incomplete(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="incomplete"):
        lessons.copy_lessons(tmp_path / "class", tmp_path / "empty")


def test_cli_copy_only_reports_copied_and_kept_files(tmp_path, capsys):
    dest = tmp_path / "class"
    assert cli.main(["lessons", str(dest), "--copy-only"]) == 0
    first = capsys.readouterr().out
    assert "copied" in first and str(dest) in first
    assert (dest / lessons.FIRST_LESSON).is_file()

    assert cli.main(["lessons", str(dest), "--copy-only"]) == 0
    again = capsys.readouterr().out
    assert "copied 0 lesson files" in again
    assert "your edits are kept" in again
    assert f"  {lessons.FIRST_LESSON}" in again


def test_without_jupyterlab_it_says_how_to_install_it(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(lessons.importlib.util, "find_spec", lambda name: None)
    called = []
    monkeypatch.setattr(lessons.subprocess, "call", lambda *a, **k: called.append(a) or 0)
    assert cli.main(["lessons", str(tmp_path / "class")]) == 1
    assert 'pip install "agent-loop-lab[lab]"' in capsys.readouterr().err
    assert called == []
    assert (tmp_path / "class" / lessons.FIRST_LESSON).is_file()  # copied all the same


def test_it_opens_jupyterlab_on_lesson_one_in_the_folder(tmp_path, monkeypatch, capsys):
    calls = []

    def fake_call(cmd, cwd):
        calls.append((cmd, cwd))
        return 0

    monkeypatch.setattr(lessons.subprocess, "call", fake_call)
    assert cli.main(["lessons", str(tmp_path / "class"), "--no-browser"]) == 0
    ((cmd, cwd),) = calls
    assert cmd[:4] == [sys.executable, "-m", "jupyterlab", lessons.FIRST_LESSON]
    assert "--no-browser" in cmd
    assert cwd == (tmp_path / "class").resolve()
    # It prints the address of lesson 01 itself (with the port and token it gave JupyterLab).
    port = next(a for a in cmd if a.startswith("--port=")).split("=")[1]
    token = next(a for a in cmd if a.startswith("--IdentityProvider.token=")).split("=")[1]
    url = f"http://127.0.0.1:{port}/lab/tree/{lessons.FIRST_LESSON}?token={token}"
    assert url in capsys.readouterr().out


def test_python_dash_m_entry_point(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "agentlab.apps.lessons", str(tmp_path / "c"), "--copy-only"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert lessons.FIRST_LESSON in out
    assert (tmp_path / "c" / lessons.FIRST_LESSON).is_file()


# -- lessons v2 (issue 15): active learning, hygiene, current guidance ----------------

LESSONS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def cells(path: Path) -> list[dict]:
    return json.loads(path.read_text("utf-8"))["cells"]


def source(cell: dict) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def printed(cell: dict) -> str:
    """What a code cell printed (its stream outputs), as one string."""
    texts = [o.get("text", "") for o in cell.get("outputs", [])]
    return "".join("".join(t) if isinstance(t, list) else t for t in texts)


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name)
def test_each_lesson_asks_for_predictions_names_exercises_and_cites_docs(path):
    markdown = [source(c) for c in cells(path) if c["cell_type"] == "markdown"]
    predictions = sum(s.count("**Predict:**") for s in markdown)
    assert predictions >= (5 if path.name.startswith("01_") else 3), predictions
    text = "\n".join(markdown)
    assert "## Further reading" in text
    assert re.search(r"\]\(exercises/0[1-7]_\w+\.ipynb\)", text), "no exercise named"


def test_every_notebook_keeps_nbval_markers_in_tags_not_in_code():
    notebooks = sorted((ROOT / "notebooks").rglob("*.ipynb"))
    assert len(notebooks) >= 20
    for path in notebooks:
        for cell in cells(path):
            assert "NBVAL" not in source(cell), path
            for tag in cell.get("metadata", {}).get("tags", []):
                assert tag in {"nbval-check-output", "nbval-ignore-output", "raises-exception",
                               "nbval-skip", "student"}, (path, tag)  # fmt: skip


def test_lesson_one_has_student_cells_checked_on_the_spot_and_does_not_give_the_loop_away():
    lesson = cells(ROOT / "notebooks/01_the_agent_loop.ipynb")
    assert len(lesson) <= 70
    code = [c for c in lesson if c["cell_type"] == "code"]
    students = [i for i, c in enumerate(code) if "student" in c["metadata"].get("tags", [])]
    names = [re.match(r"def (\w+)\(", source(code[i])).group(1) for i in students]
    assert names == ["first_message", "decide", "tool_result", "append_results"]
    for i, name in zip(students, names):
        assert "raise NotImplementedError" in source(code[i])  # a stub that fails its check
        assert source(code[i + 1]) == f'check("{name}", {name})'  # checked on the spot
        outputs = code[i + 1].get("outputs", [])  # the saved run: a report on the stub, no error
        assert outputs and not any(o["output_type"] == "error" for o in outputs)
    programs = "\n".join(source(c) for c in code)
    assert "while True:" not in programs  # exercise 6 asks for the loop from memory
    assert "<details>" not in "\n".join(source(c) for c in lesson)  # no answer a click away
    lessons_own = "\n".join(source(c) for i, c in enumerate(code) if i not in students)
    # the lesson's own cells never call the student's functions, so a stub breaks nothing
    assert not re.search(
        r"(?<![.\w])(first_message|decide|tool_result|append_results)\(", lessons_own
    )


def test_lesson_one_builds_the_loop_before_it_shows_a_thinking_block():
    lesson = cells(ROOT / "notebooks/01_the_agent_loop.ipynb")
    code = [source(c) for c in lesson if c["cell_type"] == "code"]
    loop = next(i for i, c in enumerate(lesson) if "al.agent_loop(" in source(c))
    shown = [
        i
        for i, c in enumerate(lesson)
        if c["cell_type"] == "code" and '"type": "thinking"' in source(c)
    ]
    assert shown and shown[0] > loop
    assert '"signature"' in source(lesson[shown[0]])
    assert printed(lesson[shown[0]]).lstrip().startswith("thinking")  # the first block, named
    assert not any("content[0].text" in s for s in code)  # blocks are picked by type
    lines = [
        line for c in lesson if c["cell_type"] == "markdown" for line in source(c).splitlines()
    ]
    assert sum("| `stop_reason` |" in line for line in lines) == 1  # one table of stop reasons


def test_lesson_two_keeps_a_snapshot_after_each_stage():
    lesson = cells(ROOT / "notebooks/02_stepping_through.ipynb")
    stages = [c for c in lesson if c["cell_type"] == "code" and "snapshot(view)" in source(c)
              and "view.next_stage()" in source(c)]  # fmt: skip
    assert len(stages) == 4  # request, decide, execute, append
    pictures = [
        "".join(o["data"]["text/html"])
        for c in stages
        for o in c.get("outputs", [])
        if "text/html" in o.get("data", {})
    ]
    assert len(pictures) == 4 and len(set(pictures)) == 4  # four different stills


def test_lessons_say_ended_not_stop_reason_for_agentlabs_endings():
    for path in LESSONS:
        for cell in cells(path):
            text = source(cell) + printed(cell)
            assert "stop_reason max_turns" not in text and "stop_reason='max_turns'" not in text
            assert 'loop.stop_reason, "after"' not in text, path


@pytest.mark.parametrize(
    "lesson", ["04_when_things_go_wrong.ipynb", "zh/04_when_things_go_wrong.ipynb"]
)
def test_lesson_four_chart_keeps_every_label_inside_the_picture(lesson):
    """The saved bar chart: a label's baseline sits at least one font size below the
    top of the SVG (the tallest bar's number was cut in half) and above its bottom."""
    nb = json.loads((ROOT / "notebooks" / lesson).read_text())
    charts = [
        "".join(out["data"]["text/html"])
        for cell in nb["cells"]
        if "def bar_chart" in "".join(cell["source"])
        for out in cell.get("outputs", [])
        if "text/html" in out.get("data", {})
    ]
    assert len(charts) == 1
    height = float(re.search(r'<svg[^>]*height="([\d.]+)"', charts[0]).group(1))
    labels = re.findall(r'<text[^>]*y="([\d.]+)"[^>]*font-size="([\d.]+)"[^>]*>([^<]*)<', charts[0])
    assert len(labels) >= 4
    for y, size, text in labels:
        assert float(size) <= float(y) <= height, f"{text!r} at y={y} in a {height}px chart"
