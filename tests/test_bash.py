"""Tests for the hardened bash tool: real bash, real processes, no mocks.

POSIX only (process groups, signals); the whole file runs in a few seconds.
"""

from __future__ import annotations

import dataclasses
import importlib
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentlab.tools.shell import (
    BASH_DESCRIPTION,
    BASH_INPUT_SCHEMA,
    SAFE_ENV_KEYS,
    BashResult,
    make_workspace,
    run_bash,
)

# The module itself, for monkeypatching its internals.
bash_module = importlib.import_module("agentlab.tools.shell")

pytestmark = pytest.mark.skipif(os.name == "nt", reason="POSIX process groups and signals")


@pytest.fixture(autouse=True)
def _host_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    """Most tests here check the limits that hold everywhere, with the pids the host
    sees: they run without the sandbox. The sandbox's tests ask for it by name."""
    monkeypatch.setattr(bash_module, "SANDBOX", False)


CUT_HINT = "bytes cut; rerun with a narrower command, e.g. pipe through head, tail or grep] ..."


def alive(pid: int) -> bool:
    """True if ``pid`` is still running (a zombie waiting to be reaped counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True  # no /proc (macOS): os.kill said it exists
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def assert_gone(pids: list[int], within: float = 2.0) -> None:
    deadline = time.monotonic() + within
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not [p for p in pids if alive(p)], "processes survived the call"


def read_pids(path: Path) -> list[int]:
    pids = [int(x) for x in path.read_text().split()]
    assert pids, "the command did not record its pids"
    return pids


# --- the output text --------------------------------------------------------


def test_success_returns_the_output_as_printed() -> None:
    r = run_bash("echo hi")
    assert r.output == "hi\n" and str(r) == "hi\n"
    assert (r.exit_code, r.timed_out, r.truncated) == (0, False, False)
    assert 0 < r.duration < 5
    assert r.cwd == os.getcwd()


def test_stdout_and_stderr_are_one_stream_in_order() -> None:
    assert run_bash("echo a; echo b >&2; echo c").output == "a\nb\nc\n"


def test_nonzero_exit_adds_a_last_line() -> None:
    r = run_bash("echo oops >&2; exit 3")
    assert r.output == "oops\n(exit code 3)"
    assert r.exit_code == 3
    assert run_bash("printf x; exit 2").output == "x\n(exit code 2)"


def test_no_output_says_so_with_the_exit_code() -> None:
    assert run_bash("true").output == "(no output, exit 0)"
    r = run_bash("exit 4")
    assert (r.output, r.exit_code) == ("(no output, exit 4)", 4)


def test_bytes_that_are_not_utf8_are_replaced() -> None:
    r = run_bash(r"printf '\xff\xfe ok'")
    assert r.output == "\ufffd\ufffd ok"
    r = run_bash("head -c 100000 /dev/urandom", max_output=1000)
    assert r.exit_code == 0 and r.truncated


def test_a_multibyte_character_split_at_the_cut_does_not_crash() -> None:
    # 'é' is two bytes; a head of 51 bytes splits one of them.
    r = run_bash("for i in $(seq 500); do printf 'é'; done", max_output=102)
    assert r.truncated and r.exit_code == 0
    assert r.output.startswith("é" * 25 + "\ufffd\n... [898 " + CUT_HINT)


def test_long_output_keeps_head_and_tail_with_a_count() -> None:
    total = sum(len(str(i)) + 1 for i in range(1, 100_001))  # bytes printed by seq
    r = run_bash("seq 1 100000", max_output=1000)
    assert r.truncated and r.exit_code == 0  # it ran to the end: over the cap, not stopped
    assert r.output.startswith("1\n2\n3\n")
    assert r.output.endswith("99999\n100000\n")
    assert f"\n... [{total - 1000:,} {CUT_HINT}\n" in r.output
    assert len(r.output) <= 1000 + 120


def test_output_under_the_cap_is_not_cut() -> None:
    r = run_bash("seq 1 100", max_output=1000)
    assert not r.truncated and r.output == "".join(f"{i}\n" for i in range(1, 101))


# --- timeouts and the process group ------------------------------------------


def test_timeout_keeps_output_so_far_and_says_so() -> None:
    r = run_bash("echo start; sleep 5", timeout=0.5)
    assert r.output == "start\n(timed out after 0.5 s; the command was stopped)"
    assert (r.exit_code, r.timed_out) == (None, True)
    assert 0.5 <= r.duration < 2
    assert run_bash("sleep 5", timeout=1).output == "(timed out after 1 s; the command was stopped)"


def test_timeout_kills_the_whole_process_tree(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    command = (
        f"echo $$ >> {pids}; sleep 1000 & echo $! >> {pids}; "
        f"bash -c 'sleep 1000 & echo $! >> {pids}; wait' & "  # a grandchild too
        f"until [ $(wc -l < {pids}) -ge 3 ]; do sleep 0.01; done; "  # however loaded the machine
        "sleep 1000"
    )
    r = run_bash(command, timeout=2)
    assert r.timed_out
    assert len(read_pids(pids)) == 3
    assert_gone(read_pids(pids))


def test_a_process_that_ignores_sigterm_is_killed(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    # 1.5 s: long enough for bash to get going on a loaded machine
    r = run_bash(f"trap '' TERM; sleep 1000 & echo $! > {pids}; wait", timeout=1.5)
    assert r.timed_out and r.duration < 4
    assert_gone(read_pids(pids))


def test_background_job_holding_the_pipe_does_not_hang(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    r = run_bash(f"sleep 100 & echo $! > {pids}; echo hi")
    assert (r.output, r.exit_code, r.timed_out) == ("hi\n", 0, False)
    assert r.duration < 1.5
    assert_gone(read_pids(pids))  # background jobs do not outlive the call


def test_exit_code_is_kept_when_the_command_closes_its_output_early() -> None:
    r = run_bash("exec >&- 2>&-; sleep 0.2; exit 5")
    assert (r.output, r.exit_code) == ("(no output, exit 5)", 5)


def test_ctrl_c_kills_the_group_and_is_raised_again(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    start = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            run_bash(f"echo $$ > {pids}; sleep 30 & echo $! >> {pids}; sleep 30")
    finally:
        timer.cancel()
    assert time.monotonic() - start < 3
    assert_gone(read_pids(pids))


# --- memory -----------------------------------------------------------------


@pytest.mark.parametrize("command", ["yes", "cat /dev/urandom"])
def test_endless_output_is_stopped_with_bounded_memory(command: str) -> None:
    tracemalloc.start()
    try:
        r = run_bash(command, timeout=1, max_output=30_000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert r.truncated and r.exit_code is None and not r.timed_out
    assert r.output.endswith("(stopped: the command printed more than 10,000,000 bytes)")
    assert len(r.output) <= 30_000 + 300
    assert peak < 20 * 1024 * 1024
    assert r.duration < 1  # stopped by the byte limit, not the timeout


# --- stdin and environment -----------------------------------------------------


def test_stdin_is_closed() -> None:
    r = run_bash("read x; echo read=$?; cat; echo done", timeout=5)
    assert r.output == "read=1\ndone\n"
    assert r.duration < 2


def test_secrets_and_unlisted_variables_do_not_reach_the_child(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    monkeypatch.setenv("MY_TOKEN", "tok")
    monkeypatch.setenv("AGENTLAB_VISIBLE_TEST", "1")  # harmless, but not allow-listed
    out = run_bash("env").output
    names = {line.split("=", 1)[0] for line in out.splitlines() if "=" in line}
    assert "ANTHROPIC_API_KEY" not in names and "MY_TOKEN" not in names
    assert "sk-ant-test" not in out
    assert "AGENTLAB_VISIBLE_TEST" not in names
    assert "PATH" in names
    for line in ["PAGER=cat", "GIT_PAGER=cat", "MANPAGER=cat", "TERM=dumb", "NO_COLOR=1"]:
        assert line in out.splitlines()
    assert "PYTHONUNBUFFERED=1" in out and "GIT_TERMINAL_PROMPT=0" in out


def test_caller_env_is_added_but_secret_names_are_dropped() -> None:
    extra = {"GREETING": "hello", "OPENAI_API_KEY": "sk-x", "gh_token": "t", "DB_PASSWORD": "p"}
    out = run_bash("env", env=extra).output
    assert "GREETING=hello" in out.splitlines()
    assert "sk-x" not in out and "gh_token" not in out and "DB_PASSWORD" not in out


def test_allow_list_holds_no_secret_looking_names() -> None:
    assert {"PATH", "HOME", "LANG"} <= SAFE_ENV_KEYS
    assert not [k for k in SAFE_ENV_KEYS if any(w in k for w in ("KEY", "TOKEN", "SECRET"))]


# --- where it runs ----------------------------------------------------------


def test_cwd_defaults_to_the_current_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    r = run_bash("pwd -P")
    assert r.output == f"{tmp_path.resolve()}\n" and r.cwd == str(tmp_path)


def test_cwd_can_be_given_and_cd_does_not_carry_over(tmp_path: Path) -> None:
    assert run_bash("cd / && pwd", cwd=tmp_path).output == "/\n"
    r = run_bash("pwd -P", cwd=tmp_path)
    assert r.output == f"{tmp_path.resolve()}\n" and r.cwd == str(tmp_path)


def test_missing_cwd_is_a_result_not_an_exception(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    r = run_bash("ls", cwd=missing)
    assert r.output == f"(cannot run: the folder {missing} does not exist)"
    assert (r.exit_code, r.cwd) == (None, str(missing))


def test_make_workspace_gives_fresh_empty_folders() -> None:
    a, b = make_workspace(), make_workspace(prefix="lesson-")
    try:
        assert a != b and a.is_dir() and not any(a.iterdir())
        assert a.name.startswith("agentlab-") and b.name.startswith("lesson-")
        assert run_bash("pwd -P", cwd=a).output == f"{a}\n"
    finally:
        a.rmdir()
        b.rmdir()


def test_a_workspace_goes_when_the_process_ends_unless_kept(tmp_path: Path) -> None:
    # A lesson makes one each run: a kernel that shuts down leaves none behind.
    code = (
        "import sys; from agentlab.tools import make_workspace, run_bash\n"
        "gone, kept = make_workspace(), make_workspace(keep=True)\n"
        "run_bash('echo hi > made.txt', cwd=gone, sandbox=False)\n"
        "print(gone, kept)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    gone, kept = map(Path, out.stdout.split())
    assert not gone.exists() and kept.is_dir()
    kept.rmdir()


# --- bad input --------------------------------------------------------------


@pytest.mark.parametrize("command", ["", "   \n", None, 42, ["ls"]])
def test_empty_or_non_string_command_is_a_result(command: object) -> None:
    r = run_bash(command)  # type: ignore[arg-type]
    assert r.exit_code is None and not r.timed_out
    assert r.output.startswith("(") and ("empty" in r.output or "must be a string" in r.output)


def test_nul_byte_in_command_is_a_result() -> None:
    r = run_bash("echo a\0b")
    assert r.exit_code is None and r.output.startswith("(cannot run:")


def test_missing_bash_is_explained(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # a PATH with no bash on it
    r = run_bash("ls")
    assert r.exit_code is None
    assert "bash was not found" in r.output and "Git Bash" in r.output and "WSL" in r.output


@pytest.mark.parametrize("kwargs", [{"timeout": 0}, {"timeout": -1}, {"max_output": 0}])
def test_nonsense_limits_are_a_programming_error(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        run_bash("true", **kwargs)  # type: ignore[arg-type]


# --- the contract other code relies on ------------------------------------------


def test_result_is_frozen() -> None:
    r = run_bash("true")
    assert isinstance(r, BashResult)
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.output = "changed"  # type: ignore[misc]


def test_tool_definition_parts() -> None:
    assert BASH_INPUT_SCHEMA["required"] == ["command"]
    assert BASH_INPUT_SCHEMA["properties"]["command"]["type"] == "string"
    for words in ["fresh shell", "cd", "timeout", "head and tail", "Stdin is closed"]:
        assert words in BASH_DESCRIPTION


# --- where the OS cannot report an exit (macOS): the polling fallback ------------


def test_fallback_without_an_exit_fd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bash_module, "_exit_fd", lambda pid: None)
    pids = tmp_path / "pids"
    assert run_bash("echo hi; exit 3").output == "hi\n(exit code 3)"
    assert run_bash("exec >&-; sleep 0.1; exit 5").exit_code == 5
    r = run_bash(f"sleep 100 & echo $! > {pids}; echo hi")
    assert (r.output, r.duration < 1.5) == ("hi\n", True)
    assert_gone(read_pids(pids))
    r = run_bash(f"sleep 1000 & echo $! > {pids}; sleep 1000", timeout=1.5)
    assert r.timed_out
    assert_gone(read_pids(pids))


# --- nothing the command started survives the call (Linux) ---------------------

# Each command records the pids it leaves behind in the file {f}. Every kind
# of escape we know of for a process group: background jobs, nohup, disown,
# a new session (setsid), a double fork, a daemon that closed its output, one
# that ignores SIGTERM and SIGHUP, one that keeps forking.
DAEMON = "sh -c 'echo $$ >> {f}; exec sleep 1000' >/dev/null 2>&1"
ESCAPES = {
    "background": "sleep 1000 & echo $! >> {f}",
    "nohup": "nohup sleep 1000 >/dev/null 2>&1 & echo $! >> {f}",
    "disown": "sleep 1000 & echo $! >> {f}; disown",
    "setsid, holding the pipe": "setsid sleep 1000 & echo $! >> {f}",
    "setsid -f": "setsid -f " + DAEMON + "; sleep 0.1",
    "double fork": "( ( " + DAEMON + " & ) & ); sleep 0.1",
    "double fork + setsid": "( ( setsid " + DAEMON + " & ) & ); sleep 0.1",
    "python daemon": (
        "python3 -c 'import os\nif os.fork(): os._exit(0)\nos.setsid()\n"
        'if os.fork(): os._exit(0)\nopen("{f}", "a").write(str(os.getpid()) + "\\n")\n'
        "os.closerange(0, 3)\nimport time; time.sleep(1000)'; sleep 0.2"
    ),
    "ignores TERM and HUP": (
        "setsid sh -c \"trap '' TERM HUP; echo \\$\\$ >> {f}; while :; do sleep 1; done\" "
        ">/dev/null 2>&1 & sleep 0.1"
    ),
    "keeps forking": (
        "setsid sh -c 'while :; do sleep 1000 & echo $! >> {f}; sleep 0.01; done' "
        ">/dev/null 2>&1 & sleep 0.2"
    ),
}

linux_only = pytest.mark.skipif(not bash_module.GUARD, reason="subreaper tracking is Linux-only")


# Wait until the escapee has written its pid, however slow the machine is.
WAIT = "; until [ -s {f} ]; do sleep 0.01; done"
TIMED_OUT = ["setsid -f", "double fork + setsid", "python daemon", "keeps forking"]


@linux_only
@pytest.mark.parametrize(
    ("kind", "timeout"),
    [(kind, 30) for kind in ESCAPES] + [(kind, 2) for kind in TIMED_OUT],
    ids=[f"{kind}, finished" for kind in ESCAPES] + [f"{kind}, timed out" for kind in TIMED_OUT],
)
def test_no_process_survives_the_call(kind: str, timeout: float, tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    children = bash_module._children(os.getpid())
    # The timed-out variant keeps bash busy, so it is stopped rather than done.
    command = (ESCAPES[kind] + WAIT).format(f=pids) + ("; sleep 1000" if timeout < 30 else "")
    r = run_bash(command, timeout=timeout)
    assert r.timed_out == (timeout < 30)
    recorded = read_pids(pids)
    assert [p for p in recorded if alive(p)] == []  # gone when the call returns: no waiting
    assert bash_module._children(os.getpid()) == children  # and no zombies left with us


@linux_only
def test_without_the_guard_a_setsid_daemon_escapes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The control: the test above could fail. Without the guard, it does."""
    monkeypatch.setattr(bash_module, "GUARD", False)
    pids = tmp_path / "pids"
    run_bash((ESCAPES["setsid -f"] + WAIT).format(f=pids))
    (pid,) = read_pids(pids)
    try:
        assert alive(pid)
    finally:
        os.kill(pid, signal.SIGKILL)


