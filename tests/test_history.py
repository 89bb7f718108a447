import json

import pytest

import agentlab as al
from agentlab.history import check_next, pairings, to_markdown, validate
from agentlab.offline import make_message, text, tool_use

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
    assert messages_of(validate([{"role": "system", "content": "x"}])) == [
        "messages.0.role: Input should be 'user' or 'assistant'"
    ]
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
