"""The offline demo model (agentlab.fakeapi.demo), end to end: shapes, history, language, safety.

Reply shapes imitate claude-sonnet-5-5 and claude-haiku-4-5 as described in
platform.claude.com "What's new in Claude Sonnet 5.5" and its migration guide
(checked 2026-11-30): without a `thinking` field Sonnet 5.5 thinks adaptively,
its replies carry thinking blocks with display "omitted" (empty text plus a
signature) and text between tool calls comes back inside thinking blocks;
`{"type": "between_tools"}` turns off up-front thinking. Haiku 4.5 thinks only
when asked. The display that returns the text is called "summarized" here:
that name comes from earlier models' docs and is not confirmed for Sonnet 5.5.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import agentlab as al
from agentlab import i18n
from agentlab.fakeapi import thinking
from agentlab.fakeapi.demo import classify, demo_reply, plan
from agentlab.fakeapi.demo.words import Task
from agentlab.fakeapi.offline import DemoClient, tool_use
from agentlab.tools.task import task_tool
from agentlab.tools.todo import REMINDER, TodoList
from tests.seed_loop import seed_loop

SONNET, HAIKU = "claude-sonnet-5-5", "claude-haiku-4-5"
BASH = [al.bash.definition]


@pytest.fixture
def workspace(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text("import os\n# TODO: tidy\n")
    (tmp_path / "b.py").write_text("print('hi')\n")
    (tmp_path / "notes.md").write_text("one\ntwo\nthree\nfour\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "big.txt").write_text("x" * 500 + "\n")
    (tmp_path / "sub" / "small.txt").write_text("a\nb\nc\n")
    return tmp_path


def run(messages, model=SONNET, **kw):
    if isinstance(messages, str):
        messages = [{"role": "user", "content": messages}]
    result = al.agent_loop(messages, DemoClient(), tools=[al.bash], model=model, **kw)
    assert al.validate(messages) == []
    return result


def commands(messages):
    return [
        b["input"]["command"]
        for m in messages
        if m["role"] == "assistant" and isinstance(m["content"], list)
        for b in m["content"]
        if b["type"] == "tool_use"
    ]


def types(message):
    return [b["type"] for b in message["content"]]


# --- reply shapes ---------------------------------------------------------------------


def reply(model, messages, **extra):
    return demo_reply({"model": model, "messages": messages, "tools": BASH, **extra})


TASK = [{"role": "user", "content": "How many .py files are here?"}]


def after_result(first):
    uses = [b for b in first if b["type"] == "tool_use"]
    return TASK + [
        {"role": "assistant", "content": [{**b, "id": f"toolu_{i}"} for i, b in enumerate(first)]},
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": f"toolu_{first.index(u)}", "content": "2\n"}
                for u in uses
            ],
        },
    ]


def test_sonnet_5_5_thinks_by_default_and_says_its_text_between_calls_in_thinking():
    first = reply(SONNET, TASK)
    assert [b["type"] for b in first] == ["thinking", "tool_use"]
    assert first[0]["thinking"] == "" and thinking.verify(SONNET, first[0])
    assert thinking.hidden(first[0]) == "Let me check with bash."
    last = reply(SONNET, after_result(first))
    assert [b["type"] for b in last] == ["thinking", "text"]
    assert last[1]["text"].startswith("There are 2 Python (.py) files")


def test_a_display_that_returns_the_text_shows_it_inside_the_thinking_block():
    shown = {"type": "adaptive", "display": "summarized"}
    first = reply(SONNET, TASK, thinking=shown)
    assert first[0]["thinking"] == "Let me check with bash." and thinking.verify(SONNET, first[0])


def test_between_tools_turns_off_up_front_thinking():
    bt = {"type": "between_tools"}
    first = reply(SONNET, TASK, thinking=bt)
    assert [b["type"] for b in first] == ["text", "tool_use"]
    assert [b["type"] for b in reply(SONNET, after_result(first), thinking=bt)] == [
        "thinking",
        "text",
    ]


def test_haiku_4_5_gets_the_older_shape_and_thinks_only_when_asked():
    first = reply(HAIKU, TASK)
    assert [b["type"] for b in first] == ["text", "tool_use"]
    assert [b["type"] for b in reply(HAIKU, after_result(first))] == ["text"]
    asked = reply(HAIKU, TASK, thinking={"type": "enabled", "budget_tokens": 1024})
    assert [b["type"] for b in asked] == ["thinking", "text", "tool_use"]
    assert asked[0]["thinking"] == "Let me check with bash." and thinking.verify(HAIKU, asked[0])


def test_a_model_missing_from_the_table_is_treated_like_the_default_model():
    assert types({"content": reply("agentlab-demo", TASK)}) == ["thinking", "tool_use"]
    assert types({"content": reply("some-local-model", TASK)}) == ["thinking", "tool_use"]


@pytest.mark.parametrize(("model", "thinks"), [(SONNET, True), (HAIKU, False)])
def test_the_seeds_loop_runs_unchanged_on_both_shapes(model, thinks, workspace):
    """The lesson's loop, pasted as is: it keeps response.content whole, so thinking
    blocks go back unchanged and every request passes the API's thinking checks."""
    client = DemoClient()
    sent = []
    create = client.messages.create

    def checked(**params):
        assert thinking.check(params) == []  # what the real API would refuse
        sent.append(params)
        return create(**params)

    client.messages.create = checked
    messages = [{"role": "user", "content": "How many .py files are here?"}]
    seed_loop(client, model, BASH)(messages)
    assert len(sent) == 2 and al.validate(messages) == []
    kinds = [b.type for m in messages if m["role"] == "assistant" for b in m["content"]]
    assert ("thinking" in kinds) == thinks
    assert messages[-1]["content"][-1].text.startswith("There are 2 Python (.py) files")


