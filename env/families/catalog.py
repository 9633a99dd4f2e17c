"""The tasks a server serves, looked up by id: the built-in ones of every family, folders named in
ENV_TASK_DIRS, and ids a family generates on request.

    catalog = TaskCatalog.builtin()
    catalog.get("easy").max_attempts       # 5
    catalog.ids()                          # ["easy", "medium", "hard", "repo-...", ..., "proc-easy-test-0", ...]
    catalog.get("proc-hard-ood-7")         # a procedural id not listed is generated on request
    TaskCatalog.from_env()                 # the built-in tasks plus folders named in ENV_TASK_DIRS
"""

from __future__ import annotations

from pathlib import Path

from env import settings
from env.contract import Task
from env.families.base import task_folders
from env.families.registry import FAMILIES, load_task

__all__ = ["TaskCatalog", "UnknownTask"]


class UnknownTask(KeyError):
    pass


class TaskCatalog:
    def __init__(self, tasks: list[Task]):
        self._tasks: dict[str, Task] = {}
        for task in tasks:
            if task.id in self._tasks:
                raise ValueError(f"duplicate task id {task.id!r}")
            self._tasks[task.id] = task

    @classmethod
    def builtin(cls) -> TaskCatalog:
        return cls([task for family in FAMILIES.values() for task in family.builtin()])

    @classmethod
    def from_env(cls) -> TaskCatalog:
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
