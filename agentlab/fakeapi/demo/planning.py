"""The demo model plans with a ``todo`` tool and delegates with a ``task`` tool.

Like the rest of the demo, each reply is a pure function of the request.

**Planning.** Offered a ``todo`` tool (input ``id``, ``text``, ``status``, as
``agentlab.tools.todo.todo_tool`` defines it) and a task of several steps ("Plan
first, then: list the files, count the lines of agent.py, and report the largest
file"), the demo splits the task into pieces that each have a row in the intents
table, and then, one reply at a time:

1. writes the list: one ``todo`` call per piece, all in one reply;
2. marks the first item ``in_progress``, and does it with bash;
3. forgets the list for a while: it does the next pieces with bash alone, so the
   harness's reminder comes after the third round without a ``todo`` call
   (``REMIND_AFTER``). When three bash rounds or more are left after the first
   item, it first finishes that item properly (completed, the next in progress);
   with fewer than three bash rounds in all it never forgets;
4. seeing the reminder (a text block after the ``tool_result`` blocks), brings the
   list up to date at once, and keeps it so;
5. once every item is completed, reports what each piece found.

A todo tool that takes the whole list in each call (Claude Code's TodoWrite has
that shape) gets the same plan, the whole list each time (``_List``).

The list is read back from the ``todo`` calls in the history (a refused call
changes nothing); a refused call stops the demo from using the list again.

**Delegating.** Offered a ``task`` tool (input ``prompt``) and asked to use a
helper ("Use a helper to find out which file defines main, then tell me"), the
demo calls ``task`` with a self-contained prompt: the work, and a request for a
short summary. The helper (a fresh history whose only message is that prompt)
is the demo too: it does the work with bash and answers with the summary,
unsigned, for its parent. The parent answers from the ``tool_result``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from agentlab.fakeapi.demo.intents import Plan, Step, plan, progress
from agentlab.fakeapi.demo.strings import STRINGS, say
from agentlab.fakeapi.demo.words import Task
from agentlab.history import as_dict, blocks
from agentlab.tools.todo import update_items

__all__ = [
    "MAX_PIECES",
    "delegates",
    "helper_prompt",
    "is_helper",
    "offered",
    "offers",
    "pieces",
    "reply",
]

MAX_PIECES = 8  # the demo's plans stay short
MAX_CHUNKS = 3 * MAX_PIECES  # the pieces of a task looked at, at most
# Cues of a task that asks for a plan (a piece holding one is not work to do).
PLAN_CUES: tuple[str, ...] = (
    "plan",
    "planning",
    "todo list",
    "to-do list",
    "todo tool",
    "your todo",
    "step by step",
)
PLAN_CUES += ("计划", "规划", "待办", "清单", "一步一步")
# Cues of a task that asks for a helper: English words, Chinese phrases.
HELPER_CUES: tuple[str, ...] = (
    "helper",
    "a helper",
    "subagent",
    "subagents",
    "sub-agent",
    "delegate",
    "investigate",
)
HELPER_CUES += ("助手", "帮手", "子代理", "子智能体", "委托", "调查")
# The pieces of a task: split at punctuation and "then" (and at "and" when each side
# is work the demo can do). A period ends a piece only before a space (not in agent.py).
_SPLIT = re.compile(
    r"[,;:!?，；：、。！？\n]|\.(?:\s|$)|\bthen\b|然后|接着"
    r"|(?<![\w.])\(?\d{1,2}[.)](?=\s|[^\x00-\x7f])",  # numbered items: "1) ...", "2. ..."
    re.I,
)
_AND = re.compile(r"\band\b|以及|并且", re.I)
_LEAD = re.compile(r"^(?:and|also|finally|first|next|so|please|和|并|先|再|最后)\s*", re.I)
# What a helper's work ends at: the parent's own part of the task.
_PARENT_PART = re.compile(
    r"[,，]?\s*(?:and then|then|and)?\s*(?:tell|report|show|give|let)\b.*$|"
    r"[,，]?\s*(?:然后|再|并)?(?:告诉|报告|回复|汇报)我?.*$",
    re.I | re.S,
)
_HELPER_LEAD = re.compile(
    r"^.*?(?:helper|subagent|sub-agent|delegate)s?\b\s*(?:to|:)?\s*|"
    r"^.*?(?:助手|帮手|子代理|子智能体|委托)(?:去|来)?\s*",
    re.I | re.S,
)


def offered(params: Mapping[str, Any], name: str, *inputs: str) -> dict[str, Any] | None:
    """The request's tool called ``name`` (in any case: Claude Code says "Task") whose
    input has these fields, as its definition; None if it offers none."""
    for tl in as_dict(list(params.get("tools") or [])):
        if isinstance(tl, dict) and str(tl.get("name", "")).lower() == name:
            schema = tl.get("input_schema") or {}
            props = schema.get("properties") if isinstance(schema, dict) else None
            if isinstance(props, dict) and all(k in props for k in inputs):
                return tl
    return None


def offers(params: Mapping[str, Any], name: str, *inputs: str) -> bool:
    """Does the request offer a tool called ``name`` whose input has these fields?"""
    return offered(params, name, *inputs) is not None


def _planning(task: Task) -> bool:
    return task.has(*PLAN_CUES)


def pieces(task: Task, listed: str | None = None) -> list[tuple[str, Plan]]:
    """The task's pieces that the demo can do, each with its plan, in order."""
    found: list[tuple[str, Plan]] = []
    chunks = [c for c in (c.strip() for c in _SPLIT.split(task.text)) if c]
    for chunk in chunks[:MAX_CHUNKS]:  # a long text is read no further (time stays bounded)
        part = _LEAD.sub("", chunk).strip()
        if not part or _planning(Task(part)):
            continue
        parts = [_LEAD.sub("", p.strip()).strip() for p in _AND.split(part, MAX_PIECES)]
        parts = [p for p in parts if p and not _planning(Task(p))]
        plans = [(p, plan(Task(p), listed)) for p in parts]
        if len(plans) > 1 and all(pl is not None and pl.steps for _, pl in plans):
            found += [(p, pl) for p, pl in plans if pl is not None]
        elif (whole := plan(Task(part), listed)) is not None and whole.steps:
            found.append((part, whole))
    return found[:MAX_PIECES]


