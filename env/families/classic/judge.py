"""The verdict: run a task's trusted tests against submitted code and count explicit passes.

    verdict = judge(task, source, sandbox, random.Random(7))
    verdict.tests_passed, verdict.tests_total, verdict.solved
    print(verdict.report())

The tests run here, in the trusted process; only the submitted module runs in the sandbox. A test
passes only by returning normally from its own code here: exit codes, printed text, skips,
missing replies and exceptions are never evidence of passing.
"""

from __future__ import annotations

import contextvars
import linecache
import random
import traceback
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Literal

from pydantic import BaseModel, Field

from env.families.classic.concurrency import ConcurrencyCheck, StressOutcome
from env.families.classic.remote import Solution
from env.families.classic.task import TaskSpec
from env.held_out import held_out_line
from env.race_review import review
from env.runtime import Runtime
from env.sandbox.cputime import STARVED
from env.sandbox.limits import BACKSTOP_FACTOR
from env.sandbox.policy import PolicyViolation, check_verdict
from env.sandbox.runner import RefusedToRun, RemoteError, RunAborted, RunResult, Sandbox, SandboxRun
from env.timing import phase

Cases = Sequence[tuple[str, Callable[[Any], None]]]  # (case id, a trusted check taking `sol`)


class TestOutcome(BaseModel):
    __test__ = False  # not a pytest class

    id: str
    outcome: Literal["passed", "failed", "error"]
    message: str = ""
    calls: int = Field(0, description="Calls the test made into the submitted code")


class Verdict(BaseModel):
    tests: list[TestOutcome] = Field(default_factory=list)
    tests_total: int
    # Only counts: which held-out case failed, and with what input, is never kept where a report could show it.
    held_out_total: int = 0
    held_out_passed: int = 0
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
    def busy(self) -> str:
        """Limits counted in CPU time only: why the machine starved the run or the race check's real threads (the
        outcomes say nothing), else ""."""
        if self.run is not None and self.run.busy:
            return self.run.aborted
        return self.stress.busy if self.stress is not None else ""

    @property
    def solved(self) -> bool:
        return (
            self.tests_passed == self.tests_total
            and self.held_out_passed == self.held_out_total
            and (self.stress is None or self.stress.passed)
        )

    def report(self) -> str:
        lines: list[str] = []
        if self.rejected:
            lines.append(f"Not run: {self.rejected}")
        for test in self.tests:
            lines.append(f"{test.id} ... {test.outcome.upper()}")
            lines.extend("    " + line for line in test.message.splitlines())
        if self.stress is not None:
            lines.append(f"concurrency check ... {'PASSED' if self.stress.passed else 'FAILED'}")
            lines.extend("    " + line for line in self.stress.message.splitlines())
        failed = sum(1 for t in self.tests if t.outcome == "failed")
        errors = sum(1 for t in self.tests if t.outcome == "error")
        lines.append(f"{self.tests_passed} passed, {failed} failed, {errors} errors (of {self.tests_total} tests)")
        if self.held_out_total:
            lines.append(held_out_line(self.held_out_total - self.held_out_passed))
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


