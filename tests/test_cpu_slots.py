"""CPU slots (env.sandbox.slots): a run holds one only while it computes, and waiting runs are served fairly across
episodes. A classic judgment, a repository test run, a ``run_bash`` command and a debugging session that only wait
give theirs back; a victim's `easy` submission stays fast while four clients submit `hard` modules that block."""

from __future__ import annotations

import random
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

import env.runtime as runtime_module
from env.config import Settings
from env.families.catalog import TaskCatalog
from env.families.classic.judge import judge_on
from env.models import DebugAction
from env.project import load_repo_task
from env.runtime import Runtime
from env.sandbox.limits import Limits
from env.sandbox.runner import Sandbox
from env.sandbox.slots import CpuSlots, cpu_seconds, current_claim
from env.server.app import build_app
from env.verdict.repo_judge import run_tests
from tests import repo_fixture
from tests.conftest import LiveServer

ROOT = Path(__file__).resolve().parents[1]
WAITS_S = 3.0  # how long the waiting runs below wait: a slot must come free well before they end


def in_thread(target, *args) -> tuple[threading.Thread, list]:
    """``target(*args)`` on a thread of its own; its result (or exception) lands in the list."""
    out: list = []

    def body() -> None:
        try:
            out.append(target(*args))
        except BaseException as exc:  # noqa: BLE001 (reported by the test)
            out.append(exc)

    thread = threading.Thread(target=body, daemon=True)
    thread.start()
    return thread, out


def as_owner(slots: CpuSlots, owner: str, work):
    def run():
        with slots.owner(owner):
            return work()

    return run


def wait_until(condition, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.01)


def slot_comes_free(slots: CpuSlots, busy_thread: threading.Thread) -> float:
    """Another owner asks for the only slot while ``busy_thread``'s run is in flight: the seconds it waited. The run
    must still be in flight when the slot is granted (else it came free by the run ending, which proves nothing)."""
    wait_until(lambda: slots.busy == 1)  # the run took its slot
    claim = slots.claim("someone else")
    waited = claim.hold()
    assert busy_thread.is_alive(), "the waiting run ended before its slot came free"
    claim.release()
    return waited


# -- the scheduler ---------------------------------------------------------------------------------------------


def test_a_free_slot_goes_to_the_owner_served_least_recently_and_each_owner_in_arrival_order():
    slots = CpuSlots(1)
    first = slots.claim("A")
    first.hold()
    order: list[str] = []
    threads = []
    for name, owner in [("a1", "A"), ("a2", "A"), ("a3", "A"), ("b1", "B"), ("c1", "C"), ("b2", "B")]:
        claim = slots.claim(owner)

        def take(claim=claim, name=name) -> None:
            claim.hold()
            order.append(name)
            claim.release()

        queued = slots.queued
        thread = threading.Thread(target=take)
        thread.start()
        threads.append(thread)
        wait_until(lambda queued=queued: slots.queued == queued + 1)  # in the queue before the next one arrives
    first.release()
    for thread in threads:
        thread.join(10)
    # B and C were never served: first, in arrival order; then A (served last before them), B, A, A
    assert order == ["b1", "c1", "a1", "b2", "a2", "a3"]
    assert (slots.busy, slots.queued, slots.granted) == (0, 0, 7)


def test_an_owner_with_many_waiting_runs_delays_anothers_first_run_by_at_most_one_run():
    slots = CpuSlots(2)
    held = [slots.claim("greedy") for _ in range(2)]
    for claim in held:
        claim.hold()
    order: list[str] = []
    lock = threading.Lock()

    def take(owner: str, name: str) -> None:
        claim = slots.claim(owner)
        claim.hold()
        with lock:
            order.append(name)
        time.sleep(0.01)
        claim.release()

    threads = []
    for i in range(8):
        queued = slots.queued
        threads.append(threading.Thread(target=take, args=("greedy", f"g{i}")))
        threads[-1].start()
        wait_until(lambda queued=queued: slots.queued == queued + 1)
    threads.append(threading.Thread(target=take, args=("victim", "victim")))
    threads[-1].start()
    wait_until(lambda: slots.queued == 9)
    held[0].release()  # one slot comes free: the victim's, though eight runs of another owner arrived before it
    wait_until(lambda: len(order) >= 1)  # not == 1: on a busy machine the next run may follow before the poll
    held[1].release()
    for thread in threads:
        thread.join(10)
    assert order[0] == "victim" and sorted(order[1:]) == [f"g{i}" for i in range(8)]


def test_slots_are_counted_and_a_claim_is_only_made_inside_an_owner():
    with pytest.raises(ValueError, match="need at least one, got 0"):
        CpuSlots(0)
    slots = CpuSlots(2)
    assert current_claim() is None  # outside any owner a run claims nothing (the CLI tools, direct judge calls)
    with slots.owner("episode-1"):
        claim = current_claim()
        assert claim is not None and claim.owner == "episode-1" and claim.slots is slots
        with slots.owner("episode-2"):  # an owner already set stays: a nested call never claims twice
            assert current_claim().owner == "episode-1"
    assert current_claim() is None


