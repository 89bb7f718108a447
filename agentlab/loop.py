"""The agent loop: its four stages (request, decide, execute, append) and the loop made of them.

Read it beside the lesson's loop; ``steps`` at the end is that loop, line for line::

    def agent_loop(messages):
        while True:
            response = client.messages.create(...)        # 1. request
            messages.append({"role": "assistant", ...})    #    save the reply (append)
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
``tool_result``, so the history stays one the API accepts. ``steps`` yields
an ``Event`` after each step, so ``agent_loop`` runs it to the end and
``AgentLoop`` (agentlab/stepper.py) advances it one stage at a time.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from agentlab.errors import (
    RequestError,
    explain_error,
    is_request_failure,
    tool_use_list,
    wrong_history,
    wrong_reply,
)
from agentlab.history import (
    HistoryError,
    LoopResult,
    as_dict,
    as_message,
    check_next,
    final_text,
    tool_calls,
)
from agentlab.i18n import t
from agentlab.models import DEFAULT_MODEL  # the default model comes from models.json
from agentlab.secrets import remember
from agentlab.tools.base import ToolInputError, tool_params, tool_table
from agentlab.tools.policy import Verdict, as_verdict, describe_call
from agentlab.usage import over_budget

if TYPE_CHECKING:
    from anthropic.types import Message, ToolUseBlock

__all__ = ["DEFAULT_MAX_TOKENS", "DEFAULT_MODEL", "DEFAULT_SYSTEM", "ENDINGS", "Decision", "Event"]
__all__ += ["Interrupted", "LoopResult", "agent_loop", "append", "decide", "execute", "not_run"]
__all__ += ["request", "steps"]

DEFAULT_MAX_TOKENS = 8000  # as in the lesson
DEFAULT_SYSTEM = (
    "You are a coding agent working in a terminal. Use the bash tool to inspect and "
    "change files; act first, then report what you found, briefly."
)
Stage = Literal["request", "decide", "execute", "append", "done"]
# Why a loop ended. "model": the model's stop_reason ended it (read ``stop_reason``);
# the others are agentlab's own endings, never API stop reasons.
ENDINGS = ("model", "turn_limit", "budget", "interrupted", "error")


class Event(NamedTuple):
    """One step of the loop, as ``steps`` yields it: a kind and its data.

    ``kind`` is one of: stage, request, text, response, append, decision,
    approval, tool_start, tool_end, results, error, done (and reset, from a stepper).
    """

    kind: str
    data: dict[str, Any]


# -- Stage 1: request. Send history + system + tools; get one reply. -------------------


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
    With ``stream=True`` each piece of text is passed to ``on_text`` as it
    arrives; the complete ``Message`` is returned either way. ``cache=True``
    asks the API to cache the prompt (top-level ``cache_control``).
    """
    remember(client)  # its key is redacted from every saved history (agentlab.secrets)
    body = _body(messages, system, tool_params(tools) if tools else None, model, max_tokens)
    body.update({"cache_control": {"type": "ephemeral"}} if cache else {}, **params)
    if not stream:
        return client.messages.create(**body)
    with client.messages.stream(**body) as s:
        for text in s.text_stream:
            if on_text is not None:
                on_text(text)
        return s.get_final_message()


def _body(messages: Any, system: Any, tools: Any, model: Any, max_tokens: int) -> dict[str, Any]:
    if type(messages) is not list and not isinstance(messages, tuple):
        wrong_history(messages)  # a string, one message...: fail now, saying the fix
    body = {"model": model or DEFAULT_MODEL, "max_tokens": max_tokens, "messages": messages}
    body.update({"system": system} if system else {}, **({"tools": tools} if tools else {}))
    return body  # the history goes as it is: nothing here or in the SDK changes it


# -- Stage 2: decide. Read stop_reason; only "tool_use" leads to execution. ------------

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
    if isinstance(response, dict) and "stop_reason" in response:  # a reply written as a dict
        reason, content = response["stop_reason"], response.get("content")
    elif hasattr(response, "stop_reason"):
        reason, content = response.stop_reason, response.content
    else:
        wrong_reply(response)  # the history, a message, a string...: fail now, saying the fix
    uses: Any = tuple([b for b in content or () if _get(b, "type") == "tool_use"])
    if reason == "tool_use" and uses:
        return Decision("execute", reason, uses)
    if reason == "pause_turn":
        return Decision("continue", reason, (), uses)
    return Decision("stop", reason, (), uses)  # anything else: run nothing


def not_run(tool_uses: Iterable[Any], reason: str) -> list[dict[str, Any]]:
    """``is_error`` results for tool calls the harness will not run."""
    return [_error(_get(u, "id"), t("result.not_run", reason=reason)) for u in tool_uses]