@linux_only
def test_while_a_command_runs_we_are_not_dumpable_and_a_subreaper() -> None:
    before = (bash_module._prctl(bash_module._PR_GET_DUMPABLE), bash_module._subreaper())
    runner = threading.Thread(target=run_bash, args=("sleep 0.5",))
    runner.start()
    seen = set()
    while runner.is_alive():
        seen.add((bash_module._prctl(bash_module._PR_GET_DUMPABLE), bash_module._subreaper()))
        time.sleep(0.01)
    runner.join()
    assert (0, 1) in seen  # both settings are process-wide: this thread sees them
    assert (bash_module._prctl(bash_module._PR_GET_DUMPABLE), bash_module._subreaper()) == before


@linux_only
def test_commands_from_two_threads_take_turns_and_waiting_is_not_timed() -> None:
    """The guard's settings are process-wide, so commands run one at a time."""
    first = threading.Thread(target=run_bash, args=("sleep 1",))
    first.start()
    time.sleep(0.2)  # the first command holds the guard now
    r = run_bash("echo hi", timeout=0.5)  # waits about 0.8 s for its turn
    first.join()
    assert (r.output, r.timed_out) == ("hi\n", False)


def _as_nobody(command: str, secret: str, guard: bool = True, sandbox: bool = False) -> str:
    """Run ``run_bash(command)`` in a fresh Python that runs as user 65534.

    We run as root here, and root may read any process's memory, so the
    protection can only be seen between two processes of an ordinary user:
    the parent (holding ``secret`` in its environment from the start, as a
    kernel holds the API key) and the command it runs, both as uid 65534.
    The system Python loads shell.py by path, with the two modules of ours it
    imports (they need only the standard library), since our own Python and
    its packages live under /root.
    """
    package = Path(bash_module.__file__).parent.parent
    script = (
        "import importlib.util, sys, types\n"
        "def load(name, path):\n"
        "    spec = importlib.util.spec_from_file_location(name, path)\n"
        "    module = sys.modules[name] = importlib.util.module_from_spec(spec)\n"
        "    spec.loader.exec_module(module)\n"
        "    return module\n"
        "for name in ('agentlab', 'agentlab.tools'):\n"
        "    sys.modules[name] = types.ModuleType(name)\n"
        f"load('agentlab.i18n', {str(package / 'i18n.py')!r})\n"
        f"load('agentlab.tools.protect', {str(package / 'tools' / 'protect.py')!r})\n"
        f"shell = load('shell', {bash_module.__file__!r})\n"
        f"shell.GUARD = {guard}\n"
        f"shell.SANDBOX = {sandbox}\n"
        "shell._prctl(shell._PR_SET_DUMPABLE, 1)  # as an ordinary user's process is\n"
        "print(shell.run_bash(sys.argv[1], cwd='/tmp').output)\n"
    )
    return subprocess.run(
        ["/usr/bin/python3", "-c", script, command],
        env={"PATH": "/usr/bin:/bin", "ANTHROPIC_API_KEY": secret},
        cwd="/tmp",
        capture_output=True,
        text=True,
        timeout=30,
        user=65534,
        group=65534,
        extra_groups=[],
    ).stdout


