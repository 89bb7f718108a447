"""``agentlab lessons [DIR]``: copy the lesson notebooks into a folder and open JupyterLab.

    agentlab lessons                     # ./agentlab-lessons, then JupyterLab on lesson 01
    agentlab lessons my-class --no-browser
    agentlab lessons --copy-only         # just copy; open them with any Jupyter you like
    agentlab lessons --with-outputs      # the instructor's copy: every saved output kept

The notebooks ship inside the package (``agentlab/notebooks``; in the source
tree that is a link to the repository's ``notebooks/`` folder). A student's copy
has every code cell's outputs and execution count cleared, so each "Predict:"
is answered by running the cell, not by reading the page. Copying never
overwrites a file that is already there, so running it again after a student
has edited a lesson keeps their work and only adds what is missing.

Inside a git clone the default folder is ``~/agentlab-lessons``, so the copies
do not show up in the clone's ``git status``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agentlab.i18n import t

__all__ = [
    "FIRST_LESSON",
    "Copied",
    "add_arguments",
    "cleared",
    "copy_lessons",
    "default_dir",
    "lesson_files",
    "main",
    "run",
]

FIRST_LESSON = "01_the_agent_loop.ipynb"
DEFAULT_DIR = "agentlab-lessons"
# What a student gets: the numbered lessons and the exercises, in English and Chinese.
PATTERNS = ("[0-9][0-9]_*.ipynb", "zh/[0-9][0-9]_*.ipynb", "exercises/**/*", "zh/exercises/**/*")
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


def cleared(notebook: str) -> str:
    """A notebook's JSON with every code cell's outputs and execution count removed
    (and the saved widget state, which belongs to those outputs)."""
    nb = json.loads(notebook)
    for cell in nb.get("cells", []):
        if cell.get("cell_type") == "code":
            cell["outputs"], cell["execution_count"] = [], None
    nb.get("metadata", {}).pop("widgets", None)
    return json.dumps(nb, ensure_ascii=False, indent=1) + "\n"


def default_dir(cwd: Path | None = None) -> Path:
    """``./agentlab-lessons``, or ``~/agentlab-lessons`` when the current folder is in a git
    clone (copies made there would show up in its ``git status``)."""
    here = (cwd or Path.cwd()).resolve()
    in_clone = any((folder / ".git").exists() for folder in (here, *here.parents))
    return Path.home() / DEFAULT_DIR if in_clone else here / DEFAULT_DIR


def copy_lessons(
    dest: str | os.PathLike[str], source: Path | None = None, *, with_outputs: bool = False
) -> Copied:
    """Copy the lessons into ``dest``; a file that already exists there is never overwritten.

    Notebooks are copied with their outputs cleared unless ``with_outputs`` is true."""
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
        if rel.suffix == ".ipynb" and not with_outputs:
            target.write_text(cleared((root / rel).read_text("utf-8")), "utf-8")
        else:
            shutil.copyfile(root / rel, target)
        report.copied.append(rel)
    return report


def first_lesson(lang: str | None = None) -> str:
    """Lesson 01, in the copied folder: ``zh/...`` for Chinese."""
    return f"zh/{FIRST_LESSON}" if lang == "zh" else FIRST_LESSON


def lab_command(
    folder: Path,
    *,
    browser: bool = True,
    port: int | None = None,
    token: str | None = None,
    lang: str | None = None,
) -> list[str]:
    """The command that opens JupyterLab in ``folder`` on the first lesson."""
    cmd = [sys.executable, "-m", "jupyterlab", first_lesson(lang)]
    if not browser:
        cmd.append("--no-browser")
    if port is not None:  # that port or none: a moved port would make the printed link wrong
        cmd += [f"--port={port}", "--ServerApp.port_retries=0"]
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
        "dir", nargs="?", default=None, help=t("cli.help.lessons_dir", default=DEFAULT_DIR)
    )
    parser.add_argument("--copy-only", action="store_true", help=t("cli.help.copy_only"))
    parser.add_argument("--with-outputs", action="store_true", help=t("cli.help.with_outputs"))
    parser.add_argument(
        "--no-browser",
        action="store_true",
        help=t("cli.help.no_browser"),
    )
    parser.add_argument("--port", type=_port, default=None, help=t("cli.help.port"))
    parser.add_argument(
        "--lang", choices=["en", "zh"], default=None, help=t("cli.help.lessons_lang")
    )


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(t("cli.bad_port", value=text))
    return value


def _port_taken(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


def _answers(port: int, token: str) -> bool:
    """Whether JupyterLab answers on ``port`` (its status API, with our token)."""
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}/api/status", headers={"Authorization": f"token {token}"}
    )
    try:
        with urllib.request.urlopen(req, timeout=2) as response:
            return bool(response.status == 200)
    except OSError:
        return False


class _Stop(Exception):
    """SIGTERM: stop JupyterLab as Ctrl-C does."""


def _stop_lab(proc: subprocess.Popen[bytes]) -> None:
    """Stop JupyterLab without its "Shut down this Jupyter server (y/[n])?" question:
    SIGTERM shuts it down at once; after 10 s it is killed."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def serve_lab(
    cmd: list[str], folder: Path, port: int, token: str, wait: float = 120.0, first: str = ""
) -> int:
    """Run JupyterLab, print lesson 01's address once Lab answers on it, and stop Lab on
    Ctrl-C or SIGTERM. Lab runs in a session of its own, so the terminal's Ctrl-C reaches
    only this process, which then stops Lab without Jupyter's confirmation question."""
    proc = subprocess.Popen(cmd, cwd=folder, stdin=subprocess.DEVNULL, start_new_session=True)

    def on_term(signum: int, frame: object) -> None:
        raise _Stop

    previous = signal.signal(signal.SIGTERM, on_term)
    try:
        deadline = time.monotonic() + wait
        while proc.poll() is None and not _answers(port, token):
            if time.monotonic() > deadline:
                print(t("lessons.no_answer", port=port, s=int(wait)), file=sys.stderr)
                return 1
            time.sleep(0.25)
        if proc.poll() is not None:
            print(t("lessons.lab_failed", code=proc.returncode), file=sys.stderr)
            return 1
        url = f"http://127.0.0.1:{port}/lab/tree/{first or FIRST_LESSON}?token={token}"
        print(t("lessons.url", url=url), flush=True)
        return proc.wait()
    except (KeyboardInterrupt, _Stop):  # a normal way to finish
        return 0
    finally:
        _stop_lab(proc)
        signal.signal(signal.SIGTERM, previous)


