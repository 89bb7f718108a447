"""Is the demo model's matcher linear in the task's length? Prints numbers; asserts nothing.

    python benchmarks/demo_matcher.py

For several kinds of text (ordinary words, file names holding intent words,
unclosed quotes, a cue word repeated), it times ``plan`` (the whole reading
of a task: words, language, file names, quotes, every row of the table) on
tasks of 1 kB and of 64 kB, measured side by side, and prints the time per
kB of each and their ratio. A linear matcher gives a ratio near 1; a
quadratic one would give about 64. (The matcher before agentlab.fakeapi.demo took
about 27 s of CPU on some 64 kB tasks: its file-name pattern was quadratic on
one long word, the "one long word" row here.)
"""

from __future__ import annotations

import time

from agentlab.fakeapi.demo.intents import plan
from agentlab.fakeapi.demo.words import Task

KINDS = {
    "words": "please tell me how many lines there are in the notes ",
    "file names": "create_table.sql recreate.py write_log.txt ",
    "open quotes": "'x \"y “z 「w ",
    "cue words": "containing containing saying with the text ",
    "chinese": "这里有多少个文件以及包含什么内容，",
    "one long word": "a",
    "dotted word": "a.",
}
TARGET_RATIO = 4.0  # time per kB at 64 kB over 1 kB: linear stays near 1-2 (caches), quadratic ~64


def per_kb(text: str, size: int, repeat: int) -> float:
    task = (text * (size // len(text) + 1))[:size]
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        plan(Task(task))
        best = min(best, time.perf_counter() - start)
    return best / (size / 1024)


def main() -> None:
    print(
        f"{'text':12} {'1 kB: ms/kB':>12} {'64 kB: ms/kB':>13} {'ratio':>6}  (target <= {TARGET_RATIO})"
    )
    for name, text in KINDS.items():
        small = per_kb(text, 1024, 50)
        large = per_kb(text, 64 * 1024, 5)
        print(f"{name:12} {small * 1000:12.3f} {large * 1000:13.3f} {large / small:6.2f}")


if __name__ == "__main__":
    main()
