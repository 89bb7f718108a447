"""Every sentence agentlab shows a student, in one table per language.

Views and explanations call ``t("key", **values)``; a translation is a new
table here, not a change to view code. ``set_language("zh")`` switches.
The API's own error text is never translated: students search for it.
"""

from __future__ import annotations

__all__ = ["STRINGS", "get_language", "set_language", "t"]

EN: dict[str, str] = {
    # roles, as a transcript shows them
    "role.user": "user",
    "role.assistant": "assistant",
    "role.tool_results": "user (tool results)",
    # stages of one loop turn
    "stage.request": "request",
    "stage.decide": "decide",
    "stage.execute": "execute",
    "stage.append": "append",
    "stage.done": "done",
    "stage.request.about": "Send the history, system prompt and tools to the model; save its reply.",
    "stage.decide.about": "Read stop_reason: run tools, stop, or ask again.",
    "stage.execute.about": "The harness runs each requested tool. The model runs nothing.",
    "stage.append.about": "Pair each result with its tool_use_id; append them as one user message.",
    "stage.done.about": "The loop has ended.",
    # decisions (one plain sentence each)
    "decide.tool_use": "The model asked for {n} tool call(s); the harness runs them and sends back the results.",
    "decide.end_turn": "The model finished its answer without asking for a tool, so the loop stops.",
    "decide.stop_sequence": "The model wrote one of the stop sequences, so the loop stops.",
    "decide.max_tokens": "The reply was cut off at max_tokens; a cut-off tool call is never run, so the loop stops.",
    "decide.pause_turn": "The API paused a long turn; send the reply back as it is and the model continues.",
    "decide.refusal": "The model declined this request; nothing is run and the loop stops.",
    "decide.model_context_window_exceeded": "The conversation no longer fits the model's context window, so the loop stops.",
    "decide.unknown": "Unknown stop reason {reason!r}: to be safe nothing is run and the loop stops.",
    "decide.max_turns": "The loop reached its limit of {n} model request(s) and stopped; the history is still valid.",
    "decide.budget": "The loop reached its budget ({what}) and stopped; the history is still valid.",
    # results made by the harness
    "result.not_run": "Not run: {reason}",
    "result.cut_off": "the reply was cut off (stop_reason {reason}) before this call was complete",
    "result.unknown_tool": "Unknown tool {name!r}. Available tools: {names}.",
    "result.no_impl": "Tool {name!r} has no implementation in this harness.",
    "result.bad_input": "Invalid input for tool {name!r}: {error}",
    "result.error": "Tool {name!r} failed: {error}",
    "result.denied": "Denied by the user: {reason}",
    "result.denied_default": "the user did not allow this call",
    "result.interrupted": "Interrupted: the run was stopped before this call finished.",
    "result.interrupted_skipped": "Interrupted: this call was not run because the run was stopped.",
    # hints next to the API's wording
    "hint.dict": "Each message is a dict with 'role' and 'content'.",
    "hint.list": "The history is a list of message dicts.",
    "hint.role": "A message's role is 'user' or 'assistant'; tool results also travel as 'user'.",
    "hint.content": "Each message needs 'content': a string or a list of content blocks.",
    "hint.empty_message": "Only the very last assistant message may be empty; drop empty messages.",
    "hint.empty_text": "Drop empty text blocks instead of sending them.",
    "hint.tool_use_role": "Only the model (assistant) asks for tools.",
    "hint.result_role": "Tool results are observations from the environment; they go in a 'user' message.",
    "hint.duplicate_id": "Every tool_use block needs its own id.",
    "hint.unexpected_result": "Each tool_result must answer a tool_use from the assistant message right before it, with the same id.",
    "hint.results_first": "Put every tool_result block first in the user message; any text goes after them.",
    "hint.unanswered": "Every tool_use needs a tool_result with its id in the very next message, even when the tool failed or was not run.",
    "hint.first": "Start the history with the user's task: [{'role': 'user', 'content': task}].",
    # connect()
    "connect.api": "agentlab: using the Anthropic API (model {model}).",
    "connect.base_url": "agentlab: using the Messages API at {url} (model {model}).",
    "connect.demo": "agentlab: no ANTHROPIC_API_KEY set, so this uses the offline demo model (a small script, not Claude). Set ANTHROPIC_API_KEY to use a real model.",
    # demo model
    "demo.intro": "I am agentlab's offline demo model: a small script, not Claude and not a language model.",
    "demo.help": "I can handle a few kinds of task with the bash tool: list files, count files or lines, search text, show the date and system, create a file and check it, and report disk use. For anything else, set ANTHROPIC_API_KEY (or ANTHROPIC_BASE_URL) and call agentlab.connect() again to use a real model.",
    "demo.sign": "(agentlab's offline demo model: a script, not Claude.)",
    "demo.no_bash": "I need the bash tool to do that; pass tools=[agentlab.bash] in the request.",
    # loop results and errors
    "loop.interrupted": "Interrupted. The unfinished tool calls were answered with is_error results, so the history is still valid.",
    "loop.request_failed": "The request failed and nothing was added to the history.",
    "result.repr": "LoopResult(stop_reason={reason!r}, turns={turns}, messages={n})",
}

