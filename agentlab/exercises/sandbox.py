"""Running a student's function so that nothing it does can break the checker.

Two layers:

- ``Forked`` runs the scenarios in a child process made with ``fork``, and
  ``check`` waits for each one's record under a hard time limit. The child
  sends plain data only (``plain``: what the function returned, raised and
  printed, what the fakes saw); the kernel judges it, so a function that
  finds the pipe and sends "passed" itself gains nothing. Whatever happens there stays
  there: ``os._exit``, a segfault, a memory bomb, a value whose ``__eq__`` or
  ``__repr__`` never returns, ``SystemExit``, ``KeyboardInterrupt``, changes
  to shared objects. At the limit the process (and anything it started) is
  killed, so even code stuck inside C (``time.sleep``, a lock) ends.
  "Anything it started" includes processes that left its process group
  (``os.setsid()``, a double fork): while ``check`` runs, the kernel is a
  child subreaper (``agentlab.tools.shell.reaping``, the bash tool's own
  machinery), so such orphans come back to it and are found and killed.
  On Linux, where an unprivileged user and PID namespace can be made, the
  student's code also runs in a PID namespace of its own: it sees no process
  outside it, so ``os.kill(os.getppid(), SIGKILL)`` (or any pid it reads
  from ``/proc``) cannot reach the kernel, and when the namespace's first
  process ends the kernel of the OS ends every process left in it. Where
  namespaces are refused (many containers forbid them), the student's code
  runs without one, and a deliberate kill of its parent does reach the
  Jupyter kernel: that is the limit.
- ``run`` calls the function inside that child in a daemon thread with the
  scenario's time limit, captures and caps what it prints, and keeps every
  exception as data, so the report can say "still running after 2 s" or
  show the student's line that raised.

Why a forked process and not only a thread: Python cannot kill a thread, and
a thread shares the kernel's fate (``os._exit`` ends the kernel). Why fork
and not ``spawn``: a function defined in a notebook cell cannot be pickled
and sent to a fresh interpreter, but a forked child already has it, with the
cell's source in ``linecache``, so tracebacks keep pointing at the student's
line. The child only sends back plain data (and its own ``Result``, which
can make a scenario fail but never pass).

The pipe back is the student's too (the code can find it), so the kernel reads
it with care: each message is an 8-byte length and that many bytes, every read
has the scenario's deadline (a child that stops in the middle of a message,
``SIGSTOP`` included, is killed at the limit), and a length over
``MESSAGE_LIMIT`` is refused before anything is allocated (a header claiming
2**62 bytes fails the scenario instead of raising ``MemoryError``).
Where ``fork`` does not exist (Windows), ``check`` falls back to a thread
with the same time limit: endless Python loops still end (``Stop`` is raised
inside the thread), but ``os._exit`` or code stuck in C cannot be contained.
"""

from __future__ import annotations

import builtins
import contextlib
import ctypes
import faulthandler
import io
import linecache
import os
import pickle
import selectors
import signal
import struct
import sys
import threading
import time
import traceback
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agentlab.i18n import t
from agentlab.tools.shell import Reaper

__all__ = [
    "Crashed",
    "Foreign",
    "Forked",
    "Outcome",
    "Refused",
    "Stop",
    "can_fork",
    "describe_error",
    "plain",
    "run",
]

PRINT_LIMIT = 2000  # characters of captured print output kept per call
MEMORY_LIMIT = 1 << 30  # bytes a checked scenario may add to the kernel's size (Linux)
MESSAGE_LIMIT = 64 << 20  # bytes one message from the checked process may hold
_HEADER = struct.Struct("!Q")  # a message: its length, then its bytes
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # .../agentlab


class Stop(BaseException):
    """Ends the student's code: raised by a fake called too often, or at the time limit.

    A ``BaseException``, so ``except Exception`` in the student's loop does not swallow it.
    """


class Crashed(Exception):
    """What ended a scenario's process (``raised=False``: ``os._exit``, a signal...) or
    escaped from it (``raised=True``: ``str()`` is ``Type: message``)."""

    def __init__(self, text: str, raised: bool):
        super().__init__(text)
        self.raised = raised


