"""Real-browser test harness: hermetic JupyterLab + system Chromium + Playwright.

Fixtures
--------
``lab`` (session)      -> :class:`Lab`: a JupyterLab server in a temp dir.
``browser`` (session)  -> ``playwright.sync_api.Browser`` (Debian ``/usr/bin/chromium``).
``page`` (function)    -> ``playwright.sync_api.Page`` in a fresh context, 1280x900.

Helpers: use the methods on ``lab`` (``lab.write_notebook``, ``lab.open_notebook``,
``lab.run_all``, ``lab.wait_for_idle``); test modules need no imports from here.

Typical test::

    def test_something(lab, page):
        lab.write_notebook("x.ipynb", ["import ipywidgets as w", "w.Button(description='Go')"])
        panel = lab.open_notebook(page, "x.ipynb")
        lab.run_all(page)
        panel.get_by_role("button", name="Go").click()

If Chromium or Playwright/JupyterLab is missing the tests are *skipped*
locally but *fail* when the ``CI`` environment variable is set.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = os.environ.get("AGENTLAB_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
LAB_START_TIMEOUT = 60.0  # seconds for /api/status to answer
KERNEL_TIMEOUT = 60_000  # ms for a kernel to become idle / cells to finish
DEFAULT_TIMEOUT = 15_000  # ms, Playwright default for actions and expect()

# The current (visible) notebook. Lab keeps other panels in the DOM, hidden.
PANEL = ".jp-NotebookPanel:not(.lm-mod-hidden)"

# Settings defaults for the hermetic Lab: no "Jupyter news" toast, no update
# check, no autosave (so Lab never rewrites the notebooks a test wrote).
SETTING_OVERRIDES = {
    "@jupyterlab/apputils-extension:notification": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
    "@jupyterlab/docmanager-extension:plugin": {"autosave": False},
}

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]  # the checkout these tests belong to


# --------------------------------------------------------------------------- pytest hooks


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "browser: real-browser test (JupyterLab + Chromium + Playwright)"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.browser)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    # Remember the call-phase report so the ``page`` fixture can screenshot failures.
    report = yield
    if report.when == "call":
        item.stash[_CALL_REPORT] = report
    return report


_CALL_REPORT = pytest.StashKey[pytest.TestReport]()


# --------------------------------------------------------------------------- requirements


def _on_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def _missing_requirements() -> list[str]:
    missing = []
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        missing.append(f"{CHROMIUM} not found (run .ci/install-browser)")
    for module, pip_name in (("playwright.sync_api", "playwright"), ("jupyterlab", "jupyterlab")):
        try:
            __import__(module)
        except ImportError:
            missing.append(f"python package {pip_name!r} not importable (pip install '.[test]')")
    return missing


def _require_browser_stack() -> None:
    missing = _missing_requirements()
    if not missing:
        return
    msg = "browser tests need: " + "; ".join(missing)
    if _on_ci():
        pytest.fail(msg + "  [CI is set, so this is an error, not a skip]", pytrace=False)
    pytest.skip(msg)


# --------------------------------------------------------------------------- browser helpers


def notebook_panel(page: Any) -> Any:
    """Locator for the visible notebook panel (scope every locator to it)."""
    return page.locator(PANEL)


_KERNEL_IDLE_JS = """(path) => {
    const app = window.jupyterapp;
    if (!app || !app.shell) return false;
    const w = app.shell.currentWidget;
    if (!w || !w.sessionContext || !w.context) return false;
    if (path && w.context.path !== path) return false;
    const k = w.sessionContext.session && w.sessionContext.session.kernel;
    return !!k && k.connectionStatus === 'connected' && k.status === 'idle';
}"""


def wait_for_idle(page: Any, path: str | None = None, timeout: float = KERNEL_TIMEOUT) -> None:
    """Wait until the current notebook's kernel is connected and idle.

    ``path`` (relative to the Lab root) additionally requires that notebook to
    be the current widget.
    """
    page.wait_for_function(_KERNEL_IDLE_JS, arg=path, timeout=timeout, polling=100)


_WATCH_RUN_ALL_JS = """() => {
    // Lumino emits commandExecuted synchronously with the command's promise;
    // notebook:run-all-cells resolves once every cell has finished (true if
    // none raised). Works the same whether the command comes from the menu,
    // the keyboard or commands.execute().
    const app = window.jupyterapp;
    const state = window.__agentlabRunAll = {done: false, ok: null, error: null};
    const onExec = (_, args) => {
        if (args.id !== 'notebook:run-all-cells') return;
        app.commands.commandExecuted.disconnect(onExec);
        Promise.resolve(args.result).then(
            ok => { state.ok = ok !== false; state.done = true; },
            err => { state.ok = false; state.error = String(err); state.done = true; });
    };
    app.commands.commandExecuted.connect(onExec);
}"""


def run_all(page: Any, via: str = "command", timeout: float = KERNEL_TIMEOUT) -> bool:
    """Run > Run All Cells in the current notebook and wait until every cell
    has finished and the kernel is idle. Returns False if a cell raised
    (Lab then stops at that cell), True otherwise.

    ``via="command"`` executes Lab's ``notebook:run-all-cells`` command (what
    the menu item triggers; immune to menu layout/animation); ``via="menu"``
    clicks the "Run" menu and then "Run All Cells".
    """
    if via not in ("command", "menu"):
        raise ValueError(f"via must be 'command' or 'menu', not {via!r}")
    page.evaluate(_WATCH_RUN_ALL_JS)
    if via == "command":
        page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
    else:
        page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
        page.locator(".lm-Menu-item:not(.lm-mod-disabled)").filter(
            has=page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$"))
        ).first.click()
    page.wait_for_function("() => window.__agentlabRunAll.done", timeout=timeout, polling=100)
    wait_for_idle(page, timeout=timeout)
    state = page.evaluate("() => window.__agentlabRunAll")
    if state.get("error"):
        raise RuntimeError(f"notebook:run-all-cells failed: {state['error']}")
    return bool(state["ok"])


# --------------------------------------------------------------------------- lab server


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _http(method: str, url: str, timeout: float = 5.0) -> bytes:
    req = urllib.request.Request(url, method=method)
    with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310 (local URL)
        return bytes(resp.read())


@dataclass
class Lab:
    url: str  # e.g. http://127.0.0.1:PORT (no trailing slash)
    root: Path  # ServerApp.root_dir: put notebooks here
    tmp: Path  # the whole hermetic temp tree (root, config, data, logs, ...)
    log: Path  # server stdout+stderr
    proc: subprocess.Popen[bytes] = field(repr=False)

    def write_notebook(self, name: str, cells: Sequence[Any]) -> Path:
        """Write ``root/name`` as a python3 notebook.

        ``cells`` items are source strings (code cells) or nbformat cell nodes
        (e.g. ``nbformat.v4.new_markdown_cell("# hi")``).
        """
        import nbformat

        nb = nbformat.v4.new_notebook()
        nb.metadata["kernelspec"] = {
            "name": "python3",
            "display_name": "Python 3 (ipykernel)",
            "language": "python",
        }
        nb.metadata["language_info"] = {"name": "python"}
        nb.cells = [nbformat.v4.new_code_cell(c) if isinstance(c, str) else c for c in cells]
        path = self.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, str(path))
        return path

    def open_notebook(self, page: Any, name: str, timeout: float = KERNEL_TIMEOUT) -> Any:
        """Open ``root/name`` in a fresh workspace; wait for its kernel to be
        idle. Returns the locator of the visible notebook panel."""
        workspace = "t" + uuid.uuid4().hex[:12]
        page.goto(f"{self.url}/lab/workspaces/{workspace}/tree/{name}?reset")
        panel = notebook_panel(page)
        panel.wait_for(state="visible", timeout=timeout)
        wait_for_idle(page, path=name, timeout=timeout)
        return panel

    def run_cells(self, page: Any, name: str, cells: Sequence[Any]) -> Any:
        """Write ``root/name``, open it and run all its cells; returns the panel."""
        self.write_notebook(name, cells)
        panel = self.open_notebook(page, name)
        assert self.run_all(page)
        return panel

    def panel(self, page: Any) -> Any:
        return notebook_panel(page)

    def run_all(self, page: Any, via: str = "command") -> bool:
        return run_all(page, via=via)

    def wait_for_idle(self, page: Any) -> None:
        wait_for_idle(page)

    def api(self, method: str, path: str) -> Any:
        body = _http(method, self.url + path)
        return json.loads(body) if body else None

    def log_tail(self, n: int = 40) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return "<no log>"


def _hermetic_env(tmp: Path) -> dict[str, str]:
    dirs = {
        "JUPYTER_CONFIG_DIR": tmp / "jupyter_config",
        "JUPYTER_DATA_DIR": tmp / "jupyter_data",
        "JUPYTER_RUNTIME_DIR": tmp / "jupyter_runtime",
        "JUPYTERLAB_WORKSPACES_DIR": tmp / "lab_workspaces",
        "JUPYTERLAB_SETTINGS_DIR": tmp / "lab_user_settings",
        "IPYTHONDIR": tmp / "ipython",
        "HOME": tmp / "home",
        "XDG_CONFIG_HOME": tmp / "home" / ".config",
        "XDG_CACHE_HOME": tmp / "home" / ".cache",
        "XDG_DATA_HOME": tmp / "home" / ".local" / "share",
        "XDG_STATE_HOME": tmp / "home" / ".local" / "state",
        "XDG_RUNTIME_DIR": tmp / "xdg_runtime",
    }
    for d in dirs.values():
        d.mkdir(parents=True, exist_ok=True)
    dirs["XDG_RUNTIME_DIR"].chmod(0o700)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "XDG_"))}
    env.update({k: str(v) for k, v in dirs.items()})
    # Kernels and helpers resolve from the interpreter running the tests.
    env["PATH"] = os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", "")
    env["PYTHONUNBUFFERED"] = "1"
    env.pop("PYTHONSTARTUP", None)
    # Kernels import agentlab from this checkout, not from another installed copy.
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return env


def _stop(proc: subprocess.Popen[bytes], lab: Lab | None) -> None:
    if proc.poll() is None and lab is not None:
        # Shut kernels down cleanly through the API first (they run in their
        # own process groups), then stop the server.
        try:
            for kernel in lab.api("GET", "/api/kernels") or []:
                lab.api("DELETE", f"/api/kernels/{kernel['id']}")
        except (OSError, urllib.error.URLError, ValueError):
            pass
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)  # server also shuts down remaining kernels
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # the group we created at start
            proc.wait(timeout=5)


def start_lab(tmp: Path) -> Lab:
    """Start a hermetic JupyterLab server under ``tmp`` and wait until it answers.
    Stop it with ``stop_lab`` (the benchmarks use these two as well)."""
    root = tmp / "root"
    root.mkdir()
    env = _hermetic_env(tmp)

    # Setting overrides without touching sys.prefix: jupyterlab_server merges
    # <config path>/labconfig/default_setting_overrides.json into the schema
    # defaults, and JUPYTER_CONFIG_DIR is first on that path.
    labconfig = Path(env["JUPYTER_CONFIG_DIR"]) / "labconfig"
    labconfig.mkdir(parents=True, exist_ok=True)
    (labconfig / "default_setting_overrides.json").write_text(json.dumps(SETTING_OVERRIDES))

    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    cmd = [
        sys.executable, "-m", "jupyter", "lab",
        "--no-browser", "--allow-root", "--ip=127.0.0.1", f"--port={port}",
        "--ServerApp.port_retries=0",
        "--IdentityProvider.token=", "--ServerApp.password=",
        f"--ServerApp.root_dir={root}",
        "--LabApp.expose_app_in_browser=True",  # window.jupyterapp for helpers
        "--LanguageServerManager.autodetect=False",
    ]  # fmt: skip
    log = tmp / "lab.log"
    with open(log, "wb") as log_fh:
        proc = subprocess.Popen(
            cmd,
            cwd=root,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log_fh,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    server = Lab(url=url, root=root, tmp=tmp, log=log, proc=proc)
    try:
        deadline = time.monotonic() + LAB_START_TIMEOUT
        while True:
            if proc.poll() is not None:
                raise RuntimeError(
                    f"jupyter lab exited with {proc.returncode}:\n{server.log_tail()}"
                )
            try:
                _http("GET", url + "/api/status", timeout=2)
                return server
            except (OSError, urllib.error.URLError):
                if time.monotonic() > deadline:
                    raise RuntimeError(
                        f"jupyter lab not ready after {LAB_START_TIMEOUT}s:\n{server.log_tail()}"
                    ) from None
                time.sleep(0.2)
    except BaseException:
        _stop(proc, server)
        raise


def stop_lab(server: Lab) -> None:
    _stop(server.proc, server)


@pytest.fixture(scope="session")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    """A JupyterLab server, hermetic in a temp dir, shared by the session."""
    _require_browser_stack()
    server = start_lab(tmp_path_factory.mktemp("lab"))
    try:
        yield server
    finally:
        stop_lab(server)


# --------------------------------------------------------------------------- playwright


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Headless Debian Chromium driven by Playwright (never `playwright install`).

    Module scope: Playwright's sync API keeps an asyncio loop marked as running
    in this thread while it is started, which would mislead later tests that
    look for a kernel's event loop (the views do), so it stops after each module.
    """
    _require_browser_stack()
    from playwright.sync_api import sync_playwright

    env: dict[str, str | float | bool] = dict(_hermetic_env(tmp_path_factory.mktemp("chromium")))
    pw = sync_playwright().start()
    try:
        # launch() uses its own fresh, temporary user-data dir.
        b = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS, env=env)
        try:
            yield b
        finally:
            b.close()
    finally:
        pw.stop()


@pytest.fixture
def page(browser: Any, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    """A page in a fresh browser context (1280x900). On test failure a
    screenshot is saved to the test's tmp_path and its path printed."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(DEFAULT_TIMEOUT)
    pg = context.new_page()
    console: list[str] = []
    pg.on("console", lambda m: console.append(f"[{m.type}] {m.text}"))
    pg.on("pageerror", lambda e: console.append(f"[pageerror] {e}"))
    try:
        yield pg
    finally:
        report = request.node.stash.get(_CALL_REPORT, None)
        if report is not None and report.failed:
            shot = tmp_path / "failure.png"
            try:
                pg.screenshot(path=str(shot), full_page=True)
                print(f"\n[browser] failure screenshot: {shot}")
            except Exception as exc:  # noqa: BLE001 - best effort diagnostics
                print(f"\n[browser] could not take failure screenshot: {exc}")
            print("[browser] console:\n" + "\n".join(console[-30:]))
        context.close()
