"""The verdict: run a task's trusted tests against submitted code and count explicit passes.

    verdict = judge(task, source, sandbox, random.Random(7))
    verdict.tests_passed, verdict.tests_total, verdict.solved
    print(verdict.report())

The tests run here, in the trusted process; only the submitted module runs in the sandbox. A test
passes only by returning normally from its own code here: exit codes, printed text, skips,
missing replies and exceptions are never evidence of passing.
"""

from __future__ import annotations

import linecache
import random
import traceback
from typing import Any, Literal

from pydantic import BaseModel, Field

from env.sandbox.policy import PolicyViolation, check_source
from env.sandbox.runner import RefusedToRun, RemoteError, RunAborted, RunResult, Sandbox, SandboxRun
from env.tasks.spec import StressSpec, TaskSpec
from env.verdict.remote import Solution


class TestOutcome(BaseModel):
    __test__ = False  # not a pytest class

    id: str
    outcome: Literal["passed", "failed", "error"]
    message: str = ""
    calls: int = Field(0, description="Calls the test made into the submitted code")


class StressOutcome(BaseModel):
    passed: bool
    expected: int | None = None
    observed: Any = None
    threads: int = 0
    message: str = ""


class Verdict(BaseModel):
    tests: list[TestOutcome] = Field(default_factory=list)
    tests_total: int
    stress: StressOutcome | None = None
    run: RunResult | None = None
    rejected: str = Field("", description="Why the code was not run at all (policy, size, refused)")

    @property
    def tests_passed(self) -> int:
        return sum(1 for t in self.tests if t.outcome == "passed")

    @property
    def timed_out(self) -> bool:
        return bool(self.run and self.run.timed_out)

    @property
    def solved(self) -> bool:
        return self.tests_passed == self.tests_total and (self.stress is None or self.stress.passed)

    def report(self) -> str:
        lines: list[str] = []
        if self.rejected:
            lines.append(f"Not run: {self.rejected}")
        for test in self.tests:
            lines.append(f"{test.id} ... {test.outcome.upper()}")
            lines.extend("    " + line for line in test.message.splitlines())
        if self.stress is not None:
            lines.append(f"concurrency stress test ... {'PASSED' if self.stress.passed else 'FAILED'}")
            lines.extend("    " + line for line in self.stress.message.splitlines())
        failed = sum(1 for t in self.tests if t.outcome == "failed")
        errors = sum(1 for t in self.tests if t.outcome == "error")
        lines.append(f"{self.tests_passed} passed, {failed} failed, {errors} errors (of {self.tests_total} tests)")
        if self.run is not None:
            if self.run.aborted:
                lines.append(f"Run ended early: {self.run.aborted}")
            if self.run.output:
                lines.append("--- output of your code (stdout/stderr) ---")
                lines.append(self.run.output.rstrip("\n"))
        return "\n".join(lines)


def _assert_text(exc: AssertionError, test_file: str) -> str:
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if frame.filename == test_file:
            return linecache.getline(frame.filename, frame.lineno or 0).strip()
    return ""


def _run_one(test_id: str, fn: Any, sol: Solution, test_file: str) -> TestOutcome:
    before = sol.calls
    outcome = _outcome(test_id, fn, sol, test_file)
    outcome.calls = sol.calls - before
    return outcome


def _outcome(test_id: str, fn: Any, sol: Solution, test_file: str) -> TestOutcome:
    try:
        fn(sol)
    except AssertionError as exc:
        parts = [str(exc) or _assert_text(exc, test_file), sol.last_call]
        return TestOutcome(id=test_id, outcome="failed", message="\n".join(p for p in parts if p))
    except RemoteError as exc:
        return TestOutcome(id=test_id, outcome="error", message=(exc.traceback_text or str(exc)).rstrip())
    except RunAborted as exc:
        return TestOutcome(id=test_id, outcome="error", message=str(exc))
    except Exception as exc:  # e.g. comparing a returned object the test cannot order
        return TestOutcome(id=test_id, outcome="error", message=f"{type(exc).__name__}: {exc}\n{sol.last_call}")
    return TestOutcome(id=test_id, outcome="passed")


