"""A class on a real JupyterHub, on this machine: how long until everyone can start, and how
long lesson 01 and an exercise take when N students run them at once against one server.

    pip install -e ".[hub]"              # jupyterhub, websocket-client
    python benchmarks/classroom.py       # N = 5, then N = 20
    python benchmarks/classroom.py --students 3

What it does, all on 127.0.0.1:
1. finds `configurable-http-proxy` (PATH, else installs it with npm into ~/.cache/agentlab-hub);
2. starts one `agentlab serve` (the offline demo model) for the whole class;
3. starts JupyterHub with docs/instructors/jupyterhub_config.py (the file the instructors' page
   gives), dummy login, one server per student, lessons copied into each home folder;
4. creates N students and starts their servers at once (prints the time until all are ready);
5. in every student's server, at once: starts a kernel and runs lesson 01 and exercise 01 (the
   student version with a solution typed into the answer cell) cell by cell over the kernel's
   websocket, as a student pressing Shift-Enter would;
6. meanwhile a probe asks the shared server once every 0.25 s, so its p50/p99 latency under the
   class's load is measured from outside; the slowest probe is printed with its place and when it
   was sent (with few probes the p99 is the slowest one: one cold request shows as the p99);
7. stops everything and prints one table.
It prints numbers; it passes or fails nothing (a notebook cell that errors is counted and shown).
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
CONFIG = REPO / "docs" / "instructors" / "jupyterhub_config.py"
CACHE = Path.home() / ".cache" / "agentlab-hub"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def find_proxy() -> str:
    found = shutil.which("configurable-http-proxy")
    if found:
        return found
    local = CACHE / "node_modules" / ".bin" / "configurable-http-proxy"
    if not local.exists():
        if shutil.which("npm") is None:
            sys.exit(
                "configurable-http-proxy is missing and npm is not installed (apt-get install npm)"
            )
        CACHE.mkdir(parents=True, exist_ok=True)
        print("installing configurable-http-proxy with npm ...", flush=True)
        subprocess.run(
            ["npm", "install", "--silent", "--prefix", str(CACHE), "configurable-http-proxy@5"],
            check=True,
        )
    return str(local)


def wait_for(url: str, seconds: float, *, any_answer: bool = False) -> None:
    """Wait until ``url`` answers 200 (or any HTTP answer with ``any_answer``)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            urllib.request.urlopen(url, timeout=2)
            return
        except urllib.error.HTTPError:
            if any_answer:
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise TimeoutError(f"{url} did not answer within {seconds} s")


