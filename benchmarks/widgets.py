"""Does a live HistoryView stay quick as the history grows?

Python side: appends messages to a HistoryView that already holds 20 messages
and to one that holds 2,000, the way a bound AgentLoop does it (``append`` the
message, then the "append" event), and prints the time per appended message
and the ratio (target <= 2: an append must not redraw what is already there).
Then times building a view of 500 messages from scratch.

Browser side (``--browser``, needs Chromium and JupyterLab as the browser
tests do): the browser's own clock (``performance.now()``) from running a cell
to the last card drawn, for a view of 20 and one of 2,000 messages, side by
side in one notebook; then one append to each; then frame times while the
2,000-message view scrolls (smooth means few frames over 50 ms).

The messages are tool turns (an assistant text + tool_use, then a user
tool_result), the heaviest cards.

    python benchmarks/widgets.py            # Python side only
    python benchmarks/widgets.py --browser  # and the browser's times
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path
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


# --------------------------------------------------------------------------- in the browser

SETUP = """\
import sys
sys.path[:0] = [{root!r}, {here!r}]  # this checkout's agentlab, and this script
from widgets import history, tool_turn
import agentlab as al
from agentlab.widgets import HistoryView
small, large = history(20), history(2000)
"""

# Run cell ``run`` and wait (one animation frame at a time) until cell ``watch``
# shows ``want`` cards, then for the frame after; the time is the browser's own.
MEASURE_JS = """async ([run, watch, want]) => {
    const nb = window.jupyterapp.shell.currentWidget.content;
    nb.activeCellIndex = run;
    const frame = () => new Promise(r => requestAnimationFrame(r));
    const t0 = performance.now();
    window.jupyterapp.commands.execute('notebook:run-cell');
    const count = () => nb.widgets[watch].node.querySelectorAll('.al-card').length;
    while (count() < want) await frame();
    await frame(); await frame();
    return performance.now() - t0;
}"""

# Scroll the notebook through the big view, one step per frame; frame lengths in ms.
SCROLL_JS = """async (watch) => {
    const nb = window.jupyterapp.shell.currentWidget.content;
    const view = nb.widgets[watch].node.querySelector('.al-history');
    let box = view.parentElement;
    while (box && box.scrollHeight <= box.clientHeight + 1) box = box.parentElement;
    view.scrollIntoView();
    const frame = () => new Promise(r => requestAnimationFrame(r));
    const times = [];
    let last = await frame();
    for (let k = 0; k < 240; k++) {
        box.scrollTop += 250;
        const now = await frame();
        times.push(now - last);
        last = now;
    }
    return times;
}"""


# The same number of frames with nothing to do: what this machine gives anyway.
IDLE_JS = """async () => {
    const frame = () => new Promise(r => requestAnimationFrame(r));
    const times = [];
    let last = await frame();
    for (let k = 0; k < 240; k++) { const now = await frame(); times.push(now - last); last = now; }
    return times;
}"""


def _frames(label: str, frames: list[float]) -> None:
    frames = sorted(frames)
    p95 = frames[int(len(frames) * 0.95)]
    slow = sum(f > 50 for f in frames)
    print(
        f"{label}: median frame {statistics.median(frames):.1f} ms, "
        f"p95 {p95:.1f} ms, {slow} of {len(frames)} frames over 50 ms"
    )


def browser() -> None:
    here = Path(__file__).resolve().parent
    sys.path.insert(0, str(here.parent))
    from playwright.sync_api import sync_playwright

    from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS, start_lab, stop_lab

    cells = [
        SETUP.format(root=str(here.parent), here=str(here)),
        "v20 = HistoryView(small); v20",
        "v2000 = HistoryView(large); v2000",
        "small += tool_turn(999_999)[:1]; v20.refresh()",
        "large += tool_turn(999_999)[:1]; v2000.refresh()",
    ]
    with tempfile.TemporaryDirectory(prefix="agentlab-bench-") as tmp:
        lab = start_lab(Path(tmp))
        pw = sync_playwright().start()
        try:
            chromium = pw.chromium.launch(
                executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
            )
            page = chromium.new_page(viewport={"width": 1280, "height": 900})
            page.set_default_timeout(300_000)
            lab.write_notebook("bench.ipynb", cells)
            lab.open_notebook(page, "bench.ipynb")
            ms = lambda run, watch, want: page.evaluate(MEASURE_JS, [run, watch, want])  # noqa: E731
            ms(0, 0, 0)  # imports
            open20, open2000 = ms(1, 1, 21), ms(2, 2, 2001)
            add20, add2000 = ms(3, 1, 22), ms(4, 2, 2002)
            idle = page.evaluate(IDLE_JS)
            frames = page.evaluate(SCROLL_JS, 2)
            chromium.close()
        finally:
            pw.stop()
            stop_lab(lab)
    print("\nin Chromium (performance.now(), from running the cell to the last card drawn):")
    print(f"open a view of   21 messages: {open20:8.0f} ms")
    print(f"open a view of 2001 messages: {open2000:8.0f} ms   ratio {open2000 / open20:.1f}")
    print(f"append one message,   21: {add20:8.0f} ms")
    print(
        f"append one message, 2001: {add2000:8.0f} ms   ratio {add2000 / add20:.2f}  (target <= 2)"
    )
    _frames("frames with nothing to do (this machine)", idle)
    _frames("frames while scrolling the 2001-message view", frames)


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
    if "--browser" in sys.argv:
        browser()
