"""What a task looks like to a client: its summary, how its family is played, the tools of every profile, the mechanisms.

    listing_entry(task.summary())   # what GET /tasks and GET /tasks/{id} answer, and what drivers hand agents

Every task lists its tools as OpenAI function-calling definitions, for each profile its family serves
(``Family.listing``), and says how an agent plays it: ``interaction`` ("code": submit the corrected module;
"tools": act on a workspace) and ``partial_view`` (only opened files are visible).
"""

from __future__ import annotations

import functools
from typing import Any

from env.families.registry import FAMILIES
from env.graders.mechanisms import MECHANISMS


def listing_entry(summary: dict[str, Any]) -> dict[str, Any]:
    return {**summary, **_family_part(summary["family"]), "mechanisms": MECHANISMS}


@functools.cache
def _family_part(family: str) -> dict[str, Any]:
    return FAMILIES[family].listing()
