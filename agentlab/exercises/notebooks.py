"""The exercise notebooks, made from one source so they cannot drift.

``build()`` makes two notebooks per exercise:

- ``notebooks/solutions/NN_name.ipynb``: nbgrader's *source* version. Its
  solution cell is the reference function from ``agentlab.exercises.reference``,
  ``### BEGIN SOLUTION`` / ``### END SOLUTION`` markers included.
- ``notebooks/exercises/NN_name.ipynb``: the student's version. The same cells,
  each solution region replaced by nbgrader's stub (``# YOUR CODE HERE`` /
  ``raise NotImplementedError()``) and cells locked, exactly as
  ``nbgrader generate_assignment`` would do it.

Both carry nbgrader's cell metadata: read-only cells, one solution cell, and
one autograded cell worth the exercise's points, whose output is the
checker's report and a partial-credit score. ``tools/make_exercises.py``
writes and executes them; a test compares the committed files with ``build()``.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path
from typing import Any

import nbformat
from nbformat import NotebookNode

from agentlab.exercises import Exercise, list_exercises, reference
from agentlab.exercises.strings import translate_code
from agentlab.i18n import get_language, set_language, t

__all__ = ["CODE_STUB", "build", "build_translated", "code_stub", "comparable", "stub"]

STUB = ("# YOUR CODE HERE", "raise NotImplementedError()")  # nbgrader's code stub for Python
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
LOOPS = ("agent_loop", "guarded_loop", "subagent")  # they ask the model: MODEL, MAX_TOKENS

# A read-only cell that shows the student what their function will receive.
EXAMPLES: dict[str, str] = {
    "decide": """\
from agentlab.fakeapi.offline import make_message, text, tool_use

response = make_message([text("Let me count."), tool_use("bash", {"command": "wc -l agent.py"})])
print(response.stop_reason)
response.content""",
    "tool_result": """\
from agentlab.fakeapi.offline import make_message, text, tool_use

response = make_message([text("Let me look."), tool_use("bash", {"command": "ls"})])
block = response.content[1]
block.id, block.name, block.input""",
    "run_tools": """\
from agentlab.fakeapi.offline import make_message, text, tool_use

response = make_message(
    [text("Two at once."), tool_use("bash", {"command": "date"}), tool_use("bash", {"command": "ls"})]
)


def run_bash(command):  # a stand-in: the checker's run_bash also runs no shell
    return f"(output of {command})"


[(block.type, getattr(block, "input", None)) for block in response.content]""",
    "append_results": """\
messages = [
    {"role": "user", "content": "What is here?"},
    {"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_01Ls", "name": "bash", "input": {"command": "ls"}},
    ]},
]
results = [{"type": "tool_result", "tool_use_id": "toolu_01Ls", "content": "README.md"}]
len(messages), results""",
    "agent_loop": """\
from agentlab.fakeapi.offline import ScriptedClient, make_message, text, tool_use

client = ScriptedClient([make_message([tool_use("bash", {"command": "ls"})]), make_message("Done.")])
task = [{"role": "user", "content": "What is here?"}]
reply = client.messages.create(model=MODEL, max_tokens=MAX_TOKENS, messages=task)
reply.stop_reason, reply.content""",
    "guarded_loop": """\
def approve(tool_input):  # one possible policy: no rm
    return not tool_input["command"].startswith("rm")


approve({"command": "ls"}), approve({"command": "rm -rf ~/notes"})""",
    "todo_update": """\
items = [
    {"id": "1", "text": "Read agent.py", "status": "completed"},
    {"id": "2", "text": "Count its lines", "status": "in_progress"},
]
updates = [{"text": "Write the summary"}, {"id": "2", "status": "completed"}, {"id": "7", "status": "pending"}]
items, updates""",
    "todo_reminder": """\
results = [
    {"type": "tool_result", "tool_use_id": "toolu_01Ls", "content": "README.md\\nagent.py"},
    {"type": "tool_result", "tool_use_id": "toolu_01Wc", "content": "42 agent.py"},
]
rounds_since_todo = 3
results, rounds_since_todo""",
    "subagent": """\
from agentlab.fakeapi.offline import ScriptedClient, make_message, text, tool_use

