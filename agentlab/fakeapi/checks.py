"""Checking a Messages-API request the way the API does, before any model sees it.

``check_request(params)`` returns the API's error messages for one
``messages.create`` (or ``count_tokens``) request, ``[]`` when it would be
accepted. The offline clients raise the first one as the SDK's own
``BadRequestError`` (``bad_request``); ``agentlab serve`` answers it as a 400.

Every rule is written in ``agentlab.rules``; this module decides which ones a
request gets and keeps what only the emulator knows. In the order the API
reports them:

1. the request's fields, for the model the request names (``check_fields``:
   required ones, fields this API version does not know, ``max_tokens``,
   thinking types, forced ``tool_choice``, sampling parameters);
2. the history (``system_messages`` for this model, then ``validate``, or
   ``check_at`` on the messages not seen before; ``prefill`` unless the final
   turn is a ``pause_turn`` reply this caller gave out; ``trailing_space`` for a
   final assistant text), the tool definitions (``check_tools``), tool blocks
   in a request without tools (``tools_needed``) and the ``cache_control``
   marks (``cache_points``);
3. the thinking blocks, against the signatures the emulator wrote
   (``agentlab.fakeapi.thinking.check``).

Where the API's exact wording is not known from public material, a comment
beside the rule says so: it is agentlab's wording, not the API's.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Mapping
from typing import Any

from agentlab import models
from agentlab.fakeapi import thinking
from agentlab.rules import (
    STRICT_API_VERSION,
    as_dict,
    cache_points,
    check_at,
    check_fields,
    check_tools,
    known_fields,
    prefill,
    system_messages,
    tools_needed,
    trailing_space,
    validate,
)

__all__ = [
    "SDK_API_VERSION",
    "STRICT_API_VERSION",
    "bad_request",
    "check_headers",
    "check_request",
    "fingerprint",
    "known_fields",
]

# What the installed SDK (anthropic 2.16) sends as `anthropic-version`
# (anthropic/_constants.py, ANTHROPIC_API_VERSION). The offline clients have no
# headers, so their requests are checked as if they came with this one.
SDK_API_VERSION = "2026-10-21"


def check_headers(headers: Mapping[str, str]) -> list[str]:
    """Errors about the request's headers (lower-case names)."""
    if not headers.get("anthropic-version"):
        # The API's answer to a request without the header, as seen in public
        # curl transcripts and issue reports; not worded on a docs page we can cite.
        return ["anthropic-version: header is required"]
    return []


def check_request(
    params: Mapping[str, Any],
    *,
    seen: list[Any] | None = None,
    api_version: str = SDK_API_VERSION,
    beta: bool = False,
    count_tokens: bool = False,
    paused: Collection[str] | None = None,
    thought: Collection[str] | None = None,
) -> list[str]:
    """The API's error messages for this request; [] if it would be accepted.

    ``api_version`` is the request's ``anthropic-version`` (default: what the
    installed SDK sends). ``beta`` says the request came through the beta
    endpoint or with an ``anthropic-beta`` header (``thread`` and friends are
    then known fields). ``seen`` is the message list of an earlier request that
    passed: when the new history still starts with those very objects, only
    the new messages are checked, so a long conversation costs the same per
    turn as a short one. (Not so for preserved thinking's prefix check: it
    re-reads everything before the last bound thinking block, since an edit in
    place must be found; about 20 ms for 900 messages on the test machine.)

    ``paused`` holds the ``fingerprint`` of every ``pause_turn`` reply the
    caller gave out: a history that ends on one of those is a paused turn sent
    back to be continued, not a prefill. A caller that keeps no such record
    passes None, and then the prefill rule is not applied (it could not tell
    the two apart).

    ``thought`` holds the ids of tool calls whose reply the caller gave out with
    a thinking block (see ``agentlab.fakeapi.thinking.check``); None applies the strict rule.
    """
    info = models.get(params.get("model"))
    errors = check_fields(
        params, info, api_version=api_version, beta=beta, count_tokens=count_tokens
    )
    messages = params.get("messages")
    if "messages" in params:
        errors += _history(messages, info, seen, bool(params.get("thread")), paused)
    errors += [str(p) for p in check_tools(params.get("tools"))]
    tools, system = params.get("tools"), params.get("system")
    if isinstance(messages, list) and not errors:
        errors += [str(p) for p in tools_needed(messages, tools)]
    marked = [b for b in [*(tools or []), *(system if isinstance(system, list) else [])]
              if isinstance(b, Mapping) and "cache_control" in b]  # fmt: skip
    if marked and isinstance(messages, list):  # with the messages' own, at most four in all
        errors += [str(p) for p in cache_points(messages, tools, system)]
    if isinstance(messages, list) and messages:  # thinking blocks: unchanged, and not dropped
        since = len(seen) if seen and _extends(messages, seen) else 0
        errors += thinking.check(params, since=since, thought=thought)
    return errors


