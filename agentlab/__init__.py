"""agentlab: learn how an LLM agent loop works, one stage at a time.

    import agentlab as al
    client = al.connect()                       # real API with a key, else the offline demo
    messages = [{"role": "user", "content": "How many .py files are here?"}]
    al.agent_loop(messages, client, tools=[al.bash])

Names are imported on first use, so ``import agentlab`` stays quick and does
not load ipywidgets or IPython until a view or the magic is used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from agentlab.history import LoopResult

__version__ = "0.1.0"

# public name -> module that defines it
_EXPORTS = {
    # the four stages and the loop
    "request": "agentlab.loop",
    "decide": "agentlab.loop",
    "execute": "agentlab.loop",
    "append": "agentlab.loop",
    "agent_loop": "agentlab.loop",
    "steps": "agentlab.loop",
    "AgentLoop": "agentlab.stepper",
    "Decision": "agentlab.loop",
    "Event": "agentlab.harness",
    "Interrupted": "agentlab.errors",
    "LoopResult": "agentlab.history",
    "not_run": "agentlab.loop",
    "DEFAULT_MODEL": "agentlab.loop",
    "DEFAULT_SYSTEM": "agentlab.loop",
    # history
    "validate": "agentlab.rules",
    "pairings": "agentlab.history",
    "save": "agentlab.history",
    "load": "agentlab.history",
    "to_markdown": "agentlab.views.render",
    "HistoryError": "agentlab.history",
    "Problem": "agentlab.rules",
    # tools
    "bash": "agentlab.tools",
    "bash_tool": "agentlab.tools",
    "run_bash": "agentlab.tools",
    "BashResult": "agentlab.tools",
    "tool": "agentlab.tools",
    "Tool": "agentlab.tools",
    "Policy": "agentlab.tools",
    "Verdict": "agentlab.tools",
    "lesson_blocklist": "agentlab.tools",
    "make_workspace": "agentlab.tools",
    # clients
    "connect": "agentlab.fakeapi.offline",
    "DemoClient": "agentlab.fakeapi.offline",
    "ScriptedClient": "agentlab.fakeapi.offline",
    "make_message": "agentlab.fakeapi.offline",
    "RequestError": "agentlab.errors",
    "record": "agentlab.fakeapi.recording",
    "ReplayClient": "agentlab.fakeapi.recording",
    # language
    "set_language": "agentlab.i18n",
    # views (ipywidgets; loaded only when used)
    "HistoryView": "agentlab.views",
    "PairingView": "agentlab.views",
    "LoopView": "agentlab.views",
}

__all__ = sorted(_EXPORTS) + ["load_ipython_extension", "unload_ipython_extension"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'agentlab' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


def _drawn(name: str) -> Any:
    def draw(result: Any) -> str:
        return str(getattr(importlib.import_module("agentlab.views.render"), name)(result))

    draw.__name__ = draw.__qualname__ = f"_repr_{name.removeprefix('result_')}_"
    return draw


# Jupyter shows a LoopResult as the views draw it (agentlab/views/render.py): the answer
# on top, the transcript folded below. The core does not import the views, so this
# façade gives LoopResult the two methods Jupyter looks for; the views are loaded only
# when a page shows a result.
LoopResult._repr_markdown_ = _drawn("result_markdown")  # type: ignore[attr-defined]
LoopResult._repr_html_ = _drawn("result_html")  # type: ignore[attr-defined]


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext agentlab``: register the ``%agent`` and ``%%agent`` magics."""
    from agentlab.apps.magic import load_ipython_extension as load

    load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    from agentlab.apps.magic import unload_ipython_extension as unload

    unload(ipython)


if TYPE_CHECKING:
    from agentlab.errors import RequestError
    from agentlab.fakeapi.offline import DemoClient, ScriptedClient, connect, make_message
    from agentlab.fakeapi.recording import ReplayClient, record
    from agentlab.history import HistoryError, load, pairings, save
    from agentlab.i18n import set_language
    from agentlab.loop import (
        DEFAULT_MODEL,
        DEFAULT_SYSTEM,
        Decision,
        Event,
        Interrupted,
        agent_loop,
        append,
        decide,
        execute,
        not_run,
        request,
        steps,
    )
    from agentlab.rules import Problem, validate
    from agentlab.stepper import AgentLoop
    from agentlab.tools import (
        BashResult,
        Policy,
        Tool,
        Verdict,
        bash,
        bash_tool,
        lesson_blocklist,
        make_workspace,
        run_bash,
        tool,
    )
    from agentlab.views import HistoryView, LoopView, PairingView
    from agentlab.views.render import to_markdown
