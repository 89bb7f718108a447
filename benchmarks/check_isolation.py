"""What running the scenarios in a forked process costs ``check``.

Runs every exercise's reference solution through ``check`` three ways, side by
side: in a forked process with the student's code in a PID namespace of its
own (the default where the system allows one), forked without it (where it is
refused), and in threads only (what ``check`` falls back to where there is no
``fork``). All rebuild each scenario. Prints the times and their ratios; no
thresholds.

    PYTHONPATH=. python benchmarks/check_isolation.py
"""

from __future__ import annotations

import time
from unittest import mock

import agentlab.exercises
from agentlab.exercises import check, list_exercises, reference, sandbox


def run_all() -> tuple[float, int]:
    start = time.perf_counter()
    n = 0
    for exercise in list_exercises():
        report = check(exercise.name, getattr(reference, exercise.name))
        assert report.passed, report
        n += len(report.results)
    return time.perf_counter() - start, n


def main() -> None:
    run_all()  # warm up: imports, the SDK's types
    rounds = 3
    forked = plain = threaded = 0.0
    for _ in range(rounds):
        seconds, n = run_all()
        forked += seconds
        with mock.patch.object(sandbox, "NAMESPACES", False):
            seconds, _ = run_all()
        plain += seconds
        with mock.patch.object(agentlab.exercises, "can_fork", lambda: False):
            seconds, _ = run_all()
        threaded += seconds
    print(f"scenarios per round:            {n}")
    print(f"forked, PID namespace:         {forked / rounds * 1000:7.0f} ms per round")
    print(f"forked, no namespace:          {plain / rounds * 1000:7.0f} ms per round")
    print(f"thread only (no fork):          {threaded / rounds * 1000:7.0f} ms per round")
    print(
        f"cost of isolation:              {forked / threaded:7.2f}x "
        f"({(forked - threaded) / rounds / n * 1000:.1f} ms per scenario)"
    )
    print(f"namespace vs none:              {forked / plain:7.2f}x")


if __name__ == "__main__":
    main()
