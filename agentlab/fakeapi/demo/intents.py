"""The demo model's table: what a task looks like -> what to run -> how to answer.

Each row of ``INTENTS`` is an ``Intent``: its cue patterns, the patterns
that rule it out, and a ``plan`` function that turns the task into bash
commands and the sentence that answers it. The first row whose pattern
matches (and whose plan applies) wins; no row means "cannot".

A pattern is a string: ``+`` joins groups that must all be there, ``|``
separates alternatives within a group. ``how many|count + line|lines``
needs one of "how many"/"count" and one of "line"/"lines". English cues are
whole words (or phrases); Chinese cues are found in the text. Two special
cues: ``<file>`` (the task names a file) and ``<ext>`` (a kind of file,
such as ".py" or "Python files").

Only the ``create`` row writes anything, and it never overwrites: the shell
refuses (``set -o noclobber``) and the demo writes a fresh name instead.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field

from agentlab.fakeapi.demo.strings import say
from agentlab.fakeapi.demo.words import Task

q = shlex.quote
HIDDEN = "-not -path '*/.*'"  # skip hidden folders such as .git
SHOWN_LINES = 20  # a search shows at most this many lines


@dataclass
class Step:
    """What one tool turn gave back: the command asked for, what ran, its output."""

    asked: str
    ran: str
    out: str
    code: int


@dataclass
class Plan:
    """How to do one task: steps of commands (each step's commands run in
    parallel), an alternative for the rest if a step fails, and the answer."""

    intent: str
    steps: list[list[str]]
    answer: Callable[[str, list[Step]], str]
    intro: str = "intro.bash"  # key of what the demo says before the first call
    intro_values: dict[str, str] = field(default_factory=dict)
    # Alternatives for the rest, tried in order, each when the one before failed,
    # with the values its note names (``fallback_note``, "{cmd} failed ...").
    fallbacks: list[list[list[str]]] = field(default_factory=list)
    fallback_values: list[dict[str, str]] = field(default_factory=list)
    fallback_note: str = "fallback"
    fallback_if: str = ""  # take a fallback only when the failed output says this
    ok_codes: tuple[int, ...] = (0,)


@dataclass
class Move:
    """What a plan does next: run ``commands`` (saying ``text`` first), or, with no
    commands, answer ``text`` (``note``: the key of its hidden thinking)."""

    text: str
    commands: list[str] = field(default_factory=list)
    note: str = "think.answer"
    cmd: str = ""  # the command the answer rests on


def progress(p: Plan, turns: list[list[Step]], lang: str) -> Move:
    """The next move of plan ``p`` after these tool turns: the next step, a fallback
    when a step failed, or the answer once every step is done (or one failed)."""
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
                return Move(note, sequence[done])
            continue
        why = bad.out.strip().splitlines()[-1] if bad.out.strip() else f"exit code {bad.code}"
        why = why[1:-1] if why[:1] + why[-1:] in ("()", "（）") else why  # said in brackets already
        return Move(say(lang, "failed", cmd=bad.ran, why=why), [], "think.failed", bad.ran)
    steps = [s for turn in turns for s in turn]
    edited = next((s for s in steps if s.ran != s.asked), None)
    if edited is not None:
        text = say(lang, "edited", asked=edited.asked, ran=edited.ran, out=edited.out)
        return Move(text, [], "think.answer", edited.ran)
    if done < len(sequence):
        if done:
            intro = say(lang, "intro.check")
        else:
            values = dict(p.intro_values)
            if values.get("where") == ".":
                values["where"] = say(lang, "here")
            intro = say(lang, p.intro, **values)
        return Move(intro, sequence[done])
    return Move(p.answer(lang, steps), [], "think.answer", steps[-1].ran if steps else "")


@dataclass(frozen=True)
class Intent:
    name: str
    patterns: tuple[str, ...]
    plan: Callable[[Task, str | None], Plan | None]
    unless: tuple[str, ...] = ()
    typos: bool = True  # forgive one-letter typos in the cues
    writes: bool = False


def matches(task: Task, pattern: str, typos: bool = True) -> bool:
    """Does the task match ``pattern`` (groups joined by +, alternatives by |)?"""
    for group in pattern.split("+"):
        cues = [c.strip() for c in group.split("|")]
        special = ("<file>" in cues and task.files) or ("<ext>" in cues and task.extension)
        if not special and not task.has(*cues, typos=typos):
            return False
    return True


def _number(out: str) -> int | None:
    m = re.match(r"\s*(\d+)", out)
    return int(m.group(1)) if m else None


def _last(steps: list[Step]) -> Step:
    return steps[-1]


def _kind(lang: str, ext: str | None) -> str:
    if ext == "py":
        return say(lang, "kind.py")
    return f".{ext}" + (" " if lang == "zh" else "") if ext else ""


# ---------------------------------------------------------------------------
# Plans: one function per row
# ---------------------------------------------------------------------------

_STOP = {"the", "a", "an", "all", "any", "word", "words", "string", "text", "me", "lines", "line"}
_STOP |= {"files", "file", "of", "in", "here", "this", "these", "every", "each", "for", "that"}


def _search_word(task: Task) -> tuple[str, bool] | None:
    """What to search for, and whether its case matters (quoted text only)."""
    if task.quoted:
        return task.quoted, True
    if task.has("todo", "todos", "to-do", "to-dos"):
        return "TODO", False
    if task.has("fixme", "fixmes"):
        return "FIXME", False
    cues = {"for", "containing", "contain", "contains", "mention", "mentions", "mentioning"}
    cues |= {"grep", "search", "word"}
    for i, w in enumerate(task.words):
        if w in cues:
            for target in task.words[i + 1 :]:
                if target not in _STOP and target not in cues:
                    return target, False
            break
    for cue in ("包含", "提到", "搜索", "查找", "搜"):
        rest = task.rest_after(cue)
        m = re.match(r"[\s了过的]*([\w.-]+)", rest or "", re.ASCII)
        if m:
            return m.group(1), False
    return None


def plan_search(task: Task, _listed: str | None) -> Plan | None:
    found = _search_word(task)
    if found is None:
        return None
    word, exact = found
    by_file = task.has(
        "which files", "which file", "what files", "files contain", "files mention",
        "files containing", "files mentioning", "哪些文件", "哪个文件",
    )  # fmt: skip
    count = task.has("how many", "count", "number of", "多少", "几个", "几次")
    # Case matters for quoted text and for TODO / FIXME, which are written in capitals.
    case = "" if exact or word.isupper() else "i"
    end = "-- " if word.startswith("-") else ""
    named = [f for f in task.files if f != word and not f.startswith("-")]
    if named:  # "does create_table.sql contain TODO?": only the files named
        flags, where = ("-l" if by_file else "-n") + case, " ".join(q(f) for f in named)
    else:
        flags, where = ("-rl" if by_file else "-rn") + case, "."
    if count:  # occurrences (-o), or files (-l)
        flags = flags.replace("n", "") + ("" if by_file else "o")
    if not named:
        flags += " --exclude-dir=.git --exclude-dir=.ipynb_checkpoints"
    grep = f"grep {flags} {end}{q(word)} {where}"
    cmd = f"{grep} | wc -l" if count else f"{grep} | head -n {SHOWN_LINES}"

    def counted(lang: str, steps: list[Step]) -> str:
        s = _last(steps)
        key = "search_files.count" if by_file else "search.count"
        return say(lang, key, n=_number(s.out) or 0, word=f"`{word}`", cmd=s.ran)

    if count:
        return Plan("search", [[cmd]], counted, ok_codes=(0, 1))

    def answer(lang: str, steps: list[Step]) -> str:
        s = _last(steps)
        lines = s.out.splitlines()
        shown = f"`{word}`"
        if not lines:
            return say(lang, "search.none", word=shown, cmd=s.ran)
        key = "search_files" if by_file else "search"
        if len(lines) >= SHOWN_LINES and not by_file:
            return say(lang, "search.many", n=len(lines), word=shown, cmd=s.ran, out=s.out)
        return say(lang, key, n=len(lines), word=shown, cmd=s.ran, out=s.out)

    return Plan("search", [[cmd]], answer, ok_codes=(0, 1))


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NOT_NAMES = _STOP | {"which", "what", "where", "is", "are", "was", "defines", "define", "defined"}
_NOT_NAMES |= {"function", "class", "method", "variable", "name", "find", "out", "tell", "then"}
_NOT_NAMES |= {"bash", "use", "helper", "reply", "summary", "short"}


def _defined_name(task: Task) -> str | None:
    """The name whose definition is asked for: "which file defines main", "where is
    parse defined", "the definition of Loop", "哪个文件定义了 main", "main 在哪里定义"."""
    if task.quoted and _IDENT.fullmatch(task.quoted):
        return task.quoted
    for cue in ("defines", "define", "defining", "definition of", "declares"):
        rest = task.rest_after(cue)
        for word in _IDENT.findall(rest or ""):
            if word.lower() not in _NOT_NAMES:
                return word
    for pattern in (
        r"\b([A-Za-z_]\w*) (?:is|are|was|gets|get) (?:defined|declared)\b",  # "main is defined"
        r"\b(?:is|are|was) ([A-Za-z_]\w*) (?:defined|declared)\b",  # "where is main defined"
    ):
        m = re.search(pattern, task.text, re.ASCII)
        if m and m.group(1).lower() not in _NOT_NAMES:
            return m.group(1)
    if task.language == "zh":  # the name after 定义, else the first that is not a folder
        after = _IDENT.findall(task.rest_after("定义了", "定义") or "")
        if after and after[0].lower() not in _NOT_NAMES:
            return after[0]
        names = [
            m.group() for m in _IDENT.finditer(task.text) if task.text[m.end() : m.end() + 1] != "/"
        ]
        names = [w for w in names if w.lower() not in _NOT_NAMES]
        return names[0] if names else None
    return None