class Hub:
    """JupyterHub's REST API, as the classroom service sees it."""

    def __init__(self, base: str, token: str):
        self.base, self.headers = base, {"Authorization": f"token {token}"}

    def call(self, method: str, path: str, body: Any = None, *, timeout: float = 30) -> Any:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(
            self.base + path,
            data=data,
            method=method,
            headers={**self.headers, "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=timeout) as r:
            raw = r.read()
        return json.loads(raw) if raw else None


def code_cells(nb: dict[str, Any]) -> list[tuple[str, bool]]:
    """(source, error expected) for each code cell."""
    cells = []
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        tags = set(cell.get("metadata", {}).get("tags", []))
        expected = "raises-exception" in tags or "NBVAL_RAISES_EXCEPTION" in src
        cells.append((src, expected))
    return cells


def run_cells(ws_url: str, headers: dict[str, str], cells: list[tuple[str, bool]]) -> int:
    """Run cells one by one over a kernel websocket; return the number of unexpected errors."""
    import websocket  # websocket-client

    ws = websocket.create_connection(
        ws_url, header=[f"{k}: {v}" for k, v in headers.items()], timeout=300
    )
    session, errors = uuid.uuid4().hex, 0
    try:
        for source, expected in cells:
            msg_id = uuid.uuid4().hex
            ws.send(
                json.dumps(
                    {
                        "header": {
                            "msg_id": msg_id,
                            "msg_type": "execute_request",
                            "session": session,
                            "username": "student",
                            "version": "5.3",
                            "date": "",
                        },
                        "parent_header": {},
                        "metadata": {},
                        "content": {
                            "code": source,
                            "silent": False,
                            "store_history": True,
                            "user_expressions": {},
                            "allow_stdin": False,
                            "stop_on_error": False,
                        },
                        "channel": "shell",
                        "buffers": [],
                    }
                )
            )
            while True:
                msg = json.loads(ws.recv())
                if msg.get("parent_header", {}).get("msg_id") != msg_id:
                    continue
                if msg["msg_type"] == "execute_reply":
                    if msg["content"]["status"] != "ok" and not expected:
                        errors += 1
                        print(
                            f"    unexpected error: {msg['content'].get('ename')}: "
                            f"{msg['content'].get('evalue', '')[:120]}",
                            flush=True,
                        )
                    break
    finally:
        ws.close()
    return errors


def student(hub: Hub, port: int, token: str, name: str) -> dict[str, Any]:
    """Run lesson 01 and exercise 01 in this student's server; time each."""
    api = f"/user/{name}/api"
    base = f"http://127.0.0.1:{port}"
    headers = {"Authorization": f"token {token}"}
    out: dict[str, Any] = {"name": name, "errors": 0}
    lesson = hub.call("GET", f"{api}/contents/01_the_agent_loop.ipynb")["content"]
    exercise = hub.call("GET", f"{api}/contents/exercises/01_first_message.ipynb")["content"]
    solution = json.loads((REPO / "notebooks" / "solutions" / "01_first_message.ipynb").read_text())
    # The student's version with the answer typed in: the solution notebook's cells.
    runs = [("lesson 01", code_cells(lesson)), ("exercise 01", code_cells(solution))]
    assert exercise["cells"], "the exercise was copied into the student's home"
    for label, cells in runs:
        kernel = hub.call("POST", f"{api}/kernels", {"name": "python3"})
        ws_url = f"ws://127.0.0.1:{port}{api}/kernels/{kernel['id']}/channels"
        start = time.monotonic()
        out["errors"] += run_cells(ws_url, headers, cells)
        out[label] = time.monotonic() - start
        hub.call("DELETE", f"{api}/kernels/{kernel['id']}")
    _ = base
    return out


def probe(url: str, stop: threading.Event, samples: list[float], sent: list[float]) -> None:
    """Ask the shared server once every 0.25 s, as one more student would (``sent``: when
    each probe left, in seconds from the first)."""
    body = json.dumps(
        {
            "model": "claude-sonnet-5-5",
            "max_tokens": 200,
            "messages": [{"role": "user", "content": "What is the date?"}],
        }
    ).encode()
    headers = {
        "content-type": "application/json",
        "x-api-key": "class",
        "anthropic-version": "2023-06-01",
    }
    first = time.monotonic()
    while not stop.is_set():
        start = time.monotonic()
        sent.append(start - first)
        try:
            req = urllib.request.Request(url + "/v1/messages", data=body, headers=headers)
            urllib.request.urlopen(req, timeout=30).read()
            samples.append(time.monotonic() - start)
        except OSError:
            samples.append(float("inf"))
        stop.wait(0.25)


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def one_class(n: int, proxy: str) -> dict[str, Any]:
    root = Path(tempfile.mkdtemp(prefix=f"agentlab-hub-{n}-"))
    serve_port, hub_port, api_port, proxy_api = free_port(), free_port(), free_port(), free_port()
    token = secrets.token_hex(16)
    env = {
        **os.environ,
        "AGENTLAB_HUB_ROOT": str(root),
        "AGENTLAB_HUB_PORT": str(hub_port),
        "AGENTLAB_HUB_API_PORT": str(api_port),
        "AGENTLAB_PROXY_API_PORT": str(proxy_api),
        "AGENTLAB_MODEL_URL": f"http://127.0.0.1:{serve_port}",
        "AGENTLAB_HUB_TOKEN": token,
        "AGENTLAB_PROXY": proxy,
        "CONFIGPROXY_AUTH_TOKEN": secrets.token_hex(16),
        "PYTHONPATH": str(REPO),
        "JUPYTER_CONFIG_DIR": str(root / "jupyter-config"),
        "JUPYTER_RUNTIME_DIR": str(root / "jupyter-runtime"),
    }
    for key in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        env.pop(key, None)
    procs: list[subprocess.Popen[bytes]] = []
    result: dict[str, Any] = {"students": n}
    try:
        procs.append(
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "agentlab.apps.cli",
                    "serve",
                    "--port",
                    str(serve_port),
                    "--quiet",
                ],
                env=env,
                cwd=root,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )
        wait_for(f"http://127.0.0.1:{serve_port}/v1/models", 30, any_answer=True)
        log = open(root / "hub.log", "wb")
        procs.append(
            subprocess.Popen(
                [sys.executable, "-m", "jupyterhub", "-f", str(CONFIG)],
                env=env,
                cwd=root,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # the proxy and the students' servers in one group
            )
        )
        hub = Hub(f"http://127.0.0.1:{hub_port}", token)
        wait_for(f"http://127.0.0.1:{hub_port}/hub/api/", 60)
        names = [f"student{i:02d}" for i in range(1, n + 1)]
        start = time.monotonic()
        for name in names:
            hub.call("POST", f"/hub/api/users/{name}")
        for name in names:
            hub.call("POST", f"/hub/api/users/{name}/server")
        pending = set(names)
        while pending and time.monotonic() - start < 300:
            for name in list(pending):
                servers = hub.call("GET", f"/hub/api/users/{name}").get("servers", {})
                if servers.get("", {}).get("ready"):
                    pending.discard(name)
            time.sleep(0.5)
        if pending:
            raise TimeoutError(f"servers not ready after 300 s: {sorted(pending)}")
        result["ready_s"] = time.monotonic() - start

        samples: list[float] = []
        sent: list[float] = []
        stop = threading.Event()
        prober = threading.Thread(
            target=probe,
            args=(f"http://127.0.0.1:{serve_port}", stop, samples, sent),
            daemon=True,
        )
        prober.start()
        start = time.monotonic()
        with ThreadPoolExecutor(max_workers=n) as pool:
            runs = list(pool.map(lambda name: student(hub, hub_port, token, name), names))
        result["class_s"] = time.monotonic() - start
        stop.set()
        prober.join(timeout=35)
        for label in ("lesson 01", "exercise 01"):
            times = [r[label] for r in runs]
            result[label] = (statistics.median(times), max(times))
        result["errors"] = sum(r["errors"] for r in runs)
        ok = [s for s in samples if s != float("inf")]
        result["probe"] = (
            len(samples),
            percentile(ok, 0.5),
            percentile(ok, 0.99),
            len(samples) - len(ok),
        )
        if ok:
            k = samples.index(max(ok))
            result["slowest"] = (max(ok), k + 1, sent[k])
        for name in names:
            hub.call("DELETE", f"/hub/api/users/{name}/server")
    finally:
        for p in reversed(procs):
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
        if len(procs) > 1:  # whatever the hub started and left behind (proxy, servers)
            try:
                os.killpg(procs[1].pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if not os.environ.get("AGENTLAB_HUB_KEEP"):
            shutil.rmtree(root, ignore_errors=True)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, nargs="+", default=[5, 20])
    args = parser.parse_args()
    proxy = find_proxy()
    print(f"JupyterHub class on 127.0.0.1, {os.cpu_count()} cores; proxy {proxy}", flush=True)
    rows = []
    for n in args.students:
        print(f"-- {n} students ...", flush=True)
        rows.append(one_class(n, proxy))
    print()
    print(
        "| students | all servers ready | lesson 01 (median / slowest) | exercise 01 (median / slowest) "
        "| whole class | unexpected cell errors | server p50 / p99 under load (probes, failed) |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        n_probe, p50, p99, failed = r["probe"]
        print(
            f"| {r['students']} | {r['ready_s']:.1f} s | {r['lesson 01'][0]:.1f} s / {r['lesson 01'][1]:.1f} s "
            f"| {r['exercise 01'][0]:.1f} s / {r['exercise 01'][1]:.1f} s | {r['class_s']:.1f} s "
            f"| {r['errors']} | {p50 * 1000:.0f} ms / {p99 * 1000:.0f} ms ({n_probe}, {failed}) |"
        )
    for r in rows:
        if "slowest" in r:
            took, k, at = r["slowest"]
            print(f"{r['students']} students: the slowest probe took {took * 1000:.0f} ms: probe {k} "
                  f"of {r['probe'][0]}, sent {at:.1f} s after the class started")  # fmt: skip


if __name__ == "__main__":
    main()
