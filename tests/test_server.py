"""FakeMessagesServer through the real anthropic SDK over HTTP: JSON, SSE, checks, caching."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import anthropic
import httpx2
import pytest

import agentlab as al
from agentlab.offline import ScriptedClient, make_message, text, tool_use
from agentlab.testing import FakeMessagesServer

MODEL = "claude-sonnet-5-5"
HI = [{"role": "user", "content": "hi"}]
# Over Sonnet 5.5's minimum cacheable prompt (512 tokens; 4 characters a token here).
LONG_SYSTEM = "You are a careful assistant who notes numbers. " * 60


def sdk(server: FakeMessagesServer, retries: int = 0, **options) -> anthropic.Anthropic:
    return anthropic.Anthropic(
        api_key="sk-test-secret", base_url=server.url, max_retries=retries, **options
    )


@al.tool
def note(x: int) -> str:
    """Writes nothing; answers at once."""
    return f"noted {x}"


def test_create_returns_the_scripted_reply_and_records_the_request_without_the_key():
    with FakeMessagesServer([[text("Let me look."), tool_use("note", {"x": 1})]]) as server:
        reply = sdk(server).messages.create(model=MODEL, max_tokens=100, messages=HI)
    assert reply.stop_reason == "tool_use" and reply.model == MODEL
    assert [b.type for b in reply.content] == ["text", "tool_use"]
    assert reply.content[1].input == {"x": 1}
    (seen,) = server.requests
    assert seen.path == "/v1/messages" and seen.status == 200 and seen.retry_count == 0
    assert seen.body["messages"] == HI and seen.body["model"] == MODEL
    assert seen.headers["x-stainless-retry-count"] == "0"
    recorded = json.dumps([seen.body, seen.headers])
    assert "sk-test-secret" not in recorded and "authorization" not in recorded.lower()


def test_a_stream_is_the_apis_event_sequence():
    with FakeMessagesServer([[text("two words"), tool_use("note", {"x": 7})]] * 2) as server:
        events = list(
            sdk(server).messages.create(model=MODEL, max_tokens=100, messages=HI, stream=True)
        )
        raw = httpx2.post(
            server.url + "/v1/messages",
            json={"model": MODEL, "max_tokens": 9, "messages": HI, "stream": True},
            headers={"anthropic-version": "2023-06-01"},
        )
    kinds = [e.type for e in events]
    assert kinds[0] == "message_start" and kinds[-2:] == ["message_delta", "message_stop"]
    assert kinds.count("content_block_start") == kinds.count("content_block_stop") == 2
    deltas = [e.delta.type for e in events if e.type == "content_block_delta"]
    assert set(deltas) == {"text_delta", "input_json_delta"}
    assert events[-2].delta.stop_reason == "tool_use"
    assert raw.headers["content-type"].startswith("text/event-stream")
    assert "event: ping" in raw.text  # the SDK skips pings; the server sends one like the API


def test_the_stream_helper_rebuilds_exactly_the_scripted_message():
    scripted = make_message(
        [
            text("Checking — ünïcödé and a long sentence, streamed word by word."),
            tool_use("note", {"x": 3, "nested": {"list": [1, 2, "three"], "s": "é"}}, id="toolu_a"),
            tool_use("note", {}, id="toolu_b"),
        ],
        model=MODEL,
    )
    with FakeMessagesServer([scripted]) as server:
        with sdk(server).messages.stream(model=MODEL, max_tokens=100, messages=HI) as stream:
            pieces = list(stream.text_stream)
            final = stream.get_final_message()
    assert "".join(pieces) == scripted.content[0].text and len(pieces) > 3
    assert final.model_dump(exclude_none=True) == scripted.model_dump(exclude_none=True)


def test_a_broken_history_gets_a_400_in_the_api_shape_with_the_offline_wording():
    broken = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "note", "input": {}}]},
        {"role": "user", "content": "forgot the result"},
    ]  # fmt: skip
    params = {"model": MODEL, "max_tokens": 10, "messages": broken}
    with pytest.raises(anthropic.BadRequestError) as offline:
        ScriptedClient(["never"]).messages.create(**params)
    with FakeMessagesServer(["never"]) as server:
        with pytest.raises(anthropic.BadRequestError) as online:
            sdk(server, retries=2).messages.create(**params)
    body = online.value.body
    assert body["type"] == "error" and body["error"]["type"] == "invalid_request_error"
    assert body["error"]["message"] == offline.value.body["error"]["message"]
    assert "tool_result" in body["error"]["message"] and body["request_id"].startswith("req_")
    assert len(server.requests) == 1 and server.requests[0].status == 400  # a 400 is not retried


def test_count_tokens_checks_the_request_and_grows_with_the_history():
    longer = HI + [{"role": "assistant", "content": "hello"}, {"role": "user", "content": "more"}]
    with FakeMessagesServer() as server:
        client = sdk(server)
        short = client.messages.count_tokens(model=MODEL, messages=HI).input_tokens
        long = client.messages.count_tokens(model=MODEL, messages=longer).input_tokens
        with pytest.raises(anthropic.BadRequestError, match="first message"):
            client.messages.count_tokens(model=MODEL, messages=longer[1:])
    assert 0 < short < long
    assert [r.path for r in server.requests] == ["/v1/messages/count_tokens"] * 3


def test_replies_can_be_a_function_of_the_request():
    with FakeMessagesServer(lambda body: f"you sent {len(body['messages'])} message(s)") as server:
        reply = sdk(server).messages.create(model=MODEL, max_tokens=10, messages=HI)
    assert reply.content[0].text == "you sent 1 message(s)"


def test_an_exhausted_script_says_so_and_is_not_retried():
    with FakeMessagesServer(["only one"]) as server:
        client = sdk(server, retries=3)
        client.messages.create(model=MODEL, max_tokens=10, messages=HI)
        with pytest.raises(anthropic.InternalServerError, match="no reply left for request 2"):
            client.messages.create(model=MODEL, max_tokens=10, messages=HI)
    assert len(server.requests) == 2


def test_the_key_and_the_model_name_can_be_checked():
    with FakeMessagesServer(["ok"] * 3, api_key="right", models=[MODEL]) as server:
        with pytest.raises(anthropic.AuthenticationError):
            sdk(server).messages.create(model=MODEL, max_tokens=10, messages=HI)
        good = anthropic.Anthropic(api_key="right", base_url=server.url, max_retries=0)
        with pytest.raises(anthropic.NotFoundError, match="claude-sonnet-9"):
            good.messages.create(model="claude-sonnet-9", max_tokens=10, messages=HI)
        assert good.messages.create(model=MODEL, max_tokens=10, messages=HI).content[0].text == "ok"
    assert "right" not in json.dumps([r.headers for r in server.requests])


def test_the_demo_model_is_served_and_says_what_it_is():
    with FakeMessagesServer() as server:
        client = sdk(server)
        messages = [{"role": "user", "content": "Tell me a joke"}]
        result = al.agent_loop(messages, client, tools=[al.bash], model=MODEL)
    assert server.requests and result.stop_reason == "end_turn"
    assert "not Claude" in result.text


def test_streaming_through_the_loop_shows_text_in_order_before_the_reply():
    first = make_message(
        [text("I will note it down now."), tool_use("note", {"x": 1})], model=MODEL
    )
    with FakeMessagesServer([first, "All noted, thanks."]) as server:
        loop = al.AgentLoop(sdk(server), "note 1", tools=[note], model=MODEL, stream=True)
        events: list[al.Event] = []
        loop.subscribe(events.append)
        result = loop.run()
    kinds = [e.kind for e in events]
    texts = [e.data["text"] for e in events if e.kind == "text"]
    assert "".join(texts) == "I will note it down now." + "All noted, thanks."
    first_response = kinds.index("response")
    assert (
        kinds.index("text") < first_response < kinds.index("decision") < kinds.index("tool_start")
    )
    assert all(server.requests[i].streamed for i in range(2)) and result.turns == 2
    assert al.validate(loop.messages) == []


def test_a_tool_call_cut_off_by_max_tokens_is_never_run_even_when_streamed():
    runs: list[int] = []

    @al.tool
    def count(x: int) -> str:
        """Counts runs."""
        runs.append(x)
        return "ran"

    cut = make_message([tool_use("count", {"x": 1})], "max_tokens", model=MODEL)
    with FakeMessagesServer([cut]) as server:
        result = al.agent_loop(
            [{"role": "user", "content": "go"}],
            sdk(server),
            tools=[count],
            model=MODEL,
            stream=True,
        )
    assert runs == [] and result.stop_reason == "max_tokens"
    assert result.messages[-1]["content"][0]["is_error"] is True
    assert al.validate(result.messages) == []


def test_prompt_caching_marks_each_request_keeps_tools_stable_and_shows_cache_reads():
    script = [[tool_use("note", {"x": 1})], [tool_use("note", {"x": 2})], "done"]
    with FakeMessagesServer(script) as server:
        loop = al.AgentLoop(
            sdk(server), "note twice", tools=[note], model=MODEL, cache=True, system=LONG_SYSTEM
        )
        loop.run()
    bodies = [r.body for r in server.requests]
    assert all(b["cache_control"] == {"type": "ephemeral"} for b in bodies)
    assert bodies[0]["tools"] == bodies[1]["tools"] == bodies[2]["tools"]
    reads = [u["cache_read_input_tokens"] for u in loop.turn_usage]
    assert reads[0] == 0 and 0 < reads[1] < reads[2]  # each turn reads the history it resends
    assert loop.usage["cache_read_input_tokens"] == sum(reads)
    assert al.validate(loop.messages) == []


def test_without_caching_there_is_no_cache_control_and_no_cache_read():
    with FakeMessagesServer([[tool_use("note", {"x": 1})], "done"]) as server:
        loop = al.AgentLoop(sdk(server), "note", tools=[note], model=MODEL)
        loop.run()
    assert all("cache_control" not in r.body for r in server.requests)
    assert loop.usage["cache_read_input_tokens"] == 0
    assert loop.turn_usage[1]["input_tokens"] > loop.turn_usage[0]["input_tokens"]


def test_serve_from_the_shell_answers_the_sdk(tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps(["hello from the script"]))
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "agentlab.testing",
            "--port",
            "0",
            "--quiet",
            "--script",
            str(script),
        ],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        url = line.split(" at ")[1].split(",")[0]
        assert url.startswith("http://127.0.0.1:")
        client = anthropic.Anthropic(api_key="x", base_url=url, max_retries=0)
        reply = client.messages.create(model=MODEL, max_tokens=10, messages=HI)
        assert reply.content[0].text == "hello from the script"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_connect_follows_anthropic_base_url_to_the_server(monkeypatch, capsys):
    with FakeMessagesServer() as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        client = al.connect()
        assert server.url in capsys.readouterr().out
        result = al.agent_loop([{"role": "user", "content": "hello?"}], client, model=MODEL)
    assert isinstance(client, anthropic.Anthropic) and len(server.requests) == 1
    assert "demo" in result.text and server.requests[0].body["model"] == MODEL
