"""The task registry: every task family registers its tasks here, looked up by id.

    registry = TaskRegistry.builtin()
    registry.get("easy").max_attempts       # 5
    registry.ids()                          # ["easy", "medium", "hard", "repo-...", ..., "proc-easy-test-0", ...]
    registry.get("proc-hard-ood-7")         # a procedural id not listed is generated on request
    TaskRegistry.from_env()                 # the built-in tasks plus folders named in ENV_TASK_DIRS

A task folder's ``task.json`` names its ``family``; ``FAMILIES`` maps a family to its loader.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from env.families.classic.task import TaskSpec
from env.families.procedural.task import CATALOGUE, ProceduralTask, is_procedural_id, load_procedural_task, procedural_task
from env.project import RepoTask, load_repo_task

Task = TaskSpec | RepoTask | ProceduralTask

# Task data lives outside the package, beside it: tasks/<family>/<id>/ (the grading assets there stay unreadable to runs).
TASKS_DIR = Path(__file__).resolve().parents[2] / "tasks"
CLASSIC_DIR = TASKS_DIR / "classic"
REPO_DIR = TASKS_DIR / "repo"
CLASSIC_ORDER = ("easy", "medium", "hard")


def _load_classic(folder: Path, data: dict[str, Any]) -> TaskSpec:
    return TaskSpec(folder=folder, **data)


FAMILIES: dict[str, Callable[[Path, dict[str, Any]], Task]] = {
    "classic": _load_classic,
    "repo": load_repo_task,
    "procedural": load_procedural_task,
}


class UnknownTask(KeyError):
    pass


class TaskLoadError(ValueError):
    pass


def load_task(folder: Path) -> Task:
    """Load one task folder, whatever its family."""
    try:
        data = json.loads((folder / "task.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise TaskLoadError(f"{folder}: cannot read task.json: {exc}") from None
    family = data.get("family", "repo" if "FAIL_TO_PASS" in data else "classic")
    if family not in FAMILIES:
        raise TaskLoadError(f"{folder}: unknown task family {family!r}; known: {', '.join(FAMILIES)}")
    try:
        return FAMILIES[family](folder, data)
    except ValueError as exc:
        raise TaskLoadError(f"{folder}: {exc}") from None


def task_folders(path: Path) -> list[Path]:
    """``path`` itself if it is a task folder, else the task folders directly inside it (sorted)."""
    if (path / "task.json").is_file():
        return [path]
    if not path.is_dir():
        raise TaskLoadError(f"{path}: no such task folder or directory")
    return sorted(p for p in path.iterdir() if (p / "task.json").is_file())


class TaskRegistry:
    def __init__(self, tasks: list[Task]):
        self._tasks: dict[str, Task] = {}
        for task in tasks:
            if task.id in self._tasks:
                raise ValueError(f"duplicate task id {task.id!r}")
            self._tasks[task.id] = task

    @classmethod
    def builtin(cls) -> TaskRegistry:
        classic = [load_task(CLASSIC_DIR / name) for name in CLASSIC_ORDER]
        repo = [load_task(folder) for folder in task_folders(REPO_DIR)] if REPO_DIR.is_dir() else []
        # One generated task per difficulty is listed; any other procedural id is made on request.
        procedural = [procedural_task(task_id) for task_id in CATALOGUE]
        return cls(classic + repo + procedural)

    @classmethod
    def from_env(cls) -> TaskRegistry:
        """The built-in tasks plus every task folder named in ENV_TASK_DIRS (colon separated)."""
        tasks = cls.builtin().all()
        for entry in filter(None, os.environ.get("ENV_TASK_DIRS", "").split(":")):
            tasks += [load_task(folder) for folder in task_folders(Path(entry))]
        return cls(tasks)

    def get(self, task_id: str) -> Task:
        if task_id in self._tasks:
            return self._tasks[task_id]
        if is_procedural_id(task_id):
            return procedural_task(task_id)
        raise UnknownTask(task_id)

    def ids(self) -> list[str]:
        return list(self._tasks)

    def all(self) -> list[Task]:
        return list(self._tasks.values())
