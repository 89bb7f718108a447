"""``agentlab serve`` (also ``python -m agentlab.fakeapi.server``): one server for a class."""

from __future__ import annotations

import argparse
import errno
import ipaddress
import json
import socket
import sys
import threading
from collections.abc import Sequence
from typing import Any, NoReturn

from agentlab import models as model_table
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

Limits (one class on one laptop): bodies up to 32 MB (a 413 as soon as that
many bytes came, chunked or not), JSON nesting up to 100, --max-connections
open connections and never more than the open-file limit (ulimit -n) leaves
room for: one more closes the oldest idle connection, or gets 529 Overloaded
(which the SDK retries) if none is idle. A request's headers must arrive
within 10 s, its body within 30 s; idle connections are closed after 30 s.
Message threads are kept up to --max-thread-bytes (oldest forgotten first;
the SDK then resends the history) and only for the key that made them.
Nothing else is kept per finished request.
"""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        """One line and exit 2 (usage), instead of argparse's usage block."""
        self.exit(2, f"{self.prog}: {message} (see {self.prog} --help)\n")


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        port = -1
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(t("serve.bad_port", port=text))
    return port


def parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="agentlab serve",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (0.0.0.0: all)")
    p.add_argument("--port", type=_port, default=8765, help="port (default 8765; 0: any free one)")
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
    p.add_argument("--list-models", action="store_true", help="print the accepted models and stop")
    p.add_argument(
        "--max-connections",
        type=int,
        default=Limits.max_connections,
        help=f"open connections at most (default {Limits.max_connections}, lowered to what "
        "the open-file limit allows)",
    )
    p.add_argument(
        "--max-thread-bytes",
        type=int,
        default=64 * 1024 * 1024,
        metavar="BYTES",
        help="message threads kept, in bytes of JSON (default 64 MB; oldest forgotten first)",
    )
    p.add_argument("--chunk-delay", type=float, default=0.0, help="seconds between streamed pieces")
    p.add_argument("--quiet", action="store_true", help="do not log each request")
    return p


def _loopback(host: str) -> bool:
    """Does ``host`` (an address or a name) reach this machine only?"""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    try:
        return ipaddress.ip_address(socket.gethostbyname(host)).is_loopback
    except (OSError, ValueError):
        return False


def main(argv: Sequence[str] | None = None) -> int:
    """Run the server until Ctrl-C. Students then set ``ANTHROPIC_BASE_URL``."""
    args = parser().parse_args(argv)
    if args.list_models:
        for name in model_table.ids():
            print(name)
        return 0
    replies: Any = None
    try:
        if args.script:
            with open(args.script, encoding="utf-8") as f:
                replies = json.load(f)
        elif args.replay:
            from agentlab.fakeapi.recording import ReplayClient

            replies = ReplayClient(args.replay, match="request").reply
    except (OSError, ValueError) as e:
        print(f"agentlab serve: {args.script or args.replay}: {e}", file=sys.stderr)
        return 1

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
        max_thread_bytes=args.max_thread_bytes,
        log=None if args.quiet else log,
    )
    try:
        server.start()
    except OSError as e:
        if e.errno == errno.EADDRINUSE:
            print(t("serve.port_busy", port=args.port), file=sys.stderr)
        else:
            print(t("serve.cannot_listen", host=args.host, port=args.port, error=e.strerror or e),
                  file=sys.stderr)  # fmt: skip
        return 1
    if not _loopback(args.host):
        print(t("serve.reachable", host=args.host), file=sys.stderr, flush=True)
    try:
        what = t("serve.demo") if replies is None else args.script or args.replay
        print(t("serve.started", url=server.url, what=what), flush=True)
        # Listening on every address: students reach this machine by its name.
        public = f"http://{socket.gethostname()}:{server.port}"
        shared = args.host in ("", "0.0.0.0")
        print(t("serve.students", url=public if shared else server.url), flush=True)
        wait_for_ctrl_c()
    except KeyboardInterrupt:
        print(t("serve.stopped", n=server.count), flush=True)
    finally:
        server.stop()
    return 0


def wait_for_ctrl_c() -> None:
    threading.Event().wait()
