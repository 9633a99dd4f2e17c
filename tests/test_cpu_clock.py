"""Validity does not depend on load: the runs that decide whether a task, a test or a mutant is valid count CPU time
(``Limits.for_validity``), the wall clock is only a backstop, and a run the backstop stops under its CPU limit is the
machine's fault, never the task's. The same placement, validation and screening idle and beside busy neighbours."""

from __future__ import annotations

import os
import random
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from env.authoring.settle import settle
from env.authoring.validate import validate_task
from env.families.catalog import TaskCatalog
from env.families.classic import judge as judge_module
from env.families.classic.concurrency import explore_plan
from env.project import load_repo_task
from env.runtime import Runtime
from env.sandbox.cputime import own_seconds
from env.sandbox.isolation import Isolation
from env.sandbox.limits import Limits
from env.sandbox.runner import RunAborted, Sandbox
from env.verdict.busy import MachineBusy, until_decided
from env.verdict.outcome import RepoVerdict
from env.verdict.repo_judge import run_tests
from env.verdict.sandboxed import run_sandboxed
from env.verdict.testenv import ensure
from tests import repo_fixture
from tests.helpers import CATALOG

BUDGET = 1.0  # CPU seconds a run's processes may use together; every run below takes longer than that of wall clock
PAUSE = 1.2  # a test that waits this long (no CPU): under a wall-clock limit of BUDGET its run would time out
LIB = "def add(a, b):\n    return a - b\n\n\ndef scale(xs, k):\n    return [x * k for x in xs]\n"
GOLD = LIB.replace("a - b", "a + b")
TESTS = (
    "import time\n\nimport lib\n\n\ndef test_add():\n    assert lib.add(2, 3) == 5\n\n\n"
    f"def test_scale_after_a_pause():\n    time.sleep({PAUSE})\n    assert lib.scale([1, 2], 3) == [3, 6]\n"
)
ADD, SCALE = "tests/test_calc.py::test_add", "tests/test_calc.py::test_scale_after_a_pause"
MUTANT = GOLD.replace("x * k", "x + k")  # what synthesis would plant in scale: the paused test catches it
BUSY = re.compile(
    r"the machine was too busy: the run was stopped by its wall-clock backstop of 1 s having used 0\.\d s of its 0\.5 s of "
    r"CPU time \(an infrastructure fault, not the run's outcome\)"
)


@pytest.fixture
def sandbox(isolation: Isolation) -> Sandbox:
    return Sandbox(Limits(wall_seconds=BUDGET, cpu_seconds=5).for_validity(), isolation, warm=False)


def test_a_run_deciding_validity_is_stopped_by_its_cpu_time_and_not_by_the_wall_clock(isolation: Isolation):
    limits = Limits(wall_seconds=0.5, cpu_seconds=5, backstop_seconds=30).for_validity()
    assert (limits.deadline_seconds, limits.cpu_budget) == (30, 0.5)
    assert (Limits(wall_seconds=3).for_validity().deadline_seconds, Limits().for_validity().deadline_seconds) == (60, 100)  # the backstop
    assert (Limits().deadline_seconds, Limits().cpu_budget) == (10, None)  # an agent's run: the wall clock, as ever
    source = "import time\n\n\ndef nap(s):\n    time.sleep(s)\n    return s\n\n\ndef spin():\n    while True:\n        pass\n"
    sandbox = Sandbox(limits, isolation, warm=False)
    with sandbox.start(source, "m.py", "m") as run:
        assert run.call("nap", 1.0) == 1.0  # twice its limit in wall clock, using no CPU
    assert (run.result.timed_out, run.result.busy, run.result.aborted) == (False, False, "")
    with sandbox.start(source, "m.py", "m") as run, pytest.raises(RunAborted) as stopped:
        run.call("spin")
    assert str(stopped.value) == "CPU time limit of 0.5 s exceeded (the run's processes together)"
    assert (run.result.timed_out, run.result.busy) == (True, False)
    assert run.result.cpu_seconds is not None and 0.5 < run.result.cpu_seconds < 1.5  # stopped within a few samples