def test_dropping_thinking_blocks_in_a_hand_written_loop_is_what_the_api_refuses(workspace):
    first = DemoClient().messages.create(model=SONNET, max_tokens=100, messages=TASK, tools=BASH)
    kept = [b.model_dump() for b in first.content if b.type != "thinking"]
    messages = TASK + [
        {"role": "assistant", "content": kept},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": kept[0]["id"], "content": "2"}],
        },
    ]
    (error,) = thinking.check({"model": SONNET, "messages": messages})
    assert "Expected `thinking` or `redacted_thinking`, but found `tool_use`" in error


# --- the history: follow-ups -----------------------------------------------------------


def test_a_follow_up_after_a_listing_runs_the_command_that_answers_it(workspace):
    messages = [{"role": "user", "content": "List the files in the folder sub"}]
    run(messages)
    messages.append({"role": "user", "content": "Which of those is the largest?"})
    r = run(messages)
    assert commands(messages)[-1] == "ls -pS sub | grep -v / | head -n 1"
    assert "The largest file in sub is big.txt" in r.text
    messages.append({"role": "user", "content": "And which is the longest?"})
    assert "The longest file in sub is small.txt, with 3 lines" in run(messages).text
    messages.append({"role": "user", "content": "最小的是哪个？"})
    assert "sub里最小的文件是 small.txt" in run(messages).text


def test_without_a_listing_a_follow_up_asks_which_files(workspace):
    r = run("Which of those is the longest?")
    assert r.turns == 1 and "list them first" in r.text
    assert classify("Which of those is the longest?") == "cannot"
    history = [{"role": "assistant", "content": [tool_use("bash", {"command": "ls -la"}, "t1")]}]
    assert classify("Which of those is the longest?", history) == "longest"


def test_the_follow_up_looks_in_the_current_folder_after_a_plain_listing(workspace):
    messages = [{"role": "user", "content": "ls"}]
    run(messages)
    messages.append({"role": "user", "content": "which one is the longest?"})
    r = run(messages)
    assert "The longest file in this folder is notes.md, with 4 lines" in r.text


# --- language and plurals --------------------------------------------------------------


def test_the_answer_follows_the_tasks_language(workspace):
    assert run("这里有多少个 py 文件？").text.startswith("这里有 2 个 Python（.py）文件")
    assert run("How many .py files are here?").text.startswith("There are 2 Python")


def test_set_language_fixes_the_answers_language(workspace):
    al.set_language("en")
    try:
        assert run("这里有多少个 py 文件？").text.startswith("There are 2 Python")
        al.set_language("zh")
        assert run("How many .py files are here?").text.startswith("这里有 2 个")
    finally:
        al.set_language(None)
    assert not i18n.language_chosen() and i18n.get_language() == "en"


def test_plurals_are_right_in_both_languages(workspace):
    (workspace / "b.py").unlink()
    assert "There is 1 Python (.py) file here" in run("How many .py files are here?").text
    assert "a.py has 2 lines" in run("How many lines are in a.py?").text
    (workspace / "one.txt").write_text("x\n")
    assert "one.txt has 1 line " in run("How many lines are in one.txt?").text
    assert "I found 1 line containing `TODO`" in run("find TODOs").text
    assert "There is 1 folder here" in run("How many folders are here?").text
    assert "这里有 1 个 Python（.py）文件" in run("这里有几个 py 文件？").text


# --- what ran, and safety -------------------------------------------------------------


def test_after_an_edited_call_it_reports_what_really_ran(workspace):
    edit = lambda call: al.Verdict.edit({"command": "echo 42"})  # noqa: E731
    r = run("How many .py files are here?", approve=edit)
    assert "what ran was `echo 42`" in r.text and "42" in r.text
    assert "I asked for `find . -name '*.py'" in r.text
    assert "There are" not in r.text  # it does not read 42 as a count of files
    assert "This call was changed" not in r.text  # the harness's note is not pasted


def test_after_an_edited_call_in_chinese_it_reads_the_chinese_note(workspace):
    al.set_language("zh")
    try:
        r = run("这里有多少个文件？", approve=lambda call: al.Verdict.edit({"command": "echo 7"}))
    finally:
        al.set_language(None)
    assert "实际运行的是 `echo 7`" in r.text and "用户在运行前修改" not in r.text


