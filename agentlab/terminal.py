"""Text for a terminal, made safe: what a person reads is what is there.

A terminal obeys control characters. ``\\r`` moves back to the start of the
line, so ``rm -rf ~\\rls -la`` *looks like* ``ls -la``; ``\\x1b[2K`` erases a
line; ``\\x1b]52;...`` can write to the clipboard; the bidi control U+202E
shows text backwards. Two helpers:

- ``visible(text)`` for anything a person approves: every such character is
  written out as its Python escape (``\\x1b``, ``\\r``, ``\\u202e``), so the
  exact characters that will run are on screen. Line breaks stay line breaks.
- ``plain(text)`` for model text and tool output: escape sequences and
  control characters are removed (colours included); ``\\r`` becomes a line
  break.

Both return plain text: print it with rich's ``Text`` (or ``markup=False``),
never as markup, or ``[/]`` and ``[conceal]`` in the text would be read as
rich's own commands.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["command_lines", "command_warnings", "has_hidden", "plain", "visible"]

# Categories of characters that a terminal does not simply draw: controls (Cc),
# format characters such as bidi overrides and zero-width spaces (Cf),
# line/paragraph separators (Zl, Zp), surrogates, private use, unassigned.
_HIDDEN_CATEGORIES = {"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"}


# Letters that draw as nothing (Hangul fillers, the blank Braille pattern).
_BLANK_LETTERS = "\u115f\u1160\u3164\uffa0\u2800"


def _hidden(ch: str) -> bool:
    if ch == "\n":
        return False
    category = unicodedata.category(ch)
    return (
        category in _HIDDEN_CATEGORIES or (category == "Zs" and ch != " ") or ch in _BLANK_LETTERS
    )


def has_hidden(text: str) -> bool:
    """True if ``text`` holds a character ``visible`` would write out as an escape."""
    return any(_hidden(ch) for ch in text)


def command_lines(command: str) -> tuple[list[str], str | None]:
    """The lines to show a person who approves ``command``, and a warning if it has several.

    Every line is ``visible``; a run of empty lines is shown as one line saying
    how many there were, so empty lines cannot push the start of a command out
    of sight. The warning (None for one line) says how many lines will run.
    """
    from agentlab.i18n import t

    raw = command.split("\n")
    lines: list[str] = []
    blank = 0
    for line in raw:
        if not line.strip():
            blank += 1
            continue
        if blank:
            lines.append(t("cli.empty_lines", n=blank))
            blank = 0
        lines.append(visible(line))
    if blank:
        lines.append(t("cli.empty_lines", n=blank))
    if len(raw) == 1:
        return lines, None
    return lines, t("cli.many_lines", n=sum(1 for line in raw if line.strip()), total=len(raw))


SPACES = 20  # a run of this many spaces (or tabs) may push the rest of a line off screen
_SPACES = re.compile(f"[ \t]{{{SPACES},}}")


def command_warnings(command: str) -> list[str]:
    """What a person must be told before approving ``command``: it holds control or
    invisible characters, a long run of spaces (what follows may be off screen), or
    several lines (every one runs). Empty for a plain one-line command."""
    from agentlab.i18n import t

    warnings = []
    if has_hidden(command):
        warnings.append(t("cli.hidden"))
    longest = max((len(m) for m in _SPACES.findall(command)), default=0)
    if longest:
        warnings.append(t("cli.spaces", n=longest))
    many = command_lines(command)[1]
    if many:
        warnings.append(many)
    return warnings


def visible(text: str) -> str:
    """``text`` with every control or invisible character written as an escape."""
    return "".join(
        ch.encode("unicode_escape").decode("ascii") if _hidden(ch) else ch for ch in text
    )


# ECMA-48 sequences: CSI (ESC [ ... final byte, or the one-byte C1 CSI), the
# string sequences OSC/DCS/SOS/PM/APC (ended by BEL or ESC \), and two-byte
# ESC sequences. Whatever is left of a broken sequence loses its ESC below.
_ESCAPES = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[ -/]*[0-~]"
)
_BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_DROP = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f" + _BIDI + "]")


def plain(text: str) -> str:
    """``text`` without escape sequences or control characters (tabs and newlines stay)."""
    text = _ESCAPES.sub("", text)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _DROP.sub("", text)