@linux_only
@pytest.mark.skipif(os.getuid() != 0, reason="needs root to become another user for the test")
@pytest.mark.parametrize(
    "command",
    [
        "cat /proc/$PPID/environ",
        "tr '\\0' '\\n' < /proc/$PPID/environ",
        "python3 -c \"import os; print(open(f'/proc/{os.getppid()}/environ').read())\"",
        "grep -a sk-ant /proc/$PPID/mem /proc/$PPID/environ",
        "dd if=/proc/$PPID/mem bs=1 count=1 skip=4096 2>&1",
    ],
)
def test_a_command_cannot_read_the_key_from_its_parent(command: str) -> None:
    secret = "sk-ant-test-" + "x" * 20
    out = _as_nobody(command, secret)
    assert secret not in out and "ermission denied" in out
    if command.startswith("cat"):  # the control: without the guard the same read works
        assert secret in _as_nobody(command, secret, guard=False)


@linux_only
def test_the_safety_benchmark_leaves_nothing_behind() -> None:
    """benchmarks/safety.py's unguarded pass lets escapes outlive run_bash (that is
    what it counts), then must kill them all: a forking loop left running there
    once filled the machine's process table."""
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "safety.py"
    spec = importlib.util.spec_from_file_location("safety_benchmark", path)
    assert spec is not None and spec.loader is not None
    safety = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(safety)
    kinds = ["keeps forking", "setsid -f", "double fork + setsid"]
    assert safety.escapes(False, kinds, timeouts=(30.0,)) == (3, 3)  # they did escape
    assert bash_module.GUARD  # and the guard is back on
    assert safety.leftovers() == []


