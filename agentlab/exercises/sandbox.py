"""Running a student's function so that nothing it does can break the checker.

Each call runs in a daemon thread with a time limit, with ``print`` output
captured (and capped), and every exception caught and kept as data.

Why a thread and not a subprocess: a function defined in a notebook cell
cannot be sent to another process portably (``spawn`` must pickle it, which
fails for notebook functions; ``fork`` is unsafe in a kernel that runs
threads and does not exist on Windows). The price: Python cannot kill a
thread. So after the time limit we ask the thread to stop by raising
``Stop`` inside it (CPython's ``PyThreadState_SetAsyncExc``); a pure-Python
endless loop ends at once. A thread blocked inside C code (``time.sleep``,
a socket) only stops when that call returns; it is a daemon, so it never
keeps Python from exiting, and ``check`` reports it as still running and
skips the scenarios after it. Most endless loops never get that far: the
scripted client, the fake ``run_bash`` and the fake ``approve`` raise
``Stop`` themselves once they have been called far more often than the
scenario needs.
"""

from __future__ import annotations

import contextlib
import ctypes
import io
import linecache
import os
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["Outcome", "Stop", "describe_error", "run"]

PRINT_LIMIT = 2000  # characters of captured print output kept per call
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # .../agentlab


class Stop(BaseException):
    """Ends the student's code: raised by a fake called too often, or at the time limit.

    A ``BaseException``, so ``except Exception`` in the student's loop does not swallow it.
    """


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


def _where(error: BaseException, fn: Callable[..., Any]) -> str:
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
