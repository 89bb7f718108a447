"""What a tool is: a definition the model reads, and a function the harness runs.

The model only ever sees the definition (name, description, JSON input
schema). Running the function is the harness's job, in ``execute``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast, overload

__all__ = ["Tool", "ToolInputError", "as_tool", "tool", "tool_params", "tool_table"]

F = TypeVar("F", bound=Callable[..., Any])


class ToolInputError(ValueError):
    """The model's input does not match the tool's schema."""


@dataclass
class Tool:
    """A tool the model may ask for, and the Python function that performs it.

    ``definition`` is exactly what is sent to the API in ``tools=[...]``.
    ``run(input)`` validates the model's input and calls the function.
    """

    name: str
    description: str
    input_schema: dict[str, Any]
    fn: Callable[..., Any] | None = None
    extra: dict[str, Any] = field(
        default_factory=dict, repr=False
    )  # e.g. {"type": "bash_20250124"}

    @property
    def definition(self) -> dict[str, Any]:
        if self.extra.get("type", "custom") != "custom":
            return {**self.extra, "name": self.name}  # Anthropic-defined tool types
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema,
        }

    def run(self, input: Any) -> Any:
        """Check ``input`` and call the function. Raises ToolInputError on bad input."""
        if self.fn is None:
            raise LookupError(f"tool {self.name!r} has no implementation")
        if type(input) is not dict and not isinstance(input, Mapping):
            raise ToolInputError(f"input must be a JSON object, got {type(input).__name__}")
        args = input.copy() if type(input) is dict else dict(input)
        if args or self.input_schema.get("required"):  # (no input, none required: nothing to check)
            _check_required(self.input_schema, args)  # @tool functions are also checked by pydantic
        return self.fn(**args)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.fn is None:
            raise LookupError(f"tool {self.name!r} has no implementation")
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"Tool({self.name!r})"


_TYPES: dict[str, type | tuple[type, ...]] = {  # JSON Schema's names for Python's types
    "string": str,
    "integer": int,
    "number": (int, float),
    "boolean": bool,
    "object": dict,
    "array": list,
}


def _check_required(schema: Mapping[str, Any], args: Mapping[str, Any]) -> None:
    """A small check for hand-written schemas: required keys and string/int types."""
    props, required = schema.get("properties") or {}, schema.get("required") or ()
    for key in required:
        if key not in args:
            missing = [k for k in required if k not in args]
            raise ToolInputError(f"missing required field(s): {', '.join(missing)}")
    for key, value in args.items():
        if key not in props:
            if schema.get("additionalProperties") is False:
                raise ToolInputError(f"unexpected field {key!r}")
            continue
        want = _TYPES.get(str(props[key].get("type")))
        if want is not None and not isinstance(value, want):
            raise ToolInputError(
                f"field {key!r} should be {props[key]['type']}, got {type(value).__name__}"
            )


@overload
def tool(fn: F, /) -> Tool: ...
@overload
def tool(*, name: str | None = None, description: str | None = None) -> Callable[[F], Tool]: ...


def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Turn a typed Python function with a docstring into a Tool.

    The JSON input schema comes from the signature (through pydantic), the
    description from the docstring. Input is validated before the call::

        @agentlab.tool
        def count_lines(path: str) -> str:
            "Count the lines of a text file."
            return str(len(open(path).read().splitlines()))
    """

    def make(f: Callable[..., Any]) -> Tool:
        import pydantic

        doc = description or inspect.getdoc(f) or ""
        if not doc:
            raise ValueError(
                f"{f.__name__}: give the tool a docstring; the model reads it to decide when to call it"
            )
        checked = pydantic.validate_call(f)
        schema = pydantic.TypeAdapter(cast(Any, checked)).json_schema()
        schema.pop("title", None)
        schema.pop("additionalProperties", None)
        for prop in (schema.get("properties") or {}).values():
            prop.pop("title", None)
        schema.setdefault("properties", {})

        def run(*args: Any, **kwargs: Any) -> Any:
            try:
                return checked(*args, **kwargs)
            except pydantic.ValidationError as e:
                problems = "; ".join(
                    f"{'.'.join(str(x) for x in err['loc']) or 'input'}: {err['msg']}"
                    for err in e.errors()
                )
                raise ToolInputError(problems) from None

        return Tool(name=name or f.__name__, description=doc, input_schema=schema, fn=run)

    return make(fn) if fn is not None else make


def as_tool(obj: Any) -> Tool:
    """Accept an agentlab Tool, a raw tool-definition dict, or a plain function."""
    if isinstance(obj, Tool):
        return obj
    if isinstance(obj, Mapping):
        d = dict(obj)
        if "name" not in d:
            raise ValueError(f"a tool definition needs a 'name': {d!r}")
        kind = d.get("type", "custom")
        if kind != "custom":
            # An Anthropic-defined tool type such as {"type": "bash_20250124", "name": "bash"}.
            fn = None
            if str(kind).startswith("bash_"):
                from agentlab.tools import bash

                fn = bash.fn
            return Tool(d["name"], "", {}, fn, extra=d)
        return Tool(
            name=d["name"],
            description=d.get("description", ""),
            input_schema=d.get("input_schema", {"type": "object", "properties": {}}),
            extra={k: v for k, v in d.items() if k not in ("name", "description", "input_schema")},
        )
    if callable(obj):
        return tool(obj)
    raise TypeError(
        f"not a tool: {obj!r} (use agentlab.tool, or a dict with name and input_schema)"
    )


def tool_params(tools: Iterable[Any] | None) -> list[dict[str, Any]]:
    """The ``tools=`` list to send: each tool's definition, as the API expects it."""
    out = []
    for obj in tools or []:
        if isinstance(obj, Mapping):
            out.append(dict(obj))  # send raw definitions exactly as given
        else:
            out.append(as_tool(obj).definition)
    return out


def tool_table(tools: Iterable[Any] | None) -> dict[str, Tool]:
    """Name -> Tool, for ``execute`` to look up what the model asked for."""
    return {t.name: t for t in (as_tool(x) for x in tools or [])}