def delegates(task: Task) -> bool:
    """Does the task ask for a helper?"""
    return task.has(*HELPER_CUES)


def helper_prompt(task: Task, lang: str) -> str:
    """A self-contained prompt for the helper: the work, and the summary to send back."""
    work = _HELPER_LEAD.sub("", task.text.strip(), count=1)
    work = _PARENT_PART.sub("", work).strip(" .,;:!?。，；：！？") or task.text.strip()
    return say(lang, "task.prompt", work=work[:1].upper() + work[1:])


def is_helper(task: Task) -> bool:
    """Is this the demo's own helper prompt (its answer goes to a parent, unsigned)?"""
    ends = [table["task.prompt"].split("{work}")[-1].strip() for table in STRINGS.values()]
    return any(end and task.text.rstrip().endswith(end) for end in ends)


def _results(messages: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {
        str(b.get("tool_use_id")): b
        for m in messages
        if m.get("role") == "user"
        for b in blocks(m)
        if b.get("type") == "tool_result"
    }


def _calls(messages: list[dict[str, Any]], name: str) -> list[list[tuple[dict[str, Any], Any]]]:
    """Each assistant turn's calls of tool ``name``: (input, its tool_result or None)."""
    results = _results(messages)
    turns = []
    for m in messages:
        if m.get("role") != "assistant":
            continue
        uses = [b for b in blocks(m) if b.get("type") == "tool_use" and b.get("name") == name]
        if uses:
            turns.append(
                [(dict(b.get("input") or {}), results.get(str(b.get("id")))) for b in uses]
            )
    return turns


def _text(result: Any) -> str:
    content = result.get("content") if isinstance(result, Mapping) else None
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return str(content or "")


def _reminded(message: dict[str, Any]) -> bool:
    """Does this user message of tool results end with a note from the harness (a text
    block after the ``tool_result`` blocks), such as the todo reminder? Any wording
    counts: a student's own reminder need not use agentlab's."""
    bs = blocks(message)
    if message.get("role") != "user" or not any(b.get("type") == "tool_result" for b in bs):
        return False
    return any(b.get("type") == "text" and str(b.get("text", "")).strip() for b in bs)


def reply(
    params: Mapping[str, Any],
    messages: list[dict[str, Any]],
    start: int,
    task: Task,
    lang: str,
    shape: Any,
    listed: str | None,
    turns: Any,
    has_shell: bool,
) -> list[dict[str, Any]] | None:
    """The reply when the task asks for a helper or a plan and the tool is offered;
    None otherwise (the demo then does the task as usual). ``turns(messages, name)``
    reads the shell turns (the demo's ``_turns``)."""
    helper = offered(params, "task", "prompt")
    if helper is not None and delegates(task):
        return _delegate(messages[start + 1 :], task, lang, shape, helper)
    todo = offered(params, "todo", "text", "status")
    whole = None if todo is not None else _list_tool(params)
    if not has_shell or (todo is None and whole is None):
        return None
    work = pieces(task, listed)
    if len(work) < 2 and not (work and _planning(task)):
        return None
    texts = [_item(text, lang) for text, _ in work]
    keeper = _Items(todo, messages, start, texts) if todo else _List(whole, messages, start, texts)
    shell_turns = turns(messages[start + 1 :], shape.shell[0])
    return _plan(messages[start + 1 :], work, texts, shell_turns, lang, shape, keeper)


def _delegate(
    after: list[dict[str, Any]], task: Task, lang: str, shape: Any, tool: dict[str, Any]
) -> list[Any]:
    name = str(tool["name"])
    calls = [c for turn in _calls(after, name) for c in turn]
    if not calls:
        prompt = helper_prompt(task, lang)
        return shape.uses(say(lang, "task.call"), [(name, _input(tool, prompt))])
    _, result = calls[-1]
    summary = _text(result).strip()
    if result is None or result.get("is_error") or not summary or summary == "(no summary)":
        return shape.answer("think.failed", say(lang, "task.failed", out=summary or "-"), "task")
    return shape.answer("think.answer", say(lang, "task.answer", summary=summary), "task")


Call = tuple[str, dict[str, Any]]


class _Items:
    """The plan kept with agentlab's ``todo`` tool: one call adds or changes one item.

    The list as the harness holds it is every todo call in the history, replayed
    (a refused call changes nothing); the task's items are those added after it."""

    def __init__(self, tool: dict[str, Any], messages: list[Any], start: int, texts: list[str]):
        self.name, self.texts = str(tool["name"]), texts
        items: list[dict[str, str]] = []
        self.ids: list[str] = []  # the ids of the items added for this task
        self.broken = False  # a todo call of this task was refused: stop using the list
        before = len(_calls(messages[: start + 1], self.name))
        for n, turn in enumerate(_calls(messages, self.name)):
            for update, result in turn:
                if result is None or result.get("is_error"):
                    self.broken = self.broken or n >= before
                    continue
                try:
                    new = update_items(items, update)
                except ValueError:
                    continue
                if n >= before and len(new) > len(items):
                    self.ids.append(new[-1]["id"])
                items = new
        status = {i["id"]: i["status"] for i in items}
        self.status = [status.get(i, "") for i in self.ids] + [""] * (len(texts) - len(self.ids))
        # written when every item is on the list (one a reply, with parallel calls disabled)
        self.written = len(self.ids) >= len(texts)

    def write(self) -> list[Call]:
        return [(self.name, {"text": t}) for t in self.texts[len(self.ids) :]]

    def update(self, changes: list[tuple[int, str]]) -> list[Call]:
        return [
            (self.name, {"id": self.ids[k], "status": st}) for k, st in changes if self.status[k]
        ]


class _List:
    """The plan kept with a tool that takes the whole list in each call (an array of
    items, each with a ``status``, as Claude Code's TodoWrite): its latest call is the
    list; each item's other required fields get the item's text."""

    def __init__(self, found: Any, messages: list[Any], start: int, texts: list[str]):
        tool, self.key, self.text_key = found
        self.name, self.texts = str(tool["name"]), texts
        schema = tool["input_schema"]["properties"][self.key]["items"]
        self.required = [
            k for k in schema.get("required") or [] if k not in (self.text_key, "status")
        ]
        calls = [c for turn in _calls(messages[start + 1 :], self.name) for c in turn]
        self.broken = any(r is None or r.get("is_error") for _, r in calls)
        good = [value for value, r in calls if r is not None and not r.get("is_error")]
        self.written = bool(good)
        items = good[-1].get(self.key) if good else []
        items = [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []
        by_text = {str(i.get(self.text_key)): str(i.get("status", "")) for i in items}
        self.status = [by_text.get(t, "") for t in texts]

    def _call(self, status: list[str]) -> list[Call]:
        items = []
        for k, (text, st) in enumerate(zip(self.texts, status, strict=True)):
            item = {self.text_key: text, "status": st or "pending"}
            item.update({key: str(k + 1) if key == "id" else text for key in self.required})
            items.append(item)
        return [(self.name, {self.key: items})]

    def write(self) -> list[Call]:
        return self._call(["pending"] * len(self.texts))

    def update(self, changes: list[tuple[int, str]]) -> list[Call]:
        status = list(self.status)
        for k, st in changes:
            status[k] = st
        return self._call(status) if changes else []


def _list_tool(params: Mapping[str, Any]) -> tuple[dict[str, Any], str, str] | None:
    """A todo tool that takes the whole list: (its definition, the list's field, the
    items' text field), or None."""
    for tl in as_dict(list(params.get("tools") or [])):
        if not isinstance(tl, dict) or "todo" not in str(tl.get("name", "")).lower():
            continue
        props = (tl.get("input_schema") or {}).get("properties") or {}
        for key, value in props.items() if isinstance(props, dict) else ():
            items = value.get("items") if isinstance(value, dict) else None
            fields = items.get("properties") if isinstance(items, dict) else None
            if isinstance(fields, dict) and "status" in fields:
                text = next((f for f in ("content", "text", "title", "task") if f in fields), None)
                if text:
                    return tl, key, text
    return None


def _plan(
    after: list[dict[str, Any]],
    work: list[tuple[str, Plan]],
    texts: list[str],
    shell_turns: list[list[Step]],
    lang: str,
    shape: Any,
    keeper: _Items | _List,
) -> list[dict[str, Any]]:
    if not keeper.written and not keeper.broken:
        return shape.uses(say(lang, "plan.write", n=len(texts)), keeper.write())

    # How far the work is: each piece's bash turns, in order.
    answers: list[str] = []
    pos, current, move = 0, None, None
    for k, (_, p) in enumerate(work):
        used = 0
        while True:
            step = progress(p, shell_turns[pos : pos + used], lang)
            if not step.commands:
                answers.append(step.text)
                pos += used
                break
            if pos + used >= len(shell_turns):
                current, move = k, step
                break
            used += 1
        if current is not None:
            break

    done, status = len(answers), keeper.status
    changes = [(k, "completed") for k in range(done) if status[k] != "completed"]
    if current is not None and status[current] != "in_progress":
        changes.append((current, "in_progress"))
    updates = [] if keeper.broken else keeper.update(changes)

    reminded_now = bool(after) and _reminded(after[-1])
    # The demo forgets the list (so the reminder fires) once, when enough rounds are left.
    rounds = [len(p.steps) for _, p in work]
    forget_from = 1 if sum(rounds[1:]) >= 3 else 0
    first = status[0] or "pending"
    started = first == "completed" if forget_from else first != "pending"
    lazy = sum(rounds) >= 3 and started and not any(_reminded(m) for m in after)

    if updates and (reminded_now or not lazy or current is None):
        if reminded_now:
            intro = say(lang, "plan.reminded")
        elif current is None:
            intro = say(lang, "plan.finish")
        elif done:
            intro = say(lang, "plan.next", item=texts[current])
        else:
            intro = say(lang, "plan.start", item=texts[current])
        return shape.uses(intro, updates)
    if current is not None and move is not None:
        return shape.calls(say(lang, "plan.doing", item=texts[current]), move.commands)
    report = "\n\n".join(f"{k}. {_short(a)}" for k, a in enumerate(answers, 1))
    last = shell_turns[-1][-1].ran if shell_turns and shell_turns[-1] else ""
    said = "plan.report.unkept" if keeper.broken else "plan.report"  # never claim a stale list
    return shape.answer("think.answer", say(lang, said, n=done, out=report), last)


def _input(tool: dict[str, Any], prompt: str) -> dict[str, Any]:
    """The task tool's input: the prompt, a short description if the schema has one,
    and the smallest value of each other field it requires."""
    from agentlab.fakeapi.demo import minimal  # the demo's own helper (imported late: no cycle)

    schema = tool.get("input_schema") or {}
    props = schema.get("properties") or {}
    value: dict[str, Any] = {"prompt": prompt}
    if "description" in props:
        value["description"] = " ".join(prompt.split()[:5])[:60]
    for key in schema.get("required") or []:
        value.setdefault(key, minimal(props.get(key, {"type": "string"})))
    return value


REPORT_LINES = 8  # a report shows at most this many lines of each output


def _short(answer: str) -> str:
    """An answer for the report: each code block cut to ``REPORT_LINES`` lines."""
    parts = answer.split("```")
    for i in range(1, len(parts), 2):  # the insides of the code blocks
        lines = parts[i].strip("\n").split("\n")
        if len(lines) > REPORT_LINES:
            parts[i] = "\n" + "\n".join(lines[:REPORT_LINES] + ["..."]) + "\n"
    return "```".join(parts)


def _item(text: str, lang: str) -> str:
    text = text.strip(" .,;:!?。，；：！？")
    return text[:1].upper() + text[1:] if lang == "en" else text
