"""check() cannot be broken: hostile and careless student functions, all contained.

Each function below does something that, run in the kernel itself, would hang
it, kill it, raise out of ``check`` or change what later checks see. For each
one ``check`` must return a failed Report within its time limits, the kernel's
state must be as it was, and the reference solution must still pass after it.
"""

from __future__ import annotations

import contextlib
import ctypes
import itertools
import os
import signal
import struct
import subprocess
import sys
import threading
import time

import pytest

import agentlab.exercises as exercises
from agentlab.exercises import Report, check, reference
from agentlab.exercises import scenarios as sc
from agentlab.i18n import get_language

LIMIT = 0.3  # seconds per scenario: every function here is either instant or hostile


@pytest.fixture(autouse=True)
def short_margin(monkeypatch):
    # A hang in judging costs the hard limit (2 * LIMIT + MARGIN); keep the suite quick.
    monkeypatch.setattr(exercises, "MARGIN", 1.0)


# -- values whose methods hang or raise ---------------------------------------------------


class HangingEq(str):  # a str, so the checker goes on to compare it
    def __eq__(self, other):
        while True:
            pass

    __hash__ = str.__hash__


class ExitingEq(str):
    def __eq__(self, other):
        raise SystemExit(3)

    __hash__ = str.__hash__


class HangingRepr:
    def __repr__(self):
        while True:
            pass


class InterruptingDict(dict):
    def get(self, key, default=None):
        raise KeyboardInterrupt


class RaisingLen(list):
    def __len__(self):
        raise KeyboardInterrupt

    def __iter__(self):
        raise SystemExit("no")


class HangingLen(list):
    def __len__(self):
        while True:
            pass


class HangingStr(Exception):
    def __str__(self):
        while True:
            pass


class ExitingStr(Exception):
    def __str__(self):
        raise SystemExit("str")


# -- the hostile functions: (exercise, what happens, function) ------------------------------


def endless(query):
    while True:
        pass


def sleeps(query):
    time.sleep(10_000)  # stuck in C: a thread cannot be stopped here


def waits_on_a_lock(query):
    threading.Event().wait()


def returns_an_endless_iterator(query):
    return itertools.count()


def returns_an_endless_generator(response):
    return (x for x in itertools.count())


def is_a_generator_function(response):
    while True:
        yield "stop"


def prints_megabytes(query):
    print("x" * 5_000_000)
    os.write(1, b"y" * 1_000_000)  # straight to the process's stdout


def returns_a_huge_string(response):
    return "stop" * 25_000_000  # 100 MB


def exits_the_process(query):
    os._exit(0)


def exits_with_a_code(response):
    os._exit(3)


def calls_sys_exit(query):
    sys.exit(1)


def raises_keyboard_interrupt(response):
    raise KeyboardInterrupt


def sends_itself_sigint(response):
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(1)


def sends_itself_sigkill(query):
    os.kill(os.getpid(), signal.SIGKILL)


def sets_an_alarm(response):
    signal.alarm(1)
    time.sleep(5)


def segfaults(query):
    ctypes.string_at(0)


def recurses(query):
    return recurses(query)


def recurses_past_the_c_stack(query):
    sys.setrecursionlimit(10**7)

    def deeper(n):
        return deeper(n + 1) + 1

    return deeper(0)


def eats_memory(query):
    return bytearray(8 * 2**30)  # 8 GB: the child's memory cap refuses it at once


def mutates_the_response(response):
    response.content.clear()
    response.stop_reason = "end_turn"
    return "stop"


def mutates_the_checkers_globals(response):
    sc.OUTPUTS.clear()
    sc.TOOLS.clear()
    sc.DECISIONS = ()
    os.chdir("/")
    import agentlab.i18n

    agentlab.i18n.set_language("zh")
    sys.stdout = None
    return "stop"


def mutates_the_message_list(messages, results):
    messages.clear()
    messages.append({"role": "user", "content": 42})
    results.clear()


def returns_hanging_eq(response):
    return HangingEq("stop")


def returns_exiting_eq(response):
    return ExitingEq("stop")


def returns_hanging_repr(query):
    return HangingRepr()


def returns_interrupting_dict(query):
    return InterruptingDict(role="user", content=query)


