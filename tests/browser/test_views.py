"""The views on real screens (JupyterLab + Chromium): layout, theme, state, folding.

Each test writes a notebook that builds a view on an offline ScriptedClient,
runs it in a real kernel and looks at what Chromium drew: sizes from
``getBoundingClientRect``, colours from ``getComputedStyle`` (contrast worked
out as WCAG 2 defines it), and clicks that go to the kernel and back.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.browser

IMAGES = Path(__file__).resolve().parents[2] / "docs" / "images"
LESSONS = Path(__file__).resolve().parents[2] / "agentlab" / "notebooks"
FIRST_REQUEST = 30_000  # ms: a first request may be slow on a busy machine

PRELUDE = """\
import tempfile
import agentlab as al
from agentlab.fakeapi.offline import ScriptedClient, text, tool_use
from agentlab.tools.policy import Verdict

workdir = tempfile.mkdtemp(prefix="agentlab-browser-")
"""

# A run that shows every kind of row: thinking, an edited call, a denied one, a
# failing one, tokens and totals, and a turn-limit stop with its Continue button.
EVERYTHING = """\
signature = "EqQBCkgIARAB" + "x" * 300
client = ScriptedClient(lambda request: [
    {"type": "thinking", "thinking": "", "signature": signature},
    text("Let me check with **bash**."),
    tool_use("bash", {"command": "ls; false"}),
])
loop = al.AgentLoop(client, "Look around.", tools=[al.bash_tool(cwd=workdir)], max_turns=3)
view = al.LoopView(loop, confirm=True)
view.run_to_end()
view.answer(Verdict.edit({"command": "echo edited"}))
view.answer(Verdict.deny("not now"))
view.answer(Verdict.approve())
view
"""

WAITING = """\
client2 = ScriptedClient([[text("I'll list the files."), tool_use("bash", {"command": "ls -la"})], "Done."])
loop2 = al.AgentLoop(client2, "What is here?", tools=[al.bash_tool(cwd=workdir)])
view2 = al.LoopView(loop2, confirm=True)
view2.run_turn()  # stops at the approval question
view2
"""

CONTRAST_JS = """(root) => {
    const canvas = document.createElement('canvas');
    canvas.width = canvas.height = 1;
    const ctx = canvas.getContext('2d', {willReadFrequently: true});
    const rgba = (css) => {  // any CSS colour (rgb(), color(srgb ...), color-mix) as [r, g, b, a]
        ctx.clearRect(0, 0, 1, 1);
        ctx.fillStyle = 'rgba(0,0,0,0)';
        ctx.fillStyle = css;
        ctx.fillRect(0, 0, 1, 1);
        const d = ctx.getImageData(0, 0, 1, 1).data;
        return [d[0], d[1], d[2], d[3] / 255];
    };
    const over = (top, under) => {
        const a = top[3] + under[3] * (1 - top[3]);
        return [0, 1, 2].map(i => (top[i] * top[3] + under[i] * under[3] * (1 - top[3])) / a).concat([a]);
    };
    const lum = (c) => {
        const f = v => { v /= 255; return v <= 0.04045 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
        return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]);
    };
    const ratio = (a, b) => {
        const [hi, lo] = [lum(a), lum(b)].sort((p, q) => q - p);
        return (hi + 0.05) / (lo + 0.05);
    };
    const backdrop = (el) => {  // the opaque colour behind el: its backgrounds, composited
        const layers = [];
        for (let e = el; e; e = e.parentElement) {
            const c = rgba(getComputedStyle(e).backgroundColor);
            if (c[3] > 0) layers.push(c);
            if (c[3] >= 1) break;
        }
        let bg = [255, 255, 255, 1];
        for (let i = layers.length - 1; i >= 0; i--) bg = over(layers[i], bg);
        return bg;
    };
    const out = [];
    let checked = 0;
    for (const el of root.querySelectorAll('*')) {
        const own = [...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
        if (!own || !el.getClientRects().length || el.closest('button:disabled, style, title')) continue;
        const s = getComputedStyle(el);
        if (s.visibility === 'hidden') continue;
        let fg, bg;
        if (el instanceof SVGElement) {
            bg = backdrop(el.ownerSVGElement.parentElement);
            const shape = el.parentElement.querySelector(':scope > rect, :scope > polygon');
            if (shape && el.parentElement.dataset.node) bg = over(rgba(getComputedStyle(shape).fill), bg);
            fg = rgba(s.fill);
        } else {
            bg = backdrop(el);
            fg = rgba(s.color);
        }
        fg = over(fg, bg);
        checked += 1;
        const r = ratio(fg, bg);
        if (r < 4.5) out.push({text: el.textContent.trim().slice(0, 40), ratio: Math.round(r * 100) / 100,
                               fg: s.color, cls: String(el.className.baseVal ?? el.className)});
    }
    return {checked, low: out};
}"""


def sidebar(page: Any, open_: bool) -> None:
    if open_:
        page.evaluate("() => window.jupyterapp.shell.activateById('filebrowser')")
        page.evaluate("() => window.jupyterapp.shell.expandLeft()")
    else:
        page.evaluate("() => window.jupyterapp.shell.collapseLeft()")
    page.wait_for_timeout(400)  # Lab lays the panels out again


def box(locator: Any) -> dict[str, float]:
    b = locator.bounding_box()
    assert b is not None, "not on the page"
    return dict(b)


@pytest.mark.parametrize("theme", ["JupyterLab Light", "JupyterLab Dark"])
def test_text_contrast_reaches_wcag_aa_in_light_and_dark(lab: Any, page: Any, theme: str) -> None:
    from playwright.sync_api import expect

    name = f"contrast_{theme.split()[-1].lower()}.ipynb"
    panel = lab.run_cells(page, name, [PRELUDE, EVERYTHING, WAITING])
    page.evaluate(
        "(t) => window.jupyterapp.commands.execute('apputils:change-theme', {theme: t})", theme
    )
    light = "true" if theme.endswith("Light") else "false"
    page.wait_for_function(f"() => document.body.dataset.jpThemeLight === '{light}'")
    page.wait_for_timeout(500)
    views = panel.locator(".al-loop")
    expect(views).to_have_count(2)
    expect(views.nth(0).locator(".al-ended")).to_be_visible()
    expect(views.nth(1).locator(".al-approval")).to_be_visible()
    for k in range(2):
        report = views.nth(k).evaluate(CONTRAST_JS)
        assert report["checked"] > 40, report
        assert report["low"] == [], f"{theme}: text under 4.5:1: {report['low']}"
    if light == "false":
        views.nth(0).screenshot(path=str(IMAGES / "loopview-dark.png"))
        # the theme is a setting of the shared Lab: put the default back for later tests
        page.evaluate(
            "() => window.jupyterapp.commands.execute('apputils:change-theme', "
            "{theme: 'JupyterLab Light'})"
        )
        page.wait_for_function("() => document.body.dataset.jpThemeLight === 'true'")


WIDTHS = [(700, True), (700, False), (900, True), (900, False), (1400, True), (1400, False)]


def test_layout_at_700_900_and_1400_px_with_the_sidebar_open_and_closed(
    lab: Any, page: Any
) -> None:
    from playwright.sync_api import expect

    panel = lab.run_cells(page, "layout.ipynb", [PRELUDE, WAITING])
    view = panel.locator(".al-loop")
    approve = view.get_by_role("button", name="Approve")
    for width, open_ in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        sidebar(page, open_)
        where = f"{width}px, sidebar {'open' if open_ else 'closed'}"
        cell = box(panel.locator(".jp-OutputArea-output:has(.al-loop)"))
        approve.scroll_into_view_if_needed()
        expect(approve).to_be_visible()
        b = box(approve)
        assert b["width"] > 40 and b["x"] >= cell["x"] - 1, where
        assert b["x"] + b["width"] <= cell["x"] + cell["width"] + 1, where
        # the approval panel sits right under the buttons, not below the history
        assert box(view.locator(".al-approval"))["y"] < box(view.locator(".al-history"))["y"], where
        history = box(view.locator(".al-history"))
        assert history["width"] >= min(250, cell["width"] - 40), where
        overflow = view.evaluate("(v) => v.scrollWidth - v.clientWidth")
        assert overflow <= 1, f"{where}: the view is {overflow}px wider than its cell"
        # the pairs table scrolls in its own box, never wider than the view's column
        table = box(view.locator(".al-tablebox"))
        right = box(view.locator(".al-columns"))
        assert table["x"] + table["width"] <= right["x"] + right["width"] + 1, where
    page.set_viewport_size({"width": 900, "height": 1700})  # the picture for the docs
    sidebar(page, True)
    view.evaluate("(v) => v.scrollIntoView()")
    view.screenshot(path=str(IMAGES / "loopview-900-sidebar.png"))


def test_stop_during_approval_hides_the_panel(lab: Any, page: Any) -> None:
    from playwright.sync_api import expect

    panel = lab.run_cells(page, "stop_approval.ipynb", [PRELUDE, WAITING])
    view = panel.locator(".al-loop")
    approval = view.locator(".al-approval")
    expect(approval).to_be_visible()
    view.get_by_role("button", name="Stop").click()
    expect(approval).to_be_hidden()
    expect(view.locator(".al-status").first).to_be_visible()
    expect(view).to_contain_text("Stopped while waiting for approval: the tool call did not run.")
    expect(view.get_by_role("button", name="Next stage")).to_be_enabled()
    view.get_by_role("button", name="Next stage").click()  # asks again
    expect(approval).to_be_visible()


def test_an_edit_shows_what_really_ran_and_an_unchanged_one_is_an_approval(
    lab: Any, page: Any
) -> None:
    from playwright.sync_api import expect

    two = WAITING.replace('"Done."]', '[tool_use("bash", {"command": "echo two"})], "Done."]')
    panel = lab.run_cells(page, "edits.ipynb", [PRELUDE, two])
    view = panel.locator(".al-loop")
    approval = view.locator(".al-approval")
    approval.locator("textarea").fill("echo edited")
    approval.get_by_role("button", name="Run edited").click()
    expect(approval).to_be_hidden()  # the turn runs on: execute, append
    use_card = view.locator(".al-card-assistant").first
    expect(use_card).to_contain_text("what ran: echo edited", timeout=FIRST_REQUEST)
    table = view.locator("table.al-pairs")
    expect(table).to_contain_text("edited echo edited (the model asked for: ls -la)")

    view.get_by_role("button", name="Run turn").click()  # the second call: asks again
    expect(approval).to_be_visible(timeout=FIRST_REQUEST)
    approval.get_by_role("button", name="Run edited").click()  # the text is unchanged
    expect(approval).to_be_hidden()
    expect(table.locator("tr")).to_have_count(3)
    second = table.locator("tr").nth(2)
    expect(second).to_contain_text("echo two")
    expect(second).not_to_contain_text("edited")


LONG_ANSWER = """\
answer = "\\n".join(f"line {i}: file_{i}.txt" for i in range(200))
client3 = ScriptedClient([answer])
loop3 = al.AgentLoop(client3, "List everything.", tools=[al.bash_tool(cwd=workdir)])
view3 = al.LoopView(loop3)
view3.run_to_end()
view3
"""


def test_a_200_line_answer_is_folded_and_opens_on_click(lab: Any, page: Any) -> None:
    from playwright.sync_api import expect

    panel = lab.run_cells(page, "long_answer.ipynb", [PRELUDE, LONG_ANSWER])
    view = panel.locator(".al-loop")
    card = view.locator(".al-card-assistant")
    more = card.locator("summary", has_text="show 180 more lines")
    expect(more).to_be_visible()
    folded = box(card)["height"]
    assert folded < 700, f"a 200-line answer is {folded:.0f}px tall folded"
    expect(card).to_contain_text("line 19: file_19.txt")
    expect(card.get_by_text("line 199: file_199.txt")).to_be_hidden()
    more.click()
    expect(card.get_by_text("line 199: file_199.txt")).to_be_visible()
    assert box(card)["height"] > 2 * folded


def test_enter_in_the_ask_box_sends_and_runs(lab: Any, page: Any) -> None:
    from playwright.sync_api import expect

    cell = """\
