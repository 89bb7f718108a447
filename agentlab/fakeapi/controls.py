"""Generation controls applied to a reply the server built: ``tool_choice``,
``stop_sequences`` and ``max_tokens``, as the API applies them.

Sources: Anthropic docs, "Handling stop reasons"
(platform.claude.com/docs/en/build-with-claude/handling-stop-reasons) and
"Tool use" (tool_choice), checked 2026-11-30. A reply cut off by
``max_tokens`` keeps what fitted and says ``stop_reason: "max_tokens"``; a
``tool_use`` block cut off in its input is kept with the input parsed from the
part that fitted, as the SDK's stream parser reads partial JSON (jiter's
``partial_mode=True``: a string cut in the middle is left out, so no half
command appears), so a cut-off call can look whole: never run it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from agentlab.i18n import t

CHARS_PER_TOKEN = 4


def _size(block: dict[str, Any]) -> int:
    """Characters of a block's generated payload."""
    kind = block.get("type")
    if kind == "text":
        return len(block.get("text") or "")
    if kind == "tool_use":
        return len(json.dumps(block.get("input") or {}, ensure_ascii=False))
    if kind == "thinking":  # hidden thinking ("omitted" display) is written all the same
        from agentlab.fakeapi.thinking import hidden

        shown = block.get("thinking") or ""
        if shown or not block.get("signature"):
            return len(shown)
        return len(hidden(block) or "")
    return 0


def _cut(block: dict[str, Any], chars: int) -> dict[str, Any]:
    """The first ``chars`` characters of a block's payload."""
    kind = block.get("type")
    if kind == "text":
        return {**block, "text": block["text"][:chars]}
    if kind == "thinking":
        # Signed again for the part kept, so the cut block can be sent back. (What the
        # API signs when max_tokens cuts a thinking block is not in its docs.)
        return {**block, "thinking": block["thinking"][:chars], "signature": ""}
    if kind == "tool_use":
        import jiter  # the SDK's own partial-JSON parser (an anthropic dependency)

        raw = json.dumps(block.get("input") or {}, ensure_ascii=False)[:chars]
        try:
            partial = jiter.from_json(raw.encode(), partial_mode=True) if raw else {}
        except ValueError:
            partial = {}
        return {**block, "input": partial if isinstance(partial, dict) else {}}
    return block


