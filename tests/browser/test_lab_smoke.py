"""Smoke test: a widget in real JupyterLab round-trips a click to the kernel."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

SETUP = """\
import ipywidgets as widgets
button = widgets.Button(description="Press me")
label = widgets.Label(value="not yet")
label.add_class("smoke-label")

def on_click(_):
    label.value = "clicked"

button.on_click(on_click)
widgets.VBox([button, label])
"""


def test_widget_click_round_trips_to_kernel(lab, page, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    start = time.monotonic()
    lab.write_notebook("smoke.ipynb", [SETUP])
    panel = lab.open_notebook(page, "smoke.ipynb")
    lab.run_all(page)

    button = panel.get_by_role("button", name="Press me")
    label = panel.locator(".smoke-label")
    expect(label).to_have_text("not yet")  # rendered as a widget, not as text

    button.click()
    expect(label).to_have_text("clicked")  # on_click ran in the kernel

    shot = tmp_path / "smoke.png"
    page.screenshot(path=str(shot))
    print(f"\nscreenshot: {shot}  (test body {time.monotonic() - start:.1f}s)")
