"""The first process (PID 1) of a bash-tool sandbox: it runs the commands, one at a time.

``agentlab.tools.shell`` starts it once per sandbox, under bubblewrap::

    bwrap ... --as-pid-1 -- python -I -S sandbox_init.py FD '["/tmp", ...]'

and then sends it one command after another, which is much cheaper than a
new bubblewrap for each. FD is one end of a socket pair (``SOCK_SEQPACKET``:
one JSON message per packet); the other end stays with the Python that
started us. No command can reach it: our file descriptors are closed in
every command (``close_fds``), the pair has no name in the file system,
and we are not "dumpable", so no command may open ``/proc/1/fd`` or trace us.
As PID 1 we cannot be killed, or even stopped, from inside the sandbox, and
when we exit the kernel kills every process left in it.

Messages we receive:
  ``{"run": [bash, "-c", command], "env": {...}}`` with the write end of the
  output pipe attached (so the output goes straight to the caller, not through us);
  ``{"stop": true}``: stop what is left of the command.
Messages we send:
  ``{"exit": code}`` when bash has exited (-N if signal N killed it),
  or ``{"error": text}`` if bash could not be started;
  ``{"stopped": clean}`` once every process in the sandbox but us is gone and
  the scratch folders named on our command line (``/tmp``...) are empty again. ``clean`` is false
  when something could not be put back: the caller then throws this sandbox
  away and starts a new one.
At end of file (the caller closed its end, or died) we kill everything and exit.
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import selectors
import signal
import socket
import stat
import subprocess
import sys

GRACE = 0.5  # seconds between SIGTERM and SIGKILL, as outside the sandbox
_MAX_MESSAGE = 1024 * 1024  # more than a socket message may hold (the caller's SO_SNDBUF)


def receive(sock: socket.socket) -> tuple[dict | None, list[int]]:
    """The next message and the file descriptors sent with it; (None, []) at end of file."""
    data, fds, flags, _ = socket.recv_fds(sock, _MAX_MESSAGE, 1)
    for fd in fds:
        os.set_inheritable(fd, False)  # only bash's stdout and stderr are handed down
    if not data or flags & socket.MSG_TRUNC:
        return None, fds
    return json.loads(data), fds


def send(sock: socket.socket, message: dict) -> None:
    sock.send(json.dumps(message).encode())


_LIMITS = [getattr(resource, name) for name in dir(resource) if name.startswith("RLIMIT_")]


def state() -> tuple:
    """What a command could change about us and pass on to the next one: our limits
    (``prlimit`` works on any process of the same user), priority, scheduling and CPUs."""
    limits = [resource.getrlimit(limit) for limit in _LIMITS]
    nice = os.getpriority(os.PRIO_PROCESS, 0)
    return limits, nice, os.sched_getscheduler(0), os.sched_getaffinity(0), io_priority()


# ioprio_get(2) has no wrapper in Python; its number depends on the machine.
_IOPRIO_GET = {"x86_64": 252, "aarch64": 31}.get(os.uname().machine)
_LIBC = ctypes.CDLL(None)  # the C library Python already uses


def io_priority() -> int | None:
    """Our I/O priority (``ionice``), which any process of the same user may lower."""
    if _IOPRIO_GET is None:
        return None
    return int(_LIBC.syscall(_IOPRIO_GET, 1, 0))  # IOPRIO_WHO_PROCESS, ourselves


def kill_the_rest() -> None:
    """Kill every process in the sandbox but us, and reap them all.

    Every process is frozen first (SIGSTOP) until none is left unfrozen, so
    that nothing can fork while we look; orphans are ours, since we are PID 1.
    """
    frozen: set[int] = set()
    while found := {int(p) for p in os.listdir("/proc") if p.isdigit()} - frozen - {1}:
        for pid in found:
            signal_pid(pid, signal.SIGSTOP)
        frozen |= found
    for pid in frozen:
        signal_pid(pid, signal.SIGKILL)
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:  # no children left at all
            return


def signal_pid(pid: int, sig: int, group: bool = False) -> None:
    try:
        (os.killpg if group else os.kill)(pid, sig)
    except ProcessLookupError:
        pass


class Scratch:
    """The sandbox's own scratch folders (tmpfs), as named by our caller: never a
    folder of the host's, such as a workspace bound on /tmp. What they held at the
    start (the folders bubblewrap made for mount points) stays; the rest goes."""

    def __init__(self, folders: list[str]) -> None:
        self.kept = {folder: self.listing(folder, []) for folder in folders}
        self.look = self.looks()

    def listing(self, folder: str, problems: list[OSError]) -> set[str]:
        """Every path under ``folder`` on its own file system: a folder mounted
        inside (the workspace) is listed, but not what it holds."""
        device = os.lstat(folder).st_dev
        found: set[str] = set()
        for parent, folders, files in os.walk(folder, onerror=problems.append):
            found.update(os.path.join(parent, name) for name in folders + files)
            folders[:] = [f for f in folders if os.lstat(os.path.join(parent, f)).st_dev == device]
        return found

    def looks(self) -> list[tuple[int, int, int]]:
        """How each kept folder looks, cheaply. Nothing kept can be removed (each is a
        mount point or holds one), so a command can only add; on tmpfs (and mqueue) a
        folder's size counts its entries, so anything added changes a size somewhere."""
        found = []
        for folder, kept in self.kept.items():
            device = os.lstat(folder).st_dev
            for path in [folder, *kept]:
                info = os.lstat(path)
                if stat.S_ISDIR(info.st_mode) and info.st_dev == device:
                    found.append((info.st_size, info.st_nlink, info.st_ctime_ns))
        return found

    def tidy(self) -> bool:
        """Remove what commands left, and System V IPC objects; True if all is as it was."""
        problems: list[OSError] = []
        if self.looks() != self.look:
            for folder, kept in self.kept.items():
                for path in sorted(self.listing(folder, problems) - kept, reverse=True):
                    try:  # inner paths first
                        if os.path.isdir(path) and not os.path.islink(path):
                            os.rmdir(path)
                        else:
                            os.unlink(path)
                    except OSError as e:
                        problems.append(e)
                if self.listing(folder, problems) != kept:
                    return False
            self.look = self.looks()
        if ipc_objects():
            subprocess.run(["ipcrm", "--all"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            return not problems and not ipc_objects()
        return not problems


def ipc_objects() -> bool:
    """True if a command left System V shared memory, semaphores or message queues."""
    for kind in ("msg", "sem", "shm"):
        with open(f"/proc/sysvipc/{kind}", "rb") as f:
            if f.read().count(b"\n") > 1:  # a header, then one line per object
                return True
    return False


def spawn(argv: list[str], env: dict[str, str], pipe: int) -> int:
    """Start bash as ``subprocess.Popen`` would for us: stdin closed, stdout and stderr
    one pipe, its own session, default signals; every other fd is close-on-exec."""
    return os.posix_spawn(
        argv[0],
        argv,
        env,
        file_actions=[
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_DUP2, pipe, 1),
            (os.POSIX_SPAWN_DUP2, pipe, 2),
        ],
        setsid=True,
        setsigdef=(signal.SIGPIPE, signal.SIGXFSZ),  # Python ignores these two
    )


def run(sock: socket.socket, message: dict, pipe: int, scratch: Scratch, start: tuple) -> bool:
    """Run one command until "stop" comes, then stop what is left; False: we must exit.

    If bash exits and leaves nothing running, we need not wait for "stop" (nothing
    can write to the output any more): we tidy up at once and say so with the exit.
    """
    try:
        pid = spawn(message["run"], message["env"], pipe)
    except (OSError, ValueError) as e:  # e.g. a command too long for execve
        send(sock, {"error": str(e)})
        pid = 0
    finally:
        os.close(pipe)  # the command holds the only write end now
    sel = selectors.DefaultSelector()
    sel.register(sock, selectors.EVENT_READ)
    exit_fd, code = -1, None
    if pid:
        exit_fd = os.pidfd_open(pid)  # readable once bash has exited
        sel.register(exit_fd, selectors.EVENT_READ)
    request, waiting = None, True
    while waiting:
        for key, _ in sel.select():
            if key.fd == exit_fd:
                sel.unregister(exit_fd)
                alone = {p for p in os.listdir("/proc") if p.isdigit()} == {"1", str(pid)}
                code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
                if alone:  # nothing else runs: tidy up now, and say both in one message
                    os.close(exit_fd)
                    sel.close()
                    send(sock, {"exit": code, "stopped": scratch.tidy() and state() == start})
                    return True
                send(sock, {"exit": code})
            else:
                request, fds = receive(sock)
                for fd in fds:
                    os.close(fd)
                waiting = False
    sel.close()
    if pid:
        # As outside the sandbox: SIGTERM to its group, a grace for bash, then SIGKILL.
        signal_pid(pid, signal.SIGTERM, group=True)
        if code is None:
            with selectors.DefaultSelector() as grace:
                grace.register(exit_fd, selectors.EVENT_READ)
                grace.select(GRACE)
        signal_pid(pid, signal.SIGKILL, group=True)
        if code is None:
            os.waitpid(pid, 0)  # bash leads its group: it is gone now
        os.close(exit_fd)
    kill_the_rest()  # a setsid daemon, a double fork, ...: whatever is left
    if request is None or "stop" not in request:
        return False  # end of file, or not a message our caller sends
    send(sock, {"stopped": scratch.tidy() and state() == start})
    return True


def main() -> None:
    # We are PID 1: from inside the sandbox only signals we have a handler for
    # reach us, and SIGINT is the one Python installs. Commands get the default.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    _LIBC.prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE, 0: no ptrace, no /proc/1/fd or /proc/1/environ
    _LIBC.prctl(15, b"sandbox-init", 0, 0, 0)  # PR_SET_NAME: what ps and /proc/1/comm show
    sock = socket.socket(fileno=int(sys.argv[1]))
    sock.set_inheritable(False)  # bwrap handed it down to us; no command gets it
    os.closerange(3, sock.fileno())  # and nothing else we might have been handed
    os.closerange(sock.fileno() + 1, 1 << 20)
    scratch = Scratch(json.loads(sys.argv[2]))
    start = state()
    while True:
        message, fds = receive(sock)
        if message == {"stop": True} and not fds:
            continue  # for a command we had stopped already
        if message is None or "run" not in message or len(fds) != 1:
            break  # end of file, or not a message from our caller: give up
        if not run(sock, message, fds[0], scratch, start):
            break
    kill_the_rest()


if __name__ == "__main__":
    main()