def test_the_backstop_stopping_a_run_under_its_cpu_limit_is_the_machine_s_fault(isolation: Isolation):
    sandbox = Sandbox(Limits(wall_seconds=0.5, cpu_seconds=5, backstop_seconds=1).for_validity(), isolation, warm=False)
    with sandbox.start("import time\n\n\ndef nap():\n    time.sleep(5)\n", "m.py", "m") as run, pytest.raises(RunAborted) as stopped:
        run.call("nap")  # a wait without end looks like a starved run: the backstop cannot tell them apart
    assert BUSY.fullmatch(str(stopped.value)), str(stopped.value)
    assert (run.result.busy, run.result.timed_out, run.result.aborted) == (True, False, str(stopped.value))
    calls: list[str] = []

    def starved() -> RepoVerdict:
        calls.append("run")
        return RepoVerdict(busy=str(stopped.value))

    with pytest.raises(MachineBusy) as raised:
        until_decided(starved)
    assert (str(raised.value), calls) == (f"{stopped.value}; in each of 2 attempts", ["run", "run"])
    answers = iter([RepoVerdict(busy="starved"), RepoVerdict(outcomes={ADD: "PASSED"})])
    assert until_decided(lambda: next(answers)).outcomes == {ADD: "PASSED"}  # the second attempt decides


def test_the_split_counts_the_test_process_and_the_project_s_process_together(sandbox: Sandbox, tmp_path: Path):
    spins = "def test_spins_here():\n    while True:\n        pass\n"
    files = {"lib/__init__.py": LIB, "tests/test_spin.py": spins}
    task = load_repo_task(
        repo_fixture.write_task(tmp_path / "t", files, files, FAIL_TO_PASS=["tests/test_spin.py::test_spins_here"], PASS_TO_PASS=[])
    )
    verdict = run_tests(sandbox, task, files)  # the test process spins: no sandbox limit binds it, the run's budget does
    assert (verdict.outcomes, verdict.timed_out, verdict.busy) == ({}, True, "")
    assert verdict.aborted == "the test run was stopped: CPU time limit of 1 s exceeded (the run's processes together)"


def test_a_split_run_whose_project_set_up_the_machine_starved_is_busy_not_an_error(isolation: Isolation, tmp_path: Path):
    files = {"lib/__init__.py": LIB, "tests/test_calc.py": TESTS}
    task = load_repo_task(repo_fixture.write_task(tmp_path / "t", files, files, FAIL_TO_PASS=[ADD], PASS_TO_PASS=[]))
    starved = Sandbox(Limits(wall_seconds=5, cpu_seconds=5, backstop_seconds=0.01).for_validity(), isolation, warm=False)
    verdict = run_tests(starved, task, files)  # stopped before its project was set up: no outcome, no error of the task's
    assert (verdict.outcomes, verdict.error, verdict.timed_out) == ({}, "", False)
    assert re.fullmatch(r"the machine was too busy: the run was stopped by its wall-clock backstop of 0\.01 s having used "
                        r"0\.\d+ s of its 5 s of CPU time \(an infrastructure fault, not the run's outcome\)", verdict.busy), verdict.busy  # fmt: skip
    assert verdict.aborted == verdict.busy
    with pytest.raises(MachineBusy, match="; in each of 2 attempts$"):
        until_decided(lambda: run_tests(starved, task, files))


def test_the_race_check_s_real_threads_count_cpu_time_where_validity_is_decided(isolation: Isolation):
    hard = CATALOG.get("hard")
    assert hard.stress is not None
    plan = explore_plan(hard.stress, random.Random(7))
    plan["hammer"].update(cpu=True, backstop=1.0)  # what judge's race check adds where the sandbox counts CPU time
    sandbox = Sandbox(Limits().for_validity(), isolation, warm=False)
    assert judge_module.real_threads_check(hard, hard.gold_source, sandbox, True, plan) == ""
    wait = "        if threading.current_thread() is not threading.main_thread():\n            threading.Event().wait()\n"
    waits = hard.gold_source.replace("    def increment(self):\n", "    def increment(self):\n" + wait, 1)  # its threads, not its warm-up
    assert waits != hard.gold_source
    assert judge_module.real_threads_check(hard, waits, sandbox, False, plan) == (
        "the machine was too busy: 4 real threads calling increment had used less than their 2 s of CPU time when the wall-clock "
        "backstop of 1 s stopped them (an infrastructure fault, not the code's outcome)"
    )  # threads that wait for ever use no CPU time: the backstop cannot tell them from starved ones