client4 = ScriptedClient(lambda request: "Answer to: " + request["messages"][-1]["content"])
loop4 = al.AgentLoop(client4, "Hello?", tools=[al.bash_tool(cwd=workdir)])
view4 = al.LoopView(loop4)
view4.run_to_end()
view4
"""
    panel = lab.run_cells(page, "ask_enter.ipynb", [PRELUDE, cell])
    view = panel.locator(".al-loop")
    ask = view.get_by_placeholder("Ask a follow-up question…")
    ask.fill("And then?")
    ask.press("Enter")
    expect(view.locator(".al-card-assistant")).to_have_count(2, timeout=FIRST_REQUEST)
    expect(view.locator(".al-card-assistant").nth(1)).to_contain_text("Answer to: And then?")
    expect(ask).to_have_value("")
    # the buttons work from the keyboard: Enter presses the one in focus, Tab moves on
    reset = view.get_by_role("button", name="Reset")
    reset.focus()
    page.keyboard.press("Enter")
    expect(view.locator(".al-card")).to_have_count(1)
    expect(view.get_by_role("button", name="Run to end")).to_be_enabled()
    page.keyboard.press("Shift+Tab")
    # waits for the focus to settle (the redraw after Reset can take a moment): no one-off read
    expect(view.get_by_role("button", name="Run to end")).to_be_focused()
    page.keyboard.press("Space")
    expect(view.locator(".al-card")).to_have_count(2, timeout=FIRST_REQUEST)


def test_copy_history_as_json_reaches_the_clipboard(lab: Any, page: Any) -> None:
    import json

    from playwright.sync_api import expect

    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    cell = LONG_ANSWER.replace("200", "3")
    panel = lab.run_cells(
        page,
        "copy.ipynb",
        [PRELUDE, cell, "import json; print(len(json.dumps(loop3.messages)))"],
    )
    view = panel.locator(".al-loop")
    view.get_by_role("button", name="Copy history as JSON").click()
    expect(view).to_contain_text("Copied 2 messages")
    text = page.evaluate("() => navigator.clipboard.readText()")
    messages = json.loads(text)
    assert [m["role"] for m in messages] == ["user", "assistant"]
    assert "file_2.txt" in messages[1]["content"][0]["text"]


def test_chinese_lesson_02_renders_with_a_cjk_font(lab: Any, page: Any) -> None:
    from playwright.sync_api import expect

    source = LESSONS / "zh" / "02_stepping_through.ipynb"
    target = lab.root / "zh02.ipynb"
    shutil.copy(source, target)
    panel = lab.open_notebook(page, "zh02.ipynb")
    page.set_viewport_size({"width": 1360, "height": 1100})
    sidebar(page, False)
    lab.run_all(page)
    view = panel.locator(".al-loop").first
    expect(view).to_be_visible()
    expect(view).to_contain_text(re.compile("下一阶段"))
    has_font = page.evaluate("() => document.fonts.check('16px \"Noto Sans CJK SC\"', '下一阶段')")
    assert has_font, "no CJK font: install fonts-noto-cjk (.ci/install-browser)"
    view.scroll_into_view_if_needed()
    view.screenshot(path=str(IMAGES / "zh-02-loopview.png"))


LONG_HISTORY = """\
from agentlab.views import HistoryView