def test_creating_never_overwrites_and_says_so(workspace):
    r = run('Create a file called a.py containing "oops"')
    assert (workspace / "a.py").read_text() == "import os\n# TODO: tidy\n"
    assert (workspace / "a-2.py").read_text() == "oops\n"
    assert "a.py already existed, so I did not overwrite it" in r.text
    assert all("noclobber" in c for c in commands(r.messages) if ">" in c)
    # when the fresh name is taken too, it takes the next free one (QA: a third
    # "create notes.txt" failed although notes-3.txt was free)
    r = run('Create a file called a.py containing "again"')
    assert (workspace / "a-2.py").read_text() == "oops\n"
    assert (workspace / "a-3.py").read_text() == "again\n"
    assert "I wrote a-3.py instead" in r.text
    r = run('Create a file called a.py containing "third"')
    assert (workspace / "a-4.py").read_text() == "third\n"
    assert [(workspace / f).read_text() for f in ("a.py", "a-2.py", "a-3.py")] == [
        "import os\n# TODO: tidy\n",
        "oops\n",
        "again\n",
    ]


def test_the_matcher_is_linear_and_reads_words_in_a_huge_task(workspace):
    """64 kB tasks of the kinds that made the old matcher slow (timing: benchmarks/demo_matcher.py)."""
    junk = "create_table.sql recreate 'x " * 2200
    assert classify("How many lines are in a.py? " + junk) == "lines"
    assert classify(junk) == "cannot"
    assert classify("'" * 65536) == "cannot"
    assert classify("create " + "a" * 65536) == "cannot"  # no file name in one long word
    assert classify("create " + "a." * 32768 + "txt") == "create"
    assert classify("create a file " + "containing " * 6000) == "create"
    assert classify("containing " * 6000 + "create a file") != "create"  # not an order


def test_a_task_with_a_file_name_holding_intent_words_is_read_only(workspace):
    (workspace / "create_table.sql").write_text("CREATE TABLE t (x int);\n")
    r = run("How many lines are in create_table.sql?")
    assert (workspace / "create_table.sql").read_text() == "CREATE TABLE t (x int);\n"
    assert commands(r.messages) == ["wc -l < create_table.sql"]
    assert "create_table.sql has 1 line" in r.text


def test_through_the_http_server_the_sdk_gets_signed_thinking_blocks(workspace):
    anthropic = pytest.importorskip("anthropic")
    from agentlab.fakeapi.server import FakeMessagesServer

    with FakeMessagesServer() as server:
        client = anthropic.Anthropic(api_key="test", base_url=server.url, max_retries=0)
        for stream in (False, True):
            messages = [{"role": "user", "content": "How many .py files are here?"}]
            r = al.agent_loop(messages, client, tools=[al.bash], model=SONNET, stream=stream)
            first = messages[1]["content"][0]
            assert first["type"] == "thinking" and thinking.verify(SONNET, first)
            assert "There are 2 Python" in r.text


@pytest.mark.parametrize(
    ("task", "expected", "says"),
    [
        (
            "find TODOs",
            ["grep -rn --exclude-dir=.git --exclude-dir=.ipynb_checkpoints TODO . | head -n 20"],
            "a.py:2:# TODO",
        ),
        ("find all TODO comments", None, "a.py:2:# TODO"),
        ("how much disk space is free?", ["df -hP ."], " free of "),
        ("what is the date?", ["date"], "The date here is"),
    ],
)
def test_the_misreadings_from_issue_11_are_read_right(task, expected, says, workspace):
    r = run(task)
    if expected is not None:
        assert commands(r.messages) == expected
    assert says in r.text


def test_text_a_harness_adds_beside_tool_results_is_not_a_new_task(workspace):
    first = reply(HAIKU, TASK)
    messages = after_result(first)
    messages[-1]["content"].append({"type": "text", "text": "<reminder>be brief</reminder>"})
    answer = reply(HAIKU, messages)
    assert answer[0]["text"].startswith("There are 2 Python (.py) files")


def test_a_write_that_fails_for_another_reason_is_reported_not_retried(workspace):
    r = run("Create a file called nowhere/x.txt containing hi")
    assert len(commands(r.messages)) == 1 and "did not work" in r.text
    assert not (workspace / "nowhere").exists()


VOCABULARY = (
    "how many count list show find search grep which largest longest newest files file "
    "lines folder disk space free date system today python .py a.py notes.md todo the "
    "in of for containing hello 'x' \"y\" create_table.sql recreate writer maker "
    "多少 几个 文件 目录 行数 搜索 最大 磁盘 日期 系统 列出"
).split()
WRITE_WORDS = {"create", "make", "write", "save", "touch", "new", "创建", "新建", "写一个", "写入"}


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(VOCABULARY), max_size=12))
def test_no_task_without_a_word_for_writing_plans_to_write(words):
    task = " ".join(words)
    assert not WRITE_WORDS & set(words)
    found = plan(Task(task), listed=None)
    if found is None:
        return
    assert found.intent != "create"
    for step in found.steps + [s for f in found.fallbacks for s in f]:
        for command in step:
            # no output redirection and no command that changes files
            assert ">" not in command.replace("2>/dev/null", ""), command
            assert not {"rm", "mv", "cp", "touch", "tee", "mkdir"} & set(command.split())


