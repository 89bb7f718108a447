"""agentlab.fakeapi.thinking: signatures, and the API's refusals of altered or dropped thinking blocks.

Sources for the behaviour imitated here (checked 2026-11-30): platform.claude.com "What's new in Claude
Sonnet 5.5" and its migration guide (adaptive thinking by default, display
"omitted", thinking blocks sent back unchanged), and the error texts seen in
public reports in 2026: "messages.3.content.0: Invalid `signature` in
`thinking` block" and "Expected `thinking` or `redacted_thinking`, but found
`text`. When `thinking` is enabled, a final `assistant` message must start
with a thinking block ..." (the rest of that sentence is not known to us, so
the tests check only the known part).
"""

from __future__ import annotations

import copy

import pytest

from agentlab.fakeapi import thinking

SONNET, HAIKU = "claude-sonnet-5-5", "claude-haiku-4-5"


def block(hidden="I should count the files.", model=SONNET, shown="omitted"):
    return thinking.make_block(model, hidden, shown)


def use(id="toolu_01", command="ls"):
    return {"type": "tool_use", "id": id, "name": "bash", "input": {"command": command}}


def result(id="toolu_01", content="a.py"):
    return {"type": "tool_result", "tool_use_id": id, "content": content}


def exchange(model=SONNET):
    """A task, a reply with thinking and a tool call, and its result: the turn being continued."""
    return [
        {"role": "user", "content": "List the files"},
        {"role": "assistant", "content": [block(model=model), use()]},
        {"role": "user", "content": [result()]},
    ]


def params(messages, model=SONNET, **extra):
    return {"model": model, "max_tokens": 100, "messages": messages, **extra}


def test_an_omitted_block_has_empty_text_and_a_signature_that_verifies():
    b = block()
    assert b["type"] == "thinking" and b["thinking"] == "" and b["signature"]
    assert thinking.verify(SONNET, b)
    assert thinking.hidden(b) == "I should count the files."  # our imitation is readable
    shown = block(shown="summarized")
    assert shown["thinking"] == "I should count the files." and thinking.verify(SONNET, shown)


def test_the_signature_is_tied_to_the_model_and_survives_a_restart():
    b = block()
    assert not thinking.verify(HAIKU, b)
    # A fixed, documented key: the same input signs the same way in any process.
    assert thinking.sign(SONNET, "x") == thinking.sign(SONNET, "x")
    assert thinking.KEY.startswith(b"agentlab")


def test_an_intact_history_passes():
    assert thinking.check(params(exchange())) == []


@pytest.mark.parametrize(
    "change",
    [
        lambda b: b.update(thinking="I made this up."),  # text added to an omitted block
        lambda b: b.update(signature=b["signature"][:-4] + "abcd"),  # the HMAC changed
        lambda b: b.update(signature="not-a-signature"),
        lambda b: b.update(signature=thinking.sign(HAIKU, "other thoughts")),  # another model's
        lambda b: b.pop("signature"),
    ],
)
def test_an_altered_thinking_block_is_refused_with_the_apis_words(change):
    messages = exchange()
    change(messages[1]["content"][0])
    assert thinking.check(params(messages)) == [
        "messages.1.content.0: Invalid `signature` in `thinking` block"
    ]


def test_a_block_sent_to_another_model_is_refused():
    assert thinking.check(params(exchange(), model="claude-opus-5-5")) == [
        "messages.1.content.0: Invalid `signature` in `thinking` block"
    ]


def test_the_error_names_the_message_and_block_that_changed():
    messages = exchange() + [
        {"role": "assistant", "content": [block(), {"type": "text", "text": "Done."}]},
        {"role": "user", "content": "thanks"},
    ]
    messages[3]["content"][0]["thinking"] = "edited"
    assert thinking.check(params(messages)) == [
        "messages.3.content.0: Invalid `signature` in `thinking` block"
    ]