class Refused(Crashed):
    """The kernel stopped reading the checked process (``str()`` says why, as it is)."""

    def __init__(self, text: str):
        super().__init__(text, raised=False)


@dataclass
class Outcome:
    """What one call of the student's function did."""

    value: Any = None
    error: BaseException | None = None
    where: str = ""  # the line of the student's code that raised
    timed_out: bool = False  # still running at the time limit
    stuck: bool = False  # and still running after we asked it to stop
    printed: str = ""  # what it printed (capped)

    @property
    def ok(self) -> bool:
        return self.error is None and not self.timed_out


class _Capped(io.TextIOBase):
    """A text stream that keeps the first ``limit`` characters and counts the rest."""

    def __init__(self, limit: int = PRINT_LIMIT):
        self.parts: list[str] = []
        self.size = 0
        self.dropped = 0
        self.limit = limit

    def writable(self) -> bool:
        return True

    def write(self, s: str) -> int:
        room = self.limit - self.size
        if room > 0:
            self.parts.append(s[:room])
            self.size += min(len(s), room)
        self.dropped += max(0, len(s) - max(room, 0))
        return len(s)

    def text(self) -> str:
        out = "".join(self.parts)
        return out + (f"\n... ({self.dropped} more characters)" if self.dropped else "")


def _stop_thread(thread: threading.Thread) -> None:
    """Raise ``Stop`` inside ``thread`` (CPython only; elsewhere this does nothing)."""
    api = getattr(ctypes, "pythonapi", None)
    if api is None or thread.ident is None:
        return
    api.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread.ident), ctypes.py_object(Stop))


def _where(error: BaseException, fn: Callable[..., Any] | None) -> str:
    """The line of the student's code that raised: the deepest frame outside agentlab."""
    code = getattr(fn, "__code__", None)
    own = code.co_filename if code is not None else None
    found = ""
    for frame in traceback.extract_tb(error.__traceback__):
        mine = frame.filename == own or not (
            frame.filename.startswith(_PACKAGE) or "site-packages" in frame.filename
        )
        if mine and frame.filename != __file__:
            line = frame.line or linecache.getline(frame.filename, frame.lineno or 0)
            found = (line or "").strip() or found
    return found


def describe_error(error: BaseException) -> str:
    """``Type: message`` for an exception, with the API's own wording for a 400."""
    if isinstance(error, Crashed) and error.raised:  # already "Type: message"
        return str(error)
    body = getattr(error, "body", None)
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        status = getattr(error, "status_code", "")
        return f"{type(error).__name__} ({status}): {body['error'].get('message', '')}"
    text = str(error)
    if len(text) > 300:
        text = text[:300] + " ..."
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def run(fn: Callable[..., Any], args: tuple[Any, ...], timeout: float) -> Outcome:
    """Call ``fn(*args)`` in a daemon thread; never raises, always returns an Outcome."""
    outcome = Outcome()

    def target() -> None:
        try:
            outcome.value = fn(*args)
        except BaseException as e:  # the student's error is data for the report
            outcome.error = e
            outcome.where = _where(e, fn)

    buffer = _Capped()
    thread = threading.Thread(target=target, name="agentlab-exercise", daemon=True)
    with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
        thread.start()
        thread.join(timeout)
        if thread.is_alive():
            outcome.timed_out = True
            _stop_thread(thread)
            thread.join(0.5)
            outcome.stuck = thread.is_alive()
    outcome.printed = buffer.text()
    return outcome


# --------------------------------------------------------------------------
# Scenarios in a process of their own
# --------------------------------------------------------------------------