def returns_raising_len(response, run_bash):
    return RaisingLen([1])


def returns_hanging_len(query):
    return HangingLen([{"role": "user", "content": query}])


def raises_with_hanging_str(query):
    raise HangingStr()


def raises_with_exiting_str(query):
    raise ExitingStr()


def asks_for_input(query):
    return {"role": "user", "content": input("your task? ")}


def _record(pids):
    with open(os.environ["AGENTLAB_TEST_PIDS"], "a") as f:
        f.write("".join(f"{pid}\n" for pid in pids))


def _host_children():
    """This process's children as the test (outside any PID namespace) numbers them.

    Inside check()'s PID namespace ``Popen(...).pid`` is a number in that
    namespace; /proc here is the machine's, and lists children by their real ids.
    """
    me = os.readlink("/proc/self")  # the real id: /proc resolves "self" in its own namespace
    found = []
    for tid in os.listdir(f"/proc/{me}/task"):
        with open(f"/proc/{me}/task/{tid}/children") as f:
            found += f.read().split()
    return found


def leaves_a_process_behind(response):
    subprocess.Popen(["sleep", "60"])
    _record(_host_children())
    return "stop" if response.stop_reason != "tool_use" else "wrong"


def starts_a_thread_that_exits(response):
    threading.Thread(target=lambda: os._exit(0)).start()
    time.sleep(0.2)
    return "stop"


HOSTILE = [
    ("first_message", "an endless loop", endless),
    ("first_message", "time.sleep forever (C code)", sleeps),
    ("first_message", "waits on a lock forever", waits_on_a_lock),
    ("first_message", "returns an endless iterator", returns_an_endless_iterator),
    ("decide", "returns an endless generator", returns_an_endless_generator),
    ("decide", "is a generator function", is_a_generator_function),
    ("first_message", "prints megabytes, writes to fd 1", prints_megabytes),
    ("decide", "returns a 100 MB string", returns_a_huge_string),
    ("first_message", "os._exit(0)", exits_the_process),
    ("decide", "os._exit(3)", exits_with_a_code),
    ("first_message", "sys.exit(1)", calls_sys_exit),
    ("decide", "raises KeyboardInterrupt", raises_keyboard_interrupt),
    ("decide", "sends itself SIGINT", sends_itself_sigint),
    ("first_message", "sends itself SIGKILL", sends_itself_sigkill),
    ("decide", "sets an alarm (SIGALRM)", sets_an_alarm),
    ("first_message", "segfaults", segfaults),
    ("first_message", "endless recursion", recurses),
    ("first_message", "recursion past the C stack", recurses_past_the_c_stack),
    ("first_message", "eats memory", eats_memory),
    ("decide", "mutates the response it is given", mutates_the_response),
    (
        "decide",
        "mutates the checker's globals, cwd, language, stdout",
        mutates_the_checkers_globals,
    ),
    ("append_results", "empties the history it is given", mutates_the_message_list),
    ("decide", "returns a value whose __eq__ hangs", returns_hanging_eq),
    ("decide", "returns a value whose __eq__ calls sys.exit", returns_exiting_eq),
    ("first_message", "returns a value whose __repr__ hangs", returns_hanging_repr),
    (
        "first_message",
        "returns a dict whose .get raises KeyboardInterrupt",
        returns_interrupting_dict,
    ),
    ("run_tools", "returns a list whose __len__ raises", returns_raising_len),
    ("first_message", "returns a list whose __len__ hangs", returns_hanging_len),
    ("first_message", "raises an exception whose __str__ hangs", raises_with_hanging_str),
    ("first_message", "raises an exception whose __str__ exits", raises_with_exiting_str),
    ("first_message", "calls input()", asks_for_input),
    ("decide", "leaves a process running", leaves_a_process_behind),
    ("decide", "a thread calls os._exit", starts_a_thread_that_exits),
]


MUTATES = {mutates_the_response, mutates_the_checkers_globals, mutates_the_message_list}


def test_there_are_at_least_22_hostile_functions():
    assert len(HOSTILE) >= 22
    assert len({fn for _, _, fn in HOSTILE}) == len(HOSTILE)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[1][0] != "Z"  # a zombie is dead, just not reaped
    except (FileNotFoundError, IndexError):
        return False