# --- QA defects, December 2026 (D1-D3) -------------------------------------------------

QUESTIONS_THAT_NAME_A_WRITING_VERB = [
    "Does main.py make any network calls?",
    "do not create a file. what is the date?",
    "Can you make sure hello.txt still exists?",
    "I want to make a decision: what's the newest file?",
    "How do I create a file?",
    "Who can write to main.py?",
    "创建表的 SQL 文件 create_table.sql 有几行？",
    "不要写入任何文件，今天几号？",
    "保存文件需要多久？",
    "Can you create a file called main.py?",
    "Never save a file. How many lines are in main.py?",
]


@pytest.mark.parametrize("task", QUESTIONS_THAT_NAME_A_WRITING_VERB)
def test_a_question_or_a_negation_never_writes(task, workspace):
    """D1: `agentlab run --yes "Does main.py make any network calls?"` wrote main-2.py."""
    (workspace / "main.py").write_text("import os\n")
    (workspace / "hello.txt").write_text("hi\n")
    (workspace / "create_table.sql").write_text("CREATE TABLE t (x int);\n")
    before = sorted((p.name, p.read_bytes()) for p in workspace.rglob("*") if p.is_file())
    assert classify(task) != "create"
    r = run(task)
    assert sorted((p.name, p.read_bytes()) for p in workspace.rglob("*") if p.is_file()) == before
    assert not any("printf" in c or ">" in c for c in commands(r.messages))


def test_an_order_to_write_still_writes(workspace):
    for task in ("Please create notes2.md with the text 'first note'", "请帮我新建一个文件 x.txt"):
        assert classify(task) == "create"
    run("Please create notes2.md with the text 'first note'")
    assert (workspace / "notes2.md").read_text() == "first note\n"


def test_a_negated_clause_does_not_pick_the_intent():
    assert classify("do not create a file. what is the date?") == "date"
    assert classify("不要写入任何文件，今天几号？") == "date"
    assert classify("list the files, but do not create anything") == "list"


@pytest.mark.parametrize(
    ("task", "expected", "says"),
    [
        ("what's in the sub folder?", ["ls -la sub"], "small.txt"),
        ("what is the longest file in sub?", None, "small.txt, with 3 lines"),
        ("what is the size of the sub directory?", ["du -sh sub"], "sub takes "),
        (
            "Could you check whether notes.md contains two?",
            ["grep -ni two notes.md | head -n 20"],
            "2:two",
        ),
        ("Show me what's in notes.md", ["head -n 20 notes.md"], "one\ntwo\nthree\nfour"),
        ("count lines in notes.md and b.py", ["wc -l notes.md b.py"], "4 notes.md"),
        ("how many directories and files", None, "I count 5 files and 1 folder here"),
        ("How many TODOs are there?", None, "`TODO` appears 1 time"),
        ("How many CPUs", ["nproc"], " CPU"),
    ],
)
def test_it_answers_about_the_folder_or_file_asked(task, expected, says, workspace):
    """D2: each of these answered about another folder or file, or the wrong count."""
    r = run(task)
    if expected is not None:
        assert commands(r.messages) == expected
    assert says in r.text


def test_a_chinese_verb_with_an_ascii_file_name_is_a_chinese_task():
    """D3: the file name's letters do not make the task English."""
    assert Task("删除 delete_me.txt").language == "zh"
    assert Task("Delete delete_me.txt").language == "en"


def test_short_words_with_a_slip_are_forgiven():
    """D3: "pyhton" was forgiven (5+ letters, one edit) but "mny" was not."""
    assert classify("how mny files") == "count_files"
    assert classify("hwo many fles are here") == "count_files"


# --- planning with the todo tool, delegating with the task tool (lessons 06 and 07) --------

PLAN_TASKS = {
    "en": "Plan first, then: list the files, count the lines of agent.py, and report the largest file",
    "zh": "先做个计划，然后：列出文件，统计 agent.py 的行数，再报告最大的文件",
}
HELPER_TASKS = {
    "en": "Use a helper to find out which file defines main, then tell me",
    "zh": "用一个助手查出哪个文件定义了 main，然后告诉我",
}


@pytest.fixture
def project(workspace):
    (workspace / "agent.py").write_text("import sys\n\n\ndef main():\n    print(sys.argv)\n")
    return workspace


def calls(messages):
    """Each assistant turn's tool calls, as (name, input)."""
    return [
        [(b["name"], b["input"]) for b in m["content"] if b["type"] == "tool_use"]
        for m in messages
        if m["role"] == "assistant"
    ]


def planned(task, model=SONNET, **kw):
    messages, todos, events = [{"role": "user", "content": task}], TodoList(), []
    result = al.agent_loop(
        messages, DemoClient(), tools=[al.bash], todos=todos, model=model,
        on_event=events.append, **kw,
    )  # fmt: skip
    assert al.validate(messages) == []
    return messages, todos, result, events


