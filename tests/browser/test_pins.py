"""Tool pairs in real JupyterLab + Chromium: pins that survive a redraw, many
parallel calls, and rows of the pairs table that light their cards.

"Lit" is what the browser computed: the pair's inset ring (``box-shadow``).
"""

from __future__ import annotations

import re
from typing import Any

import pytest

pytestmark = pytest.mark.browser

FIRST_REQUEST = 30_000  # ms: a first request may be slow on a busy machine
LIT = re.compile("inset")

PRELUDE = """\
import tempfile
import agentlab as al
from agentlab.fakeapi.offline import ScriptedClient, text, tool_use
from agentlab.views import HistoryView

workdir = tempfile.mkdtemp(prefix="agentlab-browser-")
def calls(*words):
    return [text("At once.")] + [tool_use("bash", {"command": "echo " + w}, id="toolu_" + w) for w in words]
"""

# One turn with two parallel calls is done; the model's next reply is REPLY.
LOOP = """\
client = ScriptedClient([calls("a", "b"), REPLY])
loop = al.AgentLoop(client, "Say a and b.", tools=[al.bash_tool(cwd=workdir)])
view = al.LoopView(loop)
view.run_turn()
view
"""


def halves(view: Any, number: int) -> tuple[Any, Any]:
    """The tool_use block and the tool_result block of pair ``number`` in a view's cards."""
    return (
        view.locator(f".al-card-assistant .al-pair-{number}"),
        view.locator(f".al-card-results .al-pair-{number}"),
    )


def test_a_pinned_pair_stays_pinned_when_the_next_card_arrives(lab: Any, page: Any) -> None:
    from playwright.sync_api import expect

    other = "hv = HistoryView(loop); hv.select('toolu_a'); hv"  # a second view of the same loop
    panel = lab.run_cells(
        page, "pin_redraw.ipynb", [PRELUDE, LOOP.replace("REPLY", '"Done."'), other]
    )
    view, hv = panel.locator(".al-loop"), panel.locator(".al-history").nth(1)
    expect(view.locator(".al-card")).to_have_count(3)
    use, result = halves(view, 2)
    result.locator(".al-badge").click()  # pin the second pair by its result's badge
    view.locator(".al-title").hover()
    for block in (use, result):
        expect(block).to_have_css("box-shadow", LIT)
    expect(halves(view, 1)[0]).not_to_have_css("box-shadow", LIT)

    view.get_by_role("button", name="Next stage").click()  # request: the answer is appended
    expect(view.locator(".al-card")).to_have_count(4, timeout=FIRST_REQUEST)
    expect(hv.locator(".al-card")).to_have_count(4)  # (both views drew their last page again)
    for block in (use, result):
        expect(block).to_have_css("box-shadow", LIT)
        expect(block.locator(".al-pin")).to_be_checked()  # both badges say "pinned"
    expect(halves(view, 1)[0]).not_to_have_css("box-shadow", LIT)
    # pins are per view: the other view shows only the pair Python selected in it
    expect(halves(hv, 1)[0]).to_have_css("box-shadow", LIT)
    expect(halves(hv, 2)[0]).not_to_have_css("box-shadow", LIT)
    expect(hv.locator(".al-pin:checked")).to_have_count(0)

    result.locator(".al-badge").click()  # unpinned by a click, once
    view.locator(".al-title").hover()
    for block in (use, result):
        expect(block).not_to_have_css("box-shadow", LIT)


TWENTY = """\
uses = calls(*(f"{k:02d}" for k in range(1, 21)))[1:]
results = [{"type": "tool_result", "tool_use_id": u["id"], "content": u["id"]} for u in uses]
messages = [{"role": "user", "content": "Twenty at once."},
            {"role": "assistant", "content": uses}, {"role": "user", "content": results}]
hv = HistoryView(messages)
hv
"""


def test_pairs_past_the_sixteenth_call_of_a_message_light_up(lab: Any, page: Any) -> None:
    from playwright.sync_api import expect

    panel = lab.run_cells(page, "twenty.ipynb", [PRELUDE, TWENTY])
    view = panel.locator(".al-history")
    expect(view.locator(".al-card-results .al-pair")).to_have_count(20)
    use, result = halves(view, 18)
    result.scroll_into_view_if_needed()
    expect(use).not_to_have_css("box-shadow", LIT)
    result.hover()
    expect(use).to_have_css("box-shadow", LIT)
    expect(halves(view, 17)[0]).not_to_have_css("box-shadow", LIT)
    expect(halves(view, 19)[0]).not_to_have_css("box-shadow", LIT)
    halves(view, 20)[0].hover()  # and from a call to its result
    expect(halves(view, 20)[1]).to_have_css("box-shadow", LIT)
    expect(result).not_to_have_css("box-shadow", LIT)
    halves(view, 19)[1].locator(".al-badge").click()  # pinned: lit after the pointer leaves
    view.locator(".al-summary").hover()
    expect(halves(view, 19)[0]).to_have_css("box-shadow", LIT)
    expect(use).not_to_have_css("box-shadow", LIT)


def test_hovering_a_pairs_table_row_or_a_waiting_result_lights_its_cards(
    lab: Any, page: Any
) -> None:
    from playwright.sync_api import expect

    cells = [PRELUDE, LOOP.replace("REPLY", 'calls("c")')]
    panel = lab.run_cells(page, "pin_table.ipynb", cells)
    view = panel.locator(".al-loop")
    table = view.locator("table.al-pairs")
    use, result = halves(view, 2)
    expect(use).not_to_have_css("box-shadow", LIT)
    table.locator("tr.al-pair-2").hover()
    for block in (use, result):
        expect(block).to_have_css("box-shadow", LIT)
    for block in halves(view, 1):
        expect(block).not_to_have_css("box-shadow", LIT)
    table.locator("tr.al-pair-1").hover()  # the next row: the light moves with the pointer
    expect(halves(view, 1)[0]).to_have_css("box-shadow", LIT)
    expect(use).not_to_have_css("box-shadow", LIT)
    view.locator(".al-title").hover()
    expect(halves(view, 1)[0]).not_to_have_css("box-shadow", LIT)

    next_stage = view.get_by_role("button", name="Next stage")
    next_stage.click()  # request: the model asks for a third call
    expect(view.locator(".al-card")).to_have_count(4, timeout=FIRST_REQUEST)
    next_stage.click()  # decide
    expect(view.locator(".al-decision")).to_contain_text('stop_reason = "tool_use"')
    next_stage.click()  # execute: the result waits in its panel, not yet in the history
    waiting = view.locator(".al-panel", has_text="Results ready to append").locator(".al-pair-3")
    expect(waiting).to_contain_text("c")
    waiting.hover()
    expect(halves(view, 3)[0]).to_have_css("box-shadow", LIT)
    expect(use).not_to_have_css("box-shadow", LIT)
