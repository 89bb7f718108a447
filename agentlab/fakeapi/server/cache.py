"""Token estimates and the prompt-cache simulation of the local server.

A request is read as a row of *blocks* in the order the API caches them:
each tool definition, the system prompt (or each of its blocks), then every
content block of every message. Rules followed (Anthropic docs, "Prompt
caching", platform.claude.com/docs/en/build-with-claude/prompt-caching,
checked 2026-11-30):

- a ``cache_control`` on a tool, a system block or a message block is a
  breakpoint; a top-level ``cache_control`` puts one on the last block (the
  growing prefix is cached automatically);
- at each breakpoint the longest prefix already in the cache is read, looking
  back up to 20 blocks before it, so a breakpoint moved to the newest message
  each turn reads what the previous turn wrote;
- the prefix up to the last breakpoint is written (what was not read);
  tokens after the last breakpoint are plain input;
- a prefix shorter than the model's minimum (512 tokens on Sonnet 5.5) is
  neither written nor read;
- entries live 5 minutes (``"ttl": "1h"``: an hour), refreshed by each read.

Tokens are estimates: 4 characters of compact JSON a token.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import OrderedDict
from typing import Any

from agentlab.history import as_dict

LOOKBACK = 20  # blocks looked back from each breakpoint
TTL = {"5m": 300.0, "1h": 3600.0}


def tokens(data: Any) -> int:
    """A rough token count: 4 characters of compact JSON a token (at least 1)."""
    if data is None or data == [] or data == "":
        return 0
    return max(1, len(json.dumps(data, ensure_ascii=False, separators=(",", ":"))) // 4)


def _by_ttl(five: int, hour: int) -> dict[str, int]:
    return {"ephemeral_5m_input_tokens": five, "ephemeral_1h_input_tokens": hour}


def _plain(block: Any) -> tuple[Any, dict[str, Any] | None]:
    """The block without its ``cache_control``, and that ``cache_control``."""
    if isinstance(block, dict) and "cache_control" in block:
        rest = {k: v for k, v in block.items() if k != "cache_control"}
        return rest, block["cache_control"]
    return block, None


def blocks_of(body: dict[str, Any]) -> list[tuple[Any, dict[str, Any] | None]]:
    """The request as (block, cache_control) pairs in cache order."""
    out: list[tuple[Any, dict[str, Any] | None]] = []
    for tool in as_dict(list(body.get("tools") or [])):
        out.append(_plain(tool))
    system = as_dict(body.get("system"))
    if isinstance(system, list):
        out += [_plain(b) for b in system]
    elif system:
        out.append((system, None))
    for m in as_dict(list(body.get("messages") or [])):
        if not isinstance(m, dict):
            out.append((m, None))
            continue
        content = m.get("content")
        items = content if isinstance(content, list) else [content]
        for k, b in enumerate(items):
            block, mark = _plain(b)
            out.append(({"role": m.get("role"), "first": k == 0, "block": block}, mark))
    top = body.get("cache_control")
    if top and out:
        out[-1] = (out[-1][0], top)
    return out


def count(body: dict[str, Any]) -> int:
    """Estimated input tokens of the whole request (what count_tokens answers)."""
    return max(1, sum(tokens(b) for b, _ in blocks_of(body)))


class PromptCache:
    """Prefix digests with an expiry time: bounded, safe to share between threads."""

    def __init__(self, max_entries: int = 20_000):
        self.max_entries = max_entries
        self._entries: OrderedDict[str, float] = OrderedDict()
        self._lock = threading.Lock()

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)

    def usage(self, body: dict[str, Any], min_tokens: int) -> dict[str, Any]:
        """The input counts of this request, with ``cache_creation`` (what was written,
        by TTL, as the API's usage object has it); reads and writes the cache."""
        rows = blocks_of(body)
        sizes = [tokens(b) for b, _ in rows]
        total = max(1, sum(sizes))
        marks = [i for i, (_, mark) in enumerate(rows) if mark]
        plain = {"input_tokens": total, "cache_creation_input_tokens": 0,
                 "cache_read_input_tokens": 0, "cache_creation": _by_ttl(0, 0)}  # fmt: skip
        if not marks:
            return plain
        cum, digests = [], []
        run, h = 0, hashlib.sha256(str(body.get("model")).encode())
        for (block, _), size in zip(rows, sizes):
            h.update(json.dumps(block, sort_keys=True, ensure_ascii=False).encode())
            run += size
            cum.append(run)
            digests.append(h.hexdigest())
        last = marks[-1]
        if cum[last] < min_tokens:
            return plain  # too short to cache: all of it is input
        now = time.monotonic()
        candidates = sorted(
            {j for bp in marks for j in range(max(0, bp - LOOKBACK + 1), bp + 1)}, reverse=True
        )
        read = 0
        with self._lock:
            for j in candidates:
                expiry = self._entries.get(digests[j])
                if cum[j] >= min_tokens and expiry is not None and expiry > now:
                    read = cum[j]
                    self._refresh(digests[j], rows[j][1], now)
                    break
            for bp in marks:
                if cum[bp] >= min_tokens:
                    self._refresh(digests[bp], rows[bp][1], now)
        written = cum[last] - read
        by_ttl, done = {"5m": 0, "1h": 0}, read  # each breakpoint's new part, at its TTL
        for bp in marks:
            if cum[bp] > done:
                mark = rows[bp][1]
                by_ttl["1h" if isinstance(mark, dict) and mark.get("ttl") == "1h" else "5m"] += (
                    cum[bp] - done
                )
                done = cum[bp]
        return {
            "input_tokens": total - cum[last],
            "cache_creation_input_tokens": written,
            "cache_read_input_tokens": read,
            "cache_creation": _by_ttl(by_ttl["5m"], by_ttl["1h"]),
        }

    def _refresh(self, digest: str, mark: Any, now: float) -> None:
        ttl = TTL.get(mark.get("ttl", "5m"), TTL["5m"]) if isinstance(mark, dict) else TTL["5m"]
        self._entries[digest] = max(self._entries.get(digest, 0.0), now + ttl)
        self._entries.move_to_end(digest)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)
