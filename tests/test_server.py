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
from agentlab.fakeapi.offline import ScriptedClient, make_message, text, tool_use
from agentlab.fakeapi.server import FakeMessagesServer

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
            headers={"anthropic-version": "2023-06-01", "x-api-key": "k"},
        )
    kinds = [e.type for e in events]
    assert kinds[0] == "message_start" and kinds[-2:] == ["message_delta", "message_stop"]
    assert kinds.count("content_block_start") == kinds.count("content_block_stop") == 2
    deltas = [e.delta.type for e in events if e.type == "content_block_delta"]
    assert set(deltas) == {"text_delta", "input_json_delta"}
    assert events[-2].delta.stop_reason == "tool_use"
    assert raw.headers["content-type"].startswith("text/event-stream")
    assert "event: ping" in raw.text  # the SDK skips pings; the server sends one like the API


def test_a_request_without_a_key_is_a_401_and_any_key_is_taken():
    # {"type": "authentication_error", "message": "x-api-key header is required"}: the
    # API's answer to a request with no key, as public reports of 2024-2026 quote it
    # (not on a docs page). A bearer token (Claude Code's ANTHROPIC_AUTH_TOKEN) counts.
    body = {"model": MODEL, "max_tokens": 9, "messages": HI}
    version = {"anthropic-version": "2023-06-01"}
    with FakeMessagesServer(["a", "b"]) as server:
        none = httpx2.post(server.url + "/v1/messages", json=body, headers=version)
        key = httpx2.post(
            server.url + "/v1/messages", json=body, headers={**version, "x-api-key": "x"}
        )
        bearer = httpx2.post(server.url + "/v1/messages", json=body,
                             headers={**version, "authorization": "Bearer t"})  # fmt: skip
    assert none.status_code == 401
    assert none.json()["error"] == {"type": "authentication_error",
                                    "message": "x-api-key header is required"}  # fmt: skip
    assert key.status_code == bearer.status_code == 200


def test_a_plain_json_reply_carries_stop_sequence_null_as_the_api_does():
    # The Messages API reference's example response (platform.claude.com/docs/en/api/
    # messages) has "stop_sequence": null when no stop sequence fired; recalled, not
    # re-checked on 2026-12-01. The offline make_message and the stream's message_start
    # already carry it; a third-party client reading the field must find it here too.
    with FakeMessagesServer(["done"]) as server:
        raw = httpx2.post(
            server.url + "/v1/messages",
            json={"model": MODEL, "max_tokens": 9, "messages": HI},
            headers={"anthropic-version": "2023-06-01", "x-api-key": "k"},
        )
    body = raw.json()
    assert body["stop_reason"] == "end_turn"
    assert "stop_sequence" in body and body["stop_sequence"] is None


@pytest.mark.parametrize("model", [["claude-haiku-4-5"], 5, {"id": "x"}])
def test_a_model_that_is_not_a_string_is_a_400_not_a_crash(model):
    # A client error: the API answers 400 with pydantic's wording for a wrong type, as
    # for other fields ("messages.0.content.0.text: Input should be a valid string");
    # the exact text for `model` is not public. Before, the server crashed (500).
    with FakeMessagesServer(["never"]) as server:
        raw = httpx2.post(
            server.url + "/v1/messages",
            json={"model": model, "max_tokens": 9, "messages": HI},
            headers={"anthropic-version": "2023-06-01", "x-api-key": "k"},
        )
    assert raw.status_code == 400
    assert raw.json()["error"]["message"] == "model: Input should be a valid string"


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


def test_a_streamed_refusal_carries_stop_details_in_message_delta_as_the_api_sends_it():
    # "In the event stream, stop_details arrives with stop_reason in the message_delta
    # event" (platform.claude.com/docs/en/test-and-evaluate/strengthen-guardrails/
    # handle-streaming-refusals, read 2026-12-03). The SDK's stream() copies it from there.
    asked = [{"role": "user", "content": "agentlab refusal test, please"}]
    with FakeMessagesServer() as server:
        client = sdk(server)
        plain = client.messages.create(model=MODEL, max_tokens=100, messages=asked)
        events = list(
            client.messages.create(model=MODEL, max_tokens=100, messages=asked, stream=True)
        )
        with client.messages.stream(model=MODEL, max_tokens=100, messages=asked) as stream:
            final = stream.get_final_message()
    assert plain.stop_reason == "refusal" and plain.stop_details is not None
    start, delta = events[0], events[-2]
    assert start.type == "message_start" and start.message.stop_details is None
    assert delta.type == "message_delta" and delta.delta.stop_reason == "refusal"
    assert delta.delta.stop_details == plain.stop_details
    assert final.stop_reason == "refusal" and final.stop_details == plain.stop_details
    assert final.stop_details.recommended_model


CALLED = [
    {"role": "user", "content": "note 1"},
    {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "note",
                                       "input": {"x": 1}}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                  "content": "noted 1"}]},
]  # fmt: skip
NOTE = {"name": "note", "input_schema": {"type": "object"}}


