"""The API's rules for a request, each written once, in the API's own words.

``validate`` checks a whole history the way the Messages API does and words
each problem the way its 400 error does; ``check_at`` and ``check_next`` check
one new message, which is what ``append`` and the offline clients need. Both
run the same rules (``_rules_at``, each rule under what it looks at: a block's
type, a message's role, the calls of the message before); checking one
appended message runs only the rules that message can change (see
``check_at``). Nothing restates a rule to make it faster. The offline clients
and ``agentlab serve`` (``agentlab.fakeapi.checks``) call these rules too.

The rules come in the order the API reports them:

1. the shape of every message and block, read from the SDK's own request
   types (``anthropic.types.UserMessageParam``, ``ToolUseBlockParam``, ...):
   the API validates requests with pydantic, so its messages read "Input
   should be a valid dictionary", "Field required", "Extra inputs are not
   permitted", and a block's path names its type
   (``messages.1.content.0.tool_use.input``). A block type the installed SDK
   knows is accepted, one it does not know is reported;
2. the rules about one message: non-empty content and text, which role may
   hold which block, unique and well-formed ``tool_use`` ids;
3. the rules that tie a message to the one before it: every ``tool_use``
   answered by a ``tool_result`` in the next message, results first, no
   result the model did not ask for, ``system`` only after a user turn;
4. rules about the whole request: at most four ``cache_control`` blocks, the
   tool definitions, ``system`` messages and prefill for the models that
   refuse them;
5. the request's other fields, for the model it names (``check_fields``).

Where the API's exact wording is not public, a comment says so.
"""

from __future__ import annotations

import collections.abc as abc
import functools
import re
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any, Literal, Union

import typing_extensions

from agentlab import models
from agentlab.i18n import t

__all__ = [
    "HISTORY_RULES",
    "STRICT_API_VERSION",
    "THINKING_DISPLAYS",
    "MAX_CACHE_POINTS",
    "TOOL_USE_ID",
    "Problem",
    "SchemaError",
    "as_dict",
    "as_message",
    "blocks",
    "cache_points",
    "check_at",
    "check_fields",
    "check_next",
    "check_tools",
    "ends_on_answer",
    "final_text",
    "fields",
    "known_fields",
    "misplaced_system",
    "prefill",
    "prepare",
    "roles",
    "role_of",
    "schema_errors",
    "system_messages",
    "tool_calls",
    "tools_needed",
    "trailing_space",
    "validate",
]


@dataclass(frozen=True)
class Problem:
    """One rule a history breaks. ``str()`` is the API's own wording."""

    message: str
    hint: str = ""
    index: int | None = None  # which message (``messages.N``)
    rule: str = ""  # a short name: "unanswered", "unexpected_result", ...

    def __str__(self) -> str:
        return self.message


# --------------------------------------------------------------------------
# Reading messages whatever their form (plain dicts or SDK pydantic objects), and
# what append makes of a reply: plain dicts, once
# --------------------------------------------------------------------------


def as_dict(obj: Any) -> Any:
    """Turn SDK objects (pydantic models) into plain JSON data, recursively.

    The lesson's own loop appends ``response.content`` (SDK objects) to the
    history; the API accepts that because the SDK serialises them. We read both.
    """
    kind = type(obj)
    if kind is str or kind is int or kind is float or kind is bool or obj is None:
        return obj
    if kind is dict:
        return _plain_dict(obj)
    if kind is list or kind is tuple:
        return [_plain_dict(v) if type(v) is dict else as_dict(v) for v in obj]
    if isinstance(obj, Mapping):
        return {k: as_dict(v) for k, v in obj.items()}
    if hasattr(obj, "model_dump"):
        return obj.model_dump(mode="json", exclude_none=True)
    return obj


def _plain_dict(obj: dict[Any, Any]) -> dict[Any, Any]:
    for v in obj.values():
        if type(v) is not str and type(v) is not bool:
            return {k: as_dict(v) for k, v in obj.items()}
    return obj.copy()  # strings and booleans only (a tool result, a text block): one copy


def blocks(message: Mapping[str, Any] | Any) -> list[dict[str, Any]]:
    """The content blocks of one message, as dicts. A string is one text block."""
    return list(_blocks(message))


def _blocks(message: Any) -> Sequence[dict[str, Any]]:
    """``blocks``, for reading only: a list of plain dicts is handed back as it is."""
    content = (
        message.get("content") if type(message) is dict or isinstance(message, Mapping) else None
    )
    if type(content) is list and set(map(type, content)) == _DICT_ONLY:  # plain dicts only
        return content
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if not isinstance(content, (list, tuple)):
        return []
    out = []
    for b in content:
        # Reading only: a dict is used as it is, an SDK object is converted.
        d = b if type(b) is dict else as_dict(b)
        out.append(d if isinstance(d, dict) else {"type": "?", "value": d})
    return out


_DICT_ONLY = {dict}


def role_of(message: Any) -> Any:
    """A message's ``role`` (None for anything that is not a message dict)."""
    if type(message) is dict or isinstance(message, Mapping):
        return message.get("role")
    return None


def as_message(item: Any) -> dict[str, Any] | None:
    """What ``append`` adds for ``item``, as plain dicts (None: a reply with no content).

    An SDK ``Message`` becomes an assistant turn (its blocks as the JSON the API
    sent), a list of blocks a ``user`` message, a string a ``user`` text turn; a
    message dict is copied as it is. Past this point the loop reads dicts only."""
    if type(item) is list:  # tool results (the commonest, so asked first)
        return {
            "role": "user",
            "content": [_plain_dict(v) if type(v) is dict else as_dict(v) for v in item],
        }
    if hasattr(item, "stop_reason") and hasattr(item, "content"):  # an SDK Message
        content = [_dump(b) for b in item.content]
        return {"role": "assistant", "content": content} if content else None
    if isinstance(item, str):
        return {"role": "user", "content": item}
    if isinstance(item, list | tuple):
        return {"role": "user", "content": as_dict(item)}
    if isinstance(item, dict) and "role" in item:
        return as_dict(item)
    raise TypeError(
        "append() takes a Message, a list of tool_result blocks, a string or a message dict, "
        f"not {item!r}"
    )


def _dump(block: Any) -> Any:
    """One SDK content block as the JSON the API sent (``None`` fields left out): what
    ``block.model_dump(mode="json", exclude_none=True)`` returns, from pydantic's own
    serializer without the wrapper around it (half the cost, paid on every reply)."""
    serializer = getattr(block, "__pydantic_serializer__", None)
    if serializer is None:
        return as_dict(block)
    return serializer.to_python(block, mode="json", exclude_none=True)


def tool_calls(message: Any) -> list[dict[str, Any]]:
    """The ``tool_use`` blocks of an assistant message (a plain dict); [] for any other."""
    if role_of(message) != "assistant":
        return []
    return [b for b in blocks(message) if b.get("type") == "tool_use"]


def ends_on_answer(messages: Sequence[Any]) -> bool:
    """Whether the history ends on the model's answer (an assistant message with no tool
    call): sending it again would be a prefill."""
    last = messages[-1] if messages else None
    return isinstance(last, dict) and role_of(last) == "assistant" and not tool_calls(last)


def final_text(messages: Sequence[Any]) -> str:
    """The text of the last assistant message that has any."""
    for message in reversed(messages):
        if role_of(message) == "assistant":
            text = "\n".join(
                str(b.get("text", "")) for b in blocks(message) if b.get("type") == "text"
            )
            if text.strip():
                return text
    return ""


# --------------------------------------------------------------------------
# 1. Shapes: the SDK's request types, read when first needed (importing the
#    SDK takes about two seconds)
# --------------------------------------------------------------------------

_NONE = type(None)
_LISTS = (list, abc.Iterable, abc.Sequence, abc.Collection)
_DICTS = (dict, abc.Mapping, abc.MutableMapping)
_PLAIN = (dict, list, tuple, str, int, float, bool, _NONE)
_REQUIRED = {typing_extensions.Required, getattr(typing, "Required", None)} - {None}
_NOT_REQUIRED = {typing_extensions.NotRequired, getattr(typing, "NotRequired", None)} - {None}


