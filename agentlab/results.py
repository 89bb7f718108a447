"""How a run of the loop ended: ``LoopResult``, what ``agent_loop`` returns."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agentlab.history import blocks
from agentlab.i18n import t

__all__ = ["ENDINGS", "LoopResult", "final_text"]

# Why a loop ended. "model": the model's stop_reason ended it (read ``stop_reason``);
# the others are agentlab's own endings, never API stop reasons.
ENDINGS = ("model", "turn_limit", "budget", "interrupted", "error")


@dataclass
class LoopResult:
    """How a run of the loop ended.

    ``turn_usage`` (the tokens of each request) and ``usage`` (their totals) are
    worked out from ``replies_usage`` (each reply's ``usage`` as the API sent it)
    the first time someone reads them.
    """

    messages: list[Any]
    text: str
    stop_reason: str | None  # the API's stop_reason of the last reply (None if no reply)
    turns: int
    replies_usage: list[Any] = field(default_factory=list, repr=False)
    explanation: str = ""
    start: int = 0  # where this run began in ``messages`` (a follow-up starts later)
    ended: str | None = None  # why the loop ended: ENDINGS (agentlab's word, not the API's)

    @functools.cached_property
    def turn_usage(self) -> list[dict[str, int]]:
        """The tokens of each model request, in order."""
        return [counts(u) for u in self.replies_usage]

    @functools.cached_property
    def usage(self) -> dict[str, int]:
        """The tokens of the whole run (``{}`` before any reply)."""
        return total(self.turn_usage)

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
        """The answer, and the transcript folded (Markdown made safe: no images, no script links)."""
        from agentlab.views.render import result_markdown  # pure HTML, no ipywidgets; imported late

        return result_markdown(self)

    def _repr_html_(self) -> str:
        """The answer on top and the transcript folded below (cards, as the views draw them)."""
        from agentlab.views.render import result_html  # pure HTML, no ipywidgets; imported late

        return result_html(self)


USAGE_KEYS = (
    "input_tokens",
    "output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)


def counts(u: Any) -> dict[str, int]:
    """One reply's ``usage`` (an SDK object, a dict or None) as a dict of counts."""
    if isinstance(u, dict):
        return {k: u.get(k) or 0 for k in USAGE_KEYS}
    return {k: getattr(u, k, None) or 0 for k in USAGE_KEYS}


def total(rows: Sequence[dict[str, int]]) -> dict[str, int]:
    """The sum of some usage dicts, key by key (``{}`` for none)."""
    return {k: sum([u[k] for u in rows]) for k in USAGE_KEYS} if rows else {}


def final_text(messages: Sequence[Any]) -> str:
    """The text of the last assistant message that has any."""
    for message in reversed(messages):
        role = message.get("role") if isinstance(message, dict) else getattr(message, "role", None)
        if role == "assistant":
            text = "\n".join(
                str(b.get("text", "")) for b in blocks(message) if b.get("type") == "text"
            )
            if text.strip():
                return text
    return ""
