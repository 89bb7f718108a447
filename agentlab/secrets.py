"""Keep secrets out of what we write down: recordings and saved histories.

A key can end up in a history without anyone meaning to put it there: a
tool prints a ``.env`` file, the model repeats what it read. ``redact(obj)``
returns a copy of ``obj`` (a history, a recording line, any JSON-like data)
in which every known secret value is replaced by ``[REDACTED:NAME]``,
wherever it appears: in a string, a dict key, a nested list.

Known secrets are the values of environment variables whose names look
secret (``ANTHROPIC_*`` except the two settings below, ``*_KEY``,
``*_TOKEN``, ``*SECRET*``, ``*PASSWORD*``), plus the key and token a client
holds (``client.api_key``, ``client.auth_token``, named as the variables
``ANTHROPIC_API_KEY`` and ``ANTHROPIC_AUTH_TOKEN`` the SDK reads them from):
the client passed in, every client agentlab has sent a request with
(``remember``, called by ``request()``), and every SDK client a notebook holds
in a global variable (``client = anthropic.Anthropic(api_key=...)``). So
``save()``, ``%agent save``, ``agentlab run --save`` and "Copy history as
JSON" replace a key that only the client knows, as ``record()`` does. Values shorter than 8
characters are not treated as secrets: no real key is that short, and
replacing ``1`` or ``true`` everywhere would garble the text.

What this does not catch: a secret that is not in the environment or the
client (a password in a file the tool printed), or one that was changed on
the way (base64, split across lines, cut by the output cap).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["redact", "remember", "secret_values"]

_SECRET_NAME = re.compile(r"^ANTHROPIC_|_KEY$|_TOKEN$|SECRET|PASSWORD", re.IGNORECASE)
NOT_SECRET = frozenset({"ANTHROPIC_BASE_URL", "ANTHROPIC_MODEL"})
MIN_LENGTH = 8


# Keys and tokens of the clients agentlab has used in this process ({value: name}).
_held: dict[str, str] = {}


def _client_secrets(client: Any) -> dict[str, str]:
    """The key and token ``client`` holds, looking through wrappers (``record(...)``)."""
    found: dict[str, str] = {}
    seen = 0
    while client is not None and seen < 5:  # record(record(client)) and so on
        for attr, name in (
            ("api_key", "ANTHROPIC_API_KEY"),
            ("auth_token", "ANTHROPIC_AUTH_TOKEN"),
        ):
            held = getattr(client, attr, None)
            if isinstance(held, str) and len(held) >= MIN_LENGTH:
                found.setdefault(held, name)  # named like the variable the SDK reads it from
        client, seen = getattr(client, "client", None), seen + 1
    return found


def remember(client: Any) -> None:
    """Note the key and token ``client`` holds: every later ``redact()`` replaces them too."""
    for value, name in _client_secrets(client).items():
        _held.setdefault(value, name)


def _notebook_clients() -> list[Any]:
    """SDK clients held in the notebook's (``__main__``'s) global variables."""
    main = sys.modules.get("__main__")
    names = getattr(main, "__dict__", {})
    return [
        v
        for v in list(names.values())
        if type(v).__module__.startswith("anthropic") and hasattr(type(v), "messages")
    ]


def secret_values(client: Any = None, env: Mapping[str, str] | None = None) -> dict[str, str]:
    """Known secrets, as ``{value: name}``: from ``env`` (default ``os.environ``),
    ``client``, the clients agentlab has used (``remember``) and the notebook's clients.

    A wrapping client (``record(...)``) is looked through to the one it wraps.
    """
    env = os.environ if env is None else env
    found: dict[str, str] = {}
    for name, value in env.items():
        if _SECRET_NAME.search(name) and name not in NOT_SECRET:
            found.setdefault(value, name)
    for one in [client, *_notebook_clients()]:
        for value, name in _client_secrets(one).items():
            found.setdefault(value, name)
    for value, name in _held.items():
        found.setdefault(value, name)
    return {v: n for v, n in found.items() if len(v) >= MIN_LENGTH}


def _replace(text: str, secrets: Iterable[tuple[str, str]]) -> str:
    for value, name in secrets:
        if value in text:
            text = text.replace(value, f"[REDACTED:{name}]")
    return text


def redact(obj: Any, client: Any = None, *, secrets: Mapping[str, str] | None = None) -> Any:
    """A copy of ``obj`` with every known secret value replaced by ``[REDACTED:NAME]``.

    ``obj`` is JSON-like data: a history (list of message dicts), one
    message, a string. Dicts, lists and tuples are copied; other values are
    returned as they are. ``secrets`` (``{value: name}``) replaces the
    secrets looked up from the environment and ``client``.
    """
    found = secret_values(client) if secrets is None else secrets
    # Longest first, so a secret that contains another is replaced whole.
    pairs = sorted(found.items(), key=lambda item: -len(item[0]))
    if not pairs:
        return obj

    def walk(value: Any) -> Any:
        if isinstance(value, str):
            return _replace(value, pairs)
        if isinstance(value, Mapping):
            return {walk(k): walk(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(walk(v) for v in value)
        return value

    return walk(obj)
