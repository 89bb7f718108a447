"""One table: a request to the local server, and what the real API answers to it.

Each row cites where the real behaviour comes from (page and the date it was
checked). The pages are Anthropic's public docs on platform.claude.com (models
overview, "What's new in Claude Sonnet 5.5" and its migration guide, handling
stop reasons, message threads), checked 2026-11-30. A row whose exact wording is not public says so:
it pins agentlab's wording, and only the status and error type are the API's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agentlab import models
from agentlab.fakeapi import thinking as _thinking

SONNET = "claude-sonnet-5-5"  # the default model: no prefill, no forced tool choice, no sampling
HAIKU = "claude-haiku-4-5"  # an older model that accepts all three
STRICT = "2026-10-21"  # what SDK 2.14 sends (anthropic/_constants.py)
OLD = "2023-06-01"

ERRORS_PAGE = "platform.claude.com/docs/en/api/errors, checked 2026-11-30"
MESSAGES_REF = "platform.claude.com/docs/en/api/messages, checked 2026-11-30"
STOP_REASONS = (
    "platform.claude.com/docs/en/build-with-claude/handling-stop-reasons, checked 2026-11-30"
)
TOOL_USE = (
    "platform.claude.com/docs/en/agents-and-tools/tool-use/implement-tool-use, checked 2026-11-30"
)
# The forcing rule: any = one of the tools offered, tool = exactly that one, none = no
# tool; with any/tool the API prefills the turn, so no text comes before the call.
TOOL_CHOICE = (
    "platform.claude.com/docs/en/agents-and-tools/tool-use/implement-tool-use (tool_choice), "
    "checked 2026-12-01"
)
MODELS_API = "platform.claude.com/docs/en/api/models-list, checked 2026-11-30"
SONNET_55 = "Sonnet 5.5 migration guide (platform.claude.com/docs), checked 2026-11-30"
SONNET_5 = "claude-sonnet-5"
PREFIX_CHECKS = (
    "platform.claude.com/docs/en/build-with-claude/preserved-thinking/prefix-checks, "
    "checked 2026-12-01"
)
# The 400's sentence is quoted on this page; the docs add that it "may go on to say what
# changed", and that continuation is not public (agentlab stops after the quoted text).
BOUND = (
    "platform.claude.com/docs/en/build-with-claude/preserved-thinking/"
    "fix-bound-to-a-different-conversation, checked 2026-12-01"
)
SAMPLING = (
    'live-API reports of "`temperature` is deprecated for this model.": '
    "github.com/simstudioai/sim/pull/5328 (claude-sonnet-5, 2026-07-01), "
    "github.com/dust-tt/dust/pull/27634 (claude-opus-4-8, only temperature 1 accepted, "
    "2026-06-19); checked 2026-12-01"
)
EXTENDED_THINKING = (
    "platform.claude.com/docs/en/build-with-claude/extended-thinking (budget_tokens: at least "
    "1,024 and less than max_tokens), checked 2026-12-01"
)
UNKNOWN = "exact wording not public: agentlab's text; status and type as on " + ERRORS_PAGE

USER = {"role": "user", "content": "hi"}
TOOL = {"name": "bash", "description": "Run a command.",
        "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}}}  # fmt: skip
USE = {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {"command": "ls"}}
RESULT = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.py"}
SYSTEM = {"role": "system", "content": "Be brief."}


def req(model: str = SONNET, **fields: Any) -> dict[str, Any]:
    """A request body: one user message unless ``messages`` is given."""
    return {"model": model, "max_tokens": 200, "messages": [USER], **fields}


def _thought(turns: int = 1) -> list[dict[str, Any]]:
    """A history whose assistant turns start with a thinking block signed as the demo
    server signs them: bound to the system prompt "Be brief.", [TOOL] and what came
    before (preserved thinking)."""
    messages: list[dict[str, Any]] = [USER]
    for n in range(1, turns + 1):
        asked = req(system="Be brief.", tools=[TOOL], messages=list(messages))
        block = _thinking.make_block(SONNET, f"Step {n}: list the files.", "omitted", asked)
        use, result = {**USE, "id": f"toolu_{n}"}, {**RESULT, "tool_use_id": f"toolu_{n}"}
        messages += [{"role": "assistant", "content": [block, use]},
                     {"role": "user", "content": [result]}]  # fmt: skip
    return messages


THOUGHT, THOUGHT2 = _thought(), _thought(2)
MOVED = [
    *THOUGHT2[:1],
    {"role": "assistant", "content": THOUGHT2[1]["content"][1:]},
    *THOUGHT2[2:],
]  # fmt: skip  (the first turn's thinking block left out)
EDITED = [{"role": "user", "content": "hi there"}, *THOUGHT[1:]]
BOUND_400 = (
    "{}: Invalid `signature` in `thinking` block. The block is bound to a different "
    "conversation. Remove the block, or set `thinking.block_binding.prefix_mismatch_behavior` "
    'to "drop_block".'
)
DROP = {"type": "adaptive", "block_binding": {"prefix_mismatch_behavior": "drop_block"}}


@dataclass(frozen=True)
class Case:
    """One row. ``error`` is the exact ``error.message`` (None: a 2xx answer);
    ``check`` looks at the JSON of a 2xx answer."""

    name: str
    body: dict[str, Any]
    status: int
    error: str | None
    source: str
    version: str | None = STRICT  # the anthropic-version header (None: not sent)
    check: Callable[[dict[str, Any]], bool] | None = None
    headers: dict[str, str] = field(default_factory=dict)


def _types(reply: dict[str, Any]) -> list[str]:
    return [b["type"] for b in reply["content"]]


CASES = [
    Case("a plain request gets a message", req(), 200, None, MESSAGES_REF,
         check=lambda r: r["type"] == "message" and r["role"] == "assistant"
         and r["stop_reason"] == "end_turn" and r["id"].startswith("msg_")
         and {"input_tokens", "output_tokens"} <= set(r["usage"])),
    Case("no anthropic-version header", req(), 400, "anthropic-version: header is required",
         "wording seen in public curl transcripts and issue reports; not on a docs page",
         version=None),
    Case("an unknown model is a 404", req("claude-nope-1"), 404,
         f"model: claude-nope-1 (this server accepts: {', '.join(models.ids())})",
         ERRORS_PAGE + " (404 not_found_error); the text up to the name as in public "
         "reports, the list of accepted names after it agentlab's"),
    Case("temperature under 2026-10-21", req(temperature=0.5), 400,
         "temperature: Extra inputs are not permitted", SONNET_55),
    Case("an unknown top-level field under 2026-10-21", req(colour="blue"), 400,
         "colour: Extra inputs are not permitted", SONNET_55),
    Case("an unknown field under an older version is ignored", req(colour="blue"), 200, None,
         SONNET_55 + " (the strict check comes with 2026-10-21)", version=OLD),
    Case("temperature on Sonnet 5.5 under an older version", req(temperature=0.5), 400,
         "`temperature` is deprecated for this model.",
         SAMPLING + " (extrapolated to Sonnet 5.5)", version=OLD),
    Case("temperature on Haiku 4.5 under an older version", req(HAIKU, temperature=0.5), 200,
         None, MESSAGES_REF, version=OLD),
    Case("assistant prefill on Sonnet 5.5",
         req(messages=[USER, {"role": "assistant", "content": "Sure,"}]), 400,
         "This model does not support assistant message prefill. "
         "The conversation must end with a user message.",
         SONNET_55 + "; text as reported for Opus 4.6, not confirmed for Sonnet 5.5"),
    Case("assistant prefill on Haiku 4.5",
         req(HAIKU, messages=[USER, {"role": "assistant", "content": "Sure,"}]), 200, None,
         MESSAGES_REF),
    Case("forced tool_choice any on Sonnet 5.5", req(tools=[TOOL], tool_choice={"type": "any"}),
         400, "Thinking may not be enabled when tool_choice forces tool use.",
         SONNET_55 + "; text from the extended-thinking docs, not confirmed for Sonnet 5.5"),
    Case("forced tool_choice tool on Haiku 4.5",
         req(HAIKU, tools=[TOOL], tool_choice={"type": "tool", "name": "bash"}), 200, None,
         TOOL_CHOICE, check=lambda r: r["stop_reason"] == "tool_use"
         and _types(r)[0] == "tool_use" and "text" not in _types(r)),
    Case("forced tool_choice any on Haiku 4.5: a tool call, no text before it",
         req(HAIKU, tools=[TOOL], tool_choice={"type": "any"}), 200, None, TOOL_CHOICE,
         check=lambda r: r["stop_reason"] == "tool_use" and set(_types(r)) == {"tool_use"}),
    Case("forced tool_choice with thinking on Sonnet 5",
         req("claude-sonnet-5", tools=[TOOL], tool_choice={"type": "any"},
             thinking={"type": "adaptive"}), 400,
         "Thinking may not be enabled when tool_choice forces tool use.",
         "extended-thinking docs (tool use: only auto and none with thinking), checked "
         "2026-11-30; the sentence as there"),
    Case("tool_choice any without tools",
         req(HAIKU, tool_choice={"type": "any"}), 400,
         "tool_choice: 'any' forces a tool call, but the request defines no `tools`", UNKNOWN),
    Case("tool_choice naming an undefined tool",
         req(HAIKU, tools=[TOOL], tool_choice={"type": "tool", "name": "python"}), 400,
         "tool_choice.name: no tool named 'python' in `tools`; the forced tool must be one of "
         "the tools defined in the request", UNKNOWN),
    Case("thinking enabled with a budget on Sonnet 5.5",
         req(thinking={"type": "enabled", "budget_tokens": 1024}), 400,
         "thinking.type: 'enabled' is not supported by claude-sonnet-5-5; "
         "use 'adaptive' or 'between_tools'", SONNET_55 + "; " + UNKNOWN),
    Case("thinking disabled on Sonnet 5.5", req(thinking={"type": "disabled"}), 400,
         "thinking.type: 'disabled' is not supported by claude-sonnet-5-5; "
         "use 'adaptive' or 'between_tools'", SONNET_55 + "; " + UNKNOWN),
    Case("adaptive thinking on Sonnet 5.5", req(thinking={"type": "adaptive"}), 200, None,
         SONNET_55),
    Case("a system message first",
         req(messages=[{"role": "system", "content": "Be brief."}, USER]), 400,
         "messages.0: use the top-level 'system' parameter for the initial system prompt",
         SONNET_55 + "; the sentence as recorded from the live API (a transcript, not a public page)"),
    Case("a system message after a user turn on Sonnet 5",
         req(SONNET_5, messages=[USER, SYSTEM]), 200, None,
         "decided from the evidence: Claude Code 2.1 sends it to claude-sonnet-5; docs.rs "
         "gproxy-transform claude_mid_conv_system (only models before Opus 4.8 refuse it); "
         "apidog's Sonnet 5 vs 5.5 table says no (contested); checked 2026-12-01"),
    # Preserved thinking: the prefix check.
    Case("an append-only continuation keeps its thinking blocks valid",
         req(system="Be brief.", tools=[TOOL], messages=THOUGHT), 200, None, PREFIX_CHECKS),
    Case("a new system message at the end is append-only",
         req(system="Be brief.", tools=[TOOL], messages=[*THOUGHT, SYSTEM]), 200, None,
         PREFIX_CHECKS + " (put updates in a role system message at the end)"),
    Case("a changed system prompt under a thinking block",
         req(system="Be brief. Today is Tuesday.", tools=[TOOL], messages=THOUGHT), 400,
         BOUND_400.format("messages.1.content.0"), BOUND),
    Case("a changed tool list under a thinking block",
         req(system="Be brief.", tools=[TOOL, {**TOOL, "name": "shell"}], messages=THOUGHT),
         400, BOUND_400.format("messages.1.content.0"), BOUND),
    Case("an edited earlier message under a thinking block",
         req(system="Be brief.", tools=[TOOL], messages=EDITED), 400,
         BOUND_400.format("messages.1.content.0"), BOUND),
    Case("a thinking block between others left out",
         req(system="Be brief.", tools=[TOOL], messages=MOVED), 400,
         BOUND_400.format("messages.3.content.0"), PREFIX_CHECKS + "; " + BOUND),
    Case("drop_block drops the invalid blocks instead",
         req(system="Be brief. Today is Tuesday.", tools=[TOOL], messages=THOUGHT, thinking=DROP),
         200, None, BOUND + " (the reply's input_transformations lists the dropped blocks; "
         "the shape of its items is agentlab's, not public)",
         check=lambda r: r["input_transformations"][0]["location"] == "messages.1.content.0"),
    Case("a changed system prompt on a model without preserved thinking", req(
        HAIKU, system="Other.", tools=[TOOL], messages=[USER, {"role": "assistant", "content": [
            _thinking.make_block(HAIKU, "x", "summarized", req(HAIKU)), USE]},
            {"role": "user", "content": [RESULT]}]), 200, None,
         PREFIX_CHECKS + " (claude-haiku-4-5 is not in its supportedModels)"),
    # Sampling by the evidence.
    Case("the default temperature on Sonnet 5", req(SONNET_5, temperature=1), 200, None,
         SAMPLING, version=OLD),
    Case("another temperature on Sonnet 5", req(SONNET_5, temperature=0), 400,
         "`temperature` is deprecated for this model.", SAMPLING, version=OLD),
    Case("another temperature on Opus 4.8", req("claude-opus-4-8", temperature=0.2), 400,
         "`temperature` is deprecated for this model.", SAMPLING, version=OLD),
    Case("the default temperature on Sonnet 5.5 (llm-anthropic sends it)",
         req(temperature=1), 200, None,
         SAMPLING + " (extrapolated from Sonnet 5 and Opus 4.8: no measurement for Sonnet 5.5)",
         version=OLD),
    # Small shapes.
    Case("tool_choice as a string", req(tools=[TOOL], tool_choice="auto"), 400,
         "tool_choice: Input should be an object",
         "the live API's answer as recorded from a transcript, not on a public page "
         "(pydantic's own wording differs); checked 2026-12-01"),
    Case("a thinking budget under 1024", req(
        HAIKU, thinking={"type": "enabled", "budget_tokens": 500}), 400,
         "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024",
         EXTENDED_THINKING + "; the sentence as recorded from the live API (not a public page)"),
    Case("a thinking budget not below max_tokens", req(
        HAIKU, max_tokens=2000, thinking={"type": "enabled", "budget_tokens": 2000}), 400,
         "max_tokens must be greater than thinking.budget_tokens "
         "(max_tokens: 2000, budget_tokens: 2000)", EXTENDED_THINKING + "; " + UNKNOWN),
    Case("an unknown output format", req(output_config={"format": {"type": "bogus"}}), 400,
         "output_config.format: Input tag 'bogus' found using 'type' does not match any of the "
         "expected tags: 'json_schema'",
         "platform.claude.com/docs/en/build-with-claude/structured-outputs (json_schema is the "
         "one format type), checked 2026-12-01; " + UNKNOWN),
    Case("an effort level", req(output_config={"effort": "high"}), 200, None,
         "platform.claude.com/docs/en/build-with-claude/effort, checked 2026-12-01"),
    Case("a system message after a user turn on Sonnet 5.5",
         req(messages=[USER, {"role": "system", "content": "Be brief."}]), 200, None, SONNET_55),
    Case("a system message after tool results on Sonnet 5.5", req(tools=[TOOL], messages=[
        USER, {"role": "assistant", "content": [USE]}, {"role": "user", "content": [RESULT]},
        SYSTEM]), 200, None, SONNET_55 + " (a user turn, whatever its blocks)"),
    Case("a system message after an assistant turn on Sonnet 5.5",
         req(messages=[USER, {"role": "assistant", "content": "Hello."}, SYSTEM, USER]), 400,
         "messages.2: a `system` message must come right after a `user` turn, not after an "
         "`assistant` turn (agentlab's check; the API's wording for this error is not public)",
         SONNET_55 + " (accepted after a user turn); " + UNKNOWN),
    Case("a system message between a tool call and its result on Sonnet 5.5",
         req(tools=[TOOL], messages=[USER, {"role": "assistant", "content": [USE]}, SYSTEM,
                                     {"role": "user", "content": [RESULT]}]), 400,
         "messages.2: a `system` message must come right after a `user` turn, not after an "
         "`assistant` turn (agentlab's check; the API's wording for this error is not public)",
         SONNET_55 + " (accepted after a user turn); " + UNKNOWN),
    Case("two system messages in a row on Sonnet 5.5", req(messages=[USER, SYSTEM, SYSTEM]), 400,
         "messages.2: a `system` message must come right after a `user` turn, not after "
         "another `system` message (agentlab's check; the API's wording for this error is not "
         "public)", "agentlab's choice, stricter than may be needed: " + SONNET_55 + " documents "
         "system messages after a user turn only, and two in a row can be merged; " + UNKNOWN),
    # A system message's own content is checked like any message's (qa2): al.validate
    # refused these while the server accepted them.
    Case("an empty system message on Sonnet 5.5",
         req(messages=[USER, {"role": "system", "content": ""}]), 400,
         "messages.1: all messages must have non-empty content except for the optional final "
         "assistant message", MESSAGES_REF + " (the rule for every message); " + UNKNOWN),
    Case("a system message holding a tool_result on Sonnet 5.5",
         req(messages=[USER, {"role": "system", "content": [RESULT]}]), 400,
         "messages.1.content.0.text: Field required", UNKNOWN),
    Case("a system message on Haiku 4.5",
         req(HAIKU, messages=[USER, {"role": "system", "content": "Be brief."}]), 400,
         "messages.1.role: Input should be 'user' or 'assistant'", MESSAGES_REF),
    Case("the first message is the assistant's",
         req(HAIKU, messages=[{"role": "assistant", "content": "hi"}, USER]), 400,
         'messages: first message must use the "user" role', MESSAGES_REF),
    Case("tool_use in a user message", req(messages=[{"role": "user", "content": [USE]}]), 400,
         "messages.0: `tool_use` blocks can only be in `assistant` messages",
         MESSAGES_REF + " (no .content.K suffix)"),
    Case("tool_result in an assistant message",
         req(messages=[USER, {"role": "assistant", "content": [RESULT]}, USER]), 400,
         "messages.1: `tool_result` blocks can only be in `user` messages",
         MESSAGES_REF + " (no .content.K suffix)"),
    Case("a tool_result without tool_use_id",
         req(messages=[USER, {"role": "assistant", "content": [USE]},
                       {"role": "user", "content": [{"type": "tool_result", "content": "x"}]}]),
         400, "messages.2.content.0.tool_result.tool_use_id: Field required",
         "'...tool_use_id: Field required' (issue 12, from the real API); the prefix is inferred"),
    Case("a tool_use without its result",
         req(messages=[USER, {"role": "assistant", "content": [USE]}, USER]), 400,
         "messages.2: Did not find 1 `tool_result` block(s) at the beginning of this message. "
         "Messages following `tool_use` blocks must begin with a matching number of "
         "`tool_result` blocks.", TOOL_USE),
    Case("a result that answers nothing",
         req(messages=[{"role": "user", "content": [RESULT]}]), 400,
         "messages.0.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_1. "
         "Each `tool_result` block must have a corresponding `tool_use` block in the previous "
         "message.", TOOL_USE),
    # The two rows below: the live API's words as quoted in public issue reports (see
    # agentlab/history.py: _check_pair and cache_points for the pages and dates).
    Case("two results for one tool_use", req(tools=[TOOL], messages=[
        USER, {"role": "assistant", "content": [USE]}, {"role": "user", "content": [RESULT, RESULT]}]),
         400, "messages.2.content.1: each tool_use must have a single result. Found multiple "
         "`tool_result` blocks with id: toolu_1", "github.com/anthropics/claude-code/issues/14110 "
         "(the live API's 400, 2025-12-16)"),
    Case("five blocks with cache_control", req(messages=[{"role": "user", "content": [
        {"type": "text", "text": f"part {n}", "cache_control": {"type": "ephemeral"}}
        for n in range(5)]}]), 400,
         "A maximum of 4 blocks with cache_control may be provided. Found 5.",
         "github.com/griffinmartin/opencode-claude-auth/issues/121 (the live API's 400, "
         "2026-04-03)"),
    Case("five cache_control blocks across tools, system and messages", req(
        tools=[{**TOOL, "cache_control": {"type": "ephemeral"}}],
        system=[{"type": "text", "text": f"rule {n}", "cache_control": {"type": "ephemeral"}}
                for n in range(2)],
        messages=[{"role": "user", "content": [
            {"type": "text", "text": f"part {n}", "cache_control": {"type": "ephemeral"}}
            for n in range(2)]}]), 400,
         "A maximum of 4 blocks with cache_control may be provided. Found 5.",
         "github.com/VicBilibily/GCMP/pull/83 (tools, system and messages counted together; "
         "the live API's 400, 2026-02-16)"),
    Case("a tool exchange answered in order", req(tools=[TOOL], messages=[
        USER, {"role": "assistant", "content": [USE]}, {"role": "user", "content": [RESULT]}]),
         200, None, TOOL_USE),
    Case("no messages", req(messages=[]), 400, "messages: at least one message is required",
         MESSAGES_REF),
    Case("max_tokens 0", req(max_tokens=0), 400,
         "max_tokens: Input should be greater than or equal to 1", MESSAGES_REF),
    # Wrong types answer in pydantic's wording, as the API's other type errors do
    # (MESSAGES_REF gives the types); the sentences for these fields are not public.
    Case("max_tokens as a string", req(max_tokens="5"), 400,
         "max_tokens: Input should be a valid integer", MESSAGES_REF + "; " + UNKNOWN),
    Case("max_tokens as a boolean", req(max_tokens=True), 400,
         "max_tokens: Input should be a valid integer", MESSAGES_REF + "; " + UNKNOWN),
    Case("system as a number", req(system=5), 400,
         "system: Input should be a valid string or a valid list",
         MESSAGES_REF + " (a string or a list of text blocks); " + UNKNOWN),
    Case("thinking display omitted on Sonnet 5.5",
         req(thinking={"type": "adaptive", "display": "omitted"}), 200, None, SONNET_55),
    Case("thinking display not a known value",
         req(thinking={"type": "adaptive", "display": "bogus"}), 400,
         "thinking.display: Input should be 'summarized' or 'omitted'",
         SONNET_55 + " ('omitted' confirmed; 'summarized' from earlier models' docs); " + UNKNOWN),
    Case("max_tokens above the model's output limit", req(HAIKU, max_tokens=64001), 400,
         "max_tokens: 64001 > 64000, which is the maximum allowed number of output tokens "
         "for claude-haiku-4-5", "wording as in public reports for earlier models"),
    Case("max_tokens 1 cuts the reply", req(max_tokens=1), 200, None, STOP_REASONS,
         check=lambda r: r["stop_reason"] == "max_tokens" and r["usage"]["output_tokens"] == 1
         and len(r["content"][0]["text"]) <= 4),
    Case("max_tokens cuts a tool call and keeps it, not runnable",
         req(tools=[TOOL], max_tokens=4), 200, None,
         STOP_REASONS + "; the SDK's stream parser (a cut-off tool input parses as a normal-looking dict)",
         check=lambda r: r["stop_reason"] == "max_tokens" and _types(r)[-1] == "tool_use"),
    Case("a stop sequence stops the text", req(stop_sequences=["reply"]), 200, None,
         STOP_REASONS,
         check=lambda r: r["stop_reason"] == "stop_sequence" and r["stop_sequence"] == "reply"
         and "reply" not in r["content"][0]["text"]),
    Case("tool_choice none calls no tool", req(tools=[TOOL], tool_choice={"type": "none"}),
         200, None, TOOL_USE,
         check=lambda r: "tool_use" not in _types(r) and r["stop_reason"] == "end_turn"),
    Case("tool_choice auto may call a tool", req(tools=[TOOL], tool_choice={"type": "auto"}),
         200, None, TOOL_USE, check=lambda r: r["stop_reason"] == "tool_use"),
    Case("parallel tool use turned off",
         req(tools=[TOOL], tool_choice={"type": "auto", "disable_parallel_tool_use": True}),
         200, None, TOOL_USE, check=lambda r: _types(r).count("tool_use") == 1),
    Case("a tool name the API refuses", req(tools=[{**TOOL, "name": "run bash"}]), 400,
         "tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'",
         TOOL_USE + " (tool names)"),
    # The real API's 400, quoted with its request ids by API users:
    # github.com/BlockRunAI/ClawRouter/issues/17 (2026-02-10) and
    # github.com/CommandCodeAI/command-code/issues/323 (2026-05-06); checked 2026-12-01.
    # Anthropic's docs do not state the pattern.
    Case("a tool_use id with a character the API refuses",
         req(messages=[USER, {"role": "assistant", "content": [{**USE, "id": "toolu:1"}]},
                       {"role": "user", "content": [{**RESULT, "tool_use_id": "toolu:1"}]}]),
         400, "messages.1.content.0.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'",
         "github.com/BlockRunAI/ClawRouter/issues/17 (the API's 400 as users quote it), "
         "checked 2026-12-01"),
    Case("continuing an unknown thread",
         req(thread={"type": "continue", "previous_message_id": "msg_gone"}), 404,
         "No usable Thread state was found for `previous_message_id`: msg_gone",
         "the SDK's ThreadNotFoundError (anthropic 2.14 types/thread_not_found_error.py); "
         "wording after its docstring", headers={"anthropic-beta": "message-threads-2026-08-12"}),
    Case("thread without the beta header", req(thread={"type": "create"}), 400,
         "thread: Extra inputs are not permitted",
         SONNET_55 + " (a beta field is unknown without its beta)"),
    # Fields of the wrong type (qa2): pydantic's wording, which the API's other field
    # errors use ("...: Input should be a valid dictionary"); not confirmed per field.
    Case("stream that is not a boolean", req(stream="yes"), 400,
         "stream: Input should be a valid boolean", UNKNOWN),
    Case("stop_sequences that is not a list", req(stop_sequences="I"), 400,
         "stop_sequences: Input should be a valid list", UNKNOWN),
    Case("tools that is not a list", req(tools={"name": "bash"}), 400,
         "tools: Input should be a valid list", UNKNOWN),
    Case("thinking that is not an object", req(thinking="adaptive"), 400,
         "thinking: Input should be a valid dictionary", UNKNOWN),
    Case("model that is not a string", req(model=["x"]), 400,
         "model: Input should be a valid string", UNKNOWN),
]  # fmt: skip
