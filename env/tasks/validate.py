"""Proof that a task is valid, measured: run the buggy and the gold state, several times, and check.

    report = validate_task(runtime, task, runs=10)
    report.ok, [c for c in report.checks if not c.ok]

A task is valid when: its gold patch applies and changes only source files; the buggy state fails
every FAIL_TO_PASS test and passes every PASS_TO_PASS test; the gold state passes all of them;
every run gives identical outcomes; and no test passes vacuously (each one reached the project's
code, none was skipped or expected to fail). Classic and repository tasks go through the same
checks; only how one state is run differs.

A repository task with held-out tests (``HELD_OUT``) also proves: their code is only in test_patch.diff, the
buggy state fails at least one of them, the gold patch is resolved under the graded run (``run_graded``: the
visible tests as the agent runs them, the held-out ones apart), and its ``overfit.patch`` (a fix fitted to the
visible tests) passes every visible test yet is not resolved. A bundled task (under tasks/repo/) must have both.
"""

from __future__ import annotations

import random
import time
from concurrent.futures import ThreadPoolExecutor

from pydantic import BaseModel, Field

from env.families.base import TASKS_DIR
from env.families.classic.judge import judge_on
from env.families.registry import Task
from env.patches import PatchError, apply_patch
from env.project import RepoTask, is_test_path
from env.runtime import Runtime
from env.verdict.outcome import RepoVerdict, f2p_ok, p2p_ok, resolution
from env.verdict.repo_judge import run_graded, run_tests


class Check(BaseModel):
    name: str
    ok: bool
    detail: str = ""


class Observation(BaseModel):
    """One run of one state: each test's status and how many calls it made into the project."""

    outcomes: dict[str, str] = Field(default_factory=dict)
    calls: dict[str, int] = Field(default_factory=dict)
    collected: list[str] = Field(default_factory=list)
    error: str = ""


class TaskValidation(BaseModel):
    task_id: str
    family: str
    runs: int
    checks: list[Check]
    notes: list[str] = Field(default_factory=list)
    seconds: float
    trusted: bool = Field(True, description="every FAIL_TO_PASS test runs under the split verdict")

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)


def observe(runtime: Runtime, task: Task, gold: bool, seed: int) -> Observation:
    if isinstance(task, RepoTask):
        verdict = run_tests(runtime.sandbox, task, task.gold_files if gold else task.files)
        error = verdict.error or verdict.aborted or "; ".join(f"collecting {k}: {v.splitlines()[-1] if v else ''}" for k, v in verdict.collect_errors.items())
        return Observation(outcomes=dict(verdict.outcomes), calls=dict(verdict.ops), collected=verdict.collected, error=error)
    verdict = judge_on(runtime, task, task.gold_source if gold else task.buggy_source, random.Random(seed))
    status = {"passed": "PASSED", "failed": "FAILED", "error": "ERROR"}
    outcomes = {f"tests.py::{t.id}": status[t.outcome] for t in verdict.tests}
    calls = {f"tests.py::{t.id}": t.calls for t in verdict.tests}
    if verdict.stress is not None and task.stress is not None:
        outcomes[f"stress::{task.stress.cls}"] = "PASSED" if verdict.stress.passed else "FAILED"
        calls[f"stress::{task.stress.cls}"] = verdict.stress.threads
    return Observation(outcomes=outcomes, calls=calls, collected=list(outcomes), error=verdict.rejected)


def _list(ids: list[str], limit: int = 4) -> str:
    return ", ".join(ids[:limit]) + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


