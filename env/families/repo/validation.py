"""A repository task proved valid, measured (``env.families.validation`` holds the checks every family shares).

Before anything runs: the gold patch applies, changes only source files, and changes the code where a recorded
``suspect`` says. A task with held-out tests (``HELD_OUT``) also proves: their code is only in test_patch.diff, the
buggy state fails at least one of them, the gold patch is resolved under the graded run (``run_graded``: the
visible tests as the agent runs them, the held-out ones apart), and its ``overfit.patch`` (a fix fitted to the
visible tests) passes every visible test yet is not resolved. A bundled task (under tasks/repo/ of the ``tasks_dir``
given) must have both.
Procedural tasks are repositories too and are validated the same way.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from env.families.validation import Check, StateRun, TaskValidation, measured, refused, short_list
from env.patches import PatchError, apply_patch
from env.project import RepoTask, is_test_path
from env.runtime import Runtime
from env.test_source import source_of
from env.verdict.busy import until_decided
from env.verdict.outcome import RepoVerdict, f2p_ok, p2p_ok, resolution
from env.verdict.repo_judge import run_graded, run_tests


def validate(runtime: Runtime, task: RepoTask, runs: int, tasks_dir: Path) -> TaskValidation:
    started = time.monotonic()
    checks: list[Check] = []
    try:
        patch_checks(task, checks)
    except PatchError as exc:
        checks.append(Check(name="gold patch applies", ok=False, detail=str(exc)))
        return refused(task, runs, checks, started)
    return measured(
        task, runs, lambda gold, run: observe(runtime, task, gold, run), started, checks,
        after=lambda buggy: held_out_checks(runtime, task, buggy, _bundled(task, tasks_dir)), boxed=task.sandboxed,
    )  # fmt: skip


def patch_checks(task: RepoTask, checks: list[Check]) -> None:
    """What the gold patch must be before anything runs, added to ``checks``; PatchError when it does not apply."""
    changed = set(task.gold_files) ^ set(task.files) | {p for p in task.files if task.gold_files.get(p) != task.files[p]}
    checks.append(Check(name="gold patch applies", ok=True))
    tests_touched = sorted(p for p in changed if is_test_path(p))
    checks.append(Check(name="gold patch changes only source files", ok=not tests_touched, detail=short_list(tests_touched)))
    if task.suspect:  # recorded for readers and exports; scoring reads the patch itself
        derived = [f"{w.file}:{w.function}:{w.start}-{w.end}" for w in task.gold_lines]
        recorded = [f"{w.file}:{w.function}:{w.start}-{w.end}" for w in task.suspect]
        checks.append(Check(name="recorded suspect is where the gold patch changes the code", ok=recorded == derived,
                            detail="" if recorded == derived else f"recorded {short_list(recorded)}, the patch changes {short_list(derived)}"))  # fmt: skip


def observe(runtime: Runtime, task: RepoTask, gold: bool, run: int) -> StateRun:
    # Each run with a hash seed of its own on both sides of the split: a set or dict order a test depends on shows up
    # as a state that differs between runs (run 0 has the served runs' seed, HOST_SEED; hosts.VALIDATION_SEEDS).
    seed = runtime.verdict_hosts.validation_seed(run)
    verdict = until_decided(lambda: run_tests(runtime.sandbox, task, task.gold_files if gold else task.files, hash_seed=seed, hosts=runtime.verdict_hosts))  # a starved run again
    error = verdict.error or verdict.aborted or "; ".join(f"collecting {k}: {v.splitlines()[-1] if v else ''}" for k, v in verdict.collect_errors.items())
    return StateRun(outcomes=dict(verdict.outcomes), calls=dict(verdict.ops), collected=verdict.collected, error=error, cpu_seconds=verdict.cpu_seconds)


def _bundled(task: RepoTask, tasks_dir: Path) -> bool:
    return task.folder.resolve().is_relative_to((tasks_dir / "repo").resolve())


def _defined(text: str, test_id: str) -> bool:
    """Whether a test file's text defines the function a test id names (its class's own method, its parametrisation
    aside): found in the file's syntax tree, since other classes may define a method of the same name."""
    return source_of({test_id.split("::")[0]: text}, test_id) is not None


def held_out_checks(runtime: Runtime, task: RepoTask, buggy: list[StateRun], bundled: bool) -> list[Check]:
    """What makes a repository task's held-out tests hold: see the module's docstring."""
    checks: list[Check] = []
    if bundled:  # every bundled task keeps tests from the agent, and proves an overfit fails them
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
                            detail=(f"repo/ holds {short_list(shown)}" if shown else f"test_patch.diff does not define {short_list(absent)}") if shown or absent else ""))  # fmt: skip
        caught = any(o.outcomes.get(t) != "PASSED" for o in buggy for t in task.held_out)
        checks.append(Check(name="buggy state fails a held-out test", ok=caught, detail="" if caught else "the bug passes every held-out test"))
    states = {"gold": task.gold_files}
    if task.overfit_patch:
        try:
            states["overfit"] = apply_patch(task.files, task.overfit_patch)
        except PatchError as exc:
            checks.append(Check(name="overfit.patch applies", ok=False, detail=str(exc)))
    with ThreadPoolExecutor(max_workers=2) as pool:
        graded = dict(zip(states, pool.map(lambda files: until_decided(lambda: run_graded(runtime.sandbox, task, files, runtime.verdict_hosts)), states.values()), strict=True))
    gold = _resolution(task, graded["gold"])
    checks.append(Check(name="gold patch is resolved under the graded run", ok=gold == "FULL",
                        detail="" if gold == "FULL" else f"{gold}: {graded['gold'].error or _failing(task, graded['gold'])}"))  # fmt: skip
    if "overfit" in graded:
        verdict = graded["overfit"]
        visible = [(t, f2p_ok) for t in task.visible_fail_to_pass] + [(t, p2p_ok) for t in task.visible_pass_to_pass]
        failing = [t for t, ok in visible if not ok(verdict.outcomes.get(t, "ERROR"))]
        checks.append(Check(name="overfit.patch passes every visible test", ok=not failing,
                            detail=f"it fails {short_list(failing)}" if failing else ""))  # fmt: skip
        fitted = _resolution(task, verdict)
        checks.append(Check(name="overfit.patch is not resolved", ok=fitted != "FULL",
                            detail="it is resolved: no held-out test catches it" if fitted == "FULL" else ""))  # fmt: skip
    return checks


def _failing(task: RepoTask, verdict: RepoVerdict) -> str:
    """Which graded tests did not succeed, each with where it ran (visible or held out) and its status: a library the
    pipeline cannot take says which tests failed where."""
    outcomes, held = verdict.graded_outcomes(), set(verdict.held_out or {})
    failing = [f"{t} ({'held out' if t in held else 'visible'}: {outcomes.get(t, 'not run')})"
               for t, ok in [(t, f2p_ok) for t in task.fail_to_pass] + [(t, p2p_ok) for t in task.pass_to_pass] if not ok(outcomes.get(t, "ERROR"))]  # fmt: skip
    return f"fails {short_list(failing)}" if failing else "a test fails"


def _resolution(task: RepoTask, verdict: RepoVerdict) -> str:
    return resolution(verdict.graded_outcomes(), task.fail_to_pass, task.pass_to_pass)