@pytest.mark.skipif(not hasattr(os, "fork"), reason="containment of os._exit needs fork")
@pytest.mark.parametrize(("exercise", "what", "fn"), HOSTILE, ids=[w for _, w, _ in HOSTILE])
def test_a_hostile_function_is_contained(exercise, what, fn, tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTLAB_TEST_PIDS", str(tmp_path / "pids"))
    cwd, stdout, language = os.getcwd(), sys.stdout, get_language()
    outputs, tools = dict(sc.OUTPUTS), list(sc.TOOLS)
    scenarios = len(exercises.get(exercise).scenarios)
    # the slowest case: a hang in judging costs the hard limit, then the rest is skipped
    hard = 2 * LIMIT + exercises.MARGIN
    start = time.monotonic()

    report = check(exercise, fn, timeout=LIMIT)

    took = time.monotonic() - start
    assert isinstance(report, Report) and not report.passed, what
    assert len(report.results) == scenarios
    assert all(r.happened for r in report.failures)  # every failure says what happened
    assert took < scenarios * hard + 5, f"{what}: {took:.1f} s"
    # nothing it did reached the kernel
    assert (os.getcwd(), sys.stdout, get_language()) == (cwd, stdout, language)
    assert (sc.OUTPUTS, sc.TOOLS, sc.DECISIONS) == (outputs, tools, ("execute", "stop", "continue"))
    # nothing it started is still running
    pids = tmp_path / "pids"
    if pids.exists():
        deadline = time.monotonic() + 5
        left = [int(p) for p in pids.read_text().split()]
        while left and time.monotonic() < deadline:
            left = [p for p in left if _alive(p)]
            time.sleep(0.05)
        assert left == []
    # and after a function that changed what it was given, the reference solution
    # still passes in this same process
    if fn in MUTATES:
        assert check(exercise, getattr(reference, exercise), timeout=2).passed


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_the_reports_say_what_happened():
    def happened(exercise, fn):
        return "\n".join(r.happened for r in check(exercise, fn, timeout=LIMIT).failures)

    assert "exit code 0" in happened("first_message", exits_the_process)
    assert "killed by SIGKILL" in happened("first_message", sends_itself_sigkill)
    assert "killed by SIGSEGV" in happened("first_message", segfaults)
    assert "raised SystemExit: 1" in happened("first_message", calls_sys_exit)
    assert "raised KeyboardInterrupt" in happened("decide", raises_keyboard_interrupt)
    assert "raised SystemExit: 3" in happened("decide", returns_exiting_eq)
    assert "__eq__" in happened("decide", returns_hanging_eq)  # the judge timed out
    assert "EOFError: input() gets no keyboard" in happened("first_message", asks_for_input)
    assert "MemoryError" in happened("first_message", eats_memory)
    text = happened("first_message", calls_sys_exit)
    assert "sys.exit(1)" in text  # the student's own line


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_crash_in_one_scenario_does_not_cost_the_others():
    calls = iter(range(10**6))

    def first_message(query):
        if query.startswith("这个"):  # only the unicode scenario
            os._exit(1)
        next(calls)
        return {"role": "user", "content": query}

    report = check("first_message", first_message, timeout=LIMIT)
    failed = [r.scenario for r in report.failures]
    assert failed == ["unicode"]
    assert sum(r.passed for r in report.results) == 3


def test_without_fork_the_thread_fallback_still_contains_exceptions(monkeypatch):
    monkeypatch.setattr(exercises, "can_fork", lambda: False)
    for exercise, fn in [
        ("decide", returns_exiting_eq),
        ("first_message", returns_interrupting_dict),
        ("first_message", calls_sys_exit),
        ("first_message", endless),
        ("decide", mutates_the_response),
    ]:
        report = check(exercise, fn, timeout=LIMIT)
        assert isinstance(report, Report) and not report.passed
        assert check(exercise, getattr(reference, exercise), timeout=2).passed


# -- processes that leave the process group, and a kill aimed at the checker ---------------
# (issue 13's leftover: os.setsid() escaped the process-group kill)


def setsid_and_a_sleeping_grandchild(query):
    if os.fork() == 0:  # the child leaves the process group, then starts a sleeper
        os.setsid()
        subprocess.Popen(["sleep", "60"])
        _record([os.readlink("/proc/self"), *_host_children()])
        time.sleep(60)
        os._exit(0)
    time.sleep(0.3)  # the pids are on record before check ends this scenario
    return {"role": "user", "content": query}


def double_forks(query):
    if os.fork() == 0:
        if os.fork() == 0:  # the grandchild, orphaned when its parent exits
            os.setsid()
            _record([os.readlink("/proc/self")])
            time.sleep(60)
        os._exit(0)
    time.sleep(0.3)
    return {"role": "user", "content": query}


def _namespaces_here() -> bool:
    """Can this machine give check() a PID namespace? (tried in a throwaway child)"""
    pid = os.fork()
    if pid == 0:
        os._exit(0 if sandbox._new_pid_namespace() else 1)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0


from agentlab.exercises import sandbox  # noqa: E402

linux = pytest.mark.skipif(sys.platform != "linux", reason="subreaper and namespaces: Linux")


@linux
@pytest.mark.parametrize("namespaces", [True, False], ids=["namespace", "no namespace"])
@pytest.mark.parametrize("fn", [setsid_and_a_sleeping_grandchild, double_forks])
def test_no_process_outlives_check(fn, namespaces, tmp_path, monkeypatch):
    monkeypatch.setattr(sandbox, "NAMESPACES", namespaces)
    pids = tmp_path / "pids"
    monkeypatch.setenv("AGENTLAB_TEST_PIDS", str(pids))
    children = sandbox_children()
    check("first_message", fn, timeout=2)
    recorded = [int(p) for p in pids.read_text().split()]
    assert len(recorded) >= 1 + (fn is setsid_and_a_sleeping_grandchild)
    deadline = time.monotonic() + 2  # killed before check returns; allow for a slow /proc
    while [p for p in recorded if _alive(p)] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [p for p in recorded if _alive(p)] == []
    assert sandbox_children() == children  # nothing left for us to reap either


def sandbox_children() -> set[str]:
    me = os.getpid()
    found: set[str] = set()
    for tid in os.listdir(f"/proc/{me}/task"):
        with open(f"/proc/{me}/task/{tid}/children") as f:
            found.update(f.read().split())
    return found


@linux
def test_without_the_reaper_a_setsid_child_outlives_check(tmp_path, monkeypatch):
    """The control: the test above could fail. Without reaping() and the namespace,
    the process-group kill misses what called setsid."""
    from contextlib import nullcontext

    monkeypatch.setattr(sandbox, "NAMESPACES", False)
    monkeypatch.setattr(exercises, "reaping", nullcontext)
    pids = tmp_path / "pids"
    monkeypatch.setenv("AGENTLAB_TEST_PIDS", str(pids))
    check("first_message", double_forks, timeout=2)
    recorded = [int(p) for p in pids.read_text().split()]
    try:
        assert any(_alive(p) for p in recorded)
    finally:
        for pid in recorded:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


KILLS_ITS_PARENT = """
import os, signal, sys
from agentlab.exercises import check, sandbox
sandbox.NAMESPACES = {namespaces}

def first_message(query):
    os.kill(os.getppid(), signal.SIGKILL)  # aimed at the process that runs check()
    return {{"role": "user", "content": query}}

report = check("first_message", first_message, timeout=1)
print("checker alive, passed:", report.passed)
"""


def _run_checker(namespaces: bool) -> subprocess.CompletedProcess[str]:
    script = KILLS_ITS_PARENT.format(namespaces=namespaces)
    return subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120
    )


