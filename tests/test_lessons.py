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
        "zh/exercises/ex1.ipynb",
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
    report = lessons.copy_lessons(tmp_path / "class", fake_source(tmp_path), with_outputs=True)
    copied = sorted(p.as_posix() for p in report.copied)
    assert copied == [
        "01_the_agent_loop.ipynb",
        "02_stepping_through.ipynb",
        "exercises/data/words.txt",
        "exercises/ex1.ipynb",
        "zh/01_the_agent_loop.ipynb",
        "zh/exercises/ex1.ipynb",
    ]
    assert report.skipped == []
    assert (tmp_path / "class/zh/01_the_agent_loop.ipynb").read_text() == (
        "original zh/01_the_agent_loop.ipynb"
    )


def test_copy_never_overwrites_a_students_file(tmp_path):
    src = fake_source(tmp_path)
    dest = tmp_path / "class"
    lessons.copy_lessons(dest, src, with_outputs=True)
    (dest / "01_the_agent_loop.ipynb").write_text("my answers")
    (dest / "exercises/ex1.ipynb").unlink()  # deleted by the student: comes back

    report = lessons.copy_lessons(dest, src, with_outputs=True)

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


def test_lang_zh_points_at_the_chinese_lesson_and_is_not_refused(tmp_path, capsys):
    # Student trial: `agentlab lessons --lang zh` switched to Chinese, then refused --lang.
    from agentlab.i18n import set_language

    try:
        assert cli.main(["lessons", str(tmp_path / "c"), "--copy-only", "--lang", "zh"]) == 0
    finally:
        set_language("en")
    said = capsys.readouterr()
    assert "zh/01_the_agent_loop.ipynb" in said.out and said.err == ""
    assert (tmp_path / "c" / "zh" / lessons.FIRST_LESSON).is_file()
    cmd = lessons.lab_command(tmp_path, browser=False, lang="zh")
    assert cmd[3] == "zh/01_the_agent_loop.ipynb"


def test_without_jupyterlab_it_says_how_to_install_it(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(lessons.importlib.util, "find_spec", lambda name: None)
    called = []
    monkeypatch.setattr(lessons, "serve_lab", lambda *a, **k: called.append(a) or 0)
    assert cli.main(["lessons", str(tmp_path / "class")]) == 1
    assert "pip install jupyterlab anywidget" in capsys.readouterr().err
    assert called == []
    assert (tmp_path / "class" / lessons.FIRST_LESSON).is_file()  # copied all the same


def test_it_opens_jupyterlab_on_lesson_one_in_the_folder(tmp_path, monkeypatch, capsys):
    calls = []

    def fake_serve(cmd, cwd, port, token, first=""):
        calls.append((cmd, cwd, port, token))
        return 0

    monkeypatch.setattr(lessons, "serve_lab", fake_serve)
    assert cli.main(["lessons", str(tmp_path / "class"), "--no-browser"]) == 0
    ((cmd, cwd, port, token),) = calls
    assert cmd[:4] == [sys.executable, "-m", "jupyterlab", lessons.FIRST_LESSON]
    assert "--no-browser" in cmd
    assert cwd == (tmp_path / "class").resolve()
    # Lab gets that port and no other (a moved port would make the printed link wrong).
    assert f"--port={port}" in cmd and "--ServerApp.port_retries=0" in cmd
    assert f"--IdentityProvider.token={token}" in cmd


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
    assert re.search(r"\]\(exercises/(0[1-9]|10)_\w+\.ipynb\)", text), "no exercise named"


def test_every_notebook_keeps_nbval_markers_in_tags_not_in_code():
    notebooks = sorted((ROOT / "notebooks").rglob("*.ipynb"))
    assert len(notebooks) >= 20
    for path in notebooks:
        for cell in cells(path):
            assert "NBVAL" not in source(cell), path
            for tag in cell.get("metadata", {}).get("tags", []):
                assert tag in {"nbval-check-output", "nbval-ignore-output", "raises-exception",
                               "nbval-skip", "student"}, (path, tag)  # fmt: skip


def test_no_lesson_cell_raises_so_run_all_reaches_the_end():
    # Jupyter's "Run All" stops at the first cell that raises: a lesson that shows an error
    # catches it and prints it.
    for path in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")):
        for cell in cells(path):
            assert "raises-exception" not in cell.get("metadata", {}).get("tags", []), path


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
    assert not re.search(r"^\s*while True:", programs, re.M)  # exercise 6: from memory
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
    core = next(c for c in lesson if "inspect.getsource(steps)" in source(c))  # the core's loop
    shown = printed(core).lstrip()  # from the try: that answers every call on Ctrl-C or an error
    assert shown.startswith("try:") and "while True:" in shown and "# 2. decide" in shown
    assert "except (Exception, KeyboardInterrupt)" in shown


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


# --- students get the questions, not the answers ------------------------------------------


def test_a_students_copy_has_no_saved_outputs_and_an_instructors_keeps_them(tmp_path):
    source = lessons.source_dir()
    saved = json.loads((source / lessons.FIRST_LESSON).read_text("utf-8"))
    assert any(c.get("outputs") for c in saved["cells"])  # the repository keeps its outputs
    student = lessons.copy_lessons(tmp_path / "student")
    teacher = lessons.copy_lessons(tmp_path / "teacher", with_outputs=True)
    notebooks = [p for p in student.copied if p.suffix == ".ipynb"]
    assert {"zh", "exercises"} <= {p.parts[0] for p in notebooks}
    assert any(p.parts[:2] == ("zh", "exercises") for p in notebooks)  # Chinese exercises too
    for rel in notebooks:
        nb = json.loads((student.dest / rel).read_text("utf-8"))
        code = [c for c in nb["cells"] if c["cell_type"] == "code"]
        assert all(c["outputs"] == [] and c["execution_count"] is None for c in code), rel
        assert "widgets" not in nb["metadata"], rel
        original = json.loads((source / rel).read_text("utf-8"))
        assert [c["source"] for c in nb["cells"]] == [c["source"] for c in original["cells"]]
    assert (teacher.dest / lessons.FIRST_LESSON).read_bytes() == (
        source / lessons.FIRST_LESSON
    ).read_bytes()


def test_the_cli_gives_students_cleared_copies_unless_asked(tmp_path):
    assert cli.main(["lessons", str(tmp_path / "a"), "--copy-only"]) == 0
    assert cli.main(["lessons", str(tmp_path / "b"), "--copy-only", "--with-outputs"]) == 0
    a = json.loads((tmp_path / "a" / lessons.FIRST_LESSON).read_text("utf-8"))
    b = json.loads((tmp_path / "b" / lessons.FIRST_LESSON).read_text("utf-8"))
    assert not any(c.get("outputs") for c in a["cells"])
    assert any(c.get("outputs") for c in b["cells"])


@pytest.mark.parametrize(
    "name",
    [
        "01_the_agent_loop.ipynb",
        "02_stepping_through.ipynb",
        "06_planning.ipynb",
        "07_subagents.ipynb",
        "exercises/02_decide.ipynb",
    ],
)
def test_a_cleared_copy_runs_top_to_bottom(tmp_path, name):
    nbclient = pytest.importorskip("nbclient")
    import nbformat

    report = lessons.copy_lessons(tmp_path / "class")
    path = report.dest / name
    nb = nbformat.read(path, as_version=4)
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3", resources={
        "metadata": {"path": str(path.parent)}}).execute()  # fmt: skip
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs
              if o.output_type == "error" and "raises-exception" not in c.metadata.get("tags", [])]  # fmt: skip
    assert errors == []


