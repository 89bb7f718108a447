"""``agentlab serve`` (also ``python -m agentlab.fakeapi.server``): one server for a class."""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentlab.fakeapi.server.http import Limits
from agentlab.fakeapi.server.server import FakeMessagesServer
from agentlab.i18n import t

DESCRIPTION = """\
Serve the Anthropic Messages API locally: the offline demo model by default,
or a script of replies. Students point ANTHROPIC_BASE_URL at it and run the
same code they would run against the real API.

Checked as the real API checks (agentlab.fakeapi.checks): the anthropic-version header,
fields this API version does not know, the model name (404 unless
--any-model), per-model rules from agentlab/models.json (prefill, forced
tool_choice, thinking types, sampling parameters, system messages,
max_tokens), and the history (roles, tool_use/tool_result pairing, empty
blocks). Honoured: max_tokens, stop_sequences, tool_choice, streaming (SSE),
count_tokens, GET /v1/models, message threads (the SDK's tool_runner) and
prompt caching (estimated tokens, 4 characters each).
"""

EPILOG = """\
Not imitated: a real model (the demo follows a short script), real token
counts, rate limits, server tools, images and files, batches, and the
signature check of thinking blocks beyond what agentlab.fakeapi.checks knows. Error
texts the public docs do not give are agentlab's wording (marked in the code).

Limits (one class on one laptop): bodies up to 32 MB, JSON nesting up to 100,
--max-connections open connections (one more gets 529 Overloaded, which the
SDK retries), idle connections closed after 30 s, a request that has not fully
arrived after 30 s is refused. Nothing is kept per finished request.
"""


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="agentlab serve",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (0.0.0.0: all)")
    p.add_argument("--port", type=int, default=8765, help="port (default 8765; 0: any free one)")
    p.add_argument("--script", metavar="JSON", help="a JSON list of replies to play in order")
    p.add_argument(
        "--replay", metavar="JSONL", help="answer from a recording made with agentlab.record"
    )
    p.add_argument(
        "--any-model",
        action="store_true",
        help="accept any model name (default: only the models in agentlab/models.json; "
        "others get the API's 404)",
    )
    p.add_argument(
        "--max-connections",
        type=int,
        default=Limits.max_connections,
        help=f"open connections at most (default {Limits.max_connections})",
    )
    p.add_argument("--chunk-delay", type=float, default=0.0, help="seconds between streamed pieces")
    p.add_argument("--quiet", action="store_true", help="do not log each request")
    return p


def _restart_with_few_arenas(argv: list[str]) -> None:
    """Start again (same process id) with glibc limited to two malloc arenas.

    Each connection's thread would otherwise get an arena of its own, and the
    memory a busy class used would stay with the server afterwards (measured
    in benchmarks/serve_load.py: +14 MB after 500 students, +5 MB with this).
    The variable is read when the process starts, hence the restart.
    """
    import agentlab

    root = str(Path(agentlab.__file__).resolve().parent.parent)
    path = os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)
    env = {**os.environ, "MALLOC_ARENA_MAX": "2", "PYTHONPATH": path}
    sys.stdout.flush()
    os.execve(sys.executable, [sys.executable, "-m", "agentlab.fakeapi.server", *argv], env)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the server until Ctrl-C. Students then set ``ANTHROPIC_BASE_URL``."""
    args = parser().parse_args(argv)
    if sys.platform.startswith("linux") and "MALLOC_ARENA_MAX" not in os.environ:
        _restart_with_few_arenas(sys.argv[1:] if argv is None else list(argv))
    replies: Any = None
    if args.script:
        with open(args.script, encoding="utf-8") as f:
            replies = json.load(f)
    elif args.replay:
        from agentlab.fakeapi.recording import ReplayClient

        replies = ReplayClient(args.replay, match="request").reply

    def log(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    server = FakeMessagesServer(
        replies,
        host=args.host,
        port=args.port,
        any_model=args.any_model,
        chunk_delay=args.chunk_delay,
        record=0,  # a class server keeps nothing per request
        limits=Limits(max_connections=args.max_connections),
        log=None if args.quiet else log,
    )
    with server:
        what = t("serve.demo") if replies is None else args.script or args.replay
        print(t("serve.started", url=server.url, what=what), flush=True)
        # Listening on every address: students reach this machine by its name.
        public = f"http://{socket.gethostname()}:{server.port}"
        shared = args.host in ("", "0.0.0.0")
        print(t("serve.students", url=public if shared else server.url), flush=True)
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            print(t("serve.stopped", n=server.count), flush=True)
    return 0
