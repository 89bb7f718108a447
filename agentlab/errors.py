"""Errors a student meets, worded so they can act on them.

- Ctrl-C while the loop ran (``Interrupted``, carrying the results that answer
  every tool call of the turn);
- a failed model request (``RequestError``, ``explain_error``);
- a stage given the wrong argument (``wrong_history``, ``wrong_reply``,
  ``tool_use_list``): mixing up the pieces is the most common slip when writing
  the loop by hand (the whole reply to ``execute``, the history to ``decide``, a
  string to ``request``), so each raises a ``TypeError`` showing the call to write.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from typing import Any, NoReturn

from agentlab.i18n import t

__all__ = [
    "Interrupted",
    "RequestError",
    "explain_error",
    "is_request_failure",
    "tool_use_list",
    "wrong_history",
]
__all__ += ["wrong_reply"]


class Interrupted(KeyboardInterrupt):
    """Ctrl-C (or the notebook's stop button) while the loop ran.

    ``results`` answers every tool call of the turn (the unfinished ones with
    ``is_error`` "interrupted" results), ready to append so the history stays valid.
    """

    def __init__(self, results: list[dict[str, Any]], message: str | None = None):
        super().__init__(message or t("loop.interrupted"))
        self.results = results


class RequestError(RuntimeError):
    """A model request failed. The history is exactly as it was before it.

    ``explanation`` says what happened and what to do; ``cause`` is the SDK's
    exception (``anthropic.APIStatusError`` and friends).
    """

    def __init__(self, explanation: str, cause: BaseException | None = None):
        super().__init__(explanation)
        self.explanation = explanation
        self.cause = cause
        self.status_code: int | None = getattr(cause, "status_code", None)


def is_request_failure(exc: BaseException) -> bool:
    """Did the model request itself fail?

    True for the SDK's errors (``anthropic.APIError``: status errors, no
    connection, timeouts, an error event mid-stream) and for a connection that
    breaks in the middle of a streamed reply, which the SDK passes on as the
    HTTP library's own ``TransportError``. Anything else is a bug to see, not
    a failed request.
    """
    import anthropic

    if isinstance(exc, anthropic.APIError):
        return True
    for name in ("httpx2", "httpx"):  # only if already loaded: the SDK imported it
        module = sys.modules.get(name)
        if module is not None and isinstance(exc, module.TransportError):
            return True
    return False


def _api_message(exc: BaseException) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        err = body.get("error")
        if isinstance(err, dict) and err.get("message"):
            return str(err["message"])
    return str(getattr(exc, "message", "") or exc)


def _retries(exc: BaseException) -> str:
    """The ", after N retries" phrase when the SDK retried before giving up (read from the
    ``x-stainless-retry-count`` header of its last attempt)."""
    try:
        request = getattr(exc, "request", None)
        n = int(request.headers.get("x-stainless-retry-count", 0)) if request is not None else 0
    except (AttributeError, RuntimeError, TypeError, ValueError):
        return ""
    return t("error.retried", n=n) if n > 0 else ""


# How the advice names the offline demo model: a Python call by default; the ``agentlab``
# command sets its own flag here, so a terminal user is told what to type there.
offline_advice = "agentlab.connect(offline=True)"


def explain_error(exc: BaseException) -> str:
    """One or two plain sentences for an exception raised by ``client.messages.create``."""
    import anthropic

    status = getattr(exc, "status_code", None)
    msg = _api_message(exc)
    retried = _retries(exc)
    if isinstance(exc, anthropic.APITimeoutError):
        return t("error.timeout", retried=retried)
    if isinstance(exc, anthropic.APIConnectionError):
        return t("error.connection", retried=retried, offline=offline_advice)
    if not isinstance(exc, anthropic.APIError) and is_request_failure(exc):
        return t("error.stream_cut", msg=msg)
    if status == 200:  # an error event in the middle of a stream
        return t("error.stream_error", msg=msg)
    found = _THINKING_REFUSED.match(msg) if status == 400 else None
    if found is not None and _BOUND_ELSEWHERE in msg:  # the prefix check (preserved thinking)
        where = f"messages.{found[1]}.content.{found[2]}"
        return (
            t("error.400", msg=msg, retried=retried)
            + "\n"
            + t("error.thinking_prefix", where=where)
        )
    if found is not None:
        return t("error.400", msg=msg, retried=retried) + "\n" + _thinking_hint(exc, found)
    if status in (400, 401, 403, 404, 413, 429, 529):
        return t(f"error.{status}", msg=msg, retried=retried, offline=offline_advice)
    if isinstance(status, int) and status >= 500:
        return t("error.5xx", status=status, msg=msg, retried=retried)
    return t("error.other", name=type(exc).__name__, msg=msg)


# The API's words for a thinking block it will not take back (as quoted in many
# public error reports, 2026): "messages.3.content.0: Invalid `signature` in `thinking` block".
_THINKING_REFUSED = re.compile(
    r"messages\.(\d+)\.content\.(\d+): Invalid `signature` in `thinking`"
)


# The prefix check's words (Anthropic docs, preserved-thinking/fix-bound-to-a-different-
# conversation, read 2026-12-01): "... The block is bound to a different conversation. ..."
_BOUND_ELSEWHERE = "bound to a different conversation"


def _thinking_hint(exc: BaseException, found: re.Match[str]) -> str:
    """Why a thinking block was refused, and what to do.

    Thinking blocks are tied to the model that wrote them. The request the SDK
    sent is on the exception; where the block carries an agentlab signature
    (the offline world), the model that wrote it can be named. A real
    signature says nothing readable, so then the hint names the request's model only.
    """
    body: Any = None
    try:
        body = json.loads(getattr(getattr(exc, "request", None), "content", b"") or b"null")
    except (ValueError, RuntimeError, TypeError):  # no body kept, or not JSON
        pass
    if not isinstance(body, dict):
        return t("error.thinking_changed", model=t("error.thinking_this_model"))
    model = str(body.get("model") or "")
    writer = None
    try:
        block = body["messages"][int(found[1])]["content"][int(found[2])]
        writer = _writer(block, model)
    except (IndexError, KeyError, TypeError):
        pass
    if writer is None:
        return t("error.thinking_changed", model=model or t("error.thinking_this_model"))
    return t("error.thinking_other_model", model=model, writer=writer)


# Who wrote a thinking block's signature: readers an upper layer registers (the offline
# emulator, agentlab.fakeapi.thinking, the only writer of signatures agentlab can read).
# Each takes the block and the model that refused it and names another model, or None.
SIGNATURE_READERS: list[Callable[[Any, str], str | None]] = []


def _writer(block: Any, model: str) -> str | None:
    """The model whose agentlab signature this block carries (a real signature says
    nothing readable: then None)."""
    return next((w for read in SIGNATURE_READERS if (w := read(block, model))), None)


# -- a stage given the wrong argument: fail at once, with the fix --------------------


def _type(obj: Any) -> Any:
    return obj.get("type") if type(obj) is dict else getattr(obj, "type", None)


def wrong_history(messages: Any) -> NoReturn:
    """``request(client, X)`` where X is not a list of messages."""
    if hasattr(getattr(messages, "messages", None), "create"):  # request(messages, client)
        raise TypeError(t("loopcore.wrong.request_order"))
    if isinstance(messages, str):
        raise TypeError(t("loopcore.wrong.request_text"))
    if isinstance(messages, dict):
        raise TypeError(t("loopcore.wrong.request_dict"))
    raise TypeError(t("loopcore.wrong.request_other", kind=type(messages).__name__))


def wrong_reply(response: Any) -> NoReturn:
    """``decide(X)`` where X is not a reply (it has no ``stop_reason``)."""
    if isinstance(response, list | tuple):
        raise TypeError(t("loopcore.wrong.decide_list"))
    if isinstance(response, dict):
        raise TypeError(t("loopcore.wrong.decide_dict"))
    raise TypeError(t("loopcore.wrong.decide_other", kind=type(response).__name__))


def tool_use_list(tool_uses: Any) -> list[Any]:
    """What ``execute`` was given, as a list of tool_use blocks; anything else fails."""
    if type(tool_uses) is not tuple and type(tool_uses) is not list:  # not what decide gives
        if hasattr(tool_uses, "stop_reason"):  # execute(response)
            raise TypeError(t("loopcore.wrong.execute_response"))
        if hasattr(tool_uses, "action") and hasattr(tool_uses, "tool_uses"):  # execute(decision)
            raise TypeError(t("loopcore.wrong.execute_decision"))
        if _type(tool_uses) == "tool_use":  # one block, not a list of them
            raise TypeError(t("loopcore.wrong.execute_one"))
        if isinstance(tool_uses, str | dict):
            raise TypeError(t("loopcore.wrong.execute_other", kind=type(tool_uses).__name__))
    uses = list(tool_uses)
    for use in uses:
        kind = _type(use)
        if kind != "tool_use":  # execute(response.content): text blocks too
            raise TypeError(t("loopcore.wrong.execute_content", kind=kind or type(use).__name__))
    return uses