def _get(obj: Any, key: str) -> Any:
    """``obj[key]`` for a block a student wrote as a dict, ``obj.key`` for the SDK's."""
    return obj.get(key) if type(obj) is dict else getattr(obj, key, None)


# -- Stage 3: execute. The harness runs each requested tool; one result each. ----------


class Interrupted(KeyboardInterrupt):
    """Ctrl-C (or the notebook's stop button) while the loop ran.

    ``results`` answers every tool call of the turn (the unfinished ones with
    ``is_error`` "interrupted" results), ready to append so the history stays valid.
    """

    def __init__(self, results: list[dict[str, Any]], message: str | None = None):
        super().__init__(message or t("loop.interrupted"))
        self.results = results


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
    given a list, gets one record per call: the input that ran, the verdict, the time.
    """
    uses = tool_use_list(tool_uses)  # the whole reply, its content...: fail now, saying the fix
    run, running = _run_tools(uses, _table(tools), approve), None
    try:
        while True:
            event = next(run)
            running = event.data if event.kind == "tool_start" else running
            if event.kind == "tool_end" and audit is not None:
                audit.append({k: v for k, v in event.data.items() if k != "tool_use"})
            if on_event is not None:
                on_event(event)
    except StopIteration as end:
        return end.value
    except Interrupted:
        if running is not None:  # the call that was running counts too, as what really started
            record = _stopped_call(running)
            audit.append(record) if audit is not None else None
            on_event(
                Event("tool_end", {"tool_use": running["tool_use"], **record})
            ) if on_event else None
        raise


def _table(tools: Any) -> dict[str, Any]:
    return tools if isinstance(tools, dict) else tool_table(_tools(tools))


def _tools(tools: Any) -> Any:
    if tools is None:
        from agentlab.tools import bash  # the lesson's one tool

        return [bash]
    return tools


def _run_tools(
    uses: Sequence[Any], table: dict[str, Any], approve: Any
) -> Generator[Event, Any, list]:
    """Stage 3 as steps: each call in order with its events, then the results."""
    results: list[dict[str, Any]] = []
    try:
        for use in uses:
            results.append((yield from _run_one(use, table, approve)))
        yield Event("results", {"results": results})
    except KeyboardInterrupt:  # Ctrl-C keeps its meaning: stop, with every call answered
        if len(results) < len(uses):
            results.append(_error(_get(uses[len(results)], "id"), t("result.interrupted")))
        skipped = t("result.interrupted_skipped")
        results += [_error(_get(u, "id"), skipped) for u in uses[len(results) :]]
        raise Interrupted(results) from None
    return results


def _run_one(use: Any, table: dict[str, Any], approve: Any) -> Generator[Event, Any, dict]:
    uid, name, tool_input = _get(use, "id"), _get(use, "name"), _get(use, "input")
    tool = table.get(name)
    if tool is None:
        return _error(uid, t("result.unknown_tool", name=name, names=", ".join(table) or "none"))
    if tool.fn is None:
        return _error(uid, t("result.no_impl", name=name))
    verdict = _APPROVED
    if approve is not None:  # a driver may answer with send(verdict); else approve is asked
        answer = yield Event("approval", {"tool_use": use})
        verdict = as_verdict(approve(use) if answer is None else answer)
        if verdict.action == "deny":
            denied = {"reason": verdict.reason, "duration": 0.0}
            yield Event("tool_end", {**_record(use, tool_input, "denied", True), **denied})
            said = "result.denied_policy" if verdict.by == "policy" else "result.denied"
            return _error(uid, t(said, reason=verdict.reason or t("result.denied_default")))
        if verdict.action == "edit" and verdict.input is not None:
            tool_input = verdict.input
    edited, start, out = verdict.action == "edit", time.monotonic(), None
    yield Event("tool_start", {"tool_use": use, "input": tool_input, "edited": edited, "at": start})
    try:
        out = tool.run(tool_input)
        content, is_error = (out, False) if type(out) is str and out else _content(out)
    except ToolInputError as e:
        content, is_error = t("result.bad_input", name=name, error=e), True
    except KeyboardInterrupt:
        raise
    except BaseException as e:  # SystemExit from argparse, a crash...: data for the model
        content, is_error = t("result.error", name=name, error=f"{type(e).__name__}: {e}"), True
    ran = _record(use, tool_input, "edited" if edited else "approved", is_error)
    ran["duration"] = time.monotonic() - start
    if type(out) is not str:  # what a BashResult adds
        ran.update(
            exit_code=getattr(out, "exit_code", None), truncated=getattr(out, "truncated", False)
        )
        ran["timed_out"] = getattr(out, "timed_out", False)
    yield Event("tool_end", ran)
    if edited:  # tell the model what really ran
        note = t("result.edited", input=describe_call({"name": name, "input": tool_input}))
        content = f"{note}\n{content}" if isinstance(content, str) else [_text(note), *content]
    if is_error:
        return {"type": "tool_result", "tool_use_id": uid, "content": content, "is_error": True}
    return {"type": "tool_result", "tool_use_id": uid, "content": content}


_APPROVED = Verdict.approve()  # no approve callback: every call may run


def _stopped_call(started: dict[str, Any]) -> dict[str, Any]:
    """The record of a call Ctrl-C stopped, from its ``tool_start`` event's data."""
    record = _record(started["tool_use"], started["input"], "interrupted", True)
    del record["tool_use"]
    return {**record, "edited": started["edited"], "duration": time.monotonic() - started["at"]}


