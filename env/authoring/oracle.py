"""The gold fix as a list of actions, for any task family: proves a task solvable through the API.

    for action in oracle_actions(task):
        obs = env.step(DebugAction(**action))      # the last action submits; obs.grader_score >= 0.9

Each family writes its own (``Family.oracle_actions``): classic tasks submit the gold module with the gold
hypothesis; repository tasks rewrite each file the gold patch changes with the file tools, then submit;
procedural tasks run the tests and open the fault's file and its neighbours first.
"""

from __future__ import annotations

from env.contract import Task
from env.families.base import Action
from env.families.registry import FAMILIES


def oracle_actions(task: Task) -> list[Action]:
    return FAMILIES[task.family].oracle_actions(task)


def overfit_actions(task: Task) -> list[Action] | None:
    """The task's recorded overfit played through the API (a fix that fits only the visible tests: the held-out
    tests must keep it unresolved), or None if the task has none (``Family.overfit_actions``)."""
    return FAMILIES[task.family].overfit_actions(task)