def reminded_at(messages):
    """Indexes of the user messages that end with the loop's reminder."""
    return [
        i
        for i, m in enumerate(messages)
        if m["role"] == "user"
        and isinstance(m["content"], list)
        and any(b["type"] == "text" and b["text"] == REMINDER for b in m["content"])
    ]


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("model", [SONNET, HAIKU])
def test_a_multi_step_task_with_the_todo_tool_is_planned_worked_reminded_and_reported(
    project, lang, model
):
    messages, todos, result, events = planned(PLAN_TASKS[lang], model)
    turns = calls(messages)
    # 1. the list: one todo call per item, all in the first reply
    assert [name for name, _ in turns[0]] == ["todo"] * 3
    assert all(set(value) == {"text"} for _, value in turns[0])
    # 2. the first item in progress, then the three pieces with bash alone
    assert turns[1] == [("todo", {"id": "1", "status": "in_progress"})]
    assert [[name for name, _ in t] for t in turns[2:5]] == [["bash"]] * 3
    assert [t[0][1]["command"] for t in turns[2:5]] == [
        "ls -la",
        "wc -l < agent.py",
        "ls -pS . | grep -v / | head -n 1",
    ]
    # 3. the reminder fires after the third round without todo, and only then ...
    assert reminded_at(messages) == [10]
    assert [e.kind for e in events].count("reminder") == 1
    # ... and the very next reply brings the list up to date
    assert turns[5] == [("todo", {"id": i, "status": "completed"}) for i in "123"]
    # 4. a short report, once every item is completed
    assert turns[6] == [] and result.stop_reason == "end_turn" and len(turns) == 7
    assert [i["status"] for i in todos.items] == ["completed"] * 3
    assert "agent.py" in result.text and "5" in result.text
    assert ("清单" in result.text) == (lang == "zh")
    # deterministic: the same task gives the same run
    again, _, _, _ = planned(PLAN_TASKS[lang], model)
    assert calls(again) == turns


def test_with_enough_work_left_it_keeps_the_list_for_the_first_item_then_forgets(project):
    task = "Plan first: count the files, list the files, count the lines of agent.py, then report the largest file"
    messages, todos, result, _ = planned(task, HAIKU)
    turns = calls(messages)
    assert len(turns[0]) == 4 and turns[1] == [("todo", {"id": "1", "status": "in_progress"})]
    assert turns[2][0][0] == "bash"
    # the full cycle for item 1: completed, and the next one in progress, in one reply
    assert turns[3] == [
        ("todo", {"id": "1", "status": "completed"}),
        ("todo", {"id": "2", "status": "in_progress"}),
    ]
    assert [t[0][0] for t in turns[4:7]] == ["bash"] * 3  # forgot the list: three rounds
    assert reminded_at(messages) == [14]
    assert turns[7] == [("todo", {"id": i, "status": "completed"}) for i in "234"]
    assert [i["status"] for i in todos.items] == ["completed"] * 4
    assert turns[-1] == [] and result.stop_reason == "end_turn"


def test_the_plan_is_read_from_the_tool_use_history_so_a_second_task_continues_the_ids(project):
    todos = TodoList()
    messages = [{"role": "user", "content": PLAN_TASKS["en"]}]
    al.agent_loop(messages, DemoClient(), tools=[al.bash], todos=todos)
    messages.append({"role": "user", "content": "Plan first: count the files and list the files"})
    al.agent_loop(messages, DemoClient(), tools=[al.bash], todos=todos)
    assert al.validate(messages) == []
    assert [i["id"] for i in todos.items] == ["1", "2", "3", "4", "5"]
    assert [i["status"] for i in todos.items] == ["completed"] * 5


def test_without_the_todo_tool_or_with_one_step_there_is_no_plan(project):
    plain = [{"role": "user", "content": PLAN_TASKS["en"]}]
    run(plain)
    assert all(name == "bash" for turn in calls(plain) for name, _ in turn)
    one, todos, result, events = planned("How many .py files are here?")
    assert [[n for n, _ in t] for t in calls(one)] == [["bash"], []] and todos.items == []
    assert "reminder" not in [e.kind for e in events]


def test_a_refused_todo_call_does_not_make_it_try_forever(project):
    @al.tool
    def todo(id: str = "", text: str = "", status: str = "") -> str:
        """A todo tool that refuses everything."""
        raise ValueError("the list is locked")

    messages = [{"role": "user", "content": PLAN_TASKS["en"]}]
    result = al.agent_loop(messages, DemoClient(), tools=[al.bash, todo])
    assert al.validate(messages) == [] and result.stop_reason == "end_turn"
    assert [t[0][0] for t in calls(messages)[:-1]] == ["todo", "bash", "bash", "bash"]
    assert "agent.py" in result.text
    # it does not claim a list it stopped keeping is complete
    assert "items on my list are completed" not in result.text
    assert "stopped keeping my list" in result.text


