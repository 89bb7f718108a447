"""Make the exercise notebooks from one source, and run them so they show their output.

    python tools/make_exercises.py           # write and execute all exercise notebooks
    python tools/make_exercises.py --check   # exit 1 if a committed notebook is out of date

The source is ``agentlab/exercises/reference.py`` (the functions, with nbgrader's
``### BEGIN SOLUTION`` / ``### END SOLUTION`` markers) and the texts of
``agentlab.exercises``; ``agentlab/exercises/notebooks.py`` turns them into
``notebooks/solutions/NN_name.ipynb`` (nbgrader's source version) and
``notebooks/exercises/NN_name.ipynb`` (the student's version, with stubs), and the
student's version in Chinese, ``notebooks/zh/exercises/NN_name.ipynb``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's agentlab, not another installed copy
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))

from agentlab.exercises.notebooks import build, build_translated, comparable  # noqa: E402


def execute(nb: nbformat.NotebookNode, folder: Path) -> None:
    client = NotebookClient(
        nb,
        timeout=120,
        kernel_name="python3",
        record_timing=False,  # no timestamps: regenerating changes nothing that did not change
        resources={"metadata": {"path": str(folder)}},
    )
    client.execute()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--check", action="store_true", help="only compare with the committed files"
    )
    parser.add_argument("names", nargs="*", help="only these notebooks (e.g. 02_decide)")
    args = parser.parse_args(argv)
    stale = []
    for rel, nb in {**build(), **build_translated("zh")}.items():
        path = ROOT / rel
        if args.names and not any(n in rel for n in args.names):
            continue
        if args.check:
            committed = json.loads(path.read_text("utf-8")) if path.exists() else None
            if committed is None or comparable(committed) != comparable(nb):
                stale.append(rel)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        execute(nb, path.parent)
        nbformat.write(nb, path)
        print("wrote", rel)
    if stale:
        print("out of date (run python tools/make_exercises.py):", *stale, sep="\n  ")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
