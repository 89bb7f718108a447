"""Does a live HistoryView stay quick as the history grows?

Python side: appends messages to a HistoryView that already holds 20 messages
and to one that holds 2,000, the way a bound AgentLoop does it (``append`` the
message, then the "append" event), and prints the time per appended message
and the ratio (target <= 2: an append must not redraw what is already there).
Then the same for a LoopView: one stage (Next stage) over a history of 21
messages and one of 2,001, side by side, with the widget state each stage
sends to the browser. Then times building a view of 500 messages from scratch.

Browser side (``--browser``, needs Chromium and JupyterLab as the browser
tests do): the browser's own clock (``performance.now()``) from running a cell
to the last card drawn, for a view of 20 and one of 2,000 messages, side by
side in one notebook; then one append to each; then frame times while the
2,000-message view scrolls (smooth means few frames over 50 ms), once at full
speed and once with the CPU slowed 4x (Chrome's own throttling, as on a slow
school laptop or a busy machine); then the time Chrome spends restyling the
page for each hover over a tool pair (its ``Performance.getMetrics`` count),
and for each hover over a row of a LoopView's pairs table, which lights the
pair's two cards among the 2,000 (``agentlab.views.pins``).

Each is printed next to "before": the same cards in the markup of the previous
version (a ``<style>`` with two ``:has()`` rules per tool pair, pages of 50,
``content-visibility: auto`` on each of the 2,000 cards), opened in a second
notebook once the first is closed, so neither page's rules reach the other.

The messages are tool turns (an assistant text + tool_use, then a user
tool_result), the heaviest cards.

First view (``--first``): how long a student waits for the first LoopView of a
lesson (target: under 3 s after the cell runs). In a fresh interpreter, the
time from ``import agentlab`` to the view built and its display bundle made,
now (the SDK loads in a background thread) and before (the view imported it
first, as the previous version did), side by side; with ``--browser`` also in
Chromium, from running the cell in a fresh kernel to the view's buttons drawn.

    python benchmarks/widgets.py            # Python side only
    python benchmarks/widgets.py --browser  # and the browser's times
    python benchmarks/widgets.py --first [--browser]  # only the first view
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # measure this checkout

import agentlab as al  # noqa: E402
from agentlab.loop import Event  # noqa: E402
from agentlab.views import HistoryView  # noqa: E402
from agentlab.views.render import PAIR_STYLE, STYLE  # noqa: E402

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


@al.tool
def noop(command: str) -> str:
    """Do nothing (the stage's own cost is measured, not a shell's)."""
    return "ok"


STAGES = 40  # stages per LoopView measurement (ten turns)


def per_stage(n: int) -> tuple[float, float]:
    """Seconds per stage of a LoopView (Next stage, as a click runs it) over a
    history of ``n`` messages, and the bytes of widget state it sends per stage."""
    import json

    import ipywidgets as W

    from agentlab.fakeapi.offline import ScriptedClient, tool_use
    from agentlab.views import LoopView

    client = ScriptedClient(lambda request: [tool_use("noop", {"command": "true"})])
    loop = al.AgentLoop(client, history(n), tools=[noop], max_turns=10**6)
    view = LoopView(loop)
    # Left out: the first request, where the client checks the whole history once and
    # the first in a session imports anthropic (about 1.3 s here, at 20 messages as at 2,000)
    view.next_stage()
    sent = [0]
    send = W.Widget._send

    def counting(self: Any, msg: Any, buffers: Any = None) -> None:
        sent[0] += len(json.dumps(msg.get("state", {}), default=str))

    W.Widget._send = counting  # what would go to the browser (there is no comm here)
    try:
        start = time.perf_counter()
        for _ in range(STAGES):
            view.next_stage()
        elapsed = time.perf_counter() - start
    finally:
        W.Widget._send = send
    assert not view.error.value and loop.turns > STAGES // 4
    view.close()
    return elapsed / STAGES, sent[0] / STAGES


# --------------------------------------------------------------------------- in the browser

# The markup of the previous version, for the "before" view.
OLD_PAGE = 50  # cards per page
OLD_CARDBOX = "<style>.al-cardbox{content-visibility:auto;contain-intrinsic-size:auto 44px}</style>"
OLD_PAIR = (
    "<style>.al-root:has(.al-pair-{n}:hover) .al-pair-{n},"
    ".al-root:has(.al-pair-{n} .al-pin:checked) .al-pair-{n}"
    "{{box-shadow:inset 0 0 0 2px var(--al-pair);"
    "background:color-mix(in srgb,var(--al-pair) 9%,var(--al-bg,#fff))}}</style>"
)


def before_view(view: HistoryView) -> Any:
    """The same cards in the previous version's markup: each card in its own box
    with ``content-visibility: auto``, a ``<style>`` with two ``:has()`` rules
    in front of each tool_use, and pages cut every 50 cards."""
    import ipywidgets as W

    def old(card: str) -> str:
        for n in range(1, view.pair_count + 1):
            use = f'<div class="al-block al-pair al-pair-{n} al-s1"'
            if use in card and '<span class="al-kind">tool_use</span>' in card:
                card = card.replace(use, OLD_PAIR.format(n=n) + use, 1)
        return f'<div class="al-cardbox">{card}</div>'

    cards = [old(c) for c in view.cards]
    pages = [W.HTML("".join(cards[k : k + OLD_PAGE])) for k in range(0, len(cards), OLD_PAGE)]
    style = STYLE.replace(PAIR_STYLE, "") + OLD_CARDBOX
    box = W.VBox([W.HTML(style), W.VBox(pages)])
    box.add_class("al-root")
    box.add_class("al-history")
    return box


SETUP = """\
import sys
sys.path[:0] = [{root!r}, {here!r}]  # this checkout's agentlab, and this script
from widgets import history, tool_turn, before_view
import agentlab as al
from agentlab.fakeapi.offline import ScriptedClient
from agentlab.views import HistoryView, LoopView
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