class Forked:
    """A forked child running ``work(send, *args)``; each ``send(value)`` hands one
    value back, and ``receive`` waits for the next under a time limit.

    The child is cut off from the kernel (no terminal, notebook output or
    keyboard; a memory cap on Linux) and leads its own process group, so
    ``end`` kills it and everything it started; with a ``reaper`` (made by
    ``agentlab.tools.shell.reaping()`` around the forks), also what left the
    group.
    """

    def __init__(
        self, work: Callable[..., Any], args: tuple[Any, ...], reaper: Reaper | None = None
    ):
        import multiprocessing

        self._reaper = reaper
        context = multiprocessing.get_context("fork")
        self._fd, send = os.pipe()
        self.process = context.Process(target=_child, args=(send, work, args), daemon=True)
        with warnings.catch_warnings():
            # Python 3.12+ warns that forking a process with threads may deadlock the
            # child. Ours touches no other thread's locks, and the time limit kills it
            # if it ever does hang.
            warnings.simplefilter("ignore", DeprecationWarning)
            self.process.start()
        os.close(send)

    def receive(self, limit: float) -> Outcome:
        """The next value sent, or what stopped it: never raises for the child's sake.

        The whole message must arrive within ``limit`` seconds; a child that stops
        half-way times out like one that never writes, and the caller kills it."""
        outcome = Outcome()
        try:
            data = _read_message(self._fd, time.monotonic() + limit)
        except TimeoutError:
            outcome.timed_out = True
            return outcome
        except EOFError:  # the child ended without a (whole) word
            self.process.join(1)
            outcome.error = Crashed(_how_it_ended(self.process.exitcode), raised=False)
            return outcome
        except _TooBig as e:
            outcome.error = Refused(t("ex.happened.too_big", size=e.size, limit=MESSAGE_LIMIT))
            return outcome
        except OSError as e:  # the pipe itself broke
            outcome.error = Crashed(describe_error(e), raised=False)
            return outcome
        try:
            kind, payload, where = _PlainData(io.BytesIO(data)).load()
            if kind not in ("value", "error") or (
                kind == "error" and not (type(payload) is str and type(where) is str)
            ):
                raise pickle.UnpicklingError("not a message of the checker")
        except Exception as e:  # not what _work sends: the student's code wrote to the pipe
            outcome.error = Crashed(describe_error(e), raised=True)
            return outcome
        if kind == "value":
            outcome.value = payload
        else:
            outcome.error, outcome.where = Crashed(payload, raised=True), where
        return outcome

    def end(self) -> None:
        """Kill the child and everything it started, and reap it."""
        if self.process.pid:
            with contextlib.suppress(OSError):
                os.killpg(self.process.pid, signal.SIGKILL)
        with contextlib.suppress(OSError, ValueError):
            self.process.kill()
        self.process.join()  # once it is reaped, its orphans are ours: none is missed
        if self._reaper is not None:  # what left the group: setsid, a double fork
            self._reaper.stop()
        self.process.close()
        with contextlib.suppress(OSError):
            os.close(self._fd)


class _TooBig(Exception):
    def __init__(self, size: int):
        super().__init__(size)
        self.size = size


def _read_message(fd: int, deadline: float) -> bytes:
    """One message from the pipe, whole, before ``deadline`` (``time.monotonic()``).

    Raises ``TimeoutError`` at the deadline, ``EOFError`` if the pipe closes first,
    ``_TooBig`` for a length over ``MESSAGE_LIMIT`` (nothing that size is allocated).
    """
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)

        def read(n: int) -> bytes:
            out = bytearray()
            while len(out) < n:
                left = deadline - time.monotonic()
                if left <= 0 or not selector.select(left):
                    raise TimeoutError
                chunk = os.read(fd, min(n - len(out), 1 << 20))
                if not chunk:
                    raise EOFError
                out += chunk
            return bytes(out)

        (size,) = _HEADER.unpack(read(_HEADER.size))
        if size > MESSAGE_LIMIT:
            raise _TooBig(size)
        return read(size)


def _write_message(fd: int, value: Any) -> None:
    """Send one value to the kernel (in the child): its pickle, after its length."""
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    if len(data) > MESSAGE_LIMIT:  # say so in a message that fits
        data = pickle.dumps(("error", f"a message of {len(data)} bytes: too big to send", ""))
    view = memoryview(_HEADER.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view) :]


