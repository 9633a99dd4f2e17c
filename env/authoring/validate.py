"""Proof that a task is valid, measured: run the buggy and the gold state, several times, and check.

    report = validate_task(runtime, task, runs=10)
    report.ok, [c for c in report.checks if not c.ok]
    print(table([report]))

Each family validates its own tasks (``Family.validate``) with the checks every family shares
(``env.families.validation``): the buggy state fails every FAIL_TO_PASS test and passes every PASS_TO_PASS
test; the gold state passes all of them; every run gives identical outcomes; and no test passes vacuously.
A repository task also proves its gold patch and its held-out tests (``env.families.repo.validation``).
Give the runtime a sandbox whose limits count CPU time (``Sandbox.for_validity``): then what the runs use decides, not
how busy the machine is, and a run the machine starved is reported as such (``TaskValidation.busy``), not as invalid.
"""

from __future__ import annotations

from env.contract import Task
from env.families.base import TASKS_DIR
from env.families.registry import FAMILIES
from env.families.validation import Check, TaskValidation
from env.runtime import Runtime

__all__ = ["Check", "TaskValidation", "table", "validate_task"]


def validate_task(runtime: Runtime, task: Task, runs: int = 10) -> TaskValidation:
    # read at call time: the tests point it elsewhere to make a task count as bundled
    return FAMILIES[task.family].validate(runtime, task, runs, TASKS_DIR)


def table(reports: list[TaskValidation]) -> str:
    rows = [("task", "family", "valid", "trusted", "runs", "seconds", "problems")]
    for r in reports:
        problems = "; ".join([r.busy] if r.busy else [f"{c.name}: {c.detail}" if c.detail else c.name for c in r.checks if not c.ok])
        valid = "BUSY" if r.busy else "yes" if r.ok else "NO"  # BUSY: not decided, the machine starved a run (not the task's fault)
        rows.append((r.task_id, r.family, valid, "yes" if r.trusted else "no", str(r.runs), f"{r.seconds:.1f}", problems or "-"))
    widths = [max(len(row[i]) for row in rows) for i in range(6)]
    lines = ["  ".join(cell.ljust(widths[i]) if i < 6 else cell for i, cell in enumerate(row)) for row in rows]
    for r in reports:
        lines += [f"note ({r.task_id}): {n}" for n in r.notes]
    return "\n".join(lines)