def plan_defines(task: Task, _listed: str | None) -> Plan | None:
    name = _defined_name(task)
    if name is None:
        return None
    where = " ".join(q(f) for f in task.files) or q(_folder(task) or ".")
    pattern = f"^[[:space:]]*((async[[:space:]]+)?def|class|function|func|fn)[[:space:]]+{name}\\b"
    skip = "--exclude-dir=.git --exclude-dir=.ipynb_checkpoints"
    cmd = f"grep -rnE {skip} {q(pattern)} {where} | head -n {SHOWN_LINES}"

    def answer(lang: str, steps: list[Step]) -> str:
        s = _last(steps)
        lines = s.out.splitlines()
        if not lines:
            return say(lang, "defines.none", name=name, cmd=s.ran)
        file, _, rest = lines[0].partition(":")
        line, _, code = rest.partition(":")
        if len(lines) == 1 and line.isdigit():
            file = file.removeprefix("./")
            return say(
                lang, "defines", name=name, file=file, line=line, code=code.strip(), cmd=s.ran
            )
        return say(lang, "defines.many", name=name, n=len(lines), cmd=s.ran, out=s.out)

    return Plan("defines", [[cmd]], answer, ok_codes=(0, 1))


_SUPERLATIVES = {
    "largest": ("largest", "biggest", "最大"),
    "smallest": ("smallest", "tiniest", "最小"),
    "longest": ("longest", "最长"),
    "shortest": ("shortest", "最短"),
    "newest": ("newest", "latest", "most recent", "most recently", "最新", "最近", "最后修改"),
    "oldest": ("oldest", "最旧", "最早", "最老"),
}


