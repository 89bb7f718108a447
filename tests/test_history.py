import json
import re
from unittest import mock

import anthropic
import pytest

import agentlab as al
from agentlab.fakeapi.offline import ScriptedClient, make_message, text, tool_use
from agentlab.history import HistoryFileError, check_at, check_next, pairings, validate
from agentlab.views.render import to_markdown

TASK = {"role": "user", "content": "How many files?"}


def use(id, name="bash", command="ls"):
    return {"type": "tool_use", "id": id, "name": name, "input": {"command": command}}


def result(id, content="ok", **kw):
    return {"type": "tool_result", "tool_use_id": id, "content": content, **kw}


def asst(*blocks):
    return {"role": "assistant", "content": list(blocks)}


def user(*blocks):
    return {"role": "user", "content": list(blocks)}


def messages_of(problems):
    return [str(p) for p in problems]


def test_a_good_history_has_no_problems():
    h = [
        TASK,
        asst(text("Let me look."), use("t1"), use("t2")),
        user(result("t1"), result("t2")),
        asst(text("2")),
    ]
    assert validate(h) == []


def test_unanswered_tool_use_is_worded_like_the_api():
    h = [TASK, asst(use("toolu_A"), use("toolu_B")), user(result("toolu_A"))]
    [p] = validate(h)
    assert str(p) == (
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: "
        "toolu_B. Each `tool_use` block must have a corresponding `tool_result` block in the next message."
    )
    assert p.rule == "unanswered" and p.index == 1 and "tool_result" in p.hint


def test_history_ending_on_a_tool_use_is_only_ok_while_pending():
    h = [TASK, asst(use("t1"))]
    assert messages_of(validate(h))[0].startswith("messages.1: `tool_use` ids were found")
    assert validate(h, pending_ok=True) == []


def test_unexpected_result_id():
    h = [TASK, asst(use("t1")), user(result("t1"), result("t9"))]
    [p] = validate(h)
    assert str(p).startswith(
        "messages.2.content.1: unexpected `tool_use_id` found in `tool_result` blocks: t9."
    )
    assert p.rule == "unexpected_result"


def test_results_must_come_first():
    h = [TASK, asst(use("t1")), user(text("here you go"), result("t1"))]
    problems = validate(h)
    assert any(
        str(p).startswith(
            "messages.2: Did not find 1 `tool_result` block(s) at the beginning of this message."
        )
        for p in problems
    )


def test_text_after_results_is_fine():
    assert validate([TASK, asst(use("t1")), user(result("t1"), text("and also this"))]) == []


def test_duplicate_ids_empty_content_empty_text_bad_role_first_role():
    assert "messages.1.content.1: `tool_use` ids must be unique" in messages_of(
        validate([TASK, asst(use("t1"), use("t1")), user(result("t1"))])
    )
    assert messages_of(validate([{"role": "user", "content": ""}])) == [
        "messages.0: all messages must have non-empty content except for the optional final assistant message"
    ]
    assert (
        validate([TASK, {"role": "assistant", "content": []}]) == []
    )  # optional final assistant message
    assert "messages: text content blocks must be non-empty" in messages_of(
        validate([user(text("hi"), {"type": "text", "text": ""})])
    )
    assert "messages: text content blocks must contain non-whitespace text" in messages_of(
        validate([user(text("  "))])
    )
    # The roles come from the SDK's MessageParam (anthropic 2.14: user, assistant, system).
    assert messages_of(validate([{"role": "bot", "content": "x"}])) == [
        "messages.0.role: Input should be 'user', 'assistant' or 'system'"
    ]
    # A system message is accepted mid-conversation, but the first message is the user's
    # (Sonnet 5.5 migration guide, checked 2026-11-30: as the first message the API asks for the
    # top-level system parameter; its exact words are not public, we use the first-role rule).
    assert messages_of(validate([{"role": "system", "content": "x"}])) == [
        'messages: first message must use the "user" role'
    ]
    assert validate([TASK, {"role": "system", "content": "Be brief."}, TASK]) == []
    assert 'messages: first message must use the "user" role' in messages_of(
        validate([asst(text("hi"))])
    )


