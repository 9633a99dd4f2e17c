"""What a task looks like to a client: its summary, the tools of every interface profile, the mechanisms.

    catalogue_entry(task.summary())   # what GET /tasks and GET /tasks/{id} answer, and what drivers hand agents

Every task lists its tools as OpenAI function-calling definitions, for each profile that serves its family.
"""

from __future__ import annotations

import functools
from typing import Any

from env.families.repo.episode import tool_schemas
from env.graders.mechanisms import MECHANISMS
from env.interface import PROFILES, Interface
from env.models import ACTION_TYPES, CLASSIC_TOOLS


def catalogue_entry(summary: dict[str, Any]) -> dict[str, Any]:
    return {**summary, **_tool_lists(summary["family"]), "mechanisms": MECHANISMS}


@functools.cache
def _tool_lists(family: str) -> dict[str, Any]:
    profiles = {}
    for name, profile in PROFILES.items():
        try:
            interface = Interface.for_episode(name, family)
        except ValueError:
            continue  # not offered for this family (minimal on classic tasks)
        tools = (CLASSIC_TOOLS if family == "classic" else []) + interface.schemas()
        profiles[name] = {"description": profile.description, "edit_gate": interface.edit_gate, "actions": list(interface.tools), "tools": tools}
    if family == "repo":
        return {"tools": tool_schemas(), "profiles": profiles}
    if family == "procedural":
        return {"tools": profiles["default"]["tools"], "profiles": profiles}
    return {"action_types": list(ACTION_TYPES), "tools": CLASSIC_TOOLS, "profiles": profiles}
