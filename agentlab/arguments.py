"""What each stage of the loop accepts. A wrong argument fails at once, with the fix.

Mixing up the pieces is the most common slip when writing the loop by hand:
passing the whole reply to ``execute``, the history to ``decide``, a string
to ``request``. Each of these raises a ``TypeError`` whose message shows the
call to write instead (in the language chosen with ``agentlab.set_language``).
"""

from __future__ import annotations

from typing import Any, NoReturn

from agentlab.i18n import t

__all__ = ["tool_use_list", "wrong_history", "wrong_reply"]


def _type(obj: Any) -> Any:
    return obj.get("type") if type(obj) is dict else getattr(obj, "type", None)


def wrong_history(messages: Any) -> NoReturn:
    """``request(client, X)`` where X is not a list of messages."""
    if hasattr(getattr(messages, "messages", None), "create"):  # request(messages, client)
        raise TypeError(t("loopcore.wrong.request_order"))
    if isinstance(messages, str):
        raise TypeError(t("loopcore.wrong.request_text"))
    if isinstance(messages, dict):
        raise TypeError(t("loopcore.wrong.request_dict"))
    raise TypeError(t("loopcore.wrong.request_other", kind=type(messages).__name__))


def wrong_reply(response: Any) -> NoReturn:
    """``decide(X)`` where X is not a reply (it has no ``stop_reason``)."""
    if isinstance(response, list | tuple):
        raise TypeError(t("loopcore.wrong.decide_list"))
    if isinstance(response, dict):
        raise TypeError(t("loopcore.wrong.decide_dict"))
    raise TypeError(t("loopcore.wrong.decide_other", kind=type(response).__name__))


def tool_use_list(tool_uses: Any) -> list[Any]:
    """What ``execute`` was given, as a list of tool_use blocks; anything else fails."""
    if type(tool_uses) is not tuple and type(tool_uses) is not list:  # not what decide gives
        if hasattr(tool_uses, "stop_reason"):  # execute(response)
            raise TypeError(t("loopcore.wrong.execute_response"))
        if hasattr(tool_uses, "action") and hasattr(tool_uses, "tool_uses"):  # execute(decision)
            raise TypeError(t("loopcore.wrong.execute_decision"))
        if _type(tool_uses) == "tool_use":  # one block, not a list of them
            raise TypeError(t("loopcore.wrong.execute_one"))
        if isinstance(tool_uses, str | dict):
            raise TypeError(t("loopcore.wrong.execute_other", kind=type(tool_uses).__name__))
    uses = list(tool_uses)
    for use in uses:
        kind = _type(use)
        if kind != "tool_use":  # execute(response.content): text blocks too
            raise TypeError(t("loopcore.wrong.execute_content", kind=kind or type(use).__name__))
    return uses
