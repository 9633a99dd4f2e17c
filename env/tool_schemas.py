"""MCP tools (a list_tools observation's, or tools/list's) as OpenAI function-calling definitions, and what a task's
tools say of how it is played (agents and the demo ask them, not the family's name).

Importable without OpenEnv, so an agent process (``inference.py``) never loads OpenEnv's server package.
"""

from __future__ import annotations

from typing import Any


def function_definitions(listed: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """MCP tools (a list_tools observation's, or tools/list's) as OpenAI function-calling definitions."""
    return [
        {"type": "function", "function": {"name": t["name"], "description": t["description"], "parameters": t.get("input_schema", t.get("inputSchema"))}}
        for t in listed
    ]


def arguments_of(tools: list[dict[str, Any]], name: str) -> dict[str, Any]:
    """The argument schemas (``properties``) of the tool called ``name`` among OpenAI function definitions; {} if none is."""
    for tool in tools:
        if tool["function"]["name"] == name:
            properties: dict[str, Any] = (tool["function"].get("parameters") or {}).get("properties") or {}
            return properties
    return {}


def submits_a_module(tools: list[dict[str, Any]]) -> bool:
    """Whether a task with these tools is played by submitting the whole corrected module (a classic family's: one of
    its tools takes ``fixed_code``), rather than by acting on a workspace; what an agent or the demo asks of a task."""
    return any("fixed_code" in ((t["function"].get("parameters") or {}).get("properties") or {}) for t in tools)