def test_the_default_is_one_slot_per_core_and_at_least_two(catalog, runtime, monkeypatch):
    monkeypatch.setattr(runtime_module.os, "cpu_count", lambda: 1)
    assert Runtime(catalog, runtime.sandbox).cpu.count == 2
    monkeypatch.setattr(runtime_module.os, "cpu_count", lambda: 8)
    assert Runtime(catalog, runtime.sandbox).cpu.count == 8
    monkeypatch.setenv("ENV_CPU_SLOTS", "3")
    assert Runtime.from_env(TaskCatalog([])).cpu.count == 3


# -- measuring what a run's processes use ----------------------------------------------------------------------


def test_cpu_seconds_counts_a_process_and_everything_below_it_and_not_a_sleeper():
    spinner = (
        "import subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time\\nend = time.process_time() + 0.4\\n"
        "while time.process_time() < end: pass\\ntime.sleep(60)'])\n"
        "time.sleep(60)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", spinner], start_new_session=True)
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True)
    try:
        # the grandchild's 0.4 s of CPU shows in the parent's tree (the parent itself only sleeps)
        wait_until(lambda: (cpu_seconds([parent.pid]) or 0) >= 0.4, 30)
        time.sleep(0.3)  # everyone started: from now on nobody computes
        before = cpu_seconds([sleeper.pid, parent.pid])
        time.sleep(0.5)
        assert cpu_seconds([sleeper.pid, parent.pid]) - before < 0.05
        assert cpu_seconds([2**22 + 12345]) == 0  # a process that is gone counts nothing
    finally:
        for proc in (parent, sleeper):
            proc.kill()
            proc.wait()
        subprocess.run(["pkill", "-KILL", "-s", str(parent.pid)], check=False)


# -- each kind of run gives its slot back while it only waits --------------------------------------------------

WAITING_MODULE = f"import threading\n\ndef wait():\n    threading.Event().wait({WAITS_S})\n    return 1\n"


@pytest.fixture(scope="module")
def waiting_sandbox(isolation):
    sandbox = Sandbox(Limits(wall_seconds=WAITS_S + 5), isolation)
    yield sandbox
    sandbox.close()


def test_a_classic_run_that_only_waits_gives_its_slot_back_and_takes_one_to_answer(waiting_sandbox):
    slots = CpuSlots(1)

    def waiting_call() -> object:
        with waiting_sandbox.start(WAITING_MODULE, "wait.py", "wait") as run:
            return run.call("wait")

    thread, out = in_thread(as_owner(slots, "waiter", waiting_call))
    assert slot_comes_free(slots, thread) < 1.0
    thread.join(30)
    assert out == [1]  # the run went on, and answered, once it had a slot again
    assert slots.busy == 0


def test_a_judgment_of_the_hard_task_finishes_with_a_single_slot(catalog, runtime):
    """The concurrency check runs two processes at once; waiting for the second one holds no slot, so one is enough."""
    single = Runtime(catalog, runtime.sandbox, workers=4, cpu_slots=1, secret=runtime.secret)
    task = catalog.get("hard")
    with single.cpu.owner("episode"):
        verdict = judge_on(single, task, task.gold_source, random.Random(3))
    assert verdict.solved and single.cpu.busy == 0 and single.cpu.granted >= 2


def test_a_repository_test_run_that_only_waits_gives_its_slot_back(runtime, tmp_path):
    files = {
        "slow/__init__.py": "",
        "slow/wait.py": WAITING_MODULE,
        "tests/test_wait.py": "from slow.wait import wait\n\n\ndef test_wait():\n    assert wait() == 1\n",
    }
    task = load_repo_task(repo_fixture.write_task(tmp_path, files, files, id="slow", FAIL_TO_PASS=["tests/test_wait.py::test_wait"], PASS_TO_PASS=[]))
    run_tests(runtime.sandbox, task, task.files)  # the test environment and the warm host, outside the measurement
    slots = CpuSlots(1)
    thread, out = in_thread(as_owner(slots, "waiter", lambda: run_tests(runtime.sandbox, task, task.files)))
    assert slot_comes_free(slots, thread) < 1.0
    thread.join(60)
    assert out[0].outcomes == {"tests/test_wait.py::test_wait": "PASSED"}
    assert slots.busy == 0


def test_a_shell_command_that_only_waits_gives_its_slot_back(runtime, tmp_path):
    if runtime.shell.refusal:
        pytest.skip(f"run_bash is refused on this host: {runtime.shell.refusal}")
    slots = CpuSlots(1)
    thread, out = in_thread(as_owner(slots, "waiter", lambda: runtime.shell.run(tmp_path, f"sleep {WAITS_S}; echo done")))
    assert slot_comes_free(slots, thread) < 1.0
    thread.join(30)
    assert out[0].output.strip() == "done" and out[0].exit_code == 0
    assert slots.busy == 0


