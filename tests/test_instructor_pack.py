"""The instructors' pack: generated pages are current, and the hub config is the one the docs show."""

from __future__ import annotations

import re
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


def _time_lessons():
    sys.path.insert(0, str(ROOT / "tools"))
    import time_lessons

    return time_lessons


def test_reading_time_counts_words_and_chinese_characters():
    tl = _time_lessons()
    assert tl.count_words("Run the `loop` twice.") == (4, 0)
    assert tl.count_words("运行 `loop` 两次") == (1, 4)
    assert tl.reading_minutes(tl.WORDS_PER_MINUTE, 0) == 1
    assert tl.reading_minutes(tl.WORDS_PER_MINUTE + 1, 0) == 2  # rounded up
    assert tl.reading_minutes(0, 2 * tl.CHINESE_CHARACTERS_PER_MINUTE) == 2
    assert tl.reading_minutes(0, 0) == 0


def test_a_lesson_is_timed_cell_by_cell(tmp_path):
    import nbformat

    tl = _time_lessons()
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("word " * 400),
        nbformat.v4.new_code_cell("import time\ntime.sleep(0.3)"),
        nbformat.v4.new_code_cell("x = None", metadata={"tags": ["student"]}),
        nbformat.v4.new_code_cell("print(x)"),
    ]
    path = tmp_path / "09_tiny.ipynb"
    nbformat.write(nb, path)
    timing = tl.time_lesson(path)
    assert (timing.words, timing.reading_minutes) == (400, 2)
    assert timing.code_cells == 3 and timing.student_cells == 1
    assert timing.running_seconds >= 0.3  # the sleep, measured from the cells' own timestamps
    assert timing.slowest.startswith(nb.cells[1].id)


def test_the_table_goes_between_the_markers(tmp_path):
    tl = _time_lessons()
    page = tmp_path / "plan.md"
    page.write_text(f"before\n{tl.START}\nold\n{tl.END}\nafter\n", "utf-8")
    tl.update(page, "new table")
    assert page.read_text("utf-8") == f"before\n{tl.START}\nnew table\n{tl.END}\nafter\n"


def test_timing_some_lessons_keeps_the_rows_of_the_others(tmp_path):
    tl = _time_lessons()
    page = tmp_path / "plan.md"
    rows = [
        "| 01_a | 10 | 1 | 2 | c1 (1.0 s) | 3 | 2 |",
        "| 02_b | 20 | 1 | 2 | c2 (1.0 s) | 3 | 2 |",
    ]
    page.write_text(
        f"{tl.START}\n| lesson |\n| --- |\n" + "\n".join(rows) + f"\n\nMeasured\n{tl.END}\n"
    )
    assert tl.other_rows(page, ["02_b"]) == rows[:1]
    new = tl.Timing("02_b", 40, 0, 1, 5.0, "c9 (4.0 s)", 4, 2)
    table = tl.table([new], False, tl.other_rows(page, ["02_b"])).splitlines()
    assert table[2:] == [rows[0], "| 02_b | 40 | 1 | 5 | c9 (4.0 s) | 4 | 2 |"]


def test_the_plan_holds_measured_timings_for_every_lesson():
    tl = _time_lessons()
    lessons = sorted(p.stem for p in (ROOT / "notebooks").glob("0[0-9]_*.ipynb"))
    for name in ("plan.md", "plan.zh.md"):
        page = (ROOT / "docs" / "instructors" / name).read_text("utf-8")
        table = page.split(tl.START)[1].split(tl.END)[0]
        assert all(f"| {lesson} |" in table for lesson in lessons), name
        assert re.search(r"\d{4}-\d\d-\d\d .*`python tools/time_lessons.py", table), name


def test_every_lesson_has_an_exit_ticket_of_three_questions_with_answers():
    for name in ("exit-tickets.md", "exit-tickets.zh.md"):
        page = (ROOT / "docs" / "instructors" / name).read_text("utf-8")
        questions, key = re.split(r"\n## (?:Key|答案)\n", page)
        for n in ("01", "02", "03", "04", "05", "06", "07"):
            section = re.search(
                rf"\n## (?:Lesson {n}|第 {n} 课)[^\n]*\n(.*?)(?=\n## |\Z)", questions, re.S
            )
            assert section, (name, n)
            assert re.findall(r"^\d\. ", section.group(1), re.M) == ["1. ", "2. ", "3. "], (name, n)
            answers = re.search(
                rf"\*\*(?:Lesson {n}|第 {n} 课)\S*\*\*\n(.*?)(?=\n\*\*|\Z)", key, re.S
            )
            assert answers and len(re.findall(r"^\d\. ", answers.group(1), re.M)) == 3, (name, n)


def test_the_summary_sheet_does_not_give_exercise_6_away():
    """It is printed before class; exercise 6 asks for the loop from memory."""
    for name in ("summary.md", "summary.zh.md"):
        page = (ROOT / "docs" / "instructors" / name).read_text("utf-8")
        for line in (
            '"tool_use_id": block.id',
            "stop_reason != ",
            'messages.append({"role": "user"',
        ):
            assert line not in page, (name, line)
