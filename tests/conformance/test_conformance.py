"""The local server against the table of the real API's answers, and the SDK's own
agent loops (tool_runner, .thread(), the seed's loop) end to end over HTTP."""

from __future__ import annotations

import anthropic
import httpx2
import pytest
from anthropic import beta_tool
from conformance_cases import CASES, SONNET, STRICT, Case

from agentlab.fakeapi.offline import text, tool_use
from agentlab.fakeapi.server import FakeMessagesServer
from tests.seed_loop import seed_loop

SERVER = FakeMessagesServer(
    lambda body: (
        [
            text("Let me check."),
            tool_use("bash", {"command": "ls -la"}),
            tool_use("bash", {"command": "pwd"}),
        ]
        if body.get("tools") and (body.get("tool_choice") or {}).get("type") != "none"
        else "Hello there. This is a reply of a few words."
    )
)  # fmt: skip  (a script follows the request's tool_choice, or the server says it is wrong)


def setup_module() -> None:
    SERVER.start()


def teardown_module() -> None:
    SERVER.stop()


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_the_server_answers_as_the_api_does(case: Case):
    headers = {"x-api-key": "test", **case.headers}
    if case.version is not None:
        headers["anthropic-version"] = case.version
    answer = httpx2.post(SERVER.url + "/v1/messages", json=case.body, headers=headers)
    data = answer.json()
    assert answer.status_code == case.status, data
    if case.error is None:
        assert "error" not in data
        assert case.check is None or case.check(data), data
    else:
        assert data["type"] == "error" and data["request_id"].startswith("req_")
        assert (
            data["error"]["type"]
            == {400: "invalid_request_error", 404: "not_found_error"}[case.status]
        )
        assert data["error"]["message"] == case.error


def test_every_row_names_its_source():
    assert len(CASES) >= 30 and len({c.name for c in CASES}) == len(CASES)
    assert all(c.source.strip() for c in CASES)


# ---------------------------------------------------------------------------
# The SDK's own loops, end to end
# ---------------------------------------------------------------------------


@beta_tool
def add(a: int, b: int) -> str:
    """Add two whole numbers."""
    return str(a + b)


def client(server: FakeMessagesServer, retries: int = 0) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key="test", base_url=server.url, max_retries=retries)


def test_the_sdks_tool_runner_runs_on_message_threads():
    script = [
        [text("Adding."), tool_use("add", {"a": 1, "b": 2})],
        [tool_use("add", {"a": 3, "b": 4})],
        "1 + 2 = 3 and 3 + 4 = 7.",
    ]
    with FakeMessagesServer(script) as server:
        runner = client(server).beta.messages.tool_runner(
            model=SONNET, max_tokens=500, tools=[add], system="Be exact.",
            messages=[{"role": "user", "content": "Add 1+2, then 3+4."}],
        )  # fmt: skip
        replies = list(runner)
    assert [r.stop_reason for r in replies] == ["tool_use", "tool_use", "end_turn"]
    assert replies[-1].content[0].text == "1 + 2 = 3 and 3 + 4 = 7."
    bodies = [r.body for r in server.requests]
    assert [r.status for r in server.requests] == [200, 200, 200]
    assert bodies[0]["thread"] == {"type": "create"} and bodies[0]["system"] == "Be exact."
    for before, body in zip(replies, bodies[1:]):  # only the new turn, no system, no tools
        assert body["thread"] == {"type": "continue", "previous_message_id": before.id}
        assert "system" not in body and "tools" not in body
        (result,) = body["messages"]
        assert result["content"][0]["type"] == "tool_result"
    assert bodies[1]["messages"][0]["content"][0]["content"] == "3"
    assert bodies[2]["messages"][0]["content"][0]["content"] == "7"


def test_a_lost_thread_answers_404_and_the_sdk_resends_the_whole_history():
    script = [[tool_use("add", {"a": 2, "b": 2})], "4."]
    with FakeMessagesServer(script) as server:
        runner = client(server).beta.messages.tool_runner(
            model=SONNET, max_tokens=500, tools=[add],
            messages=[{"role": "user", "content": "2+2?"}],
        )  # fmt: skip
        first = next(iter(runner))
        server.threads.clear()  # as if the server restarted
        rest = list(runner)
    assert first.stop_reason == "tool_use" and rest[-1].content[0].text == "4."
    statuses = [r.status for r in server.requests]
    assert statuses == [200, 404, 200]
    lost, again = server.requests[1].body, server.requests[2].body
    assert lost["thread"]["type"] == "continue" and again["thread"] == {"type": "create"}
    assert [m["role"] for m in again["messages"]] == ["user", "assistant", "user"]
    assert "tools" in again  # a create carries the tools again


