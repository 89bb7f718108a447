"""Keep code a command writes out of the Python that holds the API key.

A command may write any file in its folder. Two ways would turn such a file
into code run by the kernel (or the next kernel), with the key in its
environment:

- **imports in this process.** The kernel imports modules late (the views'
  Markdown and HTML libraries, an optional module one of them tries), and
  Python looks in the current folder (``""`` on ``sys.path``) before the
  installed packages. ``guard_imports(folder)`` adds a finder in front of
  Python's own (``sys.meta_path``, docs.python.org/3/reference/import.html#the-meta-path):
  from then on a module is looked for on ``sys.path`` *without* the folders
  commands wrote to, so the installed ``nh3`` wins over a ``nh3.py`` left
  there, and a module found only there is refused with a
  ``ModuleNotFoundError`` that says why (import it before the model runs
  commands, or load the file on purpose with
  ``importlib.util.spec_from_file_location``).
- **the next start.** ``python -m ipykernel_launcher`` runs in the notebook's
  folder and imports from it first (``ipykernel_launcher.py``, ``agentlab.py``
  there would run at the next kernel start); a ``.pth`` or a package changed
  in the kernel's own virtualenv runs at every start; a ``.git/config`` with
  ``core.fsmonitor`` runs at your next ``git status``. ``read_only_inside``
  names what the sandbox keeps read-only inside the folder it may write:
  every folder holding a notebook (``*.ipynb``; the folder itself, if it
  holds one, or if it holds more folders than are looked at), this Python's
  installation, agentlab's own files and the whole ``.git`` of a repository
  there (a submodule's config runs code too); the folders on the way to
  each are mount points, so none can be renamed and made again (``pinned``).

Without the sandbox (macOS, Windows, no bubblewrap) only the first holds: a
command can write anywhere you can.
"""

from __future__ import annotations

import functools
import importlib.abc
import importlib.machinery
import os
import site
import sys
from collections.abc import Sequence
from types import FrameType, ModuleType
from typing import Any

__all__ = ["guard_imports", "pinned", "read_only_inside"]

_written: list[str] = []  # real paths, each ending in "/"


def guard_imports(folder: str) -> None:
    """From now on this process imports no module from ``folder`` (or under it)."""
    real = os.path.join(os.path.realpath(folder), "")
    if real not in _written:
        _written.append(real)
    if not any(isinstance(finder, _SkipWritten) for finder in sys.meta_path):
        sys.meta_path.insert(0, _SkipWritten())


