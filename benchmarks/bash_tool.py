"""How much does the hardened bash tool cost? Prints numbers; asserts nothing.

    python benchmarks/bash_tool.py [N]

1. Overhead: N runs of ``run_bash("true")`` against the lesson's
   ``subprocess.run("true", shell=True)``, interleaved so both see the same
   machine load. A second ``run_bash`` row turns the Linux guard off (not
   dumpable + subreaper + the sweep for leftover processes): the difference
   between the two is what stopping escaped processes costs per call. ``shell=True`` runs /bin/sh, which on Debian is dash, a
   smaller and faster shell than bash, so a third column runs bash the plain
   way (``bash -c true`` with a captured pipe): the gap between it and
   ``run_bash`` is what our own code costs.
2. The sandbox (Linux, bubblewrap), per command, side by side: a plain
   ``subprocess.run(["bash", "-c", ...])`` (what the 1.5x target is measured
   against), the lesson's ``subprocess.run(..., shell=True)``, ``run_bash``
   without the sandbox, a new ``bwrap`` for each command (the previous
   design, without ``run_bash``'s own costs), and ``run_bash`` in the kept
   sandbox; for ``true`` (the worst case: nothing but the start-up) and for
   two ordinary commands.
3. Memory: peak Python allocations (tracemalloc) and the peak RSS increase
   while ``yes`` and ``cat /dev/urandom`` run into the output cap.
4. The kernel's import guard (``agentlab.tools.protect``): a new import (a
   fresh module file, found and loaded) with no folder guarded and with one,
   interleaved; an import already done costs nothing either way.
"""

from __future__ import annotations

import resource
import shutil
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable

from agentlab.tools import shell
from agentlab.tools.shell import make_workspace, run_bash

TARGET_RATIO = 1.5
TARGET_MEMORY_MB = 20


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def overhead(n: int) -> None:
    bash = shutil.which("bash") or "bash"

    def unguarded() -> object:
        shell.GUARD = False
        try:
            return run_bash("true", sandbox=False)
        finally:
            shell.GUARD = sys.platform == "linux"

    runs: dict[str, Callable[[], object]] = {
        'run_bash("true")': lambda: run_bash("true", sandbox=False),
        'subprocess.run("true", shell=True)': lambda: subprocess.run("true", shell=True),
        "subprocess.run([bash, -c, true], captured)": lambda: subprocess.run(
            [bash, "-c", "true"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        ),
        'run_bash("true"), guard off (before)': unguarded,
    }
    for fn in runs.values():  # warm up: imports, page cache
        for _ in range(10):
            fn()
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(n):
        for name, fn in runs.items():
            times[name].append(timed(fn))

    print(f"Overhead, {n} runs each (milliseconds):")
    for name, ts in times.items():
        median, mean = statistics.median(ts) * 1e3, statistics.mean(ts) * 1e3
        print(f"  {name:45} median {median:6.3f}   mean {mean:6.3f}")
    ours, sh, plain_bash, before = (statistics.median(ts) for ts in times.values())
    print(
        f"  ratio run_bash / sh shell=True (median): {ours / sh:.2f}   (target <= {TARGET_RATIO})"
    )
    print(f"  ratio run_bash / plain bash    (median): {ours / plain_bash:.2f}")
    print(f"  ratio guard on / guard off     (median): {ours / before:.2f}")


SANDBOX_COMMANDS = ["true", "ls -la /usr/bin | wc -l", "python3 -c pass"]


def per_command_bwrap(where: str) -> list[str]:
    """The previous design's command line: a new bwrap for every command (main at 67906c6)."""
    argv = shell._bwrap_argv(where, False)
    base = argv[: argv.index("--bind")]
    for extra in (["--tmpfs", "/dev/shm"], ["--mqueue", "/dev/mqueue"], ["--remount-ro", "/dev"]):
        i = next(i for i in range(len(base)) if base[i : i + 2] == extra)
        del base[i : i + 2]
    base[base.index("--as-pid-1")] = "--die-with-parent"
    return base + argv[argv.index("--bind") :]


def sandbox_cost(n: int) -> None:
    problem = shell.sandbox_problem()
    if problem:
        print(f"Sandbox: off here ({problem}); nothing to measure")
        return
    bash = shutil.which("bash") or "bash"
    where = str(make_workspace())
    print(f"Sandbox cost per command, {n} interleaved runs each (median milliseconds):")
    print(
        f"  {'command':26} {'plain':>7} {'sh=True':>7} {'no box':>7} {'bwrap/cmd':>9} "
        f"{'sandbox':>7}   sandbox/plain (target <= {TARGET_RATIO})  bwrap per command/plain"
    )
    for command in SANDBOX_COMMANDS:
        runs: dict[str, Callable[[], object]] = {
            # plain bash -c: what the target is measured against
            "plain": lambda c=command: subprocess.run(
                [bash, "-c", c], cwd=where, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE
            ),
            # the lesson's subprocess.run(shell=True): /bin/sh, often dash
            "sh": lambda c=command: subprocess.run(
                c, shell=True, cwd=where, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE
            ),
            "no sandbox": lambda c=command: run_bash(c, cwd=where, sandbox=False),
            # the previous design: bwrap started for each command (without run_bash's own costs)
            "bwrap per command": lambda c=command: subprocess.run(
                [*per_command_bwrap(where), bash, "-c", c],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
            ),
            "sandbox": lambda c=command: run_bash(c, cwd=where, sandbox=True),
        }
        for fn in runs.values():
            for _ in range(5):
                fn()
        times: dict[str, list[float]] = {name: [] for name in runs}
        for _ in range(n):
            for name, fn in runs.items():
                times[name].append(timed(fn))
        plain, sh, unboxed, per_command, boxed = (
            statistics.median(ts) * 1e3 for ts in times.values()
        )
        print(
            f"  {command:26} {plain:7.2f} {sh:7.2f} {unboxed:7.2f} {per_command:9.2f} "
            f"{boxed:7.2f}   {boxed / plain:4.2f}{'':33}{per_command / plain:4.2f}"
        )
    shell.close_sandboxes()
    shutil.rmtree(where)


def rss_mb() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024 if sys.platform == "darwin" else 1024)  # bytes on macOS, KiB else