class _PlainData(pickle.Unpickler):
    """Reads what the child sent, allowing no class but ``Result`` and ``Foreign``.

    The student's code runs in the child and can reach its end of the pipe, so
    what arrives is the student's to shape; a plain ``pickle.loads`` would run
    any function the pickle names (``__reduce__``) here, in the kernel. What
    arrives is only data for the kernel to judge (see ``plain``): never a verdict
    it takes on trust."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) == ("agentlab.exercises.report", "Result"):
            from agentlab.exercises.report import Result

            return Result
        if (module, name) == (__name__, "Foreign"):
            return Foreign
        raise pickle.UnpicklingError(f"the checked process sent a {module}.{name}, not a result")


@dataclass(frozen=True)
class Foreign:
    """Stands for a value that is not plain data (an object of the student's class,
    a set, a function...): only its type's name crosses to the kernel."""

    type_name: str

    def __repr__(self) -> str:
        return f"<{self.type_name} object>"


_DEEPEST = 60  # levels of nesting ``plain`` copies; deeper values become a Foreign


def plain(value: Any, memo: dict[int, Any] | None = None, depth: int = 0) -> Any:
    """A copy of ``value`` made only of dict, list, tuple, str, int, float, bool and
    None, to send to the kernel, which judges it.

    Subclasses become their base type (read with the base type's own methods, so
    the student's ``__eq__`` or ``__iter__`` never reaches the kernel); an SDK
    object becomes its dict (``as_dict``, as the checker reads it anyway); anything
    else a ``Foreign``. Runs in the checked process. ``memo`` keeps shared parts
    shared, and a list that contains itself stays one list.
    """
    memo = {} if memo is None else memo
    if value is None or type(value) in (bool, int, float, str):
        return value
    if depth > _DEEPEST:
        return Foreign("deeply nested value")
    if id(value) in memo:
        return memo[id(value)][1]
    if isinstance(value, str):
        return str.__getitem__(value, slice(None))
    if isinstance(value, int):
        return int.__index__(value)
    if isinstance(value, float):
        return float.__add__(value, 0.0)
    if isinstance(value, dict):
        copy: dict[Any, Any] = {}
        memo[id(value)] = (value, copy)  # keeps the original alive while its id is used
        for key, item in list(dict.items(value)):
            copy[plain(key, memo, depth + 1)] = plain(item, memo, depth + 1)
        return copy
    if isinstance(value, list):
        items: list[Any] = []
        memo[id(value)] = (value, items)
        items.extend(plain(item, memo, depth + 1) for item in list.__getitem__(value, slice(None)))
        return items
    if isinstance(value, tuple):
        return tuple(plain(item, memo, depth + 1) for item in tuple.__getitem__(value, slice(None)))
    if hasattr(type(value), "model_dump"):  # an SDK object (pydantic)
        from agentlab.history import as_dict

        return plain(as_dict(value), memo, depth + 1)
    return Foreign(f"{type(value).__module__}.{type(value).__qualname__}".removeprefix("builtins."))


def can_fork() -> bool:
    return hasattr(os, "fork")


def _child(pipe: int, work: Callable[..., Any], args: tuple[Any, ...]) -> None:
    """In the forked child: run ``work``, sending each value back as it comes.

    Where a PID namespace can be made, ``work`` runs two forks further down,
    inside it (see ``_in_namespace``); this process then only waits and ends
    the way ``work``'s process ended, so the report says the same either way.
    """
    with contextlib.suppress(OSError):
        os.setpgid(0, 0)  # its own process group: one kill ends whatever it started
    _detach()
    if NAMESPACES and _new_pid_namespace():
        _in_namespace(pipe, work, args)  # never returns
    _work(pipe, work, args)


def _work(pipe: int, work: Callable[..., Any], args: tuple[Any, ...]) -> None:
    def send(value: Any) -> None:
        _write_message(pipe, ("value", value, ""))

    try:
        work(send, *args)
    except BaseException as e:  # what escaped (SystemExit from an __eq__...) is reported
        _write_message(pipe, ("error", describe_error(e), _where(e, None)))
    finally:
        os.close(pipe)


# --------------------------------------------------------------------------
# A PID namespace of its own (Linux)
# --------------------------------------------------------------------------

NAMESPACES = sys.platform == "linux"  # tests turn it off to show what it prevents
_CLONE_NEWUSER, _CLONE_NEWPID = 0x10000000, 0x20000000  # from <linux/sched.h>


