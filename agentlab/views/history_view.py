"""HistoryView: the message list as cards, each tool call tied to its result.

    view = HistoryView(messages)      # a plain history: call view.refresh() after changing it
    view = HistoryView(loop)          # an AgentLoop: the view follows it, one card per append

One card per message. Text is Markdown (raw HTML off, sanitised); a
``tool_use`` shows its name, input and short id; a ``tool_result`` its
output (long output folded) and ``is_error``. A tool_use and its tool_result
share a coloured, numbered badge. Hover over either and both light up; click
a badge to pin the highlight (plain CSS in the page, so it works without a
trip to the kernel, and in nbviewer too); ``view.select(tool_use_id)`` pins
one from Python. A message with more than ``render.SLOTS`` parallel calls
brings the CSS rules for the rest in a ``<style>`` of its own. The pin is a
checkbox in the card's HTML, and an append draws the last page again: a small
script (``agentlab.views.pins``, with anywidget installed) ticks the pinned
pairs again, per view. A rule the history breaks (an unanswered tool_use, a
result nobody asked for, ...) is flagged on the card, in the API's own words.

Earlier turns fold: every card but the first (the task) and the last three
(the current turn) shows one line, and opens with a click. Long text and
output fold too ("show N more lines"). A call the person edited or denied
(in a LoopView's confirm mode) says so on its card, with what really ran.

Cards are drawn by the same function as the widget-free HTML
(``agentlab.views.render.card_html``) and sit in pages of about 100: one HTML widget
per page, not per card, so a history of 2,000 messages is 20 widgets for the
browser to build, not 2,000 (each widget is a model, a view and a comm).
A results card always shares the page of the card before it, so the CSS that
lights up a pair (``render.PAIR_STYLE``) finds both halves side by side.
Live updates cost the same for a long history as for a short one: an
appended message redraws the last page (and, rarely, the page before it,
where the card that folds or the card it answers sits), never the others.

Scrolling a long history stays smooth because the browser skips the pages
that are off screen (``content-visibility: auto`` on each full page; never on
the last one, so a short history is drawn at once). It is set on the 20
pages and not on the 2,000 cards: Chrome watches every such element
with an IntersectionObserver, and checking 2,000 of them on each frame was
what made scrolling slow (see ``benchmarks/widgets.py --browser``).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import ipywidgets as W

from agentlab.history import Problem
from agentlab.i18n import t
from agentlab.loop import Event
from agentlab.views.base import dispose, source
from agentlab.views.pins import pair_script
from agentlab.views.render import (
    _LIT,  # the style of a lit pair, for a pair pinned from Python
    OPEN_LAST,
    STYLE,
    Marks,
    Pair,
    card_html,
    is_open,
    role_of,
    runs_of,
    section,
    slots_style,
    summary_html,
    transcript_html,
)

__all__ = ["HistoryColumns", "HistoryView"]

PAGE = 100  # cards per page (one more if a results card follows): an append redraws one page
_views = itertools.count(1)  # a class per view, so a pinned pair lights up in its own view only


class HistoryView(W.VBox):
    """The history as cards; given an ``AgentLoop`` it grows as the loop appends."""

    def __init__(self, messages_or_loop: Any = None) -> None:
        super().__init__()
        self.messages, self.loop = source(messages_or_loop)
        self._scope = f"al-hv-{next(_views)}"
        for name in ("al-root", "al-history", self._scope):
            self.add_class(name)
        self._summary = W.HTML()
        self._selection = W.HTML()  # a <style> that pins the selected pair
        self._slots = W.HTML()  # a <style> for the calls past render.SLOTS in one message, if any
        self.script = pair_script()  # pins that survive a redraw (None without anywidget)
        self.pages = W.VBox()  # each page is one HTML widget holding up to PAGE cards
        # In a LoopView this box scrolls on its own and stays at its end (CSS in
        # render.STYLE), so the current turn is beside the controls however long
        # the history; alone, the history simply flows down the page.
        scroller = W.VBox([self.pages])
        scroller.add_class("al-scroll")
        script = () if self.script is None else (self.script,)
        self.children = (
            W.HTML(STYLE),
            self._selection,
            self._slots,
            self._summary,
            scroller,
            *script,
        )
        self.selected: str | None = None  # the pinned pair's tool_use id
        self.fresh: int | None = None  # the card the last stage added (see ``mark``)
        self.mark_appends = False  # a LoopView's: each appended card is marked as it comes
        self._reminders: set[int] = set()  # the loop's reminders (lesson 06), by message index
        self._clear()
        self.rebuild()
        if self.loop is not None:
            self.loop.subscribe(self._on_event)

    @staticmethod
    def side_by_side(*histories: Any, labels: Sequence[str] | None = None) -> HistoryColumns:
        """Two (or more) histories in columns, each validated on its own: a parent's
        and its helper's, say. See ``HistoryColumns``."""
        return HistoryColumns(*histories, labels=labels)

    # -- reading the view ---------------------------------------------------------
    @property
    def cards(self) -> tuple[str, ...]:
        """Every card's HTML, in history order (one per message)."""
        return tuple(self._cards)

    @property
    def pair_count(self) -> int:
        return len(self._marks.pairs)

    def pair(self, tool_id: Any) -> Pair | None:
        """The number and colour this view gave a tool call (None if it has not seen it)."""
        return self._marks.pairs.get(str(tool_id))

    @property
    def problems(self) -> list[Problem]:
        """The rules this history breaks, as flagged on the cards."""
        return [p for i in sorted(self._marks.problems) for p in self._marks.problems[i]]

    # -- keeping up with the history --------------------------------------------
    def rebuild(self) -> None:
        """Throw every card away and draw the history again."""
        old = self.pages.children
        self._clear()
        self.pages.children = ()
        for page in old:
            dispose(page)
        n = len(self.messages)
        for i in range(n):  # pairs, notes and problems first,
            self._marks.add(self.messages, i)
            self._seen.append(self.messages[i])
            self._cards.append("")
        for i in range(n):  # then each card drawn once, as it ends up
            self._set(i, self._card(i, n))
        self._flush()
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
        self._flush()
        self._show_summary()

    def mark(self, index: int | None) -> None:
        """Mark the card ``messages[index]`` as what the last stage added (a ring and
        a "just added" tag); ``None``: no card (the stage added something else)."""
        if index == self.fresh:
            return
        old, self.fresh = self.fresh, index
        n = len(self._cards)
        for i in (old, index):
            if i is not None and i < n:
                self._set(i, self._card(i, n))
        self._flush()

    def select(self, tool_id: str | None) -> None:
        """Pin the highlight on one pair (its tool_use and its tool_result); None clears it."""
        pair = self._marks.pairs.get(str(tool_id)) if tool_id is not None else None
        self.selected = pair.id if pair else None
        rule = f".{self._scope} .al-pair-{pair.number}" if pair else ""
        self._selection.value = f"<style>{rule}{{{_LIT}}}</style>" if pair else ""

    def _on_event(self, event: Event) -> None:
        if event.kind == "tool_end":  # what really ran: shown once the results are in
            use = event.data.get("tool_use")
            key = str(use.get("id") if isinstance(use, dict) else getattr(use, "id", None))
            self._marks.runs[key] = event.data
        elif event.kind == "append":
            if self.mark_appends:  # the new card is marked, the old one drawn again unmarked
                old, self.fresh = self.fresh, event.data.get("index")
                if old is not None and old < len(self._cards):
                    self._set(old, self._card(old, len(self._cards)))
            if event.data.get("index") == len(self._cards):
                self._add(len(self._cards))
                self._flush()
                self._show_summary()
            else:
                self.refresh()
        elif event.kind == "reminder":  # the next append carries it, after its results
            self._reminders.add(len(self.messages))
            self._marks.reminders.add(len(self.messages))
        elif event.kind == "reset":
            self._reminders.clear()
            self.rebuild()

    # -- building cards ---------------------------------------------------------
    def _clear(self) -> None:
        self._cards: list[str] = []
        self._dirty: set[int] = set()  # pages to draw again
        self._starts: list[int] = []  # the index of each page's first card
        self._page_of: list[int] = []  # each card's page
        self._seen: list[Any] = []
        self._marks = Marks(runs_of(self.loop), self._reminders)
        self.fresh = None
        self.select(None)

    def _add(self, i: int) -> None:
        changed, earlier = self._marks.add(self.messages, i)
        n = i + 1
        if (changed or earlier) and self._cards:  # the card before: answered now, or flagged
            self._set(i - 1, self._card(i - 1, n))
        folding = i - OPEN_LAST
        if folding > 0 and folding != i - 1:  # it leaves the current turn: fold it
            self._set(folding, self._card(folding, n))
        self._cards.append("")
        self._set(i, self._card(i, n))
        self._seen.append(self.messages[i])

    def _set(self, i: int, html: str) -> None:
        if i == len(self._page_of):  # a new card: a full page starts a new one,
            full = bool(self._starts) and i - self._starts[-1] >= PAGE
            if not self._starts or (full and role_of(self.messages[i]) != "results"):
                self._starts.append(i)  # but a results card stays beside its tool calls
            self._page_of.append(len(self._starts) - 1)
        self._cards[i] = html
        self._dirty.add(self._page_of[i])

    def _flush(self) -> None:
        """Draw the pages whose cards changed; add new pages in one step."""
        pages = list(self.pages.children)
        ends = [*self._starts[1:], len(self._cards)]
        for k in sorted(self._dirty):
            html = "".join(self._cards[self._starts[k] : ends[k]])
            if k < len(pages):
                pages[k].value = html
            else:
                page = W.HTML(html)
                page.add_class("al-page")
                pages.append(page)
        self._dirty.clear()
        if len(pages) != len(self.pages.children):
            self.pages.children = tuple(pages)
        slots = slots_style(self._marks.slots)
        if slots != self._slots.value:
            self._slots.value = slots

    def _card(self, i: int, n: int) -> str:
        return card_html(self.messages, i, self._marks, open=is_open(i, n), fresh=i == self.fresh)

    def _show_summary(self) -> None:
        n_problems = sum(len(v) for v in self._marks.problems.values())
        self._summary.value = summary_html(len(self._cards), len(self._marks.pairs), n_problems)

    # -- display --------------------------------------------------------------------
    def drawn_html(self) -> str:
        """What the view draws now, as one HTML string: its summary line and every card
        (a LoopView's snapshot is made of it)."""
        return f"{self._slots.value}{self._summary.value}{''.join(self._cards)}"

    def _repr_html_(self) -> str:
        return transcript_html(
            self.messages, runs=self._marks.runs, fresh=self.fresh, reminders=self._reminders
        )

    def __repr__(self) -> str:
        return f"HistoryView(messages={len(self._cards)}, pairs={len(self._marks.pairs)})"

    def close(self) -> None:
        if getattr(self, "loop", None) is not None:  # (not set if __init__ failed)
            self.loop.unsubscribe(self._on_event)
        super().close()


