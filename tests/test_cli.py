import json
import subprocess
import sys


def agentlab(*args, cwd, stdin=None):
    return subprocess.run(
        [sys.executable, "-m", "agentlab", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        env={"PATH": "/usr/bin:/bin", "HOME": str(cwd), "COLUMNS": "100"},
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


def test_without_a_terminal_and_without_yes_nothing_runs(tmp_path):
    out = agentlab("run", "Create a file called made.txt and check it", cwd=tmp_path)
    assert "No terminal to ask you" in out.stdout and "rerun with --yes" in out.stdout
    assert not (tmp_path / "made.txt").exists()


def test_max_turns_ends_the_run(tmp_path):
    out = agentlab("run", "--yes", "--max-turns", "1", "What is the date?", cwd=tmp_path)
    assert out.returncode == 1  # stopped by the turn limit, not by the model
    assert "limit of 1 model request" in out.stdout


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
    assert out.returncode == 0 and "commands run in a fresh folder" in out.stdout
    assert "这里有 0 个 Python" in out.stdout


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
