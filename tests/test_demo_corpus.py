"""Every task in agentlab/fakeapi/demo/corpus.tsv, run by the demo model with the real bash tool.

Each task runs in a temporary folder; the test checks the intent read, the
answer's language, and, with a snapshot of every file before and after,
that only a "create" task changed anything and that it overwrote nothing.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import agentlab as al
from agentlab.fakeapi import thinking
from agentlab.fakeapi.demo import INTENTS, classify
from agentlab.fakeapi.offline import DemoClient

CORPUS = Path(al.__file__).parent / "fakeapi" / "demo" / "corpus.tsv"
FILES = {
    "a.py": "import os\n# TODO: tidy\n",
    "b.py": "print('hi')\n",
    "notes.md": "nothing to do\n",
    "create_table.sql": "CREATE TABLE t (x int);\n",
    "data.csv": "a,b\n1,2\n",
    "README.md": "# hello\n\nA small project.\n",
    "sub/inner.txt": "x\n",
}
CJK = re.compile(r"[\u4e00-\u9fff]")


def _load() -> list[tuple[str, str]]:
    rows = []
    for line in CORPUS.read_text("utf-8").splitlines():
        if line.startswith("#") or not line.strip():
            continue
        intent, _, task = line.partition("\t")
        rows.append((intent, task))
    return rows


ROWS = _load()
WRITING = {intent.name for intent in INTENTS if intent.writes}  # only "create"
READ_ONLY = [r for r in ROWS if r[0] not in WRITING]
CREATE = [r for r in ROWS if r[0] in WRITING]


def snapshot(root: Path) -> dict[str, bytes | None]:
    """Every file's bytes and every folder (None) under root."""
    return {
        str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None)
        for p in sorted(root.rglob("*"))
    }


def make_workspace(root: Path) -> Path:
    for name, text in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    return make_workspace(tmp_path_factory.mktemp("corpus"))


def run(task: str, root: Path, monkeypatch) -> al.LoopResult:
    monkeypatch.chdir(root)
    messages = [{"role": "user", "content": task}]
    client = DemoClient()
    result = al.agent_loop(messages, client, tools=[al.bash], max_turns=6)
    assert result.ended == "model"
    assert al.validate(messages) == []
    # The history can go on as it is, with the same system and tools: its thinking
    # blocks are intact and still bound to their prefix (preserved thinking).
    follow = messages + [{"role": "user", "content": "thanks"}]
    assert thinking.check({**client.requests[-1], "messages": follow}) == []
    return result


def test_the_corpus_is_large_and_covers_both_languages_and_cannot():
    assert WRITING == {"create"}
    assert len(ROWS) >= 200
    assert sum(1 for _, task in ROWS if CJK.search(task)) >= 60
    assert sum(1 for intent, _ in ROWS if intent == "cannot") >= 30
    assert len(CREATE) >= 10


@pytest.mark.parametrize(("intent", "task"), READ_ONLY, ids=[t for _, t in READ_ONLY])
def test_a_read_only_task_reads_its_intent_and_changes_nothing(intent, task, shared, monkeypatch):
    assert classify(task) == intent
    before = snapshot(shared)
    result = run(task, shared, monkeypatch)
    assert snapshot(shared) == before
    # The answer speaks the task's language (file names and commands aside).
    prose = re.sub(r"`[^`]*`|```.*?```", "", result.text, flags=re.S)
    assert bool(CJK.search(prose)) == bool(CJK.search(task))
    if intent == "cannot":
        assert result.turns == 1
        assert "not Claude" in result.text or "不是 Claude" in result.text


@pytest.mark.parametrize(("intent", "task"), CREATE, ids=[t for _, t in CREATE])
def test_a_create_task_makes_one_new_file_and_overwrites_nothing(
    intent, task, tmp_path, monkeypatch
):
    assert classify(task) == "create"
    root = make_workspace(tmp_path)
    before = snapshot(root)
    result = run(task, root, monkeypatch)
    after = snapshot(root)
    assert {k: after[k] for k in before} == before  # nothing that was there changed
    new = set(after) - set(before)
    assert len(new) == 1, new
    (name,) = new
    assert name in result.text and after[name] is not None
    assert after[name].decode().strip() in result.text  # it read back what it wrote