# Scroll the notebook through a big view, one step per frame, from ``start`` px
# below the view's top; frame lengths in ms.
SCROLL_JS = """async ([watch, start]) => {
    const nb = window.jupyterapp.shell.currentWidget.content;
    const view = nb.widgets[watch].node.querySelector('.al-history');
    let box = view.parentElement;
    while (box && box.scrollHeight <= box.clientHeight + 1) box = box.parentElement;
    view.scrollIntoView();
    box.scrollTop += start;
    const frame = () => new Promise(r => requestAnimationFrame(r));
    await frame(); await frame();
    const times = [];
    let last = await frame();
    for (let k = 0; k < 160; k++) {
        box.scrollTop += 250;
        const now = await frame();
        times.push(now - last);
        last = now;
    }
    return times;
}"""
SCROLLED = 160 * 250  # px per measurement: two fit in a view of 2,000 folded cards


# Open 40 folded cards in the middle of a big view; the places of their tool pairs.
PAIRS_JS = """async (watch) => {
    const nb = window.jupyterapp.shell.currentWidget.content;
    const cards = nb.widgets[watch].node.querySelectorAll('details.al-card');
    for (let i = 1001; i < 1041; i++) cards[i].open = true;
    const frame = () => new Promise(r => requestAnimationFrame(r));
    for (let k = 0; k < 3; k++) { cards[1001].scrollIntoView(); await frame(); await frame(); }
    return [...nb.widgets[watch].node.querySelectorAll('details.al-card[open] .al-pair')]
        .map(e => e.getBoundingClientRect()).filter(r => r.top > 40 && r.bottom < 860)
        .map(r => [r.left + 40, r.top + r.height / 2]);
}"""

# Rows of the pairs table in the middle of a LoopView's 2,000 messages: their places.
ROWS_JS = """async (watch) => {
    const nb = window.jupyterapp.shell.currentWidget.content;
    const rows = nb.widgets[watch].node.querySelectorAll('table.al-pairs tr.al-pair');
    const frame = () => new Promise(r => requestAnimationFrame(r));
    for (let k = 0; k < 3; k++) { rows[500].scrollIntoView(); await frame(); await frame(); }
    return [...rows].map(e => e.getBoundingClientRect()).filter(r => r.top > 40 && r.bottom < 860)
        .map(r => [r.left + 40, r.top + r.height / 2]);
}"""

# The same number of frames with nothing to do: what this machine gives anyway.
IDLE_JS = """async () => {
    const frame = () => new Promise(r => requestAnimationFrame(r));
    const times = [];
    let last = await frame();
    for (let k = 0; k < 160; k++) { const now = await frame(); times.push(now - last); last = now; }
    return times;
}"""


def _frames(label: str, frames: list[float]) -> None:
    frames = sorted(frames)
    p95 = frames[int(len(frames) * 0.95)]
    slow = sum(f > 50 for f in frames)
    print(
        f"  {label:<20} median frame {statistics.median(frames):5.1f} ms, "
        f"p95 {p95:6.1f} ms, {slow:3} of {len(frames)} frames over 50 ms"
    )