def validate_task(runtime: Runtime, task: Task, runs: int = 10) -> TaskValidation:
    started = time.monotonic()
    checks: list[Check] = []
    notes: list[str] = []
    if isinstance(task, RepoTask):
        try:
            changed = set(task.gold_files) ^ set(task.files) | {p for p in task.files if task.gold_files.get(p) != task.files[p]}
            checks.append(Check(name="gold patch applies", ok=True))
            tests_touched = sorted(p for p in changed if is_test_path(p))
            checks.append(Check(name="gold patch changes only source files", ok=not tests_touched, detail=_list(tests_touched)))
            if task.suspect:  # recorded for readers and exports; scoring reads the patch itself
                derived = [f"{w.file}:{w.function}:{w.start}-{w.end}" for w in task.gold_lines]
                recorded = [f"{w.file}:{w.function}:{w.start}-{w.end}" for w in task.suspect]
                checks.append(Check(name="recorded suspect is where the gold patch changes the code", ok=recorded == derived,
                                    detail="" if recorded == derived else f"recorded {_list(recorded)}, the patch changes {_list(derived)}"))  # fmt: skip
        except PatchError as exc:
            checks.append(Check(name="gold patch applies", ok=False, detail=str(exc)))
            return TaskValidation(task_id=task.id, family=task.family, runs=runs, checks=checks, seconds=time.monotonic() - started)
    with ThreadPoolExecutor(max_workers=2) as pool:
        buggy = list(pool.map(lambda i: observe(runtime, task, False, i), range(runs)))
        gold = list(pool.map(lambda i: observe(runtime, task, True, i), range(runs)))
    listed = task.fail_to_pass + task.pass_to_pass
    errors = [o.error for o in buggy + gold if o.error]
    checks.append(Check(name="every run set up", ok=not errors, detail=errors[0][:300] if errors else ""))
    missing = sorted({t for o in buggy + gold for t in listed if t not in o.outcomes})
    checks.append(Check(name="every listed test ran", ok=not missing, detail=_list(missing)))
    not_failing = sorted({t for o in buggy for t in task.fail_to_pass if o.outcomes.get(t) not in ("FAILED", "ERROR")})
    checks.append(Check(name="buggy state fails every FAIL_TO_PASS test", ok=not not_failing, detail=_list(not_failing)))
    not_passing = sorted({t for o in buggy for t in task.pass_to_pass if o.outcomes.get(t) != "PASSED"})
    checks.append(Check(name="buggy state passes every PASS_TO_PASS test", ok=not not_passing, detail=_list(not_passing)))
    gold_failing = sorted({t for o in gold for t in listed if o.outcomes.get(t) != "PASSED"})
    checks.append(Check(name="gold patch passes every test", ok=not gold_failing, detail=_list(gold_failing)))
    unstable = [name for name, obs in (("buggy", buggy), ("gold", gold)) if any(o.outcomes != obs[0].outcomes for o in obs)]
    checks.append(Check(name=f"identical results over {runs} runs", ok=not unstable, detail=" and ".join(unstable) + (" state differs" if unstable else "")))
    boxed = set(getattr(task, "sandboxed", ()))  # run with the project in one process: their reach is not counted
    vacuous = sorted({t for o in gold for t in listed if t in o.outcomes and o.calls.get(t, 0) < 1 and t not in boxed})
    checks.append(Check(name="no test passes vacuously", ok=not vacuous, detail=(_list(vacuous) + " never reached the project's code") if vacuous else ""))
    if isinstance(task, RepoTask):
        checks += held_out_checks(runtime, task, buggy)
    unlisted = sorted({t for o in gold for t in o.collected if t not in listed})
    if unlisted:
        notes.append(f"{len(unlisted)} collected tests are in neither list: {_list(unlisted)}")
    if boxed:
        notes.append(f"{len(boxed)} test(s) run sandboxed (forgeable in principle): {_list(sorted(boxed))}")
    trusted = bool(task.summary().get("trusted", True))
    return TaskValidation(
        task_id=task.id, family=task.family, runs=runs, checks=checks, notes=notes, seconds=round(time.monotonic() - started, 2), trusted=trusted
    )


def _bundled(task: RepoTask) -> bool:
    return task.folder.resolve().is_relative_to((TASKS_DIR / "repo").resolve())


def _defined(text: str, test_id: str) -> bool:
    """Whether a test file's text defines the function a test id names (its parametrisation aside)."""
    name = test_id.split("::")[-1].split("[")[0]
    return f"def {name}(" in text


