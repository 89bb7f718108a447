"""Make Chinese lessons from the English ones and a translation file, so they cannot drift.

    python tools/translate_lessons.py            # write notebooks/zh/NN_name.ipynb (no outputs)
    python tools/translate_lessons.py --check    # exit 1 if a translation or a notebook is stale
    python tools/translate_lessons.py --skeleton notebooks/05_your_own_tools.ipynb

A translation lives in ``tools/translations/NN_name.zh.txt``: one section per cell of the
English notebook, in order, each starting with a line ``%% <kind> <hash>``, where the hash is
the first 12 hex digits of the SHA-256 of the English cell's source. The section holds the
Chinese source of that cell, or the single word ``same`` to keep the English source (most
code cells). When the English cell changes, its hash no longer matches and this script
refuses to write (and ``--check`` fails), naming the cell: the translation must be updated
with it. Cell types, tags and ids come from the English notebook.

A notebook whose sources are already right is left alone (its saved outputs stay); after
writing one, run ``python tools/build_notebooks.py notebooks/zh/NN_name.ipynb`` to fill in
its outputs. ``--skeleton`` prints a new translation file with the English text in place.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
TRANSLATIONS = ROOT / "tools" / "translations"
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}


class Stale(Exception):
    """A translation that no longer matches its English notebook."""


def digest(source: str) -> str:
    return hashlib.sha256(source.encode("utf-8")).hexdigest()[:12]


def parse(text: str) -> list[tuple[str, str, str]]:
    """The sections of a translation file: (kind, hash, source)."""
    sections: list[tuple[str, str, list[str]]] = []
    for line in text.splitlines():
        if line.startswith("%% "):
            kind, hash_ = line[3:].split()
            sections.append((kind, hash_, []))
        elif sections:
            sections[-1][2].append(line)
        elif line.strip():
            raise ValueError(f"text before the first '%%' line: {line!r}")
    return [(kind, hash_, "\n".join(lines).strip("\n")) for kind, hash_, lines in sections]


def english_for(translation: Path) -> Path:
    return ROOT / "notebooks" / translation.name.replace(".zh.txt", ".ipynb")


def translate(translation: Path) -> nbformat.NotebookNode:
    """The Chinese notebook: the English cells, each with its translated source."""
    english = nbformat.read(english_for(translation), as_version=4)
    sections = parse(translation.read_text("utf-8"))
    if len(sections) != len(english.cells):
        raise Stale(
            f"{translation.name}: {len(sections)} sections for {len(english.cells)} cells"
            " of the English notebook"
        )
    cells = []
    for n, (cell, (kind, hash_, source)) in enumerate(zip(english.cells, sections)):
        if kind != cell.cell_type or hash_ != digest(cell.source):
            start = cell.source.strip().splitlines()[0][:60] if cell.source.strip() else ""
            raise Stale(f"{translation.name}: cell {n} changed in English ({start!r})")
        new = nbformat.from_dict(json.loads(json.dumps(cell)))  # a deep copy
        new.source = cell.source if source == "same" else source
        if new.cell_type == "code":
            new.outputs, new.execution_count = [], None
        cells.append(new)
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = dict(KERNELSPEC)
    nb.metadata["language_info"] = {"name": "python"}
    return nb


def target(translation: Path) -> Path:
    return ROOT / "notebooks" / "zh" / english_for(translation).name


def sources(nb: nbformat.NotebookNode) -> list[tuple[str, str]]:
    return [(c.cell_type, c.source) for c in nb.cells]


def skeleton(path: Path) -> str:
    nb = nbformat.read(path, as_version=4)
    return "\n\n".join(f"%% {c.cell_type} {digest(c.source)}\n{c.source}" for c in nb.cells) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only compare, write nothing")
    parser.add_argument("--skeleton", type=Path, help="print a translation file to start from")
    args = parser.parse_args(argv)
    if args.skeleton:
        print(skeleton(args.skeleton), end="")
        return 0
    problems = []
    for translation in sorted(TRANSLATIONS.glob("*.zh.txt")):
        try:
            nb = translate(translation)
        except Stale as e:
            problems.append(str(e))
            continue
        out = target(translation)
        committed = nbformat.read(out, as_version=4) if out.exists() else None
        if committed is not None and sources(committed) == sources(nb):
            continue  # up to date: keep its saved outputs
        if args.check:
            problems.append(f"{out.relative_to(ROOT)} is out of date")
            continue
        nbformat.write(nb, out)
        print("wrote", out.relative_to(ROOT), "(now run tools/build_notebooks.py on it)")
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
