"""The core property test again, over HTTP: whatever the model replies, the loop
sends only requests the server's validator accepts (never a 400) and ends with a
history that passes validate. The real SDK is the client, streaming or not."""

from __future__ import annotations

import itertools

import anthropic
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_property import fails, ok, reply  # the same random replies

import agentlab as al
from agentlab.fakeapi.offline import make_message, text, tool_use
from agentlab.fakeapi.server import FakeMessagesServer


def build(reason, with_text, uses, ids):
    content = [text("thinking out loud")] if with_text or not uses else []
    content += [tool_use(name, {"x": x}) for name, x in uses]
    return make_message(content, reason, model="claude-sonnet-5-5", ids=ids)


SERVER = FakeMessagesServer(["unused"])


def setup_module() -> None:
    SERVER.start()


def teardown_module() -> None:
    SERVER.stop()


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(reply, min_size=1, max_size=5), st.integers(1, 5), st.booleans())
def test_random_replies_over_http_never_draw_a_400(replies, max_turns, stream):
    ids = itertools.count(1)  # tool_use ids unique across the conversation, as the API makes them
    script = [build(*r, ids) for r in replies] + ["the end"] * 6
    SERVER.reset()
    SERVER.script(script)
    client = anthropic.Anthropic(api_key="test", base_url=SERVER.url, max_retries=0)
    messages = [{"role": "user", "content": "go"}]
    result = al.agent_loop(
        messages, client, tools=[ok, fails], max_turns=max_turns, stream=stream,
        model="claude-sonnet-5-5",
    )  # fmt: skip
    statuses = [r.status for r in SERVER.requests]
    assert statuses == [200] * result.turns  # the validator never said 400
    assert all(r.streamed == stream for r in SERVER.requests)
    assert al.validate(messages) == []
    for p in al.pairings(messages):
        assert p.status in ("ok", "error")  # every tool_use answered exactly once


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(reply, min_size=1, max_size=4),
    st.integers(1, 40),
    st.booleans(),
)
def test_max_tokens_cuts_never_lead_to_a_400_or_a_cut_call_run(replies, limit, stream):
    """Whatever max_tokens cuts, the loop never runs a cut-off call and every request
    it sends afterwards is accepted."""
    ids = itertools.count(1)
    runs: list[int] = []

    @al.tool
    def counted(x: int) -> str:
        """Counts its runs."""
        runs.append(x)
        return "ok"

    script = []
    for reason, with_text, uses in replies:  # dicts, not Messages: the server's controls apply
        content = [text("thinking out loud")] if with_text or not uses else []
        content += [tool_use("counted", {"x": x}, id=f"toolu_{next(ids)}") for _, x in uses]
        script.append({"content": content, "stop_reason": reason})
    SERVER.reset()
    SERVER.script(lambda body: script.pop(0) if script else "the end")
    client = anthropic.Anthropic(api_key="test", base_url=SERVER.url, max_retries=0)
    loop = al.AgentLoop(client, "go", tools=[counted], model="claude-sonnet-5-5",
                        max_tokens=limit, max_turns=5, stream=stream)  # fmt: skip
    result = loop.run()
    assert [r.status for r in SERVER.requests] == [200] * result.turns
    assert al.validate(loop.messages) == []
    assert all(u["output_tokens"] <= limit for u in loop.turn_usage)  # max_tokens honoured
    ran = [p for p in al.pairings(loop.messages) if p.status == "ok"]
    assert len(runs) == len(ran)  # only calls of a tool_use reply ran; cut ones were answered