def test_results_in_an_assistant_message_are_rejected():
    h = [TASK, asst(use("t1")), asst(result("t1"))]
    problems = messages_of(validate(h))
    assert "messages.2: `tool_result` blocks can only be in `user` messages" in problems
    assert any("were found without `tool_result` blocks" in p for p in problems)


def test_sdk_objects_in_the_history_are_read_like_dicts():
    reply = make_message([text("hi"), tool_use("bash", {"command": "ls"}, id="t1")])
    h = [TASK, {"role": "assistant", "content": reply.content}]
    assert validate(h, pending_ok=True) == []
    assert messages_of(validate(h))[0].startswith("messages.1: `tool_use` ids")


def test_check_next_sees_only_the_last_message():
    h = [TASK, asst(use("t1"))]
    assert check_next(h, user(result("t1"))) == []
    assert [p.rule for p in check_next(h, user(text("next question")))] == ["results_first"]
    assert [p.rule for p in check_next(h, asst(text("hm")))] == ["unanswered"]


def test_check_next_cost_does_not_grow_with_the_history():
    # check_next must never walk the history: a list that explodes on iteration proves it.
    class NoWalk(list):
        def __iter__(self):
            raise AssertionError("check_next walked the whole history")

    h = NoWalk([TASK, asst(text("a"))] * 1000 + [TASK, asst(use("t1"))])
    assert check_next(h, user(result("t1"))) == []


def test_pairings_status():
    h = [
        TASK,
        asst(use("t1"), use("t2"), use("t3")),
        user(result("t1"), result("t2", "boom", is_error=True), result("t3")),
        asst(use("t4", name="search")),
    ]
    ps = pairings(h)
    assert [(p.id, p.status, p.turn) for p in ps] == [
        ("t1", "ok", 1),
        ("t2", "error", 1),
        ("t3", "ok", 1),
        ("t4", "missing", 2),
    ]
    assert ps[1].result == "boom" and ps[3].name == "search" and ps[3].result_index is None


def test_save_and_load_round_trip_exactly(tmp_path):
    reply = make_message([text("ünïcode ✓"), tool_use("bash", {"command": "ls"}, id="t1")])
    h = [TASK]
    al.append(h, reply)
    al.append(h, [result("t1", "a\nb")])
    path = al.save(h, tmp_path / "h.json")
    assert al.load(path) == h
    assert json.loads(path.read_text("utf-8")) == h


def test_load_rejects_non_lists(tmp_path):
    p = tmp_path / "x.json"
    p.write_text('{"role": "user"}')
    with pytest.raises(al.HistoryError):
        al.load(p)


def test_to_markdown_shows_every_block():
    h = [
        TASK,
        asst(text("Looking."), use("t1", command="ls -la")),
        user(result("t1", "a.py", is_error=True)),
    ]
    md = to_markdown(h)
    assert "How many files?" in md and "ls -la" in md and "`tool_result` for `t1` (is_error)" in md
    assert "user (tool results)" in md


def test_to_markdown_keeps_tool_input_and_output_inside_their_code_blocks():
    # A tool's output (or a model's tool input) holding ``` must not close the fence
    # early: what follows would be read as Markdown, raw HTML included.
    from markdown_it import MarkdownIt

    output = "```\n<img src=x onerror=alert(1)>\n````"
    command = "printf '```\n<b>x</b>'"
    h = [TASK, asst(use("t1", command=command)), user(result("t1", output))]
    tokens = MarkdownIt("commonmark").parse(to_markdown(h))
    fences = [tok.content for tok in tokens if tok.type == "fence"]
    assert fences == [json.dumps({"command": command}) + "\n", output + "\n"]
    assert not [tok for tok in tokens if tok.type.startswith("html")]


def test_to_markdown_lets_model_text_make_no_html_link_or_image():
    # Lesson 01 shows to_markdown with IPython's Markdown(): in a trusted JupyterLab
    # output raw HTML is not sanitised, so model text like <img onerror=...> would run.
    # As render.result_markdown does: emphasis and code stay, HTML and links do not.
    from markdown_it import MarkdownIt

    hostile = (
        "See `a<b>` and <img src=x onerror=alert(1)> [x](javascript:alert(2)) ![i](http://e/x)"
    )
    h = [{"role": "user", "content": "<b>hi</b>"}, asst(text(hostile))]
    tokens = MarkdownIt("commonmark").parse(to_markdown(h))
    inline = [c for tok in tokens for c in (tok.children or [])]
    kinds = {c.type for c in inline}
    assert not kinds & {"html_inline", "link_open", "image"}
    assert not [tok for tok in tokens if tok.type == "html_block"]
    assert "a<b>" in [c.content for c in inline if c.type == "code_inline"]  # code kept as is
    shown = "".join(c.content for c in inline if c.type == "text")
    assert "<img src=x onerror=alert(1)>" in shown and "<b>hi</b>" in shown  # as text


