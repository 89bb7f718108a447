"""Every way a real request fails ends the step with a short explanation and the
history exactly as before, over HTTP with the real SDK doing its own retries."""

from __future__ import annotations

import copy

import anthropic
import pytest

import agentlab as al
from agentlab.errors import explain_error, is_request_failure
from agentlab.fakeapi.offline import ScriptedClient, make_message, text, tool_use
from agentlab.fakeapi.server import FakeMessagesServer
from agentlab.i18n import set_language

MODEL = "claude-sonnet-5-5"


@al.tool
def note(x: int) -> str:
    """Answers at once."""
    return f"noted {x}"


def sdk(server: FakeMessagesServer, retries: int = 0, **options) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key="test", base_url=server.url, max_retries=retries, **options)


def loop_after_one_tool_turn(server: FakeMessagesServer, **options) -> al.AgentLoop:
    """A loop whose history already holds a tool call and its result: more to lose."""
    loop = al.AgentLoop(sdk(server, **options), "note 1", tools=[note], model=MODEL)
    loop.turn()
    assert loop.stage == "request" and len(loop.messages) == 3
    return loop


def assert_failed_cleanly(loop: al.AgentLoop, before: list, info: pytest.ExceptionInfo) -> None:
    assert loop.messages == before  # exactly as before the request
    assert loop.stage == "request" and loop.error is info.value
    assert info.value.explanation and "{" not in info.value.explanation
    assert al.validate(loop.messages) == []


STATUSES = {  # status -> (retried by the SDK?, words the explanation must hold)
    401: (False, "API key"),
    403: (False, "403"),
    404: (False, "model"),
    413: (False, "too large"),
    429: (True, "rate limit"),
    500: (True, "internal error"),
    529: (True, "overloaded"),
}


@pytest.mark.parametrize("status", sorted(STATUSES))
def test_each_error_status_explains_itself_and_leaves_the_history_as_it_was(status):
    retried, words = STATUSES[status]
    script = [[tool_use("note", {"x": 1})], "recovered"]
    with FakeMessagesServer(script) as server:
        loop = loop_after_one_tool_turn(server, retries=1)
        before = copy.deepcopy(loop.messages)
        server.reset()
        server.fail(status, times=2)
        with pytest.raises(al.RequestError) as info:
            loop.step()
        assert_failed_cleanly(loop, before, info)
        assert words in info.value.explanation and info.value.status_code == status
        assert server.retry_counts == ([0, 1] if retried else [0])
        assert [r.status for r in server.requests] == [status] * len(server.retry_counts)
        server.faults.clear()
        assert loop.run().text == "recovered"  # the same loop, retried: it just works
    assert al.validate(loop.messages) == [] and len(loop.messages) == 4


@pytest.mark.parametrize("max_retries", [0, 1, 3])
def test_n_overloaded_answers_give_exactly_max_retries_plus_one_requests(max_retries):
    with FakeMessagesServer([[tool_use("note", {"x": 1})], "fine"]) as server:
        loop = loop_after_one_tool_turn(server, retries=max_retries)
        before = copy.deepcopy(loop.messages)
        server.reset()
        server.fail(529, times=max_retries + 1)
        with pytest.raises(al.RequestError) as info:
            loop.step()
        assert_failed_cleanly(loop, before, info)
        assert server.retry_counts == list(range(max_retries + 1))
        assert "529" in info.value.explanation
        assert (f"retried {max_retries} time" in info.value.explanation) == (max_retries > 0)
        assert loop.step() == "request" and server.retry_counts[-1] == 0
    assert loop.messages[-1]["role"] == "assistant"


def test_fewer_failures_than_retries_are_invisible_to_the_loop():
    with FakeMessagesServer(["made it"]) as server:
        server.fail(529, times=2).fail(429, times=1)
        result = al.agent_loop(
            [{"role": "user", "content": "hi"}], sdk(server, retries=3), model=MODEL
        )
    assert result.text == "made it" and server.retry_counts == [0, 1, 2, 3]


def test_a_bad_model_name_is_a_404_that_names_it():
    with FakeMessagesServer(["never"], models=[MODEL]) as server:
        loop = al.AgentLoop(sdk(server, retries=2), "hi", model="claude-sonet-5", tools=[note])
        with pytest.raises(al.RequestError, match="claude-sonet-5") as info:
            loop.step()
    assert_failed_cleanly(loop, [{"role": "user", "content": "hi"}], info)
    assert len(server.requests) == 1


def test_a_wrong_key_is_a_401_that_says_what_to_check():
    with FakeMessagesServer(["never"], api_key="the-right-one") as server:
        loop = al.AgentLoop(sdk(server), "hi", model=MODEL, tools=[note])
        with pytest.raises(al.RequestError, match="ANTHROPIC_API_KEY"):
            loop.step()
    assert loop.messages == [{"role": "user", "content": "hi"}]


def test_a_dropped_connection_is_retried_then_explained():
    with FakeMessagesServer([[tool_use("note", {"x": 1})], "back"]) as server:
        loop = loop_after_one_tool_turn(server, retries=1)
        before = copy.deepcopy(loop.messages)
        server.reset()
        server.drop(times=2)
        with pytest.raises(al.RequestError, match="Could not reach") as info:
            loop.step()
        assert_failed_cleanly(loop, before, info)
        assert isinstance(info.value.cause, anthropic.APIConnectionError)
        assert server.retry_counts == [0, 1] and [r.status for r in server.requests] == [None] * 2
        assert loop.run().text == "back"


