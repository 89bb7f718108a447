"""Reading a task: its words, language, file names, quoted text and file kinds.

Everything here is one pass over the text (regular expressions without
nested repetition, ``str.find``, set look-ups), so the time grows linearly
with the task's length: a 64 kB task takes milliseconds.

English is read as words: "create" inside ``create_table.sql`` or in
"recreate" is not the word "create". Chinese has no spaces between words,
so Chinese cue phrases are looked for in the text itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property

# A word: letters and digits, joined by . _ ' / - inside it (so a file name
# such as create_table.sql or src/app.py stays one word). No nested
# repetition: the match time is linear.
_WORD = re.compile(r"[a-z0-9_]+(?:[./'-][a-z0-9_]+)*")
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_LATIN = re.compile(r"[A-Za-z]")
# A file name: a run of name characters that ends in an extension of 1-8
# letters or digits (found in two steps, each linear).
_NAME = re.compile(r"[\w./-]+", re.ASCII)
_EXTENSION = re.compile(r"[\w-].*\.[A-Za-z0-9]{1,8}", re.ASCII)
# ".py" or "*.py" standing alone (not part of a file name).
_EXT = re.compile(r"(?<![\w.])\*?\.([A-Za-z0-9]{1,8})\b", re.ASCII)
# Quoted text: the opening quote starts a word, the closing one ends it
# (so the apostrophe in "what's" opens nothing). Each try stops at the next
# quote mark, so the whole search stays linear.
_QUOTED = re.compile(
    r"(?:^|(?<=[\s(:：,，\u3400-\u9fff]))[\"'“‘「`]([^\"'“”‘’「」`\n]+)[\"'”’」`](?![A-Za-z])"
)

# Slips in short words that the one-edit rule (words of 5 letters or more)
# does not forgive: "how mny files" reads as "how many files".
SHORT_TYPOS = {"mny": "many", "mnay": "many", "amny": "many", "hwo": "how", "fles": "files"}
SHORT_TYPOS |= {"fils": "files", "flie": "file", "fiel": "file", "lnes": "lines", "liens": "lines"}

# Words for kinds of files, and their extensions.
LANGUAGES = {
    "python": "py",
    "markdown": "md",
    "text": "txt",
    "javascript": "js",
    "json": "json",
    "csv": "csv",
    "sql": "sql",
    "notebook": "ipynb",
    "notebooks": "ipynb",
    "shell": "sh",
    "yaml": "yaml",
}
# Extensions written as bare words ("how many py files").
BARE_EXTENSIONS = {"py", "md", "txt", "js", "ipynb", "sh", "csv", "json", "sql", "yaml", "toml"}


@dataclass
class Task:
    """One task, read once. ``text`` is as written; ``low`` is lower case."""

    text: str
    low: str = field(init=False)
    words: list[str] = field(init=False)

    def __post_init__(self) -> None:
        self.text = self.text.replace("’", "'").replace("‘", "'")
        self.low = self.text.lower()
        self.words = [SHORT_TYPOS.get(w, w) for w in _WORD.findall(self.low)]

    @cached_property
    def wordset(self) -> set[str]:
        return set(self.words)

    @cached_property
    def joined(self) -> str:
        """The words with one space between, for phrases ("how many")."""
        return " " + " ".join(self.words) + " "

    @cached_property
    def near(self) -> dict[str, str]:
        """Each word of 5-12 letters, and each of its one-letter-shorter forms.

        A cue matches a typo one edit away (a letter added, dropped, changed,
        or two swapped: "serach", "pyhton") when the two share such a form.
        """
        forms: dict[str, str] = {}
        for w in self.wordset:
            if 5 <= len(w) <= 12 and w.isalpha():
                forms[w] = w
                for i in range(len(w)):
                    forms.setdefault(w[:i] + w[i + 1 :], w)
        return forms

    def has(self, *cues: str, typos: bool = False) -> bool:
        """Does the task hold one of these English words or phrases, or one
        of these Chinese phrases (anywhere in the text)? With ``typos``, a
        word of 5 letters or more also matches one edit away."""
        for cue in cues:
            if not cue.isascii():
                if cue in self.text:
                    return True
            elif " " in cue:
                if f" {cue} " in self.joined:
                    return True
            elif cue in self.wordset or (typos and len(cue) >= 5 and self._close(cue)):
                return True
        return False

    def _close(self, cue: str) -> bool:
        near = self.near
        if cue in near:  # a letter added to the cue in the task, or the cue itself
            return True
        return any(cue[:i] + cue[i + 1 :] in near for i in range(len(cue)))

    @cached_property
    def language(self) -> str:
        """ "zh" when Chinese characters weigh at least a quarter of the Latin
        letters outside file names ("删除 delete_me.txt" is a Chinese task)."""
        cjk = len(_CJK.findall(self.text))
        latin = len(_LATIN.findall(self.text)) - sum(len(_LATIN.findall(f)) for f in self.files)
        return "zh" if cjk and cjk * 4 >= latin else "en"

    @cached_property
    def files(self) -> list[str]:
        """File names in the task, as written."""
        # fullmatch from the name's start: ".*" scans the name once, then steps back
        # at most 9 characters to find the extension.
        names = (n.rstrip(".") for n in _NAME.findall(self.text))
        return [n for n in names if _EXTENSION.fullmatch(n)]

    @cached_property
    def quoted(self) -> str | None:
        m = _QUOTED.search(self.text)
        return m.group(1).strip() if m else None

    @cached_property
    def extension(self) -> str | None:
        """The kind of file asked about: from ".py", "py files" or "Python files"."""
        m = _EXT.search(self.text)
        if m:
            return m.group(1).lower()
        for w in self.words:
            if w in LANGUAGES:
                return LANGUAGES[w]
            if w in BARE_EXTENSIONS:
                return w
        for name, ext in LANGUAGES.items():  # "pyhton files"
            if len(name) >= 5 and self._close(name):
                return ext
        return None

    def rest_after(self, *cues: str) -> str | None:
        """The text as written after the first of these cues (a word or phrase)."""
        best = None
        for cue in cues:
            at = _find_word(self.low, cue)
            if at >= 0 and (best is None or at < best[0]):
                best = (at, at + len(cue))
        return self.text[best[1] :] if best else None


def _find_word(low: str, cue: str) -> int:
    """Where ``cue`` starts in ``low`` as whole words (-1 if nowhere)."""
    if not cue.isascii():
        return low.find(cue)
    start = 0
    while True:
        at = low.find(cue, start)
        if at < 0:
            return -1
        end = at + len(cue)
        before = low[at - 1] if at else " "
        after = low[end] if end < len(low) else " "
        if not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_"):
            return at
        start = at + 1