def test_a_debugging_session_holds_no_slot_while_it_is_stopped(catalog, runtime, tmp_path):
    from tests.test_debugger import FILES, GOLD, TOTAL, act, make

    task = load_repo_task(repo_fixture.write_task(
        tmp_path, FILES, GOLD, id="calc", FAIL_TO_PASS=["tests/test_ops.py::test_mean_empty"], PASS_TO_PASS=[TOTAL], max_steps=60,
    ))  # fmt: skip
    single = Runtime(catalog, runtime.sandbox, workers=4, cpu_slots=1, secret=runtime.secret)
    episode = make(single, task)
    try:
        obs = act(episode, "debug_start", test=TOTAL)
        assert obs.error is None and obs.tool_result["event"] == "entry"
        assert single.cpu.busy == 0 and single.cpu.granted >= 1  # it took a slot to get there, and gave it back
        obs = act(episode, "debug_next")
        assert obs.error is None and obs.tool_result["frame"]["line"] == 6
        assert single.cpu.busy == 0
    finally:
        episode.close()
        single.debug_sandbox.close()


# -- the bound, end to end -------------------------------------------------------------------------------------

BLOCKING_HARD = (ROOT / "tasks" / "classic" / "hard" / "fix.py").read_text().replace(
    "    def increment(self):\n", "    def increment(self):\n        threading.Event().wait()\n", 1
)
EASY_FIX = (ROOT / "tasks" / "classic" / "easy" / "fix.py").read_text()


def submit(client: httpx.Client, url: str, task_id: str, code: str, seed: int) -> tuple[float, dict]:
    reset = client.post(f"{url}/reset", json={"task_id": task_id, "seed": seed}).json()
    episode_id = reset["observation"]["episode_id"]
    action = DebugAction(action_type="submit_fix", fixed_code=code, hypothesis="the loop bound skips the last element")
    started = time.perf_counter()
    body = client.post(f"{url}/step", json={"action": action.model_dump(exclude_none=True), "episode_id": episode_id}).json()
    return time.perf_counter() - started, body


def test_a_victims_easy_submission_stays_fast_while_four_clients_submit_blocking_hard_modules(catalog, isolation):
    """Issue 33: blocking judgments do not hold up a victim's runs. Before, each held a slot for its whole wall time
    and the victim waited 10-24 s."""
    assert BLOCKING_HARD.count("threading.Event().wait()") == 1
    rt = Runtime(catalog, Sandbox(Limits(wall_seconds=WAITS_S), isolation), workers=16, cpu_slots=2)
    stop = threading.Event()
    blocked: list[float] = []
    try:
        with LiveServer(build_app(runtime=rt, settings=Settings(max_sessions=40))) as server:
            with httpx.Client(timeout=60) as client:
                submit(client, server.url, "easy", EASY_FIX, 0)  # the task's baseline, outside the measurement

            def blocker(k: int) -> None:
                with httpx.Client(timeout=120) as client:
                    i = 0
                    while not stop.is_set():
                        seconds, body = submit(client, server.url, "hard", BLOCKING_HARD, k * 1000 + i)
                        assert "time limit" in body["observation"]["current_error_output"]
                        blocked.append(seconds)
                        i += 1

            threads = [threading.Thread(target=blocker, args=(k,), daemon=True) for k in range(4)]
            for thread in threads:
                thread.start()
            wait_until(lambda: rt.cpu.granted >= 8, 30)  # every blocker is inside its judgment
            times = []
            with httpx.Client(timeout=60) as client:
                for i in range(12):
                    seconds, body = submit(client, server.url, "easy", EASY_FIX, 100 + i)
                    assert body["done"] and body["observation"]["grader_score"] >= 0.85, body["observation"]
                    times.append(seconds)
            stop.set()
            for thread in threads:
                thread.join(60)
            metrics = {
                line.split()[0]: float(line.split()[1])
                for line in httpx.get(f"{server.url}/metrics", timeout=30).text.splitlines() if line.startswith("adbg_cpu_slot")
            }  # fmt: skip
    finally:
        stop.set()
        rt.sandbox.close()
    # Before issue 33 a blocking judgment held its slot for its whole wall time (WAITS_S here): with four blockers on
    # two slots nearly every victim submission queued behind one, for seconds. Now none waits for a blocker's whole run
    # and a typical one waits for none. The guarantee's figure (p99 <= 1 s, idle) is bench/bench_fair_slots.py's to
    # measure: this suite shares two cores with three other workers, so a wall-clock bound that tight would judge the
    # machine, not the slots.
    report = f"victim's submissions took {sorted(times)} s (median {statistics.median(times):.3f})"
    assert statistics.median(times) <= WAITS_S / 6, report
    assert max(times) < WAITS_S * 0.9, report
    assert blocked and min(blocked) >= WAITS_S * 0.9  # the blockers did block, for their whole wall time
    assert metrics["adbg_cpu_slots_busy"] == 0 and metrics["adbg_cpu_slots_queued"] == 0
    assert metrics["adbg_cpu_slot_wait_seconds_total"] == pytest.approx(rt.cpu.waited_s)
