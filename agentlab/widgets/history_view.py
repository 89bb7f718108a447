"""HistoryView: the message list as cards, each tool call tied to its result.

    view = HistoryView(messages)      # a plain history: call view.refresh() after changing it
    view = HistoryView(loop)          # an AgentLoop: the view follows it, one card per append

One card per message. Text is Markdown (raw HTML off, sanitised); a
``tool_use`` shows its name, input and short id; a ``tool_result`` its
output (long output folded) and ``is_error``. A tool_use and its tool_result
share a coloured pair button: click either to light up both. A rule the
history breaks (an unanswered tool_use, a result nobody asked for, ...) is
flagged on the card, in the API's own words.

Live updates cost the same for a long history as for a short one: an appended
message adds one card and touches nothing else (cards sit in pages of 50, so
only one small page's ``children`` is reassigned).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import ipywidgets as W

from agentlab.history import Problem, blocks
from agentlab.i18n import t
from agentlab.loop import Event
from agentlab.widgets.base import dispose, source
from agentlab.widgets.render import (
    STYLE,
    Marks,
    Pair,
    block_html,
    card_head_html,
    flags_html,
    result_note,
    role_of,
    summary_html,
    transcript_html,
)

__all__ = ["HistoryView"]

PAGE = 50  # cards per page: an append reassigns one page's children, never all cards


class HistoryView(W.VBox):
    """The history as cards; given an ``AgentLoop`` it grows as the loop appends."""

    def __init__(self, messages_or_loop: Any = None) -> None:
        super().__init__()
        self.messages, self.loop = source(messages_or_loop)
        self.add_class("al-root")
        self.add_class("al-history")
        self._summary = W.HTML()
        self.pages = W.VBox()  # each page is a VBox of up to PAGE cards
        self.children = (W.HTML(STYLE), self._summary, self.pages)
        self.selected: str | None = None  # the highlighted pair's tool_use id
        self._clear()
        self.rebuild()
        if self.loop is not None:
            self.loop.subscribe(self._on_event)

    # -- reading the view ---------------------------------------------------------
    @property
    def cards(self) -> tuple[W.VBox, ...]:
        """Every card, in history order."""
        return tuple(self._cards)

    @property
    def pair_count(self) -> int:
        return len(self._marks.pairs)

    @property
    def problems(self) -> list[Problem]:
        """The rules this history breaks, as flagged on the cards."""
        return [p for i in sorted(self._marks.problems) for p in self._marks.problems[i]]

    def rows(self, tool_id: str) -> tuple[W.HBox, ...]:
        """The tool_use row and the tool_result row(s) of one pair."""
        return tuple(self._rows.get(str(tool_id), ()))

    # -- keeping up with the history --------------------------------------------
    def rebuild(self) -> None:
        """Throw every card away and draw the history again."""
        old = self._cards
        self._clear()
        self.pages.children = ()
        for card in old:
            dispose(card)
        for i in range(len(self.messages)):
            self._add(i)
        self._show_summary()

    def refresh(self) -> None:
        """Catch up with a list changed by hand: new messages at the end get new
        cards; anything else changed means a rebuild."""
        n = len(self._seen)
        same = len(self.messages) >= n and all(self.messages[i] is self._seen[i] for i in range(n))
        if not same:
            self.rebuild()
            return
        for i in range(n, len(self.messages)):
            self._add(i)
        self._show_summary()

    def select(self, tool_id: str | None) -> None:
        """Highlight one pair (its tool_use and its tool_result); None clears it."""
        for row in self._rows.get(self.selected or "", ()):
            row.remove_class("al-row-selected")
        self.selected = None if tool_id is None else str(tool_id)
        for row in self._rows.get(self.selected or "", ()):
            row.add_class("al-row-selected")

    def _on_event(self, event: Event) -> None:
        if event.kind == "append":
            if event.data.get("index") == len(self._cards):
                self._add(len(self._cards))
                self._show_summary()
            else:
                self.refresh()
        elif event.kind == "reset":
            self.rebuild()

    # -- building cards ---------------------------------------------------------
    def _clear(self) -> None:
        self._cards: list[W.VBox] = []
        self._seen: list[Any] = []
        self._marks = Marks()
        self._rows: dict[str, list[W.HBox]] = {}
        self._uses: dict[str, tuple[W.HTML, Mapping[str, Any], Pair]] = {}
        self.selected = None

    def _add(self, i: int) -> None:
        messages = self.messages
        changed, earlier = self._marks.add(messages, i)
        for key in changed:  # the previous card's tool_use rows: now answered, or missing
            if key in self._uses:
                html, block, pair = self._uses[key]
                html.value = block_html(block, pair, self._marks.notes.get(key, ""), badge=False)
        if earlier and self._cards:  # a rule broken by the previous message shows on its card
            prev = self._cards[-1]
            prev.children = prev.children + (W.HTML(flags_html(earlier)),)
        card = self._card(messages, i)
        self._cards.append(card)
        self._seen.append(messages[i])
        pages = self.pages.children
        if pages and len(pages[-1].children) < PAGE:
            pages[-1].children = pages[-1].children + (card,)
        else:
            self.pages.children = pages + (W.VBox([card]),)

    def _card(self, messages: Sequence[Any], i: int) -> W.VBox:
        message = messages[i]
        parts: list[W.Widget] = []
        html = card_head_html(i, message)  # text blocks gather here until a tool block
        for b in blocks(message):
            kind = b.get("type")
            if kind not in ("tool_use", "tool_result"):
                html += block_html(b)
                continue
            if html:
                parts.append(W.HTML(html))
                html = ""
            parts.append(self._tool_row(messages, i, b))
        problems = self._marks.problems.get(i, [])
        html += flags_html(problems)
        if html:
            parts.append(W.HTML(html))
        card = W.VBox(parts)
        card.add_class("al-card")
        card.add_class(f"al-card-{role_of(message)}")
        return card

    def _tool_row(self, messages: Sequence[Any], i: int, block: Mapping[str, Any]) -> W.HBox:
        if block.get("type") == "tool_use":
            key = str(block.get("id"))
            pair: Pair | None = self._marks.pair_for(key)
            note = self._marks.notes.get(key, "")
        else:
            key = str(block.get("tool_use_id"))
            pair = self._marks.result_pair(messages, i, block)
            note = result_note(i, pair)
        html = W.HTML(block_html(block, pair, note, badge=False), layout=W.Layout(flex="1 1 auto"))
        button = W.Button(
            description=pair.label if pair else "?",
            tooltip=t("view.pair.select") if pair else t("view.pair.unexpected"),
            disabled=pair is None,
            layout=W.Layout(width="48px", min_width="48px", height="24px", margin="7px 6px 0 0"),
        )
        button.style.button_color = pair.color if pair else "#cf222e"
        button.style.text_color = "white"
        button.style.font_weight = "bold"
        button.add_class("al-pairbtn")
        row = W.HBox([button, html], layout=W.Layout(align_items="flex-start"))
        row.add_class("al-row")
        if pair is not None:
            self._rows.setdefault(pair.id, []).append(row)
            if block.get("type") == "tool_use":
                self._uses[key] = (html, block, pair)

            def on_click(_: Any, tool_id: str = pair.id) -> None:
                self.select(None if self.selected == tool_id else tool_id)

            button.on_click(on_click)
            if self.selected == pair.id:
                row.add_class("al-row-selected")
        return row

    def _show_summary(self) -> None:
        n_problems = sum(len(v) for v in self._marks.problems.values())
        self._summary.value = summary_html(len(self._cards), len(self._marks.pairs), n_problems)

    # -- display --------------------------------------------------------------------
    def _repr_html_(self) -> str:
        return transcript_html(self.messages)

    def __repr__(self) -> str:
        return f"HistoryView(messages={len(self._cards)}, pairs={len(self._marks.pairs)})"

    def close(self) -> None:
        if self.loop is not None:
            self.loop.unsubscribe(self._on_event)
        super().close()
