"""agentlab's offline demo model: a small script, not Claude and not a language model.

``demo_reply(params)`` reads one ``messages.create`` request and returns the
content blocks of the next reply. It is a pure function of the request, like
a model: everything it knows comes from the history.

1. The task is the newest user message with text. ``intents.plan`` finds
   its row in the table (``intents.INTENTS``) and turns it into commands.
2. The tool turns after the task are its progress: the next step, a
   fallback when a step failed, or the answer once every step is done.
   An edited call is read from its ``tool_result`` (what really ran).
3. Earlier turns give follow-ups their meaning ("which is the largest?"
   after a listing looks in the folder that was listed).
4. The reply takes the shape of the request's model (see
   ``agentlab.fakeapi.thinking``): ``claude-sonnet-5-5`` starts each reply with a
   thinking block and puts its text between tool calls inside it;
   ``claude-haiku-4-5`` writes that text as a plain text block.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from typing import Any

from agentlab.fakeapi import thinking
from agentlab.fakeapi.demo.intents import INTENTS, Plan, Step, plan
from agentlab.fakeapi.demo.strings import say
from agentlab.fakeapi.demo.words import Task
from agentlab.history import as_dict, blocks
from agentlab.i18n import STRINGS, get_language, language_chosen

__all__ = ["INTENTS", "Task", "classify", "demo_reply", "language", "plan"]


def language(task: Task) -> str:
    """The answer's language: the one chosen with ``set_language``, else the task's."""
    return get_language() if language_chosen() else task.language


def _edit_notes() -> list[tuple[str, str]]:
    """The harness's "what ran was: ..." note, split around the command, in each language."""
    notes = []
    for table in STRINGS.values():
        before, _, after = table.get("result.edited", "").partition("{input}")
        if before:
            notes.append((before, after))
    return notes


def _output(result: Mapping[str, Any], asked: str) -> Step:
    """One tool_result read back: what ran, its output, and its exit code."""
    content = result.get("content")
    if isinstance(content, list):
        content = "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    out = str(content or "")
    ran = asked
    first, _, rest = out.partition("\n")
    for before, after in _edit_notes():
        if first.startswith(before) and first.endswith(after):
            ran, out = first[len(before) : len(first) - len(after)], rest
            break
    code: int | None = 0
    m = re.search(r"\(exit code (-?\d+)\)\s*$", out)
    n = re.fullmatch(r"\(no output, exit (-?\d+)\)\s*", out)
    if m:
        out, code = out[: m.start()], int(m.group(1))
    elif n:
        out, code = "", int(n.group(1))
    elif result.get("is_error"):
        code = None  # denied, interrupted, unknown tool, timed out: no exit code
    if out.strip() == "(empty output)":
        out = ""
    return Step(asked, ran, out.rstrip(), -1 if code is None else code)


def _turns(messages: list[dict[str, Any]]) -> list[list[Step]]:
    """The tool turns in these messages: one list of Steps per assistant turn."""
    turns: list[list[Step]] = []
    asked: dict[str, str] = {}
    for m in messages:
        bs = blocks(m)
        uses = [b for b in bs if b.get("type") == "tool_use"]
        if m.get("role") == "assistant" and uses:
            asked = {str(b.get("id")): str((b.get("input") or {}).get("command", "")) for b in uses}
            turns.append([])
        elif m.get("role") == "user" and turns:
            for b in bs:
                if b.get("type") == "tool_result":
                    turns[-1].append(_output(b, asked.get(str(b.get("tool_use_id")), "")))
    return turns


def _listed(messages: list[dict[str, Any]]) -> str | None:
    """The folder of the last listing (ls or find) the demo ran in these messages."""
    folder = None
    for m in messages:
        if m.get("role") != "assistant":
            continue
        for b in blocks(m):
            command = str((b.get("input") or {}).get("command", ""))
            if b.get("type") != "tool_use" or not command.startswith(("ls", "find ")):
                continue
            try:
                words = shlex.split(command.split("|")[0])
            except ValueError:
                continue
            args = [w for w in words[1:] if not w.startswith("-")]
            folder = args[0] if args else "."
    return folder