def browser() -> None:
    here = Path(__file__).resolve().parent
    sys.path.insert(0, str(here.parent))
    from playwright.sync_api import sync_playwright

    from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS, start_lab, stop_lab

    setup = SETUP.format(root=str(here.parent), here=str(here))
    cells = [
        setup,
        "v20 = HistoryView(small); v20",
        "v2000 = HistoryView(large); v2000",
        "small += tool_turn(999_999)[:1]; v20.refresh()",
        "large += tool_turn(999_999)[:1]; v2000.refresh()",
        "lv2000 = LoopView(al.AgentLoop(ScriptedClient([]), large)); lv2000",
    ]
    before = [setup, "old2000 = before_view(HistoryView(large)); old2000"]
    with tempfile.TemporaryDirectory(prefix="agentlab-bench-") as tmp:
        lab = start_lab(Path(tmp))
        pw = sync_playwright().start()
        try:
            chromium = pw.chromium.launch(
                executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
            )
            page = chromium.new_page(viewport={"width": 1280, "height": 900})
            page.set_default_timeout(300_000)
            cdp = page.context.new_cdp_session(page)
            cdp.send("Performance.enable")
            ms = lambda run, watch, want: page.evaluate(MEASURE_JS, [run, watch, want])  # noqa: E731

            def style_per_hover(spots: list[tuple[float, float]]) -> float:
                """The browser's style time per hover over each spot, three rounds, CPU slowed 4x."""
                cdp.send("Emulation.setCPUThrottlingRate", {"rate": 4})
                style = _style_seconds(cdp)
                for _ in range(3):
                    for x, y in spots:
                        page.mouse.move(x, y)
                        page.wait_for_timeout(30)
                per_hover = (_style_seconds(cdp) - style) / max(1, 3 * len(spots))
                cdp.send("Emulation.setCPUThrottlingRate", {"rate": 1})
                page.mouse.move(1, 1)
                return per_hover

            def frames_and_hovers(watch: int) -> tuple[dict[int, list[float]], float]:
                frames = {}
                for slowdown, start in ((1, 0), (4, SCROLLED)):  # each pass scrolls new ground
                    cdp.send("Emulation.setCPUThrottlingRate", {"rate": slowdown})
                    frames[slowdown] = page.evaluate(SCROLL_JS, [watch, start])
                cdp.send("Emulation.setCPUThrottlingRate", {"rate": 1})
                return frames, style_per_hover(page.evaluate(PAIRS_JS, watch))

            # the new views, then (the first notebook closed, its styles gone) the old markup
            lab.write_notebook("bench.ipynb", cells)
            lab.open_notebook(page, "bench.ipynb")
            ms(0, 0, 0)  # imports
            opens = [[ms(1, 1, 21), ms(2, 2, 2001)] for _ in range(REPEATS)]
            open20, open2000 = (statistics.median(column) for column in zip(*opens))
            add20, add2000 = ms(3, 1, 22), ms(4, 2, 2002)
            idle = {}
            for slowdown in (1, 4):
                cdp.send("Emulation.setCPUThrottlingRate", {"rate": slowdown})
                idle[slowdown] = page.evaluate(IDLE_JS)
            now, now_hover = frames_and_hovers(2)
            ms(5, 5, 2002)  # a LoopView of the same history: hover rows of its pairs table
            rows = page.evaluate(ROWS_JS, 5)
            row_hover = style_per_hover(rows)
            page.evaluate("() => window.jupyterapp.commands.execute('application:close-all')")
            lab.write_notebook("before.ipynb", before)
            lab.open_notebook(page, "before.ipynb")
            ms(0, 0, 0)
            old2000 = statistics.median(ms(1, 1, 2001) for _ in range(REPEATS))
            old, old_hover = frames_and_hovers(1)
            chromium.close()
        finally:
            pw.stop()
            stop_lab(lab)
    print(
        "\nin Chromium (performance.now(), from running the cell to the last card drawn;"
        f" opening: median of {REPEATS}):"
    )
    print(f"open a view of   21 messages: {open20:8.0f} ms")
    print(f"open a view of 2001 messages: {open2000:8.0f} ms   ratio {open2000 / open20:.1f}")
    print(f"  the same, before:           {old2000:8.0f} ms   ratio {old2000 / open20:.1f}")
    print(f"append one message,   21: {add20:8.0f} ms")
    print(
        f"append one message, 2001: {add2000:8.0f} ms   ratio {add2000 / add20:.2f}  (target <= 2)"
    )
    for slowdown in (1, 4):
        print(f"frames while the 2001-message view scrolls, CPU slowed {slowdown}x by Chrome:")
        _frames("nothing to do:", idle[slowdown])
        _frames("scrolling:", now[slowdown])
        _frames("scrolling, before:", old[slowdown])
    print("style recalculation per hover over a tool pair (CPU slowed 4x, Chrome's own count):")
    print(f"  now {now_hover * 1e3:.1f} ms, before {old_hover * 1e3:.1f} ms")
    print(
        f"  a row of a LoopView's pairs table, lighting its two cards among 2002: "
        f"{row_hover * 1e3:.1f} ms ({len(rows)} rows)"
    )


