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


def test_the_kernel_imports_agentlab_from_this_checkout(lab, page) -> None:
    """The views under test are the ones in this checkout, not another copy that
    happens to be installed (a worktree, an editable install elsewhere)."""
    from playwright.sync_api import expect

    repo = Path(__file__).resolve().parents[2]
    lab.write_notebook("which.ipynb", ["import agentlab; print('FROM', agentlab.__file__)"])
    panel = lab.open_notebook(page, "which.ipynb")
    lab.run_all(page)
    out = panel.locator(".jp-OutputArea-output")
    expect(out).to_contain_text("FROM")
    where = Path(out.inner_text().split("FROM", 1)[1].strip())
    assert where == repo / "agentlab" / "__init__.py"
