"""Thinking blocks offline: signing them, and refusing them when altered, dropped or unbound.

A model that thinks (``claude-sonnet-5-5`` by default, see ``agentlab.models``)
starts its replies with ``thinking`` blocks. With the default display
("omitted") the block's ``thinking`` text is empty and only its ``signature``
stands for the model's hidden thinking. The API checks the signature when the
block comes back, so a harness must send thinking blocks back unchanged.

Preserved thinking (Anthropic docs, build-with-claude/preserved-thinking and
its page preserved-thinking/prefix-checks, read 2026-12-01): on the models
whose row in ``models.json`` says ``preserved_thinking``, a block is also bound
to its *prefix*, the top-level ``system``, ``tools`` and every earlier message.
If any of them changed after the block was written, that block and every later
one are invalid: a 400, or the blocks are dropped when the request sets
``thinking.block_binding.prefix_mismatch_behavior`` to ``"drop_block"``.

The real signature is opaque. Ours is too::

    agentlab2.<display>.<system+tools digest>.<messages digest>.<thinking digest>.<HMAC>

The digests are SHA-256 (shortened) of what came before the block; the HMAC
covers the model, the visible text and the digests. The hidden thinking is not
in it: the process that wrote the block keeps it (``hidden``). The HMAC key is
fixed and written below: it is **not a secret**, it only lets an offline server
verify, after a restart, a block it signed earlier. Nothing here is security.
Older ``agentlab1`` signatures (base64 of the thinking, no prefix) still verify,
so saved histories load.

``check(params)`` gives the API's error texts for a request whose thinking
blocks were altered, unbound from their prefix, or dropped from the turn being
continued.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from collections import OrderedDict
from collections.abc import Container, Mapping, Sequence
from functools import lru_cache
from typing import Any

from agentlab import errors, models, rules
from agentlab.i18n import t
from agentlab.rules import Problem, as_dict, blocks

__all__ = [
    "KEY",
    "bind",
    "check",
    "display",
    "drop_unbound",
    "hidden",
    "make_block",
    "mode",
    "prefix_mismatch",
    "sign",
    "unbound",
    "verify",
]

KEY = b"agentlab offline thinking signatures (not a secret)"
_PREFIX = "agentlab2"
_LEGACY = "agentlab1"
THINKING_TYPES = ("thinking", "redacted_thinking")
_UNBOUND = "-"  # the digest of a block that is bound to no prefix (a model without the check)

# The display value that returns the thinking text. Earlier models' docs call
# it "summarized"; our sources do not confirm the name on claude-sonnet-5-5,
# so this is agentlab's best guess. "omitted" (empty text) is confirmed.
SHOWN = rules.THINKING_DISPLAYS[0]  # the display that returns the text (agentlab.rules)

# The hidden thinking of the blocks this process signed, by signature (bounded).
_HIDDEN: OrderedDict[str, str] = OrderedDict()
_HIDDEN_MAX = 100_000

# The API's 400 for a block whose prefix changed, as the docs quote it
# (preserved-thinking/fix-bound-to-a-different-conversation, read 2026-12-01). The docs
# add that the error "may go on to say what changed"; that part is not public, so we stop.
BOUND_ELSEWHERE = (
    "{where}: Invalid `signature` in `thinking` block. The block is bound to a different "
    "conversation. Remove the block, or set `thinking.block_binding.prefix_mismatch_behavior` "
    'to "drop_block".'
)


def _hex(data: bytes | str, n: int = 16) -> str:
    raw = data.encode() if isinstance(data, str) else data
    return hmac.new(KEY, raw, hashlib.sha256).hexdigest()[:n]


def _mac(model: str, payload: str) -> str:
    data = f"{model}\n{payload}".encode()
    return hmac.new(KEY, data, hashlib.sha256).hexdigest()


# -- the prefix: what came before a block ------------------------------------------


def _clean(value: Any) -> Any:
    """A request part in one form: no None fields, no ``cache_control`` markers (a
    harness moves them each turn; whether the real check counts them is not public),
    a string ``content`` as the one text block it stands for."""
    if isinstance(value, dict):
        out = {k: _clean(v) for k, v in value.items() if v is not None and k != "cache_control"}
        if isinstance(out.get("content"), str):
            out["content"] = [{"type": "text", "text": out["content"]}]
        return out
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def _canon(value: Any) -> bytes:
    data = _clean(as_dict(value))
    return json.dumps(
        data, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str
    ).encode()


def _system_tools(params: Mapping[str, Any]) -> str:
    system = params.get("system")
    if isinstance(system, str):
        system = [{"type": "text", "text": system}] if system else None
    return _hex(_canon({"system": system or None, "tools": params.get("tools") or None}))


def _chain(messages: Sequence[Any]) -> list[Any]:
    """The running hash before each message (and after the last)."""
    h = hashlib.sha256(KEY)
    out = [h.copy()]
    for m in messages:
        h.update(_canon(m))
        out.append(h.copy())
    return out


def _at(before: Any, content: Sequence[Any]) -> str:
    """The messages digest of a block: the hash of the messages before it, then the
    blocks before it in its own message."""
    h = before.copy()
    h.update(b"\x00" + _canon(list(content)))
    return h.hexdigest()[:16]


def _preserves(model: str) -> bool:
    info = models.get(model)
    return bool(info is not None and info.preserved_thinking)


def sign(
    model: str, thinking: str, shown: str = "omitted", *, prefix: tuple[str, str] | None = None
) -> str:
    """The signature of a thinking block written by ``model``.

    ``thinking`` is the full hidden thinking; ``shown`` is the display the reply
    used ("omitted": the block's text is empty). ``prefix`` is the pair of digests
    the block is bound to (see ``bind``); None binds it to nothing.
    """
    flag = "o" if shown == "omitted" else "s"
    visible = "" if flag == "o" else thinking
    st, md = prefix or (_UNBOUND, _UNBOUND)
    hh = _hex("hidden\n" + thinking)
    payload = f"{flag}.{st}.{md}.{hh}"
    signature = f"{_PREFIX}.{payload}.{_mac(model, payload + chr(10) + visible)[:32]}"
    _HIDDEN[signature] = thinking
    while len(_HIDDEN) > _HIDDEN_MAX:
        _HIDDEN.popitem(last=False)
    return signature


def _parts(signature: str) -> list[str] | None:
    parts = signature.split(".")
    return parts if len(parts) == 6 and parts[0] == _PREFIX else None


def _open_legacy(signature: str) -> dict[str, str] | None:
    """The data an ``agentlab1`` signature carries (saved histories), or None."""
    parts = signature.split(".")
    if len(parts) != 3 or parts[0] != _LEGACY:
        return None
    try:
        data = json.loads(base64.urlsafe_b64decode(parts[1].encode()))
    except (binascii.Error, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("thinking"), str):
        return None
    return data


@lru_cache(maxsize=4096)
def _valid(model: str, thinking: str, signature: str) -> bool:
    parts = _parts(signature)
    if parts is not None:
        payload = ".".join(parts[1:5])
        if parts[1] == "o" and thinking != "":
            return False
        expected = _mac(model, payload + "\n" + thinking)[:32]
        return hmac.compare_digest(parts[5], expected)
    data = _open_legacy(signature)
    if data is None:
        return False
    _, payload, mac = signature.split(".")
    if not hmac.compare_digest(mac, _mac(model, payload)):
        return False  # signed for another model, or the signature was changed
    expected_text = "" if data.get("display") == "omitted" else data["thinking"]
    return thinking == expected_text


def verify(model: str, block: Mapping[str, Any] | Any) -> bool:
    """Is this thinking block exactly as ``model`` wrote it? (Its prefix is not checked
    here: see ``unbound``.)"""
    b = as_dict(block)
    thinking, signature = b.get("thinking"), b.get("signature")
    if not isinstance(thinking, str) or not isinstance(signature, str):
        return False
    return _valid(model, thinking, signature)


def hidden(block: Mapping[str, Any] | Any) -> str | None:
    """The hidden thinking behind a block this process signed (None if it did not).

    The signature does not carry it: the offline client or server that wrote the
    block keeps it, as the real API keeps its own."""
    signature = str(as_dict(block).get("signature") or "")
    if signature in _HIDDEN:
        return _HIDDEN[signature]
    data = _open_legacy(signature)
    return data["thinking"] if data else None


def _binding(signature: str) -> tuple[str, str] | None:
    parts = _parts(signature)
    if parts is None or parts[2] == _UNBOUND:
        return None
    return parts[2], parts[3]


def make_block(
    model: str,
    thinking: str,
    shown: str = "omitted",
    params: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A thinking block as a reply carries it. With ``params`` (the request it answers)
    and a model with preserved thinking, it is bound to that request's prefix, as the
    first block of the reply."""
    text = "" if shown == "omitted" else thinking
    block = {"type": "thinking", "thinking": text, "signature": sign(model, thinking, shown)}
    return bind([block], params, model)[0] if params is not None else block


def bind(
    content: list[dict[str, Any]], params: Mapping[str, Any] | None, model: str | None = None
) -> list[dict[str, Any]]:
    """The reply ``content`` (plain blocks) with each thinking block signed as
    ``model`` (default: the request's) signs it, bound to its prefix: the request's
    ``system``, ``tools`` and messages, then the blocks before it in this reply. A
    block already signed and bound so stays as it is."""
    params = params or {}
    model = model if model is not None else str(params.get("model") or "")
    messages = params.get("messages")
    messages = messages if isinstance(messages, list) else []
    preserve = _preserves(model)
    before = (
        _chain(messages)[-1]
        if preserve and any(b.get("type") == "thinking" for b in content)
        else None
    )
    st = _system_tools(params) if before is not None else _UNBOUND
    out = []
    for k, b in enumerate(content):
        if b.get("type") != "thinking":
            out.append(b)
            continue
        prefix = (st, _at(before, content[:k])) if before is not None else None
        signature = str(b.get("signature") or "")
        if verify(model, b) and _binding(signature) == prefix:
            out.append(b)
            continue
        secret = hidden(b)
        secret = secret if secret is not None else str(b.get("thinking") or "")
        shown = "s" if b.get("thinking") else "o"
        shown_as = SHOWN if shown == "s" else "omitted"
        out.append({**b, "signature": sign(model, secret, shown_as, prefix=prefix)})
    return out


def unbound(params: Mapping[str, Any]) -> list[tuple[int, int]]:
    """Where the thinking blocks whose prefix changed are, as (message, block) pairs:
    the first block whose prefix differs and every later thinking block
    (preserved-thinking docs: "that block and every later thinking block are
    invalid"). [] when the request's model has no preserved thinking."""
    model = str(params.get("model") or "")
    messages = params.get("messages")
    if not isinstance(messages, list) or not _preserves(model):
        return []
    found: list[tuple[int, int]] = []
    chain: list[Any] | None = None
    st: str | None = None
    for i, m in enumerate(messages):
        if not isinstance(m, Mapping) and not hasattr(m, "role"):
            continue
        md = as_dict(m) if not isinstance(m, dict) else m
        if md.get("role") != "assistant":
            continue
        content = blocks(md)
        for k, b in enumerate(content):
            if b.get("type") not in THINKING_TYPES:
                continue
            if found:
                found.append((i, k))
                continue
            binding = _binding(str(b.get("signature") or ""))
            if binding is None or not verify(model, b):
                continue  # unbound, or refused for its signature already
            if chain is None:
                chain, st = _chain(messages), _system_tools(params)
            if binding != (st, _at(chain[i], content[:k])):
                found.append((i, k))
    return found


def prefix_mismatch(messages: Sequence[Any]) -> tuple[int, int] | None:
    """The first thinking block in ``messages`` whose earlier *messages* changed since it
    was written, whatever the model; None if none. (``system`` and ``tools`` are not
    part of a history: ``validate`` can check only the messages.)"""
    chain: list[Any] | None = None
    for i, m in enumerate(messages):
        md = as_dict(m) if not isinstance(m, dict) else m
        if not isinstance(md, dict) or md.get("role") != "assistant":
            continue
        content = blocks(md)
        for k, b in enumerate(content):
            binding = (
                _binding(str(b.get("signature") or "")) if b.get("type") == "thinking" else None
            )
            if binding is None:
                continue
            if chain is None:
                chain = _chain(messages)
            if binding[1] != _at(chain[i], content[:k]):
                return (i, k)
    return None


def prefix_rule(messages: Sequence[Any]) -> list[Problem]:
    """``validate``'s rule for preserved thinking: a thinking block whose earlier messages
    changed since the model wrote it (registered in ``agentlab.rules.HISTORY_RULES``)."""
    found = prefix_mismatch(messages)
    if found is None:
        return []
    i, k = found
    text = BOUND_ELSEWHERE.format(where=f"messages.{i}.content.{k}")
    return [Problem(text, t("hint.thinking_prefix", block=i), i, "thinking_prefix")]


def writer(block: Any, model: str) -> str | None:
    """The model other than ``model`` whose signature ``block`` carries (None: none of
    agentlab's; registered in ``agentlab.errors.SIGNATURE_READERS``)."""
    return next((m for m in models.ids() if m != model and verify(m, block)), None)


rules.HISTORY_RULES.append(prefix_rule)
errors.SIGNATURE_READERS.append(writer)


def dropping(params: Mapping[str, Any]) -> bool:
    """Does the request ask for invalid blocks to be dropped rather than refused?"""
    setting = params.get("thinking")
    binding = setting.get("block_binding") if isinstance(setting, Mapping) else None
    return isinstance(binding, Mapping) and binding.get("prefix_mismatch_behavior") == "drop_block"


def drop_unbound(params: Mapping[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The request with its unbound thinking blocks dropped, and a list saying which.

    The docs say the reply's ``input_transformations`` array lists every block the
    API dropped; the shape of its items is not public, so each item here is
    agentlab's: ``{"type": "thinking_block_dropped", "location": "messages.N.content.K"}``.
    """
    where = unbound(params)
    if not where:
        return dict(params), []
    gone: dict[int, set[int]] = {}
    for i, k in where:
        gone.setdefault(i, set()).add(k)
    messages = list(params["messages"])
    for i, ks in gone.items():
        m = as_dict(messages[i])
        m = {**m, "content": [b for k, b in enumerate(blocks(m)) if k not in ks]}
        messages[i] = m
    notes = [
        {"type": "thinking_block_dropped", "location": f"messages.{i}.content.{k}"}
        for i, k in where
    ]
    return {**params, "messages": messages}, notes


def mode(params: Mapping[str, Any]) -> str | None:
    """The thinking this request runs: "adaptive", "between_tools", "enabled" or None.

    Without a ``thinking`` field, a model that thinks by default (see
    ``models.json``) runs "adaptive". A model missing from the table is
    treated like the default model (``models.DEFAULT_MODEL``): the offline
    demo imitates what a key would bring by default.
    """
    setting = params.get("thinking")
    if isinstance(setting, Mapping):
        kind = setting.get("type")
        return None if kind == "disabled" else str(kind)
    info = models.get(params.get("model")) or models.get(models.DEFAULT_MODEL)
    return "adaptive" if info is not None and info.thinks_by_default else None


def display(params: Mapping[str, Any]) -> str:
    """The display of this request's thinking: "omitted" (empty text) or ``SHOWN``.

    Adaptive thinking omits the text unless asked; the older ``enabled``
    thinking returned it (summarized) by default.
    """
    setting = params.get("thinking")
    asked = setting.get("display") if isinstance(setting, Mapping) else None
    if asked:
        return "omitted" if asked == "omitted" else SHOWN
    return SHOWN if mode(params) == "enabled" else "omitted"


def check(
    params: Mapping[str, Any], *, since: int = 0, thought: Container[str] | None = None
) -> list[str]:
    """The API's error texts for this request's thinking blocks; [] if fine.

    ``since``: verify signatures only from this message on (a caller that
    already checked the earlier messages of this history passes their count).
    ``thought``: the ids of tool calls whose reply this caller gave out with a
    thinking block (an offline client or ``agentlab serve`` keeps them). With
    it, only those turns must keep their thinking block: a reply scripted by
    hand without one was never thinking, so nothing was dropped. Without it
    (None), every continued turn must start with one, as on the real API.

    - Every ``thinking`` block sent back must be unchanged and signed for
      the request's model (a block from another model is refused too).
    - On a model with preserved thinking, nothing before a block may have
      changed since it was written (``unbound``); with
      ``prefix_mismatch_behavior: "drop_block"`` such blocks are dropped instead.
      ``redacted_thinking`` blocks carry data we cannot check; they pass.
    - When the request thinks (see ``mode``), the assistant turn being
      continued must start with its thinking block. Our reading of the API's
      rule: that is the last assistant turn when the history ends on its
      tool results (an unfinished tool exchange). Earlier turns may drop
      their thinking blocks, and a new question after a finished answer
      needs none. Under "between_tools" there is no up-front thinking, so a
      turn answering the user's own text need not start with one.
    """
    messages = params.get("messages")
    if not isinstance(messages, list):
        return []
    model = str(params.get("model") or "")
    errors = []
    for i in range(max(since, 0), len(messages)):
        message = messages[i]
        if not isinstance(message, Mapping) or message.get("role") != "assistant":
            continue
        for k, b in enumerate(blocks(message)):
            if b.get("type") == "thinking" and not verify(model, b):
                errors.append(f"messages.{i}.content.{k}: Invalid `signature` in `thinking` block")
    if errors:
        return errors
    where = unbound(params)
    if where and not dropping(params):
        i, k = where[0]
        return [BOUND_ELSEWHERE.format(where=f"messages.{i}.content.{k}")]
    if where:
        return []  # the blocks are dropped (drop_unbound), the turn with them
    kind = mode(params)
    if kind is None or len(messages) < 2:
        return errors
    last, turn = messages[-1], messages[-2]
    if not (isinstance(last, Mapping) and isinstance(turn, Mapping)):
        return errors
    results = [b for b in blocks(last) if b.get("type") == "tool_result"]
    if last.get("role") != "user" or not results or turn.get("role") != "assistant":
        return errors
    if kind == "between_tools" and len(messages) >= 3 and _asks(messages[-3]):
        return errors
    content = blocks(turn)
    first = content[0].get("type") if content else "text"
    if thought is not None and not any(
        b.get("id") in thought for b in content if b.get("type") == "tool_use"
    ):
        return errors  # not a turn this caller gave out with thinking: nothing was dropped
    if first not in THINKING_TYPES:
        # The real message goes on after "a thinking block"; the rest of its
        # wording is not known from public material, so we stop there (and add
        # no full stop). The "messages.N.content.0.type" location follows the
        # API's other field errors and is our guess.
        errors.append(
            f"messages.{len(messages) - 2}.content.0.type: Expected `thinking` or "
            f"`redacted_thinking`, but found `{first}`. When `thinking` is enabled, "
            "a final `assistant` message must start with a thinking block"
        )
    return errors


def _asks(message: Any) -> bool:
    """Is this a user turn with the person's own words (not only tool results)?"""
    if not isinstance(message, Mapping) or message.get("role") != "user":
        return False
    return any(b.get("type") != "tool_result" for b in blocks(message))