messages = [{"role": "user", "content": "List the folders two at a time."}]
for k in range(TURNS):  # turns of two parallel calls: 2 * TURNS + 1 messages
    uses = [tool_use("bash", {"command": f"ls {k}{c}"}, id=f"toolu_{k:03d}{c}") for c in "ab"]
    results = [{"type": "tool_result", "tool_use_id": u["id"], "content": "x"} for u in uses]
    messages += [{"role": "assistant", "content": uses}, {"role": "user", "content": results}]
hv = HistoryView(messages)
hv
"""


def test_a_long_history_shares_one_stylesheet_and_hover_still_lights_the_pair(
    lab: Any, page: Any
) -> None:
    """What smooth scrolling rests on (timings: benchmarks/widgets.py --browser):
    one stylesheet for the whole view, not a <style> per pair; content-visibility
    on the pages of cards, not on each card. And hovering still lights a pair."""
    from playwright.sync_api import expect

    from agentlab.views.history_view import PAGE

    cells = [PRELUDE, LONG_HISTORY.replace("TURNS", str(PAGE))]
    panel = lab.run_cells(page, "long_history.ipynb", cells)
    view = panel.locator(".al-history")
    expect(view.locator(".al-card")).to_have_count(2 * PAGE + 1)
    # (querySelectorAll, as Playwright's locators also count the <style> that
    # Chromium puts in the shadow root of each <details>)
    assert view.evaluate("(e) => e.querySelectorAll('style').length") == 1
    pages = view.locator(".al-page")
    assert pages.count() == 2  # PAGE + 1 cards, then PAGE
    visibility = "(e) => getComputedStyle(e).contentVisibility"
    assert pages.first.evaluate(visibility) == "auto"
    assert pages.last.evaluate(visibility) == "visible"  # the current turn: always drawn
    assert view.locator(".al-card").first.evaluate(visibility) == "visible"

    # the last tool calls on page 1 (pairs a and b) and their results close it together
    a, b = PAGE - 1, PAGE
    same_page = "(e) => e.parentElement === e.nextElementSibling.parentElement"
    assert view.locator(".al-card").nth(PAGE - 1).evaluate(same_page)
    view.locator(".al-card").nth(PAGE - 1).evaluate(
        "(e) => { e.open = true; e.nextElementSibling.open = true; }"
    )
    lit_up = re.compile("inset")
    calls = view.locator(".al-card-assistant")
    result_b = view.locator(f".al-card-results .al-pair-{b}")  # the second call's result
    result_b.scroll_into_view_if_needed()
    expect(calls.locator(f".al-pair-{b}")).not_to_have_css("box-shadow", lit_up)
    result_b.hover()
    expect(calls.locator(f".al-pair-{b}")).to_have_css("box-shadow", lit_up)
    expect(calls.locator(f".al-pair-{a}")).not_to_have_css("box-shadow", lit_up)  # its neighbour
    calls.locator(f".al-pair-{a}").hover()  # and from the call to its result
    expect(view.locator(f".al-card-results .al-pair-{a}")).to_have_css("box-shadow", lit_up)
    expect(result_b).not_to_have_css("box-shadow", lit_up)
    result_b.locator(".al-badge").click()  # pinned: lit after the pointer leaves
    view.locator(".al-summary").hover()
    expect(calls.locator(f".al-pair-{b}")).to_have_css("box-shadow", lit_up)
    # and by keyboard: the pin is a real checkbox, reached with Tab, toggled with Space
    pin_a = view.locator(f".al-card-results .al-pair-{a} .al-pin")
    assert pin_a.evaluate("(e) => e.tabIndex") == 0
    pin_a.focus()
    page.keyboard.press("Space")
    expect(calls.locator(f".al-pair-{a}")).to_have_css("box-shadow", lit_up)

    # on one page: the results of turn 1 light their calls, not those of turn 2 beside them
    view.locator(".al-card").nth(0).evaluate(
        "(e) => { for (let c = e; c; c = c.nextElementSibling) c.open = true; }"
    )
    view.locator(".al-card-results .al-pair-2").hover()
    expect(calls.locator(".al-pair-2")).to_have_css("box-shadow", lit_up)
    expect(calls.locator(".al-pair-4")).not_to_have_css("box-shadow", lit_up)
    expect(calls.locator(".al-pair-1")).not_to_have_css("box-shadow", lit_up)


def test_a_10000_character_command_leaves_approve_and_deny_near_the_top(
    lab: Any, page: Any
) -> None:
    from playwright.sync_api import expect

    cell = WAITING.replace('"ls -la"', '"echo " + "y" * 10_000')
    page.set_viewport_size({"width": 700, "height": 900})
    panel = lab.run_cells(page, "long_command.ipynb", [PRELUDE, cell])
    sidebar(page, True)
    approval = panel.locator(".al-loop .al-approval")
    approve = approval.get_by_role("button", name="Approve")
    expect(approve).to_be_visible()
    below = box(approve)["y"] - box(approval)["y"]
    assert below < 500, f"Approve is {below:.0f}px below the top of the approval panel"
    code = approval.locator("pre.al-whole")  # the whole command is there, in a box that scrolls
    assert code.evaluate("(e) => e.scrollWidth > e.clientWidth")
    assert len(code.evaluate("(e) => e.textContent")) == len("$ echo ") + 10_000
    expect(approval.locator("summary", has_text="show")).to_have_count(0)  # never folded


def test_a_folded_card_keeps_its_role_on_one_line_beside_a_long_preview(
    lab: Any, page: Any
) -> None:
    """A folded card's head is role, messages[i] and a preview cut with "…": the
    preview gives way, the role does not wrap ("USER (TOOL" over "RESULTS)")."""
    from playwright.sync_api import expect

    cell = """\