def apply(data: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
    """``data`` (a message dict) changed as ``body``'s controls ask."""
    content = [dict(b) for b in data.get("content") or []]
    reason = data.get("stop_reason")
    choice = body.get("tool_choice") or {}
    if isinstance(choice, dict) and choice.get("type") in ("any", "tool"):
        # A forced call comes first: the API prefills the turn, so the model writes
        # no text before its tool_use blocks (docs, "Implement tool use", tool_choice).
        first = next((i for i, b in enumerate(content) if b.get("type") == "tool_use"), 0)
        content = [b for b in content[:first] if b.get("type") != "text"] + content[first:]
    if isinstance(choice, dict) and choice.get("type") == "none":
        content = [b for b in content if b.get("type") != "tool_use"]
    if isinstance(choice, dict) and choice.get("disable_parallel_tool_use"):
        uses = [i for i, b in enumerate(content) if b.get("type") == "tool_use"]
        content = [b for i, b in enumerate(content) if i not in uses[1:]]
    if reason == "tool_use" and not any(b.get("type") == "tool_use" for b in content):
        reason = "end_turn"
    stop = None
    out = data.get("usage", {}).get("output_tokens")
    sequences = [s for s in body.get("stop_sequences") or [] if isinstance(s, str) and s]
    for i, b in enumerate(content):
        if b.get("type") != "text" or not sequences:
            continue
        hits = [(b["text"].find(s), s) for s in sequences if s in b["text"]]
        if hits:
            at, stop = min(hits)
            content = content[:i] + ([{**b, "text": b["text"][:at]}] if at else [])
            reason = "stop_sequence"
            out = output_tokens(content)  # what was written up to the sequence, not the rest
            break
    budget = body.get("max_tokens")
    if isinstance(budget, int) and budget > 0:
        chars, used, kept = budget * CHARS_PER_TOKEN, 0, []
        for b in content:
            size = _size(b)
            if used + size > chars:
                if chars - used > 0 or b.get("type") == "tool_use":
                    kept.append(_cut(b, chars - used))
                content, reason, stop, out = kept, "max_tokens", None, budget
                break
            used += size
            kept.append(b)
        else:
            out = min(out or 1, budget) if out is not None else None
    result = {**data, "content": content, "stop_reason": reason, "stop_sequence": stop}
    if out is not None:
        result["usage"] = {
            **data.get("usage", {}),
            "output_tokens": max(1, min(out, budget or out)),
        }
    return result


def forcing(body: Mapping[str, Any]) -> bool:
    """Does ``body``'s ``tool_choice`` say whether the reply must call a tool?"""
    choice = body.get("tool_choice")
    return isinstance(choice, Mapping) and choice.get("type") in ("any", "tool", "none")


def disobeys(data: Mapping[str, Any], body: Mapping[str, Any], n: int) -> str | None:
    """Why scripted reply number ``n`` (a message dict) breaks ``body``'s
    ``tool_choice``, or None when it follows it.

    The API never sends such a reply (Anthropic docs, "Implement tool use",
    tool_choice, checked 2026-12-01: ``any`` must use one of the tools offered,
    ``tool`` exactly the one named, ``none`` none at all), so a scripted one is
    the script's mistake, not the code under test's. A refusal is let through:
    it stops a reply whatever was asked.
    """
    if not forcing(body) or data.get("stop_reason") == "refusal":
        return None
    choice: Mapping[str, Any] = body["tool_choice"]
    kind = choice["type"]
    names = [b.get("name") for b in data.get("content") or [] if b.get("type") == "tool_use"]
    if kind == "none" and names:
        shown, wanted = "none", t("script.tool_choice.none")
    elif kind == "any" and not names:
        shown, wanted = "any", t("script.tool_choice.any")
    elif kind == "tool" and (not names or any(x != choice.get("name") for x in names)):
        shown = f"tool {choice.get('name')}"
        wanted = t("script.tool_choice.tool", name=str(choice.get("name")))
    else:
        return None
    called = ", ".join(map(str, names)) or t("script.tool_choice.nothing")
    return t("script.tool_choice", n=n, choice=shown, wanted=wanted, got=called)


def output_tokens(content: list[dict[str, Any]]) -> int:
    """Estimated output tokens of a reply's content."""
    return max(1, math.ceil(sum(_size(b) for b in content) / CHARS_PER_TOKEN))


def unfit(data: Mapping[str, Any], body: Mapping[str, Any], n: int) -> str | None:
    """Why a scripted reply breaks the request's structured-output format, or None.

    With ``output_config.format`` (a JSON schema), the API's final text is JSON that
    fits the schema (structured-outputs docs, read 2026-12-01): a script whose
    finished reply is not is wrong, like one that breaks ``tool_choice``. A reply that
    calls a tool, was cut off, or refused is not checked (no final text yet).
    """
    from agentlab.fakeapi.demo import json_schema

    schema = json_schema(body)
    if schema is None or data.get("stop_reason") not in ("end_turn", "stop_sequence"):
        return None
    text = "".join(
        str(b.get("text", "")) for b in data.get("content") or [] if b.get("type") == "text"
    )
    try:
        value = json.loads(text)
    except ValueError:
        return f"scripted reply {n}: the request asks for JSON (output_config.format), but the reply's text is not JSON: {text[:80]!r}"
    import jsonschema  # type: ignore[import-untyped]

    try:
        jsonschema.validate(value, schema)
    except jsonschema.ValidationError as e:
        return (
            f"scripted reply {n}: its JSON does not fit output_config.format's schema: {e.message}"
        )
    except jsonschema.SchemaError:
        return None  # a schema the API would refuse; not the script's mistake
    return None