def run(args: argparse.Namespace) -> int:
    """Copy the lessons, say what happened, then open JupyterLab (unless ``--copy-only``)."""
    dest = Path(args.dir) if args.dir else default_dir()
    try:
        report = copy_lessons(dest, with_outputs=getattr(args, "with_outputs", False))
    except FileNotFoundError as e:
        print(e, file=sys.stderr)
        return 1
    print(t("lessons.copied", n=len(report.copied), dest=report.dest))
    if report.skipped:
        print(t("lessons.skipped", n=len(report.skipped)))
        for rel in report.skipped:
            print(f"  {rel.as_posix()}")
    first = first_lesson(getattr(args, "lang", None))
    if args.copy_only:
        print(t("lessons.next", dest=report.dest, first=first))
        return 0
    if importlib.util.find_spec("jupyterlab") is None:
        print(t("lessons.no_lab"), file=sys.stderr)
        return 1
    if args.port is not None and _port_taken(args.port):
        print(t("lessons.port_busy", port=args.port), file=sys.stderr)
        return 1
    port = args.port or _free_port()
    token = secrets.token_urlsafe(16)
    cmd = lab_command(
        report.dest, browser=not args.no_browser, port=port, token=token, lang=args.lang
    )
    print(t("lessons.opening", first=first), flush=True)
    return serve_lab(cmd, report.dest, port, token, first=first)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m agentlab.apps.lessons [DIR]``, the same as ``agentlab lessons [DIR]``."""
    parser = argparse.ArgumentParser(
        prog="agentlab lessons", description="Copy the lessons into a folder and open JupyterLab."
    )
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