@dataclass(frozen=True)
class SchemaError:
    """One value that does not fit. ``str()`` is the API's form: ``path: message``."""

    path: tuple[str | int, ...]
    message: str
    kind: str  # "missing", "extra", "type", "tag", "literal"
    owner: Any = field(default=None, compare=False)  # the SDK type holding it: ToolUseBlockParam

    @property
    def where(self) -> str:
        return ".".join(str(p) for p in self.path)

    @property
    def key(self) -> str:
        return str(self.path[-1]) if self.path else ""

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


@functools.cache
def _messages() -> dict[str, Any]:
    """``{"user": UserMessageParam, ...}``: the members of ``MessageParam`` by role."""
    from anthropic.types import MessageParam

    out = {}
    for member in typing.get_args(MessageParam):
        (role,) = typing.get_args(_hints(member)["role"])
        out[role] = member
    return out


def prepare() -> None:
    """Read every type a message may contain now rather than on first use."""
    seen: set[Any] = set()
    todo: list[Any] = list(_messages().values())
    while todo:
        tp = todo.pop()
        if tp in seen:
            continue
        seen.add(tp)
        shape = _shape(tp)
        if shape.kind == "typeddict":
            todo += _hints(tp).values()
        todo += [*shape.members, *([shape.item] if shape.item is not None else [])]
        if typing.get_origin(tp) is typing_extensions.Annotated:
            todo.append(typing.get_args(tp)[0])


def roles() -> tuple[str, ...]:
    """The roles the SDK's ``MessageParam`` allows, in its order."""
    return tuple(_messages())


@functools.cache
def _read(td: Any) -> tuple[dict[str, Any], frozenset[str]]:
    """A TypedDict's field types and its required keys. The SDK's modules use
    ``from __future__ import annotations``, so ``Required[...]`` is read from the
    annotations themselves (``__required_keys__`` cannot see it on Python < 3.12)."""
    hints: dict[str, Any] = {}
    required = set()
    for key, tp in typing_extensions.get_type_hints(td, include_extras=True).items():
        origin = typing.get_origin(tp)
        if origin in _REQUIRED:
            required.add(key)
        if origin in _REQUIRED or origin in _NOT_REQUIRED:
            tp = typing.get_args(tp)[0]
        elif getattr(td, "__total__", True):
            required.add(key)
        hints[key] = tp
    return hints, frozenset(required)


def _hints(td: Any) -> dict[str, Any]:
    return _read(td)[0]


def fields(td: Any) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The required and the optional keys of an SDK ``TypedDict``, in its order."""
    hints, required = _read(td)
    return tuple(k for k in hints if k in required), tuple(k for k in hints if k not in required)


# The walk: one message against the SDK's types


def schema_errors(message: Any, i: int) -> list[SchemaError]:
    """What in ``message`` (at ``messages.i``) the API's schema rejects; [] if nothing."""
    out: list[SchemaError] = []
    path: tuple[str | int, ...] = ("messages", i)
    message = _plain(message)
    if not isinstance(message, abc.Mapping):
        return [SchemaError(path, "Input should be a valid dictionary", "type")]
    by_role = _messages()
    role = message.get("role")
    if "role" not in message:
        out.append(SchemaError((*path, "role"), "Field required", "missing"))
    elif not isinstance(role, str) or role not in by_role:
        # The pydantic wording for a Literal; the values are the SDK's roles. Whether
        # today's API lists "system" here is not known from public material.
        out.append(SchemaError((*path, "role"), _literal(tuple(by_role)), "literal"))
    if out:
        return out
    # The API's message model is one type with a ``role`` field, so unlike a
    # block's path, a message's path does not name its role.
    _typeddict(by_role[str(role)], message, path, out)
    return out


@dataclass(frozen=True)
class _Shape:
    """What one type annotation asks for, worked out once per type."""

    kind: str  # "any", "typeddict", "union", "literal", "list", "dict" or "scalar"
    tp: Any = None  # the TypedDict, or the scalar's Python type
    values: tuple[Any, ...] = ()  # a Literal's values
    item: Any = None  # a list's item type
    members: tuple[Any, ...] = ()  # a union's members
    tags: dict[str, Any] | None = None  # a union chosen by "type": tag -> member
    optional: bool = False  # a union that also allows None


_SHAPES: dict[int, tuple[Any, _Shape]] = {}  # id(type) -> (type, shape): typing's hashes are slow


def _shape(tp: Any) -> _Shape:
    hit = _SHAPES.get(id(tp))
    if hit is not None and hit[0] is tp:
        return hit[1]
    shape = _work_out(tp)
    _SHAPES[id(tp)] = (tp, shape)  # holding tp keeps its id its own
    return shape


def _work_out(tp: Any) -> _Shape:
    origin = typing.get_origin(tp)
    if origin is typing_extensions.Annotated:
        return _shape(typing.get_args(tp)[0])
    if tp is Any or tp is object:
        return _Shape("any")
    if typing_extensions.is_typeddict(tp):
        return _Shape("typeddict", tp)
    if origin is Union:
        members = _members(tp)
        optional = _NONE in typing.get_args(tp)
        return _Shape("union", members=members, tags=_tags(members), optional=optional)
    if origin is Literal:
        return _Shape("literal", values=typing.get_args(tp))
    if origin in _LISTS:
        return _Shape("list", item=(typing.get_args(tp) or (Any,))[0])
    if origin in _DICTS or tp in _DICTS:
        return _Shape("dict")
    if tp in (bool, int, float, str, _NONE):
        return _Shape("scalar", tp)
    return _Shape("any")  # a type we do not check (a file object, a path): the SDK converts it


def _is_map(value: Any) -> bool:
    return type(value) is dict or isinstance(value, abc.Mapping)


def _check(tp: Any, value: Any, path: tuple[str | int, ...], out: list[SchemaError]) -> None:
    value = _plain(value)
    shape = _shape(tp)
    kind = shape.kind
    if kind == "any":
        return
    if kind == "typeddict":
        _typeddict(shape.tp, value, path, out)
    elif kind == "union":
        _union(shape, value, path, out)
    elif kind == "list":
        if not isinstance(value, (list, tuple)):
            out.append(SchemaError(path, "Input should be a valid list", "type"))
            return
        for k, v in enumerate(value):
            _check(shape.item, v, (*path, k), out)
    elif not _fits(shape, value):
        out.append(
            SchemaError(path, _type_message(shape), "literal" if kind == "literal" else "type")
        )


def _typeddict(td: Any, value: Any, path: tuple[str | int, ...], out: list[SchemaError]) -> None:
    if not _is_map(value):
        out.append(SchemaError(path, "Input should be a valid dictionary", "type", td))
        return
    hints, required = _read(td)
    for key in hints:  # the SDK's field order, which is also the order of its checks
        if key in value:
            found: list[SchemaError] = []
            _check(hints[key], value[key], (*path, key), found)
            # a wrong value right at this field belongs to this type (for hints)
            out += [
                e if e.owner or len(e.path) > len(path) + 1 else replace(e, owner=td) for e in found
            ]
        elif key in required:
            out.append(SchemaError((*path, key), "Field required", "missing", td))
    for key in value:
        if key not in hints:
            out.append(SchemaError((*path, key), "Extra inputs are not permitted", "extra", td))