# -- the API's schema, read from the SDK's request types -------------------------------------
#
# Sources for the wording: the API validates request bodies with pydantic and answers
# with its messages prefixed by the path, e.g. "<field>: Extra inputs are not permitted"
# (public docs and error reports, 2026) and
# "messages.0.content.1.tool_use.input: Input should be a valid dictionary" (issue 13).
# pydantic's own texts ("Field required", "Input should be a valid boolean", "Input tag
# 'x' found using 'type' does not match any of the expected tags: ...", "Unable to extract
# tag using discriminator 'type'") are those of docs.pydantic.dev/latest/errors/
# validation_errors/, and test_schema_words_are_pydantics below checks them against the
# installed pydantic. Not known from public material: which one error the API shows when
# pydantic has several (we show the first, in the SDK's field order), and its words for
# content that is neither a string nor a list (we say "a valid list").

TOOL = use("t1")


def first(history, **kw):
    problems = validate(history, **kw)
    assert problems, history
    return str(problems[0])


REJECTED = [
    ("content block is a number", [user(5)], "messages.0.content.0: Input should be a valid dictionary"),
    ("content is a number", [{"role": "user", "content": 5}], "messages.0.content: Input should be a valid list"),
    ("content missing", [{"role": "user"}], "messages.0.content: Field required"),
    ("role missing", [{"content": "hi"}], "messages.0.role: Field required"),
    ("unknown message key", [{**TASK, "name": "bob"}], "messages.0.name: Extra inputs are not permitted"),
    ("block without type", [user({"text": "hi"})], "messages.0.content.0: Unable to extract tag using discriminator 'type'"),
    ("unknown block type", [user({"type": "txt", "text": "hi"})], "messages.0.content.0: Input tag 'txt' found using 'type' does not match any of the expected tags: 'text', 'image'"),
    ("text that is not a string", [user({"type": "text", "text": 3})], "messages.0.content.0.text.text: Input should be a valid string"),
    ("tool_use without id", [TASK, asst({"type": "tool_use", "name": "bash", "input": {}})], "messages.1.content.0.tool_use.id: Field required"),
    ("tool_use without name", [TASK, asst({"type": "tool_use", "id": "t1", "input": {}})], "messages.1.content.0.tool_use.name: Field required"),
    ("tool_use without input", [TASK, asst({"type": "tool_use", "id": "t1", "name": "bash"})], "messages.1.content.0.tool_use.input: Field required"),
    ("tool_use with a list input", [TASK, asst({**TOOL, "input": ["ls"]})], "messages.1.content.0.tool_use.input: Input should be a valid dictionary"),
    ("tool_result with dict content", [TASK, asst(TOOL), user(result("t1", {"out": "ok"}))], "messages.2.content.0.tool_result.content: Input should be a valid list"),
    ("tool_result with a string is_error", [TASK, asst(TOOL), user(result("t1", is_error="true"))], "messages.2.content.0.tool_result.is_error: Input should be a valid boolean"),
    ("tool_result without tool_use_id", [TASK, asst(TOOL), user({"type": "tool_result", "content": "ok"})], "messages.2.content.0.tool_result.tool_use_id: Field required"),
    ("tool_result with an extra key", [TASK, asst(TOOL), user(result("t1", name="bash"))], "messages.2.content.0.tool_result.name: Extra inputs are not permitted"),
    ("tool_result content holding a string", [TASK, asst(TOOL), user(result("t1", ["ok"]))], "messages.2.content.0.tool_result.content.0: Input should be a valid dictionary"),
    ("image with an unknown media type", [user({"type": "image", "source": {"type": "base64", "media_type": "image/bmp", "data": "AA=="}})], "messages.0.content.0.image.source.base64.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'"),
    ("image with an unknown source type", [user({"type": "image", "source": {"type": "ftp", "url": "x"}})], "messages.0.content.0.image.source: Input tag 'ftp' found using 'type' does not match any of the expected tags: 'base64', 'url', 'file'"),
    ("image without source", [user({"type": "image"})], "messages.0.content.0.image.source: Field required"),
    ("document url source without url", [user({"type": "document", "source": {"type": "url"}})], "messages.0.content.0.document.source.url.url: Field required"),
    ("thinking without signature", [TASK, asst({"type": "thinking", "thinking": ""}, text("hi"))], "messages.1.content.0.thinking.signature: Field required"),
    ("redacted_thinking without data", [TASK, asst({"type": "redacted_thinking"}, text("hi"))], "messages.1.content.0.redacted_thinking.data: Field required"),
    ("message is a string", ["hello"], "messages.0: Input should be a valid dictionary"),
]  # fmt: skip


