"""HTML for the views: message cards, tool pairs, decisions, totals, a finished run.

Pure functions from history data to HTML strings, shared by the live widgets
(``agentlab.views``) and by the widget-free fallbacks (``_repr_html_``) that
GitHub, nbviewer and ``nbconvert`` show. Nothing here imports ipywidgets, so
the loop's own reprs can use it.

Safety: text from a model or a tool (and anything else read from a history,
roles and ids included) reaches the page only through ``escape`` or
``markdown``: CommonMark with raw HTML off, images turned into links, link
targets limited to http(s) and mailto, and the result sanitised by ``nh3``.
Browsers run ``onerror=`` and friends from any HTML they are given, so nothing
from the model reaches a page as a tag or an attribute it chose.

Colours come from JupyterLab's CSS variables (``--jp-*``), mixed toward the
text colour where a plain accent would be too faint, so light and dark themes
both keep text at 4.5:1 or more.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentlab.history import Pairing, Problem, blocks, check_at, pairings, result_text
from agentlab.i18n import get_language, t
from agentlab.terminal import _BIDI, SPACES, visible
from agentlab.tools.todo import REMIND_AFTER, REMINDER, STATUSES

__all__ = [
    "PALETTE",
    "STYLE",
    "Marks",
    "Pair",
    "block_html",
    "card_head_html",
    "card_html",
    "to_markdown",
    "decision_html",
    "ended_text",
    "error_html",
    "escape",
    "flags_html",
    "fold",
    "fold_markdown",
    "fresh_tag",
    "markdown",
    "pairing_rows_html",
    "pairing_table",
    "pairing_table_html",
    "reminder_block_html",
    "result_html",
    "result_markdown",
    "role_of",
    "runs_of",
    "section",
    "short_id",
    "slots_style",
    "tn",
    "todo_html",
    "tokens_svg",
    "totals_html",
    "transcript_html",
    "whole_input_html",
]

# Pair colours: a tool_use and its tool_result share one. Badges darken them
# (white text on them stays above 4.5:1); rings and borders use them as they are.
PALETTE = ("#d97706", "#db2777", "#0891b2", "#65a30d", "#9333ea", "#ea580c", "#2563eb", "#0d9488")
ROLES = ("user", "assistant", "results")  # the only role names that reach a class attribute
FOLD_LINES = 12  # longer tool output is folded behind "show N more lines"
FOLD_CHARS = 2000
TEXT_LINES = 20  # model text longer than this (in lines) is folded too
TEXT_CHARS = 4000
OPEN_LAST = 3  # cards left open at the end of a history: the current turn
SLOTS = 16  # tool calls per message whose pair the shared stylesheet lights (see PAIR_STYLE)

# Hovering or pinning (clicking the badge of) one half of a tool pair lights up
# both halves. A tool_use and its tool_result sit in neighbouring cards (an
# assistant card, then the results card after it), and both carry the class
# ``al-s<k>``: the tool_use is the k-th call of its message. So one fixed set
# of rules, scoped to two neighbouring cards, serves every pair of every view:
# a hover changes the style of those two cards only, not the whole page.
# The shared stylesheet has rules for the first SLOTS calls of a message; a
# history with more parallel calls than that brings the rules for the rest
# (``slots_style``), so nobody else pays for them.
# ``.al-lit`` is set by the views' script (``agentlab.views.pins``) on the two
# blocks (tool_use and tool_result) of a pair whose row in the pairs table is hovered.
_LIT = (
    "box-shadow:inset 0 0 0 2px var(--al-pair);"
    "background:color-mix(in srgb,var(--al-pair) 9%,var(--al-bg,#fff))"
)
_ON = (":hover", " .al-pin:checked")  # hovered, or pinned by its badge


def _slot_rules(first: int, last: int) -> list[str]:
    """The selectors that light the pairs of the ``first``-th to ``last``-th call of a message."""
    return [
        rule
        for k in range(first, last + 1)
        for on in _ON
        for rule in (
            f".al-card-assistant:has(.al-s{k}{on})+.al-card-results .al-s{k}",
            f".al-card-assistant:has(+.al-card-results .al-s{k}{on}) .al-s{k}",
        )
    ]


PAIR_STYLE = (
    ",".join(
        [".al-pair:hover", ".al-pair:has(>.al-bhead .al-pin:checked)", ".al-pair.al-lit"]
        + _slot_rules(1, SLOTS)
    )
    + "{"
    + _LIT
    + "}"
)


def slots_style(slots: int) -> str:
    """A ``<style>`` for the calls past the SLOTS-th of a message, when a history
    has a message with ``slots`` calls; empty when the shared stylesheet covers them."""
    if slots <= SLOTS:
        return ""
    return f"<style>{','.join(_slot_rules(SLOTS + 1, slots))}{{{_LIT}}}</style>"


STYLE = """<style>
.al-root{--al-fg:var(--jp-content-font-color1,#1f2328);--al-muted:color-mix(in srgb,var(--jp-content-font-color2,#57606a) 80%,var(--al-fg));
 --al-bg:var(--jp-layout-color1,#fff);--al-bg2:var(--jp-layout-color2,#f6f8fa);
 --al-border:var(--jp-border-color2,#d0d7de);
 --al-bad:color-mix(in srgb,var(--jp-error-color1,#cf222e) 70%,var(--al-fg));
 --al-ok:color-mix(in srgb,var(--jp-success-color1,#1a7f37) 55%,var(--al-fg));
 --al-wait:color-mix(in srgb,var(--jp-warn-color1,#bc4c00) 50%,var(--al-fg));
 --al-link:color-mix(in srgb,var(--jp-brand-color1,#0969da) 70%,var(--al-fg));
 --al-user:color-mix(in srgb,#2563eb 70%,var(--al-fg));
 --al-assistant:color-mix(in srgb,#7c3aed 70%,var(--al-fg));
 --al-results:color-mix(in srgb,#0f766e 70%,var(--al-fg));
 font-family:var(--jp-ui-font-family,system-ui,-apple-system,"Segoe UI",sans-serif);
 font-size:13px;line-height:1.45;color:var(--al-fg);text-align:left}
.al-root .widget-html-content,.al-root .jupyter-widget-html-content{line-height:1.45}
.al-root .widget-html,.al-root .jupyter-widget-html{margin:0}
.al-root a{color:var(--al-link)}
/* JupyterLab right-aligns table cells in HTML outputs with a two-class rule: ours has more */
.al-root :is(table.al-pairs,.al-text table) :is(th,td){text-align:left}
.al-card{border:1px solid var(--al-border);border-left-width:4px;border-radius:8px;
 background:var(--al-bg);margin:0 0 8px 0;padding:6px 12px 8px 12px}
.al-card-user{border-left-color:var(--al-user)}.al-card-assistant{border-left-color:var(--al-assistant)}
.al-card-results{border-left-color:var(--al-results)}
.al-card:not([open]){padding-bottom:6px}
.al-page:not(:last-child){content-visibility:auto;contain-intrinsic-size:auto 2000px}
summary.al-head{display:flex;gap:8px;align-items:baseline;font-size:12px;margin:0 0 2px 0;
 cursor:pointer;list-style:none;min-width:0}
summary.al-head::-webkit-details-marker{display:none}
summary.al-head::before{content:"▸";color:var(--al-muted);width:.8em}
details[open]>summary.al-head::before{content:"▾"}
.al-preview{color:var(--al-muted);overflow:hidden;text-overflow:ellipsis;white-space:nowrap;min-width:0}
details[open]>summary .al-preview{display:none}
.al-role{font-weight:650;text-transform:uppercase;letter-spacing:.05em;font-size:11px;
 white-space:nowrap;flex:none}
.al-role-user{color:var(--al-user)}.al-role-assistant{color:var(--al-assistant)}
.al-role-results{color:var(--al-results)}
.al-idx{font-family:var(--jp-code-font-family,ui-monospace,monospace);color:var(--al-muted);font-size:11px;
 white-space:nowrap;flex:none}
.al-muted{color:var(--al-muted)}
.al-text{overflow-wrap:anywhere}
.al-text p{margin:.35em 0}.al-text ul,.al-text ol{margin:.3em 0;padding-left:1.6em}
.al-text h1,.al-text h2,.al-text h3,.al-text h4{font-size:1.05em;margin:.5em 0 .3em 0}
.al-text pre,.al-code{font-family:var(--jp-code-font-family,ui-monospace,SFMono-Regular,Menlo,monospace);
 font-size:12px;line-height:1.45;background:var(--al-bg2);color:var(--al-fg);border-radius:6px;
 padding:6px 9px;margin:4px 0;white-space:pre-wrap;overflow-wrap:anywhere;max-height:none}
.al-text code{font-family:var(--jp-code-font-family,ui-monospace,monospace);font-size:12px;
 background:var(--al-bg2);border-radius:4px;padding:0 3px}
.al-text pre code{background:none;padding:0}
.al-text table{border-collapse:collapse}.al-text td,.al-text th{border:1px solid var(--al-border);padding:2px 6px}
.al-block{border:1px solid var(--al-border);border-left:4px solid var(--al-muted);
 border-radius:6px;padding:4px 9px 5px 9px;margin:5px 0;background:var(--al-bg)}
.al-bhead{display:flex;flex-wrap:wrap;gap:6px;align-items:center;font-size:12px}
.al-kind{font-family:var(--jp-code-font-family,ui-monospace,monospace);font-weight:600}
.al-name{font-family:var(--jp-code-font-family,ui-monospace,monospace);font-weight:700}
.al-id{font-family:var(--jp-code-font-family,ui-monospace,monospace);font-size:11px;color:var(--al-muted)}
.al-badge{display:inline-block;border-radius:10px;padding:0 7px;font-size:11px;font-weight:700;
 color:#fff;line-height:18px;white-space:nowrap;background:color-mix(in srgb,var(--al-pair,#57606a) 68%,#000)}
.al-tag{display:inline-block;border-radius:10px;padding:0 7px;font-size:11px;line-height:18px;
 border:1px solid currentColor}
.al-note{font-size:11px;color:var(--al-muted);margin-left:auto}
.al-prompt{color:var(--al-muted);user-select:none}
.al-ran{font-size:12px;margin-top:2px}
.al-thinking{border-left-color:var(--al-border);font-size:12px}
.al-thinking>summary{cursor:pointer;color:var(--al-muted)}
.al-flag{border:1px solid var(--al-bad);border-radius:6px;padding:5px 9px;margin:6px 0 2px 0;font-size:12px}
.al-flag b{color:var(--al-bad)}
.al-hint{color:var(--al-muted);margin-top:2px}
details.al-more>summary{cursor:pointer;font-size:12px;color:var(--al-link);margin:2px 0}
.al-summary{font-size:12px;color:var(--al-muted);margin:0 0 6px 2px}
.al-ok{color:var(--al-ok)}.al-bad{color:var(--al-bad)}.al-wait{color:var(--al-wait)}
table.al-pairs{border-collapse:collapse;font-size:12px;width:100%}
/* JupyterLab and nbconvert set table-layout:fixed on output tables: columns as wide as their text */
.al-root table.al-pairs{table-layout:auto}
table.al-pairs th{text-align:left;font-weight:600;color:var(--al-muted);
 border-bottom:1px solid var(--al-border);padding:3px 8px}
table.al-pairs td{border-bottom:1px solid var(--al-border);padding:3px 8px;
 vertical-align:top;white-space:nowrap;text-align:left}
table.al-pairs td.al-wrap{white-space:normal;overflow-wrap:anywhere}
/* the input: the column that takes the room left, one line cut with "…"; a click opens it whole */
table.al-pairs td.al-cut{width:100%;max-width:0;min-width:16ch}
td.al-cut summary{display:block;overflow:hidden;text-overflow:ellipsis;white-space:nowrap;cursor:pointer}
td.al-cut details[open]>summary{white-space:pre-wrap;overflow-wrap:anywhere}
table.al-pairs td.al-mono{font-family:var(--jp-code-font-family,ui-monospace,monospace)}
.al-tablebox{overflow-x:auto;max-width:100%}
/* an HTML widget's box may shrink below its content's width, so a wide table scrolls in
   .al-tablebox instead of pushing the view's column wider than the screen */
.al-root .widget-html-content{min-width:0}
.al-section{font-weight:650;font-size:12px;letter-spacing:.03em;text-transform:uppercase;
 color:var(--al-muted);margin:10px 0 4px 2px}
.al-section:lang(zh){text-transform:none;letter-spacing:0}
.al-panel>.al-section:first-child,.al-stream>.al-section:first-child{margin-top:0}
.al-panel{border:1px solid var(--al-border);border-radius:8px;padding:8px 12px;
 background:var(--al-bg);margin:0 0 8px 0}
.al-decision .al-why{margin-top:3px}
.al-errorbox{border:1px solid var(--al-bad);border-left-width:4px;border-radius:8px;padding:8px 12px;
 margin:0 0 8px 0;background:var(--al-bg)}
.al-errorbox b{color:var(--al-bad)}
.al-ended{border:1px solid var(--al-wait);border-left-width:4px;border-radius:8px;padding:8px 12px;
 margin:0 0 8px 0;background:var(--al-bg)}
.al-ended b{color:var(--al-wait)}
.al-approval{border:1px solid var(--al-wait);border-left-width:4px;border-radius:8px;padding:8px 12px;
 margin:8px 0;background:var(--al-bg)}
.al-approval .al-code{max-height:16em;overflow:auto}  /* a long call scrolls; the buttons stay near */
/* the pending command, whole: never folded, never wrapped (a run of spaces stays a run) */
.al-approval pre.al-whole{white-space:pre;overflow:auto;overflow-wrap:normal;max-height:18em}
.al-spaces{background:color-mix(in srgb,var(--al-wait) 22%,transparent);border-radius:2px}
/* what the last stage added: a ring in the accent colour, and a tag */
.al-fresh{box-shadow:0 0 0 2px color-mix(in srgb,var(--jp-brand-color1,#0969da) 55%,var(--al-fg))}
.al-fresh-tag{color:var(--al-link);flex:none}
.al-did{font-size:12px;margin:2px 0 0 0;color:var(--al-fg)}
.al-did b{color:var(--al-link)}
.al-stream{border:1px dashed var(--al-assistant);border-radius:8px;padding:6px 12px;margin:0 0 8px 0;
 white-space:pre-wrap}
.al-status{font-size:12px;color:var(--al-muted)}
.al-title{font-size:16px;font-weight:700}
.al-loop{border:1px solid var(--al-border);border-radius:12px;padding:12px 16px 14px 16px;
 background:var(--al-bg);max-width:100%;box-sizing:border-box}
.al-pinner{cursor:pointer;user-select:none;position:relative}
.al-pin{position:absolute;opacity:0;width:1px;height:1px;margin:0;pointer-events:none}
.al-pinner:has(.al-pin:focus-visible){outline:2px solid var(--al-fg);outline-offset:2px}
.al-pinner:has(.al-pin:checked){box-shadow:0 0 0 2px var(--al-bg),0 0 0 3.5px var(--al-fg)}
.al-about{font-size:12px;color:var(--al-muted);margin:2px 4px 8px 4px}
.al-keys{font-size:11px;color:var(--al-muted);margin:4px 2px}
.al-keys kbd{border:1px solid var(--al-border);border-radius:3px;padding:0 3px;font-size:11px}
.al-totals{font-size:12px;margin:0 0 6px 0}
.al-diagram svg,.al-panel svg{max-width:100%;height:auto}
.al-totals{overflow-wrap:anywhere}
.al-root .jupyter-button.mod-primary,.al-root .jupyter-button.mod-success,
.al-root .jupyter-button.mod-warning,.al-root .jupyter-button.mod-danger{color:#fff}
.al-root .jupyter-button.mod-primary{background-color:color-mix(in srgb,var(--jp-brand-color1,#1976d2) 65%,#000)}
.al-root .jupyter-button.mod-success{background-color:color-mix(in srgb,var(--jp-success-color1,#388e3c) 65%,#000)}
.al-root .jupyter-button.mod-warning{background-color:color-mix(in srgb,var(--jp-warn-color1,#f57c00) 65%,#000)}
.al-root .jupyter-button.mod-danger{background-color:color-mix(in srgb,var(--jp-error-color1,#d32f2f) 65%,#000)}
.al-loop .al-scroll{max-height:75vh;overflow-y:auto;flex-direction:column-reverse!important;
 overscroll-behavior:contain}
.al-loop .al-scroll>*{flex-shrink:0}  /* the cards overflow the box (it scrolls), not the page */
.al-columns{display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start;margin-top:8px}
.al-left{flex:0 1 420px;min-width:0}
.al-right{flex:1 1 340px;min-width:0}
/* the todo panel: each item's status is a mark and a word, never a colour alone */
ol.al-todo{list-style:none;margin:4px 0;padding:0}
ol.al-todo li{display:flex;gap:6px;align-items:baseline;padding:2px 0;min-width:0}
.al-todo-mark{font-family:var(--jp-code-font-family,ui-monospace,monospace);font-weight:700;flex:none;width:1.4em}
.al-todo-text{overflow-wrap:anywhere;min-width:0;flex:1 1 auto}
.al-todo-completed .al-todo-text{text-decoration:line-through;color:var(--al-muted)}
.al-todo-in_progress .al-todo-text{font-weight:650}
.al-todo-in_progress .al-todo-mark{color:var(--al-link)}
.al-todo-completed .al-todo-mark{color:var(--al-ok)}
.al-todo li .al-tag{flex:none;font-size:10px}
.al-todo li.al-fresh{box-shadow:none;outline:2px solid color-mix(in srgb,var(--jp-brand-color1,#0969da) 55%,var(--al-fg));
 outline-offset:1px;border-radius:4px}
.al-todo-rounds{font-size:12px;color:var(--al-muted);margin-top:4px}
.al-todo-rounds.al-due{color:var(--al-wait)}
.al-reminder-note{border:1px dashed var(--al-wait);border-radius:6px;padding:4px 8px;margin-top:6px;font-size:12px}
.al-reminder-note b,.al-reminder .al-tag{color:var(--al-wait)}
.al-reminder{border:1px dashed var(--al-wait);border-radius:6px;padding:2px 8px;margin:5px 0}
/* lesson 07: a helper's own LoopView, inside the parent's pending task call */
.al-helper{border-left:4px solid var(--al-assistant);padding:4px 0 4px 10px;margin:0 0 10px 0;min-width:0}
.al-helper-head{font-size:12px;margin:0 0 6px 0}
.al-helper-prompt{font-family:var(--jp-code-font-family,ui-monospace,monospace);overflow-wrap:anywhere;margin:2px 0}
.al-helper .al-loop{padding:8px 10px 10px 10px}
.al-helper .al-helper-title{font-size:14px}
/* histories side by side (HistoryView.side_by_side): columns that stack when narrow */
.al-side{display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start}
.al-side>.al-side-col,.al-side .al-side-col{flex:1 1 320px;min-width:0}
</style>"""
STYLE = STYLE.replace("</style>", PAIR_STYLE + "\n</style>")


# --------------------------------------------------------------------------
# Text
# --------------------------------------------------------------------------


# Characters that reorder or hide text without being seen: bidi controls (an
# "approve" prompt could show a command in another order than it runs), zero-width
# spaces and joiners that split words, the byte-order mark. Shown as escapes instead.
# (ZWJ/ZWNJ, U+200C/D, stay: emoji and several scripts need them.)
_UNSEEN = re.compile(f"[{_BIDI}\u200b\u2060-\u2064\ufeff]")  # terminal's bidi list, and more


def shown(text: str) -> str:
    """``text`` with the characters that reorder or hide text written out (``\\u202e``)."""
    return _UNSEEN.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def escape(value: Any) -> str:
    """Text as HTML text: ``<``, ``>``, ``&`` and quotes can never start a tag, and
    nothing can reorder or hide what is shown (see ``shown``)."""
    return html.escape(shown(str(value)), quote=True)


def tn(key: str, n: int, **values: Any) -> str:
    """``t`` with a count: the sentence picks its own plural (``"{n} {n:line|lines}"``)."""
    return t(key, n=n, **values)


_md: Any = None
LINK_SCHEMES = {"http", "https", "mailto"}


def _markdown_it() -> Any:
    global _md
    if _md is None:
        from markdown_it import MarkdownIt

        # breaks: a single line break in the text shows as one (as chat UIs do), so
        # an answer made of plain lines (a file listing) does not run into one paragraph
        md = MarkdownIt("commonmark", {"html": False, "breaks": True}).enable("table")

        def image(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
            """An image in model text never loads: it becomes a link to it (a fetch from
            an unknown host could carry data out), or just its alt text."""
            token = tokens[idx]
            alt = self.renderInlineAsText(token.children or [], options, env)
            src = str(token.attrGet("src") or "")
            label = f"🖼 {escape(alt or src)}"
            if src.split(":", 1)[0].lower() in ("http", "https"):
                return f'<a href="{escape(src)}">{label}</a>'
            return f"<span>{label}</span>"

        md.add_render_rule("image", image)
        _md = md
    return _md


def markdown(text: str) -> str:
    """Model text as HTML: CommonMark (plus tables) with raw HTML OFF, then sanitised.
    Its line breaks show as written (``<br>``), as in chat UIs.

    Raw HTML in the text comes out escaped (``<script>`` shows as text);
    images become links; ``nh3`` keeps only plain tags, only http(s)/mailto
    link targets (no ``javascript:``, no ``data:``) and marks every link
    ``rel="noopener noreferrer"``.
    """
    import nh3

    tags = set(nh3.ALLOWED_TAGS) - {"img", "map", "area"}
    out = nh3.clean(
        _markdown_it().render(shown(text)),
        tags=tags,
        url_schemes=LINK_SCHEMES,
        link_rel="noopener noreferrer",
    )
    return str(out)


def _fold_note(rest: str) -> str:
    return tn("view.fold.more", len(rest.split("\n")), size=_size(len(rest)))


def fold(text: str, lines: int = FOLD_LINES, chars: int = FOLD_CHARS, prompt: str = "") -> str:
    """Escaped text in a code box; a long one shows its start and folds the rest.
    ``prompt`` (our own markup, such as the shell's ``$``) goes before the text."""
    all_lines = text.split("\n")
    if len(all_lines) <= lines and len(text) <= chars:
        return f'<pre class="al-code">{prompt}{escape(text)}</pre>'
    head = "\n".join(all_lines[:lines])
    if len(head) > chars:
        head = head[:chars]
    rest = text[len(head) :].lstrip("\n")
    return (
        f'<pre class="al-code">{prompt}{escape(head)}</pre>'
        f'<details class="al-more"><summary>{escape(_fold_note(rest))}</summary>'
        f'<pre class="al-code">{escape(rest)}</pre></details>'
    )


_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def _split_markdown(text: str, lines: int, chars: int) -> tuple[str, str]:
    """Cut Markdown after ``lines`` lines (or ``chars`` characters); a fenced
    code block open at the cut is closed in the head and reopened in the rest."""
    all_lines = text.split("\n")
    fence, opener, used = "", "", 0
    for k, line in enumerate(all_lines):
        if k >= lines or used + len(line) > chars:
            head, rest = all_lines[:k], all_lines[k:]
            if k == 0:  # one very long first line
                head, rest = [line[:chars]], [line[chars:], *all_lines[1:]]
            if fence:
                head, rest = [*head, fence], [opener, *rest]
            return "\n".join(head), "\n".join(rest)
        used += len(line) + 1
        m = _FENCE.match(line)
        if m and not fence:
            fence, opener = m.group(1), line
        elif m and fence and m.group(1).startswith(fence) and not line.strip(fence[0] + " "):
            fence, opener = "", ""
    return text, ""


def fold_markdown(text: str, lines: int = TEXT_LINES, chars: int = TEXT_CHARS) -> str:
    """Model text as Markdown; a long one shows its first lines and folds the rest."""
    head, rest = _split_markdown(text, lines, chars)
    if not rest.strip():
        return f'<div class="al-text">{markdown(text)}</div>'
    return (
        f'<div class="al-text">{markdown(head)}'
        f'<details class="al-more"><summary>{escape(_fold_note(rest))}</summary>'
        f"{markdown(rest)}</details></div>"
    )


def _size(n: int) -> str:
    return f"{n} B" if n < 1000 else f"{n / 1000:.1f} kB"


def short_id(tool_id: Any) -> str:
    """``toolu_01A09q90qw90lq917835lq9`` -> ``toolu_…835lq9``: enough to match by eye."""
    s = str(tool_id)
    return s if len(s) <= 14 else f"{s[:6]}…{s[-6:]}"


def section(title: str) -> str:
    """A small upper-case heading over a panel (in Chinese, the English words in it
    keep their case: "HARNESS" and "MESSAGES" read as shouting beside the Chinese)."""
    lang = ' lang="zh"' if get_language() == "zh" else ""
    return f'<div class="al-section"{lang}>{escape(title)}</div>'


def oneline(value: Any, limit: int = 90) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --------------------------------------------------------------------------
# Blocks and cards
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Pair:
    """How one tool_use/tool_result pair is marked: its number and colour."""

    number: int
    id: str
    slot: int = 0  # the k-th tool_use of its message (0: not in a card)

    @property
    def color(self) -> str:
        return PALETTE[(self.number - 1) % len(PALETTE)]

    @property
    def label(self) -> str:
        return f"⇄ {self.number}"


def role_of(message: Any) -> str:
    """``user``, ``assistant``, ``results`` (a user message carrying tool results),
    or ``other`` for anything else (a loaded file may hold any role: it is never
    used as a class name or a key)."""
    role = message.get("role") if isinstance(message, Mapping) else None
    if role == "user" and any(b.get("type") == "tool_result" for b in blocks(message)):
        return "results"
    return role if role in ROLES else "other"


def _role_label(message: Any) -> str:
    role = role_of(message)
    if role == "results":
        return t("role.tool_results")
    if role == "other":
        raw = message.get("role") if isinstance(message, Mapping) else None
        return t("view.role.other", role=oneline(raw, 40))
    return t(f"role.{role}")


def fresh_tag() -> str:
    """The tag on what the last stage added (a card, the results, the decision)."""
    tip = escape(t("view.fresh.tip"))
    return f'<span class="al-tag al-fresh-tag" title="{tip}">{escape(t("view.fresh"))}</span>'


def card_head_html(index: int, message: Any, preview: str = "", fresh: bool = False) -> str:
    role = role_of(message)
    more = f'<span class="al-preview">{escape(preview)}</span>' if preview else ""
    return (
        f'<summary class="al-head"><span class="al-role al-role-{role}">'
        f"{escape(_role_label(message))}</span>"
        f'<span class="al-idx">messages[{index}]</span>{fresh_tag() if fresh else ""}{more}</summary>'
    )


def _command(value: Any) -> str | None:
    """The command of a bash-style input (``{"command": "..."}``), else None."""
    if (
        isinstance(value, Mapping)
        and set(value) == {"command"}
        and isinstance(value["command"], str)
    ):
        return value["command"]
    return None


def _tool_input(value: Any) -> str:
    command = _command(value)
    if command is not None:
        return fold(command, prompt='<span class="al-prompt">$ </span>')
    return fold(json.dumps(value, ensure_ascii=False, indent=2, default=str))


_LONG_SPACES = re.compile(f"( {{{SPACES},}})")


def whole_input_html(value: Any) -> str:
    """A tool call's input all of it, for a person to approve: never folded, not
    wrapped (a box that scrolls both ways), every control or invisible character
    written out as an escape (``agentlab.terminal.visible``), long runs of spaces
    marked."""
    command = _command(value)
    text = command if command is not None else json.dumps(value, ensure_ascii=False, indent=2)
    parts = _LONG_SPACES.split(visible(text))
    body = "".join(
        f'<span class="al-spaces">{part}</span>' if k % 2 else escape(part)
        for k, part in enumerate(parts)
    )
    prompt = '<span class="al-prompt">$ </span>' if command is not None else ""
    return f'<pre class="al-code al-whole">{prompt}{body}</pre>'


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
    """A tool's image: shown only when it is inline base64 data of a plain image type."""
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
        f'<details class="al-more"><summary>{escape(t("view.block.other", kind=oneline(kind, 40)))}'
        f'</summary><pre class="al-code">{escape(body)}</pre></details>'
    )


def _thinking(block: Mapping[str, Any]) -> str:
    """A thinking block: one folded row. Its text when the API returned any; of the
    signature (which must go back unchanged) only its start, end and length."""
    kind = block.get("type")
    if kind == "redacted_thinking":
        label, body = t("view.thinking.redacted"), ""
    else:
        thought = str(block.get("thinking") or "")
        if thought.strip():
            label = tn("view.thinking.shown", len(thought.split("\n")))
            body = fold_markdown(thought)
        else:
            label, body = t("view.thinking.hidden"), ""
    secret = str(block.get("signature") or block.get("data") or "")
    sig = ""
    if secret:
        sig = t("view.thinking.signature", start=secret[:6], end=secret[-4:], n=len(secret))
        sig = f'<div class="al-muted">{escape(sig)}</div>'
    return (
        f'<details class="al-block al-thinking"><summary><span class="al-kind">'
        f"{escape(kind)}</span> · {escape(label)}</summary>{body}{sig}</details>"
    )


def _badge(pair: Pair | None, pin: bool = True) -> str:
    """The pair's badge. Inside a card it holds a hidden checkbox: clicking the
    badge pins the highlight of both halves of the pair (pure CSS, see
    ``PAIR_STYLE``; a live view's script keeps the pin when the card is drawn
    again, see ``agentlab.views.pins``), hovering either half lights up both."""
    if pair is None:
        tip = escape(t("view.pair.unexpected"))
        return f'<span class="al-badge" style="--al-pair:#cf222e" title="{tip}">?</span>'
    style = f'style="--al-pair:{pair.color}"'
    if not pin:
        return f'<span class="al-badge" {style}>{escape(pair.label)}</span>'
    tip = escape(t("view.pair.select"))
    return (
        f'<label class="al-badge al-pinner" {style} title="{tip}">'
        f'<input type="checkbox" class="al-pin">{escape(pair.label)}</label>'
    )


def _ran_html(run: Mapping[str, Any] | None) -> str:
    """Under a tool_use: what the harness really did with it (edited or denied)."""
    if not run:
        return ""
    verdict = run.get("verdict")
    if verdict == "edited":
        command = _command(run.get("input"))
        shown = command if command is not None else json.dumps(run.get("input"), default=str)
        return (
            f'<div class="al-ran"><span class="al-tag al-wait">{escape(t("view.run.edited"))}</span> '
            f"{escape(t('view.run.ran'))} <code>{escape(shown)}</code></div>"
        )
    if verdict == "interrupted" and "duration" in run:  # it had started: say what, and for how long
        tags = [("al-bad", t("view.run.stopped"))] + (
            [("al-wait", t("view.run.edited"))] if run.get("edited") else []
        )
        marks = " ".join(f'<span class="al-tag {css}">{escape(tag)}</span>' for css, tag in tags)
        command = _command(run.get("input"))
        shown = command if command is not None else json.dumps(run.get("input"), default=str)
        seconds = f"{float(run['duration']):.2f} s"
        return (
            f'<div class="al-ran">{marks} {escape(t("view.run.ran"))} <code>{escape(shown)}</code>'
            f' <span class="al-muted">· {seconds}</span></div>'
        )
    if verdict == "denied":
        reason = run.get("reason") or t("view.run.no_reason")
        return (
            f'<div class="al-ran"><span class="al-tag al-bad">{escape(t("view.run.denied"))}</span> '
            f"{escape(reason)}</div>"
        )
    return ""


def block_html(
    block: Mapping[str, Any],
    pair: Pair | None = None,
    note: str = "",
    badge: bool | None = True,
    run: Mapping[str, Any] | None = None,
    whole: bool = False,
) -> str:
    """One content block. ``pair`` marks a tool_use/tool_result with its pair colour;
    ``note`` is a short status line (answered / waiting / answers ...).
    ``badge``: True for a clickable (pinning) badge, False for a plain one, None for none.
    ``run``: what the harness did with a tool_use (``verdict`` and ``input`` from the
    loop's audit), shown when the call was edited or denied. ``whole``: a tool_use's
    input all of it, unfolded (``whole_input_html``: an approval shows what it asks about)."""
    kind = block.get("type")
    if kind == "text":
        return fold_markdown(str(block.get("text", "")))
    if kind in ("thinking", "redacted_thinking"):
        return _thinking(block)
    if kind not in ("tool_use", "tool_result"):
        return _other(block)
    color = pair.color if pair is not None else "#cf222e"
    is_error = kind == "tool_result" and bool(block.get("is_error"))
    classes = "al-block" + (" al-error-block" if is_error else "")
    ident = block.get("id") if kind == "tool_use" else block.get("tool_use_id")
    data = ""
    if pair is not None:
        classes += f" al-pair al-pair-{pair.number}"
        if pair.slot > 0:
            classes += f" al-s{pair.slot}"
        data = f' data-id="{escape(pair.id)}"'  # the views' script keeps pins by tool_use id
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
        shown = whole_input_html if whole else _tool_input
        body = shown(block.get("input")) + _ran_html(run)
    else:
        body = _result_body(block.get("content"))
    return (
        f'<div class="{classes}"{data} style="border-left-color:{color};--al-pair:{color}">'
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


def runs_of(loop: Any) -> dict[str, dict[str, Any]]:
    """What a loop really did with each tool call (``verdict``, ``input``, ``reason``),
    by tool_use id, from its audit; empty for a plain history."""
    return {str(a.get("tool_use_id")): a for a in getattr(loop, "audit", None) or []}


class Marks:
    """Pair numbers, notes and flags for a history, worked out one message at a
    time (the live view does the same as messages arrive). ``runs`` (see
    ``runs_of``) says which calls were edited or denied."""

    def __init__(
        self,
        runs: Mapping[str, Mapping[str, Any]] | None = None,
        reminders: Sequence[int] | set[int] = (),
    ) -> None:
        self.pairs: dict[str, Pair] = {}
        self.notes: dict[str, str] = {}  # tool_use id -> "answered in messages[3]: ok"
        self.problems: dict[int, list[Problem]] = {}  # message index -> rules it breaks
        self.runs: dict[str, Mapping[str, Any]] = dict(runs or {})
        self.slots = 0  # the most tool calls in one message (see ``slots_style``)
        # messages whose text after the tool_results is the harness's reminder (lesson 06):
        # told by a loop's "reminder" event, or found by its wording in a plain history
        self.reminders: set[int] = set(reminders or ())

    def pair_for(self, tool_id: Any, slot: int = 0) -> Pair:
        key = str(tool_id)
        if key not in self.pairs:
            self.pairs[key] = Pair(len(self.pairs) + 1, key, slot)
        return self.pairs[key]

    def add(self, messages: Sequence[Any], i: int) -> tuple[list[str], list[Problem]]:
        """Take in ``messages[i]``. Returns the tool_use ids of ``messages[i-1]``
        whose status changed, and the problems found on message ``i - 1``."""
        message = messages[i]
        prev = messages[i - 1] if i > 0 else None
        uses = [b for b in blocks(message) if b.get("type") == "tool_use"]
        for slot, b in enumerate(uses, 1):
            self.pair_for(b.get("id"), slot)
            self.notes[str(b.get("id"))] = t("view.pair.waiting")
        self.slots = max(self.slots, len(uses))
        if role_of(message) == "results" and any(
            b.get("type") == "text" and b.get("text") == REMINDER for b in blocks(message)
        ):
            self.reminders.add(i)
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


def preview(message: Any) -> str:
    """One short line for a folded card: its text, or its tool calls and results."""
    parts = []
    for b in blocks(message):
        kind = b.get("type")
        if kind == "text":
            parts.append(str(b.get("text", "")))
        elif kind == "tool_use":
            command = _command(b.get("input"))
            parts.append(f"{b.get('name')}: {command if command is not None else b.get('input')}")
        elif kind == "tool_result":
            parts.append(result_text(b.get("content")))
    return oneline(" · ".join(p for p in parts if p.strip()))


def card_html(
    messages: Sequence[Any], i: int, marks: Marks, *, open: bool = True, fresh: bool = False
) -> str:
    """One message as a card (a ``<details>``: folded, it shows one line), with its
    pairs marked and its problems flagged. ``fresh``: the last stage added it (a
    LoopView marks it, ``al-fresh``)."""
    message = messages[i]
    role = role_of(message)
    parts = [card_head_html(i, message, preview(message), fresh)]
    for b in blocks(message):
        if b.get("type") == "tool_use":
            key = str(b.get("id"))
            use_pair = marks.pair_for(key)
            note = marks.notes.get(key, "")
            parts.append(block_html(b, use_pair, note, run=marks.runs.get(key)))
        elif b.get("type") == "tool_result":
            pair = marks.result_pair(messages, i, b)
            parts.append(block_html(b, pair, result_note(i, pair)))
        elif b.get("type") == "text" and i in marks.reminders:
            parts.append(reminder_block_html(block_html(b)))
        else:
            parts.append(block_html(b))
    parts.append(flags_html(marks.problems.get(i, [])))
    flagged = bool(marks.problems.get(i))
    state = " open" if open or flagged else ""
    css = f"al-card al-card-{role}" + (" al-fresh" if fresh else "")
    return f'<details class="{css}"{state}>{"".join(parts)}</details>'


def reminder_block_html(text_html: str) -> str:
    """A text block the harness added after the tool_results (the todo reminder), marked so."""
    tip = escape(t("view.todo.reminder_tag.tip"))
    tag = f'<span class="al-tag" title="{tip}">⚑ {escape(t("view.todo.reminder_tag"))}</span>'
    return f'<div class="al-reminder">{tag}{text_html}</div>'


def todo_html(
    items: Sequence[Mapping[str, Any]],
    rounds_since: int = 0,
    *,
    reminder: tuple[int, str] | None = None,
    changed: Sequence[str] = (),
    remind_after: int = REMIND_AFTER,
) -> str:
    """The plan as the harness holds it (a ``TodoList``'s ``items``): one line per item
    with a mark and a word for its status, the rounds since the last ``todo`` call,
    and ``reminder`` (``(index, text)``: the reminder just added to ``messages[index]``).
    ``changed``: the ids the last ``todo`` call changed, marked."""
    marks = {"pending": "○", "in_progress": "▶", "completed": "✓"}
    rows = []
    for item in items:
        status = str(item.get("status"))
        known = status if status in STATUSES else "pending"  # a class name: never model text
        fresh = str(item.get("id")) in changed
        tag = ""
        if fresh:
            tip = escape(t("view.todo.changed.tip"))
            tag = f'<span class="al-tag al-fresh-tag" title="{tip}">{escape(t("view.todo.changed"))}</span>'
        word = t(f"view.todo.{known}") if status in STATUSES else status
        rows.append(
            f'<li class="al-todo-{known}{" al-fresh" if fresh else ""}">'
            f'<span class="al-todo-mark" aria-hidden="true">{marks[known]}</span>'
            f'<span class="al-todo-text">{escape(item.get("id"))}. {escape(item.get("text"))}</span>'
            f'<span class="al-tag">{escape(word)}</span>{tag}</li>'
        )
    if rows:
        done = sum(1 for i in items if i.get("status") == "completed")
        counts = escape(t("view.todo.counts", done=done, n=len(items)))
        body = f'<div class="al-muted">{counts}</div><ol class="al-todo">{"".join(rows)}</ol>'
    else:
        body = f'<div class="al-muted">{escape(t("view.todo.empty"))}</div>'
    due = " al-due" if rounds_since >= remind_after else ""
    rounds = tn("view.todo.rounds", rounds_since, after=remind_after)
    body += f'<div class="al-todo-rounds{due}">{escape(rounds)}</div>'
    if reminder is not None:
        index, text = reminder
        body += (
            f'<div class="al-reminder-note"><b>⚑ {escape(t("view.todo.reminded", i=index))}</b> '
            f"{escape(text)}</div>"
        )
    return f'<div class="al-panel al-todos">{section(t("view.todo.title"))}{body}</div>'


def is_open(i: int, n: int) -> bool:
    """Cards left open: the task (the first message) and the current turn (the last few)."""
    return i == 0 or i >= n - OPEN_LAST


def summary_html(n_messages: int, n_pairs: int, n_problems: int) -> str:
    counts = " · ".join(
        (tn("view.count.messages", n_messages), tn("view.count.tool_calls", n_pairs))
    )
    if n_problems:
        verdict = f'<span class="al-bad">✗ {escape(tn("view.history.problems", n_problems))}</span>'
    elif n_messages:
        verdict = f'<span class="al-ok">✓ {escape(t("view.history.valid"))}</span>'
    else:
        verdict = escape(t("view.history.empty"))
    return f'<div class="al-summary">{escape(counts)} · {verdict}</div>'


def transcript_html(
    messages: Sequence[Any],
    *,
    with_style: bool = True,
    with_pairs: bool = True,
    runs: Mapping[str, Mapping[str, Any]] | None = None,
    durations: Mapping[str, float] | None = None,
    fresh: int | None = None,
    reminders: Sequence[int] | set[int] = (),
) -> str:
    """A whole history as cards (earlier turns folded), plus its table of tool
    pairs: what a saved notebook shows where widgets cannot run. ``fresh``: the
    index of the card the last stage added, marked as such; ``reminders``: the
    messages whose text after the results the harness added (see ``Marks``)."""
    marks = Marks(runs, reminders)
    n = len(messages)
    for i in range(n):
        marks.add(messages, i)
    cards = "".join(
        card_html(messages, i, marks, open=is_open(i, n), fresh=i == fresh) for i in range(n)
    )
    n_problems = sum(len(v) for v in marks.problems.values())
    table = pairing_table_html(messages, durations, runs) if with_pairs and marks.pairs else ""
    style = (STYLE if with_style else "") + slots_style(marks.slots)
    return (
        f'{style}<div class="al-root">{summary_html(n, len(marks.pairs), n_problems)}'
        f"{cards}{table}</div>"
    )


# --------------------------------------------------------------------------
# Pairings table
# --------------------------------------------------------------------------


CELL_CHARS = 2000  # the pairs table's input cell: one line cut by CSS, the whole on a click


def _summary(value: Any, limit: int = 70) -> str:
    command = _command(value)
    text = command if command is not None else json.dumps(value, ensure_ascii=False, default=str)
    return oneline(text, limit)


def _status(p: Pairing, n_messages: int, run: Mapping[str, Any] | None) -> tuple[str, str]:
    if p.status == "missing" and p.use_index == n_messages - 1:
        return "al-wait", t("view.status.pending")
    if run and run.get("verdict") == "denied":
        return "al-bad", "✗ " + t("view.run.denied")
    if run and run.get("verdict") == "interrupted":
        return "al-bad", "■ " + t("view.run.stopped")
    css = {"ok": "al-ok", "error": "al-bad", "missing": "al-bad"}.get(p.status, "")
    mark = {"ok": "✓ ", "error": "✗ ", "missing": "⚠ "}.get(p.status, "")
    return css, mark + t(f"view.status.{p.status}")


def pairing_rows_html(
    rows: Sequence[Pairing],
    n_messages: int,
    durations: Mapping[str, float] | None = None,
    runs: Mapping[str, Mapping[str, Any]] | None = None,
    first: int = 1,
) -> list[str]:
    """The table's rows (``<tr>``) for ``rows``, numbered from ``first`` as the
    cards number their pairs. ``n_messages``: the history's length (a call in
    the last message is waiting for its results)."""
    numbers = {p.id: k for k, p in enumerate(rows, first)}
    body = []
    for p in rows:
        run = (runs or {}).get(p.id)
        css, status = _status(p, n_messages, run)
        seconds = (durations or {}).get(p.id)
        denied = bool(run and run.get("verdict") == "denied")
        duration = f"{seconds:.2f} s" if seconds is not None and not denied else "—"
        full = _summary(p.input, CELL_CHARS)
        shown = escape(full)
        edited = bool(run and (run.get("verdict") == "edited" or run.get("edited")))
        if run and edited:
            tag = f'<span class="al-tag al-wait">{escape(t("view.run.edited"))}</span>'
            ran = _summary(run.get("input"), CELL_CHARS)
            asked = t("view.run.asked", input=full)
            shown = f'{tag} {escape(ran)} <span class="al-muted">{escape(asked)}</span>'
            full = f"{t('view.run.edited')} {ran} {asked}"
        pair = Pair(numbers[p.id], p.id)
        row = f'class="al-pair al-pair-{pair.number}" style="--al-pair:{pair.color}"'
        body.append(
            f"<tr {row}><td>{_badge(pair, pin=False)}</td><td>{int(p.turn)}</td>"
            f'<td class="al-mono" title="{escape(p.id)}">{escape(short_id(p.id))}</td>'
            f'<td class="al-mono">{escape(p.name)}</td>'
            f'<td class="al-mono al-cut"><details><summary title="{escape(full)}">{shown}'
            "</summary></details></td>"
            f'<td class="{css}">{escape(status)}</td><td>{duration}</td></tr>'
        )
    return body


def pairing_table(body: Sequence[str]) -> str:
    """The table around rows made by ``pairing_rows_html`` (a note if there are none)."""
    if not body:
        return f'<div class="al-muted">{escape(t("view.pairs.empty"))}</div>'
    head = "".join(
        f"<th>{escape(t(f'view.pairs.{c}'))}</th>"
        for c in ("pair", "turn", "id", "tool", "input", "status", "duration")
    )
    title = section(t("view.pairs.title"))
    return (
        f'{title}<div class="al-tablebox"><table class="al-pairs"><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )


def pairing_table_html(
    messages: Sequence[Any],
    durations: Mapping[str, float] | None = None,
    runs: Mapping[str, Mapping[str, Any]] | None = None,
) -> str:
    """One row per tool_use: turn, id, tool, input (what really ran, if it was
    edited), result status (denied, if it was), duration."""
    return pairing_table(pairing_rows_html(pairings(messages), len(messages), durations, runs))


# --------------------------------------------------------------------------
# The loop's state: decision, tokens, totals, errors, a finished run
# --------------------------------------------------------------------------


def ended_text(ended: str | None, stop_reason: str | None) -> str:
    """Why a loop ended, in words: ``ended: turn limit``, or the model's stop_reason."""
    if ended in (None, "model"):
        if stop_reason is None:  # a loop that started on the model's answer (no reply of its own)
            return t("view.ended.answer")
        return t("view.ended.model", reason=stop_reason)
    return t("view.ended.other", why=t(f"view.ended.{ended}"))


def decision_html(
    decision: Any, answered: str | None = None, note: str = "", fresh: bool = False
) -> str:
    """The last Decision: stop reason, what the harness does, and why.

    ``answered``: the stop_reason of a reply that is in but not decided yet (the
    loop's next stage is decide), so the box never says the model has not answered.
    ``note``: what to say instead when no decision was made (a loop that started
    on a history ending with the model's turn says what it does with it).
    ``fresh``: the decide stage has just made it (marked as what the stage added).
    """
    title = section(t("view.decision.title"))
    if fresh:
        title = title.replace("</div>", f" {fresh_tag()}</div>", 1)
    if decision is None:
        if note:
            text = note
        elif answered is not None:
            text = t("view.decision.pending", reason=answered)
        else:
            text = t("view.decision.none")
        return f'<div class="al-panel al-decision">{title}<div class="al-muted">{escape(text)}</div></div>'
    action = t(f"view.action.{decision.action}")
    css = {"execute": "al-wait", "stop": "al-ok", "continue": ""}.get(decision.action, "")
    line = (
        f'<code>stop_reason = "{escape(decision.reason)}"</code> → '
        f'<b class="{css}">{escape(action)}</b>'
    )
    css = "al-panel al-decision" + (" al-fresh" if fresh else "")
    return (
        f'<div class="{css}">{title}<div>{line}</div>'
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
    left, right, top_pad, bottom = (
        max(36, 10 + 7 * len(str(top))),
        8,
        22,
        18,
    )  # room for the top label
    plot_w, plot_h = width - left - right, height - top_pad - bottom
    group = plot_w / len(values)
    bar = max(3.0, min(14.0, group / 4))
    muted = 'style="fill:var(--al-muted,#57606a)"'
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" font-family="system-ui,sans-serif" font-size="10">',
        f"<title>{escape(t('view.tokens.title'))}</title>",
    ]
    x = left
    for key, color in TOKEN_COLORS.items():  # legend
        parts.append(f'<rect x="{x}" y="4" width="9" height="9" rx="2" fill="{color}"/>')
        label = t(f"view.tokens.{key}")
        parts.append(f'<text x="{x + 13}" y="12" {muted}>{escape(label)}</text>')
        x += 22 + 7 * len(label)
    base = top_pad + plot_h
    parts.append(
        f'<line x1="{left}" y1="{base}" x2="{width - right}" y2="{base}" '
        'style="stroke:var(--al-border,#d0d7de)"/>'
    )
    parts.append(f'<text x="{left - 4}" y="{top_pad + 8}" text-anchor="end" {muted}>{top}</text>')
    parts.append(f'<text x="{left - 4}" y="{base}" text-anchor="end" {muted}>0</text>')
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
        parts.append(f'<text x="{cx:.1f}" y="{height - 4}" text-anchor="middle" {muted}>{n}</text>')
    parts.append("</svg>")
    return "".join(parts)


def totals_html(usage: Mapping[str, int], dollars: float | None, model: str | None = None) -> str:
    """The conversation so far: tokens in and out, and the estimated cost."""
    cached = int(usage.get("cache_read_input_tokens", 0)) + int(
        usage.get("cache_creation_input_tokens", 0)
    )
    text = t(
        "view.totals",
        input=int(usage.get("input_tokens", 0)) + cached,
        output=int(usage.get("output_tokens", 0)),
    )
    if dollars is not None:
        text += " · " + t("view.totals.cost", dollars=dollars)
    elif model:
        text += " · " + t("view.totals.no_price", model=model)
    return f'<div class="al-totals">{escape(text)}</div>'


def tokens_html(turn_usage: Sequence[Mapping[str, int]], totals: str = "") -> str:
    if not turn_usage:
        return ""
    title = section(t("view.tokens.title"))
    return f'<div class="al-panel">{title}{totals}{tokens_svg(turn_usage)}</div>'


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
    """A LoopResult: the final answer on top (or why the run ended without one),
    this run's transcript folded below."""
    shown = getattr(result, "new_messages", result.messages)
    ended = getattr(result, "ended", None)
    notice = ""
    if ended not in (None, "model"):
        why = escape(ended_text(ended, result.stop_reason))
        notice = f'<div class="al-ended"><b>■ {why}</b> {escape(result.explanation or "")}</div>'
    if result.text:
        answer = fold_markdown(result.text)
    elif notice:
        answer = ""
    else:
        answer = (
            f'<div class="al-muted">{escape(result.explanation or str(result.stop_reason))}</div>'
        )
    head = tn("view.result.transcript", len(shown))
    return (
        f'{STYLE}<div class="al-root"><div class="al-panel">{notice}{answer}'
        f'<details class="al-more"><summary>{escape(head)}</summary>'
        f"{transcript_html(shown, with_style=False)}</details></div></div>"
    )


# --------------------------------------------------------------------------
# Markdown (``_repr_markdown_``): model text that cannot link or load anything
# --------------------------------------------------------------------------

# A code span as CommonMark reads it: a run of backticks not next to another
# backtick or after a backslash, closed by a run of exactly the same length; on one
# line only. A span over lines is not kept as it is: a blank line, or a line that
# starts an HTML block, ends the paragraph first, and what stood between the
# backticks would be read as Markdown and HTML (spec.commonmark.org/0.31.2, 4.6
# and 6.1: block structure is read before inline).
_CODE_SPAN = re.compile(r"(?<![`\\])(`+)(?!`)([^\n]+?)(?<!`)\1(?!`)")


def _md_text(text: str) -> str:
    """Model text for a Markdown page: its emphasis and code stay, but it can make
    no link, image or HTML: ``[``, ``]`` and ``<`` are escaped outside code spans
    (so ``[x](javascript:...)`` is plain text), ``&`` and a lone backtick too."""
    out, last = [], 0
    for m in _CODE_SPAN.finditer(text):
        if "|" in m.group(0):  # in a table row a pipe ends the cell, span or not (GFM
            continue  # spec, 4.10 Tables): the rest of it would be read as HTML: plain text
        out.append(_md_plain(text[last : m.start()]))
        out.append(m.group(0))
        last = m.end()
    out.append(_md_plain(text[last:]))
    return "".join(out)


def _md_span(value: Any) -> str:
    """``value`` (an id) as one code span: on one line, fenced by more backticks than
    it holds, so nothing in it is read as Markdown."""
    text = " ".join(str(value).split())
    fence = "`" * (max((len(m) for m in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""  # CommonMark drops it
    return f"{fence}{pad}{text}{pad}{fence}"


def _md_plain(text: str) -> str:
    """Text outside code spans: a backtick left here pairs with none in it, so it is
    escaped too (it could pair with a span that comes after, and open it early)."""
    text = text.replace("\\", "\\\\").replace("&", "&amp;").replace("<", "&lt;")
    return text.replace("[", "\\[").replace("]", "\\]").replace("`", "\\`")


def _md_code(text: str, info: str = "") -> str:
    """A fenced block longer than any run of backticks inside, so nothing escapes it."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text}\n{fence}"


def result_markdown(result: Any) -> str:
    """A LoopResult as Markdown (GitHub, Markdown exports): the answer, then the
    transcript in a ``<details>``. Text is escaped so it links and loads nothing;
    tool input and output sit in fenced code blocks."""
    shown = getattr(result, "new_messages", result.messages)
    ended = getattr(result, "ended", None)
    lines: list[str] = []
    if ended not in (None, "model"):
        lines += [f"**{_md_text(ended_text(ended, result.stop_reason))}**", ""]
    if result.text:
        lines += [_md_text(result.text), ""]
    elif result.explanation:
        lines += [f"*{_md_text(result.explanation)}*", ""]
    lines += [f"<details><summary>{escape(tn('view.result.transcript', len(shown)))}</summary>", ""]
    start = getattr(result, "start", 0)
    for k, message in enumerate(shown):
        lines += [f"**{start + k}. {_md_text(_role_label(message))}**", ""]
        for b in blocks(message):
            kind = b.get("type")
            if kind == "text":
                lines += [_md_text(str(b.get("text", ""))), ""]
            elif kind == "tool_use":
                name = _md_text(str(b.get("name")))
                lines += [f"tool_use {name}", "", _md_code(_summary(b.get("input"), 10_000)), ""]
            elif kind == "tool_result":
                flag = " (is_error)" if b.get("is_error") else ""
                lines += [f"tool_result{flag}", "", _md_code(result_text(b.get("content"))), ""]
            elif kind in ("thinking", "redacted_thinking"):
                lines += [f"*{_md_text(kind)}*", ""]
            else:
                lines += [f"*{_md_text(t('view.block.other', kind=oneline(kind, 40)))}*", ""]
    lines += ["</details>", ""]
    return "\n".join(lines)


def to_markdown(messages: Sequence[Any]) -> str:
    """A readable transcript: one section per message, tools as code blocks.

    Text keeps its emphasis and code spans but makes no HTML, link or image
    (``_md_text``): shown with IPython's ``Markdown`` it cannot run or load anything."""
    parts = []
    for i, message in enumerate(messages):
        role = message.get("role") if isinstance(message, Mapping) else None
        label = t(f"role.{role}") if role in ("user", "assistant") else str(role)
        if role == "user" and any(b.get("type") == "tool_result" for b in blocks(message)):
            label = t("role.tool_results")
        lines = [f"**{i}. {_md_text(label)}**", ""]
        for b in blocks(message):
            kind = b.get("type")
            if kind == "text":
                lines += [_md_text(str(b.get("text", ""))), ""]
            elif kind == "tool_use":
                args = json.dumps(b.get("input"), ensure_ascii=False)
                fence = _fence(args)  # longer than any run of backticks inside
                lines += [
                    f"`tool_use` **{_md_text(str(b.get('name')))}** {_md_span(b.get('id'))}",
                    "",
                    f"{fence}json",
                    args,
                    fence,
                    "",
                ]
            elif kind == "tool_result":
                flag = " (is_error)" if b.get("is_error") else ""
                text = result_text(b.get("content"))
                fence = _fence(text)
                lines += [
                    f"`tool_result` for {_md_span(b.get('tool_use_id'))}{flag}",
                    "",
                    f"{fence}text",
                    text,
                    fence,
                    "",
                ]
            elif kind == "thinking":
                thought = str(b.get("thinking") or "")
                head = "`thinking`" if thought else f"`thinking` ({t('md.thinking.omitted')})"
                lines += [f"{head} · {_secret('signature', b.get('signature'))}", ""]
                if thought:
                    fence = _fence(thought)
                    lines += [f"{fence}text", thought, fence, ""]
            elif kind == "redacted_thinking":
                what = t("md.thinking.redacted")
                lines += [f"`redacted_thinking` ({what}) · {_secret('data', b.get('data'))}", ""]
            else:
                lines += [f"{_md_span(kind)} block", ""]
        parts.append("\n".join(lines))
    return "\n".join(parts)


def _secret(name: str, value: Any) -> str:
    """An opaque value (a signature) shown by its start and size, never in full."""
    text = str(value or "")
    start = text[: min(8, len(text) // 2)]
    return t("md.thinking.opaque", name=name, start=_md_span(start + "…"), n=len(text))


def _fence(text: str) -> str:
    fence = "```"
    while fence in text:
        fence += "`"
    return fence