@pytest.mark.parametrize("tools", [None, []])
def test_a_history_with_tool_blocks_and_no_tools_is_a_400_for_create_and_count(tools):
    # "Requests which include tool_use or tool_result blocks must define tools." as the
    # API answered it in github.com/anthropics/anthropic-sdk-python/issues/494 (2024-05-13);
    # whether today's text puts backticks around the names is not known from public material.
    extra = {} if tools is None else {"tools": tools}
    with FakeMessagesServer([[text("done")]]) as server:
        client = sdk(server)
        for call in (client.messages.create, client.messages.count_tokens):
            fields = {"max_tokens": 50} if call == client.messages.create else {}
            with pytest.raises(anthropic.BadRequestError) as caught:
                call(model=MODEL, messages=CALLED, **fields, **extra)
            assert caught.value.body["error"]["message"] == (
                "Requests which include tool_use or tool_result blocks must define tools."
            )
        # The way to let the model call nothing this turn: keep the tools, choose none.
        reply = client.messages.create(
            model=MODEL, max_tokens=50, messages=CALLED, tools=[NOTE], tool_choice={"type": "none"}
        )
    assert reply.content[0].text == "done"


@pytest.mark.parametrize("end", [" ", "\n", "\t "])
def test_a_prefill_that_ends_in_whitespace_is_a_400_on_a_model_that_takes_prefill(end):
    # "messages: final assistant content cannot end with trailing whitespace", as the API
    # answered it in github.com/tailcallhq/forgecode/issues/1872 (2025-11-08).
    started = [*HI, {"role": "assistant", "content": "The answer is" + end}]
    blocks = [*HI, {"role": "assistant", "content": [{"type": "text", "text": "Sure:" + end}]}]
    with FakeMessagesServer([[text(" 42")]]) as server:
        client = sdk(server)
        for history in (started, blocks):
            with pytest.raises(anthropic.BadRequestError) as caught:
                client.messages.create(model="claude-haiku-4-5", max_tokens=50, messages=history)
            assert caught.value.body["error"]["message"] == (
                "messages: final assistant content cannot end with trailing whitespace"
            )
        started[-1]["content"] = "The answer is"
        reply = client.messages.create(model="claude-haiku-4-5", max_tokens=50, messages=started)
    assert reply.content[0].text == " 42"


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


def test_cache_writes_are_split_by_ttl_and_a_1h_mark_after_a_5m_one_is_refused():
    # usage.cache_creation holds ephemeral_5m_input_tokens and ephemeral_1h_input_tokens
    # (the SDK's CacheCreation type); "Cache entries with longer TTL must appear before
    # shorter TTLs" (prompt-caching docs, "Mixing different TTLs", read 2026-12-03).
    def system(first: str, second: str) -> list[dict]:
        return [
            {"type": "text", "text": LONG_SYSTEM, "cache_control": {"type": "ephemeral", "ttl": first}},
            {"type": "text", "text": LONG_SYSTEM + "!", "cache_control": {"type": "ephemeral", "ttl": second}},
        ]  # fmt: skip

    with FakeMessagesServer(["one", "two"]) as server:
        client = sdk(server)
        plain = client.messages.create(model=MODEL, max_tokens=9, messages=HI)
        mixed = client.messages.create(
            model=MODEL, max_tokens=9, messages=HI, system=system("1h", "5m")
        )
        with pytest.raises(anthropic.BadRequestError, match="longer TTLs must come first"):
            client.messages.create(
                model=MODEL, max_tokens=9, messages=HI, system=system("5m", "1h")
            )
    assert plain.usage.cache_creation is not None
    assert plain.usage.cache_creation.ephemeral_5m_input_tokens == 0
    written = mixed.usage.cache_creation
    assert written.ephemeral_1h_input_tokens > 0 and written.ephemeral_5m_input_tokens > 0
    assert mixed.usage.cache_creation_input_tokens == (
        written.ephemeral_1h_input_tokens + written.ephemeral_5m_input_tokens
    )


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
            "agentlab.fakeapi.server",
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


# ---------------------------------------------------------------------------
# GET /v1/models, generation controls through the SDK
# ---------------------------------------------------------------------------


def test_the_sdk_lists_and_retrieves_models():
    with FakeMessagesServer() as server:
        client = sdk(server)
        ids = [m.id for m in client.models.list()]
        one = client.models.retrieve(MODEL)
        with pytest.raises(anthropic.NotFoundError, match="claude-nope"):
            client.models.retrieve("claude-nope")
    assert MODEL in ids and "claude-haiku-4-5" in ids
    assert one.display_name == "Claude Sonnet 5.5" and one.created_at.year == 2026


def test_max_tokens_cuts_a_stream_and_the_loop_does_not_run_the_cut_call():
    runs: list[int] = []

    @al.tool
    def count(x: int) -> str:
        """Counts runs."""
        runs.append(x)
        return "ran"

    reply = [text("I will count."), tool_use("count", {"x": 123456789})]
    with FakeMessagesServer([reply]) as server:
        with sdk(server).messages.stream(
            model=MODEL, max_tokens=4, messages=HI, tools=[count.definition]
        ) as stream:
            final = stream.get_final_message()
    assert final.stop_reason == "max_tokens" and final.usage.output_tokens == 4
    assert [b.type for b in final.content] == ["text", "tool_use"]
    assert final.content[1].input in ({}, {"x": 1})  # what fitted of the input, never run
    assert runs == []


