"""ipywidgets views of the agent loop: history cards, tool pairs, the stepper.

    from agentlab.views import HistoryView, PairingView, LoopView, show

    HistoryView(messages)     # one card per message; each tool_use tied to its tool_result
    HistoryView.side_by_side(parent, child)  # columns, each validated on its own (HistoryColumns)
    PairingView(messages)     # one row per tool call: turn, id, tool, input, status, time
    LoopView(loop)            # the diagram and buttons to step an AgentLoop by hand
                              # (with todos=: the Plan panel; with task_tool: helpers' own views)
    show(messages_or_loop)    # display the right view

Importing this module imports ipywidgets (``import agentlab`` does not).
Each view also renders as plain HTML, so saved notebooks show it on GitHub,
nbviewer and in exported HTML where widgets cannot run. That HTML comes from
``agentlab.views.render`` and ``agentlab.views.diagram``, which need no ipywidgets
(``agentlab.views.render`` and ``agentlab.views.diagram`` still re-export them).
"""

from __future__ import annotations

from typing import Any

from agentlab.views.history_view import HistoryColumns, HistoryView
from agentlab.views.loop_view import LoopView
from agentlab.views.pairing_view import PairingView

__all__ = ["HistoryColumns", "HistoryView", "LoopView", "PairingView", "show"]


def show(messages_or_loop: Any) -> None:
    """Display a LoopView for an AgentLoop, or a HistoryView for a history."""
    from IPython.display import display

    if hasattr(messages_or_loop, "subscribe") and hasattr(messages_or_loop, "step"):
        display(LoopView(messages_or_loop))
    else:
        display(HistoryView(messages_or_loop))