from agentlab.views import HistoryView

messages = [{"role": "user", "content": "Count."}]
for k in range(6):
    use = tool_use("bash", {"command": f"seq 1 {50 + k}"}, id=f"toolu_{k:02d}")
    result = {"type": "tool_result", "tool_use_id": use["id"], "content": " ".join(map(str, range(200)))}
    messages += [{"role": "assistant", "content": [text("words " * 40), use]},
                 {"role": "user", "content": [result]}]
HistoryView(messages)
"""
    page.set_viewport_size({"width": 800, "height": 900})
    panel = lab.run_cells(page, "role_one_line.ipynb", [PRELUDE, cell])
    sidebar(page, False)
    view = panel.locator(".al-history")
    folded = view.locator("details.al-card:not([open])")
    expect(folded.first).to_be_visible()
    assert folded.count() >= 8
    heights = view.evaluate(
        "(v) => [...v.querySelectorAll('details.al-card:not([open]) .al-role')]"
        ".map(e => Math.round(e.getBoundingClientRect().height))"
    )
    one_line = view.locator(".al-card-user .al-role").first.evaluate(
        "(e) => Math.round(e.getBoundingClientRect().height)"
    )
    assert heights == [one_line] * len(heights), heights
    preview = view.locator("details.al-card-results:not([open]) .al-preview").first
    assert preview.evaluate("(e) => e.scrollWidth > e.clientWidth")  # the preview gave way
    assert view.evaluate("(v) => v.scrollWidth - v.clientWidth") <= 1


def test_the_pairs_table_reads_left_to_right_in_every_view(lab: Any, page: Any) -> None:
    """JupyterLab right-aligns the cells of tables in HTML outputs (a rule of two
    classes); the pairs table, in a result's folded transcript as in the views,
    keeps its own left alignment."""
    from playwright.sync_api import expect

    cell = """\
