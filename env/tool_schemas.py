"""MCP tools (a list_tools observation's, or tools/list's) as OpenAI function-calling definitions.

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
