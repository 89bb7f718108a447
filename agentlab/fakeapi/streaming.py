"""A reply as the stream of server-sent events the Messages API sends for it.

With ``"stream": true`` the API does not send the finished message: it sends
``message_start`` (the message with no content yet), then for each content
block ``content_block_start``, its pieces as ``content_block_delta`` events,
``content_block_stop``, and at the end ``message_delta`` (the stop reason, a
refusal's ``stop_details``, and the usage) and ``message_stop``. A ``ping`` may
come at any time. (platform.claude.com/docs/en/build-with-claude/streaming,
"Event types"; for ``stop_details``: .../strengthen-guardrails/handle-streaming-refusals.)

The offline clients and the local server (``agentlab serve``) both send a
reply this way, so the SDK's own streaming code rebuilds it on the other side.
How a real reply is cut into pieces is not documented; here text goes word by
word and a tool's input in pieces of 16 characters of JSON. A tool call that
``max_tokens`` cut off (the last block of a ``max_tokens`` reply) streams its
JSON without the closing brace, as a cut call's JSON never closes: a client
that parses the whole of it strictly gets an error, not a different command.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

__all__ = ["events", "sse"]

_WORDS = re.compile(r"\S+\s*|\s+")


def _pieces(block: dict[str, Any], cut: bool) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A block as it starts (empty) and the deltas that fill it (``cut``: max_tokens cut it)."""
    kind = block.get("type")
    if kind == "text":
        deltas = [{"type": "text_delta", "text": w} for w in _WORDS.findall(block["text"])]
        return {"type": "text", "text": ""}, deltas
    if kind == "tool_use":
        raw = json.dumps(block.get("input") or {}, ensure_ascii=False)
        raw = raw[:-1] if cut else raw
        deltas = [
            {"type": "input_json_delta", "partial_json": raw[k : k + 16]}
            for k in range(0, len(raw), 16)
        ]
        return {**block, "input": {}}, deltas
    if kind == "thinking":  # hidden ("omitted"): the signature alone (the docs do not say)
        deltas = (
            [{"type": "thinking_delta", "thinking": block["thinking"]}]
            if block.get("thinking")
            else []
        )
        deltas.append({"type": "signature_delta", "signature": block.get("signature", "")})
        return {"type": "thinking", "thinking": "", "signature": ""}, deltas
    return block, []  # other blocks (redacted_thinking, server tool results) arrive whole


def events(message: Any) -> Iterator[tuple[str, dict[str, Any]]]:
    """The ``(event name, data)`` pairs the API streams for ``message``, in order.

    ``message`` is an ``anthropic.types.Message`` (or any pydantic model of one).
    """
    data = message.model_dump(mode="json", exclude_none=True)
    blocks, usage = data.pop("content"), data.pop("usage")
    ending = {key: data.pop(key, None) for key in ("stop_reason", "stop_sequence", "stop_details")}
    start = {**data, "content": [], "stop_reason": None, "stop_sequence": None}
    start["usage"] = {**usage, "output_tokens": 1}
    yield "message_start", {"type": "message_start", "message": start}
    for i, block in enumerate(blocks):
        cut = ending["stop_reason"] == "max_tokens" and i == len(blocks) - 1
        first, deltas = _pieces(block, cut)
        yield (
            "content_block_start",
            {"type": "content_block_start", "index": i, "content_block": first},
        )
        if i == 0:
            yield "ping", {"type": "ping"}
        for delta in deltas:
            yield "content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": i}
    if ending["stop_details"] is None:
        del ending["stop_details"]
    yield "message_delta", {"type": "message_delta", "delta": ending, "usage": usage}
    yield "message_stop", {"type": "message_stop"}


def sse(name: str, data: dict[str, Any]) -> bytes:
    """One event in the wire format of server-sent events."""
    return f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()