def test_a_command_cut_by_max_tokens_never_arrives_as_a_shorter_command_that_parses():
    # A cut call's JSON does not close. The SDK reads partial JSON with jiter's
    # partial_mode=True (anthropic/lib/streaming/_messages.py, 2.16), which leaves a cut
    # string out; the plain reply's input is read the same way, and a client that
    # parses the streamed JSON strictly gets an error rather than "rm -rf /".
    call = tool_use("bash", {"command": "rm -rf /tmp/agentlab-scratch", "why": "clean"})
    with FakeMessagesServer([[call]] * 3) as server:
        client = sdk(server)
        ask = {"model": MODEL, "max_tokens": 5, "messages": HI, "tools": [al.bash.definition]}
        plain = client.messages.create(**ask)
        events = list(client.messages.create(**ask, stream=True))
        with client.messages.stream(**ask) as stream:
            final = stream.get_final_message()
    sent = "".join(e.delta.partial_json for e in events if e.type == "content_block_delta")
    assert plain.stop_reason == final.stop_reason == "max_tokens"
    assert plain.content[0].input == final.content[0].input == {}
    with pytest.raises(json.JSONDecodeError):
        json.loads(sent)
    assert "rm -rf /" not in json.dumps(plain.model_dump())


def test_a_thinking_block_cut_by_max_tokens_can_be_sent_back_unchanged():
    # What the API signs when max_tokens cuts a thinking block is not in its docs; the
    # emulator signs the part it sent, so the loop's next request is not refused.
    thinking = {"type": "adaptive", "display": "summarized"}
    ask = [{"role": "user", "content": "How many Python files are here?"}]
    with FakeMessagesServer() as server:
        client = sdk(server)
        for streamed in (False, True):
            fields = {"model": MODEL, "tools": [al.bash.definition], "thinking": thinking}
            if streamed:
                with client.messages.stream(max_tokens=5, messages=ask, **fields) as stream:
                    cut = stream.get_final_message()
            else:
                cut = client.messages.create(max_tokens=5, messages=ask, **fields)
            assert cut.stop_reason == "max_tokens" and [b.type for b in cut.content] == ["thinking"]
            assert 0 < len(cut.content[0].thinking) <= 20 and cut.content[0].signature
            again = [*ask, {"role": "assistant", "content": cut.content},
                     {"role": "user", "content": "Go on."}]  # fmt: skip
            assert client.messages.create(max_tokens=2000, messages=again, **fields).content
            again[1] = {"role": "assistant", "content": [
                {**cut.content[0].model_dump(), "thinking": cut.content[0].thinking + "!"}]}  # fmt: skip
            with pytest.raises(anthropic.BadRequestError, match="signature"):
                client.messages.create(max_tokens=2000, messages=again, **fields)


STRICT = {
    "type": "object",
    "properties": {
        "files": {"type": "array", "items": {"type": "string"}, "minItems": 3, "maxItems": 5},
        "count": {"type": "integer", "minimum": 10, "maximum": 20},
        "code": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]{2}$"},
        "when": {"type": "string", "format": "date-time"},
        "mail": {"type": "string", "format": "email"},
        "short": {"type": "string", "minLength": 2, "maxLength": 5},
        "ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
    },
    "required": ["files", "count", "code", "when", "mail", "short", "ratio"],
    "additionalProperties": False,
}


@pytest.mark.parametrize("task", ["Tell me a joke", "How many Python files are here?"])
def test_the_demos_structured_output_fits_a_schema_with_lengths_bounds_formats_and_a_pattern(
    task, tmp_path, monkeypatch
):
    # With output_config.format the reply's text is JSON that fits the schema
    # (platform.claude.com/docs/en/build-with-claude/structured-outputs, read 2026-12-01).
    # Whether the API takes each of these keywords is not all public; the demo fits them.
    import jsonschema

    fits = jsonschema.Draft202012Validator(STRICT, format_checker=jsonschema.FormatChecker())
    (tmp_path / "a.py").write_text("print(1)\n")
    monkeypatch.chdir(tmp_path)
    with FakeMessagesServer() as server:
        client = sdk(server)
        result = al.agent_loop(
            [{"role": "user", "content": task}], client, tools=[al.bash], model=MODEL,
            output_config={"format": {"type": "json_schema", "schema": STRICT}},
        )  # fmt: skip
    assert result.stop_reason == "end_turn"
    fits.validate(json.loads(result.text))


@pytest.mark.parametrize("model", ["claude-sonnet-5-5", "claude-haiku-4-5"])
def test_max_tokens_cuts_a_reply_that_costs_more_and_only_such_a_reply(model):
    # max_tokens bounds the tokens the reply writes, hidden ("omitted") thinking
    # included, and output_tokens counts those same tokens (handling-stop-reasons docs:
    # "max_tokens: Claude's response was cut off because it hit the max_tokens limit";
    # extended-thinking docs: thinking tokens are billed as output). How the real count
    # is made is not public; here both use controls.output_tokens.
    ask = {"model": model, "messages": [{"role": "user", "content": "list the files here"}],
           "tools": [al.bash.definition]}  # fmt: skip
    with FakeMessagesServer() as server:
        client = sdk(server)
        whole = client.messages.create(max_tokens=8000, **ask)
        cost = whole.usage.output_tokens
        fits = client.messages.create(max_tokens=cost, **ask)
        cut = client.messages.create(max_tokens=cost - 1, **ask)
        first = client.messages.create(max_tokens=1, **ask)
    assert whole.stop_reason == fits.stop_reason == "tool_use" and cost > 1
    same = [b.model_dump(exclude={"id"}) for b in fits.content]
    assert same == [b.model_dump(exclude={"id"}) for b in whole.content]
    assert fits.usage.output_tokens == cost
    assert cut.stop_reason == "max_tokens" and cut.usage.output_tokens == cost - 1
    assert first.stop_reason == "max_tokens" and first.usage.output_tokens == 1
    if whole.content[0].type == "thinking":  # the thinking is written first, shown or not
        assert [b.type for b in first.content] == ["thinking"]