def _new_pid_namespace() -> bool:
    """Make the next child of this process the first one of a new PID namespace.

    An unprivileged process may do this inside a new user namespace of its own
    (``unshare(2)``; Python 3.12 has ``os.unshare``, ctypes does it here on
    every version). Our user id is mapped to itself, so files and ``os.getuid()``
    look the same inside. False, and nothing changed, where it is refused: a
    kernel built without namespaces, ``user.max_user_namespaces = 0``, Docker's
    default seccomp profile, Ubuntu's AppArmor rule against unprivileged user
    namespaces, or a process with more than one thread.
    """
    uid, gid = os.getuid(), os.getgid()
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.unshare(_CLONE_NEWUSER | _CLONE_NEWPID) != 0:
            return False
    except (OSError, AttributeError):
        return False
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"),
                       ("gid_map", f"{gid} {gid} 1")):  # fmt: skip
        with contextlib.suppress(OSError), open(f"/proc/self/{name}", "w") as f:
            f.write(text)
    return True


def _in_namespace(pipe: int, work: Callable[..., Any], args: tuple[Any, ...]) -> None:
    """Run ``work`` in the new PID namespace, then end as its process ended.

    Two processes in there: the first (pid 1) only adopts and reaps orphans and
    reports how the second ended; the second runs ``work``. (Pid 1 of a
    namespace ignores signals it has no handler for, even SIGKILL sent to
    itself: the student's code must not run as pid 1, or ``os.kill(os.getpid(),
    SIGKILL)`` would do nothing.) When pid 1 ends, the OS kills everything
    still in the namespace.
    """
    status_r, status_w = os.pipe()
    first = os.fork()
    if first == 0:  # pid 1 of the namespace
        try:
            os.close(status_r)
            worker = os.fork()
            if worker == 0:
                os.close(status_w)
                _work(pipe, work, args)
                os._exit(0)
            os.close(pipe)  # only the worker sends results
            while True:
                pid, status = os.wait()  # the worker, or an orphan that came to us
                if pid == worker:
                    break
            os.write(status_w, str(status).encode())
        finally:
            os._exit(0)
    os.close(pipe)
    os.close(status_w)
    reported = os.read(status_r, 32)
    _, status = os.waitpid(first, 0)
    _end_as(int(reported) if reported else status)


def _end_as(status: int) -> None:
    """End this process the way a process with wait status ``status`` ended."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        with contextlib.suppress(ImportError, OSError, ValueError):
            import resource

            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # no second core dump
        with contextlib.suppress(OSError, ValueError):
            signal.signal(sig, signal.SIG_DFL)
        with contextlib.suppress(OSError, ValueError):
            signal.pthread_sigmask(signal.SIG_UNBLOCK, [sig])
        os.kill(os.getpid(), sig)
        os._exit(128 + sig)  # a signal that does not end a process (should not happen)
    os._exit(os.waitstatus_to_exitcode(status))


def _detach() -> None:
    """Cut the child off from the kernel: no terminal, no notebook output, no keyboard,
    and a cap on the memory it may take."""
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        with contextlib.suppress(OSError):
            os.dup2(devnull, fd)
    quiet = open(os.devnull, "w")  # noqa: SIM115 (lives as long as the child)
    sys.stdout = sys.stderr = quiet
    faulthandler.disable()  # a crash is reported by the parent, not dumped on a terminal
    builtins.input = _no_input  # a notebook's input() would talk to the kernel's sockets
    try:
        import resource

        with open("/proc/self/statm") as f:
            pages = int(f.read().split()[0])
        size = pages * os.sysconf("SC_PAGE_SIZE") + MEMORY_LIMIT
        resource.setrlimit(resource.RLIMIT_AS, (size, size))
    except (ImportError, OSError, ValueError):  # not Linux: no cap
        pass


def _no_input(prompt: object = "") -> str:
    raise EOFError("input() gets no keyboard during check(): take values as arguments")


def _how_it_ended(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = str(-code)
        return t("ex.happened.process_signal", name=name)
    return t("ex.happened.process_exit", code=code)