BASH = {"name": "bash", "description": "Run a shell command.",
        "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}}}
TASK = {"name": "task", "description": "Hand work to a helper.",
        "input_schema": {"type": "object", "properties": {"prompt": {"type": "string"}}}}


def run_bash(tool_input):  # a stand-in: the checker's tools also run no shell
    return f"(output of {tool_input['command']})"


tools = {"bash": (BASH, run_bash), "task": (TASK, None)}
client = ScriptedClient([make_message([tool_use("bash", {"command": "ls"})]), make_message("Done.")])
sorted(tools)""",
}


# Step 1 of exercise 7: the student's limited_loop, on the scenarios of that step only.
STEP_ONE_CHECK = """\
{comment}
from agentlab.exercises.scenarios import STEP_ONE, step


def limited_as_guarded(client, messages, tools, run_bash, max_turns, approve):
    return limited_loop(client, messages, tools, run_bash, max_turns)  # approve: step 2


step(check("guarded_loop", limited_as_guarded, scenarios=STEP_ONE), 1)"""


def code_stub(language: str = "en") -> str:
    """nbgrader's ``ClearSolutions.code_stub`` for Python that gives our student notebooks
    in ``language`` (the default one for English)."""
    return translate_code("\n".join(STUB), language)


CODE_STUB = {language: code_stub(language) for language in ("en", "zh")}


def stub(source: str) -> str:
    """Replace each solution region with nbgrader's stub, indented like its marker."""
    out: list[str] = []
    inside = False
    for line in source.split("\n"):
        if "BEGIN SOLUTION" in line:
            indent = line[: len(line) - len(line.lstrip())]
            out += [indent + s for s in STUB]
            inside = True
        elif "END SOLUTION" in line:
            inside = False
        elif not inside:
            out.append(line)
    return "\n".join(out)


def _constants() -> str:
    """The lines of reference.py that set MODEL and MAX_TOKENS, with the comment above."""
    source = Path(inspect.getfile(reference)).read_text("utf-8")
    lines = source.splitlines()
    out: list[str] = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id in ("MODEL", "MAX_TOKENS")
            for target in node.targets
        ):
            start = node.lineno - 1
            if start > 0 and lines[start - 1].startswith("#"):
                start -= 1
            out += lines[start : node.end_lineno]
    return "\n".join(out)


def _meta(grade_id: str, **fields: Any) -> dict[str, Any]:
    nbgrader: dict[str, Any] = {"grade": False, "locked": False, "solution": False, "task": False}
    nbgrader.update(fields)
    nbgrader.update(grade_id=grade_id, schema_version=3)
    return {"nbgrader": dict(sorted(nbgrader.items()))}


def _lock(cell: NotebookNode) -> None:
    """Lock a cell as nbgrader's LockCells does in the student's version."""
    info = cell.metadata.get("nbgrader")
    if not info:
        return
    cell.metadata["deletable"] = False
    if not info.get("solution"):
        cell.metadata["editable"] = False