# Words after "the ... folder" or a final "in ..." that do not name a folder.
_NOT_FOLDERS = {"current", "this", "that", "same", "whole", "entire", "project", "working"}
_NOT_FOLDERS |= {"parent", "home", "root", "top", "here", "there", "it", "total", "all", "them"}
_NOT_FOLDERS |= {"those", "these", "size", "order", "folder", "directory", "dir", "bytes", "lines"}
_NOT_FOLDERS |= {"use", "english", "chinese", "detail", "short", "full", "words", "one", "new"}


def _folder(task: Task) -> str | None:
    """The folder a task names ("in the folder sub", "in sub/", "在 sub 目录")."""
    for cue in ("in the folder", "in folder", "in the directory", "in directory", "in the dir"):
        rest = task.rest_after(cue)
        if rest:
            m = re.match(r"\s*([\w./-]+)", rest, re.ASCII)
            if m:
                return m.group(1).rstrip(".") or None
    m = re.search(r"\b(?:in|of) ([\w.-]+/)(?!\w)", task.text, re.ASCII)
    if m:
        return m.group(1).rstrip("/")
    # "the sub folder", "the sub directory"
    m = re.search(r"\bthe ([\w-]+) (?:folder|directory|dir)\b", task.text, re.ASCII | re.I)
    if m and m.group(1).lower() not in _NOT_FOLDERS:
        return m.group(1)
    # "... in sub?" at the end of the task
    m = re.search(r"\b(?:in|inside) ([\w-]+)\s*[?.!]*\s*$", task.text, re.ASCII | re.I)
    if m and m.group(1).lower() not in _NOT_FOLDERS:
        return m.group(1)
    m = re.search(r"([\w.-]+)\s*(?:目录|文件夹)", task.text, re.ASCII)
    if m is None and task.language == "zh":  # "shop/ 里": a name written with its slash
        m = re.search(r"(?<![\w./])([\w.-]+)/(?![\w.])", task.text, re.ASCII)
    return m.group(1) if m else None