def test_the_plan_streams_as_it_runs_unstreamed(project):
    streamed, _, result, _ = planned(PLAN_TASKS["en"], stream=True)
    plain, _, _, _ = planned(PLAN_TASKS["en"])
    assert calls(streamed) == calls(plain) and result.stop_reason == "end_turn"


def parent_and_child(task, model=SONNET):
    client = DemoClient()
    tools = [al.bash]
    helper = task_tool(client, tools)
    tools.append(helper)
    messages = [{"role": "user", "content": task}]
    result = al.agent_loop(messages, client, tools=tools, model=model)
    assert al.validate(messages) == []
    for child in helper.subagents.histories:  # each child's own history is valid too
        assert al.validate(child) == []
    return client, messages, result, helper


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("model", [SONNET, HAIKU])
def test_asked_to_use_a_helper_it_delegates_and_answers_from_the_summary(project, lang, model):
    client, messages, result, helper = parent_and_child(HELPER_TASKS[lang], model)
    turns = calls(messages)
    assert len(turns) == 2 and [name for name, _ in turns[0]] == ["task"]
    prompt = turns[0][0][1]["prompt"]
    assert "main" in prompt and "helper" not in prompt and "助手" not in prompt  # self-contained
    # the child: a fresh history (the prompt alone), tools without task, bash, then a summary
    children = [r for r in client.requests if r["messages"][0]["content"] == prompt]
    assert children and all(len(children[0]["messages"]) <= len(r["messages"]) for r in children)
    assert children[0]["messages"] == [{"role": "user", "content": prompt}]
    assert all({t["name"] for t in r["tools"]} == {"bash"} for r in children)
    (child,) = helper.subagents.histories
    assert child[0] == {"role": "user", "content": prompt} and al.validate(child) == []
    assert [n for t in calls(child) for n, _ in t] == ["bash"]
    child_text = child[-1]["content"][-1]["text"]
    assert "agent.py" in child_text and "Claude" not in child_text  # for the parent: unsigned
    # back in the parent: the tool_result is the child's final text, and the answer uses it
    (tool_result,) = [b for b in messages[2]["content"] if b["type"] == "tool_result"]
    summary = tool_result["content"]
    summary = summary if isinstance(summary, str) else summary[0]["text"]
    assert summary == child_text
    assert summary in result.text and "Claude" in result.text  # the parent's answer is signed


def test_without_the_task_tool_the_same_task_is_done_directly(project):
    messages = [{"role": "user", "content": HELPER_TASKS["en"]}]
    result = run(messages)
    assert [n for t in calls(messages) for n, _ in t] == ["bash"]
    assert "agent.py" in result.text and "main" in result.text


def test_a_helper_with_nothing_to_say_is_reported_as_such():
    from agentlab.tools.base import Tool

    quiet = Tool(
        "task",
        "a helper",
        {"type": "object", "properties": {"prompt": {"type": "string"}}},
        lambda prompt: "(no summary)",
    )
    messages = [{"role": "user", "content": HELPER_TASKS["en"]}]
    result = al.agent_loop(messages, DemoClient(), tools=[al.bash, quiet])
    assert al.validate(messages) == [] and "did not bring back a summary" in result.text


@pytest.mark.parametrize(
    "task, name",
    [
        ("Which file defines main?", "main"),
        ("where is main defined", "main"),
        ("find the definition of main", "main"),
        ("哪个文件定义了 main？", "main"),
    ],
)
def test_which_file_defines_a_name(project, task, name):
    assert classify(task) == "defines"
    messages = [{"role": "user", "content": task}]
    result = run(messages)
    assert "agent.py" in result.text and f"`{name}`" in result.text


@pytest.mark.parametrize(
    "task, intents",
    [
        (PLAN_TASKS["en"], ["list", "lines", "largest"]),
        ("Make a todo list: count the .py files and find the TODO comments", ["count_files", "search"]),
        ("Plan this: 1) list the files 2) count the lines of agent.py 3) report the largest file", ["list", "lines", "largest"]),
        ("Count the files, then count the folders, then show the newest file", ["count_files", "count_folders", "newest"]),
        ("How many files and folders are here?", ["count_files"]),  # one task: "and" is not split
        (PLAN_TASKS["zh"], ["list", "lines", "largest"]),
        ("用待办清单规划：统计文件数量，列出 Python 文件，然后找出最大的文件", ["count_files", "list", "largest"]),
        ("先规划一下：1. 列出文件 2. 统计 agent.py 的行数 3. 报告最大的文件", ["list", "lines", "largest"]),
    ],
)  # fmt: skip
def test_the_pieces_of_a_task_as_docs_reference_demo_lists_them(task, intents):
    from agentlab.fakeapi.demo.planning import pieces

    assert [p.intent for _, p in pieces(Task(task))] == intents


