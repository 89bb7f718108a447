"""Whatever the model replies, the loop leaves a history the API accepts."""

from hypothesis import given, settings
from hypothesis import strategies as st

import agentlab as al
from agentlab.offline import ScriptedClient, make_message, text, tool_use

REASONS = ["end_turn", "stop_sequence", "tool_use", "max_tokens", "pause_turn", "refusal",
           "model_context_window_exceeded", "something_new"]  # fmt: skip


@al.tool
def ok(x: int) -> str:
    """Works."""
    return f"ok {x}"


@al.tool
def fails(x: int) -> str:
    """Always raises."""
    raise OSError("disk on fire")


calls = st.lists(
    st.tuples(
        st.sampled_from(["ok", "fails", "unknown_tool"]),
        st.one_of(st.integers(0, 9), st.text(max_size=3)),
    ),
    max_size=4,
)
reply = st.tuples(st.sampled_from(REASONS), st.booleans(), calls)


def build(reason, with_text, uses):
    content = [text("thinking out loud")] if with_text or not uses else []
    content += [tool_use(name, {"x": x}) for name, x in uses]
    return make_message(content, reason)


@settings(max_examples=150, deadline=None)
@given(st.lists(reply, min_size=1, max_size=6), st.integers(1, 6))
def test_random_replies_always_leave_a_valid_history(replies, max_turns):
    script = [build(*r) for r in replies] + ["the end"] * 8
    client = ScriptedClient(script)  # checks every request like the API: a bad one raises
    messages = [{"role": "user", "content": "go"}]
    result = al.agent_loop(messages, client, tools=[ok, fails], max_turns=max_turns)
    assert al.validate(messages) == []
    assert result.turns <= max_turns and len(client.requests) == result.turns
    # every tool_use got exactly one result, and only tool_use replies ever ran anything
    for p in al.pairings(messages):
        assert p.status in ("ok", "error")