def plan_followup(task: Task, listed: str | None) -> Plan | None:
    which = next((k for k, cues in _SUPERLATIVES.items() if task.has(*cues)), None)
    if which is None:
        return None
    where = _folder(task) or listed
    if where is None and not task.has("file", "files", "文件"):
        # "Which of those is the longest?" with no listing in the history.
        return Plan("cannot", [], lambda lang, _steps: say(lang, "which_files"))
    where = where or "."
    if which in ("longest", "shortest"):
        pick = "tail" if which == "longest" else "head"
        cmd = (
            f"find {q(where)} -maxdepth 1 -type f ! -name '.*' -exec wc -l {{}} + "
            f"| grep -v ' total$' | sort -n | {pick} -n 1"
        )
    else:
        flags = {"largest": "-pS", "smallest": "-pSr", "newest": "-pt", "oldest": "-ptr"}[which]
        cmd = f"ls {flags} {q(where)} | grep -v / | head -n 1"

    def answer(lang: str, steps: list[Step]) -> str:
        s = _last(steps)
        place = say(lang, "here") if where == "." else where
        out = s.out.strip()
        if not out:
            return say(lang, "no_files", where=place, cmd=s.ran)
        if which in ("longest", "shortest"):
            n = _number(out) or 0
            name = out.split(None, 1)[-1]
            name = name.removeprefix(f"{where}/")
            return say(lang, which, n=n, where=place, name=name, cmd=s.ran)
        return say(lang, which, where=place, name=out.splitlines()[0], cmd=s.ran)

    if listed is None or _folder(task):  # nothing listed before, or a folder named now
        return Plan(which, [[cmd]], answer)
    return Plan(which, [[cmd]], answer, "intro.followup", {"where": where, "cmd": cmd})


