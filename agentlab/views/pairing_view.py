"""PairingView: one row per tool_use, and what answered it.

    PairingView(messages)   # or PairingView(loop): it follows the loop

Columns: pair, turn, id, tool, input, result (ok / error / missing, or
waiting while the results are not appended yet) and how long the tool ran
(known only for calls the bound loop ran itself). For a bound loop, a call
the person edited shows what really ran, and a denied one says "denied".

Inside a LoopView, hovering a row lights that pair's two cards in the history
(``agentlab.views.pins``, with anywidget installed); a PairingView on its own
has no cards beside it, so there only the row lights up.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import ipywidgets as W

from agentlab.history import pairings
from agentlab.loop import Event
from agentlab.views.base import source
from agentlab.views.render import (
    STYLE,
    pairing_rows_html,
    pairing_table,
    pairing_table_html,
    role_of,
    runs_of,
)

__all__ = ["PairingView"]


class PairingView(W.VBox):
    """A table of the history's tool pairs; given an ``AgentLoop`` it follows the loop."""

    def __init__(self, messages_or_loop: Any = None) -> None:
        super().__init__()
        self.messages, self.loop = source(messages_or_loop)
        self.add_class("al-root")
        self.add_class("al-pairings")
        self.table = W.HTML()
        self._anchor: Any = None  # the message before ``_from``, to notice a list changed by hand
        self.children = (W.HTML(STYLE), self.table)
        self.refresh()
        if self.loop is not None:
            self.loop.subscribe(self._on_event)

    def refresh(self) -> None:
        """Redraw the table from the history (call it after changing a plain list)."""
        self._settled: list[str] = []  # rows that can no longer change
        self._from = 0  # the first message whose rows may still change
        self._turns = 0  # assistant turns before it
        self._grow()

    def _grow(self) -> None:
        """Draw the rows of the messages from ``_from`` on, and keep those that are
        settled: a call's row changes only while its message is the last one (its
        results not in yet), so an append costs the same at 20 messages and 2,000."""
        messages, k = self.messages, self._from
        n = len(messages)
        if k and (n < k or messages[k - 1] is not self._anchor):  # changed by hand
            self.refresh()
            return
        found = [
            replace(
                p,
                turn=p.turn + self._turns,
                use_index=p.use_index + k,
                result_index=None if p.result_index is None else p.result_index + k,
            )
            for p in pairings(messages[k:])
        ]
        durations = getattr(self.loop, "durations", None)
        rows = pairing_rows_html(found, n, durations, runs_of(self.loop), len(self._settled) + 1)
        done = sum(1 for p in found if p.use_index < n - 1)
        self._settled += rows[:done]
        if n - 1 > k:  # every message before the last one is settled
            self._turns += sum(1 for m in messages[k : n - 1] if role_of(m) == "assistant")
            self._from, self._anchor = n - 1, messages[n - 2]
        self.table.value = pairing_table(self._settled + rows[done:])

    def _html(self) -> str:
        durations = getattr(self.loop, "durations", None)
        return pairing_table_html(self.messages, durations, runs_of(self.loop))

    def _on_event(self, event: Event) -> None:
        if event.kind == "append":
            self._grow()
        elif event.kind == "reset":
            self.refresh()

    def _repr_html_(self) -> str:
        return f'{STYLE}<div class="al-root">{self._html()}</div>'

    def __repr__(self) -> str:
        return f"PairingView(pairs={len(pairings(self.messages))})"

    def close(self) -> None:
        if self.loop is not None:
            self.loop.unsubscribe(self._on_event)
        super().close()
