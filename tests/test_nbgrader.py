"""nbgrader, end to end, on one exercise in a temporary course folder.

The solutions notebook is nbgrader's source version: ``generate_assignment``
must turn it into exactly our student notebook's stub and graded cell, and
``autograde`` must give the reference full marks and a real mistake less
(partial credit: the graded cell's output is the share of scenarios passed).
The same holds for the Chinese sources (``notebooks/zh/solutions``), with the
course's code stub set to the Chinese one (``CODE_STUB["zh"]``).
"""

from __future__ import annotations

import inspect
import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from nbgrader.api import Gradebook  # nbgrader is in the 'test' extra
from nbgrader.apps import NbGraderAPI
from traitlets.config.loader import PyFileConfigLoader

from agentlab.exercises import get, reference
from agentlab.exercises.notebooks import CODE_STUB

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = "02_decide.ipynb"  # 10 scenarios, 2 points: partial credit shows
POINTS = get("decide").points


def wrong_decide(response):  # stops only on end_turn: a real mistake (3 of 10 scenarios pass)
    if response.stop_reason == "end_turn":
        return "stop"
    return "execute"


def nbgrader_api(course: Path, monkeypatch: pytest.MonkeyPatch) -> NbGraderAPI:
    """nbgrader's own Python API, configured by the course's nbgrader_config.py.

    In-process rather than one `nbgrader` command per step: each command pays
    nbgrader's slow start (several seconds) again. nbgrader still runs `alembic`
    as a subprocess, so the interpreter's bin folder must be on PATH.
    """
    bindir = os.path.dirname(sys.executable)
    monkeypatch.setenv("PATH", bindir + os.pathsep + os.environ.get("PATH", ""))
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(course / ".jupyter"))  # no user config leaks in
    monkeypatch.chdir(course)
    config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    return NbGraderAPI(config=config)


def ok(result: dict) -> None:
    assert result["success"], f"{result.get('error')}\n{result.get('log')}"


def solution_cell(nb: dict) -> dict:
    [cell] = [c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("solution")]
    return cell


def graded_cell(nb: dict) -> dict:
    [cell] = [c for c in nb["cells"] if c["metadata"].get("nbgrader", {}).get("grade")]
    return cell


def source(cell: dict) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def submit(course: Path, student: str, release: dict, code: str | None) -> None:
    nb = json.loads(json.dumps(release))
    if code is not None:
        solution_cell(nb)["source"] = code
    folder = course / "submitted" / student / "ps1"
    folder.mkdir(parents=True)
    (folder / NOTEBOOK).write_text(json.dumps(nb), "utf-8")


FOLDERS = {"en": ROOT / "notebooks", "zh": ROOT / "notebooks" / "zh"}


@pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")  # nbgrader 0.9 on SQLAlchemy 2
@pytest.mark.parametrize("language", ["en", "zh"])
def test_nbgrader_generates_and_autogrades_an_exercise(language, tmp_path, monkeypatch):
    course = tmp_path / "course"
    (course / "source" / "ps1").mkdir(parents=True)
    folder = FOLDERS[language]
    shutil.copy(folder / "solutions" / NOTEBOOK, course / "source" / "ps1" / NOTEBOOK)
    config = [
        "c = get_config()",
        "c.CourseDirectory.course_id = 'agentlab'",
        f"c.CourseDirectory.root = {str(course)!r}",
        "c.ExecutePreprocessor.kernel_name = 'python3'",
    ]
    if language != "en":  # the stub in the notebook's language, as docs/instructors/nbgrader says
        config.append(f"c.ClearSolutions.code_stub = {{'python': {CODE_STUB[language]!r}}}")
    (course / "nbgrader_config.py").write_text("\n".join(config) + "\n", "utf-8")
    api = nbgrader_api(course, monkeypatch)

    ok(api.generate_assignment("ps1", force=True))
    release = json.loads((course / "release" / "ps1" / NOTEBOOK).read_text("utf-8"))
    ours = json.loads((folder / "exercises" / NOTEBOOK).read_text("utf-8"))
    # nbgrader's stub and graded cell are exactly those of our student notebook
    assert source(solution_cell(release)) == source(solution_cell(ours))
    assert source(graded_cell(release)) == source(graded_cell(ours))

    submit(course, "alice", release, inspect.getsource(reference.decide))
    submit(
        course, "bob", release, inspect.getsource(wrong_decide).replace("wrong_decide", "decide")
    )
    for student in ("alice", "bob"):
        ok(api.autograde("ps1", student))

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        assert gb.find_assignment("ps1").max_score == POINTS
        alice = gb.find_submission("ps1", "alice").score
        bob = gb.find_submission("ps1", "bob").score
    assert alice == POINTS  # the reference: full marks
    assert bob == pytest.approx(POINTS * 3 / 10)  # a real mistake: partial credit, 3 of 10
    if language == "zh":  # the student's copy speaks Chinese, the stub included
        stub = source(solution_cell(release))
        assert "# 在这里写你的代码" in stub and "YOUR CODE HERE" not in stub
        assert "检查器" in source(graded_cell(release))


@pytest.mark.parametrize("language", ["en", "zh"])
def test_every_exercise_has_a_source_notebook_in_each_language(language):
    folder = FOLDERS[language]
    names = sorted(p.name for p in (folder / "exercises").glob("*.ipynb"))
    assert len(names) == 10
    assert sorted(p.name for p in (folder / "solutions").glob("*.ipynb")) == names
    for name in names:
        nb = json.loads((folder / "solutions" / name).read_text("utf-8"))
        assert any("BEGIN SOLUTION" in source(c) for c in nb["cells"]), name
        assert sum(bool(c["metadata"].get("nbgrader", {}).get("grade")) for c in nb["cells"]) == 1
