"""The offline clients are drop-ins for ``anthropic.Anthropic()``.

Every surface a student may call on the real client works on ``ScriptedClient``
and ``DemoClient`` too, and fails the same way. Where a behaviour is the SDK's
own, the test names the SDK module it comes from (anthropic 2.x, the installed
version); the parity test at the end runs the same ten calls through a
``DemoClient`` and through the real SDK over HTTP to ``FakeMessagesServer``
(what ``agentlab serve`` runs) and compares the shapes of what comes back.
"""

from __future__ import annotations

import inspect
import json
from typing import Any

import anthropic
import pytest
from anthropic import beta_tool
from anthropic.lib.streaming import MessageStream
from anthropic.resources.messages import Messages
from anthropic.types import Message
from hypothesis import given, settings
from hypothesis import strategies as st

import agentlab as al
from agentlab.fakeapi.offline import (
    DemoClient,
    ScriptedClient,
    make_message,
    stream_of,
    text,
    tool_use,
)
from agentlab.fakeapi.server import FakeMessagesServer

MODEL = "claude-sonnet-5-5"
HI = [{"role": "user", "content": "hi"}]
ASK = {"model": MODEL, "max_tokens": 100, "messages": HI}
BROKEN = [  # a tool_use left without its tool_result
    {"role": "user", "content": "q"},
    {"role": "assistant", "content": [tool_use("bash", {"command": "ls"}, "t1")]},
    {"role": "user", "content": "next"},
]
BASH = {
    "name": "bash",
    "description": "Run a shell command.",
    "input_schema": {
        "type": "object",
        "properties": {"command": {"type": "string"}},
        "required": ["command"],
    },
}


def real_sdk() -> anthropic.Anthropic:
    """The real client, pointed nowhere: only used where it fails before sending."""
    return anthropic.Anthropic(api_key="sk-test", base_url="http://127.0.0.1:9", max_retries=0)


def sdk_error(call: Any) -> str:
    with pytest.raises(TypeError) as info:
        call(real_sdk())
    return str(info.value)


# --- create takes exactly what the SDK's create takes ----------------------------


@pytest.mark.parametrize("make", [lambda: ScriptedClient(["never"]), DemoClient])
@pytest.mark.parametrize(
    "call",
    [
        lambda c: c.messages.create(**ASK, tool=[BASH]),  # a typo of tools=
        lambda c: c.messages.create(**ASK, temperature=0.2),  # not in SDK 2.x's create
        lambda c: c.messages.create(model=MODEL, messages=HI),  # max_tokens missing
        lambda c: c.messages.create(MODEL, 100, HI),  # positional
    ],
    ids=["typo", "temperature", "missing", "positional"],
)
def test_create_raises_the_sdks_own_type_error_for_what_the_sdk_refuses(make, call):
    client = make()
    with pytest.raises(TypeError) as info:
        call(client)
    assert str(info.value) == sdk_error(call)  # the SDK's words, not ours
    assert client.requests == []  # nothing was sent, no reply used up


def test_the_accepted_keywords_are_read_from_the_installed_sdk():
    from agentlab.fakeapi.offline import _create_keywords

    plain, required, _ = _create_keywords()
    sdk = {
        n
        for n, p in inspect.signature(Messages.create).parameters.items()
        if p.kind is p.KEYWORD_ONLY
    }
    options = {"stream", "extra_headers", "extra_query", "extra_body", "timeout"}
    assert plain == sdk - options and required == {"model", "max_tokens", "messages"}


def test_every_keyword_the_sdk_takes_is_accepted_and_sent():
    client = ScriptedClient(["a", "b", "c"])
    client.messages.create(
        **ASK,
        system="Be brief.",
        metadata={"user_id": "student-1"},
        stop_sequences=["END"],
        tool_choice={"type": "auto"},
        tools=[BASH],
    )
    assert client.requests[0]["stop_sequences"] == ["END"]
    # The SDK's "not given" markers are dropped, as the SDK drops them.
    client.messages.create(**ASK, tools=anthropic.omit, system=anthropic.NOT_GIVEN)
    assert "tools" not in client.requests[1] and "system" not in client.requests[1]
    # Request options go through the SDK too.
    reply = client.messages.create(**ASK, extra_headers={"x-class": "1"}, timeout=5)
    assert reply.content[0].text == "c"


# --- streaming ---------------------------------------------------------------------

TOOL_REPLY = [text("Let me count."), tool_use("bash", {"command": "find . -name '*.py' | wc -l"})]