# --- the sandbox (Linux, bubblewrap) ------------------------------------------

sandbox_only = pytest.mark.skipif(
    not bash_module.sys.platform.startswith("linux"), reason="bubblewrap is Linux-only"
)


@pytest.fixture
def sandboxed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The sandbox, required: on Linux CI installs bubblewrap (.ci/install-sandbox)."""
    monkeypatch.setattr(bash_module, "SANDBOX", True)
    problem = bash_module.sandbox_problem()
    assert not problem, f"{problem}: run .ci/install-sandbox (apt-get install -y bubblewrap)"


# The attack: a command finds the kernel's connection file (named on the
# kernel's command line, /proc/$PPID/cmdline, or in Jupyter's runtime folder),
# loads it with jupyter_client and queues code on the kernel's own channel. The
# kernel would run that code after the cell, outside every limit.
ATTACK = r"""
import glob, os, sys
from jupyter_client import BlockingKernelClient
found = set(glob.glob(os.path.join(sys.argv[1], "kernel-*.json")))
args = open(f"/proc/{os.getppid()}/cmdline", "rb").read().decode().split("\0")
found |= {b for a, b in zip(args, args[1:]) if a == "-f"}
print("parent:", " ".join(args)[:200])
for path in found:
    try:
        client = BlockingKernelClient()
        client.load_connection_file(path)
        client.start_channels(iopub=False, stdin=False, hb=False, control=False)
        client.execute(f"open({sys.argv[2]!r}, 'w').write('pwned')")
        # The kernel is busy running this very command, so no reply can come: make sure the
        # message has left before the process ends (term waits for it, up to the linger).
        client.shell_channel.socket.close(linger=30000)
        client.context.term()
        print("queued on", path)
    except OSError as e:
        print("cannot read", path, e)
print("found", len(found))
"""


def _attack_from_a_kernel(tmp_path: Path, sandbox: bool) -> tuple[str, bool]:
    """Run ATTACK through run_bash inside a real kernel; (its output, did the kernel run it)."""
    from jupyter_client.manager import start_new_kernel

    workspace = tmp_path / "ws"
    workspace.mkdir(parents=True)
    (workspace / "attack.py").write_text(ATTACK)
    marker = tmp_path / "PWNED"
    manager, client = start_new_kernel(cwd=str(tmp_path))
    try:
        runtime = str(Path(manager.connection_file).parent)
        code = (
            "from agentlab.tools.shell import run_bash\n"
            f"print(run_bash('python attack.py {runtime} {marker}', cwd={str(workspace)!r}, "
            f"sandbox={sandbox}, timeout=20).output)\n"
        )
        reply = client.execute_interactive(code, timeout=60, output_hook=_keep(out := []))
        assert reply["content"]["status"] == "ok"
        # Anything queued meanwhile runs before the next cell: wait for that cell. Without the
        # sandbox the queued code must run: wait for its file (a loaded machine may deliver
        # the attacker's message after our first cell), up to a bound.
        client.execute_interactive("pass", timeout=30, output_hook=lambda msg: None)
        deadline = time.monotonic() + 60
        while not sandbox and not marker.exists() and time.monotonic() < deadline:
            client.execute_interactive("pass", timeout=30, output_hook=lambda msg: None)
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    return "".join(out), marker.exists()


def _keep(into: list[str]):  # type: ignore[no-untyped-def]
    def hook(msg: dict) -> None:  # type: ignore[type-arg]
        if msg["msg_type"] == "stream":
            into.append(msg["content"]["text"])

    return hook


def running(marker: str) -> list[int]:
    """Live processes (as the host sees them) whose command line holds ``marker``."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except (OSError, ValueError):
            continue
        if entry.isdigit() and marker.encode() in cmdline and alive(int(entry)):
            found.append(int(entry))
    return found


@sandbox_only
def test_a_command_cannot_reach_the_kernel_through_its_connection_file(
    tmp_path: Path, sandboxed: None
) -> None:
    out, ran = _attack_from_a_kernel(tmp_path, sandbox=True)
    assert "found 0" in out and "sandbox_init.py" in out.split("parent:")[1], out
    assert not ran
    # The control: without the sandbox the very same command takes the kernel over.
    out, ran = _attack_from_a_kernel(tmp_path / "control", sandbox=False)
    assert "queued on" in out and ran, out


@sandbox_only
def test_the_runtime_folder_and_secrets_are_hidden(
    tmp_path: Path, sandboxed: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The workspace is a project in the home folder, beside a runtime folder and a ~/.ssh
    # (the sandbox shows the rest of the machine read-only: these must not be shown).
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    (runtime / "kernel-1.json").write_text('{"key": "hmac-secret"}')
    (tmp_path / ".ssh").mkdir()
    (tmp_path / ".ssh" / "id_ed25519").write_text("PRIVATE KEY")
    project = tmp_path / "project"
    project.mkdir()
    (project / "notes.txt").write_text("visible")
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(runtime))
    monkeypatch.setenv("HOME", str(tmp_path))
    command = (
        "cat notes.txt; ls ../runtime ../.ssh; cat ../runtime/kernel-1.json ../.ssh/id_ed25519"
    )
    r = run_bash(command, cwd=project, sandbox=True)
    assert r.sandboxed and "visible" in r.output
    assert "hmac-secret" not in r.output and "PRIVATE KEY" not in r.output
    assert r.output.count("No such file or directory") == 2, r.output
    control = run_bash(command, cwd=project, sandbox=False)
    assert "hmac-secret" in control.output and "PRIVATE KEY" in control.output


