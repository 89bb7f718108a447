"""PairingView: one row per tool_use, and what answered it.

    PairingView(messages)   # or PairingView(loop): it follows the loop

Columns: pair, turn, id, tool, input, result (ok / error / missing, or
waiting while the results are not appended yet) and how long the tool ran
(known only for calls the bound loop ran itself). For a bound loop, a call
the person edited shows what really ran, and a denied one says "denied".

Inside a LoopView, hovering a row lights that pair's two cards in the history
(``agentlab.widgets.pins``, with anywidget installed); a PairingView on its own
has no cards beside it, so there only the row lights up.
"""

from __future__ import annotations

from typing import Any

import ipywidgets as W

from agentlab.history import pairings
from agentlab.loop import Event
from agentlab.render import STYLE, pairing_table_html, runs_of
from agentlab.widgets.base import source

__all__ = ["PairingView"]


class PairingView(W.VBox):
    """A table of the history's tool pairs; given an ``AgentLoop`` it follows the loop."""

    def __init__(self, messages_or_loop: Any = None) -> None:
        super().__init__()
        self.messages, self.loop = source(messages_or_loop)
        self.add_class("al-root")
        self.add_class("al-pairings")
        self.table = W.HTML()
        self.children = (W.HTML(STYLE), self.table)
        self.refresh()
        if self.loop is not None:
            self.loop.subscribe(self._on_event)

    def refresh(self) -> None:
        """Redraw the table from the history (call it after changing a plain list)."""
        self.table.value = self._html()

    def _html(self) -> str:
        durations = getattr(self.loop, "durations", None)
        return pairing_table_html(self.messages, durations, runs_of(self.loop))

    def _on_event(self, event: Event) -> None:
        if event.kind in ("append", "reset"):
            self.refresh()

    def _repr_html_(self) -> str:
        return f'{STYLE}<div class="al-root">{self._html()}</div>'

    def __repr__(self) -> str:
        return f"PairingView(pairs={len(pairings(self.messages))})"

    def close(self) -> None:
        if self.loop is not None:
            self.loop.unsubscribe(self._on_event)
        super().close()