def kinds(stream: Any) -> list[str]:
    """The event types of a stream, with the delta type of each content delta."""
    return [
        f"{e.type}:{e.delta.type}" if e.type == "content_block_delta" else e.type for e in stream
    ]


def test_create_stream_true_returns_the_sdks_stream_of_the_servers_events():
    client = ScriptedClient([TOOL_REPLY])
    stream = client.messages.create(**ASK, tools=[BASH], stream=True)
    assert isinstance(stream, anthropic.Stream)  # not a Message: iterating it gives events
    offline = kinds(stream)
    with FakeMessagesServer([TOOL_REPLY]) as server:
        sdk = anthropic.Anthropic(api_key="sk-test", base_url=server.url, max_retries=0)
        served = kinds(sdk.messages.create(**ASK, tools=[BASH], stream=True))
    assert offline == served
    assert offline[0] == "message_start" and offline[-2:] == ["message_delta", "message_stop"]
    assert "content_block_delta:input_json_delta" in offline


def test_messages_stream_is_the_sdks_message_stream():
    client = ScriptedClient([TOOL_REPLY, "one two three", "a b", "x y"])
    with client.messages.stream(**ASK, tools=[BASH]) as s:
        assert isinstance(s, MessageStream)
        seen = [event.type for event in s]  # iterable, like the real one
        final = s.get_final_message()
        assert s.current_message_snapshot.stop_reason == "tool_use"
    assert seen[0] == "message_start" and "input_json" in seen and seen[-1] == "message_stop"
    assert final.content[1].input == {"command": "find . -name '*.py' | wc -l"}
    with client.messages.stream(**ASK) as s:
        assert list(s.text_stream) == ["one ", "two ", "three"]
        assert s.get_final_text() == "one two three"
    with client.messages.stream(**ASK) as s:
        s.until_done()
        assert s.get_final_message().content[0].text == "a b"
    s = client.messages.stream(**ASK).__enter__()
    s.close()
    assert s.response.is_closed
    assert len(client.requests) == 4


def test_stream_of_a_finished_reply_for_replay_clients():
    message = make_message(TOOL_REPLY)
    with stream_of(message) as s:
        final = s.get_final_message()
    assert final.content[1].input == message.content[1].input
    assert final.stop_reason == "tool_use" and final.id == message.id


# --- count_tokens, with_raw_response ---------------------------------------------


def test_count_tokens_offline_checks_the_request_like_create():
    client = DemoClient()
    count = client.messages.count_tokens(model=MODEL, messages=HI, tools=[BASH])
    assert isinstance(count, anthropic.types.MessageTokensCount) and count.input_tokens > 1
    bigger = client.messages.count_tokens(model=MODEL, messages=HI * 4, tools=[BASH])
    assert bigger.input_tokens > count.input_tokens
    with pytest.raises(anthropic.BadRequestError, match="messages.2: Did not find 1 `tool_result`"):
        client.messages.count_tokens(model=MODEL, messages=BROKEN)  # the check create applies
    assert client.requests == []  # counting is not a request for a reply


def test_with_raw_response_gives_headers_and_parses_to_a_message():
    client = ScriptedClient(["hello"])
    raw = client.messages.with_raw_response.create(**ASK)
    assert raw.http_response.status_code == 200 and raw.headers["request-id"].startswith("req_")
    message = raw.parse()
    assert isinstance(message, Message) and message.content[0].text == "hello"
    assert message._request_id == raw.headers["request-id"]


# --- scripted errors, on every path ---------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda c: c.messages.create(**ASK),
        lambda c: c.messages.create(**ASK, stream=True),
        lambda c: c.messages.stream(**ASK).__enter__(),
        lambda c: c.messages.with_raw_response.create(**ASK),
        lambda c: c.beta.messages.create(**ASK),
    ],
    ids=["create", "create-stream", "stream", "raw", "beta"],
)
def test_a_scripted_exception_reaches_the_caller_as_it_is(call):
    boom = RuntimeError("the script says so")
    client = ScriptedClient([boom])
    with pytest.raises(RuntimeError) as info:
        call(client)
    assert info.value is boom
    with pytest.raises(IndexError, match="no reply left for request 2"):
        call(client)


def test_a_scripted_api_error_is_not_retried():
    body = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    err = anthropic.InternalServerError("Overloaded", response=_response(529), body=body)
    client = ScriptedClient([err, "fine"])
    with pytest.raises(anthropic.InternalServerError) as info:
        client.messages.create(**ASK, stream=True)
    assert info.value is err and len(client.requests) == 1  # one attempt: the script decides


def _response(status: int) -> Any:
    import httpx2

    return httpx2.Response(status, request=httpx2.Request("POST", "http://x/v1/messages"))


