"""Events: what the loop tells views and logs while it runs.

An ``Event`` is a kind (``"request"``, ``"tool_end"``, ...) and a dict of
data. The loop builds one only when someone listens (``AgentLoop.subscribe``
or ``on_event=``), so a loop nobody watches pays nothing for them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Event"]


@dataclass(frozen=True, slots=True)
class Event:
    """Something that happened in the loop, for views and logs.

    ``kind`` is one of: stage, request, response, text, decision, approval,
    tool_start, tool_end, results, append, interrupted, error, done, reset.
    """

    kind: str
    data: dict[str, Any] = field(default_factory=dict)
