"""The gold fix as a list of actions, for any task family: proves a task solvable through the API.

    for action in oracle_actions(task):
        obs = env.step(DebugAction(**action))      # the last action submits; obs.grader_score >= 0.9

Classic tasks: one ``submit_fix`` with the gold module and the gold hypothesis. Repository tasks:
each file the gold patch changes is rewritten with the file tools, then ``submit``. Procedural tasks
run the tests and open the fault's file and its neighbours' first (only opened files can be edited
there, and the grade rewards exploring and testing before an edit).
"""

from __future__ import annotations

from typing import Any

from env.families.registry import FAMILIES, Task
from env.patches import Files, apply_patch
from env.project import RepoTask, source_only
from env.tasks.degenerate import lookup_table


def oracle_actions(task: Task) -> list[dict[str, Any]]:
    if not isinstance(task, RepoTask):
        return [{"action_type": "submit_fix", "fixed_code": task.gold_source, "hypothesis": task.gold_hypothesis}]
    return rewrite_actions(task, task.gold_files)


def overfit_actions(task: Task) -> list[dict[str, Any]] | None:
    """The task's recorded overfit played through the API (a fix that fits only the visible tests: the held-out
    tests must keep it unresolved), or None if the task has none. Classic tasks: a table of the visible tests'
    answers in front of the bug (``env.tasks.degenerate.lookup_table``)."""
    if not isinstance(task, RepoTask):
        table = lookup_table(task)
        return None if table is None else [{"action_type": "submit_fix", "fixed_code": table, "hypothesis": task.gold_hypothesis}]
    if not task.overfit_patch:
        return None
    return rewrite_actions(task, apply_patch(task.files, task.overfit_patch))


def rewrite_actions(task: RepoTask, target: Files) -> list[dict[str, Any]]:
    """Actions that turn the task's source files into ``target``'s with the file tools, then ``submit``."""
    before, after = source_only(task.files), source_only(target)
    actions: list[dict[str, Any]] = []
    opened: set[str] = set()
    partial_view = FAMILIES[task.family].partial_view  # only an opened file can be edited
    if partial_view:  # as a careful debugger would: test first, read the code around the fault
        opened = set(task.relevant_files())
        actions += [{"action_type": "run_tests"}] + [{"action_type": "open_file", "path": p} for p in sorted(opened)]
    for path in sorted(after):
        if path not in before:
            actions.append({"action_type": "create_file", "path": path, "content": after[path]})
        elif after[path] != before[path]:
            lines = before[path].count("\n") + (0 if before[path].endswith("\n") or not before[path] else 1)
            if partial_view and path not in opened:
                opened.add(path)
                actions.append({"action_type": "open_file", "path": path})
            actions.append({"action_type": "edit", "path": path, "start_line": 1, "end_line": lines, "new_text": after[path]})
    return actions + [{"action_type": "submit"}]
