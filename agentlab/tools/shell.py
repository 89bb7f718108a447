"""The bash tool: run one command the model asked for, with real limits.

The simplest way to run a command is::

    subprocess.run(command, shell=True, capture_output=True, text=True, timeout=120)

That works, until a command never ends, prints a gigabyte, waits for
keyboard input, leaves a background process behind, or prints the API key
with ``env``. ``run_bash`` is the same idea with those holes closed:

- each command runs in ``bash -c`` in its own process group, and when the
  call ends (normally, on timeout or on Ctrl-C) the whole group is stopped;
  on Linux every other process it started is stopped too, even one that
  left the group (``setsid``, a double-forked daemon): while the command
  runs, our process is a "child subreaper" (``prctl``), so such orphans
  become our children instead of init's, and we find them through
  ``/proc/PID/task/TID/children``, freeze them (SIGSTOP) and kill them;
- output is read in chunks and capped *while* reading: we keep the head and
  the tail and count the bytes in between, so memory stays small;
- stdin is closed (``read`` and bare ``cat`` finish at once);
- the child gets an allow-listed environment, without API keys or tokens;
- on Linux, while the command runs our process is marked not "dumpable"
  (``prctl(PR_SET_DUMPABLE, 0)``), so a command running as the same user
  cannot read our environment (``/proc/$PPID/environ``) or memory
  (``/proc/$PPID/mem``, a debugger) where the API key lives. Root (and any
  process with CAP_SYS_PTRACE) still can; so can anything that runs when no
  command is running.

On Linux, where bubblewrap (``bwrap``) is installed and user namespaces
are allowed, each command also runs in a sandbox (``sandboxed``): its own
PID namespace and ``/proc`` (the kernel and every other process are out of
sight), the whole file system read-only except the folder it runs in and a
private, empty ``/tmp``, an empty, read-only home folder but for the folders
in it that our Python and the programs on ``PATH`` come from (``~/.pyenv``,
``~/.local``...), the user's secrets and runtime folders hidden there too
(Jupyter's runtime folder with the kernel connection files, ``~/.ssh``,
``~/.config``, ``~/.gnupg``, keyrings, cloud credentials), no capabilities
and no network unless ``network=True``. Starting bubblewrap costs more than
most commands do, so a sandbox is started once (on the first command for
that folder) and kept: its first process, ``sandbox_init.py``, runs each
command in ``bash -c`` with the same limits, and after each command kills
every process left in the sandbox and empties its ``/tmp``, ``/dev/shm``
and IPC objects, so each command starts as in a fresh sandbox. There the
command's parent is that process, not ours: the guard above is not needed.
Where it cannot (macOS, Windows, no bwrap, namespaces refused) the limits
above still apply, and a one-time notice says the sandbox is off
(``sandbox_problem()`` says why).

Failures come back as data (a ``BashResult`` the model can read), never as
exceptions, except Ctrl-C, which stops the command and is raised again.
The process-group kill is POSIX; on Windows (Git Bash) a simpler path runs.

Without the sandbox the command can read and change any file you can (a
``.env`` file included). With it, it can still read whatever is not hidden
and change anything in its folder, except what would run by itself later
(a folder holding a notebook, our Python's files, ``.git/config``): see
``agentlab.tools.protect``, which also keeps the kernel's imports out of the
folders commands write to.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import errno
import functools
import json
import os
import re
import select
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from agentlab.i18n import t
from agentlab.tools.protect import guard_imports, pinned, read_only_inside

__all__ = [
    "BASH_DESCRIPTION",
    "BASH_INPUT_SCHEMA",
    "SAFE_ENV_KEYS",
    "BashResult",
    "Reaper",
    "close_sandboxes",
    "hidden_paths",
    "make_workspace",
    "reaping",
    "run_bash",
    "sandbox_problem",
]

BASH_DESCRIPTION = (
    "Run one command in bash and get back its combined stdout and stderr. "
    "Each call starts a fresh shell in the same folder: `cd` and variables do not "
    "carry over to the next call (chain steps instead, e.g. `cd src && ls`), and "
    "background jobs are stopped when the command ends. Stdin is closed, so nothing "
    "can wait for input: use non-interactive flags such as `-y`. A command that runs "
    "too long is stopped at a timeout, and long output is cut to its head and tail, "
    "so narrow it yourself with head, tail or grep. A non-zero exit status is shown "
    "on a last line such as `(exit code 1)`."
)

BASH_INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "command": {
            "type": "string",
            "description": "The bash command to run, e.g. `ls -la` or `grep -rn TODO . | head`.",
        }
    },
    "required": ["command"],
}

# Environment variables copied from our own environment into the child's.
# Anything else (API keys, tokens, cloud credentials...) is left out.
SAFE_ENV_KEYS: frozenset[str] = frozenset(
    {
        "PATH", "HOME", "USER", "LOGNAME", "SHELL", "TMPDIR", "TZ",
        "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_MESSAGES",
        "SYSTEMROOT", "WINDIR",  # Windows programs need these to start
    }
)  # fmt: skip

# Set for every command, so that nothing waits for a terminal or a keypress
# and the output is plain text. A caller's env= mapping may override these.
_NON_INTERACTIVE_ENV = {
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "MANPAGER": "cat",
    "SYSTEMD_PAGER": "cat",
    "LESS": "-R",
    "TERM": "dumb",
    "NO_COLOR": "1",
    "PYTHONUNBUFFERED": "1",  # Python prints as it goes, not at exit
    "GIT_TERMINAL_PROMPT": "0",  # git fails instead of asking for a password
}

# A variable whose name contains one of these words is never passed on, even
# when a caller puts it in env= (the child's output goes to the model).
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|CREDENTIAL", re.I)

_CHUNK = 64 * 1024  # bytes per read from the pipe
_STOP_AFTER = 10_000_000  # bytes: a command printing more than this is stopped
_DRAIN = 0.1  # seconds to keep reading after the command itself has exited
_TERM_GRACE = 0.5  # seconds between SIGTERM and SIGKILL when stopping a group
_POLL = 0.05  # seconds between exit checks where the OS cannot tell us (macOS)


@dataclass(frozen=True)
class BashResult:
    """What one command did. ``str(result)`` is the text the model sees."""

    output: str  # text sent to the model; never empty
    exit_code: int | None  # None if it was stopped (timeout, too much output) or never ran
    timed_out: bool
    truncated: bool  # True if bytes were cut from the middle of the output
    duration: float  # seconds
    cwd: str  # the folder it ran in
    sandboxed: bool = False  # True if it ran under bubblewrap (see sandbox_problem)

    def __str__(self) -> str:
        return self.output


def make_workspace(prefix: str = "agentlab-", keep: bool = False) -> Path:
    """Make a fresh, empty temporary folder for the agent to work in.

    It is removed with what is in it when this Python process ends (a notebook's
    kernel shuts down), so lessons run again and again leave nothing behind;
    ``keep=True`` leaves it for you to look at (remove it with ``shutil.rmtree``).
    """
    folder = Path(tempfile.mkdtemp(prefix=prefix)).resolve()
    if not keep:
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


def run_bash(
    command: str,
    *,
    timeout: float = 30,
    cwd: str | os.PathLike[str] | None = None,
    max_output: int = 30_000,
    env: Mapping[str, str] | None = None,
    sandbox: bool | None = None,
    network: bool = False,
) -> BashResult:
    """Run ``command`` with ``bash -c`` and return what it printed, within limits.

    ``timeout`` is in seconds. ``cwd=None`` means the current folder, as in the
    lesson. ``max_output`` caps the output in bytes (half head, half tail).
    ``env`` adds variables to the small allow-listed environment; names that
    look secret (``*KEY*``, ``*TOKEN*``, ...) are dropped even there.
    ``sandbox`` (default: the module's ``SANDBOX``, True) runs it under
    bubblewrap where that works; ``network=True`` lets the sandboxed command
    use the network (without the sandbox nothing stops it anyway).
    """
    if not 0 < timeout < float("inf") or max_output < 2:
        raise ValueError("timeout must be a positive number of seconds, max_output at least 2")
    start = time.monotonic()

    def fail(message: str, where: str) -> BashResult:
        # Nothing ran: say why, in the tool result, instead of raising.
        return BashResult(f"({message})", None, False, False, time.monotonic() - start, where)

    try:
        where = os.getcwd() if cwd is None else os.path.abspath(os.path.expanduser(cwd))
    except OSError as e:  # the current folder was deleted
        return fail(f"cannot run: no current folder ({e.strerror})", "")
    if not isinstance(command, str):
        return fail(
            f"cannot run: the command must be a string, not {type(command).__name__}", where
        )
    if not command.strip():
        return fail("empty command; nothing was run", where)
    if not os.path.isdir(where):
        return fail(f"cannot run: the folder {where} does not exist", where)
    bash = _find_bash(os.environ.get("PATH"))
    if bash is None:
        return fail(
            "cannot run: bash was not found on PATH. On Windows install Git for Windows "
            "(it includes Git Bash) or use WSL; elsewhere install bash with your package manager",
            where,
        )
    argv = [bash, "-c", command]
    child_env = _child_env(env)
    guard_imports(where)  # a command may leave a nh3.py here: the kernel's imports skip it
    out = _Capped(max_output)
    stop_after = max(_STOP_AFTER, 50 * max_output)
    if SANDBOX if sandbox is None else sandbox:
        if not sandbox_problem():
            if _holds_home(where):
                return fail(
                    f"cannot run: the folder {where} holds your home folder, whose start-up "
                    "files (.bashrc, .profile, Jupyter's and Python's) a command could change. "
                    "Give bash a project folder: bash_tool(cwd=...), or start Jupyter in one",
                    where,
                )
            child_env["TMPDIR"] = "/tmp"  # the sandbox's own, emptied after each command
            why, exit_code, start = _run_sandboxed(
                argv, child_env, where, network, timeout, out, stop_after
            )
            if why.startswith("cannot run"):
                return fail(why, where)
            result = _result(out, why, exit_code, timeout, stop_after, start, where, True)
            if exit_code and _frozen.get(os.path.realpath(where)):  # tell the model why
                result = replace(result, output=_add_line(result.output, _READ_ONLY))
            return result
        _notice_once()
    with _guarded() as reaper:  # may wait for another thread's command to finish
        start = time.monotonic()  # the timeout counts from here
        try:
            proc = subprocess.Popen(
                argv,
                cwd=where,
                env=child_env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,  # one stream, in the order it was printed
                start_new_session=os.name != "nt",  # its own process group, to stop it whole
            )
        except (OSError, ValueError) as e:  # e.g. a NUL byte in the command, or permissions
            return fail(f"cannot run: {e}", where)
        if os.name == "nt":
            why = _collect_windows(proc, out, timeout)
        else:
            why = _collect_local(proc, out, start + timeout, stop_after, reaper)
    exit_code = proc.returncode if why == "done" else None
    return _result(out, why, exit_code, timeout, stop_after, start, where, False)


def _holds_home(where: str) -> bool:
    """Whether the folder ``where`` is the home folder or holds it."""
    home = os.path.realpath(os.path.expanduser("~"))
    return home != "/" and (home + "/").startswith(os.path.realpath(where).rstrip("/") + "/")


def _result(
    out: _Capped,
    why: str,
    exit_code: int | None,
    timeout: float,
    stop_after: int,
    start: float,
    where: str,
    sandboxed: bool,
) -> BashResult:
    """The result of a command that ran: its output, and a last line saying how it ended."""
    text = out.text()
    if why == "timeout":
        text = _add_line(text, f"(timed out after {timeout:g} s; the command was stopped)")
    elif why == "too much":
        text = _add_line(text, f"(stopped: the command printed more than {stop_after:,} bytes)")
    elif why == "lost":
        text = _add_line(
            text, "(stopped: the sandbox ended unexpectedly; the next call gets a new one)"
        )
    elif not text:
        text = f"(no output, exit {exit_code})"
    elif exit_code != 0:
        text = _add_line(text, f"(exit code {exit_code})")
    duration = time.monotonic() - start
    exit_code = exit_code if why == "done" else None
    return BashResult(text, exit_code, why == "timeout", out.cut > 0, duration, where, sandboxed)


def _find_bash(path: str | None) -> str | None:
    """``shutil.which("bash")``, remembered for each PATH (a search costs more than ``true``)."""
    found = _which_bash(path)
    if found is not None and not os.access(found, os.X_OK):  # gone since: look again
        _which_bash.cache_clear()
        found = _which_bash(path)
    return found


@functools.lru_cache(maxsize=8)
def _which_bash(path: str | None) -> str | None:
    return shutil.which("bash", path=path)


def _child_env(extra: Mapping[str, str] | None) -> dict[str, str]:
    """The child's environment: allow-listed names, our defaults, then the caller's."""
    env = {k: os.environ[k] for k in SAFE_ENV_KEYS if k in os.environ}
    env.update(_NON_INTERACTIVE_ENV)
    env.update(extra or {})
    return {k: v for k, v in env.items() if not _SECRET_NAME.search(k)}


# ---------------------------------------------------------------------------
# Linux: the sandbox (bubblewrap)
# ---------------------------------------------------------------------------

SANDBOX = True  # run commands under bubblewrap where it works; tests turn it off
BWRAP = "bwrap"  # the program; https://github.com/containers/bubblewrap

# Folders and files under $HOME a command never needs and must not read.
_HOME_SECRETS = (
    ".ssh", ".gnupg", ".config", ".local/share/keyrings", ".local/share/jupyter/runtime",
    ".local/share/jupyter/notebook_secret",
    ".anthropic", ".aws", ".azure", ".kube", ".docker", ".netrc", ".git-credentials",
    ".pypirc", ".npmrc", ".bash_history", ".python_history", ".ipython",
    # Hidden also where home stays in sight (see _home_kept): CLI logins and tokens.
    ".claude", ".claude.json", ".gitconfig", ".cache/huggingface", ".cargo/credentials",
    ".cargo/credentials.toml", ".vault-token", ".pgpass", ".boto", ".s3cfg",
    ".terraform.d", ".m2/settings.xml", ".gradle/gradle.properties",
)  # fmt: skip


def _bwrap_base(network: bool) -> list[str]:
    """bwrap's options that do not depend on the folder: namespaces, /proc, /dev, /tmp."""
    return [
        BWRAP,
        "--ro-bind", "/", "/",  # everything read-only...
        "--dev", "/dev",  # a minimal /dev (null, zero, random, tty, pts)...
        "--tmpfs", "/dev/shm",  # with its own shared memory
        "--mqueue", "/dev/mqueue",  # and POSIX message queues (so they can be emptied)
        "--remount-ro", "/dev",  # and nothing else written there
        "--proc", "/proc",  # the new PID namespace's own /proc: no kernel in it
        "--tmpfs", "/tmp",  # a private, empty /tmp
        # Its own PIDs and System V IPC, and no network (only its own loopback).
        # (UTS and cgroup namespaces would add about a third to the start-up
        # and guard nothing here; unprivileged, bwrap makes a user namespace too.)
        "--unshare-pid", "--unshare-ipc",
        *([] if network else ["--unshare-net"]),
        # Our sandbox_init.py is PID 1 (no bwrap process in between): nothing in the
        # sandbox can kill it, and when it exits the kernel kills all that is left.
        # It exits when our end of its socket closes, so no --die-with-parent: that
        # follows the *thread* that started bwrap, and the sandbox outlives it.
        "--as-pid-1",
        "--new-session",  # no terminal to type into (TIOCSTI)
        "--cap-drop", "ALL",
    ]  # fmt: skip


@functools.cache
def _kernel_files() -> list[str]:
    """The connection file named on our own command line (``-f FILE``: a Jupyter kernel)."""
    try:
        with open("/proc/self/cmdline", "rb") as f:
            args = f.read().decode("utf-8", "replace").split("\0")
    except OSError:
        return []
    found = [b for a, b in zip(args, args[1:]) if a == "-f"]
    found += [a.split("=", 1)[1] for a in args if a.startswith(("--f=", "-f="))]
    return found


@functools.cache
def _jupyter_runtime_dir() -> str | None:
    try:
        from jupyter_core.paths import jupyter_runtime_dir
    except ImportError:
        return None
    return str(jupyter_runtime_dir())


def hidden_paths() -> list[str]:
    """What the sandbox hides: secrets and runtime folders, as real paths that exist.

    Jupyter's runtime folder (``jupyter --runtime-dir``, ``$JUPYTER_RUNTIME_DIR``,
    ``~/.local/share/jupyter/runtime``) and our own kernel's connection file,
    ``$XDG_RUNTIME_DIR`` (``/run/user/UID``: sockets, keyrings), and the
    secrets under ``$HOME`` (``_HOME_SECRETS``).
    """
    found: list[str] = []
    for path in _secret_places():
        real = os.path.realpath(path) if os.path.exists(path) else ""
        if real and real != "/" and real not in found:
            found.append(real)
    return found


def _secret_places() -> list[str]:
    """The paths ``hidden_paths`` looks at, as named (they need not exist)."""
    home = os.path.expanduser("~")
    paths = [os.path.join(home, name) for name in _HOME_SECRETS]
    paths += [os.environ.get("JUPYTER_RUNTIME_DIR", ""), os.environ.get("XDG_RUNTIME_DIR", "")]
    paths += [_jupyter_runtime_dir() or "", *_kernel_files()]
    return [path for path in paths if path]


def _bwrap_argv(where: str, network: bool, keep: list[str] | None = None) -> list[str]:
    """The bwrap command line for a sandbox where ``where`` is writable and secrets are
    hidden (``keep``: what stays read-only inside it, ``read_only_inside`` by default)."""
    where = os.path.realpath(where)
    home, kept = _home_kept(where)
    argv = [*_bwrap_base(network)]
    if home:  # an empty home, with only the folders commands run programs from
        argv += ["--tmpfs", home]
        for path in kept:
            argv += ["--ro-bind", path, path]
    argv += ["--bind", where, where, *_ours_in_tmp()]
    keep = read_only_inside(where) if keep is None else keep  # notebooks, our Python...
    for path in pinned(where, keep):  # the folders on the way: mount points, not renamed
        argv += ["--bind", path, path]
    for path in keep:
        argv += ["--ro-bind", path, path]
    hidden = hidden_paths()
    for path in hidden:
        if where == path or where.startswith(path.rstrip("/") + "/"):
            continue  # the folder asked for is inside it: that choice wins
        if any(path.startswith(other.rstrip("/") + "/") for other in hidden):
            continue  # inside a folder hidden already (a kernel's file in the runtime folder)
        if home and _inside(path, home) and not any(_inside(path, k) for k in [*kept, where]):
            continue  # gone with the rest of the home folder
        if os.path.isdir(path):
            argv += ["--tmpfs", path, "--remount-ro", path]  # an empty folder in its place
        else:
            argv += ["--ro-bind", "/dev/null", path]  # an empty file in its place
    if home:
        argv += ["--remount-ro", home]  # last: the mount points above are made in it
    return [*argv, "--chdir", where, "--"]


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _home_kept(where: str) -> tuple[str, list[str]]:
    """The home folder to empty in the sandbox ("" for none) and what comes back into it,
    read-only: each folder right under home that holds our Python, agentlab, or a PATH
    entry (``~/.pyenv``, ``~/.local``, ``~/miniconda3``...). The rest of home (a CLI's
    login token, a cache of keys, dotfiles) is out of sight. (Commands never run in a
    folder that holds home; if one did, only ``_HOME_SECRETS`` would be hidden.)"""
    home = os.path.realpath(os.path.expanduser("~"))
    if home == "/" or not os.path.isdir(home) or _inside(home, "/tmp") or _inside(home, where):
        return "", []
    import site

    needed = [sys.prefix, sys.exec_prefix, sys.base_prefix, os.path.dirname(_INIT)]
    needed += [os.path.dirname(os.path.dirname(os.path.realpath(sys.executable)))]
    needed += [*site.getsitepackages(), site.getuserbase()]
    needed += os.environ.get("PATH", "").split(os.pathsep)
    kept: set[str] = set()
    for path in needed:
        real = os.path.realpath(path) if path else ""
        if real and real != home and _inside(real, home):
            top = os.path.join(home, os.path.relpath(real, home).split(os.sep)[0])
            if os.path.isdir(top):
                kept.add(top)
    return home, sorted(kept)


@functools.cache
def _ours_in_tmp() -> list[str]:
    """Our interpreter and sandbox_init.py, bound back in read-only where they sit in
    the /tmp the sandbox empties (a virtualenv or a checkout made under /tmp)."""
    exe = os.path.realpath(sys.executable)
    places = {os.path.dirname(os.path.dirname(exe)), sys.base_prefix, os.path.dirname(_INIT)}
    argv: list[str] = []
    for place in sorted(os.path.realpath(p) for p in places):
        if place.startswith("/tmp/"):
            argv += ["--ro-bind", place, place]
    return argv


@functools.cache
def sandbox_problem() -> str:
    """Why commands cannot run in the sandbox here, or "" if they can (asked once).

    Tries ``bwrap ... true`` once: it fails where bwrap is missing or user
    namespaces are refused (some containers, hardened kernels).
    """
    if sys.platform != "linux":
        return t("bash.sandbox.not_linux", platform=sys.platform)
    program = shutil.which(BWRAP)
    if program is None:
        return t("bash.sandbox.no_bwrap")
    try:
        tried = subprocess.run(
            [*_bwrap_base(False), "--", "true"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        return t("bash.sandbox.refused", why=str(e))
    if tried.returncode != 0:
        why = tried.stderr.decode("utf-8", "replace").strip() or f"exit {tried.returncode}"
        return t("bash.sandbox.refused", why=why[:300])
    return ""


_noticed = False
_frozen: dict[str, bool] = {}  # folder -> commands may read it but not write it (a notebook's)
_READ_ONLY = (  # for the model, after a command that failed there
    "(this folder is read-only to commands: it holds a notebook. To change files, "
    "the user can give bash a folder of its own)"
)


def _notice_once() -> None:
    """Say once per process, on stderr, that commands run without the sandbox."""
    global _noticed
    if not _noticed:
        _noticed = True
        print(t("bash.sandbox.off", why=sandbox_problem()), file=sys.stderr)


# One sandbox runs many commands: starting bubblewrap costs more than most commands
# do, so each sandbox (a folder, network or not, the same hidden paths) is started
# once, with sandbox_init.py as its first process, and given one command at a time.
# After each command it kills every process left in the sandbox and empties /tmp,
# so each command still starts as in a fresh sandbox.

_INIT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sandbox_init.py")
MAX_SANDBOXES = 4  # kept at once; the one used longest ago is closed first
_REPLY = 10.0  # seconds to wait for the sandbox's answer before it is thrown away
_sandboxes: dict[tuple[Any, ...], _Sandbox] = {}
_sandboxes_lock = threading.Lock()


class _Sandbox:
    """One bubblewrap sandbox with sandbox_init.py as PID 1, and our end of its socket."""

    def __init__(self, bwrap_argv: list[str], scratch: list[str]) -> None:
        """Start it; raises OSError if bubblewrap fails."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        info, info_w = os.pipe()  # bwrap writes {"child-pid": ...} there, then closes it
        exe = os.path.realpath(sys.executable)  # a virtualenv's link may point out of it
        init = [exe, "-I", "-S", _INIT, str(theirs.fileno()), json.dumps(scratch)]
        with theirs:
            self.proc = subprocess.Popen(
                [*bwrap_argv[:-1], "--info-fd", str(info_w), "--", *init],
                env={},
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,  # bwrap's own complaints, read if it fails
                pass_fds=[theirs.fileno(), info_w],
                start_new_session=True,  # Ctrl-C in a terminal is for the command, not for it
            )
        os.close(info_w)
        self.sock = ours
        self.lock = threading.Lock()  # one command at a time
        self.pidfd = -1
        self.ran = False  # True once a command has run in it
        self.complaint = ""  # what bwrap or sandbox_init.py printed, once it has ended
        try:
            with open(info, "rb") as f:
                self.pid = json.loads(f.read())["child-pid"]  # sandbox_init.py, as we see it
            self.pidfd = os.pidfd_open(self.pid)  # readable once it has exited
        except (ValueError, KeyError, OSError) as e:
            self.close(now=True)
            raise OSError(self.complaint) from e
        ours.settimeout(_REPLY)

    def alive(self) -> bool:
        return self.sock.fileno() >= 0 and not select.select([self.pidfd], [], [], 0)[0]

    def run(
        self, argv: list[str], env: dict[str, str], out: _Capped, deadline: float, stop_after: int
    ) -> tuple[str, int | None]:
        """Run one command in the sandbox: (why it ended, as ``_collect`` says, and the exit code).

        Why may also be "lost" (the sandbox died meanwhile) or "cannot run: ...".
        The output pipe's write end goes to the sandbox with the command, so the
        command writes straight to us. Raises OSError if the command could not be sent.
        """
        read, write = os.pipe()
        try:
            try:
                message = json.dumps({"run": argv, "env": env}).encode()
                socket.send_fds(self.sock, [message], [write])
            finally:
                os.close(write)
            try:
                # The socket turns readable when bash has exited (or the sandbox died).
                why = _collect(read, self.sock.fileno(), out, deadline, stop_after)
            finally:
                exit_code, trouble = self._stop()  # Ctrl-C too: stop everything, then raise it
        finally:
            os.close(read)
        return trouble or why, exit_code

    def _stop(self) -> tuple[int | None, str | None]:
        """Have the sandbox stop what is left of the command: (bash's exit code, trouble).

        Trouble is None, "lost" (the sandbox died, garbled or was too slow: it is
        killed) or "cannot run: ..." (bash could not be started).
        """
        exit_code = error = None
        asked = False
        try:
            while True:
                # If it has not said "stopped" yet, ask it to stop (once).
                if not asked and not select.select([self.sock], [], [], 0)[0]:
                    self.sock.send(b'{"stop": true}')
                    asked = True
                reply = json.loads(self.sock.recv(65536) or b"null")
                exit_code = reply.get("exit", exit_code)
                error = reply.get("error", error)
                if "stopped" in reply:
                    break
        except KeyboardInterrupt:  # a second Ctrl-C while we waited
            self.close(now=True)
            raise
        except (OSError, ValueError, AttributeError):  # AttributeError: not a dict
            # Died, garbled or too slow. Killing it kills all that is in it; the
            # result stands if bash had exited and only the tidying was cut short.
            self.close(now=True)
            if exit_code is not None:
                return exit_code, None
            if not self.ran:  # bwrap could not set it up (a mount it refused...)
                return None, f"cannot run: the sandbox did not start ({self.complaint})"
            return None, "lost"
        self.ran = True
        if reply["stopped"] is not True:
            self.close()  # something it could not put back: start afresh next time
        return exit_code, None if error is None else f"cannot run: {error}"

    def close(self, now: bool = False) -> None:
        """Stop the sandbox: at end of file on its socket it kills everything and exits."""
        self.sock.close()
        try:
            self.proc.wait(0 if now else 2)
        except subprocess.TimeoutExpired:
            if self.pidfd >= 0:  # sandbox_init.py: PID 1 inside, killable from here
                with contextlib.suppress(OSError):
                    signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)
            self.proc.kill()
            self.proc.wait()
        if self.pidfd >= 0:
            os.close(self.pidfd)
            self.pidfd = -1
        if self.proc.stderr is not None and not self.proc.stderr.closed:
            said = self.proc.stderr.read(2000).decode("utf-8", "replace").strip()
            self.complaint = said or f"bwrap exit {self.proc.returncode}"
            self.proc.stderr.close()


def _run_sandboxed(
    argv: list[str],
    env: dict[str, str],
    where: str,
    network: bool,
    timeout: float,
    out: _Capped,
    stop_after: int,
) -> tuple[str, int | None, float]:
    """Run the command in the sandbox for ``where``: (why it ended, exit code, start time)."""
    for attempt in range(2):
        try:
            box = _sandbox_for(where, network)
        except OSError as e:  # bwrap failed before it could say where the sandbox is
            return f"cannot run: the sandbox did not start ({e})", None, time.monotonic()
        with box.lock:  # may wait for another thread's command to finish
            start = time.monotonic()  # the timeout counts from here
            try:
                return (*box.run(argv, env, out, start + timeout, stop_after), start)
            except OSError as e:
                if e.errno == errno.EMSGSIZE:  # more than one socket message can hold
                    return f"cannot run: the command is too long ({e.strerror})", None, start
                box.close(now=True)  # it had died before the command reached it: once more
                if attempt:
                    return f"cannot run: the sandbox did not start ({box.complaint})", None, start
    raise AssertionError("unreachable")


def _sandbox_for(where: str, network: bool) -> _Sandbox:
    """The running sandbox for this folder and these hidden paths, started if need be.

    A sandbox is kept for as long as nothing it was made from changes: the
    folder (deleted and made again, it is another folder), and each secret
    place (one made since must be hidden too). ``os.stat`` tells us cheaply.
    """
    key: list[Any] = [BWRAP, network]
    for path in [where, *_secret_places()]:
        try:
            found = os.stat(path)
        except OSError:
            continue
        key.append((path, found.st_dev, found.st_ino))
    with _sandboxes_lock:
        box = _sandboxes.pop(tuple(key), None)
        if box is None or not box.alive():
            if box is not None:
                box.close(now=True)
            real = os.path.realpath(where)
            keep = read_only_inside(real)  # notebooks, our Python, .git/config (protect.py)
            if keep == [real] and not _frozen.get(real):
                print(t("bash.read_only", folder=real), file=sys.stderr)  # once per folder
            _frozen[real] = keep == [real]
            box = _Sandbox(_bwrap_argv(real, network, keep), _scratch(where))
        _sandboxes[tuple(key)] = box  # the newest last
        old = [_sandboxes.pop(k) for k in list(_sandboxes)[:-MAX_SANDBOXES]]
    for other in old:
        with other.lock:
            other.close()
    return box


def _scratch(where: str) -> list[str]:
    """The sandbox's own tmpfs folders, emptied after each command: never the folder
    the command runs in (``cwd="/tmp"`` binds the host's /tmp there) or one inside it."""
    where = os.path.realpath(where).rstrip("/") + "/"
    return [f for f in ("/tmp", "/dev/shm", "/dev/mqueue") if not (f + "/").startswith(where)]


def close_sandboxes() -> None:
    """Stop every sandbox kept for commands, each once its command is over (done for
    you when Python exits; the next sandboxed command starts a new one)."""
    with _sandboxes_lock:
        boxes = list(_sandboxes.values())
        _sandboxes.clear()
    for box in boxes:
        with box.lock:
            box.close()


def _forget_sandboxes() -> None:
    # A forked child (check() runs student code in one) must not talk to our
    # sandboxes: it closes its copies of the sockets and starts its own if need be.
    global _sandboxes_lock
    _sandboxes_lock = threading.Lock()
    for box in _sandboxes.values():
        box.sock.close()
        if box.pidfd >= 0:
            os.close(box.pidfd)
        box.proc.returncode = 0  # not our child here: never wait for it
    _sandboxes.clear()


atexit.register(close_sandboxes)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_sandboxes)


class _Capped:
    """The first and last bytes of a stream, and how many bytes fell between."""

    def __init__(self, limit: int) -> None:
        self.head_size = limit // 2
        self.tail_size = limit - self.head_size
        self.head = bytearray()
        self.tail = bytearray()  # rolling: never longer than tail_size + one chunk
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.head_size - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        self.tail += chunk
        if len(self.tail) > self.tail_size:
            del self.tail[: len(self.tail) - self.tail_size]

    @property
    def cut(self) -> int:
        return self.total - len(self.head) - len(self.tail)

    def text(self) -> str:
        # errors="replace": bytes that are not UTF-8 (or a character split at
        # the cut) become U+FFFD instead of raising.
        head = self.head.decode("utf-8", errors="replace")
        tail = self.tail.decode("utf-8", errors="replace")
        if not self.cut:
            return head + tail
        note = (
            f"... [{self.cut:,} bytes cut; rerun with a narrower command, "
            "e.g. pipe through head, tail or grep] ..."
        )
        return _add_line(head, note) + "\n" + tail


def _add_line(text: str, line: str) -> str:
    """``text`` with ``line`` on a line of its own at the end."""
    if text and not text.endswith("\n"):
        text += "\n"
    return text + line


# ---------------------------------------------------------------------------
# Linux: keep secrets and leftover processes in hand while a command runs
# ---------------------------------------------------------------------------

_PR_GET_DUMPABLE, _PR_SET_DUMPABLE = 3, 4
_PR_SET_CHILD_SUBREAPER, _PR_GET_CHILD_SUBREAPER = 36, 37
# One command (or check) at a time may change these settings; the same thread may
# nest them (a benchmark that reaps around run_bash).
_guard_lock = threading.RLock()
GUARD = sys.platform == "linux"  # tests turn it off to show what it prevents


@functools.cache
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)  # the C library this Python already uses


def _prctl(option: int, value: int = 0) -> int:
    """Call Linux's ``prctl(option, value)``; raises OSError on failure."""
    result = int(_libc().prctl(option, ctypes.c_ulong(value), 0, 0, 0))
    if result < 0:
        raise OSError(ctypes.get_errno(), "prctl failed")
    return result


def _subreaper() -> int:
    flag = ctypes.c_int(0)
    _libc().prctl(_PR_GET_CHILD_SUBREAPER, ctypes.byref(flag), 0, 0, 0)
    return flag.value


def _children(pid: int) -> set[int]:
    """The process ids whose parent is ``pid`` (one of its threads), from /proc."""
    found: set[int] = set()
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                found.update(int(word) for word in f.read().split())
    except OSError:  # the process or thread has gone
        pass
    return found


def _descendants(roots: Iterable[int]) -> set[int]:
    found: set[int] = set()
    todo = list(roots)
    while todo:
        pid = todo.pop()
        if pid not in found:
            found.add(pid)
            todo.extend(_children(pid))
    return found


class Reaper:
    """The processes started while ``reaping()`` is on, wherever they went.

    ``before`` holds our children from before; ``stop()`` kills every process
    started since (a ``setsid`` daemon, a double-forked one, a forking loop),
    freezing each first (SIGSTOP) so that nothing can fork while we look.
    """

    def __init__(self) -> None:
        self.before = _children(os.getpid())

    def stop(self, keep: int | None = None) -> None:
        """Kill every process started since, except ``keep`` (a child its owner
        waits for itself), and reap the ones that came to us.

        A process that is exiting cannot be frozen, and its children move to us
        only as it goes: a look at that moment finds them under neither. So after
        each kill we wait until the killed are gone, then look again.
        """
        me = os.getpid()
        killed: set[int] = set()
        deadline = time.monotonic() + 2
        while True:
            frozen: set[int] = set()
            while found := _descendants(_children(me) - self.before) - frozen - killed - {keep}:
                for pid in found:
                    _signal(pid, signal.SIGSTOP)
                frozen |= found
            if not frozen:
                return
            for pid in frozen:
                _signal(pid, signal.SIGKILL)
            killed |= frozen
            # Orphans become our children: wait for them, or they stay as zombies.
            while _unsettled(killed, me) and time.monotonic() < deadline:
                for pid in _children(me) & killed:
                    with contextlib.suppress(ChildProcessError):
                        os.waitpid(pid, os.WNOHANG)
                time.sleep(0.001)


def _unsettled(pids: set[int], me: int) -> bool:
    """Whether one of ``pids`` still runs, or is a zombie that we or another of
    them must still reap (one whose parent is someone else's is settled)."""
    for pid in pids:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # gone
            continue
        if stat[0] != "Z" or int(stat[1]) == me or int(stat[1]) in pids:
            return True
    return False


@contextlib.contextmanager
def reaping() -> Iterator[Reaper | None]:
    """While inside (Linux): our process is a "child subreaper".

    A process that loses its parent (``setsid`` and exit, a double fork)
    becomes our child instead of init's, so the ``Reaper`` this yields can
    find and stop it. Yields None where that cannot be done (not Linux, or
    a sandbox that forbids ``prctl``): then only process groups are stopped.
    The setting belongs to the whole process and is put back afterwards (a
    permanent subreaper would collect the orphans of everything else it
    runs), so one thread at a time may be inside (the same thread may nest:
    the inner ``Reaper`` sees only what started after it). ``run_bash`` and
    ``check()`` use it; a process another thread starts meanwhile counts as ours.
    """
    me = os.getpid()
    if sys.platform != "linux" or not os.path.exists(f"/proc/{me}/task/{me}/children"):
        yield None
        return
    with _guard_lock:
        try:
            was = _subreaper()
            _prctl(_PR_SET_CHILD_SUBREAPER, 1)
            reaper: Reaper | None = Reaper()
        except OSError:
            reaper = None
        try:
            yield reaper
        finally:
            if reaper is not None:
                with contextlib.suppress(OSError):
                    _prctl(_PR_SET_CHILD_SUBREAPER, was)


def _new_lock() -> None:
    # A child forked while the lock is held (check() forks inside reaping())
    # would otherwise find it held forever.
    global _guard_lock
    _guard_lock = threading.RLock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_new_lock)


@contextlib.contextmanager
def _guarded() -> Iterator[Reaper | None]:
    """While a command runs (Linux): not dumpable, and a child subreaper (``reaping``).

    Yields the ``Reaper`` that stops what the command left, or None where
    processes cannot be tracked. Both settings are put back afterwards: a
    kernel that is never dumpable cannot be inspected by a debugger.
    """
    if not GUARD:
        yield None
        return
    with reaping() as reaper:
        if reaper is None:
            yield None
            return
        try:
            dumpable = _prctl(_PR_GET_DUMPABLE)
            _prctl(_PR_SET_DUMPABLE, 0)
        except OSError:
            dumpable = None
        try:
            yield reaper
        finally:
            if dumpable is not None:
                with contextlib.suppress(OSError):
                    _prctl(_PR_SET_DUMPABLE, dumpable)


def _signal(pid: int, sig: signal.Signals) -> None:
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _collect_local(
    proc: subprocess.Popen[bytes],
    out: _Capped,
    deadline: float,
    stop_after: int,
    reaper: Reaper | None = None,
) -> str:
    """Read the output into ``out`` until the command is done, then stop its group.

    Returns why reading ended (see ``_collect``); if "done", bash's exit code is
    in ``proc.returncode``.
    """
    assert proc.stdout is not None
    exit_fd = _exit_fd(proc.pid)  # becomes readable when bash exits (Linux)
    try:
        return _collect(proc.stdout.fileno(), exit_fd, out, deadline, stop_after, proc)
    finally:
        # However we got here (Ctrl-C too, which goes on up after this), stop
        # everything the command started, then reap it.
        _stop_group(proc, exit_fd, reaper)
        proc.stdout.close()
        if exit_fd is not None:
            os.close(exit_fd)


def _collect(
    pipe: int,
    exit_fd: int | None,
    out: _Capped,
    deadline: float,
    stop_after: int,
    proc: subprocess.Popen[bytes] | None = None,
) -> str:
    """Read the output from ``pipe`` into ``out`` until the command is done.

    ``exit_fd`` becomes readable when bash exits; without one (macOS) we look
    at ``proc`` ourselves. Returns why reading ended: "done" (bash exited),
    "timeout", or "too much" (over ``stop_after`` bytes).
    """
    sel = selectors.DefaultSelector()
    sel.register(pipe, selectors.EVENT_READ)
    if exit_fd is not None:
        sel.register(exit_fd, selectors.EVENT_READ)
    pipe_open = True
    exited_at: float | None = None  # when we saw bash itself exit
    try:
        while True:
            now = time.monotonic()
            if exited_at is None and exit_fd is None and proc and proc.poll() is not None:
                exited_at = now
            # Done when bash has exited and the pipe is closed, or when bash has
            # exited but a background job (`sleep 100 &`) still holds the pipe.
            if exited_at is not None and (not pipe_open or now >= exited_at + _DRAIN):
                return "done"
            if now >= deadline:
                return "timeout" if exited_at is None else "done"
            if out.total > stop_after:
                # Endless output (`yes`, `cat /dev/urandom`): keeping only the
                # cap in memory is not enough, the command must be stopped.
                return "too much"
            if not pipe_open and exit_fd is None and proc:
                # Nothing left to read and no exit fd to wait on: wait for bash.
                try:
                    proc.wait(deadline - now)
                except subprocess.TimeoutExpired:
                    return "timeout"
                return "done"
            wait = deadline - now
            if exited_at is not None:
                wait = min(wait, exited_at + _DRAIN - now)
            elif exit_fd is None:
                wait = min(wait, _POLL)  # no exit fd: wake up to look at bash ourselves
            # Block in the kernel until there is output, bash exits, or time is up.
            for key, _ in sel.select(wait):
                if key.fd == exit_fd:
                    sel.unregister(exit_fd)
                    exited_at = time.monotonic()
                    continue
                chunk = os.read(pipe, _CHUNK)
                if chunk:
                    out.add(chunk)
                else:  # end of file: every writer has closed the pipe
                    sel.unregister(pipe)
                    pipe_open = False
    finally:
        sel.close()


def _exit_fd(pid: int) -> int | None:
    """A file descriptor that becomes readable when ``pid`` exits, where the OS has one."""
    if sys.platform == "linux":
        try:
            return os.pidfd_open(pid)
        except OSError:  # an old kernel, or a sandbox that forbids it
            return None
    return None  # macOS and others: _collect checks proc.poll() every _POLL seconds


def _stop_group(
    proc: subprocess.Popen[bytes], exit_fd: int | None, reaper: Reaper | None = None
) -> None:
    """Stop the command's whole process group: SIGTERM, a short grace, then SIGKILL.

    With a ``reaper`` (Linux), then every other process the command started.
    """
    if _signal_group(proc.pid, signal.SIGTERM):
        # Give bash a moment to exit cleanly. Where we can, wait without
        # reaping it: its zombie keeps the group id from being reused.
        if exit_fd is not None:
            with selectors.DefaultSelector() as sel:
                sel.register(exit_fd, selectors.EVENT_READ)
                sel.select(_TERM_GRACE)
        else:
            try:
                proc.wait(_TERM_GRACE)
            except subprocess.TimeoutExpired:
                pass
        _signal_group(proc.pid, signal.SIGKILL)  # whatever ignored SIGTERM
        if exit_fd is not None and reaper is not None:
            # Wait until bash has exited (not reaped): only then are its orphans ours.
            with selectors.DefaultSelector() as sel:
                sel.register(exit_fd, selectors.EVENT_READ)
                sel.select(_TERM_GRACE)
    if reaper is not None:
        reaper.stop(keep=proc.pid)
    proc.wait()


def _signal_group(pgid: int, sig: signal.Signals) -> bool:
    """Send ``sig`` to every process in the group; False if there was nobody to send it to."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # macOS may refuse to signal zombies in the group; carry on to SIGKILL
    return True


def _collect_windows(proc: subprocess.Popen[bytes], out: _Capped, timeout: float) -> str:
    """Windows: no process groups or select() on pipes, so a simpler, less strict path.

    The output is read whole, then capped; on timeout ``taskkill /T`` stops
    the command and the processes it started.
    """
    try:
        data, _ = proc.communicate(timeout=timeout)
        why = "done"
    except subprocess.TimeoutExpired:
        subprocess.run(["taskkill", "/F", "/T", "/PID", str(proc.pid)], capture_output=True)
        data, _ = proc.communicate()
        why = "timeout"
    except KeyboardInterrupt:
        subprocess.run(["taskkill", "/F", "/T", "/PID", str(proc.pid)], capture_output=True)
        proc.wait()
        raise
    out.add(data)
    return why