@functools.cache
def _ours() -> tuple[str, ...]:
    """Folders a command writing in one of ours may not change (``read_only_inside``):
    imports from them stay allowed."""
    places = {sys.prefix, sys.exec_prefix, sys.base_prefix, *site.getsitepackages()}
    places.add(site.getusersitepackages())
    places.add(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # agentlab/
    return tuple(sorted(os.path.join(os.path.realpath(p), "") for p in places if p))


def _inside(real: str, folders: Sequence[str]) -> bool:
    return any(real.startswith(folder) for folder in folders)


def _written_to(entry: str) -> bool:
    """Whether the ``sys.path`` entry lies in a folder commands write to."""
    try:
        real = os.path.join(os.path.realpath(entry or os.curdir), "")
    except (OSError, ValueError):
        return False
    if not _inside(real, _written):
        return False
    # one of ours inside a folder commands write to is read-only there (read_only_inside)
    return not any(real.startswith(p) and _inside(p, _written) for p in _ours())


class _SkipWritten(importlib.abc.MetaPathFinder):
    """Before Python's own finders: a module that would come from a folder commands
    wrote to comes from the rest of the path instead, or, when a library asked for
    it, not at all."""

    def find_spec(
        self, name: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> Any:
        if not _written:
            return None
        search = [entry for entry in (sys.path if path is None else path) if isinstance(entry, str)]
        found = importlib.machinery.PathFinder.find_spec(name, search, target)
        where = found and (found.origin or next(iter(found.submodule_search_locations or []), ""))
        if not where or not _written_to(os.path.dirname(where)):
            return None  # not from there: Python's finders as usual
        safe = [entry for entry in search if not _written_to(entry)]
        spec = importlib.machinery.PathFinder.find_spec(name, safe, target)
        if spec is not None:
            return spec  # the installed nh3, not the nh3.py left in the folder
        importer = _importer()
        if importer is None:
            return None  # your own code's import: the module you may have written
        # ModuleNotFoundError, as if it were not there: a library's optional import
        # (``try: import linkify_it except ModuleNotFoundError``) goes on without it
        raise ModuleNotFoundError(
            f"agentlab did not let {importer} import {name!r}: {where} is in a folder "
            "the bash tool's commands write to, so the model may have written it "
            "(your own code may still import it)",
            name=name,
        )


def _importer() -> str | None:
    """The file of the library (of this Python's installation, or agentlab) whose code
    is importing, or None when the import comes from elsewhere (a cell, your module)."""
    frame: FrameType | None = sys._getframe(2)  # find_spec's caller is importlib's: past it
    while frame is not None:
        file = frame.f_code.co_filename
        if not (file.startswith("<frozen importlib") or file.startswith(_IMPORTLIB)):
            real = os.path.realpath(file) if os.path.isabs(file) else file
            return file if _inside(real, _ours()) else None
        frame = frame.f_back
    return None


_IMPORTLIB = os.path.join(os.path.dirname(importlib.__file__), "")


MAX_SCAN = 300  # folders looked at for notebooks and repositories, at most


def read_only_inside(folder: str) -> list[str]:
    """What the sandbox keeps read-only inside ``folder``, whose commands may write it:
    real paths that exist (``[folder]`` when it holds a notebook, or when it holds more
    folders than are looked at: then what is in the rest is not known)."""
    top = os.path.realpath(folder)
    keep = [p.rstrip("/") for p in _ours() if (p.rstrip("/") + "/").startswith(top + "/")]
    for walked, (here, dirs, files) in enumerate(_walk(top, depth=2), 1):
        if walked >= MAX_SCAN:
            return [top]  # too many folders to look at: none of it is written
        if any(name.endswith(".ipynb") for name in files):
            keep.append(here)
        if ".git" in dirs or ".git" in files:  # a repository, a worktree or a submodule
            keep.append(os.path.join(here, ".git"))
            keep += _git_dir(os.path.join(here, ".git"))
    found = [p for p in keep if os.path.lexists(p) and _inside(p + "/", [top + "/"])]
    if top in found:
        return [top]
    return sorted(set(found))


def pinned(folder: str, keep: Sequence[str]) -> list[str]:
    """The folders between ``folder`` and each path of ``keep``, shallowest first. The
    sandbox mounts each on itself (still writable), because a folder that holds a
    read-only mount could be renamed and made again with other files in it, while a
    mount point cannot be renamed (rename(2): EBUSY)."""
    top = os.path.realpath(folder)
    found: set[str] = set()
    for path in keep:
        parent = os.path.dirname(path)
        while parent != top and parent.startswith(top + "/"):
            found.add(parent)
            parent = os.path.dirname(parent)
    return sorted(found, key=lambda p: (p.count("/"), p))


def _git_dir(dot_git: str) -> list[str]:
    """Where a ``.git`` file (a worktree's, a submodule's) says the repository is."""
    if not os.path.isfile(dot_git):
        return []
    try:
        with open(dot_git, encoding="utf-8", errors="replace") as f:
            line = f.read(4096).strip()
    except OSError:
        return []
    if not line.startswith("gitdir:"):
        return []
    target = os.path.join(os.path.dirname(dot_git), line[len("gitdir:") :].strip())
    return [os.path.realpath(target)]


def _walk(top: str, depth: int) -> Any:
    """(folder, subfolders, files) from ``top`` down ``depth`` levels, hidden ones
    skipped, at most ``MAX_SCAN`` folders."""
    seen = 0
    for here, dirs, files in os.walk(top):
        seen += 1
        yield here, list(dirs), files
        level = here[len(top) :].count(os.sep)
        dirs[:] = [] if level >= depth or seen >= MAX_SCAN else [d for d in dirs if d[0] != "."]
