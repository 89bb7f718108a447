import anthropic
import pytest
from anthropic.types import Message

import agentlab as al
from agentlab.fakeapi.offline import (
    DemoClient,
    ScriptedClient,
    check_request,
    make_message,
    text,
    tool_use,
)


@pytest.fixture
def workspace(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text("import os\n# TODO: tidy\n")
    (tmp_path / "b.py").write_text("print('hi')\n")
    (tmp_path / "notes.md").write_text("nothing to do\n")
    return tmp_path


def run(task, client=None, **kw):
    messages = [{"role": "user", "content": task}]
    result = al.agent_loop(messages, client or DemoClient(), tools=[al.bash], **kw)
    assert al.validate(messages) == []
    return result


def commands(messages):
    return [
        b["input"]["command"]
        for m in messages
        if m["role"] == "assistant"
        for b in m["content"]
        if b["type"] == "tool_use"
    ]


def test_make_message_builds_real_sdk_messages():
    m = make_message([text("hi"), tool_use("bash", {"command": "ls"})])
    assert (
        isinstance(m, Message)
        and m.stop_reason == "tool_use"
        and m.content[1].id.startswith("toolu_")
    )
    assert make_message("done").stop_reason == "end_turn"
    assert make_message("x", "max_tokens").stop_reason == "max_tokens"


def test_offline_clients_raise_the_api_error_for_a_broken_request():
    client = ScriptedClient(["never"])
    bad = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": [tool_use("bash", {"command": "ls"}, "t1")]},
    ]
    with pytest.raises(anthropic.BadRequestError) as info:
        client.messages.create(
            model="m", max_tokens=10, messages=bad + [{"role": "user", "content": "next"}]
        )
    err = info.value
    assert err.status_code == 400
    assert err.body["error"]["type"] == "invalid_request_error"
    assert err.body["error"]["message"].startswith(
        "messages.2: Did not find 1 `tool_result` block(s)"
    )
    assert str(err).startswith("Error code: 400 - {")
    assert client.requests == []


def test_check_request_rules():
    assert check_request({}) == [
        "model: Field required",
        "max_tokens: Field required",
        "messages: Field required",
    ]
    ok = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "q"}]}
    assert check_request(ok) == []
    assert check_request({**ok, "max_tokens": 0}) == [
        "max_tokens: Input should be greater than or equal to 1"
    ]
    plain = {"type": "object"}
    assert check_request({**ok, "tools": [{"name": "bad name!", "input_schema": plain}]}) == [
        "tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'"
    ]
    assert check_request({**ok, "tools": [{"name": "x"}]}) == [
        "tools.0.custom.input_schema: Field required"
    ]
    two = [{"name": "x", "input_schema": {"type": "object"}}] * 2
    assert check_request({**ok, "tools": two}) == ["tools: Tool names must be unique."]


SCHEMAS = [
    ({"type": "object"}, True),
    ({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}, True),
    ({"type": "object", "properties": {"n": {"type": ["integer", "null"]}}}, True),
    ({"type": "object", "properties": {"xs": {"type": "array", "items": {"type": "number"}}}}, True),
    ({"type": "object", "properties": {"k": {"anyOf": [{"type": "string"}, True]}}}, True),
    ({"type": "object", "$defs": {"p": {"type": "object"}}, "additionalProperties": False}, True),
    ({"type": "object", "properties": {"path": {"type": "str"}}}, False),
    ({"type": "object", "properties": {"n": {"type": "int"}}}, False),
    ({"type": "object", "required": "path"}, False),
    ({"type": "object", "properties": ["path"]}, False),
    ({"type": "object", "properties": {"xs": {"type": "array", "items": {"type": "list"}}}}, False),
    ({"type": "object", "properties": {"k": {"anyOf": {"type": "string"}}}}, False),
]  # fmt: skip


