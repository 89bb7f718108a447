"""Make the Chinese lessons from the English ones and a file of translations, so they cannot drift.

    python tools/translate_lessons.py            # write the notebooks/zh/NN_*.ipynb that changed (then build_notebooks.py)
    python tools/translate_lessons.py --check    # exit 1 if a translation is missing or out of date
    python tools/translate_lessons.py --todo 03  # print what lesson 03 still needs, as JSON to fill in

A Chinese lesson has the same cells as its English lesson, in the same order, with the same ids
and tags. ``translations/zh/NN_name.json`` maps a cell id to its Chinese source and to a short
hash of the English source it was translated from::

    {"c03": {"en": "5d41402abc4b", "zh": "## 第 1 步：任务成为第一条消息 ..."}}

- every Markdown cell needs a translation; a code cell needs one only where the Chinese lesson
  runs something else (a task in Chinese, ``set_language("zh")``); without one it runs the
  English code as it is;
- when an English cell changes, its hash no longer matches and ``--check`` names the cell, so
  the translation is updated in the same change (a test runs ``--check``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import nbformat

ROOT = Path(__file__).resolve().parent.parent
LESSONS = ROOT / "notebooks"
TRANSLATIONS = ROOT / "translations" / "zh"


def digest(source: str) -> str:
    return hashlib.sha256(source.encode("utf-8")).hexdigest()[:12]


def lessons() -> list[Path]:
    """English lessons that have a translation file."""
    return [p for p in sorted(LESSONS.glob("[0-9][0-9]_*.ipynb")) if table_path(p).exists()]


def table_path(lesson: Path) -> Path:
    return TRANSLATIONS / f"{lesson.stem}.json"


def load_table(lesson: Path) -> dict[str, dict[str, str]]:
    path = table_path(lesson)
    return json.loads(path.read_text("utf-8")) if path.exists() else {}


def problems(lesson: Path) -> list[str]:
    """What is missing or out of date in ``lesson``'s translation."""
    nb = nbformat.read(lesson, as_version=4)
    table = load_table(lesson)
    out = []
    ids = set()
    for cell in nb.cells:
        ids.add(cell.id)
        entry = table.get(cell.id)
        if entry is None:
            if cell.cell_type == "markdown":
                out.append(f"{lesson.stem} {cell.id}: no translation")
        elif entry.get("en") != digest(cell.source):
            out.append(f"{lesson.stem} {cell.id}: the English cell changed since it was translated")
    out += [f"{lesson.stem} {k}: translated cell no longer exists" for k in table if k not in ids]
    return out


def translate(lesson: Path) -> Any:
    """The Chinese notebook: the English one with each cell's source replaced by its translation."""
    nb = nbformat.read(lesson, as_version=4)
    table = load_table(lesson)
    for cell in nb.cells:
        entry = table.get(cell.id)
        if entry is not None:
            cell.source = entry["zh"]
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    nb.metadata["language_info"] = nb.metadata.get("language_info", {"name": "python"})
    return nb


def todo(lesson: Path) -> dict[str, dict[str, str]]:
    """The cells still to translate, as entries to fill in (``zh`` holds the English for now)."""
    nb = nbformat.read(lesson, as_version=4)
    table = load_table(lesson)
    out = {}
    for cell in nb.cells:
        entry = table.get(cell.id)
        stale = entry is not None and entry.get("en") != digest(cell.source)
        if (entry is None and cell.cell_type == "markdown") or stale:
            out[cell.id] = {"en": digest(cell.source), "zh": cell.source}
    return out


def sources(nb: Any) -> list[tuple[str, str, str]]:
    return [(c.id, c.cell_type, c.source) for c in nb.cells]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="report missing or stale translations")
    parser.add_argument("--todo", metavar="NN", help="print the cells lesson NN still needs")
    args = parser.parse_args(argv)
    if args.todo:
        [lesson] = sorted(LESSONS.glob(f"{args.todo}_*.ipynb"))
        print(json.dumps(todo(lesson), ensure_ascii=False, indent=1))
        return 0
    found = []
    for lesson in lessons():
        found += problems(lesson)
        target = LESSONS / "zh" / lesson.name
        made = translate(lesson)
        if args.check:
            committed = nbformat.read(target, as_version=4) if target.exists() else None
            if committed is None or sources(committed) != sources(made):
                found.append(
                    f"{target.relative_to(ROOT)}: not made from the current translation "
                    "(run python tools/translate_lessons.py, then tools/build_notebooks.py)"
                )
            continue
        if target.exists() and sources(nbformat.read(target, as_version=4)) == sources(made):
            continue  # already current: keep its saved outputs
        nbformat.write(made, target)
        print("wrote", target.relative_to(ROOT))
    for line in found:
        print(line)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
