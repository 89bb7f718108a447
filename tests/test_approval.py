"""The one approval default, and the terminal prompts that ask (issue 13, points 1 and 9).

Offline demo (and scripted/replayed) clients: tools run unasked. A real
model (a key or a base URL): ``%%agent`` and ``agentlab run`` ask before each
tool unless ``--yes``. (The CLI side, over a pseudo-terminal, is in test_cli.)
"""

from __future__ import annotations

import builtins
import io

import anthropic
import pytest
from IPython.testing.globalipapp import get_ipython
from rich.console import Console

import agentlab as al
from agentlab import magic
from agentlab.cli import _confirm
from agentlab.offline import DemoClient, ScriptedClient, tool_use
from agentlab.tools.policy import Verdict, asks_by_default


def test_asks_by_default_only_for_a_real_or_unknown_client(tmp_path):
    real = anthropic.Anthropic(api_key="test", base_url="http://127.0.0.1:9")
    assert asks_by_default(real) and asks_by_default(object())
    assert asks_by_default(al.record(real, tmp_path / "r.jsonl"))
    assert not asks_by_default(DemoClient()) and not asks_by_default(ScriptedClient(["hi"]))
    assert not asks_by_default(al.record(DemoClient(), tmp_path / "d.jsonl"))


# --- %%agent ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def ip():
    shell = get_ipython()
    shell.run_line_magic("load_ext", "agentlab")
    yield shell
    shell.run_line_magic("unload_ext", "agentlab")


@pytest.fixture(autouse=True)
def fresh(ip, tmp_path, monkeypatch):
    for key in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "AGENTLAB_MODEL"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.chdir(tmp_path)
    ip.user_ns.pop("_agent", None)


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


def result_text(ip):
    return ip.user_ns["_agent"].messages[2]["content"][0]["content"]


def test_a_real_model_asks_in_the_magic_unless_yes(ip, monkeypatch, capsys):
    ip.user_ns["client"] = Unknown([[tool_use("bash", {"command": "echo hi"})], "done"])
    asked = answering(monkeypatch, "what?", "y")
    ip.run_cell_magic("agent", "--client client", "Say hi")
    assert len(asked) == 2 and "Enter = no" in asked[0]  # asked again after "what?"
    assert "Please answer y, n" in capsys.readouterr().out
    assert result_text(ip).strip() == "hi"
    ip.user_ns["client"] = Unknown([[tool_use("bash", {"command": "echo again"})], "done"])
    monkeypatch.setattr(builtins, "input", lambda prompt="": pytest.fail("asked"))
    ip.run_cell_magic("agent", "--client client --new --yes", "Say hi")
    assert result_text(ip).strip() == "again"


def test_the_demo_runs_unasked_in_the_magic(ip, monkeypatch):
    monkeypatch.setattr(builtins, "input", lambda prompt="": pytest.fail("asked"))
    result = ip.run_cell_magic("agent", "--offline", "How many .py files are here?")
    assert result.stop_reason == "end_turn"


def test_the_magic_prompt_shows_control_characters(monkeypatch, capsys):
    answering(monkeypatch, "")
    call = {"name": "bash", "input": {"command": "rm -rf ~ #\r\x1b[2Kls -la"}}
    verdict = magic.ask_in_terminal(call)
    out = capsys.readouterr().out
    assert verdict.action == "deny"
    assert "rm -rf ~ #\\r\\x1b[2Kls -la" in out and "\x1b" not in out and "\r" not in out
    assert "control or invisible characters" in out


# --- the CLI's prompt, on its own ----------------------------------------------

# What a model could put in a command to fool the person approving it.
COMMANDS = [
    "rm -rf ~ #\r\x1b[2Kls -la",  # \r and erase-line: would display as "ls -la"
    "rm -rf ~ #\x1b[8mhidden",  # SGR 8: concealed text
    "echo hi\x1b]52;c;cm0gLXJmIH4=\x07",  # OSC 52: write the clipboard
    "ls \u202e; rm -rf ~",  # bidi override: shown backwards
    "ls\u200b; rm -rf ~",  # zero-width space
    "ls\x08\x08rm -rf ~",  # backspaces
    "ls\x00",  # NUL
    "ls\x9b2J",  # one-byte C1 CSI
    "grep -rn '[/]' .",  # rich markup that crashed the old prompt
    "echo [conceal]secret[/conceal] [bold]x[/]",
    "echo :warning: :smile:",  # rich emoji codes
]


@pytest.mark.parametrize("command", COMMANDS)
def test_the_cli_prompt_shows_the_exact_command(command):
    from agentlab.terminal import visible

    screen = io.StringIO()
    console = Console(file=screen, width=200, highlight=False, emoji=False)
    ask = _confirm(console, read=lambda prompt: "y")
    verdict = ask({"name": "bash", "input": {"command": command}})
    out = screen.getvalue()
    assert verdict == Verdict.approve()
    assert visible(command) in out  # every character, written out where invisible
    assert not any(c in out for c in "\x1b\r\x00\x08\x07\x9b\u202e\u200b")


def test_the_cli_prompt_asks_again_and_understands_edits_and_end_of_input():
    screen = io.StringIO()
    console = Console(file=screen, width=200)
    answers = iter(["", "perhaps", "e ls -la", "n too risky"])
    ask = _confirm(console, read=lambda prompt: next(answers))
    call = {"name": "bash", "input": {"command": "rm -rf ~"}}
    assert ask(call) == Verdict.deny("the user did not allow this call")  # Enter = no
    assert ask(call) == Verdict.edit({"command": "ls -la"})  # "perhaps" was asked again
    assert "Please answer y, n" in screen.getvalue()
    assert ask(call) == Verdict.deny("too risky")

    def closed(prompt):
        raise EOFError

    assert "nobody answered" in _confirm(console, read=closed)(call).reason