def _union(shape: _Shape, value: Any, path: tuple[str | int, ...], out: list[SchemaError]) -> None:
    if value is None and shape.optional:
        return
    tags = shape.tags
    if tags is not None:  # blocks and sources: chosen by their "type", named in the path
        if not _is_map(value):
            out.append(SchemaError(path, "Input should be a valid dictionary", "type"))
        elif "type" not in value:
            out.append(SchemaError(path, "Unable to extract tag using discriminator 'type'", "tag"))
        elif not isinstance(value["type"], str) or value["type"] not in tags:
            expected = ", ".join(repr(k) for k in tags)
            out.append(
                SchemaError(
                    path,
                    f"Input tag {value['type']!r} found using 'type' does not match any of "
                    f"the expected tags: {expected}",
                    "tag",
                )
            )
        else:
            _check(tags[value["type"]], value, (*path, value["type"]), out)
        return
    fitting = [m for m in shape.members if _fits(_shape(m), value)]
    if not fitting:
        # pydantic lists one error per member here; the API's 400 shows one. Which
        # one it shows is not known from public material: we name the last member
        # (for ``str | list of blocks`` that is "a valid list", the general form).
        if shape.members:
            out.append(SchemaError(path, _type_message(_shape(shape.members[-1])), "type"))
        return
    first: list[SchemaError] = []
    for k, member in enumerate(fitting):
        found: list[SchemaError] = []
        _check(member, value, path, found)
        if not found:
            return
        if k == 0:
            first = found
    out += first


@functools.cache
def _tags(members: tuple[Any, ...]) -> dict[str, Any] | None:
    """``{"text": TextBlockParam, ...}`` when every member is a TypedDict with a literal type."""
    tags: dict[str, Any] = {}
    for m in members:
        if not typing_extensions.is_typeddict(m) or "type" not in _read(m)[1]:
            return None
        kind = _hints(m)["type"]
        if typing.get_origin(kind) is not Literal:
            return None
        for value in typing.get_args(kind):
            tags.setdefault(value, m)
    return tags or None


@functools.cache
def _members(tp: Any) -> tuple[Any, ...]:
    """A union's members, nested unions flattened, ``None`` and SDK response models left
    out (the SDK also accepts ``response.content`` objects; they are dicts by now)."""
    out: list[Any] = []
    for m in typing.get_args(tp):
        while typing.get_origin(m) is typing_extensions.Annotated:
            m = typing.get_args(m)[0]
        if typing.get_origin(m) is Union:
            out += [x for x in _members(m) if x not in out]
        elif m is not _NONE and not (isinstance(m, type) and hasattr(m, "model_dump")):
            out.append(m)
    return tuple(out)


def _fits(shape: _Shape, value: Any) -> bool:
    """Is ``value`` of the basic kind ``shape`` wants (without looking inside)?"""
    kind = shape.kind
    if kind in ("typeddict", "dict"):
        return _is_map(value)
    if kind == "list":
        return isinstance(value, (list, tuple))
    if kind == "literal":
        return value in shape.values and not isinstance(value, bool)
    if kind == "union":
        return any(_fits(_shape(m), value) for m in shape.members)
    if kind == "scalar":
        tp = shape.tp
        if tp is bool or tp is str:
            return isinstance(value, tp)
        if tp is int:
            return isinstance(value, int) and not isinstance(value, bool)
        if tp is float:
            return isinstance(value, (int, float)) and not isinstance(value, bool)
        return value is None
    return True


def _type_message(shape: _Shape) -> str:
    kind = shape.kind
    if kind in ("typeddict", "dict"):
        return "Input should be a valid dictionary"
    if kind == "list":
        return "Input should be a valid list"
    if kind == "literal":
        return _literal(shape.values)
    if kind == "union":
        members = shape.members
        return _type_message(_shape(members[-1])) if members else "Input should be None"
    words = {
        bool: "a valid boolean",
        int: "a valid integer",
        float: "a valid number",
        str: "a valid string",
        _NONE: "None",
    }
    return f"Input should be {words.get(shape.tp, 'a valid value')}"


def _literal(values: tuple[Any, ...]) -> str:
    """pydantic's words for a Literal: "Input should be 'a', 'b' or 'c'"."""
    shown = [repr(v) for v in values]
    if len(shown) == 1:
        return f"Input should be {shown[0]}"
    return f"Input should be {', '.join(shown[:-1])} or {shown[-1]}"


def _plain(value: Any) -> Any:
    """An SDK object (``response.content`` appended as is) as the dict it is sent as."""
    if type(value) in _PLAIN or not hasattr(value, "model_dump"):
        return value
    return value.model_dump(mode="json", exclude_none=True)


# The blocks a loop writes every turn, as the SDK's request types describe them: the
# keys each must have, and for each key it may have the exact Python types its value
# may take for the walk above to find nothing in it without looking inside (the tag
# "type" chose the entry: a string). A message of such blocks (or of a string)
# needs no walk; anything else (cache_control, a list of result blocks, an image)
# takes it. This table is what those SDK types say, written down so that append need
# not import the SDK (two seconds): tests/test_history.py reads it off the installed
# SDK and fails when the two differ.
_STR, _DICT, _BOOL = frozenset({str}), frozenset({dict}), frozenset({bool})
QUICK_ROLES = ("user", "assistant")
QUICK_BLOCKS: dict[str, tuple[frozenset[str], dict[str, frozenset[type]]]] = {
    "text": (frozenset({"type", "text"}), {"type": _STR, "text": _STR}),
    "tool_use": (
        frozenset({"type", "id", "name", "input"}),
        {"type": _STR, "id": _STR, "name": _STR, "input": _DICT},
    ),
    "tool_result": (
        frozenset({"type", "tool_use_id"}),
        {"type": _STR, "tool_use_id": _STR, "content": _STR, "is_error": _BOOL},
    ),
    "thinking": (
        frozenset({"type", "thinking", "signature"}),
        {"type": _STR, "thinking": _STR, "signature": _STR},
    ),
}
_MESSAGE_KEYS = frozenset({"role", "content"})


def _fits_quickly(message: Any) -> bool:
    """Does ``message`` fit the SDK's types by ``QUICK_BLOCKS`` alone (no walk)?"""
    if type(message) is not dict or message.keys() != _MESSAGE_KEYS:
        return False
    if message["role"] not in QUICK_ROLES:
        return False
    content = message["content"]
    if type(content) is str:
        return True
    if type(content) is not list:
        return False
    for b in content:
        if type(b) is not dict or not _block_fits(b, b.get("type")):
            return False
    return True


def _block_fits(b: dict[Any, Any], kind: Any) -> bool:
    """Does block ``b`` (of type ``kind``) fit its entry in ``QUICK_BLOCKS``: the keys
    it must have, no others, each value of a type the entry allows?"""
    entry = _QUICK.get(kind) if type(kind) is str else None
    if entry is None:
        return False
    required, types, checks = entry  # checks: the keys it must have but "type" (kind is b's)
    if len(b) == len(required):  # the common case: only the keys it must have, if all are here
        for key, allowed in checks:
            if key not in b or type(b[key]) not in allowed:
                return False
        return True
    for key in b:  # more (or fewer): each key one the entry knows, with a type it allows...
        found = types.get(key)
        if found is None or type(b[key]) not in found:
            return False
    for key, _ in checks:  # ...and the keys it must have among them
        if key not in b:
            return False
    return True


# QUICK_BLOCKS as _block_fits reads it: the required keys, every key's types, and the
# required keys' types but for "type" (which chose the entry)
_QUICK = {
    kind: (required, types, tuple((k, types[k]) for k in types if k in required and k != "type"))
    for kind, (required, types) in QUICK_BLOCKS.items()
}


_NOTHING: frozenset[type] = frozenset()


def quick_blocks_from_sdk(role: str = "user") -> dict[str, tuple[frozenset[str], dict[str, Any]]]:
    """``QUICK_BLOCKS`` as the installed SDK's types give it, for the same block types
    and keys (what tests/test_history.py compares the table with)."""
    content = _shape(_hints(_messages()[role])["content"])
    (listed,) = [m for m in content.members if _shape(m).kind == "list"]
    tags = _shape(_shape(listed).item).tags or {}
    out = {}
    for kind, (_, types) in QUICK_BLOCKS.items():
        hints, required = _read(tags[kind])
        out[kind] = (required, {k: _STR if k == "type" else _exact(hints[k]) for k in types})
    return out


