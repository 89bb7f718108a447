"""HTML of the views, without widgets: escaping, pairs, flags, diagram, charts."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentlab.diagram import diagram_svg
from agentlab.history import validate
from agentlab.i18n import EN, ZH, set_language
from agentlab.loop import LoopResult
from agentlab.render import (
    block_html,
    fold,
    markdown,
    pairing_table_html,
    result_html,
    short_id,
    tokens_svg,
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


def assert_inert(html: str) -> None:
    """No script tag, no event handler, no image unless it is inline data."""
    tags = Tags(html)
    assert "script" not in tags.names()
    assert not {a for a in tags.attributes() if a.startswith("on")}
    for tag, attrs in tags.tags:
        if tag == "img":
            assert str(attrs.get("src", "")).startswith("data:image/")
        if tag == "a":
            assert not str(attrs.get("href", "")).lower().startswith("javascript")


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
    assert all(s == "next" for n, s in states.items() if n in lit)
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
