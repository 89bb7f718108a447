"""Thinking blocks offline: signing them, and refusing them when altered or dropped.

A model that thinks (``claude-sonnet-5-5`` by default, see ``agentlab.models``)
starts its replies with ``thinking`` blocks. With the default display
("omitted") the block's ``thinking`` text is empty and only its ``signature``
carries the model's hidden thinking. The API checks the signature when the
block comes back, so a harness must send thinking blocks back unchanged.

The real signature is opaque (encrypted by Anthropic). Ours is a teaching
imitation, readable on purpose::

    agentlab1.<base64 of the hidden thinking and the display>.<HMAC>

The HMAC (SHA-256) covers the model and the hidden thinking, and its key is
fixed and written below: it is **not a secret**, it only lets an offline
server verify, after a restart, a block it signed earlier. Anyone can forge
one; nothing here is security.

``check(params)`` gives the API's error texts for a request whose thinking
blocks were altered, or dropped from the turn being continued.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from collections.abc import Container, Mapping
from functools import lru_cache
from typing import Any

from agentlab import models
from agentlab.history import as_dict, blocks

__all__ = ["KEY", "check", "display", "hidden", "make_block", "mode", "sign", "verify"]

KEY = b"agentlab offline thinking signatures (not a secret)"
_PREFIX = "agentlab1"
THINKING_TYPES = ("thinking", "redacted_thinking")

# The display value that returns the thinking text. Earlier models' docs call
# it "summarized"; our sources do not confirm the name on claude-sonnet-5-5,
# so this is agentlab's best guess. "omitted" (empty text) is confirmed.
SHOWN = "summarized"


def _mac(model: str, payload: str) -> str:
    data = f"{model}\n{payload}".encode()
    return hmac.new(KEY, data, hashlib.sha256).hexdigest()


def sign(model: str, thinking: str, shown: str = "omitted") -> str:
    """The signature of a thinking block written by ``model``.

    ``thinking`` is the full hidden thinking; ``shown`` is the display the
    reply used ("omitted": the block's text is empty).
    """
    raw = json.dumps({"thinking": thinking, "display": shown}, ensure_ascii=False)
    payload = base64.urlsafe_b64encode(raw.encode()).decode()
    return f"{_PREFIX}.{payload}.{_mac(model, payload)}"


def _open(signature: str) -> dict[str, str] | None:
    """The data a signature carries, or None if it is not one of ours."""
    parts = signature.split(".")
    if len(parts) != 3 or parts[0] != _PREFIX:
        return None
    try:
        data = json.loads(base64.urlsafe_b64decode(parts[1].encode()))
    except (binascii.Error, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("thinking"), str):
        return None
    return data


@lru_cache(maxsize=4096)
def _valid(model: str, thinking: str, signature: str) -> bool:
    data = _open(signature)
    if data is None:
        return False
    _, payload, mac = signature.split(".")
    if not hmac.compare_digest(mac, _mac(model, payload)):
        return False  # signed for another model, or the signature was changed
    # The visible text must be what the reply showed: "" when omitted.
    expected = "" if data.get("display") == "omitted" else data["thinking"]
    return thinking == expected


def verify(model: str, block: Mapping[str, Any] | Any) -> bool:
    """Is this thinking block exactly as ``model`` wrote it?"""
    b = as_dict(block)
    thinking, signature = b.get("thinking"), b.get("signature")
    if not isinstance(thinking, str) or not isinstance(signature, str):
        return False
    return _valid(model, thinking, signature)


def hidden(block: Mapping[str, Any] | Any) -> str | None:
    """The hidden thinking a block's signature carries (our imitation lets you read it)."""
    data = _open(str(as_dict(block).get("signature") or ""))
    return data["thinking"] if data else None


def mode(params: Mapping[str, Any]) -> str | None:
    """The thinking this request runs: "adaptive", "between_tools", "enabled" or None.

    Without a ``thinking`` field, a model that thinks by default (see
    ``models.json``) runs "adaptive". A model missing from the table is
    treated like the default model (``models.DEFAULT_MODEL``): the offline
    demo imitates what a key would bring by default.
    """
    setting = params.get("thinking")
    if isinstance(setting, Mapping):
        kind = setting.get("type")
        return None if kind == "disabled" else str(kind)
    info = models.get(params.get("model")) or models.get(models.DEFAULT_MODEL)
    return "adaptive" if info is not None and info.thinks_by_default else None


def display(params: Mapping[str, Any]) -> str:
    """The display of this request's thinking: "omitted" (empty text) or ``SHOWN``.

    Adaptive thinking omits the text unless asked; the older ``enabled``
    thinking returned it (summarized) by default.
    """
    setting = params.get("thinking")
    asked = setting.get("display") if isinstance(setting, Mapping) else None
    if asked:
        return "omitted" if asked == "omitted" else SHOWN
    return SHOWN if mode(params) == "enabled" else "omitted"


def make_block(model: str, thinking: str, shown: str = "omitted") -> dict[str, Any]:
    """A thinking block as a reply carries it."""
    text = "" if shown == "omitted" else thinking
    return {"type": "thinking", "thinking": text, "signature": sign(model, thinking, shown)}


def check(
    params: Mapping[str, Any], *, since: int = 0, thought: Container[str] | None = None
) -> list[str]:
    """The API's error texts for this request's thinking blocks; [] if fine.

    ``since``: verify signatures only from this message on (a caller that
    already checked the earlier messages of this history passes their count).
    ``thought``: the ids of tool calls whose reply this caller gave out with a
    thinking block (an offline client or ``agentlab serve`` keeps them). With
    it, only those turns must keep their thinking block: a reply scripted by
    hand without one was never thinking, so nothing was dropped. Without it
    (None), every continued turn must start with one, as on the real API.

    - Every ``thinking`` block sent back must be unchanged and signed for
      the request's model (a block from another model is refused too).
      ``redacted_thinking`` blocks carry data we cannot check; they pass.
    - When the request thinks (see ``mode``), the assistant turn being
      continued must start with its thinking block. Our reading of the API's
      rule: that is the last assistant turn when the history ends on its
      tool results (an unfinished tool exchange). Earlier turns may drop
      their thinking blocks, and a new question after a finished answer
      needs none. Under "between_tools" there is no up-front thinking, so a
      turn answering the user's own text need not start with one.
    """
    messages = params.get("messages")
    if not isinstance(messages, list):
        return []
    model = str(params.get("model") or "")
    errors = []
    for i in range(max(since, 0), len(messages)):
        message = messages[i]
        if not isinstance(message, Mapping) or message.get("role") != "assistant":
            continue
        for k, b in enumerate(blocks(message)):
            if b.get("type") == "thinking" and not verify(model, b):
                errors.append(f"messages.{i}.content.{k}: Invalid `signature` in `thinking` block")
    kind = mode(params)
    if kind is None or len(messages) < 2:
        return errors
    last, turn = messages[-1], messages[-2]
    if not (isinstance(last, Mapping) and isinstance(turn, Mapping)):
        return errors
    results = [b for b in blocks(last) if b.get("type") == "tool_result"]
    if last.get("role") != "user" or not results or turn.get("role") != "assistant":
        return errors
    if kind == "between_tools" and len(messages) >= 3 and _asks(messages[-3]):
        return errors
    content = blocks(turn)
    first = content[0].get("type") if content else "text"
    if thought is not None and not any(
        b.get("id") in thought for b in content if b.get("type") == "tool_use"
    ):
        return errors  # not a turn this caller gave out with thinking: nothing was dropped
    if first not in THINKING_TYPES:
        # The real message goes on after "a thinking block"; the rest of its
        # wording is not known from public material, so we stop there (and add
        # no full stop). The "messages.N.content.0.type" location follows the
        # API's other field errors and is our guess.
        errors.append(
            f"messages.{len(messages) - 2}.content.0.type: Expected `thinking` or "
            f"`redacted_thinking`, but found `{first}`. When `thinking` is enabled, "
            "a final `assistant` message must start with a thinking block"
        )
    return errors


def _asks(message: Any) -> bool:
    """Is this a user turn with the person's own words (not only tool results)?"""
    if not isinstance(message, Mapping) or message.get("role") != "user":
        return False
    return any(b.get("type") != "tool_result" for b in blocks(message))