def test_the_demo_fills_a_recursive_schema_without_a_crash():
    # SDK trial: {"$ref": "#"} in items sent the demo round and round (a 500 RecursionError).
    import jsonschema

    tree = {
        "type": "object",
        "properties": {"name": {"type": "string"}, "children": {"type": "array", "items": {"$ref": "#"}}},
        "required": ["name", "children"],
        "additionalProperties": False,
    }  # fmt: skip
    with FakeMessagesServer() as server:
        reply = sdk(server).messages.create(
            model=MODEL, max_tokens=4000, messages=[{"role": "user", "content": "Tell me a joke"}],
            output_config={"format": {"type": "json_schema", "schema": tree}},
        )  # fmt: skip
    assert reply.stop_reason == "end_turn"
    jsonschema.validate(json.loads(reply.content[-1].text), tree)


def test_a_request_for_an_unknown_model_is_accepted_with_any_model():
    with FakeMessagesServer(["fine"], any_model=True) as server:
        reply = sdk(server).messages.create(model="my-local-model", max_tokens=5, messages=HI)
    assert reply.content[0].text == "fine"


# ---------------------------------------------------------------------------
# The prompt-cache simulation follows the documented rules
# ---------------------------------------------------------------------------

LONG = "word " * 800  # about 1,000 tokens at 4 characters a token


def turn(n: int, mark: str = "last") -> dict:
    """A request of ``n`` user/assistant exchanges; ``mark`` says where the breakpoint is."""
    messages: list[dict] = []
    for i in range(n):
        messages += [{"role": "user", "content": [{"type": "text", "text": f"question {i}"}]},
                     {"role": "assistant", "content": [{"type": "text", "text": f"answer {i}"}]}]  # fmt: skip
    messages.append({"role": "user", "content": [{"type": "text", "text": f"question {n}"}]})
    system = [{"type": "text", "text": LONG}]
    if mark == "last":
        messages[-1]["content"][-1]["cache_control"] = {"type": "ephemeral"}
    elif mark == "system":
        system[-1]["cache_control"] = {"type": "ephemeral"}
    return {"model": MODEL, "max_tokens": 10, "system": system, "messages": messages}


def test_a_breakpoint_moved_to_the_newest_message_reads_what_the_last_turn_wrote():
    from agentlab.fakeapi.server.cache import PromptCache, count

    cache = PromptCache()
    first, second, third = (cache.usage(turn(n), 512) for n in (0, 1, 2))
    assert first["cache_read_input_tokens"] == 0 and first["cache_creation_input_tokens"] > 1000
    assert second["cache_read_input_tokens"] == first["cache_creation_input_tokens"]
    assert third["cache_read_input_tokens"] == count(turn(1))  # all of turn 2's prompt
    for n, u in zip((0, 1, 2), (first, second, third)):
        assert u["input_tokens"] == 0  # nothing after the last breakpoint
        assert u["cache_read_input_tokens"] + u["cache_creation_input_tokens"] == count(turn(n))


def test_a_system_only_breakpoint_reads_the_system_and_the_rest_is_input():
    from agentlab.fakeapi.server.cache import PromptCache, count

    cache = PromptCache()
    a, b = cache.usage(turn(0, "system"), 512), cache.usage(turn(3, "system"), 512)
    assert a["cache_read_input_tokens"] == 0 and a["cache_creation_input_tokens"] > 0
    assert b["cache_read_input_tokens"] == a["cache_creation_input_tokens"]
    assert b["cache_creation_input_tokens"] == 0
    assert b["input_tokens"] == count(turn(3, "system")) - b["cache_read_input_tokens"] > 0


def test_a_prompt_below_the_minimum_is_not_cached_and_the_minimum_is_per_model():
    from agentlab.fakeapi.server.cache import PromptCache

    short = {"model": MODEL, "max_tokens": 5, "cache_control": {"type": "ephemeral"},
             "messages": [{"role": "user", "content": "hi " * 100}]}  # fmt: skip
    cache = PromptCache()
    for _ in range(2):
        u = cache.usage(short, 512)
        assert u["cache_creation_input_tokens"] == u["cache_read_input_tokens"] == 0
    haiku = turn(0)  # about 1,000 tokens: enough for Sonnet 5.5 (512), not for Haiku 4.5 (4,096)
    assert (
        cache.usage(haiku, al.models.get("claude-haiku-4-5").min_cache_tokens)[
            "cache_creation_input_tokens"
        ]
        == 0
    )
    assert cache.usage(haiku, al.models.get(MODEL).min_cache_tokens)["cache_creation_input_tokens"]


def test_without_a_breakpoint_nothing_is_cached_even_if_the_prefix_was():
    from agentlab.fakeapi.server.cache import PromptCache

    cache = PromptCache()
    cache.usage(turn(1), 512)
    plain = turn(1, mark="none")
    u = cache.usage(plain, 512)
    assert u["cache_read_input_tokens"] == 0 and u["input_tokens"] > 1000


# ---------------------------------------------------------------------------
# HTTP: framing, limits, slow and idle clients
# ---------------------------------------------------------------------------

HEAD = "POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\nanthropic-version: 2026-10-21\r\nx-api-key: k\r\n"
BODY = json.dumps({"model": MODEL, "max_tokens": 10, "messages": HI}).encode()