@linux
def test_a_kill_aimed_at_the_checker_does_not_reach_it():
    """In its own PID namespace the student's code sees pid 1 of that namespace as
    its parent, and pid 1 ignores signals it has no handler for."""
    if not _namespaces_here():
        pytest.skip("this machine refuses unprivileged user+PID namespaces (see docs/exercises)")
    done = _run_checker(namespaces=True)
    assert done.returncode == 0, done.stderr
    assert "checker alive, passed: True" in done.stdout


@linux
def test_without_a_namespace_the_kill_reaches_the_checker():
    """The documented limit, and the control for the test above."""
    done = _run_checker(namespaces=False)
    assert done.returncode == -signal.SIGKILL


# -- what the checked process sends back is data, never code ------------------------------


class RunsInTheChecker:
    """Unpickled with pickle, this would open (create) a file in the process that
    runs check(): code from the student's process running in the kernel."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def _sends_to_the_checker(path):
    def first_message(query):
        # Find the child's own `send` (the scenario loop, on another thread) and
        # hand it an object of the student's making instead of a Result.
        for frame in sys._current_frames().values():
            while frame is not None and frame.f_code.co_name != "_judge_all":
                frame = frame.f_back
            if frame is not None:
                frame.f_locals["send"](RunsInTheChecker(str(path)))
        return {"role": "user", "content": query}

    return first_message


def test_a_forged_message_from_the_checked_process_runs_nothing_in_the_kernel(tmp_path):
    marker = tmp_path / "ran-in-the-kernel"
    report = check("first_message", _sends_to_the_checker(marker), timeout=1)
    assert not marker.exists()  # the object was refused, not unpickled
    assert not report.passed
    assert "sent a io.open, not a result" in report.results[0].happened
    assert check("first_message", reference.first_message).passed  # the checker still works


# -- a function that forges the checker's verdict -------------------------------------
# (outside QA: the checked process judged its own scenarios and sent back Results, so a
# function could find the pipe's `send` in the frames and send "passed" itself)


def _find_send():
    """The checker's `send` in the checked process, found the way a cheat would."""
    for frame in sys._current_frames().values():
        while frame is not None:
            candidate = frame.f_locals.get("send")
            if callable(candidate):
                return candidate
            frame = frame.f_back
    raise AssertionError("no send() in any frame")