def _check(run: SandboxRun, task: TaskSpec, check: ConcurrencyCheck, rng: random.Random, source: str, sandbox: Sandbox, policy_enabled: bool) -> StressOutcome:
    """Three checks, all of which must pass: the controlled interleavings in ``run`` (whose failing schedule is
    the most useful report), the lock-discipline review of the source (which no running code can observe), and
    real threads in a process of their own (run beside the first, on another core)."""
    plan = check.plan(rng)
    if sandbox.limits.cpu_budget is not None:  # a run that decides validity: the real threads' budget is CPU time too
        plan["hammer"].update(cpu=True, backstop=BACKSTOP_FACTOR * plan["hammer"]["seconds"])
    with ThreadPoolExecutor(2) as pool:
        # in this thread's context: the second run claims a CPU slot for the same owner (env.sandbox.slots)
        hammered = pool.submit(contextvars.copy_context().run, real_threads_check, task, source, sandbox, policy_enabled, plan)
        reviewed = pool.submit(review, source, check.cls)  # pure Python, while this thread waits for the explorer
        try:
            outcome = check.judge_exploration(plan, run.explore(plan), source)
        except RemoteError as exc:
            outcome = StressOutcome(passed=False, message=f"the concurrency check could not run: the code raised\n{exc.traceback_text}".rstrip())
        except RunAborted as exc:
            outcome = StressOutcome(passed=False, message=f"the concurrency check could not finish: {exc}")
        run.give_back_slot()  # waiting for the other run, which may need a slot itself, must hold none
        why = hammered.result()
        refused = reviewed.result()
    if not outcome.passed:
        return outcome
    if refused:
        return StressOutcome(passed=False, schedules=outcome.schedules, message=f"the lock-discipline review refused the code: {refused}")
    if why:
        return StressOutcome(passed=False, schedules=outcome.schedules, message=why, busy=why if why.startswith(STARVED) else "")
    return outcome


def real_threads_check(task: TaskSpec, source: str, sandbox: Sandbox, policy_enabled: bool, plan: dict[str, Any]) -> str:
    """The real-threads check in a process of its own (no tracer ever ran there): "" or what went wrong."""
    started = start_run(task, source, sandbox, policy_enabled)
    if isinstance(started, str):
        return f"the real-threads check could not run: {started}"
    with started as run:
        if run.load_error is not None or run.result.aborted:
            return "the real-threads check could not run: the module failed to load"
        try:
            assert task.concurrency is not None
            return task.concurrency.judge_hammer(plan, run.hammer(plan["hammer"]))
        except RemoteError as exc:
            return f"the real-threads check could not run: the code raised\n{exc.traceback_text}".rstrip()
        except RunAborted as exc:
            return str(exc) if run.result.busy else f"the real-threads check could not finish: {exc}"


def start_run(task: TaskSpec, source: str, sandbox: Sandbox, policy_enabled: bool) -> SandboxRun | str:
    """The task's module loaded in a fresh sandbox child after the import policy's check, or why it cannot run."""
    try:
        with phase("policy"):
            check_verdict(source, task.allowed_imports, policy_enabled)
        return sandbox.start(source, task.filename, task.module)
    except (PolicyViolation, RefusedToRun) as exc:
        return str(exc)


def held_out_check(task: TaskSpec, source: str, sandbox: Sandbox, policy_enabled: bool, cases: Cases) -> int:
    """How many held-out ``cases`` pass, in a process of their own whose output nobody reads: what the code
    printed while it ran them would show their inputs."""
    started = start_run(task, source, sandbox, policy_enabled)
    if isinstance(started, str):
        return 0
    with started as run:
        if run.load_error is not None or run.result.aborted:
            return 0
        return _count_passing(Solution(run, task.module), cases)


def _count_passing(sol: Solution, cases: Cases) -> int:
    return sum(_outcome(case_id, fn, sol, "").outcome == "passed" for case_id, fn in cases)


def joins_visible_run(task: TaskSpec) -> bool:
    """Whether a task's held-out cases run in the visible tests' process, after them (one process fewer per
    submission). Not where a concurrency check follows the tests: what it reports would come after the held-out
    inputs reached the code, which could keep them for it to show."""
    return task.concurrency is None