@pytest.mark.parametrize(("what", "history", "words"), REJECTED, ids=[r[0] for r in REJECTED])
def test_every_shape_the_api_rejects_is_reported_first(what, history, words):
    assert first(history).startswith(words)


@pytest.mark.parametrize(("what", "history", "words"), REJECTED, ids=[r[0] for r in REJECTED])
def test_incremental_checks_and_offline_clients_apply_the_same_schema(what, history, words):
    # check_at (used by append and the offline clients) sees the new message only
    found = []
    for i, message in enumerate(history):
        found += check_at(i, history[i - 1] if i else None, message, pending_ok=True)
    assert any(str(p).startswith(words) for p in found)
    # the offline client answers the request with the API's 400
    with pytest.raises(anthropic.BadRequestError, match=re.escape(words)):
        ScriptedClient(["ok"]).messages.create(model="m", max_tokens=10, messages=history)


def test_append_refuses_a_block_the_api_rejects_and_keeps_the_history():
    h = [TASK, asst(TOOL)]
    with pytest.raises(
        al.HistoryError, match="tool_result.is_error: Input should be a valid boolean"
    ) as e:
        al.append(h, [result("t1", is_error="yes")])
    assert len(h) == 2
    assert "True or False" in str(e.value)  # the hint


def test_schema_problems_come_before_the_rules_that_tie_messages_together():
    # the API checks the body's shape first: the missing result is reported after
    h = [TASK, asst(use("t1")), user({"type": "txt", "text": "x"})]
    problems = validate(h)
    assert [p.rule for p in problems] == ["schema", "results_first"]
    assert "Input tag 'txt'" in str(problems[0])


def test_what_the_sdk_knows_is_accepted():
    image = {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}
    h = [
        user(
            text("What is in this picture?"),
            {"type": "image", "source": image, "cache_control": {"type": "ephemeral"}},
            {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}},
            {
                "type": "document",
                "source": {"type": "text", "media_type": "text/plain", "data": "hi"},
            },
        ),
        asst(
            {"type": "thinking", "thinking": "", "signature": "EqQBCkYIBxgCKkBz"},
            {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4a"},
            text("Let me look."),
            use("t1"),
        ),
        user(result("t1", [{"type": "text", "text": "a.py"}], is_error=False)),
        asst(text("One file.")),
    ]
    assert validate(h) == []


def test_sdk_response_objects_validate_as_they_are():
    from anthropic.types import RedactedThinkingBlock, ThinkingBlock

    reply = make_message(
        [
            ThinkingBlock(type="thinking", thinking="", signature="c2ln"),
            RedactedThinkingBlock(type="redacted_thinking", data="ZGF0YQ=="),
            text("hi"),
            tool_use("bash", {"command": "ls"}, id="t1"),
        ]
    )
    h = [TASK, {"role": "assistant", "content": reply.content}]
    assert validate(h, pending_ok=True) == []
    h2 = [TASK]
    al.append(h2, reply)
    assert h2[1]["content"][0] == {"type": "thinking", "thinking": "", "signature": "c2ln"}


def test_thinking_blocks_belong_to_the_assistant():
    h = [user({"type": "thinking", "thinking": "", "signature": "c2ln"}, text("hi"))]
    [p] = validate(h)
    # The API's words for this case are not known from public material (see history.py).
    assert "`thinking` blocks can only be in `assistant` messages" in str(p)


