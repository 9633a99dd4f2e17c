"""Proof that a race-family task is valid: the shared checks over ``runs`` seeds (the buggy class fails the concurrency
check under every seed's scenarios and passes every sequential test; the gold class passes everything under every
seed), and the family's own: the other lock styles the generator makes pass, its half-fixes fail, and the gold class
passes the held-out cases an episode draws (which the buggy one passes too: its bug shows only under concurrency)."""

from __future__ import annotations

import random
import time

from env.families.classic.judge import judge_on
from env.families.classic.validation import observe
from env.families.race.task import RaceTaskSpec
from env.families.validation import Check, TaskValidation, measured
from env.runtime import Runtime
from env.verdict.busy import until_decided


def _stress_passes(runtime: Runtime, task: RaceTaskSpec, source: str, seed: int) -> bool:
    verdict = until_decided(lambda: judge_on(runtime, task, source, random.Random(seed)))
    return verdict.solved


def _held_out_passes(runtime: Runtime, task: RaceTaskSpec, source: str, seed: int) -> bool:
    cases = task.held_out_cases(random.Random(seed))
    verdict = until_decided(lambda: judge_on(runtime, task, source, random.Random(seed), with_stress=False, held_out=cases))
    return verdict.held_out_passed == verdict.held_out_total == len(cases) > 0


def family_checks(runtime: Runtime, task: RaceTaskSpec, runs: int) -> list[Check]:
    generated = task.generated
    refused = [i for i, source in enumerate(generated.alternatives) if not _stress_passes(runtime, task, source, i)]
    passed = [i for i, source in enumerate(generated.half_fixes) if _stress_passes(runtime, task, source, i)]
    held = [name for name, source in (("buggy", task.buggy_source), ("gold", task.gold_source)) if not _held_out_passes(runtime, task, source, runs)]
    return [
        Check(name="every other lock style passes", ok=bool(generated.alternatives) and not refused,
              detail=f"alternative(s) {refused} refused" if refused else ""),
        Check(name="every half-fix fails", ok=bool(generated.half_fixes) and not passed, detail=f"half-fix(es) {passed} accepted" if passed else ""),
        Check(name="buggy and gold pass the held-out cases", ok=not held, detail=" and ".join(held) + " failed some" if held else ""),
    ]  # fmt: skip


def validate(runtime: Runtime, task: RaceTaskSpec, runs: int) -> TaskValidation:
    started = time.monotonic()
    return measured(task, runs, lambda gold, seed: observe(runtime, task, gold, seed), started, family_checks(runtime, task, runs))