def plan_lines(task: Task, _listed: str | None) -> Plan:
    names = [f for f in task.files if not f.startswith((".", "-"))]
    if len(names) > 1:
        cmd = "wc -l " + " ".join(q(n) for n in names)

        def several(lang: str, steps: list[Step]) -> str:
            s = _last(steps)
            return say(lang, "lines_files", cmd=s.ran, out=s.out)

        return Plan("lines", [[cmd]], several)
    if names:
        name = names[0]
        cmd = f"wc -l < {q(name)}"

        def one(lang: str, steps: list[Step]) -> str:
            s = _last(steps)
            return say(lang, "lines_file", n=_number(s.out) or 0, name=name, cmd=s.ran)

        return Plan("lines", [[cmd]], one)
    ext = task.extension or ("py" if task.has("code", "代码") else None)
    which = f"-name {q('*.' + ext)}" if ext else "-type f"
    cmd = f"find . {which} {HIDDEN} -exec cat {{}} + | wc -l"

    def total(lang: str, steps: list[Step]) -> str:
        s = _last(steps)
        return say(lang, "lines_all", n=_number(s.out) or 0, kind=_kind(lang, ext), cmd=s.ran)

    return Plan("lines", [[cmd]], total)


_FOLDER_WORDS: tuple[str, ...] = ("folder", "folders", "directory", "directories", "dirs")
_FOLDER_WORDS += ("subfolders", "subdirectories", "文件夹", "目录")


def plan_count_folders(task: Task, _listed: str | None) -> Plan:
    cmd = f"find . -mindepth 1 -type d {HIDDEN} | wc -l"

    def answer(lang: str, steps: list[Step]) -> str:
        s = _last(steps)
        return say(lang, "folders", n=_number(s.out) or 0, cmd=s.ran)

    return Plan("count_folders", [[cmd]], answer)


def plan_count_files(task: Task, _listed: str | None) -> Plan:
    ext = task.extension
    if not ext and task.has(*_FOLDER_WORDS):  # "how many directories and files"
        folders = f"find . -mindepth 1 -type d {HIDDEN} | wc -l"
        files = f"find . -type f {HIDDEN} | wc -l"

        def both(lang: str, steps: list[Step]) -> str:
            n_folders, n_files = (_number(s.out) or 0 for s in steps[-2:])
            files_n, folders_n = (
                say(lang, "n_files", n=n_files),
                say(lang, "n_folders", n=n_folders),
            )
            cmd = f"{folders}; {files}"
            return say(lang, "files_folders", files=files_n, folders=folders_n, cmd=cmd)

        return Plan("count_files", [[folders, files]], both)
    tests = task.has("test", "tests", "测试")  # "count the test files": names with "test"
    which = f"-name {q('*.' + ext)}" if ext else "-type f"
    which += f" -name {q('*test*')}" if tests else ""
    cmd = f"find . {which} {HIDDEN} | wc -l"

    def answer(lang: str, steps: list[Step]) -> str:
        s = _last(steps)
        n = _number(s.out) or 0
        if tests:
            return say(lang, "test_files", n=n, cmd=s.ran)
        if ext:
            return say(lang, "ext_files", n=n, kind=_kind(lang, ext), cmd=s.ran)
        return say(lang, "files", n=n, cmd=s.ran)

    return Plan("count_files", [[cmd]], answer)


def _df(lang: str, steps: list[Step]) -> str:
    """Free space from ``df -h .``: the Avail and Size columns of its last line."""
    s = _last(steps)
    lines = s.out.splitlines()
    fields = lines[-1].split() if len(lines) >= 2 else []
    if len(fields) >= 4 and s.ran.startswith("df"):
        return say(lang, "disk_free", avail=fields[3], size=fields[1], cmd=s.ran)
    return say(lang, "disk_raw", cmd=s.ran, out=s.out)


def plan_disk_free(task: Task, _listed: str | None) -> Plan:
    return Plan("disk_free", [["df -hP ."]], _df)


def plan_disk_used(task: Task, _listed: str | None) -> Plan:
    where = _folder(task)

    def answer(lang: str, steps: list[Step]) -> str:
        s = _last(steps)
        if s.ran.startswith("du") and s.out.split():
            if where:
                return say(lang, "disk_used_in", where=where, size=s.out.split()[0], cmd=s.ran)
            return say(lang, "disk_used", size=s.out.split()[0], cmd=s.ran)
        return say(lang, "disk_raw", cmd=s.ran, out=s.out)

    if where:  # no fallback: df would answer about the disk, not the folder
        return Plan("disk_used", [[f"du -sh {q(where)}"]], answer)
    return Plan("disk_used", [["du -sh ."]], answer, fallbacks=[[["df -hP ."]]])


