"""Held-out cases joining the visible tests' process (issue 51): one process fewer per submission, and nothing the
code does on a held-out input shows in what the agent sees of the run.

The red team: code that is right on the visible tests' inputs and, on any other input (a held-out one), prints it
(stdout, stderr, from a thread, 10 MB of it), ends its process, spins, sleeps or raises. The verdict the agent sees
(each test's outcome and message, the run's output, end, exit code and time) must be exactly what the same code
gets with no held-out case at all."""

from __future__ import annotations

import json
import random

import pytest

from env.families.classic.judge import Verdict, held_out_check, joins_visible_run, judge
from env.sandbox.limits import Limits
from env.sandbox.runner import Sandbox, observe_runs
from tests.helpers import CATALOG, GOLD

EASY = CATALOG.get("easy")
CASES = EASY.held_out_cases(random.Random(11))
GOLD_BODY = GOLD["easy"].split("def binary_search(arr, target):\n", 1)[1]


class _Log:
    """Records the visible tests' calls: the inputs the red team's code treats as "seen"."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def __getattr__(self, name: str):
        def call(arr, target):
            self.calls.append((tuple(arr), target))
            namespace: dict = {}
            exec(GOLD["easy"], namespace)
            return namespace[name](list(arr), target)

        return call


def _visible_inputs() -> set[tuple]:
    log = _Log()
    for _, test in EASY.tests:
        test(log)
    return set(log.calls)


SEEN = _visible_inputs()


def _spy(on_unseen: str, header: str = "") -> str:
    """Gold on the visible tests' inputs; ``on_unseen`` first on any other."""
    body = "\n".join("        " + line for line in on_unseen.splitlines())
    return (
        f"{header}SEEN = {sorted(SEEN)!r}\n\n\ndef binary_search(arr, target):\n"
        f"    if (tuple(arr), target) not in SEEN:\n{body}\n{GOLD_BODY}"
    )


MISCHIEF = {
    "prints it": "print('LEAK', arr, target)",
    "prints it on stderr": "import sys\nsys.stderr.write('LEAK %r %r\\n' % (arr, target))",
    "prints it from a thread, later": (
        "import threading, time\nthreading.Thread(target=lambda: (time.sleep(0.2), print('LEAK', arr, target))).start()"
    ),
    "floods the output": "print('LEAK', arr, target, 'x' * (10 * 1024 * 1024))",
    "ends its process": "import os\nos._exit(7)",
    "raises SystemExit": "raise SystemExit('LEAK %r %r' % (arr, target))",
    "spins": "while True:\n    pass",
    "sleeps": "import time\ntime.sleep(3)",
}
HARMLESS = {"prints it", "prints it on stderr", "prints it from a thread, later"}  # then answers right: the cases pass


class _Runs:
    def __init__(self) -> None:
        self.finished = 0

    def seen(self, seconds: float) -> None:
        self.finished += 1


def _judged(source: str, sandbox: Sandbox, held_out=CASES) -> tuple[Verdict, int]:
    """The verdict, and how many sandbox runs it took (runs finishing in this process meanwhile: this test's own)."""
    runs = _Runs()
    observe_runs(runs.seen)
    verdict = judge(EASY, source, sandbox, random.Random(0), policy_enabled=False, held_out=held_out)
    return verdict, runs.finished


def _shown(verdict: Verdict) -> dict:
    """What the agent sees of a verdict but the held-out line, its run's time apart."""
    assert verdict.run is not None
    run = verdict.run.model_dump(exclude={"duration_ms", "cpu_seconds"})
    return {"tests": [t.model_dump() for t in verdict.tests], "run": run, "rejected": verdict.rejected}


@pytest.fixture(scope="module")
def sandbox(isolation) -> Sandbox:
    return Sandbox(Limits(wall_seconds=2.0, cpu_seconds=2), isolation)


def test_the_easy_tasks_cases_join_and_the_gold_is_judged_in_one_process(sandbox):
    assert joins_visible_run(EASY) and joins_visible_run(CATALOG.get("medium"))
    assert not joins_visible_run(CATALOG.get("hard"))  # its concurrency check reports after the tests
    verdict, runs = _judged(GOLD["easy"], sandbox)
    assert runs == 1
    assert verdict.tests_passed == EASY.tests_total and verdict.held_out_passed == len(CASES) == verdict.held_out_total
    assert verdict.solved


@pytest.mark.parametrize("mischief", sorted(MISCHIEF))
def test_nothing_done_on_a_held_out_input_shows_in_the_verdict(sandbox, mischief):
    source = _spy(MISCHIEF[mischief])
    verdict, runs = _judged(source, sandbox)
    alone, _ = _judged(source, sandbox, held_out=())
    assert _shown(verdict) == _shown(alone)
    assert verdict.tests_passed == EASY.tests_total and not verdict.run.aborted and not verdict.timed_out
    passing = len(CASES) if mischief in HARMLESS else 0  # the process ended, or the case failed
    assert runs == 1 and verdict.held_out_passed == passing and verdict.held_out_total == len(CASES)
    shown = json.dumps(_shown(verdict)) + verdict.report()
    assert "LEAK" not in shown
    assert verdict.run.duration_ms < 1500  # the held-out phase's time (a spin or a sleep to the deadline) is not the run's


def test_a_run_the_visible_tests_end_leaves_the_held_out_cases_a_process_of_their_own(sandbox):
    # spins on one visible input: the run times out there, and the held-out cases (all right) still count
    arr, target = sorted(SEEN)[0]
    source = f"def binary_search(arr, target):\n    if (tuple(arr), target) == ({arr!r}, {target!r}):\n        while True:\n            pass\n{GOLD_BODY}"
    verdict, runs = _judged(source, sandbox)
    assert verdict.timed_out and runs == 2
    assert verdict.held_out_passed == len(CASES) == held_out_check(EASY, source, sandbox, False, CASES)


def test_a_run_that_used_over_half_its_cpu_leaves_the_held_out_cases_a_process_of_their_own(isolation):
    # 1.2 s of CPU at the first visible call, of a limit of 2: held-out cases there would get less than half a run's CPU
    burner = (
        "import time\n\n_BURNT = []\n\n\ndef binary_search(arr, target):\n    if not _BURNT:\n"
        "        _BURNT.append(1)\n        end = time.process_time() + 1.2\n        while time.process_time() < end:\n"
        f"            pass\n{GOLD_BODY}"
    )
    roomy = Sandbox(Limits(wall_seconds=30.0, cpu_seconds=2), isolation)  # a wall clock no load reaches
    verdict, runs = _judged(burner, roomy)
    assert verdict.tests_passed == EASY.tests_total and not verdict.timed_out
    assert runs == 2 and verdict.held_out_passed == len(CASES)
    verdict, runs = _judged(GOLD["easy"], roomy)
    assert runs == 1 and verdict.held_out_passed == len(CASES)