def test_schema_words_are_pydantics():
    # The same values through pydantic itself (strict, as the API refuses "true" for a
    # bool): the messages and the field paths must be the ones validate() gives.
    from anthropic.types import Base64ImageSourceParam, ToolResultBlockParam, ToolUseBlockParam
    from pydantic import TypeAdapter, ValidationError

    cases = [
        (ToolUseBlockParam, {"type": "tool_use", "name": "bash", "input": ["ls"]}),
        (ToolResultBlockParam, {"type": "tool_result", "tool_use_id": 7, "is_error": "true"}),
        (Base64ImageSourceParam, {"type": "base64", "media_type": "image/bmp", "data": "AA=="}),
    ]
    for kind, value in cases:
        with pytest.raises(ValidationError) as e:
            TypeAdapter(kind).validate_python(value, strict=True)
        theirs = [f"{'.'.join(map(str, err['loc']))}: {err['msg']}" for err in e.value.errors()]
        tag = value["type"] if kind is not Base64ImageSourceParam else None
        block = {"type": "image", "source": value} if tag is None else value
        ours = [str(p) for p in validate([user(block)]) if p.rule == "schema"]
        prefix = "messages.0.content.0." + ("image.source.base64." if tag is None else f"{tag}.")
        assert sorted(o.removeprefix(prefix) for o in ours) == sorted(theirs)


def test_schema_hints_name_the_fix():
    [p] = [p for p in validate([TASK, asst({**TOOL, "input": "ls"})], pending_ok=True)]
    assert "dict of arguments" in p.hint
    [p] = validate([user({"type": "txt", "text": "x"})])
    assert "tool_result" in p.hint
    [p] = validate([TASK, asst({"type": "tool_use", "name": "bash", "input": {}})], pending_ok=True)
    assert "ToolUseBlockParam" in p.hint and "id, input, name, type" in p.hint


# -- thinking blocks in transcripts and pairings ---------------------------------------------

SIGNATURE = "EqQBCkYIBxgCKkBz" + "x" * 300 + "END"


def test_to_markdown_names_hidden_thinking_and_never_prints_a_signature():
    h = [
        TASK,
        asst(
            {"type": "thinking", "thinking": "", "signature": SIGNATURE},
            use("t1"),
            {"type": "redacted_thinking", "data": "SECRETDATA" * 30},
        ),
        user(result("t1")),
        asst(
            {"type": "thinking", "thinking": "The file list is short.", "signature": SIGNATURE},
            text("2"),
        ),
    ]
    md = to_markdown(h)
    assert (
        "`thinking` (hidden by the API: display omitted) · signature `EqQBCkYI…` (319 characters)"
        in md
    )
    assert "The file list is short." in md
    assert "`redacted_thinking` (encrypted by the API, sent back unchanged)" in md
    assert SIGNATURE not in md and "END" not in md and "SECRETDATA" * 2 not in md
    al.set_language("zh")
    try:
        assert "API 隐藏了内容" in to_markdown(h)
    finally:
        al.set_language("en")


def test_a_short_signature_is_not_printed_in_full_either():
    md = to_markdown([TASK, asst({"type": "thinking", "thinking": "", "signature": "abcd"})])
    assert "`ab…` (4 characters)" in md and "abcd" not in md


def test_pairings_carry_the_thinking_before_each_call():
    h = [
        TASK,
        asst(
            {"type": "thinking", "thinking": "", "signature": "c2ln"},
            use("t1"),
            {"type": "thinking", "thinking": "Now the date.", "signature": "c2ln"},
            use("t2"),
            use("t3"),
        ),
        user(result("t1"), result("t2"), result("t3")),
    ]
    ps = pairings(h)
    assert [(p.id, p.status, p.turn, p.thinking) for p in ps] == [
        ("t1", "ok", 1, ""),
        ("t2", "ok", 1, "Now the date."),
        ("t3", "ok", 1, None),
    ]


# -- saving and loading ----------------------------------------------------------------------


def _history():
    h = [TASK]
    al.append(h, make_message([text("ünïcode ✓"), tool_use("bash", {"command": "ls"}, id="t1")]))
    al.append(h, [result("t1", "a\nb")])
    return h


def _left_over(folder):
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


