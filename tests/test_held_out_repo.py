"""Held-out tests of the bundled repository tasks (issue 32), proven with the real graded verdict.

For every task under tasks/repo/: the gold patch resolves with every held-out test passing; the buggy snapshot
fails at least one held-out test; the task's ``overfit.patch`` (a fix that fits only the visible tests) passes
every visible FAIL_TO_PASS and PASS_TO_PASS test and still is not resolved, because a held-out FAIL_TO_PASS test
fails. The held-out tests' names are in ``test_patch.diff`` only, never in the snapshot the agent works on.

Each state of each task runs once (45 graded runs), concurrently, on the session's runtime.
"""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from env.patches import apply_patch, patched_paths
from env.project import RepoTask, is_test_path, load_repo_task
from env.verdict.outcome import RepoVerdict, resolution
from env.verdict.repo_judge import run_tests

TASKS_DIR = Path(__file__).resolve().parents[1] / "tasks" / "repo"
TASK_IDS = sorted(p.parent.name for p in TASKS_DIR.glob("*/task.json"))
STATES = ("gold", "bug", "overfit")


def _task(task_id: str) -> RepoTask:
    return load_repo_task(TASKS_DIR / task_id)


def _files(task: RepoTask, state: str) -> dict[str, str]:
    if state == "gold":
        return task.gold_files
    if state == "bug":
        return task.files
    return apply_patch(task.files, task.overfit_patch)


@pytest.fixture(scope="module")
def verdicts(runtime) -> dict[tuple[str, str], RepoVerdict]:
    """Every task's three states, each graded once (test_patch applied), run side by side."""
    tasks = {task_id: _task(task_id) for task_id in TASK_IDS}
    jobs = [(task_id, state) for task_id in TASK_IDS for state in STATES]

    def grade(job: tuple[str, str]) -> RepoVerdict:
        task = tasks[job[0]]
        return run_tests(runtime.sandbox, task, _files(task, job[1]), graded=True)

    with ThreadPoolExecutor(max_workers=8) as pool:
        return dict(zip(jobs, pool.map(grade, jobs), strict=True))


def _ok(verdict: RepoVerdict) -> None:
    assert not verdict.error and not verdict.aborted and not verdict.collect_errors, (verdict.error, verdict.aborted, verdict.collect_errors)


def test_every_bundled_task_is_covered():
    assert len(TASK_IDS) >= 15


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_held_out_data_is_well_formed(task_id):
    task = _task(task_id)
    assert task.test_patch and task.overfit_patch and task.held_out
    assert set(task.held_out) <= set(task.fail_to_pass) | set(task.pass_to_pass)
    assert set(task.held_out) & set(task.fail_to_pass), "at least one held-out test fails on the bug"
    assert 3 <= len(task.held_out) <= 6
    assert all(is_test_path(p) for p in patched_paths(task.test_patch))
    assert not any(is_test_path(p) for p in patched_paths(task.overfit_patch))
    # The held-out tests live in test_patch.diff only: no name of theirs is anywhere in the agent's snapshot.
    added = "\n".join(line[1:] for line in task.test_patch.splitlines() if line.startswith("+"))
    snapshot = "\n".join(task.files.values())
    for test_id in task.held_out:
        path, name = test_id.split("::", 1)
        name = re.sub(r"\[.*\]$", "", name)
        assert path in task.grading_tests and f"def {name}(" in task.grading_tests[path], test_id
        assert f"def {name}(" in added, test_id
        assert name not in snapshot, f"{test_id} is named in the snapshot"
    # Only held-out tests are new: the visible ones are the snapshot's own.
    visible = task.visible_fail_to_pass + task.visible_pass_to_pass
    assert all(t.split("::")[0] in task.visible_tests for t in visible)


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_gold_resolves_and_passes_every_held_out_test(verdicts, task_id):
    task, verdict = _task(task_id), verdicts[(task_id, "gold")]
    _ok(verdict)
    assert resolution(verdict.outcomes, task.fail_to_pass, task.pass_to_pass) == "FULL"
    assert {t: verdict.outcomes.get(t) for t in task.held_out} == {t: "PASSED" for t in task.held_out}
    assert all(verdict.ops.get(t, 0) >= 1 for t in task.held_out), "every held-out test calls the project's code"


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_bug_fails_a_held_out_test(verdicts, task_id):
    task, verdict = _task(task_id), verdicts[(task_id, "bug")]
    _ok(verdict)
    held_f2p = [t for t in task.held_out if t in task.fail_to_pass]
    held_p2p = [t for t in task.held_out if t in task.pass_to_pass]
    assert all(verdict.outcomes.get(t) in ("FAILED", "ERROR") for t in held_f2p)
    assert all(verdict.outcomes.get(t) == "PASSED" for t in held_p2p)


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_overfit_passes_the_visible_tests_and_is_not_resolved(verdicts, task_id):
    task, verdict = _task(task_id), verdicts[(task_id, "overfit")]
    _ok(verdict)
    visible = task.visible_fail_to_pass + task.visible_pass_to_pass
    assert {t: verdict.outcomes.get(t) for t in visible} == {t: "PASSED" for t in visible}
    failing = [t for t in task.held_out if t in task.fail_to_pass and verdict.outcomes.get(t) != "PASSED"]
    assert failing, "a held-out FAIL_TO_PASS test catches the overfit"
    assert resolution(verdict.outcomes, task.fail_to_pass, task.pass_to_pass) != "FULL"
