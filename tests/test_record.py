"""Record a session through the real SDK over HTTP; replay it offline."""

from __future__ import annotations

import json

import anthropic
import pytest

import agentlab as al
from agentlab.fakeapi.offline import ScriptedClient, bad_request, text, tool_use
from agentlab.fakeapi.recording import ReplayMismatch
from agentlab.fakeapi.server import FakeMessagesServer
from agentlab.history import HistoryFileError

MODEL = "claude-sonnet-5-5"
KEY = "sk-ant-very-secret-key"


@al.tool
def note(x: int) -> str:
    """Answers at once."""
    return f"noted {x}"


def script():
    return [
        [text("Noting."), tool_use("note", {"x": 1})],
        [tool_use("note", {"x": 2})],
        "Noted both.",
    ]


def record_session(tmp_path, stream: bool = False):
    path = tmp_path / "session.jsonl"
    with FakeMessagesServer(script()) as server:
        real = anthropic.Anthropic(api_key=KEY, base_url=server.url, max_retries=0)
        client = al.record(real, path)
        messages = [{"role": "user", "content": "note 1 then 2"}]
        al.agent_loop(messages, client, tools=[note], model=MODEL, stream=stream)
    return path, messages, client


@pytest.mark.parametrize("stream", [False, True])
def test_a_recorded_session_replays_offline_to_the_same_history(tmp_path, stream):
    path, messages, client = record_session(tmp_path, stream)
    lines = path.read_text("utf-8").splitlines()
    assert len(lines) == 3 and client.count == 3
    first = json.loads(lines[0])
    assert first["request"]["messages"] == [{"role": "user", "content": "note 1 then 2"}]
    assert first["request"]["model"] == MODEL and first["request"]["max_tokens"] > 0
    assert first["response"]["stop_reason"] == "tool_use"
    replay = al.ReplayClient(path)
    again = [{"role": "user", "content": "note 1 then 2"}]
    result = al.agent_loop(again, replay, tools=[note], model=MODEL, stream=stream)
    assert again == messages and result.text == "Noted both."
    assert replay.remaining == 0 and len(replay.requests) == 3


def test_a_recording_never_holds_a_key_or_an_auth_header(tmp_path):
    path, _, _ = record_session(tmp_path)  # the real SDK, with api_key=KEY
    scripted = al.record(ScriptedClient(["ok"]), path)  # a key passed in headers per request
    scripted.messages.create(
        model=MODEL,
        max_tokens=5,
        messages=[{"role": "user", "content": "hi"}],
        extra_headers={"Authorization": f"Bearer {KEY}", "x-api-key": KEY},
    )
    data = path.read_text("utf-8")
    assert KEY not in data and "authorization" not in data.lower() and "x-api-key" not in data
    assert len(data.splitlines()) == 4


def test_a_different_task_names_the_message_that_differs(tmp_path):
    path, _, _ = record_session(tmp_path)
    replay = al.ReplayClient(path)
    with pytest.raises(ReplayMismatch) as info:
        al.agent_loop([{"role": "user", "content": "note 3"}], replay, tools=[note], model=MODEL)
    words = str(info.value)
    assert "Request 1" in words and "message 0" in words
    assert "'note 1 then 2'" in words and "'note 3'" in words and "check=False" in words
    assert replay.index == 0  # nothing was used up: fix the request and try again


def test_a_different_tool_result_is_found_in_a_later_message(tmp_path):
    path, messages, _ = record_session(tmp_path)

    @al.tool
    def note(x: int) -> str:  # same name, different behaviour
        """Answers differently."""
        return f"NOTED {x}!"

    replay = al.ReplayClient(path)
    with pytest.raises(ReplayMismatch) as info:
        al.agent_loop(
            [{"role": "user", "content": "note 1 then 2"}], replay, tools=[note], model=MODEL
        )
    words = str(info.value)
    assert "Request 2" in words and "message 2" in words and "tool_result" in words
    assert "noted 1" in words and "NOTED 1!" in words


def test_check_false_plays_the_recording_whatever_is_sent(tmp_path):
    path, _, _ = record_session(tmp_path)
    replay = al.ReplayClient(path, check=False)
    result = al.agent_loop([{"role": "user", "content": "anything"}], replay, tools=[note])
    assert result.text == "Noted both."