@pytest.mark.parametrize(
    ("value", "words"),
    [
        (b"bytes", "messages.2.content.0.content: a value of type bytes cannot be saved as JSON"),
        ({1, 2}, "a value of type set cannot be saved"),
        (float("nan"), "nan is not a JSON number"),
        ("\ud800", "a string that is not valid Unicode"),
        ({1: "x"}, "the key 1 is not a string"),
        (object(), "a value of type object cannot be saved"),
    ],
)
def test_save_refuses_what_it_cannot_encode_and_keeps_the_old_file(tmp_path, value, words):
    path = al.save(_history(), tmp_path / "h.json")
    before = path.read_bytes()
    broken = _history()
    broken[2]["content"][0]["content"] = value
    with pytest.raises(al.HistoryError, match=re.escape(words)) as e:
        al.save(broken, path)
    assert str(path) in str(e.value) and "nothing was written" in str(e.value)
    assert path.read_bytes() == before and _left_over(tmp_path) == []


def test_save_is_atomic_when_interrupted_mid_write(tmp_path, monkeypatch):
    path = al.save(_history(), tmp_path / "h.json")
    before = path.read_bytes()
    synced = []
    monkeypatch.setattr("os.fsync", lambda fd: synced.append(fd))

    def interrupted(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr("os.replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        al.save(_history() + [{"role": "assistant", "content": "more"}], path)
    assert path.read_bytes() == before and _left_over(tmp_path) == []
    assert synced  # the data was flushed to disk before the rename was tried


def test_a_killed_save_leaves_the_old_file_or_the_new_one(tmp_path):
    # A real SIGKILL at a random moment of saving a large history, 8 times: the file
    # is always a complete history, never empty or half written.
    import subprocess
    import sys
    import time

    path = tmp_path / "h.json"
    al.save([TASK], path)
    script = (
        "import sys, agentlab as al\n"
        "h = [{'role': 'user', 'content': 'x' * 200_000}, {'role': 'assistant', 'content': 'y'}] * 40\n"
        "print('ready', flush=True)\n"
        "while True:\n"
        f"    al.save(h, {str(path)!r})\n"
    )
    for k in range(8):
        child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE)
        assert child.stdout.readline() == b"ready\n"
        time.sleep(0.02 * k)
        child.kill()
        child.wait()
        child.stdout.close()
        loaded = al.load(path)
        assert loaded == [TASK] or len(loaded) == 80
    assert (
        len(_left_over(tmp_path)) <= 12
    )  # a killed writer may leave its temp file, never the target


def test_save_keeps_the_files_permissions(tmp_path):
    path = tmp_path / "h.json"
    path.write_text("[]")
    path.chmod(0o640)
    al.save(_history(), path)
    assert path.stat().st_mode & 0o777 == 0o640


def test_save_refuses_to_write_through_a_symlink(tmp_path):
    # A model that runs commands in the folder can make history.json a link to a file
    # that runs code (~/.bashrc): saving there must not write through it.
    target = tmp_path / "bashrc"
    target.write_text("echo hi\n")
    link = tmp_path / "history.json"
    link.symlink_to(target)
    with pytest.raises(HistoryFileError, match="symbolic link") as e:
        al.save(_history(), link)
    assert target.read_text() == "echo hi\n" and link.is_symlink()
    assert "nothing was written" in e.value.problems[0].hint
    al.save(_history(), tmp_path / "other.json")  # another name is fine


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (
            b'[{"role": "user", "content": "hi"}',
            "not JSON: Expecting ',' delimiter (line 1, column 35)",
        ),
        (b"", "not JSON: Expecting value (line 1, column 1)"),
        (b"\xff\xfe[]", "not UTF-8 text (byte 0)"),
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply to read"),
        (b"[" * 150 + b"]" * 150, "messages.0.0.0"),
        (b'[{"role": "user", "content": NaN}]', "not JSON: NaN is not a JSON number"),
        (b'{"role": "user", "content": "hi"}', "messages: Input should be a valid list"),
        (b'["hi"]', "messages.0: Input should be a valid dictionary"),
        (b'[{"role": "user", "content": [{"type": "txt"}]}]', "Input tag 'txt' found using 'type'"),
        (b'[{"role": "assistant", "content": "hi"}]', 'first message must use the "user" role'),
    ],
)
def test_load_says_clearly_what_is_wrong(tmp_path, content, words):
    path = tmp_path / "h.json"
    path.write_bytes(content)
    with pytest.raises(al.HistoryError, match=re.escape(words)) as e:
        al.load(path)
    assert str(e.value).startswith(str(path))


