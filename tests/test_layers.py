"""The layers: the core (agentlab/*.py and agentlab/tools/) imports nothing above it.

The core is the loop, the history and its rules, the model table and the tools. Above
it: the API emulator (agentlab.fakeapi), the views, the apps and the exercises. A core
module may not import them, not at the top, not inside a function, not through
``importlib`` or ``sys.modules``: the upper layers register what the core should call
(``rules.HISTORY_RULES``, ``errors.SIGNATURE_READERS``, the notebook pictures of a
LoopResult attached by the package's ``__init__``).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import agentlab

PACKAGE = Path(agentlab.__file__).parent
UPPER = ("agentlab.fakeapi", "agentlab.views", "agentlab.apps", "agentlab.exercises")
# The package's two doors are not core: ``agentlab/__init__.py`` is the façade that
# gathers every layer's public names, ``agentlab/__main__.py`` runs the CLI app.
DOORS = {"__init__.py", "__main__.py"}
CORE = sorted(
    [p for p in PACKAGE.glob("*.py") if p.name not in DOORS]
    + list((PACKAGE / "tools").rglob("*.py"))
)


def _module(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def upward(path: Path) -> list[str]:
    """Every mention of an upper layer in this file's code: imports (absolute or
    relative, anywhere), and module names in strings (importlib, __import__, sys.modules)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = _module(path).rsplit(".", 1)[0] if path.name != "__init__.py" else _module(path)
    found = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, *([node.module] if node.module else [])])
            names = [base, *(f"{base}.{a.name}" for a in node.names)]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            names = [node.value] if node.value.startswith(UPPER) else []
        found += [f"line {node.lineno}: {n}" for n in names if n.startswith(UPPER)]
    return found


def test_the_core_is_what_the_layers_say():
    names = {p.relative_to(PACKAGE).as_posix() for p in CORE}
    assert {"loop.py", "history.py", "rules.py", "models.py", "tools/base.py"} <= names
    assert not any(n.startswith(("fakeapi/", "views/", "apps/", "exercises/")) for n in names)
    assert len(list(PACKAGE.glob("*.py"))) <= 14  # the top level holds the core and the doors


@pytest.mark.parametrize("path", CORE, ids=lambda p: p.relative_to(PACKAGE).as_posix())
def test_a_core_module_names_no_upper_layer_not_even_lazily(path):
    assert upward(path) == []


def test_the_check_finds_every_way_of_reaching_up(tmp_path):
    sneaky = tmp_path / "agentlab" / "tools" / "sneaky.py"
    sneaky.parent.mkdir(parents=True)
    sneaky.write_text(
        "import importlib, sys\n"
        "from agentlab.views import render\n"
        "def f():\n"
        "    import agentlab.apps.cli\n"
        "    from ..fakeapi import offline\n"
        "    importlib.import_module('agentlab.exercises')\n"
        "    return sys.modules.get('agentlab.fakeapi.thinking')\n"
    )
    global PACKAGE
    saved, PACKAGE = PACKAGE, tmp_path / "agentlab"
    try:
        found = upward(sneaky)
    finally:
        PACKAGE = saved
    assert [f.split(": ")[1] for f in found] == [
        "agentlab.views",
        "agentlab.views.render",
        "agentlab.apps.cli",
        "agentlab.fakeapi",
        "agentlab.fakeapi.offline",
        "agentlab.exercises",
        "agentlab.fakeapi.thinking",
    ]
