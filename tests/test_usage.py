"""Usage per turn, totals, the price table, cost, context growth and budgets."""

from __future__ import annotations

import json

import pytest

import agentlab as al
from agentlab import models
from agentlab.fakeapi.offline import DemoClient, ScriptedClient, make_message, tool_use
from agentlab.i18n import set_language
from agentlab.usage import (
    PRICES_FILE,
    context_growth,
    estimate_cost,
    full_input,
    growth_table,
    over_budget,
    price_for,
    prices,
    report,
    totals,
    turn_usage,
    usage_of,
)


@al.tool
def note(x: int) -> str:
    """Answers at once."""
    return f"noted {x}"


def usage(i: int = 0, o: int = 0, w: int = 0, r: int = 0) -> dict[str, int]:
    return {
        "input_tokens": i,
        "output_tokens": o,
        "cache_creation_input_tokens": w,
        "cache_read_input_tokens": r,
    }


def reply(content, model="claude-opus-4-1", **counts):
    return make_message(content, model=model, usage=usage(**counts))


def test_usage_of_reads_messages_dicts_and_missing_fields():
    assert usage_of(reply("hi", i=5, o=7, r=2)) == usage(5, 7, 0, 2)
    assert usage_of({"usage": {"input_tokens": 3, "output_tokens": 1}}) == usage(3, 1)
    assert usage_of({"input_tokens": 4, "cache_read_input_tokens": None}) == usage(4)
    assert full_input(usage(10, 99, 20, 30)) == 60  # output is not input


def test_turn_usage_and_totals_from_a_loop_a_result_and_a_list():
    script = [reply([tool_use("note", {"x": 1})], i=100, o=10), reply("done", i=150, o=5, r=80)]
    loop = al.AgentLoop(ScriptedClient(script), "go", tools=[note])
    result = loop.run()
    expected = [usage(100, 10), usage(150, 5, 0, 80)]
    assert turn_usage(loop) == turn_usage(result) == turn_usage(script) == expected
    total = totals(loop)
    assert total["input_tokens"] == 250 and total["cache_read_input_tokens"] == 80
    assert total["full_input_tokens"] == 330 and total["total_tokens"] == 345


def test_prices_match_the_longest_prefix():
    assert price_for("claude-opus-4-5-20251101").input == 5
    assert price_for("claude-opus-4-1").input == 15
    assert price_for("claude-opus-4-20250514").output == 75
    assert price_for("claude-sonnet-5-5").input == 2
    assert price_for("claude-3-5-haiku-20241022").input == 0.8
    assert price_for("agentlab-demo").output == 0
    assert price_for("gpt-4o") is None and price_for(None) is None


def test_prices_come_from_the_model_table_and_are_well_formed():
    table = json.loads(
        PRICES_FILE.read_text("utf-8")
    )  # models.json: one file for models and prices
    data = prices()
    assert PRICES_FILE.name == "models.json" and data["checked"] == table["checked"]
    assert data["source"].startswith("https://") and "pricing" in data["source"]
    for model, row in table["models"].items():  # a served model's price is its row's
        assert data["models"][model] == row["prices"] and price_for(model).prefix == model
        assert price_for(model).input == models.get(model).prices["input"]
    for prefix, row in data["models"].items():
        assert set(row) == {"input", "output", "cache_write", "cache_read"}, prefix
        assert all(isinstance(v, (int, float)) and v >= 0 for v in row.values()), prefix
        if prefix != "agentlab-demo":
            assert row["cache_read"] < row["input"] < row["cache_write"] < row["output"], prefix


def test_cost_adds_the_four_kinds_of_token_at_their_prices():
    turns = [usage(i=1_000_000, o=1_000_000), usage(w=1_000_000, r=1_000_000)]
    cost = estimate_cost(turns, "claude-sonnet-4-6")
    assert cost.dollars == pytest.approx(3 + 15 + 3.75 + 0.30)
    assert "claude-sonnet-4-6" in str(cost) and "estimate" in str(cost)


