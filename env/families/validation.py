"""Proof that a task is valid, measured: what every family's ``Family.validate`` runs and reports.

    report = measured(task, runs, observe, started, checks)   # buggy and gold states, ``runs`` times each
    report.ok, [c for c in report.checks if not c.ok]

A family says how one state of its task runs (``observe(gold, seed)`` -> :class:`StateRun`) and adds its own
checks before (a gold patch that applies) and after (held-out tests); the checks every family shares are here:
the buggy state fails every FAIL_TO_PASS test and passes every PASS_TO_PASS test, the gold state passes all of
them, every run gives identical outcomes, and no test passes vacuously (each one reached the project's code).

A run the machine starved (its limits count CPU time, ``Limits.for_validity``, and the wall-clock backstop stopped it
under its CPU limit) runs again (``env.verdict.busy``); when it stays starved the validation decides nothing:
``busy`` says why, and the task is reported as not proven on this machine, never as invalid.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol

from pydantic import BaseModel, Field

from env.contract import Task
from env.verdict.busy import MachineBusy


class Check(BaseModel):
    name: str
    ok: bool
    detail: str = ""


class StateRun(BaseModel):
    """One run of one state (buggy or gold): each test's status and how many calls it made into the project."""

    outcomes: dict[str, str] = Field(default_factory=dict)
    calls: dict[str, int] = Field(default_factory=dict)
    collected: list[str] = Field(default_factory=list)
    error: str = ""
    cpu_seconds: float | None = Field(None, description="Limits counted in CPU time only: what the run's processes used")


class TaskValidation(BaseModel):
    task_id: str
    family: str
    runs: int
    checks: list[Check]
    notes: list[str] = Field(default_factory=list)
    seconds: float
    trusted: bool = Field(True, description="every FAIL_TO_PASS test runs under the split verdict")
    busy: str = Field("", description="Why nothing was decided: a run the machine starved in every attempt (not the task's fault)")
    cpu_seconds: float | None = Field(None, description="Limits counted in CPU time only: what the buggy and gold runs used together")

    @property
    def ok(self) -> bool:
        return not self.busy and all(c.ok for c in self.checks)


class ListedTests(Task, Protocol):
    """What the shared checks read of a task besides the contract: its two lists of test ids."""

    @property
    def fail_to_pass(self) -> list[str]: ...

    @property
    def pass_to_pass(self) -> list[str]: ...


def short_list(ids: list[str], limit: int = 4) -> str:
    return ", ".join(ids[:limit]) + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


def refused(task: Task, runs: int, checks: list[Check], started: float) -> TaskValidation:
    """A validation that stopped before running anything (a gold patch that does not apply)."""
    return TaskValidation(task_id=task.id, family=task.family, runs=runs, checks=checks, seconds=time.monotonic() - started)


def measured(
    task: ListedTests,
    runs: int,
    observe: Callable[[bool, int], StateRun],
    started: float,
    checks: list[Check] | None = None,
    after: Callable[[list[StateRun]], list[Check]] | None = None,
    boxed: Collection[str] = (),
) -> TaskValidation:
    """Run the buggy and the gold state ``runs`` times each (``observe(gold, seed)``) and make the shared checks,
    after the family's ``checks`` and before what ``after`` adds from the buggy runs. ``boxed``: tests run with the
    project in one process, whose reach into the project is not counted."""
    checks = list(checks or [])
    try:
        return _measured(task, runs, observe, started, checks, after, boxed)
    except MachineBusy as exc:
        return TaskValidation(task_id=task.id, family=task.family, runs=runs, checks=checks, seconds=round(time.monotonic() - started, 2),
                              busy=str(exc))  # fmt: skip


def _measured(
    task: ListedTests, runs: int, observe: Callable[[bool, int], StateRun], started: float, checks: list[Check],
    after: Callable[[list[StateRun]], list[Check]] | None, boxed: Collection[str],
) -> TaskValidation:
    notes: list[str] = []
    with ThreadPoolExecutor(max_workers=2) as pool:
        buggy = list(pool.map(lambda i: observe(False, i), range(runs)))
        gold = list(pool.map(lambda i: observe(True, i), range(runs)))
    listed = task.fail_to_pass + task.pass_to_pass
    errors = [o.error for o in buggy + gold if o.error]
    checks.append(Check(name="every run set up", ok=not errors, detail=errors[0][:300] if errors else ""))
    missing = sorted({t for o in buggy + gold for t in listed if t not in o.outcomes})
    checks.append(Check(name="every listed test ran", ok=not missing, detail=short_list(missing)))
    not_failing = sorted({t for o in buggy for t in task.fail_to_pass if o.outcomes.get(t) not in ("FAILED", "ERROR")})
    checks.append(Check(name="buggy state fails every FAIL_TO_PASS test", ok=not not_failing, detail=short_list(not_failing)))
    not_passing = sorted({t for o in buggy for t in task.pass_to_pass if o.outcomes.get(t) != "PASSED"})
    checks.append(Check(name="buggy state passes every PASS_TO_PASS test", ok=not not_passing, detail=short_list(not_passing)))
    gold_failing = sorted({t for o in gold for t in listed if o.outcomes.get(t) != "PASSED"})
    checks.append(Check(name="gold patch passes every test", ok=not gold_failing, detail=short_list(gold_failing)))
    # the tests the grade counts: a collected test in neither list (a flaky one of the library's) decides nothing
    differing = {name: sorted({t for o in obs for t in listed if o.outcomes.get(t) != obs[0].outcomes.get(t)}) for name, obs in (("buggy", buggy), ("gold", gold))}
    unstable = [f"{name} state differs ({short_list(tests)})" for name, tests in differing.items() if tests]
    checks.append(Check(name=f"identical results over {runs} runs", ok=not unstable, detail=" and ".join(unstable)))
    boxed = set(boxed)
    vacuous = sorted({t for o in gold for t in listed if t in o.outcomes and o.calls.get(t, 0) < 1 and t not in boxed})
    checks.append(Check(name="no test passes vacuously", ok=not vacuous, detail=(short_list(vacuous) + " never reached the project's code") if vacuous else ""))
    if after is not None:
        checks += after(buggy)
    unlisted = sorted({t for o in gold for t in o.collected if t not in listed})
    if unlisted:
        notes.append(f"{len(unlisted)} collected tests are in neither list: {short_list(unlisted)}")
    if boxed:
        notes.append(f"{len(boxed)} test(s) run sandboxed (forgeable in principle): {short_list(sorted(boxed))}")
    trusted = bool(task.summary().get("trusted", True))
    used = [o.cpu_seconds for o in buggy + gold]
    return TaskValidation(
        task_id=task.id, family=task.family, runs=runs, checks=checks, notes=notes, seconds=round(time.monotonic() - started, 2), trusted=trusted,
        cpu_seconds=None if None in used else round(sum(s for s in used if s is not None), 2),
    )
