"""One tool call as the harness runs it, and the events the loop reports.

Stage 3 of ``agentlab/loop.py`` runs the calls of a reply in order; ``run_one``
is what it does for each: ask ``approve`` (if any), run the tool, turn what
came back (or the exception it raised) into a ``tool_result``. It is a
generator, so the loop can yield its events (``approval``, ``tool_start``,
``tool_end``) as they happen.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from agentlab import errors
from agentlab.history import LoopResult, as_dict
from agentlab.i18n import t
from agentlab.secrets import remember
from agentlab.tools.base import ToolInputError, tool_table
from agentlab.tools.policy import Verdict, as_verdict, describe_call
from agentlab.usage import usage_of

__all__ = ["PARENT", "Event", "Parent", "drive", "error_result", "parent_of", "requested"]
__all__ += ["run_one", "table"]


@dataclass(slots=True)
class Event:
    """One step of the loop, as ``loop.steps`` yields it: a kind and its data.

    ``kind`` is one of: stage, request, text, response, append, decision,
    approval, tool_start, tool_end, results, error, done (and reset, from a stepper).
    ``kind, data = event`` works as for a pair. (A class with slots, not a NamedTuple:
    the loop makes about ten a turn, and a NamedTuple takes twice as long to make.)
    """

    kind: str
    data: dict[str, Any]

    def __iter__(self) -> Iterator[Any]:
        return iter((self.kind, self.data))


def get(obj: Any, key: str) -> Any:
    """``obj[key]`` for a block a student wrote as a dict, ``obj.key`` for the SDK's."""
    return obj.get(key) if type(obj) is dict else getattr(obj, key, None)


def requested(
    client: Any, body: dict[str, Any], stream: bool, turns: int = 0
) -> Generator[Event, Any, Any]:
    """Stage 1 in the loop: the request, its streamed text as events (``turns``: how many
    the loop has made). A failed request yields an ``error`` event (send True to try
    again), then raises RequestError."""
    if not turns:  # the client's key is redacted from every saved history (agentlab.secrets)
        remember(client)
    while True:
        try:
            if not stream:
                return client.messages.create(**body)
            with client.messages.stream(**body) as s:
                for text in s.text_stream:
                    yield Event("text", {"text": text})
                return s.get_final_message()
        except Exception as e:
            if not errors.is_request_failure(e):
                raise
            error = errors.RequestError(errors.explain_error(e), e)
        if not (yield Event("error", {"error": error})):
            raise error from error.cause


def table(tools: Any) -> dict[str, Any]:
    """Name -> Tool for ``tools`` (a table already, a list, or None: the lesson's bash)."""
    return tools if isinstance(tools, dict) else tool_table(with_default(tools))


def with_default(tools: Any) -> Any:
    from agentlab.tools import bash  # the lesson's one tool, by default

    return [bash] if tools is None else tools


def drive(
    run: Generator[Event, Any, list[dict[str, Any]]],
    on_event: Callable[[Event], None] | None,
    audit: list[dict[str, Any]] | None,
) -> list[dict[str, Any]]:
    """Run stage 3's steps to the end for ``execute``: its events to ``on_event``, one
    audit record per call (a call Ctrl-C stopped too), and its results."""
    while True:
        try:
            event = next(run)
        except StopIteration as end:
            return end.value
        if event.kind == "tool_end" and audit is not None:
            audit.append({k: v for k, v in event.data.items() if k != "tool_use"})
        if on_event is not None:
            on_event(event)


_APPROVED = Verdict.approve()  # no approve callback: every call may run


@dataclass(frozen=True, slots=True)
class Parent:
    """The loop whose tool call is running, as a loop that tool starts (``task``) sees it:
    what it asks before each call, and its budget with the run that budget reads."""

    approve: Any
    budget: Callable[[LoopResult], str] | None = None
    run: LoopResult | None = None

    def spent(self) -> str:
        """The parent's budget used up ("": none), its helpers' requests counted in."""
        return "" if self.budget is None or self.run is None else self.budget(self.run)

    def record(self, usage: Any, model: str | None) -> None:
        """Count one of a helper's requests in the parent's run (``helpers_usage``)."""
        if self.run is not None:
            self.run.helpers_usage.append({**usage_of(usage), "model": model})


def parent_of(approve: Any, budget: Any = None, run: LoopResult | None = None) -> Parent | None:
    """The ``Parent`` for a loop's tool calls; None when there is nothing to hold to."""
    return None if approve is None and budget is None else Parent(approve, budget, run)