def _exact(tp: Any) -> frozenset[type] | None:
    """The exact types a value of annotation ``tp`` may have for the walk to accept it
    without looking inside (None: anything)."""
    shape = _shape(tp)
    if shape.kind == "any":
        return None
    if shape.kind == "dict":
        return _DICT
    if shape.kind == "scalar":
        return frozenset({int, float}) if shape.tp is float else frozenset({shape.tp})
    if shape.kind == "union":
        found: set[type] = {_NONE} if shape.optional else set()
        for m in shape.members:
            e = _exact(m)
            if e is None:
                return None
            found |= e
        return frozenset(found)
    return _NOTHING  # a TypedDict, a list or a Literal: its value needs a look inside


def _shape_problems(i: int, message: Any) -> list[Problem]:
    """Rule 1, on message ``i``: what the SDK's types reject, with a hint for each."""
    if _fits_quickly(message):
        return []
    problems = []
    for e in schema_errors(message, i):
        top = len(e.path) <= 3  # messages.N or messages.N.<key>
        if len(e.path) == 2:
            rule, hint = "shape", t("hint.dict")
        elif top and e.key == "role":
            rule, hint = "role", t("hint.role")
        elif top and e.key == "content":
            rule, hint = "shape", t("hint.content")
        elif top:
            rule, hint = "shape", t("hint.schema.message_keys")
        else:
            rule, hint = "schema", _schema_hint(e)
        problems.append(Problem(str(e), hint, i, rule))
    return problems


def _schema_hint(e: SchemaError) -> str:
    """A hint for a content block that does not fit the SDK's types."""
    if e.kind == "tag":
        return t("hint.schema.tag")
    if e.kind == "type" and e.key in ("input", "is_error") and "tool_" in e.where:
        return t(f"hint.schema.{e.key}")
    if e.kind == "type" and e.path[-2:-1] == ("tool_result",) and e.key == "content":
        return t("hint.schema.result_content")
    if e.kind == "type" and isinstance(e.path[-1], int):
        return t("hint.schema.block")
    if e.owner is not None:
        required, optional = fields(e.owner)
        return t(
            "hint.schema.fields",
            type=e.owner.__name__,
            required=", ".join(required),
            optional=", ".join(optional) or "-",
        )
    return t("hint.schema.block")


# --------------------------------------------------------------------------
# 2 and 3. The rules about one message, and those that tie it to the one before
#
# Each rule's sentence is in WORDS, under the rule's key. ``_rules_at`` holds the
# rules themselves, each under what it looks at (a block's type, the message's
# role, the calls of the message before); it runs on one message, so ``validate``
# runs it on each message and ``check_at`` on the new one only.
# --------------------------------------------------------------------------

# The pattern the API holds a tool_use id to. Its 400 reads "messages.1.content.1.tool_use.id:
# String should match pattern '^[a-zA-Z0-9_-]+$'", as quoted from the real API (with request
# ids) in github.com/BlockRunAI/ClawRouter/issues/17 (2026-02-10) and
# github.com/CommandCodeAI/command-code/issues/323 (2026-05-06); Anthropic's docs do not state it.
TOOL_USE_ID = re.compile(r"[a-zA-Z0-9_-]+")


def id_ok(tid: str) -> bool:
    """Whether ``TOOL_USE_ID.fullmatch(tid)`` matches, worked out with str methods: in a
    loop's turn they cost a fifth of what a call into the regex engine does (measured
    in benchmarks/loop_overhead.py). ASCII letters and digits are what ``isalnum`` leaves
    of ASCII, ``_`` and ``-`` become letters, and ``""`` is not alphanumeric."""
    return tid.isascii() and tid.replace("_", "a").replace("-", "a").isalnum()


# key: (Problem.rule, the API's sentence, the hint's key in agentlab.i18n)
WORDS: dict[str, tuple[str, str, str]] = {
    "first": ("first", 'messages: first message must use the "user" role', "hint.first"),
    "empty": (
        "empty",
        "messages.{i}: all messages must have non-empty content except for "
        "the optional final assistant message",
        "hint.empty_message",
    ),
    "empty_text": (
        "empty_text",
        "messages: text content blocks must be non-empty",
        "hint.empty_text",
    ),
    "blank_text": (
        "empty_text",
        "messages: text content blocks must contain non-whitespace text",
        "hint.empty_text",
    ),
    "tool_use_role": (
        "role",
        "messages.{i}: `tool_use` blocks can only be in `assistant` messages",
        "hint.tool_use_role",
    ),
    "duplicate_id": (
        "duplicate_id",
        "messages.{i}.content.{k}: `tool_use` ids must be unique",
        "hint.duplicate_id",
    ),
    "id_pattern": (
        "id_pattern",
        "messages.{i}.content.{k}.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'",
        "hint.tool_use_id",
    ),
    # The API's pydantic-style location (as in `tools.0.custom.name`); the part before
    # `tool_use_id` is inferred, not confirmed.
    "result_id": (
        "shape",
        "messages.{i}.content.{k}.tool_result.tool_use_id: Field required",
        "hint.unexpected_result",
    ),
    "result_role": (
        "role",
        "messages.{i}: `tool_result` blocks can only be in `user` messages",
        "hint.result_role",
    ),
    # The API refuses thinking blocks the model did not write; its exact words for one
    # in a user message are not known from public material. These follow its wording
    # for tool_use blocks.
    "thinking_role": (
        "role",
        "messages.{i}.content.{k}: `{kind}` blocks can only be in `assistant` messages",
        "hint.thinking_role",
    ),
    # Worded by agentlab: see misplaced_system.
    "system_after_user": (
        "system_after_user",
        "messages.{i}: a `system` message must come right after a `user` turn, not after "
        "{after} (agentlab's check; the API's wording for this error is not public)",
        "hint.system_after_user",
    ),
    # As the live API answers it, quoted in github.com/anthropics/claude-code/issues/14110
    # (2025-12-16): "messages.10.content.1: each tool_use must have a single result. ..."
    "duplicate_result": (
        "duplicate_result",
        "messages.{i}.content.{k}: each tool_use must have a single result. Found "
        "multiple `tool_result` blocks with id: {id}",
        "hint.duplicate_result",
    ),
    "unexpected_result": (
        "unexpected_result",
        "messages.{i}.content.{k}: unexpected `tool_use_id` found in `tool_result` blocks: "
        "{id}. Each `tool_result` block must have a corresponding `tool_use` block in the "
        "previous message.",
        "hint.unexpected_result",
    ),
    "results_first": (
        "results_first",
        "messages.{i}: Did not find {n} `tool_result` block(s) at the beginning of this "
        "message. Messages following `tool_use` blocks must begin with a matching number "
        "of `tool_result` blocks.",
        "hint.results_first",
    ),
    # The live API's sentence as recorded from a transcript (2026-11), not on a public
    # docs page; the Sonnet 5.5 migration guide gives the rule: use top-level `system`.
    "system_first": (
        "system_first",
        "messages.0: use the top-level 'system' parameter for the initial system prompt",
        "hint.first",
    ),
    # pydantic's wording for the role literal, for a model that takes no system message.
    "system_role": (
        "role",
        "messages.{i}.role: Input should be 'user' or 'assistant'",
        "hint.role",
    ),
    # Wording as reported publicly for Opus 4.6 (2026), the first model without prefill;
    # not confirmed word for word for Sonnet 5.5.
    "prefill": (
        "prefill",
        "This model does not support assistant message prefill. "
        "The conversation must end with a user message.",
        "hint.prefill",
    ),
    # The API's sentence as quoted in github.com/anthropics/anthropic-sdk-python/issues/494
    # (2024-05-13); whether today's wording puts backticks around the block names is not
    # known from public material.
    "tools_needed": (
        "tools_needed",
        "Requests which include tool_use or tool_result blocks must define tools.",
        "hint.tools_needed",
    ),
    # The API's sentence as quoted in github.com/tailcallhq/forgecode/issues/1872
    # (2025-11-08), for a history that ends on an assistant text with a space or newline.
    "trailing_space": (
        "trailing_space",
        "messages: final assistant content cannot end with trailing whitespace",
        "hint.trailing_space",
    ),
    # The tool definitions: pydantic's wording, as the API answers them.
    "tool_shape": ("tools", "tools.{i}: Input should be a valid dictionary", "hint.tools"),
    "tool_name": (
        "tools",
        "tools.{i}.{kind}.name: String should match pattern '^[a-zA-Z0-9_-]{{1,128}}$'",
        "hint.tools",
    ),
    "tool_schema": ("tools", "tools.{i}.custom.input_schema: Field required", "hint.tools"),
    "tool_twice": ("tools", "tools: Tool names must be unique.", "hint.tools"),
    # As the API answered it in github.com/anthropics/claude-code/issues/7365 (2025-09-09).
    "tool_schema_invalid": (
        "tools",
        "tools.{i}.custom.input_schema: JSON schema is invalid. It must match JSON Schema "
        "draft 2020-12 (https://json-schema.org/draft/2020-12). Learn more about tool use "
        "at https://docs.anthropic.com/en/docs/tool-use.",
        "hint.tool_schema",
    ),
    # The SDK's InputSchema says `type: Literal["object"]`; the API's sentence for another
    # type is not known from public material: this is pydantic's wording, inferred.
    "tool_schema_type": (
        "tools",
        "tools.{i}.custom.input_schema.type: Input should be 'object'",
        "hint.tool_schema",
    ),
    "tool_schema_untyped": (
        "tools",
        "tools.{i}.custom.input_schema.type: Field required",
        "hint.tool_schema",
    ),
    "unanswered": (
        "unanswered",
        "messages.{i}: `tool_use` ids were found without `tool_result` blocks immediately "
        "after: {ids}. Each `tool_use` block must have a corresponding `tool_result` block "
        "in the next message.",
        "hint.unanswered",
    ),
}


