"""The server-sent events of a streamed reply, in the order the API sends them
(Anthropic docs, "Streaming messages", platform.claude.com/docs/en/build-with-claude/streaming,
checked 2026-11-30): ``message_start``, then per block ``content_block_start``,
its deltas and ``content_block_stop`` (a ``ping`` after the first start), then
``message_delta`` with the stop reason and usage, and ``message_stop``."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any


def events(message: Any) -> Iterator[tuple[str, dict[str, Any]]]:
    """The server-sent events the API sends for ``message``, in order.

    Content deltas are marked with the event name ``"content_block_delta"`` so
    a stream fault can count them.
    """
    data = message.model_dump(mode="json", exclude_none=True)
    blocks, usage = data.pop("content"), data.pop("usage")
    start = {**data, "content": [], "stop_reason": None, "stop_sequence": None}
    start["usage"] = {**usage, "output_tokens": 1}
    yield "message_start", {"type": "message_start", "message": start}
    for i, block in enumerate(blocks):
        kind = block.get("type")
        if kind == "text":
            first: dict[str, Any] = {"type": "text", "text": ""}
            deltas = [
                {"type": "text_delta", "text": piece}
                for piece in re.findall(r"\S+\s*|\s+", block["text"])
            ]
        elif kind == "tool_use":
            first = {**block, "input": {}}
            raw = json.dumps(block.get("input") or {}, ensure_ascii=False)
            deltas = [
                {"type": "input_json_delta", "partial_json": raw[k : k + 16]}
                for k in range(0, len(raw), 16)
            ]
        elif kind == "thinking":
            first = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [{"type": "thinking_delta", "thinking": block.get("thinking", "")}]
            deltas.append({"type": "signature_delta", "signature": block.get("signature", "")})
        else:  # other blocks arrive whole
            first, deltas = block, []
        yield (
            "content_block_start",
            {"type": "content_block_start", "index": i, "content_block": first},
        )
        if i == 0:
            yield "ping", {"type": "ping"}
        for delta in deltas:
            yield "content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": i}
    final = {"stop_reason": data.get("stop_reason"), "stop_sequence": data.get("stop_sequence")}
    yield "message_delta", {"type": "message_delta", "delta": final, "usage": usage}
    yield "message_stop", {"type": "message_stop"}
