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

import hashlib
import json
import math
import re
import shlex
from collections.abc import Mapping
from typing import Any

from agentlab import models
from agentlab.fakeapi import thinking
from agentlab.fakeapi.demo import planning
from agentlab.fakeapi.demo.intents import INTENTS, Plan, Step, plan, progress
from agentlab.fakeapi.demo.strings import say
from agentlab.fakeapi.demo.words import Task
from agentlab.history import as_dict, blocks
from agentlab.i18n import STRINGS, get_language, language_chosen

__all__ = ["INTENTS", "REFUSAL_TEST", "Task", "classify", "demo_reply", "language", "plan"]

# A request whose task holds this phrase is refused (stop_reason "refusal") on a model
# with safety classifiers, so students meet a refusal offline. agentlab's own phrase.
REFUSAL_TEST = "agentlab refusal test"
# The model a practice refusal recommends: one without classifiers in the demo's table
# (refusals-and-fallback docs, read 2026-12-01: "sending the same request to another
# Claude model" usually gets an answer).
RECOMMENDED = "claude-opus-4-8"
# Names of tools that run shell commands (Claude Code's is "Bash"; others say "shell").
SHELL_NAMES = ("bash", "shell", "sh", "terminal", "run_shell", "run_command", "execute_command")
_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.S)


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


def _turns(messages: list[dict[str, Any]], only: str | None = None) -> list[list[Step]]:
    """The tool turns in these messages: one list of Steps per assistant turn
    (``only``: the turns that call this tool, and only its results)."""
    turns: list[list[Step]] = []
    asked: dict[str, str] = {}
    for m in messages:
        bs = blocks(m)
        uses = [b for b in bs if b.get("type") == "tool_use" and only in (None, b.get("name"))]
        if m.get("role") == "assistant":
            asked = {str(b.get("id")): str((b.get("input") or {}).get("command", "")) for b in uses}
            if uses:
                turns.append([])
        elif m.get("role") == "user" and turns:
            for b in bs:
                if b.get("type") == "tool_result" and str(b.get("tool_use_id")) in asked:
                    turns[-1].append(_output(b, asked[str(b.get("tool_use_id"))]))
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


def _task_of(messages: list[dict[str, Any]]) -> Task:
    """The task's words: the text of the newest user message with the person's own words,
    without the ``<system-reminder>`` notes a harness such as Claude Code adds to it."""
    if not messages:
        return Task("")
    texts = [
        str(b.get("text", "")) for b in blocks(messages[_task(messages)]) if b.get("type") == "text"
    ]
    return Task(" ".join(t for t in (_REMINDER.sub("", x).strip() for x in texts) if t))


def classify(task: str, history: list[Any] | None = None) -> str:
    """The intent the demo reads in ``task`` ("cannot" if none), e.g. "count_files"."""
    found = plan(Task(task), _listed(as_dict(list(history or []))))
    return found.intent if found else "cannot"