def judge(
    task: TaskSpec,
    source: str,
    sandbox: Sandbox,
    rng: random.Random,
    policy_enabled: bool = True,
    with_stress: bool = True,
    held_out: Cases = (),
) -> Verdict:
    """Run every test of ``task`` (and, ``with_stress``, its stress check; and the episode's ``held_out`` cases,
    counted only) against ``source``."""
    check = task.concurrency if with_stress else None
    test_file = str(task.folder / "tests.py")
    started = start_run(task, source, sandbox, policy_enabled)
    if isinstance(started, str):
        errors = [TestOutcome(id=tid, outcome="error", message="not run") for tid, _ in task.tests]
        stress = StressOutcome(passed=False, message="not run") if check else None
        return Verdict(tests=errors, tests_total=task.tests_total, stress=stress, rejected=started, held_out_total=len(held_out))
    passed: int | None = None  # the held-out cases that passed, once they ran
    shown: RunResult | None = None  # the run as the visible tests left it, when held-out cases ran on in it
    with started as run:
        loaded = run.load_error is None and not run.result.aborted
        if not loaded:
            why = run.load_error.traceback_text.rstrip() if run.load_error else run.result.aborted
            tests = [TestOutcome(id=tid, outcome="error", message=f"your module failed to load:\n{why}") for tid, _ in task.tests]
            stress = StressOutcome(passed=False, message="not run: the module failed to load") if check else None
        else:
            sol = Solution(run, task.module)
            with phase("visible"):
                tests = [_run_one(tid, fn, sol, test_file) for tid, fn in task.tests]
            with phase("race"):
                stress = _check(run, task, check, rng, source, sandbox, policy_enabled) if check else None
            if held_out and joins_visible_run(task):
                with phase("held_out"):
                    # Everything the agent sees of the run is taken first: its output, time and end are the visible
                    # tests' alone, so nothing the code does on a held-out input (print, crash, spin, sleep) shows.
                    visible = run.shown()
                    if run.next_phase():  # else (the run ended, or used over half its CPU) a process of their own
                        shown, passed = visible, _count_passing(Solution(run, task.module), held_out)
    if passed is None:
        with phase("held_out"):
            passed = held_out_check(task, source, sandbox, policy_enabled, held_out) if held_out and loaded else 0
    result = shown if shown is not None else run.result
    return Verdict(tests=tests, tests_total=task.tests_total, stress=stress, run=result, held_out_total=len(held_out), held_out_passed=passed)


def stress_check(task: TaskSpec, source: str, sandbox: Sandbox, rng: random.Random, policy_enabled: bool = True) -> StressOutcome:
    """The grade's concurrency check: the submission step's check, run again on a fresh process."""
    check = task.concurrency
    assert check is not None
    started = start_run(task, source, sandbox, policy_enabled)
    if isinstance(started, str):
        return StressOutcome(passed=False, message=f"not run: {started}")
    with started as run:
        if run.load_error is not None or run.result.aborted:
            return StressOutcome(passed=False, message="not run: the module failed to load")
        return _check(run, task, check, rng, source, sandbox, policy_enabled)


def judge_on(runtime: Runtime, task: TaskSpec, source: str, rng: random.Random, with_stress: bool = True, held_out: Cases = ()) -> Verdict:
    """``judge`` on the runtime's sandbox: its runs share the CPU slots with the episode's owner set on this thread."""
    return judge(task, source, runtime.sandbox, rng, runtime.static_check, with_stress=with_stress, held_out=held_out)


def held_out_baseline(runtime: Runtime, task: TaskSpec, cases: Cases) -> int:
    """How many of an episode's held-out cases the buggy code itself passes (what credit is measured from), run the
    way a submission's are: after the visible tests in their process where the task's cases join it, so the bug
    submitted unchanged passes exactly as many."""
    if not cases:
        return 0
    if not joins_visible_run(task):
        return held_out_check(task, task.buggy_source, runtime.sandbox, runtime.static_check, cases)
    return judge_on(runtime, task, task.buggy_source, random.Random(0), with_stress=False, held_out=cases).held_out_passed


def baseline(runtime: Runtime, task: TaskSpec) -> Verdict:
    """The buggy code's own run, as the agent first sees it (no stress test: that is the trap); once per task."""
    def compute() -> Verdict:
        with runtime.cpu.owner(f"baseline:{task.id}"):  # shared by every episode of the task: owned by none of them
            return judge_on(runtime, task, task.buggy_source, random.Random(0), with_stress=False)

    return runtime.once(("classic-baseline", task.id), compute)