client5 = ScriptedClient([[text("Two."), tool_use("bash", {"command": "echo a"}),
                           tool_use("bash", {"command": "echo b"})], "Done."])
loop5 = al.AgentLoop(client5, "Do two.", tools=[al.bash_tool(cwd=workdir)])
loop5.run()
loop5.result()
"""
    panel = lab.run_cells(page, "pairs_left.ipynb", [PRELUDE, cell, "al.PairingView(loop5)"])
    panel.locator("summary", has_text="transcript").click()
    tables = panel.locator("table.al-pairs")
    expect(tables).to_have_count(2)
    for k in range(2):
        aligned = tables.nth(k).evaluate(
            "(t) => [...t.querySelectorAll('th, td')].map(c => getComputedStyle(c).textAlign)"
        )
        assert len(aligned) >= 14 and set(aligned) == {"left"}, (k, aligned)


MANY_TURNS = """\
k = [0]
def reply(request):
    k[0] += 1
    if k[0] > 8:
        return "Finished: " + "\\n".join(f"- item {i}" for i in range(60))
    return [text(f"Step {k[0]}: " + "words " * 30), tool_use("bash", {"command": f"seq 1 {10 * k[0]}"})]
long_run = al.LoopView(al.AgentLoop(ScriptedClient(reply), "Count.", tools=[al.bash_tool(cwd=workdir)]))
long_run.run_to_end()
long_run
"""


def test_after_many_turns_the_current_turn_is_beside_the_controls(lab: Any, page: Any) -> None:
    """The history scrolls in its own box, kept at its end: the newest card sits in
    view right under the buttons, not 1,300 px down the page (QA pass, 2026-12-01)."""
    from playwright.sync_api import expect

    page.set_viewport_size({"width": 1400, "height": 900})
    panel = lab.run_cells(page, "many_turns.ipynb", [PRELUDE, MANY_TURNS])
    view = panel.locator(".al-loop")
    expect(view).to_contain_text("Finished", timeout=FIRST_REQUEST)
    place = view.evaluate(
        """(v) => {
            const box = v.querySelector('.al-scroll');
            const cards = v.querySelectorAll('.al-history .al-card');
            const r = (e) => e.getBoundingClientRect();
            return {boxTop: r(box).top, boxBottom: r(box).bottom, scrolls: box.scrollHeight > box.clientHeight,
                    last: r(cards[cards.length - 1]).top, first: r(cards[0]).top,
                    buttons: r(v.querySelector('button.al-key-next')).bottom};
        }"""
    )
    assert place["scrolls"], place  # the box scrolls, not the page
    assert place["boxTop"] <= place["last"] < place["boxBottom"], (
        place
    )  # the newest card is in view
    assert place["first"] < place["boxTop"], place  # the task is scrolled out of the box
    assert place["boxBottom"] - place["buttons"] < 1000, place