def _style_seconds(cdp: Any) -> float:
    metrics = cdp.send("Performance.getMetrics")["metrics"]
    return float(next(m["value"] for m in metrics if m["name"] == "RecalcStyleDuration"))


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
    per_stage(20)  # warm up
    small_views, large_views = [], []
    for _ in range(REPEATS):
        small_views.append(per_stage(20))
        large_views.append(per_stage(2000))
    s, big = (statistics.median(x[0] for x in v) for v in (small_views, large_views))
    s_bytes, big_bytes = (statistics.median(x[1] for x in v) for v in (small_views, large_views))
    print(
        f"one stage of a LoopView,   21 messages: {s * 1e3:7.3f} ms, {s_bytes / 1e3:6.1f} kB sent"
    )
    print(
        f"one stage of a LoopView, 2001 messages: {big * 1e3:7.3f} ms, {big_bytes / 1e3:6.1f} kB sent"
    )
    print(f"ratio 2001/21: {big / s:.2f} in time, {big_bytes / s_bytes:.2f} in bytes")
    builds = [build(500) for _ in range(3)]
    print(f"build a view of 500 messages: {statistics.median(builds):.2f} s")


# --------------------------------------------------------------------------- the first view

FIRST_CELL = """\
import time
_t0 = time.perf_counter()
{before}import agentlab as al
from IPython.core.formatters import DisplayFormatter
loop = al.AgentLoop(al.connect(quiet=True), "How many Python files are in this folder?")
view = al.LoopView(loop)
DisplayFormatter().format(view)
print(f"{{time.perf_counter() - _t0:.3f}}")
"""
BEFORE = "import anthropic.types  # what the previous version's view did first\n"


def first_view_python(before: bool) -> float:
    """Seconds from ``import agentlab`` to a LoopView ready to show, in a fresh interpreter."""
    import os
    import subprocess

    code = FIRST_CELL.format(before=BEFORE if before else "")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    env.pop("ANTHROPIC_API_KEY", None)
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    return float(out.stdout.split()[-1])


# Run the only cell of a notebook just opened (a fresh kernel); the browser's time until
# the view's Next stage button is drawn.
FIRST_JS = """async () => {
    const nb = window.jupyterapp.shell.currentWidget.content;
    nb.activeCellIndex = 0;
    const frame = () => new Promise(r => requestAnimationFrame(r));
    const t0 = performance.now();
    window.jupyterapp.commands.execute('notebook:run-cell');
    const drawn = () => nb.widgets[0].node.querySelector('.al-loop .jupyter-button');
    while (!drawn()) await frame();
    await frame();
    return performance.now() - t0;
}"""


def first_view_browser() -> tuple[float, float]:
    """Milliseconds to the first LoopView in Chromium, now and before (fresh kernels)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from playwright.sync_api import sync_playwright

    from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS, start_lab, stop_lab

    cell = "import agentlab as al\nal.LoopView(al.AgentLoop(al.connect(quiet=True), 'Count.'))"
    times: dict[bool, list[float]] = {False: [], True: []}
    with tempfile.TemporaryDirectory(prefix="agentlab-bench-") as tmp:
        lab = start_lab(Path(tmp))
        pw = sync_playwright().start()
        try:
            chromium = pw.chromium.launch(
                executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
            )
            page = chromium.new_page(viewport={"width": 1280, "height": 900})
            page.set_default_timeout(120_000)
            for k in range(3):
                for before in (False, True):  # side by side, each in a kernel of its own
                    name = f"first{k}{int(before)}.ipynb"
                    lab.write_notebook(name, [(BEFORE if before else "") + cell])
                    lab.open_notebook(page, name)
                    times[before].append(page.evaluate(FIRST_JS))
                    page.evaluate(
                        "async () => { await window.jupyterapp.serviceManager.kernels.shutdownAll();"
                        " await window.jupyterapp.commands.execute('application:close-all'); }"
                    )
            chromium.close()
        finally:
            pw.stop()
            stop_lab(lab)
    return statistics.median(times[False]), statistics.median(times[True])


def first() -> None:
    runs = [(first_view_python(False), first_view_python(True)) for _ in range(REPEATS)]
    now, before = (statistics.median(x) for x in zip(*runs))
    print(f"first LoopView, fresh interpreter (import to display bundle), median of {REPEATS}:")
    print(f"  now {now:.2f} s, before {before:.2f} s   ratio {now / before:.2f}  (target < 3 s)")
    if "--browser" in sys.argv:
        ms_now, ms_before = first_view_browser()
        print("first LoopView in Chromium (run the cell in a fresh kernel -> buttons drawn):")
        print(
            f"  now {ms_now / 1e3:.2f} s, before {ms_before / 1e3:.2f} s   "
            f"ratio {ms_now / ms_before:.2f}  (target < 3 s)"
        )


if __name__ == "__main__":
    if "--first" in sys.argv:
        first()
    else:
        main()
        if "--browser" in sys.argv:
            browser()
