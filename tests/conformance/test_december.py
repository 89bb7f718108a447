"""The API of December 2026 against the demo server and the offline clients: refusals
with their fallback fields, structured outputs, the shell tool whatever its name, the
request shape Claude Code sends, and GET errors with their request id.

Sources (Anthropic's platform docs, platform.claude.com/docs/en/..., read 2026-12-01):
build-with-claude/refusals-and-fallback (refusal = a normal response with
stop_reason "refusal" and stop_details category / explanation; recommended_model and
fallback_credit_token when the server-side fallback could not run; the `fallbacks`
beta), build-with-claude/structured-outputs (output_config.format json_schema),
build-with-claude/effort (output_config.effort). Claude Code's request shape: its
requests as sent to `agentlab serve` (Claude Code 2.1, 2026-11).
"""

from __future__ import annotations

import json

import anthropic
import httpx2
import pydantic
import pytest

import agentlab as al
from agentlab.fakeapi.demo import REFUSAL_TEST, shell_tool
from agentlab.fakeapi.offline import DemoClient, ScriptedClient, ScriptError, make_message
from agentlab.fakeapi.server import FakeMessagesServer

SONNET = "claude-sonnet-5-5"
HEADERS = {"x-api-key": "x", "anthropic-version": "2026-10-21"}
REFUSALS = "platform.claude.com/docs/en/build-with-claude/refusals-and-fallback, read 2026-12-01"
SCHEMA = {
    "type": "object",
    "properties": {"count": {"type": "integer"}, "command": {"type": "string"}},
    "required": ["count", "command"],
    "additionalProperties": False,
}
FORMAT = {"format": {"type": "json_schema", "schema": SCHEMA}}


@pytest.fixture(scope="module")
def server():
    with FakeMessagesServer() as s:  # the demo model
        yield s


def post(server, body, headers=None):
    answer = httpx2.post(
        server.url + "/v1/messages", json=body, headers={**HEADERS, **(headers or {})}
    )
    return answer.status_code, answer.json()


def test_the_demo_refuses_the_test_phrase_with_the_fallback_fields(server):
    """Row: a refusal is a 200 with stop_reason "refusal" and stop_details (REFUSALS)."""
    task = {"role": "user", "content": f"{REFUSAL_TEST}: list the files"}
    status, data = post(server, {"model": SONNET, "max_tokens": 100, "messages": [task]})
    assert status == 200 and data["stop_reason"] == "refusal" and data["content"] == []
    details = data["stop_details"]
    assert details["type"] == "refusal" and details["recommended_model"] == "claude-opus-4-8"
    assert (
        details["fallback_credit_token"].startswith("fct_")
        and REFUSAL_TEST in details["explanation"]
    )
    # Retrying the same request on the recommended model gets an answer (REFUSALS: "you
    # can usually still get an answer by sending the same request to another Claude model").
    again = {"model": details["recommended_model"], "max_tokens": 100, "messages": [task],
             "tools": [al.bash.definition]}  # fmt: skip
    status, data = post(server, again)
    assert status == 200 and data["stop_reason"] == "tool_use"


def test_fallbacks_are_accepted_but_not_imitated(server):
    """Row: `fallbacks` is a beta field (the SDK's BetaFallbacksParam, "default" or a list);
    agentlab accepts it and answers as when the server-side fallback could not run: the
    refusal carries recommended_model (REFUSALS). The server-side retry is not imitated."""
    task = {"role": "user", "content": f"{REFUSAL_TEST}: list the files"}
    body = {"model": SONNET, "max_tokens": 100, "messages": [task], "fallbacks": "default"}
    status, data = post(server, body, {"anthropic-beta": "server-side-fallback-2026-07-01"})
    assert status == 200 and data["stop_details"]["recommended_model"] == "claude-opus-4-8"
    status, data = post(server, body)  # without the beta header it is an unknown field
    assert status == 400 and data["error"]["message"] == "fallbacks: Extra inputs are not permitted"


def test_a_model_without_classifiers_does_not_refuse():
    """Row: only the models with safety classifiers refuse (REFUSALS lists Fable 5.x,
    Opus 5/5.5, Sonnet 5.5, Haiku 5.5); claude-haiku-4-5 is not among them."""
    task = [{"role": "user", "content": f"{REFUSAL_TEST}: list the files"}]
    reply = DemoClient().messages.create(
        model="claude-haiku-4-5", max_tokens=100, messages=task, tools=[al.bash.definition]
    )
    assert reply.stop_reason == "tool_use"