def test_a_timeout_is_explained():
    with FakeMessagesServer(["too late"]) as server:
        server.slow(5.0)
        loop = al.AgentLoop(sdk(server, timeout=0.3), "hi", model=MODEL, tools=[note])
        with pytest.raises(al.RequestError, match="timed out") as info:
            loop.step()
    assert isinstance(info.value.cause, anthropic.APITimeoutError)
    assert_failed_cleanly(loop, [{"role": "user", "content": "hi"}], info)


@pytest.mark.parametrize("fault", ["break_stream", "cut_stream"])
def test_a_stream_that_fails_midway_appends_nothing(fault):
    long_reply = make_message(
        [text("one two three four five six"), tool_use("note", {"x": 2})], model=MODEL
    )
    with FakeMessagesServer(
        [[tool_use("note", {"x": 1})], long_reply, long_reply, "done"]
    ) as server:
        loop = al.AgentLoop(sdk(server, retries=2), "go", tools=[note], model=MODEL, stream=True)
        loop.turn()
        before = copy.deepcopy(loop.messages)
        events: list[al.Event] = []
        loop.subscribe(events.append)
        server.reset()
        getattr(server, fault)(after=3)
        with pytest.raises(al.RequestError, match="mid") as info:
            loop.step()
        assert_failed_cleanly(loop, before, info)
        kinds = [e.kind for e in events]
        assert kinds.count("text") == 3 and "response" not in kinds and "append" not in kinds
        assert kinds[-1] == "error" and events[-1].data["error"] is info.value
        assert len(server.requests) == 1  # an error mid-stream is not retried by the SDK
        result = loop.run()  # the retry streams the whole reply
    assert result.text == "done" and loop.messages[3]["content"][0]["text"].endswith("six")
    assert al.validate(loop.messages) == []


def test_a_fault_meant_for_a_stream_fails_a_plain_request_with_its_status():
    with FakeMessagesServer(["x"]) as server:
        server.break_stream(after=1)
        with pytest.raises(anthropic.InternalServerError) as info:
            sdk(server).messages.create(
                model=MODEL, max_tokens=5, messages=[{"role": "user", "content": "hi"}]
            )
    assert info.value.status_code == 529


def test_other_exceptions_are_not_hidden_as_request_errors():
    loop = al.AgentLoop(ScriptedClient([ValueError("a bug in a fake client")]), "hi", tools=[note])
    with pytest.raises(ValueError, match="a bug"):
        loop.step()
    assert loop.error is None and not is_request_failure(ValueError("x"))


def test_explanations_follow_the_language():
    with FakeMessagesServer(["x"]) as server:
        server.fail(529)
        try:
            set_language("zh")
            with pytest.raises(anthropic.APIStatusError) as info:
                sdk(server).messages.create(
                    model=MODEL, max_tokens=5, messages=[{"role": "user", "content": "hi"}]
                )
            assert "过载" in explain_error(info.value)
        finally:
            set_language("en")
    assert "overloaded" in explain_error(info.value)


def test_thinking_blocks_sent_to_another_model_are_explained_with_both_names():
    messages = [{"role": "user", "content": "How many .py files are here?"}]
    client = al.DemoClient()
    al.agent_loop(messages, client, tools=[al.bash])  # Sonnet 5.5 thinks: signed blocks
    messages.append({"role": "user", "content": "List the files"})
    with pytest.raises(al.RequestError) as info:
        al.agent_loop(messages, client, tools=[al.bash], model="claude-opus-4-8")
    text = info.value.explanation
    assert "Invalid `signature`" in text
    assert "claude-sonnet-5-5" in text and "claude-opus-4-8" in text
    set_language("zh")
    try:
        zh = explain_error(info.value.cause)
    finally:
        set_language(None)
    assert "claude-sonnet-5-5" in zh and "%agent reset" in zh and zh != text


def test_a_changed_thinking_block_is_not_blamed_on_another_model():
    messages = [{"role": "user", "content": "How many .py files are here?"}]
    client = al.DemoClient()
    al.agent_loop(messages, client, tools=[al.bash])
    messages[1]["content"][0]["signature"] += "x"  # altered, same model
    messages.append({"role": "user", "content": "List the files"})
    with pytest.raises(al.RequestError) as info:  # a new client checks the whole history
        al.agent_loop(messages, al.DemoClient(), tools=[al.bash])
    assert "another model" not in info.value.explanation
    assert "unchanged" in info.value.explanation


def test_a_changed_system_prompt_under_a_thinking_block_is_explained_append_only(
    tmp_path, monkeypatch
):
    """The prefix check's 400 (preserved-thinking/fix-bound-to-a-different-conversation,
    read 2026-12-01), explained in plain words; the fix, a new message at the end, works."""
    monkeypatch.chdir(tmp_path)
    demo = al.DemoClient()
    chat = [{"role": "user", "content": "How many Python files are in this folder?"}]
    reply = al.request(demo, chat, system="Be brief.", tools=[al.bash])
    al.append(chat, reply)
    al.append(chat, al.execute(al.decide(reply).tool_uses, tools=[al.bash]))
    with pytest.raises(anthropic.BadRequestError) as raised:
        al.request(demo, chat, system="Be brief. Today is Tuesday.", tools=[al.bash])
    assert "bound to a different conversation" in raised.value.message
    explained = explain_error(raised.value)
    assert "append-only" in explained and "new message at the end" in explained
    edited = copy.deepcopy(chat)
    edited[2]["content"][0]["content"] = "(summarised)"  # after the block: no harm
    assert al.validate(edited) == []
    edited[0]["content"] = "How many files?"  # before it: the block is invalid
    (problem,) = al.validate(edited)
    assert problem.rule == "thinking_prefix" and problem.index == 1
    chat.append({"role": "system", "content": "Today is Tuesday."})  # append-only
    assert al.request(demo, chat, system="Be brief.", tools=[al.bash]).stop_reason == "end_turn"
