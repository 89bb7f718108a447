"""Run the lesson notebooks top to bottom and save them with fresh outputs.

    python tools/build_notebooks.py                       # every lesson (01-05 and zh/)
    python tools/build_notebooks.py notebooks/01_the_agent_loop.ipynb

The notebooks are committed WITH outputs so GitHub and the docs site show them.
They are run offline (API keys removed from the kernel's environment), in
their own folder, on the ``python3`` kernel, so the saved outputs are the
demo model's and the same on every machine.

Widgets: a saved widget output shows nothing without a live kernel (GitHub,
nbconvert and the docs site cannot run it), so for every view that also has
an HTML picture (agentlab's views do, through ``_repr_html_``) only the picture
is kept. Running the cell in Jupyter brings the live widget back.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
# the kernels import this checkout's agentlab, not another installed copy
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
LESSONS = ROOT / "notebooks"
WIDGET = "application/vnd.jupyter.widget-view+json"
SECRETS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL")


def lesson_paths() -> list[Path]:
    """The lessons this script refreshes by default: numbered notebooks and zh/."""
    return sorted(LESSONS.glob("[0-9][0-9]_*.ipynb")) + sorted(
        (LESSONS / "zh").glob("[0-9][0-9]_*.ipynb")
    )


def build(path: Path, timeout: int = 120) -> float:
    """Execute ``path`` in place; return the seconds it took."""
    nb = nbformat.read(path, as_version=4)
    start = time.monotonic()
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
        store_widget_state=False,  # no widget outputs are kept (see above)
    )
    client.execute()
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if WIDGET in data and "text/html" in data:
                del data[WIDGET]  # keep the HTML picture; the live widget needs a kernel
    nb.metadata["kernelspec"] = {
        "display_name": "Python 3 (ipykernel)",
        "language": "python",
        "name": "python3",
    }
    nbformat.write(nb, path)
    return time.monotonic() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path, help="notebooks (default: every lesson)")
    args = parser.parse_args(argv)
    for key in SECRETS:  # offline: the saved outputs are the demo model's
        os.environ.pop(key, None)
    paths = args.paths or lesson_paths()
    for path in paths:
        seconds = build(path.resolve())
        print(f"{seconds:5.1f} s  {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
