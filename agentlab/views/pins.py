"""Pins that survive a redraw, and rows of the pairs table that light their cards.

    script = pair_script()  # a hidden widget to put inside a HistoryView; None without anywidget

Hovering and pinning a tool pair is plain CSS (``render.PAIR_STYLE``): the pin
is a checkbox in the badge, so it works without a kernel and in nbviewer. Two
things CSS cannot do are done by a few lines of JavaScript in the browser:

- **Pins survive a redraw.** When a message arrives, the view draws its last
  page of cards again, and the new HTML has every checkbox unticked. The script
  remembers which tool_use ids are pinned in this view and, whenever cards are
  drawn (a ``MutationObserver``), ticks their checkboxes again. Pinning one half
  of a pair ticks the other half's badge too, so the pair is pinned, not a badge.
- **Things outside the history light their cards.** Hovering a row of the pairs
  table, or a result in the "results ready" panel, of a LoopView puts the class
  ``al-lit`` on the pair's two blocks in the history, its tool_use and its
  tool_result (and takes it off again): two elements change, so the browser
  restyles two blocks, not the page.

The script works on the view it sits in: the LoopView around the history if
there is one, else the HistoryView. Each view has its own script and its own
pins. Without anywidget the views work as before, except that a pin on the last
page is lost when that page is drawn again, and a table row lights only itself.
"""

from __future__ import annotations

from typing import Any

__all__ = ["available", "pair_script"]

ESM = """
const PIN = ".al-pin";

export default {
  render({ el }) {
    const pinned = new Set();  // the tool_use ids pinned in this view
    let root = null;  // the view: found once the widget is on the page
    let hovered = null;  // a pair outside the history, under the pointer
    let lit = [];  // the history's blocks we lit for it
    const idOf = (pin) => pin.closest(".al-pair")?.dataset.id;
    // a view inside this one (a helper's LoopView in its parent's) keeps its own pairs
    const rootOf = (node) => node.closest(".al-loop") ?? node.closest(".al-history");
    const mine = (node) => rootOf(node) === root;

    const onChange = (event) => {  // a badge clicked (or Space on it): pin or unpin the pair
      const box = event.target;
      if (!(box instanceof HTMLInputElement) || !box.matches(PIN) || !mine(box)) return;
      const id = idOf(box);
      if (id === undefined) return;
      if (box.checked) pinned.add(id);
      else pinned.delete(id);
      for (const other of root.querySelectorAll(PIN)) {
        if (idOf(other) === id && mine(other)) other.checked = box.checked;
      }
    };

    const light = () => {
      for (const block of lit) block.classList.remove("al-lit");
      const number = hovered && [...hovered.classList].find((c) => /^al-pair-\\d+$/.test(c));
      lit = number ? [...root.querySelectorAll(".al-history ." + number)].filter(mine) : [];
      for (const block of lit) block.classList.add("al-lit");
    };
    const onOver = (event) => {
      const pair = event.target instanceof Element ? event.target.closest(".al-pair") : null;
      const outside = pair && mine(pair) && !pair.closest(".al-history") ? pair : null;
      if (outside === hovered) return;
      hovered = outside;
      light();
    };
    const onLeave = () => {
      hovered = null;
      light();
    };

    const onDrawn = (records) => {  // new HTML in the view: tick the pinned pairs again
      if (pinned.size) {
        for (const record of records) {
          for (const node of record.addedNodes) {
            if (!(node instanceof Element)) continue;
            for (const box of node.querySelectorAll(PIN)) {
              if (pinned.has(idOf(box)) && mine(box)) box.checked = true;
            }
          }
        }
      }
      if (hovered) light();  // the cards of a hovered row may have been drawn again
    };
    const observer = new MutationObserver(onDrawn);

    let frame = 0;
    let tries = 0;
    const start = () => {  // a widget is put on the page after it is drawn: wait for it
      root = el.closest(".al-loop") ?? el.closest(".al-history");
      if (!root) {
        if (++tries < 600) frame = requestAnimationFrame(start);
        return;
      }
      root.addEventListener("change", onChange);
      root.addEventListener("mouseover", onOver);
      root.addEventListener("mouseleave", onLeave);
      observer.observe(root, { childList: true, subtree: true });
    };
    start();
    return () => {
      cancelAnimationFrame(frame);
      observer.disconnect();
      if (!root) return;
      root.removeEventListener("change", onChange);
      root.removeEventListener("mouseover", onOver);
      root.removeEventListener("mouseleave", onLeave);
    };
  },
};
"""

try:
    import anywidget
except ImportError:  # the views work without it: pins as plain CSS only
    anywidget = None  # type: ignore[assignment]


def available() -> bool:
    """True when the script can run (anywidget is installed)."""
    return anywidget is not None


if anywidget is not None:

    class PairScript(anywidget.AnyWidget):
        """Keeps pins across redraws and lights the cards of a hovered pairs-table row."""

        _esm = ESM


def pair_script() -> Any:
    """A hidden widget to put inside a HistoryView; None when anywidget is missing."""
    if anywidget is None:
        return None
    import ipywidgets as W

    return PairScript(layout=W.Layout(display="none"))