def test_dropping_the_thinking_block_of_the_turn_being_continued_is_refused():
    messages = exchange()
    messages[1]["content"] = [{"type": "text", "text": "Let me look."}, use()]
    (error,) = thinking.check(params(messages))
    assert error.startswith("messages.1.content.0.type: ")
    assert (
        "Expected `thinking` or `redacted_thinking`, but found `text`. When `thinking` is "
        "enabled, a final `assistant` message must start with a thinking block" in error
    )
    messages[1]["content"] = [use()]
    assert "but found `tool_use`" in thinking.check(params(messages))[0]


def test_earlier_turns_may_drop_their_thinking_blocks():
    messages = exchange()
    messages[1]["content"] = [use()]  # an earlier tool turn, its thinking dropped
    messages += [
        {"role": "assistant", "content": [block(), use("toolu_02", "wc -l a.py")]},
        {"role": "user", "content": [result("toolu_02", "1 a.py")]},
    ]
    assert thinking.check(params(messages)) == []


def test_a_new_question_after_a_finished_answer_needs_no_thinking_block():
    messages = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "Hello."},
        {"role": "user", "content": "List the files"},
    ]
    assert thinking.check(params(messages)) == []


def test_without_thinking_nothing_must_start_with_a_block():
    messages = exchange(HAIKU)
    messages[1]["content"] = [use()]
    assert thinking.check(params(messages, model=HAIKU)) == []
    # ... but haiku asked to think follows the same rule
    enabled = {"type": "enabled", "budget_tokens": 2000}
    assert thinking.check(params(messages, model=HAIKU, thinking=enabled))
    assert thinking.check(params(messages, thinking={"type": "disabled"})) == []


def test_between_tools_has_no_up_front_thinking():
    """Under between_tools the reply to the person's own words starts without thinking;
    a turn after a tool result still starts with one."""
    messages = exchange()
    messages[1]["content"] = [{"type": "text", "text": "Let me look."}, use()]
    bt = {"type": "between_tools"}
    assert thinking.check(params(messages, thinking=bt)) == []
    messages += [
        {"role": "assistant", "content": [{"type": "text", "text": "And now:"}, use("toolu_02")]},
        {"role": "user", "content": [result("toolu_02")]},
    ]
    assert "Expected `thinking`" in thinking.check(params(messages, thinking=bt))[0]


def test_sdk_objects_in_the_history_are_read_too():
    from anthropic.types import ThinkingBlock, ToolUseBlock

    messages = exchange()
    messages[1] = {
        "role": "assistant",
        "content": [ThinkingBlock(**block()), ToolUseBlock(**use())],
    }
    assert thinking.check(params(messages)) == []
    changed = copy.deepcopy(messages)
    changed[1]["content"][0].thinking = "peeked"
    assert "Invalid `signature`" in thinking.check(params(changed))[0]


def test_mode_and_display_follow_the_model_table():
    assert thinking.mode({"model": SONNET}) == "adaptive"
    assert thinking.mode({"model": "claude-sonnet-5-5-20260928"}) == "adaptive"
    assert thinking.mode({"model": HAIKU}) is None
    assert thinking.mode({"model": "no-such-model"}) == "adaptive"  # like the default model
    assert (
        thinking.mode({"model": SONNET, "thinking": {"type": "between_tools"}}) == "between_tools"
    )
    assert thinking.display({"model": SONNET}) == "omitted"
    assert (
        thinking.display(
            {"model": SONNET, "thinking": {"type": "adaptive", "display": "summarized"}}
        )
        == "summarized"
    )
    assert (
        thinking.display({"model": HAIKU, "thinking": {"type": "enabled", "budget_tokens": 1024}})
        == "summarized"
    )


def test_since_skips_messages_already_checked_but_not_the_turn_being_continued():
    messages = exchange()
    messages[1]["content"][0]["thinking"] = "edited"
    assert thinking.check(params(messages), since=2) == []
    assert thinking.check(params(messages), since=1)
    messages[1]["content"] = [use()]
    assert "Expected `thinking`" in thinking.check(params(messages), since=3)[0]
