"""`agentlab doctor`: one report of what a class needs, exit 1 with a fix when something is missing."""

from __future__ import annotations

import json

import pytest

from agentlab.apps import doctor


def by_name(results):
    return {c.name: c for c in results}


def test_every_check_runs_and_this_machine_is_ready(capsys):
    code = doctor.main([])
    out = capsys.readouterr().out
    names = [c.name for c in doctor.checks()]
    assert names == ["agentlab", "model", "bash", "sandbox", "jupyterlab", "cjk_font", "lessons"]
    assert code == 0 and "Ready for class." in out
    assert "offline demo model" in out  # conftest removes every key: the default is offline


def test_model_line_says_which_model_without_calling_it(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")  # nothing listens there
    found = by_name(doctor.checks())["model"].found
    assert "http://127.0.0.1:9" in found and "claude-sonnet-5-5" in found


def test_missing_widget_front_end_fails_with_the_fix(monkeypatch, tmp_path, capsys):
    import jupyter_core.paths

    monkeypatch.setattr(jupyter_core.paths, "jupyter_path", lambda *parts: [str(tmp_path)])
    assert doctor.main([]) == 1
    out = capsys.readouterr().out
    assert "✗ jupyterlab" in out and "pip install --upgrade ipywidgets jupyterlab_widgets" in out
    assert "Not ready for class" in out


def test_a_missing_font_warns_but_does_not_fail(monkeypatch):
    monkeypatch.setattr(doctor.shutil, "which", lambda name: None)
    font = by_name(doctor.checks())["cjk_font"]
    assert not font.ok and not font.required and "fonts-noto-cjk" in font.fix


def test_a_crashing_check_is_reported_not_raised(monkeypatch, capsys):
    def broken():
        raise RuntimeError("boom")

    monkeypatch.setattr(doctor, "CHECKS", (broken,))
    assert doctor.main(["--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is False and report["checks"][0]["found"] == "RuntimeError: boom"


def test_chinese_report(capsys):
    from agentlab.i18n import set_language

    set_language("zh")
    try:
        doctor.main([])
    finally:
        set_language("en")
    assert "可以上课了" in capsys.readouterr().out


@pytest.mark.parametrize("flag", ["--help"])
def test_help(flag, capsys):
    with pytest.raises(SystemExit) as e:
        doctor.main([flag])
    assert e.value.code == 0 and "JupyterLab" in capsys.readouterr().out


@pytest.mark.parametrize(
    "env, expected",
    [
        ({"LANG": "zh_CN.UTF-8"}, "zh"),
        ({"LANG": "en_US.UTF-8"}, "en"),
        ({"LC_ALL": "zh_TW.UTF-8", "LANG": "en_US.UTF-8"}, "zh"),  # LC_ALL wins, as in POSIX
        ({"LC_ALL": "C.UTF-8", "LANG": "zh_CN.UTF-8"}, "en"),
        ({}, "en"),
    ],
)
def test_language_follows_the_locale(env, expected):
    from agentlab.i18n import language_from_environment

    assert language_from_environment(env) == expected


def test_a_chinese_locale_starts_agentlab_in_chinese():
    import subprocess
    import sys

    code = "from agentlab.i18n import get_language; print(get_language())"
    out = subprocess.run(
        [sys.executable, "-c", code],
        env={"LANG": "zh_CN.UTF-8", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out.strip() == "zh"


# --- the endpoint and the key, checked with one cheap request ---------------------------


class _Models:
    """A tiny Messages-API stand-in: GET /v1/models answers ``status``; it keeps the
    Authorization header it was sent."""

    def __init__(self, status: int):
        import http.server
        import threading

        outer = self
        self.seen: list[str] = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (http.server's name)
                outer.seen.append(
                    self.headers.get("Authorization", "") + self.headers.get("x-api-key", "")
                )
                body = (
                    b'{"data": [{"type": "model", "id": "claude-sonnet-5-5", "display_name": "S",'
                    b' "created_at": "2026-09-28T00:00:00Z"}], "has_more": false,'
                    b' "first_id": "claude-sonnet-5-5", "last_id": "claude-sonnet-5-5"}'
                    if status == 200
                    else b'{"type": "error", "error": {"type": "authentication_error",'
                    b' "message": "invalid x-api-key"}}'
                )
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


def test_offline_makes_no_request_and_has_no_endpoint_line():
    names = [c.name for c in doctor.checks()]
    assert "endpoint" not in names and "key" not in names


def test_a_working_key_and_endpoint_are_one_line_each(monkeypatch, capsys):
    with _Models(200) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret-value-1234")
        code = doctor.main([])
    out = capsys.readouterr().out
    assert code == 0 and "Ready for class." in out
    line = next(x for x in out.splitlines() if "endpoint" in x)
    assert line.startswith("✓") and f"{server.url} answers" in line
    assert "✓ key" in out and "1 model" in out
    assert server.seen and "sk-ant-secret-value-1234" in server.seen[0]  # it was sent...
    assert "secret-value" not in out  # ...and never printed


def test_a_placeholder_key_is_not_ready_for_class(monkeypatch, capsys):
    with _Models(401) as server:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-...")  # the docs' placeholder
        code = doctor.main([])
    out = capsys.readouterr().out
    assert code == 1 and "Ready for class." not in out
    assert "✗ key" in out and "401" in out and "ANTHROPIC_API_KEY" in out
    assert "sk-ant-..." not in out


def test_an_endpoint_that_does_not_answer_is_said_in_one_line(monkeypatch, capsys):
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("ANTHROPIC_BASE_URL", f"http://127.0.0.1:{port}")
    assert doctor.main([]) == 1
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if "endpoint" in x)
    assert line.startswith("✗") and f"127.0.0.1:{port}" in line
    assert "agentlab serve" in out  # the fix names what to start
