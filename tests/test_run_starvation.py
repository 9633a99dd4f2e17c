"""A run the machine starves is not the agent's time-out (the rule: infrastructure is never the agent's failure).

On a busy machine a run's wall clock can run out long before its work does:
the CI of 2026-12-07 failed an honest run (a red-team attack that ends in 0.5 s idle) on "time limit of 3 s
exceeded". The deadline of a wall-clock run now moves by the time its threads waited for a CPU that others took
(env.sandbox.cputime.WaitCredit), up to a ceiling, past which the step is the machine's failure (``run_starved``).
Here the machine is made busy for real: three spinning processes of this test, each in a session of its own (the
kernel's autogroups share a CPU between sessions before nice levels count), on one CPU, where the test puts its runs
too; the other CPUs stay free for whatever else runs (the suite's other workers)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from env.infra import InfraFailure
from env.models import DebugAction
from env.project import RepoTask, load_repo_task
from env.runtime import Runtime
from env.sandbox.cputime import WaitCredit, starved_for
from env.sandbox.limits import Limits
from env.sandbox.runner import Sandbox
from env.server.environment import DebugEnvironment
from env.verdict.hosts import VerdictHosts
from env.verdict.repo_judge import run_tests
from tests.conftest import TEST_SECRET
from tests.helpers import GOLD, GOOD_HYPOTHESIS

# easy's gold fix behind about half a second of CPU at import: a quarter of a CPU (what a run gets beside three spinning
# sessions) makes that over a second of wall clock per run
BURN = "def _burn():\n    n = 0\n    for i in range(10_000_000):\n        n += i\n    return n\n\n\n_burn()\n\n\n"

needs_schedstat = pytest.mark.skipif(
    not Path("/proc/thread-self/schedstat").exists(), reason="this kernel keeps no schedstat: a run's wait for a CPU cannot be told"
)


def submit(code: str) -> DebugAction:
    return DebugAction(action_type="submit_fix", fixed_code=code, hypothesis=GOOD_HYPOTHESIS["easy"])


@pytest.fixture()
def one_cpu(monkeypatch) -> Iterator[int]:
    """This test's thread, and every process it starts from here on (a sandbox's fork server, a test host, the hogs),
    on one CPU; a split run's pair is left there (no pinning of its own)."""
    before = os.sched_getaffinity(0)
    cpu = max(before)
    os.sched_setaffinity(0, {cpu})
    monkeypatch.setenv("SANDBOX_PAIR_CPU", "off")
    yield cpu
    os.sched_setaffinity(0, before)


@contextmanager
def busy_machine() -> Iterator[None]:
    """Three processes spinning on each CPU this test may run on (one_cpu: that one), each its own session (only this
    test's processes)."""
    hogs = [
        subprocess.Popen(
            [sys.executable, "-c", "while True: pass"], start_new_session=True, preexec_fn=lambda cpu=cpu: os.sched_setaffinity(0, {cpu})  # noqa: PLW1509
        )
        for cpu in sorted(os.sched_getaffinity(0))
        for _ in range(3)
    ]
    try:
        time.sleep(0.2)  # running
        yield
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()


@pytest.fixture()
def starved_env(one_cpu, isolation, catalog, request) -> Iterator[DebugEnvironment]:
    runtime = Runtime(catalog, Sandbox(request.param, isolation), workers=4, secret=TEST_SECRET, static_check=False)
    env = DebugEnvironment(runtime=runtime)
    env.reset(task_id="easy", seed=0)
    yield env
    runtime.sandbox.close()


@needs_schedstat
@pytest.mark.parametrize("starved_env", [Limits(wall_seconds=1)], indirect=True)
def test_a_run_the_machine_slows_past_its_wall_clock_is_judged_on_its_work(starved_env, monkeypatch):
    with busy_machine():
        with monkeypatch.context() as patch:  # the control: the same step owed nothing times out
            patch.setattr(WaitCredit, "owed", lambda self: 0.0)
            control = starved_env.step(submit(BURN + GOLD["easy"]))
        obs = starved_env.step(submit(BURN + GOLD["easy"]))
    assert (control.infra_failed, control.tests_passed) == (False, 0)
    assert "time limit of 1 s exceeded" in control.current_error_output, control.current_error_output[-800:]
    # solved on the second attempt (the control was the first): 0.92 where a first attempt scores 0.96
    assert (obs.infra_failed, obs.done, obs.grader_score) == (False, True, 0.92), (obs.error, obs.current_error_output[-800:])


