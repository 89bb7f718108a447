"""Every install line a newcomer reads or is told must work today.

agentlab is not on the package index yet: its distribution name (``agent-loop-lab``)
is reserved for the release, and ``agentlab`` there is an unrelated project. So a
``pip install`` line in the README, the docs, the lessons or a message agentlab prints
may name agentlab only through a local path (a clone's ``.``, a built wheel), and any
other name it gives must be a real distribution: one that is installed here, which
means pip found it on the index (our own editable install excepted).
"""

from __future__ import annotations

import importlib.metadata
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
OURS = {"agent-loop-lab", "agentlab"}
# `pip install` and what follows it, up to the end of the command
LINE = re.compile(r"pip install ([^\n`()（）&;|#，。]*)")
VALUED = {"--find-links", "-f", "-r", "--requirement", "-c", "--constraint", "--index-url", "-i"}


def _texts() -> list[tuple[str, str]]:
    out = [("README.md", (ROOT / "README.md").read_text("utf-8"))]
    for path in sorted((ROOT / "docs").rglob("*.md")):
        out.append((str(path.relative_to(ROOT)), path.read_text("utf-8")))
    for path in sorted((ROOT / "notebooks").rglob("*.ipynb")):
        if ".ipynb_checkpoints" in path.parts:
            continue
        cells = json.loads(path.read_text("utf-8"))["cells"]
        out.append((str(path.relative_to(ROOT)), "\n".join("".join(c["source"]) for c in cells)))
    import agentlab.exercises  # noqa: F401  (registers its texts)
    import agentlab.fakeapi.demo  # noqa: F401
    from agentlab import i18n

    for lang, table in i18n.STRINGS.items():  # what agentlab prints
        out.append((f"agentlab/i18n.py ({lang})", "\n".join(map(str, table.values()))))
    return out


def _name(requirement: str) -> str:
    return re.split(r"[\[<>=!~;@ ]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def _local(requirement: str) -> bool:
    return requirement.startswith((".", "/", "~", "$", '"$')) or ".whl" in requirement


def _installed(name: str) -> bool:
    try:
        importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def install_lines() -> list[tuple[str, str]]:
    return [(where, m.group(1).strip()) for where, text in _texts() for m in LINE.finditer(text)]


def problems(where: str, args: str) -> list[str]:
    out = []
    words = args.split()
    for i, word in enumerate(words):
        word = word.strip("\"'").rstrip("\"'.,:;，。：")
        if i and words[i - 1] in VALUED:
            continue  # the value of an option (a folder of wheels, a file)
        if not word or word.startswith("-") or _local(word) or word.upper() == word:
            continue  # options, paths, wheels and placeholders such as NAME
        name = _name(word)
        if name in OURS:
            out.append(f"{where}: `pip install {args}` names {name}, which the index does not have")
        elif not _installed(name):
            out.append(f"{where}: `pip install {args}`: {name} is not a distribution known here")
    return out


def test_there_are_install_lines_to_check():
    lines = install_lines()
    assert any(where == "README.md" for where, _ in lines)
    assert any(where.startswith("agentlab/i18n.py") for where, _ in lines)


@pytest.mark.parametrize(
    ("args", "bad"),
    [
        ('"agent-loop-lab[lab]"', True),
        ("agentlab", True),
        ('-e ".[lab]"', False),
        ('"$(ls dist/agent_loop_lab-*.whl)[lab]"', False),
        ("jupyterlab anywidget", False),
        ("no-such-distribution-for-agentlab", True),
    ],
)
def test_the_check_tells_a_working_line_from_a_broken_one(args, bad):
    assert bool(problems("example", args)) is bad


def test_no_install_line_names_a_distribution_the_index_does_not_have():
    found = [p for where, args in install_lines() for p in problems(where, args)]
    assert found == []
