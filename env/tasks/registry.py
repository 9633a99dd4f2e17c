"""The task registry: every task family registers its tasks here, looked up by id.

    registry = TaskRegistry.builtin()
    registry.get("easy").max_attempts       # 5
    registry.ids()                          # ["easy", "medium", "hard"]
"""

from __future__ import annotations

from pathlib import Path

from env.tasks.spec import TaskSpec, load_task

CLASSIC_DIR = Path(__file__).with_name("classic")
CLASSIC_ORDER = ("easy", "medium", "hard")


class UnknownTask(KeyError):
    pass


class TaskRegistry:
    def __init__(self, tasks: list[TaskSpec]):
        self._tasks: dict[str, TaskSpec] = {}
        for task in tasks:
            if task.id in self._tasks:
                raise ValueError(f"duplicate task id {task.id!r}")
            self._tasks[task.id] = task

    @classmethod
    def builtin(cls) -> TaskRegistry:
        return cls([load_task(CLASSIC_DIR / name) for name in CLASSIC_ORDER])

    def get(self, task_id: str) -> TaskSpec:
        try:
            return self._tasks[task_id]
        except KeyError:
            raise UnknownTask(task_id) from None

    def ids(self) -> list[str]:
        return list(self._tasks)

    def all(self) -> list[TaskSpec]:
        return list(self._tasks.values())
