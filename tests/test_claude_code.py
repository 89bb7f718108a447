"""Claude Code's own CLI against the demo server: a real agent's loop, offline.

Runs only where Claude Code is installed (``npm install -g @anthropic-ai/claude-code``;
Node 20 or later): ``claude -p TASK --allowedTools Bash --output-format json`` with
``ANTHROPIC_BASE_URL`` at a ``FakeMessagesServer`` serving the demo model, a throwaway
``HOME`` and ``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1``. Nothing leaves the machine.

What it checks: Claude Code's requests are accepted (24 tools, adaptive thinking,
output_config.effort, a context-management edit, a mid-conversation system message,
beta headers); the demo picks Claude Code's shell tool (``Bash``) among them; Claude
Code runs the command, sends the result back with the thinking block unchanged (the
prefix check passes: Claude Code is append-only) and reports the right count.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agentlab.fakeapi.server import FakeMessagesServer

CLAUDE = shutil.which("claude")
# Skipped on a machine without it; CI installs it (.ci/run), so there a missing CLI fails.
pytestmark = pytest.mark.skipif(
    (CLAUDE is None or shutil.which("node") is None) and not os.environ.get("CI"),
    reason="Claude Code is not installed (npm install -g @anthropic-ai/claude-code)",
)
TASK = "How many .py files are in this folder?"


def run_claude(workdir: Path, home: Path, server: FakeMessagesServer, *extra: str) -> dict:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home),
        "ANTHROPIC_BASE_URL": server.url,
        "ANTHROPIC_API_KEY": "x",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }
    done = subprocess.run(
        [str(CLAUDE), "-p", TASK, "--allowedTools", "Bash", "--output-format", "json", *extra],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return json.loads(done.stdout)


@pytest.mark.parametrize(
    "model", [[], ["--model", "claude-sonnet-5-5"]], ids=["default", "sonnet-5-5"]
)
def test_claude_code_finishes_a_tool_round_trip_with_the_demo(tmp_path, model):
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    home.mkdir()
    for name in ("a.py", "b.py", "c.py", "notes.txt"):
        (work / name).write_text("x = 1\n")
    (work / ".hidden").mkdir()
    (work / ".hidden" / "skip.py").write_text("")
    with FakeMessagesServer(any_model=True) as server:
        result = run_claude(work, home, server, *model)
    posts = [r for r in server.requests if r.method == "POST" and r.path == "/v1/messages"]
    assert [r.status for r in posts] == [200, 200]  # a tool round trip, both accepted
    first, second = posts[0].body, posts[1].body
    assert any(t["name"] == "Bash" for t in first["tools"]) and len(first["tools"]) > 10
    asked = second["messages"][-2]  # the demo's reply, sent back
    (use,) = [b for b in asked["content"] if b["type"] == "tool_use"]
    assert use["name"] == "Bash" and "find" in use["input"]["command"]
    assert asked["content"][0]["type"] == "thinking"  # kept, unchanged
    (answer,) = [b for b in second["messages"][-1]["content"] if b["type"] == "tool_result"]
    assert "3" in json.dumps(answer["content"])
    assert result["num_turns"] == 2 and not result["is_error"]
    assert "3 Python" in result["result"]


def record(path: Path) -> None:
    """Write docs/recordings/claude_code_run.json: one Claude Code run against the demo,
    as the history Claude Code sent (its long system notes shortened: they are Claude
    Code's text, not ours). ``python tests/test_claude_code.py`` makes it again."""
    import tempfile

    from agentlab.history import save

    with tempfile.TemporaryDirectory() as tmp, FakeMessagesServer(any_model=True) as server:
        work, home = Path(tmp, "work"), Path(tmp, "home")
        work.mkdir()
        home.mkdir()
        for name in ("a.py", "b.py", "c.py", "notes.txt"):
            (work / name).write_text("x = 1\n")
        run_claude(work, home, server)
        posts = [r for r in server.requests if r.path == "/v1/messages"]
    last = posts[-1].body
    messages = []
    for m in last["messages"]:
        content = m["content"]
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        kept = []
        for b in content:
            b = {k: v for k, v in b.items() if k != "cache_control"}
            if b.get("type") == "text" and len(b["text"]) > 300:
                b["text"] = f"({len(b['text'])} characters of Claude Code's notes, left out here)"
            kept.append(b)
        messages.append({**m, "content": kept})
    # The last reply, as the demo gave it (the server keeps requests, not replies).
    from agentlab.fakeapi.demo import demo_reply

    messages.append({"role": "assistant", "content": demo_reply(last)})
    save(messages, path)


if __name__ == "__main__":
    record(Path(__file__).resolve().parents[1] / "docs" / "recordings" / "claude_code_run.json")
    sys.exit(0)