def notebook(exercise: Exercise, student: bool) -> NotebookNode:
    """One exercise's notebook: the student's version, or the solution (nbgrader source)."""
    name, v4 = exercise.name, nbformat.v4
    setup = [t("ex.nb.setup"), "from agentlab.exercises import check"]
    if get_language() != "en":  # the checker's reports in the notebook's language
        setup += ["from agentlab.i18n import set_language", "", f'set_language("{get_language()}")']
    if name in LOOPS:
        setup += ["", _constants()]
    code = inspect.getsource(getattr(reference, name)).rstrip("\n")
    check_code = "\n".join(
        [
            t("ex.nb.check_comment"),
            f'report = check("{name}", {name})',
            "display(report)",
            f"report.score({exercise.points})",
        ]
    )
    head = t("ex.nb.title", number=exercise.number, title=exercise.title)
    signature = f"```python\n{exercise.signature}\n```"
    task = t("ex.nb.task", task=exercise.task)
    following = [e for e in list_exercises() if e.number == exercise.number + 1]
    nxt = (
        t("ex.nb.next", number=following[0].number, title=following[0].title)
        if following
        else t("ex.nb.last")
    )
    cells = [
        v4.new_markdown_cell(
            f"# {head}\n\n{exercise.intro}\n\n{task}\n\n{signature}",
            metadata=_meta(f"{name}_intro", locked=True),
        ),
        v4.new_code_cell("\n".join(setup), metadata=_meta(f"{name}_setup", locked=True)),
    ]
    if name in EXAMPLES:
        cells += [
            v4.new_markdown_cell(f"{t('ex.nb.look_heading')}\n\n{t('ex.nb.look')}"),
            v4.new_code_cell(EXAMPLES[name]),
        ]
    if name == "agent_loop":  # exercise 6 may call the student's functions from 3 to 5
        cells += [
            v4.new_markdown_cell(f"{t('ex.nb.helpers_heading')}\n\n{t('ex.nb.helpers')}"),
            v4.new_code_cell(t("ex.nb.helpers_code")),  # not graded: nbgrader keeps it as written
        ]
    if name == "guarded_loop":  # exercise 7 in two steps: limits and endings first
        first = inspect.getsource(reference.limited_loop).rstrip("\n")
        cells += [
            v4.new_markdown_cell(f"{t('ex.nb.step1_heading')}\n\n{t('ex.nb.step1')}"),
            v4.new_code_cell(
                stub(first) if student else first, metadata=_meta("limited_loop", solution=True)
            ),
            v4.new_code_cell(
                STEP_ONE_CHECK.format(comment=t("ex.nb.step1_check")),
                metadata={"tags": ["nbval-check-output"]},
            ),
            v4.new_markdown_cell(f"{t('ex.nb.step2_heading')}\n\n{t('ex.nb.step2')}"),
        ]
    else:
        cells.append(v4.new_markdown_cell(f"{t('ex.nb.write_heading')}\n\n{t('ex.nb.write')}"))
    what = t(f"ex.{name}.check")
    cells += [
        v4.new_code_cell(
            stub(code) if student else code, metadata=_meta(f"{name}_solution", solution=True)
        ),
        v4.new_markdown_cell(
            f"{t('ex.nb.check_heading')}\n\n{t('ex.nb.check', what=what, points=exercise.points)}",
            metadata=_meta(f"{name}_check_intro", locked=True),
        ),
        v4.new_code_cell(
            check_code,
            metadata={
                **_meta(f"{name}_check", grade=True, locked=True, points=exercise.points),
                "tags": ["nbval-check-output"],
            },
        ),
        v4.new_markdown_cell(
            f"{t('ex.nb.recap_heading')}\n\n{exercise.recap}\n\n{nxt}",
            metadata=_meta(f"{name}_recap", locked=True),
        ),
    ]
    for k, cell in enumerate(cells):
        cell["id"] = f"{name}-{k}"
        if cell.cell_type == "code":  # comments, docstrings and the stub in the language
            cell.source = translate_code(cell.source, get_language())
        if student:
            _lock(cell)
    nb = v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = dict(KERNELSPEC)
    nb.metadata["language_info"] = {"name": "python"}
    return nb


def build() -> dict[str, NotebookNode]:
    """Every exercise notebook, keyed by its path from the repository root (in English)."""
    language = get_language()
    set_language("en")
    try:
        out: dict[str, NotebookNode] = {}
        for exercise in list_exercises():
            stem = f"{exercise.number:02d}_{exercise.name}.ipynb"
            out[f"notebooks/exercises/{stem}"] = notebook(exercise, student=True)
            out[f"notebooks/solutions/{stem}"] = notebook(exercise, student=False)
        return out
    finally:
        set_language(language)


def build_translated(language: str = "zh") -> dict[str, NotebookNode]:
    """The notebooks in another language: ``notebooks/zh/exercises`` (the student's) and
    ``notebooks/zh/solutions`` (nbgrader's source), the same cells and checks, with the
    texts of ``agentlab.exercises.strings`` and the code's comments, docstrings and stub
    (``strings.CODE``) in that language. nbgrader makes the Chinese stub when the course
    sets ``c.ClearSolutions.code_stub`` to it (``CODE_STUB``)."""
    previous = get_language()
    set_language(language)
    try:
        out: dict[str, NotebookNode] = {}
        for e in list_exercises():
            stem = f"{e.number:02d}_{e.name}.ipynb"
            out[f"notebooks/{language}/exercises/{stem}"] = notebook(e, student=True)
            out[f"notebooks/{language}/solutions/{stem}"] = notebook(e, student=False)
        return out
    finally:
        set_language(previous)


def comparable(nb: Any) -> dict[str, Any]:
    """What must match between a committed notebook and a freshly built one: cell
    types, ids, sources and metadata, and the kernel (not outputs, which nbval checks)."""
    return {
        "kernelspec": nb["metadata"].get("kernelspec"),
        "cells": [
            {
                "cell_type": c["cell_type"],
                "id": c.get("id"),
                "source": "".join(c["source"]) if isinstance(c["source"], list) else c["source"],
                "metadata": {k: v for k, v in c["metadata"].items() if k != "execution"},
            }
            for c in nb["cells"]
        ],
    }
