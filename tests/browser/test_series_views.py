"""Lessons 06 and 07's views in real JupyterLab + Chromium: the todo panel beside the
history, and a helper's own LoopView inside its parent's pending ``task`` call.

One notebook holds both views; the test looks at what Chromium drew (positions,
colours, contrast in the dark theme, a 700 px screen) and clicks in the nested view.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.browser.test_views import CONTRAST_JS

pytestmark = pytest.mark.browser

IMAGES = Path(__file__).resolve().parents[2] / "docs" / "images"
FIRST_REQUEST = 30_000  # ms: a first request may be slow on a busy machine
LIT = re.compile("inset")

PRELUDE = """\
import tempfile
import agentlab as al
from agentlab.fakeapi.offline import ScriptedClient, text, tool_use
from agentlab.tools.task import task_tool
from agentlab.tools.todo import TodoList

workdir = tempfile.mkdtemp(prefix="agentlab-browser-")
"""

# Lesson 06: a plan, then three rounds without the todo tool: the reminder is added.
PLANNING = """\
todos = TodoList()
plan = ScriptedClient([
    [text("A plan first."), tool_use("todo", {"text": "read the <b>files</b>"})],
    [tool_use("todo", {"text": "count them"})],
    [tool_use("todo", {"id": "1", "status": "in_progress"})],
    [tool_use("bash", {"command": "echo 1"})],
    [tool_use("bash", {"command": "echo 2"})],
    [tool_use("bash", {"command": "echo 3"})],
    "Done.",
])
ploop = al.AgentLoop(plan, "Count the files.", tools=[al.bash_tool(cwd=workdir)], todos=todos)
pview = al.LoopView(ploop)
for _ in range(6):
    pview.run_turn()
pview
"""

# Lesson 07: the parent calls task; the helper runs two commands, then sums up.
DELEGATION = """\
PARENT = "Find out how many files there are."
def reply(params):
    messages = params["messages"]
    first = messages[0]["content"]
    if first == PARENT:
        if len(messages) == 1:
            return [text("I'll ask a helper."), tool_use("task", {"prompt": "Count the files."})]
        return "The helper says: " + messages[-1]["content"][0]["content"]
    rounds = (len(messages) - 1) // 2
    if rounds < 2:
        return [tool_use("bash", {"command": f"echo {rounds}"})]
    return "Summary: there are 3 files."
