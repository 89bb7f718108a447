"""Time a run-through of the lessons as a student gets them: minutes of reading and of running.

    python tools/time_lessons.py                  # every lesson, English
    python tools/time_lessons.py --zh             # the Chinese lessons
    python tools/time_lessons.py --update docs/instructors/plan.md   # also write the table there
    python tools/time_lessons.py --only 06 07 --update docs/instructors/plan.md  # those rows only

The lessons are copied the way ``agentlab lessons`` copies them for students (every output
cleared), then each one is run top to bottom, cell by cell, on the offline demo model, in its
own folder. For each lesson it reports:

- **reading**: the words of its Markdown cells at 200 words a minute (Chinese: 300 characters
  a minute, and the Latin words in it at 200), rounded up to a minute;
- **running**: the seconds the kernel spent on its code cells (from each cell's execution
  timestamps, so starting the kernel is not counted), the slowest cell named;
- **student cells**: how many cells are tagged ``student`` (the student writes there, so the
  class needs time beyond reading and running: the plan adds it).

Reading aloud, thinking about a Predict prompt and writing code take longer than this: the
figures are a floor for planning, not a schedule.
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
import os
import re
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
SECRETS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL")
WORDS_PER_MINUTE = 200
CHINESE_CHARACTERS_PER_MINUTE = 300
START, END = "<!-- timings:start -->", "<!-- timings:end -->"
CJK = re.compile(r"[\u4e00-\u9fff]")
WORD = re.compile(r"[A-Za-z0-9_'`.-]+")


@dataclass
class Timing:
    lesson: str
    words: int  # Latin words of the Markdown cells
    characters: int  # Chinese characters of the Markdown cells
    reading_minutes: int
    running_seconds: float
    slowest: str  # the slowest code cell: "id (seconds)"
    code_cells: int
    student_cells: int


def reading_minutes(words: int, characters: int) -> int:
    minutes = words / WORDS_PER_MINUTE + characters / CHINESE_CHARACTERS_PER_MINUTE
    return max(1, math.ceil(minutes)) if words or characters else 0


def count_words(text: str) -> tuple[int, int]:
    """(Latin words, Chinese characters) of a Markdown text."""
    return len(WORD.findall(CJK.sub(" ", text))), len(CJK.findall(text))


def seconds(cell) -> float:
    """How long the kernel ran ``cell``, from the timestamps nbclient records."""
    timing = cell.metadata.get("execution", {})
    start, end = timing.get("iopub.execute_input"), timing.get("shell.execute_reply")
    if not (start and end):
        return 0.0
    parse = dt.datetime.fromisoformat
    return (parse(end.replace("Z", "+00:00")) - parse(start.replace("Z", "+00:00"))).total_seconds()


def time_lesson(path: Path, timeout: int = 300) -> Timing:
    """Run one (cleared) notebook cell by cell in its folder; measure it."""
    nb = nbformat.read(path, as_version=4)
    words = characters = 0
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            w, c = count_words(cell.source)
            words, characters = words + w, characters + c
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        record_timing=True,
        resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute()
    code = [c for c in nb.cells if c.cell_type == "code"]
    spent = {c.id: seconds(c) for c in code}
    slowest = max(spent, key=lambda k: spent[k]) if spent else ""
    return Timing(
        lesson=path.stem,
        words=words,
        characters=characters,
        reading_minutes=reading_minutes(words, characters),
        running_seconds=sum(spent.values()),
        slowest=f"{slowest} ({spent[slowest]:.1f} s)" if slowest else "",
        code_cells=len(code),
        student_cells=sum("student" in c.metadata.get("tags", []) for c in code),
    )


def table(timings: list[Timing], chinese: bool, kept: list[str] | None = None) -> str:
    """The timings as a Markdown table; ``kept``: rows of other lessons, kept as they are."""
    head = (
        "| 课程 | 汉字 | 阅读（分钟） | 运行（秒） | 最慢的单元格 | 代码单元格 | 学生单元格 |"
        if chinese
        else "| lesson | words | reading (min) | running (s) | slowest cell | code cells | student cells |"
    )
    rows = list(kept or [])
    for t in timings:
        amount = f"{t.characters:,}（另有 {t.words:,} 个英文词）" if chinese else f"{t.words:,}"
        rows.append(
            f"| {t.lesson} | {amount} | {t.reading_minutes} | {t.running_seconds:.0f} | "
            f"{t.slowest} | {t.code_cells} | {t.student_cells} |"
        )
    return "\n".join([head, "| --- | ---: | ---: | ---: | --- | ---: | ---: |", *sorted(rows)])


def other_rows(page: Path, lessons: list[str]) -> list[str]:
    """The rows of the page's table for lessons other than ``lessons`` (timed earlier)."""
    body = page.read_text("utf-8")
    if START not in body:
        return []
    block = body.split(START, 1)[1].split(END, 1)[0]
    rows = [line for line in block.splitlines() if re.match(r"\| \d\d_", line)]
    return [row for row in rows if row.split(" | ")[0][2:] not in lessons]


def note(chinese: bool) -> str:
    today, cores = dt.date.today().isoformat(), os.cpu_count()
    if chinese:
        return (
            f"{today} 用 `python tools/time_lessons.py --zh` 测量：学生拿到的副本（输出已清空），"
            f"在离线演示模型上一个单元格一个单元格地运行，机器有 {cores} 个 CPU 核（运行时间随机器负载变化）；"
            f"阅读按每分钟 {CHINESE_CHARACTERS_PER_MINUTE} 个汉字（英文词每分钟 {WORDS_PER_MINUTE} 个）计算。"
        )
    return (
        f"Measured {today} with `python tools/time_lessons.py`: the student copies (outputs "
        f"cleared), run cell by cell on the offline demo model, on {cores} CPU cores (running "
        f"times vary with the machine's load); reading at {WORDS_PER_MINUTE} words a minute."
    )


def update(page: Path, text: str) -> None:
    """Put ``text`` between the page's timing markers."""
    body = page.read_text("utf-8")
    if START not in body or END not in body:
        raise SystemExit(f"{page}: no {START} ... {END} markers to write between")
    head, rest = body.split(START, 1)
    page.write_text(f"{head}{START}\n{text}\n{END}{rest.split(END, 1)[1]}", "utf-8")


def student_copies(dest: Path, chinese: bool) -> list[Path]:
    """The lessons as ``agentlab lessons`` copies them for students (outputs cleared)."""
    from agentlab.apps.lessons import copy_lessons

    copy_lessons(dest)
    folder = dest / "zh" if chinese else dest
    return sorted(folder.glob("[0-9][0-9]_*.ipynb"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--zh", action="store_true", help="time the Chinese lessons")
    parser.add_argument("--only", nargs="*", default=[], help="lesson numbers, e.g. 02 04")
    parser.add_argument("--update", type=Path, help="write the table into this page's markers")
    args = parser.parse_args(argv)
    for key in SECRETS:  # offline: the demo model, as in class without a key
        os.environ.pop(key, None)
    with tempfile.TemporaryDirectory() as tmp:
        paths = student_copies(Path(tmp), args.zh)
        if args.only:
            paths = [p for p in paths if p.name[:2] in args.only]
        timings = []
        for path in paths:
            started = time.monotonic()
            timings.append(time_lesson(path))
            print(f"{time.monotonic() - started:5.1f} s  {path.name}", file=sys.stderr)
    kept = other_rows(args.update, [t.lesson for t in timings]) if args.update and args.only else []
    text = f"{table(timings, args.zh, kept)}\n\n{note(args.zh)}"
    print(text)
    if args.update:
        update(args.update, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
