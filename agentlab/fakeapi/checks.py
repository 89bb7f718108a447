"""Checking a Messages-API request the way the API does, before any model sees it.

``check_request(params)`` returns the API's error messages for one
``messages.create`` (or ``count_tokens``) request, ``[]`` when it would be
accepted. The offline clients raise the first one as the SDK's own
``BadRequestError`` (``bad_request``); ``agentlab serve`` answers it as a 400.

Three layers, in the order the API reports them:

1. the request's fields: required ones, fields this API version does not know
   (``anthropic-version: 2026-10-21`` refuses them: "<field>: Extra inputs are
   not permitted"), ``max_tokens``;
2. what the model accepts (from ``agentlab.models``): thinking types, forced
   ``tool_choice``, sampling parameters, assistant prefill, ``system`` messages;
3. the history itself and the tool definitions, by the rules in
   ``agentlab.rules`` (``validate``, ``check_at``, ``system_messages``,
   ``prefill``, ``check_tools``, ``cache_points``): roles, pairing of
   ``tool_use`` and ``tool_result``, empty blocks, tool names.

Where the API's exact wording is not known from public material, the message
below says so in a comment: it is agentlab's wording, not the API's.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Mapping
from functools import lru_cache
from typing import Any

from agentlab import models
from agentlab.fakeapi import thinking
from agentlab.rules import (
    as_dict,
    cache_points,
    check_at,
    check_tools,
    prefill,
    system_messages,
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

# What the installed SDK (anthropic 2.14) sends as `anthropic-version`
# (anthropic/_constants.py, ANTHROPIC_API_VERSION). The offline clients have no
# headers, so their requests are checked as if they came with this one.
SDK_API_VERSION = "2026-10-21"
# From this version on, unknown top-level fields are refused
# (Anthropic's Claude Sonnet 5.5 migration guide, platform.claude.com/docs, checked 2026-11-30).
STRICT_API_VERSION = "2026-10-21"
SAMPLING = ("temperature", "top_p", "top_k")
# Keyword arguments of the SDK's create() that are request options, not body fields.
SDK_OPTIONS = ("extra_headers", "extra_query", "extra_body", "timeout")


@lru_cache(maxsize=4)
def known_fields(beta: bool = False, count_tokens: bool = False) -> frozenset[str]:
    """The top-level request fields the installed SDK can send (its TypedDicts).

    ``beta`` adds the beta-only fields (``thread``, ``context_management`` ...);
    ``betas`` itself travels as the ``anthropic-beta`` header, not in the body.
    """
    from anthropic.types import message_count_tokens_params, message_create_params
    from anthropic.types.beta import message_create_params as beta_params

    def keys(td: Any) -> set[str]:
        return set(td.__required_keys__) | set(td.__optional_keys__)

    if count_tokens:
        return frozenset(keys(message_count_tokens_params.MessageCountTokensParams))
    fields = keys(message_create_params.MessageCreateParamsBase) | {"stream"}
    if beta:
        fields |= keys(beta_params.MessageCreateParamsBase) - {"betas"}
    return frozenset(fields)


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
    errors: list[str] = []
    required = ("model", "messages") if count_tokens else ("model", "max_tokens", "messages")
    errors += [f"{key}: Field required" for key in required if key not in params]
    if "model" in params and not isinstance(params["model"], str):
        # pydantic's wording for a wrong type, as the API's other field errors use it;
        # not confirmed for this field.
        errors.append("model: Input should be a valid string")
    info = models.get(params.get("model"))
    errors += _fields(params, info, api_version, beta, count_tokens)
    if not count_tokens:
        errors += _max_tokens(params, info)
    if "metadata" in params and not isinstance(params["metadata"], Mapping):
        # pydantic's wording, which the API's 400s use; the SDK's type is MetadataParam.
        errors.append("metadata: Input should be a valid dictionary")
    errors += _types(params)
    errors += _thinking(params, info)
    errors += _output_config(params.get("output_config"))
    errors += _tool_choice(params, info)
    messages = params.get("messages")
    if "messages" in params:
        errors += _history(messages, info, seen, bool(params.get("thread")), paused)
    errors += [str(p) for p in check_tools(params.get("tools"))]
    tools, system = params.get("tools"), params.get("system")
    marked = [b for b in [*(tools or []), *(system if isinstance(system, list) else [])]
              if isinstance(b, Mapping) and "cache_control" in b]  # fmt: skip
    if marked and isinstance(messages, list):  # with the messages' own, at most four in all
        errors += [str(p) for p in cache_points(messages, tools, system)]
    if isinstance(messages, list) and messages:  # thinking blocks: unchanged, and not dropped
        since = len(seen) if seen and _extends(messages, seen) else 0
        errors += thinking.check(params, since=since, thought=thought)
    return errors


# ---------------------------------------------------------------------------
# Fields and settings
# ---------------------------------------------------------------------------


def _fields(
    params: Mapping[str, Any],
    info: models.ModelInfo | None,
    api_version: str,
    beta: bool,
    count_tokens: bool,
) -> list[str]:
    sampling = True if info is None else info.sampling
    if api_version >= STRICT_API_VERSION:
        allowed = known_fields(beta, count_tokens) | set(SDK_OPTIONS)
        allowed |= set(SAMPLING) if sampling is True else set()
        return [f"{key}: Extra inputs are not permitted" for key in params if key not in allowed]
    # Older versions ignore unknown fields; sampling follows the model's row.
    if sampling is True or info is None:
        return []
    if sampling == "default":
        # The live API's 400 on opus-4-7/4-8, sonnet-5 and opus-5, as measured and
        # reported publicly (2026-04 to 2026-08; sources in models.json "sampling"): the
        # default `temperature` (1) is accepted, other values are refused with this text.
        # top_p and top_k: no public measurement; agentlab refuses them with the same text.
        return [
            f"`{key}` is deprecated for this model."
            for key in SAMPLING
            if key in params and not (key == "temperature" and params[key] == 1)
        ]
    # A model that takes no sampling parameter at all; the API's wording for this case is
    # not public: this sentence is agentlab's.
    return [f"{key}: is not supported by {info.id}" for key in SAMPLING if key in params]


# Top-level fields and the type each must have (the SDK's request TypedDicts), with
# pydantic's word for it. A string is not a list here, though Python could iterate it.
_TYPES: dict[str, tuple[type | tuple[type, ...], str]] = {
    "stream": (bool, "a valid boolean"),
    "stop_sequences": ((list, tuple), "a valid list"),
    "tools": ((list, tuple), "a valid list"),
    "thinking": (Mapping, "a valid dictionary"),
    # A string or a list of text blocks (the SDK's MessageCreateParams). Pydantic names
    # each member of a union in its own error; the API's sentence for this field is not
    # public, so this joins pydantic's two phrases (agentlab's wording).
    "system": ((str, list, tuple), "a valid string or a valid list"),
}


def _types(params: Mapping[str, Any]) -> list[str]:
    # The API's 400s for a wrong type use pydantic's wording ("metadata: Input should be
    # a valid dictionary"); not confirmed for each of these fields.
    return [
        f"{key}: Input should be {word}"
        for key, (kind, word) in _TYPES.items()
        if params.get(key) is not None and not isinstance(params[key], kind)
    ]


def _max_tokens(params: Mapping[str, Any], info: models.ModelInfo | None) -> list[str]:
    value = params.get("max_tokens")
    if "max_tokens" not in params:
        return []
    if not isinstance(value, int) or isinstance(value, bool):
        # pydantic's wording, as the API's other type errors use it; whether the API
        # would turn "5" into 5 (pydantic's lax mode) is not public: agentlab refuses it.
        return ["max_tokens: Input should be a valid integer"]
    if value < 1:
        return ["max_tokens: Input should be greater than or equal to 1"]
    if info is not None and value > info.max_output:
        # Wording as reported publicly for earlier models (2025-2026 issue threads).
        return [
            f"max_tokens: {value} > {info.max_output}, which is the maximum allowed "
            f"number of output tokens for {params.get('model')}"
        ]
    return []


# The display values of a thinking field: the one that returns the text, and "omitted".
_DISPLAYS = (thinking.SHOWN, "omitted")


def _thinking(params: Mapping[str, Any], info: models.ModelInfo | None) -> list[str]:
    thinking = params.get("thinking")
    if not isinstance(thinking, Mapping) or info is None:
        return []  # absent, or the wrong type (_types says so)
    kind = thinking.get("type") if isinstance(thinking, Mapping) else None
    if kind not in info.thinking:
        # That Sonnet 5.5 refuses "enabled"/"disabled" and budgets is documented
        # (the Sonnet 5.5 migration guide, checked 2026-11-30); the exact sentence is not public.
        accepted = " or ".join(f"'{k}'" for k in info.thinking)
        return [f"thinking.type: '{kind}' is not supported by {info.id}; use {accepted}"]
    if kind == "enabled":
        budget = thinking.get("budget_tokens")
        if isinstance(budget, int) and not isinstance(budget, bool) and budget < 1024:
            # The live API's sentence as recorded from a transcript (pydantic's wording); the
            # rule is the extended-thinking docs': the minimum budget is 1,024 tokens.
            return ["thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"]
        max_tokens = params.get("max_tokens")
        if isinstance(budget, int) and isinstance(max_tokens, int) and budget >= max_tokens:
            # Extended-thinking docs: budget_tokens must be less than max_tokens. The exact
            # sentence of the 400 is not public (agentlab's, after the docs' rule).
            return [
                "max_tokens must be greater than thinking.budget_tokens "
                f"(max_tokens: {max_tokens}, budget_tokens: {budget})"
            ]
    if "display" in thinking and thinking["display"] not in _DISPLAYS:
        # pydantic's wording for a literal, as the API's other field errors use it; the
        # API's sentence for this field is not public. "omitted" is confirmed for Sonnet
        # 5.5 (the Sonnet 5.5 migration guide); the name of the one that returns the text is agentlab's guess.
        words = " or ".join(f"'{d}'" for d in _DISPLAYS)
        return [f"thinking.display: Input should be {words}"]
    return []


_EFFORTS = ("low", "medium", "high", "xhigh", "max")


def _output_config(config: Any) -> list[str]:
    """``output_config``: ``effort`` and a structured-output ``format`` (structured-outputs
    docs: ``{"type": "json_schema", "schema": {...}}``; effort docs: low to max)."""
    if config is None:
        return []
    if not isinstance(config, Mapping):
        return ["output_config: Input should be a valid dictionary"]
    errors = []
    effort = config.get("effort")
    if effort is not None and effort not in _EFFORTS:
        # Pydantic's wording for a literal; not confirmed for this field.
        words = ", ".join(f"'{e}'" for e in _EFFORTS[:-1]) + f" or '{_EFFORTS[-1]}'"
        errors.append(f"output_config.effort: Input should be {words}")
    fmt = config.get("format")
    if fmt is None:
        return errors
    kind = fmt.get("type") if isinstance(fmt, Mapping) else None
    if kind != "json_schema":
        # Pydantic's wording for a tagged union (as the API's tool_choice error uses it);
        # not confirmed for this field.
        errors.append(
            f"output_config.format: Input tag '{kind}' found using 'type' does not match any "
            "of the expected tags: 'json_schema'"
        )
    elif not isinstance(fmt.get("schema"), Mapping):
        errors.append("output_config.format.json_schema.schema: Field required")
    return errors


def _tool_choice(params: Mapping[str, Any], info: models.ModelInfo | None) -> list[str]:
    choice = params.get("tool_choice")
    if choice is None:
        return []
    if not isinstance(choice, Mapping):
        # The live API's sentence for a string tool_choice as recorded from a transcript;
        # not on a public docs page. (Pydantic's own wording differs: "Input should be a
        # valid dictionary or object to extract fields from", so the API is not pydantic here.)
        return ["tool_choice: Input should be an object"]
    kind = choice.get("type")
    if kind not in ("auto", "any", "tool", "none"):
        # Pydantic's wording for a tagged union, as the API's other field errors use
        # it; not confirmed for this field.
        return [
            f"tool_choice: Input tag '{kind}' found using 'type' does not match any of the "
            "expected tags: 'auto', 'any', 'tool', 'none'"
        ]
    if kind in ("any", "tool") and info is not None and not info.forced_tool_choice:
        # The sentence the API gives when thinking meets a forced tool choice
        # (extended-thinking docs, "tool use" section); Sonnet 5.5 thinks adaptively
        # by default. Not confirmed word for word for Sonnet 5.5.
        return ["Thinking may not be enabled when tool_choice forces tool use."]
    if kind in ("any", "tool") and info is not None:
        asked = params.get("thinking")
        if isinstance(asked, Mapping) and asked.get("type") not in (None, "disabled"):
            # Models that accept a forced choice still refuse it with thinking on
            # (extended-thinking docs, "tool use": only auto and none); same sentence.
            return ["Thinking may not be enabled when tool_choice forces tool use."]
    names = {t.get("name") for t in as_dict(list(params.get("tools") or [])) if isinstance(t, dict)}
    if kind == "any" and not names:
        # A forced call with nothing to call; the API's wording is not public (agentlab's).
        return ["tool_choice: 'any' forces a tool call, but the request defines no `tools`"]
    if kind == "tool":
        if choice.get("name") not in names:
            # The API refuses this; its exact wording is not public (agentlab's sentence).
            return [
                f"tool_choice.name: no tool named {choice.get('name')!r} in `tools`; "
                "the forced tool must be one of the tools defined in the request"
            ]
    return []


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
