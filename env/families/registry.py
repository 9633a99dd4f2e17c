"""The task families and the tasks a server serves, looked up by id.

    FAMILIES["repo"].interface("pdb")       # every family: loads, resolves, makes episodes (env.families.base.Family)
    registry = TaskRegistry.builtin()
    registry.get("easy").max_attempts       # 5
    registry.ids()                          # ["easy", "medium", "hard", "repo-...", ..., "proc-easy-test-0", ...]
    registry.get("proc-hard-ood-7")         # a procedural id not listed is generated on request
    TaskRegistry.from_env()                 # the built-in tasks plus folders named in ENV_TASK_DIRS

A task folder's ``task.json`` names its ``family``. Adding a family: its folder under env/families/ with a
``family.py`` defining a :class:`Family`, and its line below.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from env import settings
from env.contract import Task
from env.families.base import Family, TaskLoadError, read_task, task_folders
from env.families.classic.family import CLASSIC
from env.families.procedural.family import PROCEDURAL
from env.families.repo.family import REPO
from env.registry import Registry

# Looked up by the family a task names: a family of any task model (its episode() takes its own tasks).
FAMILIES: Registry[Family[Any]] = Registry("family")
FAMILIES.add(CLASSIC.name, CLASSIC)
FAMILIES.add(REPO.name, REPO)
FAMILIES.add(PROCEDURAL.name, PROCEDURAL)

__all__ = ["FAMILIES", "Task", "TaskLoadError", "TaskRegistry", "UnknownTask", "load_task", "task_folders"]


class UnknownTask(KeyError):
    pass


def load_task(folder: Path) -> Task:
    """Load one task folder, whatever its family."""
    data = read_task(folder)
    # a SWE-bench instance converted by hand may leave the family out: its FAIL_TO_PASS says what it is
    family = data.get("family", REPO.name if "FAIL_TO_PASS" in data else None)
    if not isinstance(family, str) or family not in FAMILIES:
        raise TaskLoadError(f"{folder}: unknown task family {family!r}; known: {', '.join(FAMILIES)}")
    try:
        task: Task = FAMILIES[family].load(folder, data)
    except ValueError as exc:
        raise TaskLoadError(f"{folder}: {exc}") from None
    return task


class TaskRegistry:
    def __init__(self, tasks: list[Task]):
        self._tasks: dict[str, Task] = {}
        for task in tasks:
            if task.id in self._tasks:
                raise ValueError(f"duplicate task id {task.id!r}")
            self._tasks[task.id] = task

    @classmethod
    def builtin(cls) -> TaskRegistry:
        return cls([task for family in FAMILIES.values() for task in family.builtin()])

    @classmethod
    def from_env(cls) -> TaskRegistry:
        """The built-in tasks plus every task folder named in ENV_TASK_DIRS (colon separated)."""
        tasks = cls.builtin().all()
        for entry in filter(None, settings.text("ENV_TASK_DIRS").split(":")):
            tasks += [load_task(folder) for folder in task_folders(Path(entry))]
        return cls(tasks)

    def get(self, task_id: str) -> Task:
        if task_id in self._tasks:
            return self._tasks[task_id]
        for family in FAMILIES.values():
            made: Task | None = family.generate(task_id)
            if made is not None:
                return made
        raise UnknownTask(task_id)

    def ids(self) -> list[str]:
        return list(self._tasks)

    def all(self) -> list[Task]:
        return list(self._tasks.values())
