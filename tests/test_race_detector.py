"""The hard task's race detector: controlled interleavings, the same verdict whatever the machine's load.

Every racy variant is caught, every correct style passes, code that tries to tell it is explored gets no
credit, and a failure names the interleaving in the submission's own lines. bench/bench_race.py measures
the same variants over 1000 runs each with the machine loaded.
"""

from __future__ import annotations

import multiprocessing
import random

import pytest

from env.families.classic.judge import judge, stress_check
from env.secret import ServerSecret
from tests.helpers import CATALOG
from tests.race_variants import CORRECT, EVASIVE, RACY

HARD = CATALOG.get("hard")
SECRET = ServerSecret("the race detector tests' own secret")


def check(runtime, source: str, seed: int, policy: bool = True):
    return judge(HARD, source, runtime.sandbox, SECRET.rng("classic", "hard", seed, "verdict"), policy_enabled=policy)


@pytest.mark.parametrize("name", list(RACY))
def test_every_racy_variant_is_caught(runtime, name):
    for seed in range(5):
        verdict = check(runtime, RACY[name], seed)
        assert verdict.tests_passed == 8, f"{name}: the sequential tests should pass"
        assert not verdict.stress.passed, f"{name} passed the concurrency check with seed {seed}"
        assert not verdict.solved


@pytest.mark.parametrize("name", list(CORRECT))
def test_every_correct_style_passes(runtime, name):
    for seed in range(5):
        verdict = check(runtime, CORRECT[name], seed)
        assert verdict.solved, f"{name} failed with seed {seed}: {verdict.stress.message}"
        assert verdict.stress.schedules >= 22  # every scenario ran (6 sweeps of two orders, 16 PCT runs at least)


@pytest.mark.parametrize("name", list(EVASIVE))
def test_code_that_tries_to_tell_it_is_explored_gets_no_credit(runtime, name):
    # With the static policy, the tracer hooks are refused before anything runs; without it (the
    # policy is a friendly lint, not the boundary), the explorer itself still catches every one.
    for policy in (True, False):
        verdict = check(runtime, EVASIVE[name], 1, policy=policy)
        assert not verdict.solved, f"{name} (policy {'on' if policy else 'off'}) was credited"
    if "trace" in name:
        assert "is not allowed" in check(runtime, EVASIVE[name], 1).rejected
    if "sys.settrace" in name:
        assert "tried to change how it is traced (the tracer was removed): no credit" in check(runtime, EVASIVE[name], 1, policy=False).stress.message


def test_a_failure_names_the_interleaving_in_the_submissions_lines(runtime):
    message = check(runtime, RACY["original bug"], 3).stress.message
    lines = message.splitlines()
    assert lines[0] == (
        "2 threads (thread A: increment; thread B: increment) on one shared counter, interleaved by a controlled scheduler: "
        "updates were lost under concurrency (the final count is wrong)."
    )
    assert lines[1] == "The interleaving, in your code's lines:"
    assert lines[2] == "  1. thread A paused at line 14 in increment: `with self._lock:`; thread B runs"
    assert lines[3] == "  2. thread B finished; thread A runs"


def test_an_unlocked_increment_is_split_between_its_load_and_its_store(runtime):
    message = check(runtime, RACY["unlocked self.count += 1"], 0).stress.message
    assert "thread A paused at line 11 in increment: `self.count += 1`; thread B runs" in message


def test_the_grade_uses_the_same_detector(runtime):
    rng = random.Random(5)
    assert stress_check(HARD, CORRECT["RLock"], runtime.sandbox, rng).passed
    caught = stress_check(HARD, RACY["racy decrement only"], runtime.sandbox, rng)
    assert not caught.passed and "thread A: decrement; thread B: decrement" in caught.message


def _spin(stop) -> None:
    while not stop.is_set():
        pass


def test_the_same_secret_and_seed_give_the_same_verdict_under_any_load(runtime):
    def observe():
        return [(v.stress.passed, v.stress.schedules, v.stress.message) for v in (check(runtime, RACY[n], 11) for n in ("original bug", "racy peak update"))] + [
            (v.stress.passed, v.stress.schedules) for v in (check(runtime, CORRECT[n], 11) for n in ("Condition", "Semaphore(1)"))
        ]

    idle = observe()
    stop = multiprocessing.Event()
    busy = [multiprocessing.Process(target=_spin, args=(stop,), daemon=True) for _ in range(4)]
    for process in busy:
        process.start()
    try:
        loaded = observe()
    finally:
        stop.set()
        for process in busy:
            process.join(5)
    assert loaded == idle
