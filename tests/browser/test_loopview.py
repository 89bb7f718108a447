"""LoopView in real JupyterLab + Chromium: step one turn by clicks; deny a tool call.

The notebook builds a LoopView on an offline ScriptedClient that asks for one
bash call (``echo hello``, run in a temp folder) and then answers. Every click
below goes from the browser to the kernel and back, as in a classroom.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.browser

PANEL = ".jp-NotebookPanel:not(.lm-mod-hidden)"  # the notebook on screen

SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "images" / "loopview.png"

FIRST_REQUEST = 30_000  # ms: a first request may be slow on a busy machine

SETUP = """\
import tempfile
import agentlab as al
from agentlab.fakeapi.offline import ScriptedClient, text, tool_use

workdir = tempfile.mkdtemp(prefix="agentlab-browser-")
client = ScriptedClient([
    [text("I'll ask bash to say it: `echo hello`."), tool_use("bash", {"command": "echo hello"})],
    "Bash printed **hello**, so the command worked.",
])
loop = al.AgentLoop(client, "Say hello from bash.", tools=[al.bash_tool(cwd=workdir)])
view = al.LoopView(loop, confirm=CONFIRM)
view
"""


def open_view(lab: Any, page: Any, name: str, confirm: bool) -> Any:
    from playwright.sync_api import expect

    lab.write_notebook(name, [SETUP.replace("CONFIRM", str(confirm))])
    panel = lab.open_notebook(page, name)
    lab.run_all(page)
    view = panel.locator(".al-loop")
    expect(view).to_be_visible()
    return view


def lit(view: Any, node: str) -> Any:
    """The diagram node drawn as the next stage."""
    return view.locator(f'g[data-node="{node}"][data-state="next"]')


def test_next_stage_through_one_turn(lab: Any, page: Any) -> None:
    from playwright.sync_api import expect

    start = time.monotonic()
    view = open_view(lab, page, "loopview.ipynb", confirm=False)
    next_stage = view.get_by_role("button", name="Next stage")
    expect(lit(view, "request")).to_have_count(1)

    next_stage.click()  # request: the reply (with its tool_use) is saved in the history
    expect(lit(view, "decide")).to_have_count(1, timeout=FIRST_REQUEST)
    expect(view.locator(".al-card-assistant .al-kind", has_text="tool_use")).to_have_count(1)
    next_stage.click()  # decide
    expect(lit(view, "execute")).to_have_count(1)
    expect(view.locator(".al-decision")).to_contain_text('stop_reason = "tool_use"')
    next_stage.click()  # execute: the result waits to be appended
    expect(lit(view, "append")).to_have_count(1)
    expect(view.locator(".al-panel", has_text="Results ready to append")).to_contain_text("hello")
    next_stage.click()  # append: back to request
    expect(lit(view, "request")).to_have_count(1)
    expect(view.locator('path[data-edge="append-request"][data-hot="yes"]')).to_have_count(1)

    result_card = view.locator(".al-card-results")
    expect(result_card).to_have_count(1)
    expect(result_card.locator(".al-code")).to_have_text("hello")
    history = view.locator(".al-history")
    use_block = history.locator(".al-card-assistant .al-pair-1")
    result_block = history.locator(".al-card-results .al-pair-1")
    expect(history.locator(".al-badge", has_text="⇄ 1")).to_have_count(2)  # tool_use, tool_result
    expect(view.locator("table.al-pairs")).to_contain_text("✓ ok")
    expect(view).to_contain_text("turn 1 (at most 20 per task) · 3 messages")

    lit_up = re.compile("inset")  # the pair's ring, drawn by CSS alone
    expect(use_block).not_to_have_css("box-shadow", lit_up)
    result_block.hover()  # hovering the result lights up its tool_use too
    expect(use_block).to_have_css("box-shadow", lit_up)
    result_block.locator(".al-badge").click()  # a click pins it
    view.locator(".al-title").hover()
    expect(use_block).to_have_css("box-shadow", lit_up)
    expect(result_block).to_have_css("box-shadow", lit_up)

    # The picture for the docs: the whole view, with room around it.
    page.evaluate("() => window.jupyterapp.shell.collapseLeft()")
    page.set_viewport_size({"width": 1360, "height": 1500})
    SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
    view.screenshot(path=str(SCREENSHOT))
    print(f"\nscreenshot: {SCREENSHOT} (test body {time.monotonic() - start:.1f}s)")


def test_confirm_mode_deny_reaches_the_model(lab: Any, page: Any) -> None:
    from playwright.sync_api import expect

    view = open_view(lab, page, "loopview_confirm.ipynb", confirm=True)
    next_stage = view.get_by_role("button", name="Next stage")
    next_stage.click()
    expect(lit(view, "decide")).to_have_count(1, timeout=FIRST_REQUEST)
    next_stage.click()
    expect(lit(view, "execute")).to_have_count(1)
    approval = view.locator(".al-approval")
    expect(approval).to_be_hidden()

    next_stage.click()  # execute: asks first; the callback returns and the kernel is free
    expect(approval).to_be_visible()
    expect(approval).to_contain_text("Approval needed (1 of 1)")
    expect(approval).to_contain_text("echo hello")
    expect(view).to_contain_text("Waiting for your approval")
    expect(next_stage).to_be_disabled()
    page.set_viewport_size({"width": 1360, "height": 1500})
    view.screenshot(path=str(SCREENSHOT.with_name("loopview-approval.png")))

    approval.get_by_placeholder("Why not?").fill("no shell today")
    approval.get_by_role("button", name="Deny").click()
    expect(approval).to_be_hidden()
    expect(lit(view, "append")).to_have_count(1)
    next_stage.click()  # append
    result_card = view.locator(".al-card-results")
    expect(result_card).to_contain_text("Denied by the user: no shell today")
    expect(result_card).to_contain_text("is_error")
    next_stage.click()  # request: the model reads the denial
    expect(view.locator(".al-card-assistant")).to_have_count(2)
    expect(view.locator("table.al-pairs")).to_contain_text("✗ denied")


def test_keys_n_and_t_step_and_run_a_turn_while_the_focus_is_in_the_view(
    lab: Any, page: Any
) -> None:
    from playwright.sync_api import expect

    view = open_view(lab, page, "loopview_keys.ipynb", confirm=False)
    expect(view.locator(".al-keys")).to_contain_text("N Next stage, T Run turn")
    next_stage = view.get_by_role("button", name="Next stage")
    assert "key N" in (next_stage.get_attribute("title") or "")

    page.locator(f"{PANEL} .jp-Notebook").focus()  # focus in the notebook, not in the view:
    page.keyboard.press("n")  # the key is JupyterLab's, the view does nothing
    page.wait_for_timeout(1000)
    expect(lit(view, "request")).to_have_count(1)

    next_stage.focus()
    page.keyboard.press("n")  # request
    expect(lit(view, "decide")).to_have_count(1, timeout=FIRST_REQUEST)
    expect(view.locator(".al-card-assistant .al-kind", has_text="tool_use")).to_have_count(1)
    # The diagram moves on before the buttons come back (one widget message each):
    # a key pressed on a disabled button does nothing, so wait for them first.
    expect(next_stage).to_be_enabled()
    page.keyboard.press("n")  # decide
    expect(lit(view, "execute")).to_have_count(1)
    expect(next_stage).to_be_enabled()
    page.keyboard.press("t")  # the rest of the turn: execute, append, and back to request
    expect(view.locator(".al-card-results .al-code")).to_have_text("hello")
    expect(lit(view, "request")).to_have_count(1)
    expect(next_stage).to_be_enabled()
    page.keyboard.press("t")  # the next turn: the model answers and the loop ends
    expect(view.locator(".al-card-assistant")).to_have_count(2)
    expect(view.locator(".al-card-assistant").last).to_contain_text("the command worked")
    ask = view.get_by_placeholder("Ask a follow-up question…")
    ask.press_sequentially("not")  # typed into a text box, the keys are letters again
    expect(ask).to_have_value("not")
    expect(view.locator(".al-card")).to_have_count(4)


SLOW = """\
import tempfile
import agentlab as al
from agentlab.fakeapi.offline import ScriptedClient, tool_use

