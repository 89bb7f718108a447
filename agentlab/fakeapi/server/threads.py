"""Message threads (beta ``message-threads-2026-08-12``) for the local server.

SDK 2.x ``client.beta.messages.tool_runner(...)`` and ``.thread(...)`` send
``thread: {"type": "create"}`` with the whole history first, then only the
new messages with ``thread: {"type": "continue", "previous_message_id": ID}``
and without ``system`` and ``tools`` (the server keeps those from the create).
The server rebuilds the whole request from what it stored under ``ID``.

The store is bounded in bytes (the JSON size of what it holds; the oldest
threads are forgotten first, and a thread larger than an eighth of the bound
is not kept, so one student cannot make every later request rebuild a huge
history) and keeps one entry per thread: continuing from a reply replaces it with the new reply, and a
second ``continue`` from the same reply answers 400 ``thread_already_continued``
(each response can be continued only once). An id it does not hold answers
404 ``thread_not_found``, and the SDK then resends the
whole history under a new thread (anthropic/lib/threads/_thread_state.py,
``recovers_from``). So forgetting is always safe, only slower.

A thread belongs to the credential (API key or bearer token) that created it:
continued with another one, it answers the same 404 ``thread_not_found``, so
one student can neither read nor grow another's thread (and ids are random).
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

# Request fields a `continue` takes from the thread (the SDK's CREATE_ONLY_FIELDS).
CREATE_ONLY = ("system", "tools")


@dataclass(frozen=True)
class Thread:
    """What the server holds of one conversation, up to one reply."""

    messages: list[Any]  # the whole history, the stored reply last
    fields: dict[str, Any]  # system and tools as the create sent them
    owner: str = ""  # a digest of the credential that created it
    size: int = 0  # bytes of JSON it stands for (0: measure it)


def json_size(data: Any) -> int:
    """Bytes of compact JSON ``data`` takes."""
    return len(json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode())


def owner(headers: dict[str, str]) -> str:
    """A digest of the request's credential (its key is never kept)."""
    key = headers.get("x-api-key") or headers.get("authorization") or ""
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]


class ThreadStore:
    """Threads by the id of their latest reply: at most ``max_threads`` of them and
    ``max_bytes`` of JSON in all (default 64 MB), each at most an eighth of that."""

    def __init__(self, max_threads: int = 1000, max_bytes: int = 64 * 1024 * 1024):
        self.max_threads, self.max_bytes = max_threads, max_bytes
        self._threads: OrderedDict[str, tuple[Thread, int]] = OrderedDict()
        self._continued: OrderedDict[str, None] = OrderedDict()  # ids already continued from
        self._lock = threading.Lock()
        self.bytes = 0  # held now

    def __len__(self) -> int:
        return len(self._threads)

    def clear(self) -> None:
        with self._lock:
            self._threads.clear()
            self._continued.clear()
            self.bytes = 0

    def continued(self, message_id: str) -> bool:
        """Was a reply with this id continued from already?"""
        with self._lock:
            return message_id in self._continued

    def get(self, message_id: str, owner: str = "") -> Thread | None:
        """The thread, if the store holds it for this owner."""
        with self._lock:
            held = self._threads.get(message_id)
        return held[0] if held is not None and held[0].owner == owner else None

    def save(self, message_id: str, thread: Thread, replaces: str | None = None) -> None:
        size = thread.size or json_size([thread.messages, thread.fields])
        with self._lock:
            if replaces is not None:
                self._drop(replaces)
                self._continued[replaces] = None
                while len(self._continued) > self.max_threads:
                    self._continued.popitem(last=False)
            if size > self.max_bytes // 8:
                return  # too large to keep: the SDK will resend it
            self._threads[message_id] = (thread, size)
            self.bytes += size
            while len(self._threads) > self.max_threads or self.bytes > self.max_bytes:
                self._drop(next(iter(self._threads)))

    def _drop(self, message_id: str) -> None:
        held = self._threads.pop(message_id, None)
        if held is not None:
            self.bytes -= held[1]


def expand(
    body: dict[str, Any], store: ThreadStore, owner: str = ""
) -> tuple[dict[str, Any] | None, str | None]:
    """The whole request a thread request stands for, and the id it continues.

    Returns ``(None, id)`` when a ``continue`` names a thread the store does not
    hold for this ``owner``.
    A request without ``thread`` (or a ``create``) is returned as it is.
    """
    thread = body.get("thread")
    if not isinstance(thread, dict) or thread.get("type") != "continue":
        return body, None
    previous = str(thread.get("previous_message_id"))
    held = store.get(previous, owner)
    if held is None:
        return None, previous
    whole = {k: v for k, v in body.items() if k not in CREATE_ONLY}
    whole.update(held.fields)
    whole["messages"] = held.messages + list(body.get("messages") or [])
    return whole, previous


def continue_errors(body: dict[str, Any]) -> list[str]:
    """A `continue` that repeats a create-only field is refused (the SDK's own
    comment on CREATE_ONLY_FIELDS). The API's wording is not public: agentlab's."""
    thread = body.get("thread")
    if not isinstance(thread, dict) or thread.get("type") != "continue":
        return []
    return [
        f"{f}: cannot be sent when continuing a thread; the thread keeps the `{f}` it was "
        "created with"
        for f in CREATE_ONLY
        if f in body
    ]
