"""What the demo model says, in English and Chinese.

The demo answers in the language of the task (``say(lang, ...)`` takes it
explicitly) unless ``agentlab.set_language`` fixed one. A key ending in
``.one`` / ``.other`` has a plural: ``say(lang, "key", n=3)`` picks the form
(Chinese needs none, so its tables only hold ``.other``).
"""

from __future__ import annotations

from typing import Any

EN: dict[str, str] = {
    "sign": "(agentlab's offline demo model: a script, not Claude.)",
    "intro": "I am agentlab's offline demo model: a small script, not Claude and not a language model.",
    "help": "I can handle a few kinds of task with the bash tool: list files, count files, folders or lines, search text, find the largest, longest or newest file, show the date and system, create a new file and check it, and report disk space. For anything else use a real model: set ANTHROPIC_API_KEY (or ANTHROPIC_BASE_URL) and start again.",
    "no_bash": "I need a tool that runs shell commands to do that, and this request's tools list has none.",
    "refusal": 'This is the offline demo\'s practice refusal: the request contains the test phrase "agentlab refusal test". Send the same request to the model in recommended_model to get an answer.',
    "which_files": "Which files do you mean? Ask me to list them first: for a follow-up like this I read the conversation's history, and there is no listing in it yet.",
    # what it says (or thinks) before a tool call
    "intro.bash": "Let me check with bash.",
    "intro.both": "I'll ask for the date and the system at once: two tool calls in one reply.",
    "intro.create": "I'll write {name} without overwriting anything (noclobber), then check it.",
    "intro.check": "Now let me read it back to check.",
    "intro.followup": "The last listing was of {where}; `{cmd}` answers this.",
    "fallback": "`{cmd}` failed here; let me try `{fallback}` instead.",
    "fresh": "{name} already exists and I will not overwrite it; I'll write {fresh} instead.",
    "think.answer": "`{cmd}` worked; I can answer now.",
    "think.failed": "`{cmd}` failed; I will say so rather than guess.",
    "think.cannot": "This task is not in the demo's table of intents.",
    # answers
    "failed": "The command `{cmd}` did not work ({why}). I will not guess an answer; check the folder, or try another task.",
    "edited": "You changed my command before it ran: I asked for `{asked}`, and what ran was `{ran}`. It printed:\n\n```\n{out}\n```\n\nThat is the output of your command, so I will not read it as the answer to my own.",
    "search.none": "No line here contains {word} (`{cmd}` found nothing).",
    "search.one": "I found 1 line containing {word} (`{cmd}`):\n\n```\n{out}\n```",
    "search.other": "I found {n} lines containing {word} (`{cmd}`):\n\n```\n{out}\n```",
    "search.many": "I found at least {n} lines containing {word}; here are the first {n} (`{cmd}`):\n\n```\n{out}\n```",
    "search_files.one": "1 file contains {word} (`{cmd}`):\n\n```\n{out}\n```",
    "search_files.other": "{n} files contain {word} (`{cmd}`):\n\n```\n{out}\n```",
    "files.one": "There is 1 file here, not counting hidden folders (`{cmd}`).",
    "files.other": "There are {n} files here, not counting hidden folders (`{cmd}`).",
    "ext_files.one": "There is 1 {kind} file here, not counting hidden folders (`{cmd}`).",
    "ext_files.other": "There are {n} {kind} files here, not counting hidden folders (`{cmd}`).",
    "folders.one": "There is 1 folder here, not counting hidden ones (`{cmd}`).",
    "folders.other": "There are {n} folders here, not counting hidden ones (`{cmd}`).",
    "lines_file.one": "{name} has 1 line (`{cmd}`).",
    "lines_file.other": "{name} has {n} lines (`{cmd}`).",
    "lines_all.one": "The {kind} files here have 1 line in all (`{cmd}`).",
    "lines_all.other": "The {kind} files here have {n} lines in all (`{cmd}`).",
    "list": "Here is what `{cmd}` shows:\n\n```\n{out}\n```",
    "list_ext.none": "There are no {kind} files here (`{cmd}` found none).",
    "list_ext.one": "I found 1 {kind} file (`{cmd}`):\n\n```\n{out}\n```",
    "list_ext.other": "I found {n} {kind} files (`{cmd}`):\n\n```\n{out}\n```",
    "date": "The date here is {out} (`{cmd}`).",
    "system": "This system is (`{cmd}`):\n\n```\n{out}\n```",
    "date_system": "The date here is {first}, and the system is:\n\n```\n{out}\n```",
    "disk_used": "This folder takes {size} on disk (`{cmd}`).",
    "disk_free": "This disk has {avail} free of {size} (`{cmd}`).",
    "disk_raw": "Disk space (`{cmd}`):\n\n```\n{out}\n```",
    "create": "Done: I wrote {name} (a new file) and read it back with `{cmd}`. It contains:\n\n```\n{out}\n```",
    "create_fresh": "{name} already existed, so I did not overwrite it: I wrote {fresh} instead and read it back with `{cmd}`. It contains:\n\n```\n{out}\n```",
    "no_files": "There are no files in {where} (`{cmd}`).",
    "largest": "The largest file in {where} is {name} (`{cmd}`).",
    "smallest": "The smallest file in {where} is {name} (`{cmd}`).",
    "newest": "The most recently changed file in {where} is {name} (`{cmd}`).",
    "oldest": "The file in {where} changed longest ago is {name} (`{cmd}`).",
    "longest.one": "The longest file in {where} is {name}, with 1 line (`{cmd}`).",
    "longest.other": "The longest file in {where} is {name}, with {n} lines (`{cmd}`).",
    "shortest.one": "The shortest file in {where} is {name}, with 1 line (`{cmd}`).",
    "shortest.other": "The shortest file in {where} is {name}, with {n} lines (`{cmd}`).",
    "here": "this folder",
    "kind.py": "Python (.py)",
    # answers about a named file or folder, counts, CPUs (QA fixes, issue 11 follow-up)
    "show": "Here are the first lines of {name} (`{cmd}`):\n\n```\n{out}\n```",
    "lines_files": "Lines per file (`{cmd}`):\n\n```\n{out}\n```",
    "disk_used_in": "{where} takes {size} on disk (`{cmd}`).",
    "search.count.one": "{word} appears 1 time (`{cmd}`).",
    "search.count.other": "{word} appears {n} times (`{cmd}`).",
    "search_files.count.one": "1 file contains {word} (`{cmd}`).",
    "search_files.count.other": "{n} files contain {word} (`{cmd}`).",
    "files_folders": "I count {files} and {folders} here, not counting hidden ones (`{cmd}`).",
    "n_files.one": "1 file",
    "n_files.other": "{n} files",
    "n_folders.one": "1 folder",
    "n_folders.other": "{n} folders",
    "cpus.one": "This machine has 1 CPU available to me (`{cmd}`).",
    "cpus.other": "This machine has {n} CPUs available to me (`{cmd}`).",
    # leftovers (issue 12): tool_choice
    "tools_off": "This request says tool_choice none, so I may not run the command I would need. Ask again without it.",
}