def _record(use: Any, tool_input: Any, verdict: str, is_error: bool) -> dict[str, Any]:
    """What became of one call (the audit keeps it; the ``tool_end`` event carries it)."""
    uid, name = _get(use, "id"), _get(use, "name")
    called = {"tool_use": use, "tool_use_id": uid, "name": name, "input": tool_input}
    return {**called, "verdict": verdict, "is_error": is_error}


def _error(tool_use_id: Any, text: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tool_use_id, "content": text, "is_error": True}


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _content(out: Any) -> tuple[Any, bool]:
    """A tool's return value as tool_result content, and whether it is an error."""
    if isinstance(out, str):
        return out or "(empty output)", False
    if hasattr(out, "exit_code") and hasattr(out, "output"):  # a BashResult
        return str(out.output), out.exit_code != 0
    if isinstance(out, list):  # content blocks (text, image)
        return as_dict(out), False
    return ("(no output)" if out is None else str(out)), False


# -- Stage 4: append. The only thing that changes the history. -------------------------


def append(messages: list[Any], item: Any) -> list[Any]:
    """Add one turn to the history, refusing to make one the API would reject.

    An SDK ``Message`` becomes an assistant turn of plain dicts (one with no
    content is not stored), a list of ``tool_result`` blocks one ``user``
    message, a string a ``user`` text turn; a message dict is added as it is.
    Raises ``HistoryError`` (worded like the API's 400), leaving ``messages`` as it was.
    """
    message = as_message(item)
    if message is not None:
        problems = check_next(messages, message)
        if problems:
            raise HistoryError(problems)
        messages.append(message)
    return messages


# -- The loop: the four stages in the lesson's order, yielding after each step ---------

_STAGE = {s: Event("stage", {"stage": s}) for s in ("request", "decide", "execute", "append")}


def steps(
    messages: list[Any],
    client: Any,
    *,
    tools: Iterable[Any] | None = None,
    system: str | None = DEFAULT_SYSTEM,
    max_turns: int = 20,
    approve: Callable[[Any], Any] | None = None,
    budget: Callable[[LoopResult], str] | None = None,
    stream: bool = False,
    cache: bool = False,
    run: LoopResult | None = None,
    **options: Any,
) -> Generator[Event, Any, None]:
    """The lesson's loop, one step at a time: ``for event in steps(messages, client): ...``.

    It changes ``messages`` in place, as the lesson does, and yields an ``Event``
    after each step; the last is ``done``, whose ``data["result"]`` is the LoopResult.
    The harness's duties are the few lines marked "harness". ``budget(run)``,
    asked before each request, names a budget used up ("" for none); ``run``
    carries on a run a limit ended (``AgentLoop`` passes it).
    """
    table, definitions = _table(tools), tool_params(_tools(tools))
    body = _body(messages, system, definitions, options.pop("model", None), DEFAULT_MAX_TOKENS)
    body.update({"cache_control": {"type": "ephemeral"}} if cache else {}, **options)
    if run is None:
        run = LoopResult(messages, start=max(0, len(messages) - 1), model=body["model"])
    start, stage, results = len(messages), "request", list[Any]()
    try:
        last = messages[-1] if messages else None
        if type(last) is dict and last.get("role") == "assistant" and not tool_calls(last):
            # harness: the history ends on the model's answer; sending it would be a prefill,
            # which models such as claude-sonnet-5-5 refuse (the Sonnet 5.5 migration guide)
            return (yield _done(run, "model", t("loop.start.answered")))
        while True:
            if run.turns >= max_turns:  # harness: a turn limit
                return (yield _done(run, "turn_limit", t("decide.max_turns", n=max_turns)))
            if budget is not None and (spent := budget(run)):  # harness: a token or cost budget
                return (yield _done(run, "budget", t("decide.budget", what=spent)))
            stage, results = "request", []
            yield _STAGE[stage]
            yield Event("request", {"turn": run.turns + 1})
            response = yield from _requested(client, body, stream)  # 1. request
            run.turns, run.stop_reason = run.turns + 1, response.stop_reason
            run.replies_usage.append(response.usage)
            run.model = getattr(client, "demo_model", None) or response.model
            yield Event("response", {"response": response})
            append(messages, response)  # save the reply
            yield Event("append", {"message": messages[-1], "index": len(messages) - 1})
            stage = "decide"
            yield _STAGE[stage]
            decision = decide(response)  # 2. decide
            yield Event("decision", {"decision": decision})
            if decision.action == "execute":
                stage = "execute"
                yield _STAGE[stage]
                results = yield from _run_tools(decision.tool_uses, table, approve)  # 3. execute
            elif decision.unanswered:  # harness: calls cut off by max_tokens are answered, not run
                results = not_run(decision.unanswered, t("result.cut_off", reason=decision.reason))
            elif decision.action == "continue":  # harness: pause_turn, send the reply back
                continue
            else:
                return (yield _done(run, "model", decision.explanation))
            stage = "append"
            yield _STAGE[stage]
            append(messages, results)  # 4. append
            yield Event("append", {"message": messages[-1], "index": len(messages) - 1})
            if decision.action != "execute":
                return (yield _done(run, "model", decision.explanation))
    except GeneratorExit:  # closed by its driver: nothing more to do
        raise
    except BaseException as e:  # harness: Ctrl-C or an error leaves every tool call answered
        raise _answer_pending(messages, start, e, stage, results) from None


