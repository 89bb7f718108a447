"""Does a live HistoryView stay quick as the history grows?

Appends messages to a HistoryView that already holds 20 messages and to one
that holds 2,000, the way a bound AgentLoop does it (``append`` the message,
then the "append" event), and prints the time per appended message and the
ratio (target <= 2: an append must not redraw what is already there). Then
times building a view of 500 messages from scratch.

The appended messages are tool turns (an assistant text + tool_use, then a
user tool_result), the heaviest cards. No kernel is attached, so this
measures the Python side: card widgets, HTML, and the one ``children`` tuple
each append reassigns.

    python benchmarks/widgets.py
"""

from __future__ import annotations

import statistics
import time
from typing import Any

import agentlab as al
from agentlab.loop import Event
from agentlab.widgets import HistoryView

APPENDS = 200  # messages appended per measurement
REPEATS = 5


def tool_turn(k: int) -> list[dict[str, Any]]:
    tid = f"toolu_{k:05d}"
    return [
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": f"Step {k}: let me **check** with `ls`."},
                {
                    "type": "tool_use",
                    "id": tid,
                    "name": "bash",
                    "input": {"command": f"ls -la dir{k}"},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": tid, "content": f"file{k}.txt\n" * 5}
            ],
        },
    ]


def history(n: int) -> list[dict[str, Any]]:
    """A valid history of ``n`` (rounded up to odd) messages: a task, then tool turns."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Count the files, please."}]
    for k in range(n // 2):
        messages += tool_turn(k)
    return messages


def per_append(n: int) -> float:
    """Seconds per appended message for a view that starts with ``n`` messages."""
    messages = history(n)
    view = HistoryView(messages)
    new = [m for k in range(APPENDS // 2) for m in tool_turn(100_000 + k)]
    start = time.perf_counter()
    for message in new:
        al.append(messages, message)
        view._on_event(Event("append", {"message": message, "index": len(messages) - 1}))
    elapsed = time.perf_counter() - start
    assert len(view.cards) == len(messages)
    view.close()
    return elapsed / len(new)


def build(n: int) -> float:
    messages = history(n)
    start = time.perf_counter()
    view = HistoryView(messages)
    elapsed = time.perf_counter() - start
    assert len(view.cards) == len(messages)
    view.close()
    return elapsed


def main() -> None:
    per_append(20)  # warm up: imports, markdown parser
    small, large = [], []
    for _ in range(REPEATS):  # side by side, so load on the machine hits both alike
        small.append(per_append(20))
        large.append(per_append(2000))
    s, big = statistics.median(small), statistics.median(large)
    print(f"append one message, view of   20 messages: {s * 1e3:7.3f} ms")
    print(f"append one message, view of 2000 messages: {big * 1e3:7.3f} ms")
    print(f"ratio 2000/20: {big / s:.2f}  (target <= 2)")
    builds = [build(500) for _ in range(3)]
    print(f"build a view of 500 messages: {statistics.median(builds):.2f} s")


if __name__ == "__main__":
    main()