def held_out_checks(runtime: Runtime, task: RepoTask, buggy: list[Observation]) -> list[Check]:
    """What makes a repository task's held-out tests hold: see the module's docstring."""
    checks: list[Check] = []
    if _bundled(task):  # every bundled task keeps tests from the agent, and proves an overfit fails them
        checks.append(Check(name="bundled task holds out tests (HELD_OUT)", ok=bool(task.held_out),
                            detail="" if task.held_out else "task.json names no HELD_OUT tests"))  # fmt: skip
        checks.append(Check(name="bundled task records an overfit (overfit.patch)", ok=bool(task.overfit_patch),
                            detail="" if task.overfit_patch else f"no overfit.patch in {task.folder.name}"))  # fmt: skip
    if not task.held_out and not task.overfit_patch:
        return checks
    if task.held_out:
        shown = sorted(t for t in task.held_out if _defined(task.visible_tests.get(t.split("::")[0], ""), t))
        absent = sorted(t for t in task.held_out if not _defined(task.grading_tests.get(t.split("::")[0], ""), t))
        checks.append(Check(name="held-out tests are only in test_patch.diff", ok=not shown and not absent,
                            detail=(f"repo/ holds {_list(shown)}" if shown else f"test_patch.diff does not define {_list(absent)}") if shown or absent else ""))  # fmt: skip
        caught = any(o.outcomes.get(t) != "PASSED" for o in buggy for t in task.held_out)
        checks.append(Check(name="buggy state fails a held-out test", ok=caught, detail="" if caught else "the bug passes every held-out test"))
    states = {"gold": task.gold_files}
    if task.overfit_patch:
        try:
            states["overfit"] = apply_patch(task.files, task.overfit_patch)
        except PatchError as exc:
            checks.append(Check(name="overfit.patch applies", ok=False, detail=str(exc)))
    with ThreadPoolExecutor(max_workers=2) as pool:
        graded = dict(zip(states, pool.map(lambda files: run_graded(runtime.sandbox, task, files), states.values()), strict=True))
    gold = _resolution(task, graded["gold"])
    checks.append(Check(name="gold patch is resolved under the graded run", ok=gold == "FULL",
                        detail="" if gold == "FULL" else f"{gold}: {graded['gold'].error or 'a test fails'}"))  # fmt: skip
    if "overfit" in graded:
        verdict = graded["overfit"]
        visible = [(t, f2p_ok) for t in task.visible_fail_to_pass] + [(t, p2p_ok) for t in task.visible_pass_to_pass]
        failing = [t for t, ok in visible if not ok(verdict.outcomes.get(t, "ERROR"))]
        checks.append(Check(name="overfit.patch passes every visible test", ok=not failing,
                            detail=f"it fails {_list(failing)}" if failing else ""))  # fmt: skip
        fitted = _resolution(task, verdict)
        checks.append(Check(name="overfit.patch is not resolved", ok=fitted != "FULL",
                            detail="it is resolved: no held-out test catches it" if fitted == "FULL" else ""))  # fmt: skip
    return checks


def _resolution(task: RepoTask, verdict: RepoVerdict) -> str:
    return resolution(verdict.graded_outcomes(), task.fail_to_pass, task.pass_to_pass)


def table(reports: list[TaskValidation]) -> str:
    rows = [("task", "family", "valid", "trusted", "runs", "seconds", "problems")]
    for r in reports:
        problems = "; ".join(f"{c.name}: {c.detail}" if c.detail else c.name for c in r.checks if not c.ok)
        rows.append((r.task_id, r.family, "yes" if r.ok else "NO", "yes" if r.trusted else "no", str(r.runs), f"{r.seconds:.1f}", problems or "-"))
    widths = [max(len(row[i]) for row in rows) for i in range(6)]
    lines = ["  ".join(cell.ljust(widths[i]) if i < 6 else cell for i, cell in enumerate(row)) for row in rows]
    for r in reports:
        lines += [f"note ({r.task_id}): {n}" for n in r.notes]
    return "\n".join(lines)
