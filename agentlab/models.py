"""One table of models: prices, limits, thinking modes and what each accepts.

The data lives in ``models.json`` beside this file (with its sources and the
date it was checked). The offline clients, ``agentlab serve``, ``usage`` and
the default model all read it from here::

    from agentlab import models
    info = models.get("claude-sonnet-5-5")
    info.thinking_default        # "adaptive": replies carry thinking blocks
    info.prefill                 # False: a history ending on an assistant turn is refused
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

__all__ = ["DEFAULT_MODEL", "ModelInfo", "accepted", "get", "ids", "price", "table"]

MODELS_FILE = Path(__file__).with_name("models.json")


@dataclass(frozen=True)
class ModelInfo:
    """What agentlab knows of one model (see ``models.json`` for the sources)."""

    id: str
    name: str
    prices: dict[str, float]
    context_window: int
    max_output: int
    thinking: tuple[str, ...]  # the thinking types the model accepts
    thinking_default: str  # "adaptive" (thinks unasked) or "disabled" (thinks when asked)
    prefill: bool  # may a request end on an assistant turn?
    forced_tool_choice: bool  # tool_choice "any" / "tool"
    sampling: (
        bool | str
    )  # temperature, top_p, top_k: True, False, or "default" (temperature 1 only)
    min_cache_tokens: int  # the shortest prompt that can be cached
    system_messages: bool = False  # role "system" messages accepted after a user turn?
    preserved_thinking: bool = False  # thinking blocks bound to their prefix (the prefix check)
    refusals: bool = False  # safety classifiers that can answer stop_reason "refusal"
    released: str = ""  # release date (YYYY-MM-DD) when known, for GET /v1/models
    unchecked: tuple[str, ...] = ()  # fields not confirmed in public material
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def thinks_by_default(self) -> bool:
        """Do replies carry thinking blocks when the request has no ``thinking`` field?"""
        return self.thinking_default == "adaptive"


@lru_cache(maxsize=1)
def table() -> dict[str, Any]:
    """The whole data file (read once)."""
    data: dict[str, Any] = json.loads(MODELS_FILE.read_text("utf-8"))
    return data


def ids() -> list[str]:
    """The model ids in the table."""
    return list(table()["models"])


def accepted() -> list[str]:
    """The model ids the offline clients and ``agentlab serve`` answer (a dated id,
    ``claude-haiku-4-5-20251001``, is answered with the row it starts with)."""
    return ids()


def get(model: str | None) -> ModelInfo | None:
    """The row for ``model`` (exact id, else the longest id it starts with); None if unknown.

    Anything but a non-empty string (a request's ``"model": ["x"]``) is unknown too."""
    if not model or not isinstance(model, str):
        return None
    return _get(model)


@lru_cache(maxsize=256)
def _get(model: str) -> ModelInfo | None:
    rows = table()["models"]
    key = (
        model
        if model in rows
        else max((k for k in rows if model.startswith(k)), key=len, default=None)
    )
    if key is None:
        return None
    row = dict(rows[key])
    known = {f for f in ModelInfo.__dataclass_fields__ if f not in ("id", "extra")}
    values = {k: row.pop(k) for k in list(row) if k in known}
    values["thinking"] = tuple(values.get("thinking", ()))
    values["unchecked"] = tuple(values.get("unchecked", ()))
    return ModelInfo(id=key, extra=row, **values)


def price(
    model: str | None, prompt_tokens: int | None = None
) -> tuple[str, dict[str, float]] | None:
    """``(matched id, prices)`` for ``model``: its row in the table, else the longest
    prefix in ``other_prices`` (models agentlab knows only the price of); None if neither.

    ``prompt_tokens`` (input + cache reads + cache writes of one request) picks the
    long-prompt prices of a model priced by prompt length (Claude Haiku 5.5: above
    100,000 tokens every token of that request costs more)."""
    info = get(model)
    if info is not None:
        long = info.extra.get("long_prompt")
        if long and prompt_tokens is not None and prompt_tokens > long["above_tokens"]:
            return info.id, dict(long["prices"])
        return info.id, dict(info.prices)
    others = table().get("other_prices", {})
    key = max((k for k in others if model and model.startswith(k)), key=len, default=None)
    return None if key is None else (key, dict(others[key]))


DEFAULT_MODEL: str = os.environ.get("AGENTLAB_MODEL") or table()["default"]