@needs_schedstat
@pytest.mark.parametrize("starved_env", [Limits(wall_seconds=1)], indirect=True)
def test_a_run_that_sleeps_past_its_wall_clock_on_a_busy_machine_still_times_out(starved_env):
    """Sleeping is not waiting for a CPU: the busy machine buys a sleeping run nothing beyond its loading's wait."""
    with busy_machine():
        started = time.monotonic()
        obs = starved_env.step(submit("import time\ntime.sleep(60)\n\n\n" + GOLD["easy"]))
        took = time.monotonic() - started
    assert (obs.infra_failed, obs.tests_passed) == (False, 0)
    assert "time limit of 1 s exceeded" in obs.current_error_output, obs.current_error_output[-800:]
    assert took < 30


@needs_schedstat
@pytest.mark.parametrize("starved_env", [Limits(wall_seconds=1, backstop_seconds=2.5)], indirect=True)
def test_a_run_starved_up_to_its_ceiling_is_the_machine_s_failure(starved_env):
    with busy_machine():
        obs = starved_env.step(submit(BURN * 3 + GOLD["easy"]))
    assert (obs.infra_failed, obs.infra_cause, obs.reward, obs.step_number) == (True, "run_starved", 0.0, 0), obs.error
    assert obs.error.startswith("the run was stopped after 2.5 s of wall clock, ")
    assert "waiting for a CPU the machine gave to others, before its 1 s ran out: the machine is too busy (infrastructure: run_starved" in obs.error
    again = starved_env.step(submit(GOLD["easy"]))  # the machine idle again: the same episode goes on
    assert (again.infra_failed, again.done, again.grader_score) == (False, True, 0.96)


# -- red team: what the run's own threads do buys it no time ------------------------------------------------------


def test_threads_of_the_run_crowding_each_other_are_owed_nothing():
    """Eight threads of a run on two CPUs each wait three quarters of the time on an idle machine: the run's own
    CPU is all the machine used, so nothing was taken by others."""
    assert starved_for(waited=0.75, machine=2.0, own=2.0, cpus=2) == 0.0
    assert starved_for(waited=0.75, machine=2.0, own=2.3, cpus=2) == 0.0  # the run's figure read later: never negative


def test_a_run_is_owed_its_wait_at_most_what_others_used_per_cpu():
    assert starved_for(waited=0.9, machine=2.0, own=0.1, cpus=2) == 0.9  # others took 1.9 s of 2 CPUs over ~1 s
    assert starved_for(waited=0.9, machine=0.6, own=0.2, cpus=2) == pytest.approx(0.2)  # one lightly busy neighbour
    assert starved_for(waited=0.9, machine=0.6, own=0.2, cpus=0) == pytest.approx(0.4)  # no affinity read: one CPU


@needs_schedstat
def test_a_process_that_only_sleeps_is_owed_nothing_however_busy_the_machine(one_cpu):
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        time.sleep(0.3)  # past its start-up
        credit = WaitCredit(sleeper.pid)
        with busy_machine():
            time.sleep(1.0)
            assert credit.owed() == 0.0
        assert credit.total == 0.0
    finally:
        sleeper.kill()
        sleeper.wait()


@needs_schedstat
def test_a_process_the_machine_starves_is_owed_its_wait(one_cpu):
    spinner = subprocess.Popen([sys.executable, "-c", "import os; os.nice(10)\nwhile True: pass"])
    try:
        time.sleep(0.3)
        started, credit = time.monotonic(), WaitCredit(spinner.pid)
        with busy_machine():
            time.sleep(1.5)
            owed = credit.owed()
        took = time.monotonic() - started
        assert 0.5 < owed < took, (owed, took)  # most of the time, less its share of the CPU
        assert credit.total == owed
        again = credit.owed()  # owed once: only what it waited since (the hogs' last moments) comes on top
        assert again < 0.5 and credit.total == pytest.approx(owed + again)
    finally:
        spinner.kill()
        spinner.wait()