ZH: dict[str, str] = {
    "sign": "（agentlab 离线演示模型：一个脚本，不是 Claude。）",
    "intro": "我是 agentlab 的离线演示模型：一个小脚本，不是 Claude，也不是语言模型。",
    "help": "我能用 bash 工具完成几类任务：列出文件，统计文件、文件夹或行数，搜索文本，找出最大、最长或最新的文件，显示日期和系统信息，创建新文件并检查，报告磁盘空间。其他任务请换用真实模型：设置 ANTHROPIC_API_KEY（或 ANTHROPIC_BASE_URL）后重新开始。",
    "no_bash": "做这件事需要一个能运行 shell 命令的工具，而这次请求的 tools 列表里没有。",
    "refusal": '这是离线演示模型的练习拒绝：请求里有测试短语 "agentlab refusal test"。把同样的请求发给 recommended_model 里的模型，就能得到回答。',
    "which_files": "你指的是哪些文件？请先让我列出它们：这类追问我要读对话历史，而历史里还没有文件列表。",
    "intro.bash": "我用 bash 查一下。",
    "intro.both": "我同时查询日期和系统：一个回答里两个工具调用。",
    "intro.create": "我来写入 {name}，不覆盖任何已有文件（noclobber），然后检查它。",
    "intro.check": "现在把它读回来检查一下。",
    "intro.followup": "上一次列出的是{where}；`{cmd}` 可以回答这个问题。",
    "fallback": "`{cmd}` 在这里失败了；我改用 `{fallback}` 试试。",
    "fresh": "{name} 已经存在，我不会覆盖它；我改为写入 {fresh}。",
    "think.answer": "`{cmd}` 成功了；现在可以回答。",
    "think.failed": "`{cmd}` 失败了；我要如实说明，而不是猜测。",
    "think.cannot": "这个任务不在演示模型的意图表里。",
    "failed": "命令 `{cmd}` 没有成功（{why}）。我不会猜测答案；请检查文件夹，或换一个任务。",
    "edited": "你在运行前修改了我的命令：我请求的是 `{asked}`，实际运行的是 `{ran}`。它的输出是：\n\n```\n{out}\n```\n\n这是你的命令的输出，所以我不把它当作我那条命令的答案。",
    "search.none": "这里没有包含 {word} 的行（`{cmd}` 什么也没找到）。",
    "search.other": "我找到了 {n} 行包含 {word}（`{cmd}`）：\n\n```\n{out}\n```",
    "search.many": "包含 {word} 的行至少有 {n} 行；这里是前 {n} 行（`{cmd}`）：\n\n```\n{out}\n```",
    "search_files.other": "有 {n} 个文件包含 {word}（`{cmd}`）：\n\n```\n{out}\n```",
    "files.other": "这里有 {n} 个文件，不算隐藏文件夹（`{cmd}`）。",
    "ext_files.other": "这里有 {n} 个 {kind}文件，不算隐藏文件夹（`{cmd}`）。",
    "folders.other": "这里有 {n} 个文件夹，不算隐藏的（`{cmd}`）。",
    "lines_file.other": "{name} 有 {n} 行（`{cmd}`）。",
    "lines_all.other": "这里的 {kind}文件一共 {n} 行（`{cmd}`）。",
    "list": "这是 `{cmd}` 的输出：\n\n```\n{out}\n```",
    "list_ext.none": "这里没有 {kind}文件（`{cmd}` 一个也没找到）。",
    "list_ext.other": "我找到了 {n} 个 {kind}文件（`{cmd}`）：\n\n```\n{out}\n```",
    "date": "这里的日期是 {out}（`{cmd}`）。",
    "system": "这个系统是（`{cmd}`）：\n\n```\n{out}\n```",
    "date_system": "这里的日期是 {first}，系统是：\n\n```\n{out}\n```",
    "disk_used": "这个文件夹占用 {size} 磁盘空间（`{cmd}`）。",
    "disk_free": "这个磁盘还有 {avail} 可用，总共 {size}（`{cmd}`）。",
    "disk_raw": "磁盘空间（`{cmd}`）：\n\n```\n{out}\n```",
    "create": "完成：我写入了 {name}（一个新文件），并用 `{cmd}` 读了回来。内容是：\n\n```\n{out}\n```",
    "create_fresh": "{name} 已经存在，所以我没有覆盖它：我改为写入 {fresh}，并用 `{cmd}` 读了回来。内容是：\n\n```\n{out}\n```",
    "no_files": "{where}里没有文件（`{cmd}`）。",
    "largest": "{where}里最大的文件是 {name}（`{cmd}`）。",
    "smallest": "{where}里最小的文件是 {name}（`{cmd}`）。",
    "newest": "{where}里最近修改的文件是 {name}（`{cmd}`）。",
    "oldest": "{where}里最早修改的文件是 {name}（`{cmd}`）。",
    "longest.other": "{where}里最长的文件是 {name}，有 {n} 行（`{cmd}`）。",
    "shortest.other": "{where}里最短的文件是 {name}，有 {n} 行（`{cmd}`）。",
    "here": "这个文件夹",
    "kind.py": "Python（.py）",
    # 指定的文件或文件夹、计数、CPU（QA 修正）
    "show": "这是 {name} 的前几行（`{cmd}`）：\n\n```\n{out}\n```",
    "lines_files": "每个文件的行数（`{cmd}`）：\n\n```\n{out}\n```",
    "disk_used_in": "{where} 占用 {size} 磁盘空间（`{cmd}`）。",
    "search.count.other": "{word} 出现了 {n} 次（`{cmd}`）。",
    "search_files.count.other": "有 {n} 个文件包含 {word}（`{cmd}`）。",
    "files_folders": "这里有 {files}和 {folders}，不算隐藏的（`{cmd}`）。",
    "n_files.other": "{n} 个文件",
    "n_folders.other": "{n} 个文件夹",
    "cpus.other": "这台机器有 {n} 个 CPU 可用（`{cmd}`）。",
    # leftovers (issue 12): tool_choice
    "tools_off": "这个请求设置了 tool_choice none，所以我不能运行需要的命令。去掉它再问一次。",
}

STRINGS = {"en": EN, "zh": ZH}


def say(lang: str, key: str, /, **values: Any) -> str:
    """The demo's sentence for ``key`` in ``lang``; a value ``n`` picks the plural form."""
    table = STRINGS.get(lang, EN)
    n = values.get("n")
    if isinstance(n, int):
        form = f"{key}.one" if n == 1 and f"{key}.one" in table else f"{key}.other"
        key = form if form in table or form in EN else key
    text = table.get(key) or EN[key]
    return text.format(**values) if values else text
