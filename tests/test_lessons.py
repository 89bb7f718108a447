"""agentlab lessons: the notebooks ship with the package, copy safely, and open in JupyterLab."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agentlab import cli, lessons

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
    assert "copied 0 lesson file(s)" in again
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
        [sys.executable, "-m", "agentlab.lessons", str(tmp_path / "c"), "--copy-only"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert lessons.FIRST_LESSON in out
    assert (tmp_path / "c" / lessons.FIRST_LESSON).is_file()