# ---------------------------------------------------------------------------
# The history
# ---------------------------------------------------------------------------


def _role(message: Any) -> Any:
    return message.get("role") if isinstance(message, Mapping) else None


def _history(
    messages: Any,
    info: models.ModelInfo | None,
    seen: list[Any] | None,
    thread: bool,
    paused: Collection[str] | None,
) -> list[str]:
    """The history's rules (``agentlab.rules``), for this model: its ``system`` messages,
    then every other rule; only the messages not ``seen`` when the history grew from
    an earlier request (the same cost at turn 10 and 1,000)."""
    if not isinstance(messages, list):
        return [str(p) for p in validate(as_dict(messages))]
    if thread and not messages:
        return []  # continuing a thread after pause_turn: the server holds the turn
    n = len(seen) if seen and _extends(messages, seen) else 0
    allowed = info is not None and info.system_messages
    errors = [str(p) for p in system_messages(messages, allowed, since=max(n - 1, 0))]
    if errors:
        return errors
    if n:
        for i in range(n, len(messages)):
            last = i == len(messages) - 1
            errors += [
                str(p) for p in check_at(i, messages[i - 1], messages[i], pending_ok=not last)
            ]
    else:
        # The prefix check is thinking.check's (it knows the model, system and tools).
        errors = [str(p) for p in validate(as_dict(messages)) if p.rule != "thinking_prefix"]
    if not errors and _prefill(messages[-1], info, paused):
        errors += [str(p) for p in prefill(len(messages) - 1, messages[-1])]
    if not errors and messages:
        errors += [str(p) for p in trailing_space(len(messages) - 1, messages[-1])]
    return errors


def fingerprint(content: Any) -> str:
    """A short digest of a message's content, the same for the reply as sent and
    as the client sends it back (plain dicts, no None fields)."""
    data = json.dumps(_no_none(as_dict(content)), sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(data.encode()).hexdigest()[:32]


def _no_none(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: _no_none(v) for k, v in data.items() if v is not None}
    if isinstance(data, list):
        return [_no_none(v) for v in data]
    return data


def _prefill(last: Any, info: models.ModelInfo | None, paused: Collection[str] | None) -> bool:
    """Does the prefill rule apply to this final message: a model without prefill, and
    not a ``pause_turn`` reply this caller gave out, sent back to be continued?"""
    if info is None or info.prefill or paused is None or not isinstance(last, Mapping):
        return False
    if last.get("role") != "assistant":
        return False
    return fingerprint(last.get("content")) not in paused


def _extends(messages: list[Any], seen: list[Any]) -> bool:
    """Does ``messages`` start with the same objects as ``seen``? (first and last checked)"""
    n = len(seen)
    return len(messages) > n and messages[0] is seen[0] and messages[n - 1] is seen[n - 1]


def bad_request(message: str, params: Mapping[str, Any] | None = None) -> Exception:
    """An ``anthropic.BadRequestError`` exactly as the SDK raises it for a 400; with
    ``params``, its ``request`` carries them as JSON, as the SDK's carries the body sent."""
    return _api_error(400, "invalid_request_error", message, params)


def not_found(message: str) -> Exception:
    """An ``anthropic.NotFoundError`` as the SDK raises it for a 404 (an unknown model)."""
    return _api_error(404, "not_found_error", message)


def unknown_model(params: Mapping[str, Any]) -> str | None:
    """The API's 404 text when the request names a model not in ``agentlab.models``.

    "model: NAME" is the API's 404 for an unknown model (public reports, 2025-2026;
    the same text ``agentlab serve`` answers)."""
    model = params.get("model")
    if isinstance(model, str) and models.get(model) is None:
        return f"model: {model}"
    return None


def _api_error(
    status: int, kind: str, message: str, params: Mapping[str, Any] | None = None
) -> Exception:
    import anthropic
    import httpx2

    body = {
        "type": "error",
        "error": {"type": kind, "message": message},
        "request_id": "req_offline",
    }
    sent = b"" if params is None else json.dumps(as_dict(dict(params)), default=str).encode()
    req = httpx2.Request("POST", "https://api.anthropic.com/v1/messages", content=sent)
    response = httpx2.Response(status, request=req, json=body)
    error = anthropic.NotFoundError if status == 404 else anthropic.BadRequestError
    return error(f"Error code: {status} - {body}", response=response, body=body)
