"""Lessons 02-07 ask the student to write: cells tagged ``student``, each checked on the spot.

(Lesson 01's own cells are tested with lesson 01.)
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
LESSONS = [
    path
    for n in ("01", "02", "03", "04", "05", "06", "07")
    for path in sorted((ROOT / "notebooks").glob(f"{n}_*.ipynb"))
    + sorted((ROOT / "notebooks" / "zh").glob(f"{n}_*.ipynb"))
]
CJK = re.compile(r"[\u4e00-\u9fff]")


def _no_magic(line: str) -> str:
    """A magic line becomes ``pass`` at its indentation (it may sit inside a ``try:``)."""
    body = line.lstrip()
    return line[: len(line) - len(body)] + "pass" if body.startswith("%") else line


def python(source: str) -> ast.Module:
    """A cell's code, with its IPython magic lines left out (a ``%%`` cell is not Python)."""
    if source.startswith("%%"):
        return ast.Module(body=[], type_ignores=[])
    return ast.parse("\n".join(_no_magic(line) for line in source.splitlines()))


def assigned(source: str) -> set[str]:
    return {
        n.id
        for n in ast.walk(python(source))
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    } | {n.name for n in ast.walk(python(source)) if isinstance(n, ast.FunctionDef | ast.ClassDef)}


def used(source: str) -> set[str]:
    return {
        n.id
        for n in ast.walk(python(source))
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    }


def student_cells(nb) -> list[tuple[int, int]]:
    """(student cell, the code cell after it) index pairs."""
    code = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    return [
        (i, next((j for j in code if j > i), -1))
        for i in code
        if "student" in nb.cells[i].metadata.get("tags", [])
    ]


def test_the_helpers_see_names_in_cells_with_magics():
    cell = "%agent Now count\nsent = len(_agent.messages) - 1\nif predicted is None:\n    pass"
    assert assigned(cell) == {"sent"}
    assert {"predicted", "_agent"} <= used(cell)


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: str(p.relative_to(ROOT)))
def test_each_lesson_has_two_student_cells_each_checked_by_the_next_code_cell(path):
    nb = nbformat.read(path, as_version=4)
    pairs = student_cells(nb)
    assert len(pairs) >= 2, f"{path.name}: {len(pairs)} cells tagged 'student'"
    for i, j in pairs:
        student, after = nb.cells[i], nb.cells[j] if j >= 0 else None
        assert after is not None, f"{student.id}: no code cell checks it"
        assert "student" not in after.metadata.get("tags", []), f"{after.id} is a student cell too"
        assert assigned(student.source) & used(after.source), (
            f"{after.id} does not read what {student.id} writes"
        )
        assert "print(" in after.source or "check(" in after.source, f"{after.id} reports nothing"


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: str(p.relative_to(ROOT)))
def test_later_cells_do_not_depend_on_what_the_student_wrote(path):
    """The notebook runs top to bottom with the stubs (CI, a student who skips ahead)."""
    nb = nbformat.read(path, as_version=4)
    for i, j in student_cells(nb):
        names = assigned(nb.cells[i].source) - assigned(nb.cells[j].source)
        later = [c for c in nb.cells[j + 1 :] if c.cell_type == "code"]
        for cell in later:
            assert not names & used(cell.source), f"{cell.id} uses {names & used(cell.source)}"


@pytest.mark.parametrize(
    "path", [p for p in LESSONS if p.parent.name == "zh"], ids=lambda p: p.name
)
def test_chinese_student_cells_speak_chinese(path):
    nb = nbformat.read(path, as_version=4)
    for i, _ in student_cells(nb):
        for line in nb.cells[i].source.splitlines():
            comment = line.split("#", 1)[1] if "#" in line else ""
            docstring = line.strip().startswith('"""')
            if comment.strip() or docstring:
                assert CJK.search(line), f"{nb.cells[i].id}: {line.strip()!r}"


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: str(p.relative_to(ROOT)))
def test_nbval_markers_are_cell_tags(path):
    nb = nbformat.read(path, as_version=4)
    assert not [c.id for c in nb.cells if "# NBVAL_" in c.source]


def _run_until(tmp_path, name: str, answers: dict[str, str], last: str) -> dict[str, str]:
    """Run a cleared copy of lesson ``name`` up to cell ``last``, the student cells given
    by id replaced by ``answers``; the printed output of each code cell, by id."""
    nbclient = pytest.importorskip("nbclient")
    from agentlab.apps import lessons

    path = lessons.copy_lessons(tmp_path / "class").dest / name
    nb = nbformat.read(path, as_version=4)
    ids = [c.id for c in nb.cells]
    nb.cells = nb.cells[: ids.index(last) + 1]
    for cell in nb.cells:
        cell.source = answers.get(cell.id, cell.source)
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3", resources={
        "metadata": {"path": str(path.parent)}}).execute()  # fmt: skip
    return {
        c.id: "".join(o.get("text", "") for o in c.outputs if o.output_type == "stream")
        for c in nb.cells
        if c.cell_type == "code"
    }


def test_a_number_or_a_bool_written_in_quotes_is_pointed_out(tmp_path):
    """Students copy "1" or "True" from a table with its quotes; the checks say so
    instead of calling the right reading wrong (student trial of lessons 02 and 03)."""
    out = _run_until(
        tmp_path, "02_stepping_through.ipynb", {"s02a": 'asked_in_turn = "1"\nstatus = "✓ ok"'},
        "k02a",
    )  # fmt: skip
    assert "without quotes: '1' is a string" in out["k02a"]
    assert "result column" not in out["k02a"]  # the word with the table's mark is the word
    out = _run_until(
        tmp_path / "03", "03_the_agent_magic.ipynb",
        {"s03a": 'predicted = "7"', "s03b": 'tool_runs = "True"\nanswer_comes = False'},
        "677910f1",
    )  # fmt: skip
    assert "without quotes: '7' is a string" in out["8a16bb67"]
    assert "Write True or False, without quotes: 'True' is not a bool." in out["677910f1"]
    assert "the answer comes? you said False, it is False" in out["677910f1"]