def plan_cpus(task: Task, _listed: str | None) -> Plan:
    def answer(lang: str, steps: list[Step]) -> str:
        s = _last(steps)
        return say(lang, "cpus", n=_number(s.out) or 0, cmd=s.ran)

    return Plan("cpus", [["nproc"]], answer)


def plan_date_system(task: Task, _listed: str | None) -> Plan:
    def answer(lang: str, steps: list[Step]) -> str:
        first, last = steps[0], steps[-1]
        return say(lang, "date_system", first=first.out.strip(), out=last.out)

    return Plan("date_system", [["date", "uname -a"]], answer, "intro.both")


def plan_date(task: Task, _listed: str | None) -> Plan:
    def answer(lang: str, steps: list[Step]) -> str:
        s = _last(steps)
        return say(lang, "date", out=s.out.strip(), cmd=s.ran)

    return Plan("date", [["date"]], answer)


def plan_system(task: Task, _listed: str | None) -> Plan:
    def answer(lang: str, steps: list[Step]) -> str:
        s = _last(steps)
        return say(lang, "system", out=s.out, cmd=s.ran)

    return Plan("system", [["uname -a"]], answer)


def _content(task: Task) -> str:
    """What to write: quoted text, or the words after "containing" / "内容是"."""
    if task.quoted:
        return task.quoted
    rest = task.rest_after(
        "containing", "saying", "that says", "with the text", "with the words", "with text"
    )
    rest = rest or task.rest_after("内容是", "内容为", "内容：", "写上", "写着")
    if not rest:
        return "hello from agentlab"
    low = rest.lower()
    for end in (" and then", " and check", " and read", " and verify", " and show", " then "):
        at = low.find(end)
        if at >= 0:
            rest, low = rest[:at], low[:at]
    for end in ("，", "。", "然后", "并"):
        at = rest.find(end)
        if at >= 0:
            rest = rest[:at]
    return rest.strip(" .!?。！") or "hello from agentlab"


def _fresh(name: str, n: int = 2) -> str:
    """hello.txt -> hello-2.txt (``n`` = 2), hello-3.txt (3) ..."""
    stem, dot, ext = name.rpartition(".")
    return f"{stem}-{n}.{ext}" if dot and stem else f"{name}-{n}"


FRESH_TRIES = 9  # name-2 ... name-10: after that the demo says the command failed


# Writing needs an order, not a mention: the task starts with the verb (after
# "please" and the like), asks no question and negates nothing. When unsure,
# the demo does not write (issue: "Does main.py make any network calls?" wrote
# main-2.py).
_POLITE = {"please", "pls", "now", "ok", "okay", "then", "kindly", "just"}
_WRITE_VERBS = {"create", "make", "write", "save", "touch"}
_NEGATIONS = {"not", "never", "don't", "dont", "no", "without"}
_ZH_POLITE = ("请你", "请", "帮我", "给我", "麻烦你", "麻烦", "帮忙", "你")
_ZH_VERBS = ("创建", "新建", "写一个", "建一个", "生成一个", "写入", "保存")
_ZH_NOT: tuple[str, ...] = (
    "不要",
    "别",
    "不用",
    "不需要",
    "无需",
    "勿",
    "不必",
    "几",
    "吗",
    "多久",
)
_ZH_NOT += ("什么", "怎么")
_ZH_NOT += ("如何", "多少", "哪", "为什么", "是否", "能否", "？")


