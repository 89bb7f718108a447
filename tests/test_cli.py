import json
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

import agentlab
from agentlab.fakeapi.offline import text, tool_use
from agentlab.fakeapi.server import FakeMessagesServer

# The child must import this agentlab (the one under test), not another installed copy.
BASE_ENV = {
    "PATH": "/usr/bin:/bin",
    "COLUMNS": "100",
    "PYTHONPATH": os.path.dirname(os.path.dirname(agentlab.__file__)),
}


def home_beside(cwd) -> str:
    """A home folder of its own next to the workspace (bash refuses to run in one that
    holds the home folder, whose start-up files a command could change)."""
    home = Path(cwd).with_name(Path(cwd).name + "-home")
    home.mkdir(exist_ok=True)
    return str(home)


def agentlab(*args, cwd, env=None):
    return subprocess.run(
        [sys.executable, "-m", "agentlab", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        env={**BASE_ENV, "HOME": home_beside(cwd), **(env or {})},
    )


def test_run_offline_shows_each_stage_and_saves_the_history(tmp_path):
    (tmp_path / "x.py").write_text("")
    out = agentlab("run", "--yes", "--save", "h.json", "How many .py files are here?", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "offline demo model" in text and "turn 1" in text and "execute bash" in text
    assert "1 Python (.py) file" in text and "tool_result" in text
    history = json.loads((tmp_path / "h.json").read_text())
    assert [m["role"] for m in history] == ["user", "assistant", "user", "assistant"]


def test_the_offline_demo_runs_tools_unasked(tmp_path):
    out = agentlab("run", "Create a file called made.txt and check it", cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert (tmp_path / "made.txt").exists()


def test_a_real_model_without_a_terminal_stops_before_the_first_request(tmp_path):
    with FakeMessagesServer() as server:
        env = {"ANTHROPIC_API_KEY": "test", "ANTHROPIC_BASE_URL": server.url}
        out = agentlab("run", "Create a file called made.txt", cwd=tmp_path, env=env)
        assert server.requests == []  # nothing was sent
    assert out.returncode == 2
    assert "Stopped before the first request" in out.stdout and "--yes" in out.stdout
    assert out.stdout.count("Stopped") == 1 and not (tmp_path / "made.txt").exists()


def test_max_turns_ends_the_run(tmp_path):
    out = agentlab("run", "--yes", "--max-turns", "1", "What is the date?", cwd=tmp_path)
    assert out.returncode == 1  # stopped by the turn limit, not by the model
    assert "limit of 1 model request" in out.stdout and "ended: turn limit" in out.stdout
    assert "max_turns" not in out.stdout  # not a stop_reason: the API has no such value


def test_bad_input_gets_a_message_not_a_traceback(tmp_path):
    for args in (["run", "  "], ["run", "--save", "no/such/dir/h.json", "List the files"]):
        out = agentlab(*args, cwd=tmp_path)
        assert out.returncode == 2 and "Traceback" not in out.stderr + out.stdout
    out = agentlab("run", "--max-turns", "0", "List", cwd=tmp_path)
    assert out.returncode == 2 and "at least 1" in out.stderr


def test_workspace_and_language(tmp_path):
    out = agentlab(
        "run", "--yes", "--workspace", "--lang", "zh", "这里有多少个 py 文件？", cwd=tmp_path
    )
    assert out.returncode == 0 and "命令在一个新文件夹中运行" in out.stdout
    assert "这里有 0 个 Python" in out.stdout and "结束：模型已完成" in out.stdout
    assert "turn 1" not in out.stdout and "第 1 轮" in out.stdout


@pytest.mark.parametrize(
    "args, env, chinese",
    [
        (["这里有多少个 py 文件？"], {}, True),  # the task's script, with no --lang
        (["How many .py files are here?"], {"LANG": "zh_CN.UTF-8"}, True),  # the locale
        (["这里有多少个 py 文件？"], {"LANG": "en_US.UTF-8"}, True),  # the task beats LANG
        (["--lang", "en", "这里有多少个 py 文件？"], {}, False),  # --lang beats the task
        (["How many .py files are here?"], {}, False),
    ],
)
def test_language_comes_from_lang_then_the_task_then_the_locale(tmp_path, args, env, chinese):
    out = agentlab("run", "--yes", *args, cwd=tmp_path, env=env)
    assert out.returncode == 0, out.stderr
    assert ("第 1 轮" in out.stdout) is chinese and ("turn 1" in out.stdout) is not chinese


def test_bad_usage_is_reported(tmp_path):
    out = agentlab("run", cwd=tmp_path)
    assert out.returncode == 2 and "task" in out.stderr


def test_serve_help_and_record(tmp_path):
    out = agentlab("serve", "--help", cwd=tmp_path)
    assert out.returncode == 0 and "--port" in out.stdout
    out = agentlab(
        "run",
        "--yes",
        "--record",
        "s.jsonl",
        "--max-total-tokens",
        "100000",
        "List the files",
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    lines = (tmp_path / "s.jsonl").read_text().splitlines()
    assert len(lines) == 2
    assert all(w not in lines[0].lower() for w in ("api_key", "authorization", "x-api-key"))


# --- what reaches the terminal ----------------------------------------------------

# Escape sequences a model or a tool could print: erase the line, clear the
# screen, write the clipboard (OSC 52), set the title, a one-byte C1 CSI,
# a bidi override, and rich markup that would hide or crash.
HOSTILE = [
    "\x1b[2K\rall good",
    "\x1b[2J\x1b[H",
    "\x1b]52;c;cm0gLXJmIH4=\x07",
    "\x1b]0;title\x1b\\",
    "\x9b2J",
    "\u202etxt.exe",
    "[conceal]hidden[/conceal]",
    "[/]",
    "[link=https://evil.example]x[/link]",
]


def test_model_text_and_tool_output_reach_the_terminal_without_escapes(tmp_path):
    payload = "".join(HOSTILE)
    command = "printf '\\033[2J\\033]52;c;eA==\\007[/]'"
    steps = [[text("look: " + payload), tool_use("bash", {"command": command})], payload]
    with FakeMessagesServer(steps) as server:
        env = {"ANTHROPIC_API_KEY": "test", "ANTHROPIC_BASE_URL": server.url}
        out = agentlab("run", "--yes", "go", cwd=tmp_path, env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    assert not any(c in out.stdout for c in "\x1b\x07\x9b\u202e\r")
    assert "[conceal]hidden[/conceal]" in out.stdout and "[/]" in out.stdout  # shown as text
    assert "all good" in out.stdout


def in_a_terminal(args, answers, cwd, env):
    """Run ``agentlab`` with a pseudo-terminal as stdin; type ``answers`` at each prompt."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentlab", *args],
        cwd=cwd,
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env={**BASE_ENV, "HOME": home_beside(cwd), "TERM": "dumb", **env},
    )
    os.close(follower)
    seen, answers = b"", list(answers)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the program ended and closed the terminal
                break
            if not chunk:
                break
            seen += chunk
            if answers and seen.rstrip().endswith(b"(Enter alone = no):"):
                os.write(leader, answers.pop(0).encode() + b"\n")
                seen += b"\n"
        elif proc.poll() is not None:
            break
    proc.wait(10)
    os.close(leader)
    return proc.returncode, seen.decode("utf-8", "replace")


@pytest.mark.parametrize(
    ("answers", "ran"),
    [(["maybe", "yes"], True), ([""], False)],
)
def test_a_real_model_asks_in_a_terminal_until_it_understands(tmp_path, answers, ran):
    sneaky = "touch made.txt #\r\x1b[2Kls -la"
    steps = [[tool_use("bash", {"command": sneaky})], "done"]
    with FakeMessagesServer(steps) as server:
        env = {"ANTHROPIC_API_KEY": "test", "ANTHROPIC_BASE_URL": server.url}
        code, screen = in_a_terminal(["run", "go"], answers, tmp_path, env)
    assert code == 0, screen
    assert (tmp_path / "made.txt").exists() == ran
    # The exact bytes, made visible: the \r and ESC cannot hide "touch made.txt".
    assert "touch made.txt #\\r\\x1b[2Kls -la" in screen and "\x1b[2K" not in screen
    assert "control or invisible characters" in screen
    assert screen.count("(Enter alone = no):") == len(answers)
    if answers[0] == "maybe":
        assert "Please answer y, n" in screen


# --- every bad use is one line, exit 2, naming the help to read --------------------------


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        ([], "agentlab: say what to do: run, lessons, serve or doctor (see: agentlab --help)"),
        (["run", "--fast", "x"], "agentlab run: unrecognized arguments: --fast (see: agentlab run --help)"),
        (["run"], "agentlab run: the following arguments are required: task (see: agentlab run --help)"),
        (["run", "--max-turns", "0", "x"], "agentlab run: argument --max-turns: '0' is not a whole number of at least 1 (see: agentlab run --help)"),
        (["lessons", "--port", "99999"], "agentlab lessons: argument --port: '99999' is not a port: give a number from 1 to 65535 (see: agentlab lessons --help)"),
        (["doctor", "--x"], "agentlab doctor: unrecognized arguments: --x (see: agentlab doctor --help)"),
    ],
)  # fmt: skip
def test_a_bad_command_line_is_one_line_and_exit_2(argv, line):
    out = subprocess.run(
        [sys.executable, "-m", "agentlab", *argv], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 2
    assert out.stderr.strip() == line and out.stdout == ""


def test_advice_from_the_command_names_its_flag_not_a_python_call(tmp_path):
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}", "ANTHROPIC_API_KEY": "x"}
    out = subprocess.run(
        [sys.executable, "-m", "agentlab", "run", "--yes", "List the files"],
        capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path,
    )  # fmt: skip
    said = out.stdout + out.stderr
    assert out.returncode == 2 and "Could not reach the API server" in said
    assert "agentlab run --offline" in said and "connect(offline=True)" not in said
    assert "Traceback" not in said


def test_advice_in_python_names_the_python_call():
    import socket

    import anthropic

    from agentlab.errors import explain_error

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    client = anthropic.Anthropic(api_key="x", base_url=f"http://127.0.0.1:{port}", max_retries=0)
    with pytest.raises(anthropic.APIConnectionError) as caught:
        client.messages.create(
            model="claude-sonnet-5-5", max_tokens=10, messages=[{"role": "user", "content": "hi"}]
        )
    assert "agentlab.connect(offline=True)" in explain_error(caught.value)
