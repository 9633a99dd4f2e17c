"""What a task looks like to a client: its summary, how its family is played, the tools of every profile, the mechanisms;
and which tasks a listing holds (GET /tasks's filters).

    listing_entry(catalog.summary(task))   # what GET /tasks and GET /tasks/{id} answer, and what drivers hand agents
    query = task_filter(request.query_params.multi_items())   # ?split=train&library=attrs -> TaskFilter (FilterError: a 400)
    listed(catalog, query)                 # the entries of the tasks it keeps, in listing order

Every task lists its tools as OpenAI function-calling definitions, for each profile its family serves
(``Family.listing``), and says how an agent plays it: ``interaction`` ("code": submit the corrected module;
"tools": act on a workspace) and ``partial_view`` (only opened files are visible); and where it is served: ``split``,
and a built catalog's task's ``library`` and ``source``.

A filter is the task's field it names; given twice, naming a field /tasks does not filter by, or holding a value the
field cannot have (an unknown split, source, difficulty, family or library) it is refused with what is accepted: a
typo would otherwise answer an empty list, or every task, and look like an answer.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any

from env.contract import DIFFICULTIES, SOURCES, SPLITS, Catalog, TaskFilter
from env.families.catalog import UnknownFilterValue
from env.families.registry import FAMILIES
from env.graders.mechanisms import MECHANISMS

FILTERS = tuple(TaskFilter.model_fields)  # family, library, source, difficulty, split
# The filters whose values are fixed whatever is served (a family or library must be served here: the catalog checks).
CLOSED: dict[str, tuple[str, ...]] = {"source": SOURCES, "difficulty": DIFFICULTIES, "split": SPLITS}


class FilterError(ValueError):
    """A /tasks query that filters by nothing a task has: the message says what is accepted."""


def listing_entry(summary: dict[str, Any]) -> dict[str, Any]:
    return {**summary, **_family_part(summary["family"]), "mechanisms": MECHANISMS}


@functools.cache
def _family_part(family: str) -> dict[str, Any]:
    return FAMILIES[family].listing()


def task_filter(params: Iterable[tuple[str, str]]) -> TaskFilter:
    """The filters of a query's (name, value) pairs; FilterError naming what is wrong."""
    given: dict[str, str] = {}
    for name, value in params:
        if name not in FILTERS:
            raise FilterError(f"/tasks filters by {', '.join(FILTERS)}; {name[:60]!r} is none of them")
        if name in given:
            raise FilterError(f"the filter {name!r} is given twice; give each filter once")
        given[name] = value
    for name, accepted in CLOSED.items():
        if name in given and given[name] not in accepted:
            raise FilterError(f"unknown {name} {given[name][:60]!r}; one of: {', '.join(accepted)}")
    return TaskFilter.model_validate(given)


def listed(catalog: Catalog, query: TaskFilter) -> list[dict[str, Any]]:
    """The listing entries of the tasks ``query`` keeps (FilterError for a family or library not served here)."""
    try:
        return [listing_entry(catalog.summary(task)) for task in catalog.select(query)]
    except UnknownFilterValue as exc:
        raise FilterError(str(exc)) from None