def asks_to_write(task: Task) -> bool:
    """Is the task an order to create or write a file (not a question, not a negation)?"""
    if "?" in task.text or "？" in task.text:
        return False
    if task.language == "zh":
        text = task.text.strip()
        for polite in _ZH_POLITE:
            text = text.removeprefix(polite)
        return text.startswith(_ZH_VERBS) and not any(cue in task.text for cue in _ZH_NOT)
    if _NEGATIONS & task.wordset or task.has("do not", "does not"):
        return False
    words = [w for w in task.words[:4] if w not in _POLITE]
    return bool(words) and words[0] in _WRITE_VERBS and (len(words) < 2 or words[1] != "sure")


def plan_create(task: Task, _listed: str | None) -> Plan | None:
    if not asks_to_write(task):
        return None  # another row, or "cannot"
    names = [f for f in task.files if ".." not in f and not f.startswith(("/", "~", "-"))]
    name = names[0] if names else "hello.txt"
    tried = [name] + [_fresh(name, n) for n in range(2, 2 + FRESH_TRIES)]
    words = _content(task)

    def write(to: str) -> str:
        # noclobber: the shell refuses to replace a file that exists
        return f"set -o noclobber; printf '%s\\n' {q(words)} > {q(to)}"

    def answer(lang: str, steps: list[Step]) -> str:
        s = _last(steps)
        written = [f for f in tried[1:] if any(st.asked == write(f) for st in steps)]
        if written:  # the last fresh name tried is the one that was free
            return say(lang, "create_fresh", name=name, fresh=written[-1], cmd=s.ran, out=s.out)
        return say(lang, "create", name=name, cmd=s.ran, out=s.out)

    return Plan(
        "create",
        [[write(name)], [f"cat {q(name)}"]],
        answer,
        "intro.create",
        {"name": name, "fresh": tried[1]},
        # name taken: try name-2, then name-3 ... (each note names the one just refused)
        fallbacks=[[[write(f)], [f"cat {q(f)}"]] for f in tried[1:]],
        fallback_values=[{"name": a, "fresh": b} for a, b in zip(tried, tried[1:])],
        fallback_note="fresh",
        fallback_if="cannot overwrite",  # bash's words when noclobber refuses
    )


def plan_list(task: Task, _listed: str | None) -> Plan:
    ext = task.extension
    where = _folder(task)
    shown = [f for f in task.files if not f.startswith("-") and not f.endswith("/")]
    if shown and not task.has("list", "ls", "列出"):  # "what's in delete_me.txt": its lines
        name = shown[0]
        cmd = f"head -n {SHOWN_LINES} {q(name)}"

        def lines(lang: str, steps: list[Step]) -> str:
            s = _last(steps)
            return say(lang, "show", name=name, cmd=s.ran, out=s.out)

        return Plan("show", [[cmd]], lines)
    if ext and not task.files:
        cmd = f"find {q(where or '.')} -type f -name {q('*.' + ext)} {HIDDEN}"

        def found(lang: str, steps: list[Step]) -> str:
            s = _last(steps)
            n = len(s.out.splitlines())
            kind = _kind(lang, ext)
            if n == 0:
                return say(lang, "list_ext.none", kind=kind, cmd=s.ran)
            return say(lang, "list_ext", n=n, kind=kind, cmd=s.ran, out=s.out)

        return Plan("list", [[cmd]], found)
    cmd = f"ls -la {q(where)}" if where else "ls -la"

    def answer(lang: str, steps: list[Step]) -> str:
        s = _last(steps)
        return say(lang, "list", cmd=s.ran, out=s.out)

    return Plan("list", [[cmd]], answer)


# ---------------------------------------------------------------------------
# The table (order matters: the first row that matches and applies wins)
# ---------------------------------------------------------------------------

_COUNT = "how many|count|number of|total|多少|几个|统计|数量|数一数"
_QUESTION = (
    "how many|count|number of|which|list|search|find|grep|did|show|"
    "多少|几个|哪些|搜索|查找|列出|统计"
)