def test_running_past_the_end_of_a_recording_says_so(tmp_path):
    path, messages, _ = record_session(tmp_path)
    replay = al.ReplayClient(path)
    loop = al.AgentLoop(replay, list(messages[:1]), tools=[note], model=MODEL)
    loop.run()
    with pytest.raises(ReplayMismatch, match="holds 3 request"):
        loop.ask("one more").run()


def test_match_by_request_serves_a_class_in_any_order(tmp_path):
    path, messages, _ = record_session(tmp_path)
    lookup = al.ReplayClient(path, match="request")
    with FakeMessagesServer(lookup.reply) as server:
        client = anthropic.Anthropic(api_key="x", base_url=server.url, max_retries=0)
        third = client.messages.create(
            model=MODEL, max_tokens=9, messages=messages[:5], tools=[note.definition]
        )
        first = client.messages.create(model=MODEL, max_tokens=9, messages=messages[:1])
        with pytest.raises(anthropic.BadRequestError, match="No recorded request"):
            client.messages.create(
                model=MODEL, max_tokens=9, messages=[{"role": "user", "content": "?"}]
            )
    assert third.content[0].text == "Noted both." and first.stop_reason == "tool_use"


def test_a_failed_request_is_not_recorded(tmp_path):
    path = tmp_path / "s.jsonl"
    client = al.record(ScriptedClient([bad_request("boom"), "fine"]), path)
    loop = al.AgentLoop(client, "hi", tools=[note])
    with pytest.raises(al.RequestError):
        loop.step()
    loop.run()
    assert len(path.read_text("utf-8").splitlines()) == 1


def test_other_client_methods_pass_through(tmp_path):
    with FakeMessagesServer() as server:
        real = anthropic.Anthropic(api_key="x", base_url=server.url, max_retries=0)
        client = al.record(real, tmp_path / "s.jsonl")
        count = client.messages.count_tokens(
            model=MODEL, messages=[{"role": "user", "content": "hi"}]
        )
    assert count.input_tokens > 0 and not (tmp_path / "s.jsonl").exists()


def test_a_key_a_tool_printed_is_redacted_in_the_recording(tmp_path, monkeypatch):
    """The key gets into a tool result (a tool printed it) and the model repeats it."""
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_" + "t" * 30)

    @al.tool
    def leak() -> str:
        """Prints what a careless script would."""
        return f"ANTHROPIC_API_KEY={KEY} GITHUB_TOKEN=ghp_{'t' * 30}"

    path = tmp_path / "s.jsonl"
    steps = [[tool_use("leak", {})], f"I saw {KEY}"]
    with FakeMessagesServer(steps) as server:
        real = anthropic.Anthropic(api_key=KEY, base_url=server.url, max_retries=0)
        messages = [{"role": "user", "content": "go"}]
        al.agent_loop(messages, al.record(real, path), tools=[leak], model=MODEL)
    text_ = path.read_text("utf-8")
    assert KEY in json.dumps(messages)  # the history in memory is untouched
    assert KEY not in text_ and "t" * 30 not in text_
    assert "[REDACTED:ANTHROPIC_API_KEY]" in text_ and "[REDACTED:GITHUB_TOKEN]" in text_
    assert len(text_.splitlines()) == 2  # both requests, the reply with the key too
    # Replayed where the same secrets are known, the redacted requests still match.
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    again = [{"role": "user", "content": "go"}]
    result = al.agent_loop(again, al.ReplayClient(path), tools=[leak], model=MODEL)
    assert result.ended == "model" and len(again) == 4


def test_a_recording_is_never_written_through_a_symbolic_link(tmp_path):
    # Attacker trial: the model, running commands in the recording's folder, made
    # session.jsonl a link to a shell start-up file; each appended JSON line, holding the
    # model's "$(...)", would run at the next shell start. save() refuses links the same way.
    target = tmp_path / "bashrc"
    target.write_text("# start-up\n")
    (tmp_path / "session.jsonl").symlink_to(target)
    client = al.record(ScriptedClient(["sure: $(touch pwned)"]), tmp_path / "session.jsonl")
    with pytest.raises(HistoryFileError, match="symbolic link"):
        client.messages.create(
            model=MODEL, max_tokens=9, messages=[{"role": "user", "content": "hi"}]
        )
    assert target.read_text() == "# start-up\n"