ZH: dict[str, str] = {
    "role.user": "用户",
    "role.assistant": "助手",
    "role.tool_results": "用户（工具结果）",
    "stage.request": "请求",
    "stage.decide": "判断",
    "stage.execute": "执行",
    "stage.append": "追加",
    "stage.done": "结束",
    "stage.request.about": "把历史、系统指令和工具定义发给模型，并保存它的回答。",
    "stage.decide.about": "读取 stop_reason：执行工具、停止，或再次请求。",
    "stage.execute.about": "由 Harness 运行模型请求的每个工具，模型自己什么也不运行。",
    "stage.append.about": "按 tool_use_id 配对每个结果，作为一条 user 消息追加到历史。",
    "stage.done.about": "循环已结束。",
    "decide.tool_use": "模型请求了 {n} 个工具调用；Harness 运行它们并把结果送回。",
    "decide.end_turn": "模型没有请求工具就完成了回答，循环结束。",
    "decide.stop_sequence": "模型写出了停止序列，循环结束。",
    "decide.max_tokens": "回答在 max_tokens 处被截断；被截断的工具调用绝不执行，循环结束。",
    "decide.pause_turn": "API 暂停了一个较长的轮次；把回答原样发回，模型会继续。",
    "decide.refusal": "模型拒绝了这个请求；不执行任何东西，循环结束。",
    "decide.model_context_window_exceeded": "对话已超出模型的上下文窗口，循环结束。",
    "decide.unknown": "未知的 stop_reason {reason!r}：为安全起见不执行任何东西，循环结束。",
    "decide.max_turns": "循环达到了 {n} 次模型请求的上限并停止；历史仍然有效。",
    "decide.budget": "循环达到了预算（{what}）并停止；历史仍然有效。",
    "result.not_run": "未执行：{reason}",
    "result.cut_off": "回答在此调用完整之前被截断（stop_reason {reason}）",
    "result.unknown_tool": "未知工具 {name!r}。可用的工具：{names}。",
    "result.no_impl": "工具 {name!r} 在这个 Harness 中没有实现。",
    "result.bad_input": "工具 {name!r} 的输入无效：{error}",
    "result.error": "工具 {name!r} 执行失败：{error}",
    "result.denied": "被用户拒绝：{reason}",
    "result.denied_default": "用户没有允许这次调用",
    "result.interrupted": "已中断：这次调用完成之前运行被停止。",
    "result.interrupted_skipped": "已中断：运行被停止，这次调用没有执行。",
    "hint.dict": "每条消息都是一个包含 'role' 和 'content' 的字典。",
    "hint.list": "历史是一个由消息字典组成的列表。",
    "hint.role": "消息的 role 只能是 'user' 或 'assistant'；工具结果也用 'user' 传递。",
    "hint.content": "每条消息都需要 'content'：字符串或内容块列表。",
    "hint.empty_message": "只有最后一条 assistant 消息可以为空；请删除空消息。",
    "hint.empty_text": "不要发送空的文本块，直接删掉。",
    "hint.tool_use_role": "只有模型（assistant）会请求工具。",
    "hint.result_role": "工具结果是环境的观察，放在 'user' 消息里。",
    "hint.duplicate_id": "每个 tool_use 块都需要自己的 id。",
    "hint.unexpected_result": "每个 tool_result 必须用相同的 id 回应紧挨着的上一条 assistant 消息里的 tool_use。",
    "hint.results_first": "把所有 tool_result 块放在 user 消息的最前面，文字放在它们后面。",
    "hint.unanswered": "每个 tool_use 都需要在紧接着的下一条消息里有同 id 的 tool_result，即使工具失败或没有执行。",
    "hint.first": "历史从用户的任务开始：[{'role': 'user', 'content': task}]。",
    "connect.api": "agentlab：使用 Anthropic API（模型 {model}）。",
    "connect.base_url": "agentlab：使用 {url} 上的 Messages API（模型 {model}）。",
    "connect.demo": "agentlab：没有设置 ANTHROPIC_API_KEY，因此使用离线演示模型（一个小脚本，不是 Claude）。设置 ANTHROPIC_API_KEY 即可使用真实模型。",
    "demo.intro": "我是 agentlab 的离线演示模型：一个小脚本，不是 Claude，也不是语言模型。",
    "demo.help": "我能用 bash 工具完成几类任务：列出文件、统计文件或行数、搜索文本、显示日期和系统信息、创建文件并检查、报告磁盘用量。其他任务请设置 ANTHROPIC_API_KEY（或 ANTHROPIC_BASE_URL），再调用 agentlab.connect() 使用真实模型。",
    "demo.sign": "（agentlab 离线演示模型：一个脚本，不是 Claude。）",
    "demo.no_bash": "做这件事需要 bash 工具；请在请求中传入 tools=[agentlab.bash]。",
    "loop.interrupted": "已中断。未完成的工具调用已用 is_error 结果回应，历史仍然有效。",
    "loop.request_failed": "请求失败，历史中没有添加任何内容。",
    "result.repr": "LoopResult(stop_reason={reason!r}, turns={turns}, messages={n})",
}

STRINGS: dict[str, dict[str, str]] = {"en": EN, "zh": ZH}
_language = "en"


def set_language(language: str) -> None:
    """Choose the language of what agentlab shows: ``"en"`` or ``"zh"``."""
    global _language
    if language not in STRINGS:
        raise ValueError(f"unknown language {language!r}; choose one of {sorted(STRINGS)}")
    _language = language


def get_language() -> str:
    return _language


def t(key: str, **values: object) -> str:
    """The sentence for ``key`` in the current language (English if missing)."""
    text = STRINGS[_language].get(key) or EN.get(key) or key
    return text.format(**values) if values else text
