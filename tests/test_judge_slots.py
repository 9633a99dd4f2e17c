"""Judgments of classic submissions (trusted tests run in the server's own threads, holding the GIL) are
limited to ``judge_slots`` at once; more wait their turn without their sandbox's wall clock running."""

from __future__ import annotations

import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import env.families.classic.judge as judge_module
import env.runtime as runtime_module
from env.families.classic.judge import judge_on
from env.families.registry import TaskRegistry
from env.runtime import Runtime


def test_no_more_judgments_than_slots_run_at_once(registry, runtime, monkeypatch):
    lock = threading.Lock()
    active, peak = [0], [0]

    def judging(*args, **kwargs):
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        time.sleep(0.05)  # stands for the work of a judgment: without a limit all six would overlap here
        with lock:
            active[0] -= 1
        return "verdict"

    monkeypatch.setattr(judge_module, "judge", judging)
    limited = Runtime(registry, runtime.sandbox, workers=8, judge_slots=2)
    task = registry.get("easy")
    with ThreadPoolExecutor(6) as pool:
        results = list(pool.map(lambda i: judge_on(limited, task, task.gold_source, random.Random(i)), range(6)))
    assert results == ["verdict"] * 6 and peak[0] == 2


def test_the_default_is_the_number_of_cores_and_at_least_two(registry, runtime, monkeypatch):
    monkeypatch.setattr(runtime_module.os, "cpu_count", lambda: 1)
    assert Runtime(registry, runtime.sandbox).judge_slots == 2
    monkeypatch.setattr(runtime_module.os, "cpu_count", lambda: 8)
    assert Runtime(registry, runtime.sandbox).judge_slots == 8
    monkeypatch.setenv("ENV_JUDGE_SLOTS", "3")
    assert Runtime.from_env(TaskRegistry([])).judge_slots == 3