def test_a_thread_holds_the_conversation_between_sends():
    with FakeMessagesServer(lambda body: f"you said {len(body['messages'])} things") as server:
        thread = client(server).beta.messages.thread(
            model=SONNET, max_tokens=100, system="Count.",
            messages=[{"role": "user", "content": "one"}],
        )  # fmt: skip
        first = thread.send()
        second = thread.send({"role": "user", "content": "two"})
    # The server rebuilt the whole history on the continue: user, assistant, user.
    assert first.content[0].text == "you said 1 things"
    assert second.content[0].text == "you said 3 things"
    assert server.requests[1].body["messages"] == [{"role": "user", "content": "two"}]


def test_a_broken_slice_of_a_thread_is_reported_at_its_place_in_the_whole_history():
    with FakeMessagesServer(["first", "never"]) as server:
        thread = client(server).beta.messages.thread(
            model=SONNET, max_tokens=100, messages=[{"role": "user", "content": "hi"}]
        )
        thread.send()
        with pytest.raises(anthropic.BadRequestError, match=r"messages\.2\.content\.0: unexpected"):
            thread.send({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "x"}]})


def test_the_seeds_loop_runs_unchanged_through_the_sdk(tmp_path, monkeypatch):
    """The lesson's loop (the seed lesson, s01_agent_loop) with the real SDK
    pointed at ``agentlab serve``'s demo model."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text("print(1)\n")
    with FakeMessagesServer() as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "anything")
        agent_loop = seed_loop(anthropic.Anthropic())
        history = [{"role": "user", "content": "How many .py files are here?"}]
        agent_loop(history)
    assert [r.status for r in server.requests] == [200] * len(server.requests)
    assert len(server.requests) >= 2 and history[-1]["role"] == "assistant"
    assert all(r.headers["anthropic-version"] == STRICT for r in server.requests)
    assert "1" in history[-1]["content"][-1].text  # after its thinking block


@pytest.mark.parametrize(
    "case",
    [c for c in CASES if c.version and c.status != 404 and "thread" not in c.body],
    ids=lambda c: c.name,
)
def test_the_offline_checks_say_the_same_without_http(case: Case):
    """``check_request`` is what ScriptedClient and DemoClient use: same table, same words."""
    from agentlab.fakeapi.checks import check_request

    errors = check_request(case.body, api_version=case.version, paused=set(), thought=set())
    assert errors[:1] == ([case.error] if case.error else [])


def test_a_reply_can_be_continued_only_once():
    beta = {
        "anthropic-beta": "message-threads-2026-08-12",
        "anthropic-version": STRICT,
        "x-api-key": "x",
    }
    with FakeMessagesServer(["one", "two", "three"]) as server:
        first = httpx2.post(server.url + "/v1/messages", headers=beta, json={
            "model": SONNET, "max_tokens": 50, "messages": [{"role": "user", "content": "a"}],
            "thread": {"type": "create"}}).json()  # fmt: skip
        go_on = {"model": SONNET, "max_tokens": 50,
                 "messages": [{"role": "user", "content": "b"}],
                 "thread": {"type": "continue", "previous_message_id": first["id"]}}  # fmt: skip
        again = [httpx2.post(server.url + "/v1/messages", headers=beta, json=go_on)
                 for _ in range(2)]  # fmt: skip
    assert again[0].status_code == 200 and again[0].json()["content"][0]["text"] == "two"
    assert again[1].status_code == 400
    assert again[1].json()["error"]["details"]["error_code"] == "thread_already_continued"


def test_async_clients_stream_and_count_tokens_too():
    import asyncio

    async def go(url: str) -> tuple[str, int, str]:
        client = anthropic.AsyncAnthropic(api_key="test", base_url=url, max_retries=0)
        async with client.messages.stream(
            model=SONNET, max_tokens=100, messages=[{"role": "user", "content": "hi"}]
        ) as stream:
            pieces = [piece async for piece in stream.text_stream]
        counted = await client.messages.count_tokens(
            model=SONNET, messages=[{"role": "user", "content": "hi"}]
        )
        plain = await client.messages.create(
            model=SONNET, max_tokens=100, messages=[{"role": "user", "content": "hi"}]
        )
        return "".join(pieces), counted.input_tokens, plain.content[0].text

    with FakeMessagesServer(["streamed words here", "plain"]) as server:
        streamed, tokens, plain = asyncio.run(go(server.url))
    assert streamed == "streamed words here" and tokens >= 1 and plain == "plain"