def _task(messages: list[dict[str, Any]]) -> int:
    """Where the task is: the newest user message with the person's words.

    A message of tool results is progress, even when a harness adds text to it.
    """
    start = 0
    for i, m in enumerate(messages):
        kinds = {b.get("type") for b in blocks(m)}
        if m.get("role") == "user" and "text" in kinds and "tool_result" not in kinds:
            start = i
    return start


def classify(task: str, history: list[Any] | None = None) -> str:
    """The intent the demo reads in ``task`` ("cannot" if none), e.g. "count_files"."""
    found = plan(Task(task), _listed(as_dict(list(history or []))))
    return found.intent if found else "cannot"


def demo_reply(params: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The demo model's next reply for this request (a list of content blocks).

    It follows ``tool_choice`` as the API does (Anthropic docs, "Implement tool
    use", tool_choice, checked 2026-12-01): ``none`` calls no tool; ``any`` calls
    one of the tools offered and ``{"type": "tool", "name": X}`` calls X, with no
    text before the calls (the API prefills the turn to force the call).
    """
    choice = params.get("tool_choice")
    choice = choice if isinstance(choice, Mapping) else {}
    content = _planned(params, tools_off=choice.get("type") == "none")
    if choice.get("type") in ("any", "tool"):
        return _forced(content, params, choice.get("name") if choice["type"] == "tool" else None)
    return content


def _forced(
    content: list[dict[str, Any]], params: Mapping[str, Any], name: str | None
) -> list[dict[str, Any]]:
    """Only tool calls: the plan's, when they call the tool required, else one call
    of that tool (``name``; for ``any`` bash, or else the first tool offered) with
    the smallest input its schema accepts."""
    uses = [b for b in content if b.get("type") == "tool_use"]
    if uses and (name is None or all(b.get("name") == name for b in uses)):
        return uses
    offered = {
        tl.get("name"): tl
        for tl in as_dict(list(params.get("tools") or []))
        if isinstance(tl, dict)
    }
    if name is None:
        name = "bash" if "bash" in offered else next(iter(offered), None)
    tool = offered.get(name) or {}
    return [{"type": "tool_use", "name": name, "input": minimal(tool.get("input_schema") or {})}]


def minimal(schema: Any) -> Any:
    """The smallest value a JSON schema accepts, roughly: required fields only, empty
    strings and lists, zeros (or the minimum), the first of an enum."""
    if not isinstance(schema, Mapping):
        return {}
    for key in ("const", "default"):
        if key in schema:
            return schema[key]
    if schema.get("enum"):
        return schema["enum"][0]
    kind = schema.get("type", "object" if "properties" in schema else None)
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        props = schema.get("properties") or {}
        return {k: minimal(props.get(k, {"type": "string"})) for k in schema.get("required") or []}
    if kind == "array":
        return [minimal(schema.get("items") or {})] * int(schema.get("minItems") or 0)
    if kind in ("integer", "number"):
        return schema.get("minimum", 0)
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    return "x" * int(schema.get("minLength") or 0)  # a string, or a schema saying nothing


def _planned(params: Mapping[str, Any], tools_off: bool = False) -> list[dict[str, Any]]:
    """The reply the plan gives (``tools_off``: the request forbids tool calls)."""
    messages = as_dict(list(params.get("messages") or []))
    tools = [
        tl.get("name") for tl in as_dict(list(params.get("tools") or [])) if isinstance(tl, dict)
    ]
    start = _task(messages)
    task = Task(
        " ".join(str(b.get("text", "")) for b in blocks(messages[start]) if b.get("type") == "text")
        if messages
        else ""
    )
    lang = language(task)
    shape = _Shape(params, lang, first=not _turns(messages[start + 1 :]))
    found = plan(task, _listed(messages[:start]))
    if found is None:
        space = "" if lang == "zh" else " "
        return shape.answer("think.cannot", say(lang, "intro") + space + say(lang, "help"))
    if not found.steps:
        return shape.answer("think.cannot", found.answer(lang, []))
    if tools_off:
        return shape.answer("think.cannot", say(lang, "tools_off"))
    if "bash" not in tools:
        return shape.answer("think.cannot", say(lang, "no_bash"))
    return _next(found, _turns(messages[start + 1 :]), lang, shape)


def _next(p: Plan, turns: list[list[Step]], lang: str, shape: _Shape) -> list[dict[str, Any]]:
    """The next reply for plan ``p`` after these tool turns."""
    sequence, fell_back, done = p.steps, 0, 0  # fell_back: how many fallbacks were taken
    for n, turn in enumerate(turns):
        bad = next((s for s in turn if s.code not in p.ok_codes), None)
        if bad is None:
            done += 1
            continue
        if fell_back < len(p.fallbacks) and p.fallback_if in bad.out:
            values = dict(p.intro_values)
            if fell_back < len(p.fallback_values):
                values.update(p.fallback_values[fell_back])
            sequence, fell_back = sequence[:done] + p.fallbacks[fell_back], fell_back + 1
            if n == len(turns) - 1:
                note = say(lang, p.fallback_note, cmd=bad.ran, fallback=sequence[done][0], **values)
                return shape.calls(note, sequence[done])
            continue
        why = bad.out.splitlines()[-1] if bad.out.strip() else f"exit code {bad.code}"
        return shape.answer("think.failed", say(lang, "failed", cmd=bad.ran, why=why), bad.ran)
    steps = [s for turn in turns for s in turn]
    edited = next((s for s in steps if s.ran != s.asked), None)
    if edited is not None:
        text = say(lang, "edited", asked=edited.asked, ran=edited.ran, out=edited.out)
        return shape.answer("think.answer", text, edited.ran)
    if done < len(sequence):
        if done:
            intro = say(lang, "intro.check")
        else:
            values = dict(p.intro_values)
            if values.get("where") == ".":
                values["where"] = say(lang, "here")
            intro = say(lang, p.intro, **values)
        return shape.calls(intro, sequence[done])
    return shape.answer("think.answer", p.answer(lang, steps), steps[-1].ran if steps else "")


class _Shape:
    """Puts a reply into the shape of the request's model (thinking blocks or not)."""

    def __init__(self, params: Mapping[str, Any], lang: str, first: bool):
        self.model = str(params.get("model") or "")
        self.params = params
        self.lang = lang
        self.mode = thinking.mode(params)
        self.display = thinking.display(params)
        # "between_tools" turns off up-front thinking: none before the first call.
        self.thinks = self.mode is not None and not (self.mode == "between_tools" and first)

    def _think(self, hidden: str) -> list[dict[str, Any]]:
        # Bound to the request's prefix (preserved thinking), as the reply's first block.
        block = thinking.make_block(self.model, hidden, self.display, self.params)
        return [block] if self.thinks else []

    def calls(self, intro: str, commands: list[str]) -> list[dict[str, Any]]:
        """Text, then tool calls. A model that thinks adaptively says the text in its
        thinking (hidden unless the display shows it), not as a text block."""
        uses = [{"type": "tool_use", "name": "bash", "input": {"command": c}} for c in commands]
        if self.thinks and self.mode != "enabled":
            return self._think(intro) + uses
        return self._think(intro) + [{"type": "text", "text": intro}] + uses

    def answer(self, note_key: str, text: str, cmd: str = "") -> list[dict[str, Any]]:
        """The final answer, signed as the demo's."""
        hidden = say(self.lang, note_key, cmd=cmd)
        signed = f"{text}\n\n{say(self.lang, 'sign')}"
        return self._think(hidden) + [{"type": "text", "text": signed}]