def _say(key: str, i: int, index: int | None = None, **values: Any) -> Problem:
    """The problem ``WORDS[key]`` names, about message ``i`` (or ``index``)."""
    rule, sentence, hint = WORDS[key]
    return Problem(sentence.format(i=i, **values), t(hint), i if index is None else index, rule)


_ROLES = ("user", "assistant", "system")


def _first(message: Any) -> list[Problem]:
    """Looks at the first message only."""
    return [_say("first", 0)] if role_of(message) in ("assistant", "system") else []


def _rules_at(
    i: int, prev: Any, message: Any, last: bool, wanted: list[str]
) -> tuple[list[Problem], bool]:
    """The rules on message ``i`` (the last one if ``last``) right after ``prev``
    (None: it is first), ``wanted`` being the ids of ``prev``'s tool calls; and
    whether the message fits the SDK's types by ``QUICK_BLOCKS`` (``_fits_quickly``,
    read in the same pass over its blocks)."""
    problems: list[Problem] = []
    if type(message) is dict:
        role, content = message.get("role"), message.get("content")
        # its keys are role and content, no others (fewer steps than comparing key sets)
        quick = (
            (role == "assistant" or role == "user") and len(message) == 2 and "content" in message
        )
    elif isinstance(message, Mapping):
        role, content, quick = message.get("role"), message.get("content"), False
    else:
        role = content = None
        quick = False
    if type(content) is list and role in _ROLES:
        bs: Sequence[Any] = content
    elif type(content) is str and role in _ROLES:
        bs = [{"type": "text", "text": content}]
    elif isinstance(content, tuple) and role in _ROLES:
        bs, quick = content, False
    else:  # a wrong role or no content at all: a shape problem, and no rule below applies
        bs, content, quick = (), None, False

    # One message: its content, and each block by its type. The results of a user
    # message are also read here, for the rules below (``ids``, ``leading``, ``paired``).
    ids: list[str] = []  # the calls the results answer, in order
    leading = 0  # how many blocks at the start are results
    paired: list[Problem] = []  # problems of the results against the calls before
    seen: list[str] = []  # the ids of the calls so far
    if content is not None and not content:
        if not (last and role == "assistant"):  # only a final assistant turn may be empty
            problems.append(_say("empty", i))
    k = -1  # the block's index (counted by hand: cheaper than enumerate, on every turn)
    for b in bs if content else ():
        k += 1
        if type(b) is not dict:
            b, quick = _block(b), False
        kind = b.get("type")
        if quick and not _block_fits(b, kind):  # the shape, as _fits_quickly reads it
            quick = False
        if kind == "text":
            text = b.get("text")
            if text == "":
                problems.append(_say("empty_text", i))
            elif isinstance(text, str) and not text.strip():
                problems.append(_say("blank_text", i))
        elif kind == "tool_use":
            if role != "assistant":
                problems.append(_say("tool_use_role", i))
            tid = b.get("id")
            if isinstance(tid, str) and not id_ok(tid):
                problems.append(_say("id_pattern", i, k=k))
            tid = tid if type(tid) is str else str(tid)
            if tid in seen:
                problems.append(_say("duplicate_id", i, k=k))
            seen.append(tid)
        elif kind == "tool_result":
            leading += leading == k
            if "tool_use_id" not in b:
                problems.append(_say("result_id", i, k=k))
                continue
            if role != "user":
                problems.append(_say("result_role", i))
                continue
            # Each result answers one call of the message before.
            tid = b["tool_use_id"]
            tid = tid if type(tid) is str else str(tid)
            if tid in ids:
                paired.append(_say("duplicate_result", i, k=k, id=b["tool_use_id"]))
                continue
            ids.append(tid)
            if tid not in wanted:
                paired.append(_say("unexpected_result", i, k=k, id=b["tool_use_id"]))
        elif (kind == "thinking" or kind == "redacted_thinking") and role != "assistant":
            problems.append(_say("thinking_role", i, k=k, kind=kind))

    # A system message and the one before it.
    if role == "system":
        problems += misplaced_system(i, prev, message)
    if paired:
        problems += paired

    # The calls before: answered right here, the results first.
    if wanted:
        if role == "user" and leading < len(wanted) and leading < len(bs):
            problems.append(_say("results_first", i, n=len(wanted)))
            return problems, quick
        missing = [x for x in wanted if x not in ids] if ids != wanted else []
        if missing:
            problems.append(_say("unanswered", i - 1, ids=", ".join(missing)))
    return problems, quick


def _block(b: Any) -> dict[str, Any]:
    """One content block as a dict (an SDK object converted; anything else a "?")."""
    d = as_dict(b)
    return d if isinstance(d, dict) else {"type": "?", "value": d}


def _end(i: int, last: Any, pending_ok: bool) -> list[Problem]:
    """The end of the history, after message ``i - 1``: its calls are unanswered (the
    ``unanswered`` rule of ``_rules_at``, with no message after)."""
    missing = None if pending_ok else _calls(last)
    return [_say("unanswered", i - 1, ids=", ".join(missing))] if missing else []


def _calls(message: Any) -> list[str] | None:
    """The ids of the tool calls in an assistant message; None for any other message."""
    if type(message) is dict:
        role, content = message.get("role"), message.get("content")
    else:
        role, content = role_of(message), None
    if role != "assistant":
        return None
    ids: list[str] = []
    for b in content if type(content) is list else _blocks(message):
        if type(b) is not dict:
            b = _block(b)
        if b.get("type") == "tool_use":
            tid = b.get("id")
            ids.append(tid if type(tid) is str else str(tid))
    return ids


def misplaced_system(i: int, prev: Any, message: Any) -> list[Problem]:
    """A ``system`` message at ``i`` that does not come right after a user turn.

    The API accepts ``role: "system"`` mid-conversation after a user turn
    (Sonnet 5.5 / Opus 4.8+; the Sonnet 5.5 migration guide,
    checked 2026-11-30). After an assistant turn it is refused
    here; after another ``system`` message too: the documented place is after a
    user turn, two in a row can always be merged into one, and agentlab would
    rather refuse a history the API might accept than accept one it may refuse.
    The API's wording for this error is not public: the text says it is agentlab's.
    """
    if prev is None or role_of(message) != "system" or role_of(prev) == "user":
        return []
    after = "another `system` message" if role_of(prev) == "system" else "an `assistant` turn"
    return [_say("system_after_user", i, after=after)]


