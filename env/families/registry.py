"""The task families, looked up by name, and loading a task folder whatever its family.

    FAMILIES["repo"].interface("pdb")       # every family: loads, resolves, makes episodes (env.families.base.Family)
    load_task(Path("tasks/repo/repo-slice-window"))   # the family its task.json names loads it

A task folder's ``task.json`` names its ``family``. Adding a family: its folder under env/families/ with a
``family.py`` defining a :class:`Family`, and its line below.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from env.contract import Task
from env.families.base import Family, TaskLoadError, read_task, task_folders
from env.families.classic.family import CLASSIC
from env.families.procedural.family import PROCEDURAL
from env.families.race.family import RACE
from env.families.repo.family import REPO
from env.registry import Registry

# Looked up by the family a task names: a family of any task model (its episode() takes its own tasks).
FAMILIES: Registry[Family[Any]] = Registry("family")
FAMILIES.add(CLASSIC.name, CLASSIC)
FAMILIES.add(REPO.name, REPO)
FAMILIES.add(PROCEDURAL.name, PROCEDURAL)
FAMILIES.add(RACE.name, RACE)

__all__ = ["FAMILIES", "Task", "TaskLoadError", "load_task", "task_folders"]


def load_task(folder: Path, data: dict[str, Any] | None = None) -> Task:
    """Load one task folder, whatever its family (``data``: its task.json when already read with ``read_task``)."""
    if data is None:
        data = read_task(folder)
    # a SWE-bench instance converted by hand may leave the family out: its FAIL_TO_PASS says what it is
    family = data.get("family", REPO.name if "FAIL_TO_PASS" in data else None)
    if not isinstance(family, str) or family not in FAMILIES:
        raise TaskLoadError(f"{folder}: unknown task family {family!r}; known: {', '.join(FAMILIES)}")
    task: Task = FAMILIES[family].load_folder(folder, data)
    return task