def memory() -> None:
    print(f"Memory while endless output runs into the cap (target < {TARGET_MEMORY_MB} MB):")
    for command in ["yes", "cat /dev/urandom"]:
        rss_before = rss_mb()
        tracemalloc.start()
        result = run_bash(command, timeout=10)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        print(
            f"  {command:18} tracemalloc peak {peak / 2**20:5.2f} MB, "
            f"peak RSS +{rss_mb() - rss_before:5.2f} MB, stopped after {result.duration:.3f} s, "
            f"{len(result.output):,} characters kept"
        )


def import_guard(n: int) -> None:
    import importlib
    import os
    import tempfile

    from agentlab.tools import protect

    source = tempfile.mkdtemp()
    written = tempfile.mkdtemp()
    sys.path.insert(0, source)
    names = iter(range(10**9))

    def new_import() -> Callable[[], object]:
        """A module file written, ready to be imported for the first time."""
        name = f"_agentlab_bench_{next(names)}"
        with open(os.path.join(source, name + ".py"), "w") as f:
            f.write("X = 1\n")
        importlib.invalidate_caches()
        return lambda: importlib.import_module(name)

    off: list[float] = []
    on: list[float] = []
    try:
        for _ in range(n):
            protect._written.clear()
            off.append(timed(new_import()))
            protect.guard_imports(written)
            on.append(timed(new_import()))
    finally:
        protect._written.clear()
        sys.path.remove(source)
        shutil.rmtree(source)
        shutil.rmtree(written)
    a, b = statistics.median(off) * 1e6, statistics.median(on) * 1e6
    print(f"Import guard, {n} new imports each (median microseconds):")
    print(f"  no folder guarded  {a:7.1f}")
    print(f"  one folder guarded {b:7.1f}   ratio {b / a:.2f}")


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    overhead(n)
    sandbox_cost(max(n // 2, 20))
    memory()
    import_guard(n)