@pytest.mark.parametrize(("schema", "valid"), SCHEMAS)
def test_a_tool_schema_is_checked_as_json_schema_and_agrees_with_a_full_validator(schema, valid):
    # "tools.N.custom.input_schema: JSON schema is invalid. It must match JSON Schema draft
    # 2020-12 ..." as the API answered in github.com/anthropics/claude-code/issues/7365
    # (2025-09-09). agentlab checks the keywords students write; jsonschema checks it all.
    import jsonschema

    try:
        jsonschema.Draft202012Validator.check_schema(schema)
        full = True
    except jsonschema.SchemaError:
        full = False
    assert full is valid
    ok = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "q"}]}
    errors = check_request({**ok, "tools": [{"name": "t", "input_schema": schema}]})
    assert errors == ([] if valid else [
        "tools.0.custom.input_schema: JSON schema is invalid. It must match JSON Schema draft "
        "2020-12 (https://json-schema.org/draft/2020-12). Learn more about tool use at "
        "https://docs.anthropic.com/en/docs/tool-use."])  # fmt: skip


def test_a_tool_schema_must_be_of_an_object():
    # The SDK's InputSchema: `type: Required[Literal["object"]]`. The API's sentences are
    # not public; these are pydantic's (inferred), as the API's other field errors read.
    ok = {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "q"}]}
    assert check_request({**ok, "tools": [{"name": "t", "input_schema": {}}]}) == [
        "tools.0.custom.input_schema.type: Field required"
    ]
    assert check_request({**ok, "tools": [{"name": "t", "input_schema": {"type": "array"}}]}) == [
        "tools.0.custom.input_schema.type: Input should be 'object'"
    ]


def test_sampling_on_a_model_that_takes_it_is_bounded_and_temperature_goes_without_top_p():
    # "`temperature` and `top_p` cannot both be specified for this model. Please use only
    # one.": the API's 400 as quoted in github.com/open-webui/open-webui/issues/17922
    # (2025-09-30). The range 0-1 is the docs'; its wording here is pydantic's (inferred).
    ok = {
        "model": "claude-haiku-4-5",
        "max_tokens": 5,
        "messages": [{"role": "user", "content": "q"}],
    }
    assert check_request({**ok, "temperature": 0.5}) == check_request({**ok, "top_p": 0.9}) == []
    assert check_request({**ok, "temperature": 0.5, "top_p": 0.9}) == [
        "`temperature` and `top_p` cannot both be specified for this model. Please use only one."
    ]
    assert check_request({**ok, "temperature": 1.5}) == [
        "temperature: Input should be less than or equal to 1"
    ]


def test_scripted_client_records_requests_and_runs_out_clearly():
    client = ScriptedClient(["one"])
    client.messages.create(model="m", max_tokens=5, messages=[{"role": "user", "content": "q"}])
    assert client.requests[0]["messages"] == [{"role": "user", "content": "q"}]
    with pytest.raises(IndexError, match="no reply left for request 2"):
        client.messages.create(model="m", max_tokens=5, messages=[{"role": "user", "content": "q"}])


def test_scripted_stream_has_text_stream_and_final_message():
    client = ScriptedClient(["hello there world"])
    with client.messages.stream(
        model="m", max_tokens=5, messages=[{"role": "user", "content": "q"}]
    ) as s:
        assert "".join(s.text_stream) == "hello there world"
        assert s.get_final_message().content[0].text == "hello there world"


def test_demo_counts_python_files(workspace):
    r = run("How many .py files are here?")
    assert "There are 2 Python" in r.text and "not Claude" in r.text and r.turns == 2


def test_demo_lists_files(workspace):
    r = run("List the files here")
    assert "notes.md" in r.text and commands(r.messages) == ["ls -la"]


def test_demo_counts_lines_of_a_file(workspace):
    assert "a.py has 2 lines" in run("How many lines are in a.py?").text


def test_demo_searches_text(workspace):
    r = run("Search for 'TODO' in these files")
    assert "a.py:2:# TODO: tidy" in r.text and "I found 1 line containing" in r.text
    assert "No line here contains `zebra`" in run("Search for 'zebra' please").text


def test_demo_uses_parallel_calls_for_date_and_system(workspace):
    r = run("What is the date and which system is this?")
    assert commands(r.messages) == ["date", "uname -a"]
    assert len(r.messages[2]["content"]) == 2 and "The date here is" in r.text


def test_demo_creates_a_file_and_checks_it(workspace):
    r = run('Create a file called greeting.txt containing "hello class" and check it')
    assert (workspace / "greeting.txt").read_text() == "hello class\n"
    assert (
        commands(r.messages)[-1] == "cat greeting.txt" and "hello class" in r.text and r.turns == 3
    )


