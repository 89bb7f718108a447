"""Keyboard shortcuts for a view, heard only while the keyboard focus is inside it.

    keys = shortcuts({"n": "al-key-next", "t": "al-key-turn"})  # None without anywidget

A key pressed while the focus is inside the view (on one of its buttons, say)
clicks the view's button that carries the class it names, so a shortcut does
exactly what a click does. Keys typed into a text box (not a checkbox), keys with Ctrl, Alt or
Cmd, and every key pressed outside the view go on to JupyterLab as before, so
the notebook's own shortcuts are untouched.

The listener is a few lines of JavaScript in an ``anywidget`` widget (its
front-end extension comes in its wheel, no build step). Without anywidget,
``shortcuts`` returns None and the view says how to use it with Tab, Enter and
Space instead.
"""

from __future__ import annotations

from typing import Any

__all__ = ["available", "shortcuts"]

# Listens on the window before anyone else (capture phase), so a shortcut key
# never reaches JupyterLab, which would read it as a notebook command. A button
# that is disabled while a stage runs loses the focus to the page's body: the
# focus still counts as in the view until it lands somewhere else.
ESM = """
const TICKS = ["checkbox", "radio", "button"];  // inputs that take no text: the keys still work

export default {
  render({ model, el }) {
    let inView = false;
    const view = () => el.closest(model.get("scope"));
    // a view inside this one (a helper's LoopView in its parent's) hears its own keys
    const mine = (node, v) => node.closest(model.get("scope")) === v;
    const onFocus = (event) => {
      const v = view();
      const target = event.target;
      inView = !!v && target instanceof Element && v.contains(target) && mine(target, v);
    };
    const onKey = (event) => {
      if (event.ctrlKey || event.altKey || event.metaKey || event.repeat) return;
      const v = view();
      const target = event.target;
      if (!v || !(target instanceof Element)) return;
      const inside = v.contains(target) && mine(target, v);
      if (!inside && !(inView && target === document.body)) return;
      const field = target.closest("input, textarea, select, [contenteditable]");
      if (field && !(field instanceof HTMLInputElement && TICKS.includes(field.type))) return;  // typing
      const name = model.get("bindings")[event.key.toLowerCase()];
      const button = name && [...v.querySelectorAll("button." + name)].find((b) => mine(b, v));
      if (!button) return;
      event.preventDefault();
      event.stopPropagation();
      if (!button.disabled) button.click();
    };
    window.addEventListener("focusin", onFocus, true);
    window.addEventListener("keydown", onKey, true);
    return () => {
      window.removeEventListener("focusin", onFocus, true);
      window.removeEventListener("keydown", onKey, true);
    };
  },
};
"""

try:
    import anywidget
    import traitlets
except ImportError:  # the views work without it: no shortcuts, only Tab, Enter and Space
    anywidget = None  # type: ignore[assignment]


def available() -> bool:
    """True when shortcuts can work (anywidget is installed)."""
    return anywidget is not None


if anywidget is not None:

    class Shortcuts(anywidget.AnyWidget):
        """Clicks ``button.<bindings[key]>`` inside the closest ``scope`` element."""

        _esm = ESM
        bindings = traitlets.Dict().tag(sync=True)  # key -> button class ("keys" is taken)
        scope = traitlets.Unicode(".al-root").tag(sync=True)


def shortcuts(keys: dict[str, str], scope: str = ".al-root") -> Any:
    """A hidden widget to put inside the view: key (lower case) -> button class.
    None when anywidget is missing."""
    if anywidget is None:
        return None
    import ipywidgets as W

    return Shortcuts(bindings=keys, scope=scope, layout=W.Layout(display="none"))
