"""The agent loop: its four stages (request, decide, execute, append) and the loop made of them.

Read it beside the lesson's loop: ``steps`` below is that loop, its lines marked ``# 1.`` to
``# 4.``, with the harness's duties marked ``# harness``::

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

The model decides; the harness executes: only ``decide`` saying ``execute`` runs a tool, and
every ``tool_use`` gets one ``tool_result``. ``agent_loop`` runs ``steps`` out; AgentLoop steps it.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from agentlab import errors, harness, history
from agentlab.errors import Interrupted
from agentlab.harness import Event, error_result, get, run_one
from agentlab.history import LoopResult
from agentlab.i18n import t
from agentlab.models import DEFAULT_MODEL
from agentlab.secrets import remember
from agentlab.tools.base import tool_params
from agentlab.tools.todo import TodoList, todo_tool
from agentlab.usage import over_budget

if TYPE_CHECKING:
    from anthropic.types import Message, ToolUseBlock

__all__ = ["DEFAULT_MAX_TOKENS", "DEFAULT_SYSTEM", "Decision", "Event", "request", "steps"]
__all__ += ["Interrupted", "LoopResult", "agent_loop", "append", "decide", "execute", "not_run"]

DEFAULT_MAX_TOKENS = 8000  # as in the lesson
DEFAULT_SYSTEM = (
    "You are a coding agent working in a terminal. Use the bash tool to inspect and "
    "change files; act first, then report what you found, briefly."
)


# -- Stage 1: request. Send history + system + tools; get one reply. -------------------
def request(
    client: Any,
    messages: Sequence[Any],
    *,
    system: str | None = None,
    tools: Iterable[Any] | None = None,
    stream: bool = False,
    on_text: Callable[[str], None] | None = None,
    cache: bool = False,
    **params: Any,
) -> Message:
    """Ask the model once; never changes ``messages``. ``model``, ``max_tokens`` and the
    API's other fields go in ``params``; ``stream`` passes text to ``on_text`` as it comes."""
    remember(client)  # its key is redacted from every saved history (agentlab.secrets)
    body = _body(messages, system, tool_params(tools) if tools else None, cache, params)
    if not stream:
        return client.messages.create(**body)
    with client.messages.stream(**body) as s:
        for text in s.text_stream:
            if on_text is not None:
                on_text(text)
        return s.get_final_message()


def _body(messages: Any, system: Any, tools: Any, cache: bool, params: Any) -> dict[str, Any]:
    if type(messages) is not list and not isinstance(messages, tuple):
        errors.wrong_history(messages)  # a string, one message...: fail now, saying the fix
    body = {"model": DEFAULT_MODEL, "max_tokens": DEFAULT_MAX_TOKENS, "messages": messages}
    body.update({"system": system} if system else {}, **({"tools": tools} if tools else {}))
    body.update({"cache_control": {"type": "ephemeral"}} if cache else {}, **params)
    body["model"] = body["model"] or DEFAULT_MODEL
    return body  # the history goes as it is: nothing here or in the SDK changes it


# -- Stage 2: decide. Read stop_reason; only "tool_use" leads to execution. ------------

Action = Literal["execute", "stop", "continue"]
_KNOWN = ("end_turn", "stop_sequence", "max_tokens", "refusal", "model_context_window_exceeded")


class Decision(NamedTuple):
    """What the harness does with one reply: ``action`` "execute" (run ``tool_uses``),
    "stop", or "continue" (ask again: ``pause_turn``). ``unanswered``: calls that will
    NOT run (cut off by ``max_tokens``), answered by the loop with ``is_error`` results."""

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
        n = len(self.tool_uses)
        return f"Decision(action={self.action!r}, reason={self.reason!r}, tool_uses={n})"


def decide(response: Message) -> Decision:
    """Pure: the same reply always gives the same Decision, and nothing runs here."""
    if isinstance(response, dict) and "stop_reason" in response:  # a reply written as a dict
        reason, content = response["stop_reason"], response.get("content")
    elif hasattr(response, "stop_reason"):
        reason, content = response.stop_reason, response.content
    else:
        errors.wrong_reply(response)  # the history, a message, a string: fail now, with the fix
    uses: Any = tuple([b for b in content or () if get(b, "type") == "tool_use"])
    if reason == "tool_use" and uses:
        return Decision("execute", reason, uses)
    if reason == "pause_turn":
        return Decision("continue", reason, (), uses)
    return Decision("stop", reason, (), uses)  # anything else: run nothing


def not_run(tool_uses: Iterable[Any], reason: str) -> list[dict[str, Any]]:
    """``is_error`` results for tool calls the harness will not run."""
    return [error_result(get(u, "id"), t("result.not_run", reason=reason)) for u in tool_uses]