def test_inside_a_git_clone_the_default_folder_is_outside_it(tmp_path, monkeypatch):
    clone = tmp_path / "clone"
    (clone / ".git").mkdir(parents=True)
    (clone / "sub").mkdir()
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert lessons.default_dir(clone / "sub") == tmp_path / "home" / "agentlab-lessons"
    plain = tmp_path / "plain"
    plain.mkdir()
    assert lessons.default_dir(plain) == plain.resolve() / "agentlab-lessons"
    assert "agentlab-lessons/" in (ROOT / ".gitignore").read_text()


# --- JupyterLab: the link it really serves, and a clean stop -------------------------------

# A stand-in for JupyterLab: says it started, waits for a go file, then answers
# /api/status (with the token) on the port it was given, like Lab's server does.
FAKE_LAB = r"""
import http.server, os, sys, time
port, token, go = int(sys.argv[1]), sys.argv[2], sys.argv[3]
open(go + ".pid", "w").write(str(os.getpid()))
print("fake-lab: started", file=sys.stderr, flush=True)
while not os.path.exists(go):
    time.sleep(0.02)
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        ok = self.headers.get("Authorization") == "token " + token
        self.send_response(200 if ok else 403); self.end_headers()
    def log_message(self, *a): pass
http.server.HTTPServer(("127.0.0.1", port), H).serve_forever()
"""

# serve_lab in its own process, as `agentlab lessons` runs it (with SIGINT's default handler
# restored: a test runner started in the background may have SIGINT ignored).
RUNNER = r"""
import signal, sys
signal.signal(signal.SIGINT, signal.default_int_handler)
from pathlib import Path
from agentlab.apps.lessons import serve_lab
port, token, go, fake = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
sys.exit(serve_lab([sys.executable, fake, str(port), token, go], Path("."), port, token))
"""


def _start(tmp_path):
    import os
    import secrets as s

    fake = tmp_path / "fake_lab.py"
    fake.write_text(FAKE_LAB)
    go = tmp_path / "go"
    port, token = lessons._free_port(), s.token_urlsafe(8)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-c", RUNNER, str(port), token, str(go), str(fake)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path,
    )  # fmt: skip
    assert proc.stderr.readline().strip() == "fake-lab: started"  # an event, not a sleep
    return proc, go, port, token


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[1].startswith("Z")  # a zombie waiting to be reaped
    except FileNotFoundError:
        return True


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc to see the child is gone")
@pytest.mark.parametrize("signum", ["SIGTERM", "SIGINT"])
def test_the_link_comes_once_lab_answers_and_a_signal_stops_lab(tmp_path, signum):
    import signal

    proc, go, port, token = _start(tmp_path)
    try:
        import select

        ready, _, _ = select.select([proc.stdout], [], [], 0)
        assert ready == []  # Lab is not listening yet, so no link has been printed
        go.touch()
        line = proc.stdout.readline()
        assert line.strip().endswith(
            f"http://127.0.0.1:{port}/lab/tree/{lessons.FIRST_LESSON}?token={token}"
        )
        pid = int((tmp_path / "go.pid").read_text())
        proc.send_signal(getattr(signal, signum))
        assert proc.wait(timeout=20) == 0
        assert _gone(pid)  # JupyterLab stopped with it, without a question
        assert "y/[n]" not in proc.stderr.read()
    finally:
        proc.kill()
        proc.wait()


def test_a_busy_port_is_one_line(tmp_path, capsys):
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        assert cli.main(["lessons", str(tmp_path / "c"), "--port", str(port)]) == 1
    err = capsys.readouterr().err.strip()
    assert (
        err
        == f"Port {port} is already in use: choose another with --port, or leave --port out to use a free one."
    )