def raw(server: FakeMessagesServer, data: bytes, wait: float = 3.0) -> bytes:
    """Send bytes, then read until the server closes or ``wait`` seconds pass."""
    import socket

    with socket.create_connection(("127.0.0.1", server.port), timeout=wait) as s:
        s.sendall(data)
        got = b""
        try:
            while chunk := s.recv(65536):
                got += chunk
                if b"\r\n\r\n" in got and b"connection: close" not in got.lower():
                    head, _, rest = got.partition(b"\r\n\r\n")
                    length = [
                        ln for ln in head.split(b"\r\n") if ln.lower().startswith(b"content-length")
                    ]
                    if length and len(rest) >= int(length[0].split(b":")[1]):
                        break
        except TimeoutError:
            pass
        return got


def status_and_body(answer: bytes) -> tuple[int, dict]:
    head, _, body = answer.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)


def test_a_chunked_body_is_read_whole():
    chunks = b"".join(
        b"%x\r\n%s\r\n" % (len(BODY[i : i + 7]), BODY[i : i + 7]) for i in range(0, len(BODY), 7)
    )
    with FakeMessagesServer(lambda body: f"got {body['messages'][0]['content']}") as server:
        status, body = status_and_body(
            raw(
                server,
                (HEAD + "transfer-encoding: chunked\r\n\r\n").encode() + chunks + b"0\r\n\r\n",
            )
        )
    assert status == 200 and body["content"][0]["text"] == "got hi"


@pytest.mark.parametrize("length", ["abc", "-1", "1e3", "", "²", "1 2"])
def test_a_content_length_that_is_not_a_number_is_a_400_and_closes(length):
    with FakeMessagesServer(["never"]) as server:
        answer = raw(server, (HEAD + f"content-length: {length}\r\n\r\n").encode() + BODY)
    status, body = status_and_body(answer)
    assert status == 400 and body["error"]["type"] == "invalid_request_error"
    assert b"connection: close" in answer.lower() and server.count == 0


def test_a_body_shorter_than_its_content_length_times_out_with_the_apis_code():
    from agentlab.fakeapi.server import Limits

    with FakeMessagesServer(["never"], limits=Limits(body_timeout=0.5)) as server:
        answer = raw(server, (HEAD + f"content-length: {len(BODY) + 50}\r\n\r\n").encode() + BODY)
    status, body = status_and_body(answer)
    assert status == 400 and body["error"]["details"]["error_code"] == "request_body_timeout"


def test_a_body_over_the_limit_is_a_413_in_the_apis_shape_without_reading_it():
    from agentlab.fakeapi.server import Limits

    with FakeMessagesServer(["never"], limits=Limits(max_body=1000)) as server:
        big = json.dumps(
            {"model": MODEL, "max_tokens": 5, "messages": [{"role": "user", "content": "x" * 5000}]}
        )
        status, body = status_and_body(
            raw(server, (HEAD + f"content-length: {len(big)}\r\n\r\n" + big).encode())
        )
        with pytest.raises(anthropic.APIStatusError) as info:  # the SDK sees the same
            sdk(server).messages.create(
                model=MODEL, max_tokens=5, messages=[{"role": "user", "content": "x" * 5000}]
            )
    assert status == 413 and body["error"]["type"] == "request_too_large"
    assert info.value.status_code == 413


def test_deeply_nested_json_is_refused_and_the_server_goes_on():
    for depth in (150, 5000):  # past the limit of 100; past Python's own recursion limit
        deep = json.dumps({"model": MODEL, "max_tokens": 5, "messages": HI})[:-1]
        deep += ', "metadata": ' + "[" * depth + "]" * depth + "}"
        with FakeMessagesServer(["still here"]) as server:
            head = HEAD + f"content-length: {len(deep)}\r\n\r\n"
            status, body = status_and_body(raw(server, (head + deep).encode()))
            after = sdk(server).messages.create(model=MODEL, max_tokens=5, messages=HI)
        assert status == 400 and body["error"]["type"] == "invalid_request_error"
        assert after.content[0].text == "still here"


def test_idle_connections_are_closed_and_never_lock_others_out():
    import socket

    from agentlab.fakeapi.server import Limits

    limits = Limits(max_connections=8, header_timeout=0.5)
    with FakeMessagesServer(["served"], limits=limits) as server:
        idle = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(8)]
        # All slots taken: the next client closes the oldest idle one and is served
        # at once; the others are closed when their headers are late.
        reply = sdk(server).messages.create(model=MODEL, max_tokens=5, messages=HI)
        for s in idle:
            s.settimeout(2)
            assert s.recv(10) == b""  # closed by the server
            s.close()
    assert reply.content[0].text == "served"


def test_a_slow_sender_is_cut_off_at_the_request_deadline():
    import socket
    import time

    from agentlab.fakeapi.server import Limits

    with FakeMessagesServer(["never"], limits=Limits(header_timeout=0.5)) as server:
        with socket.create_connection(("127.0.0.1", server.port)) as s:
            start = time.monotonic()
            s.settimeout(3)
            s.sendall(b"POST /v1/messages HTTP/1.1\r\n")
            try:
                for _ in range(30):  # one header line every 0.1 s: never finishes
                    s.sendall(b"x-slow: 1\r\n")
                    time.sleep(0.1)
            except OSError:
                pass  # the server closed the connection
            s.recv(100)
            took = time.monotonic() - start
    assert took < 2.5 and server.count == 0


def test_a_class_server_keeps_nothing_per_request():
    with FakeMessagesServer(["a", "b", "c"], record=0) as server:
        client = sdk(server)
        for _ in range(3):
            client.messages.create(model=MODEL, max_tokens=5, messages=HI)
    assert server.count == 3 and len(server.requests) == 0