# --- the SDK's tool runner and message threads, offline ------------------------


@beta_tool
def add(a: int, b: int) -> str:
    """Add two numbers."""
    return str(a + b)


def test_tool_runner_runs_offline_and_the_model_sees_the_whole_history():
    client = ScriptedClient([[tool_use("add", {"a": 2, "b": 3})], "It is 5."])
    runner = client.beta.messages.tool_runner(
        model=MODEL, max_tokens=100, tools=[add], messages=[{"role": "user", "content": "2+3?"}]
    )
    final = runner.until_done()
    assert final.content[0].text == "It is 5."
    # The runner continues a thread and sends only the new message; the script
    # sees the whole conversation, as the model does.
    second = client.requests[1]["messages"]
    assert [m["role"] for m in second] == ["user", "assistant", "user"]
    assert second[2]["content"][0] == {
        "type": "tool_result",
        "tool_use_id": "toolu_01",
        "content": "5",
    }


def wire(client: ScriptedClient) -> list[dict[str, Any]]:
    """Spy on the bodies the SDK sends (set before the client's SDK is first used)."""
    sent: list[dict[str, Any]] = []
    answer = client._answer

    def spy(request: Any) -> Any:
        sent.append(json.loads(request.content))
        return answer(request)

    client._answer = spy  # type: ignore[method-assign]
    return sent


def test_a_thread_sends_only_new_messages_and_keeps_system_and_tools():
    client = ScriptedClient(["one", "two"])
    sent = wire(client)
    thread = client.beta.messages.thread(model=MODEL, max_tokens=100, system="Be brief.")
    assert thread.send({"role": "user", "content": "hi"}).content[0].text == "one"
    assert thread.send({"role": "user", "content": "again"}).content[0].text == "two"
    # thread fields as the SDK sends them (anthropic.lib.threads._thread_state)
    assert sent[0]["thread"] == {"type": "create"} and sent[0]["system"] == "Be brief."
    assert sent[1]["thread"] == {"type": "continue", "previous_message_id": "msg_01"}
    assert sent[1]["messages"] == [{"role": "user", "content": "again"}] and "system" not in sent[1]
    held = client.requests[1]
    assert held["system"] == "Be brief." and [m["role"] for m in held["messages"]] == [
        "user",
        "assistant",
        "user",
    ]


def test_a_lost_thread_is_resent_whole_without_using_up_a_reply():
    client = ScriptedClient(["one", "two"])
    sent = wire(client)
    thread = client.beta.messages.thread(model=MODEL, max_tokens=100)
    thread.send({"role": "user", "content": "hi"})
    client._threads.clear()  # the "server" forgot the thread
    assert thread.send({"role": "user", "content": "again"}).content[0].text == "two"
    # 404 thread_not_found, then the SDK replays the history under a new thread
    assert [s["thread"]["type"] for s in sent] == ["create", "continue", "create"]
    assert len(sent[2]["messages"]) == 3 and len(client.requests) == 2


def test_connect_offline_client_has_the_real_clients_surface():
    client = DemoClient()
    assert isinstance(client.beta, anthropic.resources.beta.Beta)
    assert client.base_url.host.endswith(".invalid")  # nothing can leave the machine
    with pytest.raises(AttributeError):
        client._no_such_thing  # noqa: B018


# --- parity: the same ten calls, offline and over HTTP -----------------------------


class _Any:
    def __eq__(self, other: object) -> bool:
        return True


ANY = _Any()


def shape(value: Any) -> Any:
    """What a result looks like, without its values: keys and types, recursively.

    The values of ``type``, ``role`` and ``stop_reason`` are kept: they are the shape.
    """
    if hasattr(value, "model_dump"):
        value = value.model_dump(mode="json", exclude_none=True)
    if isinstance(value, dict):
        keep = ("type", "role", "stop_reason")
        return {k: v if k in keep else shape(v) for k, v in sorted(value.items())}
    if isinstance(value, list):
        return [shape(v) for v in value]
    return type(value).__name__


@beta_tool
def bash(command: str) -> str:
    """Run a shell command (here: a fixed answer, so both runs see the same)."""
    return "2"