def test_the_demo_model_costs_nothing_and_an_unknown_model_has_no_estimate():
    loop = al.AgentLoop(DemoClient(), "Tell me a joke", tools=[al.bash])
    loop.run()
    demo = estimate_cost(loop)
    assert demo.model == "agentlab-demo" and demo.dollars == 0
    unknown = estimate_cost([usage(10, 10)], "my-local-model")
    assert unknown.dollars is None and "my-local-model" in unknown.note
    assert "models.json" in unknown.note
    result = loop.result()  # a LoopResult knows the model that answered (a budget needs it)
    assert result.model == "agentlab-demo" and estimate_cost(result).dollars == 0
    assert estimate_cost(result, "claude-haiku-4-5").dollars is not None


def test_context_growth_shows_the_history_resent_every_turn():
    turns = [usage(i=100, o=20), usage(i=150, o=30), usage(r=180, w=40, o=10)]
    rows = context_growth(turns)
    assert [r.sent for r in rows] == [100, 150, 220]
    assert [r.resent for r in rows] == [0, 120, 180]  # previous input + previous output
    assert [r.new for r in rows] == [100, 30, 40]
    assert [r.sent_so_far for r in rows] == [100, 250, 470]
    assert rows[2].cache_read_input_tokens == 180


def test_a_real_loop_resends_a_growing_history():
    script = [[tool_use("note", {"x": i})] for i in range(4)] + ["done"]
    loop = al.AgentLoop(ScriptedClient(script), "note four times", tools=[note])
    loop.run()
    sent = [r.sent for r in context_growth(loop)]
    assert len(sent) == 5 and sent == sorted(sent) and sent[0] < sent[-1]


def test_the_growth_table_is_markdown_with_totals_in_the_chosen_language():
    turns = [usage(i=100, o=20), usage(i=150, o=30)]
    table = growth_table(turns)
    lines = table.splitlines()
    assert lines[0].startswith("| turn |") and lines[1].startswith("|---:|")
    assert lines[2].startswith("| 1 | 100 | 0 | 100 |") and "**250**" in lines[4]
    assert "resent" in table
    try:
        set_language("zh")
        assert "轮次" in growth_table(turns)
    finally:
        set_language("en")


def test_a_report_is_short_in_plain_text_and_a_table_in_a_notebook():
    turns = [reply("a", model="claude-haiku-4-5", i=1000, o=100)]
    r = report(turns)
    assert repr(r) == "UsageReport(turns=1, input=1000, output=100, cost=$0.0015)"
    assert "| turn |" in r._repr_markdown_() and "$0.0015" in r._repr_markdown_()


def test_a_token_budget_ends_the_loop_cleanly():
    script = [reply([tool_use("note", {"x": i})], i=400, o=100) for i in range(5)] + ["done"]
    client = ScriptedClient(script)
    loop = al.AgentLoop(client, "go", tools=[note], max_total_tokens=1200)
    result = loop.run()
    assert result.ended == "budget" and "max_total_tokens=1200" in result.explanation
    assert len(client.requests) == 3 and totals(loop)["total_tokens"] == 1500
    assert al.validate(loop.messages) == [] and loop.messages[-1]["role"] == "user"


def test_a_cost_budget_ends_the_loop_cleanly():
    # claude-opus-4-1: $15 per million input tokens, so each turn costs $0.015
    script = [reply([tool_use("note", {"x": i})], i=1000) for i in range(5)] + ["done"]
    client = ScriptedClient(script)
    result = al.agent_loop([{"role": "user", "content": "go"}], client, tools=[note], max_cost=0.04)
    assert result.ended == "budget" and "max_cost=$0.04" in result.explanation
    assert len(client.requests) == 3 and al.validate(result.messages) == []


def test_a_cost_budget_on_a_model_with_no_price_stops_instead_of_running_unchecked():
    script = [reply([tool_use("note", {"x": 1})], model="my-local-model", i=10)] + ["done"]
    loop = al.AgentLoop(ScriptedClient(script), "go", tools=[note], max_cost=1.0)
    result = loop.run()
    assert result.ended == "budget" and "my-local-model" in result.explanation
    assert result.turns == 1 and al.validate(loop.messages) == []


def test_no_budget_means_no_limit_but_max_turns():
    script = [reply([tool_use("note", {"x": i})], i=10**6) for i in range(3)] + ["done"]
    result = al.agent_loop(
        [{"role": "user", "content": "go"}], ScriptedClient(script), tools=[note]
    )
    assert result.stop_reason == "end_turn" and result.turns == 4
    assert over_budget(result) == ""
