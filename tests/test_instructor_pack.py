"""The instructors' pack: generated pages are current, and the hub config is the one the docs show."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_mistakes_sheet_is_generated_from_the_current_checker():
    out = subprocess.run(
        [sys.executable, "tools/make_instructor_pack.py", "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stdout + out.stderr


def test_the_mistakes_sheet_covers_every_wrong_answer_we_know():
    sys.path.insert(0, str(ROOT / "tests"))
    from exercises_wrong import WRONG

    page = (ROOT / "docs" / "instructors" / "mistakes.md").read_text("utf-8")
    for w in WRONG:
        name = w.fn.__name__.replace("_", " ")
        assert f"### {name[0].upper()}{name[1:]}\n" in page, w.id
    assert page.count("- **Hint**:") == len(WRONG)


def test_the_cost_table_prices_every_lesson_with_the_model_table():
    page = (ROOT / "docs" / "instructors" / "costs.md").read_text("utf-8")
    table = page.split("<!-- costs:start -->")[1].split("<!-- costs:end -->")[0]
    lessons = sorted(p.stem for p in (ROOT / "notebooks").glob("0[0-9]_*.ipynb"))
    for lesson in lessons:
        assert f"| {lesson} |" in table
    assert "claude-sonnet-5-5" in table and "**all lessons**" in table


def test_the_cost_arithmetic_follows_the_caching_rules():
    sys.path.insert(0, str(ROOT / "tools"))
    from make_cost_table import cost

    from agentlab import models

    sonnet = models.get("claude-sonnet-5-5")
    assert sonnet is not None
    # Two requests of 1,000 prompt tokens, the second sharing the first 1,000 (its history grew).
    rows = [([400, 600], 100), ([400, 600, 300], 50)]
    p = {k: v / 1e6 for k, v in sonnet.prices.items()}
    plain = (1000 + 1300) * p["input"] + 150 * p["output"]
    cached = 1000 * p["cache_write"] + (1000 * p["cache_read"] + 300 * p["cache_write"])
    cached += 150 * p["output"]
    assert abs(cost(rows, "claude-sonnet-5-5", False) - plain) < 1e-12
    assert abs(cost(rows, "claude-sonnet-5-5", True) - cached) < 1e-12
    # Below the minimum cacheable length nothing is cached.
    small = [([100], 10), ([100, 50], 10)]
    assert cost(small, "claude-sonnet-5-5", True) == cost(small, "claude-sonnet-5-5", False)


def test_the_docs_show_the_hub_config_the_benchmark_runs():
    page = (ROOT / "docs" / "instructors" / "jupyterhub.md").read_text("utf-8")
    assert '--8<-- "docs/instructors/jupyterhub_config.py"' in page
    bench = (ROOT / "benchmarks" / "classroom.py").read_text("utf-8")
    assert 'CONFIG = REPO / "docs" / "instructors" / "jupyterhub_config.py"' in bench


def test_the_hub_config_loads_and_copies_lessons(tmp_path, monkeypatch):
    """Load the config as JupyterHub does (a traitlets Config with get_config) and run its hook."""
    from traitlets.config import Config

    config = Config()
    monkeypatch.setenv("AGENTLAB_HUB_ROOT", str(tmp_path))
    monkeypatch.setenv("AGENTLAB_HUB_TOKEN", "t0ken")
    code = (ROOT / "docs" / "instructors" / "jupyterhub_config.py").read_text("utf-8")
    exec(compile(code, "jupyterhub_config.py", "exec"), {"get_config": lambda: config})
    assert config.JupyterHub.spawner_class == "simple"
    assert config.Spawner.environment["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:8765"
    assert config.JupyterHub.services[0]["api_token"] == "t0ken"

    class User:
        name = "ada"

    class Spawner:
        home_dir_template = config.SimpleLocalProcessSpawner.home_dir_template
        user = User()

    config.Spawner.pre_spawn_hook(Spawner())
    assert (tmp_path / "home" / "ada" / "01_the_agent_loop.ipynb").is_file()