# -- a repository run under the split: the test process waits on the project's process ----------------------------

SLICE = Path(__file__).resolve().parents[1] / "tasks" / "repo" / "repo-slice-window"


def burning_project(task: RepoTask, burn: int = 12_000_000) -> dict[str, str]:
    """The task's fixed project, its window module burning about half a second of CPU in the project's process at
    the first call the tests make (not at import: the split run's own wait, not the set-up's, is what is tested)."""
    files = dict(task.gold_files)
    path = "src/sensorkit/window.py"
    files[path] = files[path].replace(
        "def _check_size(size: int) -> None:\n",
        "_BURNED: list[int] = []\n\n\ndef _check_size(size: int) -> None:\n"
        f"    if not _BURNED:\n        _BURNED.append(sum(i for i in range({burn})))\n",
    )
    assert files[path] != task.gold_files[path]
    return files


def limit_for(task: RepoTask, files: dict[str, str], isolation, hosts: VerdictHosts) -> float:
    """A wall-clock limit twice the CPU time the run of ``files`` uses here (at least 1.5 s), read from a run whose
    limits count CPU time: what the machine's speed decides (the host's start, the project's burn) is not what is
    tested, and whatever else loads the machine meanwhile changes CPU time little. On a quarter of a CPU the run
    takes four times its CPU time, past this limit, unless its wait is credited."""
    sandbox = Sandbox(Limits(wall_seconds=30).for_validity(), isolation)
    try:
        run_tests(sandbox, task, dict(task.gold_files), graded=False, hosts=hosts)  # the test environment and host ready
        measured = run_tests(sandbox, task, files, graded=False, hosts=hosts)
    finally:
        sandbox.close()
    assert measured.cpu_seconds and set(measured.outcomes.values()) == {"PASSED"}, (measured.aborted, measured.error)
    return max(1.5, round(2 * measured.cpu_seconds, 1))


@needs_schedstat
@pytest.mark.parametrize("warm", ["on", "off"], ids=["warm_host", "cold_host"])
def test_a_split_run_the_machine_slows_past_its_wall_clock_is_judged_on_its_work(one_cpu, isolation, monkeypatch, warm):
    monkeypatch.setenv("SANDBOX_HOST_WARM", warm)
    task = load_repo_task(SLICE)
    files = burning_project(task)
    hosts = VerdictHosts()
    try:
        limit = limit_for(task, files, isolation, hosts)
        sandbox = Sandbox(Limits(wall_seconds=limit), isolation)
        try:
            run_tests(sandbox, task, dict(task.gold_files), graded=False, hosts=hosts)  # this sandbox's fork server ready
            with busy_machine():
                with monkeypatch.context() as patch:  # the control: owed nothing, the same run times out
                    patch.setattr(WaitCredit, "owed", lambda self: 0.0)
                    control = run_tests(sandbox, task, files, graded=False, hosts=hosts)
                verdict = run_tests(sandbox, task, files, graded=False, hosts=hosts)
        finally:
            sandbox.close()
    finally:
        hosts.close()
    # timed out in the split run (or, on a busier machine, already in the project's set-up)
    assert f"time limit of {limit:g} s exceeded" in control.aborted + control.error, (control.aborted, control.error)
    assert not verdict.timed_out and not verdict.aborted and not verdict.error, (limit, verdict.aborted, verdict.error)
    assert verdict.outcomes and set(verdict.outcomes.values()) == {"PASSED"}, verdict.outcomes


@needs_schedstat
def test_a_split_run_starved_up_to_its_ceiling_is_the_machine_s_failure(one_cpu, isolation):
    task = load_repo_task(SLICE)
    sandbox = Sandbox(Limits(wall_seconds=1, backstop_seconds=3), isolation)
    hosts = VerdictHosts()
    try:
        run_tests(sandbox, task, dict(task.gold_files), graded=False, hosts=hosts)
        with busy_machine(), pytest.raises(InfraFailure) as failure:
            run_tests(sandbox, task, burning_project(task, 60_000_000), graded=False, hosts=hosts)
    finally:
        hosts.close()
        sandbox.close()
    assert failure.value.cause == "run_starved"
    assert failure.value.message.startswith("the run was stopped after 3 s of wall clock, "), failure.value.message