# --------------------------------------------------------------------------
# Running the rules: on a whole history, and on one new message
# --------------------------------------------------------------------------


def validate(messages: Sequence[Any], pending_ok: bool = False) -> list[Problem]:
    """Every rule the API would enforce on ``messages``; ``[]`` means it would accept them.

    ``pending_ok=True`` accepts a history that ends on an assistant turn whose
    ``tool_use`` blocks are not answered yet: the state between saving the
    model's reply and appending the tool results.
    """
    if not isinstance(messages, (list, tuple)):
        return [Problem("messages: Input should be a valid list", t("hint.list"), None, "shape")]
    if not messages:
        return [
            Problem("messages: at least one message is required", t("hint.first"), None, "shape")
        ]
    # The API checks the request's shape first (its schema) and the rules that tie
    # messages together after, so every shape problem comes before the others:
    # the first problem is the one the API's 400 names.
    problems: list[Problem] = []
    for i, message in enumerate(messages):
        problems += _shape_problems(i, message)
    problems += _first(messages[0])
    last = len(messages) - 1
    wanted: list[str] = []
    for i, message in enumerate(messages):
        prev = messages[i - 1] if i else None
        found, _ = _rules_at(i, prev, message, i == last, wanted)
        problems += found
        wanted = _calls(message) or []
    problems += _end(len(messages), messages[-1], pending_ok)
    problems += cache_points(messages)
    for rule in HISTORY_RULES if not problems else ():
        problems += rule(messages)
    return problems


def check_at(i: int, prev: Any, message: Any, *, pending_ok: bool = True) -> list[Problem]:
    """Problems of ``message`` standing at index ``i`` right after ``prev`` (None: first),
    as the last message.

    The rules ``validate`` runs, restricted to those this message can change: its own
    shape, ``_first`` if it is the first, ``_rules_at`` on it, the ``empty`` rule on
    ``prev`` (which stops being the last) and ``_end``. The whole-request rules
    (``cache_points``, the thinking prefix) are left to ``validate`` and the request
    check: they look at every message."""
    calls = _calls(prev)  # None: prev is no assistant turn
    wanted = calls or []
    problems, quick = _rules_at(i, prev, message, True, wanted)
    if prev is None:
        problems[:0] = _first(message)
    if not quick:
        problems[:0] = _shape_problems(i, message)  # the API reports the shape first
    if calls == [] and prev.get("content") in ("", [], ()):
        problems.append(_say("empty", i - 1))  # an empty reply may only come last
    if not pending_ok:
        problems += _end(i + 1, message, pending_ok)
    return problems


def check_next(messages: Sequence[Any], message: Any, *, pending_ok: bool = True) -> list[Problem]:
    """Problems that appending ``message`` to ``messages`` would create.

    Looks only at the new message and the one before it (``check_at``), so it
    costs the same for a history of 3 messages or of 3,000.
    """
    return check_at(
        len(messages), messages[-1] if messages else None, message, pending_ok=pending_ok
    )


# --------------------------------------------------------------------------
# 4. Rules about the whole request
# --------------------------------------------------------------------------

MAX_CACHE_POINTS = 4

# Rules on a whole history that an upper layer adds, run by ``validate`` after all the
# others pass: the offline emulator (``agentlab.fakeapi.thinking``) adds the prefix
# check of preserved thinking, since only it writes signatures agentlab can read. The
# core imports no upper layer; they register here.
HISTORY_RULES: list[Callable[[Sequence[Any]], list[Problem]]] = []


# The API's pattern for a tool's name: "tools.0.custom.name: String should match pattern
# '^[a-zA-Z0-9_-]{1,128}$'" (pydantic's wording, as the API answers a bad name).
TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]{1,128}")


def check_tools(tools: Any) -> list[Problem]:
    """Looks at the request's tool definitions: a name of the API's pattern, an
    ``input_schema`` for a custom tool, no name twice."""
    problems: list[Problem] = []
    names: set[str] = set()
    for i, tool in enumerate(as_dict(list(tools or []))):
        if not isinstance(tool, dict):
            problems.append(_say("tool_shape", i))
            continue
        kind = tool.get("type", "custom")
        name = tool.get("name")
        if not isinstance(name, str) or not TOOL_NAME.fullmatch(name):
            problems.append(_say("tool_name", i, kind=kind))
        schema = tool.get("input_schema")
        if kind == "custom" and not isinstance(schema, dict):
            problems.append(_say("tool_schema", i))
        elif kind == "custom" and isinstance(schema, dict):
            problems += _input_schema(i, schema)
        if name in names:
            problems.append(_say("tool_twice", i))
        names.add(str(name))
    return problems


def _input_schema(i: int, schema: dict[str, Any]) -> list[Problem]:
    """A custom tool's ``input_schema``: a JSON Schema of an object."""
    if "type" not in schema:
        return [_say("tool_schema_untyped", i)]
    if schema["type"] != "object":
        return [_say("tool_schema_type", i)]
    return [] if _schema_ok(schema) else [_say("tool_schema_invalid", i)]


_JSON_TYPES = frozenset({"string", "integer", "number", "boolean", "array", "object", "null"})


def _schema_ok(schema: Any, depth: int = 0) -> bool:
    """Is ``schema`` a JSON Schema as far as the keywords students write go: each ``type``
    a JSON type ("string", not "str"), ``properties`` and ``$defs`` maps of schemas,
    ``items`` and the ``anyOf`` family schemas, ``required`` a list of names? (Not the
    whole of draft 2020-12: importing a full validator costs over a second.)"""
    if isinstance(schema, bool):
        return True  # true and false are schemas too
    if not isinstance(schema, Mapping) or depth > 64:
        return False
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind] if kind is not None else []
    if not all(isinstance(k, str) and k in _JSON_TYPES for k in kinds):
        return False
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        return False
    for key in ("properties", "$defs", "definitions", "patternProperties"):
        if key in schema and not (
            isinstance(schema[key], Mapping)
            and all(_schema_ok(v, depth + 1) for v in schema[key].values())
        ):
            return False
    for key in ("items", "additionalProperties", "not", "contains", "if", "then", "else"):
        if key in schema and not _schema_ok(schema[key], depth + 1):
            return False
    for key in ("anyOf", "oneOf", "allOf", "prefixItems"):
        if key in schema and not (
            isinstance(schema[key], list) and all(_schema_ok(v, depth + 1) for v in schema[key])
        ):
            return False
    return "enum" not in schema or isinstance(schema["enum"], list)


def system_messages(messages: Sequence[Any], allowed: bool, since: int = 0) -> list[Problem]:
    """Looks at each ``role: "system"`` message from ``messages[since]`` on, for a model
    that takes them mid-conversation (``allowed``: Sonnet 5.5 / Opus 4.8+, the Sonnet 5.5
    migration guide, checked 2026-11-30) or not: never first, and only right after a
    user turn (``misplaced_system``)."""
    problems: list[Problem] = []
    for i in range(since, len(messages)):
        if role_of(messages[i]) != "system":
            continue
        if not allowed:
            problems.append(_say("system_role", i))
        elif i == 0:
            problems.append(_say("system_first", i))
        else:
            problems += misplaced_system(i, messages[i - 1], messages[i])
    return problems


def prefill(i: int, last: Any) -> list[Problem]:
    """Looks at the last message, for a model without assistant prefill: it may not be an
    assistant turn, unless a server tool paused it (sent back to go on). Whether any
    other final assistant turn is a paused one sent back is the caller's to say."""
    if role_of(last) != "assistant":
        return []
    if any(b.get("type") == "server_tool_use" for b in _blocks(last)):
        return []
    return [_say("prefill", i)]


def tools_needed(messages: Sequence[Any], tools: Any) -> list[Problem]:
    """Looks for a ``tool_use`` or ``tool_result`` block in a request that defines no
    tools: the API refuses one, even when this turn should call no tool (send the
    tools with ``tool_choice={"type": "none"}`` for that)."""
    if tools:
        return []
    for i, message in enumerate(messages):
        if any(b.get("type") in ("tool_use", "tool_result") for b in _blocks(message)):
            return [_say("tools_needed", i)]
    return []