def test_a_failing_reply_function_is_a_500_that_says_why_and_the_server_goes_on():
    answers = iter([KeyError("oops"), "fine"])

    def reply(body):
        item = next(answers)
        if isinstance(item, Exception):
            raise item
        return item

    with FakeMessagesServer(reply) as server:
        client = sdk(server, retries=2)
        with pytest.raises(anthropic.InternalServerError, match="KeyError"):
            client.messages.create(model=MODEL, max_tokens=5, messages=HI)
        assert (
            client.messages.create(model=MODEL, max_tokens=5, messages=HI).content[0].text == "fine"
        )
    assert [r.status for r in server.requests] == [500, 200]  # x-should-retry: false


# ---------------------------------------------------------------------------
# Attacks on a shared class server: each is answered in the API's error shape
# (never a 500 or a dropped connection) and the server goes on serving.
# ---------------------------------------------------------------------------


def still_serves(server: FakeMessagesServer) -> bool:
    reply = sdk(server).messages.create(model=MODEL, max_tokens=5, messages=HI)
    return reply.content[0].text == "still here"


def test_a_chunk_size_of_minus_one_is_a_400_not_a_read_to_the_end():
    with FakeMessagesServer(["still here"]) as server:
        head = (HEAD + "transfer-encoding: chunked\r\n\r\n").encode()
        answer = raw(server, head + b"-1\r\n" + BODY + b"\r\n0\r\n\r\n")
        status, body = status_and_body(answer)
        assert status == 400 and body["error"]["type"] == "invalid_request_error"
        assert b"connection: close" in answer.lower()
        assert still_serves(server)


def test_a_chunked_body_over_the_limit_is_a_413_in_the_apis_shape():
    from agentlab.fakeapi.server import Limits

    with FakeMessagesServer(["still here"], limits=Limits(max_body=1000)) as server:
        head = (HEAD + "transfer-encoding: chunked\r\n\r\n").encode()
        chunks = b"".join(b"100\r\n" + b"x" * 256 + b"\r\n" for _ in range(20))  # 5 kB
        status, body = status_and_body(raw(server, head + chunks))
        assert status == 413 and body["error"]["type"] == "request_too_large"
        assert still_serves(server) and server.count == 1  # the 413 reached no reply


def test_an_endless_chunk_is_cut_off_at_the_limit_not_read_to_its_end():
    import select
    import socket

    from agentlab.fakeapi.server import Limits

    limit = 100_000
    with FakeMessagesServer(["still here"], limits=Limits(max_body=limit)) as server:
        with socket.create_connection(("127.0.0.1", server.port), timeout=5) as s:
            # One chunk that claims 4 GB; what is sent of it is read as it comes.
            s.sendall((HEAD + "transfer-encoding: chunked\r\n\r\n").encode() + b"ffffffff\r\n")
            sent, piece, got = 0, b"x" * 65536, b""
            try:
                while sent < 64_000_000 and not got:  # bounded: 64 MB at most
                    if select.select([s], [], [], 0)[0]:
                        got = s.recv(65536)
                        break
                    s.sendall(piece)
                    sent += len(piece)
                got = got or s.recv(65536)
            except (BrokenPipeError, ConnectionResetError):
                pass  # closed by the server while unread bytes were still on their way
        assert sent < 32_000_000  # stopped long before the end (socket buffers hold a few MB)
        assert not got or got.startswith(b"HTTP/1.1 413")
        assert still_serves(server)


def test_headers_that_never_finish_are_all_closed_at_the_header_deadline():
    import socket
    import time

    from agentlab.fakeapi.server import Limits

    with FakeMessagesServer(["still here"], limits=Limits(header_timeout=0.5)) as server:
        crowd = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(50)]
        start = time.monotonic()
        for s in crowd[:25]:
            s.sendall(b"POST /v1/messages HTTP/1.1\r\nhost: x\r\n")  # half-sent headers
        for s in crowd:
            s.settimeout(5)
            assert s.recv(10) == b""  # closed by the server
            s.close()
        assert time.monotonic() - start < 4 and server.connections == 0
        assert still_serves(server)


def test_an_idle_crowd_larger_than_the_open_file_limit_cannot_lock_a_student_out(tmp_path):
    import resource
    import socket

    nofile = 64
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentlab.fakeapi.server", "--port", "0", "--quiet"],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile)),
    )
    crowd: list[socket.socket] = []
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().split(" at ")[1].split(",")[0]
        port = int(url.rsplit(":", 1)[1])
        for _ in range(100):  # more half-sent requests than the server may have files
            s = socket.create_connection(("127.0.0.1", port))
            s.sendall(b"POST /v1/messages HTTP/1.1\r\nhost: x\r\n")
            crowd.append(s)
        client = anthropic.Anthropic(api_key="x", base_url=url, max_retries=0)
        reply = client.messages.create(model=MODEL, max_tokens=500, messages=HI)
        said = "".join(b.text for b in reply.content if b.type == "text")
        assert "demo" in said  # served at once, not after the crowd
        assert len(os.listdir(f"/proc/{proc.pid}/fd")) < nofile
    finally:
        for s in crowd:
            s.close()
        proc.terminate()
        proc.wait(timeout=10)


def test_room_for_connections_follows_the_open_file_limit(monkeypatch):
    import resource

    from agentlab.fakeapi.server.http import open_file_room

    monkeypatch.setattr(resource, "getrlimit", lambda _: (256, 4096))
    assert open_file_room(1000) == (192, 8) and open_file_room(100) == (100, 8)


