"""The tasks a server serves, looked up by id and listed by split: the built-in ones of every family, folders named
in ENV_TASK_DIRS, a built catalog named by ENV_CATALOG, and ids a family generates on request.

    catalog = TaskCatalog.builtin()
    catalog.get("easy").max_attempts       # 5
    catalog.ids()                          # ["easy", ..., "repo-...", ..., "proc-easy-test-0", ..., "proc-easy-train-0", ...]
    catalog.ids("train")                   # one split's ids, in listing order
    catalog.summary(task)                  # task.summary() with its "split" (and a catalog task's "library", "source")
    catalog.select(TaskFilter(split="test", difficulty="hard"))   # what GET /tasks?split=test&difficulty=hard lists
    catalog.get("proc-hard-ood-7")         # a procedural id not listed is generated on request
    TaskCatalog.from_env()                 # the built-in tasks, ENV_TASK_DIRS's folders and ENV_CATALOG's tasks

Every listed task is in one split (``env.contract.SPLITS``): a built catalog's task in its library's (the index
says), any other in the one its family gives (``Family.split``: test, but a procedural id by the split its id names).
Listing order: the tasks built at start (every family's built-in ones, ENV_TASK_DIRS's, ENV_CATALOG's), then the ids
families list but generate when first asked for (``Family.listed``), so an index into the ``test`` split means what
it meant when it was the only split.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from env import settings
from env.contract import Source, Split, Task, TaskFilter
from env.families.base import task_folders
from env.families.catalog_dir import INDEX, CatalogError, load_catalog_dir
from env.families.registry import FAMILIES, load_task

__all__ = ["Placement", "TaskCatalog", "UnknownFilterValue", "UnknownTask"]

SHOWN_LIBRARIES = 20  # a refusal naming the served libraries names this many


class Sources(BaseModel):
    """Where served tasks come from besides the built-in ones (``Sources.from_env()``, read when a catalog is made)."""

    task_dirs: str = settings.setting("ENV_TASK_DIRS")
    catalog: str = settings.setting("ENV_CATALOG")

    @classmethod
    def from_env(cls) -> Sources:
        return settings.load(cls)

    def folders(self) -> list[str]:
        """ENV_TASK_DIRS's entries, colon-separated, in order."""
        return [entry for entry in self.task_dirs.split(":") if entry]


class UnknownTask(KeyError):
    pass


class UnknownFilterValue(ValueError):
    """A filter value nothing served could have (a family or library not served here): the message says what can."""


@dataclass(frozen=True)
class Placement:
    """Where a listed task is served: its split, and for a built catalog's task its library and source."""

    split: Split
    library: str | None = None
    source: Source | None = None

    def fields(self) -> dict[str, str]:
        """What a summary gains: ``split`` always, ``library`` and ``source`` for a built catalog's task."""
        shown = {"split": self.split, "library": self.library, "source": self.source}
        return {name: value for name, value in shown.items() if value is not None}


@dataclass(frozen=True)
class _Listed:
    family: str
    placement: Placement