dclient = ScriptedClient(reply)
tools = [al.bash_tool(cwd=workdir)]
tools.append(task_tool(dclient, tools))
dloop = al.AgentLoop(dclient, PARENT, tools=tools)
dview = al.LoopView(dloop)
dview.next_stage()
dview.next_stage()  # decide: the next stage runs the task call
dview
"""

# The parent's history and its helper's, side by side: each validated on its own.
COLUMNS = """\
columns = al.HistoryView.side_by_side(dloop, dview.helper_views[0].loop, labels=["parent", "helper"])
columns
"""

OWN = ":not(.al-helper *)"  # the parent's own part, not its helper's


def box(locator: Any) -> dict[str, float]:
    b = locator.bounding_box()
    assert b is not None, "not on the page"
    return dict(b)


def set_theme(page: Any, theme: str) -> None:
    page.evaluate(
        "(t) => window.jupyterapp.commands.execute('apputils:change-theme', {theme: t})", theme
    )
    light = "true" if theme.endswith("Light") else "false"
    page.wait_for_function(f"() => document.body.dataset.jpThemeLight === '{light}'")
    page.wait_for_timeout(500)  # the theme's CSS variables reach every element


def test_the_todo_panel_and_a_steppable_helper_in_light_dark_and_narrow(
    lab: Any, page: Any
) -> None:
    from playwright.sync_api import expect

    panel = lab.run_cells(page, "series_views.ipynb", [PRELUDE, PLANNING, DELEGATION, COLUMNS])
    cells = panel.locator(".jp-CodeCell")
    pview = cells.nth(1).locator(".al-loop").first
    dview = cells.nth(2).locator(".al-loop").first
    side = cells.nth(3).locator(".al-side .al-side-col")

    # -- lesson 06: the plan beside the history, the reminder marked in both
    todo = pview.locator(".al-todos")
    expect(todo).to_be_visible()
    expect(todo).to_contain_text("read the <b>files</b>")  # the model's text, as text
    expect(todo.locator("li.al-todo-in_progress")).to_contain_text("in progress")
    expect(todo.locator("li.al-todo-in_progress .al-todo-mark")).to_have_text("▶")
    expect(todo.locator("li.al-todo-pending")).to_contain_text("to do")
    expect(todo).to_contain_text("3 rounds since the last todo call")
    expect(todo.locator(".al-reminder-note")).to_contain_text(
        "Reminder added after the tool_results of messages[12]"
    )
    reminder = pview.locator(".al-card-results .al-reminder")
    expect(reminder).to_have_count(1)
    expect(reminder).to_be_visible()
    expect(reminder.locator(".al-tag")).to_have_text("⚑ reminder")
    page.set_viewport_size({"width": 1400, "height": 900})
    page.wait_for_timeout(300)
    history = box(pview.locator(".al-history"))
    plan = box(todo)
    assert plan["x"] + plan["width"] <= history["x"] + 1, (plan, history)  # beside it

    # -- lesson 07: the helper's own view inside the parent's pending task call
    helper = dview.locator(".al-helper")
    expect(helper).to_have_count(1)
    expect(helper).to_contain_text("Helper for the task call ⇄ 1 in messages[1]")
    child = helper.locator(".al-loop")
    own_history = dview.locator(f".al-history{OWN}")
    expect(own_history.locator(".al-card")).to_have_count(2)
    expect(child.locator(".al-card")).to_have_count(1)  # a fresh history: the prompt alone
    child.get_by_role("button", name="Next stage").click()  # the child's request only
    expect(child.locator(".al-card")).to_have_count(2, timeout=FIRST_REQUEST)
    expect(own_history.locator(".al-card")).to_have_count(2)
    # N in the child steps the child, never its parent (whose next stage would run it all)
    child.get_by_role("button", name="Run turn").focus()
    expect(child.get_by_role("button", name="Next stage")).to_be_enabled()
    page.keyboard.press("n")  # decide
    expect(child.locator(".al-decision")).to_contain_text('stop_reason = "tool_use"')
    # a key on a disabled button does nothing: the buttons come back after the decision
    expect(child.get_by_role("button", name="Next stage")).to_be_enabled()
    page.keyboard.press("n")  # execute: the child's result waits in the child's panel
    waiting = child.locator(".al-panel", has_text="Results ready to append")
    expect(waiting).to_contain_text("0")
    expect(dview.locator(f".al-panel{OWN}", has_text="Results ready to append")).to_have_count(0)
    # a row of the child's pairs table lights the child's cards, not the parent's pair 1
    child.locator("table.al-pairs tr.al-pair-1").hover()
    expect(child.locator(".al-card-assistant .al-pair-1")).to_have_css("box-shadow", LIT)
    expect(own_history.locator(".al-pair-1").first).not_to_have_css("box-shadow", LIT)
    dview.locator(".al-title").first.hover()
    # side by side: two labelled columns, one beside the other, each with its own verdict
    expect(side).to_have_count(2)
    expect(side.nth(0).locator(".al-section")).to_have_text("parent")
    expect(side.nth(1).locator(".al-card")).to_have_count(2)  # it follows the helper's loop
    for column in (side.nth(0), side.nth(1)):
        expect(column.locator(".al-summary")).to_contain_text("the API would accept this history")
    left, right = box(side.nth(0)), box(side.nth(1))
    assert abs(left["y"] - right["y"]) < 2 and left["x"] + left["width"] <= right["x"], (
        left,
        right,
    )

    # -- dark theme: every text of both views at 4.5:1 or more
    set_theme(page, "JupyterLab Dark")
    try:
        for view in (pview, dview):
            report = view.evaluate(CONTRAST_JS)
            assert report["checked"] > 40, report
            assert report["low"] == [], f"text under 4.5:1: {report['low']}"
        page.set_viewport_size({"width": 1400, "height": 1300})
        pview.evaluate("(v) => v.scrollIntoView()")
        pview.screenshot(path=str(IMAGES / "loopview-todo-dark.png"))
    finally:
        set_theme(page, "JupyterLab Light")  # a setting of the shared Lab: put it back

    # -- 700 px: the columns stack, nothing wider than the cell
    page.set_viewport_size({"width": 700, "height": 900})
    page.wait_for_timeout(400)
    for view in (pview, dview):
        overflow = view.evaluate("(v) => v.scrollWidth - v.clientWidth")
        assert overflow <= 1, f"the view is {overflow}px wider than its cell"
    assert box(todo)["y"] + box(todo)["height"] <= box(pview.locator(".al-history"))["y"] + 1
    left, right = box(side.nth(0)), box(side.nth(1))
    assert left["y"] + left["height"] <= right["y"] + 1, (left, right)  # stacked
    overflow = cells.nth(3).locator(".al-side").evaluate("(v) => v.scrollWidth - v.clientWidth")
    assert overflow <= 1, f"the columns are {overflow}px wider than their cell"
    page.set_viewport_size({"width": 1400, "height": 2300})
    page.wait_for_timeout(300)
    dview.evaluate("(v) => v.scrollIntoView()")
    dview.screenshot(path=str(IMAGES / "loopview-helper.png"))

    # -- the parent's execute runs the child on to its end; only its final text comes back
    dview.locator(f"button.al-key-next{OWN}").click()
    results = dview.locator(f".al-panel{OWN}", has_text="Results ready to append")
    expect(results).to_contain_text("Summary: there are 3 files.", timeout=FIRST_REQUEST)
    expect(child.locator(".al-card")).to_have_count(6)  # its whole history stays in the child
    expect(helper).to_contain_text("Finished: only its final text went back as the tool_result.")
    expect(child.get_by_role("button", name="Next stage")).to_be_disabled()