def ten_calls(client: Any) -> list[Any]:
    """Ten things a student does with a client; what each gives back (or raises)."""
    count = [{"role": "user", "content": "How many .py files are here?"}]

    def outcome(call: Any) -> Any:
        try:
            return call()
        except (TypeError, anthropic.APIStatusError) as e:
            if isinstance(e, anthropic.APIStatusError):
                return {"raised": type(e).__name__, "status": e.status_code, "body": e.body}
            return {"raised": "TypeError", "message": str(e)}

    def streamed() -> Any:
        with client.messages.stream(model=MODEL, max_tokens=200, messages=HI) as s:
            pieces = list(s.text_stream)
            return {"text": shape(pieces), "final": s.get_final_message()}

    def raw() -> Any:
        r = client.messages.with_raw_response.create(model=MODEL, max_tokens=200, messages=HI)
        return {"status": r.http_response.status_code, "request-id": "request-id" in r.headers}

    def runner() -> Any:
        run = client.beta.messages.tool_runner(
            model=MODEL, max_tokens=200, tools=[bash], messages=count, thread=False
        )
        return [m for m in run]

    return [
        outcome(lambda: client.messages.create(model=MODEL, max_tokens=200, messages=HI)),
        outcome(
            lambda: client.messages.create(
                model=MODEL, max_tokens=200, messages=count, tools=[BASH]
            )
        ),
        outcome(
            lambda: kinds(
                client.messages.create(
                    model=MODEL, max_tokens=200, messages=count, tools=[BASH], stream=True
                )
            )
        ),
        outcome(streamed),
        outcome(lambda: client.messages.count_tokens(model=MODEL, messages=count, tools=[BASH])),
        outcome(raw),
        outcome(lambda: client.messages.create(model=MODEL, max_tokens=200, messages=HI, top_k=5)),
        outcome(lambda: client.messages.create(model=MODEL, messages=HI)),
        outcome(lambda: client.messages.create(model=MODEL, max_tokens=200, messages=BROKEN)),
        outcome(runner),
    ]


def test_parity_the_demo_client_and_the_sdk_over_http_give_the_same_shapes(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    offline = ten_calls(DemoClient())
    with FakeMessagesServer() as server:  # no script: the demo model, as `agentlab serve`
        sdk = anthropic.Anthropic(api_key="sk-test", base_url=server.url, max_retries=0)
        served = ten_calls(sdk)
    assert len(offline) == len(served) == 10
    for i, (ours, theirs) in enumerate(zip(offline, served), 1):
        assert shape(ours) == shape(theirs), f"call {i} differs"
    # and the calls did what they were meant to (not ten identical errors)
    assert offline[1].stop_reason == "tool_use" and offline[6]["raised"] == "TypeError"
    assert offline[8]["status"] == 400 and offline[9][-1].stop_reason == "end_turn"
    assert offline[8] == {**served[8], "body": {**served[8]["body"], "request_id": ANY}}


def test_the_seed_loop_runs_unchanged_on_the_sdk_path(tmp_path, monkeypatch):
    """The lesson's loop, streaming through ``messages.stream``: the SDK's own objects
    go back into the history and the offline check accepts them."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text("x = 1\n")
    client = DemoClient()
    messages: list[Any] = [{"role": "user", "content": "How many .py files are here?"}]
    while True:
        with client.messages.stream(
            model=MODEL, max_tokens=800, messages=messages, tools=[BASH]
        ) as s:
            response = s.get_final_message()
        messages.append({"role": "assistant", "content": response.content})
        if response.stop_reason != "tool_use":
            break
        results = [
            {
                "type": "tool_result",
                "tool_use_id": b.id,
                "content": str(al.run_bash(b.input["command"])),
            }
            for b in response.content
            if b.type == "tool_use"
        ]
        messages.append({"role": "user", "content": results})
    assert "1 Python" in response.content[-1].text and al.validate(messages) == []


# --- any reply survives the trip through the stream ---------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)
blocks = st.lists(
    st.one_of(
        st.builds(text, st.text(min_size=1, max_size=40)),
        st.builds(
            lambda name, value: tool_use(name, {"value": value}),
            st.from_regex(r"[a-z_]{1,10}", fullmatch=True),
            json_values,
        ),
        st.builds(
            lambda thought, sig: {"type": "thinking", "thinking": thought, "signature": sig},
            st.text(max_size=20),
            st.text("abcXYZ=", min_size=1, max_size=12),
        ),
    ),
    min_size=1,
    max_size=4,
)


@settings(max_examples=25, deadline=None)
@given(blocks)
def test_a_streamed_reply_is_the_reply(content):
    """The SDK, reading agentlab's events, rebuilds exactly the message that was sent."""
    message = make_message(content)
    client = ScriptedClient([message], check=False)
    with client.messages.stream(**ASK) as s:
        final = s.get_final_message()
    assert final.model_dump(exclude={"content"}) == message.model_dump(exclude={"content"})
    assert [b.model_dump(exclude={"parsed_output"}) for b in final.content] == [
        b.model_dump() for b in message.content
    ]