@pytest.fixture
def home_outside_tmp(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A home folder outside /tmp (the sandbox empties /tmp anyway), with a CLI's login,
    a cache of tokens, a git config, a tool on PATH and a project."""
    home = Path(tempfile.mkdtemp(prefix="agentlab-home-", dir="/var/tmp"))
    try:
        (home / ".claude").mkdir()
        (home / ".claude" / ".credentials.json").write_text('{"token": "sk-ant-oat-SECRET"}')
        (home / ".cache" / "tool").mkdir(parents=True)
        (home / ".cache" / "tool" / "token").write_text("CACHED-SECRET")
        (home / ".gitconfig").write_text("[credential]\n  token = GIT-SECRET\n")
        (home / "tools" / "bin").mkdir(parents=True)
        hello = home / "tools" / "bin" / "hello"
        hello.write_text("#!/bin/sh\necho hello from a tool on PATH\n")
        hello.chmod(0o755)
        (home / "project").mkdir()
        monkeypatch.setenv("HOME", str(home))
        monkeypatch.setenv("PATH", f"{home / 'tools' / 'bin'}{os.pathsep}{os.environ['PATH']}")
        yield home
    finally:
        shutil.rmtree(home, ignore_errors=True)


@sandbox_only
def test_the_home_folder_is_empty_but_for_what_commands_run_from(
    home_outside_tmp: Path, sandboxed: None
) -> None:
    home = home_outside_tmp
    command = (
        "ls -A ~; hello; cat ~/.claude/.credentials.json ~/.cache/tool/token ~/.gitconfig; "
        "touch ~/new && echo wrote"
    )
    r = run_bash(command, cwd=home / "project", sandbox=True)
    assert r.sandboxed and "hello from a tool on PATH" in r.output, r.output
    assert r.output.split("hello from")[0].split() == ["project", "tools"], r.output
    assert "SECRET" not in r.output and "wrote" not in r.output
    assert not (home / "new").exists()
    control = run_bash(command, cwd=home / "project", sandbox=False)
    assert control.output.count("SECRET") == 3


@sandbox_only
def test_commands_run_when_the_kernels_own_file_is_in_the_runtime_folder(
    tmp_path: Path, sandboxed: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Jupyter's default: the kernel is started with -f RUNTIME/kernel-ID.json. That file
    # is hidden with its folder; hiding it again inside the emptied folder fails in bwrap.
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    (runtime / "kernel-1.json").write_text('{"key": "hmac-secret"}')
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(runtime))
    monkeypatch.setattr(bash_module, "_kernel_files", lambda: [str(runtime / "kernel-1.json")])
    workspace = tmp_path / "ws"
    workspace.mkdir()
    r = run_bash(f"echo ran; cat {runtime}/kernel-1.json", cwd=workspace, sandbox=True)
    assert r.sandboxed and r.output.startswith("ran\n"), r.output
    assert "hmac-secret" not in r.output and "No such file or directory" in r.output


@sandbox_only
def test_proc_shows_only_the_sandbox(sandboxed: None) -> None:
    r = run_bash("ls /proc | grep -E '^[0-9]+$'; cat /proc/1/comm; echo $PPID", sandbox=True)
    *pids, comm, ppid = r.output.split()
    assert comm == "sandbox-init" and ppid == "1", r.output
    assert str(os.getpid()) not in pids and len(pids) <= 5, pids
    assert "Permission denied" in run_bash(f"ls /proc/{os.getpid()}", sandbox=True).output or (
        "No such file" in run_bash(f"ls /proc/{os.getpid()}", sandbox=True).output
    )


@sandbox_only
def test_only_the_workspace_is_writable(tmp_path: Path, sandboxed: None) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    home = Path.home()
    outside = [home / "agentlab-sandbox-test", tmp_path / "outside", Path("/etc/agentlab-test")]
    command = " ; ".join(f"touch {p}" for p in outside) + " ; touch inside /tmp/scratch; ls"
    r = run_bash(command, cwd=workspace, sandbox=True)
    assert r.output.count("Read-only file system") == 2, r.output  # home and /etc
    assert "inside" in r.output and (workspace / "inside").exists()
    # /tmp (and so tmp_path/outside) is the sandbox's own, empty and thrown away.
    assert not any(p.exists() for p in outside)
    assert not Path("/tmp/scratch").exists()


@sandbox_only
def test_no_network_unless_asked(sandboxed: None) -> None:
    import socket

    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        connect = f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"
        assert "connected" not in run_bash(connect, sandbox=True).output
        r = run_bash(connect, sandbox=True, network=True)
        assert r.output == "connected\n" and r.sandboxed


@sandbox_only
def test_the_limits_still_hold_in_the_sandbox(
    sandboxed: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-sandbox-" + "x" * 20)
    r = run_bash("sleep 30", timeout=0.5, sandbox=True)
    assert r.timed_out and r.duration < 5
    r = run_bash("yes", timeout=20, max_output=1000, sandbox=True)
    assert r.truncated and r.exit_code is None
    r = run_bash("env; sleep 30.17 & setsid sleep 30.17 & echo started", sandbox=True)
    assert "sk-ant-sandbox" not in r.output and "started" in r.output
    # Nothing it started is left: with the PID namespace gone, so is everything in it.
    assert_gone(running("30.17"))


def test_without_bubblewrap_the_limits_apply_and_it_says_so_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from agentlab.apps.doctor import _sandbox

    fake = tmp_path / "bwrap"  # a bwrap whose namespaces are refused, as in some containers
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setattr(bash_module, "_noticed", False)
    for program, why in [("agentlab-no-such-bwrap", "not installed"), (str(fake), "namespace")]:
        monkeypatch.setattr(bash_module, "BWRAP", program)
        bash_module.sandbox_problem.cache_clear()
        try:
            problem = bash_module.sandbox_problem()
            if bash_module.sys.platform.startswith("linux"):
                assert why in problem
            r = run_bash("echo still runs", sandbox=True, timeout=5)
            assert r.output == "still runs\n" and not r.sandboxed
            check = _sandbox()
            assert not check.ok and not check.required and "bubblewrap" in check.fix
        finally:
            bash_module.sandbox_problem.cache_clear()
    err = capsys.readouterr().err
    assert err.count("WITHOUT a sandbox") == 1 and "not installed" in err


@sandbox_only
def test_ctrl_c_stops_a_sandboxed_command_and_everything_in_it(
    tmp_path: Path, sandboxed: None
) -> None:
    ready = tmp_path / "ready"
    os.mkfifo(ready)

    def interrupt() -> None:
        with open(ready) as f:  # blocks until the command has started, then Ctrl-C
            f.read()
        os.kill(os.getpid(), signal.SIGINT)

    thread = threading.Thread(target=interrupt)
    thread.start()
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        run_bash(
            "sleep 30.23 & setsid sleep 30.23 & echo go > ready; sleep 30.23",
            cwd=tmp_path,
            sandbox=True,
        )
    thread.join()
    assert time.monotonic() - start < 5
    assert_gone(running("30.23"))


# --- one sandbox for many commands ----------------------------------------------


def _helper_pid(where: Path) -> int:
    """The host's pid of sandbox_init.py (PID 1 inside) in the sandbox kept for ``where``."""
    assert run_bash("true", cwd=where, sandbox=True).sandboxed  # started and answering
    pid: int = bash_module._sandbox_for(str(where), False).pid
    return pid


IN_PROC = (
    "python3 -c \"import os; print(sorted(int(p) for p in os.listdir('/proc') if p.isdigit()))\""
)


@sandbox_only
def test_one_sandbox_runs_many_commands_and_each_starts_clean(
    tmp_path: Path, sandboxed: None
) -> None:
    helper = _helper_pid(tmp_path)
    left = (
        "echo kept > kept.txt; touch /tmp/a /dev/shm/b; mkdir -p /tmp/c/d; touch /tmp/c/d/e; "
        "ipcmk -M 4096 >/dev/null; ipcmk -Q >/dev/null; "
        "python3 -c \"import ctypes; ctypes.CDLL(None).mq_open(b'/q', 0o100 | 2, 0o600, None)\"; "
        "sleep 30.31 & setsid sleep 30.31 & "
        "find /tmp /dev/shm /dev/mqueue -mindepth 1 -maxdepth 1 | wc -l; ipcs | grep -c 0x"
    )
    # the folder's mount point in /tmp, and agentlab's own when it lives under /tmp (a clone)
    ours = bash_module._ours_in_tmp()[1::3]
    mounts = sorted({str(tmp_path).split("/")[2], *(p.split("/")[2] for p in ours)})
    r = run_bash(left, cwd=tmp_path, sandbox=True)
    assert r.output.split() == [str(4 + len(mounts)), "2"], r.output  # a c b q, mounts; 2 IPC
    r = run_bash(
        "cat kept.txt; ls -A /tmp /dev/shm /dev/mqueue; ipcs | grep -c 0x; " + IN_PROC,
        cwd=tmp_path,
        sandbox=True,
    )
    # The folder keeps what was written; /tmp holds only the folder's mount point.
    *seen, procs = r.output.split()
    assert seen == ["kept", "/dev/mqueue:", "/dev/shm:", "/tmp:", *mounts, "0", "[1,"], seen
    assert procs.endswith("]")  # PID 1 and python itself: nothing else
    assert _helper_pid(tmp_path) == helper  # the very same sandbox ran both
    assert_gone(running("30.31"))
    # Exit codes are the ones the command gets without the sandbox.
    for command in ["exit 3", "kill -9 $$", "exec >&-; sleep 0.1; exit 5"]:
        boxed = run_bash(command, cwd=tmp_path, sandbox=True)
        assert boxed.exit_code == run_bash(command, cwd=tmp_path, sandbox=False).exit_code
    assert boxed.exit_code == 5


@sandbox_only
@pytest.mark.parametrize(
    ("kind", "timeout"),
    [(kind, 30) for kind in ESCAPES] + [(kind, 2) for kind in TIMED_OUT],
    ids=[f"{kind}, finished" for kind in ESCAPES] + [f"{kind}, timed out" for kind in TIMED_OUT],
)
def test_nothing_a_command_starts_outlives_it_in_the_sandbox(
    kind: str, timeout: float, tmp_path: Path, sandboxed: None
) -> None:
    command = (ESCAPES[kind] + WAIT).format(f="pids") + ("; sleep 1000" if timeout < 30 else "")
    r = run_bash(command, cwd=tmp_path, timeout=timeout, sandbox=True)
    assert r.timed_out == (timeout < 30) and (tmp_path / "pids").read_text().strip()
    # The next command in the same sandbox sees PID 1 and itself, nothing else.
    assert run_bash(IN_PROC, cwd=tmp_path, sandbox=True).output.count(",") == 1


GRAB = r"""
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
print("fds", sorted(os.listdir("/proc/self/fd")))
pidfd = os.pidfd_open(1)
for fd in range(8):
    if libc.syscall(438, pidfd, fd, 0) >= 0:  # pidfd_getfd: take the helper's fd
        print("GOT fd", fd)
    try:
        print("GOT", os.readlink(f"/proc/1/fd/{fd}"))
    except OSError as e:
        print("refused", e.errno)
for path in ["/proc/1/environ", "/proc/1/mem"]:
    try:
        open(path, "rb").read(1)
        print("GOT", path)
    except OSError as e:
        print("refused", e.errno)
if libc.ptrace(16, 1, 0, 0) == 0:  # PTRACE_ATTACH
    print("GOT ptrace")
for sig in ["KILL", "STOP", "INT", "TERM"]:
    os.system(f"kill -{sig} 1 2>/dev/null")
print("done")
"""


@sandbox_only
def test_a_command_cannot_reach_the_sandbox_s_own_channel(tmp_path: Path, sandboxed: None) -> None:
    """The helper (PID 1) holds the socket to us: it is not handed down, cannot be
    taken from it, and the helper cannot be traced, stopped or killed from inside."""
    helper = _helper_pid(tmp_path)
    (tmp_path / "grab.py").write_text(GRAB)
    r = run_bash("python3 grab.py", cwd=tmp_path, sandbox=True)
    assert "fds ['0', '1', '2', '3']" in r.output, r.output  # 3: the listing itself
    assert "GOT" not in r.output and r.output.count("refused") == 10 and "done" in r.output
    assert run_bash("echo still here", cwd=tmp_path, sandbox=True).output == "still here\n"
    assert _helper_pid(tmp_path) == helper


@linux_only
@pytest.mark.skipif(os.getuid() != 0, reason="needs root to become another user for the test")
def test_as_an_ordinary_user_the_channel_is_out_of_reach_too() -> None:
    """As root the helper's /proc files stay ours; as a student, they are root's."""
    out = _as_nobody("python3 -c " + shlex.quote(GRAB), "sk-ant-none", sandbox=True)
    assert "fds ['0', '1', '2', '3']" in out, out
    assert "GOT" not in out and out.count("refused") == 10 and "done" in out


@sandbox_only
def test_a_command_that_changes_the_helper_gets_a_fresh_sandbox(
    tmp_path: Path, sandboxed: None
) -> None:
    """Any process of the same user may lower another's limits (``prlimit``) or
    priority, which the next command would inherit: the sandbox is replaced."""
    helper = _helper_pid(tmp_path)
    changes = ["prlimit --pid 1 --nofile=64:64", "renice -n 5 -p 1", "chrt --idle -p 0 1"]
    if os.uname().machine in ("x86_64", "aarch64"):
        changes.append("ionice -c 3 -p 1")
    for change in changes:
        run_bash(change, cwd=tmp_path, sandbox=True)
        r = run_bash(
            "prlimit --pid 1 --nofile --noheadings -o HARD; nice; chrt -p 1; ionice -p 1",
            cwd=tmp_path,
            sandbox=True,
        )
        assert r.output.split()[:2] != ["64"] and r.output.split()[1] == "0", r.output
        assert "SCHED_OTHER" in r.output and "idle" not in r.output, r.output
        assert _helper_pid(tmp_path) != helper
        helper = _helper_pid(tmp_path)


@sandbox_only
def test_a_sandbox_that_dies_is_replaced(tmp_path: Path, sandboxed: None) -> None:
    ready = tmp_path / "ready"
    os.mkfifo(ready)
    helper = _helper_pid(tmp_path)

    def kill_it() -> None:
        with open(ready) as f:  # blocks until the command has started
            f.read()
        os.kill(helper, signal.SIGKILL)

    thread = threading.Thread(target=kill_it)
    thread.start()
    r = run_bash("echo started; echo go > ready; sleep 30", cwd=tmp_path, sandbox=True)
    thread.join()
    assert r.output.startswith("started\n") and "sandbox ended unexpectedly" in r.output
    assert r.exit_code is None and r.duration < 10
    # Killed between two commands: the next one does not even notice.
    helper = _helper_pid(tmp_path)
    os.kill(helper, signal.SIGKILL)
    assert_gone([helper])
    assert run_bash("echo fresh", cwd=tmp_path, sandbox=True).output == "fresh\n"


@sandbox_only
def test_the_sandbox_follows_its_folder_and_the_secrets(
    tmp_path: Path, sandboxed: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    monkeypatch.setenv("HOME", str(home))
    assert run_bash("echo hi", cwd=work, sandbox=True).output == "hi\n"
    (home / ".ssh").mkdir()  # made after the sandbox started: hidden all the same
    (home / ".ssh" / "id_ed25519").write_text("PRIVATE KEY")
    r = run_bash(f"cat {home}/.ssh/id_ed25519", cwd=work, sandbox=True)
    assert "PRIVATE KEY" not in r.output and "No such file" in r.output
    shutil.rmtree(work)  # deleted and made again: the command writes into the new one
    work.mkdir()
    run_bash("echo new > file", cwd=work, sandbox=True)
    assert (work / "file").read_text() == "new\n"


def test_the_scratch_folders_are_never_the_hosts() -> None:
    """The helper empties /tmp after each command: not when /tmp *is* the folder."""
    assert bash_module._scratch("/tmp/agentlab-x") == ["/tmp", "/dev/shm", "/dev/mqueue"]
    assert bash_module._scratch("/tmp") == ["/dev/shm", "/dev/mqueue"]
    assert bash_module._scratch("/tmp/") == ["/dev/shm", "/dev/mqueue"]
    assert bash_module._scratch("/") == []
    assert bash_module._scratch("/dev") == ["/tmp"]
    assert bash_module._scratch("/tm") == ["/tmp", "/dev/shm", "/dev/mqueue"]


@sandbox_only
def test_no_sandbox_process_outlives_close_or_python(tmp_path: Path, sandboxed: None) -> None:
    run_bash("true", cwd=tmp_path, sandbox=True)
    box = bash_module._sandbox_for(str(tmp_path), False)
    pids = [box.proc.pid, box.pid]
    bash_module.close_sandboxes()
    assert_gone(pids)
    assert bash_module._children(os.getpid()) & set(pids) == set()  # reaped, too
    # A Python that exits (normally, or killed outright) takes its sandboxes along.
    script = (
        "import os, signal, sys\n"
        "from agentlab.tools import shell\n"
        "shell.run_bash('true', cwd=sys.argv[1], sandbox=True)\n"
        "box = shell._sandbox_for(sys.argv[1], False)\n"
        "print(box.proc.pid, box.pid, flush=True)\n"
        "if sys.argv[2] == 'kill': os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    for how in ["exit", "kill"]:
        done = subprocess.run(
            [sys.executable, "-c", script, str(tmp_path), how],
            capture_output=True,
            text=True,
            timeout=60,
        )
        left = [int(pid) for pid in done.stdout.split()]
        assert len(left) == 2, done.stderr
        assert_gone(left, within=5)


@sandbox_only
def test_a_forked_child_does_not_use_its_parents_sandbox(tmp_path: Path, sandboxed: None) -> None:
    helper = _helper_pid(tmp_path)
    pid = os.fork()
    if pid == 0:  # the child: check() runs student code like this
        code = 1
        try:
            r = run_bash(IN_PROC, cwd=tmp_path, sandbox=True)
            mine = bash_module._sandbox_for(str(tmp_path), False).pid
            code = 0 if r.output.count(",") == 1 and mine != helper else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert run_bash("echo parent", cwd=tmp_path, sandbox=True).output == "parent\n"
    assert _helper_pid(tmp_path) == helper


@sandbox_only
@pytest.mark.parametrize(
    "mount",
    [
        ["--ro-bind", "/agentlab/no/such/source", "/mnt/x"],  # refused before the sandbox exists
        ["--tmpfs", "{t}", "--remount-ro", "{t}", "--ro-bind", "/dev/null", "{t}/f"],  # after
    ],
    ids=["no source", "read-only mount point"],
)
def test_a_sandbox_bwrap_cannot_set_up_says_why(
    mount: list[str], tmp_path: Path, sandboxed: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each command says bwrap's own words, rather than that a sandbox ended."""
    (tmp_path / "t").mkdir()
    real = bash_module._bwrap_argv

    def refused(where: str, network: bool, keep: list[str] | None = None) -> list[str]:
        argv = real(where, network, keep)
        i = argv.index("--chdir")
        return [*argv[:i], *(m.format(t=tmp_path / "t") for m in mount), *argv[i:]]

    monkeypatch.setattr(bash_module, "_bwrap_argv", refused)
    for _ in range(2):
        r = run_bash("echo hi", cwd=tmp_path, sandbox=True)
        assert r.output.startswith("(cannot run: the sandbox did not start (bwrap: "), r.output
        assert r.exit_code is None and ("No such file" in r.output or "Read-only" in r.output)


@sandbox_only
def test_the_sandbox_starts_for_a_package_and_a_virtualenv_made_under_tmp(tmp_path):
    """/tmp is emptied in the sandbox: an interpreter or agentlab itself living there
    (a virtualenv, a fresh clone, a wheel installed in a temporary venv) is bound back in."""
    import venv

    assert str(tmp_path.resolve()).startswith("/tmp/")  # what this test is about
    package = Path(__file__).resolve().parents[1] / "agentlab"
    shutil.copytree(package, tmp_path / "src" / "agentlab", symlinks=True)
    venv.create(tmp_path / "venv", system_site_packages=True, with_pip=False)
    work = tmp_path / "work"
    work.mkdir()
    code = (
        "import agentlab.tools.shell as sh; "
        f"r = sh.run_bash('echo hi > proof.txt; cat proof.txt', cwd={str(work)!r}); "
        "print(r.sandboxed, r.exit_code, r.output.strip())"
    )
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "src")}
    out = subprocess.run(
        [str(tmp_path / "venv" / "bin" / "python"), "-c", code],
        capture_output=True, text=True, env=env, timeout=60, cwd=work,
    )  # fmt: skip
    assert out.stdout.split() == ["True", "0", "hi"], out.stderr
    assert (work / "proof.txt").read_text() == "hi\n"


# --- what a command leaves in its folder ---------------------------------------------


def test_a_module_a_command_writes_does_not_replace_an_installed_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A kernel looks in its current folder ("" on sys.path) before the installed
    # packages: a nh3.py left there by a command would be imported by the kernel, with
    # the key in its environment, the next time nh3 is imported (the views import it
    # late).
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", ["", *sys.path])
    for name in [m for m in sys.modules if m.split(".")[0] in ("nh3", "mine")]:
        monkeypatch.delitem(sys.modules, name)
    result = run_bash("echo 'raise SystemExit(\"the model ran\")' > nh3.py; echo 'X = 1' > mine.py")
    assert result.exit_code == 0 and (tmp_path / "nh3.py").exists()
    nh3 = importlib.import_module("nh3")
    assert not nh3.__file__.startswith(str(tmp_path))  # the installed one
    assert importlib.import_module("mine").X == 1  # your own import of a file there works


def test_a_library_does_not_import_a_module_a_command_wrote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # markdown-it-py tries linkify_it when it is first imported (the views import it
    # late) and goes on without it when it is missing: a linkify_it.py a command writes
    # in the kernel's folder must not run then.
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", ["", *sys.path])
    for name in [m for m in sys.modules if m.split(".")[0] in ("markdown_it", "linkify_it")]:
        monkeypatch.delitem(sys.modules, name)
    run_bash("echo 'raise SystemExit(\"the model ran\")' > linkify_it.py")
    from markdown_it import MarkdownIt  # no SystemExit: its import of linkify_it was refused

    assert "linkify_it" not in sys.modules
    with pytest.raises(ModuleNotFoundError, match="Linkify enabled but not installed"):
        MarkdownIt("commonmark", {"linkify": True}).enable("linkify").render("www.example.com")


def test_the_refusal_names_the_module_the_file_and_the_library(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    monkeypatch.delitem(sys.modules, "wanted", raising=False)
    run_bash("echo 'X = 1' > wanted.py", cwd=tmp_path)
    library = importlib.util.find_spec("json").origin  # a file of the installation
    with pytest.raises(ModuleNotFoundError) as refused:
        exec(compile("import wanted", library, "exec"), {})  # as a line of that library
    message = str(refused.value)
    assert "'wanted'" in message and str(tmp_path / "wanted.py") in message
    assert library in message and "may have written it" in message
    assert importlib.import_module("wanted").X == 1  # this file's own import goes on


def test_a_folder_holding_a_notebook_is_read_only_to_commands(
    tmp_path: Path, sandboxed: None, capsys: pytest.CaptureFixture[str]
) -> None:
    # A kernel starts in its notebook's folder with `python -m ipykernel_launcher`,
    # which imports from that folder first: an ipykernel_launcher.py (or agentlab.py)
    # left there would run at the next kernel start, with the key in its environment.
    (tmp_path / "lesson.ipynb").write_text("{}")
    result = run_bash("ls; echo 'import os' > ipykernel_launcher.py", cwd=tmp_path)
    assert "lesson.ipynb" in result.output and "Read-only file system" in result.output
    last = result.output.splitlines()[-1]  # and the model is told why
    assert result.exit_code == 1 and "read-only to commands: it holds a notebook" in last
    assert not (tmp_path / "ipykernel_launcher.py").exists()
    assert "commands may read" in capsys.readouterr().err  # said to the student, once
    assert run_bash("cat lesson.ipynb", cwd=tmp_path).output == "{}"
    assert capsys.readouterr().err == ""


def _project(tmp_path: Path, folders: tuple[str, ...], files: dict[str, str]) -> Path:
    """A project folder holding these folders and files (path: text)."""
    project = tmp_path / "project"
    for folder in folders:
        (project / folder).mkdir(parents=True)
    for name, text in files.items():
        (project / name).write_text(text)
    return project


def test_inside_a_writable_folder_what_runs_later_stays_read_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sandboxed: None
) -> None:
    # In a project folder: the notebooks' folder (the kernel's next start), our own
    # Python's installation (a .pth there runs at every start: a virtualenv inside the
    # project) and a repository's whole .git (core.fsmonitor runs at the next `git status`, docs: git-scm.com/docs/git-config#Documentation/git-config.txt-corefsmonitor).
    from agentlab.tools import protect

    project = _project(
        tmp_path,
        ("notebooks", ".venv/lib", ".git/hooks", "src"),
        {"notebooks/l.ipynb": "{}", ".git/config": "[core]\n"},
    )
    venv = os.path.join(os.path.realpath(project / ".venv"), "")
    monkeypatch.setattr(protect, "_ours", lambda: (venv,))  # as if we ran from it
    command = (
        "for f in notebooks/ipykernel_launcher.py .venv/lib/evil.pth .git/hooks/pre-commit "
        "src/ok.py; do echo x > $f && echo wrote $f; done; "
        "printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' >> .git/config; echo end"
    )
    result = run_bash(command, cwd=project)
    assert result.output.count("Read-only file system") == 4, result.output
    assert "wrote src/ok.py" in result.output and (project / "src" / "ok.py").exists()
    assert not (project / "notebooks" / "ipykernel_launcher.py").exists()
    assert not (project / ".venv" / "lib" / "evil.pth").exists()
    assert (project / ".git" / "config").read_text() == "[core]\n"
    assert list((project / ".git" / "hooks").iterdir()) == []
    assert not list((project / ".git").glob("*.lock"))  # the whole .git is read-only


@sandbox_only
def test_a_folder_above_a_read_only_one_cannot_be_renamed_and_made_again(
    tmp_path: Path, sandboxed: None
) -> None:
    # Attacker trial: `mv .git .git-orig; mkdir .git; cp -a .git-orig/. .git/` and a new
    # config with core.fsmonitor; or a notebook's folder two levels down (course/week1)
    # renamed with its parent and rebuilt holding an ipykernel_launcher.py. A read-only
    # mount moves with the folder it is in; a mount point cannot be renamed (EBUSY).
    project = _project(
        tmp_path,
        ("course/week1", ".git/hooks", "lib", ".git/modules/lib"),
        {
            "course/week1/l.ipynb": "{}",
            ".git/config": "[core]\n",
            ".git/modules/lib/config": "[core]\n",
            "lib/.git": "gitdir: ../.git/modules/lib\n",
        },
    )
    command = (
        "mv .git .git-orig; mv course course-orig; mv course/week1 course/w; "
        "printf '[core]\\n\\tfsmonitor = touch /tmp/pwned\\n' >> .git/modules/lib/config; "
        "echo 'gitdir: /tmp/x' > lib/.git; touch course/made; echo end"
    )
    result = run_bash(command, cwd=project)
    assert result.output.count("Device or resource busy") == 3, result.output
    assert result.output.count("Read-only file system") == 2, result.output
    assert (project / "course" / "made").exists()  # the folders on the way stay writable
    assert (project / ".git" / "config").exists() and (project / "course" / "week1").is_dir()
    assert (project / ".git" / "modules" / "lib" / "config").read_text() == "[core]\n"
    assert (project / "lib" / ".git").read_text() == "gitdir: ../.git/modules/lib\n"


@sandbox_only
def test_a_folder_with_more_folders_than_are_looked_at_is_read_only_whole(
    tmp_path: Path, sandboxed: None
) -> None:
    # Attacker trial: 2,000 folders made, then the sandbox thrown away: the next scan
    # stopped at 300 folders and no longer saw the notebook's folder.
    from agentlab.tools import protect

    for i in range(protect.MAX_SCAN + 5):
        (tmp_path / f"d{i:04d}").mkdir()
    (tmp_path / "zz" / "nb").mkdir(parents=True)
    (tmp_path / "zz" / "nb" / "l.ipynb").write_text("{}")
    assert protect.read_only_inside(str(tmp_path)) == [str(tmp_path.resolve())]
    result = run_bash("touch zz/nb/ipykernel_launcher.py", cwd=tmp_path)
    assert "Read-only file system" in result.output
    assert not (tmp_path / "zz" / "nb" / "ipykernel_launcher.py").exists()


@pytest.mark.parametrize("where", ["home", "root"])
def test_the_sandbox_refuses_a_folder_that_holds_the_home_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sandboxed: None, where: str
) -> None:
    # From the home folder a command could write ~/.bashrc, ~/.profile, Jupyter's config
    # or a kernel spec: code that runs later, outside the sandbox.
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    result = run_bash("echo pwned >> .bashrc", cwd=home if where == "home" else tmp_path)
    assert result.exit_code is None and "holds your home folder" in result.output
    assert not (home / ".bashrc").exists()
    inside = home / "project"
    inside.mkdir()
    assert run_bash("echo ok > made.txt", cwd=inside).exit_code == 0  # a folder inside it runs