@pytest.fixture
def neighbours() -> Iterator[tuple[list[subprocess.Popen[bytes]], float]]:
    """cores + 1 processes of this test's own, each burning a CPU (at the priority of everything else here), and when
    they started."""
    started = time.monotonic()
    burners = [subprocess.Popen([sys.executable, "-c", "while True:\n    pass\n"]) for _ in range((os.cpu_count() or 1) + 1)]
    try:
        yield burners, started
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()


def _decisions(sandbox: Sandbox, folder: Path) -> tuple[dict[str, object], float]:
    """Placement (import's settling), validation and a mutant's screening of the task in ``folder``: what each decided,
    and the shortest wall time one of them took."""
    took: list[float] = []

    def timed(started: float) -> None:
        took.append(time.monotonic() - started)

    started = time.monotonic()
    settled = settle(sandbox, folder)
    timed(started)
    task = settled.task
    started = time.monotonic()
    report = validate_task(Runtime(TaskCatalog([]), sandbox, workers=2), task, runs=1)
    timed(started)
    started = time.monotonic()
    screen = run_sandboxed(sandbox, ensure([]), task, {**task.gold_files, "lib/__init__.py": MUTANT}, task.visible_tests, [SCALE])
    timed(started)
    return {
        "placement": (settled.placement.split, settled.placement.sandboxed, settled.placement.failing, settled.dropped, settled.problems),
        "settled": (settled.busy, task.pass_to_pass, task.sandboxed),
        "validation": (report.ok, report.busy, [(c.name, c.ok, c.detail) for c in report.checks]),
        "screening": (screen.outcomes, screen.timed_out, screen.busy, screen.error),
    }, min(took)


EXPECTED = {
    "placement": ([ADD, SCALE], [], {}, {}, []),
    "settled": ("", [SCALE], []),
    "validation": (
        True, "",
        [("gold patch applies", True, ""), ("gold patch changes only source files", True, ""), ("every run set up", True, ""),
         ("every listed test ran", True, ""), ("buggy state fails every FAIL_TO_PASS test", True, ""),
         ("buggy state passes every PASS_TO_PASS test", True, ""), ("gold patch passes every test", True, ""),
         ("identical results over 1 runs", True, ""), ("no test passes vacuously", True, "")],
    ),
    "screening": ({SCALE: "FAILED"}, False, "", ""),
}  # fmt: skip


def test_placement_validation_and_screening_decide_the_same_idle_and_beside_busy_neighbours(
    sandbox: Sandbox, tmp_path: Path, request: pytest.FixtureRequest
):
    source = repo_fixture.write_task(tmp_path / "source", {"lib/__init__.py": LIB, "tests/test_calc.py": TESTS},
                                     {"lib/__init__.py": GOLD, "tests/test_calc.py": TESTS}, FAIL_TO_PASS=[ADD], PASS_TO_PASS=[SCALE])  # fmt: skip
    shutil.copytree(source, tmp_path / "idle")
    idle, idle_shortest = _decisions(sandbox, tmp_path / "idle")
    assert idle == EXPECTED
    burners, started = request.getfixturevalue("neighbours")
    shutil.copytree(source, tmp_path / "busy")
    busy, busy_shortest = _decisions(sandbox, tmp_path / "busy")
    assert busy == idle
    # Every decision took longer than its runs' limit of BUDGET s (each run waits PAUSE s in a test): a wall-clock limit
    # would have stopped every run, and refused the task, idle as well as busy. CPU time decided.
    assert min(idle_shortest, busy_shortest) > BUDGET
    # The neighbours were ours and busy all along: each still there, and computing or waiting for a CPU (never
    # sleeping) for almost all of its life, however much of the machine other processes took meanwhile.
    assert all(b.poll() is None for b in burners)
    wanted = [_wanted_cpu(b.pid) for b in burners]
    assert all(w > 0.8 * (time.monotonic() - started) for w in wanted), (wanted, time.monotonic() - started)


def _wanted_cpu(pid: int) -> float:
    """The seconds a process ran or waited on a run queue (``/proc/PID/schedstat``; its CPU time where that is absent)."""
    try:
        ran, waited = Path(f"/proc/{pid}/schedstat").read_text().split()[:2]
        return (int(ran) + int(waited)) / 1e9
    except OSError:
        read = own_seconds(pid)
        return float("inf") if read is not None and read[1] > 0 else 0.0  # it computed: no more can be told here