@pytest.mark.parametrize(
    "task",
    [
        "Ask a subagent to count the lines of agent.py and report back",
        "Investigate which file defines main",
        "派一个子代理统计 agent.py 的行数，然后告诉我",
        "让助手找出哪个文件定义了 main",
    ],
)
def test_the_helper_phrasings_in_the_docs_delegate_and_bring_back_the_answer(project, task):
    client, messages, result, helper = parent_and_child(task, HAIKU)
    assert [[n for n, _ in t] for t in calls(messages)] == [["task"], []]
    assert "agent.py" in result.text and "(no summary)" not in result.text


def test_a_task_tool_by_another_case_with_more_required_fields_gets_them_filled():
    schema = {
        "type": "object",
        "properties": {
            "description": {"type": "string"},
            "prompt": {"type": "string"},
            "subagent_type": {"type": "string"},
        },
        "required": ["description", "prompt", "subagent_type"],
    }
    tools = [{"name": "Task", "description": "a helper", "input_schema": schema}]
    messages = [{"role": "user", "content": HELPER_TASKS["en"]}]
    (use,) = [
        b
        for b in demo_reply({"model": HAIKU, "messages": messages, "tools": tools})
        if b["type"] == "tool_use"
    ]
    assert use["name"] == "Task" and set(use["input"]) == {"description", "prompt", "subagent_type"}
    assert use["input"]["prompt"].startswith("Find out which file defines main.")
    assert 0 < len(use["input"]["description"]) <= 60


def test_the_stepper_runs_the_same_plan_one_stage_at_a_time(project):
    todos = TodoList()
    loop = al.AgentLoop(DemoClient(), PLAN_TASKS["en"], tools=[al.bash], todos=todos)
    stages = []
    while loop.ended is None:
        stages.append(loop.step())
    plain, _, _, _ = planned(PLAN_TASKS["en"])
    assert calls(loop.messages) == calls(plain) and al.validate(loop.messages) == []
    assert reminded_at(loop.messages) == [10] and len(stages) > len(loop.messages)


def test_the_report_cuts_long_outputs_and_words_inside_a_piece_are_not_split(project):
    for n in range(30):
        (project / f"f{n:02d}.txt").write_text("x\n")
    messages, _, result, _ = planned(PLAN_TASKS["en"], HAIKU)
    assert "f29.txt" not in result.text and "..." in result.text  # ls -la, cut to 8 lines
    assert "agent.py has 5 lines" in result.text
    from agentlab.fakeapi.demo.planning import pieces

    newest = pieces(Task("先做计划：找出最后修改的文件，再统计文件数量"))
    assert [p.intent for _, p in newest] == ["newest", "count_files"]


@pytest.mark.parametrize(
    "task",
    [
        "Investigate which file in shop/ defines compute_tax.",
        "调查一下 shop/ 里哪个文件定义了 compute_tax",
    ],
)
def test_a_helper_looks_only_in_the_folder_named_and_finds_the_definition(project, task):
    (project / "shop").mkdir()
    (project / "shop" / "tax.py").write_text(
        "RATE = 0.2\n\n\ndef compute_tax(total):\n    return 0\n"
    )
    (project / "compute_tax.py").write_text("def compute_tax():\n    pass\n")  # outside shop/
    client, messages, result, helper = parent_and_child(task, HAIKU)
    child = [r for r in client.requests if "task" not in {t["name"] for t in r["tools"]}]
    (command,) = {
        b["input"]["command"]
        for r in child
        for m in r["messages"]
        for b in m["content"]
        if isinstance(m["content"], list) and b["type"] == "tool_use"
    }
    assert command.endswith("compute_tax\\b' shop | head -n 20")
    assert "shop/tax.py" in result.text
    assert "line 4" in result.text or "第 4 行" in result.text


def test_with_two_rounds_of_work_the_list_is_kept_up_to_date_and_no_reminder_fires(project):
    (project / "test_agent.py").write_text("def test_loop():\n    assert True\n")
    task = "Find the TODO lines, count the test files, then write a short report."
    messages, todos, result, events = planned(task, HAIKU)
    assert [[n for n, _ in t] for t in calls(messages)] == [
        ["todo", "todo"], ["todo"], ["bash"], ["todo", "todo"], ["bash"], ["todo"], []
    ]  # fmt: skip
    assert reminded_at(messages) == [] and "reminder" not in [e.kind for e in events]
    assert [i["status"] for i in todos.items] == ["completed"] * 2
    assert "1 test file" in result.text and "TODO" in result.text


def test_a_todo_tool_that_takes_the_whole_list_gets_the_whole_list_each_time(project):
    # A stand-in shaped like Claude Code's TodoWrite (an array of items with a status);
    # its real schema is not published, so this one is ours.
    item = {
        "type": "object",
        "properties": {
            "content": {"type": "string"},
            "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]},
            "activeForm": {"type": "string"},
        },
        "required": ["content", "status", "activeForm"],
    }
    schema = {"type": "object", "properties": {"todos": {"type": "array", "items": item}}}
    kept: list = []

    def write(todos):
        kept[:] = todos
        return "ok"

    board = al.Tool("TodoWrite", "Write the whole todo list.", schema, write)
    messages = [{"role": "user", "content": PLAN_TASKS["en"]}]
    result = al.agent_loop(messages, DemoClient(), tools=[al.bash, board], model=HAIKU)
    assert al.validate(messages) == [] and result.stop_reason == "end_turn"
    lists = [
        [i["status"] for i in v["todos"]] for t in calls(messages) for n, v in t if n == "TodoWrite"
    ]
    assert lists == [
        ["pending"] * 3,
        ["in_progress", "pending", "pending"],
        ["completed"] * 3,  # no reminder here: it brings the list up to date at the end
    ]
    assert [i["content"] for i in kept] == [
        "List the files",
        "Count the lines of agent.py",
        "Report the largest file",
    ]
    assert all(i["activeForm"] == i["content"] for i in kept)