# -- Stage 3: execute. The harness runs each requested tool; one result each. ----------
def execute(
    tool_uses: Iterable[Any],
    tools: Iterable[Any] | None = None,
    *,
    approve: Callable[[Any], Any] | None = None,
    on_event: Callable[[Event], None] | None = None,
    audit: list[dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """Run each tool call; return exactly one ``tool_result`` per call, in order.

    A failing, unknown, denied or interrupted tool becomes an ``is_error`` result (Ctrl-C
    raises ``Interrupted`` holding them all); ``audit`` (a list) gets a record per call."""
    uses = errors.tool_use_list(tool_uses)  # the whole reply, its content: fail now, say why
    parent = harness.parent_of(approve)  # a loop a tool runs (task) asks it too
    return harness.drive(_run_tools(uses, harness.table(tools), parent), on_event, audit)


def _run_tools(uses: Sequence[Any], table: Any, parent: Any) -> Generator[Event, Any, Any]:
    """Stage 3 as steps: each call in order with its events, then the results."""
    results: list[dict[str, Any]] = []
    try:
        for use in uses:
            results.append((yield from run_one(use, table, parent)))
        yield Event("results", {"results": results})
    except KeyboardInterrupt:  # Ctrl-C keeps its meaning: stop, with every call answered
        if len(results) < len(uses):
            results.append(error_result(get(uses[len(results)], "id"), t("result.interrupted")))
        skipped = t("result.interrupted_skipped")
        results += [error_result(get(u, "id"), skipped) for u in uses[len(results) :]]
        raise Interrupted(results) from None
    return results


# -- Stage 4: append. The only thing that changes the history. -------------------------
def append(messages: list[Any], item: Any) -> list[Any]:
    """Add one turn to the history as plain dicts (``history.as_message``), refusing to
    make one the API would reject: ``HistoryError``, worded like its 400; nothing added."""
    message = history.as_message(item)
    if message is not None:
        problems = history.check_at(len(messages), messages[-1] if messages else None, message)
        if problems:
            raise history.HistoryError(problems)
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
    run: LoopResult | None = None,
    todos: TodoList | None = None,
    **options: Any,
) -> Generator[Event, Any, Any]:
    """The lesson's loop, one step at a time: ``for event in steps(messages, client): ...``.

    Changes ``messages`` in place; the last event is ``done``, holding the LoopResult.
    ``budget(run)`` names a budget used up ("": none); ``run`` carries on a run.
    ``todos`` (lesson 06): the ``todo`` tool, and a reminder when the plan goes stale."""
    if todos is not None:  # lesson 06: the model plans with a todo list the harness keeps
        tools = [*harness.with_default(tools), todo_tool(todos)]
    table, definitions = harness.table(tools), tool_params(harness.with_default(tools))
    body = _body(messages, system, definitions, options.pop("cache", False), options)
    run = run or LoopResult(messages, start=max(0, len(messages) - 1), model=body["model"])
    parent = harness.parent_of(approve, budget, run)  # what a tool's own loop (task) holds to
    start, stage, results = len(messages), "request", list[Any]()
    try:
        if history.ends_on_answer(messages):
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
            response = yield from harness.requested(client, body, stream, run.turns)  # 1. request
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
                results = yield from _run_tools(decision.tool_uses, table, parent)  # 3. execute
            elif decision.unanswered:  # harness: calls cut off by max_tokens: answered, never run
                results = not_run(decision.unanswered, t("result.cut_off", reason=decision.reason))
            elif decision.action == "continue":  # harness: pause_turn, send the reply back
                continue
            else:
                return (yield _done(run, "model", decision.explanation))
            stage = "append"
            yield _STAGE[stage]
            if todos is not None:  # lesson 06: a reminder of the plan, after the results
                results = todos.after_round(decision.tool_uses, results)
                if todos.reminded:
                    yield Event("reminder", {"text": results[-1]["text"]})
            append(messages, results)  # 4. append
            yield Event("append", {"message": messages[-1], "index": len(messages) - 1})
            if decision.action != "execute":
                return (yield _done(run, "model", decision.explanation))
    except (Exception, KeyboardInterrupt) as e:  # harness: Ctrl-C or an error: calls answered
        raise _answer_pending(messages, start, e, stage, results) from None


def _done(run: LoopResult, ended: str, explanation: str) -> Event:
    run.ended, run.explanation = ended, explanation
    run.text = history.final_text(run.messages[run.start :])
    done = {"ended": ended, "reason": run.stop_reason, "explanation": explanation}
    return Event("done", {**done, "result": run})


def _answer_pending(
    messages: list[Any], start: int, error: BaseException, stage: str, results: list[Any]
) -> BaseException:
    """After Ctrl-C or an error: answer this loop's calls left without a result (a finished
    call keeps its own); return what to raise."""
    pending = history.tool_calls(messages[-1]) if len(messages) > start else []
    answered: list[dict[str, Any]] = []
    if pending:
        known = {r["tool_use_id"]: r for r in getattr(error, "results", None) or results}
        interrupt = isinstance(error, KeyboardInterrupt)
        why = t("result.interrupted") if interrupt else t("loopcore.result_error", stage=stage)
        answered = [known.get(b["id"]) or error_result(b["id"], why) for b in pending]
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
    """The lesson's loop to the end (``steps``, run out); returns its LoopResult. Ctrl-C
    raises ``Interrupted`` once every unfinished tool call has its result."""
    if max_total_tokens is not None or max_cost is not None:
        limits: dict[str, Any] = {"max_total_tokens": max_total_tokens, "max_cost": max_cost}
        options["budget"] = lambda run: over_budget(run, **limits)
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