def trailing_space(i: int, last: Any) -> list[Problem]:
    """Looks at the last message: an assistant turn (a prefill) may not end on a text
    that ends with whitespace."""
    if role_of(last) != "assistant":
        return []
    found = _blocks(last)
    end = found[-1].get("text") if found and found[-1].get("type") == "text" else None
    if isinstance(end, str) and end != end.rstrip():
        return [_say("trailing_space", i)]
    return []


def cache_points(messages: Sequence[Any], tools: Any = None, system: Any = None) -> list[Problem]:
    """Looks at every block of the request: more than four marked ``cache_control`` (tools,
    system and messages together): "A maximum of 4 blocks with cache_control may be provided.
    Found 5." as the live API answers it, quoted in
    github.com/griffinmartin/opencode-claude-auth/issues/121 (2026-04-03) and
    github.com/VicBilibily/GCMP/pull/83 (2026-02-16). The top-level ``cache_control``
    (automatic caching) is not counted here: whether it takes one of the four is not public."""
    marks: list[Any] = []  # each mark's cache_control, in the order the API reads them
    for block in [*(tools or []), *(system if isinstance(system, list) else [])]:
        if isinstance(block, Mapping) and "cache_control" in block:
            marks.append(block["cache_control"])
    for message in messages:
        for b in _blocks(message) if isinstance(message, Mapping) else []:
            if "cache_control" in b:
                marks.append(b["cache_control"])
            inner = b.get("content") if b.get("type") == "tool_result" else None
            if isinstance(inner, list):  # a tool result's own blocks (not a string, not junk)
                marks += [x["cache_control"] for x in inner
                          if isinstance(x, Mapping) and "cache_control" in x]  # fmt: skip
    problems = []
    if len(marks) > MAX_CACHE_POINTS:
        text = (
            f"A maximum of {MAX_CACHE_POINTS} blocks with cache_control may be provided. "
            f"Found {len(marks)}."
        )
        problems.append(Problem(text, t("hint.cache_points"), None, "cache_points"))
    # "Cache entries with longer TTL must appear before shorter TTLs" (prompt-caching docs,
    # "Mixing different TTLs"); the API refuses the other order with a 400 (reported in
    # github.com/cnighswonger/claude-code-cache-fix/releases/tag/v2.0.5, 2026-04-20), in
    # words that are not public: this sentence is agentlab's.
    ttls = [m.get("ttl", "5m") if isinstance(m, Mapping) else "5m" for m in marks]
    if "5m" in ttls and "1h" in ttls[ttls.index("5m") :]:
        text = (
            "cache_control: a block with ttl '1h' comes after one with ttl '5m'; longer TTLs "
            "must come first (agentlab's wording; the API's is not public)"
        )
        problems.append(Problem(text, t("hint.cache_ttl"), None, "cache_points"))
    return problems


# --------------------------------------------------------------------------
# 5. Rules about the request's fields, for one model (from ``agentlab.models``)
# --------------------------------------------------------------------------

# From this version on, unknown top-level fields are refused
# (Anthropic's Claude Sonnet 5.5 migration guide, platform.claude.com/docs, checked 2026-11-30).
STRICT_API_VERSION = "2026-10-21"
SAMPLING = ("temperature", "top_p", "top_k")
# Keyword arguments of the SDK's create() that are request options, not body fields.
SDK_OPTIONS = ("extra_headers", "extra_query", "extra_body", "timeout")


@lru_cache(maxsize=4)
def known_fields(beta: bool = False, count_tokens: bool = False) -> frozenset[str]:
    """The top-level request fields the installed SDK can send (its TypedDicts).

    ``beta`` adds the beta-only fields (``thread``, ``context_management`` ...);
    ``betas`` itself travels as the ``anthropic-beta`` header, not in the body.
    """
    from anthropic.types import message_count_tokens_params, message_create_params
    from anthropic.types.beta import message_create_params as beta_params

    def keys(td: Any) -> set[str]:
        return set(td.__required_keys__) | set(td.__optional_keys__)

    if count_tokens:
        return frozenset(keys(message_count_tokens_params.MessageCountTokensParams))
    fields = keys(message_create_params.MessageCreateParamsBase) | {"stream"}
    if beta:
        fields |= keys(beta_params.MessageCreateParamsBase) - {"betas"}
    return frozenset(fields)


def check_fields(
    params: Mapping[str, Any],
    info: models.ModelInfo | None,
    *,
    api_version: str = STRICT_API_VERSION,
    beta: bool = False,
    count_tokens: bool = False,
) -> list[str]:
    """The API's sentences for the request's fields but ``messages`` and ``tools``, for
    the model ``info`` describes (None: one not in the table): required fields, fields
    this ``anthropic-version`` does not know (``beta``: through the beta endpoint),
    ``max_tokens``, sampling, thinking, ``output_config``, ``tool_choice``."""
    errors: list[str] = []
    required = ("model", "messages") if count_tokens else ("model", "max_tokens", "messages")
    errors += [f"{key}: Field required" for key in required if key not in params]
    if "model" in params and not isinstance(params["model"], str):
        # pydantic's wording for a wrong type, as the API's other field errors use it;
        # not confirmed for this field.
        errors.append("model: Input should be a valid string")
    info = models.get(params.get("model"))
    errors += _fields(params, info, api_version, beta, count_tokens)
    if not count_tokens:
        errors += _max_tokens(params, info)
    if "metadata" in params and not isinstance(params["metadata"], Mapping):
        # pydantic's wording, which the API's 400s use; the SDK's type is MetadataParam.
        errors.append("metadata: Input should be a valid dictionary")
    errors += _types(params)
    errors += _thinking(params, info)
    errors += _output_config(params.get("output_config"))
    errors += _tool_choice(params, info)
    return errors


def _fields(
    params: Mapping[str, Any],
    info: models.ModelInfo | None,
    api_version: str,
    beta: bool,
    count_tokens: bool,
) -> list[str]:
    sampling = True if info is None else info.sampling
    if api_version >= STRICT_API_VERSION:
        allowed = known_fields(beta, count_tokens) | set(SDK_OPTIONS)
        allowed |= set(SAMPLING) if sampling is True else set()
        extra = [f"{key}: Extra inputs are not permitted" for key in params if key not in allowed]
        return extra + (_sampling(params) if sampling is True and info is not None else [])
    # Older versions ignore unknown fields; sampling follows the model's row.
    if sampling is True and info is not None:
        return _sampling(params)
    if sampling is True or info is None:
        return []
    if sampling == "default":
        # The live API's 400 on opus-4-7/4-8, sonnet-5 and opus-5, as measured and
        # reported publicly (2026-04 to 2026-08; sources in models.json "sampling"): the
        # default `temperature` (1) is accepted, other values are refused with this text.
        # top_p and top_k: no public measurement; agentlab refuses them with the same text.
        return [
            f"`{key}` is deprecated for this model."
            for key in SAMPLING
            if key in params and not (key == "temperature" and params[key] == 1)
        ]
    # A model that takes no sampling parameter at all; the API's wording for this case is
    # not public: this sentence is agentlab's.
    return [f"{key}: is not supported by {info.id}" for key in SAMPLING if key in params]


def _sampling(params: Mapping[str, Any]) -> list[str]:
    """Sampling on a model that takes it: temperature from 0 to 1, and not with top_p.

    "`temperature` and `top_p` cannot both be specified for this model. Please use only
    one." is the API's 400 as quoted in github.com/open-webui/open-webui/issues/17922
    (2025-09-30, Sonnet 4.5) and github.com/BerriAI/litellm/issues/15097; the range is
    the docs' (0.0 to 1.0), worded as pydantic words a bound (inferred, not confirmed)."""
    errors = []
    temperature = params.get("temperature")
    if isinstance(temperature, (int, float)) and not isinstance(temperature, bool):
        if temperature > 1:
            errors.append("temperature: Input should be less than or equal to 1")
        elif temperature < 0:
            errors.append("temperature: Input should be greater than or equal to 0")
    if params.get("temperature") is not None and params.get("top_p") is not None:
        errors.append(
            "`temperature` and `top_p` cannot both be specified for this model. "
            "Please use only one."
        )
    return errors


