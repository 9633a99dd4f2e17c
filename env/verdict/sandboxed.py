"""Sandboxed verdict runs: for the tests a task declares the split cannot run, pytest, the tests and the project all
run together in the sandbox.

    verdict = run_sandboxed(sandbox, env, task, files, tests, select)   # outcomes of ``select``, each marked sandboxed

The project's code shares a process with pytest there, so such a result is forgeable in principle by code that
targets the known test ids. What guards it: pytest and its reporting plugin load from read-only trees before any
project code; the project's own pytest settings are never read; and every run carries two tamper canaries, tests
under fresh random names, one that must pass and one that must fail. A run whose canaries come out wrong is void:
it says so and every test in it counts as failed. Results record their trust level (``sandboxed``) wherever they
go, and a task whose FAIL_TO_PASS tests run here is untrusted (see ``RepoTask.trusted``).
"""

from __future__ import annotations

import json
import secrets

from env.patches import Files
from env.project import RepoTask, is_test_path, source_only
from env.sandbox.runner import RefusedToRun, Sandbox
from env.verdict.hosts import VerdictHosts, default_hosts
from env.verdict.outcome import RepoVerdict, parse_records
from env.verdict.testenv import TestEnv


def canaries() -> tuple[str, str, str, str]:
    """A file of two sentinel tests under fresh random names: (path, source, the id that must pass, the one that must fail)."""
    path = f"test_{secrets.token_hex(8)}.py"
    passing, failing = f"test_{secrets.token_hex(8)}", f"test_{secrets.token_hex(8)}"
    source = f"def {passing}():\n    assert 1 + 1 == 2\n\n\ndef {failing}():\n    assert 1 + 1 == 3\n"
    return path, source, f"{path}::{passing}", f"{path}::{failing}"


def run_sandboxed(
    sandbox: Sandbox, env: TestEnv, task: RepoTask, files: Files, tests: Files, select: list[str], coverage: bool = False,
    hosts: VerdictHosts | None = None,
) -> RepoVerdict:
    """``coverage``: also measure the project lines each test executes (``verdict.covered``; a hint for task
    synthesis, as forgeable as the run itself). ``hosts``: where the run's sandbox configuration is kept (the
    Runtime's; without one, the process's)."""
    path, source, must_pass, must_fail = canaries()
    # The project's sources from the agent's files; every test file and conftest from the task, never the agent's.
    project = {**source_only(files), **tests, path: source}
    collect = sorted({t.split("::")[0] for t in select if t.split("::")[0] in tests}) + [path]
    try:
        run = (hosts or default_hosts()).test_sandbox(sandbox, env, sandboxed=True).start_pytest(
            project, task.source_paths, dict(task.environment), collect, [*select, must_pass, must_fail], coverage=coverage
        )
    except RefusedToRun as exc:
        return RepoVerdict(error=str(exc))
    try:
        records = run.ready if isinstance(run.ready, list) else []
        problem = str(run.load_error) if run.load_error else run.result.aborted
    finally:
        result = run.finish()
    verdict = parse_records("\n".join(json.dumps(r) for r in records if isinstance(r, dict)), coverage=coverage)
    verdict.output, verdict.output_truncated, verdict.timed_out = result.output, result.output_truncated, result.timed_out
    verdict.aborted = result.aborted
    verdict.busy = result.aborted if result.busy else ""  # stopped by the backstop under its CPU limit: no outcome of its own
    verdict.cpu_seconds, verdict.duration_ms = result.cpu_seconds, result.duration_ms
    if problem and not verdict.outcomes:
        verdict.error = f"the sandboxed test run could not start: {problem}"
    canary = (verdict.outcomes.pop(must_pass, "missing"), verdict.outcomes.pop(must_fail, "missing"))
    for key in (must_pass, must_fail):
        verdict.excerpts.pop(key, None)
        verdict.ops.pop(key, None)
    verdict.collected = [t for t in verdict.collected if t not in (must_pass, must_fail)]
    if verdict.outcomes and canary != ("PASSED", "FAILED"):
        verdict.void = (
            f"the sandboxed run is void: its tamper canaries came out {canary[0]} and {canary[1]} "
            "(PASSED and FAILED expected), so the project's code changed how tests report; every test in it counts as failed"
        )
        verdict.outcomes = {t: "FAILED" for t in verdict.outcomes}
    verdict.covered = {p: lines for p, lines in verdict.covered.items() if not is_test_path(p)}
    verdict.sandboxed = sorted(verdict.outcomes)
    return verdict
