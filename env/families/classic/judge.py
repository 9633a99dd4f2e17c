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

from env.families.classic.remote import Solution
from env.families.classic.task import StressSpec, TaskSpec
from env.runtime import Runtime
from env.sandbox.policy import PolicyViolation, check_source
from env.sandbox.runner import RefusedToRun, RemoteError, RunAborted, RunResult, Sandbox, SandboxRun


class TestOutcome(BaseModel):
    __test__ = False  # not a pytest class

    id: str
    outcome: Literal["passed", "failed", "error"]
    message: str = ""
    calls: int = Field(0, description="Calls the test made into the submitted code")


class StressOutcome(BaseModel):
    passed: bool
    schedules: int = Field(0, description="Interleavings the explorer ran")
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
            lines.append(f"concurrency check ... {'PASSED' if self.stress.passed else 'FAILED'}")
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


# -- the concurrency check: controlled interleavings (env/sandbox/explorer.py runs them in the child) --

THREAD_NAMES = "ABCDEF"
OPS = ("increment", "decrement")


def explore_plan(spec: StressSpec, rng: random.Random) -> dict[str, Any]:
    """The scenarios of one check. The sweeps are fixed (every one-preemption interleaving of two threads:
    a lost update is always among them); the PCT scenarios, the starting counts and the thread names come
    from ``rng``, which the episode derives from the server's secret."""
    scenarios: list[dict[str, Any]] = [
        {"pre": rng.randint(0, 2), "threads": [["increment"], ["increment"]], "sweep": True},
        {"pre": 2 + rng.randint(0, 2), "threads": [["decrement"], ["decrement"]], "sweep": True},
        {"pre": 1 + rng.randint(0, 2), "threads": [["increment"], ["decrement"]], "sweep": True},
    ]
    for _ in range(spec.random_scenarios):
        threads = [[rng.choice(OPS) for _ in range(rng.randint(*spec.ops))] for _ in range(spec.threads)]
        decrements = sum(t.count("decrement") for t in threads)
        priorities = rng.sample(range(1, spec.threads + 1), spec.threads)
        changes = [rng.random() for _ in range(rng.choice((1, 2)))]  # PCT depth 2 or 3
        scenarios.append({"pre": decrements + rng.randint(0, 1), "threads": threads, "priorities": priorities, "changes": changes})
    return {"cls": spec.cls, "scenarios": scenarios, "names_seed": rng.getrandbits(32)}


def _expected_count(scenario: dict[str, Any]) -> int:
    ops = [op for thread in scenario["threads"] for op in thread]
    return int(scenario["pre"]) + ops.count("increment") - ops.count("decrement")


def _problem(observation: dict[str, Any], scenario: dict[str, Any]) -> str:
    """What a correct object would not have done in this schedule ("" when nothing)."""
    if observation.get("stopped"):
        return str(observation["stopped"])
    if observation.get("errors"):
        return "worker threads raised: " + "; ".join(map(str, observation["errors"]))[:600]
    count = observation.get("count")
    if type(count) is not int:
        return f"get_count() returned {count!r}, not an int"
    if count != _expected_count(scenario):
        return "updates were lost under concurrency (the final count is wrong)"
    results = observation.get("results") or []
    returns = [r[1] for thread in results if isinstance(thread, list) for r in thread if isinstance(r, list) and len(r) == 2 and r[0] == "increment"]
    if not all(type(v) is int for v in returns):
        return "increment() did not return the new count"
    if observation.get("peak") != max([int(scenario["pre"]), *returns]):
        return "the peak lost an update under concurrency (get_peak() is wrong)"
    return ""


def _interleaving(observation: dict[str, Any], source: str) -> list[str]:
    """The switches of a failing schedule, in the submission's own lines."""
    lines = source.splitlines()
    steps = []
    for entry in (observation.get("log") or [])[:16]:
        if not (isinstance(entry, list) and len(entry) == 5 and all(type(entry[i]) is int for i in (0, 1, 4))):
            continue
        frm, line, function, note, to = entry
        if not (0 <= frm < len(THREAD_NAMES) and 0 <= to < len(THREAD_NAMES)):
            continue
        if note == "finished":
            steps.append(f"thread {THREAD_NAMES[frm]} finished; thread {THREAD_NAMES[to]} runs")
            continue
        code = lines[line - 1].strip() if 0 < line <= len(lines) else ""
        where = f"line {line}" + (f" in {function}" if isinstance(function, str) and function else "")
        why = f" ({note})" if isinstance(note, str) and note else ""
        steps.append(f"thread {THREAD_NAMES[frm]} paused at {where}{why}: `{code[:120]}`; thread {THREAD_NAMES[to]} runs")
    return steps