def forges_results(query):
    from agentlab.exercises.report import Result

    send = _find_send()
    for name in exercises.get("first_message").scenarios:
        send(Result(name, name, passed=True))  # the verdicts the child used to send
    os._exit(0)


def forges_results_and_records(query):
    from agentlab.exercises.report import Result

    send = _find_send()
    for name in exercises.get("first_message").scenarios:
        record = {"value": "a wrong answer", "same_as": None, "error": None, "stub": False,
                  "where": "", "timed_out": False, "stuck": False, "printed": "",
                  "state": [None]}  # fmt: skip
        send((name, Result(name, name, passed=True), [record]))
    os._exit(0)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
@pytest.mark.parametrize("fn", [forges_results, forges_results_and_records])
def test_a_function_that_sends_passing_results_itself_fails(fn):
    report = check("first_message", fn, timeout=LIMIT)
    assert not report.passed
    assert not any(r.passed for r in report.results)
    assert len(report.results) == len(exercises.get("first_message").scenarios)
    if fn is forges_results:  # a verdict in place of a record: called what it is
        assert all("not a record of the function's calls" in r.happened for r in report.results)
    else:  # records the kernel judges: the value is wrong, whatever "passed" says
        assert "'a wrong answer'" in report.results[0].happened
        assert "fewer calls" in report.results[-1].happened  # new_each_time calls twice


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_the_kernel_judges_plain_data_not_the_students_objects():
    # A right answer passes however it is dressed: a str subclass and a dict subclass
    # become plain data in the checked process, and the kernel judges that.
    class Word(str):
        pass

    class Message(dict):
        pass

    assert check("decide", lambda r: Word(reference.decide(r)), timeout=2).passed
    assert check("first_message", lambda q: Message(role="user", content=q), timeout=2).passed
    assert not check("first_message", lambda q: {"role": "user", "content": {q}}, timeout=2).passed
    # what crosses to the kernel: builtin types only, shared parts still shared
    from agentlab.exercises.sandbox import Foreign, plain

    shared = [Word("x")]
    copied = plain(Message(a=shared, b=shared, c={1}, d=Word))
    assert type(copied) is dict and type(copied["a"][0]) is str
    assert copied["a"] is copied["b"] and copied["c"] == Foreign("set")
    assert repr(copied["d"]) == "<type object>"
    loop = []
    loop.append(loop)
    copy = plain(loop)
    assert copy[0] is copy  # a list that contains itself stays one list


