"""Tools: the bash tool, tools from Python functions, and approval policies."""

from __future__ import annotations

from os import PathLike
from typing import Any

from agentlab.tools.base import Tool, ToolInputError, as_tool, tool, tool_params, tool_table
from agentlab.tools.policy import Policy, Verdict, lesson_blocklist
from agentlab.tools.shell import (
    BASH_DESCRIPTION,
    BASH_INPUT_SCHEMA,
    BashResult,
    make_workspace,
    run_bash,
)

__all__ = [
    "BashResult",
    "Policy",
    "Tool",
    "ToolInputError",
    "Verdict",
    "as_tool",
    "bash",
    "bash_tool",
    "lesson_blocklist",
    "make_workspace",
    "run_bash",
    "tool",
    "tool_params",
    "tool_table",
]


def bash_tool(
    *,
    cwd: str | PathLike[str] | None = None,
    workspace: bool = False,
    timeout: float = 30,
    max_output: int = 30_000,
    network: bool = False,
    sandbox: bool | None = None,
) -> Tool:
    """A bash tool with its own limits.

    ``cwd`` names the folder commands run in (default: the current one, as in
    the lesson); ``workspace=True`` makes a fresh temporary folder instead,
    which is what we recommend for a class. On Linux with bubblewrap each
    command runs in a sandbox where only that folder is writable; it has no
    network unless ``network=True`` (see ``agentlab.tools.shell``).
    """
    folder = make_workspace() if workspace else cwd

    def run(command: str) -> Any:
        return run_bash(
            command,
            timeout=timeout,
            cwd=folder,
            max_output=max_output,
            sandbox=sandbox,
            network=network,
        )

    return Tool("bash", BASH_DESCRIPTION, dict(BASH_INPUT_SCHEMA), run)


bash = bash_tool()
"""The lesson's one tool: run a shell command, with safe limits on by default."""
