"""How a classic task's state runs for validation: the module judged against its tests (and its stress check),
in the shape every family's validation reads (``env.families.validation``)."""

from __future__ import annotations

import random
import time

from env.families.classic.judge import judge_on
from env.families.classic.task import TaskSpec
from env.families.validation import StateRun, TaskValidation, measured
from env.runtime import Runtime
from env.verdict.busy import until_decided

_STATUS = {"passed": "PASSED", "failed": "FAILED", "error": "ERROR"}


def observe(runtime: Runtime, task: TaskSpec, gold: bool, seed: int) -> StateRun:
    source = task.gold_source if gold else task.buggy_source
    verdict = until_decided(lambda: judge_on(runtime, task, source, random.Random(seed)))  # a run the machine starved, again
    outcomes = {f"tests.py::{t.id}": _STATUS[t.outcome] for t in verdict.tests}
    calls = {f"tests.py::{t.id}": t.calls for t in verdict.tests}
    if verdict.stress is not None and task.stress is not None:
        outcomes[f"stress::{task.stress.cls}"] = "PASSED" if verdict.stress.passed else "FAILED"
        calls[f"stress::{task.stress.cls}"] = verdict.stress.schedules  # each interleaving explored calls into the module
    return StateRun(outcomes=outcomes, calls=calls, collected=list(outcomes), error=verdict.rejected)


def validate(runtime: Runtime, task: TaskSpec, runs: int) -> TaskValidation:
    """The shared checks only: a classic task has no patch to apply and no held-out tests to prove apart."""
    return measured(task, runs, lambda gold, seed: observe(runtime, task, gold, seed), time.monotonic())
