"""The classic actions as OpenAI function-calling tools, and the structured hypothesis fields they share.

Published in ``/tasks`` (like a repository task's tools) and offered to the LLM agent; importable without OpenEnv,
so an agent process (``inference.py``) never loads OpenEnv's server package.
"""

from __future__ import annotations

from typing import Any

from env.graders.mechanisms import MECHANISMS
from env.wire import MECHANISM_DOC, QUERY_TYPES, SUSPECT_DOC

# The structured hypothesis fields, shared by submit_fix and the repository families' submit.
CLAIM_PROPERTIES: dict[str, Any] = {
    "suspect": {"type": "string", "description": SUSPECT_DOC},
    "mechanism": {"type": "string", "enum": list(MECHANISMS), "description": MECHANISM_DOC},
}
# The classic action types as OpenAI function-calling tools (published in /tasks, like a repository task's).
CLASSIC_TOOLS = [
    {"type": "function", "function": {
        "name": "submit_fix", "description": "Submit the complete corrected module with your theory of the bug; runs the tests.",
        "parameters": {"type": "object", "properties": {"fixed_code": {"type": "string"}, "hypothesis": {"type": "string"}, **CLAIM_PROPERTIES},
                       "required": ["fixed_code", "hypothesis"], "additionalProperties": False}}},
    {"type": "function", "function": {
        "name": "query_context", "description": "Ask about the code or the tests (the first query is free).",
        "parameters": {"type": "object", "properties": {"query_type": {"type": "string", "enum": list(QUERY_TYPES)}, "query_target": {"type": "string"}},
                       "required": ["query_type"], "additionalProperties": False}}},
    {"type": "function", "function": {
        "name": "give_up", "description": "End the episode.",
        "parameters": {"type": "object", "properties": {"final_diagnosis": {"type": "string"}}, "additionalProperties": False}}},
]


def function_definitions(listed: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """MCP tools (a list_tools observation's, or tools/list's) as OpenAI function-calling definitions."""
    return [
        {"type": "function", "function": {"name": t["name"], "description": t["description"], "parameters": t.get("input_schema", t.get("inputSchema"))}}
        for t in listed
    ]