def test_demo_reports_disk_use_and_falls_back_when_du_fails(workspace):
    assert "This folder takes" in run("How much disk space does this folder use?").text

    @al.tool
    def bash(command: str) -> str:
        """A shell where du is broken."""
        return (
            "du: cannot read directory\n(exit code 1)"
            if command.startswith("du")
            else "Filesystem  Size\n/dev/x  10G"
        )

    messages = [{"role": "user", "content": "How much disk space is used?"}]
    r = al.agent_loop(messages, DemoClient(), tools=[bash])
    assert commands(messages) == ["du -sh .", "df -hP ."] and "/dev/x" in r.text


def test_demo_is_honest_about_failures_and_denials(workspace):
    @al.tool
    def bash(command: str) -> str:
        """A shell that always fails."""
        return "find: permission denied\n(exit code 1)"

    r = al.agent_loop(
        [{"role": "user", "content": "How many files are here?"}], DemoClient(), tools=[bash]
    )
    assert "did not work" in r.text and "permission denied" in r.text
    r = run("How many files are here?", approve=lambda call: al.Verdict.deny("no shell today"))
    assert "did not work" in r.text and "no shell today" in r.text


def test_demo_answers_anything_else_honestly_and_never_claims_to_be_claude(workspace):
    r = run("Write me a sonnet about the sea")
    assert r.turns == 1 and "offline demo model" in r.text and "ANTHROPIC_API_KEY" in r.text
    assert "I am Claude" not in r.text and r.messages[-1]["content"][-1]["text"] == r.text
    # The reply names the model asked for (the API echoes it), while its text says
    # it is the demo.
    msg = DemoClient().messages.create(
        model="claude-haiku-4-5", max_tokens=500, messages=[{"role": "user", "content": "hi"}]
    )
    assert msg.model == "claude-haiku-4-5"
    assert "not Claude" in msg.content[-1].text


def test_demo_without_the_bash_tool_says_what_it_needs(workspace):
    r = al.agent_loop([{"role": "user", "content": "List the files"}], DemoClient(), tools=[])
    # in plain API terms, for any client (not agentlab's Python names)
    assert "a tool that runs shell commands" in r.text and "tools list" in r.text
    assert "agentlab.bash" not in r.text


def test_demo_understands_chinese_tasks(workspace):
    assert "这里有 2 个 Python" in run("这里有多少个 py 文件？").text


def test_connect_picks_the_demo_without_a_key(monkeypatch, capsys):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    assert isinstance(al.connect(), DemoClient)
    assert "offline demo model" in capsys.readouterr().out


def test_connect_uses_the_sdk_with_a_key_or_base_url(monkeypatch, capsys):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    assert isinstance(al.connect(), anthropic.Anthropic)
    assert "Anthropic API" in capsys.readouterr().out
    assert isinstance(al.connect(offline=True), DemoClient)
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    assert isinstance(al.connect(), anthropic.Anthropic)
    assert "http://127.0.0.1:9" in capsys.readouterr().out


def test_demo_follows_what_the_task_says(workspace):
    run("Create a file called hi.txt containing hello there and check it")
    assert (workspace / "hi.txt").read_text() == "hello there\n"
    (workspace / "sub").mkdir()
    (workspace / "sub" / "inner.txt").write_text("x")
    r = run("List the files in the folder sub")
    assert "inner.txt" in r.text and "ls -la sub" in r.text


