"""The agent loop: four stages, then the loop made of them.

The lesson's loop, with the stage each line belongs to::

    def agent_loop(messages):
        while True:
            response = client.messages.create(...)        # 1. request
            messages.append({"role": "assistant", ...})    #    (save the reply)
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
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from agentlab.errors import RequestError, explain_error, is_request_failure
from agentlab.history import HistoryError, as_dict, blocks, check_next
from agentlab.i18n import t
from agentlab.models import DEFAULT_MODEL  # the default model comes from models.json
from agentlab.tools.base import ToolInputError, tool_params, tool_table
from agentlab.tools.policy import Verdict, as_verdict, describe_call

if TYPE_CHECKING:
    from anthropic.types import Message, ToolUseBlock

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

Action = Literal["execute", "stop", "continue"]
# Why a loop ended. "model": the model's stop_reason ended it (read ``stop_reason``);
# the others are agentlab's own endings, never API stop reasons.
ENDINGS = ("model", "turn_limit", "budget", "interrupted", "error")
Stage = Literal["request", "decide", "execute", "append", "done"]


# ---------------------------------------------------------------------------
# Stage 1: request. Send history + system + tools; get one reply.
# ---------------------------------------------------------------------------


def _prebuilt(tools: Any) -> bool:
    return isinstance(tools, list) and all(type(x) is dict for x in tools)


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
    body: dict[str, Any] = {
        "model": model or DEFAULT_MODEL,
        "max_tokens": max_tokens,
        "messages": list(messages),  # a copy of the list: the caller's list is never touched
    }
    if system:
        body["system"] = system
    if tools:
        body["tools"] = tools if _prebuilt(tools) else tool_params(tools)
    if cache:
        body["cache_control"] = {"type": "ephemeral"}
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


@dataclass(frozen=True)
class Decision:
    """What the harness does with one reply.

    ``action`` is ``"execute"`` (run ``tool_uses``), ``"stop"`` or
    ``"continue"`` (ask again, for ``pause_turn``). ``unanswered`` holds tool
    calls that will NOT run (say, cut off by ``max_tokens``): the loop answers
    them with ``is_error`` results so no ``tool_use`` is left hanging.
    """

    action: Action
    reason: str | None
    tool_uses: tuple[ToolUseBlock, ...] = ()
    explanation: str = ""
    unanswered: tuple[ToolUseBlock, ...] = ()

    def __repr__(self) -> str:
        return f"Decision(action={self.action!r}, reason={self.reason!r}, tool_uses={len(self.tool_uses)})"


def _get(obj: Any, key: str, default: Any = None) -> Any:
    return obj.get(key, default) if isinstance(obj, dict) else getattr(obj, key, default)


def decide(response: Message) -> Decision:
    """Pure: the same reply always gives the same Decision, and nothing runs here."""
    reason = _get(response, "stop_reason")
    uses = tuple(b for b in _get(response, "content", None) or [] if _get(b, "type") == "tool_use")
    if reason == "tool_use" and uses:
        return Decision("execute", reason, uses, t("decide.tool_use", n=len(uses)))
    if reason == "pause_turn":
        return Decision("continue", reason, (), t("decide.pause_turn"), uses)
    known = ("end_turn", "stop_sequence", "max_tokens", "refusal", "model_context_window_exceeded")
    if reason in known:
        explanation = t(f"decide.{reason}")
    else:  # unknown, or "tool_use" with no tool_use block in it: run nothing
        explanation = t("decide.unknown", reason=reason)
    return Decision("stop", reason, (), explanation, uses)


def not_run(tool_uses: Iterable[Any], reason: str) -> list[dict[str, Any]]:
    """``is_error`` results for tool calls the harness will not run."""
    return [_error_result(u, t("result.not_run", reason=reason)) for u in tool_uses]


# ---------------------------------------------------------------------------
# Stage 3: execute. The harness runs each requested tool; one result each.
# ---------------------------------------------------------------------------


class Interrupted(KeyboardInterrupt):
    """Ctrl-C (or the notebook's stop button) while tools ran.

    ``results`` answers every tool call of the turn (the unfinished ones with
    ``is_error`` "interrupted" results), ready to append so the history stays valid.
    """

    def __init__(self, results: list[dict[str, Any]]):
        super().__init__(t("loop.interrupted"))
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
    if hasattr(out, "exit_code") and hasattr(out, "output"):  # a BashResult
        return str(out.output), out.exit_code != 0
    if isinstance(out, str):
        return out or "(empty output)", False
    if isinstance(out, list):  # content blocks (text, image)
        return as_dict(out), False
    return ("(no output)" if out is None else str(out)), False


def _run_one(
    use: Any, table: dict[str, Any], approve: Callable[[Any], Any] | None, emit: Callable[..., None]
) -> dict[str, Any]:
    name, tool_input = _get(use, "name"), _get(use, "input")
    tool = table.get(name)
    if tool is None:
        return _error_result(
            use, t("result.unknown_tool", name=name, names=", ".join(table) or "none")
        )
    if tool.fn is None:
        return _error_result(use, t("result.no_impl", name=name))
    verdict = Verdict.approve()
    if approve is not None:
        emit("approval", tool_use=use)
        verdict = as_verdict(approve(use))
        if verdict.action == "deny":
            emit(
                "tool_end",
                tool_use=use,
                verdict="denied",
                reason=verdict.reason,
                duration=0.0,
                is_error=True,
            )
            return _error_result(
                use, t("result.denied", reason=verdict.reason or t("result.denied_default"))
            )
        if verdict.action == "edit" and verdict.input is not None:
            tool_input = verdict.input
    emit("tool_start", tool_use=use, input=tool_input)
    start = time.monotonic()
    try:
        out = tool.run(tool_input)
        content, is_error = _content(out)
    except ToolInputError as e:
        out, content, is_error = None, t("result.bad_input", name=name, error=e), True
    except Exception as e:  # a failing tool is data for the model, not a broken loop
        out, content, is_error = (
            None,
            t("result.error", name=name, error=f"{type(e).__name__}: {e}"),
            True,
        )
    emit(
        "tool_end",
        tool_use=use,
        verdict={"approve": "approved", "edit": "edited"}.get(verdict.action, verdict.action),
        input=tool_input,
        duration=time.monotonic() - start,
        is_error=is_error,
        exit_code=getattr(out, "exit_code", None),
        truncated=getattr(out, "truncated", False),
        timed_out=getattr(out, "timed_out", False),
    )
    if verdict.action == "edit":  # tell the model what really ran
        note = t("result.edited", input=describe_call({"name": name, "input": tool_input}))
        content = (
            f"{note}\n{content}"
            if isinstance(content, str)
            else [{"type": "text", "text": note}, *content]
        )
    result: dict[str, Any] = {
        "type": "tool_result",
        "tool_use_id": _get(use, "id"),
        "content": content,
    }
    if is_error:
        result["is_error"] = True
    return result


def execute(
    tool_uses: Iterable[Any],
    tools: Iterable[Any] | None = None,
    *,
    approve: Callable[[Any], Any] | None = None,
    on_event: Callable[[Event], None] | None = None,
) -> list[dict[str, Any]]:
    """Run each tool call; return exactly one ``tool_result`` per call, in order.

    An unknown tool, bad input, an exception in the tool, or a denial by
    ``approve`` becomes an ``is_error`` result the model can read. ``tools``
    defaults to ``[agentlab.bash]``, as in the lesson.
    """
    if tools is None:
        from agentlab.tools import bash

        tools = [bash]
    table = tools if isinstance(tools, dict) else tool_table(tools)
    uses = list(tool_uses)

    def emit(kind: str, **data: Any) -> None:
        if on_event is not None:
            on_event(Event(kind, data))

    results: list[dict[str, Any]] = []
    for i, use in enumerate(uses):
        try:
            results.append(_run_one(use, table, approve, emit))
        except KeyboardInterrupt:
            results.append(_error_result(use, t("result.interrupted")))
            results += [_error_result(u, t("result.interrupted_skipped")) for u in uses[i + 1 :]]
            emit("interrupted", results=results)
            raise Interrupted(results) from None
    return results


# ---------------------------------------------------------------------------
# Stage 4: append. The only thing that changes the history.
# ---------------------------------------------------------------------------


def _as_message(item: Any) -> dict[str, Any] | None:
    if isinstance(item, str):
        return {"role": "user", "content": item}
    if hasattr(item, "stop_reason") and hasattr(item, "content"):  # an SDK Message
        content = [as_dict(b) for b in item.content]
        return {"role": "assistant", "content": content} if content else None
    if isinstance(item, dict) and "role" in item:
        return as_dict(item)
    if isinstance(item, (list, tuple)):
        return {"role": "user", "content": as_dict(list(item))}
    raise TypeError(
        f"append() takes a Message, a list of tool_result blocks, a string or a message dict, not {item!r}"
    )


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


# ---------------------------------------------------------------------------
# The loop, made of the four stages
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Event:
    """Something that happened in the loop, for views and logs.

    ``kind`` is one of: stage, request, response, text, decision, approval,
    tool_start, tool_end, results, append, interrupted, error, done, reset.
    """

    kind: str
    data: dict[str, Any] = field(default_factory=dict)


def _usage(response: Any) -> dict[str, int]:
    u = _get(response, "usage")
    keys = (
        "input_tokens",
        "output_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
    )
    return {k: int(_get(u, k, 0) or 0) for k in keys}


@dataclass
class LoopResult:
    """How a run of the loop ended."""

    messages: list[Any]
    text: str
    stop_reason: str | None  # the API's stop_reason of the last reply (None if no reply)
    turns: int
    usage: dict[str, int]
    turn_usage: list[dict[str, int]] = field(default_factory=list)
    explanation: str = ""
    start: int = 0  # where this run began in ``messages`` (a follow-up starts later)
    ended: str | None = None  # why the loop ended: ENDINGS (agentlab's word, not the API's)

    @property
    def new_messages(self) -> list[Any]:
        """The messages this run added, starting with its task."""
        return self.messages[self.start :]

    def __repr__(self) -> str:
        return t(
            "result.repr",
            ended=self.ended,
            reason=self.stop_reason,
            turns=self.turns,
            n=len(self.messages),
        )

    def _repr_markdown_(self) -> str:
        import html

        from agentlab.history import to_markdown

        head = (
            html.escape(self.text) if self.text else f"*({self.explanation or self.stop_reason})*"
        )
        body = to_markdown(self.new_messages).replace("<", "&lt;")
        return (
            f"{head}\n\n<details><summary>{len(self.new_messages)} messages, {self.turns} turn(s), "
            f"stop_reason {self.stop_reason}</summary>\n\n{body}\n</details>\n"
        )

    def _repr_html_(self) -> str:
        """The answer on top and the transcript folded below (cards, as the views draw them)."""
        from agentlab.render import result_html

        return result_html(self)


class AgentLoop:
    """The loop as a stepper: ``.step()`` runs one stage, ``.turn()`` one model
    turn, ``.run()`` to the end. ``.stage`` names what comes next.

    Views subscribe with ``.subscribe(fn)``; every stage emits ``Event``s.
    """

    def __init__(
        self,
        client: Any = None,
        messages: list[Any] | str | None = None,
        *,
        tools: Iterable[Any] | None = None,
        system: str | None = DEFAULT_SYSTEM,
        model: str | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        max_turns: int = 20,
        approve: Callable[[Any], Any] | None = None,
        stream: bool = False,
        on_event: Callable[[Event], None] | None = None,
        max_total_tokens: int | None = None,
        max_cost: float | None = None,
        cache: bool = False,
        **params: Any,
    ):
        if client is None:
            from agentlab.offline import connect

            client = connect()
        if max_turns < 1:
            raise ValueError("max_turns must be at least 1")
        if tools is None:
            from agentlab.tools import bash

            tools = [bash]
        self.client = client
        self.messages: list[Any] = (
            [] if messages is None else messages if isinstance(messages, list) else []
        )
        if isinstance(messages, str):
            append(self.messages, messages)
        self.tools = list(tools)
        self._params = tool_params(self.tools)  # built once: the same definitions every turn
        self._table = tool_table(self.tools)
        self.system, self.model, self.max_tokens = system, model, max_tokens
        self.max_turns, self.approve, self.stream, self.params = max_turns, approve, stream, params
        self.max_total_tokens, self.max_cost, self.cache = max_total_tokens, max_cost, cache
        self._listeners: list[Callable[[Event], None]] = [on_event] if on_event else []
        self._start = self._first = max(0, len(self.messages) - 1)  # the task's index
        self._initial = list(self.messages)
        self._clear()

    def _clear(self) -> None:
        self.stage: Stage = "request"
        self.response: Message | None = None
        self.decision: Decision | None = None
        self.results: list[dict[str, Any]] | None = None
        self.turns = 0
        self._base = 0  # turns made before the current task (see ask)
        self.turn_usage: list[dict[str, int]] = []
        self.audit: list[dict[str, Any]] = []
        self.durations: dict[str, float] = {}
        self.stop_reason: str | None = None  # the API's value, from the last reply
        self.ended: str | None = None  # one of ENDINGS once the loop is done
        self.explanation = ""
        self.error: RequestError | None = None

    # -- events -------------------------------------------------------------
    def subscribe(self, fn: Callable[[Event], None]) -> None:
        self._listeners.append(fn)

    def unsubscribe(self, fn: Callable[[Event], None]) -> None:
        if fn in self._listeners:
            self._listeners.remove(fn)

    def _emit(self, kind: str, **data: Any) -> None:
        if kind == "tool_end":
            use = data.get("tool_use")
            self.durations[str(_get(use, "id"))] = float(data.get("duration") or 0.0)
            self.audit.append(
                {
                    "tool_use_id": _get(use, "id"),
                    "name": _get(use, "name"),
                    "input": data.get("input", _get(use, "input")),
                    **{k: v for k, v in data.items() if k not in ("tool_use", "input")},
                }
            )
        if self._listeners:
            event = Event(kind, data)
            for fn in list(self._listeners):
                fn(event)

    # -- state ----------------------------------------------------------------
    @property
    def done(self) -> bool:
        return self.stage == "done"

    @property
    def usage(self) -> dict[str, int]:
        total: dict[str, int] = {}
        for u in self.turn_usage:
            for k, v in u.items():
                total[k] = total.get(k, 0) + v
        return total

    def _finish(self, ended: str, explanation: str) -> None:
        """End the loop: ``ended`` is one of ENDINGS; ``stop_reason`` keeps the API's value."""
        self.stage, self.ended, self.explanation = "done", ended, explanation
        self._emit("done", ended=ended, reason=self.stop_reason, explanation=explanation)

    # -- the four stages ------------------------------------------------------
    def _request(self) -> None:
        if self.turns - self._base >= self.max_turns:
            self._finish("turn_limit", t("decide.max_turns", n=self.max_turns))
            return
        if self.max_total_tokens is not None or self.max_cost is not None:
            from agentlab.usage import over_budget

            what = over_budget(self, max_total_tokens=self.max_total_tokens, max_cost=self.max_cost)
            if what:
                self._finish("budget", t("decide.budget", what=what))
                return
        self._emit("request", turn=self.turns + 1)
        try:
            response = request(
                self.client,
                self.messages,
                system=self.system,
                tools=self._params,
                model=self.model,
                max_tokens=self.max_tokens,
                stream=self.stream,
                on_text=lambda text: self._emit("text", text=text),
                cache=self.cache,
                **self.params,
            )
        except Exception as e:
            if not is_request_failure(e):
                raise
            self.error = RequestError(explain_error(e), e)
            self._emit("error", error=self.error)
            raise self.error from e
        self.error = None
        self.turns += 1
        self.response = response
        self.stop_reason = _get(response, "stop_reason")
        self.turn_usage.append(_usage(response))
        self._emit("response", response=response, usage=self.turn_usage[-1])
        append(self.messages, response)  # the lesson saves the reply first, then decides
        self._emit("append", message=self.messages[-1], index=len(self.messages) - 1)
        self.stage = "decide"

    def _decide(self) -> None:
        assert self.response is not None
        self.decision = d = decide(self.response)
        self._emit("decision", decision=d)
        if d.action == "execute":
            self.stage = "execute"
        elif d.unanswered:
            self.results = not_run(d.unanswered, t("result.cut_off", reason=d.reason))
            self.stage = "append"
        elif d.action == "continue":
            self.stage = "request"
        else:
            self._finish("model", d.explanation)

    def _execute(self) -> None:
        assert self.decision is not None
        try:
            self.results = execute(
                self.decision.tool_uses, self._table, approve=self.approve, on_event=self._forward
            )
        except Interrupted as e:
            append(self.messages, e.results)  # every tool_use answered: the history stays valid
            self._emit("append", message=self.messages[-1], index=len(self.messages) - 1)
            self._finish("interrupted", t("loop.interrupted"))
            raise
        self._emit("results", results=self.results)
        self.stage = "append"

    def _forward(self, event: Event) -> None:
        self._emit(event.kind, **event.data)

    def _append(self) -> None:
        assert self.decision is not None and self.results is not None
        append(self.messages, self.results)
        self._emit("append", message=self.messages[-1], index=len(self.messages) - 1)
        self.results = None
        if self.decision.action in ("execute", "continue"):
            self.stage = "request"
        else:
            self._finish("model", self.decision.explanation)

    # -- driving it -----------------------------------------------------------
    def step(self) -> str:
        """Run the next stage; return its name (``"done"`` once the loop has ended)."""
        stage = self.stage
        if stage == "done":
            return stage
        self._emit("stage", stage=stage)
        {
            "request": self._request,
            "decide": self._decide,
            "execute": self._execute,
            "append": self._append,
        }[stage]()
        return stage

    def turn(self) -> str:
        """Run stages until the next model request is due (or the loop ends)."""
        self.step()
        while self.stage not in ("request", "done"):
            self.step()
        return self.stage

    def run(self) -> LoopResult:
        """Run to the end and return the result."""
        while not self.done:
            self.step()
        return self.result()

    def ask(self, task: str) -> AgentLoop:
        """Add a new user message and get ready to run again (a follow-up question)."""
        if self.stage not in ("request", "done"):
            raise RuntimeError(f"finish the current turn first (next stage: {self.stage})")
        append(self.messages, task)
        self._emit("append", message=self.messages[-1], index=len(self.messages) - 1)
        self.stage, self.stop_reason, self.ended, self.explanation = "request", None, None, ""
        self._start, self._base = len(self.messages) - 1, self.turns  # max_turns counts per task
        return self

    def reset(self) -> None:
        """Put the history back as it was when the loop was made, and start over."""
        self.messages[:] = self._initial
        self._start = self._first
        self._clear()
        self._emit("reset")

    def result(self) -> LoopResult:
        return LoopResult(
            messages=self.messages,
            text=final_text(self.messages[self._start :]),
            start=self._start,
            stop_reason=self.stop_reason,
            ended=self.ended,
            turns=self.turns,
            usage=self.usage,
            turn_usage=list(self.turn_usage),
            explanation=self.explanation,
        )

    def __repr__(self) -> str:
        return f"AgentLoop(stage={self.stage!r}, turns={self.turns}, messages={len(self.messages)})"


def final_text(messages: Sequence[Any]) -> str:
    """The text of the last assistant message that has any."""
    for message in reversed(messages):
        if _get(message, "role") == "assistant":
            text = "\n".join(
                str(b.get("text", "")) for b in blocks(message) if b.get("type") == "text"
            )
            if text.strip():
                return text
    return ""


def agent_loop(
    messages: list[Any],
    client: Any = None,
    *,
    tools: Iterable[Any] | None = None,
    system: str | None = DEFAULT_SYSTEM,
    max_turns: int = 20,
    on_event: Callable[[Event], None] | None = None,
    **options: Any,
) -> LoopResult:
    """The lesson's loop: request, decide, execute, append, until the model stops.

    Changes ``messages`` in place (like the lesson) and returns a LoopResult.
    ``max_turns`` counts model requests and ends the loop cleanly.
    """
    loop = AgentLoop(
        client,
        messages,
        tools=tools,
        system=system,
        max_turns=max_turns,
        on_event=on_event,
        **options,
    )
    return loop.run()
