"""What every view shares: where its messages come from, and how it leaves.

A view is given either a plain history (a list of message dicts) or an
``AgentLoop``. Given a loop it subscribes to the loop's events and follows it;
``close()`` unsubscribes, so a closed view costs the loop nothing.

Display: a view is an ipywidgets container. When Jupyter shows it, IPython
asks the widget for its mimebundle (``text/plain`` and the widget view, from
``ipywidgets.Widget._repr_mimebundle_``) and then adds every other format the
object offers that the bundle lacks, here ``text/html`` from ``_repr_html_``.
So the saved notebook holds both: JupyterLab draws the live widget, while
GitHub, nbviewer and ``nbconvert`` (which skip a widget view whose state was
not saved) show the HTML. The HTML is the view as it was when displayed.
"""

from __future__ import annotations

from typing import Any

import ipywidgets as W

__all__ = ["dispose", "source"]


def source(messages_or_loop: Any) -> tuple[list[Any], Any]:
    """``(messages, loop)`` for a history or an AgentLoop (``loop`` is None for a list)."""
    if messages_or_loop is None:
        return [], None
    if hasattr(messages_or_loop, "subscribe") and hasattr(messages_or_loop, "messages"):
        return messages_or_loop.messages, messages_or_loop
    if isinstance(messages_or_loop, list):
        return messages_or_loop, None
    if hasattr(messages_or_loop, "messages") and isinstance(messages_or_loop.messages, list):
        return messages_or_loop.messages, None  # a LoopResult
    if isinstance(messages_or_loop, tuple):
        return list(messages_or_loop), None
    raise TypeError(
        f"expected a list of messages or an AgentLoop, not {type(messages_or_loop).__name__}"
    )


def dispose(widget: Any) -> None:
    """Close a widget, its children, and their layout/style models (frees the comms)."""
    for child in getattr(widget, "children", ()):
        dispose(child)
    for name in ("layout", "style"):
        part = getattr(widget, name, None)
        if isinstance(part, W.Widget):
            part.close()
    if isinstance(widget, W.Widget):
        widget.close()
