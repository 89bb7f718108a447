"""The lesson's loop, as the seed (shared/seed/s01_agent_loop) writes it, for tests
that check it runs unchanged against agentlab's clients and server."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import agentlab as al

SEED = """
def agent_loop(messages):
    while True:
        response = client.messages.create(
            model=MODEL, system=SYSTEM, messages=messages,
            tools=TOOLS, max_tokens=8000,
        )
        messages.append({"role": "assistant", "content": response.content})

        if response.stop_reason != "tool_use":
            return

        results = []
        for block in response.content:
            if block.type == "tool_use":
                output = run_bash(block.input["command"])
                results.append({
                    "type": "tool_result",
                    "tool_use_id": block.id,
                    "content": output,
                })
        messages.append({"role": "user", "content": results})
"""


def seed_loop(
    client: Any, model: str = al.DEFAULT_MODEL, tools: Any = None
) -> Callable[[list[Any]], None]:
    """The seed's ``agent_loop``, its names bound as the lesson binds them."""
    scope = {
        "client": client,
        "MODEL": model,
        "SYSTEM": al.DEFAULT_SYSTEM,
        "TOOLS": [al.bash.definition] if tools is None else tools,
        "run_bash": lambda command: al.run_bash(command).output,
    }
    exec(SEED, scope)
    return scope["agent_loop"]