def test_a_scripted_refusal_carries_its_stop_details_and_decide_says_to_retry_elsewhere():
    details = {"type": "refusal", "category": "cyber", "explanation": "Declined.",
               "recommended_model": "claude-opus-4-8", "fallback_credit_token": "fct_1"}  # fmt: skip
    client = ScriptedClient([make_message([], "refusal", stop_details=details)])
    reply = client.messages.create(
        model=SONNET, max_tokens=10, messages=[{"role": "user", "content": "x"}]
    )
    assert reply.stop_reason == "refusal" and reply.stop_details.category == "cyber"
    assert reply.stop_details.recommended_model == "claude-opus-4-8"  # kept (an SDK extra field)
    decision = al.decide(reply)
    assert decision.action == "stop" and "recommended_model" in str(decision.explanation)


def _loop(client, **extra):
    history = [{"role": "user", "content": "How many Python files are in this folder?"}]
    for _ in range(4):
        reply = client.messages.create(
            model=SONNET, max_tokens=2000, messages=history, tools=[al.bash.definition], **extra
        )
        al.append(history, reply)
        if reply.stop_reason != "tool_use":
            return reply
        al.append(history, al.execute(al.decide(reply).tool_uses, tools=[al.bash]))
    raise AssertionError("no answer")


def test_structured_output_is_json_that_fits_the_schema(tmp_path, monkeypatch):
    """Row: output_config.format json_schema → the final text is JSON fitting the schema
    (structured-outputs docs); the demo fills it from what it found."""
    for name in ("a.py", "b.py", "c.txt"):
        (tmp_path / name).write_text("x\n")
    monkeypatch.chdir(tmp_path)
    reply = _loop(DemoClient(), output_config=FORMAT)
    data = json.loads(reply.content[-1].text)
    assert data == {"count": 2, "command": data["command"]} and "find" in data["command"]


def test_messages_parse_works_offline(tmp_path, monkeypatch):
    """The SDK's ``messages.parse(output_format=Model)`` (anthropic 2.15, installed here;
    the project pins >=2.14, which has no parse) sends output_config.format and parses
    the text."""
    if not hasattr(anthropic.resources.messages.Messages, "parse"):
        pytest.skip(f"anthropic {anthropic.__version__} has no messages.parse (2.15 does)")

    class Answer(pydantic.BaseModel):
        count: int
        command: str

    monkeypatch.chdir(tmp_path)
    task = [{"role": "user", "content": "What is the date today?"}]
    parsed = DemoClient().messages.parse(
        model=SONNET, max_tokens=500, messages=task, output_format=Answer
    )
    assert isinstance(parsed.parsed_output, Answer)


def test_a_scripted_reply_must_fit_the_schema():
    task = [{"role": "user", "content": "hi"}]
    with pytest.raises(ScriptError, match="not JSON"):
        ScriptedClient(["prose"]).messages.create(
            model=SONNET, max_tokens=9, messages=task, output_config=FORMAT
        )
    with pytest.raises(ScriptError, match="does not fit"):
        ScriptedClient(['{"count": "two"}']).messages.create(
            model=SONNET, max_tokens=9, messages=task, output_config=FORMAT
        )
    fits = ScriptedClient(['{"count": 2, "command": "ls"}'])
    assert fits.messages.create(model=SONNET, max_tokens=9, messages=task, output_config=FORMAT)


def test_langchain_json_schema_mode_works_offline(server):
    """langchain-anthropic's with_structured_output(method="json_schema") against serve
    (only where langchain-anthropic is installed: it is not a dependency of agentlab)."""
    lc = pytest.importorskip("langchain_anthropic", reason="langchain-anthropic is not installed")

    class Answer(pydantic.BaseModel):
        count: int
        command: str

    model = lc.ChatAnthropic(model=SONNET, base_url=server.url, api_key="x", max_tokens=500)
    out = model.with_structured_output(Answer, method="json_schema").invoke("What is the date?")
    assert isinstance(out, Answer)


