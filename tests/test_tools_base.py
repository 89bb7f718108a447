import subprocess
import sys
from typing import Annotated

import pytest
from pydantic import Field

import agentlab as al
from agentlab.tools.base import ToolInputError, as_tool, tool_params


def test_tool_from_a_function_has_a_schema_from_the_signature():
    @al.tool
    def grep(
        pattern: Annotated[str, Field(description="what to look for")], limit: int = 10
    ) -> str:
        """Search the files here for a pattern."""
        return f"{pattern}:{limit}"

    assert grep.name == "grep" and grep.description == "Search the files here for a pattern."
    schema = grep.input_schema
    assert schema["type"] == "object" and schema["required"] == ["pattern"]
    assert schema["properties"]["pattern"] == {"type": "string", "description": "what to look for"}
    assert (
        schema["properties"]["limit"]["type"] == "integer"
        and schema["properties"]["limit"]["default"] == 10
    )
    assert grep.definition == {
        "name": "grep",
        "description": grep.description,
        "input_schema": schema,
    }
    assert grep.run({"pattern": "x"}) == "x:10"
    assert grep("y", limit=2) == "y:2"  # still callable as a function


def test_bad_input_is_reported_before_the_function_runs():
    calls = []

    @al.tool
    def add(a: int, b: int) -> str:
        """Add two numbers."""
        calls.append((a, b))
        return str(a + b)

    for bad in ({"a": 1}, {"a": "x", "b": 2}, "not a dict"):
        with pytest.raises(ToolInputError):
            add.run(bad)
    assert calls == []


def test_a_tool_needs_a_docstring():
    def nodoc(x: int) -> str:
        return ""

    with pytest.raises(ValueError, match="docstring"):
        al.tool(nodoc)


def test_raw_dicts_and_anthropic_bash_type_are_accepted():
    raw = {
        "name": "lookup",
        "description": "d",
        "input_schema": {"type": "object", "properties": {}},
    }
    native = {"type": "bash_20250124", "name": "bash"}
    assert tool_params([raw, native, al.bash]) == [raw, native, al.bash.definition]
    assert as_tool(native).fn is not None  # runs through the hardened bash tool
    [r] = al.execute(
        [{"type": "tool_use", "id": "t1", "name": "bash", "input": {"command": "echo native"}}],
        [native],
    )
    assert r["content"].strip() == "native"
    with pytest.raises(TypeError):
        as_tool(42)


def test_bash_tool_definition_and_failed_command_is_an_error_result(tmp_path):
    assert al.bash.definition["name"] == "bash"
    assert al.bash.definition["input_schema"]["required"] == ["command"]
    tool = al.bash_tool(cwd=tmp_path)
    [ok, bad] = al.execute(
        [
            {"type": "tool_use", "id": "a", "name": "bash", "input": {"command": "pwd"}},
            {"type": "tool_use", "id": "b", "name": "bash", "input": {"command": "exit 3"}},
        ],
        [tool],
    )
    assert ok["content"].strip() == str(tmp_path) and "is_error" not in ok
    assert bad["is_error"] and bad["content"] == "(no output, exit 3)"


def test_import_agentlab_is_light():
    code = "import sys, agentlab; print(sorted(m for m in ('anthropic', 'ipywidgets', 'IPython') if m in sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"
