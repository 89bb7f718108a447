"""HTML for the views: message cards, tool pairs, decisions, token charts.

Pure functions from history data to HTML strings, shared by the live widgets
and by the widget-free fallbacks (``_repr_html_``) that GitHub, nbviewer and
``nbconvert`` show. Nothing here imports ipywidgets.

Safety: every piece of text that came from a model or a tool is escaped
(``escape``) or rendered as Markdown with raw HTML switched off and the result
sanitised by ``nh3`` (``markdown``). Browsers run ``onerror=`` and friends
from any HTML they are given, so nothing from the model reaches a page as a tag.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentlab.history import Pairing, Problem, blocks, check_at, pairings, result_text
from agentlab.i18n import t

__all__ = [
    "PALETTE",
    "STYLE",
    "Pair",
    "block_html",
    "card_head_html",
    "decision_html",
    "error_html",
    "escape",
    "flags_html",
    "fold",
    "markdown",
    "pair_style",
    "pairing_table_html",
    "result_html",
    "role_of",
    "section",
    "short_id",
    "tokens_svg",
    "transcript_html",
]

# Pair colours: a tool_use and its tool_result share one. Chosen to stay apart
# from the role colours (blue user, violet assistant, teal tool results).
PALETTE = ("#d97706", "#db2777", "#0891b2", "#65a30d", "#9333ea", "#ea580c", "#2563eb", "#0d9488")
ROLE_COLORS = {"user": "#2563eb", "assistant": "#7c3aed", "results": "#0f766e"}
ERROR_COLOR = "#cf222e"
FOLD_LINES = 12  # longer output is folded behind "show N more lines"
FOLD_CHARS = 2000

STYLE = """<style>
.al-root{font-family:var(--jp-ui-font-family,system-ui,-apple-system,"Segoe UI",sans-serif);
 font-size:13px;line-height:1.45;color:var(--jp-content-font-color1,#1f2328)}
.al-root .widget-html-content,.al-root .jupyter-widget-html-content{line-height:1.45}
.al-root .widget-html,.al-root .jupyter-widget-html{margin:0}
.al-card{border:1px solid var(--jp-border-color2,#d0d7de);border-left-width:4px;border-radius:8px;
 background:var(--jp-layout-color1,#fff);margin:0 0 8px 0;padding:6px 12px 8px 12px;
 box-shadow:0 1px 2px rgba(31,35,40,.06)}
.al-card-user{border-left-color:#2563eb}.al-card-assistant{border-left-color:#7c3aed}
.al-card-results{border-left-color:#0f766e}
.al-head{display:flex;gap:8px;align-items:baseline;font-size:12px;margin:0 0 2px 0}
.al-role{font-weight:650;text-transform:uppercase;letter-spacing:.05em;font-size:11px}
.al-idx{font-family:var(--jp-code-font-family,ui-monospace,monospace);
 color:var(--jp-content-font-color2,#57606a);font-size:11px}
.al-muted{color:var(--jp-content-font-color2,#57606a)}
.al-text{overflow-wrap:anywhere}
.al-text p{margin:.35em 0}.al-text ul,.al-text ol{margin:.3em 0;padding-left:1.6em}
.al-text h1,.al-text h2,.al-text h3,.al-text h4{font-size:1.05em;margin:.5em 0 .3em 0}
.al-text pre,.al-code{font-family:var(--jp-code-font-family,ui-monospace,SFMono-Regular,Menlo,monospace);
 font-size:12px;line-height:1.45;background:var(--jp-layout-color2,#f6f8fa);border-radius:6px;
 padding:6px 9px;margin:4px 0;white-space:pre-wrap;overflow-wrap:anywhere;max-height:none}
.al-text code{font-family:var(--jp-code-font-family,ui-monospace,monospace);font-size:12px;
 background:var(--jp-layout-color2,#f6f8fa);border-radius:4px;padding:0 3px}
.al-text pre code{background:none;padding:0}
.al-text table{border-collapse:collapse}.al-text td,.al-text th{border:1px solid #d0d7de;padding:2px 6px}
.al-block{border:1px solid var(--jp-border-color2,#d0d7de);border-left:4px solid #8c959f;
 border-radius:6px;padding:4px 9px 5px 9px;margin:5px 0;background:var(--jp-layout-color1,#fff)}
.al-bhead{display:flex;flex-wrap:wrap;gap:6px;align-items:center;font-size:12px}
.al-kind{font-family:var(--jp-code-font-family,ui-monospace,monospace);font-weight:600}
.al-name{font-family:var(--jp-code-font-family,ui-monospace,monospace);font-weight:700}
.al-id{font-family:var(--jp-code-font-family,ui-monospace,monospace);font-size:11px;
 color:var(--jp-content-font-color2,#57606a)}
.al-badge{display:inline-block;border-radius:10px;padding:0 7px;font-size:11px;font-weight:700;
 color:#fff;line-height:18px;white-space:nowrap}
.al-tag{display:inline-block;border-radius:10px;padding:0 7px;font-size:11px;line-height:18px;
 border:1px solid currentColor}
.al-note{font-size:11px;color:var(--jp-content-font-color2,#57606a);margin-left:auto}
.al-prompt{color:#8c959f;user-select:none}
.al-error-block{background:rgba(207,34,46,.06)}
.al-error-block .al-code{background:rgba(207,34,46,.08)}
.al-flag{border:1px solid #cf222e;background:rgba(207,34,46,.07);border-radius:6px;padding:5px 9px;
 margin:6px 0 2px 0;font-size:12px}
.al-flag b{color:#cf222e}
.al-hint{color:var(--jp-content-font-color2,#57606a);margin-top:2px}
.al-pending{border-style:dashed}
details.al-more>summary{cursor:pointer;font-size:12px;color:var(--jp-brand-color1,#0969da);margin:2px 0}
.al-summary{font-size:12px;color:var(--jp-content-font-color2,#57606a);margin:0 0 6px 2px}
.al-ok{color:#1a7f37}.al-bad{color:#cf222e}.al-wait{color:#9a6700}
table.al-pairs{border-collapse:collapse;font-size:12px;width:100%}
table.al-pairs th{text-align:left;font-weight:600;color:var(--jp-content-font-color2,#57606a);
 border-bottom:1px solid var(--jp-border-color2,#d0d7de);padding:3px 8px}
table.al-pairs td{border-bottom:1px solid var(--jp-border-color3,#eaeef2);padding:3px 8px;
 vertical-align:top;white-space:nowrap}
table.al-pairs td.al-wrap{white-space:normal;overflow-wrap:anywhere}
table.al-pairs td.al-mono{font-family:var(--jp-code-font-family,ui-monospace,monospace)}
.al-section{font-weight:650;font-size:12px;letter-spacing:.03em;text-transform:uppercase;
 color:var(--jp-content-font-color2,#57606a);margin:10px 0 4px 2px}
.al-panel>.al-section:first-child,.al-stream>.al-section:first-child{margin-top:0}
.al-panel{border:1px solid var(--jp-border-color2,#d0d7de);border-radius:8px;padding:8px 12px;
 background:var(--jp-layout-color1,#fff);margin:0 0 8px 0}
.al-decision .al-why{margin-top:3px}
.al-errorbox{border:1px solid #cf222e;border-left-width:4px;background:rgba(207,34,46,.06);
 border-radius:8px;padding:8px 12px;margin:0 0 8px 0}
.al-errorbox b{color:#cf222e}
.al-approval{border:1px solid #d97706;border-left-width:4px;background:rgba(217,119,6,.07);
 border-radius:8px;padding:8px 12px;margin:0 0 8px 0}
.al-stream{border:1px dashed #7c3aed;border-radius:8px;padding:6px 12px;margin:0 0 8px 0;
 white-space:pre-wrap}
.al-status{font-size:12px;color:var(--jp-content-font-color2,#57606a)}
.al-title{font-size:16px;font-weight:700}
.al-loop{border:1px solid var(--jp-border-color2,#d0d7de);border-radius:12px;padding:12px 16px 14px 16px;
 background:var(--jp-layout-color1,#fff)}
.al-pinner{cursor:pointer;user-select:none}
.al-pinner:has(.al-pin:checked){box-shadow:0 0 0 2px var(--jp-layout-color1,#fff),0 0 0 3.5px #1f2328}
.al-about{font-size:12px;color:var(--jp-content-font-color2,#57606a);margin:2px 4px 8px 4px}
</style>"""


# --------------------------------------------------------------------------
# Text
# --------------------------------------------------------------------------


def escape(value: Any) -> str:
    """Text as HTML text: ``<``, ``>``, ``&`` and quotes can never start a tag."""
    return html.escape(str(value), quote=True)


_md: Any = None


def markdown(text: str) -> str:
    """Model text as HTML: CommonMark (plus tables) with raw HTML OFF, then sanitised.

    Raw HTML in the text comes out escaped (``<script>`` shows as text); link
    targets like ``javascript:`` are refused by markdown-it; ``nh3`` then
    removes anything that is still not plain, safe HTML.
    """
    global _md
    if _md is None:
        import nh3  # noqa: F401  (fail early if missing)
        from markdown_it import MarkdownIt

        _md = MarkdownIt("commonmark", {"html": False}).enable("table")
    import nh3

    return str(nh3.clean(_md.render(text)))


def fold(text: str, lines: int = FOLD_LINES, chars: int = FOLD_CHARS) -> str:
    """Escaped text in a code box; a long one shows its start and folds the rest."""
    all_lines = text.split("\n")
    if len(all_lines) <= lines and len(text) <= chars:
        return f'<pre class="al-code">{escape(text)}</pre>'
    head = "\n".join(all_lines[:lines])
    if len(head) > chars:
        head = head[:chars]
    rest = text[len(head) :].lstrip("\n")
    more = t("view.fold.more", n=len(rest.split("\n")), size=_size(len(rest)))
    return (
        f'<pre class="al-code">{escape(head)}</pre>'
        f'<details class="al-more"><summary>{escape(more)}</summary>'
        f'<pre class="al-code">{escape(rest)}</pre></details>'
    )


def _size(n: int) -> str:
    return f"{n} B" if n < 1000 else f"{n / 1000:.1f} kB"


def short_id(tool_id: Any) -> str:
    """``toolu_01A09q90qw90lq917835lq9`` -> ``toolu_…835lq9``: enough to match by eye."""
    s = str(tool_id)
    return s if len(s) <= 14 else f"{s[:6]}…{s[-6:]}"


def section(title: str) -> str:
    """A small upper-case heading over a panel."""
    return f'<div class="al-section">{escape(title)}</div>'


# --------------------------------------------------------------------------
# Blocks and cards
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Pair:
    """How one tool_use/tool_result pair is marked: its number and colour."""

    number: int
    id: str

    @property
    def color(self) -> str:
        return PALETTE[(self.number - 1) % len(PALETTE)]

    @property
    def label(self) -> str:
        return f"⇄ {self.number}"


def role_of(message: Any) -> str:
    """``user``, ``assistant``, or ``results`` (a user message carrying tool results)."""
    role = message.get("role") if isinstance(message, Mapping) else None
    if role == "user" and any(b.get("type") == "tool_result" for b in blocks(message)):
        return "results"
    return str(role)


def card_head_html(index: int, message: Any) -> str:
    role = role_of(message)
    label = t("role.tool_results") if role == "results" else t(f"role.{role}")
    color = ROLE_COLORS.get(role, "#8c959f")
    return (
        f'<div class="al-head"><span class="al-role" style="color:{color}">{escape(label)}</span>'
        f'<span class="al-idx">messages[{index}]</span></div>'
    )


def _tool_input(value: Any) -> str:
    if (
        isinstance(value, Mapping)
        and set(value) == {"command"}
        and isinstance(value["command"], str)
    ):
        command = value["command"]
        return f'<pre class="al-code"><span class="al-prompt">$ </span>{escape(command)}</pre>'
    return fold(json.dumps(value, ensure_ascii=False, indent=2, default=str))


_BASE64 = re.compile(r"^[A-Za-z0-9+/=\s]+$")


def _result_body(content: Any) -> str:
    if not isinstance(content, list):
        text = result_text(content)
        return (
            fold(text) if text else f'<div class="al-muted">{escape(t("view.empty_output"))}</div>'
        )
    parts = []
    for b in content:
        kind = b.get("type") if isinstance(b, Mapping) else None
        if kind == "text":
            parts.append(fold(str(b.get("text", ""))))
        elif kind == "image" and isinstance(b.get("source"), Mapping):
            parts.append(_image(b["source"]))
        else:
            parts.append(_other(b))
    return "".join(parts)


def _image(source: Mapping[str, Any]) -> str:
    media = str(source.get("media_type", ""))
    data = str(source.get("data", ""))
    ok = media in ("image/png", "image/jpeg", "image/gif", "image/webp") and _BASE64.match(data)
    if source.get("type") == "base64" and ok:
        return (
            f'<img alt="{escape(media)}" style="max-width:100%" src="data:{media};base64,{data}">'
        )
    return f'<div class="al-muted">{escape(t("view.block.image", media=media or "?"))}</div>'


def _other(block: Any) -> str:
    kind = block.get("type", "?") if isinstance(block, Mapping) else "?"
    body = json.dumps(block, ensure_ascii=False, indent=2, default=str)
    return (
        f'<details class="al-more"><summary>{escape(t("view.block.other", kind=kind))}</summary>'
        f'<pre class="al-code">{escape(body)}</pre></details>'
    )


def _badge(pair: Pair | None, pin: bool = True) -> str:
    """The pair's badge. Inside a card it holds a hidden checkbox: clicking the
    badge pins the highlight of both halves of the pair (pure CSS, see
    ``pair_style``), hovering either half lights up both."""
    if pair is None:
        tip = escape(t("view.pair.unexpected"))
        return f'<span class="al-badge" style="background:{ERROR_COLOR}" title="{tip}">?</span>'
    style = f'style="background:{pair.color}"'
    if not pin:
        return f'<span class="al-badge" {style}>{escape(pair.label)}</span>'
    tip = escape(t("view.pair.select"))
    return (
        f'<label class="al-badge al-pinner" {style} title="{tip}">'
        f'<input type="checkbox" class="al-pin" hidden>{escape(pair.label)}</label>'
    )


def pair_style(pair: Pair) -> str:
    """CSS that lights up both blocks of a pair while either is hovered or pinned.

    ``:has()`` finds the view (``.al-root``) holding the hovered block, so the
    highlight stays inside that view.
    """
    c = f".al-pair-{pair.number}"
    return (
        f"<style>.al-root:has({c}:hover) {c},.al-root:has({c} .al-pin:checked) {c}"
        "{box-shadow:inset 0 0 0 2px var(--al-pair);"
        "background:color-mix(in srgb,var(--al-pair) 9%,var(--jp-layout-color1,#fff))}</style>"
    )


def block_html(
    block: Mapping[str, Any], pair: Pair | None = None, note: str = "", badge: bool | None = True
) -> str:
    """One content block. ``pair`` marks a tool_use/tool_result with its pair colour;
    ``note`` is a short status line (answered / waiting / answers ...).
    ``badge``: True for a clickable (pinning) badge, False for a plain one, None for none."""
    kind = block.get("type")
    if kind == "text":
        return f'<div class="al-text">{markdown(str(block.get("text", "")))}</div>'
    if kind not in ("tool_use", "tool_result"):
        return _other(block)
    color = pair.color if pair is not None else ERROR_COLOR
    is_error = kind == "tool_result" and bool(block.get("is_error"))
    classes = "al-block" + (" al-error-block" if is_error else "")
    if pair is not None:
        classes += f" al-pair al-pair-{pair.number}"
    ident = block.get("id") if kind == "tool_use" else block.get("tool_use_id")
    head = [
        _badge(pair, pin=badge) if badge is not None else "",
        f'<span class="al-kind">{kind}</span>',
    ]
    if kind == "tool_use":
        head.append(f'<span class="al-name">{escape(block.get("name"))}</span>')
    head.append(f'<span class="al-id" title="{escape(ident)}">{escape(short_id(ident))}</span>')
    if is_error:
        head.append(f'<span class="al-tag al-bad">{escape(t("view.block.is_error"))}</span>')
    if note:
        head.append(f'<span class="al-note">{escape(note)}</span>')
    if kind == "tool_use":
        body = _tool_input(block.get("input"))
    else:
        body = _result_body(block.get("content"))
    return (
        f'<div class="{classes}" style="border-left-color:{color};--al-pair:{color}">'
        f'<div class="al-bhead">{"".join(head)}</div>{body}</div>'
    )


def flags_html(problems: Sequence[Problem]) -> str:
    """Each rule the history breaks here: the API's own words and a hint."""
    out = []
    for p in problems:
        rule = t("view.flag.rule", rule=p.rule or "?")
        hint = f'<div class="al-hint">{escape(p.hint)}</div>' if p.hint else ""
        out.append(
            f'<div class="al-flag"><b>⚠ {escape(rule)}</b> '
            f'<span class="al-muted">{escape(t("view.flag.api"))}</span> '
            f"<code>{escape(p.message)}</code>{hint}</div>"
        )
    return "".join(out)


# --------------------------------------------------------------------------
# A whole history, without widgets
# --------------------------------------------------------------------------


class Marks:
    """Pair numbers, notes and flags for a history, worked out one message at a
    time (the live view does the same as messages arrive)."""

    def __init__(self) -> None:
        self.pairs: dict[str, Pair] = {}
        self.notes: dict[str, str] = {}  # tool_use id -> "answered in messages[3]: ok"
        self.problems: dict[int, list[Problem]] = {}  # message index -> rules it breaks

    def pair_for(self, tool_id: Any) -> Pair:
        key = str(tool_id)
        if key not in self.pairs:
            self.pairs[key] = Pair(len(self.pairs) + 1, key)
        return self.pairs[key]

    def add(self, messages: Sequence[Any], i: int) -> tuple[list[str], list[Problem]]:
        """Take in ``messages[i]``. Returns the tool_use ids of ``messages[i-1]``
        whose status changed, and the problems found on message ``i - 1``."""
        message = messages[i]
        prev = messages[i - 1] if i > 0 else None
        for b in blocks(message):
            if b.get("type") == "tool_use":
                self.pair_for(b.get("id"))
                self.notes[str(b.get("id"))] = t("view.pair.waiting")
        found = check_at(i, prev, message, pending_ok=True)
        earlier = [p for p in found if p.index is not None and p.index < i]
        self.problems.setdefault(i, []).extend(p for p in found if p not in earlier)
        if earlier:
            self.problems.setdefault(i - 1, []).extend(earlier)
        changed: list[str] = []
        if prev is not None and role_of(prev) == "assistant":
            results = blocks(message) if role_of(message) == "results" else []
            answers = {
                str(b.get("tool_use_id")): b for b in results if b.get("type") == "tool_result"
            }
            for b in blocks(prev):
                if b.get("type") != "tool_use":
                    continue
                key = str(b.get("id"))
                r = answers.get(key)
                if r is None:
                    self.notes[key] = t("view.status.missing")
                else:
                    status = t("view.status.error" if r.get("is_error") else "view.status.ok")
                    self.notes[key] = t("view.pair.answered", i=i, status=status)
                changed.append(key)
        return changed, earlier

    def result_pair(self, messages: Sequence[Any], i: int, block: Mapping[str, Any]) -> Pair | None:
        """The pair a tool_result belongs to, or None if it answers nothing before it."""
        prev = messages[i - 1] if i > 0 else None
        key = str(block.get("tool_use_id"))
        asked = prev is not None and any(
            b.get("type") == "tool_use" and str(b.get("id")) == key for b in blocks(prev)
        )
        return self.pairs.get(key) if asked else None


def result_note(i: int, pair: Pair | None) -> str:
    if pair is None:
        return t("view.pair.unexpected")
    return t("view.pair.of", i=i - 1)


def card_html(messages: Sequence[Any], i: int, marks: Marks) -> str:
    """One message as a card, with its pairs marked and its problems flagged."""
    message = messages[i]
    role = role_of(message)
    parts = [card_head_html(i, message)]
    for b in blocks(message):
        if b.get("type") == "tool_use":
            key = str(b.get("id"))
            use_pair = marks.pair_for(key)
            parts.append(pair_style(use_pair) + block_html(b, use_pair, marks.notes.get(key, "")))
        elif b.get("type") == "tool_result":
            pair = marks.result_pair(messages, i, b)
            parts.append(block_html(b, pair, result_note(i, pair)))
        else:
            parts.append(block_html(b))
    parts.append(flags_html(marks.problems.get(i, [])))
    color = ROLE_COLORS.get(role, "#8c959f")
    return (
        f'<div class="al-card al-card-{role}" style="border-left-color:{color}">'
        f"{''.join(parts)}</div>"
    )


def summary_html(n_messages: int, n_pairs: int, n_problems: int) -> str:
    counts = t("view.history.summary", n=n_messages, pairs=n_pairs)
    if n_problems:
        verdict = (
            f'<span class="al-bad">✗ {escape(t("view.history.problems", n=n_problems))}</span>'
        )
    elif n_messages:
        verdict = f'<span class="al-ok">✓ {escape(t("view.history.valid"))}</span>'
    else:
        verdict = escape(t("view.history.empty"))
    return f'<div class="al-summary">{escape(counts)} · {verdict}</div>'


def transcript_html(
    messages: Sequence[Any], *, with_style: bool = True, with_pairs: bool = True
) -> str:
    """A whole history as cards, plus its table of tool pairs: what a saved
    notebook shows where widgets cannot run."""
    marks = Marks()
    for i in range(len(messages)):
        marks.add(messages, i)
    cards = "".join(card_html(messages, i, marks) for i in range(len(messages)))
    n_problems = sum(len(v) for v in marks.problems.values())
    table = pairing_table_html(messages) if with_pairs and marks.pairs else ""
    style = STYLE if with_style else ""
    return (
        f'{style}<div class="al-root">{summary_html(len(messages), len(marks.pairs), n_problems)}'
        f"{cards}{table}</div>"
    )


# --------------------------------------------------------------------------
# Pairings table
# --------------------------------------------------------------------------


def _summary(value: Any, limit: int = 70) -> str:
    if isinstance(value, Mapping) and set(value) == {"command"}:
        text = str(value["command"])
    else:
        text = json.dumps(value, ensure_ascii=False, default=str)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _status(p: Pairing, n_messages: int) -> tuple[str, str]:
    if p.status == "missing" and p.use_index == n_messages - 1:
        return "al-wait", t("view.status.pending")
    css = {"ok": "al-ok", "error": "al-bad", "missing": "al-bad"}.get(p.status, "")
    mark = {"ok": "✓ ", "error": "✗ ", "missing": "⚠ "}.get(p.status, "")
    return css, mark + t(f"view.status.{p.status}")


def pairing_table_html(
    messages: Sequence[Any], durations: Mapping[str, float] | None = None
) -> str:
    """One row per tool_use: turn, id, tool, input, result status, duration."""
    rows = pairings(messages)
    if not rows:
        return f'<div class="al-muted">{escape(t("view.pairs.empty"))}</div>'
    numbers = {p.id: k for k, p in enumerate(rows, 1)}  # the cards number pairs in the same order
    head = "".join(
        f"<th>{escape(t(f'view.pairs.{c}'))}</th>"
        for c in ("pair", "turn", "id", "tool", "input", "status", "duration")
    )
    body = []
    for p in rows:
        css, status = _status(p, len(messages))
        seconds = (durations or {}).get(p.id)
        duration = f"{seconds:.2f} s" if seconds is not None else "—"
        pair = Pair(numbers[p.id], p.id)
        row = f'class="al-pair al-pair-{pair.number}" style="--al-pair:{pair.color}"'
        body.append(
            f"<tr {row}><td>{_badge(pair)}</td><td>{p.turn}</td>"
            f'<td class="al-mono" title="{escape(p.id)}">{escape(short_id(p.id))}</td>'
            f'<td class="al-mono">{escape(p.name)}</td>'
            f'<td class="al-mono al-wrap">{escape(_summary(p.input))}</td>'
            f'<td class="{css}">{escape(status)}</td><td>{duration}</td></tr>'
        )
    title = f'<div class="al-section">{escape(t("view.pairs.title"))}</div>'
    return f'{title}<table class="al-pairs"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'


# --------------------------------------------------------------------------
# The loop's state: decision, tokens, errors, a finished run
# --------------------------------------------------------------------------


def decision_html(decision: Any) -> str:
    """The last Decision: stop reason, what the harness does, and why."""
    title = section(t("view.decision.title"))
    if decision is None:
        return f'<div class="al-panel al-decision">{title}<div class="al-muted">{escape(t("view.decision.none"))}</div></div>'
    action = t(f"view.action.{decision.action}")
    color = {"execute": "#d97706", "stop": "#1a7f37", "continue": "#2563eb"}.get(
        decision.action, "#57606a"
    )
    line = (
        f'<code>stop_reason = "{escape(decision.reason)}"</code> → '
        f'<b style="color:{color}">{escape(action)}</b>'
    )
    return (
        f'<div class="al-panel al-decision">{title}<div>{line}</div>'
        f'<div class="al-why al-muted">{escape(decision.explanation)}</div></div>'
    )


TOKEN_COLORS = {"input": "#2563eb", "output": "#d97706", "cache": "#0d9488"}


def tokens_svg(turn_usage: Sequence[Mapping[str, int]], width: int = 380, height: int = 130) -> str:
    """A small bar chart: input, output and cache tokens for each turn."""
    if not turn_usage:
        return ""
    shown = list(enumerate(turn_usage, 1))[-12:]  # the last 12 turns
    values = [
        (
            n,
            {
                "input": int(u.get("input_tokens", 0)),
                "output": int(u.get("output_tokens", 0)),
                "cache": int(u.get("cache_read_input_tokens", 0))
                + int(u.get("cache_creation_input_tokens", 0)),
            },
        )
        for n, u in shown
    ]
    top = max([max(v.values()) for _, v in values] + [1])
    left, right, top_pad, bottom = 36, 8, 22, 18
    plot_w, plot_h = width - left - right, height - top_pad - bottom
    group = plot_w / len(values)
    bar = max(3.0, min(14.0, group / 4))
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" font-family="system-ui,sans-serif" font-size="10">',
        f"<title>{escape(t('view.tokens.title'))}</title>",
    ]
    x = left
    for key, color in TOKEN_COLORS.items():  # legend
        parts.append(f'<rect x="{x}" y="4" width="9" height="9" rx="2" fill="{color}"/>')
        label = t(f"view.tokens.{key}")
        parts.append(f'<text x="{x + 13}" y="12" fill="#57606a">{escape(label)}</text>')
        x += 22 + 7 * len(label)
    base = top_pad + plot_h
    parts.append(
        f'<line x1="{left}" y1="{base}" x2="{width - right}" y2="{base}" stroke="#d0d7de"/>'
    )
    parts.append(
        f'<text x="{left - 4}" y="{top_pad + 8}" text-anchor="end" fill="#57606a">{top}</text>'
    )
    parts.append(f'<text x="{left - 4}" y="{base}" text-anchor="end" fill="#57606a">0</text>')
    for k, (n, v) in enumerate(values):
        gx = left + k * group + (group - 3 * bar - 4) / 2
        for j, (key, color) in enumerate(TOKEN_COLORS.items()):
            h = plot_h * v[key] / top
            bx = gx + j * (bar + 2)
            tip = f"{t('view.tokens.turn', n=n)} · {t(f'view.tokens.{key}')}: {v[key]}"
            parts.append(
                f'<rect x="{bx:.1f}" y="{base - h:.1f}" width="{bar:.1f}" height="{h:.1f}" rx="1.5" '
                f'fill="{color}"><title>{escape(tip)}</title></rect>'
            )
        cx = left + k * group + group / 2
        parts.append(
            f'<text x="{cx:.1f}" y="{height - 4}" text-anchor="middle" fill="#57606a">{n}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def tokens_html(turn_usage: Sequence[Mapping[str, int]]) -> str:
    if not turn_usage:
        return ""
    title = section(t("view.tokens.title"))
    return f'<div class="al-panel">{title}{tokens_svg(turn_usage)}</div>'


def error_html(error: BaseException, details: str = "") -> str:
    """A failed step, said plainly; the traceback (if any) folded away."""
    text = getattr(error, "explanation", None) or str(error) or type(error).__name__
    fold_tb = (
        f'<details class="al-more"><summary>{escape(t("view.error.details"))}</summary>'
        f'<pre class="al-code">{escape(details)}</pre></details>'
        if details
        else ""
    )
    return (
        f'<div class="al-errorbox"><b>{escape(t("view.error.title"))}</b>'
        f'<div style="white-space:pre-wrap;margin-top:3px">{escape(text)}</div>{fold_tb}</div>'
    )


def result_html(result: Any) -> str:
    """A LoopResult: the final answer on top, this run's transcript folded below."""
    shown = getattr(result, "new_messages", result.messages)
    answer = (
        f'<div class="al-text">{markdown(result.text)}</div>'
        if result.text
        else f'<div class="al-muted">{escape(result.explanation or str(result.stop_reason))}</div>'
    )
    head = t("view.result.summary", reason=result.stop_reason, turns=result.turns, n=len(shown))
    return (
        f'{STYLE}<div class="al-root"><div class="al-panel">{answer}'
        f'<details class="al-more"><summary>{escape(head)}</summary>'
        f"{transcript_html(shown, with_style=False)}</details></div></div>"
    )