class TaskCatalog:
    def __init__(
        self, tasks: Sequence[Task], placements: Mapping[str, Placement] | None = None, on_request: Sequence[tuple[str, str, Split]] = ()
    ):
        """``tasks``, placed as ``placements`` says (by id) or else by their family; then ``on_request``: ids listed
        as (id, family, split) whose task the family generates when first asked for."""
        placements = placements or {}
        self._tasks: dict[str, Task] = {}
        self._listed: dict[str, _Listed] = {}
        for task in tasks:
            self._check_new(task.id)
            self._tasks[task.id] = task
            self._listed[task.id] = _Listed(task.family, placements.get(task.id) or Placement(FAMILIES[task.family].split(task)))
        stray = sorted(set(placements) - set(self._tasks))
        if stray:
            raise ValueError(f"placements name tasks the catalog does not hold: {', '.join(stray[:5])}")
        for task_id, family, split in on_request:
            self._check_new(task_id)
            self._listed[task_id] = _Listed(family, Placement(split))

    def _check_new(self, task_id: str) -> None:
        if task_id in self._listed:
            raise ValueError(f"duplicate task id {task_id!r}")

    @classmethod
    def builtin(cls) -> TaskCatalog:
        tasks, on_request = _builtin_parts()
        return cls(tasks, on_request=on_request)

    @classmethod
    def from_env(cls) -> TaskCatalog:
        """The built-in tasks, every task folder named in ENV_TASK_DIRS (colon separated) and the built catalog in
        ENV_CATALOG (``env.families.catalog_dir``: refused whole, naming the file and the fault, if any part is wrong)."""
        tasks, on_request = _builtin_parts()
        sources = Sources.from_env()
        for named in sources.folders():
            tasks += [load_task(folder) for folder in task_folders(Path(named))]
        placements: dict[str, Placement] = {}
        directory = sources.catalog
        if directory:
            served = {task.id for task in tasks} | {task_id for task_id, _, _ in on_request}
            for task, entry in load_catalog_dir(Path(directory)):
                if task.id in served:
                    raise CatalogError(
                        f"{Path(directory) / INDEX}: task {task.id!r} is served already (a built-in task or one of ENV_TASK_DIRS); "
                        "every task id is served once"
                    )
                tasks.append(task)
                placements[task.id] = Placement(entry.split, entry.library, entry.source)
        return cls(tasks, placements, on_request)

    def get(self, task_id: str) -> Task:
        if task_id in self._tasks:
            return self._tasks[task_id]
        for family in FAMILIES.values():
            made: Task | None = family.generate(task_id)
            if made is not None:
                return made
        raise UnknownTask(task_id)

    def ids(self, split: Split | None = None) -> list[str]:
        return [task_id for task_id, listed in self._listed.items() if split is None or listed.placement.split == split]

    def listing(self) -> list[tuple[str, str, Split]]:
        """Every listed id with its family and split, in listing order; nothing is generated."""
        return [(task_id, listed.family, listed.placement.split) for task_id, listed in self._listed.items()]

    def all(self, split: Split | None = None) -> list[Task]:
        """The listed tasks (of one split): an id listed on request is generated here if no cache holds it."""
        return [self.get(task_id) for task_id in self.ids(split)]

    def placement(self, task: Task) -> Placement:
        listed = self._listed.get(task.id)
        return listed.placement if listed is not None else Placement(FAMILIES[task.family].split(task))

    def summary(self, task: Task) -> dict[str, Any]:
        return {**task.summary(), **self.placement(task).fields()}

    def libraries(self) -> list[str]:
        """The libraries of the built catalog served here, sorted (none without ENV_CATALOG)."""
        return sorted({listed.placement.library for listed in self._listed.values() if listed.placement.library})

    def select(self, query: TaskFilter) -> list[Task]:
        """The listed tasks the filters keep, in listing order. UnknownFilterValue for a family or library not served
        here (a value no task could have: a typo would otherwise list nothing, silently)."""
        if query.family is not None and query.family not in FAMILIES:
            raise UnknownFilterValue(f"unknown family {query.family!r}; families: {', '.join(FAMILIES)}")
        if query.library is not None and query.library not in (served := self.libraries()):
            raise UnknownFilterValue(_unserved_library(query.library, served))
        chosen = []
        for task_id, listed in self._listed.items():
            place = listed.placement
            wanted = {"family": listed.family, "library": place.library, "source": place.source, "split": place.split}
            if any(value is not None and wanted[name] != value for name, value in query.model_dump(exclude={"difficulty"}).items()):
                continue
            task = self.get(task_id)  # generated here if listed on request: its difficulty is known once it is made
            if query.difficulty is None or task.summary().get("difficulty") == query.difficulty:
                chosen.append(task)
        return chosen


def _builtin_parts() -> tuple[list[Task], list[tuple[str, str, Split]]]:
    """Every family's built-in tasks, and the ids it lists to be generated on request (id, family, split)."""
    families = list(FAMILIES.values())
    return [task for family in families for task in family.builtin()], [
        (i, family.name, split) for family in families for i, split in family.listed()
    ]


def _unserved_library(library: str, served: list[str]) -> str:
    if not served:
        return f"no library {library!r} is served here: this server serves no built catalog (ENV_CATALOG is unset)"
    more = f" and {len(served) - SHOWN_LIBRARIES} more" if len(served) > SHOWN_LIBRARIES else ""
    return f"no library {library!r} is served here; served: {', '.join(served[:SHOWN_LIBRARIES])}{more}"
