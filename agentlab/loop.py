"""The agent loop's four stages: request, decide, execute, append.

Read this file beside the lesson's loop. Each line of the lesson belongs to
one stage here::

    def agent_loop(messages):
        while True:
            response = client.messages.create(...)        # 1. request
            messages.append({"role": "assistant", ...})    #    (save the reply: append)
            if response.stop_reason != "tool_use":         # 2. decide
                return
            results = []
            for block in response.content:                 # 3. execute
                if block.type == "tool_use":
                    output = run_bash(block.input["command"])
                    results.append({"type": "tool_result", "tool_use_id": block.id,
                                    "content": output})
            messages.append({"role": "user", "content": results})  # 4. append

The model decides; the harness executes. Only ``decide`` saying ``execute``
ever leads to a tool running, and every ``tool_use`` gets exactly one
``tool_result`` so the history stays one the API accepts.

The loop made of these stages is in ``agentlab/stepper.py``: ``agent_loop``,
and ``AgentLoop``, the same loop one stage at a time (``from agentlab.loop
import agent_loop`` works too).
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from agentlab.arguments import tool_use_list, wrong_history, wrong_reply
from agentlab.events import Event
from agentlab.history import HistoryError, as_dict, check_next
from agentlab.i18n import t
from agentlab.models import DEFAULT_MODEL  # the default model comes from models.json
from agentlab.secrets import remember
from agentlab.tools.base import ToolInputError, tool_params, tool_table
from agentlab.tools.policy import Verdict, as_verdict, describe_call

if TYPE_CHECKING:
    from anthropic.types import Message, ToolUseBlock

    from agentlab.results import LoopResult
    from agentlab.stepper import AgentLoop, agent_loop

__all__ = [
    "DEFAULT_MAX_TOKENS",
    "DEFAULT_MODEL",
    "DEFAULT_SYSTEM",
    "AgentLoop",
    "Decision",
    "Event",
    "Interrupted",
    "LoopResult",
    "agent_loop",
    "append",
    "decide",
    "execute",
    "not_run",
    "request",
]

DEFAULT_MAX_TOKENS = 8000  # as in the lesson
DEFAULT_SYSTEM = (
    "You are a coding agent working in a terminal. Use the bash tool to inspect and "
    "change files; act first, then report what you found, briefly."
)


def _get(obj: Any, key: str, default: Any = None) -> Any:
    """``obj[key]`` for a dict, ``obj.key`` for an SDK object."""
    return obj.get(key, default) if isinstance(obj, dict) else getattr(obj, key, default)


# ---------------------------------------------------------------------------
# Stage 1: request. Send history + system + tools; get one reply.
# ---------------------------------------------------------------------------


def request(
    client: Any,
    messages: Sequence[Any],
    *,
    system: str | None = None,
    tools: Iterable[Any] | None = None,
    model: str | None = None,
    max_tokens: int = DEFAULT_MAX_TOKENS,
    stream: bool = False,
    on_text: Callable[[str], None] | None = None,
    cache: bool = False,
    **params: Any,
) -> Message:
    """Ask the model once. Never changes ``messages``.

    ``tools`` may hold agentlab Tools and raw tool-definition dicts alike.
    With ``stream=True`` the SDK's streaming helper is used and each piece of
    text is passed to ``on_text`` as it arrives; the complete ``Message`` is
    returned either way. ``cache=True`` asks the API to cache the prompt
    (top-level ``cache_control``), so the next turn reads the history it resends.
    """
    if type(messages) is not list and not isinstance(messages, tuple):
        wrong_history(messages)  # a string, one message...: fail now, saying the fix
    remember(client)  # its key is redacted from every saved history (agentlab.secrets)
    body: dict[str, Any] = {
        "model": model or DEFAULT_MODEL,
        "max_tokens": max_tokens,
        "messages": messages,  # sent as it is: nothing here or in the SDK changes it
    }
    if system:
        body["system"] = system
    if tools:  # definitions as they are (the stepper builds them once), or Tools to describe
        prebuilt = type(tools) is list and all([type(x) is dict for x in tools])
        body["tools"] = tools if prebuilt else tool_params(tools)
    if cache:
        body["cache_control"] = {"type": "ephemeral"}
    if params:
        body.update(params)
    if not stream:
        return client.messages.create(**body)
    with client.messages.stream(**body) as s:
        for text in s.text_stream:
            if on_text is not None:
                on_text(text)
        return s.get_final_message()


# ---------------------------------------------------------------------------
# Stage 2: decide. Read stop_reason; only "tool_use" leads to execution.
# ---------------------------------------------------------------------------

Action = Literal["execute", "stop", "continue"]
_KNOWN = ("end_turn", "stop_sequence", "max_tokens", "refusal", "model_context_window_exceeded")


class Decision(NamedTuple):
    """What the harness does with one reply (a value: it cannot be changed).

    ``action`` is ``"execute"`` (run ``tool_uses``), ``"stop"`` or
    ``"continue"`` (ask again, for ``pause_turn``). ``unanswered`` holds tool
    calls that will NOT run (say, cut off by ``max_tokens``): the loop answers
    them with ``is_error`` results so no ``tool_use`` is left hanging.
    """

    action: Action
    reason: str | None
    tool_uses: tuple[ToolUseBlock, ...] = ()
    unanswered: tuple[ToolUseBlock, ...] = ()

    @property
    def explanation(self) -> str:
        """Why, in a sentence (worded when asked for, in the current language)."""
        if self.action == "execute":
            return t("decide.tool_use", n=len(self.tool_uses))
        if self.action == "continue":
            return t("decide.pause_turn")
        if self.reason in _KNOWN:
            return t(f"decide.{self.reason}")
        return t("decide.unknown", reason=self.reason)  # unknown, or tool_use with no block

    def __repr__(self) -> str:
        return f"Decision(action={self.action!r}, reason={self.reason!r}, tool_uses={len(self.tool_uses)})"


def decide(response: Message) -> Decision:
    """Pure: the same reply always gives the same Decision, and nothing runs here."""
    reason: Any
    content: Any
    if isinstance(response, dict):  # a reply as a dict
        if "stop_reason" not in response:
            wrong_reply(response)  # a message, not a reply: fail now, saying the fix
        reason, content = response["stop_reason"], response.get("content")
    elif hasattr(response, "stop_reason"):
        reason, content = response.stop_reason, response.content
    else:
        wrong_reply(response)  # the history, a string...: fail now, saying the fix
    uses = tuple([b for b in content or () if _type(b) == "tool_use"])
    if reason == "tool_use" and uses:
        return Decision("execute", reason, uses)
    if reason == "pause_turn":
        return Decision("continue", reason, (), uses)
    return Decision("stop", reason, (), uses)  # anything else: run nothing


def _type(block: Any) -> Any:
    return block.get("type") if type(block) is dict else getattr(block, "type", None)


def not_run(tool_uses: Iterable[Any], reason: str) -> list[dict[str, Any]]:
    """``is_error`` results for tool calls the harness will not run."""
    return [_error_result(u, t("result.not_run", reason=reason)) for u in tool_uses]


# ---------------------------------------------------------------------------
# Stage 3: execute. The harness runs each requested tool; one result each.
# ---------------------------------------------------------------------------


class Interrupted(KeyboardInterrupt):
    """Ctrl-C (or the notebook's stop button) while the loop ran.

    ``results`` answers every tool call of the turn (the unfinished ones with
    ``is_error`` "interrupted" results), ready to append so the history stays valid.
    """

    def __init__(self, results: list[dict[str, Any]], message: str | None = None):
        super().__init__(message or t("loop.interrupted"))
        self.results = results


def _error_result(use: Any, text: str) -> dict[str, Any]:
    return {
        "type": "tool_result",
        "tool_use_id": _get(use, "id"),
        "content": text,
        "is_error": True,
    }


def _content(out: Any) -> tuple[Any, bool]:
    """A tool's return value as tool_result content, and whether it is an error."""
    if isinstance(out, str):
        return out or "(empty output)", False
    if hasattr(out, "exit_code") and hasattr(out, "output"):  # a BashResult
        return str(out.output), out.exit_code != 0
    if isinstance(out, list):  # content blocks (text, image)
        return as_dict(out), False
    return ("(no output)" if out is None else str(out)), False


_APPROVED = Verdict.approve()  # no approve callback: every call may run


def _run_one(
    use: Any,
    table: dict[str, Any],
    approve: Callable[[Any], Any] | None,
    on_event: Callable[[Event], None] | None,
    audit: list[dict[str, Any]] | None,
) -> dict[str, Any]:
    uid: Any
    name: Any
    if type(use) is dict:
        uid, name, tool_input = use.get("id"), use.get("name"), use.get("input")
    else:  # an SDK ToolUseBlock
        uid, name = getattr(use, "id", None), getattr(use, "name", None)
        tool_input = getattr(use, "input", None)
    tool = table.get(name)
    if tool is None:
        names = ", ".join(table) or "none"
        return _error_result(use, t("result.unknown_tool", name=name, names=names))
    if tool.fn is None:
        return _error_result(use, t("result.no_impl", name=name))
    verdict = _APPROVED
    if approve is not None:
        if on_event is not None:
            on_event(Event("approval", {"tool_use": use}))
        verdict = as_verdict(approve(use))
        if verdict.action == "deny":
            if on_event is not None or audit is not None:
                denied = {"verdict": "denied", "reason": verdict.reason, "duration": 0.0}
                _note(
                    use, {**_called(use, tool_input), **denied, "is_error": True}, on_event, audit
                )
            why = verdict.reason or t("result.denied_default")
            said = "result.denied_policy" if verdict.by == "policy" else "result.denied"
            return _error_result(use, t(said, reason=why))
        if verdict.action == "edit" and verdict.input is not None:
            tool_input = verdict.input
    if on_event is not None:
        on_event(Event("tool_start", {"tool_use": use, "input": tool_input}))
    start = time.monotonic()
    out: Any = None
    try:
        out = tool.run(tool_input)
        content, is_error = (out, False) if type(out) is str and out else _content(out)
    except ToolInputError as e:
        content, is_error = t("result.bad_input", name=name, error=e), True
    except KeyboardInterrupt:  # Ctrl-C keeps its meaning: stop the run (noting what had started)
        if on_event is not None or audit is not None:
            stopped = {
                "verdict": "interrupted",
                "edited": verdict.action == "edit",
                "is_error": True,
            }
            stopped["duration"] = time.monotonic() - start
            _note(use, {**_called(use, tool_input), **stopped}, on_event, audit)
        raise
    except BaseException as e:  # SystemExit from argparse, a crash...: data for the model
        content, is_error = t("result.error", name=name, error=f"{type(e).__name__}: {e}"), True
    if on_event is not None or audit is not None:
        ran = {
            "tool_use_id": uid,
            "name": name,
            "input": tool_input,
            "verdict": "edited" if verdict.action == "edit" else "approved",
            "duration": time.monotonic() - start,
            "is_error": is_error,
        }
        if type(out) is not str:  # what a BashResult adds
            ran["exit_code"] = getattr(out, "exit_code", None)
            ran["truncated"] = getattr(out, "truncated", False)
            ran["timed_out"] = getattr(out, "timed_out", False)
        _note(use, ran, on_event, audit)
    if verdict.action == "edit":  # tell the model what really ran
        note = t("result.edited", input=describe_call({"name": name, "input": tool_input}))
        if isinstance(content, str):
            content = f"{note}\n{content}"
        else:
            content = [{"type": "text", "text": note}, *content]
    result = {"type": "tool_result", "tool_use_id": uid, "content": content}
    if is_error:
        result["is_error"] = True
    return result


def _called(use: Any, tool_input: Any) -> dict[str, Any]:
    return {"tool_use_id": _get(use, "id"), "name": _get(use, "name"), "input": tool_input}


def _note(
    use: Any,
    record: dict[str, Any],
    on_event: Callable[[Event], None] | None,
    audit: list[dict[str, Any]] | None,
) -> None:
    """What became of one call (its id, name, the input that ran, the verdict...):
    kept in ``audit``, and sent as a ``tool_end`` event to whoever listens."""
    if audit is not None:
        audit.append(record)
    if on_event is not None:
        on_event(Event("tool_end", {"tool_use": use, **record}))


def execute(
    tool_uses: Iterable[Any],
    tools: Iterable[Any] | None = None,
    *,
    approve: Callable[[Any], Any] | None = None,
    on_event: Callable[[Event], None] | None = None,
    audit: list[dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """Run each tool call; return exactly one ``tool_result`` per call, in order.

    An unknown tool, bad input, an exception in the tool (even ``SystemExit``),
    or a denial by ``approve`` becomes an ``is_error`` result the model can
    read. Ctrl-C raises ``Interrupted``, whose ``results`` answer every call.
    ``tools`` defaults to ``[agentlab.bash]``, as in the lesson. ``audit``, if
    given a list, gets one record per call run, denied or interrupted: the
    input that ran, the verdict, the duration.
    """
    uses = tool_use_list(tool_uses)  # the whole reply, its content...: fail now, saying the fix
    if tools is None:
        from agentlab.tools import bash

        tools = [bash]
    table = tools if isinstance(tools, dict) else tool_table(tools)
    results: list[dict[str, Any]] = []
    for use in uses:
        try:
            results.append(_run_one(use, table, approve, on_event, audit))
        except KeyboardInterrupt:
            done = len(results)
            results.append(_error_result(uses[done], t("result.interrupted")))
            results += [_error_result(u, t("result.interrupted_skipped")) for u in uses[done + 1 :]]
            use = uses[done]
            noted = audit and audit[-1].get("tool_use_id") == _get(use, "id")
            if audit is not None and not noted:  # stopped before it started (while approving)
                audit.append(
                    {**_called(use, _get(use, "input")), "verdict": "interrupted", "is_error": True}
                )
            if on_event is not None:
                on_event(Event("interrupted", {"results": results, "tool_use": uses[done]}))
            raise Interrupted(results) from None
    return results


# ---------------------------------------------------------------------------
# Stage 4: append. The only thing that changes the history.
# ---------------------------------------------------------------------------


def _as_message(item: Any) -> dict[str, Any] | None:
    if type(item) is list:  # tool results (the commonest, so asked first)
        return {"role": "user", "content": as_dict(item)}
    if hasattr(item, "stop_reason") and hasattr(item, "content"):  # an SDK Message
        content = [_dump(b) for b in item.content]
        return {"role": "assistant", "content": content} if content else None
    if isinstance(item, str):
        return {"role": "user", "content": item}
    if isinstance(item, list | tuple):
        return {"role": "user", "content": as_dict(item)}
    if isinstance(item, dict) and "role" in item:
        return as_dict(item)
    raise TypeError(
        f"append() takes a Message, a list of tool_result blocks, a string or a message dict, not {item!r}"
    )


def _dump(block: Any) -> Any:
    """One SDK content block as the JSON the API sent (``None`` fields left out).

    What ``block.model_dump(mode="json", exclude_none=True)`` returns, from the
    model's own pydantic serializer without the wrapper around it: half the cost,
    paid on every reply."""
    serializer = getattr(block, "__pydantic_serializer__", None)
    if serializer is None:
        return as_dict(block)
    return serializer.to_python(block, mode="json", exclude_none=True)


def append(messages: list[Any], item: Any) -> list[Any]:
    """Add one turn to the history, refusing to make one the API would reject.

    - an SDK ``Message`` becomes an assistant turn of plain dicts;
    - a list of ``tool_result`` blocks becomes one ``user`` message;
    - a string becomes a ``user`` text turn;
    - a message dict is added as it is.

    A reply with no content at all is not stored (the API would refuse an
    empty message in the middle of a history). Raises ``HistoryError``, a
    ``ValueError`` worded like the API's 400, and leaves ``messages`` as it was.
    """
    message = _as_message(item)
    if message is None:
        return messages
    problems = check_next(messages, message)
    if problems:
        raise HistoryError(problems)
    messages.append(message)
    return messages


# The loop made of these stages lives elsewhere; these names still import from here.
_ELSEWHERE = {
    "AgentLoop": "agentlab.stepper",
    "agent_loop": "agentlab.stepper",
    "Stage": "agentlab.stepper",
    "LoopResult": "agentlab.results",
    "ENDINGS": "agentlab.results",
    "final_text": "agentlab.results",
}


def __getattr__(name: str) -> Any:
    if name in _ELSEWHERE:
        return getattr(importlib.import_module(_ELSEWHERE[name]), name)
    raise AttributeError(f"module 'agentlab.loop' has no attribute {name!r}")