INTENTS: tuple[Intent, ...] = (
    Intent(
        "create",
        (
            "create|make|write|save|touch + file|<file>",
            "new file",
            "创建|新建|写一个|建一个|生成一个|写入|保存 + 文件|<file>",
        ),
        plan_create,
        unless=(_QUESTION,),
        typos=False,  # writing needs the exact word
        writes=True,
    ),
    Intent(
        "followup",
        tuple(" | ".join(cues) for cues in _SUPERLATIVES.values()),
        plan_followup,
    ),
    Intent(
        "defines",
        ("define|defines|defined|defining|definition|declared|declares|定义",),
        plan_defines,
    ),
    Intent(
        "search",
        (
            "search|grep|find|look|mention|mentions|mentioning|contain|contains|containing",
            "todo|todos|fixme|fixmes",
            "搜索|查找|包含|提到|找出|找一下|grep",
        ),
        plan_search,
    ),
    Intent(
        "disk_free",
        (
            "free|available|left|remaining|空闲|剩余|可用|还剩|剩下 + disk|space|storage|磁盘|空间|硬盘|存储",
        ),
        plan_disk_free,
    ),
    Intent(
        "disk_used",
        (
            "disk|space|storage|du|df|磁盘|空间|硬盘|存储",
            "how big|how large|size + folder|directory|dir|project",
            "多大|大小 + 文件夹|目录",
        ),
        plan_disk_used,
    ),
    Intent(
        "lines",
        (f"{_COUNT}|how long + line|lines|loc", "多少行|几行|行数|总行数"),
        plan_lines,
    ),
    Intent(
        "count_folders",
        (
            f"{_COUNT} + folder|folders|directory|directories|dirs|subfolders|subdirectories",
            "多少个文件夹|几个文件夹|多少个目录|几个目录|多少个子目录|几个子目录",
        ),
        plan_count_folders,
        unless=("file|files|scripts|<ext>",),
    ),
    Intent(
        "count_files",
        (f"{_COUNT} + file|files|<ext>|scripts|文件",),
        plan_count_files,
    ),
    Intent(
        "date_system",
        (
            "date|time|today|clock|日期|时间|几号|星期几|几点 + "
            "system|os|kernel|machine|uname|computer|系统|内核|机器",
        ),
        plan_date_system,
        unless=("file|files|文件",),
    ),
    Intent(
        "date",
        ("date|time|today|clock|what day|日期|时间|几号|星期几|几点|今天",),
        plan_date,
        unless=("file|files|文件",),
    ),
    Intent(
        "cpus",
        ("cpu|cpus|cores|processors|nproc|处理器|核心",),
        plan_cpus,
    ),
    Intent(
        "system",
        ("system|os|kernel|uname|machine|computer|linux|系统|内核|机器",),
        plan_system,
    ),
    Intent(
        "list",
        (
            "list|ls|dir|contents|列出|列一下|文件列表|有哪些|有什么",
            "show|display|what|which|find|see + file|files|folder|directory|here|<ext>",
            "what's here|what is here|what's in|what is in",
        ),
        plan_list,
    ),
)


# A negated clause ("do not create a file.", "不要写入任何文件，") up to its
# punctuation: what the task says not to do is not what it asks.
_NEGATED = re.compile(
    r"(?:\b(?:do not|don't|dont|never)\b|不要|别|不用)[^.,;!?。，；！？]*[.,;!?。，；！？]?", re.I
)


def plan(task: Task, listed: str | None = None) -> Plan | None:
    """The plan for a task (``listed``: the folder of the last listing in the
    history, for follow-ups); None when no row of the table fits.

    The writing row reads the whole task (a negation there means: do not
    write); the read-only rows read it without its negated clauses."""
    rest = _NEGATED.sub(" ", task.text).strip()
    reading = Task(rest) if rest and rest != task.text.strip() else task
    for intent in INTENTS:
        seen = task if intent.writes else reading
        if not any(matches(seen, p, intent.typos) for p in intent.patterns):
            continue
        if any(matches(seen, p) for p in intent.unless):
            continue
        found = intent.plan(seen, listed)
        if found is not None:
            return found
    return None