def test_a_long_task_is_read_only_so_far_for_its_pieces(monkeypatch):
    from agentlab.fakeapi.demo import planning

    seen = []
    monkeypatch.setattr(
        planning, "plan", lambda task, listed=None: seen.append(task) or plan(task, listed)
    )
    found = planning.pieces(Task("ab, " * 16000 + "count the files and " * 3000))
    assert found == [] and len(seen) <= planning.MAX_CHUNKS * (planning.MAX_PIECES + 2)
    seen.clear()
    assert len(planning.pieces(Task("count the files and " * 3000))) == planning.MAX_PIECES
    assert len(seen) <= planning.MAX_PIECES + 2


@settings(max_examples=200, deadline=None)
@given(
    st.one_of(
        st.text(max_size=300),
        st.lists(
            st.sampled_from([*VOCABULARY, ",", "then", "and", "plan", "helper", "，", "然后"]),
            max_size=16,
        ).map(" ".join),
    )
)
def test_any_task_with_the_todo_and_task_tools_gets_a_reply_that_calls_only_tools_offered(task):
    from agentlab.tools.todo import todo_tool

    tools = [al.bash.definition, todo_tool(TodoList()).definition, task_tool(None, []).definition]
    content = demo_reply(
        {"model": HAIKU, "messages": [{"role": "user", "content": task or "x"}], "tools": tools}
    )
    assert isinstance(content, list) and content
    assert {b["name"] for b in content if b["type"] == "tool_use"} <= {"bash", "todo", "task"}


def test_a_view_can_step_the_child_before_the_parent_runs_it(project):
    client = DemoClient()
    tools = [al.bash]
    helper = task_tool(client, tools)
    tools.append(helper)
    parent = al.AgentLoop(client, HELPER_TASKS["en"], tools=tools, model=HAIKU)
    while parent.decision is None or parent.decision.action != "execute":
        parent.step()
    (call,) = parent.decision.tool_uses
    child = helper.child(call.input["prompt"])  # the child loop of the pending call
    child.step()
    assert child.messages[0] == {"role": "user", "content": call.input["prompt"]}
    result = parent.run()
    assert child.ended == "model" and al.validate(child.messages) == []
    assert child.messages[-1]["content"][-1]["text"] in result.text


def test_with_parallel_calls_disabled_the_list_is_written_one_item_a_reply(project):
    choice = {"type": "auto", "disable_parallel_tool_use": True}
    messages, todos, result, events = planned(PLAN_TASKS["en"], HAIKU, tool_choice=choice)
    turns = calls(messages)
    assert all(len(t) <= 1 for t in turns)
    assert turns[:3] == [
        [("todo", {"text": t})]
        for t in ["List the files", "Count the lines of agent.py", "Report the largest file"]
    ]
    assert [i["status"] for i in todos.items] == [
        "completed"
    ] * 3 and result.stop_reason == "end_turn"
    assert [e.kind for e in events].count("reminder") == 1


def test_a_reminder_in_other_words_is_read_as_one(project, monkeypatch):
    import agentlab.tools.todo as todo_module

    def shorter(results, rounds_since_todo):  # a student's reminder, in Chinese
        content = list(results)
        if rounds_since_todo >= 3:
            content.append({"type": "text", "text": "别忘了更新清单。"})
        return content

    monkeypatch.setattr(todo_module, "with_reminder", shorter)
    messages, todos, _, _ = planned(PLAN_TASKS["en"], HAIKU)
    assert messages[10]["content"][-1]["text"] == "别忘了更新清单。"
    assert calls(messages)[5] == [("todo", {"id": i, "status": "completed"}) for i in "123"]


def test_a_failure_already_in_brackets_is_not_bracketed_twice():
    from agentlab.tools.base import Tool
    from agentlab.tools.shell import BashResult

    def broken(command: str) -> BashResult:
        said = "(stopped: the sandbox ended unexpectedly)"
        return BashResult(said, None, False, False, 0.0, ".")

    schema = {"type": "object", "properties": {"command": {"type": "string"}}}
    tools = [Tool("bash", "Run a command.", schema, broken)]
    messages = [{"role": "user", "content": "List the files"}]
    run = al.agent_loop(messages, al.DemoClient(), tools=tools)
    assert "((" not in run.text and "(stopped: the sandbox ended unexpectedly)" in run.text