workdir = tempfile.mkdtemp(prefix="agentlab-browser-")
client = ScriptedClient(lambda request: [tool_use("bash", {"command": "sleep 60; echo late"})])
loop = al.AgentLoop(client, "Take your time.", tools=[al.bash_tool(cwd=workdir)])
view = al.LoopView(loop)
view
"""


def test_stop_and_the_kernel_interrupt_cut_a_running_tool_short(lab: Any, page: Any) -> None:
    from playwright.sync_api import expect

    lab.write_notebook("loopview_stop.ipynb", [SLOW])
    panel = lab.open_notebook(page, "loopview_stop.ipynb")
    lab.run_all(page)
    view = panel.locator(".al-loop")
    run = view.get_by_role("button", name="Run to end")
    interrupted = "Interrupted: the run was stopped before this call finished."

    run.click()
    # The tool runs on the kernel's main thread; a thread updates the elapsed time.
    running = re.compile(r"Running execute: sleep 60; echo late… [1-9]\.[0-9] s")
    expect(view).to_contain_text(running, timeout=FIRST_REQUEST)
    stop = view.get_by_role("button", name="Stop")
    expect(stop).to_be_enabled()
    stop.click()  # handled in a kernel subshell while the tool runs: it interrupts the tool
    expect(view.locator(".al-card-results")).to_contain_text(interrupted, timeout=10_000)
    expect(view).to_contain_text("Interrupted at the execute stage")
    expect(view).to_contain_text("the API would accept this history")

    view.get_by_role("button", name="Reset").click()
    expect(view.locator(".al-card")).to_have_count(1)
    run.click()
    expect(view).to_contain_text("Running execute: sleep 60", timeout=15_000)
    page.evaluate("() => window.jupyterapp.commands.execute('kernelmenu:interrupt')")  # ■
    expect(view.locator(".al-card-results")).to_contain_text(interrupted, timeout=10_000)
    expect(view.get_by_role("button", name="Reset")).to_be_enabled()


TWO_VIEWS = """\
import tempfile
import ipywidgets as W
import agentlab as al
from agentlab.fakeapi.offline import ScriptedClient, text, tool_use