def test_load_accepts_a_history_saved_between_two_stages_and_can_skip_the_check(tmp_path):
    pending = [TASK, asst(use("t1"))]
    assert al.load(al.save(pending, tmp_path / "p.json")) == pending
    broken = [asst(text("hi"))]
    assert al.load(al.save(broken, tmp_path / "b.json"), check=False) == broken


def test_thinking_blocks_survive_a_round_trip(tmp_path):
    h = [TASK, asst({"type": "thinking", "thinking": "", "signature": SIGNATURE}, text("hi"))]
    assert al.load(al.save(h, tmp_path / "t.json")) == h


COMMON_SHAPES = [
    {"role": "user", "content": "How many files?"},
    {"role": "user", "content": [{"type": "text", "text": "hi"}]},
    {"role": "assistant", "content": [
        {"type": "thinking", "thinking": "", "signature": "EqQB"},
        {"type": "text", "text": "Let me look."},
        {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"command": "ls"}},
    ]},
    {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.py"},
        {"type": "tool_result", "tool_use_id": "toolu_2", "content": "boom", "is_error": True},
    ]},
]  # fmt: skip


def test_the_quick_shapes_are_what_the_sdks_types_say():
    # QUICK_BLOCKS is written down so that append need not import the SDK; it must be
    # exactly what the installed SDK's request types give for those blocks and keys.
    from agentlab import rules

    for role in rules.QUICK_ROLES:
        assert rules.quick_blocks_from_sdk(role) == rules.QUICK_BLOCKS


@pytest.mark.parametrize("message", COMMON_SHAPES)
def test_the_quick_shape_check_agrees_with_the_schema_walk(message):
    from agentlab import rules

    assert rules._fits_quickly(message) and rules.schema_errors(message, 0) == []
    assert rules._rules_at(0, None, message, last=True, wanted=[])[1]


@pytest.mark.parametrize(
    "message",
    [
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t", "is_error": "yes"}],
        },
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t", "name": "b", "input": []}],
        },
        {"role": "user", "content": [{"type": "text", "text": "x", "extra": 1}]},
        {"role": "user", "content": [7]},
    ],
)
def test_anything_else_takes_the_full_walk(message):
    from agentlab import rules

    assert not rules._fits_quickly(message) and rules.schema_errors(message, 0) != []
    assert not rules._rules_at(0, None, message, last=True, wanted=[])[1]


def test_check_at_runs_the_rules_validate_runs_on_one_message():
    # No second copy of the rules: check_at and validate call the same _rules_at, and
    # check_at only adds what appending changes (the one before stops being last).
    from agentlab import rules

    calls = []
    real = rules._rules_at

    def spy(i, prev, message, last, wanted):
        calls.append((i, message["role"], last))
        return real(i, prev, message, last, wanted)

    reply = asst({"type": "text", "text": "Let me look."}, use("toolu_1"))
    results = user(result("toolu_1"))
    with mock.patch.object(rules, "_rules_at", spy):
        assert check_at(2, reply, results) == []
        assert validate([TASK, reply, results]) == []
    assert calls == [
        (2, "user", True),
        (0, "user", False),
        (1, "assistant", False),
        (2, "user", True),
    ]


def test_a_loop_over_the_sdks_messages_never_needs_the_full_check(monkeypatch):
    """The replies come as SDK Messages (thinking, text, parallel calls) and are
    stored as dicts: every turn the loop appends fits the quick shapes, no walk."""
    from agentlab import rules

    def full_check(*args, **kwargs):
        raise AssertionError("append took the schema walk")

    monkeypatch.setattr(rules, "schema_errors", full_check)
    thought = {"type": "thinking", "thinking": "Count them.", "signature": "EqQB"}
    replies = [
        make_message([thought, text("Let me look."), tool_use("noop", {}), tool_use("noop", {})]),
        make_message([tool_use("noop", {})]),
        make_message([text("Two files.")]),
    ]

    @al.tool
    def noop() -> str:
        """Do nothing."""
        return "ok"

    result = al.agent_loop([TASK], ScriptedClient(replies, check=False), tools=[noop])
    assert result.ended == "model" and len(result.messages) == 6


