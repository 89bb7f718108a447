"""The shapes the Messages API accepts, read from the SDK's own request types.

The SDK describes every message and content block it may send as a
``TypedDict`` (``anthropic.types.UserMessageParam``, ``ToolUseBlockParam``,
...). ``check_message`` walks one message against those annotations and
reports what does not fit, with the path and the words of the API's 400
errors (the API validates requests with pydantic, so its messages read
"Input should be a valid dictionary", "Field required", "Extra inputs are
not permitted"; a block's path names its type, as in
``messages.1.content.0.tool_use.input``).

Nothing here is a hand-written list of blocks: a block type the installed SDK
knows is accepted, one it does not know is reported, and new fields arrive
with a new SDK. Only the wording of a few cases is ours; see the comments.
"""

from __future__ import annotations

import collections.abc as abc
import functools
import typing
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Union

import typing_extensions

from agentlab.history import _MESSAGE_KEYS, _block_kind  # the shapes a loop writes every turn

__all__ = ["SchemaError", "check_message", "fields", "prepare", "roles"]

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


# --------------------------------------------------------------------------
# The message types, read from the SDK when first needed (importing the SDK
# takes about two seconds)
# --------------------------------------------------------------------------


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


# --------------------------------------------------------------------------
# The walk
# --------------------------------------------------------------------------


def _common(message: Any) -> bool:
    """Is ``message`` made only of the shapes a loop writes every turn, each well formed?

    Those are valid in the SDK's types, so the walk below would find nothing:
    this answers the same, without the walk, for the messages ``append`` sees
    every turn (tests/test_history.py compares the two).
    """
    if type(message) is not dict or not message.keys() <= _MESSAGE_KEYS:
        return False
    content = message.get("content")
    if message.get("role") not in ("user", "assistant"):
        return False
    if type(content) is str:
        return True
    return type(content) is list and all([_block_kind(b) for b in content])


def check_message(message: Any, i: int) -> list[SchemaError]:
    """What in ``message`` (at ``messages.i``) the API's schema rejects; [] if nothing."""
    if _common(message):
        return []
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