class HistoryColumns(W.VBox):
    """Histories side by side, one labelled column each (lesson 07: the parent's
    history and its helper's). Each column is a ``HistoryView`` of its own: its own
    pairs, its own summary line, its own problems. On a narrow screen the columns
    stack (flex-wrap, no fixed widths).

        HistoryView.side_by_side(loop, helper.messages, labels=["parent", "helper"])
    """

    def __init__(self, *histories: Any, labels: Sequence[str] | None = None) -> None:
        super().__init__()
        names = list(labels or ())
        if len(names) > len(histories):
            raise ValueError(f"{len(names)} labels for {len(histories)} histories")
        names += [t("view.columns.label", n=k + 1) for k in range(len(names), len(histories))]
        self.labels = names
        self.views = [HistoryView(h) for h in histories]
        self.add_class("al-root")
        columns = []
        for name, view in zip(names, self.views, strict=True):
            title = W.HTML(section(name))
            column = W.VBox([title, view], layout=W.Layout(flex="1 1 320px", min_width="0"))
            column.add_class("al-side-col")
            columns.append(column)
        self.row = W.HBox(columns, layout=W.Layout(flex_flow="row wrap", align_items="flex-start"))
        self.row.add_class("al-side")
        self.children = (W.HTML(STYLE), self.row)

    @property
    def problems(self) -> list[list[Problem]]:
        """Each column's problems, in column order."""
        return [view.problems for view in self.views]

    def refresh(self) -> None:
        for view in self.views:
            view.refresh()

    def _repr_html_(self) -> str:
        columns = "".join(
            f'<div class="al-side-col">{section(name)}'
            + transcript_html(
                view.messages, with_style=False, runs=view._marks.runs, reminders=view._reminders
            )
            + "</div>"
            for name, view in zip(self.labels, self.views, strict=True)
        )
        return f'{STYLE}<div class="al-root al-side">{columns}</div>'

    def __repr__(self) -> str:
        inner = ", ".join(
            f"{name!r}: {len(v.cards)}" for name, v in zip(self.labels, self.views, strict=True)
        )
        return f"HistoryColumns({inner})"

    def close(self) -> None:
        for view in getattr(self, "views", ()):  # (not set if __init__ failed)
            view.close()
        super().close()