@pytest.mark.parametrize(
    "data, wording",
    [
        (b'{"model": "claude-sonnet-5-5", "max_tokens": 5, "messages": [{"role": "user", '
         b'"content": "caf\xe9"}]}', "The request body is not valid JSON."),
        (b'{"model": "claude-sonnet-5-5", "max_tokens": 5, "messages": [{"role": "user", '
         b'"content": "\\ud800"}]}',
         "The request body is not valid JSON: no low surrogate in string: line 1 column 91 "
         "(char 90)"),
    ],
    ids=["invalid utf-8", "lone surrogate"],
)  # fmt: skip
def test_a_body_that_is_not_unicode_is_a_400_in_the_apis_shape(data, wording):
    with FakeMessagesServer(["still here"]) as server:
        answer = raw(server, (HEAD + f"content-length: {len(data)}\r\n\r\n").encode() + data)
        status, body = status_and_body(answer)
        assert status == 400 and body["error"] == {"type": "invalid_request_error",
                                                   "message": wording}  # fmt: skip
        assert "surrogate" not in wording or data.index(b"\\") == 90  # where the escape is
        assert still_serves(server)


def test_a_body_of_a_million_empty_lists_is_refused_before_it_is_parsed():
    # 32 MB of "[[],[],...]" is about ten million lists: 700 MB or more once parsed, per
    # request. The API's own limit and wording for this are not public: agentlab's.
    from agentlab.fakeapi.server.http import Limits

    lists = b"[" + b",".join([b"[]"] * 1_000_001) + b"]"
    data = b'{"model": "claude-sonnet-5-5", "max_tokens": 5, "messages": ' + lists + b"}"
    with FakeMessagesServer(["still here"]) as server:
        answer = raw(server, (HEAD + f"content-length: {len(data)}\r\n\r\n").encode() + data)
        status, body = status_and_body(answer)
        assert status == 400 and body["error"]["message"] == (
            "The request body holds more than 1,000,000 JSON arrays and objects."
        )
        assert server.requests[-1].body is None  # never parsed
        assert still_serves(server)
    # the limit counts brackets, strings' too: at the limit a body is read as usual
    body = {"model": MODEL, "max_tokens": 5, "messages": [{"role": "user", "content": "[{"}]}
    with FakeMessagesServer(["read"], limits=Limits(max_containers=5)) as server:
        assert sdk(server).messages.create(**body).content[0].text == "read"  # {, [, {, "[{"
    with FakeMessagesServer(["read"], limits=Limits(max_containers=4)) as server:
        with pytest.raises(anthropic.BadRequestError, match="more than 4 JSON arrays"):
            sdk(server).messages.create(**body)


def test_a_surrogate_pair_is_a_character_not_an_error():
    data = json.dumps({"model": MODEL, "max_tokens": 5, "messages": [
        {"role": "user", "content": "\U0001f600 and \\ud800 as text"}]}).encode()  # fmt: skip
    assert b"\\ud83d\\ude00" in data
    with FakeMessagesServer(lambda body: body["messages"][0]["content"]) as server:
        status, body = status_and_body(
            raw(server, (HEAD + f"content-length: {len(data)}\r\n\r\n").encode() + data)
        )
    assert status == 200 and body["content"][0]["text"] == "\U0001f600 and \\ud800 as text"


def test_head_slash_answers_200_for_clients_that_check_the_server_is_up():
    with FakeMessagesServer() as server:
        head = httpx2.head(server.url + "/")
        models = httpx2.head(server.url + "/v1/models")
    assert head.status_code == 200 and head.content == b""
    assert models.status_code == 200


def test_an_unknown_model_is_a_404_that_lists_the_accepted_ones():
    with FakeMessagesServer(["never"]) as server:
        with pytest.raises(anthropic.NotFoundError) as info:
            sdk(server).messages.create(model="claude-sonnet-9", max_tokens=5, messages=HI)
    message = info.value.body["error"]["message"]
    assert message.startswith("model: claude-sonnet-9 (this server accepts: ")
    assert all(m in message for m in al.models.ids())


# ---------------------------------------------------------------------------
# Message threads: random ids, one owner each, bounded in bytes
# ---------------------------------------------------------------------------

BETA = {"anthropic-version": "2026-10-21", "anthropic-beta": "message-threads-2026-08-12"}


def post(server: FakeMessagesServer, key: str, **fields) -> httpx2.Response:
    body = {"model": MODEL, "max_tokens": 10, **fields}
    return httpx2.post(server.url + "/v1/messages", json=body, headers={**BETA, "x-api-key": key})


def test_message_ids_are_random_in_the_apis_form():
    import re

    with FakeMessagesServer(["a"] * 20) as server:
        ids = [post(server, "k", messages=HI).json()["id"] for _ in range(20)]
    assert len(set(ids)) == 20
    assert all(re.fullmatch(r"msg_01[A-Za-z0-9]{22}", i) for i in ids)


def test_a_thread_is_continued_only_with_the_key_that_created_it():
    more = [{"role": "user", "content": "more"}]
    with FakeMessagesServer(["one", "two", "three"]) as server:
        first = post(server, "key-a", messages=HI, thread={"type": "create"}).json()["id"]
        go_on = {"type": "continue", "previous_message_id": first}
        stolen = post(server, "key-b", messages=more, thread=go_on)
        own = post(server, "key-a", messages=more, thread=go_on)
    assert stolen.status_code == 404  # thread_not_found: the SDK would resend its own history
    assert stolen.json()["error"]["details"]["error_code"] == "thread_not_found"
    assert own.status_code == 200 and own.json()["content"][0]["text"] == "two"
    assert [m["role"] for m in server.requests[2].body["messages"]] == ["user"]