def judge_exploration(plan: dict[str, Any], reply: Any, source: str) -> StressOutcome:
    """The verdict on the explorer's observations: every schedule judged here, every scenario accounted for."""
    if not isinstance(reply, dict) or not isinstance(reply.get("schedules"), list):
        return StressOutcome(passed=False, message="the concurrency check returned no observations")
    if reply.get("tampered"):
        what = ", ".join(map(str, reply["tampered"]))[:200]
        return StressOutcome(passed=False, message=f"the code tried to change how it is traced ({what}): no credit")
    scenarios = plan["scenarios"]
    seen: dict[int, list[dict[str, Any]]] = {}
    for observation in reply["schedules"]:
        index = observation.get("scenario") if isinstance(observation, dict) else None
        if type(index) is not int or not 0 <= index < len(scenarios):
            return StressOutcome(passed=False, message="the concurrency check returned a malformed observation")
        scenario = scenarios[index]
        seen.setdefault(index, []).append(observation)
        problem = _problem(observation, scenario)
        if problem:
            who = "; ".join(f"thread {THREAD_NAMES[i]}: {', '.join(t)}" for i, t in enumerate(scenario["threads"]))
            steps = _interleaving(observation, source)
            text = f"{len(scenario['threads'])} threads ({who}) on one shared counter, interleaved by a controlled scheduler: {problem}."
            if steps:
                text += "\nThe interleaving, in your code's lines:\n" + "\n".join(f"  {n}. {step}" for n, step in enumerate(steps, 1))
            return StressOutcome(passed=False, schedules=len(reply["schedules"]), message=text)
    for index, scenario in enumerate(scenarios):
        runs = seen.get(index, [])
        if not runs or (scenario.get("sweep") and not _swept(runs)):
            return StressOutcome(passed=False, message="the concurrency check did not run every schedule it was asked to")
    return StressOutcome(passed=True, schedules=len(reply["schedules"]), message=f"{len(reply['schedules'])} interleavings: no update was lost")


def _swept(runs: list[dict[str, Any]]) -> bool:
    """Both orders, each with a preemption at every point of its first thread."""
    for first in (0, 1):
        mine = [r for r in runs if r.get("first") == first]
        lengths = [r.get("first_steps") for r in mine if r.get("preempt_at") == 0]
        if not lengths or type(lengths[0]) is not int:
            return False
        if {r.get("preempt_at") for r in mine} != set(range(lengths[0] + 1)):
            return False
    return True


def _check(run: SandboxRun, spec: StressSpec, rng: random.Random, source: str) -> StressOutcome:
    plan = explore_plan(spec, rng)
    try:
        reply = run.explore(plan)
    except RemoteError as exc:
        return StressOutcome(passed=False, message=f"the concurrency check could not run: the code raised\n{exc.traceback_text}".rstrip())
    except RunAborted as exc:
        return StressOutcome(passed=False, message=f"the concurrency check could not finish: {exc}")
    return judge_exploration(plan, reply, source)


def _start(task: TaskSpec, source: str, sandbox: Sandbox, policy_enabled: bool) -> SandboxRun | str:
    try:
        check_source(source, task.allowed_imports, policy_enabled)
        return sandbox.start(source, task.filename, task.module, explore=task.stress is not None)
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
            stress = _check(run, stress_spec, rng, source) if stress_spec else None
    return Verdict(tests=tests, tests_total=task.tests_total, stress=stress, run=run.result)


def stress_check(task: TaskSpec, source: str, sandbox: Sandbox, rng: random.Random, policy_enabled: bool = True) -> StressOutcome:
    """The grade's concurrency check: the submission step's check, run again on a fresh process."""
    assert task.stress is not None
    started = _start(task, source, sandbox, policy_enabled)
    if isinstance(started, str):
        return StressOutcome(passed=False, message=f"not run: {started}")
    with started as run:
        if run.load_error is not None or run.result.aborted:
            return StressOutcome(passed=False, message="not run: the module failed to load")
        return _check(run, task.stress, rng, source)


def judge_on(runtime: Runtime, task: TaskSpec, source: str, rng: random.Random, with_stress: bool = True) -> Verdict:
    """``judge`` on the runtime's sandbox, within its judging slots."""
    with runtime.judging:  # the sandbox's wall clock starts inside, so waiting here never counts against a run
        return judge(task, source, runtime.sandbox, rng, runtime.static_check, with_stress=with_stress)


def baseline(runtime: Runtime, task: TaskSpec) -> Verdict:
    """The buggy code's own run, as the agent first sees it (no stress test: that is the trap); once per task."""
    return runtime.once(("classic-baseline", task.id), lambda: judge_on(runtime, task, task.buggy_source, random.Random(0), with_stress=False))