def _requested(client: Any, body: dict[str, Any], stream: bool) -> Generator[Event, Any, Any]:
    """Stage 1 inside the loop: the request, its streamed text as events. A failed
    request yields an ``error`` event (send True to try again) and raises RequestError."""
    remember(client)  # its key is redacted from every saved history (agentlab.secrets)
    while True:
        try:
            if not stream:
                return client.messages.create(**body)
            with client.messages.stream(**body) as s:
                for text in s.text_stream:
                    yield Event("text", {"text": text})
                return s.get_final_message()
        except Exception as e:
            if not is_request_failure(e):
                raise
            error = RequestError(explain_error(e), e)
        if not (yield Event("error", {"error": error})):
            raise error from error.cause


def _done(run: LoopResult, ended: str, explanation: str) -> Event:
    run.ended, run.explanation, run.text = ended, explanation, final_text(run.new_messages)
    return Event(
        "done",
        {"ended": ended, "reason": run.stop_reason, "explanation": explanation, "result": run},
    )


def _answer_pending(
    messages: list[Any], start: int, error: BaseException, stage: str, results: list[Any]
) -> BaseException:
    """After Ctrl-C or an error: answer the calls of the reply this loop added that
    have no result yet (a finished call keeps its result), then say what to raise."""
    pending = tool_calls(messages[-1]) if len(messages) > start else []
    answered: list[dict[str, Any]] = []
    if pending:
        known = {r["tool_use_id"]: r for r in getattr(error, "results", None) or results}
        interrupt = isinstance(error, KeyboardInterrupt)
        why = t("result.interrupted") if interrupt else t("loopcore.result_error", stage=stage)
        answered = [known.get(b["id"]) or _error(b["id"], why) for b in pending]
        append(messages, answered)
    if isinstance(error, Interrupted):
        error.results = answered or error.results
    elif isinstance(error, KeyboardInterrupt):
        return Interrupted(answered).with_traceback(error.__traceback__)
    return error


def agent_loop(
    messages: list[Any],
    client: Any,
    *,
    on_event: Callable[[Event], None] | None = None,
    max_total_tokens: int | None = None,
    max_cost: float | None = None,
    **options: Any,
) -> LoopResult:
    """The lesson's loop: request, decide, execute, append, until the model stops.

    Runs ``steps`` to the end (see it for the options) and returns its LoopResult.
    ``max_turns`` counts model requests; ``max_total_tokens`` and ``max_cost``
    end the loop cleanly too. Ctrl-C raises ``Interrupted`` after answering every
    unfinished tool call, so ``messages`` stays a valid history.
    """
    if max_total_tokens is not None or max_cost is not None:
        options["budget"] = lambda run: over_budget(
            run, max_total_tokens=max_total_tokens, max_cost=max_cost
        )
    if isinstance(messages, str):
        messages = [{"role": "user", "content": messages}]
    loop = steps(messages, client, **options)
    try:
        for event in loop:
            if on_event is not None:
                on_event(event)
    except BaseException as e:
        if loop.gi_frame is None:  # type: ignore[attr-defined]  # raised by the loop, which has answered its calls
            raise
        loop.throw(e)  # raised between two steps: the loop answers its calls, then raises
        raise
    return event.data["result"]
