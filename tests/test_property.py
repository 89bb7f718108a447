"""Whatever the model replies, the loop leaves a history the API accepts; whatever a
history holds, the incremental checks agree with validate and save/load round-trip it."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import agentlab as al
from agentlab.fakeapi.offline import ScriptedClient, make_message, text, tool_use
from agentlab.history import check_at, load, save, validate

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


# -- validate and check_at agree, on histories good and bad --------------------------------


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
ids = st.sampled_from(["t1", "t2", "t3"])
good_blocks = st.one_of(
    st.builds(lambda s: {"type": "text", "text": s}, st.sampled_from(["hi", "", " ", "ok"])),
    st.builds(
        lambda i: {"type": "tool_use", "id": i, "name": "bash", "input": {"command": "ls"}}, ids
    ),
    st.builds(
        lambda i, e: {"type": "tool_result", "tool_use_id": i, "content": "x", "is_error": e},
        ids,
        st.booleans(),
    ),
    st.just({"type": "thinking", "thinking": "", "signature": "c2ln"}),
    st.just({"type": "redacted_thinking", "data": "ZGF0YQ=="}),
)
bad_blocks = st.one_of(
    json_values,
    st.builds(
        lambda k, v: {"type": "tool_use", "id": "t1", "name": "bash", k: v},
        st.sampled_from(["input", "extra"]),
        json_values,
    ),
    st.builds(
        lambda k, v: {"type": "tool_result", "tool_use_id": "t1", k: v},
        st.sampled_from(["content", "is_error", "name"]),
        json_values,
    ),
)
blocks_ = st.lists(st.one_of(good_blocks, good_blocks, bad_blocks), max_size=3)
message = st.one_of(
    st.builds(
        lambda r, c: {"role": r, "content": c},
        st.sampled_from(["user", "assistant", "user", "assistant", "system", "bot"]),
        st.one_of(blocks_, st.sampled_from(["hi", ""])),
    ),
    json_values,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(message, min_size=1, max_size=5))
def test_incremental_checks_agree_with_validate(history):
    # What append and the offline clients do (each message against the one before it)
    # finds a problem exactly when validate does, and never raises.
    whole = validate(history)
    last = len(history) - 1
    parts = []
    for i, m in enumerate(history):
        parts += check_at(i, history[i - 1] if i else None, m, pending_ok=i < last)
    assert bool(whole) == bool(parts), (whole, parts)
    # every schema problem validate reports, check_at reports too, in the same words
    schema = {str(p) for p in whole if p.rule in ("schema", "shape", "role")}
    assert schema <= {str(p) for p in parts}


@settings(max_examples=100, deadline=None)
@given(st.lists(json_values, max_size=4))
def test_save_and_load_round_trip_any_json(tmp_path_factory, history):
    path = tmp_path_factory.mktemp("h") / "h.json"
    assert load(save(history, path), check=False) == history


@settings(max_examples=2000, deadline=None)
@given(
    st.one_of(
        st.text(),
        st.text(alphabet="abzAZ09_-", max_size=40),  # mostly ids the pattern accepts
        st.text(alphabet="ab_-\n \t\u00e9\u0661\uff10\u2126", max_size=8),  # near misses
    )
)
def test_the_id_check_is_the_api_pattern(tid):
    # rules.id_ok checks a tool_use id with str methods instead of the regex engine
    # (cheaper in a loop's turn); it must accept exactly what the pattern the API quotes
    # ('^[a-zA-Z0-9_-]+$') accepts: non-ASCII digits and letters (Arabic-Indic, full-width,
    # the Ohm sign that NFKC folds to Omega) and a trailing newline included.
    from agentlab.rules import TOOL_USE_ID, id_ok

    assert id_ok(tid) == (TOOL_USE_ID.fullmatch(tid) is not None)