def stress_plan(spec: StressSpec, rng: random.Random) -> list[tuple[int, int]]:
    """Randomised per run: threads x (increments, decrements); the total stays in the trusted side."""
    plan = []
    for _ in range(rng.randint(*spec.threads)):
        increments = rng.randint(*spec.increments)
        plan.append((increments, rng.randint(0, increments // 2)))
    return plan


def _stress_once(run: SandboxRun, spec: StressSpec, rng: random.Random, rounds: int | None = None) -> StressOutcome:
    """One stress check: ``spec.rounds`` randomised rounds, each on a fresh object; the first wrong count fails it."""
    outcome = StressOutcome(passed=False, message="not run")
    for _ in range(rounds or spec.rounds):
        outcome = _stress_round(run, spec, rng)
        if not outcome.passed:
            break
    return outcome


def _stress_round(run: SandboxRun, spec: StressSpec, rng: random.Random) -> StressOutcome:
    plan = stress_plan(spec, rng)
    expected = sum(inc - dec for inc, dec in plan)
    # The report names no count: the plan comes from the server's secret, and neither it nor its total is shown.
    shape = f"{len(plan)} threads calling increment and decrement at once"
    try:
        result = run.stress(spec.cls, plan, spec.switch_interval)
    except RemoteError as exc:
        return StressOutcome(passed=False, expected=expected, threads=len(plan), message=f"{shape}: the code raised\n{exc.traceback_text}".rstrip())
    except RunAborted as exc:
        return StressOutcome(passed=False, expected=expected, threads=len(plan), message=f"{shape}: {exc}")
    observed = result.get("count") if isinstance(result, dict) else None
    errors = result.get("errors") if isinstance(result, dict) else None
    passed = type(observed) is int and observed == expected and not errors
    if passed:
        message = f"{shape}: no update was lost"
    elif type(observed) is not int:
        message = f"{shape}: get_count() returned {type(observed).__name__}, not an int"
    else:
        message = f"{shape}: updates were lost under concurrency (the final count is wrong)"
    if errors:
        message += "\nworker threads raised: " + "; ".join(map(str, errors))[:600]
    return StressOutcome(passed=passed, expected=expected, observed=observed, threads=len(plan), message=message)


def _start(task: TaskSpec, source: str, sandbox: Sandbox, policy_enabled: bool) -> SandboxRun | str:
    try:
        check_source(source, task.allowed_imports, policy_enabled)
        return sandbox.start(source, task.filename, task.module)
    except (PolicyViolation, RefusedToRun) as exc:
        return str(exc)


def judge(
    task: TaskSpec, source: str, sandbox: Sandbox, rng: random.Random, policy_enabled: bool = True, with_stress: bool = True
) -> Verdict:
    """Run every test of ``task`` (and, ``with_stress``, its stress check) against ``source``."""
    stress_spec = task.stress if with_stress else None
    test_file = str(task.folder / "tests.py")
    started = _start(task, source, sandbox, policy_enabled)
    if isinstance(started, str):
        errors = [TestOutcome(id=tid, outcome="error", message="not run") for tid, _ in task.tests]
        stress = StressOutcome(passed=False, message="not run") if stress_spec else None
        return Verdict(tests=errors, tests_total=task.tests_total, stress=stress, rejected=started)
    with started as run:
        if run.load_error is not None or run.result.aborted:
            why = run.load_error.traceback_text.rstrip() if run.load_error else run.result.aborted
            tests = [TestOutcome(id=tid, outcome="error", message=f"your module failed to load:\n{why}") for tid, _ in task.tests]
            stress = StressOutcome(passed=False, message="not run: the module failed to load") if stress_spec else None
        else:
            sol = Solution(run, task.module)
            tests = [_run_one(tid, fn, sol, test_file) for tid, fn in task.tests]
            stress = _stress_once(run, stress_spec, rng) if stress_spec else None
    return Verdict(tests=tests, tests_total=task.tests_total, stress=stress, run=run.result)


def stress_check(task: TaskSpec, source: str, sandbox: Sandbox, rng: random.Random, policy_enabled: bool = True) -> StressOutcome:
    """The grade's concurrency check: the submission step's full check (every round), run again on a fresh process."""
    assert task.stress is not None
    started = _start(task, source, sandbox, policy_enabled)
    if isinstance(started, str):
        return StressOutcome(passed=False, message=f"not run: {started}")
    with started as run:
        if run.load_error is not None or run.result.aborted:
            return StressOutcome(passed=False, message="not run: the module failed to load")
        return _stress_once(run, task.stress, rng)