# --- role "system" mid-conversation: only right after a user turn --------------------
# Sonnet 5.5 migration guide (platform.claude.com/docs, checked 2026-11-30):
# accepted after a user turn. The refusals below are worded by agentlab (the API's
# wording is not public) and must say so; validate, check_next and append agree.

SYSTEM = {"role": "system", "content": "Be brief."}
AFTER_ASSISTANT = (
    "messages.2: a `system` message must come right after a `user` turn, not after an "
    "`assistant` turn (agentlab's check; the API's wording for this error is not public)"
)


def test_a_system_message_only_after_a_user_turn():
    reply = {"role": "assistant", "content": "Hello."}
    use = {"role": "assistant", "content": [tool_use("bash", {"command": "ls"}, id="t1")]}
    result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1"}]}
    assert validate([TASK, SYSTEM, reply]) == []
    assert validate([TASK, use, result, SYSTEM], pending_ok=True) == []
    assert messages_of(validate([TASK, reply, SYSTEM, TASK])) == [AFTER_ASSISTANT]
    assert messages_of(validate([TASK, use, SYSTEM, result]))[0] == AFTER_ASSISTANT  # first named
    (twice,) = validate([TASK, SYSTEM, SYSTEM])
    assert "not after another `system` message" in str(twice) and "agentlab's" in str(twice)
    assert twice.rule == "system_after_user" and twice.hint
    # check_next and append say the same, and append leaves the history as it was
    assert messages_of(check_next([TASK, reply], SYSTEM)) == [AFTER_ASSISTANT]
    assert check_next([TASK], SYSTEM) == []
    history = [TASK, reply]
    with pytest.raises(al.HistoryError, match="agentlab's check"):
        al.append(history, SYSTEM)
    assert history == [TASK, reply]
    history = [TASK]
    al.append(history, SYSTEM)
    assert history == [TASK, SYSTEM]


def test_a_second_result_for_one_call_is_refused_in_the_apis_words():
    # The live API's 400, quoted in github.com/anthropics/claude-code/issues/14110 (2025-12-16):
    # "messages.10.content.1: each tool_use must have a single result. Found multiple
    # `tool_result` blocks with id: toolu_vrtx_01WjbYafn5hwELEqiDQ4n2wv"
    use = {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {}}
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a"}
    history = [{"role": "user", "content": "go"}, {"role": "assistant", "content": [use]}]
    twice = {"role": "user", "content": [result, dict(result)]}
    expected = (
        "messages.2.content.1: each tool_use must have a single result. Found multiple "
        "`tool_result` blocks with id: toolu_1"
    )
    assert [str(p) for p in validate([*history, twice])] == [expected]
    assert [str(p) for p in check_next(history, twice)] == [expected]


def test_more_than_four_cache_control_blocks_are_refused_in_the_apis_words():
    # The live API's 400, quoted in github.com/griffinmartin/opencode-claude-auth/issues/121
    # (2026-04-03) and github.com/VicBilibily/GCMP/pull/83 (2026-02-16).
    from agentlab.history import cache_points

    def marked(n: int) -> dict:
        return {"type": "text", "text": f"part {n}", "cache_control": {"type": "ephemeral"}}

    four = [{"role": "user", "content": [marked(n) for n in range(4)]}]
    five = [{"role": "user", "content": [marked(n) for n in range(5)]}]
    assert validate(four) == []
    assert [str(p) for p in validate(five)] == [
        "A maximum of 4 blocks with cache_control may be provided. Found 5."
    ]
    tool = {"name": "t", "input_schema": {"type": "object"}, "cache_control": {"type": "ephemeral"}}
    assert "Found 5." in str(cache_points(four, tools=[tool])[0])  # tools count too


def test_a_tool_result_with_junk_content_is_reported_not_raised():
    # found by hypothesis (test_property): the cache_control count read a bool as a list
    history = [
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": True}]}
    ]
    found = [p.message for p in validate(history)]
    assert "messages.0.content.0.tool_result.content: Input should be a valid list" in found
