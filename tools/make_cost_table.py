"""Tokens and cost per lesson, from the requests the lessons really send.

    python tools/make_cost_table.py           # run the lessons, write docs/instructors/costs.md
    python tools/make_cost_table.py --check   # exit 1 if the page's table is out of date

How the numbers are made (nothing is guessed):
1. ``agentlab serve`` (the offline demo model) starts on 127.0.0.1 and records every request;
2. each English lesson runs top to bottom with ``ANTHROPIC_BASE_URL`` pointing at it, so every
   ``al.connect()`` in the lesson sends its real requests there (cells that use a
   ``ScriptedClient`` on purpose send nothing and cost nothing on any model);
3. for every request: input tokens = the prompt the lesson sent (system + tools + messages),
   output tokens = the reply it got, both counted the server's way (4 characters a token);
4. for each model in ``agentlab/models.json``: cost without caching (every input token at the
   input price), and with caching as ``cache=True`` does it (each request reads the prefix it
   shares with the request before it at the cache-read price and writes the rest at the
   cache-write price; prompts under the model's minimum cacheable length are not cached).
A real model writes other replies than the demo (usually longer): read the output column as a floor.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "instructors" / "costs.md"
PAGES = (PAGE, ROOT / "docs" / "instructors" / "costs.zh.md")  # the same table in both languages
LESSONS = sorted((ROOT / "notebooks").glob("0[0-9]_*.ipynb"))
START, END = "<!-- costs:start -->", "<!-- costs:end -->"
MODELS = ("claude-sonnet-5-5", "claude-opus-5-5", "claude-haiku-4-5")


def tokens(data: Any) -> int:
    if data in (None, "", []):
        return 0
    return max(1, len(json.dumps(data, ensure_ascii=False, separators=(",", ":"))) // 4)


def run_lessons() -> dict[str, list[tuple[list[int], int]]]:
    """Per lesson: for each request, the token sizes of its prompt's parts, and its output."""
    import nbformat
    from nbclient import NotebookClient

    from agentlab.fakeapi.offline import demo_reply
    from agentlab.fakeapi.server import FakeMessagesServer

    outputs: list[int] = []

    def reply(body: dict[str, Any]) -> Any:  # the demo model, with its reply's size noted
        answer = demo_reply(body)
        outputs.append(tokens(answer))
        return answer

    out: dict[str, list[tuple[list[int], int]]] = {}
    with FakeMessagesServer(reply) as server:
        for path in LESSONS:
            server.reset()
            outputs.clear()
            nb = nbformat.read(path, as_version=4)
            env = {"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "cost-table"}
            old = {k: os.environ.get(k) for k in env}
            os.environ.update(env)
            try:
                NotebookClient(
                    nb,
                    timeout=180,
                    kernel_name="python3",
                    allow_errors=True,
                    resources={"metadata": {"path": str(path.parent)}},
                ).execute()
            finally:
                for k, v in old.items():
                    if v is None:
                        os.environ.pop(k, None)
                    else:
                        os.environ[k] = v
            answered = [r for r in server.requests if r.path == "/v1/messages" and r.status == 200]
            rows = []
            for r, output in zip(answered, outputs):
                body = r.body if isinstance(r.body, dict) else {}
                parts = [tokens(body.get("system")) + tokens(body.get("tools"))]
                parts += [tokens(m) for m in body.get("messages") or []]
                rows.append((parts, output))
            out[path.stem] = rows
    return out


def cost(rows: list[tuple[list[int], int]], model: str, cached: bool) -> float:
    from agentlab import models

    info = models.get(model)
    assert info is not None, model
    p = {k: v / 1_000_000 for k, v in info.prices.items()}
    total, previous = 0.0, [-1]
    for parts, output in rows:
        prompt = sum(parts)
        if not cached or prompt < info.min_cache_tokens:
            total += prompt * p["input"]
        else:
            shared = 0
            for a, b in zip(parts, previous):
                if a != b:
                    break
                shared += a
            total += shared * p["cache_read"] + (prompt - shared) * p["cache_write"]
        total += output * p["output"]
        previous = parts
    return total


def table(data: dict[str, list[tuple[list[int], int]]]) -> str:
    head = ["lesson", "requests", "input tokens", "output tokens"]
    head += [f"{m} (cached)" for m in MODELS]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for lesson, rows in data.items():
        cells = [
            lesson,
            str(len(rows)),
            f"{sum(sum(p) for p, _ in rows):,}",
            f"{sum(o for _, o in rows):,}",
        ]
        for m in MODELS:
            cells.append(f"${cost(rows, m, False):.4f} (${cost(rows, m, True):.4f})")
        lines.append("| " + " | ".join(cells) + " |")
    every = [row for rows in data.values() for row in rows]
    cells = [
        "**all lessons**",
        str(len(every)),
        f"{sum(sum(p) for p, _ in every):,}",
        f"{sum(o for _, o in every):,}",
    ]
    for m in MODELS:  # each lesson is its own conversation: sum their costs
        plain = sum(cost(rows, m, False) for rows in data.values())
        cached = sum(cost(rows, m, True) for rows in data.values())
        cells.append(f"**${plain:.4f}** (${cached:.4f})")
    lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    new = table(run_lessons())
    stale = []
    for page in PAGES:
        text = page.read_text("utf-8")
        before, rest = text.split(START, 1)
        _, after = rest.split(END, 1)
        updated = f"{before}{START}\n{new}\n{END}{after}"
        if args.check:
            stale += [page] if updated != text else []
        else:
            page.write_text(updated, "utf-8")
    print(new)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