def shell_tool(params: Mapping[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """The request's tool that runs shell commands, whatever its name, and its input
    schema: Anthropic's bash tool (``type: "bash_..."``), a tool named bash, Bash,
    shell... with a ``command`` input, or else any tool whose input has a string
    ``command``. None if the request offers none (the demo then says it needs one)."""
    found: list[tuple[int, str, dict[str, Any]]] = []
    for tl in as_dict(list(params.get("tools") or [])):
        if not isinstance(tl, dict) or not isinstance(tl.get("name"), str):
            continue
        name, schema = tl["name"], tl.get("input_schema") or {}
        props = schema.get("properties") if isinstance(schema, dict) else None
        takes = isinstance(props, dict) and "command" in props
        if str(tl.get("type", "")).startswith("bash_"):
            found.append((0, name, {}))
        elif name.lower() in SHELL_NAMES and (takes or not props):
            found.append((1 if name == "bash" else 2, name, schema))
        elif takes and (props or {}).get("command", {}).get("type", "string") == "string":
            found.append((3, name, schema))
    if not found:
        return None
    _, name, schema = min(found, key=lambda f: f[0])
    return name, schema


def _refused(params: Mapping[str, Any], task: Task) -> dict[str, Any] | None:
    """A practice refusal, when the task holds ``REFUSAL_TEST`` and the model has
    classifiers (refusals-and-fallback docs: a normal response with stop_reason
    "refusal" and ``stop_details``; ``recommended_model`` and ``fallback_credit_token``
    when the server-side fallback could not run, which is always so here: agentlab
    does not imitate the ``fallbacks`` beta, it accepts the field and answers as if
    the fallback could not run)."""
    if REFUSAL_TEST not in task.text.lower():
        return None
    info = models.get(params.get("model")) or models.get(models.DEFAULT_MODEL)
    if info is None or not info.refusals:
        return None
    digest = hashlib.sha256(json.dumps(as_dict(params.get("messages")), default=str).encode())
    details = {
        "type": "refusal",
        "category": None,  # a practice refusal names no policy area
        "explanation": say(language(task), "refusal"),
        "recommended_model": RECOMMENDED,
        "fallback_credit_token": f"fct_agentlab_{digest.hexdigest()[:24]}",
        "fallback_has_prefill_claim": False,
    }
    return {"content": [], "stop_reason": "refusal", "stop_details": details}


def demo_reply(params: Mapping[str, Any]) -> list[dict[str, Any]] | dict[str, Any]:
    """The demo model's next reply for this request: a list of content blocks (or,
    for a practice refusal, a message dict with its ``stop_details``).

    It follows ``tool_choice`` as the API does (Anthropic docs, "Implement tool
    use", tool_choice, checked 2026-12-01): ``none`` calls no tool; ``any`` calls
    one of the tools offered and ``{"type": "tool", "name": X}`` calls X, with no
    text before the calls (the API prefills the turn to force the call).
    """
    messages = as_dict(list(params.get("messages") or []))
    if messages:
        refused = _refused(params, _task_of(messages))
        if refused is not None:
            return refused
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
        shell = shell_tool(params)
        name = shell[0] if shell else next(iter(offered), None)
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
    shell = shell_tool(params)
    start = _task(messages)
    task = _task_of(messages)
    lang = language(task)
    shape = _Shape(params, lang, first=not _turns(messages[start + 1 :]))
    if shell is not None:
        shape.shell = shell
    shape.signed = not planning.is_helper(task)  # a helper's summary goes to its parent
    if not tools_off:  # a plan with the todo tool, or a helper with the task tool
        args = (messages, start, task, lang, shape, _listed(messages[:start]), _turns)
        special = planning.reply(params, *args, has_shell=shell is not None)
        if special is not None:
            return special
    found = plan(task, _listed(messages[:start]))
    if found is None:
        space = "" if lang == "zh" else " "
        return shape.answer("think.cannot", say(lang, "intro") + space + say(lang, "help"))
    if not found.steps:
        return shape.answer("think.cannot", found.answer(lang, []))
    if tools_off:
        return shape.answer("think.cannot", say(lang, "tools_off"))
    if shell is None:
        return shape.answer("think.cannot", say(lang, "no_bash"))
    return _next(found, _turns(messages[start + 1 :]), lang, shape)


def _next(p: Plan, turns: list[list[Step]], lang: str, shape: _Shape) -> list[dict[str, Any]]:
    """The next reply for plan ``p`` after these tool turns."""
    move = progress(p, turns, lang)
    if move.commands:
        return shape.calls(move.text, move.commands)
    return shape.answer(move.note, move.text, move.cmd)


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

    shell: tuple[str, dict[str, Any]] = ("bash", {})
    signed = True  # a helper's summary for its parent is not signed (see planning.py)

    def _input(self, command: str) -> dict[str, Any]:
        """The shell tool's input: the command, and what else its schema requires (Claude
        Code's Bash asks for a ``description`` too)."""
        name, schema = self.shell
        value: dict[str, Any] = {"command": command}
        props = schema.get("properties") or {}
        if "description" in props:
            value["description"] = f"Run {command[:60]}"
        for key in schema.get("required") or []:
            if key not in value:
                value[key] = minimal(props.get(key, {"type": "string"}))
        return value

    def calls(self, intro: str, commands: list[str]) -> list[dict[str, Any]]:
        """Text, then shell tool calls, one per command."""
        return self.uses(intro, [(self.shell[0], self._input(c)) for c in commands])

    def uses(self, intro: str, calls: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
        """Text, then tool calls (name, input). A model that thinks adaptively says the
        text in its thinking (hidden unless the display shows it), not as a text block."""
        uses = [{"type": "tool_use", "name": name, "input": value} for name, value in calls]
        if self.thinks and self.mode != "enabled":
            return self._think(intro) + uses
        return self._think(intro) + [{"type": "text", "text": intro}] + uses

    def answer(self, note_key: str, text: str, cmd: str = "") -> list[dict[str, Any]]:
        """The final answer, signed as the demo's; with a structured-output format
        (``output_config.format``), JSON that fits its schema, filled from the answer."""
        hidden = say(self.lang, note_key, cmd=cmd)
        schema = json_schema(self.params)
        if schema is not None:
            data = fill(schema, text, cmd)
            return self._think(hidden) + [
                {"type": "text", "text": json.dumps(data, ensure_ascii=False)}
            ]
        signed = f"{text}\n\n{say(self.lang, 'sign')}" if self.signed else text
        return self._think(hidden) + [{"type": "text", "text": signed}]


def json_schema(params: Mapping[str, Any]) -> dict[str, Any] | None:
    """The JSON schema the request's ``output_config.format`` asks the reply to fit
    (structured-outputs docs, read 2026-12-01), or None."""
    config = params.get("output_config")
    fmt = config.get("format") if isinstance(config, Mapping) else None
    if isinstance(fmt, Mapping) and fmt.get("type") == "json_schema":
        schema = fmt.get("schema")
        return dict(schema) if isinstance(schema, Mapping) else None
    return None


def fill(
    schema: Any, text: str, cmd: str = "", name: str = "", root: Any = None, depth: int = 0
) -> Any:
    """A value that fits ``schema``, from what the demo found: the answer's text for a
    string, the first number in it for a number, the command for a field named like
    one. Every property is filled (a strict schema requires them all)."""
    root = schema if root is None else root
    if not isinstance(schema, Mapping):
        return text
    if depth > 6 and "$ref" not in schema:  # deep, or recursive ($ref to itself): the least
        return minimal(schema)
    if depth > 12:  # $ref to $ref, round and round: no value fits
        return None
    if "$ref" in schema and str(schema["$ref"]).startswith("#"):
        target: Any = root  # "#" is the whole schema, "#/$defs/x" a part of it
        for part in filter(None, str(schema["$ref"])[1:].split("/")):
            target = target.get(part, {}) if isinstance(target, Mapping) else {}
        return fill(target, text, cmd, name, root, depth + 1)
    for key in ("anyOf", "oneOf", "allOf"):
        if schema.get(key):
            options = [o for o in schema[key] if isinstance(o, Mapping) and o.get("type") != "null"]
            first = options[0] if options else schema[key][0]
            return fill(first, text, cmd, name, root, depth + 1)
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    kind = schema.get("type", "object" if "properties" in schema else "string")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    numbers = re.findall(r"-?\d+(?:\.\d+)?", text)
    if kind == "object":
        props = schema.get("properties") or {}
        return {k: fill(v, text, cmd, k, root, depth + 1) for k, v in props.items()}
    if kind == "array":
        item = schema.get("items") or {}
        lines = [x.strip(" -*`") for x in text.splitlines() if x.strip(" -*`")]
        values = [fill(item, x, cmd, name, root, depth + 1) for x in lines[:20]] or [
            fill(item, text, cmd, name, root, depth + 1)
        ]
        values += values[-1:] * (int(schema.get("minItems") or 0) - len(values))
        most = schema.get("maxItems")
        return values[: int(most)] if isinstance(most, int) else values
    if kind in ("integer", "number"):
        return _bounded(schema, float(numbers[0]) if numbers else 0.0, kind == "integer")
    if kind == "boolean":
        return True
    if kind == "null":
        return None
    if cmd and any(w in name.lower() for w in ("command", "cmd")):
        return _string(schema, cmd)
    return _string(schema, text)


# A value of each string format the structured-outputs docs list (and the SDK's
# transform_schema keeps: anthropic/lib/_parse/_transform.py, SupportedStringFormats).
_FORMATS = {
    "date": "2026-12-01", "time": "12:00:00Z", "date-time": "2026-12-01T12:00:00Z",
    "duration": "PT1M", "email": "demo@example.com", "hostname": "example.com",
    "uri": "https://example.com/", "ipv4": "192.0.2.1", "ipv6": "2001:db8::1",
    "uuid": "00000000-0000-4000-8000-000000000000",
}  # fmt: skip


def _string(schema: Mapping[str, Any], text: str) -> str:
    """``text`` as a string the schema takes: its format, its pattern, its lengths."""
    value = _FORMATS.get(str(schema.get("format")), text)
    pattern = schema.get("pattern")
    if isinstance(pattern, str):
        try:
            if not re.search(pattern, value):
                import rstr  # a string made to match a regex

                value = next(
                    (
                        w
                        for w in [*text.split(), *re.findall(r"\d+", text)]
                        if re.search(pattern, w)
                    ),
                    None,
                ) or rstr.xeger(pattern)
        except (re.error, ValueError, OverflowError):
            pass  # a pattern Python cannot read: the API's regex is not Python's
    least, most = schema.get("minLength"), schema.get("maxLength")
    if isinstance(least, int) and len(value) < least:
        value += "." * (least - len(value))
    return value[:most] if isinstance(most, int) else value


def _bounded(schema: Mapping[str, Any], number: float, integer: bool) -> int | float:
    """``number`` moved inside the schema's bounds (and to a multiple of ``multipleOf``)."""
    step = 1 if integer else 0.5
    low = schema.get("minimum", schema.get("exclusiveMinimum"))
    high = schema.get("maximum", schema.get("exclusiveMaximum"))
    if isinstance(low, (int, float)):
        number = max(number, low + (step if "minimum" not in schema else 0))
    if isinstance(high, (int, float)):
        number = min(number, high - (step if "maximum" not in schema else 0))
    multiple = schema.get("multipleOf")
    if isinstance(multiple, (int, float)) and multiple > 0:
        number = math.ceil(number / multiple) * multiple
    return int(number) if integer else float(number)
