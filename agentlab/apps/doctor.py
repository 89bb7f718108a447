"""``agentlab doctor``: what a class needs to know about this machine, in one screen.

    agentlab doctor            # every check; exit code 1 if something a class needs is missing
    agentlab doctor --json     # the same, as JSON (for a hub's start-up script)

Each check says what it found and, when something is missing, the one
command or setting that fixes it. With no key and no base URL nothing here uses
the network. With either, one cheap request (the model list, 5 s timeout, no
retries) says whether the endpoint answers and whether it takes the key; the
key itself is never printed.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from agentlab.i18n import t

__all__ = ["Check", "checks", "main"]

DISTRIBUTION = (
    "agent-loop-lab"  # reserved on the package index for the release; import name: agentlab
)


@dataclass(frozen=True)
class Check:
    """One line of the report. ``ok`` False with ``required`` True makes the exit code 1."""

    name: str
    ok: bool
    found: str
    fix: str = ""
    required: bool = True


def _version() -> Check:
    from agentlab import __version__

    py = platform.python_version()
    ok = sys.version_info >= (3, 10)
    found = f"{DISTRIBUTION} {__version__} · Python {py}"
    return Check("agentlab", ok, found, "" if ok else t("doctor.fix.python"))


def _model() -> Check:
    from agentlab.models import DEFAULT_MODEL

    key, url = os.environ.get("ANTHROPIC_API_KEY"), os.environ.get("ANTHROPIC_BASE_URL")
    if url:
        found = t("doctor.model.base_url", url=url, model=DEFAULT_MODEL)
    elif key:
        found = t("doctor.model.key", model=DEFAULT_MODEL)
    else:
        found = t("doctor.model.offline")
    return Check("model", True, found)


def _endpoint() -> list[Check]:
    """With a key or a base URL: does the endpoint answer, and does it take the key?"""
    key, url = os.environ.get("ANTHROPIC_API_KEY"), os.environ.get("ANTHROPIC_BASE_URL")
    if not key and not url:
        return []  # the offline demo: nothing to reach
    import anthropic

    where = url or "https://api.anthropic.com"
    client = anthropic.Anthropic(api_key=key or "none", base_url=url, timeout=5.0, max_retries=0)
    try:
        page = client.models.list(limit=5)
    except anthropic.APIConnectionError as e:  # timeouts too
        why = f"{type(e).__name__}: {e}"
        return [Check("endpoint", False, t("doctor.endpoint.unreachable", url=where, why=why),
                      t("doctor.fix.endpoint"))]  # fmt: skip
    except anthropic.APIStatusError as e:
        answered = Check("endpoint", True, t("doctor.endpoint.ok", url=where))
        if e.status_code in (401, 403):
            return [answered, Check("key", False, t("doctor.key.refused", status=e.status_code),
                                    t("doctor.fix.key"))]  # fmt: skip
        return [answered, Check("key", True, t("doctor.key.unknown", status=e.status_code))]
    n = len(page.data)
    return [
        Check("endpoint", True, t("doctor.endpoint.ok", url=where)),
        Check("key", True, t("doctor.key.ok", n=n)),
    ]


def _bash() -> Check:
    from agentlab.tools.shell import run_bash

    result = run_bash("echo agentlab-ok", timeout=10)
    ok = result.exit_code == 0 and "agentlab-ok" in result.output
    found = t("doctor.bash.ok") if ok else result.output.strip()[:200]
    return Check("bash", ok, found, "" if ok else t("doctor.fix.bash"))


def _sandbox() -> Check:
    """Whether model commands run under bubblewrap (Linux); not required, but said plainly."""
    from agentlab.tools.shell import sandbox_problem

    problem = sandbox_problem()
    if problem:
        return Check("sandbox", False, problem, t("doctor.fix.sandbox"), required=False)
    return Check("sandbox", True, t("doctor.sandbox.ok"), required=False)


def _lab() -> Check:
    """JupyterLab installed, and the ipywidgets front end in the Lab that will serve the lessons."""
    import importlib.util

    if importlib.util.find_spec("jupyterlab") is None:
        return Check("jupyterlab", False, t("doctor.lab.missing"), t("doctor.fix.lab"))
    from jupyter_core.paths import jupyter_path

    manager = Path("@jupyter-widgets", "jupyterlab-manager", "package.json")
    for folder in jupyter_path("labextensions"):
        if (Path(folder) / manager).is_file():
            return Check("jupyterlab", True, t("doctor.lab.ok", path=folder))
    return Check("jupyterlab", False, t("doctor.lab.no_widgets"), t("doctor.fix.widgets"))


def _cjk_font() -> Check:
    """A font with Chinese glyphs (the zh lessons show empty boxes without one)."""
    if shutil.which("fc-list") is None:
        return Check("cjk_font", False, t("doctor.font.unknown"), t("doctor.fix.font"), False)
    out = subprocess.run(
        ["fc-list", ":lang=zh", "family"], capture_output=True, text=True, timeout=20
    ).stdout
    families = sorted({line.split(",")[0].strip() for line in out.splitlines() if line.strip()})
    if families:
        simplified = [f for f in families if " SC" in f or "Hei" in f] or families
        return Check("cjk_font", True, simplified[0], required=False)
    return Check("cjk_font", False, t("doctor.font.missing"), t("doctor.fix.font"), False)


def _lessons() -> Check:
    from agentlab.apps.lessons import FIRST_LESSON, source_dir

    folder = source_dir()
    ok = (folder / FIRST_LESSON).is_file()
    fix = "" if ok else t("doctor.fix.lessons")
    return Check("lessons", ok, str(folder) if ok else t("doctor.lessons.missing"), fix)


CHECKS: tuple[Callable[[], Check | list[Check]], ...] = (
    _version,
    _model,
    _endpoint,
    _bash,
    _sandbox,
    _lab,
    _cjk_font,
    _lessons,
)


def checks() -> list[Check]:
    """Run every check; one that crashes is reported as failed, never raised."""
    out: list[Check] = []
    for fn in CHECKS:
        try:
            found = fn()
            out += found if isinstance(found, list) else [found]
        except Exception as e:  # a broken check must not hide the others
            name = fn.__name__.strip("_")
            out.append(Check(name, False, f"{type(e).__name__}: {e}", t("doctor.fix.report")))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    from agentlab.apps.cli import Parser

    parser = Parser(prog="agentlab doctor", description=t("doctor.about"))
    parser.add_argument("--json", action="store_true", help=t("doctor.json_help"))
    args = parser.parse_args(argv)
    results = checks()
    failed = [c for c in results if not c.ok and c.required]
    if args.json:
        print(json.dumps({"ok": not failed, "checks": [asdict(c) for c in results]}, indent=1))
        return 1 if failed else 0
    width = max(len(c.name) for c in results)
    for c in results:
        mark = "✓" if c.ok else ("✗" if c.required else "!")
        print(f"{mark} {c.name.ljust(width)}  {c.found}")
        if c.fix:
            print(f"  {' ' * width}  → {c.fix}")
    print(t("doctor.bad", n=len(failed)) if failed else t("doctor.good"))
    return 1 if failed else 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