@pytest.mark.parametrize(
    "tool, name",
    [
        ({"name": "Bash", "description": "Run", "input_schema": {"type": "object", "properties": {
            "command": {"type": "string"}, "description": {"type": "string"}},
            "required": ["command"]}}, "Bash"),
        ({"name": "shell", "input_schema": {"type": "object", "properties": {
            "command": {"type": "string"}}}}, "shell"),
        ({"type": "bash_20250124", "name": "bash"}, "bash"),
    ],
)  # fmt: skip
def test_the_demo_uses_the_shell_tool_whatever_its_name(tool, name):
    """Claude Code names its shell tool Bash (input command + description); others say
    shell; Anthropic's own bash tool is {"type": "bash_20250124", "name": "bash"}."""
    other = {
        "name": "Read",
        "input_schema": {"type": "object", "properties": {"file_path": {"type": "string"}}},
    }
    body = {"model": SONNET, "max_tokens": 500, "tools": [other, tool],
            "messages": [{"role": "user", "content": "How many Python files are in this folder?"}]}  # fmt: skip
    assert shell_tool(body)[0] == name
    reply = DemoClient().messages.create(**body)
    (use,) = [b for b in reply.content if b.type == "tool_use"]
    assert use.name == name and "find" in use.input["command"]
    if name == "Bash":
        assert use.input["description"]


def test_claude_codes_request_shape_is_accepted(server):
    """What Claude Code 2.1 sends: streaming POST /v1/messages?beta=true with beta headers,
    many tools, adaptive thinking, output_config.effort, a context-management edit and a
    mid-conversation system message; the demo answers with a Bash call."""
    bash = {"name": "Bash", "description": "Run a shell command", "input_schema": {
        "type": "object", "properties": {"command": {"type": "string"},
        "description": {"type": "string"}}, "required": ["command"]}}  # fmt: skip
    tools = [bash] + [
        {"name": f"Tool{i}", "description": "x", "input_schema": {"type": "object"}}
        for i in range(23)
    ]
    body = {
        "model": SONNET, "max_tokens": 32000, "stream": True, "tools": tools,
        "system": [{"type": "text", "text": "You are Claude Code."}],
        "thinking": {"type": "adaptive"}, "output_config": {"effort": "high"},
        "context_management": {"edits": [{"type": "clear_thinking_20251015", "keep": "all"}]},
        "messages": [
            {"role": "user", "content": [
                {"type": "text", "text": "<system-reminder>Context: a repo.</system-reminder>"},
                {"type": "text", "text": "How many .py files are in this folder?"}]},
            {"role": "system", "content": "Use Bash for shell commands."},
        ],
    }  # fmt: skip
    headers = {**HEADERS, "anthropic-beta": "claude-code-20250219,context-management-2025-06-27"}
    with httpx2.stream(
        "POST", server.url + "/v1/messages?beta=true", json=body, headers=headers
    ) as r:
        assert r.status_code == 200
        text = "".join(r.iter_text())
    assert '"name":"Bash"' in text.replace(" ", "") and "find" in text


def test_get_errors_carry_their_request_id(server):
    """The API's error bodies carry the request's id (platform.claude.com/docs/en/api/errors,
    "request_id", read 2026-12-01), GETs included."""
    answer = httpx2.get(server.url + "/v1/models/claude-nope", headers=HEADERS)
    data = answer.json()
    assert answer.status_code == 404 and data["request_id"].startswith("req_")
    assert data["request_id"] == answer.headers["request-id"]


def test_the_accepted_models_are_listed():
    from agentlab import models

    assert "claude-haiku-5-5" in models.accepted() and models.accepted() == models.ids()
    assert models.price("claude-haiku-5-5", prompt_tokens=200_000)[1]["input"] == 0.5
    assert models.price("claude-haiku-5-5", prompt_tokens=1_000)[1]["input"] == 0.1


def test_the_offline_beta_client_takes_fallbacks_too():
    """The SDK's beta create with `fallbacks` (and its beta header) works offline as on
    the server: accepted, and the refusal comes back as when the fallback could not run."""
    task = [{"role": "user", "content": f"{REFUSAL_TEST}: list the files"}]
    reply = DemoClient().beta.messages.create(
        model=SONNET, max_tokens=100, messages=task, fallbacks="default",
        betas=["server-side-fallback-2026-07-01"],
    )  # fmt: skip
    assert (
        reply.stop_reason == "refusal" and reply.stop_details.recommended_model == "claude-opus-4-8"
    )
