"""The loop made of the four stages: ``agent_loop``, and ``AgentLoop``, one stage at a time.

``AgentLoop`` is the stepper the views drive: ``.step()`` runs one stage,
``.turn()`` one model turn, ``.run()`` to the end. What the views need and
the API does not (events, durations, the audit of what ran, usage) lives
here, never in the history.

Whatever stops a stage half way (Ctrl-C, the notebook's stop button, an
exception in a tool's approval or in a view's callback), the stepper answers
every tool call left without a result before the exception leaves it, so the
history is always one the API accepts and the conversation can go on
(``loop.ask("...")``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Literal

from agentlab.errors import RequestError, explain_error, is_request_failure
from agentlab.events import Event
from agentlab.history import blocks
from agentlab.i18n import t
from agentlab.loop import (
    DEFAULT_MAX_TOKENS,
    DEFAULT_SYSTEM,
    Decision,
    Interrupted,
    _error_result,
    append,
    decide,
    execute,
    not_run,
    request,
)
from agentlab.results import ENDINGS, LoopResult, counts, final_text, total
from agentlab.tools.base import tool_params, tool_table

if TYPE_CHECKING:
    from anthropic.types import Message

__all__ = ["ENDINGS", "AgentLoop", "Stage", "agent_loop"]

Stage = Literal["request", "decide", "execute", "append", "done"]


def _pending(messages: list[Any], since: int) -> list[dict[str, Any]]:
    """The tool calls of the last message if it is an assistant turn this loop added
    (at ``since`` or later): none of them has a result yet."""
    last = messages[-1] if len(messages) > since else None
    if not isinstance(last, dict) or last.get("role") != "assistant":
        return []
    return [b for b in blocks(last) if b.get("type") == "tool_use"]


class AgentLoop:
    """The loop as a stepper: ``.step()`` runs one stage, ``.turn()`` one model
    turn, ``.run()`` to the end. ``.stage`` names what comes next.

    Views subscribe with ``.subscribe(fn)``; every stage emits ``Event``s
    (built only while someone listens).
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
            from agentlab.fakeapi.offline import connect

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
        self._begin()

    def _clear(self) -> None:
        self.stage: Stage = "request"
        self.response: Message | None = None
        self.decision: Decision | None = None
        self.results: list[dict[str, Any]] | None = None
        self.turns = 0
        self._base = 0  # turns made before the current task (see ask)
        self._usages: list[Any] = []  # each reply's usage as it came (turn_usage reads them)
        self._turn_usage: list[dict[str, int]] = []
        self.audit: list[dict[str, Any]] = []  # one record per tool call: what ran, verdict, time
        self.stop_reason: str | None = None  # the API's value, from the last reply
        self.ended: str | None = None  # one of ENDINGS once the loop is done
        self.explanation = ""
        self.error: RequestError | None = None
        self.stopped_at: str | None = None  # the stage an interrupt or error stopped

    def _begin(self) -> None:
        """Where a new (or reset) loop starts, read from the history it was given.

        Ending on a user turn (the task, tool results): the next stage is request.
        Ending on an assistant turn, the conversation is the model's answer:
        sending it again would be a prefill, which models such as
        claude-sonnet-5-5 refuse (the Sonnet 5.5 migration guide), so the loop starts as done and
        waits for a follow-up (``ask``). A plain history keeps no stop_reason,
        so a reply that paused (pause_turn) cannot be told from a finished one
        here; a loop that gets the paused reply itself still sends it back.
        An assistant turn with tool calls that have no results is not an
        answer: those calls need their results before anything else, and this
        loop did not ask for them, so it leaves them to the caller (the request
        stage reports the API's 400; no follow-up can be added before them).
        """
        self._asked_at = len(self.messages)  # where the next request's reply goes
        last = self.messages[-1] if self.messages else None
        if not isinstance(last, dict) or last.get("role") != "assistant":
            return
        if not _pending(self.messages, len(self.messages) - 1):
            self.stage, self.ended = "done", "model"
            self.explanation = t("loop.start.answered")

    # -- events -------------------------------------------------------------
    def subscribe(self, fn: Callable[[Event], None]) -> None:
        self._listeners.append(fn)

    def unsubscribe(self, fn: Callable[[Event], None]) -> None:
        if fn in self._listeners:
            self._listeners.remove(fn)

    def _emit(self, kind: str, **data: Any) -> None:
        """Tell the listeners. Callers check ``self._listeners`` first: no listener, no Event."""
        event = Event(kind, data)
        for fn in list(self._listeners):
            fn(event)

    def _on_tool(self, event: Event) -> None:
        """``execute``'s events, passed on to the listeners."""
        for fn in list(self._listeners):
            fn(event)

    def _on_text(self, text: str) -> None:
        if self._listeners:
            self._emit("text", text=text)

    # -- state ----------------------------------------------------------------
    @property
    def done(self) -> bool:
        return self.stage == "done"

    @property
    def turn_usage(self) -> list[dict[str, int]]:
        """The tokens of each model request, in order (read from the replies when asked)."""
        while len(self._turn_usage) < len(self._usages):
            self._turn_usage.append(counts(self._usages[len(self._turn_usage)]))
        return self._turn_usage

    @property
    def durations(self) -> dict[str, float]:
        """How long each tool call ran, by tool_use id (from the audit)."""
        return {str(a["tool_use_id"]): a["duration"] for a in self.audit if "duration" in a}

    @property
    def usage(self) -> dict[str, int]:
        return total(self.turn_usage)

    def _finish(self, ended: str, explanation: str) -> None:
        """End the loop: ``ended`` is one of ENDINGS; ``stop_reason`` keeps the API's value."""
        self.stage, self.ended, self.explanation = "done", ended, explanation
        if self._listeners:
            self._emit("done", ended=ended, reason=self.stop_reason, explanation=explanation)

    # -- the four stages ------------------------------------------------------
    def _request(self) -> None:
        self._asked_at = len(self.messages)
        if self.turns - self._base >= self.max_turns:
            self._finish("turn_limit", t("decide.max_turns", n=self.max_turns))
            return
        if self.max_total_tokens is not None or self.max_cost is not None:
            from agentlab.usage import over_budget

            what = over_budget(self, max_total_tokens=self.max_total_tokens, max_cost=self.max_cost)
            if what:
                self._finish("budget", t("decide.budget", what=what))
                return
        if self._listeners:
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
                on_text=self._on_text if self.stream else None,
                cache=self.cache,
                **self.params,
            )
        except Exception as e:
            if not is_request_failure(e):
                raise
            self.error = RequestError(explain_error(e), e)
            if self._listeners:
                self._emit("error", error=self.error)
            raise self.error from e
        self.error = None
        self.turns += 1
        self.response = response
        if type(response) is dict:  # a reply written as a dict
            self.stop_reason = response.get("stop_reason")
            self._usages.append(response.get("usage"))
        else:
            self.stop_reason = response.stop_reason
            self._usages.append(getattr(response, "usage", None))
        if self._listeners:
            self._emit("response", response=response, usage=self.turn_usage[-1])
        append(self.messages, response)  # the lesson saves the reply first, then decides
        if self._listeners:
            self._emit("append", message=self.messages[-1], index=len(self.messages) - 1)
        self.stage = "decide"

    def _decide(self) -> None:
        assert self.response is not None
        self.decision = d = decide(self.response)
        if self._listeners:
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
        self.results = execute(
            self.decision.tool_uses,
            self._table,
            approve=self.approve,
            on_event=self._on_tool if self._listeners else None,
            audit=self.audit,
        )
        if self._listeners:
            self._emit("results", results=self.results)
        self.stage = "append"

    def _append(self) -> None:
        assert self.decision is not None and self.results is not None
        append(self.messages, self.results)
        if self._listeners:
            self._emit("append", message=self.messages[-1], index=len(self.messages) - 1)
        self.results = None
        if self.decision.action in ("execute", "continue"):
            self.stage = "request"
        else:
            self._finish("model", self.decision.explanation)

    # -- when a stage is stopped half way -------------------------------------
    def _stop(self, error: BaseException) -> BaseException:
        """After Ctrl-C or an exception in the middle of a stage: answer every
        tool call left without a result, end the loop, and return what to raise.

        The results that exist are kept (a tool that finished keeps its output);
        the others say the call was interrupted. A loop that had already ended
        is left as it was.
        """
        interrupt, stage = isinstance(error, KeyboardInterrupt), self.stage
        pending = _pending(self.messages, self._asked_at)
        results: list[dict[str, Any]] = []
        if pending:
            known = {r.get("tool_use_id"): r for r in self.results or ()}
            known.update({r.get("tool_use_id"): r for r in getattr(error, "results", None) or ()})
            why = t("result.interrupted") if interrupt else t("loopcore.result_error", stage=stage)
            results = [known.get(u.get("id")) or _error_result(u, why) for u in pending]
            append(self.messages, results)
        if self.stage != "done" or results:
            self.results, self.stopped_at = None, stage
            if interrupt:
                explanation = t("loopcore.interrupted", stage=t(f"stage.{stage}"), n=len(results))
            else:
                what = f"{type(error).__name__}: {error}"
                explanation = t("loopcore.failed", stage=t(f"stage.{stage}"), error=what)
            self.stage, self.ended, self.explanation = (
                "done",
                "interrupted" if interrupt else "error",
                explanation,
            )
            if self._listeners:
                if results:
                    self._emit("append", message=self.messages[-1], index=len(self.messages) - 1)
                self._emit(
                    "done", ended=self.ended, reason=self.stop_reason, explanation=explanation
                )
        if interrupt and not isinstance(error, Interrupted):
            return Interrupted(results, self.explanation).with_traceback(error.__traceback__)
        if isinstance(error, Interrupted) and results:
            error.results = results
        return error

    # -- driving it -----------------------------------------------------------
    def step(self) -> str:
        """Run the next stage; return its name (``"done"`` once the loop has ended)."""
        try:  # first, so that an interrupt anywhere in here is caught
            stage = self.stage
            if stage == "done":
                return stage
            if self._listeners:
                self._emit("stage", stage=stage)
            _STAGES[stage](self)
            return stage
        except RequestError:  # nothing was added: the same request can be tried again
            raise
        except BaseException as e:
            raise self._stop(e) from None

    def turn(self) -> str:
        """Run stages until the next model request is due (or the loop ends)."""
        try:
            self.step()
            while self.stage != "request" and self.stage != "done":
                self.step()
            return self.stage
        except RequestError:
            raise
        except BaseException as e:
            raise self._stop(e) from None

    def run(self) -> LoopResult:
        """Run to the end and return the result (``step`` after ``step``, written out)."""
        try:
            while (stage := self.stage) != "done":
                if self._listeners:
                    self._emit("stage", stage=stage)
                _STAGES[stage](self)
            return self.result()
        except RequestError:
            raise
        except BaseException as e:
            raise self._stop(e) from None

    def ask(self, task: str) -> AgentLoop:
        """Add a new user message and get ready to run again (a follow-up question)."""
        if self.stage not in ("request", "done"):
            raise RuntimeError(f"finish the current turn first (next stage: {self.stage})")
        append(self.messages, task)
        if self._listeners:
            self._emit("append", message=self.messages[-1], index=len(self.messages) - 1)
        self.stage, self.stop_reason, self.ended, self.explanation = "request", None, None, ""
        self.stopped_at = None
        self._start, self._base = len(self.messages) - 1, self.turns  # max_turns counts per task
        return self

    def reset(self) -> None:
        """Put the history back as it was when the loop was made, and start over."""
        self.messages[:] = self._initial
        self._start = self._first
        self._clear()
        self._begin()
        if self._listeners:
            self._emit("reset")

    def result(self) -> LoopResult:
        return LoopResult(
            messages=self.messages,
            text=final_text(self.messages[self._start :]),
            start=self._start,
            stop_reason=self.stop_reason,
            ended=self.ended,
            turns=self.turns,
            replies_usage=list(self._usages),
            explanation=self.explanation,
        )

    def __repr__(self) -> str:
        return f"AgentLoop(stage={self.stage!r}, turns={self.turns}, messages={len(self.messages)})"


# What each stage runs (``step`` and ``run`` look it up by the stage's name).
_STAGES: dict[str, Callable[[AgentLoop], None]] = {
    "request": AgentLoop._request,
    "decide": AgentLoop._decide,
    "execute": AgentLoop._execute,
    "append": AgentLoop._append,
}


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
    ``max_turns`` counts model requests and ends the loop cleanly. Ctrl-C
    raises ``Interrupted`` after answering every unfinished tool call, so
    ``messages`` stays a valid history.
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