workdir = tempfile.mkdtemp(prefix="agentlab-browser-")
def make(word):
    client = ScriptedClient([[text(word), tool_use("bash", {"command": "echo " + word})], "Done."])
    return al.LoopView(al.AgentLoop(client, "Say " + word, tools=[al.bash_tool(cwd=workdir)]))
W.VBox([make("first"), make("second")])
"""


def test_keys_drive_only_the_focused_view_also_after_its_checkbox_was_clicked(
    lab: Any, page: Any
) -> None:
    from playwright.sync_api import expect

    lab.write_notebook("loopview_two.ipynb", [TWO_VIEWS])
    panel = lab.open_notebook(page, "loopview_two.ipynb")
    lab.run_all(page)
    first, second = panel.locator(".al-loop").nth(0), panel.locator(".al-loop").nth(1)
    expect(second).to_be_visible()

    # Clicking the view's "Ask me before each tool runs" box puts the focus on a
    # checkbox: not a text box, so the keys still step this view, and only it.
    second.get_by_role("checkbox").click()
    expect(second.get_by_role("checkbox")).to_be_focused()
    page.keyboard.press("n")
    expect(lit(second, "decide")).to_have_count(1, timeout=FIRST_REQUEST)
    expect(lit(first, "request")).to_have_count(1)
    expect(first.locator(".al-card")).to_have_count(1)

    first.get_by_role("button", name="Next stage").focus()
    page.keyboard.press("n")
    expect(lit(first, "decide")).to_have_count(1, timeout=FIRST_REQUEST)
    expect(lit(second, "decide")).to_have_count(1)
