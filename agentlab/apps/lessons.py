"""``agentlab lessons [DIR]``: copy the lesson notebooks into a folder and open JupyterLab.

    agentlab lessons                     # ./agentlab-lessons, then JupyterLab on lesson 01
    agentlab lessons my-class --no-browser
    agentlab lessons --copy-only         # just copy; open them with any Jupyter you like

The notebooks ship inside the package (``agentlab/notebooks``; in the source
tree that is a link to the repository's ``notebooks/`` folder). Copying never
overwrites a file that is already there, so running it again after a student
has edited a lesson keeps their work and only adds what is missing.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import secrets
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agentlab.i18n import t

__all__ = ["FIRST_LESSON", "Copied", "add_arguments", "copy_lessons", "lesson_files", "main", "run"]

FIRST_LESSON = "01_the_agent_loop.ipynb"
DEFAULT_DIR = "agentlab-lessons"
# What a student gets: the numbered lessons, the Chinese ones, and the exercises.
PATTERNS = ("[0-9][0-9]_*.ipynb", "zh/[0-9][0-9]_*.ipynb", "exercises/**/*")
SKIP_PARTS = {".ipynb_checkpoints", "__pycache__"}


def source_dir() -> Path:
    """The folder of lesson notebooks that came with this installation of agentlab."""
    return Path(__file__).resolve().parent.parent / "notebooks"


def lesson_files(source: Path | None = None) -> Iterator[Path]:
    """Every file a student gets, relative to ``source``, in a stable order."""
    root = source or source_dir()
    seen: set[Path] = set()
    for pattern in PATTERNS:
        for path in sorted(root.glob(pattern)):
            rel = path.relative_to(root)
            if path.is_file() and rel not in seen and not SKIP_PARTS & set(rel.parts):
                seen.add(rel)
                yield rel


@dataclass
class Copied:
    """What ``copy_lessons`` did: files it copied, and files it left alone."""

    dest: Path
    copied: list[Path] = field(default_factory=list)
    skipped: list[Path] = field(default_factory=list)


def copy_lessons(dest: str | os.PathLike[str], source: Path | None = None) -> Copied:
    """Copy the lessons into ``dest``; a file that already exists there is never overwritten."""
    root = source or source_dir()
    files = list(lesson_files(root))
    if not files:
        raise FileNotFoundError(t("lessons.none", path=root))
    report = Copied(Path(dest).resolve())
    for rel in files:
        target = report.dest / rel
        if target.exists():
            report.skipped.append(rel)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(root / rel, target)
        report.copied.append(rel)
    return report


def lab_command(
    folder: Path, *, browser: bool = True, port: int | None = None, token: str | None = None
) -> list[str]:
    """The command that opens JupyterLab in ``folder`` on the first lesson."""
    cmd = [sys.executable, "-m", "jupyterlab", FIRST_LESSON]
    if not browser:
        cmd.append("--no-browser")
    if port is not None:
        cmd.append(f"--port={port}")
    if token is not None:
        cmd.append(f"--IdentityProvider.token={token}")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")  # Jupyter refuses root without it (common in containers)
    return cmd


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``lessons`` subcommand's options (used by ``agentlab.apps.cli``)."""
    parser.add_argument(
        "dir", nargs="?", default=DEFAULT_DIR, help=t("cli.help.lessons_dir", default=DEFAULT_DIR)
    )
    parser.add_argument("--copy-only", action="store_true", help=t("cli.help.copy_only"))
    parser.add_argument(
        "--no-browser",
        action="store_true",
        help=t("cli.help.no_browser"),
    )
    parser.add_argument("--port", type=int, default=None, help=t("cli.help.port"))


def run(args: argparse.Namespace) -> int:
    """Copy the lessons, say what happened, then open JupyterLab (unless ``--copy-only``)."""
    try:
        report = copy_lessons(args.dir)
    except FileNotFoundError as e:
        print(e, file=sys.stderr)
        return 1
    print(t("lessons.copied", n=len(report.copied), dest=report.dest))
    if report.skipped:
        print(t("lessons.skipped", n=len(report.skipped)))
        for rel in report.skipped:
            print(f"  {rel.as_posix()}")
    if args.copy_only:
        print(t("lessons.next", dest=report.dest, first=FIRST_LESSON))
        return 0
    if importlib.util.find_spec("jupyterlab") is None:
        print(t("lessons.no_lab"), file=sys.stderr)
        return 1
    port = args.port or _free_port()
    token = secrets.token_urlsafe(16)
    cmd = lab_command(report.dest, browser=not args.no_browser, port=port, token=token)
    print(t("lessons.opening", first=FIRST_LESSON))
    # Jupyter prints its root address; the first lesson's is the one a student wants.
    print(t("lessons.url", url=f"http://127.0.0.1:{port}/lab/tree/{FIRST_LESSON}?token={token}"))
    try:
        return subprocess.call(cmd, cwd=report.dest)
    except KeyboardInterrupt:  # Ctrl-C stops JupyterLab: a normal way to finish
        return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m agentlab.apps.lessons [DIR]``, the same as ``agentlab lessons [DIR]``."""
    parser = argparse.ArgumentParser(
        prog="agentlab lessons", description="Copy the lessons into a folder and open JupyterLab."
    )
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