# -- the checker's own pipe: a child that stops half-way, or lies about sizes -------------
# (issue 24.4: half a message and SIGSTOP held check() past its limit; a header claiming
# 2**62 bytes raised MemoryError in the kernel)


def _write_to_the_checker(data: bytes) -> None:
    """Write raw bytes on the pipe that carries the checker's messages, found as a
    cheat would: the file descriptor inside the child's own ``send``."""
    _record([os.readlink("/proc/self")])  # its real id (not the one in its namespace)
    send = _find_send()
    [fd] = [c.cell_contents for c in send.__closure__ or () if type(c.cell_contents) is int]
    os.write(fd, data)


def half_a_header_then_stops(query):
    _write_to_the_checker(b"\x00\x00\x00")
    os.kill(os.getpid(), signal.SIGSTOP)
    return {"role": "user", "content": query}


def half_a_message_then_stops(query):
    _write_to_the_checker(struct.pack("!Q", 100) + b"\x80\x05" + b"x" * 8)
    os.kill(os.getpid(), signal.SIGSTOP)
    return {"role": "user", "content": query}


def claims_2_to_the_62_bytes(query):
    _write_to_the_checker(struct.pack("!Q", 2**62))
    return {"role": "user", "content": query}


def claims_2_to_the_62_bytes_as_multiprocessing_frames_them(query):
    _write_to_the_checker(struct.pack("!i", -1) + struct.pack("!Q", 2**62))
    time.sleep(60)


PIPE_ATTACKS = [
    half_a_header_then_stops,
    half_a_message_then_stops,
    claims_2_to_the_62_bytes,
    claims_2_to_the_62_bytes_as_multiprocessing_frames_them,
]


@pytest.mark.skipif(sys.platform != "linux", reason="finds the pipe through /proc")
@pytest.mark.parametrize("fn", PIPE_ATTACKS, ids=[f.__name__ for f in PIPE_ATTACKS])
def test_the_checkers_pipe_cannot_hold_or_crash_it(fn, tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTLAB_TEST_PIDS", str(tmp_path / "pids"))
    scenarios = len(exercises.get("first_message").scenarios)
    hard = 2 * LIMIT + exercises.MARGIN
    out: dict[str, object] = {}

    def run() -> None:
        try:
            out["report"] = check("first_message", fn, timeout=LIMIT)
        except BaseException as e:  # the point: nothing may come out of check()
            out["raised"] = e

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(scenarios * hard + 10)  # a bound, not a measure: a hang fails here
    assert not thread.is_alive(), "check() is held by its own pipe"
    assert "raised" not in out, out.get("raised")
    report = out["report"]
    assert isinstance(report, Report) and not report.passed
    assert len(report.results) == scenarios
    first = report.results[0]
    if "2_to_the_62" in fn.__name__:
        assert "bytes on the checker's pipe" in first.happened, first.happened
    else:  # stopped half-way: killed at the deadline like a hang
        assert first.timed_out and "did not finish within" in first.happened
    # the stopped or lying process is gone
    pids = tmp_path / "pids"
    left = [int(p) for p in pids.read_text().split()] if pids.exists() else []
    deadline = time.monotonic() + 5
    while left and time.monotonic() < deadline:
        left = [p for p in left if _alive(p)]
        time.sleep(0.05)
    assert left == []
    assert check("first_message", reference.first_message, timeout=2).passed


def test_a_message_too_big_is_refused_before_it_is_read():
    from agentlab.exercises.sandbox import MESSAGE_LIMIT, _read_message, _TooBig

    read, write = os.pipe()
    try:
        os.write(write, struct.pack("!Q", MESSAGE_LIMIT + 1))
        with pytest.raises(_TooBig):
            _read_message(read, time.monotonic() + 5)
        os.write(write, struct.pack("!Q", 3) + b"ab")  # one byte short, and nobody writes
        with pytest.raises(TimeoutError):
            _read_message(read, time.monotonic() + 0.2)
        os.close(write)
        write = -1
        with pytest.raises(EOFError):
            _read_message(read, time.monotonic() + 5)
    finally:
        os.close(read)
        if write >= 0:
            os.close(write)