def test_the_thread_store_is_bounded_in_bytes_and_forgets_the_oldest_first():
    from agentlab.fakeapi.server.threads import Thread, ThreadStore

    store = ThreadStore(max_bytes=40_000)  # each thread at most 5,000 bytes
    big = [{"role": "user", "content": "x" * 3000}]
    for n in range(20):
        store.save(f"msg_{n}", Thread(big, {}))
    assert store.bytes <= 40_000 and len(store) == 13
    assert store.get("msg_0") is None and store.get("msg_19") is not None
    store.save("msg_huge", Thread([{"role": "user", "content": "x" * 6_000}], {}))
    assert store.get("msg_huge") is None and store.bytes <= 40_000  # too big to keep
    store.save("msg_20", Thread(big, {}), replaces="msg_19")  # a continue replaces its thread
    assert store.get("msg_19") is None and len(store) == 13 and store.bytes <= 40_000
    assert store.get("msg_20", owner="someone else") is None  # held, but not for them


def test_a_thread_grown_past_the_store_is_forgotten_and_the_sdk_resends_it():
    with FakeMessagesServer(["a", "b", "c"], max_thread_bytes=8_000) as server:  # 1,000 a thread
        client = sdk(server)
        thread = client.beta.messages.thread(model=MODEL, max_tokens=10)
        thread.send({"role": "user", "content": "hi"})
        thread.send({"role": "user", "content": "y" * 5_000})  # the store cannot hold this
        assert thread.send({"role": "user", "content": "go on"}).content[0].text == "c"
    assert server.threads.bytes <= 1_000
    statuses = [r.status for r in server.requests]
    assert statuses == [200, 200, 404, 200]  # forgotten, answered 404, resent whole


# ---------------------------------------------------------------------------
# `agentlab serve` on the command line: one line for each mistake
# ---------------------------------------------------------------------------


def serve_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentlab.fakeapi.server", *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_busy_port_or_an_impossible_one_is_one_line_without_a_traceback():
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = serve_cli("--port", str(taken.getsockname()[1]))
    invalid = serve_cli("--port", "99999")
    assert busy.returncode == 1 and invalid.returncode == 2
    for run in (busy, invalid):
        assert run.stdout == "" and len(run.stderr.strip().splitlines()) == 1
        assert "Traceback" not in run.stderr
    assert "in use" in busy.stderr and "99999" in invalid.stderr


def test_list_models_prints_the_accepted_names():
    listed = serve_cli("--list-models")
    assert listed.returncode == 0 and listed.stdout.split() == al.models.ids()


def test_listening_beyond_this_machine_warns_in_one_line(monkeypatch, capsys):
    from agentlab.fakeapi.server import serve

    started: list[str] = []

    class Listening(FakeMessagesServer):  # stands for the server: listens nowhere
        def start(self):
            started.append(self.host)
            return self

    def ctrl_c() -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(serve, "FakeMessagesServer", Listening)
    monkeypatch.setattr(serve, "wait_for_ctrl_c", ctrl_c)
    serve.main(["--host", "0.0.0.0", "--port", "0"])
    shared = capsys.readouterr().err
    serve.main(["--host", "localhost", "--port", "0"])
    local = capsys.readouterr().err
    assert started == ["0.0.0.0", "localhost"]
    assert len(shared.strip().splitlines()) == 1 and "0.0.0.0" in shared and "network" in shared
    assert local == ""
    assert all(serve._loopback(h) for h in ("127.0.0.1", "::1", "localhost"))
    assert not any(serve._loopback(h) for h in ("0.0.0.0", "", "::"))


def test_served_the_demo_plans_with_a_clients_todo_tool_and_delegates_to_its_task_tool(
    tmp_path, monkeypatch
):
    from agentlab.tools.task import task_tool
    from agentlab.tools.todo import TodoList, todo_tool

    monkeypatch.chdir(tmp_path)
    (tmp_path / "agent.py").write_text("def main():\n    pass\n")
    task = (
        "Plan first, then: list the files, count the lines of agent.py, and report the largest file"
    )
    todos = TodoList()
    schema = todo_tool(todos).definition  # what an outside client sends for its own todo tool
    with FakeMessagesServer() as server:
        client = sdk(server)
        first = client.messages.create(
            model=MODEL, max_tokens=1000, tools=[schema, al.bash.definition],
            messages=[{"role": "user", "content": task}],
        )  # fmt: skip
        planned = [{"role": "user", "content": task}]
        result = al.agent_loop(planned, client, tools=[al.bash], todos=todos, stream=True)
        helper = [al.bash]
        helper.append(task_tool(client, helper))
        asked = [{"role": "user", "content": "Use a helper to find out which file defines main"}]
        answer = al.agent_loop(asked, client, tools=helper, model=MODEL)
    assert first.stop_reason == "tool_use" and first.id.startswith("msg_")
    uses = [b for b in first.content if b.type == "tool_use"]
    assert [b.name for b in uses] == ["todo"] * 3 and len({b.id for b in uses}) == 3
    assert first.usage.output_tokens > 0
    assert al.validate(planned) == [] and result.stop_reason == "end_turn"
    assert [i["status"] for i in todos.items] == ["completed"] * 3
    assert al.validate(asked) == [] and "agent.py" in answer.text
    assert asked[1]["content"][-1]["name"] == "task"