# Top-level fields and the type each must have (the SDK's request TypedDicts), with
# pydantic's word for it. A string is not a list here, though Python could iterate it.
_TYPES: dict[str, tuple[type | tuple[type, ...], str]] = {
    "stream": (bool, "a valid boolean"),
    "stop_sequences": ((list, tuple), "a valid list"),
    "tools": ((list, tuple), "a valid list"),
    "thinking": (Mapping, "a valid dictionary"),
    # A string or a list of text blocks (the SDK's MessageCreateParams). Pydantic names
    # each member of a union in its own error; the API's sentence for this field is not
    # public, so this joins pydantic's two phrases (agentlab's wording).
    "system": ((str, list, tuple), "a valid string or a valid list"),
}


def _types(params: Mapping[str, Any]) -> list[str]:
    # The API's 400s for a wrong type use pydantic's wording ("metadata: Input should be
    # a valid dictionary"); not confirmed for each of these fields.
    return [
        f"{key}: Input should be {word}"
        for key, (kind, word) in _TYPES.items()
        if params.get(key) is not None and not isinstance(params[key], kind)
    ]


def _max_tokens(params: Mapping[str, Any], info: models.ModelInfo | None) -> list[str]:
    value = params.get("max_tokens")
    if "max_tokens" not in params:
        return []
    if not isinstance(value, int) or isinstance(value, bool):
        # pydantic's wording, as the API's other type errors use it; whether the API
        # would turn "5" into 5 (pydantic's lax mode) is not public: agentlab refuses it.
        return ["max_tokens: Input should be a valid integer"]
    if value < 1:
        return ["max_tokens: Input should be greater than or equal to 1"]
    if info is not None and value > info.max_output:
        # Wording as reported publicly for earlier models (2025-2026 issue threads).
        return [
            f"max_tokens: {value} > {info.max_output}, which is the maximum allowed "
            f"number of output tokens for {params.get('model')}"
        ]
    return []


# The display values of a thinking field: the one that returns the text, and "omitted"
# (confirmed for Sonnet 5.5 by its migration guide; the first one's name is agentlab's guess).
THINKING_DISPLAYS = ("summarized", "omitted")
_DISPLAYS = THINKING_DISPLAYS


def _thinking(params: Mapping[str, Any], info: models.ModelInfo | None) -> list[str]:
    thinking = params.get("thinking")
    if not isinstance(thinking, Mapping) or info is None:
        return []  # absent, or the wrong type (_types says so)
    kind = thinking.get("type") if isinstance(thinking, Mapping) else None
    if kind not in info.thinking:
        # That Sonnet 5.5 refuses "enabled"/"disabled" and budgets is documented
        # (the Sonnet 5.5 migration guide, checked 2026-11-30); the exact sentence is not public.
        accepted = " or ".join(f"'{k}'" for k in info.thinking)
        return [f"thinking.type: '{kind}' is not supported by {info.id}; use {accepted}"]
    if kind == "enabled":
        budget = thinking.get("budget_tokens")
        if isinstance(budget, int) and not isinstance(budget, bool) and budget < 1024:
            # The live API's sentence as recorded from a transcript (pydantic's wording); the
            # rule is the extended-thinking docs': the minimum budget is 1,024 tokens.
            return ["thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"]
        max_tokens = params.get("max_tokens")
        if isinstance(budget, int) and isinstance(max_tokens, int) and budget >= max_tokens:
            # Extended-thinking docs: budget_tokens must be less than max_tokens. The exact
            # sentence of the 400 is not public (agentlab's, after the docs' rule).
            return [
                "max_tokens must be greater than thinking.budget_tokens "
                f"(max_tokens: {max_tokens}, budget_tokens: {budget})"
            ]
    if "display" in thinking and thinking["display"] not in _DISPLAYS:
        # pydantic's wording for a literal, as the API's other field errors use it; the
        # API's sentence for this field is not public. "omitted" is confirmed for Sonnet
        # 5.5 (the Sonnet 5.5 migration guide); the name of the one that returns the text is agentlab's guess.
        words = " or ".join(f"'{d}'" for d in _DISPLAYS)
        return [f"thinking.display: Input should be {words}"]
    return []


_EFFORTS = ("low", "medium", "high", "xhigh", "max")


def _output_config(config: Any) -> list[str]:
    """``output_config``: ``effort`` and a structured-output ``format`` (structured-outputs
    docs: ``{"type": "json_schema", "schema": {...}}``; effort docs: low to max)."""
    if config is None:
        return []
    if not isinstance(config, Mapping):
        return ["output_config: Input should be a valid dictionary"]
    errors = []
    effort = config.get("effort")
    if effort is not None and effort not in _EFFORTS:
        # Pydantic's wording for a literal; not confirmed for this field.
        words = ", ".join(f"'{e}'" for e in _EFFORTS[:-1]) + f" or '{_EFFORTS[-1]}'"
        errors.append(f"output_config.effort: Input should be {words}")
    fmt = config.get("format")
    if fmt is None:
        return errors
    kind = fmt.get("type") if isinstance(fmt, Mapping) else None
    if kind != "json_schema":
        # Pydantic's wording for a tagged union (as the API's tool_choice error uses it);
        # not confirmed for this field.
        errors.append(
            f"output_config.format: Input tag '{kind}' found using 'type' does not match any "
            "of the expected tags: 'json_schema'"
        )
    elif not isinstance(fmt.get("schema"), Mapping):
        errors.append("output_config.format.json_schema.schema: Field required")
    return errors


def _tool_choice(params: Mapping[str, Any], info: models.ModelInfo | None) -> list[str]:
    choice = params.get("tool_choice")
    if choice is None:
        return []
    if not isinstance(choice, Mapping):
        # The live API's sentence for a string tool_choice as recorded from a transcript;
        # not on a public docs page. (Pydantic's own wording differs: "Input should be a
        # valid dictionary or object to extract fields from", so the API is not pydantic here.)
        return ["tool_choice: Input should be an object"]
    kind = choice.get("type")
    if kind not in ("auto", "any", "tool", "none"):
        # Pydantic's wording for a tagged union, as the API's other field errors use
        # it; not confirmed for this field.
        return [
            f"tool_choice: Input tag '{kind}' found using 'type' does not match any of the "
            "expected tags: 'auto', 'any', 'tool', 'none'"
        ]
    if kind in ("any", "tool") and info is not None and not info.forced_tool_choice:
        # The sentence the API gives when thinking meets a forced tool choice
        # (extended-thinking docs, "tool use" section); Sonnet 5.5 thinks adaptively
        # by default. Not confirmed word for word for Sonnet 5.5.
        return ["Thinking may not be enabled when tool_choice forces tool use."]
    if kind in ("any", "tool") and info is not None:
        asked = params.get("thinking")
        if isinstance(asked, Mapping) and asked.get("type") not in (None, "disabled"):
            # Models that accept a forced choice still refuse it with thinking on
            # (extended-thinking docs, "tool use": only auto and none); same sentence.
            return ["Thinking may not be enabled when tool_choice forces tool use."]
    names = {t.get("name") for t in as_dict(list(params.get("tools") or [])) if isinstance(t, dict)}
    if kind == "any" and not names:
        # A forced call with nothing to call; the API's wording is not public (agentlab's).
        return ["tool_choice: 'any' forces a tool call, but the request defines no `tools`"]
    if kind == "tool":
        if choice.get("name") not in names:
            # The API refuses this; its exact wording is not public (agentlab's sentence).
            return [
                f"tool_choice.name: no tool named {choice.get('name')!r} in `tools`; "
                "the forced tool must be one of the tools defined in the request"
            ]
    return []