def test_making_an_offline_client_does_not_import_the_sdk():
    import subprocess
    import sys

    code = (
        "import sys, agentlab as al; c = al.DemoClient(); s = al.ScriptedClient(['x']); "
        "print('anthropic' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"  # the SDK is imported by the first request


def test_scripted_behaviour_is_the_same_on_the_sdk_path():
    # messages.stream goes through the SDK's own client; the script works as for create.
    seen = []

    def reply(params):
        seen.append(params["messages"][-1]["content"])
        return lambda p: f"you said {p['messages'][-1]['content']}"  # a callable item

    client = ScriptedClient(reply)
    with client.messages.stream(
        model="m", max_tokens=5, messages=[{"role": "user", "content": "q"}]
    ) as s:
        assert s.get_final_message().content[0].text == "you said q"
    assert seen == ["q"] and client.requests[0]["messages"] == [{"role": "user", "content": "q"}]
    lax = ScriptedClient(["fine"], check=False)  # check=False lets a broken request through
    broken = [{"role": "assistant", "content": "no user first"}]
    with lax.messages.stream(model="m", max_tokens=5, messages=broken) as s:
        assert s.get_final_text() == "fine"
    with pytest.raises(anthropic.BadRequestError, match="first message must use the"):
        ScriptedClient(["x"]).messages.create(model="m", max_tokens=5, messages=broken, stream=True)


# --- D6: the offline clients apply what `agentlab serve` applies --------------------------
# Sources: platform.claude.com/docs/en/build-with-claude/handling-stop-reasons (max_tokens,
# stop_sequence) and the tool-use docs (tool_choice "none"), checked 2026-11-30. The 404
# text "model: NAME" for an unknown model comes from public reports (2025-2026), as in
# agentlab/fakeapi/checks.py; the reply's `model` echoing the request follows the API reference
# (Messages: "model" in the response), checked 2026-11-30.

ASK = [{"role": "user", "content": "List the files"}]
BASH_TOOL = [al.bash.definition]


def _demo(**params):
    base = {"model": "claude-haiku-4-5", "max_tokens": 500, "messages": ASK, "tools": BASH_TOOL}
    return DemoClient().messages.create(**{**base, **params})


def test_max_tokens_cuts_the_reply_and_says_so():
    whole = _demo()
    assert whole.stop_reason == "tool_use"
    cut = _demo(max_tokens=1)
    assert cut.stop_reason == "max_tokens" and cut.usage.output_tokens == 1
    assert cut.content[0].text == whole.content[0].text[:4]
    scripted = ScriptedClient(["a long answer"]).messages.create(
        model="m", max_tokens=1, messages=ASK
    )
    assert scripted.stop_reason == "max_tokens" and scripted.content[0].text == "a lo"
    with DemoClient().messages.stream(
        model="claude-haiku-4-5", max_tokens=1, messages=ASK, tools=BASH_TOOL
    ) as s:
        assert s.get_final_message().stop_reason == "max_tokens"


def test_stop_sequences_and_tool_choice_none():
    hi = [{"role": "user", "content": "hello"}]
    stopped = _demo(messages=hi, stop_sequences=["demo"])
    assert stopped.stop_reason == "stop_sequence" and stopped.stop_sequence == "demo"
    assert "demo" not in stopped.content[-1].text
    no_tools = _demo(tool_choice={"type": "none"})
    assert no_tools.stop_reason == "end_turn"
    assert [b.type for b in no_tools.content] == ["text"]


def test_a_stop_sequence_counts_only_the_tokens_written_before_it():
    # Output tokens are what the model generated: text cut at a stop sequence is not
    # generated (handling-stop-reasons, as cited above). Before, the whole reply counted.
    hi = [{"role": "user", "content": "hello"}]
    whole = _demo(messages=hi)
    stopped = _demo(messages=hi, stop_sequences=["I"])  # the demo's reply starts with "I am"
    assert stopped.stop_reason == "stop_sequence" and stopped.content == []
    assert whole.usage.output_tokens > 20
    assert stopped.usage.output_tokens == 1


def test_the_same_controls_as_the_server(monkeypatch):
    from agentlab.fakeapi.server import FakeMessagesServer

    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    asks = [
        {"max_tokens": 3},
        {"stop_sequences": ["bash"]},
        {"tool_choice": {"type": "none"}},
        {"model": "claude-sonnet-5-5", "max_tokens": 1},
    ]
    with FakeMessagesServer() as server:
        client = anthropic.Anthropic(api_key="k", base_url=server.url, max_retries=0)
        for extra in asks:
            body = {"model": "claude-haiku-4-5", "max_tokens": 500, "messages": ASK}
            body = {**body, "tools": BASH_TOOL, **extra}
            online = client.messages.create(**body)
            offline = DemoClient().messages.create(**body)
            assert offline.stop_reason == online.stop_reason, extra
            # `agentlab serve` names its demo replies "agentlab-demo" (unchanged here);
            # the offline clients echo the model asked for, as the API does.
            assert offline.model == body["model"]
            strip = {"id", "signature"}
            assert [b.model_dump(exclude=strip) for b in offline.content] == [
                b.model_dump(exclude=strip) for b in online.content
            ], extra


def test_an_unknown_model_is_not_found_unless_any_model_is_allowed():
    with pytest.raises(anthropic.NotFoundError) as e:
        _demo(model="gpt-4")
    assert e.value.status_code == 404 and e.value.body["error"]["message"] == "model: gpt-4"
    assert (
        DemoClient(any_model=True)
        .messages.create(model="gpt-4", max_tokens=500, messages=ASK)
        .model
        == "gpt-4"
    )
    from agentlab import models

    assert "agentlab-demo" in models.ids()
    for model in models.ids():  # every model in models.json, the demo's name included
        assert _demo(model=model, max_tokens=64).model == model


def test_the_reply_names_the_model_asked_for_but_its_text_says_demo():
    for model in ("claude-haiku-4-5", "claude-sonnet-5-5"):
        m = _demo(model=model, messages=[{"role": "user", "content": "hello"}])
        assert m.model == model
        assert "not Claude" in m.content[-1].text and "I am Claude" not in m.content[-1].text


def test_metadata_must_be_an_object():
    with pytest.raises(anthropic.BadRequestError, match="metadata: Input should be a valid"):
        _demo(metadata="x")
    assert _demo(metadata={"user_id": "student-1"}).stop_reason == "tool_use"


# --- tool_choice: the demo is forced, a script that disobeys is refused ----------------
# Source of the forcing rule: platform.claude.com/docs/en/agents-and-tools/tool-use/
# implement-tool-use (tool_choice), checked 2026-12-01: "any" uses one of the tools
# offered, {"type": "tool", "name": X} uses X, "none" no tool; with any/tool the API
# prefills the turn, so no text comes before the call. On claude-sonnet-5-5 a forced
# choice is a 400 (Sonnet 5.5 migration guide, checked 2026-11-30).

from agentlab import models  # noqa: E402
from agentlab.fakeapi.offline import ScriptError  # noqa: E402
from tests.test_dropin import BASH  # noqa: E402  (a raw tool definition)

CALC = {
    "name": "calc",
    "description": "Do arithmetic.",
    "input_schema": {
        "type": "object",
        "properties": {
            "a": {"type": "integer", "minimum": 1},
            "op": {"enum": ["add", "sub"]},
            "terms": {"type": "array", "items": {"type": "number"}, "minItems": 2},
            "note": {"type": "string"},
        },
        "required": ["a", "op", "terms"],
    },
}
LIST = [{"role": "user", "content": "list the files here"}]
FORCING = [m for m in models.ids() if models.get(m).forced_tool_choice]


def _ask(client, model, choice, tools=(BASH, CALC), messages=LIST):
    return client.messages.create(
        model=model, max_tokens=500, messages=messages, tools=list(tools), tool_choice=choice
    )


def test_some_models_accept_a_forced_choice_and_sonnet_5_5_does_not():
    assert FORCING and "claude-sonnet-5-5" not in FORCING
    for choice in ({"type": "any"}, {"type": "tool", "name": "bash"}):
        with pytest.raises(anthropic.BadRequestError, match="tool_choice forces tool use"):
            _ask(DemoClient(), "claude-sonnet-5-5", choice)
        with pytest.raises(anthropic.BadRequestError, match="tool_choice forces tool use"):
            _ask(
                ScriptedClient([[tool_use("bash", {"command": "ls"})]]), "claude-sonnet-5-5", choice
            )


@pytest.mark.parametrize("model", FORCING)
def test_the_demo_follows_a_forced_tool_choice(model, workspace):
    import jsonschema

    # any: one of the tools offered, the one its plan would call, and nothing before it
    reply = _ask(DemoClient(), model, {"type": "any"})
    assert reply.stop_reason == "tool_use"
    assert [(b.type, b.name, b.input) for b in reply.content] == [
        ("tool_use", "bash", {"command": "ls -la"})
    ]
    # tool X: exactly X; the plan has no use for calc, so the smallest valid input
    reply = _ask(DemoClient(), model, {"type": "tool", "name": "calc"})
    assert reply.stop_reason == "tool_use"
    assert [b.name for b in reply.content] == ["calc"]
    jsonschema.validate(reply.content[0].input, CALC["input_schema"])
    # any, when the plan would answer in words: still a call (a task it cannot do)
    reply = _ask(DemoClient(), model, {"type": "any"}, messages=[{"role": "user", "content": "?"}])
    assert reply.stop_reason == "tool_use" and reply.content[0].name == "bash"
    jsonschema.validate(reply.content[0].input, BASH["input_schema"])
    # none: no call, an answer saying why
    reply = _ask(DemoClient(), model, {"type": "none"})
    assert reply.stop_reason == "end_turn"
    assert "tool_use" not in [b.type for b in reply.content]
    assert "tool_choice none" in reply.content[-1].text


def test_the_demo_under_none_on_the_default_model_calls_nothing(workspace):
    reply = _ask(DemoClient(), "claude-sonnet-5-5", {"type": "none"})
    assert reply.stop_reason == "end_turn"
    assert [b.type for b in reply.content] == ["thinking", "text"]


def test_the_demo_keeps_to_a_forced_tool_through_the_sdk(workspace):
    with DemoClient().messages.stream(
        model="claude-haiku-4-5",
        max_tokens=500,
        messages=LIST,
        tools=[BASH, CALC],
        tool_choice={"type": "tool", "name": "calc"},
    ) as stream:
        final = stream.get_final_message()
    assert final.stop_reason == "tool_use" and [b.name for b in final.content] == ["calc"]


SCRIPT_MISTAKES = [
    ({"type": "any"}, "No tool for you.", "(any): it must call at least one of the tools"),
    (
        {"type": "tool", "name": "calc"},
        [tool_use("bash", {"command": "ls"})],
        "(tool calc): it must call the tool calc and no other, but it calls: bash",
    ),
    (
        {"type": "tool", "name": "calc"},
        "Just words.",
        "(tool calc): it must call the tool calc and no other, but it calls: no tool",
    ),
    ({"type": "none"}, [tool_use("bash", {"command": "ls"})], "(none): it must call no tool"),
]


@pytest.mark.parametrize(("choice", "wrong", "says"), SCRIPT_MISTAKES)
def test_a_script_that_disobeys_tool_choice_is_the_scripts_mistake(choice, wrong, says):
    good = [tool_use("calc", {"a": 1, "op": "add", "terms": [1, 2]})]
    if choice["type"] == "none":
        good = "Fine."
    client = ScriptedClient([good, wrong])
    assert _ask(client, "claude-haiku-4-5", choice)  # reply 1 follows it
    with pytest.raises(ScriptError) as caught:
        _ask(client, "claude-haiku-4-5", choice)
    message = str(caught.value)
    assert message.startswith("Scripted reply 2 does not follow the request's tool_choice")
    assert says in message and "the script's mistake" in message
    assert isinstance(caught.value, ValueError)
    # the same through the SDK's own code (stream), and for a ready Message
    streamed = ScriptedClient([make_message(wrong, model="claude-haiku-4-5")])
    with pytest.raises(ScriptError, match="Scripted reply 1"):
        with streamed.messages.stream(
            model="claude-haiku-4-5",
            max_tokens=50,
            messages=LIST,
            tools=[BASH, CALC],
            tool_choice=choice,
        ) as stream:
            stream.get_final_message()


def test_a_refusal_is_let_through_whatever_tool_choice_asked():
    refusal = make_message("I can't help with that.", "refusal")
    reply = _ask(ScriptedClient([refusal]), "claude-haiku-4-5", {"type": "any"})
    assert reply.stop_reason == "refusal"


def test_the_server_answers_a_script_mistake_with_a_500_naming_it():
    import httpx2

    from agentlab.fakeapi.server import FakeMessagesServer

    body = {
        "model": "claude-haiku-4-5",
        "max_tokens": 50,
        "messages": LIST,
        "tools": [BASH],
        "tool_choice": {"type": "tool", "name": "bash"},
    }
    headers = {"x-api-key": "test", "anthropic-version": "2026-10-21"}
    with FakeMessagesServer([[tool_use("bash", {"command": "ls"})], "No."]) as server:
        ok = httpx2.post(server.url + "/v1/messages", json=body, headers=headers)
        wrong = httpx2.post(server.url + "/v1/messages", json=body, headers=headers)
    assert ok.status_code == 200 and ok.json()["stop_reason"] == "tool_use"
    assert wrong.status_code == 500 and wrong.headers["x-should-retry"] == "false"
    assert wrong.json()["error"]["message"].startswith("Scripted reply 2 does not follow")