# The parent of the call being run: a tool that runs a loop of its own (``task``) asks
# its approve about that loop's calls and spends from its budget, so a helper can
# neither run nor spend what its parent may not.
PARENT: ContextVar[Parent | None] = ContextVar("agentlab_parent", default=None)


def run_one(use: Any, table: dict[Any, Any], parent: Parent | None) -> Generator[Event, Any, dict]:
    """Run one call; return its ``tool_result``. A driver may answer the ``approval``
    step with ``send(verdict)``; otherwise ``parent.approve(use)`` is asked (no parent:
    nothing is asked, and a loop the tool starts has no limits from this one)."""
    approve = parent.approve if parent is not None else None
    if type(use) is dict:  # a block a student wrote as a dict
        uid, name, tool_input = use.get("id"), use.get("name"), use.get("input")
    else:  # the SDK's ToolUseBlock
        uid, name = getattr(use, "id", None), getattr(use, "name", None)
        tool_input = getattr(use, "input", None)
    tool = table.get(name)
    if tool is None:
        return error_result(
            uid, t("result.unknown_tool", name=name, names=", ".join(table) or "none")
        )
    if tool.fn is None:
        return error_result(uid, t("result.no_impl", name=name))
    called, verdict = (use, uid, name), _APPROVED
    if approve is not None:
        answer = yield Event("approval", {"tool_use": use})
        verdict = as_verdict(approve(use) if answer is None else answer)
        if verdict.action == "deny":
            denied = _record(*called, tool_input, "denied", True, 0.0)
            yield Event("tool_end", {**denied, "reason": verdict.reason})
            said = "result.denied_policy" if verdict.by == "policy" else "result.denied"
            return error_result(uid, t(said, reason=verdict.reason or t("result.denied_default")))
        if verdict.action == "edit" and verdict.input is not None:
            tool_input = verdict.input
    edited, start, out = verdict.action == "edit", time.monotonic(), None
    yield Event("tool_start", {"tool_use": use, "input": tool_input, "edited": edited, "at": start})
    try:
        out = _run(tool, tool_input, parent)
        content, is_error = (out, False) if type(out) is str and out else _content(out)
    except ToolInputError as e:
        content, is_error = t("result.bad_input", name=name, error=e), True
    except KeyboardInterrupt:  # Ctrl-C or Stop: the call counts as what really started
        stopped = _record(*called, tool_input, "interrupted", True, time.monotonic() - start)
        yield Event("tool_end", {**stopped, "edited": edited})
        raise
    except BaseException as e:  # SystemExit from argparse, a crash...: data for the model
        content, is_error = t("result.error", name=name, error=f"{type(e).__name__}: {e}"), True
    verdict_word, took = "edited" if edited else "approved", time.monotonic() - start
    ran = _record(*called, tool_input, verdict_word, is_error, took)
    if type(out) is not str:  # what a BashResult adds
        ran["exit_code"] = getattr(out, "exit_code", None)
        ran["truncated"] = getattr(out, "truncated", False)
        ran["timed_out"] = getattr(out, "timed_out", False)
    yield Event("tool_end", ran)
    if edited:  # tell the model what really ran
        note = t("result.edited", input=describe_call({"name": name, "input": tool_input}))
        text = {"type": "text", "text": note}
        content = f"{note}\n{content}" if isinstance(content, str) else [text, *content]
    if is_error:
        return {"type": "tool_result", "tool_use_id": uid, "content": content, "is_error": True}
    return {"type": "tool_result", "tool_use_id": uid, "content": content}


def _run(tool: Any, tool_input: Any, parent: Parent | None) -> Any:
    if PARENT.get() is parent:  # nothing to change (the common case: no approve, no budget)
        return tool.run(tool_input)
    token = PARENT.set(parent)
    try:
        return tool.run(tool_input)
    finally:
        PARENT.reset(token)


def error_result(tool_use_id: Any, text: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tool_use_id, "content": text, "is_error": True}


def _record(
    use: Any, uid: Any, name: Any, tool_input: Any, verdict: str, is_error: bool, took: float
) -> dict[str, Any]:
    """What became of one call (the audit keeps it; the ``tool_end`` event carries it)."""
    return {
        "tool_use": use,
        "tool_use_id": uid,
        "name": name,
        "input": tool_input,
        "verdict": verdict,
        "is_error": is_error,
        "duration": took,
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
