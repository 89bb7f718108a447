"""Message threads (beta ``message-threads-2026-08-12``) for the local server.

SDK 2.x ``client.beta.messages.tool_runner(...)`` and ``.thread(...)`` send
``thread: {"type": "create"}`` with the whole history first, then only the
new messages with ``thread: {"type": "continue", "previous_message_id": ID}``
and without ``system`` and ``tools`` (the server keeps those from the create).
The server rebuilds the whole request from what it stored under ``ID``.

The store is bounded (oldest threads are forgotten first) and keeps one entry
per thread: continuing from a reply replaces it with the new reply, and a
second ``continue`` from the same reply answers 400 ``thread_already_continued``
(each response can be continued only once). An id it does not hold answers
404 ``thread_not_found``, and the SDK then resends the
whole history under a new thread (anthropic/lib/threads/_thread_state.py,
``recovers_from``). So forgetting is always safe, only slower.
"""

from __future__ import annotations

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


class ThreadStore:
    """Threads by the id of their latest reply; at most ``max_threads`` of them."""

    def __init__(self, max_threads: int = 1000):
        self.max_threads = max_threads
        self._threads: OrderedDict[str, Thread] = OrderedDict()
        self._continued: OrderedDict[str, None] = OrderedDict()  # ids already continued from
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._threads)

    def clear(self) -> None:
        with self._lock:
            self._threads.clear()
            self._continued.clear()

    def continued(self, message_id: str) -> bool:
        """Was a reply with this id continued from already?"""
        with self._lock:
            return message_id in self._continued

    def get(self, message_id: str) -> Thread | None:
        with self._lock:
            return self._threads.get(message_id)

    def save(self, message_id: str, thread: Thread, replaces: str | None = None) -> None:
        with self._lock:
            if replaces is not None:
                self._threads.pop(replaces, None)
                self._continued[replaces] = None
                while len(self._continued) > self.max_threads:
                    self._continued.popitem(last=False)
            self._threads[message_id] = thread
            while len(self._threads) > self.max_threads:
                self._threads.popitem(last=False)


def expand(body: dict[str, Any], store: ThreadStore) -> tuple[dict[str, Any] | None, str | None]:
    """The whole request a thread request stands for, and the id it continues.

    Returns ``(None, id)`` when a ``continue`` names a thread the store does not hold.
    A request without ``thread`` (or a ``create``) is returned as it is.
    """
    thread = body.get("thread")
    if not isinstance(thread, dict) or thread.get("type") != "continue":
        return body, None
    previous = str(thread.get("previous_message_id"))
    held = store.get(previous)
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
