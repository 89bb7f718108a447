"""``AgentLoop``: the loop of agentlab/loop.py (``steps``), advanced one stage at a time.

What the views need and the API does not (events, the audit of what ran, each reply's
usage) is kept here from the events the loop yields, never in the history. Whatever stops
a stage half way (Ctrl-C, the stop button, an exception in an approval or a view), every
tool call has its result first: the API accepts the history, ``loop.ask("...")`` goes on.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable
from dataclasses import replace
from inspect import GEN_SUSPENDED, getgeneratorstate
from typing import TYPE_CHECKING, Any, Literal

from agentlab.errors import Interrupted, RequestError
from agentlab.harness import Event, Parent, with_default
from agentlab.history import LoopResult
from agentlab.i18n import t
from agentlab.loop import DEFAULT_MAX_TOKENS, DEFAULT_SYSTEM, Decision, append, steps
from agentlab.tools.policy import Verdict, as_verdict
from agentlab.usage import over_budget, usage_of

if TYPE_CHECKING:
    from anthropic.types import Message

__all__ = ["ENDINGS", "AgentLoop", "Stage"]

Stage = Literal["request", "decide", "execute", "append", "done"]
# Why a loop ended. "model": the model's stop_reason ended it (read ``stop_reason``);
# the others are agentlab's own endings, never API stop reasons.
ENDINGS = ("model", "turn_limit", "budget", "interrupted", "error")
_APPROVED = Verdict.approve()


class AgentLoop:
    """The loop as a stepper: ``.step()`` runs one stage, ``.turn()`` one model turn,
    ``.run()`` to the end; ``.stage`` names what comes next. ``.subscribe(fn)``: every
    event the loop yields reaches ``fn``."""

    # fmt: off
    def __init__(self, client: Any, messages: list[Any] | str | None = None, *,
                 tools: Iterable[Any] | None = None, system: str | None = DEFAULT_SYSTEM,
                 model: str | None = None, max_tokens: int = DEFAULT_MAX_TOKENS,
                 max_turns: int = 20, approve: Callable[[Any], Any] | None = None,
                 stream: bool = False, on_event: Callable[[Event], None] | None = None,
                 max_total_tokens: int | None = None, max_cost: float | None = None,
                 cache: bool = False, **params: Any):
        # fmt: on
        if client is None:
            raise TypeError("AgentLoop needs a client: AgentLoop(al.connect(), ...)")
        if max_turns < 1:
            raise ValueError("max_turns must be at least 1")
        self.client, self.tools = client, list(with_default(tools))
        self.messages: list[Any] = messages if isinstance(messages, list) else []
        if isinstance(messages, str):
            append(self.messages, messages)
        self.system, self.model, self.max_tokens = system, model, max_tokens
        self.max_turns, self.approve, self.stream, self.params = max_turns, approve, stream, params
        self.max_total_tokens, self.max_cost, self.cache = max_total_tokens, max_cost, cache
        self.parent: Parent | None = None  # a helper's (``task``): it spends from that budget
        self._listeners: list[Callable[[Event], None]] = [on_event] if on_event else []
        self._given = list(self.messages), (p.saved() if (p := params.get("todos")) else None)
        self._clear()

    def _clear(self) -> None:
        self.response: Message | None = None  # the last of each the loop yielded
        self.decision: Decision | None = None
        self.results: list[dict[str, Any]] | None = None
        self.replies: list[Any] = []  # each reply's usage as it came: one per model request
        self.helpers_usage: list[dict[str, Any]] = []  # a helper loop's requests (``task``)
        self.audit: list[dict[str, Any]] = []  # one record per tool call: what ran, verdict, time
        self.error: RequestError | None = None
        self.stopped_at: str | None = None  # the stage an interrupt or error stopped
        self.stop_reason: str | None = None  # the API's value, from the last reply
        self.ended: str | None = None  # one of ENDINGS once the loop is done
        self.explanation = ""
        self._start(LoopResult(self.messages, start=max(0, len(self.messages) - 1)))

    def _start(self, run: LoopResult, quiet: bool = True) -> None:
        """Start ``steps`` on the task ``run`` holds (or carry it on), up to its first stage."""
        self._run, run.helpers_usage = run, self.helpers_usage  # helpers of every task count
        self._answer: Any = None  # what the next step sends the loop (True: ask again)
        self._last = self.messages[-1] if self.messages else None  # the last message told of
        self._gen: Generator[Event, Any, None] | None = steps(
            self.messages, self.client, tools=self.tools, system=self.system, run=run,
            max_turns=self.max_turns, approve=self._verdict, budget=self._over_budget,
            stream=self.stream, cache=self.cache, model=self.model, max_tokens=self.max_tokens,
            **self.params,
        )  # fmt: skip
        self.stage: Stage = "request"
        self._next: Event | None = None  # the stage event, told when that stage runs
        self._advance(quiet)

    # -- events, and what is kept from them ----------------------------------------
    def subscribe(self, fn: Callable[[Event], None]) -> None:
        self._listeners.append(fn)

    def unsubscribe(self, fn: Callable[[Event], None]) -> None:
        self._listeners[:] = [f for f in self._listeners if f != fn]

    def _emit(self, event: Event) -> None:
        for fn in list(self._listeners):
            fn(event)

    def _advance(self, quiet: bool = False) -> None:
        """Run the loop to the start of its next stage, keeping what the events say."""
        if self._next is not None:
            self._emit(self._next)
        answer, self._answer = self._answer, None
        while self._gen is not None:
            kind, data = event = self._gen.send(answer)
            if kind == "stage":
                self.stage, self._next = data["stage"], event
                return
            if kind in ("response", "decision", "results", "error"):  # the last of each kept
                setattr(self, kind, data[kind])
            if kind == "response":
                self.stop_reason, self.error = data["response"].stop_reason, None
                self.replies.append(data["response"].usage)
            elif kind == "tool_end":
                self.audit.append({k: v for k, v in data.items() if k != "tool_use"})
            elif kind == "append":
                self._last = data["message"]
                self.results = None if data["message"]["role"] == "user" else self.results
            elif kind == "done":  # let the loop return, so nothing is left suspended
                self._gen.close()
                self._gen, self.stage, self._next = None, "done", None
                self.ended, self.explanation = data["ended"], data["explanation"]
            if not quiet and (kind != "approval" or self.approve is not None):
                self._emit(event)
            answer = self._verdict(data["tool_use"]) if kind == "approval" else None  # sent back
            if kind == "error":
                self._answer = True  # the next step sends the request again
                raise data["error"]

    def _verdict(self, use: Any) -> Verdict:
        """Asked by the loop before each call: ``self.approve`` as it is now (a view may set it)."""
        return _APPROVED if self.approve is None else as_verdict(self.approve(use))

    def _over_budget(self, run: LoopResult) -> str:  # every task's, limits as they are now
        mine = over_budget(self, max_total_tokens=self.max_total_tokens, max_cost=self.max_cost)
        return mine or (self.parent.spent() if self.parent is not None else "")  # a helper's

    # -- state ----------------------------------------------------------------------
    @property
    def done(self) -> bool:
        return self.stage == "done"

    @property
    def turns(self) -> int:
        return len(self.replies)

    @property
    def turn_usage(self) -> list[dict[str, int]]:  # the tokens of each request, in order
        return [usage_of(u) for u in self.replies]

    @property
    def usage(self) -> dict[str, int]:
        return LoopResult([], replies_usage=self.replies).usage

    @property
    def durations(self) -> dict[str, float]:  # how long each tool call ran, by tool_use id
        return {str(a["tool_use_id"]): a["duration"] for a in self.audit if "duration" in a}

    # -- driving it -----------------------------------------------------------------
    def step(self) -> str:
        """Run the next stage; return its name (``"done"`` once the loop has ended)."""
        stage = self.stage
        self._drive(lambda: True)
        return stage

    def turn(self) -> str:
        """Run stages until the next model request is due (or the loop ends)."""
        self._drive(lambda: self.stage == "request")
        return self.stage

    def run(self) -> LoopResult:
        """Run to the end and return the result."""
        self._drive(lambda: False)
        return self.result()

    def _drive(self, until: Callable[[], bool]) -> None:
        """Run stages until ``until()`` or the end; Ctrl-C or an error ends the loop."""
        try:
            while self.stage != "done":
                if self._gen is None:  # set going again after a limit (LoopView's Continue)
                    self._start(self._run, quiet=False)
                self._advance()
                if until():
                    return
        except RequestError:  # nothing was added: the same request can be sent again
            raise
        except BaseException as e:
            raise self._stopped(e, self.stopped_at or self.stage) from None

    def _stopped(self, error: BaseException, stage: str) -> BaseException:
        """Ctrl-C or an error in or between steps: the loop answers its calls, then ends."""
        if self._gen is not None and getgeneratorstate(self._gen) == GEN_SUSPENDED:
            try:
                self._gen.throw(error)
            except BaseException as raised:
                error = raised
        if isinstance(error, KeyboardInterrupt) and not isinstance(error, Interrupted):
            error = Interrupted([], t("loop.interrupted")).with_traceback(error.__traceback__)
        answered = bool(self.messages) and self.messages[-1] is not self._last  # results added
        if self.stage == "done" and not answered:
            return error  # the loop had already ended: it stays as it was
        self._gen, self.stage, self.stopped_at, self.results = None, "done", stage, None
        where, what = t(f"stage.{stage}"), f"{type(error).__name__}: {error}"
        if isinstance(error, Interrupted):
            n = len(error.results) if answered else 0
            self.ended, self.explanation = "interrupted", t("loopcore.interrupted", stage=where, n=n)
        else:
            self.ended, self.explanation = "error", t("loopcore.failed", stage=where, error=what)
        if answered:  # the results the loop added as it stopped
            self._told()
        done = {"ended": self.ended, "reason": self.stop_reason, "explanation": self.explanation}
        self._emit(Event("done", done))
        return error

    def _told(self) -> None:  # tell the views of a message added outside the loop's events
        self._emit(Event("append", {"message": self.messages[-1], "index": len(self.messages) - 1}))

    def ask(self, task: str) -> AgentLoop:
        """Add a new user message and get ready to run again (a follow-up question)."""
        if self.stage not in ("request", "done"):
            raise RuntimeError(f"finish the current turn first (next stage: {self.stage})")
        append(self.messages, task)
        self._told()
        self.stopped_at, self.stop_reason, self.ended, self.explanation = None, None, None, ""
        self._start(LoopResult(self.messages, start=len(self.messages) - 1))  # max_turns: per task
        return self

    def reset(self) -> None:
        """Put the history (and a todo list) back as they were at the start; start over."""
        self.messages[:], plan = self._given
        if plan is not None:  # lesson 06: the plan of its todo list as it was too
            self.params["todos"].restore(plan)
        self._clear()
        self._emit(Event("reset", {}))

    def result(self) -> LoopResult:
        """The run of the current task, with the loop's counts (turns: of every task)."""
        replies, how, reason = list(self.replies), self.explanation, self.stop_reason
        return replace(self._run, text=self._run.final_text(), replies_usage=replies,
                       explanation=how, stop_reason=reason, turns=self.turns, ended=self.ended)  # fmt: skip

    def __repr__(self) -> str:
        return f"AgentLoop(stage={self.stage!r}, turns={self.turns}, messages={len(self.messages)})"
