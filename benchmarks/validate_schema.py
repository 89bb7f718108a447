"""What checking the API's schema adds to ``validate`` and ``check_next``.

Side by side in one run: the full checks, and the same with the shape rule
(``agentlab.rules``: the quick table, else the walk of the SDK's types) switched
off, on a 150-message history and on appending one tool-result message. Prints
times and ratios; no thresholds.

    PYTHONPATH=. python benchmarks/validate_schema.py
"""

from __future__ import annotations

import time
from unittest import mock

import agentlab as al
from agentlab import rules
from agentlab.fakeapi.offline import make_message, text, tool_use
from agentlab.history import check_next, validate


def sample() -> tuple[list, dict]:
    reply = make_message(
        [
            text("Let me look."),
            tool_use("bash", {"command": "ls"}, id="t1"),
            tool_use("bash", {"command": "date"}, id="t2"),
        ]
    )
    results = {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "a.py\nb.py\n" * 20},
            {"type": "tool_result", "tool_use_id": "t2", "content": "Mon Nov 30"},
        ],
    }
    h: list = [{"role": "user", "content": "go"}]
    for _ in range(75):
        al.append(h, reply)
        al.append(h, results)
    return h[:-1], results


def timed(fn, n: int) -> float:
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - start) / n


def main() -> None:
    h, results = sample()
    validate(h)  # warm up: the SDK's types are read once
    runs = {}
    for label, patch in [
        ("with schema", None),
        ("without", mock.patch.object(rules, "_shape_problems", lambda i, m: [])),
    ]:
        if patch:
            patch.start()
        runs[label] = (
            timed(lambda: validate(h, pending_ok=True), 30),
            timed(lambda: check_next(h, results), 3000),
        )
        if patch:
            patch.stop()
    (v1, c1), (v0, c0) = runs["with schema"], runs["without"]
    print(
        f"validate, {len(h)} messages:  {v1 * 1e3:6.2f} ms with schema, {v0 * 1e3:6.2f} ms without ({v1 / v0:.1f}x)"
    )
    print(
        f"check_next, one message:   {c1 * 1e6:6.1f} us with schema, {c0 * 1e6:6.1f} us without ({c1 / c0:.1f}x)"
    )


if __name__ == "__main__":
    main()
